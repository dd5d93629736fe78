// bfloat16 bits <-> float/double (ir/BFloat16.h): exact round trips, ties to even, the directed
// modes, one rounding from double, and fma's single rounding.
#include "ir/BFloat16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace ptxjit::ir;

namespace {

bool isNan(uint16_t b) { return (b & 0x7f80) == 0x7f80 && (b & 0x7f); }

/// The value of bfloat16 bits `b`.
double valueOf(uint16_t b) { return bf16ToFloat(b); }

} // namespace

TEST(BFloat16, EveryValueRoundTrips) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    float f = bf16ToFloat(uint16_t(b));
    if (isNan(uint16_t(b))) {
      EXPECT_TRUE(std::isnan(f));
      EXPECT_TRUE(isNan(bf16FromFloat(f)));
      EXPECT_EQ(bf16FromFloat(f) & 0x8000, b & 0x8000); // the sign stays
      continue;
    }
    for (Rounding m : {Rounding::Nearest, Rounding::TowardZero, Rounding::Down, Rounding::Up}) {
      EXPECT_EQ(bf16FromFloat(f, m), b) << std::hex << b;
      EXPECT_EQ(bf16FromDouble(f, m), b) << std::hex << b;
    }
  }
}

TEST(BFloat16, MidpointsRoundToEvenAndDirectedModes) {
  for (uint32_t b = 0; b < 0x7f7f; b += 7) {
    double lo = valueOf(uint16_t(b)), hi = valueOf(uint16_t(b + 1));
    double mid = (lo + hi) / 2; // exact in double
    uint16_t even = (b & 1) ? uint16_t(b + 1) : uint16_t(b);
    EXPECT_EQ(bf16FromDouble(mid), even) << std::hex << b;
    EXPECT_EQ(bf16FromFloat(float(mid)), even) << std::hex << b;
    EXPECT_EQ(bf16FromDouble(std::nextafter(mid, 0.0)), b) << std::hex << b;
    EXPECT_EQ(bf16FromDouble(std::nextafter(mid, 1e300)), b + 1) << std::hex << b;
    EXPECT_EQ(bf16FromDouble(-mid), 0x8000 | even) << std::hex << b;
    double inside = lo + (hi - lo) / 4;
    EXPECT_EQ(bf16FromDouble(inside, Rounding::TowardZero), b);
    EXPECT_EQ(bf16FromDouble(inside, Rounding::Down), b);
    EXPECT_EQ(bf16FromDouble(inside, Rounding::Up), b + 1);
    EXPECT_EQ(bf16FromDouble(-inside, Rounding::TowardZero), 0x8000 | b);
    EXPECT_EQ(bf16FromDouble(-inside, Rounding::Down), 0x8000 | (b + 1));
    EXPECT_EQ(bf16FromDouble(-inside, Rounding::Up), 0x8000 | b);
  }
}

TEST(BFloat16, DoubleRoundsOnceNotThroughFloat) {
  // 1 + 2**-8 is the midpoint of 1 and its successor: a double a hair above it rounds up, though
  // its float32 (rounded to nearest) is the midpoint itself, which would round to even (1).
  double x = 1.0 + 0x1p-8 + 0x1p-40;
  EXPECT_EQ(bf16FromFloat(float(x)), 0x3f80);
  EXPECT_EQ(bf16FromDouble(x), 0x3f81);
  EXPECT_EQ(bf16FromDouble(1.0 + 0x1p-8 - 0x1p-40), 0x3f80);
  EXPECT_EQ(bf16FromDouble(x, Rounding::TowardZero), 0x3f80);
}

TEST(BFloat16, OverflowUnderflowAndSpecials) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(bf16FromFloat(3.3895313892515355e38f), 0x7f7f);            // the largest bfloat16
  EXPECT_EQ(bf16FromFloat(std::numeric_limits<float>::max()), 0x7f80); // rounds up to inf
  EXPECT_EQ(bf16FromFloat(std::numeric_limits<float>::max(), Rounding::TowardZero), 0x7f7f);
  EXPECT_EQ(bf16FromFloat(std::numeric_limits<float>::max(), Rounding::Down), 0x7f7f);
  EXPECT_EQ(bf16FromFloat(-std::numeric_limits<float>::max(), Rounding::Up), 0xff7f);
  EXPECT_EQ(bf16FromDouble(1e300), 0x7f80);
  EXPECT_EQ(bf16FromDouble(1e300, Rounding::TowardZero), 0x7f7f);
  EXPECT_EQ(bf16FromDouble(-1e300, Rounding::Down), 0xff80);
  EXPECT_EQ(bf16FromFloat(inf), 0x7f80);
  EXPECT_EQ(bf16FromFloat(-inf, Rounding::TowardZero), 0xff80);
  EXPECT_EQ(bf16FromDouble(1e-300), 0x0000);
  EXPECT_EQ(bf16FromDouble(1e-300, Rounding::Up), 0x0001); // the smallest subnormal
  EXPECT_EQ(bf16FromDouble(-1e-300, Rounding::Down), 0x8001);
  EXPECT_EQ(bf16FromDouble(-0.0), 0x8000);
  EXPECT_EQ(bf16FromFloat(0x1p-133f), 0x0001);
  EXPECT_EQ(bf16FromFloat(0x1p-134f), 0x0000); // a tie: to even
  EXPECT_EQ(bf16FromFloat(0x1.8p-134f), 0x0001);
  EXPECT_TRUE(isNan(bf16FromDouble(std::nan(""))));
  EXPECT_EQ(bf16ToFloat(0x3fc0), 1.5f);
  EXPECT_EQ(bf16ToFloat(0xc049), -3.140625f);
}

TEST(BFloat16, FmaRoundsOnce) {
  auto bf = [](double v) { return bf16FromDouble(v); };
  EXPECT_EQ(bf16Fma(bf(1.5), bf(2.0), bf(0.25)), bf(3.25));
  EXPECT_EQ(bf16Fma(bf(-1.5), bf(2.0), bf(0.0)), bf(-3.0));
  // 5 * 77 = 385 is the midpoint of the bfloat16s 384 and 386 (an 8-bit significand steps by 2
  // there), and 384 is the even one. With c = 2**-60 the exact sum is above the midpoint and
  // rounds up; rounding it to a double first (387 + 2**-60 needs 69 bits) would give the
  // midpoint and then 384.
  EXPECT_EQ(bf16Fma(bf(5), bf(77), bf(0x1p-60)), bf(386));
  EXPECT_EQ(bf16Fma(bf(5), bf(77), bf(-0x1p-60)), bf(384));
  EXPECT_EQ(bf16Fma(bf(5), bf(77), bf(0.0)), bf(384));                // the tie itself: to even
  EXPECT_EQ(bf16Fma(bf(1.0), bf(1.0 + 0x1p-7), bf(0x1p-8)), 0x3f82);  // tie: to even (up)
  EXPECT_EQ(bf16Fma(bf(1.0), bf(1.0), bf(0x1p-8)), 0x3f80);           // tie: to even (down)
  EXPECT_EQ(bf16Fma(bf(1.0), bf(1.0), bf(0x1p-8 + 0x1p-15)), 0x3f81); // above the tie: up
  EXPECT_EQ(bf16Fma(bf(1.0), bf(1.0), bf(-(0x1p-8 + 0x1p-15))), 0x3f7f);
  EXPECT_TRUE(
      isNan(bf16Fma(bf(0.0), bf16FromFloat(std::numeric_limits<float>::infinity()), bf(1.0))));
}
