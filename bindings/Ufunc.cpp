// ptxjit._core.Ufunc: the object @vectorize and @guvectorize return. This file reads Python
// arguments into ufunc::CallArgs and makes the Python objects a call returns (NumPy arrays,
// device arrays, scalars); what a call means — checks, loop choice, outputs, staging — is
// ufunc/Call.h's. The type's tp_call slot is set directly so that a call pays no pybind11
// dispatch, and the common call on device arrays takes a fast path (fastElementwise).
#include "bindings/Ufunc.h"

#include "bindings/ArgTypes.h"
#include "bindings/DeviceArray.h"
#include "bindings/Dispatcher.h"
#include "bindings/DispatcherImpl.h"
#include "bindings/Errors.h"
#include "bindings/Gc.h"
#include "bindings/Snapshot.h"
#include "bindings/Streams.h"
#include "bindings/Target.h"
#include "ir/typing/Typing.h"
#include "ufunc/Call.h"

#include <pybind11/stl.h>

#include <cstring>
#include <new>
#include <type_traits>

namespace ptxjit::bindings {
namespace {

using ufunc::CallArg;
using ufunc::Shape;

/// The most inputs an elementwise call may have to take the fast path.
constexpr size_t kFastMaxInputs = 7;

struct PyUfunc {
  std::unique_ptr<ufunc::Ufunc> u;
  py::object dispatcher; ///< the device function (keeps it registered)
  py::object identity;   ///< None, or the identity value
  /// The fast path's last call (see fastElementwise), read and written with the GIL held only.
  struct Fast {
    bool valid = false;
    std::vector<uint32_t> codes; ///< the inputs' fingerprint
    codegen::Backend backend = codegen::Backend::Host;
    const compiler::Specialization *kernel = nullptr; ///< the flat loop kernel
    ufunc::ExecMode mode = ufunc::ExecMode::Serial;
    const ir::ScalarType *outType = nullptr;
    py::object outNpDtype; ///< numpy.dtype of outType
    /// Per input: the loop's parameter type (scalars are converted to it).
    const ir::ScalarType *params[kFastMaxInputs] = {};
  } fast;
  /// The low-occupancy warning was given (once per ufunc, as once per kernel).
  bool warnedLowOccupancy = false;
};

/// numba-cuda's performance warning for a loop launched on `smallGrid` blocks (0: none), once
/// per ufunc. Throws when the warning was turned into an error.
void noteLaunch(PyUfunc &pu, int64_t smallGrid) {
  if (!smallGrid || pu.warnedLowOccupancy) [[likely]]
    return;
  if (!warnUfuncLowOccupancy(pu.u->name, smallGrid, pu.warnedLowOccupancy))
    throw py::error_already_set();
}

CallArg callArgOf(const LeafValue &l, uint32_t code) {
  if (l.record)
    throw py::type_error("ufuncs take numbers and arrays of numbers, not records or strings (" +
                         l.record->str() + ")");
  if (l.kind != LeafValue::Kind::Array)
    return CallArg::scalar(typeFromCode(code, /*weak=*/true), l);
  ufunc::Memory memory = l.origin == LeafValue::Origin::HostArray     ? ufunc::Memory::Host
                         : l.origin == LeafValue::Origin::DeviceArray ? ufunc::Memory::Backend
                                                                      : ufunc::Memory::Gpu;
  codegen::Backend b = l.device ? l.device->backend() : codegen::Backend::Host;
  return CallArg::array(dtypeType(l.dtype), l.data, l.ndim, l.shape, l.strides, memory, b,
                        l.writeable);
}

/// A call's arguments as read: Python objects converted by numpy.asarray stay alive in `keep`,
/// device arrays made of foreign ones (foreignDeviceArray) in `foreign`.
struct CallArgs {
  ArgReader reader;
  std::vector<py::object> keep;
  std::vector<py::object> foreign;
};

/// A __cuda_array_interface__ producer other than a ptxjit device array (CuPy, PyTorch, a mapped
/// array, ...) as a ptxjit device array over its memory, made by cuda.as_cuda_array as
/// numba-cuda's CUDA ufuncs make it: the producer's stream is synchronized first (the protocol's
/// rule for consumers), and an output given so comes back as that device array. Null for
/// anything else, and for ufuncs of the CPU target, which take host data.
py::object foreignDeviceArray(const ufunc::Ufunc &u, PyObject *o) {
  if (u.target != ufunc::Target::Cuda || !o)
    return {};
  PyTypeObject *t = Py_TYPE(o);
  if (t == &PyFloat_Type || t == &PyLong_Type || t == &PyBool_Type || t == &PyComplex_Type ||
      t == numpyApi().ndarray || PyTuple_Check(o) || asDeviceArray(o))
    return {};
  if (!PyObject_HasAttrString(o, "__cuda_array_interface__"))
    return {};
  return py::module_::import("ptxjit.devicearray").attr("as_cuda_array")(py::handle(o));
}

/// `o`, or the device array foreignDeviceArray makes of it (kept alive in `held`).
PyObject *asUfuncOperand(const ufunc::Ufunc &u, PyObject *o, std::vector<py::object> &held) {
  py::object d = foreignDeviceArray(u, o);
  if (!d)
    return o;
  held.push_back(d);
  return d.ptr();
}

/// Reads argument `o` (index k) into `ca`; lists and other array-likes go through
/// numpy.asarray. `what`: "input" or "output" for messages; outputs must be arrays.
void readArg(CallArgs &ca, PyObject *o, int k, const std::string &fname, bool output) {
  std::string why;
  size_t before = ca.reader.codes.size();
  bool ok = !PyTuple_Check(o) && ca.reader.read(o, k, why);
  if (!ok && !output) {
    ca.reader.codes.resize(before);
    while (!ca.reader.leaves.empty() && ca.reader.leaves.back().arg == k)
      ca.reader.leaves.pop_back();
    py::object arr;
    try {
      arr = numpyApi().module.attr("asarray")(py::handle(o));
    } catch (py::error_already_set &) {
      throw py::type_error("ufunc '" + fname + "': cannot use an input of type " +
                           Py_TYPE(o)->tp_name + (why.empty() ? "" : " (" + why + ")"));
    }
    why.clear();
    ok = ca.reader.read(arr.ptr(), k, why);
    ca.keep.push_back(arr);
  }
  if (!ok || (output && ca.reader.leaves.back().kind != LeafValue::Kind::Array))
    throw py::type_error("ufunc '" + fname + "': " +
                         (output ? "out must be an array, not " : "unsupported input of type ") +
                         Py_TYPE(o)->tp_name + (why.empty() ? "" : " (" + why + ")"));
}

/// The backend a call's loops run on: the one in use for target 'cuda', else the host.
codegen::Backend backendOf(const ufunc::Ufunc &u) {
  return u.target == ufunc::Target::Cuda ? currentBackend() : codegen::Backend::Host;
}

/// A new output array as `req` asks: a device array of `backend`, or a NumPy array; with `arg`,
/// also as a CallArg. Its first use is the loop launched right after on `h`
/// (FirstUse::OnStreamNow). `npDtype`: req.dtype's numpy.dtype when the caller has it. `req` is
/// taken by value: its shape moves into the device array.
py::object newOutput(ufunc::OutputRequest req, codegen::Backend backend, PyObject *stream,
                     CUstream h, CallArg *arg, const py::object &npDtype = {}) {
  int item = req.dtype->byteSize();
  ufunc::Strides strides = ufunc::contiguousStrides(req.shape, item, req.fortran);
  py::object dtype = npDtype ? npDtype : numpyDtypeOf(req.dtype);
  int ndim = static_cast<int>(req.shape.size());
  if (req.device) {
    size_t bytes = static_cast<size_t>(ufunc::shapeSize(req.shape) * item);
    std::shared_ptr<runtime::Allocation> alloc =
        backend == codegen::Backend::CUDA
            ? runtime::allocateDevice(bytes, h, runtime::FirstUse::OnStreamNow)
            : runtime::allocateHost(bytes);
    if (arg) // before the shape and strides move into the array
      *arg = CallArg::array(req.dtype, alloc->address(), ndim, req.shape.data(), strides.data(),
                            ufunc::Memory::Backend, backend, true);
    // The default stream (0 or None) is remembered as None without a type check.
    bool defaultStream =
        stream == Py_None || (PyLong_CheckExact(stream) && PyLong_AsLongLong(stream) == 0);
    return wrapDeviceArray(std::make_shared<DeviceNDArray>(
        std::move(alloc), 0, std::move(req.shape), std::move(strides), dtypeOf(req.dtype),
        std::move(dtype), backend, defaultStream ? py::none() : streamObject(stream)));
  }
  py::object obj =
      numpyApi().module.attr("empty")(py::cast(req.shape), dtype, req.fortran ? "F" : "C");
  if (arg)
    *arg = CallArg::array(req.dtype, reinterpret_cast<uint64_t>(numpyFields(obj.ptr()).data), ndim,
                          req.shape.data(), strides.data(), ufunc::Memory::Host,
                          codegen::Backend::Host, true);
  return obj;
}

py::object unwrapScalar(py::object r) {
  if (!py::isinstance(r, numpyApi().module.attr("ndarray")))
    r = r.attr("copy_to_host")(); // a 0-d device array: its value comes back
  return py::reinterpret_steal<py::object>(PyObject_GetItem(r.ptr(), py::tuple().ptr()));
}

/// Reads a call's output arguments into `outs` (u.nout of them), borrowed from its arguments
/// (alive for the call): positional after the inputs, or out= (an array, or a tuple of one per
/// output); null where the call allocates. Its stream= goes into `stream` (left as is when not
/// given). Other keywords are refused. Wrong argument counts raise numba-cuda's errors.
void readOutputArgs(const ufunc::Ufunc &u, PyObject *const *args, size_t nargs, PyObject *kwargs,
                    PyObject **outs, PyObject *&stream) {
  PyObject *outKw = nullptr;
  PyObject *key, *value;
  for (Py_ssize_t pos = 0; kwargs && PyDict_Next(kwargs, &pos, &key, &value);) {
    std::string k = py::cast<std::string>(py::handle(key));
    if (k != "out" && k != "stream")
      throw py::type_error("ufunc '" + u.name + "' got an unsupported keyword argument '" + k +
                           "' (ptxjit ufuncs take out= and stream=)");
    (k == "out" ? outKw : stream) = value;
  }
  if (outKw == Py_None)
    outKw = nullptr;
  if (nargs != u.nin && (nargs != u.nin + u.nout || outKw)) [[unlikely]] {
    // numba-cuda's words (GUFuncCallSteps), the ufunc's name in front.
    if (outKw && nargs > u.nin)
      throw py::value_error("cannot specify argument 'out' as both positional and keyword");
    auto count = [](size_t n) {
      return std::to_string(n) + " positional argument" + (n == 1 ? "" : "s");
    };
    const char *kind = u.layout ? "gufunc" : "ufunc";
    throw py::type_error(std::string(kind) + " '" + u.name + "': This " + kind + " accepts " +
                         count(u.nin) + " (when providing input only) or " + count(u.nin + u.nout) +
                         " (when providing input and output). Got " + count(nargs) + ".");
  }
  if (nargs > u.nin) {
    for (size_t k = 0; k < u.nout; ++k)
      outs[k] = args[u.nin + k] == Py_None ? nullptr : args[u.nin + k];
  } else if (outKw && PyTuple_Check(outKw)) {
    if (static_cast<size_t>(PyTuple_GET_SIZE(outKw)) != u.nout)
      throw py::value_error("ufunc '" + u.name + "': out must be a tuple of " +
                            std::to_string(u.nout) + " array(s)");
    for (size_t k = 0; k < u.nout; ++k) {
      PyObject *o = PyTuple_GET_ITEM(outKw, static_cast<Py_ssize_t>(k));
      outs[k] = o == Py_None ? nullptr : o;
    }
  } else if (outKw) {
    if (u.nout != 1)
      throw py::type_error("ufunc '" + u.name + "': out must be a tuple of " +
                           std::to_string(u.nout) + " arrays");
    outs[0] = outKw;
  }
}

// ---- elementwise fast path -------------------------------------------------------------------

/// The common call `f(a, b, ...)` on device arrays of one shape, all C-contiguous, and scalars,
/// with the output allocated by the call (`outObj` null) or given as a C-contiguous device
/// array of that shape and of the loop's output dtype: no broadcasting, no casts, no staging, a
/// flat loop. It skips the general path's planning: the last such call's flat kernel is kept in
/// `pu.fast`, keyed by the inputs' fingerprint and the backend. Returns null (with no Python
/// error set and nothing done) when the call does not qualify; the general path then handles
/// it (and raises the errors).
PyObject *fastElementwise(PyUfunc &pu, const ArgReader &reader, PyObject *outObj,
                          PyObject *streamObj) {
  ufunc::Ufunc &u = *pu.u;
  size_t nin = u.nin;
  if (u.layout || nin > kFastMaxInputs || reader.leaves.size() != nin)
    return nullptr;
  const LeafValue *first = nullptr;
  for (size_t k = 0; k < nin; ++k) {
    const LeafValue &l = reader.leaves[k];
    if (l.kind != LeafValue::Kind::Array)
      continue;
    if (l.record || l.origin != LeafValue::Origin::DeviceArray ||
        ((reader.codes[k] >> 12) & 0x3u) != static_cast<uint32_t>(ir::Layout::C))
      return nullptr;
    if (first && (l.ndim != first->ndim ||
                  std::memcmp(l.shape, first->shape, sizeof(int64_t) * l.ndim) != 0))
      return nullptr;
    first = first ? first : &l;
  }
  if (!first)
    return nullptr;
  int64_t n = 1;
  for (int d = 0; d < first->ndim; ++d)
    n *= first->shape[d];
  codegen::Backend backend = backendOf(u);
  for (size_t k = 0; k < nin; ++k)
    if (reader.leaves[k].kind == LeafValue::Kind::Array &&
        reader.leaves[k].device->backend() != backend)
      return nullptr;
  const DeviceNDArray *out = nullptr;
  if (outObj) {
    out = asDeviceArray(outObj);
    if (!out || out->readonly() || out->backend() != backend || out->layout() != ir::Layout::C ||
        out->device() != runtime::Device::currentOrdinal() || out->ndim() != first->ndim ||
        !std::equal(out->shape().begin(), out->shape().end(), first->shape))
      return nullptr;
  }
  if (n <= 0)
    return nullptr;

  PyUfunc::Fast &f = pu.fast;
  if (!f.valid || f.backend != backend || f.codes != reader.codes) [[unlikely]] {
    // Resolve and fetch the flat kernel; both may compile, releasing the GIL, so `f` is written
    // only afterwards.
    std::vector<ir::InputType> ins;
    std::vector<ufunc::Operand> ops(nin + 1);
    for (size_t k = 0; k < nin; ++k) {
      ins.push_back(callArgOf(reader.leaves[k], reader.codes[k]).type);
      ops[k].scalar = reader.leaves[k].kind != LeafValue::Kind::Array;
      ops[k].dtype = dtypeType(reader.leaves[k].dtype);
    }
    int loop = u.resolve(ins);
    const ufunc::Loop &L = u.loop(loop);
    ops[nin].dtype = L.outputs[0];
    const compiler::Specialization *kernel = &u.flatKernel(loop, backend, ops);
    f.valid = false;
    f.codes = reader.codes;
    f.backend = backend;
    f.kernel = kernel;
    f.mode = ufunc::execMode(u.target, backend);
    f.outType = L.outputs[0];
    f.outNpDtype = numpyDtypeOf(f.outType);
    for (size_t k = 0; k < nin; ++k)
      f.params[k] = ir::cast<ir::ScalarType>(ir::concretize(L.params[k]));
    f.valid = true;
  }
  if (out && out->dtype() != dtypeOf(f.outType))
    return nullptr; // a cast on output: the general path checks it

  // The loop kernel's arguments: n, per input its data or its value, the output's data, each
  // made once in raw storage (an array of ArgValues would first initialize all of them).
  using compiler::ArgValue;
  static_assert(std::is_trivially_destructible_v<ArgValue>);
  alignas(ArgValue) unsigned char storage[sizeof(ArgValue) * (kFastMaxInputs + 2)];
  auto *leaves = reinterpret_cast<ArgValue *>(storage);
  new (&leaves[0]) ArgValue(ArgValue::integer(n));
  for (size_t k = 0; k < nin; ++k) {
    const LeafValue &l = reader.leaves[k];
    if (l.kind != LeafValue::Kind::Array && (reader.codes[k] & codes::kPython))
      ufunc::checkPythonInt(l, f.params[k]);
    if (l.kind == LeafValue::Kind::Array)
      new (&leaves[k + 1]) ArgValue(ArgValue::array(l.data, 0, nullptr, nullptr));
    else
      new (&leaves[k + 1]) ArgValue(l);
  }
  CUstream h = streamHandle(streamObj, backend, true);
  py::object result = py::reinterpret_borrow<py::object>(outObj);
  if (!out) {
    ufunc::OutputRequest req{Shape(first->shape, first->shape + first->ndim), f.outType, true};
    result = newOutput(std::move(req), backend, streamObj, h, nullptr, f.outNpDtype);
  }
  uint64_t outData = out ? out->address() : asDeviceArray(result.ptr())->address();
  new (&leaves[nin + 1]) ArgValue(ArgValue::array(outData, 0, nullptr, nullptr));
  noteLaunch(pu, ufunc::launchElementwise(*f.kernel, f.mode, n, leaves, h));
  return result.release().ptr();
}

// ---- calls ---------------------------------------------------------------------------------

py::object call(PyUfunc &pu, PyObject *const *args, size_t nargs, PyObject *kwargs) {
  ufunc::Ufunc &u = *pu.u;
  // The default stream, as a call that names none gets it.
  static PyObject *const defaultStream = PyLong_FromLong(0);
  PyObject *streamObj = defaultStream;
  // Outputs: on the stack for the common call (one), else on the heap.
  PyObject *inlineOuts[4] = {};
  std::vector<PyObject *> heapOuts(u.nout > 4 ? u.nout : 0, nullptr);
  PyObject **outObjs = u.nout > 4 ? heapOuts.data() : inlineOuts;
  readOutputArgs(u, args, nargs, kwargs, outObjs, streamObj);
  std::vector<py::object> foreignOuts;
  for (size_t k = 0; k < u.nout; ++k)
    outObjs[k] = asUfuncOperand(u, outObjs[k], foreignOuts);

  thread_local CallArgs reused;
  static thread_local bool busy = false;
  CallArgs local;
  CallArgs &ca = busy ? local : reused; // a call made while reading arguments (asarray)
  struct Busy {
    bool &b, prev;
    ~Busy() { b = prev; }
  } busyGuard{busy, busy};
  busy = true;
  ca.reader.clear();
  ca.keep.clear();
  // The views of foreign arrays hold their producers: dropped when the call ends, not kept
  // until the thread's next call.
  struct DropForeign {
    CallArgs &c;
    ~DropForeign() { c.foreign.clear(); }
  } dropForeign{ca};
  for (size_t k = 0; k < u.nin; ++k)
    readArg(ca, asUfuncOperand(u, args[k], ca.foreign), static_cast<int>(k), u.name, false);
  if (ca.keep.empty() && u.nout == 1)
    if (PyObject *r = fastElementwise(pu, ca.reader, outObjs[0], streamObj))
      return py::reinterpret_steal<py::object>(r);

  std::vector<CallArg> inputs;
  for (size_t k = 0; k < u.nin; ++k)
    inputs.push_back(callArgOf(ca.reader.leaves[k], ca.reader.codes[k]));
  CallArgs outReader;
  std::vector<CallArg> outs(u.nout);
  std::vector<const CallArg *> given(u.nout, nullptr);
  for (size_t k = 0, r = 0; k < u.nout; ++k) {
    if (!outObjs[k])
      continue;
    readArg(outReader, outObjs[k], static_cast<int>(k), u.name, true);
    outs[k] = callArgOf(outReader.reader.leaves[r], outReader.reader.codes[r]);
    given[k] = &outs[k];
    ++r;
  }
  codegen::Backend backend = backendOf(u);
  ufunc::CallPlan plan = ufunc::planCall(u, backend, std::move(inputs), given);
  CUstream h = streamHandle(streamObj, backend, true);
  std::vector<py::object> results(u.nout);
  for (size_t k = 0; k < u.nout; ++k)
    results[k] = plan.allocate[k] ? newOutput(*plan.allocate[k], backend, streamObj, h, &outs[k])
                                  : py::reinterpret_borrow<py::object>(outObjs[k]);
  int64_t smallGrid;
  {
    py::gil_scoped_release release;
    smallGrid = ufunc::runCall(u, plan, outs, h);
  }
  warnCompileWarnings(); // of the loop kernels compiled for this call
  noteLaunch(pu, smallGrid);
  for (size_t k = 0; k < u.nout; ++k) {
    bool zeroDimHost =
        plan.allocate[k] && !plan.allocate[k]->device && plan.allocate[k]->shape.empty();
    if (u.layout ? zeroDimHost : plan.scalarResult)
      results[k] = unwrapScalar(results[k]);
  }
  if (u.nout == 1)
    return results[0];
  py::tuple t(u.nout);
  for (size_t k = 0; k < u.nout; ++k)
    t[k] = results[k];
  return t;
}

py::object reduceCall(PyUfunc &pu, py::object array, py::object axis, py::object dtype,
                      py::object outObj, bool keepdims, py::object streamObj, int64_t size) {
  ufunc::Ufunc &u = *pu.u;
  if (!dtype.is_none())
    throw py::type_error("ufunc '" + u.name + "'.reduce: dtype= is not supported by ptxjit");
  CallArgs ca, outReader;
  readArg(ca, asUfuncOperand(u, array.ptr(), ca.foreign), 0, u.name, false);
  std::optional<std::vector<int64_t>> axes;
  if (PyTuple_Check(axis.ptr()) || PyList_Check(axis.ptr()))
    axes = py::cast<std::vector<int64_t>>(axis);
  else if (!axis.is_none())
    axes = std::vector<int64_t>{py::cast<int64_t>(axis)};
  CallArg out;
  if (PyTuple_Check(outObj.ptr()) && PyTuple_GET_SIZE(outObj.ptr()) == 1)
    outObj = py::reinterpret_borrow<py::object>(PyTuple_GET_ITEM(outObj.ptr(), 0));
  if (py::object d = foreignDeviceArray(u, outObj.ptr()))
    outObj = d;
  if (!outObj.is_none()) {
    readArg(outReader, outObj.ptr(), 0, u.name, true);
    out = callArgOf(outReader.reader.leaves[0], outReader.reader.codes[0]);
  }
  codegen::Backend backend = backendOf(u);
  ufunc::ReducePlan plan =
      ufunc::planReduce(u, backend, callArgOf(ca.reader.leaves[0], ca.reader.codes[0]), axes,
                        keepdims, outObj.is_none() ? nullptr : &out, size);
  CUstream h = streamHandle(streamObj, backend, true);
  py::object result = outObj;
  if (plan.allocate)
    result = newOutput(*plan.allocate, backend, streamObj.ptr(), h, &out);
  {
    py::gil_scoped_release release;
    ufunc::runReduce(u, plan, out, h);
  }
  warnCompileWarnings();
  // A full reduction gives a scalar (copied back from a device result, as Numba does).
  return plan.scalarResult ? unwrapScalar(result) : result;
}

PyObject *ufuncCallSlot(PyObject *self, PyObject *args, PyObject *kwargs) {
  try {
    PyUfunc &pu = simpleInstance<PyUfunc>(self, "Ufunc (use ptxjit.vectorize)");
    size_t n = static_cast<size_t>(PyTuple_GET_SIZE(args));
    return call(pu, n ? &PyTuple_GET_ITEM(args, 0) : nullptr, n, kwargs).release().ptr();
  } catch (...) {
    setPythonError();
    return nullptr;
  }
}

// ---- construction --------------------------------------------------------------------------

std::unique_ptr<PyUfunc> makeUfunc(py::object dispatcher, const std::string &name,
                                   const std::vector<std::string> &sigs, const std::string &target,
                                   py::object layoutText, py::object identity, size_t nin) {
  std::optional<DispatcherIdentity> id = dispatcherIdentity(dispatcher);
  if (!id || !id->isDevice)
    throw py::type_error("Ufunc needs a device function (cuda.jit(device=True))");
  std::optional<ufunc::GufuncLayout> layout;
  if (!layoutText.is_none()) {
    layout = ufunc::parseLayout(py::cast<std::string>(layoutText));
    nin = layout->nin();
  }
  compiler::FunctionOptions fopts = compiler::Compiler::instance().options(id->functionId);
  ufunc::CompileHooks hooks;
  // Called before a compile starts, never under the compiler's lock: the interpreter is taken
  // when the call released it around the loop. `fn` is kept alive by PyUfunc::dispatcher.
  PyObject *fn = id->pyFunc.ptr();
  int fid = id->functionId;
  hooks.snapshot = [fn, fid] {
    py::gil_scoped_acquire gil;
    return snapshotWithCallees(fn, fid);
  };
  hooks.run = [](const std::function<void()> &work) {
    if (!PyGILState_Check())
      return work();
    py::gil_scoped_release release;
    work();
  };
  // Loop kernels are bounds-checked as kernels are (the launch reads the fault record and
  // raises IndexError naming the ufunc), but raise nothing on the host: a `raise` in the body
  // ends its thread (docs/reliability.md).
  hooks.options = [fopts](codegen::Backend b) {
    codegen::CompileOptions o = compileOptionsFor(b, fopts);
    o.exceptions = false;
    return o;
  };
  auto pu = std::make_unique<PyUfunc>();
  pu->u = std::make_unique<ufunc::Ufunc>(id->functionId, name, ufunc::targetFromName(target), nin,
                                         layout, std::move(hooks));
  pu->dispatcher = dispatcher;
  pu->identity = identity;
  if (!identity.is_none()) {
    ArgReader r;
    std::string why;
    if (!r.read(identity.ptr(), 0, why) || r.leaves[0].kind == LeafValue::Kind::Array)
      throw py::type_error("the identity of ufunc '" + name + "' must be a number");
    pu->u->identity = r.leaves[0];
  }
  for (const std::string &text : sigs) {
    ir::Signature sig = ir::parseSignature(text);
    pu->u->addLoop(sig.args, sig.returnType);
  }
  pu->u->lazy = sigs.empty();
  return pu;
}

/// The Python objects a PyUfunc holds, for the cyclic collector (the device function's
/// globals usually hold the ufunc).
void ufuncReferents(const PyUfunc &pu, GcVisitor &visit) {
  visit(pu.dispatcher);
  visit(pu.identity);
  visit(pu.fast.outNpDtype);
}

} // namespace

void defineUfunc(py::module_ &m) {
  py::class_<PyUfunc> cls(m, "Ufunc", py::dynamic_attr(), gcTraversed<PyUfunc, ufuncReferents>(),
                          "A ufunc made by @vectorize or @guvectorize.");
  cls.def(py::init(&makeUfunc), py::arg("dispatcher"), py::arg("name"), py::arg("signatures"),
          py::arg("target"), py::arg("layout"), py::arg("identity"), py::arg("nin"))
      .def("reduce", &reduceCall, py::arg("array"), py::arg("axis") = 0,
           py::arg("dtype") = py::none(), py::arg("out") = py::none(), py::arg("keepdims") = false,
           py::arg("stream") = 0, py::arg("_size") = -1,
           "Reduces `array` along `axis` (an int, a tuple, or None for all) as NumPy's "
           "ufunc.reduce.")
      .def_property_readonly("nin", [](const PyUfunc &pu) { return pu.u->nin; })
      .def_property_readonly("nout", [](const PyUfunc &pu) { return pu.u->nout; })
      .def_property_readonly("nargs", [](const PyUfunc &pu) { return pu.u->nin + pu.u->nout; })
      .def_property_readonly("ntypes", [](const PyUfunc &pu) { return pu.u->loopCount(); })
      .def_property_readonly("identity", [](const PyUfunc &pu) { return pu.identity; })
      .def_property_readonly("signature",
                             [](const PyUfunc &pu) -> py::object {
                               return pu.u->layout ? py::object(py::str(pu.u->layout->text))
                                                   : py::none();
                             })
      .def_property_readonly("target",
                             [](const PyUfunc &pu) { return ufunc::targetName(pu.u->target); })
      .def_property_readonly("device_function", [](const PyUfunc &pu) { return pu.dispatcher; })
      .def(
          "_kernel_texts",
          [](const PyUfunc &pu) {
            py::list l;
            for (const compiler::Specialization *k : pu.u->kernels())
              l.append(py::make_tuple(k->symbol, llvmIRText(*k), k->ptx));
            return l;
          },
          "(symbol, LLVM IR, PTX) of each loop kernel compiled so far.")
      .def("__repr__", [](const PyUfunc &pu) {
        return std::string("<ptxjit ") + (pu.u->layout ? "gufunc '" : "ufunc '") + pu.u->name +
               "'>";
      });
  auto *type = reinterpret_cast<PyTypeObject *>(cls.ptr());
  // The call goes straight to C++ (no pybind11 argument dispatch).
  type->tp_call = ufuncCallSlot;
  PyType_Modified(type);
}

} // namespace ptxjit::bindings
