// bfloat16 (numba-cuda's types.bfloat16, ml_dtypes.bfloat16) as its 16 bits, for the places that
// hold such values outside compiled code: packing a launch's scalars, the CPU backend's
// conversion routines (codegen/HostJIT.cpp), constants. A bfloat16 is the upper half of a
// float32: the same sign and 8-bit exponent, 7 stored significand bits. Conversions are exact
// where the value is representable and round as asked (to nearest, ties to even, by default)
// otherwise, directly from the source value (no double rounding), as ml_dtypes and the GPU's
// cvt.rn.bf16 do.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace ptxjit::ir {

/// The rounding of a conversion to a narrower format: to nearest (ties to even), toward zero,
/// down (toward -inf), up (toward +inf). CUDA's _rn, _rz, _rd, _ru suffixes.
enum class Rounding : uint8_t { Nearest, TowardZero, Down, Up };

/// The bits of float32 `f`.
inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

/// The float32 of bits `u`.
inline float floatOfBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

/// The value of bfloat16 bits `b` (exact: every bfloat16 is a float32).
inline float bf16ToFloat(uint16_t b) { return floatOfBits(uint32_t(b) << 16); }

/// The bfloat16 that float32 `f` rounds to under `mode`: ±inf beyond the largest finite value
/// where the mode rounds away from it, NaN stays a (quiet) NaN of the same sign.
inline uint16_t bf16FromFloat(float f, Rounding mode = Rounding::Nearest) {
  const uint32_t u = floatBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) // NaN: keep the sign and the top payload bits, quiet
    return static_cast<uint16_t>((u >> 16) | 0x40);
  const uint32_t high = u >> 16, low = u & 0xffffu;
  const bool negative = (u >> 31) != 0;
  switch (mode) {
  case Rounding::Nearest:
    // Adding just under half a unit (plus the kept part's lowest bit) carries exactly when the
    // dropped part is above half, or half with an odd kept part; a carry into the exponent
    // (or to inf) is the correct result.
    return static_cast<uint16_t>((u + 0x7fffu + (high & 1u)) >> 16);
  case Rounding::TowardZero:
    return static_cast<uint16_t>(high);
  case Rounding::Down: // magnitude up for negative values
    return static_cast<uint16_t>(high + (low != 0 && negative ? 1u : 0u));
  case Rounding::Up:
    return static_cast<uint16_t>(high + (low != 0 && !negative ? 1u : 0u));
  }
  return static_cast<uint16_t>(high);
}

/// `d` rounded to float32 "to odd": truncated toward zero, with the lowest significand bit set
/// when that lost anything. Rounding that (24 bits) once more to bfloat16 (8 bits) under any
/// mode gives the correctly rounded bfloat16 of `d`, since 24 >= 8 + 2.
inline float floatRoundedToOdd(double d) {
  if (std::isnan(d))
    return static_cast<float>(d);
  float f = static_cast<float>(d); // to nearest
  if (static_cast<double>(f) == d)
    return f;
  uint32_t u = floatBits(f);
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) // rounded away from zero: step back
    --u; // (inf - 1 ulp is the largest float: still above every bfloat16 below inf)
  return floatOfBits(u | 1u);
}

/// The bfloat16 that double `d` rounds to under `mode` (directly, not through float32's
/// rounding).
inline uint16_t bf16FromDouble(double d, Rounding mode = Rounding::Nearest) {
  return bf16FromFloat(floatRoundedToOdd(d), mode);
}

/// The bfloat16 nearest to a * b + c computed exactly (one rounding), as fma.rn.bf16.
inline uint16_t bf16Fma(uint16_t a, uint16_t b, uint16_t c) {
  // The product of two 8-bit significands is exact in a double; the sum is rounded once to a
  // double, whose error is recovered (TwoSum) to round the double to odd before the final
  // rounding.
  const double p = double(bf16ToFloat(a)) * double(bf16ToFloat(b));
  const double q = double(bf16ToFloat(c));
  const double s = p + q;
  if (!std::isfinite(s) || s == 0.0) // inf/NaN, or an exact zero (sign rules of IEEE addition)
    return bf16FromDouble(s);
  const double pp = s - q, qq = s - pp;
  const double err = (p - pp) + (q - qq);
  if (err == 0.0)
    return bf16FromDouble(s);
  uint64_t u;
  std::memcpy(&u, &s, sizeof u);
  if ((u & 1u) == 0) { // make it odd: the neighbour of s toward the exact sum
    const bool away = (err > 0) == (s > 0);
    u = away ? u + 1 : u - 1;
  }
  double odd;
  std::memcpy(&odd, &u, sizeof odd);
  return bf16FromDouble(odd);
}

} // namespace ptxjit::ir
