// CUDA graphs made by stream capture: the work a sequence of calls enqueues on one stream
// (kernel launches, ufunc calls, asynchronous copies and fills), recorded once by the driver and
// replayed with a single cuGraphLaunch. The graph entry points are optional in Driver.h: every
// function here throws DriverUnavailable, naming them, on a driver that lacks them.
#pragma once

#include "runtime/Driver.h"
#include "runtime/Launch.h"

#include <cstddef>
#include <memory>

namespace ptxjit::runtime {

// An instantiated graph (a CUgraph and its CUgraphExec), destroyed with the object (skipped
// once the process is exiting). Arguments are bound at capture: device pointers and scalar
// values are those of the captured calls, so the memory they point to must outlive the graph.
class Graph {
public:
  // Starts capturing the work submitted to `stream` (cuStreamBeginCapture,
  // CU_STREAM_CAPTURE_MODE_RELAXED, so that a first-call compile and module load, or a device
  // allocation, may happen inside the capture; they are not recorded). Makes the device context
  // current first. No background work of ptxjit's touches the legacy default stream (the memory
  // pool's warm-up, Memory.h, uses a stream of its own), so a capture begun while it runs is not
  // broken by it. Throws std::invalid_argument for the legacy default stream (null or
  // CU_STREAM_LEGACY: it cannot be captured), DriverUnavailable, CudaError (e.g.
  // CUDA_ERROR_ILLEGAL_STATE when `stream` is being captured already).
  static void beginCapture(CUstream stream);

  // Ends the capture of `stream` and instantiates what it recorded (cuStreamEndCapture,
  // cuGraphInstantiateWithFlags). Throws CudaError: CUDA_ERROR_STREAM_CAPTURE_INVALIDATED when a
  // captured call broke the capture rules (e.g. work on the legacy default stream meanwhile),
  // CUDA_ERROR_ILLEGAL_STATE when `stream` is not being captured; DriverUnavailable.
  static std::shared_ptr<Graph> endCapture(CUstream stream);

  // Ends the capture of `stream`, if one is under way, and discards what it recorded: for
  // error paths (an exception inside the captured region). Never throws.
  static void abandonCapture(CUstream stream) noexcept;

  // True while `stream` is being captured (cuStreamIsCapturing). Throws DriverUnavailable,
  // CudaError.
  static bool capturing(CUstream stream);

  // The node that the operation just enqueued on `stream` added to the graph being captured
  // there: the one node the next captured operation would depend on (cuStreamGetCaptureInfo_v3,
  // CUDA 12.3). Null when `stream` is not being captured, when that set is not one node (work
  // joined from other streams meanwhile) or when the driver lacks the entry point. Call it right
  // after the operation, on the thread that enqueued it. Throws CudaError.
  static CUgraphNode lastCapturedNode(CUstream stream);

  ~Graph();
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;

  // Enqueues one replay of the recorded work on `stream` (cuGraphLaunch; any stream, the legacy
  // default one included). Throws DriverUnavailable, CudaError.
  void launch(CUstream stream) const;

  // The number of nodes the capture recorded (one per kernel launch, copy or fill).
  size_t nodeCount() const noexcept { return nodes_; }
  // The ordinal of the device whose context captured the graph: its kernel nodes launch that
  // device's functions.
  int ordinal() const noexcept { return ordinal_; }

  // Sets the arguments that the replays enqueued from now on pass to kernel node `node` (a node
  // of this graph's capture, as lastCapturedNode gave it, that launched `function` with `grid`,
  // `block` and `sharedMem` bytes of dynamic shared memory, which stay): `params`, one pointer
  // per kernel parameter, or where it is null, the packed buffer `buffer` of `bytes` bytes
  // (cuGraphExecKernelNodeSetParams; the driver copies them). Replays already enqueued keep the
  // arguments they had. Throws DriverUnavailable (CUDA 12.0 and newer only), CudaError (e.g.
  // CUDA_ERROR_INVALID_VALUE for a node of another graph).
  void setKernelArguments(CUgraphNode node, CUfunction function, Dim3 grid, Dim3 block,
                          unsigned sharedMem, void *buffer, size_t bytes, void **params) const;

private:
  Graph(CUgraph graph, CUgraphExec exec, size_t nodes, int ordinal)
      : graph_(graph), exec_(exec), nodes_(nodes), ordinal_(ordinal) {}
  CUgraph graph_;
  CUgraphExec exec_;
  size_t nodes_;
  int ordinal_; // the device whose context captured the graph (and destroys it)
};

} // namespace ptxjit::runtime
