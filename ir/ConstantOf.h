// The compile-time constant an IR value denotes, for rules that need a value and not only a
// type (print's string arguments and `sep`/`end` keywords).
#pragma once

#include "ir/IR.h"

namespace ptxjit::ir {

/// The constant `i` denotes when it is a Const instruction or a Global frozen as a Python
/// constant (not a NumPy scalar); null otherwise. The pointer lives as long as `i`.
const ConstValue *constantValueOf(const Instr *i);

} // namespace ptxjit::ir
