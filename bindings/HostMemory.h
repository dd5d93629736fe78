// Pinned, mapped and managed host memory for Python (cuda.pinned_array, cuda.mapped_array,
// cuda.managed_array, cuda.pinned): buffers NumPy arrays are built on.
#pragma once

#include <pybind11/pybind11.h>

namespace ptxjit::bindings {

namespace py = pybind11;

/// Registers HostBuffer, host_memory(), register_host(), unregister_host().
void defineHostMemory(py::module_ &m);

} // namespace ptxjit::bindings
