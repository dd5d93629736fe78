// Unrolling of `for` loops over tuples: numba's literal_unroll, also applied to any tuple whose
// elements differ in type. Typing finds such a loop (ir/typing: the tuple's length is known
// only then), this rewrites the untyped IR, and typing starts again.
#pragma once

#include "ir/IR.h"

#include <cstddef>

namespace ptxjit::ir {

/// The most loops inferTypes unrolls in one function (nested unrolled loops multiply).
inline constexpr size_t kMaxUnrolledLoops = 1000;
/// The most blocks a function may have after unrolling.
inline constexpr size_t kMaxBlocksAfterUnroll = 100000;

/// Replaces the `for` loop whose iterator `getIter` makes (in the form the frontend builds:
/// GetIter stored into a variable, a header testing IterValid, a body starting with IterNext)
/// over a tuple of `count` elements by `count` copies of its body in order, copy k taking
/// element k of the tuple (TupleGet) where the loop took the iterator's next value; `continue`
/// goes on to the next copy, `break` and the loop's exit stay as they were (the `else` clause
/// runs after the last copy). The tuple stays in the iterator's variable. The copies assign the
/// loop's variables: splitVariables (ir/SplitVariables.h, which inferTypes runs again after
/// unrolling) gives the webs each copy assigns before reading them versions of their own, so
/// that each copy is typed for its own element. The instructions of `fn` may be untyped or
/// stale (typing starts again). Throws
/// CompileError(UnsupportedConstruct) at the loop when it is not in that form or when the
/// function would grow beyond kMaxBlocksAfterUnroll blocks.
void unrollTupleLoop(Function &fn, GetIterInstr *getIter, size_t count);

} // namespace ptxjit::ir
