// Host-backend execution: kernels lowered from typed IR, JIT-compiled with ORC and run over a
// simulated grid; results checked against Python/NumPy semantics.
#include "HostRun.h"
#include "Kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace ptxjit::codegen::test {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

/// Python's a // b on int64 with NumPy's error model (0 for b == 0) and wrap-around.
int64_t pyFloorDiv(int64_t a, int64_t b) {
  if (b == 0)
    return 0;
  if (b == -1)
    return static_cast<int64_t>(0ull - static_cast<uint64_t>(a));
  int64_t q = a / b, r = a % b;
  if (r != 0 && ((r < 0) != (b < 0)))
    --q;
  return q;
}

int64_t pyMod(int64_t a, int64_t b) {
  if (b == 0 || b == -1)
    return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return r;
}

/// Python's int ** int with wrap-around; a negative exponent gives 0 unless |base| == 1.
int64_t pyIntPow(int64_t base, int64_t exp) {
  if (exp < 0)
    return base == 1 ? 1 : base == -1 ? ((exp & 1) ? -1 : 1) : 0;
  uint64_t r = 1, b = static_cast<uint64_t>(base);
  for (uint64_t e = static_cast<uint64_t>(exp); e; e >>= 1) {
    if (e & 1)
      r *= b;
    b *= b;
  }
  return static_cast<int64_t>(r);
}

/// Runs an elementwise kernel over a.size() threads.
template <typename L, typename R, typename O>
std::vector<O> runElementwise(BinaryOp op, const ScalarType *lt, const ScalarType *rt,
                              const Type *result, const ScalarType *ot, std::vector<L> a,
                              std::vector<R> b) {
  auto fn = makeElementwise(op, lt, rt, result, ot);
  HostEntry e = compileHost(*fn);
  std::vector<O> out(a.size());
  KernelArgs args;
  args.vec(a).vec(b).vec(out);
  uint32_t n = static_cast<uint32_t>(a.size());
  launchHost(e, args, {(n + 3) / 4}, {4});
  return out;
}

TEST(HostExec, Saxpy) {
  auto fn = makeSaxpy();
  HostEntry e = compileHost(*fn, "saxpy");
  const int n = 1000;
  std::vector<float> x(n), y(n), out(n, -1.0f);
  for (int k = 0; k < n; ++k) {
    x[k] = 0.5f * k;
    y[k] = 1000.0f - k;
  }
  KernelArgs args;
  args.scalar(2.5f).vec(x).vec(y).vec(out);
  launchHost(e, args, {(n + 127) / 128}, {128}); // more threads than elements
  for (int k = 0; k < n; ++k)
    ASSERT_FLOAT_EQ(out[k], 2.5f * x[k] + y[k]) << k;
}

TEST(HostExec, SaxpyStridedLayoutA) {
  // out/x/y as non-contiguous views (every other element): layout A uses the strides.
  auto fn = makeSaxpy(types::float64(), Layout::A);
  HostEntry e = compileHost(*fn, "saxpy_a");
  const int n = 100;
  std::vector<double> x(2 * n), y(2 * n), out(2 * n, -7.0);
  for (int k = 0; k < 2 * n; ++k) {
    x[k] = k;
    y[k] = 3.0 * k;
  }
  KernelArgs args;
  args.scalar(-1.5)
      .array(x.data(), {n}, {16})
      .array(y.data(), {n}, {16})
      .array(out.data() + 1, {n}, {16});
  launchHost(e, args, {4}, {32});
  for (int k = 0; k < n; ++k) {
    EXPECT_DOUBLE_EQ(out[2 * k + 1], -1.5 * x[2 * k] + y[2 * k]) << k;
    EXPECT_EQ(out[2 * k], -7.0) << "untouched gap " << k;
  }
}

TEST(HostExec, IntFloorDivModWithNegativesAndZero) {
  std::vector<int64_t> vals = {7, -7, 3, -3, 1, -1, 0, 13, -13, kMin, kMax};
  std::vector<int64_t> a, b;
  for (int64_t x : vals)
    for (int64_t y : vals) {
      a.push_back(x);
      b.push_back(y);
    }
  auto i64 = types::int64();
  auto q = runElementwise<int64_t, int64_t, int64_t>(BinaryOp::FloorDiv, i64, i64, i64, i64, a, b);
  auto r = runElementwise<int64_t, int64_t, int64_t>(BinaryOp::Mod, i64, i64, i64, i64, a, b);
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(q[k], pyFloorDiv(a[k], b[k])) << a[k] << " // " << b[k];
    EXPECT_EQ(r[k], pyMod(a[k], b[k])) << a[k] << " % " << b[k];
  }
  // Spot checks against Python directly.
  EXPECT_EQ(pyFloorDiv(-7, 2), -4);
  EXPECT_EQ(pyMod(-7, 2), 1);
  EXPECT_EQ(pyMod(7, -2), -1);
}

TEST(HostExec, UnsignedDivModAndNarrowSigned) {
  auto u32 = types::uint32();
  std::vector<uint32_t> a = {7, 4000000000u, 5, 0}, b = {2, 3, 0, 0};
  auto q =
      runElementwise<uint32_t, uint32_t, uint32_t>(BinaryOp::FloorDiv, u32, u32, u32, u32, a, b);
  auto r = runElementwise<uint32_t, uint32_t, uint32_t>(BinaryOp::Mod, u32, u32, u32, u32, a, b);
  EXPECT_EQ(q, (std::vector<uint32_t>{3, 1333333333u, 0, 0}));
  EXPECT_EQ(r, (std::vector<uint32_t>{1, 1, 0, 0}));
  auto i8 = types::int8();
  std::vector<int8_t> c = {-128, -7, 100}, d = {-1, 2, -3};
  auto q8 = runElementwise<int8_t, int8_t, int8_t>(BinaryOp::FloorDiv, i8, i8, i8, i8, c, d);
  EXPECT_EQ(q8, (std::vector<int8_t>{-128, -4, -34})); // -128 // -1 wraps in int8
}

TEST(HostExec, IntegerArithmeticWraps) {
  auto i64 = types::int64();
  auto s = runElementwise<int64_t, int64_t, int64_t>(BinaryOp::Add, i64, i64, i64, i64,
                                                     {kMax, kMin, 5}, {1, -1, -7});
  EXPECT_EQ(s, (std::vector<int64_t>{kMin, kMax, -2}));
  auto m = runElementwise<int64_t, int64_t, int64_t>(BinaryOp::Mul, i64, i64, i64, i64,
                                                     {kMax, int64_t(1) << 62}, {2, 4});
  EXPECT_EQ(m, (std::vector<int64_t>{-2, 0}));
  auto i8 = types::int8();
  auto s8 =
      runElementwise<int8_t, int8_t, int8_t>(BinaryOp::Add, i8, i8, i8, i8, {127, -128}, {1, -1});
  EXPECT_EQ(s8, (std::vector<int8_t>{-128, 127}));
}

TEST(HostExec, Shifts) {
  auto i64 = types::int64(), u64 = types::uint64();
  auto l = runElementwise<int64_t, int64_t, int64_t>(BinaryOp::LShift, i64, i64, i64, i64,
                                                     {1, 1, 3, 1, -1}, {3, 63, 64, 100, -1});
  EXPECT_EQ(l, (std::vector<int64_t>{8, kMin, 0, 0, 0}));
  auto r = runElementwise<int64_t, int64_t, int64_t>(BinaryOp::RShift, i64, i64, i64, i64,
                                                     {-8, -8, 8, 1024}, {1, 100, 64, 3});
  EXPECT_EQ(r, (std::vector<int64_t>{-4, -1, 0, 128}));
  auto ur = runElementwise<uint64_t, uint64_t, uint64_t>(BinaryOp::RShift, u64, u64, u64, u64,
                                                         {~0ull, ~0ull, 16}, {63, 64, 2});
  EXPECT_EQ(ur, (std::vector<uint64_t>{1, 0, 4}));
}

TEST(HostExec, BitwiseOps) {
  auto i32 = types::int32();
  auto a = runElementwise<int32_t, int32_t, int32_t>(BinaryOp::And, i32, i32, i32, i32, {12, -1},
                                                     {10, 77});
  auto o = runElementwise<int32_t, int32_t, int32_t>(BinaryOp::Or, i32, i32, i32, i32, {12, 0},
                                                     {10, -5});
  auto x = runElementwise<int32_t, int32_t, int32_t>(BinaryOp::Xor, i32, i32, i32, i32, {12, -1},
                                                     {10, 5});
  EXPECT_EQ(a, (std::vector<int32_t>{8, 77}));
  EXPECT_EQ(o, (std::vector<int32_t>{14, -5}));
  EXPECT_EQ(x, (std::vector<int32_t>{6, -6}));
}

TEST(HostExec, IntPowerRuntimeExponent) {
  std::vector<int64_t> base = {2, -2, 3, 2, 1, -1, -1, 2, 3, 0, 7, 5};
  std::vector<int64_t> exp = {10, 3, 0, -1, -5, -3, -4, 63, 40, 0, 1, 27};
  auto i64 = types::int64();
  auto p = runElementwise<int64_t, int64_t, int64_t>(BinaryOp::Pow, i64, i64, i64, i64, base, exp);
  for (size_t k = 0; k < base.size(); ++k)
    EXPECT_EQ(p[k], pyIntPow(base[k], exp[k])) << base[k] << " ** " << exp[k];
  EXPECT_EQ(pyIntPow(2, 10), 1024);
  EXPECT_EQ(pyIntPow(2, 63), kMin);
}

TEST(HostExec, PowerWithConstantExponents) {
  // out[i] = x[i] ** k for literal k (unrolled), for ints and floats.
  for (int64_t k : {0, 1, 2, 3, 5, 16, 17, -1, -2}) {
    for (bool isFloat : {false, true}) {
      const ScalarType *dt = isFloat ? types::float64() : types::int64();
      TypedBuilder b("powk", {"x", "out"}, {arr(dt), arr(dt)});
      b.declare("i", types::int64());
      b.store("i", b.grid(1));
      Instr *v = b.bin(BinaryOp::Pow, b.item(b.load("x"), b.load("i"), dt), b.cint(k), dt);
      b.setItem(b.load("out"), b.load("i"), v);
      b.ret();
      HostEntry e = compileHost(*b.fn);
      if (isFloat) {
        std::vector<double> x = {1.5, -2.0, 0.5, 3.0}, out(4);
        KernelArgs args;
        args.vec(x).vec(out);
        launchHost(e, args, {1}, {4});
        for (int j = 0; j < 4; ++j)
          EXPECT_NEAR(out[j], std::pow(x[j], double(k)),
                      1e-12 * std::fabs(std::pow(x[j], double(k))))
              << x[j] << " ** " << k;
      } else {
        std::vector<int64_t> x = {2, -3, 1, 7}, out(4);
        KernelArgs args;
        args.vec(x).vec(out);
        launchHost(e, args, {1}, {4});
        for (int j = 0; j < 4; ++j)
          EXPECT_EQ(out[j], pyIntPow(x[j], k)) << x[j] << " ** " << k;
      }
    }
  }
}

TEST(HostExec, FloatPowers) {
  auto f64 = types::float64(), i64 = types::int64(), i32 = types::int32();
  std::vector<double> x = {2.0, 1.5, -2.0, 10.0, 0.5};
  auto pi = runElementwise<double, int64_t, double>(BinaryOp::Pow, f64, i64, f64, f64, x,
                                                    {10, -3, 3, 300, int64_t(1) << 40});
  EXPECT_DOUBLE_EQ(pi[0], 1024.0);
  EXPECT_NEAR(pi[1], std::pow(1.5, -3), 1e-15);
  EXPECT_DOUBLE_EQ(pi[2], -8.0);
  EXPECT_NEAR(pi[3], 1e300, 1e286);
  EXPECT_EQ(pi[4], 0.0); // the wide-exponent path: pow(0.5, 2**40)
  auto p32 = runElementwise<double, int32_t, double>(BinaryOp::Pow, f64, i32, f64, f64, {3.0}, {4});
  EXPECT_DOUBLE_EQ(p32[0], 81.0);
  auto pf = runElementwise<double, double, double>(BinaryOp::Pow, f64, f64, f64, f64,
                                                   {2.0, 9.0, -8.0}, {0.5, 0.5, 1.0 / 3});
  EXPECT_DOUBLE_EQ(pf[0], std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(pf[1], 3.0);
  EXPECT_TRUE(std::isnan(pf[2])); // NumPy: nan for a negative base with a fractional exponent
  auto f32 = types::float32();
  auto pff = runElementwise<float, float, float>(BinaryOp::Pow, f32, f32, f32, f32, {4.0f}, {1.5f});
  EXPECT_FLOAT_EQ(pff[0], 8.0f);
}

TEST(HostExec, FloatFloorDivAndModAsPython) {
  auto f64 = types::float64();
  std::vector<double> a = {7.0, -7.0, 7.0, -7.0, 7.0, 1.0, 1.0, -0.0, 0.0, 5.5, -5.5};
  std::vector<double> b = {2.0, 2.0, -2.0, 2.0, -2.0, 0.1, 0.1, 5.0, -5.0, 2.5, 2.5};
  auto q = runElementwise<double, double, double>(BinaryOp::FloorDiv, f64, f64, f64, f64, a, b);
  auto r = runElementwise<double, double, double>(BinaryOp::Mod, f64, f64, f64, f64, a, b);
  // Python: 7.0//2.0 3.0; -7.0//2.0 -4.0; 7.0//-2.0 -4.0; 1.0//0.1 9.0; -0.0//5.0 -0.0
  EXPECT_EQ(q[0], 3.0);
  EXPECT_EQ(q[1], -4.0);
  EXPECT_EQ(q[2], -4.0);
  EXPECT_EQ(q[5], 9.0);
  EXPECT_EQ(q[7], 0.0);
  EXPECT_TRUE(std::signbit(q[7]));
  EXPECT_EQ(q[10], -3.0);
  // Python: -7.0%2.0 1.0; 7.0%-2.0 -1.0; 1.0%0.1 0.09999999999999995; -0.0%5.0 0.0;
  // 0.0%-5.0 -0.0; 5.5%2.5 0.5
  EXPECT_EQ(r[3], 1.0);
  EXPECT_EQ(r[4], -1.0);
  EXPECT_EQ(r[6], 0.09999999999999995);
  EXPECT_EQ(r[7], 0.0);
  EXPECT_FALSE(std::signbit(r[7]));
  EXPECT_EQ(r[8], 0.0);
  EXPECT_TRUE(std::signbit(r[8]));
  EXPECT_EQ(r[9], 0.5);
  // Division by zero follows NumPy: inf/-inf for //, nan for %.
  auto qz = runElementwise<double, double, double>(BinaryOp::FloorDiv, f64, f64, f64, f64,
                                                   {1.0, -1.0}, {0.0, 0.0});
  auto rz = runElementwise<double, double, double>(BinaryOp::Mod, f64, f64, f64, f64, {1.0}, {0.0});
  EXPECT_EQ(qz[0], std::numeric_limits<double>::infinity());
  EXPECT_EQ(qz[1], -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(rz[0]));
}

TEST(HostExec, TrueDivOfIntsIsFloat64) {
  auto i64 = types::int64(), f64 = types::float64();
  auto d = runElementwise<int64_t, int64_t, double>(BinaryOp::TrueDiv, i64, i64, f64, f64,
                                                    {7, -7, 1, 0}, {2, 2, 0, 0});
  EXPECT_EQ(d[0], 3.5);
  EXPECT_EQ(d[1], -3.5);
  EXPECT_EQ(d[2], std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(d[3]));
}

TEST(HostExec, MixedTypePromotionAndStoreConversion) {
  // int32 + float32 computes in float64; the result is stored into an int16 array
  // (truncation toward zero) and into a float32 array.
  auto i32 = types::int32(), f32 = types::float32(), f64 = types::float64();
  auto asInt = runElementwise<int32_t, float, int16_t>(BinaryOp::Add, i32, f32, f64, types::int16(),
                                                       {1, -1, 300}, {1.75f, -1.75f, 0.5f});
  EXPECT_EQ(asInt, (std::vector<int16_t>{2, -2, 300}));
  // 16777217 is not a float32; computing in float64 keeps it exact before the store.
  auto asF64 =
      runElementwise<int32_t, float, double>(BinaryOp::Add, i32, f32, f64, f64, {16777217}, {0.0f});
  EXPECT_EQ(asF64[0], 16777217.0);
  // uint8 + int8 → int16 (NumPy): 200 + (-1) = 199.
  auto u = runElementwise<uint8_t, int8_t, int64_t>(BinaryOp::Add, types::uint8(), types::int8(),
                                                    types::int16(), types::int64(), {200, 255},
                                                    {-1, -128});
  EXPECT_EQ(u, (std::vector<int64_t>{199, 127}));
}

TEST(HostExec, BoolArithmeticAndStorage) {
  auto bt = types::boolean(), i64 = types::int64();
  std::vector<uint8_t> a = {1, 1, 0, 0}, b = {1, 0, 1, 0};
  // bool + bool → int64
  std::vector<int64_t> s(4);
  {
    auto fn = makeElementwise(BinaryOp::Add, bt, bt, i64, i64);
    HostEntry e = compileHost(*fn);
    KernelArgs args;
    args.vec(a).vec(b).vec(s);
    launchHost(e, args, {1}, {4});
  }
  EXPECT_EQ(s, (std::vector<int64_t>{2, 1, 1, 0}));
  // bool & bool → bool, stored as bytes 0/1.
  std::vector<uint8_t> x(4, 0xAA), o(4, 0xAA);
  {
    auto fn = makeElementwise(BinaryOp::Xor, bt, bt, bt, bt);
    HostEntry e = compileHost(*fn);
    KernelArgs args;
    args.vec(a).vec(b).vec(x);
    launchHost(e, args, {1}, {4});
    auto fo = makeElementwise(BinaryOp::Or, bt, bt, bt, bt);
    HostEntry eo = compileHost(*fo);
    KernelArgs args2;
    args2.vec(a).vec(b).vec(o);
    launchHost(eo, args2, {1}, {4});
  }
  EXPECT_EQ(x, (std::vector<uint8_t>{0, 1, 1, 0}));
  EXPECT_EQ(o, (std::vector<uint8_t>{1, 1, 1, 0}));
  // A float stored into a bool array is its truth value (nan is true).
  std::vector<double> f = {0.0, -0.0, 2.5, std::nan("")};
  std::vector<uint8_t> fb(4, 7);
  {
    TypedBuilder b2("tobool", {"x", "out"}, {arr(types::float64()), arr(bt)});
    b2.declare("i", i64);
    b2.store("i", b2.grid(1));
    b2.setItem(b2.load("out"), b2.load("i"), b2.item(b2.load("x"), b2.load("i"), types::float64()));
    b2.ret();
    HostEntry e = compileHost(*b2.fn);
    KernelArgs args;
    args.vec(f).vec(fb);
    launchHost(e, args, {1}, {4});
  }
  EXPECT_EQ(fb, (std::vector<uint8_t>{0, 0, 1, 1}));
}

TEST(HostExec, ComparisonsFollowIeeeAndPromotion) {
  // out[i] = a[i] <cmp> b[i] for several comparisons, packed as bits.
  double nan = std::nan("");
  std::vector<double> a = {1.0, nan, nan, 2.0, -0.0};
  std::vector<double> b = {2.0, nan, 1.0, 2.0, 0.0};
  auto f64 = types::float64();
  TypedBuilder bld("cmps", {"a", "b", "out"}, {arr(f64), arr(f64), arr(types::int64())});
  bld.declare("i", types::int64());
  bld.declare("acc", types::int64());
  bld.store("i", bld.grid(1));
  bld.store("acc", bld.cint(0, types::int64()));
  int bit = 0;
  for (CmpOp op : {CmpOp::Lt, CmpOp::Le, CmpOp::Eq, CmpOp::Ne, CmpOp::Gt, CmpOp::Ge}) {
    Instr *c = bld.cmp(op, bld.item(bld.load("a"), bld.load("i"), f64),
                       bld.item(bld.load("b"), bld.load("i"), f64));
    Instr *shifted = bld.bin(BinaryOp::LShift, c, bld.cint(bit++), types::int64());
    bld.store("acc", bld.bin(BinaryOp::Or, bld.load("acc"), shifted, types::int64()));
  }
  bld.setItem(bld.load("out"), bld.load("i"), bld.load("acc"));
  bld.ret();
  HostEntry e = compileHost(*bld.fn);
  std::vector<int64_t> out(5);
  KernelArgs args;
  args.vec(a).vec(b).vec(out);
  launchHost(e, args, {1}, {5});
  auto expect = [](double x, double y) {
    return int64_t(x < y) | int64_t(x <= y) << 1 | int64_t(x == y) << 2 | int64_t(x != y) << 3 |
           int64_t(x > y) << 4 | int64_t(x >= y) << 5;
  };
  for (size_t k = 0; k < a.size(); ++k)
    EXPECT_EQ(out[k], expect(a[k], b[k])) << k;
  EXPECT_EQ(out[1], 8); // nan: only != holds
}

TEST(HostExec, SignedUnsignedComparisonViaFloat64) {
  // int64 < uint64 compares in float64 (NumPy promotion): -1 < 2**63 is true.
  TypedBuilder b("sucmp", {"a", "u", "out"},
                 {arr(types::int64()), arr(types::uint64()), arr(types::boolean())});
  b.declare("i", types::int64());
  b.store("i", b.grid(1));
  b.setItem(b.load("out"), b.load("i"),
            b.cmp(CmpOp::Lt, b.item(b.load("a"), b.load("i"), types::int64()),
                  b.item(b.load("u"), b.load("i"), types::uint64())));
  b.ret();
  HostEntry e = compileHost(*b.fn);
  std::vector<int64_t> a = {-1, 5};
  std::vector<uint64_t> u = {1ull << 63, 3};
  std::vector<uint8_t> out(2, 9);
  KernelArgs args;
  args.vec(a).vec(u).vec(out);
  launchHost(e, args, {1}, {2});
  EXPECT_EQ(out, (std::vector<uint8_t>{1, 0}));
}

TEST(HostExec, WeakLiteralsAdoptTheOtherType) {
  // x (float32) * 0.1 stays float32: the literal is rounded to float32 first.
  TypedBuilder b("weak", {"x", "out"}, {arr(types::float32()), arr(types::float32())});
  b.declare("i", types::int64());
  b.store("i", b.grid(1));
  Instr *v = b.bin(BinaryOp::Mul, b.item(b.load("x"), b.load("i"), types::float32()), b.cfloat(0.1),
                   types::float32());
  // + (3 // 2): a BinOp of two weak literals, computed in the default int64 type.
  Instr *w = b.bin(BinaryOp::FloorDiv, b.cint(3), b.cint(2), types::weakInt());
  b.setItem(b.load("out"), b.load("i"), b.bin(BinaryOp::Add, v, w, types::float32()));
  b.ret();
  HostEntry e = compileHost(*b.fn);
  std::vector<float> x = {3.0f, 1e8f}, out(2);
  KernelArgs args;
  args.vec(x).vec(out);
  launchHost(e, args, {1}, {2});
  EXPECT_EQ(out[0], 3.0f * 0.1f + 1.0f);
  EXPECT_EQ(out[1], 1e8f * 0.1f + 1.0f);
}

TEST(HostExec, UnaryOperators) {
  TypedBuilder b(
      "unary", {"a", "f", "out", "fout"},
      {arr(types::int32()), arr(types::float64()), arr(types::int32()), arr(types::float64())});
  b.declare("i", types::int64());
  b.store("i", b.grid(1));
  Instr *ai = b.item(b.load("a"), b.load("i"), types::int32());
  Instr *fi = b.item(b.load("f"), b.load("i"), types::float64());
  // out[4i..4i+3] = -a, ~a, not a, +a;   fout[i] = -f
  Instr *base = b.bin(BinaryOp::Mul, b.load("i"), b.cint(4), types::int64());
  b.setItem(b.load("out"), base, b.unary(UnaryOpKind::Neg, ai, types::int32()));
  b.setItem(b.load("out"), b.bin(BinaryOp::Add, base, b.cint(1), types::int64()),
            b.unary(UnaryOpKind::Invert, ai, types::int32()));
  b.setItem(b.load("out"), b.bin(BinaryOp::Add, base, b.cint(2), types::int64()),
            b.unary(UnaryOpKind::Not, ai, types::boolean()));
  b.setItem(b.load("out"), b.bin(BinaryOp::Add, base, b.cint(3), types::int64()),
            b.unary(UnaryOpKind::Pos, ai, types::int32()));
  b.setItem(b.load("fout"), b.load("i"), b.unary(UnaryOpKind::Neg, fi, types::float64()));
  b.ret();
  HostEntry e = compileHost(*b.fn);
  std::vector<int32_t> a = {5, 0, std::numeric_limits<int32_t>::min()}, out(12);
  std::vector<double> f = {1.5, 0.0, -2.0}, fout(3);
  KernelArgs args;
  args.vec(a).vec(f).vec(out).vec(fout);
  launchHost(e, args, {1}, {3});
  EXPECT_EQ(out, (std::vector<int32_t>{
                     -5, -6, 0, 5, 0, -1, 1, 0, std::numeric_limits<int32_t>::min(),
                     std::numeric_limits<int32_t>::max(), 0, std::numeric_limits<int32_t>::min()}));
  EXPECT_EQ(fout[0], -1.5);
  EXPECT_TRUE(std::signbit(fout[1])); // -0.0
  EXPECT_EQ(fout[2], 2.0);
}

/// def k(out, start, stop, step):
///     acc = 0; n = 0
///     for v in range(start, stop, step): acc += v; n += 1
///     out[0] = acc; out[1] = n; out[2] = len(range(start, stop, step))
std::vector<int64_t> runRange(int64_t start, int64_t stop, int64_t step) {
  auto i64 = types::int64();
  TypedBuilder b("ranges", {"out", "start", "stop", "step"}, {arr(i64), i64, i64, i64});
  b.declare("acc", i64);
  b.declare("n", i64);
  b.declare("v", i64);
  b.store("acc", b.cint(0));
  b.store("n", b.cint(0));
  b.forRange("v", {b.load("start"), b.load("stop"), b.load("step")}, [&] {
    b.store("acc", b.bin(BinaryOp::Add, b.load("acc"), b.load("v"), i64));
    b.store("n", b.bin(BinaryOp::Add, b.load("n"), b.cint(1), i64));
  });
  b.setItem(b.load("out"), b.cint(0), b.load("acc"));
  b.setItem(b.load("out"), b.cint(1), b.load("n"));
  Instr *r = b.builtin("builtins.range", {b.load("start"), b.load("stop"), b.load("step")},
                       types::range());
  b.setItem(b.load("out"), b.cint(2), b.builtin("builtins.len", {r}, i64));
  b.ret();
  static HostEntry e = nullptr;
  if (!e)
    e = compileHost(*b.fn);
  std::vector<int64_t> out(3, -99);
  KernelArgs args;
  args.vec(out).scalar(start).scalar(stop).scalar(step);
  launchHost(e, args, {1}, {1});
  return out;
}

TEST(HostExec, RangeLoops) {
  EXPECT_EQ(runRange(0, 10, 1), (std::vector<int64_t>{45, 10, 10}));
  EXPECT_EQ(runRange(10, 0, -3), (std::vector<int64_t>{22, 4, 4})); // 10 7 4 1
  EXPECT_EQ(runRange(-5, 5, 4), (std::vector<int64_t>{-3, 3, 3}));  // -5 -1 3
  EXPECT_EQ(runRange(5, 0, 1), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(runRange(0, 5, -1), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(runRange(3, 3, 1), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(runRange(0, 7, 0), (std::vector<int64_t>{0, 0, 0})); // a zero step yields nothing
  EXPECT_EQ(runRange(-1, -10, -2), (std::vector<int64_t>{-25, 5, 5}));
}

TEST(HostExec, NestedLoopsWithOneArgRange) {
  // for i in range(n): for j in range(i): acc += j * m     (m a float: acc float64)
  auto i64 = types::int64(), f64 = types::float64();
  TypedBuilder b("nested", {"out", "n", "m"}, {arr(f64), i64, f64});
  b.declare("acc", f64);
  b.declare("i", i64);
  b.declare("j", i64);
  b.store("acc", b.cint(0));
  b.forRange("i", {b.load("n")}, [&] {
    b.forRange("j", {b.load("i")}, [&] {
      b.store("acc", b.bin(BinaryOp::Add, b.load("acc"),
                           b.bin(BinaryOp::Mul, b.load("j"), b.load("m"), f64), f64));
    });
  });
  b.setItem(b.load("out"), b.cint(0), b.load("acc"));
  b.ret();
  HostEntry e = compileHost(*b.fn);
  std::vector<double> out(1);
  KernelArgs args;
  args.vec(out).scalar<int64_t>(6).scalar(0.5);
  launchHost(e, args, {1}, {1});
  double expect = 0;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < i; ++j)
      expect += j * 0.5;
  EXPECT_EQ(out[0], expect);
}

TEST(HostExec, ThreadIndicesAndGrid2D) {
  // out[y, x] = (threadIdx.x, threadIdx.y, blockIdx.x, blockIdx.y, blockDim.x, gridDim.y,
  //              gridsize(2)[0]) packed, for a 2-d grid; (x, y) = cuda.grid(2).
  auto i64 = types::int64(), i32 = types::int32();
  TypedBuilder b("idx2d", {"out"}, {arr(i64, 3)});
  const Type *pair = types::tuple({i64, i64});
  b.declare("xy", pair);
  b.declare("x", i64);
  b.declare("y", i64);
  b.store("xy", b.grid(2));
  b.store("x", b.tupleGet(b.load("xy"), 0));
  b.store("y", b.tupleGet(b.load("xy"), 1));
  auto put = [&](int k, Instr *v) {
    b.setItem(b.load("out"), b.tuple({b.load("y"), b.load("x"), b.cint(k, i64)}), v);
  };
  put(0, b.threadAttr("threadIdx", "x"));
  put(1, b.threadAttr("threadIdx", "y"));
  put(2, b.threadAttr("blockIdx", "x"));
  put(3, b.threadAttr("blockIdx", "y"));
  put(4, b.threadAttr("blockDim", "x"));
  put(5, b.threadAttr("gridDim", "y"));
  Instr *gs = b.grid(2, /*gridsize=*/true);
  put(6, b.tupleGet(gs, 0));
  (void)i32;
  b.ret();
  HostEntry e = compileHost(*b.fn);
  const int bx = 3, by = 2, gx = 2, gy = 3, W = bx * gx, H = by * gy;
  std::vector<int64_t> out(W * H * 7, -1);
  KernelArgs args;
  args.array(out.data(), {H, W, 7}, {W * 7 * 8, 7 * 8, 8});
  launchHost(e, args, {gx, gy}, {bx, by});
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      const int64_t *o = &out[(y * W + x) * 7];
      EXPECT_EQ(o[0], x % bx);
      EXPECT_EQ(o[1], y % by);
      EXPECT_EQ(o[2], x / bx);
      EXPECT_EQ(o[3], y / by);
      EXPECT_EQ(o[4], bx);
      EXPECT_EQ(o[5], gy);
      EXPECT_EQ(o[6], W);
    }
}

TEST(HostExec, TwoDimensionalLayoutsAndNegativeIndices) {
  // out[i, j] = a[i, j] + a[-1, -1] for C, F and A (strided) 2-d arrays; a.shape used.
  for (Layout layout : {Layout::C, Layout::F, Layout::A}) {
    auto f64 = types::float64(), i64 = types::int64();
    TypedBuilder b("twod", {"a", "out"}, {arr(f64, 2, layout), arr(f64, 2, layout)});
    const Type *pair = types::tuple({i64, i64});
    b.declare("ij", pair);
    b.store("ij", b.grid(2));
    Instr *shape = b.attr(b.load("a"), "shape", pair, BuiltinId::ArrayShape);
    Instr *inside = b.bin(
        BinaryOp::And, b.cmp(CmpOp::Lt, b.tupleGet(b.load("ij"), 0), b.tupleGet(shape, 0)),
        b.cmp(CmpOp::Lt, b.tupleGet(b.load("ij"), 1), b.tupleGet(shape, 1)), types::boolean());
    b.ifThen(inside, [&] {
      Instr *last = b.item(b.load("a"), b.tuple({b.cint(-1), b.cint(-1)}), f64);
      Instr *v = b.bin(BinaryOp::Add, b.item(b.load("a"), b.load("ij"), f64), last, f64);
      b.setItem(b.load("out"), b.load("ij"), v);
    });
    b.ret();
    HostEntry e = compileHost(*b.fn);
    const int R = 3, C = 5;
    // Storage 2x larger in the second dimension for layout A (a strided view).
    int step = layout == Layout::A ? 2 : 1;
    std::vector<double> a(R * C * step, 0.0), out(R * C * step, 0.0);
    auto at = [&](int i, int j) -> size_t {
      return layout == Layout::F ? size_t(j * R + i) : size_t((i * C + j) * step);
    };
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < C; ++j)
        a[at(i, j)] = 10 * i + j;
    std::vector<int64_t> strides = layout == Layout::F
                                       ? std::vector<int64_t>{8, R * 8}
                                       : std::vector<int64_t>{C * step * 8, step * 8};
    KernelArgs args;
    args.array(a.data(), {R, C}, strides).array(out.data(), {R, C}, strides);
    launchHost(e, args, {2, 2}, {4, 4});
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < C; ++j)
        EXPECT_EQ(out[at(i, j)], 10 * i + j + 24)
            << "layout " << int(layout) << " " << i << "," << j;
  }
}

TEST(HostExec, SubarrayViewAndArrayAttributes) {
  // row = a[i]; out[i] = row[1] + len(row) * 100 + a.size * 1000 + a.ndim * 10000
  auto i64 = types::int64();
  TypedBuilder b("rows", {"a", "out"}, {arr(i64, 2), arr(i64)});
  b.declare("i", i64);
  b.declare("row", arr(i64, 1));
  b.store("i", b.grid(1));
  b.store("row", b.item(b.load("a"), b.load("i"), arr(i64, 1)));
  Instr *v = b.item(b.load("row"), b.cint(1), i64);
  Instr *len = b.builtin("builtins.len", {b.load("row")}, i64);
  v = b.bin(BinaryOp::Add, v, b.bin(BinaryOp::Mul, len, b.cint(100), i64), i64);
  Instr *size = b.attr(b.load("a"), "size", i64, BuiltinId::ArraySize);
  v = b.bin(BinaryOp::Add, v, b.bin(BinaryOp::Mul, size, b.cint(1000), i64), i64);
  Instr *nd = b.attr(b.load("a"), "ndim", i64, BuiltinId::ArrayNdim);
  v = b.bin(BinaryOp::Add, v, b.bin(BinaryOp::Mul, nd, b.cint(10000), i64), i64);
  b.setItem(b.load("out"), b.load("i"), v);
  b.ret();
  HostEntry e = compileHost(*b.fn);
  std::vector<int64_t> a = {1, 2, 3, 4, 5, 6}, out(2);
  KernelArgs args;
  args.array(a.data(), {2, 3}, {24, 8}).vec(out);
  launchHost(e, args, {1}, {2});
  EXPECT_EQ(out, (std::vector<int64_t>{2 + 300 + 6000 + 20000, 5 + 300 + 6000 + 20000}));
}

TEST(HostExec, BuiltinsIntFloatBoolAbsMinMax) {
  auto i64 = types::int64(), f64 = types::float64(), i32 = types::int32();
  TypedBuilder b("builtins", {"f", "n", "out", "fout"}, {f64, i32, arr(i64), arr(f64)});
  auto put = [&](int k, Instr *v) { b.setItem(b.load("out"), b.cint(k), v); };
  auto putf = [&](int k, Instr *v) { b.setItem(b.load("fout"), b.cint(k), v); };
  put(0, b.builtin("builtins.int", {b.load("f")}, i64));                        // int(-2.75) = -2
  put(1, b.builtin("builtins.bool", {b.load("f")}, types::boolean()));          // True
  put(2, b.builtin("builtins.abs", {b.load("n")}, i32));                        // abs(-7) = 7
  put(3, b.builtin("builtins.min", {b.cint(3), b.load("n"), b.cint(-2)}, i64)); // -7
  put(4, b.builtin("builtins.max", {b.cint(3), b.load("n"), b.cint(-2)}, i64)); // 3
  put(5, b.builtin("builtins.int", {}, i64));                                   // 0
  putf(0, b.builtin("builtins.float", {b.load("n")}, f64));                     // -7.0
  putf(1, b.builtin("builtins.abs", {b.load("f")}, f64));                       // 2.75
  putf(2, b.builtin("builtins.max", {b.load("f"), b.load("n")}, f64));          // -2.75
  putf(3, b.builtin("builtins.min", {b.tuple({b.cfloat(1.5), b.load("f")})}, f64)); // -2.75
  b.ret();
  HostEntry e = compileHost(*b.fn);
  std::vector<int64_t> out(6, 99);
  std::vector<double> fout(4, 99);
  KernelArgs args;
  args.scalar(-2.75).scalar<int32_t>(-7).vec(out).vec(fout);
  launchHost(e, args, {1}, {1});
  EXPECT_EQ(out, (std::vector<int64_t>{-2, 1, 7, -7, 3, 0}));
  EXPECT_EQ(fout, (std::vector<double>{-7.0, 2.75, -2.75, -2.75}));
}

TEST(HostExec, MinMaxNanRules) {
  // Two floats: numba-cuda's fmin/fmax (PTX min/max), a NaN gives the other operand, +0.0 >
  // -0.0. Three operands: Python's rule, min(nan, 1.0, 1.0) is nan (a candidate replaces only
  // when <).
  auto f64 = types::float64();
  TypedBuilder b("mm", {"a", "b", "z", "out"}, {f64, f64, f64, arr(f64)});
  auto set = [&](int k, const char *fn, std::vector<Instr *> ops) {
    b.setItem(b.load("out"), b.cint(k), b.builtin(fn, ops, f64));
  };
  set(0, "builtins.min", {b.load("a"), b.load("b")});
  set(1, "builtins.min", {b.load("b"), b.load("a")});
  set(2, "builtins.max", {b.load("a"), b.load("b")});
  set(3, "builtins.min", {b.load("a"), b.load("b"), b.load("b")});
  set(4, "builtins.max", {b.load("z"), b.unary(UnaryOpKind::Neg, b.load("z"), f64)});
  set(5, "builtins.min", {b.load("z"), b.unary(UnaryOpKind::Neg, b.load("z"), f64)});
  b.ret();
  HostEntry e = compileHost(*b.fn);
  std::vector<double> out(6);
  KernelArgs args;
  args.scalar(std::nan("")).scalar(1.0).scalar(0.0).vec(out);
  launchHost(e, args, {1}, {1});
  EXPECT_EQ(out[0], 1.0);
  EXPECT_EQ(out[1], 1.0);
  EXPECT_EQ(out[2], 1.0);
  EXPECT_TRUE(std::isnan(out[3]));
  EXPECT_FALSE(std::signbit(out[4])); // max(0.0, -0.0) = +0.0
  EXPECT_TRUE(std::signbit(out[5]));  // min(0.0, -0.0) = -0.0
}

[[noreturn]] void neverExitThread(const void *) {
  std::fprintf(stderr, "unexpected thread exit\n");
  std::abort();
}

TEST(HostExec, TuplesConstantIndexInAndEquality) {
  auto i64 = types::int64();
  TypedBuilder b("tuples", {"x", "out"}, {i64, arr(i64)});
  const Type *t3 = types::tuple({i64, types::float64(), i64});
  b.declare("t", t3);
  b.store("t", b.tuple({b.load("x"), b.cfloat(2.5, types::float64()), b.cint(7, i64)}));
  b.setItem(b.load("out"), b.cint(0), b.item(b.load("t"), b.cint(-1), i64)); // t[-1] = 7
  b.setItem(b.load("out"), b.cint(1),
            b.item(b.load("t"), b.cint(1), types::float64())); // int(2.5) on store = 2
  Instr *in = b.cmp(CmpOp::In, b.load("x"), b.tuple({b.cint(1), b.cint(5), b.cint(9)}));
  b.setItem(b.load("out"), b.cint(2), in);
  Instr *eq = b.cmp(CmpOp::Eq, b.tuple({b.load("x"), b.cint(7)}), b.tuple({b.cint(5), b.cint(7)}));
  b.setItem(b.load("out"), b.cint(3), eq);
  // A homogeneous tuple indexed at run time: (10, 20, 30)[x - 4] (x = 5 → 20).
  Instr *u = b.tuple({b.cint(10, i64), b.cint(20, i64), b.cint(30, i64)});
  b.setItem(b.load("out"), b.cint(4),
            b.item(u, b.bin(BinaryOp::Sub, b.load("x"), b.cint(4), i64), i64));
  b.ret();
  // Out of range, the run-time index raises IndexError: the kernel refers to the runtime's
  // thread exit, which this in-range index never calls.
  defineHostSymbols({{"ptxjit_host_exit_thread", reinterpret_cast<void *>(&neverExitThread)}});
  HostEntry e = compileHost(*b.fn);
  std::vector<int64_t> out(5, -1);
  KernelArgs args;
  args.scalar<int64_t>(5).vec(out);
  launchHost(e, args, {1}, {1});
  EXPECT_EQ(out, (std::vector<int64_t>{7, 2, 1, 1, 20}));
}

TEST(HostExec, DeviceFunctionsCallsAndKeywords) {
  auto i64 = types::int64(), f64 = types::float64(), i32 = types::int32();
  // def scale(v, k): return v * k + 1.0          (float64, int64) -> float64
  TypedBuilder s("scale", {"v", "k"}, {f64, i64}, FunctionKind::Device, f64);
  s.ret(s.bin(BinaryOp::Add, s.bin(BinaryOp::Mul, s.load("v"), s.load("k"), f64), s.cfloat(1.0),
              f64));
  // def twice(v): return scale(v, 2) + scale(k=3, v=v)   (calls scale twice, keywords)
  TypedBuilder t("twice", {"v"}, {f64}, FunctionKind::Device, f64);
  Instr *c1 = t.callDevice(s.fn.get(), {t.load("v"), t.cint(2)});
  Instr *c2 = t.callDevice(s.fn.get(), {t.cint(3), t.load("v")}, {"k", "v"});
  t.ret(t.bin(BinaryOp::Add, c1, c2, f64));
  // def store(out, i, v): out[i] = v     (returns None)
  TypedBuilder st("store", {"out", "i", "v"}, {arr(f64), i64, f64}, FunctionKind::Device,
                  types::none());
  st.setItem(st.load("out"), st.load("i"), st.load("v"));
  st.ret();
  // kernel: i = grid(1); store(out, i, twice(x[i]))  with x int32 (converted at the call)
  TypedBuilder k("calls", {"x", "out"}, {arr(i32), arr(f64)});
  k.declare("i", i64);
  k.store("i", k.grid(1));
  Instr *xi = k.item(k.load("x"), k.load("i"), i32);
  k.callDevice(st.fn.get(), {k.load("out"), k.load("i"), k.callDevice(t.fn.get(), {xi})});
  k.ret();
  CompileOptions o;
  o.backend = Backend::Host;
  LoweredModule m = lowerKernel(*k.fn, o, "calls");
  std::string ir = m.llvmIR();
  // Each device function once, with internal linkage.
  EXPECT_NE(ir.find("define internal double @ptxjit_dev_scale("), std::string::npos) << ir;
  EXPECT_EQ(ir.find("define internal double @ptxjit_dev_scale_1("), std::string::npos) << ir;
  EXPECT_NE(ir.find("define internal void @ptxjit_dev_store("), std::string::npos) << ir;
  HostEntry e = reinterpret_cast<HostEntry>(addToHostJIT(std::move(m), o));
  std::vector<int32_t> x = {1, -2, 10};
  std::vector<double> out(3);
  KernelArgs args;
  args.vec(x).vec(out);
  launchHost(e, args, {1}, {3});
  for (int j = 0; j < 3; ++j)
    EXPECT_EQ(out[j], (x[j] * 2 + 1.0) + (x[j] * 3 + 1.0));
}

TEST(HostExec, DeviceFunctionReadsThreadIndex) {
  // def tid(): return cuda.threadIdx.x + cuda.blockIdx.x * 1000   (int32 arithmetic)
  auto i32 = types::int32(), i64 = types::int64();
  TypedBuilder d("tid", {}, {}, FunctionKind::Device, i32);
  d.ret(d.bin(BinaryOp::Add, d.threadAttr("threadIdx", "x"),
              d.bin(BinaryOp::Mul, d.threadAttr("blockIdx", "x"), d.cint(1000), i32), i32));
  TypedBuilder k("ktid", {"out"}, {arr(i64)});
  k.setItem(k.load("out"), k.grid(1), k.callDevice(d.fn.get(), {}));
  k.ret();
  HostEntry e = compileHost(*k.fn);
  std::vector<int64_t> out(6);
  KernelArgs args;
  args.vec(out);
  launchHost(e, args, {2}, {3});
  EXPECT_EQ(out, (std::vector<int64_t>{0, 1, 2, 1000, 1001, 1002}));
}

TEST(HostExec, LowerDeviceFunctionOnHost) {
  // An externally visible device function: (int64, float64[:]) -> float64, plus ctx.
  auto i64 = types::int64(), f64 = types::float64();
  TypedBuilder d("pick", {"i", "a"}, {i64, arr(f64)}, FunctionKind::Device, f64);
  d.ret(d.bin(BinaryOp::Mul, d.item(d.load("a"), d.load("i"), f64), d.cint(2), f64));
  CompileOptions o;
  o.backend = Backend::Host;
  LoweredModule m = lowerDeviceFunction(*d.fn, o, "pick_dev");
  using Fn = double (*)(int64_t, double *, int64_t, int64_t, const HostThreadCtx *);
  auto f = reinterpret_cast<Fn>(addToHostJIT(std::move(m), o));
  std::vector<double> a = {1.0, 2.0, 3.5};
  HostThreadCtx c{};
  EXPECT_EQ(f(-1, a.data(), 3, 8, &c), 7.0);
  EXPECT_EQ(f(0, a.data(), 3, 8, &c), 2.0);
}

TEST(HostExec, ComplexArithmetic) {
  auto c128 = types::complex128();
  using C = std::complex<double>;
  std::vector<C> za = {{1, 2}, {-3, 0.5}, {0, 1}}, zb = {{3, -1}, {2, 2}, {1e-3, 4}};
  for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::TrueDiv}) {
    auto out = runElementwise<C, C, C>(op, c128, c128, c128, c128, za, zb);
    for (size_t k = 0; k < za.size(); ++k) {
      C expect = op == BinaryOp::Add   ? za[k] + zb[k]
                 : op == BinaryOp::Sub ? za[k] - zb[k]
                 : op == BinaryOp::Mul ? za[k] * zb[k]
                                       : za[k] / zb[k];
      EXPECT_NEAR(out[k].real(), expect.real(), 1e-12) << int(op) << " " << k;
      EXPECT_NEAR(out[k].imag(), expect.imag(), 1e-12) << int(op) << " " << k;
    }
  }
  // abs(complex64) as float32, and a complex kernel parameter (two floats).
  TypedBuilder b("cabs", {"z", "out"}, {types::complex64(), arr(types::float32())});
  b.setItem(b.load("out"), b.cint(0), b.builtin("builtins.abs", {b.load("z")}, types::float32()));
  b.setItem(b.load("out"), b.cint(1), b.attr(b.load("z"), "imag", types::float32()));
  b.ret();
  HostEntry e = compileHost(*b.fn);
  std::vector<float> out(2);
  KernelArgs args;
  args.scalar(3.0f).scalar(-4.0f).vec(out);
  launchHost(e, args, {1}, {1});
  EXPECT_FLOAT_EQ(out[0], 5.0f);
  EXPECT_FLOAT_EQ(out[1], -4.0f);
}

TEST(HostExec, BoolAndTupleParameters) {
  // def k(flag, pair, out): out[0] = pair[0] if flag else pair[1]   (flag bool, pair (int32, f64))
  auto i64 = types::int64();
  const Type *pair = types::tuple({types::int32(), types::float64()});
  TypedBuilder b("params", {"flag", "pair", "out"}, {types::boolean(), pair, arr(i64)});
  Block *t = b.newBlock(), *f = b.newBlock();
  b.branch(b.load("flag"), t, f);
  b.at(t);
  b.setItem(b.load("out"), b.cint(0), b.tupleGet(b.load("pair"), 0));
  b.ret();
  b.at(f);
  b.setItem(b.load("out"), b.cint(0), b.tupleGet(b.load("pair"), 1));
  b.ret();
  HostEntry e = compileHost(*b.fn);
  for (bool flag : {true, false}) {
    std::vector<int64_t> out(1);
    KernelArgs args;
    args.boolean(flag).scalar<int32_t>(-12).scalar(99.9).vec(out);
    launchHost(e, args, {1}, {1});
    EXPECT_EQ(out[0], flag ? -12 : 99);
  }
}

TEST(HostExec, ArrayIteration) {
  // for v in a: acc += v     (1-d float32 array, acc float64)
  auto f32 = types::float32(), f64 = types::float64();
  TypedBuilder b("iterarr", {"a", "out"}, {arr(f32, 1, Layout::A), arr(f64)});
  b.declare("acc", f64);
  b.declare("v", f32);
  b.store("acc", b.cint(0));
  const Type *itType = types::iterator(IterKind::Array, f32, {arr(f32, 1, Layout::A)});
  b.declare("$it", itType);
  b.store("$it", b.add<GetIterInstr>(itType, b.load("a")));
  Block *header = b.newBlock(), *body = b.newBlock(), *exit = b.newBlock();
  b.jump(header);
  b.at(header);
  b.branch(b.add<IterValidInstr>(types::boolean(), b.load("$it")), body, exit);
  b.at(body);
  b.store("v", b.add<IterNextInstr>(f32, b.load("$it")));
  b.store("acc", b.bin(BinaryOp::Add, b.load("acc"), b.load("v"), f64));
  b.jump(header);
  b.at(exit);
  b.setItem(b.load("out"), b.cint(0), b.load("acc"));
  b.ret();
  HostEntry e = compileHost(*b.fn);
  std::vector<float> a = {1.5f, 100.0f, 2.25f, 100.0f, -4.0f};
  std::vector<double> out(1);
  KernelArgs args;
  args.array(a.data(), {3}, {8}).vec(out); // every other element
  launchHost(e, args, {1}, {1});
  EXPECT_EQ(out[0], 1.5 + 2.25 - 4.0);
}

TEST(HostExec, Fastmath) {
  CompileOptions o;
  o.fastmath = true;
  auto fn = makeSaxpy(types::float32());
  HostEntry e = compileHost(*fn, "saxpy_fast", o);
  std::vector<float> x = {1, 2, 3}, y = {4, 5, 6}, out(3);
  KernelArgs args;
  args.scalar(2.0f).vec(x).vec(y).vec(out);
  launchHost(e, args, {1}, {3});
  EXPECT_EQ(out, (std::vector<float>{6, 9, 12}));
}

} // namespace
} // namespace ptxjit::codegen::test
