// How ufunc inputs choose a loop, as NumPy does: the first loop (signature) to which every
// input casts safely, with Python int/float/complex scalars weak (NEP 50: they take the loop's
// type when it is of their kind or a higher one); and, for ufuncs compiled lazily, the loop
// types NumPy's promotion gives the inputs.
#pragma once

#include "ir/Types.h"

#include <string>
#include <vector>

namespace ptxjit::ufunc {

/// How an input was given.
enum class InputKind : uint8_t {
  Strong,    ///< an array or a NumPy scalar (its dtype counts), or a Python bool
  PyInt,     ///< a Python int (weak)
  PyFloat,   ///< a Python float (weak)
  PyComplex, ///< a Python complex (weak)
};

struct InputType {
  const ir::ScalarType *dtype = nullptr; ///< Strong: the dtype; weak: int64/float64/complex128
  InputKind kind = InputKind::Strong;
  bool operator==(const InputType &o) const { return dtype == o.dtype && kind == o.kind; }
};

/// NumPy's np.can_cast(from, to, casting='safe').
bool canCastSafely(const ir::ScalarType *from, const ir::ScalarType *to);
/// NumPy's casting='same_kind' (safe casts, and casts within a kind or to a lower kind:
/// float64 → float32, int64 → int8; not float → int or complex → float).
bool canCastSameKind(const ir::ScalarType *from, const ir::ScalarType *to);

/// True when input `in` may be passed to a loop parameter of type `to`: safe casting for
/// strong inputs; a weak Python int goes to any integer, float or complex type, a weak float
/// to float and complex types, a weak complex to complex types.
bool inputCastsTo(const InputType &in, const ir::ScalarType *to);

/// The index of the first loop whose parameters every input casts to (inputCastsTo), or -1.
/// When every input is weak, they count as strong inputs of their default types (NumPy).
int resolveLoop(const std::vector<InputType> &inputs,
                const std::vector<std::vector<const ir::ScalarType *>> &loops);

/// The loop types of a lazily compiled ufunc for `inputs`: strong inputs keep their dtype;
/// weak Python scalars take the NEP 50 promotion of their kind with the strong inputs' common
/// type (float32 array and 2.0 → float32; int32 array and 2.0 → float64), or their default
/// type (int64, float64, complex128) when every input is weak.
std::vector<const ir::ScalarType *> lazyLoopTypes(const std::vector<InputType> &inputs);

/// "float32, int64" (weak inputs spelled "int", "float", "complex" as NumPy does for Python
/// scalars).
std::string inputTypesStr(const std::vector<InputType> &inputs);

} // namespace ptxjit::ufunc
