// The LLVM-free part of the ufunc loop kernels: their descriptors as keys, and their parameter
// types under the kernel ABI. The kernels themselves are generated in LowerUfunc.cpp.
#include "codegen/UfuncKernels.h"

#include "codegen/ModuleImpl.h"

namespace ptxjit::codegen {
namespace {

size_t mix(size_t h, size_t v) { return h * 1000003u ^ v; }

size_t typeHash(const ir::Type *t) { return std::hash<const void *>()(t); }

std::string typeName(const ir::Type *t) { return t ? t->str() : "?"; }

} // namespace

size_t LoopKernelDesc::hash() const {
  size_t h = static_cast<size_t>(kind);
  if (kind == Kind::Reduce) {
    h = mix(h, typeHash(reduce.inType));
    h = mix(h, typeHash(reduce.accType));
    h = mix(h, typeHash(reduce.outType));
    h = mix(h, static_cast<size_t>(reduce.keptDims));
    h = mix(h, static_cast<size_t>(reduce.reducedDims));
    return mix(h, reduce.blockSize);
  }
  h = mix(h, elementwise.returnsValue);
  h = mix(h, elementwise.flat);
  h = mix(h, static_cast<size_t>(elementwise.loopDims));
  for (const LoopOperand &op : elementwise.operands) {
    h = mix(h, static_cast<size_t>(op.kind));
    h = mix(h, typeHash(op.elemType));
    h = mix(h, static_cast<size_t>(op.coreDims));
    h = mix(h, op.unitCoreStride);
    h = mix(h, op.coreAlign);
  }
  return h;
}

std::string LoopKernelDesc::str() const {
  if (kind == Kind::Reduce)
    return "reduce " + typeName(reduce.inType) + " -> " + typeName(reduce.accType) + " -> " +
           typeName(reduce.outType) + " kept " + std::to_string(reduce.keptDims) + " reduced " +
           std::to_string(reduce.reducedDims) + " block " + std::to_string(reduce.blockSize);
  const ElementwiseKernelDesc &e = elementwise;
  std::string s = "elementwise ";
  s += e.flat ? "flat" : "dims " + std::to_string(e.loopDims);
  s += e.returnsValue ? " value (" : " void (";
  for (size_t k = 0; k < e.operands.size(); ++k) {
    const LoopOperand &op = e.operands[k];
    s += k ? ", " : "";
    if (op.kind == LoopOperand::Kind::Scalar) {
      s += "scalar";
      continue;
    }
    s += "array " + typeName(op.elemType);
    if (op.coreDims)
      s += " core " + std::to_string(op.coreDims) + (op.unitCoreStride ? " unit" : "");
    if (op.coreAlign)
      s += " align " + std::to_string(op.coreAlign);
  }
  return s + ")";
}

std::vector<const ir::Type *> loopKernelParams(const LoopKernelDesc &desc,
                                               const std::vector<const ir::Type *> &fnParams) {
  namespace t = ir::types;
  std::vector<const ir::Type *> out;
  if (desc.kind == LoopKernelDesc::Kind::Reduce) {
    const ReduceKernelDesc &r = desc.reduce;
    if (!r.inType || !r.accType || !r.outType || fnParams.size() != 2 ||
        ir::concretize(fnParams[0]) != r.accType || ir::concretize(fnParams[1]) != r.accType)
      detail::internalError("reduce loop: the function must take two " + typeName(r.accType));
    out = {t::int64(),
           t::int64(),
           t::int64(),
           t::array(r.inType, r.keptDims + r.reducedDims, ir::Layout::A),
           t::array(r.outType, r.keptDims, ir::Layout::A),
           t::int64()};
    return out;
  }
  const ElementwiseKernelDesc &e = desc.elementwise;
  size_t nops = e.operands.size();
  if (nops != fnParams.size() + (e.returnsValue ? 1 : 0))
    detail::internalError("ufunc loop: " + std::to_string(nops) + " operands for a function of " +
                          std::to_string(fnParams.size()) + " parameters");
  out.push_back(t::int64());
  for (size_t k = 0; k < nops; ++k) {
    const LoopOperand &op = e.operands[k];
    if (op.kind == LoopOperand::Kind::Scalar) {
      const auto *st =
          k < fnParams.size() ? ir::dyn_cast<ir::ScalarType>(ir::concretize(fnParams[k])) : nullptr;
      if (!st)
        detail::internalError("ufunc loop: scalar operand " + std::to_string(k) +
                              " without a scalar parameter");
      out.push_back(st);
      continue;
    }
    if (!op.elemType)
      detail::internalError("ufunc loop: array operand " + std::to_string(k) +
                            " without an element type");
    int ndim = e.flat ? 0 : e.loopDims + op.coreDims;
    out.push_back(t::array(op.elemType, ndim, ir::Layout::A));
  }
  return out;
}

} // namespace ptxjit::codegen
