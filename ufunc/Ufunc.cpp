#include "ufunc/Ufunc.h"

#include "compiler/Compiler.h"
#include "ir/Typing.h"
#include "runtime/Device.h"
#include "runtime/Memory.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>

namespace ptxjit::ufunc {

using ir::ScalarType;
using ir::TypeKind;

namespace {

std::string loopStr(const Loop &l, bool gufunc) {
  std::string s;
  if (!gufunc)
    s = l.outputs.empty() ? "?" : l.outputs[0]->str();
  s += "(";
  for (size_t k = 0; k < l.params.size(); ++k)
    s += (k ? ", " : "") + l.params[k]->str();
  return s + ")";
}

/// The element type of a parameter (its dtype for arrays), or null.
const ScalarType *elementOf(const ir::Type *t) {
  t = ir::concretize(t);
  if (const auto *st = ir::dyn_cast<ScalarType>(t))
    return st;
  if (const auto *at = ir::dyn_cast<ir::ArrayType>(t))
    return at->dtype();
  return nullptr;
}

template <typename T> T valueAs(const ScalarValue &v) {
  switch (v.kind) {
  case ScalarValue::Kind::Bool:
    return static_cast<T>(v.b);
  case ScalarValue::Kind::Int:
    return static_cast<T>(v.i);
  case ScalarValue::Kind::UInt:
    return static_cast<T>(v.u);
  case ScalarValue::Kind::Float:
  case ScalarValue::Kind::Complex:
    break;
  }
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v.re);
  } else {
    double x = v.re;
    if (std::isnan(x))
      return 0;
    int64_t i = x >= 9.2233720368547758e18    ? INT64_MAX
                : x <= -9.2233720368547758e18 ? INT64_MIN
                                              : static_cast<int64_t>(x);
    return static_cast<T>(i);
  }
}

bool truthOf(const ScalarValue &v) {
  switch (v.kind) {
  case ScalarValue::Kind::Bool:
    return v.b;
  case ScalarValue::Kind::Int:
    return v.i != 0;
  case ScalarValue::Kind::UInt:
    return v.u != 0;
  case ScalarValue::Kind::Float:
    return v.re != 0;
  case ScalarValue::Kind::Complex:
    return v.re != 0 || v.im != 0;
  }
  return false;
}

template <typename T> void put(void *dst, T v) { std::memcpy(dst, &v, sizeof(T)); }

/// Kernel parameters being collected: one 8-byte slot each.
struct Params {
  std::vector<uint64_t> slots;
  std::vector<void *> ptrs;
  void reserve(size_t n) { slots.reserve(n); }
  void i64(int64_t v) { slots.push_back(static_cast<uint64_t>(v)); }
  void u64(uint64_t v) { slots.push_back(v); }
  void scalar(const ScalarValue &v, const ScalarType *t) {
    uint64_t tmp[2] = {0, 0};
    int n = packScalar(v, t, tmp);
    for (int k = 0; k < n; ++k)
      slots.push_back(tmp[k]);
  }
  void **finish() {
    ptrs.resize(slots.size());
    for (size_t k = 0; k < slots.size(); ++k)
      ptrs[k] = &slots[k];
    return ptrs.data();
  }
};

std::string backendKey(codegen::Backend b) { return b == codegen::Backend::CUDA ? "G" : "H"; }

std::string typeKey(const ir::Type *t) { return std::to_string(reinterpret_cast<uintptr_t>(t)); }

} // namespace

int packScalar(const ScalarValue &v, const ScalarType *t, uint64_t *dst) {
  dst[0] = 0;
  switch (t->kind()) {
  case TypeKind::Bool:
    put<uint8_t>(dst, truthOf(v) ? 1 : 0);
    return 1;
  case TypeKind::Int:
    switch (t->bits()) {
    case 8:
      t->isSigned() ? put(dst, valueAs<int8_t>(v)) : put(dst, valueAs<uint8_t>(v));
      return 1;
    case 16:
      t->isSigned() ? put(dst, valueAs<int16_t>(v)) : put(dst, valueAs<uint16_t>(v));
      return 1;
    case 32:
      t->isSigned() ? put(dst, valueAs<int32_t>(v)) : put(dst, valueAs<uint32_t>(v));
      return 1;
    default:
      t->isSigned() ? put(dst, valueAs<int64_t>(v)) : put(dst, valueAs<uint64_t>(v));
      return 1;
    }
  case TypeKind::Float:
    if (t->bits() == 32)
      put(dst, valueAs<float>(v));
    else
      put(dst, valueAs<double>(v));
    return 1;
  case TypeKind::Complex: {
    double im = v.kind == ScalarValue::Kind::Complex ? v.im : 0.0;
    dst[1] = 0;
    if (t->bits() == 64) {
      put(dst, valueAs<float>(v));
      put(dst + 1, static_cast<float>(im));
    } else {
      put(dst, valueAs<double>(v));
      put(dst + 1, im);
    }
    return 2;
  }
  default:
    throw std::logic_error("packScalar: not a scalar type: " + t->str());
  }
}

void storeScalar(const ScalarValue &v, const ScalarType *t, void *dst) {
  uint64_t tmp[2];
  int n = packScalar(v, t, tmp);
  if (n == 2) {
    size_t part = t->byteSize() / 2;
    std::memcpy(dst, &tmp[0], part);
    std::memcpy(static_cast<char *>(dst) + part, &tmp[1], part);
  } else {
    std::memcpy(dst, tmp, t->byteSize());
  }
}

ExecMode execMode(Target target, codegen::Backend backend) {
  switch (target) {
  case Target::Cpu:
    return ExecMode::Serial;
  case Target::Parallel:
    return ExecMode::Parallel;
  case Target::Cuda:
    break;
  }
  return backend == codegen::Backend::CUDA ? ExecMode::Device : ExecMode::Parallel;
}

std::vector<int> normalizeAxes(const std::vector<int64_t> &axes, int ndim) {
  std::vector<int> out;
  for (int64_t a : axes) {
    if (a < -ndim || a >= ndim)
      throw std::out_of_range("axis " + std::to_string(a) + " is out of bounds for array of " +
                              "dimension " + std::to_string(ndim));
    int n = static_cast<int>(a < 0 ? a + ndim : a);
    if (std::find(out.begin(), out.end(), n) != out.end())
      throw std::invalid_argument("duplicate value in 'axis'");
    out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// ---- Ufunc ----------------------------------------------------------------------------------

Ufunc::Ufunc(int functionId, std::string name, Target target, size_t nin,
             std::optional<GufuncLayout> layout)
    : functionId(functionId), name(std::move(name)), target(target), nin(nin),
      nout(layout ? layout->nout() : 1), layout(std::move(layout)) {}

void Ufunc::compileGuarded(const std::function<void(const compiler::SnapshotSet &)> &work) {
  compiler::SnapshotSet snaps = snapshot ? snapshot() : compiler::SnapshotSet{};
  auto run = [&] { work(snaps); };
  if (compileWrapper)
    compileWrapper(run);
  else
    run();
}

int Ufunc::addLoop(const std::vector<const ir::Type *> &params, const ir::Type *declaredReturn) {
  Loop l;
  l.params = params;
  size_t expected = layout ? nin + nout : nin;
  if (params.size() != expected)
    throw TypeMismatch(
        "signature of " + std::to_string(params.size()) + " argument(s) for " +
        (layout ? "gufunc '" + name + "' with layout " + layout->text : "ufunc '" + name + "'") +
        ", which takes " + std::to_string(expected));
  for (size_t k = 0; k < params.size(); ++k) {
    const ir::Type *p = ir::concretize(params[k]);
    const ScalarType *el = elementOf(p);
    if (!el)
      throw TypeMismatch("parameter " + std::to_string(k) + " of ufunc '" + name + "' has type " +
                         p->str() + ", which is not a scalar or an array");
    if (!layout && !ir::isa<ScalarType>(p))
      throw TypeMismatch("@vectorize signatures take scalars, not " + p->str() +
                         " (use @guvectorize for array arguments)");
    if (layout) {
      size_t core = layout->operand(k).size();
      bool isOutput = k >= nin;
      if (const auto *at = ir::dyn_cast<ir::ArrayType>(p)) {
        if (!(static_cast<size_t>(at->ndim()) == core || (core == 0 && at->ndim() == 1)))
          throw TypeMismatch("argument " + std::to_string(k) + " of gufunc '" + name + "' is " +
                             p->str() + " but layout " + layout->text + " gives it " +
                             std::to_string(core) + " core dimension(s)");
      } else if (isOutput || core != 0) {
        throw TypeMismatch("argument " + std::to_string(k) + " of gufunc '" + name +
                           "' must be an array (" + std::to_string(core) +
                           " core dimension(s) in layout " + layout->text + "; outputs are " +
                           "always arrays), not " + p->str());
      }
    }
    (k < nin ? l.inputs : l.outputs).push_back(el);
  }
  const ir::Type *ret = nullptr;
  compileGuarded([&](const compiler::SnapshotSet &snaps) {
    ret = compiler::Compiler::instance().typeCheck(functionId, params, snaps);
  });
  ret = ret ? ir::concretize(ret) : ret;
  if (layout) {
    if (ret && ret->kind() != TypeKind::Void && ret->kind() != TypeKind::None)
      throw TypeMismatch("@guvectorize function '" + name + "' must not return a value (it " +
                         "returns " + ret->str() + "); write results into its output arrays");
  } else {
    const auto *rt = ret ? ir::dyn_cast<ScalarType>(ret) : nullptr;
    if (!rt)
      throw TypeMismatch("@vectorize function '" + name + "' must return a scalar, not " +
                         (ret ? ret->str() : std::string("nothing")));
    const ScalarType *declared =
        declaredReturn ? ir::dyn_cast<ScalarType>(ir::concretize(declaredReturn)) : nullptr;
    if (declaredReturn && !declared)
      throw TypeMismatch("the return type of a @vectorize signature must be a scalar, not " +
                         declaredReturn->str());
    l.outputs.push_back(declared ? declared : rt);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t k = 0; k < loops.size(); ++k)
    if (loops[k].params == l.params && loops[k].outputs == l.outputs)
      return static_cast<int>(k);
  loops.push_back(std::move(l));
  return static_cast<int>(loops.size() - 1);
}

std::string Ufunc::signaturesStr() const {
  std::string s;
  for (const Loop &l : loops)
    s += "\n    " + loopStr(l, layout.has_value());
  return s.empty() ? " (none)" : s;
}

int Ufunc::resolve(const std::vector<InputType> &inputs,
                   const std::vector<const ScalarType *> &outputDtypes) {
  std::vector<const ir::Type *> key(inputs.begin(), inputs.end());
  key.insert(key.end(), outputDtypes.begin(), outputDtypes.end());
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = resolved_.find(key);
    if (it != resolved_.end())
      return it->second;
  }
  if (inputs.size() != nin)
    throw TypeMismatch("ufunc '" + name + "' takes " + std::to_string(nin) + " input(s), got " +
                       std::to_string(inputs.size()));
  std::vector<LoopTypes> types;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    types.assign(loops.begin(), loops.end());
  }
  // A gufunc loop writes into the output arrays themselves: their dtypes must be the loop's.
  ir::Casting outputCasting = layout ? ir::Casting::No : ir::Casting::SameKind;
  LoopMatch match = resolveLoop(inputs, types, outputDtypes, outputCasting);
  int idx = match.loop;
  if (idx < 0 && lazy) {
    std::vector<const ScalarType *> loopTypes = lazyLoopTypes(inputs);
    std::vector<const ir::Type *> params;
    if (!layout) {
      params.assign(loopTypes.begin(), loopTypes.end());
    } else {
      const ir::Type *common = nullptr;
      for (const ScalarType *t : loopTypes)
        common = common ? ir::promote(common, t) : t;
      for (size_t k = 0; k < nin + nout; ++k) {
        const ScalarType *el = k < nin ? loopTypes[k]
                                       : (k - nin < outputDtypes.size() && outputDtypes[k - nin]
                                              ? outputDtypes[k - nin]
                                              : ir::dyn_cast<ScalarType>(ir::concretize(common)));
        size_t core = layout->operand(k).size();
        if (k < nin && core == 0)
          params.push_back(el);
        else
          params.push_back(
              ir::types::array(el, std::max<int>(1, static_cast<int>(core)), ir::Layout::A));
      }
    }
    idx = addLoop(params, nullptr);
    const Loop &l = loops[idx];
    for (size_t k = 0; k < outputDtypes.size() && k < l.outputs.size(); ++k)
      if (outputDtypes[k] && !ir::canCast(l.outputs[k], outputDtypes[k], outputCasting)) {
        match.outputRefused = true;
        match.outputFrom = l.outputs[k];
        match.outputTo = outputDtypes[k];
        idx = -1;
      }
  }
  if (idx < 0 && match.outputRefused)
    throw TypeMismatch("ufunc '" + name + "' output (dtype " + match.outputFrom->str() +
                       ") could not be coerced to provided output parameter (dtype " +
                       match.outputTo->str() + ") according to the casting rule '" +
                       ir::castingName(outputCasting) + "'");
  if (idx < 0)
    throw TypeMismatch("ufunc '" + name + "': no loop matching the input types (" +
                       inputTypesStr(inputs) +
                       ") with safe casting; its signatures are:" + signaturesStr());
  std::lock_guard<std::mutex> lock(mutex_);
  resolved_[key] = idx;
  return idx;
}

int Ufunc::resolveReduce(const ScalarType *dtype) {
  if (layout || nin != 2)
    throw TypeMismatch("reduce only supports binary ufuncs, and '" + name + "' takes " +
                       std::to_string(nin) + " input(s)" + (layout ? " (it is a gufunc)" : ""));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t k = 0; k < loops.size(); ++k) {
      const Loop &l = loops[k];
      if (l.inputs[0] == l.inputs[1] && l.outputs[0] == l.inputs[0] &&
          ir::canCast(dtype, l.inputs[0], ir::Casting::Safe))
        return static_cast<int>(k);
    }
  }
  if (lazy) {
    int idx = addLoop({dtype, dtype}, nullptr);
    if (loops[idx].outputs[0] == dtype)
      return idx;
    // The function promotes (e.g. int32 + int32 → int64): reduce in the result type.
    const ScalarType *r = loops[idx].outputs[0];
    if (ir::canCast(dtype, r, ir::Casting::Safe)) {
      idx = addLoop({r, r}, nullptr);
      if (loops[idx].outputs[0] == r)
        return idx;
    }
  }
  throw TypeMismatch("ufunc '" + name + "' has no loop (T, T) -> T that " + dtype->str() +
                     " casts to safely, needed by reduce; its signatures are:" + signaturesStr());
}

const LoopKernel &
Ufunc::kernel(const std::string &key,
              const std::function<std::unique_ptr<LoopKernel>(const compiler::SnapshotSet &)> &make) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = kernels_.find(key);
    if (it != kernels_.end())
      return *it->second;
  }
  std::unique_ptr<LoopKernel> k;
  compileGuarded([&](const compiler::SnapshotSet &snaps) { k = make(snaps); });
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = kernels_.find(key);
  if (it != kernels_.end())
    return *it->second;
  return *kernels_.emplace(key, std::move(k)).first->second;
}

std::vector<const LoopKernel *> Ufunc::kernels() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<const LoopKernel *> out;
  for (const auto &kv : kernels_)
    out.push_back(kv.second.get());
  return out;
}

const LoopKernel &Ufunc::elementwiseKernel(int loop, codegen::Backend backend,
                                           const codegen::ElementwiseKernelDesc &desc) {
  std::string key = "E" + std::to_string(loop) + backendKey(backend) +
                    (desc.flat ? "f" : "g" + std::to_string(desc.loopDims)) +
                    (desc.returnsValue ? "r" : "v");
  for (const codegen::LoopOperand &lo : desc.operands)
    key += lo.kind == codegen::LoopOperand::Kind::Scalar ? "s" : "a" + typeKey(lo.elemType);
  return kernel(key, [&](const compiler::SnapshotSet &snaps) {
    std::vector<const ir::Type *> params;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      params = loops.at(loop).params;
    }
    codegen::CompileOptions opts =
        compileOptions ? compileOptions(backend) : codegen::CompileOptions{};
    opts.backend = backend;
    return compileElementwise(functionId, params, desc, opts, snaps);
  });
}

void Ufunc::runElementwise(int loop, const std::vector<Operand> &ops, const Shape &shape,
                           codegen::Backend backend, ExecMode mode, CUstream stream) {
  const Loop &l = loops.at(loop);
  size_t nops = ops.size();
  LoopSpace space;
  space.shape = shape;
  std::vector<int> itemsizes(nops, 0);
  for (size_t k = 0; k < nops; ++k) {
    const Operand &op = ops[k];
    if (op.scalar) {
      space.strides.push_back(Strides(shape.size(), 0));
      continue;
    }
    itemsizes[k] = op.dtype->byteSize();
    space.strides.push_back(broadcastStrides(op.shape, op.strides, shape));
  }
  LoopSpace s = simplifyLoop(std::move(space), nin);
  int64_t n = shapeSize(s.shape);
  if (n == 0)
    return;
  codegen::ElementwiseKernelDesc desc;
  desc.returnsValue = !layout;
  desc.flat = isFlat(s, itemsizes);
  desc.loopDims = desc.flat ? 0 : static_cast<int>(s.shape.size());
  for (const Operand &op : ops) {
    codegen::LoopOperand lo;
    lo.kind = op.scalar ? codegen::LoopOperand::Kind::Scalar : codegen::LoopOperand::Kind::Array;
    lo.elemType = op.scalar ? nullptr : op.dtype;
    desc.operands.push_back(lo);
  }
  const LoopKernel &k = elementwiseKernel(loop, backend, desc);

  Params p;
  p.reserve(2 + nops * (2 + s.shape.size()));
  p.i64(n);
  if (!desc.flat)
    for (int64_t v : s.shape)
      p.i64(v);
  for (size_t k2 = 0; k2 < nops; ++k2) {
    const Operand &op = ops[k2];
    if (op.scalar) {
      const auto *pt = ir::cast<ScalarType>(ir::concretize(l.params[k2]));
      p.scalar(op.value, pt);
      continue;
    }
    p.u64(op.data);
    if (!desc.flat)
      for (int64_t st : s.strides[k2])
        p.i64(st);
  }
  ufunc::runElementwise(k, mode, n, p.finish(), stream);
}

void Ufunc::runGufunc(int loop, const std::vector<Operand> &ops, const CoreBinding &cb,
                      codegen::Backend backend, ExecMode mode, CUstream stream) {
  const Loop &l = loops.at(loop);
  size_t nops = ops.size();
  const Shape &loopShape = cb.loopShape;
  LoopSpace space;
  space.shape = loopShape;
  std::vector<Strides> coreStrides(nops);
  for (size_t k = 0; k < nops; ++k) {
    const Operand &op = ops[k];
    if (op.scalar) {
      space.strides.push_back(Strides(loopShape.size(), 0));
      continue;
    }
    size_t core = cb.coreShapes[k].size();
    size_t lead = op.shape.size() - core;
    Shape leadShape(op.shape.begin(), op.shape.begin() + lead);
    Strides leadStrides(op.strides.begin(), op.strides.begin() + lead);
    space.strides.push_back(broadcastStrides(leadShape, leadStrides, loopShape));
    coreStrides[k].assign(op.strides.begin() + lead, op.strides.end());
  }
  LoopSpace s = simplifyLoop(std::move(space), nin);
  int64_t n = shapeSize(s.shape);
  if (n == 0)
    return;
  codegen::ElementwiseKernelDesc desc;
  desc.returnsValue = false;
  desc.flat = false;
  desc.loopDims = static_cast<int>(s.shape.size());
  std::string key =
      "G" + std::to_string(loop) + backendKey(backend) + std::to_string(desc.loopDims);
  for (size_t k = 0; k < nops; ++k) {
    const Operand &op = ops[k];
    codegen::LoopOperand lo;
    lo.kind = op.scalar ? codegen::LoopOperand::Kind::Scalar : codegen::LoopOperand::Kind::Array;
    lo.elemType = op.scalar ? nullptr : op.dtype;
    const ir::Type *pt = ir::concretize(l.params[k]);
    bool arrayParam = ir::isa<ir::ArrayType>(pt);
    lo.coreDims = (!op.scalar && arrayParam) ? static_cast<int>(cb.coreShapes[k].size()) : 0;
    if (!op.scalar && !arrayParam && !cb.coreShapes[k].empty())
      throw TypeMismatch("gufunc '" + name + "': argument " + std::to_string(k) +
                         " has core dimensions but its parameter is a scalar");
    if (!op.scalar && arrayParam && op.dtype != elementOf(pt))
      throw TypeMismatch("gufunc '" + name + "': argument " + std::to_string(k) + " has dtype " +
                         op.dtype->str() + " but the loop needs " + pt->str());
    desc.operands.push_back(lo);
    key += (op.scalar ? "s" : "a" + typeKey(op.dtype)) + std::to_string(lo.coreDims);
  }
  const LoopKernel &k = kernel(key, [&](const compiler::SnapshotSet &snaps) {
    codegen::CompileOptions opts =
        compileOptions ? compileOptions(backend) : codegen::CompileOptions{};
    opts.backend = backend;
    return compileElementwise(functionId, l.params, desc, opts, snaps);
  });
  Params p;
  p.i64(n);
  for (int64_t v : s.shape)
    p.i64(v);
  for (size_t k2 = 0; k2 < nops; ++k2) {
    const Operand &op = ops[k2];
    if (op.scalar) {
      p.scalar(op.value, ir::cast<ScalarType>(ir::concretize(l.params[k2])));
      continue;
    }
    p.u64(op.data);
    for (int64_t st : s.strides[k2])
      p.i64(st);
    if (desc.operands[k2].coreDims > 0) {
      for (int64_t v : cb.coreShapes[k2])
        p.i64(v);
      for (int64_t v : coreStrides[k2])
        p.i64(v);
    }
  }
  ufunc::runElementwise(k, mode, n, p.finish(), stream);
}

void Ufunc::runReduce(const ReduceRequest &r, codegen::Backend backend, ExecMode mode,
                      CUstream stream) {
  const Loop &l = loops.at(r.loop);
  const ScalarType *acc = l.outputs[0];
  const Operand &in = r.input;
  int nd = static_cast<int>(in.shape.size());
  // Kept and reduced dimensions of the input; the output's strides over the kept ones.
  LoopSpace kept, red;
  kept.strides.resize(2);
  red.strides.resize(1);
  for (int d = 0, o = 0; d < nd; ++d) {
    if (std::find(r.axes.begin(), r.axes.end(), d) != r.axes.end()) {
      red.shape.push_back(in.shape[d]);
      red.strides[0].push_back(in.strides[d]);
    } else {
      kept.shape.push_back(in.shape[d]);
      kept.strides[0].push_back(in.strides[d]);
      kept.strides[1].push_back(r.output.strides[o++]);
    }
  }
  kept = simplifyLoop(std::move(kept), 1);
  red = simplifyLoop(std::move(red), 0);
  int64_t M = shapeSize(kept.shape), K = shapeSize(red.shape);
  if (M == 0)
    return;
  if (K == 0)
    throw std::logic_error("runReduce: empty reduction");

  bool device = mode == ExecMode::Device;
  unsigned B = 1;
  int64_t P = 1;
  if (device) {
    B = 256;
    while (B > 32 && static_cast<int64_t>(B / 2) >= K)
      B /= 2;
    int64_t target = static_cast<int64_t>(runtime::Device::current().multiprocessorCount()) * 8;
    int64_t maxP = (K + B - 1) / B;
    P = std::clamp<int64_t>((target + M - 1) / M, 1, maxP);
  } else if (mode == ExecMode::Parallel) {
    int64_t threads = static_cast<int64_t>(runtime::hostParallelism());
    if (M < threads && K >= (1 << 15))
      P = std::clamp<int64_t>((2 * threads + M - 1) / M, 1, K / (1 << 14));
  }

  auto launch = [&](const ScalarType *inType, const ScalarType *outType, const Strides &inKept,
                    uint64_t inData, const Shape &redShape, const Strides &inRed, uint64_t outData,
                    const Strides &outKept, int64_t parts, int64_t partStride, int64_t k) {
    codegen::ReduceKernelDesc desc;
    desc.inType = inType;
    desc.accType = acc;
    desc.outType = outType;
    desc.keptDims = static_cast<int>(kept.shape.size());
    desc.reducedDims = static_cast<int>(redShape.size());
    desc.blockSize = device ? B : 1;
    std::string key = "R" + std::to_string(r.loop) + backendKey(backend) + typeKey(inType) + "_" +
                      typeKey(outType) + "_" + std::to_string(desc.keptDims) + "_" +
                      std::to_string(desc.reducedDims) + "_" + std::to_string(desc.blockSize);
    const LoopKernel &kern = kernel(key, [&](const compiler::SnapshotSet &snaps) {
      codegen::CompileOptions opts =
          compileOptions ? compileOptions(backend) : codegen::CompileOptions{};
      opts.backend = backend;
      return compileReduce(functionId, desc, opts, snaps);
    });
    Params p;
    p.i64(M);
    p.i64(k);
    p.i64(parts);
    for (int64_t v : kept.shape)
      p.i64(v);
    for (int64_t v : redShape)
      p.i64(v);
    p.u64(inData);
    for (int64_t v : inKept)
      p.i64(v);
    for (int64_t v : inRed)
      p.i64(v);
    p.u64(outData);
    for (int64_t v : outKept)
      p.i64(v);
    p.i64(partStride);
    ufunc::runReduce(kern, mode, M * parts, desc.blockSize, p.finish(), stream);
  };

  if (P == 1) {
    launch(in.dtype, r.output.dtype, kept.strides[0], in.data, red.shape, red.strides[0],
           r.output.data, kept.strides[1], 1, 0, K);
    return;
  }
  // Two passes: partial results [M][P] in a temporary, then folded into the output.
  int64_t item = acc->byteSize();
  size_t bytes = static_cast<size_t>(M * P * item);
  std::shared_ptr<runtime::Allocation> tmp =
      device ? runtime::allocateDevice(bytes, stream, runtime::FirstUse::OnStreamNow)
             : runtime::allocateHost(bytes);
  Strides tmpKept = contiguousStrides(kept.shape, P * item, false);
  launch(in.dtype, acc, kept.strides[0], in.data, red.shape, red.strides[0], tmp->address(),
         tmpKept, P, item, K);
  launch(acc, r.output.dtype, tmpKept, tmp->address(), Shape{P}, Strides{item}, r.output.data,
         kept.strides[1], 1, 0, P);
}

} // namespace ptxjit::ufunc
