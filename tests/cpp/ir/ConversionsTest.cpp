// The conversion table (ir/Conversions.h): NumPy's casting levels, Numba's dispatch grades with
// their two named differences, weak Python scalars, arguments and signature selection. Every
// pair of dtypes is compared with np.can_cast by tests/python/test_conversions.py.
#include "ir/Conversions.h"

#include <gtest/gtest.h>

#include <string>

namespace ptxjit::ir {
namespace {

namespace t = types;

const std::vector<const ScalarType *> &allScalars() {
  static const std::vector<const ScalarType *> all = {
      t::boolean(), t::int8(),      t::int16(),     t::int32(),  t::int64(),
      t::uint8(),   t::uint16(),    t::uint32(),    t::uint64(), t::float32(),
      t::float64(), t::complex64(), t::complex128()};
  return all;
}

char gradeCode(Conversion c) {
  switch (c) {
  case Conversion::Exact:
    return 'E';
  case Conversion::Promote:
    return 'P';
  case Conversion::Safe:
    return 'S';
  case Conversion::SameKind:
    return 'K';
  case Conversion::Unsafe:
    return 'U';
  case Conversion::None:
    break;
  }
  return '-';
}

// Numba's grades for every pair (rows: from, columns: to, in allScalars() order), worked out
// from numba/core/typeconv/rules.py: its safe/promote/unsafe edges closed transitively, each
// path graded by its worst step, the best path kept; '-' where Numba has no conversion.
const char *const kNumbaTable[] = {
    "ESSSSSSSSSSSS", // bool
    "UEPPPUUUUSSSS", // int8
    "UUEPPUUUUSSSS", // int16
    "UUUEPUUUUUSUS", // int32
    "UUUUEUUUUUSUS", // int64
    "UUSSSEPPPSSSS", // uint8
    "UUUSSUEPPUSUS", // uint16
    "UUUUSUUEPUSUS", // uint32
    "UUUUUUUUEUSUS", // uint64
    "UUUUUUUUUEPSS", // float32
    "UUUUUUUUUUEUS", // float64
    "-----------EP", // complex64
    "-----------UE", // complex128
};

TEST(Conversions, NumbaGradesEveryPairAsNumbaDoes) {
  const auto &all = allScalars();
  for (size_t f = 0; f < all.size(); ++f)
    for (size_t k = 0; k < all.size(); ++k)
      EXPECT_EQ(gradeCode(scalarConversion(all[f], all[k], Rules::Numba)), kNumbaTable[f][k])
          << all[f]->str() << " -> " << all[k]->str();
}

TEST(Conversions, NumpyDiffersFromNumbaOnlyWhereNamed) {
  const auto &all = allScalars();
  for (const ScalarType *from : all)
    for (const ScalarType *to : all) {
      Conversion numpy = scalarConversion(from, to, Rules::NumPy);
      Conversion numba = scalarConversion(from, to, Rules::Numba);
      bool complexToReal = from->kind() == TypeKind::Complex && to->kind() != TypeKind::Complex;
      bool uint16ToSingle = from == t::uint16() && (to == t::float32() || to == t::complex64());
      if (complexToReal) {
        EXPECT_EQ(numba, Conversion::None);
        EXPECT_EQ(numpy, Conversion::Unsafe);
      } else if (uint16ToSingle) {
        EXPECT_EQ(numba, Conversion::Unsafe);
        EXPECT_EQ(numpy, Conversion::Safe);
      } else if (numpy == Conversion::SameKind) {
        EXPECT_EQ(numba, Conversion::Unsafe) << from->str() << " -> " << to->str();
      } else {
        EXPECT_EQ(numba, numpy) << from->str() << " -> " << to->str();
      }
    }
}

TEST(Conversions, CastingLevelsAreNumpys) {
  EXPECT_TRUE(canCast(t::int16(), t::float32(), Casting::Safe));
  EXPECT_FALSE(canCast(t::int32(), t::float32(), Casting::Safe));
  EXPECT_TRUE(canCast(t::int32(), t::float32(), Casting::SameKind));
  EXPECT_TRUE(canCast(t::int64(), t::float64(), Casting::Safe));
  EXPECT_TRUE(canCast(t::uint64(), t::float64(), Casting::Safe));
  EXPECT_TRUE(canCast(t::int64(), t::complex128(), Casting::Safe));
  EXPECT_FALSE(canCast(t::int64(), t::complex64(), Casting::Safe));
  EXPECT_TRUE(canCast(t::uint8(), t::int16(), Casting::Safe));
  EXPECT_FALSE(canCast(t::int8(), t::uint64(), Casting::Safe));
  EXPECT_FALSE(canCast(t::int8(), t::uint8(), Casting::SameKind));
  EXPECT_TRUE(canCast(t::uint64(), t::int8(), Casting::SameKind));
  EXPECT_TRUE(canCast(t::float64(), t::float32(), Casting::SameKind));
  EXPECT_FALSE(canCast(t::float64(), t::int32(), Casting::SameKind));
  EXPECT_FALSE(canCast(t::complex64(), t::float64(), Casting::SameKind));
  EXPECT_TRUE(canCast(t::complex64(), t::float64(), Casting::Unsafe));
  EXPECT_FALSE(canCast(t::int8(), t::boolean(), Casting::SameKind));
  EXPECT_TRUE(canCast(t::boolean(), t::uint8(), Casting::Safe));
  EXPECT_TRUE(canCast(t::float32(), t::float32(), Casting::No));
  EXPECT_FALSE(canCast(t::float32(), t::float64(), Casting::No));
  EXPECT_STREQ(castingName(Casting::SameKind), "same_kind");
  EXPECT_STREQ(conversionName(Conversion::Promote), "promote");
}

TEST(Conversions, PythonScalarsAreWeak) {
  EXPECT_EQ(weakConversion(t::weakInt(), t::int64()), Conversion::Exact);
  EXPECT_EQ(weakConversion(t::weakInt(), t::int8()), Conversion::Safe);
  EXPECT_EQ(weakConversion(t::weakInt(), t::uint8()), Conversion::Safe);
  EXPECT_EQ(weakConversion(t::weakInt(), t::float32()), Conversion::Safe);
  EXPECT_EQ(weakConversion(t::weakInt(), t::boolean()), Conversion::Unsafe);
  EXPECT_EQ(weakConversion(t::weakFloat(), t::float32()), Conversion::Safe);
  EXPECT_EQ(weakConversion(t::weakFloat(), t::float64()), Conversion::Exact);
  EXPECT_EQ(weakConversion(t::weakFloat(), t::int32()), Conversion::Unsafe);
  EXPECT_EQ(weakConversion(t::weakFloat(), t::boolean()), Conversion::None);
  EXPECT_EQ(weakConversion(t::weakComplex(), t::float64()), Conversion::None);
  EXPECT_EQ(weakConversion(t::weakComplex(), t::complex64()), Conversion::Safe);
}

TEST(Conversions, ArgumentsMatchScalarsArraysAndTuples) {
  auto c = t::array(t::float32(), 1, Layout::C);
  auto a = t::array(t::float32(), 1, Layout::A);
  auto ro = t::array(t::float32(), 1, Layout::C, true);
  EXPECT_EQ(argumentConversion(t::float32(), t::float64()), Conversion::Promote);
  EXPECT_EQ(argumentConversion(t::float64(), t::float32()), Conversion::Unsafe);
  EXPECT_EQ(argumentConversion(t::complex128(), t::float64()), Conversion::None);
  // A pointer parameter takes a 64-bit integer (or a Python int) as the address, nothing else.
  const PointerType *p = t::pointer(t::int32());
  EXPECT_EQ(argumentConversion(p, p), Conversion::Exact);
  EXPECT_EQ(argumentConversion(t::int64(), p), Conversion::Safe);
  EXPECT_EQ(argumentConversion(t::uint64(), p), Conversion::Safe);
  EXPECT_EQ(argumentConversion(t::weakInt(), p), Conversion::Safe);
  EXPECT_EQ(argumentConversion(t::int32(), p), Conversion::None);
  EXPECT_EQ(argumentConversion(t::float64(), p), Conversion::None);
  EXPECT_EQ(argumentConversion(t::weakFloat(), p), Conversion::None);
  EXPECT_EQ(argumentConversion(t::array(t::int32(), 1, Layout::C), p), Conversion::None);
  EXPECT_EQ(argumentConversion(p, t::voidPointer()), Conversion::Promote);
  EXPECT_EQ(argumentConversion(t::voidPointer(), p), Conversion::None);
  EXPECT_EQ(argumentConversion(p, t::int64()), Conversion::None);
  // Python scalars as Numba's dispatcher types them (int64, float64, complex128).
  EXPECT_EQ(argumentConversion(t::weakInt(), t::int8()), Conversion::Unsafe);
  EXPECT_EQ(argumentConversion(t::weakInt(), t::int64()), Conversion::Exact);
  EXPECT_EQ(argumentConversion(t::weakInt(), t::float64()), Conversion::Safe);
  EXPECT_EQ(argumentConversion(t::weakFloat(), t::float32()), Conversion::Unsafe);
  EXPECT_EQ(argumentConversion(t::weakFloat(), t::int64()), Conversion::Unsafe);
  EXPECT_EQ(argumentConversion(t::weakFloat(), t::boolean()), Conversion::None);
  EXPECT_EQ(argumentConversion(t::weakComplex(), t::float64()), Conversion::None);
  EXPECT_EQ(argumentConversion(c, a), Conversion::Promote);
  EXPECT_EQ(argumentConversion(a, c), Conversion::None);
  EXPECT_EQ(argumentConversion(ro, c), Conversion::None);
  EXPECT_EQ(argumentConversion(c, t::array(t::float64(), 1, Layout::A)), Conversion::None);
  EXPECT_EQ(argumentConversion(c, t::array(t::float32(), 2, Layout::A)), Conversion::None);
  EXPECT_EQ(argumentConversion(t::tuple({t::weakInt(), c}), t::tuple({t::int64(), a})),
            Conversion::Promote);
  EXPECT_EQ(argumentConversion(t::tuple({t::int32(), c}), t::tuple({t::int32(), a})),
            Conversion::Promote);
  EXPECT_EQ(argumentConversion(t::tuple({t::int32()}), t::tuple({t::int32(), a})),
            Conversion::None);
  EXPECT_EQ(argumentConversion(t::range(), t::int64()), Conversion::None);
}

TEST(Conversions, SelectSignatureTakesExactThenNumbasRating) {
  auto a32 = t::array(t::float32(), 1, Layout::A);
  auto a64 = t::array(t::float64(), 1, Layout::A);
  auto c32 = t::array(t::float32(), 1, Layout::C);
  std::vector<std::vector<const Type *>> sigs = {
      {t::float64(), a64}, {t::float32(), a32}, {t::int32(), a32}};
  EXPECT_EQ(selectSignature({t::float32(), a32}, sigs), 1);
  EXPECT_EQ(selectSignature({t::weakFloat(), c32}, sigs), 1); // safe beats unsafe (int32)
  EXPECT_EQ(selectSignature({t::int16(), c32}, sigs), 2);     // promote beats safe
  EXPECT_EQ(selectSignature({t::float64(), a64}, sigs), 0);
  EXPECT_EQ(selectSignature({t::complex64(), a32}, sigs), -1);
  EXPECT_EQ(selectSignature({t::float32()}, sigs), -1); // wrong count
}

// Numba's rating counts conversions: fewer unsafe ones win even where the worst is as bad, and
// a tie between the best is reported (the kernel dispatcher refuses it as ambiguous).
TEST(Conversions, SelectSignatureCountsConversionsAndReportsTies) {
  auto a = t::array(t::float64(), 1, Layout::C);
  std::vector<std::vector<const Type *>> sigs = {{a, t::float32(), t::float64()},
                                                 {a, t::float64(), t::float32()},
                                                 {a, t::int64(), t::int64()}};
  std::vector<int> tied;
  EXPECT_EQ(selectSignature({a, t::float64(), t::float64()}, sigs, &tied), 0);
  EXPECT_EQ(tied, (std::vector<int>{0, 1})); // one unsafe each; (int64, int64) has two
  EXPECT_EQ(selectSignature({a, t::float32(), t::float64()}, sigs, &tied), 0);
  EXPECT_EQ(tied, (std::vector<int>{0}));
  std::vector<std::vector<const Type *>> two = {{t::float32(), t::float32()},
                                                {t::int64(), t::float64()}};
  EXPECT_EQ(selectSignature({t::float64(), t::float64()}, two, &tied), 1); // 1 unsafe, not 2
  EXPECT_EQ(tied, (std::vector<int>{1}));
}

// The signatures (int32) and (float64) given an int64 or uint64: float64 is safe (NumPy and
// Numba agree), int32 unsafe, so float64 is chosen, as for a ufunc with those loops.
TEST(Conversions, WideIntegersPreferFloat64OverNarrowIntegers) {
  std::vector<std::vector<const Type *>> sigs = {{t::int32()}, {t::float64()}};
  EXPECT_EQ(selectSignature({t::int64()}, sigs), 1);
  EXPECT_EQ(selectSignature({t::uint64()}, sigs), 1);
  std::vector<std::vector<const Type *>> complexSigs = {{t::int32()}, {t::complex128()}};
  EXPECT_EQ(selectSignature({t::int64()}, complexSigs), 1);
}

} // namespace
} // namespace ptxjit::ir

namespace ptxjit::ir {
namespace {

// bfloat16 (numba-cuda's types.bfloat16; no NumPy dtype): graded as numba-cuda's
// Bfloat16.can_convert_from/to, promoted by what it holds.
TEST(Conversions, BFloat16GradesAndPromotion) {
  const ScalarType *bf = t::bfloat16();
  EXPECT_EQ(bf->str(), "bfloat16");
  EXPECT_TRUE(bf->isBFloat16() && !t::float16()->isBFloat16());
  EXPECT_EQ(bf->kind(), TypeKind::Float);
  EXPECT_EQ(t::scalarByName("__nv_bfloat16"), bf);
  EXPECT_EQ(t::scalarByName("bfloat16"), bf);
  EXPECT_EQ(scalarConversion(bf, t::float32(), Rules::Numba), Conversion::Safe);
  EXPECT_EQ(scalarConversion(bf, t::float64(), Rules::Numba), Conversion::Safe);
  EXPECT_EQ(scalarConversion(bf, t::float16(), Rules::Numba), Conversion::Unsafe);
  EXPECT_EQ(scalarConversion(t::float16(), bf, Rules::Numba), Conversion::Unsafe);
  EXPECT_EQ(scalarConversion(t::float32(), bf, Rules::Numba), Conversion::Unsafe);
  EXPECT_EQ(scalarConversion(t::float32(), bf, Rules::NumPy), Conversion::SameKind);
  EXPECT_EQ(scalarConversion(t::int8(), bf, Rules::Numba), Conversion::Safe);
  EXPECT_EQ(scalarConversion(t::uint8(), bf, Rules::Numba), Conversion::Safe);
  EXPECT_EQ(scalarConversion(t::int16(), bf, Rules::Numba), Conversion::Unsafe);
  EXPECT_EQ(scalarConversion(bf, t::int64(), Rules::Numba), Conversion::Unsafe);
  EXPECT_EQ(scalarConversion(bf, t::complex64(), Rules::Numba), Conversion::Safe);
  EXPECT_EQ(promote(bf, bf), bf);
  EXPECT_EQ(promote(bf, t::int8()), bf);
  EXPECT_EQ(promote(t::uint8(), bf), bf);
  EXPECT_EQ(promote(bf, t::boolean()), bf);
  EXPECT_EQ(promote(bf, t::weakInt()), bf);
  EXPECT_EQ(promote(bf, t::weakFloat()), bf);
  EXPECT_EQ(promote(bf, t::float16()), t::float32());
  EXPECT_EQ(promote(t::float16(), bf), t::float32());
  EXPECT_EQ(promote(bf, t::int16()), t::float32());
  EXPECT_EQ(promote(bf, t::float32()), t::float32());
  EXPECT_EQ(promote(bf, t::int64()), t::float64());
  EXPECT_EQ(promote(bf, t::complex64()), t::complex64());
  EXPECT_EQ(promote(bf, t::weakComplex()), t::complex64());
}

} // namespace
} // namespace ptxjit::ir
