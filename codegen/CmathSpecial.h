// Codegen-internal: the results of the cmath functions for infinite and nan inputs, as CPython
// gives them (C99 Annex G's recommendations; CPython's Modules/cmathmodule.c tables).
//
// A double falls in one of seven classes (CmathClass). When a part of the argument is not
// finite, CPython's result depends only on the classes of the real and imaginary parts, except
// for exp, cosh, sinh, tanh and rect with an infinite real part and a finite nonzero imaginary
// part, where the signs come from cos and sin of the imaginary part (handled by the lowering).
#pragma once

#include <array>
#include <cstdint>
#include <utility>

namespace ptxjit::codegen::detail {

/// The class of a double, in the tables' row/column order.
enum class CmathClass : uint8_t { NegInf, Neg, NegZero, PosZero, Pos, PosInf, Nan };

/// The cmath functions with special-value tables (asin, atan, sin, cos, tan and log10 derive
/// from asinh, atanh, sinh, cosh, tanh and log; rect's "argument" is (r, phi)).
enum class CmathTable : uint8_t {
  Acos,
  Acosh,
  Asinh,
  Atanh,
  Cosh,
  Exp,
  Log,
  Sinh,
  Sqrt,
  Tanh,
  Rect
};

/// A table: entry [7 * class(re) + class(im)] is {re, im} of the result. Entries for two finite
/// classes (never consulted) hold nan.
using CmathSpecialTable = std::array<std::pair<double, double>, 49>;

/// The table of `t`.
const CmathSpecialTable &cmathSpecialTable(CmathTable t);

/// The class of `d` (as the tables index it).
CmathClass cmathClassOf(double d);

/// The table's name in symbols and messages ("acos", ...).
const char *cmathTableName(CmathTable t);

} // namespace ptxjit::codegen::detail
