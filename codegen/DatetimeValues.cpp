// datetime64 / timedelta64 in LLVM (see DatetimeValues.h). Branch-free: every operation computes
// its value and selects NaT (or the comparison's NaT answer) where an operand is NaT, so the same
// code serves the GPU and the CPU backend.
#include "codegen/DatetimeValues.h"

#include "codegen/ScalarValues.h"
#include "ir/Datetime.h"

#include <llvm/IR/Constants.h>

namespace ptxjit::codegen::detail {

using namespace ir;

namespace {

[[noreturn]] void internal(const std::string &what) {
  raiseDiag(DiagCode::Internal, "<codegen>", SourceLoc{}, {what});
}

llvm::Value *i64(llvm::IRBuilderBase &b, int64_t v) { return b.getInt64(static_cast<uint64_t>(v)); }

llvm::Value *nat(llvm::IRBuilderBase &b) { return i64(b, kNaT); }

llvm::Value *notNaT(llvm::IRBuilderBase &b, llvm::Value *v) { return b.CreateICmpNE(v, nat(b)); }

llvm::Value *bothNotNaT(llvm::IRBuilderBase &b, llvm::Value *l, llvm::Value *r) {
  return b.CreateAnd(notNaT(b, l), notNaT(b, r));
}

bool isTimedelta(const ScalarType *t) { return t->kind() == TypeKind::Timedelta; }
bool isDatetime(const ScalarType *t) { return t->kind() == TypeKind::Datetime; }

int unitCode(DateUnit u) { return static_cast<int>(u); }

/// Python's floor division and modulo of `x` by the constant `d` > 0.
llvm::Value *floorDivConst(llvm::IRBuilderBase &b, llvm::Value *x, int64_t d) {
  llvm::Value *q = b.CreateSDiv(x, i64(b, d));
  llvm::Value *r = b.CreateSRem(x, i64(b, d));
  return b.CreateSub(q, b.CreateZExt(b.CreateICmpSLT(r, i64(b, 0)), b.getInt64Ty()));
}

/// The days from 1970-01-01 to January 1st of `year` (years since 1970), as NumPy's
/// get_datetimestruct_days counts them (numba's year_to_days).
llvm::Value *yearToDays(llvm::IRBuilderBase &b, llvm::Value *year) {
  llvm::Value *days = b.CreateMul(year, i64(b, 365));
  // At or after 1970: leap days since 1968 (the closest earlier leap year), less those of the
  // centuries since 1900, plus those of the 400-year cycles since 1600.
  llvm::Value *from1968 = b.CreateAdd(year, i64(b, 1));
  llvm::Value *from1900 = b.CreateAdd(from1968, i64(b, 68));
  llvm::Value *from1600 = b.CreateAdd(from1900, i64(b, 300));
  llvm::Value *after = b.CreateAdd(days, b.CreateSDiv(from1968, i64(b, 4)));
  after = b.CreateSub(after, b.CreateSDiv(from1900, i64(b, 100)));
  after = b.CreateAdd(after, b.CreateSDiv(from1600, i64(b, 400)));
  // Before 1970: the same counted back from 1972 and 2000 (negative offsets).
  llvm::Value *from1972 = b.CreateAdd(year, i64(b, -2));
  llvm::Value *from2000 = b.CreateAdd(from1972, i64(b, -28));
  llvm::Value *before = b.CreateAdd(days, b.CreateSDiv(from1972, i64(b, 4)));
  before = b.CreateSub(before, b.CreateSDiv(from2000, i64(b, 100)));
  before = b.CreateAdd(before, b.CreateSDiv(from2000, i64(b, 400)));
  return b.CreateSelect(b.CreateICmpSLT(year, i64(b, 0)), before, after);
}

/// Whether `year` (years since 1970) is a leap year of the Gregorian calendar.
llvm::Value *isLeapYear(llvm::IRBuilderBase &b, llvm::Value *year) {
  llvm::Value *actual = b.CreateAdd(year, i64(b, 1970));
  llvm::Value *by4 = b.CreateICmpEQ(b.CreateAnd(actual, i64(b, 3)), i64(b, 0));
  llvm::Value *not100 = b.CreateICmpNE(b.CreateSRem(actual, i64(b, 100)), i64(b, 0));
  llvm::Value *by400 = b.CreateICmpEQ(b.CreateSRem(actual, i64(b, 400)), i64(b, 0));
  return b.CreateAnd(by4, b.CreateOr(not100, by400));
}

/// The days in a year before the first day of `month` (0..11), in a leap year or not: a sum of
/// the month lengths selected month by month (twelve selects, no table in memory).
llvm::Value *daysBeforeMonth(llvm::IRBuilderBase &b, llvm::Value *month, llvm::Value *leap) {
  static const int64_t kBefore[12] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
  llvm::Value *days = i64(b, 0);
  for (int m = 1; m < 12; ++m)
    days = b.CreateSelect(b.CreateICmpEQ(month, i64(b, m)), i64(b, kBefore[m]), days);
  // From March on, a leap year has one day more.
  llvm::Value *afterFeb = b.CreateAnd(leap, b.CreateICmpSGE(month, i64(b, 2)));
  return b.CreateAdd(days, b.CreateZExt(afterFeb, b.getInt64Ty()));
}

/// Two timedeltas in a common unit (the finer one); false when neither unit converts into the
/// other (months and days).
bool normalizeTimedeltas(llvm::IRBuilderBase &b, llvm::Value *&l, const ScalarType *lt,
                         llvm::Value *&r, const ScalarType *rt) {
  if (std::optional<int64_t> f = dateUnitFactor(lt->unit(), rt->unit())) {
    l = *f == 1 ? l : b.CreateMul(l, i64(b, *f));
    return true;
  }
  if (std::optional<int64_t> f = dateUnitFactor(rt->unit(), lt->unit())) {
    r = *f == 1 ? r : b.CreateMul(r, i64(b, *f));
    return true;
  }
  return false;
}

} // namespace

llvm::Value *convertDateUnit(llvm::IRBuilderBase &b, llvm::Value *v, const ScalarType *from,
                             DateUnit to) {
  DateUnit src = from->unit();
  if (src == to || src == DateUnit::Generic || to == DateUnit::Generic)
    return v;
  llvm::Value *x = v;
  DateUnit unit = src;
  if (isDatetime(from) && unitCode(src) <= unitCode(DateUnit::M) &&
      unitCode(to) >= unitCode(DateUnit::W)) {
    // Years or months since 1970 → days since 1970 (then weeks, or finer units below).
    llvm::Value *days;
    if (src == DateUnit::Y) {
      days = yearToDays(b, x);
    } else {
      llvm::Value *year = floorDivConst(b, x, 12);
      llvm::Value *month = b.CreateSub(x, b.CreateMul(year, i64(b, 12)));
      days = b.CreateAdd(yearToDays(b, year), daysBeforeMonth(b, month, isLeapYear(b, year)));
    }
    if (to == DateUnit::W) {
      x = floorDivConst(b, days, 7);
      unit = DateUnit::W;
    } else {
      x = days;
      unit = DateUnit::D;
    }
  }
  if (std::optional<int64_t> f = dateUnitFactor(unit, to)) {
    if (*f != 1)
      x = b.CreateMul(x, i64(b, *f));
  } else if (std::optional<int64_t> g = dateUnitFactor(to, unit)) {
    x = floorDivConst(b, x, *g);
  } else {
    internal("cannot convert " + from->str() + " to unit '" + dateUnitName(to) + "'");
  }
  return b.CreateSelect(notNaT(b, v), x, nat(b));
}

llvm::Value *castDatetime(llvm::IRBuilderBase &b, llvm::Value *v, const ScalarType *from,
                          const ScalarType *to) {
  if (from == to)
    return v;
  const bool fromDate = isDatetimeLike(from), toDate = isDatetimeLike(to);
  if (fromDate && toDate) {
    if (from->kind() != to->kind())
      return v; // NumPy has no such cast; typing never asks for one
    return convertDateUnit(b, v, from, to->unit());
  }
  if (fromDate) { // the count, as NumPy's unsafe cast gives it
    switch (to->kind()) {
    case TypeKind::Bool:
    case TypeKind::Int:
      return castScalar(b, v, types::int64(), to);
    default: { // floats and complex: NaT is NaN
      const ScalarType *f64 = types::float64();
      llvm::Value *f = castScalar(b, v, types::int64(), f64);
      f = b.CreateSelect(notNaT(b, v), f, llvm::ConstantFP::getNaN(f->getType()));
      return castScalar(b, f, f64, to);
    }
    }
  }
  switch (from->kind()) {
  case TypeKind::Bool:
  case TypeKind::Int:
    return castScalar(b, v, from, types::int64());
  case TypeKind::Float: {
    llvm::Value *f = castScalar(b, v, from, types::float64());
    return b.CreateSelect(b.CreateFCmpUNO(f, f), nat(b),
                          castScalar(b, f, types::float64(), types::int64()));
  }
  default: // complex: its real part
    return castDatetime(b, castScalar(b, v, from, types::float64()), types::float64(), to);
  }
}

llvm::Value *timedeltaNeg(llvm::IRBuilderBase &b, llvm::Value *v) {
  return b.CreateSelect(notNaT(b, v), b.CreateNeg(v), nat(b));
}

llvm::Value *timedeltaAbs(llvm::IRBuilderBase &b, llvm::Value *v) {
  return b.CreateSelect(b.CreateICmpSLT(v, i64(b, 0)), timedeltaNeg(b, v), v);
}

llvm::Value *datetimeBinary(llvm::IRBuilderBase &b, BinaryOp op, llvm::Value *l,
                            const ScalarType *lt, llvm::Value *r, const ScalarType *rt,
                            const ScalarType *res) {
  auto unsupported = [&]() -> llvm::Value * {
    internal(std::string("operator ") + binaryOpName(op) + " on " + lt->str() + " and " +
             rt->str() + " typed " + res->str());
  };
  // timedelta ± timedelta, timedelta % timedelta, datetime ± timedelta, datetime - datetime:
  // both operands in the result's unit.
  const bool addSub = op == BinaryOp::Add || op == BinaryOp::Sub;
  if (isDatetimeLike(lt) && isDatetimeLike(rt) && addSub && isDatetimeLike(res)) {
    llvm::Value *a = convertDateUnit(b, l, lt, res->unit());
    llvm::Value *c = convertDateUnit(b, r, rt, res->unit());
    llvm::Value *val = op == BinaryOp::Add ? b.CreateAdd(a, c) : b.CreateSub(a, c);
    return b.CreateSelect(bothNotNaT(b, l, r), val, nat(b));
  }
  if (isTimedelta(lt) && isTimedelta(rt)) {
    llvm::Value *a = l, *c = r;
    if (!normalizeTimedeltas(b, a, lt, c, rt))
      unsupported();
    llvm::Value *ok = bothNotNaT(b, l, r);
    llvm::Value *zero = i64(b, 0);
    llvm::Value *nonzero = b.CreateICmpNE(c, zero);
    llvm::Value *safeC = b.CreateSelect(nonzero, c, i64(b, 1)); // no division by zero
    switch (op) {
    case BinaryOp::TrueDiv: { // a float64 ratio, NaN with NaT
      llvm::Value *q = b.CreateFDiv(castScalar(b, a, types::int64(), types::float64()),
                                    castScalar(b, c, types::int64(), types::float64()));
      return b.CreateSelect(ok, q, llvm::ConstantFP::getNaN(q->getType()));
    }
    case BinaryOp::FloorDiv: { // an int64, 0 with NaT or a zero divisor (numba's result)
      llvm::Value *q = b.CreateSDiv(a, safeC), *m = b.CreateSRem(a, safeC);
      llvm::Value *adjust =
          b.CreateAnd(b.CreateICmpNE(m, zero),
                      b.CreateICmpNE(b.CreateICmpSLT(m, zero), b.CreateICmpSLT(safeC, zero)));
      q = b.CreateSub(q, b.CreateZExt(adjust, b.getInt64Ty()));
      return b.CreateSelect(b.CreateAnd(ok, nonzero), q, zero);
    }
    case BinaryOp::Mod: { // Python's modulo, in the common unit; NaT with NaT or zero
      llvm::Value *m = b.CreateSRem(a, safeC);
      llvm::Value *adjust =
          b.CreateAnd(b.CreateICmpNE(m, zero),
                      b.CreateICmpNE(b.CreateICmpSLT(m, zero), b.CreateICmpSLT(safeC, zero)));
      m = b.CreateSelect(adjust, b.CreateAdd(m, safeC), m);
      return b.CreateSelect(b.CreateAnd(ok, nonzero), m, nat(b));
    }
    default:
      return unsupported();
    }
  }
  // timedelta * number, number * timedelta, timedelta / number, timedelta // number.
  const bool tdLeft = isTimedelta(lt);
  const ScalarType *tdt = tdLeft ? lt : rt;
  const ScalarType *nt = tdLeft ? rt : lt;
  llvm::Value *td = tdLeft ? l : r, *n = tdLeft ? r : l;
  if (!isTimedelta(tdt) || isDatetimeLike(nt) || !isTimedelta(res))
    return unsupported();
  const bool isFloat = nt->kind() == TypeKind::Float;
  const ScalarType *f64 = types::float64();
  llvm::Value *val = nullptr, *ok = notNaT(b, td);
  if (op == BinaryOp::Mul) {
    if (isFloat)
      val = b.CreateFMul(castScalar(b, td, types::int64(), f64), castScalar(b, n, nt, f64));
    else
      val = b.CreateMul(td, castScalar(b, n, nt, types::int64()));
  } else if ((op == BinaryOp::TrueDiv || op == BinaryOp::FloorDiv) && tdLeft) {
    // NaT when dividing by zero (or NaN): numba's result.
    if (isFloat) {
      llvm::Value *d = castScalar(b, n, nt, f64);
      ok = b.CreateAnd(ok, b.CreateFCmpONE(d, llvm::ConstantFP::get(d->getType(), 0.0)));
      val = b.CreateFDiv(castScalar(b, td, types::int64(), f64), d);
    } else {
      llvm::Value *d = castScalar(b, n, nt, types::int64());
      llvm::Value *nonzero = b.CreateICmpNE(d, i64(b, 0));
      ok = b.CreateAnd(ok, nonzero);
      val = b.CreateSDiv(td, b.CreateSelect(nonzero, d, i64(b, 1)));
    }
  } else {
    return unsupported();
  }
  if (isFloat) // toward zero; NaN (0 * inf, ...) gives NaT
    val =
        b.CreateSelect(b.CreateFCmpUNO(val, val), nat(b), castScalar(b, val, f64, types::int64()));
  val = convertDateUnit(b, val, tdt, res->unit());
  return b.CreateSelect(ok, val, nat(b));
}

llvm::Value *datetimeCompare(llvm::IRBuilderBase &b, CmpOp cmp, llvm::Value *l,
                             const ScalarType *lt, llvm::Value *r, const ScalarType *rt) {
  std::optional<llvm::CmpInst::Predicate> p = intPredicate(cmp, /*isSigned=*/true);
  if (!p)
    internal(std::string("comparison ") + cmpOpName(cmp) + " of " + lt->str() + " and " +
             rt->str());
  llvm::Value *natAnswer = b.getInt1(cmp == CmpOp::Ne); // NaT != anything; nothing else holds
  llvm::Value *a = l, *c = r;
  if (isDatetime(lt) && isDatetime(rt)) {
    DateUnit u = bestDateUnit(lt->unit(), rt->unit());
    a = convertDateUnit(b, l, lt, u);
    c = convertDateUnit(b, r, rt, u);
  } else if (isTimedelta(lt) && isTimedelta(rt)) {
    if (!normalizeTimedeltas(b, a, lt, c, rt)) {
      if (cmp != CmpOp::Eq && cmp != CmpOp::Ne)
        internal("ordering of " + lt->str() + " and " + rt->str());
      return natAnswer; // months and days are never equal
    }
  } else {
    internal("comparison of " + lt->str() + " and " + rt->str());
  }
  return b.CreateSelect(bothNotNaT(b, l, r), b.CreateICmp(*p, a, c), natAnswer);
}

} // namespace ptxjit::codegen::detail
