// IEEE 754 half precision (float16, NumPy's `e`) as its 16 bits, for the places that hold such
// values outside compiled code: packing a launch's scalars, reading NumPy float16 scalars.
// Conversions are exact where the value is representable and round to nearest, ties to even,
// otherwise, as NumPy's `np.float16(x)` does (directly from double: no double rounding).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace ptxjit::ir {

/// The float16 nearest to `d` (ties to even); ±inf beyond the largest half (65504 rounds up
/// to inf from 65520 on), NaN stays a quiet NaN.
inline uint16_t halfFromDouble(double d) {
  uint64_t x;
  std::memcpy(&x, &d, sizeof x);
  const uint16_t sign = static_cast<uint16_t>((x >> 48) & 0x8000);
  const int exp = static_cast<int>((x >> 52) & 0x7ff);
  const uint64_t mant = x & ((uint64_t(1) << 52) - 1);
  if (exp == 0x7ff)
    return sign | 0x7c00 | (mant ? 0x200 : 0);
  const int e = exp - 1023 + 15; // half's biased exponent
  if (e >= 31)
    return sign | 0x7c00;
  if (e < -11) // below 2**-26: rounds to zero (also every double subnormal)
    return sign;
  // The value in units of the result's last place: 2**-24 for subnormal halves, else the
  // 10-bit mantissa's unit. Rounding may carry into the exponent (or to inf): still correct.
  const uint64_t full = mant | (uint64_t(1) << 52);
  const int shift = e <= 0 ? 1051 - exp : 42;
  uint64_t q = e <= 0 ? full >> shift : (uint64_t(e) << 10) | (mant >> shift);
  const uint64_t rem = (e <= 0 ? full : mant) & ((uint64_t(1) << shift) - 1);
  const uint64_t halfway = uint64_t(1) << (shift - 1);
  if (rem > halfway || (rem == halfway && (q & 1)))
    ++q;
  return sign | static_cast<uint16_t>(q);
}

/// The value of float16 bits `h` (exact).
inline double halfToDouble(uint16_t h) {
  const int e = (h >> 10) & 0x1f;
  const int m = h & 0x3ff;
  double v;
  if (e == 0)
    v = std::ldexp(m, -24);
  else if (e == 31)
    v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else
    v = std::ldexp(m | 0x400, e - 25);
  return (h & 0x8000) ? -v : v;
}

} // namespace ptxjit::ir
