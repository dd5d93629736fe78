// Codegen-internal: calls to floating-point math functions, independent of the backend.
//
// On CUDA a function becomes a call to libdevice (__nv_sin, __nv_sinf, ...; emitPTX links
// libdevice only when such a declaration exists) or, for the functions PTX has instructions
// for, an LLVM intrinsic. On the host it becomes an LLVM intrinsic where LLVM has one, else a
// call to libm (resolved in the process by the JIT). Adding a math function = one line in
// PTXJIT_MATH_FUNCTIONS.
#pragma once

#include "codegen/CompileOptions.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

namespace ptxjit::codegen::detail {

// X(Name, arity, libdevice f64, libdevice f32, libm f64, libm f32, LLVM intrinsic or
//   not_intrinsic, where the intrinsic is used: IntrNone / IntrHost / IntrBoth)
#define PTXJIT_MATH_FUNCTIONS(X)                                                                   \
  X(Sqrt, 1, "__nv_sqrt", "__nv_sqrtf", "sqrt", "sqrtf", sqrt, IntrBoth)                           \
  X(Fabs, 1, "__nv_fabs", "__nv_fabsf", "fabs", "fabsf", fabs, IntrBoth)                           \
  X(Floor, 1, "__nv_floor", "__nv_floorf", "floor", "floorf", floor, IntrBoth)                     \
  X(Ceil, 1, "__nv_ceil", "__nv_ceilf", "ceil", "ceilf", ceil, IntrBoth)                           \
  X(Trunc, 1, "__nv_trunc", "__nv_truncf", "trunc", "truncf", trunc, IntrBoth)                     \
  X(Rint, 1, "__nv_rint", "__nv_rintf", "rint", "rintf", roundeven, IntrBoth)                      \
  X(Copysign, 2, "__nv_copysign", "__nv_copysignf", "copysign", "copysignf", copysign, IntrBoth)   \
  X(Fma, 3, "__nv_fma", "__nv_fmaf", "fma", "fmaf", fma, IntrBoth)                                 \
  X(Fmod, 2, "__nv_fmod", "__nv_fmodf", "fmod", "fmodf", not_intrinsic, IntrNone)                  \
  X(Pow, 2, "__nv_pow", "__nv_powf", "pow", "powf", pow, IntrHost)                                 \
  X(Exp, 1, "__nv_exp", "__nv_expf", "exp", "expf", exp, IntrHost)                                 \
  X(Exp2, 1, "__nv_exp2", "__nv_exp2f", "exp2", "exp2f", exp2, IntrHost)                           \
  X(Exp10, 1, "__nv_exp10", "__nv_exp10f", "exp10", "exp10f", not_intrinsic, IntrNone)             \
  X(Expm1, 1, "__nv_expm1", "__nv_expm1f", "expm1", "expm1f", not_intrinsic, IntrNone)             \
  X(Log, 1, "__nv_log", "__nv_logf", "log", "logf", log, IntrHost)                                 \
  X(Log2, 1, "__nv_log2", "__nv_log2f", "log2", "log2f", log2, IntrHost)                           \
  X(Log10, 1, "__nv_log10", "__nv_log10f", "log10", "log10f", log10, IntrHost)                     \
  X(Log1p, 1, "__nv_log1p", "__nv_log1pf", "log1p", "log1pf", not_intrinsic, IntrNone)             \
  X(Sin, 1, "__nv_sin", "__nv_sinf", "sin", "sinf", sin, IntrHost)                                 \
  X(Cos, 1, "__nv_cos", "__nv_cosf", "cos", "cosf", cos, IntrHost)                                 \
  X(Tan, 1, "__nv_tan", "__nv_tanf", "tan", "tanf", not_intrinsic, IntrNone)                       \
  X(Asin, 1, "__nv_asin", "__nv_asinf", "asin", "asinf", not_intrinsic, IntrNone)                  \
  X(Acos, 1, "__nv_acos", "__nv_acosf", "acos", "acosf", not_intrinsic, IntrNone)                  \
  X(Atan, 1, "__nv_atan", "__nv_atanf", "atan", "atanf", not_intrinsic, IntrNone)                  \
  X(Atan2, 2, "__nv_atan2", "__nv_atan2f", "atan2", "atan2f", not_intrinsic, IntrNone)             \
  X(Sinh, 1, "__nv_sinh", "__nv_sinhf", "sinh", "sinhf", not_intrinsic, IntrNone)                  \
  X(Cosh, 1, "__nv_cosh", "__nv_coshf", "cosh", "coshf", not_intrinsic, IntrNone)                  \
  X(Tanh, 1, "__nv_tanh", "__nv_tanhf", "tanh", "tanhf", not_intrinsic, IntrNone)                  \
  X(Asinh, 1, "__nv_asinh", "__nv_asinhf", "asinh", "asinhf", not_intrinsic, IntrNone)             \
  X(Acosh, 1, "__nv_acosh", "__nv_acoshf", "acosh", "acoshf", not_intrinsic, IntrNone)             \
  X(Atanh, 1, "__nv_atanh", "__nv_atanhf", "atanh", "atanhf", not_intrinsic, IntrNone)             \
  X(Hypot, 2, "__nv_hypot", "__nv_hypotf", "hypot", "hypotf", not_intrinsic, IntrNone)             \
  X(Cbrt, 1, "__nv_cbrt", "__nv_cbrtf", "cbrt", "cbrtf", not_intrinsic, IntrNone)                  \
  X(Erf, 1, "__nv_erf", "__nv_erff", "erf", "erff", not_intrinsic, IntrNone)                       \
  X(Erfc, 1, "__nv_erfc", "__nv_erfcf", "erfc", "erfcf", not_intrinsic, IntrNone)                  \
  X(Tgamma, 1, "__nv_tgamma", "__nv_tgammaf", "tgamma", "tgammaf", not_intrinsic, IntrNone)        \
  X(Lgamma, 1, "__nv_lgamma", "__nv_lgammaf", "lgamma", "lgammaf", not_intrinsic, IntrNone)        \
  X(Nextafter, 2, "__nv_nextafter", "__nv_nextafterf", "nextafter", "nextafterf", not_intrinsic,   \
    IntrNone)                                                                                      \
  X(Remainder, 2, "__nv_remainder", "__nv_remainderf", "remainder", "remainderf", not_intrinsic,   \
    IntrNone)

enum class MathFn : uint8_t {
#define PTXJIT_MATH_ENUM(name, ...) name,
  PTXJIT_MATH_FUNCTIONS(PTXJIT_MATH_ENUM)
#undef PTXJIT_MATH_ENUM
};

/// Number of arguments of `fn`.
int mathArity(MathFn fn);
/// "sin", "atan2", ... (the libm double name).
const char *mathName(MathFn fn);

class MathLib {
public:
  /// With `fastmath` on CUDA, float32 sin, cos, tan, exp, exp10, log, log2, log10 and pow use
  /// libdevice's approximate __nv_fast_* variants (sin.approx, ex2.approx, ...), and tanh
  /// tanh.approx.f32 on sm_75+.
  /// `sm`: the CUDA target's compute capability as major*10+minor (0 on the host): sm_53+ has
  /// abs.f16 (float16 fabs), sm_75+ tanh.approx.f32 (float32 tanh with fastmath).
  MathLib(llvm::Module &m, Backend backend, bool fastmath = false, int sm = 0)
      : m_(m), backend_(backend), fastmath_(fastmath), sm_(backend == Backend::CUDA ? sm : 0) {}

  /// fn(args...) for args all of one floating type (float or double); returns that type.
  /// The builder's fast-math flags apply to intrinsic calls.
  llvm::Value *call(llvm::IRBuilderBase &b, MathFn fn, llvm::ArrayRef<llvm::Value *> args);
  /// x ** n for a float x and an i32 n (on the host libm's pow(x, (double)n) as CPython; on
  /// CUDA __nv_powi[f], since the NVPTX backend cannot select llvm.powi).
  llvm::Value *powi(llvm::IRBuilderBase &b, llvm::Value *x, llvm::Value *n);

  /// ldexp(x, n) for a float x and an i32 n (__nv_ldexp[f] / ldexp[f]).
  llvm::Value *ldexp(llvm::IRBuilderBase &b, llvm::Value *x, llvm::Value *n);
  /// frexp(x) for a float x: {mantissa, exponent as i32} (__nv_frexp[f] / frexp[f]);
  /// `slot` is an i32 alloca the exponent is written to.
  std::pair<llvm::Value *, llvm::Value *> frexp(llvm::IRBuilderBase &b, llvm::Value *x,
                                                llvm::Value *slot);

private:
  /// Declares `name` with type `fty` as a pure function (no memory, no errno, no throw).
  llvm::FunctionCallee declare(const char *name, llvm::FunctionType *fty);
  llvm::FunctionCallee declare(const char *name, llvm::Type *ty, int arity);

  llvm::Module &m_;
  Backend backend_;
  bool fastmath_;
  int sm_;
};

} // namespace ptxjit::codegen::detail
