#include "bindings/Streams.h"

#include "bindings/Target.h"
#include "runtime/Device.h"

#include <pybind11/stl.h>

#include <stdexcept>

namespace ptxjit::bindings {

void PyStream::synchronize() const {
  if (backend_ != codegen::Backend::CUDA || !stream_)
    return;
  py::gil_scoped_release release;
  stream_->synchronize();
}

CUstream streamHandle(py::handle s, codegen::Backend backend) {
  if (s.is_none())
    return nullptr;
  if (PyLong_CheckExact(s.ptr())) {
    if (PyLong_AsLongLong(s.ptr()) == 0 && !PyErr_Occurred())
      return nullptr;
    PyErr_Clear();
    throw py::type_error("a stream must be a ptxjit stream (cuda.stream()) or 0 for the default "
                         "stream");
  }
  if (py::isinstance<PyStream>(s)) {
    const PyStream &ps = s.cast<const PyStream &>();
    if (ps.backend() != backend)
      throw std::invalid_argument(std::string("the stream belongs to the ") +
                                  backendName(ps.backend()) + " backend, not the " +
                                  backendName(backend) + " backend in use");
    return ps.handle();
  }
  throw py::type_error(std::string("a stream must be a ptxjit stream (cuda.stream()) or 0, not ") +
                       Py_TYPE(s.ptr())->tp_name);
}

py::object streamObject(py::handle s) {
  if (py::isinstance<PyStream>(s) && !s.cast<const PyStream &>().isDefault())
    return py::reinterpret_borrow<py::object>(s);
  return py::none();
}

void defineStreams(py::module_ &m) {
  py::class_<PyStream>(m, "Stream", "A CUDA stream (a placeholder on the CPU backend).")
      .def(py::init([] {
        codegen::Backend b = currentBackend();
        if (b == codegen::Backend::CUDA)
          return PyStream(runtime::Stream::create(/*nonBlocking=*/false), b, false);
        return PyStream(nullptr, b, false);
      }))
      .def("synchronize", &PyStream::synchronize, "Waits for all work queued on the stream.")
      .def_property_readonly(
          "handle", [](const PyStream &s) { return reinterpret_cast<uintptr_t>(s.handle()); })
      .def("__int__", [](const PyStream &s) { return reinterpret_cast<uintptr_t>(s.handle()); })
      .def("__repr__",
           [](const PyStream &s) {
             if (s.isDefault())
               return std::string("<ptxjit Stream: default stream>");
             if (s.backend() != codegen::Backend::CUDA)
               return std::string("<ptxjit Stream (cpu backend)>");
             char buf[64];
             std::snprintf(
                 buf, sizeof buf, "<ptxjit Stream 0x%llx>",
                 static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(s.handle())));
             return std::string(buf);
           })
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__",
           [](const PyStream &s, py::args) {
             s.synchronize();
             return false;
           })
      .def(
          "auto_synchronize", [](py::object self) { return self; },
          "A context manager that synchronizes the stream on exit.");

  m.def("default_stream", [] {
    codegen::Backend b = currentBackend();
    if (b == codegen::Backend::CUDA)
      return PyStream(runtime::Stream::defaultStream(), b, true);
    return PyStream(nullptr, b, true);
  });
  m.def("synchronize", [] {
    if (currentBackend() != codegen::Backend::CUDA)
      return;
    py::gil_scoped_release release;
    runtime::synchronize();
  });
}

} // namespace ptxjit::bindings
