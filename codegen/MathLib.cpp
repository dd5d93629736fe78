// Math library calls for both backends (see MathLib.h).
#include "codegen/MathLib.h"

#include <llvm/IR/Attributes.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

namespace ptxjit::codegen::detail {
namespace {

enum IntrUse : uint8_t { IntrNone, IntrHost, IntrBoth };

struct MathInfo {
  const char *name;
  int arity;
  const char *nvDouble;
  const char *nvFloat;
  const char *libmDouble;
  const char *libmFloat;
  llvm::Intrinsic::ID intrinsic;
  IntrUse use;
};

const MathInfo &info(MathFn fn) {
  static const MathInfo table[] = {
#define PTXJIT_MATH_INFO(name, arity, nvd, nvf, lmd, lmf, intr, use)                               \
  {#name, arity, nvd, nvf, lmd, lmf, llvm::Intrinsic::intr, use},
      PTXJIT_MATH_FUNCTIONS(PTXJIT_MATH_INFO)
#undef PTXJIT_MATH_INFO
  };
  return table[static_cast<size_t>(fn)];
}

/// libdevice's approximate float32 variant of `fn`, or null.
const char *fastVariant(MathFn fn) {
  switch (fn) {
  case MathFn::Sin:
    return "__nv_fast_sinf";
  case MathFn::Cos:
    return "__nv_fast_cosf";
  case MathFn::Tan:
    return "__nv_fast_tanf";
  case MathFn::Exp:
    return "__nv_fast_expf";
  case MathFn::Exp10:
    return "__nv_fast_exp10f";
  case MathFn::Log:
    return "__nv_fast_logf";
  case MathFn::Log2:
    return "__nv_fast_log2f";
  case MathFn::Log10:
    return "__nv_fast_log10f";
  case MathFn::Pow:
    return "__nv_fast_powf";
  default:
    return nullptr;
  }
}

/// Half-precision and bfloat16 arguments extended to float32 (other arguments, e.g. ints,
/// unchanged).
std::vector<llvm::Value *> extendHalf(llvm::IRBuilderBase &b, llvm::ArrayRef<llvm::Value *> args) {
  std::vector<llvm::Value *> out;
  for (llvm::Value *a : args)
    out.push_back(a->getType()->is16bitFPTy() ? b.CreateFPExt(a, b.getFloatTy()) : a);
  return out;
}

/// nextafter(x, y) on halves or bfloat16s, by their bits: NaN if either is NaN, y if x == y, the
/// smallest subnormal towards y from zero, else x's bits stepped by one towards y.
llvm::Value *halfNextafter(llvm::IRBuilderBase &b, llvm::Value *x, llvm::Value *y) {
  llvm::Type *i16 = b.getInt16Ty();
  llvm::Value *xb = b.CreateBitCast(x, i16), *yb = b.CreateBitCast(y, i16);
  llvm::Value *towardZero = b.CreateICmpNE(b.CreateFCmpOGT(x, y), // |x| shrinks when x > y > ..
                                           b.CreateICmpSLT(xb, b.getInt16(0)));
  llvm::Value *stepped =
      b.CreateSelect(towardZero, b.CreateSub(xb, b.getInt16(1)), b.CreateAdd(xb, b.getInt16(1)));
  llvm::Value *fromZero = b.CreateOr(b.CreateAnd(yb, b.getInt16(0x8000)), b.getInt16(1));
  llvm::Value *r = b.CreateSelect(b.CreateFCmpOEQ(x, llvm::ConstantFP::get(x->getType(), 0.0)),
                                  fromZero, stepped);
  r = b.CreateSelect(b.CreateFCmpOEQ(x, y), yb, r);
  r = b.CreateBitCast(r, x->getType());
  return b.CreateSelect(b.CreateFCmpUNO(x, y), b.CreateFAdd(x, y), r);
}

} // namespace

int mathArity(MathFn fn) { return info(fn).arity; }
const char *mathName(MathFn fn) { return info(fn).libmDouble; }

llvm::FunctionCallee MathLib::declare(const char *name, llvm::Type *ty, int arity) {
  std::vector<llvm::Type *> params(arity, ty);
  return declare(name, llvm::FunctionType::get(ty, params, false));
}

llvm::FunctionCallee MathLib::declare(const char *name, llvm::FunctionType *fty) {
  llvm::FunctionCallee callee = m_.getOrInsertFunction(name, fty);
  if (auto *f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    // Math functions here neither touch memory nor errno (as with -fno-math-errno), so calls
    // can be hoisted, vectorized and removed when unused.
    f->setDoesNotThrow();
    f->setWillReturn();
    f->setDoesNotAccessMemory();
  }
  return callee;
}

llvm::Value *MathLib::call(llvm::IRBuilderBase &b, MathFn fn, llvm::ArrayRef<llvm::Value *> args) {
  const MathInfo &mi = info(fn);
  llvm::Type *ty = args.front()->getType();
  if (ty->isHalfTy()) {
    // float16: the operations LLVM has as intrinsics on every target (fabs, floor, fma, ...)
    // stay in half precision (abs.f16, fma.rn.f16, cvt.rmi.f16.f16 on sm_53+); the others go
    // through the float32 routine, whose correctly rounded results round once more to half
    // (float32 carries more than twice half's precision, so sqrt stays correctly rounded).
    if (fn == MathFn::Fabs && sm_ >= 53) {
      // LLVM 19's NVPTX promotes fabs.f16 to float32 (cvt, abs.f32, cvt); sm_53+ with PTX 6.5+
      // has abs.f16 (NaN stays NaN), one instruction with no side effects.
      auto *fty = llvm::FunctionType::get(ty, {ty}, false);
      return b.CreateCall(llvm::InlineAsm::get(fty, "abs.f16 $0, $1;", "=h,h", false), args);
    }
    if (mi.intrinsic != llvm::Intrinsic::not_intrinsic && mi.use == IntrBoth)
      return b.CreateCall(llvm::Intrinsic::getDeclaration(&m_, mi.intrinsic, {ty}), args);
    if (fn == MathFn::Nextafter) // the neighbour in half precision, not float32's
      return halfNextafter(b, args[0], args[1]);
    return b.CreateFPTrunc(call(b, fn, extendHalf(b, args)), ty);
  }
  if (ty->isBFloatTy()) {
    // bfloat16: fabs and copysign are sign-bit operations (abs.bf16 on sm_80+); fma is one
    // rounding of the exact a * b + c (fma.rn.bf16 on sm_80+; on the host ir/BFloat16.h's
    // routine, since LLVM would round float32's fma once more); the others go through the
    // float32 routine, whose result rounds once to bfloat16 (float32 carries more than twice
    // bfloat16's precision, so sqrt stays correctly rounded, floor and the like exact).
    if (fn == MathFn::Fabs || fn == MathFn::Copysign ||
        (fn == MathFn::Fma && backend_ == Backend::CUDA))
      return b.CreateCall(llvm::Intrinsic::getDeclaration(&m_, mi.intrinsic, {ty}), args);
    if (fn == MathFn::Fma) {
      llvm::Type *i16 = b.getInt16Ty();
      llvm::FunctionCallee f =
          declare("ptxjit_bf16_fma", llvm::FunctionType::get(i16, {i16, i16, i16}, false));
      std::vector<llvm::Value *> bits;
      for (llvm::Value *a : args)
        bits.push_back(b.CreateBitCast(a, i16));
      return b.CreateBitCast(b.CreateCall(f, bits), ty);
    }
    if (fn == MathFn::Nextafter) // the neighbour in bfloat16, not float32's
      return halfNextafter(b, args[0], args[1]);
    return b.CreateFPTrunc(call(b, fn, extendHalf(b, args)), ty);
  }
  bool isDouble = ty->isDoubleTy();
  // On the host the C library's routines, as the docs promise, in calls LLVM does not treat as
  // builtins: C's pow, because LLVM rewrites llvm.pow/pow(2**n, x) as exp2(n * x) even without
  // fast-math flags, which rounds n * x first (math.pow(8.0, x) was up to 7 ULP off; issue 19);
  // and every float32 routine that is not exact (sinf, expf, atan2f, ...), because LLVM folds a
  // call with constant arguments by computing it in double and rounding, which can differ in
  // the last bit from the library's float routine that runs when the arguments are not
  // constants (math.atan2(np.float32(65535), np.float32(-0.001)): one ULP apart; difftest seed
  // 702181). float64 folds with the same library the code calls, and the exact operations
  // (sqrt, floor, fma, ...) fold to the value they compute.
  if (backend_ == Backend::Host && !fastmath_ &&
      (fn == MathFn::Pow || (!isDouble && mi.use != IntrBoth))) {
    llvm::CallInst *c =
        b.CreateCall(declare(isDouble ? mi.libmDouble : mi.libmFloat, ty, mi.arity), args);
    c->addFnAttr(llvm::Attribute::NoBuiltin);
    return c;
  }
  bool useIntrinsic = mi.intrinsic != llvm::Intrinsic::not_intrinsic &&
                      (mi.use == IntrBoth || (mi.use == IntrHost && backend_ == Backend::Host));
  // With fastmath the NVPTX backend turns an `afn` llvm.sqrt.f64 into rsqrt.approx/rcp.approx;
  // float64 keeps libdevice's correctly rounded routines (as with Numba's fastmath).
  if (fastmath_ && backend_ == Backend::CUDA && isDouble)
    useIntrinsic = false;
  if (fastmath_ && backend_ == Backend::CUDA && fn == MathFn::Sqrt && ty->isFloatTy()) {
    // sqrt.approx.ftz.f32, as NVVM gives Numba's fastmath. LLVM's NVPTX picks it for an `afn`
    // llvm.sqrt only with `ninf` as well, which fastmath no longer promises (Lowering.cpp);
    // the instruction itself keeps sqrt(inf) = inf and sqrt(NaN) = NaN.
    return b.CreateCall(
        llvm::Intrinsic::getDeclaration(&m_, llvm::Intrinsic::nvvm_sqrt_approx_ftz_f), args);
  }
  if (useIntrinsic) {
    llvm::Function *decl = llvm::Intrinsic::getDeclaration(&m_, mi.intrinsic, {ty});
    return b.CreateCall(decl, args);
  }
  const char *name = backend_ == Backend::CUDA ? (isDouble ? mi.nvDouble : mi.nvFloat)
                                               : (isDouble ? mi.libmDouble : mi.libmFloat);
  if (fastmath_ && fn == MathFn::Tanh && ty->isFloatTy() && sm_ >= 75) {
    // tanh.approx.f32, as libdevice's __nv_fast_tanhf, whose llvm.nvvm.tanh.approx.f32 LLVM 19's
    // NVPTX backend does not know.
    auto *fty = llvm::FunctionType::get(ty, {ty}, false);
    return b.CreateCall(llvm::InlineAsm::get(fty, "tanh.approx.f32 $0, $1;", "=f,f", false), args);
  }
  if (fastmath_ && backend_ == Backend::CUDA && !isDouble)
    if (const char *fast = fastVariant(fn))
      name = fast;
  return b.CreateCall(declare(name, ty, mi.arity), args);
}

llvm::Value *MathLib::powi(llvm::IRBuilderBase &b, llvm::Value *x, llvm::Value *n) {
  llvm::Type *ty = x->getType();
  if (ty->is16bitFPTy())
    return b.CreateFPTrunc(powi(b, b.CreateFPExt(x, b.getFloatTy()), n), ty);
  if (backend_ == Backend::Host) {
    // CPython computes float ** int as pow(x, (double)n); so does the host. (llvm.powi would
    // become a call to compiler-rt's __powidf2, which the host JIT cannot resolve.) float32
    // goes through the double routine: n converts exactly and the result rounds once.
    llvm::Type *dbl = b.getDoubleTy();
    llvm::Value *xd = ty->isDoubleTy() ? x : b.CreateFPExt(x, dbl);
    llvm::Value *r = call(b, MathFn::Pow, {xd, b.CreateSIToFP(n, dbl)});
    return ty->isDoubleTy() ? r : b.CreateFPTrunc(r, ty);
  }
  const char *name = ty->isDoubleTy() ? "__nv_powi" : "__nv_powif";
  return b.CreateCall(declare(name, llvm::FunctionType::get(ty, {ty, n->getType()}, false)),
                      {x, n});
}

llvm::Value *MathLib::ldexp(llvm::IRBuilderBase &b, llvm::Value *x, llvm::Value *n) {
  llvm::Type *ty = x->getType();
  if (ty->is16bitFPTy()) // exact in float32, then one rounding (also of a subnormal result)
    return b.CreateFPTrunc(ldexp(b, b.CreateFPExt(x, b.getFloatTy()), n), ty);
  bool cuda = backend_ == Backend::CUDA;
  const char *name = ty->isDoubleTy() ? (cuda ? "__nv_ldexp" : "ldexp")
                                      : (cuda ? "__nv_ldexpf" : "ldexpf");
  return b.CreateCall(declare(name, llvm::FunctionType::get(ty, {ty, n->getType()}, false)),
                      {x, n});
}

std::pair<llvm::Value *, llvm::Value *> MathLib::frexp(llvm::IRBuilderBase &b, llvm::Value *x,
                                                       llvm::Value *slot) {
  llvm::Type *ty = x->getType();
  if (ty->is16bitFPTy()) { // exact in float32: the same mantissa and exponent
    auto [m, e] = frexp(b, b.CreateFPExt(x, b.getFloatTy()), slot);
    return {b.CreateFPTrunc(m, ty), e};
  }
  bool cuda = backend_ == Backend::CUDA;
  const char *name = ty->isDoubleTy() ? (cuda ? "__nv_frexp" : "frexp")
                                      : (cuda ? "__nv_frexpf" : "frexpf");
  auto *fty = llvm::FunctionType::get(ty, {ty, slot->getType()}, false);
  llvm::FunctionCallee callee = m_.getOrInsertFunction(name, fty);
  if (auto *f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    f->setDoesNotThrow();
    f->setWillReturn();
    f->setOnlyWritesMemory();
    f->setOnlyAccessesArgMemory();
  }
  llvm::Value *mant = b.CreateCall(callee, {x, slot});
  llvm::Value *exp = b.CreateAlignedLoad(b.getInt32Ty(), slot, llvm::Align(4));
  return {mant, exp};
}

} // namespace ptxjit::codegen::detail
