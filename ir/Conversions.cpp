#include "ir/Conversions.h"

#include "ir/Datetime.h"
#include "ir/Enums.h"

#include <algorithm>
#include <array>

namespace ptxjit::ir {
namespace {

/// NumPy's kind order, in which a same_kind cast may only go up: bool < unsigned < signed <
/// float < complex.
int kindRank(const ScalarType *t) {
  switch (t->kind()) {
  case TypeKind::Bool:
    return 0;
  case TypeKind::Int:
    return t->isSigned() ? 2 : 1;
  case TypeKind::Float:
    return 3;
  default:
    return 4;
  }
}

/// The bits of the float (or complex part) that `t` is represented in, for int → float casts:
/// the value bits of an integer must fit the mantissa of float16 (ints up to 8 bits) or float32
/// (up to 16 bits), or be accepted by float64 (NumPy calls every integer → float64 cast safe).
int partBits(const ScalarType *t) {
  return t->kind() == TypeKind::Complex ? t->bits() / 2 : t->bits();
}

/// The narrowest float width (16, 32 or 64) NumPy calls safe for an integer of `intBits` bits.
int floatBitsForInt(int intBits) { return intBits <= 8 ? 16 : intBits <= 16 ? 32 : 64; }

/// float16 and bfloat16: neither holds every value of the other (float16 has the longer
/// significand, bfloat16 the wider exponent).
bool halfAndBFloat(const ScalarType *a, const ScalarType *b) {
  return (a->isBFloat16() && b == types::float16()) || (b->isBFloat16() && a == types::float16());
}

bool numpySafe(const ScalarType *from, const ScalarType *to) {
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
    case TypeKind::Complex:
      // (u)int8 fits float16's 11-bit mantissa, (u)int16 float32's 24 bits; wider integers
      // go to float64.
      return partBits(to) >= floatBitsForInt(from->bits());
    default:
      return false;
    }
  case TypeKind::Float:
    return (to->kind() == TypeKind::Float || to->kind() == TypeKind::Complex) &&
           partBits(to) >= from->bits() && !halfAndBFloat(from, to);
  case TypeKind::Complex:
    return to->kind() == TypeKind::Complex && to->bits() >= from->bits();
  default:
    return false;
  }
}

/// The same class of type (bool, signed, unsigned, float, complex) at least as wide. bfloat16
/// is a class of its own: float32 and float64 hold every value of it, but it is not a narrower
/// IEEE format (Numba grades bfloat16 → float32 safe, not promote).
bool promotes(const ScalarType *from, const ScalarType *to) {
  return from->kind() == to->kind() && from->kind() != TypeKind::Bool &&
         from->isSigned() == to->isSigned() && to->bits() >= from->bits() && !from->isBFloat16() &&
         !to->isBFloat16();
}

int weakRank(TypeKind k) {
  switch (k) {
  case TypeKind::WeakInt:
    return 0;
  case TypeKind::WeakFloat:
    return 1;
  default:
    return 2;
  }
}

/// The float width (16, 32 or 64) that represents every value of a scalar as NumPy sees it:
/// ints of up to 8 bits fit float16, of up to 16 bits float32, wider ones need float64;
/// complex counts per part.
int floatBitsFor(const ScalarType *t) {
  switch (t->kind()) {
  case TypeKind::Int:
    return floatBitsForInt(t->bits());
  case TypeKind::Float:
    return t->bits();
  case TypeKind::Complex:
    return t->bits() / 2;
  default:
    return 32;
  }
}

const ScalarType *promoteInts(const ScalarType *a, const ScalarType *b) {
  if (a->isSigned() == b->isSigned())
    return types::integer(std::max(a->bits(), b->bits()), a->isSigned());
  const ScalarType *s = a->isSigned() ? a : b;
  const ScalarType *u = a->isSigned() ? b : a;
  if (u->bits() < s->bits())
    return s;
  if (u->bits() < 64)
    return types::integer(u->bits() * 2, true);
  return types::float64(); // int64 + uint64: no integer holds both
}

const ScalarType *promoteConcrete(const ScalarType *a, const ScalarType *b) {
  if (a == b)
    return a;
  if (a->kind() == TypeKind::Bool)
    return b;
  if (b->kind() == TypeKind::Bool)
    return a;
  if (a->kind() == TypeKind::Int && b->kind() == TypeKind::Int)
    return promoteInts(a, b);
  int bits = std::max(floatBitsFor(a), floatBitsFor(b));
  if (bits == 16 && (a->isBFloat16() || b->isBFloat16()))
    // bfloat16 with bfloat16 or a (u)int8 (which it holds exactly, as float16 does) stays
    // bfloat16; with float16 neither holds the other: float32 holds both.
    return halfAndBFloat(a, b) ? types::float32() : types::bfloat16();
  if (a->kind() == TypeKind::Complex || b->kind() == TypeKind::Complex)
    return types::complex(std::max(bits, 32) * 2); // no complex32: float16 joins complex64
  return types::floating(bits);
}

/// The grade of a conversion from or to a datetime64 / timedelta64 (ir/Datetime.h). Numba
/// converts only between units of one kind that convert exactly (a finer unit: safe). NumPy
/// also casts to a coarser unit (same_kind: the count is floor-divided), an integer or bool
/// into a timedelta (safe: the count), and datetimes and timedeltas to and from numbers
/// (unsafe: the count); a datetime and a timedelta never convert into each other.
Conversion datetimeConversion(const ScalarType *from, const ScalarType *to, Rules rules) {
  const bool fromDate = isDatetimeLike(from), toDate = isDatetimeLike(to);
  if (fromDate && toDate) {
    if (from->kind() != to->kind())
      return Conversion::None;
    if (canCastDateUnits(from->unit(), to->unit()))
      return Conversion::Safe;
    if (rules == Rules::Numba)
      return Conversion::None;
    if (to->unit() == DateUnit::Generic) // the count as it is (NumPy: unsafe)
      return Conversion::Unsafe;
    // A datetime of years or months into days or finer goes through the calendar (exact).
    bool calendar = from->kind() == TypeKind::Datetime &&
                    static_cast<int>(from->unit()) <= static_cast<int>(DateUnit::M) &&
                    to->unit() != DateUnit::Y && to->unit() != DateUnit::M &&
                    to->unit() != DateUnit::Generic;
    if (calendar)
      return Conversion::Safe;
    if (dateUnitFactor(to->unit(), from->unit()))
      return Conversion::SameKind;
    return Conversion::None;
  }
  if (rules == Rules::Numba)
    return Conversion::None;
  if (toDate && to->kind() == TypeKind::Timedelta &&
      (from->kind() == TypeKind::Bool || from->kind() == TypeKind::Int))
    return from->kind() == TypeKind::Int && !from->isSigned() && from->bits() == 64
               ? Conversion::SameKind
               : Conversion::Safe;
  if (from->kind() == TypeKind::Complex && toDate)
    return Conversion::None;
  return Conversion::Unsafe;
}

/// NEP 50: a concrete scalar `c` combined with a Python literal of weak kind `w`.
const Type *promoteWeak(const ScalarType *c, TypeKind w) {
  switch (w) {
  case TypeKind::WeakInt:
    return c->kind() == TypeKind::Bool ? types::int64() : c;
  case TypeKind::WeakFloat:
    if (c->kind() == TypeKind::Bool || c->kind() == TypeKind::Int)
      return types::float64();
    return c;
  default: // WeakComplex
    if (c->kind() == TypeKind::Complex)
      return c;
    if (c->kind() == TypeKind::Float && c->bits() <= 32)
      return types::complex64();
    return types::complex128();
  }
}

} // namespace

const char *conversionName(Conversion c) {
  switch (c) {
  case Conversion::Exact:
    return "exact";
  case Conversion::Promote:
    return "promote";
  case Conversion::Safe:
    return "safe";
  case Conversion::SameKind:
    return "same_kind";
  case Conversion::Unsafe:
    return "unsafe";
  case Conversion::None:
    break;
  }
  return "none";
}

const char *castingName(Casting c) {
  switch (c) {
  case Casting::No:
    return "no";
  case Casting::Safe:
    return "safe";
  case Casting::SameKind:
    return "same_kind";
  case Casting::Unsafe:
    break;
  }
  return "unsafe";
}

Conversion scalarConversion(const ScalarType *from, const ScalarType *to, Rules rules) {
  if (from == to)
    return Conversion::Exact;
  if (isDatetimeLike(from) || isDatetimeLike(to))
    return datetimeConversion(from, to, rules);
  bool complexToReal = from->kind() == TypeKind::Complex && to->kind() != TypeKind::Complex;
  if (rules == Rules::Numba) {
    if (complexToReal)
      return Conversion::None;
    // Numba's casting graph reaches float32 only from int16 and narrower signed integers, and
    // float16 only from int8: uint16 → float32 and uint8 → float16 are unsafe there.
    // (numba-cuda's bfloat16 takes every 8-bit integer safely.)
    bool unsignedToNarrowFloat = from->kind() == TypeKind::Int && !from->isSigned() &&
                                 to->kind() != TypeKind::Int && to->kind() != TypeKind::Bool &&
                                 partBits(to) == 2 * from->bits() && partBits(to) <= 32 &&
                                 !to->isBFloat16();
    if (unsignedToNarrowFloat)
      return Conversion::Unsafe;
  }
  if (promotes(from, to))
    return Conversion::Promote;
  if (numpySafe(from, to))
    return Conversion::Safe;
  bool sameKind = kindRank(to) >= kindRank(from) && !complexToReal;
  if (sameKind && rules == Rules::NumPy)
    return Conversion::SameKind;
  return Conversion::Unsafe;
}

bool canCast(const ScalarType *from, const ScalarType *to, Casting casting) {
  Conversion c = scalarConversion(from, to, Rules::NumPy);
  switch (casting) {
  case Casting::No:
    return c == Conversion::Exact;
  case Casting::Safe:
    return c <= Conversion::Safe;
  case Casting::SameKind:
    return c <= Conversion::SameKind;
  case Casting::Unsafe:
    break;
  }
  return c <= Conversion::Unsafe;
}

Conversion weakConversion(const WeakType *from, const ScalarType *to) {
  if (from->defaultType() == to)
    return Conversion::Exact;
  if (isDatetimeLike(to)) // a Python int is a count of a timedelta's unit (NumPy)
    return from->kind() == TypeKind::WeakInt && to->kind() == TypeKind::Timedelta
               ? Conversion::Safe
               : Conversion::None;
  switch (from->kind()) {
  case TypeKind::WeakInt:
    return to->kind() == TypeKind::Bool ? Conversion::Unsafe : Conversion::Safe;
  case TypeKind::WeakFloat:
    if (to->kind() == TypeKind::Float || to->kind() == TypeKind::Complex)
      return Conversion::Safe;
    return to->kind() == TypeKind::Bool ? Conversion::None : Conversion::Unsafe;
  default: // WeakComplex
    return to->kind() == TypeKind::Complex ? Conversion::Safe : Conversion::None;
  }
}

Conversion argumentConversion(const Type *from, const Type *to) {
  if (from == to)
    return Conversion::Exact;
  // An IntEnum member passes where an int does: its value, at best a safe conversion (numba's
  // IntEnumMember.can_convert_to).
  if (auto *m = dyn_cast<EnumMemberType>(from); m && m->isIntEnum()) {
    Conversion c = argumentConversion(m->dtype(), to);
    return c == Conversion::None ? c : std::max(c, Conversion::Safe);
  }
  if (const auto *ts = dyn_cast<ScalarType>(to)) {
    if (const auto *fs = dyn_cast<ScalarType>(from)) {
      // A datetime or timedelta argument passes in its own unit only: a launch packs the count
      // as it is (no unit conversion on the way).
      if (isDatetimeLike(fs) || isDatetimeLike(ts))
        return Conversion::None;
      return scalarConversion(fs, ts, Rules::Numba);
    }
    if (const auto *fw = dyn_cast<WeakType>(from)) {
      // Numba's dispatcher sees a Python int as int64, a float as float64, a complex as
      // complex128 (typeof), and grades their conversions by its table: with signatures
      // (float32) and (float64), a Python float picks float64, as in numba-cuda.
      if (weakConversion(fw, ts) == Conversion::None)
        return Conversion::None;
      return scalarConversion(fw->defaultType(), ts, Rules::Numba);
    }
    return Conversion::None;
  }
  if (const auto *ta = dyn_cast<ArrayType>(to)) {
    const auto *fa = dyn_cast<ArrayType>(from);
    if (!fa || fa->dtype() != ta->dtype() || fa->ndim() != ta->ndim())
      return Conversion::None;
    if (fa->readonly() && !ta->readonly())
      return Conversion::None;
    if (fa->layout() != ta->layout() && ta->layout() != Layout::A)
      return Conversion::None;
    return Conversion::Promote;
  }
  if (const auto *tp = dyn_cast<PointerType>(to)) {
    // Numba passes an integer for a CPointer/voidptr parameter as the address itself; only a
    // 64-bit integer (or a Python int) can hold one. An array is not its data pointer here.
    if (const auto *fw = dyn_cast<WeakType>(from))
      return fw->kind() == TypeKind::WeakInt ? Conversion::Safe : Conversion::None;
    if (const auto *fs = dyn_cast<ScalarType>(from))
      return fs->kind() == TypeKind::Int && fs->bits() == 64 ? Conversion::Safe : Conversion::None;
    if (isa<PointerType>(from))
      return !tp->pointee() ? Conversion::Promote : Conversion::None;
    return Conversion::None;
  }
  if (const auto *tt = dyn_cast<TupleType>(to)) {
    const auto *ft = dyn_cast<TupleType>(from);
    if (!ft || ft->size() != tt->size())
      return Conversion::None;
    Conversion c = Conversion::Exact;
    for (size_t i = 0; i < tt->size(); ++i)
      c = std::max(c, argumentConversion(ft->elements()[i], tt->elements()[i]));
    return c;
  }
  return Conversion::None;
}

int selectSignature(const std::vector<const Type *> &actual,
                    const std::vector<std::vector<const Type *>> &signatures,
                    std::vector<int> *tied) {
  // Numba's Rating: (unsafe, safe, promote) conversion counts, compared in that order.
  using Rating = std::array<size_t, 3>;
  std::vector<std::pair<Rating, int>> rated;
  for (size_t s = 0; s < signatures.size(); ++s) {
    const auto &params = signatures[s];
    if (params.size() != actual.size())
      continue;
    Rating r{0, 0, 0};
    bool fits = true;
    for (size_t i = 0; i < params.size() && fits; ++i) {
      switch (argumentConversion(actual[i], params[i])) {
      case Conversion::Exact:
        break;
      case Conversion::Promote:
        ++r[2];
        break;
      case Conversion::Safe:
        ++r[1];
        break;
      case Conversion::SameKind: // (NumPy's grade; Numba's rules have none: unsafe there)
      case Conversion::Unsafe:
        ++r[0];
        break;
      case Conversion::None:
        fits = false;
        break;
      }
    }
    if (fits)
      rated.emplace_back(r, static_cast<int>(s));
  }
  if (rated.empty())
    return -1;
  std::stable_sort(rated.begin(), rated.end(),
                   [](const auto &a, const auto &b) { return a.first < b.first; });
  if (tied) {
    tied->clear();
    for (const auto &[r, s] : rated)
      if (r == rated.front().first)
        tied->push_back(s);
  }
  return rated.front().second;
}

const Type *promote(const Type *a, const Type *b) {
  if (!a || !b || !a->isScalarNumber() || !b->isScalarNumber())
    return nullptr;
  if (a->isWeak() && b->isWeak()) {
    // The canonical weak type of the higher kind: an int literal's value (intLiteral) does not
    // survive arithmetic.
    TypeKind k = weakRank(a->kind()) >= weakRank(b->kind()) ? a->kind() : b->kind();
    return k == TypeKind::WeakInt     ? types::weakInt()
           : k == TypeKind::WeakFloat ? types::weakFloat()
                                      : types::weakComplex();
  }
  if (a->isWeak())
    return promoteWeak(cast<ScalarType>(b), a->kind());
  if (b->isWeak())
    return promoteWeak(cast<ScalarType>(a), b->kind());
  return promoteConcrete(cast<ScalarType>(a), cast<ScalarType>(b));
}

} // namespace ptxjit::ir
