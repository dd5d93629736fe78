// The CPU backend's libdevice: a host version of every __nv_* function in ir/typing/Libdevice.def,
// so that kernels calling ptxjit.cuda.libdevice.<name> run on the host JIT, which resolves
// __nv_<name> to the address registered here (codegen/HostLibdevice.h).
//
// Each function has the C signature of libdevice's LLVM declaration (checked at compile time
// against the .def's type letters) and the CUDA Math API's semantics:
//  - the explicitly rounded operations (_rn, _rz, _ru, _rd) switch the host's rounding mode
//    around one IEEE operation and restore it (this file must be compiled with -frounding-math,
//    and operands are read through volatile so that nothing is folded or moved out of the window);
//  - float-to-integer conversions follow PTX cvt: round in the named mode, NaN gives 0 and
//    out-of-range values saturate to the destination type;
//  - the approximate __nv_fast_* return the precise result;
//  - functions glibc lacks (erfinv, erfcinv, erfcx, normcdf, normcdfinv, sinpi, cospi, rcbrt,
//    rsqrt) are implemented here; float versions of special functions are computed in double.
#include "codegen/HostLibdevice.h"

#include "ir/Half.h"

#include <algorithm>
#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>

namespace ptxjit::codegen {
namespace {

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Reads `x` through a volatile glvalue: the load happens where it is written, after a
/// preceding fesetround, and the compiler cannot fold the operation it feeds.
template <class T> T vol(const T &x) { return *static_cast<const volatile T *>(&x); }

/// Runs `op` in the IEEE rounding mode `Mode` (FE_TONEAREST, ...) and restores the caller's.
template <int Mode, class Op> auto inMode(Op op) {
  const int old = std::fegetround();
  if (old != Mode)
    std::fesetround(Mode);
  volatile auto result = op(); // stored before the mode is restored
  if (old != Mode)
    std::fesetround(old);
  return result;
}

/// Defines host_<op>_rn, _rz, _ru and _rd from the template op<Mode>.
#define PTXJIT_ALL_MODES(op, R, params, args)                                                      \
  R host_##op##_rn params { return op<FE_TONEAREST> args; }                                        \
  R host_##op##_rz params { return op<FE_TOWARDZERO> args; }                                       \
  R host_##op##_ru params { return op<FE_UPWARD> args; }                                           \
  R host_##op##_rd params { return op<FE_DOWNWARD> args; }

enum class Rounding { Nearest, Zero, Up, Down };

/// `x` rounded to the nearest integral value, ties to even, whatever the host's current mode
/// (std::round rounds ties away from zero; a tie is x - trunc(x) == 0.5, computed exactly).
template <class T> T roundEven(T x) {
  if (std::fabs(x - std::trunc(x)) == T(0.5))
    return 2 * std::round(x / 2);
  return std::round(x);
}

/// `x` rounded to an integral value in the given direction (Nearest is ties-to-even, as PTX's
/// .rni), independent of the host's mode.
template <Rounding R> double roundIntegral(double x) {
  if constexpr (R == Rounding::Nearest)
    return roundEven(x);
  else if constexpr (R == Rounding::Zero)
    return std::trunc(x);
  else if constexpr (R == Rounding::Up)
    return std::ceil(x);
  else
    return std::floor(x);
}

/// PTX cvt.r*i.<I>.f64: `x` rounded in direction R, NaN converted to 0 and values outside I's
/// range saturated to its minimum or maximum. (float arguments convert to double exactly.)
template <class I, Rounding R> I cvt(double x) {
  using L = std::numeric_limits<I>;
  if (std::isnan(x))
    return 0;
  const double r = roundIntegral<R>(x);
  if (r <= static_cast<double>(L::min()))
    return L::min();
  // double(max) is max itself for 32-bit I and 2^63 or 2^64 for 64-bit I: below it, r fits.
  if (r >= static_cast<double>(L::max()))
    return L::max();
  return static_cast<I>(r);
}

/// The four host_<prefix>_r{n,z,u,d}: double or float to I, returned as the declaration's
/// signed type Ret (unsigned results keep their bits).
#define PTXJIT_CVT(prefix, From, I, Ret)                                                           \
  Ret host_##prefix##_rn(From x) { return static_cast<Ret>(cvt<I, Rounding::Nearest>(x)); }        \
  Ret host_##prefix##_rz(From x) { return static_cast<Ret>(cvt<I, Rounding::Zero>(x)); }           \
  Ret host_##prefix##_ru(From x) { return static_cast<Ret>(cvt<I, Rounding::Up>(x)); }             \
  Ret host_##prefix##_rd(From x) { return static_cast<Ret>(cvt<I, Rounding::Down>(x)); }

// ---------------------------------------------------------------------------------------------
// Integer functions
// ---------------------------------------------------------------------------------------------

int32_t host_abs(int32_t x) { return x < 0 ? static_cast<int32_t>(0u - uint32_t(x)) : x; }
int64_t host_llabs(int64_t x) { return x < 0 ? static_cast<int64_t>(0ull - uint64_t(x)) : x; }

int32_t host_min(int32_t a, int32_t b) { return std::min(a, b); }
int32_t host_max(int32_t a, int32_t b) { return std::max(a, b); }
int32_t host_umin(int32_t a, int32_t b) { return int32_t(std::min(uint32_t(a), uint32_t(b))); }
int32_t host_umax(int32_t a, int32_t b) { return int32_t(std::max(uint32_t(a), uint32_t(b))); }
int64_t host_llmin(int64_t a, int64_t b) { return std::min(a, b); }
int64_t host_llmax(int64_t a, int64_t b) { return std::max(a, b); }
int64_t host_ullmin(int64_t a, int64_t b) { return int64_t(std::min(uint64_t(a), uint64_t(b))); }
int64_t host_ullmax(int64_t a, int64_t b) { return int64_t(std::max(uint64_t(a), uint64_t(b))); }

// |x - y| + z, with wrap-around (PTX sad.s32 / sad.u32).
int32_t host_sad(int32_t x, int32_t y, int32_t z) {
  const uint32_t d = x < y ? uint32_t(y) - uint32_t(x) : uint32_t(x) - uint32_t(y);
  return int32_t(d + uint32_t(z));
}
int32_t host_usad(int32_t x, int32_t y, int32_t z) {
  const uint32_t ux = uint32_t(x), uy = uint32_t(y);
  return int32_t((ux < uy ? uy - ux : ux - uy) + uint32_t(z));
}

// Averages without intermediate overflow: (a + b) >> 1 and (a + b + 1) >> 1.
int32_t host_hadd(int32_t a, int32_t b) { return (a & b) + ((a ^ b) >> 1); }
int32_t host_rhadd(int32_t a, int32_t b) { return (a | b) - ((a ^ b) >> 1); }
int32_t host_uhadd(int32_t a, int32_t b) {
  const uint32_t x = uint32_t(a), y = uint32_t(b);
  return int32_t((x & y) + ((x ^ y) >> 1));
}
int32_t host_urhadd(int32_t a, int32_t b) {
  const uint32_t x = uint32_t(a), y = uint32_t(b);
  return int32_t((x | y) - ((x ^ y) >> 1));
}

// High halves of the full products.
int32_t host_mulhi(int32_t a, int32_t b) { return int32_t((int64_t(a) * int64_t(b)) >> 32); }
int32_t host_umulhi(int32_t a, int32_t b) {
  return int32_t(uint32_t((uint64_t(uint32_t(a)) * uint32_t(b)) >> 32));
}
int64_t host_mul64hi(int64_t a, int64_t b) {
  return int64_t((static_cast<__int128>(a) * static_cast<__int128>(b)) >> 64);
}
int64_t host_umul64hi(int64_t a, int64_t b) {
  using U128 = unsigned __int128;
  return int64_t(uint64_t((static_cast<U128>(uint64_t(a)) * static_cast<U128>(uint64_t(b))) >> 64));
}

// The low 32 bits of the product of the low 24 bits of each operand, sign- or zero-extended.
int32_t host_mul24(int32_t a, int32_t b) {
  const int64_t x = int32_t(uint32_t(a) << 8) >> 8, y = int32_t(uint32_t(b) << 8) >> 8;
  return int32_t(uint32_t(uint64_t(x * y)));
}
int32_t host_umul24(int32_t a, int32_t b) {
  return int32_t((uint32_t(a) & 0xFFFFFFu) * (uint32_t(b) & 0xFFFFFFu));
}

// PTX prmt in its default mode, as libdevice uses it: selector nibble n (only its low 3 bits;
// the sign-replicate bit is masked off) picks result byte n out of the 8 bytes {b, a}.
int32_t host_byte_perm(int32_t a, int32_t b, int32_t s) {
  const uint64_t bytes = (uint64_t(uint32_t(b)) << 32) | uint32_t(a);
  uint32_t r = 0;
  for (int n = 0; n < 4; ++n) {
    const unsigned sel = (uint32_t(s) >> (4 * n)) & 7u;
    r |= uint32_t((bytes >> (8 * sel)) & 0xFFu) << (8 * n);
  }
  return int32_t(r);
}

uint64_t reverseBits(uint64_t v) {
  v = ((v >> 1) & 0x5555555555555555ull) | ((v & 0x5555555555555555ull) << 1);
  v = ((v >> 2) & 0x3333333333333333ull) | ((v & 0x3333333333333333ull) << 2);
  v = ((v >> 4) & 0x0F0F0F0F0F0F0F0Full) | ((v & 0x0F0F0F0F0F0F0F0Full) << 4);
  v = ((v >> 8) & 0x00FF00FF00FF00FFull) | ((v & 0x00FF00FF00FF00FFull) << 8);
  v = ((v >> 16) & 0x0000FFFF0000FFFFull) | ((v & 0x0000FFFF0000FFFFull) << 16);
  return (v >> 32) | (v << 32);
}
int32_t host_brev(int32_t x) { return int32_t(uint32_t(reverseBits(uint32_t(x)) >> 32)); }
int64_t host_brevll(int64_t x) { return int64_t(reverseBits(uint64_t(x))); }

int32_t host_clz(int32_t x) { return std::countl_zero(uint32_t(x)); }
int32_t host_clzll(int64_t x) { return std::countl_zero(uint64_t(x)); }
// The 1-based position of the least significant set bit; 0 for 0.
int32_t host_ffs(int32_t x) { return x == 0 ? 0 : std::countr_zero(uint32_t(x)) + 1; }
int32_t host_ffsll(int64_t x) { return x == 0 ? 0 : std::countr_zero(uint64_t(x)) + 1; }
int32_t host_popc(int32_t x) { return std::popcount(uint32_t(x)); }
int32_t host_popcll(int64_t x) { return std::popcount(uint64_t(x)); }

// ---------------------------------------------------------------------------------------------
// Bit casts
// ---------------------------------------------------------------------------------------------

int32_t host_float_as_int(float x) { return std::bit_cast<int32_t>(x); }
float host_int_as_float(int32_t x) { return std::bit_cast<float>(x); }
int64_t host_double_as_longlong(double x) { return std::bit_cast<int64_t>(x); }
double host_longlong_as_double(int64_t x) { return std::bit_cast<double>(x); }
int32_t host_double2hiint(double x) { return int32_t(uint32_t(std::bit_cast<uint64_t>(x) >> 32)); }
int32_t host_double2loint(double x) { return int32_t(uint32_t(std::bit_cast<uint64_t>(x))); }
double host_hiloint2double(int32_t hi, int32_t lo) {
  return std::bit_cast<double>((uint64_t(uint32_t(hi)) << 32) | uint32_t(lo));
}

// ---------------------------------------------------------------------------------------------
// Conversions: floating point to integer (PTX cvt: rounded, NaN -> 0, saturated)
// ---------------------------------------------------------------------------------------------

PTXJIT_CVT(float2int, float, int32_t, int32_t)
PTXJIT_CVT(float2uint, float, uint32_t, int32_t)
PTXJIT_CVT(float2ll, float, int64_t, int64_t)
PTXJIT_CVT(float2ull, float, uint64_t, int64_t)
PTXJIT_CVT(double2int, double, int32_t, int32_t)
PTXJIT_CVT(double2uint, double, uint32_t, int32_t)
PTXJIT_CVT(double2ll, double, int64_t, int64_t)
PTXJIT_CVT(double2ull, double, uint64_t, int64_t)

// CUDA leaves out-of-range results of llrint/llround undefined; these use cvt's saturation too.
int64_t host_llrint(double x) { return cvt<int64_t, Rounding::Nearest>(x); }
int64_t host_llrintf(float x) { return cvt<int64_t, Rounding::Nearest>(x); }
int64_t host_llround(double x) { return cvt<int64_t, Rounding::Zero>(std::round(x)); }
int64_t host_llroundf(float x) { return cvt<int64_t, Rounding::Zero>(std::round(double(x))); }

// ---------------------------------------------------------------------------------------------
// Conversions to floating point in a rounding mode
// ---------------------------------------------------------------------------------------------

template <int M> float double2float(double x) {
  return inMode<M>([&] { return static_cast<float>(vol(x)); });
}
template <int M> float int2float(int32_t x) {
  return inMode<M>([&] { return static_cast<float>(vol(x)); });
}
template <int M> float uint2float(int32_t x) {
  return inMode<M>([&] { return static_cast<float>(uint32_t(vol(x))); });
}
template <int M> float ll2float(int64_t x) {
  return inMode<M>([&] { return static_cast<float>(vol(x)); });
}
template <int M> float ull2float(int64_t x) {
  return inMode<M>([&] { return static_cast<float>(uint64_t(vol(x))); });
}
template <int M> double ll2double(int64_t x) {
  return inMode<M>([&] { return static_cast<double>(vol(x)); });
}
template <int M> double ull2double(int64_t x) {
  return inMode<M>([&] { return static_cast<double>(uint64_t(vol(x))); });
}
PTXJIT_ALL_MODES(double2float, float, (double x), (x))
PTXJIT_ALL_MODES(int2float, float, (int32_t x), (x))
PTXJIT_ALL_MODES(uint2float, float, (int32_t x), (x))
PTXJIT_ALL_MODES(ll2float, float, (int64_t x), (x))
PTXJIT_ALL_MODES(ull2float, float, (int64_t x), (x))
PTXJIT_ALL_MODES(ll2double, double, (int64_t x), (x))
PTXJIT_ALL_MODES(ull2double, double, (int64_t x), (x))

// Exact: every 32-bit integer is a double.
double host_int2double_rn(int32_t x) { return double(x); }
double host_uint2double_rn(int32_t x) { return double(uint32_t(x)); }

// ---------------------------------------------------------------------------------------------
// Half precision (IEEE binary16 bits). libdevice declares these with `zeroext i16`, so the host
// versions use uint16_t: the same bits, zero-extended as that declaration promises.
// ---------------------------------------------------------------------------------------------

// Round to nearest even (ir/Half.h; float widens to double exactly, so one rounding); overflow
// gives infinity; NaN gives NVIDIA's canonical half NaN 0x7FFF.
uint16_t host_float2half_rn(float f) { return std::isnan(f) ? 0x7FFF : ir::halfFromDouble(f); }

float host_half2float(uint16_t h) {
  const uint32_t exp = (h >> 10) & 0x1Fu, mant = h & 0x3FFu;
  if (exp == 0x1F && mant) // NaN with its payload (made quiet)
    return std::bit_cast<float>((uint32_t(h & 0x8000u) << 16) | 0x7FC00000u | (mant << 13));
  return float(ir::halfToDouble(h)); // exact
}

// ---------------------------------------------------------------------------------------------
// Arithmetic in a rounding mode
// ---------------------------------------------------------------------------------------------

// One IEEE operation in mode M, for float and double alike.
template <int M, class T> T addIn(T a, T b) {
  return inMode<M>([&] { return vol(a) + vol(b); });
}
template <int M, class T> T subIn(T a, T b) {
  return inMode<M>([&] { return vol(a) - vol(b); });
}
template <int M, class T> T mulIn(T a, T b) {
  return inMode<M>([&] { return vol(a) * vol(b); });
}
template <int M, class T> T divIn(T a, T b) {
  return inMode<M>([&] { return vol(a) / vol(b); });
}
template <int M, class T> T rcpIn(T a) {
  return inMode<M>([&] { return T(1) / vol(a); });
}
template <int M, class T> T sqrtIn(T a) {
  return inMode<M>([&] { return std::sqrt(vol(a)); });
}
template <int M, class T> T fmaIn(T a, T b, T c) {
  return inMode<M>([&] { return std::fma(vol(a), vol(b), vol(c)); });
}
#define PTXJIT_ROUNDED_OPS(name, op, R, params, args)                                              \
  R host_##name##_rn params { return op<FE_TONEAREST, R> args; }                                   \
  R host_##name##_rz params { return op<FE_TOWARDZERO, R> args; }                                  \
  R host_##name##_ru params { return op<FE_UPWARD, R> args; }                                      \
  R host_##name##_rd params { return op<FE_DOWNWARD, R> args; }

PTXJIT_ROUNDED_OPS(fadd, addIn, float, (float a, float b), (a, b))
PTXJIT_ROUNDED_OPS(fsub, subIn, float, (float a, float b), (a, b))
PTXJIT_ROUNDED_OPS(fmul, mulIn, float, (float a, float b), (a, b))
PTXJIT_ROUNDED_OPS(fdiv, divIn, float, (float a, float b), (a, b))
PTXJIT_ROUNDED_OPS(frcp, rcpIn, float, (float a), (a))
PTXJIT_ROUNDED_OPS(fsqrt, sqrtIn, float, (float a), (a))
PTXJIT_ROUNDED_OPS(fmaf, fmaIn, float, (float a, float b, float c), (a, b, c))
PTXJIT_ROUNDED_OPS(dadd, addIn, double, (double a, double b), (a, b))
PTXJIT_ROUNDED_OPS(dmul, mulIn, double, (double a, double b), (a, b))
PTXJIT_ROUNDED_OPS(ddiv, divIn, double, (double a, double b), (a, b))
PTXJIT_ROUNDED_OPS(drcp, rcpIn, double, (double a), (a))
PTXJIT_ROUNDED_OPS(dsqrt, sqrtIn, double, (double a), (a))
PTXJIT_ROUNDED_OPS(fma, fmaIn, double, (double a, double b, double c), (a, b, c))
#undef PTXJIT_ROUNDED_OPS

// 1/sqrt(x) rounded once: the double result is within an ulp of double of the exact value, so
// rounding it to float is correct except in (vanishingly rare) near-halfway cases.
float host_frsqrt_rn(float x) {
  return inMode<FE_TONEAREST>([&] { return float(1.0 / std::sqrt(double(vol(x)))); });
}

// Unsuffixed: round to nearest (the only mode the GPU's unsuffixed operations use).
double host_fma(double a, double b, double c) { return std::fma(a, b, c); }
float host_fmaf(float a, float b, float c) { return std::fma(a, b, c); }

// ---------------------------------------------------------------------------------------------
// Classification, sign, rounding to integral values, and exact operations
// ---------------------------------------------------------------------------------------------

int32_t host_finitef(float x) { return std::isfinite(x) ? 1 : 0; }
int32_t host_isfinited(double x) { return std::isfinite(x) ? 1 : 0; }
int32_t host_isinff(float x) { return std::isinf(x) ? 1 : 0; }
int32_t host_isinfd(double x) { return std::isinf(x) ? 1 : 0; }
int32_t host_isnanf(float x) { return std::isnan(x) ? 1 : 0; }
int32_t host_isnand(double x) { return std::isnan(x) ? 1 : 0; }
int32_t host_signbitf(float x) { return std::signbit(x) ? 1 : 0; }
int32_t host_signbitd(double x) { return std::signbit(x) ? 1 : 0; }

// Clamp to [0, 1]; NaN gives +0 (PTX .sat).
float host_saturatef(float x) { return std::isnan(x) ? 0.0f : std::clamp(x, 0.0f, 1.0f); }

double host_fabs(double x) { return std::fabs(x); }
float host_fabsf(float x) { return std::fabs(x); }
double host_copysign(double x, double y) { return std::copysign(x, y); }
float host_copysignf(float x, float y) { return std::copysign(x, y); }
double host_fmax(double x, double y) { return std::fmax(x, y); } // NaN only if both are
float host_fmaxf(float x, float y) { return std::fmax(x, y); }
double host_fmin(double x, double y) { return std::fmin(x, y); }
float host_fminf(float x, float y) { return std::fmin(x, y); }
double host_fdim(double x, double y) { return std::fdim(x, y); }
float host_fdimf(float x, float y) { return std::fdim(x, y); }

double host_ceil(double x) { return std::ceil(x); }
float host_ceilf(float x) { return std::ceil(x); }
double host_floor(double x) { return std::floor(x); }
float host_floorf(float x) { return std::floor(x); }
double host_trunc(double x) { return std::trunc(x); }
float host_truncf(float x) { return std::trunc(x); }
double host_round(double x) { return std::round(x); } // halfway cases away from zero
float host_roundf(float x) { return std::round(x); }
// rint and nearbyint round ties to even whatever the host's current mode (as on the GPU).
double host_rint(double x) { return roundEven(x); }
float host_rintf(float x) { return roundEven(x); }
double host_nearbyint(double x) { return roundEven(x); }
float host_nearbyintf(float x) { return roundEven(x); }

double host_fmod(double x, double y) { return std::fmod(x, y); }
float host_fmodf(float x, float y) { return std::fmod(x, y); }
double host_remainder(double x, double y) { return std::remainder(x, y); }
float host_remainderf(float x, float y) { return std::remainder(x, y); }
// The quotient's sign and (at least) its low 3 bits, as C99 and CUDA specify.
double host_remquo(double x, double y, int32_t *q) { return std::remquo(x, y, q); }
float host_remquof(float x, float y, int32_t *q) { return std::remquo(x, y, q); }
double host_modf(double x, double *ip) { return std::modf(x, ip); }
float host_modff(float x, float *ip) { return std::modf(x, ip); }
// The exponent is 0 for zero, infinity and NaN.
double host_frexp(double x, int32_t *e) { return std::frexp(x, e); }
float host_frexpf(float x, int32_t *e) { return std::frexp(x, e); }
double host_ldexp(double x, int32_t e) { return std::ldexp(x, e); }
float host_ldexpf(float x, int32_t e) { return std::ldexp(x, e); }
double host_scalbn(double x, int32_t e) { return std::scalbn(x, e); }
float host_scalbnf(float x, int32_t e) { return std::scalbn(x, e); }
double host_nextafter(double x, double y) { return std::nextafter(x, y); }
float host_nextafterf(float x, float y) { return std::nextafter(x, y); }
double host_logb(double x) { return std::logb(x); }
float host_logbf(float x) { return std::logb(x); }

// CUDA: INT_MIN for 0 and NaN, INT_MAX for infinities (not left to FP_ILOGB0/FP_ILOGBNAN).
int32_t ilogbOf(double x) {
  if (std::isnan(x) || x == 0)
    return std::numeric_limits<int32_t>::min();
  if (std::isinf(x))
    return std::numeric_limits<int32_t>::max();
  return std::ilogb(x);
}
int32_t host_ilogb(double x) { return ilogbOf(x); }
int32_t host_ilogbf(float x) { return ilogbOf(x); }

// ---------------------------------------------------------------------------------------------
// Elementary functions (libm), and the precise results for the __nv_fast_* approximations
// ---------------------------------------------------------------------------------------------

double host_sqrt(double x) { return std::sqrt(x); }
float host_sqrtf(float x) { return std::sqrt(x); }
double host_cbrt(double x) { return std::cbrt(x); }
float host_cbrtf(float x) { return std::cbrt(x); }
double host_hypot(double x, double y) { return std::hypot(x, y); }
float host_hypotf(float x, float y) { return std::hypot(x, y); }
// Computed in long double (or double for float) and rounded once: within an ulp.
double host_rsqrt(double x) { return double(1.0L / std::sqrt(static_cast<long double>(x))); }
float host_rsqrtf(float x) { return float(1.0 / std::sqrt(double(x))); }
double host_rcbrt(double x) { return double(1.0L / std::cbrt(static_cast<long double>(x))); }
float host_rcbrtf(float x) { return float(1.0 / std::cbrt(double(x))); }

double host_exp(double x) { return std::exp(x); }
float host_expf(float x) { return std::exp(x); }
double host_exp2(double x) { return std::exp2(x); }
float host_exp2f(float x) { return std::exp2(x); }
#if defined(__GLIBC__)
double host_exp10(double x) { return ::exp10(x); }
float host_exp10f(float x) { return ::exp10f(x); }
#else
double host_exp10(double x) { return std::pow(10.0, x); }
float host_exp10f(float x) { return float(std::pow(10.0, double(x))); }
#endif
double host_expm1(double x) { return std::expm1(x); }
float host_expm1f(float x) { return std::expm1(x); }
double host_log(double x) { return std::log(x); }
float host_logf(float x) { return std::log(x); }
double host_log2(double x) { return std::log2(x); }
float host_log2f(float x) { return std::log2(x); }
double host_log10(double x) { return std::log10(x); }
float host_log10f(float x) { return std::log10(x); }
double host_log1p(double x) { return std::log1p(x); }
float host_log1pf(float x) { return std::log1p(x); }
double host_pow(double x, double y) { return std::pow(x, y); }
float host_powf(float x, float y) { return std::pow(x, y); }

// libdevice's powi: x^n by binary exponentiation in T (n < 0: the reciprocal of x^|n|), so the
// result matches the GPU's bit for bit rather than pow's.
template <class T> T powiOf(T x, int32_t n) {
  uint32_t e = n < 0 ? 0u - uint32_t(n) : uint32_t(n);
  T r = 1, b = x;
  for (;;) {
    if (e & 1u)
      r *= b;
    e >>= 1;
    if (e == 0)
      break;
    b *= b;
  }
  return n < 0 ? T(1) / r : r;
}
double host_powi(double x, int32_t n) { return powiOf(x, n); }
float host_powif(float x, int32_t n) { return powiOf(x, n); }

double host_sin(double x) { return std::sin(x); }
float host_sinf(float x) { return std::sin(x); }
double host_cos(double x) { return std::cos(x); }
float host_cosf(float x) { return std::cos(x); }
double host_tan(double x) { return std::tan(x); }
float host_tanf(float x) { return std::tan(x); }
void host_sincos(double x, double *s, double *c) {
  *s = std::sin(x);
  *c = std::cos(x);
}
void host_sincosf(float x, float *s, float *c) {
  *s = std::sin(x);
  *c = std::cos(x);
}
double host_asin(double x) { return std::asin(x); }
float host_asinf(float x) { return std::asin(x); }
double host_acos(double x) { return std::acos(x); }
float host_acosf(float x) { return std::acos(x); }
double host_atan(double x) { return std::atan(x); }
float host_atanf(float x) { return std::atan(x); }
double host_atan2(double y, double x) { return std::atan2(y, x); }
float host_atan2f(float y, float x) { return std::atan2(y, x); }
double host_sinh(double x) { return std::sinh(x); }
float host_sinhf(float x) { return std::sinh(x); }
double host_cosh(double x) { return std::cosh(x); }
float host_coshf(float x) { return std::cosh(x); }
double host_tanh(double x) { return std::tanh(x); }
float host_tanhf(float x) { return std::tanh(x); }
double host_asinh(double x) { return std::asinh(x); }
float host_asinhf(float x) { return std::asinh(x); }
double host_acosh(double x) { return std::acosh(x); }
float host_acoshf(float x) { return std::acosh(x); }
double host_atanh(double x) { return std::atanh(x); }
float host_atanhf(float x) { return std::atanh(x); }

// The GPU's __fdividef, __expf, ... trade accuracy (and range, for __fdividef) for speed; on
// the host the precise function is as fast as anything else, so these return its result.
float host_fast_fdividef(float x, float y) { return x / y; }
float host_fast_expf(float x) { return std::exp(x); }
float host_fast_exp10f(float x) { return host_exp10f(x); }
float host_fast_logf(float x) { return std::log(x); }
float host_fast_log2f(float x) { return std::log2(x); }
float host_fast_log10f(float x) { return std::log10(x); }
float host_fast_powf(float x, float y) { return std::pow(x, y); }
float host_fast_sinf(float x) { return std::sin(x); }
float host_fast_cosf(float x) { return std::cos(x); }
float host_fast_tanf(float x) { return std::tan(x); }
void host_fast_sincosf(float x, float *s, float *c) { host_sincosf(x, s, c); }

// ---------------------------------------------------------------------------------------------
// sin(pi x) and cos(pi x): exact argument reduction, so integers and half-integers give exact
// zeros and ones (sinpi(1) == 0, not sin(M_PI)).
// ---------------------------------------------------------------------------------------------

/// sin(pi a) for a in [0, 1], folded so that every reduction step is exact (Sterbenz) and the
/// remaining product with pi is done in long double.
double sinPiUnit(double a) {
  constexpr long double pi = 3.141592653589793238462643383279502884L;
  if (a <= 0.25)
    return double(std::sin(pi * a));
  if (a <= 0.75)
    return double(std::cos(pi * (0.5 - a)));
  return double(std::sin(pi * (1.0 - a)));
}
/// cos(pi a) for a in [0, 1].
double cosPiUnit(double a) {
  constexpr long double pi = 3.141592653589793238462643383279502884L;
  if (a <= 0.25)
    return double(std::cos(pi * a));
  if (a <= 0.75)
    return double(std::sin(pi * (0.5 - a))); // +0 at a == 0.5
  return -double(std::cos(pi * (1.0 - a)));
}

double sinPi(double x) {
  if (!std::isfinite(x))
    return std::numeric_limits<double>::quiet_NaN();
  const double r = std::remainder(x, 2.0); // exact, in [-1, 1]
  const double s = sinPiUnit(std::fabs(r));
  // sin(pi r) has r's sign; a zero result (integral x) takes x's sign, as sinpi(-0) == -0.
  return s == 0 ? std::copysign(0.0, x) : std::copysign(s, r);
}
double cosPi(double x) {
  if (!std::isfinite(x))
    return std::numeric_limits<double>::quiet_NaN();
  return cosPiUnit(std::fabs(std::remainder(x, 2.0)));
}

double host_sinpi(double x) { return sinPi(x); }
float host_sinpif(float x) { return float(sinPi(x)); }
double host_cospi(double x) { return cosPi(x); }
float host_cospif(float x) { return float(cosPi(x)); }
void host_sincospi(double x, double *s, double *c) {
  *s = sinPi(x);
  *c = cosPi(x);
}
void host_sincospif(float x, float *s, float *c) {
  *s = float(sinPi(x));
  *c = float(cosPi(x));
}

// ---------------------------------------------------------------------------------------------
// Error function family
// ---------------------------------------------------------------------------------------------

double host_erf(double x) { return std::erf(x); }
float host_erff(float x) { return std::erf(x); }
double host_erfc(double x) { return std::erfc(x); }
float host_erfcf(float x) { return std::erfc(x); }

constexpr double kInvSqrtPi = M_2_SQRTPI / 2; // 1/sqrt(pi)

/// The scaled complementary error function exp(x^2) erfc(x).
double erfcxOf(double x) {
  if (std::isnan(x))
    return x;
  if (x < 26.0) {
    // x^2 as hi + lo (exactly), so that exp(x^2) = exp(hi) (1 + lo) carries no error from
    // rounding x^2; erfc is accurate in relative terms down to its underflow near 26.5.
    const double hi = x * x, lo = std::fma(x, x, -hi);
    return std::exp(hi) * std::erfc(x) * (1.0 + lo);
  }
  // Asymptotic series 1/(x sqrt(pi)) sum_k (-1)^k (2k-1)!! / (2x^2)^k: for x >= 26 the ninth
  // term is below 1e-19 relative. (For huge x, 1/(2x^2) becomes 0 and the sum 1.)
  const double u = 0.5 / x / x;
  double term = 1, sum = 1;
  for (int k = 1; k <= 8; ++k) {
    term *= -(2 * k - 1) * u;
    sum += term;
  }
  return kInvSqrtPi / x * sum;
}
double host_erfcx(double x) { return erfcxOf(x); }
float host_erfcxf(float x) { return float(erfcxOf(x)); }

/// Mike Giles' single-precision erfinv approximation ("Approximating the erfinv function", GPU
/// Computing Gems Jade Edition, 2011): erfinv(y) ~ result * y for w = -log((1-y)(1+y)). Used
/// only as the starting point of Newton iterations.
double gilesErfinvFactor(double w) {
  double p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = std::sqrt(w) - 3.0;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  return p;
}

/// erfinv(y) for |y| <= 0.5: Newton's method on erf(x) = y (erf' = 2/sqrt(pi) exp(-x^2) is
/// near 1 here, so the iteration is well conditioned).
double erfinvCentral(double y) {
  if (y == 0)
    return y;
  double x = gilesErfinvFactor(-std::log1p(-y * y)) * y;
  for (int k = 0; k < 3; ++k)
    x -= (std::erf(x) - y) / (M_2_SQRTPI * std::exp(-x * x));
  return x;
}

/// erfcinv(z) for 0 < z <= 0.5 (x >= 0.47): Newton's method on log(erfc(x)) = log(z), with
/// log(erfc(x)) = log(erfcx(x)) - x^2, which stays accurate where erfc(x) is tiny or
/// subnormal (erfc(x) - z would lose all precision as z -> 0, as erf(x) - y does as y -> 1).
double erfcinvTail(double z) {
  double x;
  if (z > 1e-7) { // w < 16: within the range Giles fitted (float arguments)
    x = gilesErfinvFactor(-std::log(z * (2.0 - z))) * (1.0 - z);
  } else { // erfc(x) ~ exp(-x^2) / (x sqrt(pi)), solved for x by fixed-point iteration
    const double l = -std::log(z);
    x = std::sqrt(l);
    for (int k = 0; k < 3; ++k)
      x = std::sqrt(l - std::log(x / kInvSqrtPi));
  }
  // log(erfc(x)) is concave and decreasing, so Newton's iterates converge monotonically.
  const double logZ = std::log(z);
  for (int k = 0; k < 10; ++k) {
    const double e = erfcxOf(x);
    const double hi = x * x, lo = std::fma(x, x, -hi);
    const double g = ((std::log(e) - logZ) - hi) - lo; // log(erfc(x) / z)
    const double step = g * e / M_2_SQRTPI;            // g / (d/dx log erfc(x))
    x += step;
    if (std::fabs(step) <= 0x1p-54 * x)
      break;
  }
  return x;
}

double erfinvOf(double y) {
  if (std::isnan(y))
    return y;
  const double a = std::fabs(y);
  if (a > 1)
    return std::numeric_limits<double>::quiet_NaN();
  if (a == 1)
    return std::copysign(std::numeric_limits<double>::infinity(), y);
  if (a <= 0.5)
    return erfinvCentral(y);
  return std::copysign(erfcinvTail(1.0 - a), y); // 1 - a is exact for a in [0.5, 1]
}

double erfcinvOf(double z) {
  if (std::isnan(z))
    return z;
  if (z < 0 || z > 2)
    return std::numeric_limits<double>::quiet_NaN();
  if (z == 0)
    return std::numeric_limits<double>::infinity();
  if (z == 2)
    return -std::numeric_limits<double>::infinity();
  if (z <= 0.5)
    return erfcinvTail(z);
  if (z >= 1.5)
    return -erfcinvTail(2.0 - z); // exact
  return erfinvCentral(1.0 - z);  // exact
}

double host_erfinv(double y) { return erfinvOf(y); }
float host_erfinvf(float y) { return float(erfinvOf(y)); }
double host_erfcinv(double z) { return erfcinvOf(z); }
float host_erfcinvf(float z) { return float(erfcinvOf(z)); }

/// The standard normal CDF, erfc(-x/sqrt(2)) / 2. The argument is formed as hi + lo and lo is
/// applied as a first-order correction (erfc' = -2/sqrt(pi) exp(-y^2)): in the lower tail the
/// rounding of x/sqrt(2) would otherwise cost up to x^2 ulps.
double normcdfOf(double x) {
  if (!std::isfinite(x))
    return std::isnan(x) ? x : (x > 0 ? 1.0 : 0.0);
  constexpr double c = M_SQRT1_2, cLo = -4.8336466567264565e-17; // 1/sqrt(2) = c + cLo
  const double hi = -x * c;
  const double lo = std::fma(-x, c, -hi) - x * cLo;
  return 0.5 * (std::erfc(hi) - M_2_SQRTPI * std::exp(-hi * hi) * lo);
}
/// Its inverse, -sqrt(2) erfcinv(2p) (2p is exact).
double normcdfinvOf(double p) {
  const double r = -M_SQRT2 * erfcinvOf(2.0 * p);
  return r == 0 ? 0.0 : r; // +0 at p = 0.5
}
double host_normcdf(double x) { return normcdfOf(x); }
float host_normcdff(float x) { return float(normcdfOf(x)); }
double host_normcdfinv(double p) { return normcdfinvOf(p); }
float host_normcdfinvf(float p) { return float(normcdfinvOf(p)); }

// ---------------------------------------------------------------------------------------------
// Gamma and Bessel functions
// ---------------------------------------------------------------------------------------------

double host_tgamma(double x) { return std::tgamma(x); }
// In double: glibc's tgammaf is not exact even for small integers (tgammaf(4) != 6).
float host_tgammaf(float x) { return float(std::tgamma(double(x))); }
// lgamma_r: plain lgamma writes the global signgam, a data race between kernel threads.
double host_lgamma(double x) {
  int sign;
  return ::lgamma_r(x, &sign);
}
float host_lgammaf(float x) {
  int sign;
  return float(::lgamma_r(double(x), &sign));
}

// First kind. CUDA returns NaN for a negative order (glibc would use J_-n = (-1)^n J_n).
double besselJ(int32_t n, double x) {
  if (n < 0)
    return std::numeric_limits<double>::quiet_NaN();
  return n == 0 ? ::j0(x) : n == 1 ? ::j1(x) : ::jn(n, x);
}
// Second kind. CUDA: NaN for a negative order or x < 0, -infinity at x == 0.
double besselY(int32_t n, double x) {
  if (n < 0 || x < 0 || std::isnan(x))
    return std::numeric_limits<double>::quiet_NaN();
  if (x == 0)
    return -std::numeric_limits<double>::infinity();
  return n == 0 ? ::y0(x) : n == 1 ? ::y1(x) : ::yn(n, x);
}
// The float versions are computed in double (glibc's j0f/y0f are inaccurate near their zeros).
double host_j0(double x) { return besselJ(0, x); }
float host_j0f(float x) { return float(besselJ(0, x)); }
double host_j1(double x) { return besselJ(1, x); }
float host_j1f(float x) { return float(besselJ(1, x)); }
double host_jn(int32_t n, double x) { return besselJ(n, x); }
float host_jnf(int32_t n, float x) { return float(besselJ(n, x)); }
double host_y0(double x) { return besselY(0, x); }
float host_y0f(float x) { return float(besselY(0, x)); }
double host_y1(double x) { return besselY(1, x); }
float host_y1f(float x) { return float(besselY(1, x)); }
double host_yn(int32_t n, double x) { return besselY(n, x); }
float host_ynf(int32_t n, float x) { return float(besselY(n, x)); }

// ---------------------------------------------------------------------------------------------
// Signature check: each host_<name> must have exactly the types of its .def line
// ---------------------------------------------------------------------------------------------

template <class T> constexpr std::string_view typeLetter() {
  if constexpr (std::is_same_v<T, float>)
    return "f";
  else if constexpr (std::is_same_v<T, double>)
    return "d";
  else if constexpr (std::is_same_v<T, uint16_t>)
    return "h";
  else if constexpr (std::is_same_v<T, int32_t>)
    return "i";
  else if constexpr (std::is_same_v<T, int64_t>)
    return "l";
  else if constexpr (std::is_same_v<T, void>)
    return "v";
  else if constexpr (std::is_same_v<T, float *>)
    return "*f";
  else if constexpr (std::is_same_v<T, double *>)
    return "*d";
  else if constexpr (std::is_same_v<T, int32_t *>)
    return "*i";
  else
    return "?";
}

template <class R, class... A>
constexpr bool hasSignature(R (*)(A...), std::string_view ret, std::string_view params) {
  if (typeLetter<R>() != ret)
    return false;
  const std::string_view letters[] = {typeLetter<A>()..., ""};
  size_t k = 0;
  while (!params.empty()) {
    const size_t space = params.find(' ');
    const std::string_view token = params.substr(0, space);
    if (k == sizeof...(A) || token != letters[k])
      return false;
    ++k;
    params = space == std::string_view::npos ? std::string_view() : params.substr(space + 1);
  }
  return k == sizeof...(A);
}

#define PTXJIT_LIBDEVICE(name, ret, params)                                                        \
  static_assert(hasSignature(&host_##name, ret, params),                                           \
                "host_" #name " does not have the signature of Libdevice.def");
#include "ir/typing/Libdevice.def"
#undef PTXJIT_LIBDEVICE

#undef PTXJIT_ALL_MODES
#undef PTXJIT_CVT

} // namespace

const std::vector<HostSymbol> &hostLibdeviceSymbols() {
  static const std::vector<HostSymbol> symbols = {
#define PTXJIT_LIBDEVICE(name, ret, params) {"__nv_" #name, reinterpret_cast<void *>(&host_##name)},
#include "ir/typing/Libdevice.def"
#undef PTXJIT_LIBDEVICE
  };
  return symbols;
}

} // namespace ptxjit::codegen
