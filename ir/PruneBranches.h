// Dead-branch pruning per specialization, as Numba's dead_branch_prune: a branch whose
// condition is known once the argument types are (an optional parameter tested against None,
// a constant flag) keeps only the path it takes, so the other path is never typed. This is what
// lets `def f(x, y=None): if y is None: return x; return x * y` compile for `f(x)`.
#pragma once

#include "ir/IR.h"

#include <vector>

namespace ptxjit::ir {

/// Folds every Branch of untyped `fn` whose condition is a compile-time constant for a
/// specialization with parameter types `argTypes` (one per parameter passed; the omitted ones
/// hold their default constants, as Compiler's bindDefaults leaves them) into a Jump, and
/// removes the blocks no longer reachable from the entry (renumbering the others in order).
/// Known conditions, under `not` and `bool(...)`:
///  - `p is None`, `p is not None`, `p == None`, `p != None` (either operand order), where the
///    one assignment reaching the read of `p` is the parameter's own (true or false as `p` is
///    typed none, None passed or a default None, or any other type: ptxjit has no optional
///    types, so such a value is never None) or of a constant;
///  - `v is None` and the others for `v` a constant (a literal, a frozen global or closure
///    constant);
///  - a constant itself: `if DEBUG:` with DEBUG a module global bool, int, float or None;
///  - `isinstance(p, C)` with `p` read as above (the parameter's own assignment) and `C` a class
///    or a tuple of classes written as globals or their attributes (`int`, `np.float32`),
///    decided as typing decides it (ir/typing/MathBuiltins.h isInstanceOf).
/// Other branches are left alone. Returns the number of branches folded.
int pruneConstantBranches(Function &fn, const std::vector<const Type *> &argTypes);

} // namespace ptxjit::ir
