// CUDA streams.
#pragma once

#include "runtime/Driver.h"

#include <memory>

namespace ptxjit::runtime {

// A CUDA stream: either owned (created with cuStreamCreate, destroyed with the object, skipped
// once the process is exiting) or the default stream (null handle, never destroyed).
class Stream {
public:
  // Creates a stream: non-blocking (CU_STREAM_NON_BLOCKING: no implicit synchronization with the
  // legacy default stream) when `nonBlocking`, else CU_STREAM_DEFAULT. Makes the device context
  // current first. Throws DriverUnavailable, CudaError.
  static std::shared_ptr<Stream> create(bool nonBlocking = true);

  // The shared object standing for the default (legacy, null-handle) stream. Needs no driver
  // until used. Never throws.
  static const std::shared_ptr<Stream> &defaultStream();

  // A stream created by someone else (cuda.external_stream, a __cuda_array_interface__
  // producer's stream): used as given, never destroyed. `handle` may also be one of the
  // driver's special handles (CU_STREAM_LEGACY, CU_STREAM_PER_THREAD). Never throws except
  // std::bad_alloc.
  static std::shared_ptr<Stream> external(CUstream handle);

  ~Stream();
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;

  // The driver handle; nullptr for the default stream.
  CUstream handle() const noexcept { return handle_; }
  // True for the default stream.
  bool isDefault() const noexcept { return handle_ == nullptr; }
  // True if created with CU_STREAM_NON_BLOCKING.
  bool nonBlocking() const noexcept { return nonBlocking_; }
  // The device an owned stream was created on (0 for the default and external streams, which
  // belong to whichever device is current when used).
  int device() const noexcept { return ordinal_; }
  // True for a stream from external().
  bool isExternal() const noexcept { return !owned_ && handle_ != nullptr; }

  // Waits for all work submitted to the stream (cuStreamSynchronize); reports asynchronous
  // errors. Throws DriverUnavailable, CudaError.
  void synchronize() const;

  // True if all work submitted to the stream has finished (cuStreamQuery), false while some is
  // pending. Throws DriverUnavailable, CudaError (for errors other than CUDA_ERROR_NOT_READY).
  bool query() const;

private:
  Stream(CUstream handle, bool nonBlocking, bool owned = true, int ordinal = 0);
  // Whether work on this stream may be unordered with the legacy stream: a non-blocking stream
  // of ours, or an external one other than the driver's special handles.
  bool mayBeUnordered() const noexcept {
    return nonBlocking_ ||
           (isExternal() && handle_ != CU_STREAM_LEGACY && handle_ != CU_STREAM_PER_THREAD);
  }
  CUstream handle_;
  bool nonBlocking_;
  bool owned_;
  int ordinal_; // the device whose context made an owned stream (and destroys it)
};

// Memory ptxjit frees goes back on the legacy default stream (runtime/Memory.cpp), which waits
// for the earlier work of every blocking stream, not for that of a stream made with
// CU_STREAM_NON_BLOCKING (PyTorch's streams, for instance). So that a device array freed while
// work on such a stream still uses it is released only after that work, the legacy stream joins
// each non-blocking stream after every piece of ptxjit work submitted to it: call this right
// after submitting work to `stream` (kernel launches, asynchronous copies and fills, graph
// replays do). It records an event on `stream` and makes the legacy stream wait for it, when
// `stream` is a live Stream made non-blocking by create(), or an external one whose flags (read
// on its first use here, never when it is wrapped) say so, and is not being captured into a graph;
// for every other stream it costs one relaxed atomic load. Throws CudaError.
void joinLegacyStreamAfter(CUstream stream);

// Whether `stream` is being captured into a graph (cuStreamIsCapturing), for callers that must
// not do on it what a capture cannot record. False for the legacy default stream (null: it is
// never captured) and where the driver lacks the query; a query the driver refuses counts as
// true. Never throws.
bool streamIsCapturing(CUstream stream) noexcept;

} // namespace ptxjit::runtime
