// numba-cuda's reduced-precision intrinsics, cuda.bf16 (bfloat16) and cuda.fp16 (float16): the
// table of ir/typing/LowFloat.def and the typing of their calls. Lowering:
// codegen/LowerLowFloat.cpp.
#pragma once

#include "ir/BFloat16.h"
#include "ir/IR.h"
#include "ir/Types.h"

#include <cstdint>

namespace ptxjit::ir {

/// What a cuda.bf16 / cuda.fp16 function computes. Operands are of the function's 16-bit type
/// (`elem`) unless noted; the result too, except for comparisons (bool) and hisinf (int32).
// clang-format off
enum class LowFloatOp : uint8_t {
  Add, Sub, Mul, Div,                   // the operators (contraction into fma allowed)
  AddRn, SubRn, MulRn,                  // never contracted into an fma
  AddSat, SubSat, MulSat,               // the result clamped to [0, 1], NaN to 0
  Neg, Abs, Fma, FmaSat, FmaRelu,       // FmaRelu: negative results become 0 (NaN stays)
  Eq, Ne, Ge, Gt, Le, Lt,               // ordered: false when an operand is NaN (Ne too)
  Equ, Neu, Geu, Gtu, Leu, Ltu,         // unordered: true when an operand is NaN
  Max, Min,                             // the other operand when one is NaN (IEEE maxNum)
  MaxNan, MinNan,                       // NaN when an operand is NaN
  IsNan,                                // bool
  IsInf,                                // int32: 1 for +inf, -1 for -inf, else 0
  Trunc, Ceil, Floor, Rint, Sqrt, Rsqrt, Rcp, Log, Log2, Log10, Cos, Sin, Tanh, TanhApprox, Exp,
  Exp2, Exp10,
  From,                                 // `other` → elem, rounded by `rounding`
  To,                                   // elem → `other` (an integer: rounded by `rounding`)
  AsBits,                               // elem's bits as the integer `other`
  FromBits,                             // integer `other`'s bits as elem
};
// clang-format on

/// One cuda.bf16 / cuda.fp16 function.
struct LowFloatFunction {
  LowFloatOp op;
  const ScalarType *elem;  ///< float16 or bfloat16
  const ScalarType *other; ///< the other type of a conversion; null otherwise
  Rounding rounding;       ///< of a conversion's result
  /// The number of operands it takes.
  int arity() const;
  /// Its parameter types (all `elem` but for From and FromBits).
  std::vector<const ScalarType *> params() const;
  /// Its result type.
  const ScalarType *result() const;
};

/// The function of builtin `id`, or nullptr when `id` is not a cuda.bf16 / cuda.fp16 one.
const LowFloatFunction *lowFloatFunction(BuiltinId id);

class Function;
class CallInstr;

namespace typing_detail {

/// The result type of call `i` of `f`: as numba-cuda's single-signature templates, any real
/// number converts to a parameter's type. TypingError naming the function and the arguments
/// otherwise.
const Type *lowFloatCallType(const Function &fn, CallInstr *i, const LowFloatFunction &f);

} // namespace typing_detail
} // namespace ptxjit::ir
