// NumPy 2 promotion of concrete types and NEP 50 weak literals.
#include "ir/typing/Typing.h"

#include <gtest/gtest.h>

using namespace ptxjit::ir;

namespace {

struct Case {
  const Type *a, *b, *expected;
};

void checkTable(const std::vector<Case> &cases) {
  for (const Case &c : cases) {
    const Type *r = promote(c.a, c.b);
    const Type *rs = promote(c.b, c.a);
    ASSERT_NE(r, nullptr) << c.a->str() << " + " << c.b->str();
    EXPECT_EQ(r, c.expected) << c.a->str() << " + " << c.b->str() << " gave " << r->str();
    EXPECT_EQ(rs, c.expected) << "not symmetric: " << c.b->str() << " + " << c.a->str();
  }
}

} // namespace

TEST(Promote, ConcreteNumPy2Table) {
  using namespace types;
  checkTable({
      {boolean(), boolean(), boolean()},
      {boolean(), int8(), int8()},
      {boolean(), float32(), float32()},
      {int32(), int64(), int64()},
      {int8(), int16(), int16()},
      {uint8(), uint32(), uint32()},
      {int8(), uint8(), int16()},
      {int16(), uint8(), int16()},
      {uint16(), int8(), int32()},
      {uint32(), int32(), int64()},
      {int64(), uint64(), float64()},
      {int64(), uint32(), int64()},
      {float32(), int32(), float64()},
      {float32(), int16(), float32()},
      {float32(), uint16(), float32()},
      {float32(), int8(), float32()},
      {float32(), int64(), float64()},
      {float64(), int8(), float64()},
      {float32(), float64(), float64()},
      {float32(), complex64(), complex64()},
      {float64(), complex64(), complex128()},
      {int16(), complex64(), complex64()},
      {int32(), complex64(), complex128()},
      {complex64(), complex128(), complex128()},
      {boolean(), complex64(), complex64()},
  });
}

TEST(Promote, WeakLiteralsNep50) {
  using namespace types;
  checkTable({
      {int32(), weakInt(), int32()},
      {uint8(), weakInt(), uint8()},
      {int64(), weakInt(), int64()},
      {float32(), weakInt(), float32()},
      {float32(), weakFloat(), float32()},
      {float64(), weakFloat(), float64()},
      {complex64(), weakFloat(), complex64()},
      {complex64(), weakInt(), complex64()},
      {int32(), weakFloat(), float64()},
      {int8(), weakFloat(), float64()},
      {float32(), weakComplex(), complex64()},
      {float64(), weakComplex(), complex128()},
      {int16(), weakComplex(), complex128()},
      {boolean(), weakInt(), int64()},
      {boolean(), weakFloat(), float64()},
      {weakInt(), weakInt(), weakInt()},
      {weakInt(), weakFloat(), weakFloat()},
      {weakFloat(), weakComplex(), weakComplex()},
      {weakInt(), weakComplex(), weakComplex()},
  });
}

TEST(Promote, NonNumbersHaveNoCommonType) {
  EXPECT_EQ(promote(types::int64(), types::array(types::int64(), 1, Layout::C)), nullptr);
  EXPECT_EQ(promote(types::none(), types::weakInt()), nullptr);
  EXPECT_EQ(promote(types::tuple({types::int64()}), types::int64()), nullptr);
  EXPECT_EQ(promote(nullptr, types::int64()), nullptr);
}
