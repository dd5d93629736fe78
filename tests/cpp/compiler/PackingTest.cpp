// The one value struct and packer of launches (compiler/Packing.h): NumPy's casts into every
// scalar type, complex parts, arrays, and whole plans.
#include "compiler/Packing.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace ptxjit;
using compiler::ArgValue;
namespace t = ptxjit::ir::types;

namespace {

template <typename T> T stored(const ArgValue &v, const ir::ScalarType *type) {
  alignas(16) unsigned char buf[16] = {};
  compiler::storeScalar(v, type, buf);
  T out;
  std::memcpy(&out, buf, sizeof(T));
  return out;
}

} // namespace

TEST(Packing, ScalarsCastAsNumpyDoes) {
  ArgValue f = ArgValue::floating(2.75);
  EXPECT_EQ(stored<float>(f, t::float32()), 2.75f);
  EXPECT_EQ(stored<int16_t>(f, t::int16()), 2);
  EXPECT_EQ(stored<int32_t>(ArgValue::floating(-2.75), t::int32()), -2); // toward zero
  EXPECT_EQ(stored<int64_t>(ArgValue::floating(NAN), t::int64()), 0);
  EXPECT_EQ(stored<int64_t>(ArgValue::floating(1e30), t::int64()),
            std::numeric_limits<int64_t>::max());                     // saturated
  // Saturated to the parameter's own range, as kernels convert (NaN 0, ±inf the limits).
  EXPECT_EQ(stored<int32_t>(ArgValue::floating(1e10), t::int32()), INT32_MAX);
  EXPECT_EQ(stored<int8_t>(ArgValue::floating(-1e10), t::int8()), -128);
  EXPECT_EQ(stored<int8_t>(ArgValue::floating(127.9), t::int8()), 127);
  EXPECT_EQ(stored<uint8_t>(ArgValue::floating(-3.0), t::uint8()), 0);
  EXPECT_EQ(stored<uint16_t>(ArgValue::floating(INFINITY), t::uint16()), 65535);
  EXPECT_EQ(stored<uint64_t>(ArgValue::floating(1e30), t::uint64()), UINT64_MAX);
  EXPECT_EQ(stored<uint64_t>(ArgValue::floating(0x1p63), t::uint64()), 1ull << 63);
  EXPECT_EQ(stored<int64_t>(ArgValue::floating(-INFINITY), t::int64()), INT64_MIN);
  EXPECT_EQ(stored<uint32_t>(ArgValue::floating(NAN), t::uint32()), 0u);
  EXPECT_EQ(stored<uint8_t>(ArgValue::integer(300), t::uint8()), 44); // wraps
  EXPECT_EQ(stored<uint8_t>(ArgValue::floating(0.5), t::boolean()), 1);
  EXPECT_EQ(stored<uint8_t>(ArgValue::integer(0), t::boolean()), 0);
  EXPECT_EQ(stored<double>(ArgValue::unsignedInteger(1ull << 63), t::float64()), 0x1p63);
  EXPECT_EQ(stored<double>(ArgValue::boolean(true), t::float64()), 1.0);
  // A complex value as a real type keeps its real part; a real value as complex has a zero
  // imaginary part.
  EXPECT_EQ(stored<double>(ArgValue::complexNumber(1.5, -2), t::float64()), 1.5);
  struct C64 {
    float re, im;
  };
  C64 c = stored<C64>(ArgValue::floating(2.5), t::complex64());
  EXPECT_EQ(c.re, 2.5f);
  EXPECT_EQ(c.im, 0.0f);
  struct C128 {
    double re, im;
  };
  C128 z = stored<C128>(ArgValue::complexNumber(1, -3), t::complex128());
  EXPECT_EQ(z.re, 1.0);
  EXPECT_EQ(z.im, -3.0);
  EXPECT_THROW(compiler::storeScalar(ArgValue::array(0, 0, nullptr, nullptr), t::int8(), &z),
               std::logic_error);
}

TEST(Packing, LoadReadsElementsOfEveryType) {
  int16_t s = -7;
  EXPECT_EQ(ArgValue::load(t::int16(), &s).i, -7);
  uint32_t u = 4000000000u;
  ArgValue lu = ArgValue::load(t::uint32(), &u);
  EXPECT_EQ(lu.kind, ArgValue::Kind::UInt);
  EXPECT_EQ(lu.u, 4000000000u);
  float c[2] = {1.5f, -0.5f};
  ArgValue lc = ArgValue::load(t::complex64(), c);
  EXPECT_EQ(lc.kind, ArgValue::Kind::Complex);
  EXPECT_EQ(lc.re, 1.5);
  EXPECT_EQ(lc.im, -0.5);
  uint8_t b = 2;
  EXPECT_TRUE(ArgValue::load(t::boolean(), &b).b);
}

TEST(Packing, PlansFillEverySlot) {
  auto arr2 = t::array(t::float64(), 2, ir::Layout::A);
  codegen::PackingPlan plan =
      codegen::buildPackingPlan({t::weakFloat(), t::complex64(), arr2, t::boolean()});
  int64_t shape[2] = {3, 4}, strides[2] = {32, 8};
  ArgValue leaves[] = {ArgValue::floating(0.1), ArgValue::complexNumber(2, 3),
                       ArgValue::array(0x1000, 2, shape, strides), ArgValue::integer(5)};
  std::vector<uint64_t> buf(plan.bufferSize() / 8 + 1, 0);
  char *b = reinterpret_cast<char *>(buf.data());
  compiler::pack(plan, leaves, b);
  auto at = [&](size_t slot) { return b + plan.slots.at(slot).offset; };
  double d;
  float f;
  std::memcpy(&d, at(0), 8);
  EXPECT_EQ(d, 0.1);
  std::memcpy(&f, at(1), 4); // the Python float's float32 copy
  EXPECT_EQ(f, 0.1f);
  std::memcpy(&f, at(2), 4);
  EXPECT_EQ(f, 2.0f);
  std::memcpy(&f, at(3), 4);
  EXPECT_EQ(f, 3.0f);
  uint64_t data;
  int64_t dims[4];
  std::memcpy(&data, at(4), 8);
  EXPECT_EQ(data, 0x1000u);
  for (int k = 0; k < 4; ++k)
    std::memcpy(&dims[k], at(5 + k), 8);
  EXPECT_EQ(dims[0], 3);
  EXPECT_EQ(dims[1], 4);
  EXPECT_EQ(dims[2], 32);
  EXPECT_EQ(dims[3], 8);
  EXPECT_EQ(*reinterpret_cast<uint8_t *>(at(9)), 1);
  std::vector<void *> params(plan.slots.size());
  compiler::pointAtSlots(plan, b, params.data());
  EXPECT_EQ(params[4], at(4));
}

TEST(Packing, AddressSlotsTakeTheIntegerAsIs) {
  codegen::PackingPlan plan = codegen::buildPackingPlan({t::pointer(t::int32()), t::voidPointer()});
  ArgValue leaves[2] = {ArgValue::integer(0x7f0012345678), ArgValue::unsignedInteger(~0ull - 7)};
  alignas(8) char buf[16] = {};
  compiler::pack(plan, leaves, buf);
  uint64_t a, b;
  std::memcpy(&a, buf, 8);
  std::memcpy(&b, buf + 8, 8);
  EXPECT_EQ(a, 0x7f0012345678u);
  EXPECT_EQ(b, ~0ull - 7);
}

TEST(Packing, ArraysBeyondTheLimitAreRefused) {
  int64_t dims[9] = {};
  EXPECT_THROW(ArgValue::array(0, 9, dims, dims), std::invalid_argument);
}
