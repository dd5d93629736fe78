// Typing rules for datetime64 and timedelta64 values (ir/Datetime.h), numba's
// (numba.core.typing.npdatetime): which operators combine them, with which result unit.
#include "ir/Datetime.h"
#include "ir/typing/TypingInternal.h"

namespace ptxjit::ir::typing_detail {

namespace {

const ScalarType *asDate(const Type *t, TypeKind k) {
  auto *s = dyn_cast<ScalarType>(t);
  return s && s->kind() == k ? s : nullptr;
}

/// A number a timedelta may be multiplied or divided by: an integer or a float (not bool, not
/// complex), Python literals included.
bool isTimedeltaFactor(const Type *t) {
  return t->kind() == TypeKind::Int || t->kind() == TypeKind::WeakInt ||
         t->kind() == TypeKind::Float || t->kind() == TypeKind::WeakFloat;
}

/// Whether the units of two timedeltas convert into a common one (one is a multiple of the
/// other), as comparisons, division and modulo need.
bool normalizable(DateUnit a, DateUnit b) {
  return dateUnitFactor(a, b).has_value() || dateUnitFactor(b, a).has_value();
}

} // namespace

const Type *datetimeBinaryType(BinaryOp op, const Type *a, const Type *b) {
  const ScalarType *tdA = asDate(a, TypeKind::Timedelta), *tdB = asDate(b, TypeKind::Timedelta);
  const ScalarType *dtA = asDate(a, TypeKind::Datetime), *dtB = asDate(b, TypeKind::Datetime);
  switch (op) {
  case BinaryOp::Add:
  case BinaryOp::Sub:
    if (tdA && tdB) { // the unit both convert into
      if (canCastDateUnits(tdA->unit(), tdB->unit()))
        return tdB;
      if (canCastDateUnits(tdB->unit(), tdA->unit()))
        return tdA;
      return nullptr;
    }
    if (dtA && dtB && op == BinaryOp::Sub)
      return types::timedelta(bestDateUnit(dtA->unit(), dtB->unit()));
    if ((dtA && tdB) || (op == BinaryOp::Add && tdA && dtB)) {
      const ScalarType *dt = dtA ? dtA : dtB, *td = dtA ? tdB : tdA;
      if (std::optional<DateUnit> u = combineDateUnits(dt->unit(), td->unit()))
        return types::datetime(*u);
    }
    return nullptr;
  case BinaryOp::Mul:
    if (tdA && isTimedeltaFactor(b))
      return tdA;
    if (tdB && isTimedeltaFactor(a))
      return tdB;
    return nullptr;
  case BinaryOp::TrueDiv:
  case BinaryOp::FloorDiv:
    if (tdA && isTimedeltaFactor(b))
      return tdA;
    if (tdA && tdB && normalizable(tdA->unit(), tdB->unit()))
      return op == BinaryOp::TrueDiv ? types::float64() : types::int64();
    return nullptr;
  case BinaryOp::Mod:
    if (tdA && tdB && normalizable(tdA->unit(), tdB->unit()))
      return types::timedelta(bestDateUnit(tdA->unit(), tdB->unit()));
    return nullptr;
  default:
    return nullptr;
  }
}

bool datetimeComparable(CmpOp cmp, const Type *a, const Type *b) {
  const ScalarType *tdA = asDate(a, TypeKind::Timedelta), *tdB = asDate(b, TypeKind::Timedelta);
  if (asDate(a, TypeKind::Datetime) && asDate(b, TypeKind::Datetime))
    return true;
  if (!tdA || !tdB)
    return false;
  // Months and days are never equal, but cannot be ordered.
  return cmp == CmpOp::Eq || cmp == CmpOp::Ne || normalizable(tdA->unit(), tdB->unit());
}

const Type *unifyDatetimes(const Type *a, const Type *b) {
  auto *x = dyn_cast<ScalarType>(a), *y = dyn_cast<ScalarType>(b);
  if (!x || !y || x->kind() != y->kind() || !isDatetimeLike(x))
    return nullptr;
  if (canCastDateUnits(x->unit(), y->unit()))
    return y;
  if (canCastDateUnits(y->unit(), x->unit()))
    return x;
  return nullptr;
}

} // namespace ptxjit::ir::typing_detail
