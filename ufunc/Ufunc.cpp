#include "ufunc/Ufunc.h"

#include "compiler/Compiler.h"
#include "ir/Enums.h"
#include "ir/typing/Typing.h"
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
    return at->scalarDtype(); // null for records, which ufunc loops do not take
  return nullptr;
}

} // namespace

Target targetFromName(const std::string &name) {
  if (name == "cuda")
    return Target::Cuda;
  if (name == "cpu")
    return Target::Cpu;
  if (name == "parallel")
    return Target::Parallel;
  throw std::invalid_argument("unsupported ufunc target '" + name +
                              "' (ptxjit supports 'cuda', 'cpu' and 'parallel')");
}

const char *targetName(Target t) {
  switch (t) {
  case Target::Cpu:
    return "cpu";
  case Target::Parallel:
    return "parallel";
  case Target::Cuda:
    break;
  }
  return "cuda";
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
      throw AxisError("axis " + std::to_string(a) + " is out of bounds for array of " +
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
             std::optional<GufuncLayout> layout, CompileHooks hooks)
    : functionId(functionId), name(std::move(name)), target(target), nin(nin),
      nout(layout ? layout->nout() : 1), layout(std::move(layout)), hooks_(std::move(hooks)) {}

void Ufunc::compileGuarded(const std::function<void(const compiler::SnapshotSet &)> &work) {
  compiler::SnapshotSet snaps = hooks_.snapshot ? hooks_.snapshot() : compiler::SnapshotSet{};
  auto run = [&] { work(snaps); };
  if (hooks_.run)
    hooks_.run(run);
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
  // numba-cuda's check and words: a gufunc signature names no return type, or void/none.
  const ir::Type *guRet = layout && declaredReturn ? ir::concretize(declaredReturn) : nullptr;
  if (guRet && guRet->kind() != TypeKind::Void && guRet->kind() != TypeKind::None)
    throw TypeMismatch("guvectorized functions cannot return values: signature " + guRet->str() +
                       loopStr(l, true) + " specifies " + guRet->str() + " return type");
  const ir::Type *ret = nullptr;
  compileGuarded([&](const compiler::SnapshotSet &snaps) {
    ret = compiler::Compiler::instance().typeCheck(functionId, params, snaps);
  });
  // An IntEnum member returned is its int value (numba converts it to the output's int type).
  ret = ret ? ir::concretize(ir::intEnumAsInt(ret)) : ret;
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
  for (size_t k = 0; k < loops_.size(); ++k)
    if (loops_[k]->params == l.params && loops_[k]->outputs == l.outputs)
      return static_cast<int>(k);
  loops_.push_back(std::make_unique<Loop>(std::move(l)));
  return static_cast<int>(loops_.size() - 1);
}

const Loop &Ufunc::loop(int index) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return *loops_.at(index);
}

size_t Ufunc::loopCount() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return loops_.size();
}

std::string Ufunc::signaturesStr() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string s;
  for (const auto &l : loops_)
    s += "\n    " + loopStr(*l, layout.has_value());
  return s.empty() ? " (none)" : s;
}

int Ufunc::resolve(const std::vector<ir::InputType> &inputs,
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
  std::vector<ir::LoopTypes> types;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto &l : loops_)
      types.push_back(*l);
  }
  // A gufunc loop writes into the output arrays themselves: their dtypes must be the loop's.
  ir::Casting outputCasting = layout ? ir::Casting::No : ir::Casting::SameKind;
  ir::LoopMatch match = ir::resolveLoop(inputs, types, outputDtypes, outputCasting);
  int idx = match.loop;
  // numba-cuda casts a gufunc's inputs to the first signature whose types cast safely to
  // theirs (an int64 scalar to an int32 parameter); the second try allows those narrowings
  // within a kind and still refuses kind changes (complex to float, float to int).
  bool narrowing = layout && !lazy;
  if (idx < 0 && narrowing) {
    ir::LoopMatch second = ir::resolveLoop(inputs, types, outputDtypes, outputCasting, true);
    if (second.loop >= 0 || !match.outputRefused)
      match = second;
    idx = match.loop;
  }
  if (idx < 0 && lazy) {
    std::vector<const ScalarType *> loopTypes = ir::lazyLoopTypes(inputs);
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
    const Loop &l = loop(idx);
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
                       ir::inputTypesStr(inputs) + ") with safe casting" +
                       (narrowing ? " or narrowing within a kind" : "") +
                       "; its signatures are:" + signaturesStr());
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
    for (size_t k = 0; k < loops_.size(); ++k) {
      const Loop &l = *loops_[k];
      if (l.inputs[0] == l.inputs[1] && l.outputs[0] == l.inputs[0] &&
          ir::canCast(dtype, l.inputs[0], ir::Casting::Safe))
        return static_cast<int>(k);
    }
  }
  if (lazy) {
    int idx = addLoop({dtype, dtype}, nullptr);
    if (loop(idx).outputs[0] == dtype)
      return idx;
    // The function promotes (e.g. int32 + int32 → int64): reduce in the result type.
    const ScalarType *r = loop(idx).outputs[0];
    if (ir::canCast(dtype, r, ir::Casting::Safe)) {
      idx = addLoop({r, r}, nullptr);
      if (loop(idx).outputs[0] == r)
        return idx;
    }
  }
  throw TypeMismatch("ufunc '" + name + "' has no loop (T, T) -> T that " + dtype->str() +
                     " casts to safely, needed by reduce; its signatures are:" + signaturesStr());
}

const compiler::Specialization &Ufunc::loopKernel(int loop, codegen::Backend backend,
                                                  const codegen::LoopKernelDesc &desc) {
  KernelKey key{loop, backend, desc};
  compiler::LoopKey loopKey;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = kernels_.find(key);
    if (it != kernels_.end())
      return *it->second;
    loopKey.fnParams = loops_.at(loop)->params;
  }
  loopKey.desc = desc;
  codegen::CompileOptions opts =
      hooks_.options ? hooks_.options(backend) : codegen::CompileOptions{};
  opts.backend = backend;
  const compiler::Specialization *spec = nullptr;
  compileGuarded([&](const compiler::SnapshotSet &snaps) {
    spec = &compiler::Compiler::instance().specializeLoop(functionId, loopKey, opts, snaps);
  });
  std::lock_guard<std::mutex> lock(mutex_);
  kernels_.emplace(key, spec);
  return *spec;
}

std::vector<const compiler::Specialization *> Ufunc::kernels() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<const compiler::Specialization *> out;
  for (const auto &kv : kernels_)
    out.push_back(kv.second);
  return out;
}

namespace {

/// LoopOperand::coreAlign of array operand `op` whose core arrays start at `op.data` plus
/// multiples of `loopStrides` over `loopShape`: the lowest power of two dividing the address and
/// each stride of a dimension longer than one, at most 16, when it exceeds the item size; else 0.
uint8_t coreAlignment(const Operand &op, const Shape &loopShape, const Strides &loopStrides) {
  uint64_t bits = op.data | 16;
  for (size_t d = 0; d < loopShape.size() && d < loopStrides.size(); ++d)
    if (loopShape[d] > 1)
      bits |= static_cast<uint64_t>(loopStrides[d] < 0 ? -loopStrides[d] : loopStrides[d]);
  uint64_t align = bits & (~bits + 1); // the lowest set bit
  return align > static_cast<uint64_t>(op.dtype->byteSize()) ? static_cast<uint8_t>(align) : 0;
}

/// The loop kernel's description of elementwise operands `ops` (`coreDims`: per operand, the
/// core dimensions a gufunc operand passes to an array parameter; `coreStrides` their strides;
/// `loopShape` and `loopStrides`: the gufunc's loop, for coreAlignment).
codegen::LoopKernelDesc
elementwiseDesc(const std::vector<Operand> &ops, bool returnsValue, bool flat, int loopDims,
                const std::vector<int> &coreDims = {}, const std::vector<Strides> &coreStrides = {},
                const Shape &loopShape = {}, const std::vector<Strides> &loopStrides = {}) {
  codegen::LoopKernelDesc d;
  d.elementwise.returnsValue = returnsValue;
  d.elementwise.flat = flat;
  d.elementwise.loopDims = flat ? 0 : loopDims;
  for (size_t k = 0; k < ops.size(); ++k) {
    codegen::LoopOperand lo;
    lo.kind =
        ops[k].scalar ? codegen::LoopOperand::Kind::Scalar : codegen::LoopOperand::Kind::Array;
    lo.elemType = ops[k].scalar ? nullptr : ops[k].dtype;
    lo.coreDims = k < coreDims.size() ? coreDims[k] : 0;
    lo.unitCoreStride = lo.coreDims > 0 && k < coreStrides.size() && !coreStrides[k].empty() &&
                        coreStrides[k].back() == ops[k].dtype->byteSize();
    if (lo.unitCoreStride && k < loopStrides.size())
      lo.coreAlign = coreAlignment(ops[k], loopShape, loopStrides[k]);
    d.elementwise.operands.push_back(lo);
  }
  return d;
}

/// An array argument of the loop kernel: `data` over `shape` ++ `core` with `strides` ++
/// `coreStrides` (a flat loop passes the data pointer alone: ndim 0).
compiler::ArgValue loopArray(uint64_t data, const Shape &shape, const Strides &strides,
                             const Shape &core = {}, const Strides &coreStrides = {}) {
  Shape dims = shape;
  dims.insert(dims.end(), core.begin(), core.end());
  Strides st = strides;
  st.insert(st.end(), coreStrides.begin(), coreStrides.end());
  return compiler::ArgValue::array(data, static_cast<int>(dims.size()), dims.data(), st.data());
}

} // namespace

const compiler::Specialization &Ufunc::flatKernel(int loop, codegen::Backend backend,
                                                  const std::vector<Operand> &ops) {
  return loopKernel(loop, backend, elementwiseDesc(ops, true, true, 0));
}

int64_t Ufunc::runElementwise(int loop, const std::vector<Operand> &ops, const Shape &shape,
                              codegen::Backend backend, ExecMode mode, CUstream stream) {
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
    return 0;
  bool flat = isFlat(s, itemsizes);
  const compiler::Specialization &k = loopKernel(
      loop, backend, elementwiseDesc(ops, !layout, flat, static_cast<int>(s.shape.size())));
  std::vector<compiler::ArgValue> leaves{compiler::ArgValue::integer(n)};
  for (size_t k2 = 0; k2 < nops; ++k2) {
    const Operand &op = ops[k2];
    if (op.scalar)
      leaves.push_back(op.value);
    else if (flat)
      leaves.push_back(loopArray(op.data, {}, {}));
    else
      leaves.push_back(loopArray(op.data, s.shape, s.strides[k2]));
  }
  return launchElementwise(k, mode, n, leaves.data(), stream);
}

int64_t Ufunc::runGufunc(int loop, const std::vector<Operand> &ops, const CoreBinding &cb,
                         codegen::Backend backend, ExecMode mode, CUstream stream) {
  const Loop &l = this->loop(loop);
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
    // Leading dimensions beyond the loop shape's have length 1 (bindCoreDims' old-style scalar).
    size_t skip = lead > loopShape.size() ? lead - loopShape.size() : 0;
    Shape leadShape(op.shape.begin() + skip, op.shape.begin() + lead);
    Strides leadStrides(op.strides.begin() + skip, op.strides.begin() + lead);
    space.strides.push_back(broadcastStrides(leadShape, leadStrides, loopShape));
    coreStrides[k].assign(op.strides.begin() + lead, op.strides.end());
  }
  LoopSpace s = simplifyLoop(std::move(space), nin);
  int64_t n = shapeSize(s.shape);
  if (n == 0)
    return 0;
  std::vector<int> coreDims(nops, 0);
  for (size_t k = 0; k < nops; ++k) {
    const Operand &op = ops[k];
    const ir::Type *pt = ir::concretize(l.params[k]);
    bool arrayParam = ir::isa<ir::ArrayType>(pt);
    if (!op.scalar && !arrayParam && !cb.coreShapes[k].empty())
      throw TypeMismatch("gufunc '" + name + "': argument " + std::to_string(k) +
                         " has core dimensions but its parameter is a scalar");
    if (!op.scalar && arrayParam && op.dtype != elementOf(pt))
      throw TypeMismatch("gufunc '" + name + "': argument " + std::to_string(k) + " has dtype " +
                         op.dtype->str() + " but the loop needs " + pt->str());
    coreDims[k] = (!op.scalar && arrayParam) ? static_cast<int>(cb.coreShapes[k].size()) : 0;
  }
  codegen::LoopKernelDesc desc =
      elementwiseDesc(ops, false, false, static_cast<int>(s.shape.size()), coreDims, coreStrides,
                      s.shape, s.strides);
  // The lines of aligned rows one iteration keeps in use, for the launch's residency cap.
  int64_t liveRowBytes = 0;
  for (size_t k = 0; k < nops; ++k)
    if (desc.elementwise.operands[k].coreAlign > 0)
      liveRowBytes +=
          std::min(shapeSize(cb.coreShapes[k]) * ops[k].dtype->byteSize(), kL1LineBytes);
  const compiler::Specialization &kern = loopKernel(loop, backend, desc);
  std::vector<compiler::ArgValue> leaves{compiler::ArgValue::integer(n)};
  for (size_t k = 0; k < nops; ++k) {
    const Operand &op = ops[k];
    if (op.scalar)
      leaves.push_back(op.value);
    else if (coreDims[k] > 0)
      leaves.push_back(loopArray(op.data, s.shape, s.strides[k], cb.coreShapes[k], coreStrides[k]));
    else
      leaves.push_back(loopArray(op.data, s.shape, s.strides[k]));
  }
  return launchElementwise(kern, mode, n, leaves.data(), stream, liveRowBytes);
}

void Ufunc::runReduce(const ReduceRequest &r, codegen::Backend backend, ExecMode mode,
                      CUstream stream) {
  const Loop &l = loop(r.loop);
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

  // One pass: folds `k` elements per result of `inType` at `inData` (strides over the kept
  // and the reduced dimensions) into `parts` partitions of results of `outType` at `outData`.
  auto launch = [&](const ScalarType *inType, const ScalarType *outType, const Strides &inKept,
                    uint64_t inData, const Shape &redShape, const Strides &inRed, uint64_t outData,
                    const Strides &outKept, int64_t parts, int64_t partStride, int64_t k) {
    codegen::LoopKernelDesc desc;
    desc.kind = codegen::LoopKernelDesc::Kind::Reduce;
    desc.reduce.inType = inType;
    desc.reduce.accType = acc;
    desc.reduce.outType = outType;
    desc.reduce.keptDims = static_cast<int>(kept.shape.size());
    desc.reduce.reducedDims = static_cast<int>(redShape.size());
    desc.reduce.blockSize = device ? B : 1;
    const compiler::Specialization &kern = loopKernel(r.loop, backend, desc);
    Shape inShape = kept.shape;
    inShape.insert(inShape.end(), redShape.begin(), redShape.end());
    Strides inStrides = inKept;
    inStrides.insert(inStrides.end(), inRed.begin(), inRed.end());
    compiler::ArgValue leaves[] = {
        compiler::ArgValue::integer(M),          compiler::ArgValue::integer(k),
        compiler::ArgValue::integer(parts),      loopArray(inData, inShape, inStrides),
        loopArray(outData, kept.shape, outKept), compiler::ArgValue::integer(partStride)};
    launchReduce(kern, mode, M * parts, desc.reduce.blockSize, leaves, stream);
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
