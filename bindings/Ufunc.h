// ptxjit._core.Ufunc: @vectorize / @guvectorize objects (call, reduce), built on ufunc/.
#pragma once

#include <pybind11/pybind11.h>

namespace ptxjit::bindings {

/// Registers the Ufunc class.
void defineUfunc(pybind11::module_ &m);

} // namespace ptxjit::bindings
