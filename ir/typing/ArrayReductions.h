// NumPy's array reductions called in kernels (ir/typing/ArrayReductions.def): `np.sum(a)`,
// `a.sum()`, `np.nanmin(a)`, `np.count_nonzero(a)`, ... over an array of any ndim and layout,
// giving a scalar. The one resolution of such a call (which argument is the array, the keywords,
// the result type and the type the arithmetic runs in), shared by typing and codegen
// (codegen/LowerReductions.cpp, which emits the loop over the elements).
#pragma once

#include "ir/IR.h"
#include "ir/Types.h"

#include <string>

namespace ptxjit::ir {

/// The reductions, in ArrayReductions.def's order.
enum class Reduction : uint8_t {
#define PTXJIT_REDUCTION(id, name, method) id,
#include "ir/typing/ArrayReductions.def"
#undef PTXJIT_REDUCTION
};

/// NumPy's name of `r` ("sum", "count_nonzero").
const char *reductionName(Reduction r);

/// The reduction builtin `id` calls (numpy.<name> or the method array.<name>); false when `id`
/// is no reduction.
bool reductionOf(BuiltinId id, Reduction &out);

/// The SymbolType path of `a.<attr>` for an array `a` when `attr` is a reduction method numba
/// offers on arrays ("array.sum"); null otherwise.
const char *reductionMethodPath(const std::string &attr);

/// What a reduction call computes.
struct ReductionCall {
  Reduction op = Reduction::Sum;
  /// The array reduced: the call's first argument, or for a method the object of the callee's
  /// GetAttr.
  const Instr *array = nullptr;
  const ArrayType *arrayType = nullptr;
  /// The call's type: NumPy's (sum of int32 is int64, of uint8 uint64; mean and var of ints are
  /// float64, var of complex64 float32; argmin and count_nonzero int64; all and any bool).
  const ScalarType *result = nullptr;
  /// The type the arithmetic runs in (sum, prod, mean, var, std and their nan forms): the
  /// `dtype=` given, else NumPy's default (the result type; complex for the var of complex);
  /// float16 computes in float32, rounded back where NumPy stores float16 values.
  const ScalarType *compute = nullptr;
  /// var/std: the `ddof` argument (an int), or null for 0.
  const Instr *ddof = nullptr;
  /// Why the call is refused (the other fields are then unset); empty when it is typed.
  std::string error;
};

/// Resolves call `i`, whose builtin is reduction `op` (its operands typed): `np.<name>(a,
/// axis=None, ...)` or `a.<name>(axis=None, ...)` with `a` an array of numbers or bools, of any
/// ndim and layout. Keywords: `axis` (None, or 0 / -1 for a 1-d array), `out=None`, `dtype`
/// (a compile-time number type: sum, prod, mean, var, std and their nan forms), `ddof` (an int:
/// var, std, nanvar, nanstd). Refused, with `error` saying why: anything else, such as an axis
/// of an N-d array (the result would be an array, which a kernel cannot allocate), a record or
/// non-array operand, np.ptp of bools.
ReductionCall resolveReduction(const CallInstr *i, Reduction op);

} // namespace ptxjit::ir
