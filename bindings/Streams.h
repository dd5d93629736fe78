// Python stream objects (cuda.stream(), cuda.default_stream()) and reading stream arguments.
#pragma once

#include "codegen/CompileOptions.h"
#include "runtime/Launch.h"
#include "runtime/Stream.h"

#include <pybind11/pybind11.h>

#include <memory>

namespace ptxjit::bindings {

namespace py = pybind11;

/// A stream of the backend it was made on. On the CPU backend every stream is a placeholder:
/// work there is synchronous.
class PyStream {
public:
  PyStream(std::shared_ptr<runtime::Stream> s, codegen::Backend b, bool isDefault,
           bool external = false)
      : stream_(std::move(s)), backend_(b), default_(isDefault), external_(external) {}
  /// The driver handle (null for the default stream and on the CPU backend).
  CUstream handle() const { return stream_ ? stream_->handle() : nullptr; }
  codegen::Backend backend() const { return backend_; }
  /// True for the object standing for the default stream.
  bool isDefault() const { return default_; }
  /// True for a stream made by someone else (cuda.external_stream).
  bool isExternal() const { return external_; }
  /// The device a stream of ptxjit's own was created on; -1 for the default stream, an external
  /// stream (each used with whatever device is current) and the CPU backend's streams.
  int device() const {
    return stream_ && !default_ && !external_ && backend_ == codegen::Backend::CUDA
               ? stream_->device()
               : -1;
  }
  /// Waits for the stream's work (no-op on the CPU backend). Releases the GIL while waiting.
  void synchronize() const;

private:
  std::shared_ptr<runtime::Stream> stream_;
  codegen::Backend backend_;
  bool default_;
  bool external_;
};

/// The driver handle for a Python stream argument: 0 or None → the default stream (null), a
/// PyStream → its handle. Throws py::type_error for anything else, std::invalid_argument for a
/// stream of another backend than `backend`. With `forLaunch` (kernel and ufunc launches, which
/// run on the calling thread's current device) also std::invalid_argument for a stream created
/// on another device, naming both (the driver would refuse it with a bare
/// CUDA_ERROR_INVALID_HANDLE).
CUstream streamHandle(py::handle s, codegen::Backend backend, bool forLaunch = false);

/// Whether `s`, an exact int, equals 0 (isDefaultStreamArg's rare case, out of line).
bool isZeroInt(PyObject *s);

/// True for the stream arguments that mean the default stream: None, or an exact int equal to
/// 0. CPython's shared small int 0 (what configurations without a stream hold, and what a
/// literal 0 is) is recognised by one compare; forced inline, as launches ask on every call.
[[gnu::always_inline]] inline bool isDefaultStreamArg(PyObject *s) {
  static PyObject *const zero = PyLong_FromLong(0);
  if (s == zero || s == Py_None)
    return true;
  return PyLong_CheckExact(s) && isZeroInt(s);
}

/// The stream object to remember with a device array (None for the default stream).
py::object streamObject(py::handle s);

/// Waits for the stream `handle` of a __cuda_array_interface__ producer, as the protocol's
/// version 3 asks of a consumer: through a Python stream object for it (cuda.external_stream),
/// calling its synchronize() method as numba-cuda does, so that the method of ptxjit's Stream
/// class (also cuda.cudadrv.driver.Stream) is what runs. Needs the GIL; CUDA backend only.
void synchronizeProducerStream(uint64_t handle);

/// Registers Stream, stream(), default_stream(), external_stream(), synchronize(), and Event,
/// event(), event_elapsed_time().
void defineStreams(py::module_ &m);

/// Registers Graph (cuda.graph(stream): stream capture into a CUDA graph and its replay;
/// bindings/Graphs.cpp) and GraphKernel (a captured launch, whose arguments can be set anew).
void defineGraphs(py::module_ &m);

class Dispatcher;

/// How many cuda.graph captures are under way in the process. Read and written with the
/// interpreter held (as every kernel launch runs): a launch looks for its graph node only while
/// it is not zero, which costs the launches outside captures one load and branch.
extern int gGraphCaptures;

/// After a launch of `kernel` (its Python object; `d` its Dispatcher) on `stream` with `args`
/// while gGraphCaptures is not zero: when a cuda.graph is capturing that stream, records the
/// kernel node the launch added to it, with the launch's configuration and specialization, so
/// that the graph's `kernels` can set its arguments anew. Throws only what reading the stream
/// argument throws (which the launch has already read).
void noteCapturedLaunch(py::handle kernel, Dispatcher &d, runtime::Dim3 grid, runtime::Dim3 block,
                        unsigned sharedMem, py::handle stream, PyObject *const *args, size_t nargs);

} // namespace ptxjit::bindings
