// The kernel object returned by @cuda.jit (Dispatcher) and its launch configurations
// (kernel[grid, block]): argument fingerprinting, specialization lookup, packing and launching,
// all in C++.
#pragma once

#include <pybind11/pybind11.h>

#include <optional>
#include <string>

namespace ptxjit::bindings {

namespace py = pybind11;

/// What the snapshot records for a global that is a @cuda.jit function.
struct DispatcherIdentity {
  int functionId;
  bool isDevice;
  std::string name;
  py::object pyFunc; ///< the Python function it compiles
};

/// The identity of `v` when it is a Dispatcher, else nullopt.
std::optional<DispatcherIdentity> dispatcherIdentity(py::handle v);

/// Registers Dispatcher, LaunchConfig and compile_ptx.
void defineDispatcher(py::module_ &m);

} // namespace ptxjit::bindings
