// The Python bindings of the runtime's devices (cuda.gpus, select_device, current_context).
#pragma once

#include <pybind11/pybind11.h>

namespace ptxjit::bindings {

namespace py = pybind11;

/// Registers _device_count, _device_info, _current_device, _select_device, _can_access_peer,
/// _enable_peer_access, _peer_access_enabled, _memory_info and _synchronize_device on `m`
/// (python/ptxjit/_devices.py builds cuda.gpus and friends on them). Each throws what the
/// runtime throws (DriverUnavailable, CudaError, IndexError for a bad ordinal).
void defineDevices(py::module_ &m);

} // namespace ptxjit::bindings
