// Lowering of the math-like builtins (ir/typing/MathBuiltins.def): math.* and numpy.*
// scalar functions through MathLib (libdevice on CUDA, libm on the host), their
// constants, and NumPy scalar types used as casts. Float32 arguments use the
// float32 routines; other arguments convert to float64 first, as in Numba.
#include "codegen/Lowering.h"
#include "ir/Datetime.h"

#include <llvm/IR/Constants.h>

namespace ptxjit::codegen::detail {

using namespace ir;

MathFn mathFnOf(BuiltinId id) {
  switch (id) {
#define PTXJIT_MATH_BUILTIN(id, path, kind, fn)                                \
  case BuiltinId::id:                                                          \
    return MathFn::fn;
#include "ir/typing/MathBuiltins.def"
#undef PTXJIT_MATH_BUILTIN
  default:
    return MathFn::Fabs;
  }
}

namespace {

// CPython's constants for math.degrees / math.radians.
constexpr double kPi = 3.141592653589793238462643383279502884;
constexpr double kDegToRad = kPi / 180.0;
constexpr double kRadToDeg = 180.0 / kPi;

} // namespace

llvm::Value *FunctionLowerer::mathConstant(BuiltinId id, const Type *res,
                                           SourceLoc at) {
  llvm::Value *c =
      llvm::ConstantFP::get(B.getDoubleTy(), mathConstantValue(id));
  return convert(c, types::float64(), res, at);
}

llvm::Value *FunctionLowerer::lowerMathCall(const CallInstr &i, MathKind kind) {
  SourceLoc at = i.loc;
  const Type *res = typeOf(&i, at);
  const size_t n = i.numArgs();
  auto badArgs = [&]() {
    std::string s;
    for (size_t k = 0; k < n; ++k)
      s += (k ? ", " : "") + typeOf(i.arg(k), at)->str();
    fail(at, DiagCode::CallArgs, {builtinPath(i.builtin), s});
  };
  auto argType = [&](size_t k) { return typeOf(i.arg(k), at); };
  // Argument k converted to the float type of the call.
  auto floatArg = [&](size_t k, const Type *ft) {
    return convert(valueOf(i.arg(k), at), argType(k), ft, at);
  };
  std::vector<const Type *> argTypes;
  for (size_t k = 0; k < n; ++k)
    argTypes.push_back(argType(k));
  const MathFn fn = mathFnOf(i.builtin);

  switch (kind) {
  case MathKind::Constant:
  case MathKind::Ufunc: // lowerNumpyUfuncCall
    badArgs();
    return nullptr;
  case MathKind::CUnary:
  case MathKind::CLog:
  case MathKind::Phase:
  case MathKind::Polar:
  case MathKind::Rect:
  case MathKind::CPredicate:
  case MathKind::MakeComplex:
  case MathKind::Conjugate:
    return lowerComplexCall(i, kind);
  case MathKind::BitCount: {
    // Python's int.bit_count: the ones of abs(i) (numba-cuda's cuda.popc counts the two's
    // complement bits of a negative i instead).
    const Instr *obj = i.callee()->numOperands() ? i.callee()->operand(0) : nullptr;
    auto *st = obj ? dyn_cast<ScalarType>(concretize(typeOf(obj, at))) : nullptr;
    if (!st || st->kind() != TypeKind::Int || n != 0)
      badArgs();
    llvm::Value *x = convert(valueOf(obj, at), typeOf(obj, at), st, at);
    if (st->isSigned())
      x = B.CreateSelect(B.CreateICmpSLT(x, llvm::ConstantInt::get(x->getType(), 0)),
                         B.CreateNeg(x), x);
    return convert(B.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, x), st, res, at);
  }
  case MathKind::Unary: {
    if (n != 1)
      badArgs();
    const Type *ft = concretize(res);
    return mathCall(fn, {floatArg(0, ft)});
  }
  case MathKind::Binary: {
    if (n != 2)
      badArgs();
    const Type *ft = concretize(res);
    return mathCall(fn, {floatArg(0, ft), floatArg(1, ft)});
  }
  case MathKind::Log: {
    const Type *ft = concretize(res);
    if (n == 1)
      return mathCall(MathFn::Log, {floatArg(0, ft)});
    if (n != 2)
      badArgs();
    // CPython: log(x) / log(base).
    return B.CreateFDiv(mathCall(MathFn::Log, {floatArg(0, ft)}),
                        mathCall(MathFn::Log, {floatArg(1, ft)}));
  }
  case MathKind::ToInt: {
    if (n != 1)
      badArgs();
    const Type *t = concretize(argType(0));
    if (t->kind() == TypeKind::Int || t->kind() == TypeKind::Bool)
      return convert(valueOf(i.arg(0), at), argType(0), res, at);
    const Type *ft = mathFloatResult({argType(0)});
    llvm::Value *r = mathCall(fn, {floatArg(0, ft)});
    return convert(r, ft, res, at);
  }
  case MathKind::Predicate: {
    if (n != 1)
      badArgs();
    if (i.builtin == BuiltinId::NpIsnat) // NaT is the smallest int64 (ir/Datetime.h)
      return convert(B.CreateICmpEQ(valueOf(i.arg(0), at), B.getInt64(kNaT)), types::boolean(), res,
                     at);
    const Type *t = concretize(argType(0));
    if (t->kind() == TypeKind::Int || t->kind() == TypeKind::Bool)
      return convert(
          B.getInt1(builtinPath(i.builtin) == std::string("math.isfinite") ||
                    builtinPath(i.builtin) == std::string("numpy.isfinite")),
          types::boolean(), res, at);
    llvm::Value *x = floatArg(0, mathFloatResult({argType(0)}));
    std::string name = builtinPath(i.builtin);
    name = name.substr(name.find('.') + 1);
    llvm::Value *r;
    if (name == "isnan") {
      r = B.CreateFCmpUNO(x, x);
    } else {
      llvm::Value *ax = mathCall(MathFn::Fabs, {x});
      llvm::Value *inf = llvm::ConstantFP::getInfinity(x->getType());
      r = name == "isinf" ? B.CreateFCmpOEQ(ax, inf) : B.CreateFCmpOLT(ax, inf);
    }
    return convert(r, types::boolean(), res, at);
  }
  case MathKind::Frexp: {
    if (n != 1)
      badArgs();
    const Type *ft = mathFloatResult(argTypes);
    llvm::Value *slot = entryAlloca(B.getInt32Ty(), "frexp.exp");
    auto [mant, e] = M.math.frexp(B, floatArg(0, ft), slot);
    const TupleType *tt = types::tuple({ft, types::int64()});
    llvm::Value *out = llvm::PoisonValue::get(repr(tt, at));
    out = B.CreateInsertValue(out, mant, 0);
    out = B.CreateInsertValue(out, B.CreateSExt(e, B.getInt64Ty()), 1);
    return convert(out, tt, res, at);
  }
  case MathKind::Ldexp: {
    if (n != 2)
      badArgs();
    const Type *ft = concretize(res);
    llvm::Value *e =
        convert(valueOf(i.arg(1), at), argType(1), types::int64(), at);
    // Clamp to the i32 range: beyond it the result is 0 or inf anyway.
    llvm::Value *lo = B.getInt64(INT32_MIN), *hi = B.getInt64(INT32_MAX);
    e = B.CreateSelect(B.CreateICmpSLT(e, lo), lo, e);
    e = B.CreateSelect(B.CreateICmpSGT(e, hi), hi, e);
    return M.math.ldexp(B, floatArg(0, ft), B.CreateTrunc(e, B.getInt32Ty()));
  }
  case MathKind::Modf: {
    if (n != 1)
      badArgs();
    const Type *ft = mathFloatResult(argTypes);
    llvm::Value *x = floatArg(0, ft);
    llvm::Value *ip = mathCall(MathFn::Trunc, {x});
    // The fractional part keeps x's sign and is 0 for infinities (C's modf).
    llvm::Value *isInf =
        B.CreateFCmpOEQ(mathCall(MathFn::Fabs, {x}),
                        llvm::ConstantFP::getInfinity(x->getType()));
    llvm::Value *frac = B.CreateSelect(
        isInf, llvm::ConstantFP::get(x->getType(), 0.0), B.CreateFSub(x, ip));
    frac = mathCall(MathFn::Copysign, {frac, x});
    const TupleType *tt = types::tuple({ft, ft});
    llvm::Value *out = llvm::PoisonValue::get(repr(tt, at));
    out = B.CreateInsertValue(out, frac, 0);
    out = B.CreateInsertValue(out, ip, 1);
    return convert(out, tt, res, at);
  }
  case MathKind::Degrees:
  case MathKind::Radians: {
    if (n != 1)
      badArgs();
    const Type *ft = concretize(res);
    llvm::Value *x = floatArg(0, ft);
    double k = kind == MathKind::Degrees ? kRadToDeg : kDegToRad;
    return B.CreateFMul(llvm::ConstantFP::get(x->getType(), k), x);
  }
  case MathKind::Abs: {
    if (n != 1)
      badArgs();
    auto *st = dyn_cast<ScalarType>(concretize(argType(0)));
    auto *rs = dyn_cast<ScalarType>(concretize(res));
    if (!st || !rs)
      badArgs();
    return absValue(valueOf(i.arg(0), at), st, rs, at);
  }
  case MathKind::Cast: {
    if (n > 1)
      badArgs();
    if (n == 0)
      return llvm::Constant::getNullValue(repr(concretize(res), at));
    if (!dyn_cast<ScalarType>(concretize(argType(0))))
      badArgs();
    return convert(valueOf(i.arg(0), at), argType(0), res, at);
  }
  }
  badArgs();
  return nullptr;
}

llvm::Value *FunctionLowerer::absValue(llvm::Value *v, const ScalarType *st, const ScalarType *rs,
                                       SourceLoc at) {
  if (st->kind() == TypeKind::Complex) {
    const ScalarType *part = types::floating(st->bits() / 2);
    llvm::Value *h =
        mathCall(MathFn::Hypot, {B.CreateExtractValue(v, 0), B.CreateExtractValue(v, 1)});
    return convert(h, part, rs, at);
  }
  llvm::Value *x = convert(v, st, rs, at);
  if (rs->kind() == TypeKind::Float)
    return mathCall(MathFn::Fabs, {x});
  if (rs->kind() == TypeKind::Int && rs->isSigned()) {
    auto *zero = llvm::ConstantInt::get(x->getType(), 0);
    return B.CreateSelect(B.CreateICmpSLT(x, zero), B.CreateSub(zero, x), x);
  }
  return x;
}

} // namespace ptxjit::codegen::detail
