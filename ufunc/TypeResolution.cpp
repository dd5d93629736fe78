#include "ufunc/TypeResolution.h"

#include "ir/Typing.h"

namespace ptxjit::ufunc {

using ir::ScalarType;
using ir::TypeKind;

namespace {

/// NumPy's kind order: bool < unsigned/signed int < float < complex.
int kindRank(const ScalarType *t) {
  switch (t->kind()) {
  case TypeKind::Bool:
    return 0;
  case TypeKind::Int:
    return 1;
  case TypeKind::Float:
    return 2;
  default:
    return 3;
  }
}

/// The bits of mantissa an integer of `t` needs to be exact (its value bits).
int intValueBits(const ScalarType *t) { return t->isSigned() ? t->bits() - 1 : t->bits(); }

} // namespace

bool canCastSafely(const ScalarType *from, const ScalarType *to) {
  if (from == to || from->kind() == TypeKind::Bool)
    return true;
  switch (from->kind()) {
  case TypeKind::Int:
    switch (to->kind()) {
    case TypeKind::Int:
      if (from->isSigned() == to->isSigned())
        return to->bits() >= from->bits();
      return !from->isSigned() && to->bits() > from->bits();
    case TypeKind::Float:
      // NumPy: (u)int8/16 → float32; (u)int32 and (u)int64 → float64.
      return to->bits() == 64 || intValueBits(from) <= 16;
    case TypeKind::Complex:
      return to->bits() == 128 || intValueBits(from) <= 16;
    default:
      return false;
    }
  case TypeKind::Float:
    if (to->kind() == TypeKind::Float)
      return to->bits() >= from->bits();
    if (to->kind() == TypeKind::Complex)
      return to->bits() >= 2 * from->bits();
    return false;
  case TypeKind::Complex:
    return to->kind() == TypeKind::Complex && to->bits() >= from->bits();
  default:
    return false;
  }
}

bool canCastSameKind(const ScalarType *from, const ScalarType *to) {
  if (canCastSafely(from, to))
    return true;
  return kindRank(from) <= kindRank(to) &&
         !(kindRank(from) == 1 && kindRank(to) == 1 && from->isSigned() && !to->isSigned());
}

bool inputCastsTo(const InputType &in, const ScalarType *to) {
  switch (in.kind) {
  case InputKind::Strong:
    return canCastSafely(in.dtype, to);
  case InputKind::PyInt:
    return to->kind() != TypeKind::Bool;
  case InputKind::PyFloat:
    return to->kind() == TypeKind::Float || to->kind() == TypeKind::Complex;
  case InputKind::PyComplex:
    return to->kind() == TypeKind::Complex;
  }
  return false;
}

int resolveLoop(const std::vector<InputType> &in,
                const std::vector<std::vector<const ScalarType *>> &loops) {
  // NEP 50: when every input is a Python scalar, they all take their default types.
  std::vector<InputType> inputs = in;
  bool allWeak = true;
  for (const InputType &i : inputs)
    allWeak = allWeak && i.kind != InputKind::Strong;
  if (allWeak)
    for (InputType &i : inputs)
      i.kind = InputKind::Strong;
  for (size_t l = 0; l < loops.size(); ++l) {
    if (loops[l].size() != inputs.size())
      continue;
    bool ok = true;
    for (size_t k = 0; k < inputs.size() && ok; ++k)
      ok = inputCastsTo(inputs[k], loops[l][k]);
    if (ok)
      return static_cast<int>(l);
  }
  return -1;
}

std::vector<const ScalarType *> lazyLoopTypes(const std::vector<InputType> &inputs) {
  const ir::Type *strong = nullptr;
  for (const InputType &in : inputs)
    if (in.kind == InputKind::Strong)
      strong = strong ? ir::promote(strong, in.dtype) : in.dtype;
  std::vector<const ScalarType *> out;
  for (const InputType &in : inputs) {
    if (in.kind == InputKind::Strong) {
      out.push_back(in.dtype);
      continue;
    }
    const ir::Type *weak = in.kind == InputKind::PyInt     ? ir::types::weakInt()
                           : in.kind == InputKind::PyFloat ? ir::types::weakFloat()
                                                           : ir::types::weakComplex();
    const ir::Type *t = strong ? ir::promote(strong, weak) : nullptr;
    // A weak int next to bools: NumPy gives the default integer.
    if (t && t->kind() == TypeKind::Bool)
      t = nullptr;
    const auto *st = t ? ir::dyn_cast<ScalarType>(ir::concretize(t)) : nullptr;
    out.push_back(st ? st : in.dtype);
  }
  return out;
}

std::string inputTypesStr(const std::vector<InputType> &inputs) {
  std::string s;
  for (const InputType &in : inputs) {
    if (!s.empty())
      s += ", ";
    switch (in.kind) {
    case InputKind::Strong:
      s += in.dtype->str();
      break;
    case InputKind::PyInt:
      s += "int";
      break;
    case InputKind::PyFloat:
      s += "float";
      break;
    case InputKind::PyComplex:
      s += "complex";
      break;
    }
  }
  return s;
}

} // namespace ptxjit::ufunc
