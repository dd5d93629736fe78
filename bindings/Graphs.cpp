// cuda.graph(stream): stream capture into a CUDA graph and its replay (runtime/Graph.h).
//
//     with cuda.graph(stream) as g:      # captures the work submitted to `stream`
//         kernel[grid, block, stream](a, b)
//         ufunc(a, b, out=c, stream=stream)
//     g.replay()                          # all of it again, one cuGraphLaunch
//
// Nothing here is on the launch path: launches inside the block are ordinary launches on the
// captured stream, which the driver records instead of running.
#include "bindings/Errors.h"
#include "bindings/Streams.h"
#include "bindings/Target.h"
#include "runtime/Graph.h"

#include <stdexcept>
#include <string>

namespace ptxjit::bindings {

namespace {

class PyGraph {
public:
  explicit PyGraph(py::object stream) : stream_(std::move(stream)) {
    if (currentBackend() != codegen::Backend::CUDA)
      throw PtxjitPyError("CudaSupportError",
                          "CUDA graphs need the CUDA backend: on the CPU backend work runs as it "
                          "is submitted and cannot be captured (cuda.current_target() is 'cpu')");
    if (!py::isinstance<PyStream>(stream_) || stream_.cast<const PyStream &>().isDefault())
      throw py::type_error("cuda.graph(stream) needs a stream made by cuda.stream(): the legacy "
                           "default stream cannot be captured");
    handle_ = streamHandle(stream_, codegen::Backend::CUDA);
  }

  py::object enter(py::object self) {
    if (state_ != State::New)
      throw std::logic_error("a cuda.graph captures once; make a new one to capture again");
    runtime::Graph::beginCapture(handle_);
    state_ = State::Capturing;
    return self;
  }

  bool exit(py::handle excType) {
    if (state_ != State::Capturing)
      return false;
    if (!excType.is_none()) { // the block raised: discard the capture, let the error through
      runtime::Graph::abandonCapture(handle_);
      state_ = State::Failed;
      return false;
    }
    state_ = State::Failed;
    try {
      graph_ = runtime::Graph::endCapture(handle_);
    } catch (const runtime::CudaError &e) {
      if (e.code() != CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
        throw;
      throw runtime::CudaError(e.code(), e.call(),
                               "a call inside the captured block broke the capture: work on "
                               "another stream that synchronizes with it (the legacy default "
                               "stream), or a synchronous copy or allocation on it");
    }
    state_ = State::Ready;
    return false;
  }

  void replay(py::handle stream) const {
    if (state_ != State::Ready)
      throw std::logic_error(state_ == State::Failed
                                 ? "this cuda.graph has no graph: its capture failed"
                                 : "this cuda.graph has not been captured yet: replay it after "
                                   "its `with` block");
    graph_->launch(stream.is_none() ? handle_ : streamHandle(stream, codegen::Backend::CUDA));
  }

  size_t nodeCount() const { return graph_ ? graph_->nodeCount() : 0; }
  const py::object &stream() const { return stream_; }
  bool ready() const { return state_ == State::Ready; }

private:
  enum class State { New, Capturing, Ready, Failed };
  py::object stream_; // kept alive: the graph replays on it by default
  CUstream handle_ = nullptr;
  State state_ = State::New;
  std::shared_ptr<runtime::Graph> graph_;
};

} // namespace

void defineGraphs(py::module_ &m) {
  py::class_<PyGraph>(m, "Graph",
                      "cuda.graph(stream): captures the work submitted to `stream` inside a "
                      "`with` block into a CUDA graph; replay() runs it all again.")
      .def(py::init<py::object>(), py::arg("stream"))
      .def("__enter__", [](py::object self) { return self.cast<PyGraph &>().enter(self); })
      .def(
          "__exit__",
          [](PyGraph &g, py::handle type, py::handle, py::handle) { return g.exit(type); },
          py::arg("exc_type"), py::arg("exc_value"), py::arg("traceback"))
      .def("replay", &PyGraph::replay, py::arg("stream") = py::none(),
           "Enqueues the captured work once more on `stream` (default: the captured stream).")
      .def_property_readonly("node_count", &PyGraph::nodeCount,
                             "The number of operations (kernels, copies, fills) captured.")
      .def_property_readonly("stream", &PyGraph::stream)
      .def_property_readonly("ready", &PyGraph::ready,
                             "True once the capture ended and the graph can be replayed.")
      .def("__repr__", [](const PyGraph &g) {
        return g.ready() ? "<ptxjit Graph: " + std::to_string(g.nodeCount()) + " nodes>"
                         : std::string("<ptxjit Graph (not captured)>");
      });
}

} // namespace ptxjit::bindings
