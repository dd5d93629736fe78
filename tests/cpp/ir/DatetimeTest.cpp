// datetime64 / timedelta64 types and numba's unit rules (ir/Datetime.h), their conversions and
// signatures.
#include "ir/Datetime.h"
#include "ir/Conversions.h"
#include "ir/typing/Typing.h"

#include <gtest/gtest.h>

using namespace ptxjit::ir;

TEST(Datetime, TypesAreScalarsNamedAsNumPy) {
  const ScalarType *d = types::datetime(DateUnit::D);
  EXPECT_EQ(d, types::datetime(DateUnit::D));
  EXPECT_EQ(d->str(), "datetime64[D]");
  EXPECT_EQ(types::timedelta(DateUnit::Generic)->str(), "timedelta64");
  EXPECT_EQ(d->kind(), TypeKind::Datetime);
  EXPECT_EQ(d->unit(), DateUnit::D);
  EXPECT_EQ(d->byteSize(), 8);
  EXPECT_FALSE(d->isScalarNumber()); // not a number: arithmetic has its own rules
  EXPECT_TRUE(isDatetimeLike(types::timedelta(DateUnit::s)));
  EXPECT_FALSE(isDatetimeLike(types::int64()));
  EXPECT_EQ(types::scalarByName("datetime64[D]"), d);
  EXPECT_EQ(types::scalarByName("M8[D]"), d);
  EXPECT_EQ(types::scalarByName("m8[ms]"), types::timedelta(DateUnit::ms));
  EXPECT_EQ(types::scalarByName("timedelta64"), types::timedelta(DateUnit::Generic));
  EXPECT_EQ(types::scalarByName("datetime64[B]"), nullptr);
  EXPECT_EQ(types::scalarByName("datetime64[D"), nullptr);
}

TEST(Datetime, UnitRulesAreNumbas) {
  EXPECT_TRUE(canCastDateUnits(DateUnit::D, DateUnit::s));
  EXPECT_FALSE(canCastDateUnits(DateUnit::s, DateUnit::D));
  EXPECT_TRUE(canCastDateUnits(DateUnit::Y, DateUnit::M));
  EXPECT_FALSE(canCastDateUnits(DateUnit::M, DateUnit::D)); // months have no fixed length
  EXPECT_TRUE(canCastDateUnits(DateUnit::Generic, DateUnit::ns));
  EXPECT_FALSE(canCastDateUnits(DateUnit::ns, DateUnit::Generic));
  EXPECT_EQ(dateUnitFactor(DateUnit::W, DateUnit::h), 7 * 24);
  EXPECT_EQ(dateUnitFactor(DateUnit::s, DateUnit::ns), 1000000000);
  EXPECT_EQ(dateUnitFactor(DateUnit::Y, DateUnit::M), 12);
  EXPECT_FALSE(dateUnitFactor(DateUnit::M, DateUnit::D));
  EXPECT_FALSE(dateUnitFactor(DateUnit::s, DateUnit::m));
  EXPECT_EQ(bestDateUnit(DateUnit::D, DateUnit::s), DateUnit::s);
  EXPECT_EQ(bestDateUnit(DateUnit::Generic, DateUnit::h), DateUnit::h);
  EXPECT_EQ(combineDateUnits(DateUnit::M, DateUnit::D), DateUnit::D);
  EXPECT_EQ(combineDateUnits(DateUnit::D, DateUnit::M), std::nullopt);
  EXPECT_EQ(combineDateUnits(DateUnit::Y, DateUnit::M), DateUnit::M);
  EXPECT_EQ(dateUnitByName("us"), DateUnit::us);
  EXPECT_EQ(dateUnitByName(""), DateUnit::Generic);
  EXPECT_EQ(dateUnitByName("x"), std::nullopt);
}

TEST(Datetime, Conversions) {
  const ScalarType *d = types::datetime(DateUnit::D), *s = types::datetime(DateUnit::s);
  const ScalarType *tdD = types::timedelta(DateUnit::D);
  EXPECT_EQ(scalarConversion(d, s, Rules::Numba), Conversion::Safe);
  EXPECT_EQ(scalarConversion(s, d, Rules::Numba), Conversion::None);
  EXPECT_EQ(scalarConversion(s, d, Rules::NumPy), Conversion::SameKind);
  EXPECT_EQ(scalarConversion(types::datetime(DateUnit::Y), d, Rules::NumPy), Conversion::Safe);
  EXPECT_EQ(scalarConversion(d, tdD, Rules::NumPy), Conversion::None);
  EXPECT_EQ(scalarConversion(types::int32(), tdD, Rules::NumPy), Conversion::Safe);
  EXPECT_EQ(scalarConversion(types::int32(), tdD, Rules::Numba), Conversion::None);
  EXPECT_EQ(scalarConversion(tdD, types::int64(), Rules::NumPy), Conversion::Unsafe);
  // Kernel arguments pass in their own unit only (the count is packed as it is).
  EXPECT_EQ(argumentConversion(d, d), Conversion::Exact);
  EXPECT_EQ(argumentConversion(d, s), Conversion::None);
}

TEST(Datetime, SignaturesSpellUnits) {
  Signature sig = parseSignature("timedelta64[D](datetime64[D], M8[s][:], m8[::1])");
  EXPECT_EQ(sig.returnType, types::timedelta(DateUnit::D));
  ASSERT_EQ(sig.args.size(), 3u);
  EXPECT_EQ(sig.args[0], types::datetime(DateUnit::D));
  EXPECT_EQ(sig.args[1], types::array(types::datetime(DateUnit::s), 1, Layout::A));
  EXPECT_EQ(sig.args[2], types::array(types::timedelta(DateUnit::Generic), 1, Layout::C));
  EXPECT_THROW(parseSignature("void(datetime64[Q])"), CompileError);
}
