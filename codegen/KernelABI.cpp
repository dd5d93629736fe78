#include "codegen/KernelABI.h"

#include "ir/Diagnostics.h"
#include "ir/Enums.h"

namespace ptxjit::codegen {
namespace {

class PlanBuilder {
public:
  PlanBuilder(const std::string &file, ir::SourceLoc loc) : file(file), loc(loc) {}
  PackingPlan plan;
  const std::string &file;
  ir::SourceLoc loc;

  void add(const ir::Type *t, int arg) {
    t = ir::enumValueOf(ir::concretize(t)); // an enum member is its value
    if (t->kind() == ir::TypeKind::None)
      return; // a None argument has no run-time value
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
    if (t->kind() == ir::TypeKind::Pointer) {
      slot(ParamSlot::Source::Address, newLeaf(arg, t), 0, nullptr, 8);
      return;
    }
    if (t->kind() == ir::TypeKind::Record) { // the address of a copy of the record's bytes
      slot(ParamSlot::Source::Data, newLeaf(arg, t), 0, nullptr, 8);
      return;
    }
    if (const auto *tt = ir::dyn_cast<ir::TupleType>(t)) {
      for (const ir::Type *e : tt->elements())
        add(e, arg);
      return;
    }
    ir::raiseDiag(ir::DiagCode::UnsupportedConstruct, file, loc,
                  {"a parameter of type " + t->str()});
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
  case ParamSlot::Source::Address:
    return "address";
  }
  return "?";
}

} // namespace

PackingPlan buildPackingPlan(const std::vector<const ir::Type *> &argTypes, const std::string &file,
                             ir::SourceLoc loc) {
  PlanBuilder b(file, loc);
  for (size_t i = 0; i < argTypes.size(); ++i) {
    if (argTypes[i]->kind() == ir::TypeKind::WeakFloat) { // a Python float: f64, then f32
      b.add(ir::types::float64(), static_cast<int>(i));
      b.addShadow(ir::types::float32());
      continue;
    }
    b.add(argTypes[i], static_cast<int>(i));
  }
  return std::move(b.plan);
}

std::string PackingPlan::str() const {
  std::string out;
  for (const ParamSlot &s : slots) {
    if (!out.empty())
      out += "; ";
    out.append(s.type
                   ? s.type->str()
                   : (s.source == ParamSlot::Source::Data || s.source == ParamSlot::Source::Address
                          ? "ptr"
                          : "int64"));
    out.append("@").append(std::to_string(s.offset));
    out.append(" <- leaf").append(std::to_string(s.leaf));
    if (s.source != ParamSlot::Source::Value)
      out.append(".").append(sourceName(s.source));
    if (s.source == ParamSlot::Source::Shape || s.source == ParamSlot::Source::Stride)
      out.append("[").append(std::to_string(s.dim)).append("]");
  }
  return out;
}

} // namespace ptxjit::codegen
