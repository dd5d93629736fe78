#include "runtime/Graph.h"

#include "runtime/Device.h"
#include "runtime/Stream.h"

#include <stdexcept>

namespace ptxjit::runtime {

namespace {

// The driver, checked for the graph entry points (optional: CUDA 11.4 and newer).
const DriverApi &graphDriver() {
  Device::current();
  const DriverApi &d = driver();
  if (!d.cuStreamBeginCapture_v2 || !d.cuStreamEndCapture || !d.cuStreamIsCapturing ||
      !d.cuGraphInstantiateWithFlags || !d.cuGraphLaunch || !d.cuGraphGetNodes ||
      !d.cuGraphExecDestroy || !d.cuGraphDestroy)
    throw DriverUnavailable("CUDA graphs need cuStreamBeginCapture_v2, cuStreamEndCapture, "
                            "cuStreamIsCapturing, cuGraphInstantiateWithFlags, cuGraphLaunch, "
                            "cuGraphGetNodes, cuGraphExecDestroy and cuGraphDestroy, which this "
                            "driver lacks (CUDA 11.4 or newer is needed)");
  return d;
}

} // namespace

void Graph::beginCapture(CUstream stream) {
  if (stream == nullptr || stream == CU_STREAM_LEGACY)
    throw std::invalid_argument("the legacy default stream cannot be captured into a graph; "
                                "capture a stream made by cuda.stream()");
  const DriverApi &d = graphDriver();
  check(d.cuStreamBeginCapture_v2(stream, CU_STREAM_CAPTURE_MODE_RELAXED), "cuStreamBeginCapture");
}

std::shared_ptr<Graph> Graph::endCapture(CUstream stream) {
  const DriverApi &d = graphDriver();
  CUgraph graph = nullptr;
  CUresult r = d.cuStreamEndCapture(stream, &graph);
  if (r != CUDA_SUCCESS) {
    if (graph)
      d.cuGraphDestroy(graph);
    throwCudaError(r, "cuStreamEndCapture");
  }
  size_t nodes = 0;
  CUgraphExec exec = nullptr;
  const char *call = "cuGraphGetNodes";
  r = d.cuGraphGetNodes(graph, nullptr, &nodes);
  if (r == CUDA_SUCCESS) {
    call = "cuGraphInstantiate";
    r = d.cuGraphInstantiateWithFlags(&exec, graph, 0);
  }
  if (r != CUDA_SUCCESS) {
    d.cuGraphDestroy(graph);
    throwCudaError(r, call);
  }
  try {
    return std::shared_ptr<Graph>(new Graph(graph, exec, nodes, Device::currentOrdinal()));
  } catch (...) {
    d.cuGraphExecDestroy(exec);
    d.cuGraphDestroy(graph);
    throw;
  }
}

void Graph::abandonCapture(CUstream stream) noexcept {
  try {
    const DriverApi &d = graphDriver();
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    if (d.cuStreamIsCapturing(stream, &status) != CUDA_SUCCESS ||
        status == CU_STREAM_CAPTURE_STATUS_NONE)
      return;
    CUgraph graph = nullptr;
    d.cuStreamEndCapture(stream, &graph); // errors ignored: the capture is being discarded
    if (graph)
      d.cuGraphDestroy(graph);
  } catch (...) { // no driver: nothing was being captured
  }
}

bool Graph::capturing(CUstream stream) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  check(graphDriver().cuStreamIsCapturing(stream, &status), "cuStreamIsCapturing");
  return status != CU_STREAM_CAPTURE_STATUS_NONE;
}

CUgraphNode Graph::lastCapturedNode(CUstream stream) {
  const DriverApi &d = graphDriver();
  if (!d.cuStreamGetCaptureInfo_v3)
    return nullptr;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  const CUgraphNode *deps = nullptr;
  size_t count = 0;
  check(d.cuStreamGetCaptureInfo_v3(stream, &status, nullptr, nullptr, &deps, nullptr, &count),
        "cuStreamGetCaptureInfo");
  return status == CU_STREAM_CAPTURE_STATUS_ACTIVE && count == 1 && deps ? deps[0] : nullptr;
}

void Graph::setKernelArguments(CUgraphNode node, CUfunction function, Dim3 grid, Dim3 block,
                               unsigned sharedMem, void *buffer, size_t bytes,
                               void **params) const {
  const DriverApi &d = graphDriver();
  if (!d.cuGraphExecKernelNodeSetParams_v2)
    throw DriverUnavailable("setting a captured kernel's arguments needs "
                            "cuGraphExecKernelNodeSetParams_v2, which this driver lacks (CUDA "
                            "12.0 or newer is needed)");
  void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &bytes,
                   CU_LAUNCH_PARAM_END};
  CUDA_KERNEL_NODE_PARAMS p{};
  p.func = function;
  p.gridDimX = grid.x;
  p.gridDimY = grid.y;
  p.gridDimZ = grid.z;
  p.blockDimX = block.x;
  p.blockDimY = block.y;
  p.blockDimZ = block.z;
  p.sharedMemBytes = sharedMem;
  // A kernel without parameters takes neither (the driver refuses an empty buffer).
  p.kernelParams = params;
  p.extra = params || bytes == 0 ? nullptr : extra;
  check(d.cuGraphExecKernelNodeSetParams_v2(exec_, node, &p), "cuGraphExecKernelNodeSetParams");
}

Graph::~Graph() {
  // Destroyed in the context of the device that captured it (its stream's).
  if (Device::Cleanup in{ordinal_}) { // errors ignored
    driver().cuGraphExecDestroy(exec_);
    driver().cuGraphDestroy(graph_);
  }
}

void Graph::launch(CUstream stream) const {
  check(graphDriver().cuGraphLaunch(exec_, stream), "cuGraphLaunch");
  joinLegacyStreamAfter(stream);
}

} // namespace ptxjit::runtime
