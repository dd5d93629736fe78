// The ufunc layer's names for loop selection, which lives in ir/LoopResolution.h because typing
// resolves NumPy's own ufuncs called in kernels by the same rules (ir/typing/NumpyUfuncs.h).
#pragma once

#include "ir/LoopResolution.h"

namespace ptxjit::ufunc {

using ir::inputCastsTo;
using ir::InputType;
using ir::inputTypesStr;
using ir::lazyLoopTypes;
using ir::LoopMatch;
using ir::LoopTypes;
using ir::resolveLoop;

} // namespace ptxjit::ufunc
