#include "bindings/Streams.h"

#include "bindings/Target.h"
#include "runtime/Device.h"
#include "runtime/Event.h"

#include <chrono>
#include <optional>

#include <pybind11/stl.h>

#include <stdexcept>

namespace ptxjit::bindings {

void PyStream::synchronize() const {
  if (backend_ != codegen::Backend::CUDA || !stream_)
    return;
  py::gil_scoped_release release;
  stream_->synchronize();
}

bool isZeroInt(PyObject *s) {
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(s, &overflow);
  if (v == -1 && PyErr_Occurred())
    PyErr_Clear();
  return v == 0 && !overflow;
}

CUstream streamHandle(py::handle s, codegen::Backend backend, bool forLaunch) {
  if (isDefaultStreamArg(s.ptr()))
    return nullptr;
  if (PyLong_CheckExact(s.ptr()))
    throw py::type_error("a stream must be a ptxjit stream (cuda.stream()) or 0 for the default "
                         "stream");
  if (py::isinstance<PyStream>(s)) {
    const PyStream &ps = s.cast<const PyStream &>();
    if (ps.backend() != backend)
      throw std::invalid_argument(std::string("the stream belongs to the ") +
                                  backendName(ps.backend()) + " backend, not the " +
                                  backendName(backend) + " backend in use");
    if (forLaunch && ps.device() >= 0) {
      int current = runtime::Device::currentOrdinal();
      if (ps.device() != current)
        throw std::invalid_argument(
            "the stream was created on device " + std::to_string(ps.device()) +
            ", but this thread's current device is " + std::to_string(current) +
            ": a launch runs on the current device, on a stream of that device (launch under "
            "`with cuda.gpus[" +
            std::to_string(ps.device()) + "]:`, or create the stream under `with cuda.gpus[" +
            std::to_string(current) + "]:`)");
    }
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

void synchronizeProducerStream(uint64_t handle) {
  py::object stream =
      py::cast(PyStream(runtime::Stream::external(reinterpret_cast<CUstream>(handle)),
                        codegen::Backend::CUDA, false, /*external=*/true));
  stream.attr("synchronize")();
}

namespace {

/// An event of the backend it was made on. On the CPU backend work is synchronous, so an event
/// is complete once recorded and its time is the host time of the record; errors are the
/// driver's (CUDA_ERROR_INVALID_HANDLE for timing an event without timing or never recorded).
class PyEvent {
public:
  explicit PyEvent(bool timing) : backend_(currentBackend()), timing_(timing) {
    if (backend_ == codegen::Backend::CUDA)
      event_ = runtime::Event::create(timing);
  }
  bool timing() const { return timing_; }
  uintptr_t handle() const {
    return reinterpret_cast<uintptr_t>(event_ ? event_->handle() : nullptr);
  }

  void record(py::handle stream) {
    CUstream h = streamHandle(stream, backend_);
    if (event_)
      event_->record(h);
    else
      recorded_ = std::chrono::steady_clock::now();
  }
  void synchronize() const {
    if (!event_)
      return;
    py::gil_scoped_release release;
    event_->synchronize();
  }
  bool query() const { return event_ ? event_->query() : true; }
  void wait(py::handle stream) const {
    CUstream h = streamHandle(stream, backend_);
    if (event_)
      event_->wait(h);
  }
  static float elapsed(const PyEvent &start, const PyEvent &stop) {
    if (start.backend_ != stop.backend_)
      throw std::invalid_argument("the events belong to different backends");
    if (start.event_)
      return runtime::Event::elapsedMs(*start.event_, *stop.event_);
    if (!start.timing_ || !stop.timing_ || !start.recorded_ || !stop.recorded_)
      throw runtime::CudaError(CUDA_ERROR_INVALID_HANDLE, "cuEventElapsedTime");
    return std::chrono::duration<float, std::milli>(*stop.recorded_ - *start.recorded_).count();
  }

private:
  codegen::Backend backend_;
  bool timing_;
  std::shared_ptr<runtime::Event> event_;
  std::optional<std::chrono::steady_clock::time_point> recorded_;
};

void defineEvents(py::module_ &m) {
  py::class_<PyEvent>(m, "Event",
                      "A CUDA event (cuda.event()); host timestamps on the CPU "
                      "backend.")
      .def("record", &PyEvent::record, py::arg("stream") = 0,
           "Captures the work submitted to `stream` so far.")
      .def("synchronize", &PyEvent::synchronize, "Waits until the captured work is done.")
      .def("query", &PyEvent::query, "True once the captured work is done.")
      .def("wait", &PyEvent::wait, py::arg("stream") = 0,
           "Makes later work on `stream` wait for the captured work.")
      .def(
          "elapsed_time", [](const PyEvent &a, const PyEvent &b) { return PyEvent::elapsed(a, b); },
          py::arg("evtend"), "Milliseconds from this event to `evtend`.")
      .def_property_readonly("timing", &PyEvent::timing)
      .def_property_readonly("handle", &PyEvent::handle)
      .def("__repr__", [](const PyEvent &e) {
        return std::string("<ptxjit Event") + (e.timing() ? "" : " (no timing)") + ">";
      });
  m.def(
      "event", [](bool timing) { return PyEvent(timing); }, py::arg("timing") = true);
  m.def(
      "event_elapsed_time",
      [](const PyEvent &a, const PyEvent &b) { return PyEvent::elapsed(a, b); },
      py::arg("evtstart"), py::arg("evtend"));
}

} // namespace

void defineStreams(py::module_ &m) {
  defineEvents(m);
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
      .def_property_readonly("external", &PyStream::isExternal,
                             "True for a stream from cuda.external_stream().")
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
  m.def(
      "per_thread_default_stream",
      [] {
        codegen::Backend b = currentBackend();
        if (b == codegen::Backend::CUDA)
          return PyStream(runtime::Stream::external(CU_STREAM_PER_THREAD), b, false);
        return PyStream(nullptr, b, false);
      },
      "The calling thread's default stream (CU_STREAM_PER_THREAD).");
  m.def(
      "external_stream",
      [](uintptr_t ptr) {
        codegen::Backend b = currentBackend();
        if (b == codegen::Backend::CUDA)
          return PyStream(runtime::Stream::external(reinterpret_cast<CUstream>(ptr)), b, false,
                          true);
        return PyStream(nullptr, b, false, true);
      },
      py::arg("ptr"), "A stream made by someone else, from its handle (not destroyed here).");
  m.def("synchronize", [] {
    if (currentBackend() != codegen::Backend::CUDA)
      return;
    py::gil_scoped_release release;
    runtime::synchronize();
  });
}

} // namespace ptxjit::bindings
