// The kinds of the math-like builtins (math.*, numpy.* functions and constants,
// NumPy scalar types used as casts); the table itself is ir/typing/MathBuiltins.def.
#pragma once

#include "ir/IR.h"
#include "ir/Types.h"

#include <optional>
#include <string>
#include <vector>

namespace ptxjit::ir {

/// How a math-like builtin is typed and lowered.
enum class MathKind : uint8_t {
  Constant,    ///< a float constant (math.pi): weak float
  Unary,       ///< f(x) -> float32 for float32 x, else float64
  Binary,      ///< f(x, y) -> float32 when both are float32 (or weak), else float64
  Log,         ///< log(x) or log(x, base)
  ToInt,       ///< math.ceil/floor/trunc: -> int64
  Predicate,   ///< isnan/isinf/isfinite: -> bool
  Frexp,       ///< -> (float, int64)
  Ldexp,       ///< ldexp(x, i) -> float
  Modf,        ///< -> (float, float)
  Degrees,     ///< radians to degrees
  Radians,     ///< degrees to radians
  Abs,         ///< numpy.abs: like builtins.abs
  Cast,        ///< numpy.float32(x) ...: conversion to the named scalar type
  CUnary,      ///< cmath f(z) -> complex64 for complex64 z, else complex128
  CLog,        ///< cmath.log(z) or cmath.log(z, base)
  Phase,       ///< cmath.phase(z) -> float
  Polar,       ///< cmath.polar(z) -> (float, float)
  Rect,        ///< cmath.rect(r, phi) -> complex128
  CPredicate,  ///< cmath.isnan/isinf/isfinite -> bool
  MakeComplex, ///< complex(x) / complex(x, y) -> complex128
  Conjugate,   ///< z.conjugate() (the object is the callee GetAttr's operand) ->
               ///< type of z
  BitCount,    ///< i.bit_count() of an integer i (the callee GetAttr's operand) -> type of i
  Ufunc,       ///< a NumPy ufunc typed by its loops alone (ir/typing/NumpyUfuncs.h)
};

/// The kind of `id`, or nullptr when `id` is not a math-like builtin.
const MathKind *mathKindOf(BuiltinId id);

/// The scalar type a Cast builtin converts to ("numpy.float32" -> float32);
/// null otherwise.
const ScalarType *mathCastType(BuiltinId id);

/// Numba's isinstance(v, cls) for `v` of type `value` and `cls` of type `cls` (the class, or a
/// tuple of classes: true when v is an instance of any), decided at compile time. A class is
/// `int`, `float`, `complex` or `bool` (the exact types Numba maps them to: int64, float64,
/// complex128, bool), `tuple` (any tuple), `str` (any string), or a scalar type used as a cast
/// (np.float32, ptxjit's or numba's types.int16, cuda.bf16's nv_bfloat16: that exact type).
/// Returns nullopt, with `why` set, for a class it does not know or a value of a kind Numba
/// refuses (records, functions, modules, ...).
std::optional<bool> isInstanceOf(const Type *value, const Type *cls, std::string &why);

/// The value of a Constant builtin (math.pi -> 3.14159...).
double mathConstantValue(BuiltinId id);

/// The float type of a math call on `args`: float16 or float32 when every argument is float16,
/// float32 or weak and at least one is not weak (the widest of those: NumPy's float16 and
/// float32 loops), else float64 (ints and bools convert to float64 as in Numba).
const Type *mathFloatResult(const std::vector<const Type *> &args);

/// The complex type of a cmath call on `args`: complex64 when every argument is
/// complex64, float32, float16 or weak and one is not weak, else complex128.
const Type *mathComplexResult(const std::vector<const Type *> &args);

} // namespace ptxjit::ir
