// The numeric rules of the type system in one place: NumPy's promotion (what `a + b` gives) and
// one table of conversions (how well a value of one type becomes another), which every layer
// asks: kernel dispatch on eager signatures (selectSignature), ufunc loop selection and output
// casting (ir/LoopResolution.h), typing.
//
// The table grades a conversion between two concrete scalar types, best first:
//   Exact    the same type;
//   Promote  the same kind, at least as wide (int8 → int64, float32 → float64);
//   Safe     every value survives: NumPy's np.can_cast(from, to, 'safe') (uint8 → int16,
//            int64 → float64, float32 → complex64);
//   SameKind NumPy's 'same_kind' and not safe (float64 → float32, int32 → float32);
//   Unsafe   anything else NumPy casts (float → int, complex → float).
// bfloat16 (no NumPy dtype: ml_dtypes' casts) follows the same rules by what it holds: float32,
// float64 and the complex types hold every bfloat16 (Safe), bfloat16 holds (u)int8 (Safe);
// float16 ↔ bfloat16 and float32/float64 → bfloat16 are SameKind.
// NumPy's answers are the rule (tests/python/test_conversions.py compares every pair with
// np.can_cast). Numba grades kernel arguments on four levels (exact, promote, safe, unsafe) that
// agree with this table (SameKind counting as unsafe) except where Rules::Numba names it.
#pragma once

#include "ir/Types.h"

#include <cstdint>
#include <vector>

namespace ptxjit::ir {

/// How well a value converts, best first (see the file comment).
enum class Conversion : uint8_t { Exact, Promote, Safe, SameKind, Unsafe, None };

/// "exact", "promote", "safe", "same_kind", "unsafe", "none".
const char *conversionName(Conversion c);

/// Whose rule book grades a conversion.
enum class Rules : uint8_t {
  /// NumPy's casting table (ufunc loop selection, output casting).
  NumPy,
  /// Numba's dispatcher (kernels with eager signatures). It differs from NumPy on purpose in two
  /// places, as numba.core.typeconv.rules does: a complex value has no conversion to a real or
  /// bool type (None: NumPy casts it unsafely, dropping the imaginary part), and uint16 → float32
  /// / complex64 and uint8 → float16 are unsafe (Numba only reaches float32 from int16 and
  /// float16 from int8). SameKind is reported as
  /// Unsafe: Numba has no such grade.
  Numba,
};

/// The grade of converting `from` to `to` (both concrete scalar types) under `rules`.
Conversion scalarConversion(const ScalarType *from, const ScalarType *to, Rules rules);

/// NumPy's casting levels, as np.can_cast's `casting` argument.
enum class Casting : uint8_t { No, Safe, SameKind, Unsafe };

/// "no", "safe", "same_kind", "unsafe".
const char *castingName(Casting c);

/// np.can_cast(from, to, casting) for concrete scalar types.
bool canCast(const ScalarType *from, const ScalarType *to, Casting casting);

/// A Python scalar (weak type, NEP 50) given where `to` is expected: Exact for its default type,
/// Safe for any type of its kind or a higher one (a Python int to any integer, float or complex
/// type; a float to float and complex types; a complex to complex types), Unsafe for a lower
/// kind that still converts (an int to bool, a float to an integer), None otherwise (a float to
/// bool, a complex to a real type). Whether the value fits is checked where the value is known.
Conversion weakConversion(const WeakType *from, const ScalarType *to);

/// A kernel argument of type `from` passed for a parameter of type `to` (eager signatures,
/// Rules::Numba): scalars by the table, weak scalars (Python scalars) as their default type
/// (int64, float64, complex128: Numba's typeof) where weakConversion allows them at all, arrays
/// Promote when the
/// dtype and ndim match and the layout fits (C/F into A; readonly only into readonly), tuples by
/// their worst element, pointers (CPointer, voidptr) Safe from int64, uint64 or a Python int (the
/// address, as Numba passes it) and Promote from another pointer into void*; None when it cannot
/// be passed.
Conversion argumentConversion(const Type *from, const Type *to);

/// The index of the signature (parameter-type lists) that arguments `actual` convert to, by
/// Numba's rating: the fewest unsafe conversions, then the fewest safe ones, then the fewest
/// promotions (an exact match has none); the first of equals; -1 when none fits. With `tied`,
/// also every signature rated as the best one (the chosen one first): more than one is what
/// Numba's kernel dispatcher refuses as ambiguous.
int selectSignature(const std::vector<const Type *> &actual,
                    const std::vector<std::vector<const Type *>> &signatures,
                    std::vector<int> *tied = nullptr);

/// The result type of NumPy-style promotion of two numeric types (weak types follow NEP 50:
/// float32 + weak float = float32; int32 + weak float = float64; weak + weak = weak).
/// Returns null when there is no common numeric type.
const Type *promote(const Type *a, const Type *b);

} // namespace ptxjit::ir
