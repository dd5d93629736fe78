#include "ufunc/Call.h"

#include "runtime/Memory.h"
#include "runtime/Staging.h"

#include <algorithm>
#include <cstring>

namespace ptxjit::ufunc {

using ir::ScalarType;

// ---- CallArg --------------------------------------------------------------------------------

const ScalarType *CallArg::dtype() const { return ir::cast<ScalarType>(ir::concretize(type)); }

Shape CallArg::shape() const { return Shape(value.shape, value.shape + value.ndim); }

Strides CallArg::strides() const { return Strides(value.strides, value.strides + value.ndim); }

CallArg CallArg::array(const ScalarType *dtype, uint64_t data, int ndim, const int64_t *shape,
                       const int64_t *strides, Memory memory, codegen::Backend memoryBackend,
                       bool writeable) {
  CallArg a;
  a.value = compiler::ArgValue::array(data, ndim, shape, strides);
  a.type = dtype;
  a.memory = memory;
  a.memoryBackend = memoryBackend;
  a.writeable = writeable;
  return a;
}

CallArg CallArg::scalar(ir::InputType type, const compiler::ArgValue &value) {
  CallArg a;
  a.value = value;
  a.type = type;
  return a;
}

namespace {

const char *backendName(codegen::Backend b) { return b == codegen::Backend::CUDA ? "cuda" : "cpu"; }

/// Checks that array `a` lives where loops on `backend` can read it.
void checkMemory(const Ufunc &u, const CallArg &a, codegen::Backend backend) {
  if (!a.isArray())
    return;
  if (a.memory == Memory::Backend && a.memoryBackend != backend) {
    std::string where = u.target == Target::Cuda
                            ? " backend"
                            : std::string(" (target '") + targetName(u.target) + "')";
    throw TypeMismatch(
        "ufunc '" + u.name + "': a device array of the " + backendName(a.memoryBackend) +
        " backend cannot be used by a ufunc running on the " + backendName(backend) + where);
  }
  if (a.memory == Memory::Gpu && backend != codegen::Backend::CUDA)
    throw TypeMismatch("ufunc '" + u.name +
                       "': arrays in GPU memory (__cuda_array_interface__) cannot be used on the "
                       "CPU");
}

/// A Python int argument must fit the type of the parameter it is passed as.
void checkPythonIntArg(const CallArg &a, const ir::Type *paramType) {
  const auto *t = ir::dyn_cast<ScalarType>(ir::concretize(paramType));
  if (!a.isArray() && a.type == ir::types::weakInt() && t)
    checkPythonInt(a.value, t);
}

} // namespace

void checkPythonInt(const compiler::ArgValue &v, const ScalarType *t) {
  if (t->kind() != ir::TypeKind::Int)
    return;
  int bits = t->bits();
  bool ok;
  if (v.kind == compiler::ArgValue::Kind::UInt)
    ok = !t->isSigned() && bits == 64;
  else if (t->isSigned())
    ok = bits == 64 || (v.i >= -(int64_t(1) << (bits - 1)) && v.i < (int64_t(1) << (bits - 1)));
  else
    ok = v.i >= 0 && (bits == 64 || v.i < (int64_t(1) << bits));
  if (!ok) {
    std::string s =
        v.kind == compiler::ArgValue::Kind::UInt ? std::to_string(v.u) : std::to_string(v.i);
    throw std::overflow_error("Python integer " + s + " out of bounds for " + t->str());
  }
}

namespace {

bool inNonHostMemory(const CallArg &a) { return a.isArray() && a.memory != Memory::Host; }

/// Every array input of `ndim` dimensions is F-contiguous and not C-contiguous (and there is
/// one), so the output follows them.
bool preferFortran(const std::vector<CallArg> &inputs, size_t ndim) {
  if (ndim < 2)
    return false;
  bool any = false;
  for (const CallArg &a : inputs) {
    if (!a.isArray() || static_cast<size_t>(a.value.ndim) != ndim)
      continue;
    const ScalarType *t = a.dtype();
    Strides c = contiguousStrides(a.shape(), t->byteSize(), false);
    Strides f = contiguousStrides(a.shape(), t->byteSize(), true);
    if (a.strides() != f || a.strides() == c)
      return false;
    any = true;
  }
  return any;
}

/// Calls `fn(element address)` for every element of the array (shape, strides) at `base`.
template <typename Fn>
void forEachElement(char *base, const Shape &shape, const Strides &strides, Fn fn) {
  int64_t n = shapeSize(shape);
  int nd = static_cast<int>(shape.size());
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0, rem = i;
    for (int d = nd - 1; d >= 0; --d) {
      off += (rem % shape[d]) * strides[d];
      rem /= shape[d];
    }
    fn(base + off);
  }
}

/// Input `a` (a host array, or a scalar for an array parameter) cast to `to` in new host
/// memory, C-contiguous; the memory is kept in `keep`.
CallArg castOnHost(const CallArg &a, const ScalarType *to,
                   std::vector<std::shared_ptr<runtime::Allocation>> &keep) {
  Shape shape = a.isArray() ? a.shape() : Shape{};
  Strides strides = contiguousStrides(shape, to->byteSize(), false);
  auto mem = runtime::allocateHost(static_cast<size_t>(shapeSize(shape)) * to->byteSize());
  char *dst = static_cast<char *>(mem->hostPtr());
  if (!a.isArray()) {
    compiler::storeScalar(a.value, to, dst);
  } else {
    const ScalarType *from = a.dtype();
    forEachElement(reinterpret_cast<char *>(a.value.data), shape, a.strides(), [&](char *src) {
      compiler::storeScalar(compiler::ArgValue::load(from, src), to, dst);
      dst += to->byteSize();
    });
  }
  keep.push_back(mem);
  return CallArg::array(to, mem->address(), static_cast<int>(shape.size()), shape.data(),
                        strides.data(), Memory::Host, codegen::Backend::Host, true);
}

Operand operandOf(const CallArg &a) {
  Operand op;
  op.dtype = a.dtype();
  if (!a.isArray()) {
    op.scalar = true;
    op.value = a.value;
    return op;
  }
  op.data = a.value.data;
  op.shape = a.shape();
  op.strides = a.strides();
  return op;
}

/// Operand `a` for a loop on `backend`: host arrays staged when the loop runs on the GPU.
Operand stagedOperand(const CallArg &a, codegen::Backend backend, runtime::HostStaging &staging,
                      bool copyIn, bool copyBack) {
  Operand op = operandOf(a);
  if (a.isArray() && a.memory == Memory::Host && backend == codegen::Backend::CUDA)
    op.data = staging.stage(a.value.data, a.value.ndim, a.value.shape, a.value.strides,
                            op.dtype->byteSize(), copyIn, copyBack);
  return op;
}

/// Writes `v` into every element of array `out` (in host memory, or device memory of a loop on
/// `backend`).
void fillArray(const CallArg &out, const compiler::ArgValue &v, codegen::Backend backend,
               CUstream stream) {
  const ScalarType *t = out.dtype();
  Shape shape = out.shape();
  Strides strides = out.strides();
  if (out.memory == Memory::Host || backend == codegen::Backend::Host) {
    forEachElement(reinterpret_cast<char *>(out.value.data), shape, strides,
                   [&](char *p) { compiler::storeScalar(v, t, p); });
    return;
  }
  // Device memory: the extent comes down (its gaps keep their bytes), is filled, goes back.
  runtime::ArrayExtent e =
      runtime::arrayExtent(out.value.ndim, out.value.shape, out.value.strides, t->byteSize());
  if (!e.bytes)
    return;
  auto host = runtime::allocateHost(e.bytes);
  CUdeviceptr start = out.value.data + static_cast<uint64_t>(e.low);
  runtime::copyDeviceToHost(host->hostPtr(), start, e.bytes, stream);
  runtime::synchronizeStream(stream);
  forEachElement(static_cast<char *>(host->hostPtr()) - e.low, shape, strides,
                 [&](char *p) { compiler::storeScalar(v, t, p); });
  runtime::copyHostToDevice(start, host->hostPtr(), e.bytes, stream);
  runtime::synchronizeStream(stream);
}

void planElementwise(Ufunc &u, CallPlan &p, const std::vector<const CallArg *> &outs) {
  const Loop &L = u.loop(p.loop);
  bool anyArray = false, anyDevice = false;
  std::vector<Shape> shapes;
  for (size_t k = 0; k < u.nin; ++k) {
    const CallArg &a = p.inputs[k];
    checkPythonIntArg(a, L.params[k]);
    if (!a.isArray())
      continue;
    anyArray = true;
    anyDevice = anyDevice || inNonHostMemory(a);
    shapes.push_back(a.shape());
  }
  p.shape = shapes.empty() ? Shape{} : broadcastShapes(shapes);
  p.allocate.resize(1);
  if (const CallArg *out = outs[0]) {
    if (!out->writeable)
      throw std::invalid_argument("ufunc '" + u.name + "': the output array is read-only");
    Shape oshape = out->shape();
    std::vector<Shape> all = shapes;
    all.push_back(oshape);
    Shape withOut;
    try {
      withOut = broadcastShapes(all);
    } catch (const std::invalid_argument &) {
      withOut = {-1};
    }
    if (withOut != oshape)
      throw std::invalid_argument("non-broadcastable output operand with shape " +
                                  shapeStr(oshape) + " doesn't match the broadcast shape " +
                                  shapeStr(p.shape));
    p.shape = oshape;
    return;
  }
  p.allocate[0] =
      OutputRequest{p.shape, L.outputs[0], anyDevice, preferFortran(p.inputs, p.shape.size())};
  p.scalarResult = !anyArray;
}

void planGufunc(Ufunc &u, CallPlan &p, const std::vector<const CallArg *> &outs) {
  const Loop &L = u.loop(p.loop);
  // Inputs whose loop parameter is an array of another dtype (or a scalar given for an array
  // parameter) are cast on the host, as NumPy casts gufunc inputs.
  bool anyDevice = false;
  for (size_t k = 0; k < u.nin; ++k) {
    CallArg &a = p.inputs[k];
    checkPythonIntArg(a, L.params[k]);
    bool arrayParam = ir::isa<ir::ArrayType>(ir::concretize(L.params[k]));
    const ScalarType *want = L.inputs[k];
    anyDevice = anyDevice || inNonHostMemory(a);
    if ((a.isArray() && a.dtype() == want) || (!a.isArray() && !arrayParam))
      continue;
    if (a.isArray() && a.memory != Memory::Host)
      throw TypeMismatch("gufunc '" + u.name + "': compatible signature is possible by casting " +
                         "but input " + std::to_string(k) + ", a device array of dtype " +
                         a.dtype()->str() + ", does not support .astype() (the loop chosen " +
                         "takes " + want->str() + ": cast it first, or add a signature for it)");
    a = castOnHost(a, want, p.temporaries);
  }
  std::vector<Shape> inShapes;
  for (const CallArg &a : p.inputs)
    inShapes.push_back(a.isArray() ? a.shape() : Shape{});
  std::vector<Shape> outShapes(u.nout);
  std::vector<const Shape *> given(u.nout, nullptr);
  for (size_t k = 0; k < u.nout; ++k) {
    if (!outs[k])
      continue;
    if (!outs[k]->writeable)
      throw std::invalid_argument("gufunc '" + u.name + "': output " + std::to_string(k) +
                                  " is read-only");
    outShapes[k] = outs[k]->shape();
    given[k] = &outShapes[k];
  }
  p.core = bindCoreDims(*u.layout, inShapes, given);
  p.shape = p.core.loopShape;
  p.allocate.resize(u.nout);
  for (size_t k = 0; k < u.nout; ++k) {
    if (outs[k])
      continue;
    Shape shape = p.core.loopShape;
    const Shape &core = p.core.coreShapes[u.nin + k];
    shape.insert(shape.end(), core.begin(), core.end());
    p.allocate[k] = OutputRequest{shape, L.outputs[k], anyDevice, false};
  }
}

} // namespace

CallPlan planCall(Ufunc &u, codegen::Backend backend, std::vector<CallArg> inputs,
                  const std::vector<const CallArg *> &outs) {
  if (inputs.size() != u.nin || outs.size() != u.nout)
    throw std::logic_error("planCall: wrong number of inputs or outputs");
  CallPlan p;
  p.backend = backend;
  p.mode = execMode(u.target, backend);
  p.inputs = std::move(inputs);
  std::vector<ir::InputType> types;
  for (const CallArg &a : p.inputs) {
    checkMemory(u, a, backend);
    types.push_back(a.type);
  }
  std::vector<const ScalarType *> outDtypes(u.nout, nullptr);
  for (size_t k = 0; k < u.nout; ++k)
    if (outs[k]) {
      checkMemory(u, *outs[k], backend);
      outDtypes[k] = outs[k]->dtype();
    }
  p.loop = u.resolve(types, outDtypes);
  if (u.layout)
    planGufunc(u, p, outs);
  else
    planElementwise(u, p, outs);
  return p;
}

int64_t runCall(Ufunc &u, const CallPlan &plan, const std::vector<CallArg> &outs, CUstream stream) {
  runtime::HostStaging staging(stream);
  std::vector<Operand> ops;
  for (const CallArg &a : plan.inputs)
    ops.push_back(stagedOperand(a, plan.backend, staging, true, false));
  for (size_t k = 0; k < outs.size(); ++k) {
    // An output the call allocated is written whole: nothing to copy in.
    bool given = !plan.allocate[k].has_value();
    ops.push_back(stagedOperand(outs[k], plan.backend, staging, given, true));
  }
  int64_t smallGrid =
      u.layout ? u.runGufunc(plan.loop, ops, plan.core, plan.backend, plan.mode, stream)
               : u.runElementwise(plan.loop, ops, plan.shape, plan.backend, plan.mode, stream);
  staging.finish();
  return smallGrid;
}

ReducePlan planReduce(Ufunc &u, codegen::Backend backend, CallArg input,
                      const std::optional<std::vector<int64_t>> &axes, bool keepdims,
                      const CallArg *out, int64_t size) {
  if (!input.isArray())
    throw TypeMismatch("ufunc '" + u.name + "'.reduce needs an array, not a scalar");
  ReducePlan p;
  p.backend = backend;
  p.mode = execMode(u.target, backend);
  int nd = input.value.ndim;
  if (size >= 0 && nd >= 1)
    input.value.shape[0] = std::min(input.value.shape[0], size);
  std::vector<int64_t> axesIn;
  if (axes)
    axesIn = *axes;
  else
    for (int d = 0; d < nd; ++d)
      axesIn.push_back(d);
  p.axes = normalizeAxes(axesIn, nd);
  checkMemory(u, input, backend);
  if (out)
    checkMemory(u, *out, backend);
  p.loop = u.resolveReduce(input.dtype());
  const ScalarType *acc = u.loop(p.loop).outputs[0];
  for (int d = 0; d < nd; ++d) {
    bool reduced = std::find(p.axes.begin(), p.axes.end(), d) != p.axes.end();
    if (!reduced)
      p.keptShape.push_back(input.value.shape[d]);
    if (!reduced || keepdims)
      p.resultShape.push_back(reduced ? 1 : input.value.shape[d]);
  }
  p.keepdims = keepdims;
  if (out) {
    if (out->shape() != p.resultShape)
      throw std::invalid_argument("ufunc '" + u.name + "'.reduce: output parameter has shape " +
                                  shapeStr(out->shape()) + " but the reduction gives " +
                                  shapeStr(p.resultShape));
    if (!out->writeable)
      throw std::invalid_argument("ufunc '" + u.name + "'.reduce: the output array is read-only");
    if (!ir::canCast(acc, out->dtype(), ir::Casting::SameKind))
      throw TypeMismatch("Cannot cast ufunc '" + u.name + "' output from dtype('" + acc->str() +
                         "') to dtype('" + out->dtype()->str() +
                         "') with casting rule 'same_kind'");
  } else {
    p.allocate = OutputRequest{p.resultShape, acc, inNonHostMemory(input), false};
    p.scalarResult = p.resultShape.empty();
  }
  p.input = std::move(input);
  return p;
}

void runReduce(Ufunc &u, const ReducePlan &plan, const CallArg &out, CUstream stream) {
  int64_t M = shapeSize(plan.keptShape), K = 1;
  for (int d : plan.axes)
    K *= plan.input.value.shape[d];
  if (M == 0)
    return;
  if (K == 0) {
    if (!u.identity)
      throw std::invalid_argument("zero-size array to reduction operation " + u.name +
                                  " which has no identity");
    fillArray(out, *u.identity, plan.backend, stream);
    return;
  }
  runtime::HostStaging staging(stream);
  ReduceRequest r;
  r.loop = plan.loop;
  r.axes = plan.axes;
  r.input = stagedOperand(plan.input, plan.backend, staging, true, false);
  r.output = stagedOperand(out, plan.backend, staging, !plan.allocate.has_value(), true);
  // The output's strides over the kept dimensions only.
  Strides kept;
  for (int d = 0; d < static_cast<int>(plan.resultShape.size()); ++d)
    if (!plan.keepdims || std::find(plan.axes.begin(), plan.axes.end(), d) == plan.axes.end())
      kept.push_back(r.output.strides[d]);
  r.output.strides = kept;
  r.output.shape = plan.keptShape;
  u.runReduce(r, plan.backend, plan.mode, stream);
  staging.finish();
}

} // namespace ptxjit::ufunc
