#include "compiler/PackingPlan.h"

#include "ir/Diagnostics.h"

#include <algorithm>

namespace ptxjit::compiler {
namespace {

class PlanBuilder {
public:
  PackingPlan plan;

  void add(const ir::Type *t, int arg) {
    if (const auto *s = ir::dyn_cast<ir::ScalarType>(t)) {
      int leaf = newLeaf(arg, t);
      if (s->kind() == ir::TypeKind::Complex) {
        const ir::ScalarType *part = ir::types::floating(s->bits() / 2);
        slot(ParamSlot::Source::Real, leaf, 0, part, part->byteSize());
        slot(ParamSlot::Source::Imag, leaf, 0, part, part->byteSize());
      } else {
        slot(ParamSlot::Source::Value, leaf, 0, s, s->byteSize());
      }
      return;
    }
    if (const auto *a = ir::dyn_cast<ir::ArrayType>(t)) {
      int leaf = newLeaf(arg, t);
      slot(ParamSlot::Source::Data, leaf, 0, nullptr, 8);
      for (int d = 0; d < a->ndim(); ++d)
        slot(ParamSlot::Source::Shape, leaf, d, nullptr, 8);
      for (int d = 0; d < a->ndim(); ++d)
        slot(ParamSlot::Source::Stride, leaf, d, nullptr, 8);
      return;
    }
    if (const auto *tt = ir::dyn_cast<ir::TupleType>(t)) {
      for (const ir::Type *e : tt->elements())
        add(e, arg);
      return;
    }
    ir::raiseDiag(ir::DiagCode::Internal, "<arguments>", {},
                  {"type " + t->str() + " cannot be a kernel argument"});
  }

  /// One more Value slot of the last leaf, converted to `type` (the float32 copy of a Python
  /// float argument).
  void addShadow(const ir::ScalarType *type) {
    slot(ParamSlot::Source::Value, static_cast<int>(plan.leaves.size()) - 1, 0, type,
         type->byteSize());
  }

private:
  int newLeaf(int arg, const ir::Type *t) {
    plan.leaves.push_back({arg, t});
    return static_cast<int>(plan.leaves.size()) - 1;
  }
  void slot(ParamSlot::Source src, int leaf, int dim, const ir::ScalarType *type, uint32_t size) {
    size_t off = (plan.paramBytes + size - 1) / size * size;
    ParamSlot s;
    s.source = src;
    s.leaf = leaf;
    s.dim = dim;
    s.type = type;
    s.offset = static_cast<uint32_t>(off);
    s.size = size;
    plan.slots.push_back(s);
    plan.paramBytes = off + size;
  }
};

const char *sourceName(ParamSlot::Source s) {
  switch (s) {
  case ParamSlot::Source::Value:
    return "value";
  case ParamSlot::Source::Real:
    return "real";
  case ParamSlot::Source::Imag:
    return "imag";
  case ParamSlot::Source::Data:
    return "data";
  case ParamSlot::Source::Shape:
    return "shape";
  case ParamSlot::Source::Stride:
    return "strides";
  }
  return "?";
}

Conversion worse(Conversion a, Conversion b) { return std::max(a, b); }

/// Bits of mantissa (plus one) a float type represents exactly.
int exactIntBits(int floatBits) { return floatBits == 32 ? 24 : 53; }

Conversion intToFloat(const ir::ScalarType *from, int floatBits) {
  int bits = from->bits() - (from->isSigned() ? 1 : 0);
  return bits <= exactIntBits(floatBits) ? Conversion::Safe : Conversion::Unsafe;
}

Conversion scalarConversion(const ir::ScalarType *from, const ir::ScalarType *to) {
  using K = ir::TypeKind;
  K fk = from->kind(), tk = to->kind();
  if (from == to)
    return Conversion::Exact;
  if (fk == K::Bool)
    return Conversion::Safe;
  if (tk == K::Bool)
    return fk == K::Complex ? Conversion::None : Conversion::Unsafe;
  if (fk == K::Int) {
    if (tk == K::Int) {
      if (from->isSigned() == to->isSigned())
        return to->bits() >= from->bits() ? Conversion::Promote : Conversion::Unsafe;
      if (!from->isSigned() && to->bits() > from->bits())
        return Conversion::Safe;
      return Conversion::Unsafe;
    }
    if (tk == K::Float)
      return intToFloat(from, to->bits());
    return intToFloat(from, to->bits() / 2); // complex
  }
  if (fk == K::Float) {
    if (tk == K::Int)
      return Conversion::Unsafe;
    int toBits = tk == K::Complex ? to->bits() / 2 : to->bits();
    if (toBits > from->bits())
      return tk == K::Float ? Conversion::Promote : Conversion::Safe;
    if (toBits == from->bits())
      return Conversion::Safe; // float → complex of the same precision
    return Conversion::Unsafe;
  }
  // complex
  if (tk != K::Complex)
    return Conversion::None;
  return to->bits() > from->bits() ? Conversion::Promote : Conversion::Unsafe;
}

Conversion weakConversion(const ir::WeakType *from, const ir::ScalarType *to) {
  using K = ir::TypeKind;
  if (from->defaultType() == to)
    return Conversion::Exact;
  switch (from->kind()) {
  case K::WeakInt:
    return to->kind() == K::Bool ? Conversion::Unsafe : Conversion::Safe;
  case K::WeakFloat:
    if (to->kind() == K::Float || to->kind() == K::Complex)
      return Conversion::Safe;
    return to->kind() == K::Bool ? Conversion::None : Conversion::Unsafe;
  default: // WeakComplex
    return to->kind() == K::Complex ? Conversion::Safe : Conversion::None;
  }
}

} // namespace

PackingPlan buildPackingPlan(const std::vector<const ir::Type *> &argTypes) {
  PlanBuilder b;
  for (size_t i = 0; i < argTypes.size(); ++i) {
    if (argTypes[i]->kind() == ir::TypeKind::WeakFloat) { // a Python float: f64, then f32
      b.add(ir::types::float64(), static_cast<int>(i));
      b.addShadow(ir::types::float32());
      continue;
    }
    b.add(ir::concretize(argTypes[i]), static_cast<int>(i));
  }
  return std::move(b.plan);
}

std::string PackingPlan::str() const {
  std::string out;
  for (const ParamSlot &s : slots) {
    if (!out.empty())
      out += "; ";
    out.append(s.type ? s.type->str() : (s.source == ParamSlot::Source::Data ? "ptr" : "int64"));
    out.append("@").append(std::to_string(s.offset));
    out.append(" <- leaf").append(std::to_string(s.leaf));
    if (s.source != ParamSlot::Source::Value)
      out.append(".").append(sourceName(s.source));
    if (s.source == ParamSlot::Source::Shape || s.source == ParamSlot::Source::Stride)
      out.append("[").append(std::to_string(s.dim)).append("]");
  }
  return out;
}

Conversion conversion(const ir::Type *from, const ir::Type *to) {
  if (from == to)
    return Conversion::Exact;
  if (const auto *ts = ir::dyn_cast<ir::ScalarType>(to)) {
    if (const auto *fs = ir::dyn_cast<ir::ScalarType>(from))
      return scalarConversion(fs, ts);
    if (const auto *fw = ir::dyn_cast<ir::WeakType>(from))
      return weakConversion(fw, ts);
    return Conversion::None;
  }
  if (const auto *ta = ir::dyn_cast<ir::ArrayType>(to)) {
    const auto *fa = ir::dyn_cast<ir::ArrayType>(from);
    if (!fa || fa->dtype() != ta->dtype() || fa->ndim() != ta->ndim())
      return Conversion::None;
    if (fa->readonly() && !ta->readonly())
      return Conversion::None;
    if (fa->layout() != ta->layout() && ta->layout() != ir::Layout::A)
      return Conversion::None;
    return Conversion::Promote;
  }
  if (const auto *tt = ir::dyn_cast<ir::TupleType>(to)) {
    const auto *ft = ir::dyn_cast<ir::TupleType>(from);
    if (!ft || ft->size() != tt->size())
      return Conversion::None;
    Conversion c = Conversion::Exact;
    for (size_t i = 0; i < tt->size(); ++i)
      c = worse(c, conversion(ft->elements()[i], tt->elements()[i]));
    return c;
  }
  return Conversion::None;
}

int selectSignature(const std::vector<const ir::Type *> &actual,
                    const std::vector<std::vector<const ir::Type *>> &signatures) {
  int best = -1;
  Conversion bestConv = Conversion::None;
  for (size_t s = 0; s < signatures.size(); ++s) {
    const auto &params = signatures[s];
    if (params.size() != actual.size())
      continue;
    Conversion c = Conversion::Exact;
    for (size_t i = 0; i < params.size() && c != Conversion::None; ++i)
      c = worse(c, conversion(actual[i], params[i]));
    if (c == Conversion::Exact)
      return static_cast<int>(s);
    if (c < bestConv) {
      bestConv = c;
      best = static_cast<int>(s);
    }
  }
  return best;
}

} // namespace ptxjit::compiler
