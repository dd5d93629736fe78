// Versions of locals: each live range ("web") of a Python local becomes its own variable, as
// numba's SSA reconstruction renames each assignment, so that typing gives each its own type
// (`x = 1.5; ...; x = (1, 2)`, two loops over tuples of different element types with one loop
// variable). Only definitions that meet at a use (through a control-flow merge: both branches
// of an if, a loop's back edge) stay one variable, and unify there as before.
#pragma once

#include "ir/IR.h"

namespace ptxjit::ir {

/// Splits every variable of `fn` (untyped, or typed with stale types) into its webs: the
/// StoreLocals whose values reach a common LoadLocal (reaching definitions through the blocks'
/// edges) are one web, with the loads they reach. A parameter's web is the one its argument
/// starts (its entry StoreLocal of the Arg, or the function's entry when the IR has none); for
/// any other variable the web of its first store (in block order) keeps the variable. Each other
/// web becomes a new Variable with the same name and the next free version
/// (Variable::version), numbered in the order of their first stores. Loads that no store reaches
/// (a use before any assignment) stay with the kept web, as the variable was before. Idempotent:
/// a function already split is left as it is. Runs in linear time in the function's size plus
/// the sizes of the variables' live ranges.
void splitVariables(Function &fn);

} // namespace ptxjit::ir
