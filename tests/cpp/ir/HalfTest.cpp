// float16 bits <-> double (ir/Half.h): exact round trips, ties to even, overflow and subnormals.
#include "ir/Half.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace ptxjit::ir;

TEST(Half, EveryHalfRoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
    double d = halfToDouble(uint16_t(h));
    if (nan) {
      EXPECT_TRUE(std::isnan(d)) << h;
      EXPECT_TRUE(std::isnan(halfToDouble(halfFromDouble(d))));
      continue;
    }
    EXPECT_EQ(halfFromDouble(d), h) << std::hex << h;
  }
}

TEST(Half, MidpointsRoundToEven) {
  // Between consecutive positive finite halves h and h+1: the midpoint goes to the even one,
  // anything a hair off it to the nearer one.
  for (uint32_t h = 0; h < 0x7bff; ++h) {
    double lo = halfToDouble(uint16_t(h)), hi = halfToDouble(uint16_t(h + 1));
    double mid = (lo + hi) / 2;
    uint16_t even = (h & 1) ? uint16_t(h + 1) : uint16_t(h);
    EXPECT_EQ(halfFromDouble(mid), even) << std::hex << h;
    EXPECT_EQ(halfFromDouble(std::nextafter(mid, 0.0)), h) << std::hex << h;
    EXPECT_EQ(halfFromDouble(std::nextafter(mid, 1e9)), h + 1) << std::hex << h;
    EXPECT_EQ(halfFromDouble(-mid), 0x8000 | even) << std::hex << h;
  }
}

TEST(Half, OverflowUnderflowAndSpecials) {
  EXPECT_EQ(halfFromDouble(65504.0), 0x7bff);
  EXPECT_EQ(halfFromDouble(65519.99), 0x7bff);
  EXPECT_EQ(halfFromDouble(65520.0), 0x7c00); // halfway to 2**16: to even, which is inf
  EXPECT_EQ(halfFromDouble(1e300), 0x7c00);
  EXPECT_EQ(halfFromDouble(-1e300), 0xfc00);
  EXPECT_EQ(halfFromDouble(INFINITY), 0x7c00);
  EXPECT_EQ(halfFromDouble(std::ldexp(1.0, -24)), 0x0001); // the smallest subnormal
  EXPECT_EQ(halfFromDouble(std::ldexp(1.0, -25)), 0x0000); // halfway to it: to even (zero)
  EXPECT_EQ(halfFromDouble(std::ldexp(1.5, -25)), 0x0001);
  EXPECT_EQ(halfFromDouble(1e-300), 0x0000);
  EXPECT_EQ(halfFromDouble(-0.0), 0x8000);
  EXPECT_EQ(halfFromDouble(std::ldexp(1.0, -14)), 0x0400); // the smallest normal
  EXPECT_EQ(halfFromDouble(1.0), 0x3c00);
  EXPECT_EQ(halfFromDouble(-2.0), 0xc000);
  EXPECT_EQ(halfFromDouble(0.1), 0x2e66);
  EXPECT_EQ(halfToDouble(0x3555), 0.333251953125);
}
