// The special-value tables of the cmath functions (see CmathSpecial.h), written as seven rows
// (real part -inf, negative, -0, +0, positive, +inf, nan) of seven two-letter entries
// (imaginary part in the same order). Letters for a part of the result:
//   0 +0    z -0    1 1.0    m -1.0    i +inf    j -inf    n nan
//   p pi    q -pi   h pi/2   g -pi/2   f pi/4    e -pi/4   t 3pi/4   s -3pi/4
//   u unused (both parts of the argument finite: the formulas apply, the table is not read)
// The values are those CPython's cmath returns (or, where it raises ValueError, the C99 Annex G
// value it computes before raising); tests/python/test_complex.py checks them against cmath.
// They are CPython 3.11-3.13's: later versions (C11 Annex G) give tanh(±0 + nan j) = ±0 + nan j
// and acosh(±0 + nan j) = nan + pi/2 j where these give nan + nan j.
#include "codegen/CmathSpecial.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace ptxjit::codegen::detail {
namespace {

constexpr double kPi = 3.141592653589793238462643383279502884;

double letterValue(char c) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  switch (c) {
  case '0':
    return 0.0;
  case 'z':
    return -0.0;
  case '1':
    return 1.0;
  case 'm':
    return -1.0;
  case 'i':
    return inf;
  case 'j':
    return -inf;
  case 'p':
    return kPi;
  case 'q':
    return -kPi;
  case 'h':
    return 0.5 * kPi;
  case 'g':
    return -0.5 * kPi;
  case 'f':
    return 0.25 * kPi;
  case 'e':
    return -0.25 * kPi;
  case 't':
    return 0.75 * kPi;
  case 's':
    return -0.75 * kPi;
  case 'n':
  case 'u':
    return std::numeric_limits<double>::quiet_NaN();
  default:
    throw std::logic_error(std::string("bad cmath table letter ") + c);
  }
}

/// Decodes 7 rows of "ab ab ab ab ab ab ab".
CmathSpecialTable decode(const char *const rows[7]) {
  CmathSpecialTable t{};
  for (int r = 0; r < 7; ++r) {
    const std::string row = rows[r];
    if (row.size() != 7 * 3 - 1)
      throw std::logic_error("bad cmath table row '" + row + "'");
    for (int c = 0; c < 7; ++c)
      t[7 * r + c] = {letterValue(row[3 * c]), letterValue(row[3 * c + 1])};
  }
  return t;
}

// clang-format off
const char *const kAcos[7] = {
    "ti pi pi pj pj tj ni",
    "hi uu uu uu uu hj nn",
    "hi uu h0 hz uu hj hn",
    "hi uu h0 hz uu hj hn",
    "hi uu uu uu uu hj nn",
    "fi 0i 0i 0j 0j fj ni",
    "ni nn nn nn nn nj nn"};
const char *const kAcosh[7] = {
    "is iq iq ip ip it in",
    "ig uu uu uu uu ih nn",
    "ig uu 0g 0h uu ih nn",
    "ig uu 0g 0h uu ih nn",
    "ig uu uu uu uu ih nn",
    "ie iz iz i0 i0 if in",
    "in nn nn nn nn in nn"};
const char *const kAsinh[7] = {
    "je jz jz j0 j0 jf jn",
    "jg uu uu uu uu jh nn",
    "jg uu zz z0 uu jh nn",
    "ig uu 0z 00 uu ih nn",
    "ig uu uu uu uu ih nn",
    "ie iz iz i0 i0 if in",
    "in nn nz n0 nn in nn"};
const char *const kAtanh[7] = {
    "zg zg zg zh zh zh zn",
    "zg uu uu uu uu zh nn",
    "zg uu zz z0 uu zh zn",
    "0g uu 0z 00 uu 0h 0n",
    "0g uu uu uu uu 0h nn",
    "0g 0g 0g 0h 0h 0h 0n",
    "0g nn nn nn nn 0h nn"};
const char *const kCosh[7] = {
    "in uu i0 iz uu in in",
    "nn uu uu uu uu nn nn",
    "n0 uu 10 1z uu n0 n0",
    "n0 uu 1z 10 uu n0 n0",
    "nn uu uu uu uu nn nn",
    "in uu iz i0 uu in in",
    "nn nn n0 n0 nn nn nn"};
const char *const kExp[7] = {
    "00 uu 0z 00 uu 00 00",
    "nn uu uu uu uu nn nn",
    "nn uu 1z 10 uu nn nn",
    "nn uu 1z 10 uu nn nn",
    "nn uu uu uu uu nn nn",
    "in uu iz i0 uu in in",
    "nn nn nz n0 nn nn nn"};
const char *const kLog[7] = {
    "is iq iq ip ip it in",
    "ig uu uu uu uu ih nn",
    "ig uu jq jp uu ih nn",
    "ig uu jz j0 uu ih nn",
    "ig uu uu uu uu ih nn",
    "ie iz iz i0 i0 if in",
    "in nn nn nn nn in nn"};
const char *const kSinh[7] = {
    "in uu jz j0 uu in in",
    "nn uu uu uu uu nn nn",
    "0n uu zz z0 uu 0n 0n",
    "0n uu 0z 00 uu 0n 0n",
    "nn uu uu uu uu nn nn",
    "in uu iz i0 uu in in",
    "nn nn nz n0 nn nn nn"};
const char *const kSqrt[7] = {
    "ij 0j 0j 0i 0i ii ni",
    "ij uu uu uu uu ii nn",
    "ij uu 0z 00 uu ii nn",
    "ij uu 0z 00 uu ii nn",
    "ij uu uu uu uu ii nn",
    "ij iz iz i0 i0 ii in",
    "ij nn nn nn nn ii nn"};
const char *const kTanh[7] = {
    "m0 uu mz m0 uu m0 m0",
    "nn uu uu uu uu nn nn",
    "zn uu zz z0 uu zn nn",
    "0n uu 0z 00 uu 0n nn",
    "nn uu uu uu uu nn nn",
    "10 uu 1z 10 uu 10 10",
    "nn nn nz n0 nn nn nn"};
const char *const kRect[7] = {
    "in uu j0 jz uu in in",
    "nn uu uu uu uu nn nn",
    "00 uu z0 zz uu 00 00",
    "00 uu 0z 00 uu 00 00",
    "nn uu uu uu uu nn nn",
    "in uu iz i0 uu in in",
    "nn nn n0 n0 nn nn nn"};
// clang-format on

} // namespace

const CmathSpecialTable &cmathSpecialTable(CmathTable t) {
  static const CmathSpecialTable tables[] = {
      decode(kAcos), decode(kAcosh), decode(kAsinh), decode(kAtanh), decode(kCosh), decode(kExp),
      decode(kLog),  decode(kSinh),  decode(kSqrt),  decode(kTanh),  decode(kRect)};
  return tables[static_cast<int>(t)];
}

CmathClass cmathClassOf(double d) {
  if (std::isnan(d))
    return CmathClass::Nan;
  bool neg = std::signbit(d);
  if (std::isinf(d))
    return neg ? CmathClass::NegInf : CmathClass::PosInf;
  if (d == 0.0)
    return neg ? CmathClass::NegZero : CmathClass::PosZero;
  return neg ? CmathClass::Neg : CmathClass::Pos;
}

const char *cmathTableName(CmathTable t) {
  static const char *const names[] = {"acos", "acosh", "asinh", "atanh", "cosh", "exp",
                                      "log",  "sinh",  "sqrt",  "tanh",  "rect"};
  return names[static_cast<int>(t)];
}

} // namespace ptxjit::codegen::detail
