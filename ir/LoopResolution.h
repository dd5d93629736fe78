// How a ufunc call chooses its loop, as NumPy's legacy type resolver does, for @vectorize ufuncs
// (ufunc/) and for NumPy's own ufuncs called in kernels (ir/typing/NumpyUfuncs.h): the first
// loop (signature) to which every input casts safely — Python int, float and complex scalars
// being weak (NEP 50: they take the loop's type when it is of their kind or a higher one) — and
// whose outputs cast to the output arrays the call gives, under the output casting rule. For
// ufuncs compiled lazily, the loop types NumPy's promotion gives the inputs. The casting rules
// themselves are ir/Conversions.h's.
#pragma once

#include "ir/Conversions.h"

#include <string>
#include <vector>

namespace ptxjit::ir {

/// The type of one input of a call: a concrete scalar type (an array's or a NumPy scalar's
/// dtype, a Python bool) or a weak type (a Python int, float or complex).
using InputType = const ir::Type *;

/// True when an input of type `in` may be passed to a loop parameter of type `to`: safe casting
/// for concrete types, and with `narrowing` (gufuncs' second try, ufunc::Ufunc::resolve) also
/// numba-cuda's casts, `to` casting safely to `in`, where they stay within a kind (NumPy's
/// same_kind: int64 to int32, float64 to float32; not float64 to int32); a weak Python int goes
/// to any integer, float or complex type, a weak float to float and complex types, a weak
/// complex to complex types (ir::weakConversion).
bool inputCastsTo(InputType in, const ir::ScalarType *to, bool narrowing = false);

/// The loop types NumPy's resolution sees.
struct LoopTypes {
  std::vector<const ir::ScalarType *> inputs;
  std::vector<const ir::ScalarType *> outputs;
};

/// The outcome of resolveLoop.
struct LoopMatch {
  int loop = -1; ///< the loop chosen, or -1
  /// loop == -1 only: some loop took the inputs but its output k could not be cast to the
  /// output array given; these name the first such cast (NumPy reports it).
  bool outputRefused = false;
  const ir::ScalarType *outputFrom = nullptr, *outputTo = nullptr;
};

/// The first of `loops` to which every input casts (inputCastsTo, with `narrowing`) and, for
/// each output the call gives (`outputs[k]` not null), whose output k casts to it under
/// `outputCasting` (ir::canCast). When every input is weak they count as their default types
/// (NumPy).
LoopMatch resolveLoop(const std::vector<InputType> &inputs, const std::vector<LoopTypes> &loops,
                      const std::vector<const ir::ScalarType *> &outputs, ir::Casting outputCasting,
                      bool narrowing = false);

/// The loop input types of a lazily compiled ufunc for `inputs`: concrete inputs keep their
/// type; weak Python scalars take the NEP 50 promotion of their kind with the concrete inputs'
/// common type (float32 array and 2.0 → float32; int32 array and 2.0 → float64), or their
/// default type (int64, float64, complex128) when every input is weak.
std::vector<const ir::ScalarType *> lazyLoopTypes(const std::vector<InputType> &inputs);

/// "float32, int64" (weak inputs spelled "int", "float", "complex" as NumPy does for Python
/// scalars).
std::string inputTypesStr(const std::vector<InputType> &inputs);

} // namespace ptxjit::ir
