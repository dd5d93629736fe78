// cuda.graph(stream): stream capture into a CUDA graph and its replay (runtime/Graph.h).
//
//     with cuda.graph(stream) as g:      # captures the work submitted to `stream`
//         kernel[grid, block, stream](a, b)
//         ufunc(a, b, out=c, stream=stream)
//     g.replay()                          # all of it again, one cuGraphLaunch
//     g.kernels[0].rebind(a, 2.5)         # the first launch's arguments, for later replays
//
// Launches inside the block are ordinary launches on the captured stream, which the driver
// records instead of running; while a capture is under way, each also notes the node it added
// (noteCapturedLaunch), which is all the launch path does for graphs.
#include "bindings/DispatcherImpl.h"
#include "bindings/Errors.h"
#include "bindings/Streams.h"
#include "bindings/Target.h"
#include "compiler/Packing.h"
#include "runtime/Device.h"
#include "runtime/Graph.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace ptxjit::bindings {

int gGraphCaptures = 0;

namespace {

/// A kernel launch a capture recorded: what setting its arguments anew needs.
struct CapturedKernel {
  py::object kernel; ///< the @cuda.jit object: kept alive, as its module holds the node's code
  Dispatcher *dispatcher = nullptr;
  const compiler::Specialization *spec = nullptr; ///< the launch's (the kernel keeps it)
  CUgraphNode node = nullptr; ///< null where the driver could not say which node it added
  runtime::Dim3 grid, block;
  unsigned sharedMem = 0;
};

/// "(float32, array(float32, 1d, C))".
std::string typesText(const std::vector<const ir::Type *> &types) {
  std::string out = "(";
  for (size_t i = 0; i < types.size(); ++i)
    out += (i ? ", " : "") + types[i]->str();
  return out + ")";
}

class PyGraph;
/// The graphs capturing now (under the interpreter: gGraphCaptures is their number).
std::vector<PyGraph *> gCapturing;

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
    gCapturing.push_back(this);
    gGraphCaptures = static_cast<int>(gCapturing.size());
    return self;
  }

  ~PyGraph() { stopNoting(); }

  bool exit(py::handle excType) {
    if (state_ != State::Capturing)
      return false;
    stopNoting();
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
  CUstream handle() const { return handle_; }

  /// Records a launch on this graph's stream during its capture (noteCapturedLaunch).
  void note(CapturedKernel k) { kernels_.push_back(std::move(k)); }

  size_t kernelCount() const { return kernels_.size(); }
  const CapturedKernel &kernel(size_t i) const { return kernels_.at(i); }

  /// Sets the arguments of captured launch `i` to `args` for the replays enqueued from now on.
  void rebind(size_t i, PyObject *const *args, size_t nargs) const {
    if (state_ != State::Ready)
      throw std::logic_error("this cuda.graph has no graph: its capture failed");
    const CapturedKernel &k = kernels_.at(i);
    const std::string what = "kernel '" + k.dispatcher->name + "' (launch " + std::to_string(i) +
                             " of the captured block)";
    if (!k.node)
      throw PtxjitPyError("CudaSupportError",
                          "cannot set the arguments of " + what +
                              ": the driver did not say which graph node the launch added "
                              "(cuStreamGetCaptureInfo_v3 needs CUDA 12.3 or newer)");
    if (PyList_GET_SIZE(k.dispatcher->extensions.ptr()) > 0)
      throw py::type_error("cannot set the arguments of " + what +
                           ": the kernel has argument extensions, which prepare each launch's "
                           "arguments and would not run for a replay");
    if (!k.spec)
      throw py::type_error("cannot set the arguments of " + what +
                           ": its captured arguments could not be read as a graph's (host "
                           "arrays)");
    // The replays run on the graph's device: the arguments are read and checked as a launch
    // there reads them (device arrays of that device, or of one it has peer access to), and the
    // node keeps that device's function, whichever device this thread has current.
    const int ordinal = graph_->ordinal();
    runtime::Device::Selection on(ordinal);
    try {
      setArguments(k, what, args, nargs);
    } catch (py::value_error &e) { // a device array of another device than the thread's
      if (!on.switched())
        throw;
      throw py::value_error("cannot set the arguments of " + what + ", a launch on device " +
                            std::to_string(ordinal) + " (where the graph replays): " + e.what());
    }
    on.restore();
  }

private:
  enum class State { New, Capturing, Ready, Failed };

  /// rebind's work, with the graph's device current.
  void setArguments(const CapturedKernel &k, const std::string &what, PyObject *const *args,
                    size_t nargs) const {
    std::vector<uint64_t> buffer;
    const compiler::Specialization &spec = k.dispatcher->packForGraph(args, nargs, buffer);
    if (&spec != k.spec)
      throw py::type_error("cannot set the arguments of " + what + " to values of types " +
                           typesText(spec.argTypes) + ": it was captured for " +
                           typesText(k.spec->argTypes) +
                           ", and a graph's kernel node keeps its code; capture another graph "
                           "for other types");
    char *buf = reinterpret_cast<char *>(buffer.data());
    std::vector<void *> pointers;
    void **params = nullptr;
    if (!spec.paramBuffer() || spec.cooperativeLaunch) { // as Specialization::launchCuda
      pointers.resize(spec.plan.slots.size() + 1);
      compiler::pointAtSlots(spec.plan, buf, pointers.data());
      params = pointers.data();
    }
    graph_->setKernelArguments(k.node, spec.cudaFunction(graph_->ordinal()), k.grid, k.block,
                               k.sharedMem, buf, spec.plan.paramBytes, params);
  }

  /// Leaves gCapturing (at the end of the capture, or when destroyed during it).
  void stopNoting() noexcept {
    auto it = std::find(gCapturing.begin(), gCapturing.end(), this);
    if (it == gCapturing.end())
      return;
    gCapturing.erase(it);
    gGraphCaptures = static_cast<int>(gCapturing.size());
  }

  py::object stream_; // kept alive: the graph replays on it by default
  CUstream handle_ = nullptr;
  State state_ = State::New;
  std::shared_ptr<runtime::Graph> graph_;
  std::vector<CapturedKernel> kernels_; ///< in the order they were launched
};

/// g.kernels[i]: one captured launch of a @cuda.jit kernel.
struct PyGraphKernel {
  py::object graph; ///< the PyGraph (kept alive)
  size_t index;
  const PyGraph &g() const { return graph.cast<const PyGraph &>(); }
};

} // namespace

void noteCapturedLaunch(py::handle kernel, Dispatcher &d, runtime::Dim3 grid, runtime::Dim3 block,
                        unsigned sharedMem, py::handle stream, PyObject *const *args,
                        size_t nargs) {
  if (currentBackend() != codegen::Backend::CUDA || isDefaultStreamArg(stream.ptr()))
    return;
  CUstream h = streamHandle(stream, codegen::Backend::CUDA, true);
  auto it = std::find_if(gCapturing.begin(), gCapturing.end(),
                         [h](const PyGraph *g) { return g->handle() == h; });
  if (it == gCapturing.end())
    return; // captured by someone else (another library), or not at all
  CapturedKernel k;
  try {
    k.node = runtime::Graph::lastCapturedNode(h);
  } catch (const std::exception &) { // CudaError, DriverUnavailable
    k.node = nullptr;                // the replay is unaffected; setting its arguments says why not
  }
  try {
    std::vector<uint64_t> unused;
    k.spec = &d.packForGraph(args, nargs, unused);
  } catch (const std::exception &) {
    // The launch took these arguments, so only a host array (which a capture cannot stage
    // anyway) gets here: the launch stays recorded and rebind says it cannot be set.
    k.spec = nullptr;
  }
  k.kernel = py::reinterpret_borrow<py::object>(kernel);
  k.dispatcher = &d;
  k.grid = grid;
  k.block = block;
  k.sharedMem = sharedMem;
  (*it)->note(std::move(k));
}

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
      .def_property_readonly(
          "kernels",
          [](py::object self) {
            const PyGraph &g = self.cast<const PyGraph &>();
            py::list out;
            for (size_t i = 0; i < g.kernelCount(); ++i)
              out.append(py::cast(PyGraphKernel{self, i}));
            return py::tuple(out);
          },
          "The launches of @cuda.jit kernels captured, in launch order (GraphKernel objects).")
      .def("__repr__", [](const PyGraph &g) {
        return g.ready() ? "<ptxjit Graph: " + std::to_string(g.nodeCount()) + " nodes>"
                         : std::string("<ptxjit Graph (not captured)>");
      });

  py::class_<PyGraphKernel>(m, "GraphKernel",
                            "A kernel launch captured by cuda.graph: its kernel, configuration "
                            "and rebind(*args), which sets the arguments of later replays.")
      .def_property_readonly("kernel",
                             [](const PyGraphKernel &k) { return k.g().kernel(k.index).kernel; })
      .def_property_readonly("griddim",
                             [](const PyGraphKernel &k) {
                               runtime::Dim3 d = k.g().kernel(k.index).grid;
                               return py::make_tuple(d.x, d.y, d.z);
                             })
      .def_property_readonly("blockdim",
                             [](const PyGraphKernel &k) {
                               runtime::Dim3 d = k.g().kernel(k.index).block;
                               return py::make_tuple(d.x, d.y, d.z);
                             })
      .def_property_readonly("sharedmem",
                             [](const PyGraphKernel &k) { return k.g().kernel(k.index).sharedMem; })
      .def(
          "rebind",
          [](const PyGraphKernel &k, py::args args) {
            k.g().rebind(k.index, &PyTuple_GET_ITEM(args.ptr(), 0),
                         static_cast<size_t>(PyTuple_GET_SIZE(args.ptr())));
          },
          "Sets the arguments this launch takes in the replays enqueued from now on (values of "
          "the types it was captured with: scalars and device arrays).")
      .def("__repr__", [](const PyGraphKernel &k) {
        const CapturedKernel &c = k.g().kernel(k.index);
        return "<ptxjit GraphKernel " + std::to_string(k.index) + ": '" + c.dispatcher->name +
               "' " + (c.spec ? typesText(c.spec->argTypes) : std::string("(?)")) + ">";
      });
}

} // namespace ptxjit::bindings
