// ptxjit._core.Ufunc: the object @vectorize and @guvectorize return. The call path is C++ end
// to end: arguments are read with the launch path's ArgReader, the loop is found through a
// cache keyed by the argument fingerprint, shapes broadcast, the output is allocated (device
// memory from the caching allocator), host arrays are staged when the loop runs on the GPU, and
// the loop kernel is launched (ufunc/Ufunc.h). The type's tp_call slot is set directly so that
// a call pays no pybind11 dispatch.
#include "bindings/Ufunc.h"

#include "bindings/ArgTypes.h"
#include "bindings/DeviceArray.h"
#include "bindings/Dispatcher.h"
#include "bindings/DispatcherImpl.h"
#include "bindings/Errors.h"
#include "bindings/Snapshot.h"
#include "bindings/Streams.h"
#include "bindings/Target.h"
#include "compiler/Compiler.h"
#include "ir/Typing.h"
#include "runtime/Device.h"
#include "runtime/Driver.h"
#include "runtime/Memory.h"
#include "ufunc/Ufunc.h"

#include <pybind11/stl.h>

#include <cstring>
#include <unordered_map>

namespace ptxjit::bindings {
namespace {

using ufunc::Operand;
using ufunc::Shape;
using ufunc::Strides;

/// The most inputs an elementwise call may have to take the fast path.
constexpr size_t kFastMaxInputs = 7;

struct PyUfunc {
  std::unique_ptr<ufunc::Ufunc> u;
  py::object dispatcher; ///< the device function (keeps it registered)
  py::object identity;   ///< None, or the identity value
  /// Loop per argument fingerprint (resolution is the same on both backends).
  std::vector<uint32_t> lastCodes;
  int lastLoop = -1;
  std::unordered_map<std::vector<uint32_t>, int, CodesHash> loopCache;
  /// The fast path's last call (see fastElementwise). Like the fields above, read and written
  /// only with the GIL held (never across a GIL release), so it needs no lock of its own.
  struct Fast {
    bool valid = false;
    std::vector<uint32_t> codes; ///< the inputs' fingerprint
    codegen::Backend backend = codegen::Backend::Host;
    int loop = -1;
    const ufunc::LoopKernel *kernel = nullptr; ///< the flat loop kernel (owned by the Ufunc)
    ufunc::ExecMode mode = ufunc::ExecMode::Serial;
    const ir::ScalarType *outType = nullptr;
    py::object outNpDtype; ///< numpy.dtype of outType
    /// Per input: the loop's parameter type (scalars are converted to it).
    const ir::ScalarType *params[kFastMaxInputs] = {};
  } fast;
};

PyTypeObject *gUfuncType = nullptr;

PyUfunc &ufuncOf(PyObject *self) {
  auto *inst = reinterpret_cast<py::detail::instance *>(self);
  if (inst->simple_layout) {
    if (!inst->simple_holder_constructed)
      throw py::type_error("this Ufunc was never initialized (use ptxjit.vectorize)");
    return *static_cast<PyUfunc *>(inst->simple_value_holder[0]);
  }
  return py::handle(self).cast<PyUfunc &>();
}

/// Runs `f`, turning ufunc-layer errors into the Python exceptions NumPy raises.
template <typename F> auto translated(F &&f) -> decltype(f()) {
  try {
    return f();
  } catch (const ufunc::TypeMismatch &e) {
    throw py::type_error(e.what());
  }
}

py::object numpyModule() { return numpyApi().module; }

/// The numpy.dtype object of a scalar type (cached).
py::object numpyDtype(const ir::ScalarType *t) {
  static std::unordered_map<const ir::ScalarType *, py::object> *cache =
      new std::unordered_map<const ir::ScalarType *, py::object>();
  auto it = cache->find(t);
  if (it != cache->end())
    return it->second;
  py::object d = numpyModule().attr("dtype")(dtypeName(dtypeOf(t)));
  (*cache)[t] = d;
  return d;
}

ufunc::InputType inputTypeOf(const LeafValue &l, uint32_t code) {
  if ((code & codes::kTagMask) == codes::kScalar && (code & codes::kPython))
    return l.dtype == DType::Float64      ? ir::types::weakFloat()
           : l.dtype == DType::Complex128 ? ir::types::weakComplex()
                                          : ir::types::weakInt();
  return dtypeType(l.dtype);
}

ufunc::ScalarValue scalarOf(const LeafValue &l) {
  ufunc::ScalarValue v;
  switch (l.kind) {
  case LeafValue::Kind::Bool:
    v.kind = ufunc::ScalarValue::Kind::Bool;
    break;
  case LeafValue::Kind::Int:
    v.kind = ufunc::ScalarValue::Kind::Int;
    break;
  case LeafValue::Kind::UInt:
    v.kind = ufunc::ScalarValue::Kind::UInt;
    break;
  case LeafValue::Kind::Float:
    v.kind = ufunc::ScalarValue::Kind::Float;
    break;
  default:
    v.kind = ufunc::ScalarValue::Kind::Complex;
    break;
  }
  v.b = l.b;
  v.i = l.i;
  v.u = l.u;
  v.re = l.re;
  v.im = l.im;
  return v;
}

/// NEP 50: a Python int must fit the integer type it is converted to.
void checkPythonInt(const LeafValue &l, const ir::ScalarType *t) {
  if (t->kind() != ir::TypeKind::Int)
    return;
  int bits = t->bits();
  bool ok;
  if (l.kind == LeafValue::Kind::UInt)
    ok = !t->isSigned() && bits == 64;
  else if (t->isSigned())
    ok = bits == 64 || (l.i >= -(int64_t(1) << (bits - 1)) && l.i < (int64_t(1) << (bits - 1)));
  else
    ok = l.i >= 0 && (bits == 64 || l.i < (int64_t(1) << bits));
  if (!ok) {
    std::string v = l.kind == LeafValue::Kind::UInt ? std::to_string(l.u) : std::to_string(l.i);
    PyErr_SetString(PyExc_OverflowError,
                    ("Python integer " + v + " out of bounds for " + t->str()).c_str());
    throw py::error_already_set();
  }
}

/// The lowest byte offset and the byte extent an array leaf touches.
void extentOf(int ndim, const int64_t *shape, const int64_t *strides, int itemsize, int64_t &low,
              size_t &bytes) {
  low = 0;
  int64_t high = 0;
  for (int k = 0; k < ndim; ++k) {
    if (shape[k] == 0) {
      low = 0;
      bytes = 0;
      return;
    }
    int64_t span = (shape[k] - 1) * strides[k];
    (span < 0 ? low : high) += span;
  }
  bytes = static_cast<size_t>(high - low + itemsize);
}

/// A host array copied to the device for one call.
struct Staged {
  std::shared_ptr<runtime::Allocation> buf;
  char *host = nullptr;
  size_t bytes = 0;
  bool copyBack = false;
};

/// Copies host array memory [data+low, +bytes) to a new device buffer; returns the device
/// address corresponding to `data`.
uint64_t stage(std::vector<Staged> &staged, uint64_t data, int ndim, const int64_t *shape,
               const int64_t *strides, int itemsize, bool copyIn, bool copyBack, CUstream h) {
  int64_t low;
  size_t bytes;
  extentOf(ndim, shape, strides, itemsize, low, bytes);
  Staged s;
  s.host = reinterpret_cast<char *>(data) + low;
  s.bytes = bytes;
  s.copyBack = copyBack;
  s.buf = runtime::allocateDevice(bytes, h, runtime::FirstUse::OnStreamNow);
  if (copyIn && bytes)
    runtime::copyHostToDevice(s.buf->devicePtr(), s.host, bytes, h);
  uint64_t dev = s.buf->devicePtr() - static_cast<uint64_t>(low);
  staged.push_back(std::move(s));
  return dev;
}

void unstage(std::vector<Staged> &staged, CUstream h) {
  for (Staged &s : staged)
    if (s.copyBack && s.bytes)
      runtime::copyDeviceToHost(s.host, s.buf->devicePtr(), s.bytes, h);
}

struct CallArgs {
  ArgReader reader;
  std::vector<py::object> keep; ///< converted inputs (np.asarray of lists)
  std::vector<PyObject *> objs;
};

/// Reads input `o` (index k) into the reader; lists and other array-likes go through
/// numpy.asarray.
void readInput(CallArgs &ca, PyObject *o, int k, const std::string &fname, bool tuplesOk = false) {
  std::string why;
  size_t before = ca.reader.codes.size();
  bool ok = !PyTuple_Check(o) && ca.reader.read(o, k, why);
  if (!ok) {
    ca.reader.codes.resize(before);
    while (!ca.reader.leaves.empty() && ca.reader.leaves.back().arg == k)
      ca.reader.leaves.pop_back();
    py::object arr;
    try {
      arr = numpyModule().attr("asarray")(py::handle(o));
    } catch (py::error_already_set &) {
      throw py::type_error("ufunc '" + fname + "': cannot use an input of type " +
                           Py_TYPE(o)->tp_name + (why.empty() ? "" : " (" + why + ")"));
    }
    why.clear();
    if (!ca.reader.read(arr.ptr(), k, why))
      throw py::type_error("ufunc '" + fname + "': unsupported input of type " +
                           Py_TYPE(o)->tp_name + " (" + why + ")");
    ca.keep.push_back(arr);
    o = arr.ptr();
  }
  ca.objs.push_back(o);
}

Operand operandOf(const LeafValue &l) {
  Operand op;
  op.dtype = dtypeType(l.dtype);
  if (l.kind != LeafValue::Kind::Array) {
    op.scalar = true;
    op.value = scalarOf(l);
    return op;
  }
  op.data = l.data;
  op.shape.assign(l.shape, l.shape + l.ndim);
  op.strides.assign(l.strides, l.strides + l.ndim);
  return op;
}

bool onDevice(const LeafValue &l) {
  return l.kind == LeafValue::Kind::Array && l.origin != LeafValue::Origin::HostArray;
}

/// The backend a call runs on, checking that its device arrays belong to it.
codegen::Backend callBackend(const PyUfunc &pu, const std::vector<LeafValue> &leaves) {
  codegen::Backend b =
      pu.u->target == ufunc::Target::Cuda ? currentBackend() : codegen::Backend::Host;
  for (const LeafValue &l : leaves) {
    if (l.kind != LeafValue::Kind::Array)
      continue;
    if (l.origin == LeafValue::Origin::DeviceArray && l.device->backend() != b)
      throw py::type_error(
          "ufunc '" + pu.u->name + "': a device array of the " + backendName(l.device->backend()) +
          " backend cannot be used by a " + "ufunc running on the " + backendName(b) +
          (pu.u->target == ufunc::Target::Cuda
               ? " backend"
               : " (target '" +
                     std::string(pu.u->target == ufunc::Target::Cpu ? "cpu" : "parallel") + "')"));
    if (l.origin == LeafValue::Origin::CudaInterface && b != codegen::Backend::CUDA)
      throw py::type_error("ufunc '" + pu.u->name + "': arrays in GPU memory " +
                           "(__cuda_array_interface__) cannot be used on the CPU");
  }
  return b;
}

/// An output array: a new DeviceNDArray (device = true) or numpy array.
struct NewArray {
  py::object obj;
  uint64_t data = 0;
  Strides strides;
};

NewArray newArray(const Shape &shape, const ir::ScalarType *t, bool device, bool fortran,
                  codegen::Backend backend, py::handle stream, CUstream h) {
  NewArray r;
  int item = t->byteSize();
  r.strides = ufunc::contiguousStrides(shape, item, fortran);
  if (!device) {
    py::tuple shp(shape.size());
    for (size_t k = 0; k < shape.size(); ++k)
      shp[k] = py::int_(shape[k]);
    r.obj = numpyModule().attr("empty")(shp, numpyDtype(t), fortran ? "F" : "C");
    r.data = reinterpret_cast<uint64_t>(numpyFields(r.obj.ptr()).data);
    return r;
  }
  size_t bytes = static_cast<size_t>(ufunc::shapeSize(shape) * item);
  std::shared_ptr<runtime::Allocation> alloc = backend == codegen::Backend::CUDA
                                                   ? runtime::allocateDevice(bytes, h)
                                                   : runtime::allocateHost(bytes);
  auto arr = std::make_shared<DeviceNDArray>(alloc, 0, shape, r.strides, dtypeOf(t), numpyDtype(t),
                                             backend, streamObject(stream));
  r.data = arr->address();
  r.obj = py::cast(std::move(arr));
  return r;
}

/// Reads the out= / stream= keywords (and rejects others).
void readKeywords(const std::string &fname, PyObject *kwargs, py::object &out, py::object &stream) {
  if (!kwargs)
    return;
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(kwargs, &pos, &key, &value)) {
    std::string k = py::cast<std::string>(py::handle(key));
    if (k == "out")
      out = py::reinterpret_borrow<py::object>(value);
    else if (k == "stream")
      stream = py::reinterpret_borrow<py::object>(value);
    else
      throw py::type_error("ufunc '" + fname + "' got an unsupported keyword argument '" + k +
                           "' (ptxjit ufuncs take out= and stream=)");
  }
}

void checkOutputCast(const std::string &fname, const ir::ScalarType *from,
                     const ir::ScalarType *to) {
  if (!ir::canCast(from, to, ir::Casting::SameKind))
    throw py::type_error("Cannot cast ufunc '" + fname + "' output from dtype('" + from->str() +
                         "') to dtype('" + to->str() + "') with casting rule 'same_kind'");
}

/// All array inputs F-contiguous (and not C-contiguous), so the output follows them.
bool preferFortran(const std::vector<LeafValue> &leaves, size_t ndim) {
  if (ndim < 2)
    return false;
  bool any = false;
  for (const LeafValue &l : leaves) {
    if (l.kind != LeafValue::Kind::Array || static_cast<size_t>(l.ndim) != ndim)
      continue;
    ir::Layout lay = layoutFromStrides(l.ndim, l.shape, l.strides, dtypeSize(l.dtype));
    if (lay != ir::Layout::F)
      return false;
    any = true;
  }
  return any;
}

py::object unwrapScalar(py::object r) {
  return py::reinterpret_steal<py::object>(PyObject_GetItem(r.ptr(), py::tuple().ptr()));
}

// ---- elementwise fast path -------------------------------------------------------------------

/// True when `stream` names the default stream (the int 0 or None), whose arrays record None.
bool isDefaultStreamObject(PyObject *stream) {
  return stream == Py_None || (PyLong_CheckExact(stream) && PyLong_AsLongLong(stream) == 0);
}

/// The common call `f(a, b, ...)` on device arrays of one shape, all C-contiguous, and scalars,
/// with the output allocated by the call or given (`out`, not None) as a C-contiguous device
/// array of that shape and of the loop's output dtype: no broadcasting, no casts, no staging, a
/// flat loop. It skips the general path's operand vectors, loop-space simplification and
/// kernel-cache lookup: the last such call's loop and kernel are kept in `pu.fast`, keyed by the
/// inputs' fingerprint and the backend. Returns null (with no Python error set and nothing done)
/// when the call does not qualify; the general path then handles it (and raises the errors).
PyObject *fastElementwise(PyUfunc &pu, const ArgReader &reader, PyObject *outObj,
                          PyObject *streamObj) {
  ufunc::Ufunc &u = *pu.u;
  size_t nin = u.nin;
  if (nin > kFastMaxInputs || reader.leaves.size() != nin)
    return nullptr;
  const LeafValue *first = nullptr;
  for (size_t k = 0; k < nin; ++k) {
    const LeafValue &l = reader.leaves[k];
    if (l.kind != LeafValue::Kind::Array)
      continue;
    if (l.origin != LeafValue::Origin::DeviceArray)
      return nullptr;
    // C-contiguous (the layout bits of the code): one flat index walks it.
    if (((reader.codes[k] >> 12) & 0x3u) != static_cast<uint32_t>(ir::Layout::C))
      return nullptr;
    if (!first) {
      first = &l;
      continue;
    }
    if (l.ndim != first->ndim ||
        std::memcmp(l.shape, first->shape, sizeof(int64_t) * static_cast<size_t>(l.ndim)) != 0)
      return nullptr;
  }
  if (!first)
    return nullptr;
  int64_t n = 1;
  for (int d = 0; d < first->ndim; ++d)
    n *= first->shape[d];
  if (n <= 0)
    return nullptr;
  codegen::Backend backend =
      u.target == ufunc::Target::Cuda ? currentBackend() : codegen::Backend::Host;
  for (size_t k = 0; k < nin; ++k) {
    const LeafValue &l = reader.leaves[k];
    if (l.kind == LeafValue::Kind::Array && l.device->backend() != backend)
      return nullptr;
  }
  const DeviceNDArray *out = nullptr;
  if (outObj != Py_None) {
    out = asDeviceArray(outObj);
    if (!out || out->backend() != backend || out->layout() != ir::Layout::C ||
        out->ndim() != first->ndim ||
        !std::equal(out->shape().begin(), out->shape().end(), first->shape))
      return nullptr;
  }

  PyUfunc::Fast &f = pu.fast;
  if (!f.valid || f.backend != backend || f.codes != reader.codes) [[unlikely]] {
    // Resolve (through the per-fingerprint cache the general path fills) and fetch the flat
    // kernel; both may compile, releasing the GIL, so `f` is written only afterwards.
    int loop;
    if (pu.lastLoop >= 0 && reader.codes == pu.lastCodes) {
      loop = pu.lastLoop;
    } else {
      auto it = pu.loopCache.find(reader.codes);
      if (it != pu.loopCache.end()) {
        loop = it->second;
      } else {
        std::vector<ufunc::InputType> ins;
        for (size_t k = 0; k < nin; ++k)
          ins.push_back(inputTypeOf(reader.leaves[k], reader.codes[k]));
        loop = translated([&] { return u.resolve(ins); });
        pu.loopCache.emplace(reader.codes, loop);
      }
      pu.lastCodes = reader.codes;
      pu.lastLoop = loop;
    }
    const ir::ScalarType *params[kFastMaxInputs] = {};
    const ir::ScalarType *outType;
    codegen::ElementwiseKernelDesc desc;
    desc.returnsValue = true;
    desc.flat = true;
    desc.loopDims = 0;
    {
      const ufunc::Loop &L = u.loops[loop];
      outType = L.outputs[0];
      for (size_t k = 0; k < nin; ++k) {
        const LeafValue &l = reader.leaves[k];
        params[k] = ir::cast<ir::ScalarType>(ir::concretize(L.params[k]));
        codegen::LoopOperand lo;
        bool scalar = l.kind != LeafValue::Kind::Array;
        lo.kind = scalar ? codegen::LoopOperand::Kind::Scalar : codegen::LoopOperand::Kind::Array;
        lo.elemType = scalar ? nullptr : dtypeType(l.dtype);
        desc.operands.push_back(lo);
      }
      codegen::LoopOperand out;
      out.kind = codegen::LoopOperand::Kind::Array;
      out.elemType = outType;
      desc.operands.push_back(out);
    }
    const ufunc::LoopKernel *kernel = &translated(
        [&]() -> const ufunc::LoopKernel & { return u.elementwiseKernel(loop, backend, desc); });
    f.valid = false;
    f.codes = reader.codes;
    f.backend = backend;
    f.loop = loop;
    f.kernel = kernel;
    f.mode = ufunc::execMode(u.target, backend);
    f.outType = outType;
    f.outNpDtype = numpyDtype(outType);
    std::copy(params, params + kFastMaxInputs, f.params);
    f.valid = true;
  }
  // Copies of the entry: nothing below releases the GIL, but stay independent of it anyway.
  const ufunc::LoopKernel &kernel = *f.kernel;
  ufunc::ExecMode mode = f.mode;
  const ir::ScalarType *outType = f.outType;
  if (out && out->dtype() != dtypeOf(outType))
    return nullptr; // a cast on output: the general path checks it

  // Kernel parameters (flat loop): n, per input its data address or its value, the output.
  uint64_t slots[2 + 2 * kFastMaxInputs];
  int ns = 0;
  slots[ns++] = static_cast<uint64_t>(n);
  for (size_t k = 0; k < nin; ++k) {
    const LeafValue &l = reader.leaves[k];
    if (l.kind == LeafValue::Kind::Array) {
      slots[ns++] = l.data;
      continue;
    }
    if (reader.codes[k] & codes::kPython)
      checkPythonInt(l, f.params[k]);
    ns += ufunc::packScalar(scalarOf(l), f.params[k], &slots[ns]);
  }
  CUstream h = streamHandle(streamObj, backend);
  void *ptrs[2 + 2 * kFastMaxInputs];
  if (out) {
    slots[ns++] = out->address();
    for (int k = 0; k < ns; ++k)
      ptrs[k] = &slots[k];
    ufunc::runElementwise(kernel, mode, n, ptrs, h);
    return py::handle(outObj).inc_ref().ptr();
  }
  int item = outType->byteSize();
  size_t bytes = static_cast<size_t>(n) * static_cast<size_t>(item);
  // Its first use is the launch below, on `h`.
  std::shared_ptr<runtime::Allocation> alloc =
      backend == codegen::Backend::CUDA
          ? runtime::allocateDevice(bytes, h, runtime::FirstUse::OnStreamNow)
          : runtime::allocateHost(bytes);
  std::vector<int64_t> shape(first->shape, first->shape + first->ndim);
  std::vector<int64_t> strides(shape.size());
  int64_t acc = item;
  for (int d = first->ndim - 1; d >= 0; --d) {
    strides[d] = acc;
    acc *= std::max<int64_t>(shape[d], 1);
  }
  py::object stream =
      isDefaultStreamObject(streamObj) ? py::none() : streamObject(py::handle(streamObj));
  auto arr =
      std::make_shared<DeviceNDArray>(std::move(alloc), 0, std::move(shape), std::move(strides),
                                      dtypeOf(outType), f.outNpDtype, backend, std::move(stream));
  slots[ns++] = arr->address();
  for (int k = 0; k < ns; ++k)
    ptrs[k] = &slots[k];
  // py::cast(arr) without its per-call lookup of the registered type (by type name).
  static const py::detail::type_info *arrayType = py::detail::get_type_info(typeid(DeviceNDArray));
  py::object result = py::reinterpret_steal<py::object>(
      py::detail::type_caster_generic::cast(arr.get(), py::return_value_policy::take_ownership,
                                            py::handle(), arrayType, nullptr, nullptr, &arr));
  if (!result)
    throw py::error_already_set();
  ufunc::runElementwise(kernel, mode, n, ptrs, h);
  return result.release().ptr();
}

// ---- elementwise call ------------------------------------------------------------------------

py::object callElementwise(PyUfunc &pu, PyObject *const *args, size_t nargs, PyObject *kwargs) {
  ufunc::Ufunc &u = *pu.u;
  py::object outObj = py::none(), streamObj = py::int_(0);
  readKeywords(u.name, kwargs, outObj, streamObj);
  if (nargs == u.nin + 1 && outObj.is_none())
    outObj = py::reinterpret_borrow<py::object>(args[u.nin]);
  else if (nargs != u.nin)
    throw py::type_error("ufunc '" + u.name + "' takes " + std::to_string(u.nin) +
                         " input argument(s) but " + std::to_string(nargs) + " were given");
  if (PyTuple_Check(outObj.ptr())) {
    if (PyTuple_GET_SIZE(outObj.ptr()) != 1)
      throw py::value_error("ufunc '" + u.name + "': out must be a tuple of 1 array");
    outObj = py::reinterpret_borrow<py::object>(PyTuple_GET_ITEM(outObj.ptr(), 0));
  }

  thread_local CallArgs tl;
  CallArgs local;
  static thread_local bool busy = false;
  CallArgs &ca = busy ? local : tl;
  struct Busy {
    bool &b;
    bool prev;
    ~Busy() { b = prev; }
  } busyGuard{busy, busy};
  busy = true;
  ca.reader.clear();
  ca.keep.clear();
  ca.objs.clear();
  for (size_t k = 0; k < u.nin; ++k)
    readInput(ca, args[k], static_cast<int>(k), u.name);
  if (ca.keep.empty())
    if (PyObject *r = fastElementwise(pu, ca.reader, outObj.ptr(), streamObj.ptr()))
      return py::reinterpret_steal<py::object>(r);
  std::vector<LeafValue> &leaves = ca.reader.leaves;
  codegen::Backend backend = callBackend(pu, leaves);

  // The output array given (out=) takes part in choosing the loop, as in NumPy.
  ArgReader outReader;
  const ir::ScalarType *outGiven = nullptr;
  if (!outObj.is_none()) {
    std::string why;
    if (!outReader.read(outObj.ptr(), 0, why) || outReader.leaves.size() != 1 ||
        outReader.leaves[0].kind != LeafValue::Kind::Array)
      throw py::type_error("ufunc '" + u.name + "': out must be an array, not " +
                           std::string(Py_TYPE(outObj.ptr())->tp_name));
    outGiven = dtypeType(outReader.leaves[0].dtype);
  }

  // The loop, cached per fingerprint (of the inputs alone when no output is given).
  int loop;
  if (outGiven) {
    std::vector<ufunc::InputType> ins;
    for (size_t k = 0; k < leaves.size(); ++k)
      ins.push_back(inputTypeOf(leaves[k], ca.reader.codes[k]));
    loop = translated([&] { return u.resolve(ins, {outGiven}); });
  } else if (pu.lastLoop >= 0 && ca.reader.codes == pu.lastCodes) [[likely]] {
    loop = pu.lastLoop;
  } else {
    auto it = pu.loopCache.find(ca.reader.codes);
    if (it != pu.loopCache.end()) {
      loop = it->second;
    } else {
      std::vector<ufunc::InputType> ins;
      for (size_t k = 0; k < leaves.size(); ++k)
        ins.push_back(inputTypeOf(leaves[k], ca.reader.codes[k]));
      loop = translated([&] { return u.resolve(ins); });
      pu.loopCache.emplace(ca.reader.codes, loop);
    }
    pu.lastCodes = ca.reader.codes;
    pu.lastLoop = loop;
  }
  const ufunc::Loop &L = u.loops[loop];
  const ir::ScalarType *outType = L.outputs[0];

  bool anyArray = false, anyDevice = false;
  std::vector<Operand> ops;
  ops.reserve(u.nin + 1);
  Shape shape;
  bool single = true;
  const Shape *firstShape = nullptr;
  for (size_t k = 0; k < u.nin; ++k) {
    const LeafValue &l = leaves[k];
    if (l.kind != LeafValue::Kind::Array) {
      if (ca.reader.codes[k] & codes::kPython)
        checkPythonInt(l, ir::cast<ir::ScalarType>(L.params[k]));
      ops.push_back(operandOf(l));
      continue;
    }
    anyArray = true;
    anyDevice = anyDevice || onDevice(l);
    ops.push_back(operandOf(l));
    if (firstShape && *firstShape != ops.back().shape)
      single = false;
    if (!firstShape)
      firstShape = &ops.back().shape;
  }
  if (firstShape && single) {
    shape = *firstShape;
  } else {
    std::vector<Shape> shapes;
    for (const Operand &op : ops)
      if (!op.scalar)
        shapes.push_back(op.shape);
    shape = ufunc::broadcastShapes(shapes);
  }

  CUstream h = streamHandle(streamObj, backend);
  ufunc::ExecMode mode = ufunc::execMode(u.target, backend);
  bool cuda = backend == codegen::Backend::CUDA;
  std::vector<Staged> staged;
  py::object result;
  Operand out;
  out.dtype = outType;
  out.shape = shape;
  if (outGiven) {
    const LeafValue &ol = outReader.leaves[0];
    if (!ol.writeable)
      throw py::value_error("ufunc '" + u.name + "': the output array is read-only");
    Shape oshape(ol.shape, ol.shape + ol.ndim);
    std::vector<Shape> all;
    for (const Operand &op : ops)
      if (!op.scalar)
        all.push_back(op.shape);
    Shape b = all.empty() ? Shape{} : shape;
    all.push_back(oshape);
    Shape withOut;
    try {
      withOut = ufunc::broadcastShapes(all);
    } catch (std::invalid_argument &) {
      withOut.clear();
      withOut.push_back(-1);
    }
    if (withOut != oshape)
      throw py::value_error("non-broadcastable output operand with shape " +
                            ufunc::shapeStr(oshape) + " doesn't match the broadcast shape " +
                            ufunc::shapeStr(b));
    callBackend(pu, outReader.leaves);
    out.dtype = dtypeType(ol.dtype);
    out.shape = oshape;
    out.strides.assign(ol.strides, ol.strides + ol.ndim);
    out.data = ol.data;
    shape = oshape;
    result = outObj;
    if (cuda && ol.origin == LeafValue::Origin::HostArray)
      out.data =
          stage(staged, ol.data, ol.ndim, ol.shape, ol.strides, dtypeSize(ol.dtype), true, true, h);
  } else {
    bool device = anyDevice && (cuda || backend == codegen::Backend::Host);
    NewArray na = newArray(shape, outType, device, preferFortran(leaves, shape.size()), backend,
                           streamObj, h);
    result = na.obj;
    out.data = na.data;
    out.strides = na.strides;
    if (cuda && !device) {
      size_t bytes = static_cast<size_t>(ufunc::shapeSize(shape) * outType->byteSize());
      Staged s;
      s.host = reinterpret_cast<char *>(na.data);
      s.bytes = bytes;
      s.copyBack = true;
      s.buf = runtime::allocateDevice(bytes, h, runtime::FirstUse::OnStreamNow);
      out.data = s.buf->devicePtr();
      staged.push_back(std::move(s));
    }
  }
  if (cuda) {
    for (size_t k = 0; k < u.nin; ++k) {
      const LeafValue &l = leaves[k];
      if (l.kind == LeafValue::Kind::Array && l.origin == LeafValue::Origin::HostArray)
        ops[k].data =
            stage(staged, l.data, l.ndim, l.shape, l.strides, dtypeSize(l.dtype), true, false, h);
    }
  }
  ops.push_back(std::move(out));
  if (staged.empty()) {
    // Device (or host-backend) memory only: no copies; a GPU launch returns at once.
    translated([&] { u.runElementwise(loop, ops, shape, backend, mode, h); });
  } else {
    py::gil_scoped_release release;
    translated([&] { u.runElementwise(loop, ops, shape, backend, mode, h); });
    unstage(staged, h);
    if (h == nullptr)
      runtime::check(runtime::driver().cuStreamSynchronize(h), "cuStreamSynchronize");
  }
  if (!anyArray && outObj.is_none())
    return unwrapScalar(result);
  return result;
}

// ---- gufunc call -----------------------------------------------------------------------------

/// The output arguments of a call: positional after the inputs, or out= (an array or a tuple).
std::vector<py::object> outputArgs(const ufunc::Ufunc &u, PyObject *const *args, size_t nargs,
                                   py::object outKw) {
  std::vector<py::object> outs(u.nout, py::none());
  if (nargs > u.nin) {
    if (nargs != u.nin + u.nout || !outKw.is_none())
      throw py::type_error("ufunc '" + u.name + "' takes " + std::to_string(u.nin) +
                           " inputs and " + std::to_string(u.nout) + " outputs, but " +
                           std::to_string(nargs) + " positional arguments were given");
    for (size_t k = 0; k < u.nout; ++k)
      outs[k] = py::reinterpret_borrow<py::object>(args[u.nin + k]);
  } else if (nargs < u.nin) {
    throw py::type_error("ufunc '" + u.name + "' takes " + std::to_string(u.nin) +
                         " input argument(s) but " + std::to_string(nargs) + " were given");
  } else if (!outKw.is_none()) {
    if (PyTuple_Check(outKw.ptr())) {
      py::tuple t = outKw;
      if (t.size() != u.nout)
        throw py::value_error("ufunc '" + u.name + "': out must be a tuple of " +
                              std::to_string(u.nout) + " array(s)");
      for (size_t k = 0; k < u.nout; ++k)
        outs[k] = t[k];
    } else if (u.nout == 1) {
      outs[0] = outKw;
    } else {
      throw py::type_error("ufunc '" + u.name + "': out must be a tuple of " +
                           std::to_string(u.nout) + " arrays");
    }
  }
  return outs;
}

py::object callGufunc(PyUfunc &pu, PyObject *const *args, size_t nargs, PyObject *kwargs) {
  ufunc::Ufunc &u = *pu.u;
  const ufunc::GufuncLayout &layout = *u.layout;
  py::object outKw = py::none(), streamObj = py::int_(0);
  readKeywords(u.name, kwargs, outKw, streamObj);
  std::vector<py::object> outs = outputArgs(u, args, nargs, outKw);

  CallArgs ca;
  for (size_t k = 0; k < u.nin; ++k)
    readInput(ca, args[k], static_cast<int>(k), u.name);
  std::vector<ufunc::InputType> ins;
  for (size_t k = 0; k < u.nin; ++k)
    ins.push_back(inputTypeOf(ca.reader.leaves[k], ca.reader.codes[k]));
  ArgReader outReader;
  std::vector<const ir::ScalarType *> outDtypes(u.nout, nullptr);
  for (size_t k = 0; k < u.nout; ++k) {
    if (outs[k].is_none())
      continue;
    std::string why;
    size_t before = outReader.leaves.size();
    if (!outReader.read(outs[k].ptr(), static_cast<int>(k), why) ||
        outReader.leaves.size() != before + 1 ||
        outReader.leaves.back().kind != LeafValue::Kind::Array)
      throw py::type_error("gufunc '" + u.name + "': output " + std::to_string(k) +
                           " must be an array, not " + Py_TYPE(outs[k].ptr())->tp_name);
    if (!outReader.leaves.back().writeable)
      throw py::value_error("gufunc '" + u.name + "': output " + std::to_string(k) +
                            " is read-only");
    outDtypes[k] = dtypeType(outReader.leaves.back().dtype);
  }
  int loop = translated([&] { return u.resolve(ins, outDtypes); });
  const ufunc::Loop &L = u.loops[loop];

  // Inputs whose loop parameter is an array of another dtype (or a scalar given for an array
  // parameter) are converted on the host, as NumPy casts gufunc inputs.
  for (size_t k = 0; k < u.nin; ++k) {
    const ir::Type *pt = ir::concretize(L.params[k]);
    const LeafValue &l = ca.reader.leaves[k];
    bool arrayParam = ir::isa<ir::ArrayType>(pt);
    const ir::ScalarType *want = L.inputs[k];
    bool isArray = l.kind == LeafValue::Kind::Array;
    if ((isArray && dtypeType(l.dtype) == want) || (!isArray && !arrayParam))
      continue;
    if (isArray && l.origin != LeafValue::Origin::HostArray)
      throw py::type_error("gufunc '" + u.name + "': input " + std::to_string(k) +
                           " is a device array of dtype " + dtypeName(l.dtype) +
                           " but the loop chosen takes " + want->str() +
                           " (cast it first, or add a signature for it)");
    py::object conv = numpyModule().attr("asarray")(py::handle(ca.objs[k]), numpyDtype(want));
    ca.keep.push_back(conv);
    ArgReader one;
    std::string why;
    one.read(conv.ptr(), static_cast<int>(k), why);
    ca.reader.leaves[k] = one.leaves[0];
    ca.reader.leaves[k].object = conv.ptr();
  }
  std::vector<LeafValue> &leaves = ca.reader.leaves;
  std::vector<LeafValue> all = leaves;
  all.insert(all.end(), outReader.leaves.begin(), outReader.leaves.end());
  codegen::Backend backend = callBackend(pu, all);
  bool cuda = backend == codegen::Backend::CUDA;
  bool anyDevice = false;
  std::vector<Shape> inShapes;
  std::vector<Operand> ops;
  for (const LeafValue &l : leaves) {
    ops.push_back(operandOf(l));
    inShapes.push_back(ops.back().scalar ? Shape{} : ops.back().shape);
    anyDevice = anyDevice || onDevice(l);
  }
  std::vector<Shape> outShapes(u.nout);
  std::vector<const Shape *> outShapePtrs(u.nout, nullptr);
  for (size_t k = 0, r = 0; k < u.nout; ++k) {
    if (outs[k].is_none())
      continue;
    const LeafValue &ol = outReader.leaves[r++];
    outShapes[k].assign(ol.shape, ol.shape + ol.ndim);
    outShapePtrs[k] = &outShapes[k];
  }
  ufunc::CoreBinding cb = ufunc::bindCoreDims(layout, inShapes, outShapePtrs);

  CUstream h = streamHandle(streamObj, backend);
  std::vector<Staged> staged;
  std::vector<py::object> results(u.nout);
  bool device = anyDevice;
  for (size_t k = 0, r = 0; k < u.nout; ++k) {
    Operand op;
    op.dtype = L.outputs[k];
    if (!outs[k].is_none()) {
      const LeafValue &ol = outReader.leaves[r++];
      op = operandOf(ol);
      results[k] = outs[k];
      if (cuda && ol.origin == LeafValue::Origin::HostArray)
        op.data = stage(staged, ol.data, ol.ndim, ol.shape, ol.strides, dtypeSize(ol.dtype), true,
                        true, h);
    } else {
      Shape shape = cb.loopShape;
      shape.insert(shape.end(), cb.coreShapes[u.nin + k].begin(), cb.coreShapes[u.nin + k].end());
      NewArray na = newArray(shape, op.dtype, device, false, backend, streamObj, h);
      results[k] = na.obj;
      op.shape = shape;
      op.strides = na.strides;
      op.data = na.data;
      if (cuda && !device) {
        op.data = stage(staged, na.data, static_cast<int>(shape.size()), shape.data(),
                        na.strides.data(), op.dtype->byteSize(), false, true, h);
      }
    }
    ops.push_back(std::move(op));
  }
  if (cuda)
    for (size_t k = 0; k < u.nin; ++k) {
      const LeafValue &l = leaves[k];
      if (l.kind == LeafValue::Kind::Array && l.origin == LeafValue::Origin::HostArray)
        ops[k].data =
            stage(staged, l.data, l.ndim, l.shape, l.strides, dtypeSize(l.dtype), true, false, h);
    }
  ufunc::ExecMode mode = ufunc::execMode(u.target, backend);
  {
    py::gil_scoped_release release;
    translated([&] { u.runGufunc(loop, ops, cb, backend, mode, h); });
    unstage(staged, h);
    if (cuda && !staged.empty() && h == nullptr)
      runtime::check(runtime::driver().cuStreamSynchronize(h), "cuStreamSynchronize");
  }
  for (size_t k = 0; k < u.nout; ++k)
    if (outs[k].is_none() && !device && cb.loopShape.empty() && cb.coreShapes[u.nin + k].empty())
      results[k] = unwrapScalar(results[k]);
  if (u.nout == 1)
    return results[0];
  py::tuple t(u.nout);
  for (size_t k = 0; k < u.nout; ++k)
    t[k] = results[k];
  return t;
}

// ---- reduce ----------------------------------------------------------------------------------

py::object reduceCall(PyUfunc &pu, py::object array, py::object axis, py::object dtype,
                      py::object outObj, bool keepdims, py::object streamObj, int64_t size) {
  ufunc::Ufunc &u = *pu.u;
  if (!dtype.is_none())
    throw py::type_error("ufunc '" + u.name + "'.reduce: dtype= is not supported by ptxjit");
  CallArgs ca;
  readInput(ca, array.ptr(), 0, u.name);
  LeafValue l = ca.reader.leaves[0];
  if (l.kind != LeafValue::Kind::Array)
    throw py::type_error("ufunc '" + u.name + "'.reduce needs an array, not a scalar");
  int nd = l.ndim;
  if (size >= 0 && nd >= 1)
    l.shape[0] = std::min(l.shape[0], size);
  std::vector<int64_t> axesIn;
  if (axis.is_none()) {
    for (int d = 0; d < nd; ++d)
      axesIn.push_back(d);
  } else if (PyTuple_Check(axis.ptr()) || PyList_Check(axis.ptr())) {
    for (py::handle a : axis)
      axesIn.push_back(py::cast<int64_t>(a));
  } else {
    axesIn.push_back(py::cast<int64_t>(axis));
  }
  std::vector<int> axes;
  try {
    axes = ufunc::normalizeAxes(axesIn, nd);
  } catch (const std::out_of_range &e) {
    // numpy.exceptions appeared in NumPy 1.25; older versions have numpy.AxisError.
    py::object np = numpyModule();
    py::object axisError = py::hasattr(np, "exceptions") ? np.attr("exceptions").attr("AxisError")
                                                         : np.attr("AxisError");
    PyErr_SetString(axisError.ptr(), e.what());
    throw py::error_already_set();
  }
  std::vector<LeafValue> one{l};
  codegen::Backend backend = callBackend(pu, one);
  bool cuda = backend == codegen::Backend::CUDA;
  int loop = translated([&] { return u.resolveReduce(dtypeType(l.dtype)); });
  const ir::ScalarType *acc = u.loops[loop].outputs[0];

  Shape keptShape, resultShape;
  int64_t K = 1;
  for (int d = 0; d < nd; ++d) {
    bool red = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (red) {
      K *= l.shape[d];
      if (keepdims)
        resultShape.push_back(1);
    } else {
      keptShape.push_back(l.shape[d]);
      resultShape.push_back(l.shape[d]);
    }
  }
  CUstream h = streamHandle(streamObj, backend);
  bool device = onDevice(l);
  ufunc::ReduceRequest req;
  req.loop = loop;
  req.axes = axes;
  req.input = operandOf(l);
  Operand &out = req.output;
  py::object result;
  std::vector<Staged> staged;
  Strides outStrides;
  if (!outObj.is_none()) {
    if (PyTuple_Check(outObj.ptr()) && PyTuple_GET_SIZE(outObj.ptr()) == 1)
      outObj = py::reinterpret_borrow<py::object>(PyTuple_GET_ITEM(outObj.ptr(), 0));
    ArgReader r;
    std::string why;
    if (!r.read(outObj.ptr(), 0, why) || r.leaves.size() != 1 ||
        r.leaves[0].kind != LeafValue::Kind::Array)
      throw py::type_error("ufunc '" + u.name + "'.reduce: out must be an array");
    const LeafValue &ol = r.leaves[0];
    callBackend(pu, r.leaves);
    Shape oshape(ol.shape, ol.shape + ol.ndim);
    if (oshape != resultShape)
      throw py::value_error("ufunc '" + u.name + "'.reduce: output parameter has shape " +
                            ufunc::shapeStr(oshape) + " but the reduction gives " +
                            ufunc::shapeStr(resultShape));
    if (!ol.writeable)
      throw py::value_error("ufunc '" + u.name + "'.reduce: the output array is read-only");
    out.dtype = dtypeType(ol.dtype);
    checkOutputCast(u.name, acc, out.dtype);
    out.data = ol.data;
    outStrides.assign(ol.strides, ol.strides + ol.ndim);
    result = outObj;
    if (cuda && ol.origin == LeafValue::Origin::HostArray)
      out.data =
          stage(staged, ol.data, ol.ndim, ol.shape, ol.strides, dtypeSize(ol.dtype), true, true, h);
  } else {
    out.dtype = acc;
    NewArray na = newArray(resultShape, acc, device, false, backend, streamObj, h);
    result = na.obj;
    out.data = na.data;
    outStrides = na.strides;
    if (cuda && !device)
      out.data = stage(staged, na.data, static_cast<int>(resultShape.size()), resultShape.data(),
                       na.strides.data(), acc->byteSize(), false, true, h);
  }
  // The output's strides over the kept dimensions only.
  for (int d = 0; d < static_cast<int>(resultShape.size()); ++d)
    if (!keepdims || std::find(axes.begin(), axes.end(), d) == axes.end())
      out.strides.push_back(outStrides[d]);
  out.shape = keptShape;

  int64_t M = ufunc::shapeSize(keptShape);
  if (K == 0 && M > 0) {
    if (pu.identity.is_none())
      throw py::value_error("zero-size array to reduction operation " + u.name +
                            " which has no identity");
    // Fill the result with the identity (through NumPy on the host side).
    py::object host =
        numpyModule().attr("full")(py::cast(resultShape), pu.identity, numpyDtype(out.dtype));
    if (py::isinstance(result, numpyApi().module.attr("ndarray")))
      result.attr("__setitem__")(py::ellipsis(), host);
    else
      result.attr("copy_to_device")(host);
    if (resultShape.empty() && outObj.is_none())
      return unwrapScalar(host);
    return result;
  }
  if (cuda && l.origin == LeafValue::Origin::HostArray)
    req.input.data =
        stage(staged, l.data, l.ndim, l.shape, l.strides, dtypeSize(l.dtype), true, false, h);
  ufunc::ExecMode mode = ufunc::execMode(u.target, backend);
  {
    py::gil_scoped_release release;
    translated([&] { u.runReduce(req, backend, mode, h); });
    unstage(staged, h);
    if (cuda && !staged.empty() && h == nullptr)
      runtime::check(runtime::driver().cuStreamSynchronize(h), "cuStreamSynchronize");
  }
  if (resultShape.empty() && outObj.is_none()) {
    // A full reduction gives a scalar (copied back from a device result, as Numba does).
    if (!py::isinstance(result, numpyApi().module.attr("ndarray")))
      result = result.attr("copy_to_host")(py::none(), streamObj);
    return unwrapScalar(result);
  }
  return result;
}

PyObject *ufuncCallSlot(PyObject *self, PyObject *args, PyObject *kwargs) {
  try {
    PyUfunc &pu = ufuncOf(self);
    size_t n = static_cast<size_t>(PyTuple_GET_SIZE(args));
    PyObject *const *items = n ? &PyTuple_GET_ITEM(args, 0) : nullptr;
    py::object r =
        pu.u->layout ? callGufunc(pu, items, n, kwargs) : callElementwise(pu, items, n, kwargs);
    return r.release().ptr();
  } catch (...) {
    setPythonError();
    return nullptr;
  }
}

ufunc::Target targetOf(const std::string &t) {
  if (t == "cuda")
    return ufunc::Target::Cuda;
  if (t == "cpu")
    return ufunc::Target::Cpu;
  if (t == "parallel")
    return ufunc::Target::Parallel;
  throw py::value_error("unsupported ufunc target '" + t +
                        "' (ptxjit supports 'cuda', 'cpu' and 'parallel')");
}

std::unique_ptr<PyUfunc> makeUfunc(py::object dispatcher, const std::string &name,
                                   const std::vector<std::string> &sigs, const std::string &target,
                                   py::object layoutText, py::object identity, size_t nin) {
  auto pu = std::make_unique<PyUfunc>();
  std::optional<DispatcherIdentity> id = dispatcherIdentity(dispatcher);
  if (!id || !id->isDevice)
    throw py::type_error("Ufunc needs a device function (cuda.jit(device=True))");
  std::optional<ufunc::GufuncLayout> layout;
  if (!layoutText.is_none()) {
    layout = ufunc::parseLayout(py::cast<std::string>(layoutText));
    nin = layout->nin();
  }
  compiler::FunctionOptions fopts = dispatcherOf(dispatcher.ptr()).fopts;
  pu->u = std::make_unique<ufunc::Ufunc>(id->functionId, name, targetOf(target), nin, layout);
  pu->dispatcher = dispatcher;
  pu->identity = identity;
  // Called before a compile starts (never under the compiler's lock): the interpreter is
  // taken when the call released it around the loop.
  PyObject *fn = dispatcherOf(dispatcher.ptr()).pyFunc.ptr(); // kept alive by pu->dispatcher
  int fid = id->functionId;
  pu->u->snapshot = [fn, fid] {
    py::gil_scoped_acquire gil;
    return snapshotWithCallees(fn, fid);
  };
  pu->u->compileWrapper = [](const std::function<void()> &work) {
    if (PyGILState_Check()) {
      py::gil_scoped_release release;
      work();
    } else {
      work();
    }
  };
  pu->u->compileOptions = [fopts](codegen::Backend b) { return compileOptionsFor(b, fopts); };
  for (const std::string &text : sigs) {
    ir::Signature sig = ir::parseSignature(text);
    translated([&] { return pu->u->addLoop(sig.args, sig.returnType); });
  }
  pu->u->lazy = sigs.empty();
  return pu;
}

py::list loopTypes(const ufunc::Ufunc &u) {
  py::list l;
  for (const ufunc::Loop &loop : u.loops) {
    py::list ins, outs;
    for (const ir::Type *t : loop.params)
      ins.append(t->str());
    for (const ir::ScalarType *t : loop.outputs)
      outs.append(t->str());
    l.append(py::make_tuple(ins, outs));
  }
  return l;
}

} // namespace

void defineUfunc(py::module_ &m) {
  py::class_<PyUfunc> cls(m, "Ufunc", py::dynamic_attr(),
                          "A ufunc made by @vectorize or @guvectorize.");
  cls.def(py::init(&makeUfunc), py::arg("dispatcher"), py::arg("name"), py::arg("signatures"),
          py::arg("target"), py::arg("layout"), py::arg("identity"), py::arg("nin"))
      .def(
          "reduce",
          [](PyUfunc &pu, py::object array, py::object axis, py::object dtype, py::object out,
             bool keepdims, py::object stream, int64_t size) {
            return reduceCall(pu, array, axis, dtype, out, keepdims, stream, size);
          },
          py::arg("array"), py::arg("axis") = 0, py::arg("dtype") = py::none(),
          py::arg("out") = py::none(), py::arg("keepdims") = false, py::arg("stream") = 0,
          py::arg("_size") = -1,
          "Reduces `array` along `axis` (an int, a tuple, or None for all) as NumPy's "
          "ufunc.reduce.")
      .def_property_readonly("nin", [](const PyUfunc &pu) { return pu.u->nin; })
      .def_property_readonly("nout", [](const PyUfunc &pu) { return pu.u->nout; })
      .def_property_readonly("nargs", [](const PyUfunc &pu) { return pu.u->nin + pu.u->nout; })
      .def_property_readonly("ntypes", [](const PyUfunc &pu) { return pu.u->loops.size(); })
      .def_property_readonly("_loop_types", [](const PyUfunc &pu) { return loopTypes(*pu.u); })
      .def_property_readonly("identity", [](const PyUfunc &pu) { return pu.identity; })
      .def_property_readonly("signature",
                             [](const PyUfunc &pu) -> py::object {
                               if (!pu.u->layout)
                                 return py::none();
                               return py::str(pu.u->layout->text);
                             })
      .def_property_readonly("target",
                             [](const PyUfunc &pu) {
                               switch (pu.u->target) {
                               case ufunc::Target::Cpu:
                                 return "cpu";
                               case ufunc::Target::Parallel:
                                 return "parallel";
                               default:
                                 return "cuda";
                               }
                             })
      .def_property_readonly("device_function", [](const PyUfunc &pu) { return pu.dispatcher; })
      .def(
          "_kernel_texts",
          [](const PyUfunc &pu) {
            py::list l;
            for (const ufunc::LoopKernel *k : pu.u->kernels())
              l.append(py::make_tuple(k->symbol, k->llvmIR, k->ptx));
            return l;
          },
          "(symbol, LLVM IR, PTX) of each loop kernel compiled so far.")
      .def("__repr__", [](const PyUfunc &pu) {
        return std::string("<ptxjit ") + (pu.u->layout ? "gufunc '" : "ufunc '") + pu.u->name +
               "'>";
      });
  m.def(
      "_store_first",
      [](py::object array, py::object value) {
        const DeviceNDArray *d = asDeviceArray(array.ptr());
        if (!d)
          throw py::type_error("res must be a device array, not " +
                               std::string(Py_TYPE(array.ptr())->tp_name));
        if (d->size() < 1)
          throw py::value_error("res must have at least one element");
        py::object v = numpyModule().attr("asarray")(value, d->numpyDtype());
        const void *p = numpyFields(v.ptr()).data;
        d->allocation()->upload(p, static_cast<size_t>(d->itemsize()), d->offset());
      },
      py::arg("array"), py::arg("value"),
      "Writes `value` into the first element of a device array.");
  gUfuncType = reinterpret_cast<PyTypeObject *>(cls.ptr());
  // The call goes straight to C++ (no pybind11 argument dispatch).
  gUfuncType->tp_call = ufuncCallSlot;
  PyType_Modified(gUfuncType);
}

} // namespace ptxjit::bindings
