// Lowering of cmath functions, complex(), z.conjugate() and complex ** in LLVM
// IR built from real math calls. The formulas follow CPython's cmathmodule.c
// for finite inputs (including its branches for very large and very small
// magnitudes), so ordinary results agree with Python's cmath within a few ULP;
// infinite and nan parts give CPython's special values (CmathSpecial.h), taken
// on a separate branch; where CPython raises, the kernel returns the value
// CPython computes before raising (C99 Annex G's), or inf/nan.
#include "codegen/CmathSpecial.h"
#include "codegen/Lowering.h"

#include <llvm/IR/Constants.h>

#include <cfloat>
#include <cmath>

namespace ptxjit::codegen::detail {

using namespace ir;

namespace {

struct Cx {
  llvm::Value *re, *im;
};

/// Complex helpers on one float type (float for complex64, double for
/// complex128).
class CMath {
public:
  CMath(llvm::IRBuilderBase &b, MathLib &math, llvm::Type *ty)
      : B(b), math(math), ty(ty), isDouble(ty->isDoubleTy()) {
    largeDouble = isDouble ? DBL_MAX / 4 : FLT_MAX / 4;
    logLarge = std::log(largeDouble);
    sqrtLarge = std::sqrt(largeDouble);
    minNormal = isDouble ? DBL_MIN : FLT_MIN;
    sqrtMin = std::sqrt(minNormal);
    mantDig = isDouble ? DBL_MANT_DIG : FLT_MANT_DIG;
  }

  llvm::Value *k(double v) { return llvm::ConstantFP::get(ty, v); }
  llvm::Value *f(MathFn fn, std::initializer_list<llvm::Value *> a) {
    return math.call(B, fn, a);
  }
  llvm::Value *add(llvm::Value *a, llvm::Value *b) {
    return B.CreateFAdd(a, b);
  }
  llvm::Value *sub(llvm::Value *a, llvm::Value *b) {
    return B.CreateFSub(a, b);
  }
  llvm::Value *mul(llvm::Value *a, llvm::Value *b) {
    return B.CreateFMul(a, b);
  }
  llvm::Value *div(llvm::Value *a, llvm::Value *b) {
    return B.CreateFDiv(a, b);
  }
  llvm::Value *neg(llvm::Value *a) { return B.CreateFNeg(a); }
  llvm::Value *fabs(llvm::Value *a) { return f(MathFn::Fabs, {a}); }
  llvm::Value *sel(llvm::Value *c, llvm::Value *a, llvm::Value *b) {
    return B.CreateSelect(c, a, b);
  }
  Cx sel(llvm::Value *c, Cx a, Cx b) {
    return {sel(c, a.re, b.re), sel(c, a.im, b.im)};
  }
  llvm::Value *gt(llvm::Value *a, llvm::Value *b) {
    return B.CreateFCmpOGT(a, b);
  }
  llvm::Value *lt(llvm::Value *a, llvm::Value *b) {
    return B.CreateFCmpOLT(a, b);
  }
  llvm::Value *eq(llvm::Value *a, llvm::Value *b) {
    return B.CreateFCmpOEQ(a, b);
  }
  llvm::Value *land(llvm::Value *a, llvm::Value *b) {
    return B.CreateAnd(a, b);
  }
  llvm::Value *lor(llvm::Value *a, llvm::Value *b) { return B.CreateOr(a, b); }
  llvm::Value *copysign(llvm::Value *a, llvm::Value *b) {
    return f(MathFn::Copysign, {a, b});
  }
  llvm::Value *hypot(llvm::Value *a, llvm::Value *b) {
    return f(MathFn::Hypot, {a, b});
  }
  llvm::Value *inf() { return llvm::ConstantFP::getInfinity(ty); }
  /// False for ±inf and nan.
  llvm::Value *isFinite(llvm::Value *a) { return lt(fabs(a), inf()); }
  llvm::Value *isInf(llvm::Value *a) { return eq(fabs(a), inf()); }

  /// The CmathClass of `v` as an i32.
  llvm::Value *classOf(llvm::Value *v) {
    auto c = [&](CmathClass k) { return B.getInt32(static_cast<uint32_t>(k)); };
    llvm::Type *ity = B.getIntNTy(ty->getPrimitiveSizeInBits());
    llvm::Value *neg = B.CreateICmpSLT(B.CreateBitCast(v, ity),
                                       llvm::ConstantInt::get(ity, 0));
    llvm::Value *r = sel(neg, c(CmathClass::Neg), c(CmathClass::Pos));
    r = sel(eq(v, k(0.0)),
            sel(neg, c(CmathClass::NegZero), c(CmathClass::PosZero)), r);
    r = sel(isInf(v), sel(neg, c(CmathClass::NegInf), c(CmathClass::PosInf)),
            r);
    return sel(B.CreateFCmpUNO(v, v), c(CmathClass::Nan), r);
  }

  /// How an infinite real part with a finite nonzero imaginary part y is
  /// treated (CPython computes the signs from cos(y) and sin(y)).
  enum class InfFix { None, Exp, Cosh, Sinh, Tanh, Rect };

  /// `normal` (the formula's result) when both parts of z are finite, else
  /// CPython's special value of table `t` (a branch taken only then).
  Cx withSpecials(CmathTable t, Cx z, Cx normal, InfFix fix = InfFix::None) {
    llvm::BasicBlock *from = B.GetInsertBlock();
    llvm::Function *fn = from->getParent();
    llvm::Module &mod = *fn->getParent();
    llvm::LLVMContext &ctx = B.getContext();
    auto *special = llvm::BasicBlock::Create(ctx, "cmath.special", fn);
    auto *join = llvm::BasicBlock::Create(ctx, "cmath.join", fn);
    B.CreateCondBr(land(isFinite(z.re), isFinite(z.im)), join, special);

    B.SetInsertPoint(special);
    auto *f64 = B.getDoubleTy();
    auto *tableTy = llvm::ArrayType::get(f64, 98);
    std::string name = std::string("__ptxjit_cmath_") + cmathTableName(t);
    llvm::GlobalVariable *g = mod.getNamedGlobal(name);
    if (!g) {
      std::vector<llvm::Constant *> vals;
      for (const auto &e : cmathSpecialTable(t)) {
        vals.push_back(llvm::ConstantFP::get(f64, e.first));
        vals.push_back(llvm::ConstantFP::get(f64, e.second));
      }
      g = new llvm::GlobalVariable(
          mod, tableTy, true, llvm::GlobalValue::PrivateLinkage,
          llvm::ConstantArray::get(tableTy, vals), name);
      g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    }
    llvm::Value *idx = B.CreateMul(
        B.CreateAdd(B.CreateMul(classOf(z.re), B.getInt32(7)), classOf(z.im)),
        B.getInt32(2));
    auto load = [&](llvm::Value *i) {
      llvm::Value *p = B.CreateInBoundsGEP(tableTy, g, {B.getInt32(0), i});
      llvm::Value *v = B.CreateLoad(f64, p);
      return isDouble ? v : B.CreateFPTrunc(v, ty);
    };
    Cx r{load(idx), load(B.CreateAdd(idx, B.getInt32(1)))};
    if (fix != InfFix::None) {
      llvm::Value *x = z.re, *y = z.im;
      llvm::Value *c = f(MathFn::Cos, {y}), *s = f(MathFn::Sin, {y});
      llvm::Value *pos = gt(x, k(0.0));
      llvm::Value *infC = copysign(inf(), c), *infS = copysign(inf(), s);
      Cx fixed;
      switch (fix) {
      case InfFix::Exp:
        fixed = sel(pos, Cx{infC, infS},
                    Cx{copysign(k(0.0), c), copysign(k(0.0), s)});
        break;
      case InfFix::Cosh:
        fixed = Cx{infC, sel(pos, infS, neg(infS))};
        break;
      case InfFix::Sinh:
        fixed = Cx{sel(pos, infC, neg(infC)), infS};
        break;
      case InfFix::Tanh:
        fixed =
            Cx{copysign(k(1.0), x), copysign(k(0.0), mul(mul(k(2.0), s), c))};
        break;
      default: // Rect: rect(±inf, phi) = ±inf * (cos phi, sin phi)
        fixed = sel(pos, Cx{infC, infS}, Cx{neg(infC), neg(infS)});
        break;
      }
      llvm::Value *use =
          land(land(isInf(x), isFinite(y)), B.CreateFCmpUNE(y, k(0.0)));
      r = sel(use, fixed, r);
    }
    llvm::BasicBlock *specialEnd = B.GetInsertBlock();
    B.CreateBr(join);

    B.SetInsertPoint(join);
    auto phi = [&](llvm::Value *a, llvm::Value *b) {
      llvm::PHINode *p = B.CreatePHI(ty, 2);
      p->addIncoming(a, from);
      p->addIncoming(b, specialEnd);
      return p;
    };
    return {phi(normal.re, r.re), phi(normal.im, r.im)};
  }

  Cx cmul(Cx a, Cx b) {
    return {sub(mul(a.re, b.re), mul(a.im, b.im)),
            add(mul(a.re, b.im), mul(a.im, b.re))};
  }
  /// CPython's _Py_c_quot.
  Cx cdiv(Cx a, Cx b) {
    llvm::Value *bigRe = B.CreateFCmpOGE(fabs(b.re), fabs(b.im));
    llvm::Value *r1 = div(b.im, b.re), *d1 = add(b.re, mul(b.im, r1));
    Cx q1{div(add(a.re, mul(a.im, r1)), d1), div(sub(a.im, mul(a.re, r1)), d1)};
    llvm::Value *r2 = div(b.re, b.im), *d2 = add(mul(b.re, r2), b.im);
    Cx q2{div(add(mul(a.re, r2), a.im), d2), div(sub(mul(a.im, r2), a.re), d2)};
    return sel(bigRe, q1, q2);
  }

  Cx sqrt(Cx z) {
    llvm::Value *ax = fabs(z.re), *ay = fabs(z.im);
    // Tiny inputs (hypot would be subnormal) are scaled by 2**scaleUp first
    // (CPython).
    llvm::Value *tiny = land(lt(ax, k(minNormal)), lt(ay, k(minNormal)));
    int scaleUp = 2 * (mantDig / 2) + 1;
    double up = std::ldexp(1.0, scaleUp),
           down = std::ldexp(1.0, -(scaleUp + 1) / 2);
    llvm::Value *axs = mul(ax, k(up)), *ays = mul(ay, k(up));
    llvm::Value *sTiny =
        mul(f(MathFn::Sqrt, {add(axs, hypot(axs, ays))}), k(down));
    llvm::Value *ax8 = div(ax, k(8.0));
    llvm::Value *sNorm =
        mul(k(2.0), f(MathFn::Sqrt, {add(ax8, hypot(ax8, div(ay, k(8.0))))}));
    llvm::Value *s = sel(tiny, sTiny, sNorm);
    llvm::Value *d = div(ay, mul(k(2.0), s));
    llvm::Value *pos = B.CreateFCmpOGE(z.re, k(0.0));
    Cx r = sel(pos, Cx{s, copysign(d, z.im)}, Cx{d, copysign(s, z.im)});
    llvm::Value *zero = land(eq(z.re, k(0.0)), eq(z.im, k(0.0)));
    return sel(zero, Cx{k(0.0), z.im}, r);
  }

  Cx exp(Cx z) {
    llvm::Value *big = gt(z.re, k(logLarge));
    llvm::Value *l = f(MathFn::Exp, {sel(big, sub(z.re, k(1.0)), z.re)});
    llvm::Value *scale = sel(big, k(M_E), k(1.0));
    llvm::Value *c = f(MathFn::Cos, {z.im}), *s = f(MathFn::Sin, {z.im});
    Cx r{mul(mul(l, c), scale), mul(mul(l, s), scale)};
    // exp(x + 0j) keeps the zero imaginary part even for infinite x.
    return {r.re, sel(eq(z.im, k(0.0)), z.im, r.im)};
  }

  llvm::Value *logAbs(Cx z) {
    llvm::Value *ax = fabs(z.re), *ay = fabs(z.im);
    llvm::Value *large = lor(gt(ax, k(largeDouble)), gt(ay, k(largeDouble)));
    llvm::Value *tiny = land(lt(ax, k(minNormal)), lt(ay, k(minNormal)));
    llvm::Value *rLarge = add(
        f(MathFn::Log, {hypot(div(ax, k(2.0)), div(ay, k(2.0)))}), k(M_LN2));
    double up = std::ldexp(1.0, mantDig);
    llvm::Value *rTiny =
        sub(f(MathFn::Log, {hypot(mul(ax, k(up)), mul(ay, k(up)))}),
            k(mantDig * M_LN2));
    llvm::Value *h = hypot(ax, ay);
    llvm::Value *nearOne =
        land(B.CreateFCmpOGE(h, k(0.71)), B.CreateFCmpOLE(h, k(1.73)));
    llvm::Value *am = f(MathFn::Fabs, {sel(gt(ax, ay), ax, ay)});
    llvm::Value *an = sel(gt(ax, ay), ay, ax);
    llvm::Value *rNear =
        div(f(MathFn::Log1p,
              {add(mul(sub(am, k(1.0)), add(am, k(1.0))), mul(an, an))}),
            k(2.0));
    llvm::Value *rMid = sel(nearOne, rNear, f(MathFn::Log, {h}));
    return sel(large, rLarge, sel(tiny, rTiny, rMid));
  }
  Cx log(Cx z) { return {logAbs(z), f(MathFn::Atan2, {z.im, z.re})}; }

  Cx coshSinh(Cx z, bool sinh) {
    llvm::Value *big = B.CreateFCmpOGE(fabs(z.re), k(logLarge));
    llvm::Value *xm = sel(big, sub(z.re, copysign(k(1.0), z.re)), z.re);
    llvm::Value *scale = sel(big, k(M_E), k(1.0));
    llvm::Value *ch = f(MathFn::Cosh, {xm}), *sh = f(MathFn::Sinh, {xm});
    llvm::Value *c = f(MathFn::Cos, {z.im}), *s = f(MathFn::Sin, {z.im});
    if (sinh)
      return {mul(mul(c, sh), scale), mul(mul(s, ch), scale)};
    return {mul(mul(c, ch), scale), mul(mul(s, sh), scale)};
  }

  Cx tanh(Cx z) {
    llvm::Value *big = gt(fabs(z.re), k(logLarge));
    llvm::Value *s = f(MathFn::Sin, {z.im}), *c = f(MathFn::Cos, {z.im});
    Cx rBig{copysign(k(1.0), z.re),
            mul(mul(mul(k(4.0), s), c),
                f(MathFn::Exp, {mul(k(-2.0), fabs(z.re))}))};
    llvm::Value *tx = f(MathFn::Tanh, {z.re}), *ty2 = f(MathFn::Tan, {z.im});
    llvm::Value *cx = div(k(1.0), f(MathFn::Cosh, {z.re}));
    llvm::Value *txty = mul(tx, ty2);
    llvm::Value *den = add(k(1.0), mul(txty, txty));
    Cx rNorm{div(mul(tx, add(k(1.0), mul(ty2, ty2))), den),
             mul(mul(div(ty2, den), cx), cx)};
    return sel(big, rBig, rNorm);
  }

  Cx asinh(Cx z) {
    llvm::Value *big =
        lor(gt(fabs(z.re), k(sqrtLarge)), gt(fabs(z.im), k(sqrtLarge)));
    llvm::Value *lbig =
        add(f(MathFn::Log, {hypot(div(z.re, k(2.0)), div(z.im, k(2.0)))}),
            k(2 * M_LN2));
    Cx rBig{copysign(lbig, z.re), f(MathFn::Atan2, {z.im, fabs(z.re)})};
    Cx s1 = sqrt({add(k(1.0), z.im), neg(z.re)});
    Cx s2 = sqrt({sub(k(1.0), z.im), z.re});
    Cx rNorm{
        f(MathFn::Asinh, {sub(mul(s1.re, s2.im), mul(s2.re, s1.im))}),
        f(MathFn::Atan2, {z.im, sub(mul(s1.re, s2.re), mul(s1.im, s2.im))})};
    return sel(big, rBig, rNorm);
  }

  Cx acos(Cx z) {
    llvm::Value *big =
        lor(gt(fabs(z.re), k(sqrtLarge)), gt(fabs(z.im), k(sqrtLarge)));
    llvm::Value *lbig =
        add(f(MathFn::Log, {hypot(div(z.re, k(2.0)), div(z.im, k(2.0)))}),
            k(2 * M_LN2));
    Cx rBig{f(MathFn::Atan2, {fabs(z.im), z.re}),
            sel(lt(z.re, k(0.0)), neg(copysign(lbig, z.im)),
                copysign(lbig, neg(z.im)))};
    Cx s1 = sqrt({sub(k(1.0), z.re), neg(z.im)});
    Cx s2 = sqrt({add(k(1.0), z.re), z.im});
    Cx rNorm{mul(k(2.0), f(MathFn::Atan2, {s1.re, s2.re})),
             f(MathFn::Asinh, {sub(mul(s2.re, s1.im), mul(s2.im, s1.re))})};
    return sel(big, rBig, rNorm);
  }

  Cx acosh(Cx z) {
    llvm::Value *big =
        lor(gt(fabs(z.re), k(sqrtLarge)), gt(fabs(z.im), k(sqrtLarge)));
    Cx rBig{add(f(MathFn::Log, {hypot(div(z.re, k(2.0)), div(z.im, k(2.0)))}),
                k(2 * M_LN2)),
            f(MathFn::Atan2, {z.im, z.re})};
    Cx s1 = sqrt({sub(z.re, k(1.0)), z.im});
    Cx s2 = sqrt({add(z.re, k(1.0)), z.im});
    Cx rNorm{f(MathFn::Asinh, {add(mul(s1.re, s2.re), mul(s1.im, s2.im))}),
             mul(k(2.0), f(MathFn::Atan2, {s1.im, s2.re}))};
    return sel(big, rBig, rNorm);
  }

  Cx atanh(Cx zin) {
    // atanh(-z) = -atanh(z): work with a non-negative real part.
    llvm::Value *negRe = lt(zin.re, k(0.0));
    Cx z{sel(negRe, neg(zin.re), zin.re), sel(negRe, neg(zin.im), zin.im)};
    llvm::Value *ay = fabs(z.im);
    llvm::Value *big = lor(gt(z.re, k(sqrtLarge)), gt(ay, k(sqrtLarge)));
    llvm::Value *h = hypot(div(z.re, k(2.0)), div(z.im, k(2.0)));
    Cx rBig{div(div(div(z.re, k(4.0)), h), h),
            neg(copysign(k(M_PI / 2), neg(z.im)))};
    llvm::Value *one = land(eq(z.re, k(1.0)), lt(ay, k(sqrtMin)));
    llvm::Value *oneRe = neg(
        f(MathFn::Log,
          {div(f(MathFn::Sqrt, {ay}), f(MathFn::Sqrt, {hypot(ay, k(2.0))}))}));
    Cx rOne{
        sel(eq(ay, k(0.0)), llvm::ConstantFP::getInfinity(ty), oneRe),
        sel(eq(ay, k(0.0)), z.im,
            copysign(div(f(MathFn::Atan2, {k(2.0), neg(ay)}), k(2.0)), z.im))};
    llvm::Value *omx = sub(k(1.0), z.re);
    Cx rNorm{div(f(MathFn::Log1p,
                   {div(mul(k(4.0), z.re), add(mul(omx, omx), mul(ay, ay)))}),
                 k(4.0)),
             div(neg(f(MathFn::Atan2,
                       {mul(k(-2.0), z.im),
                        sub(mul(omx, add(k(1.0), z.re)), mul(ay, ay))})),
                 k(2.0))};
    Cx r = sel(big, rBig, sel(one, rOne, rNorm));
    return sel(negRe, Cx{neg(r.re), neg(r.im)}, r);
  }

  /// f(iz) rotated back: the sin/tan/asin/atan identities (CPython's c_sin,
  /// ...).
  static Cx timesI(Cx z, CMath &m) { return {m.neg(z.im), z.re}; }
  Cx rotBack(Cx s) { return {s.im, neg(s.re)}; }

  /// CPython's c_powu for 0 <= n <= 100 (n an i32): binary exponentiation with
  /// selects.
  Cx powu(Cx x, llvm::Value *n) {
    Cx r{k(1.0), k(0.0)}, p = x;
    for (int bit = 0; bit < 7; ++bit) {
      llvm::Value *set =
          B.CreateICmpNE(B.CreateAnd(n, B.getInt32(1 << bit)), B.getInt32(0));
      r = sel(set, cmul(r, p), r);
      if (bit < 6)
        p = cmul(p, p);
    }
    return r;
  }

  /// CPython's complex ** : small integral exponents by repeated
  /// multiplication, else c_pow.
  Cx pow(Cx a, Cx b) {
    llvm::Value *vabs = hypot(a.re, a.im);
    llvm::Value *len = f(MathFn::Pow, {vabs, b.re});
    llvm::Value *at = f(MathFn::Atan2, {a.im, a.re});
    llvm::Value *phase = mul(at, b.re);
    llvm::Value *bImag = B.CreateFCmpUNE(b.im, k(0.0));
    len = sel(bImag, div(len, f(MathFn::Exp, {mul(at, b.im)})), len);
    phase = sel(bImag, add(phase, mul(b.im, f(MathFn::Log, {vabs}))), phase);
    Cx general{mul(len, f(MathFn::Cos, {phase})),
               mul(len, f(MathFn::Sin, {phase}))};
    llvm::Value *bZero = land(eq(b.re, k(0.0)), eq(b.im, k(0.0)));
    llvm::Value *aZero = land(eq(a.re, k(0.0)), eq(a.im, k(0.0)));
    Cx r =
        sel(bZero, Cx{k(1.0), k(0.0)}, sel(aZero, Cx{k(0.0), k(0.0)}, general));
    // Integral exponent with |n| <= 100.
    llvm::Value *integral =
        land(land(eq(b.im, k(0.0)), eq(b.re, f(MathFn::Trunc, {b.re}))),
             B.CreateFCmpOLE(fabs(b.re), k(100.0)));
    llvm::Value *n =
        B.CreateFPToSI(sel(integral, b.re, k(0.0)), B.getInt32Ty());
    llvm::Value *negN = B.CreateICmpSLT(n, B.getInt32(0));
    Cx pu = powu(a, sel(negN, B.CreateNeg(n), n));
    Cx pi = sel(negN, cdiv(Cx{k(1.0), k(0.0)}, pu), pu);
    return sel(integral, pi, r);
  }

  llvm::IRBuilderBase &B;
  MathLib &math;
  llvm::Type *ty;
  bool isDouble;
  double largeDouble, logLarge, sqrtLarge, minNormal, sqrtMin;
  int mantDig;
};

} // namespace

llvm::Value *FunctionLowerer::complexPow(llvm::Value *l, llvm::Value *r) {
  llvm::Type *part =
      llvm::cast<llvm::StructType>(l->getType())->getElementType(0);
  CMath m(B, M.math, part);
  Cx a{B.CreateExtractValue(l, 0), B.CreateExtractValue(l, 1)};
  Cx b{B.CreateExtractValue(r, 0), B.CreateExtractValue(r, 1)};
  Cx p = m.pow(a, b);
  llvm::Value *out = llvm::PoisonValue::get(l->getType());
  out = B.CreateInsertValue(out, p.re, 0);
  return B.CreateInsertValue(out, p.im, 1);
}

llvm::Value *FunctionLowerer::complexUnary(const std::string &name, llvm::Value *zv, SourceLoc at) {
  llvm::Type *part = llvm::cast<llvm::StructType>(zv->getType())->getElementType(0);
  CMath m(B, M.math, part);
  Cx z{B.CreateExtractValue(zv, 0), B.CreateExtractValue(zv, 1)};
  using T = CmathTable;
  using Fix = CMath::InfFix;
  // The hyperbolic functions with CPython's special values; the trigonometric
  // ones are derived from them as CPython does (sin(z) = -i sinh(iz), ...),
  // special values included.
  auto sinh = [&](Cx w) { return m.withSpecials(T::Sinh, w, m.coshSinh(w, true), Fix::Sinh); };
  auto cosh = [&](Cx w) { return m.withSpecials(T::Cosh, w, m.coshSinh(w, false), Fix::Cosh); };
  auto tanh = [&](Cx w) { return m.withSpecials(T::Tanh, w, m.tanh(w), Fix::Tanh); };
  auto asinh = [&](Cx w) { return m.withSpecials(T::Asinh, w, m.asinh(w)); };
  auto atanh = [&](Cx w) { return m.withSpecials(T::Atanh, w, m.atanh(w)); };
  auto cexp = [&](Cx w) { return m.withSpecials(T::Exp, w, m.exp(w), Fix::Exp); };
  auto clog = [&](Cx w) { return m.withSpecials(T::Log, w, m.log(w)); };
  Cx r;
  if (name == "exp")
    r = cexp(z);
  else if (name == "log")
    r = clog(z);
  else if (name == "log10" || name == "log2") {
    const double ln = name == "log10" ? M_LN10 : M_LN2;
    r = clog(z);
    r = {m.div(r.re, m.k(ln)), m.div(r.im, m.k(ln))};
  } else if (name == "sqrt")
    r = m.withSpecials(T::Sqrt, z, m.sqrt(z));
  else if (name == "sinh")
    r = sinh(z);
  else if (name == "cosh")
    r = cosh(z);
  else if (name == "tanh")
    r = tanh(z);
  else if (name == "asinh")
    r = asinh(z);
  else if (name == "acosh")
    r = m.withSpecials(T::Acosh, z, m.acosh(z));
  else if (name == "atanh")
    r = atanh(z);
  else if (name == "acos")
    r = m.withSpecials(T::Acos, z, m.acos(z));
  else if (name == "sin")
    r = m.rotBack(sinh(CMath::timesI(z, m)));
  else if (name == "cos")
    r = cosh(CMath::timesI(z, m));
  else if (name == "tan")
    r = m.rotBack(tanh(CMath::timesI(z, m)));
  else if (name == "asin")
    r = m.rotBack(asinh(CMath::timesI(z, m)));
  else if (name == "atan")
    r = m.rotBack(atanh(CMath::timesI(z, m)));
  // NumPy's complex functions that cmath lacks, with NumPy's formulas (npy_math's nc_*).
  else if (name == "exp2")
    r = cexp({m.mul(z.re, m.k(M_LN2)), m.mul(z.im, m.k(M_LN2))});
  else if (name == "expm1") {
    llvm::Value *a = m.f(MathFn::Sin, {m.div(z.im, m.k(2.0))});
    r = {m.sub(m.mul(m.f(MathFn::Expm1, {z.re}), m.f(MathFn::Cos, {z.im})),
               m.mul(m.k(2.0), m.mul(a, a))),
         m.mul(m.f(MathFn::Exp, {z.re}), m.f(MathFn::Sin, {z.im}))};
  } else if (name == "log1p") {
    llvm::Value *re1 = m.add(z.re, m.k(1.0));
    r = {m.f(MathFn::Log, {m.hypot(re1, z.im)}), m.f(MathFn::Atan2, {z.im, re1})};
  } else if (name == "rint")
    r = {m.f(MathFn::Rint, {z.re}), m.f(MathFn::Rint, {z.im})};
  else
    internal(at, "complex function " + name);
  llvm::Value *out = llvm::PoisonValue::get(zv->getType());
  out = B.CreateInsertValue(out, r.re, 0);
  return B.CreateInsertValue(out, r.im, 1);
}

llvm::Value *FunctionLowerer::lowerComplexCall(const CallInstr &i,
                                               MathKind kind) {
  SourceLoc at = i.loc;
  const Type *res = typeOf(&i, at);
  const size_t n = i.numArgs();
  const std::string path = builtinPath(i.builtin);
  const std::string name = path.substr(path.find('.') + 1);
  auto badArgs = [&]() {
    std::string s;
    for (size_t k = 0; k < n; ++k)
      s += (k ? ", " : "") + typeOf(i.arg(k), at)->str();
    fail(at, DiagCode::CallArgs, {path, s});
  };
  std::vector<const Type *> argTypes;
  for (size_t k = 0; k < n; ++k)
    argTypes.push_back(typeOf(i.arg(k), at));
  auto pack = [&](Cx c, const Type *ct) {
    llvm::Value *out = llvm::PoisonValue::get(repr(ct, at));
    out = B.CreateInsertValue(out, c.re, 0);
    return B.CreateInsertValue(out, c.im, 1);
  };
  // Argument k as a complex value of type ct, split.
  auto cxArg = [&](size_t k, const Type *ct) {
    llvm::Value *v = convert(valueOf(i.arg(k), at), argTypes[k], ct, at);
    return Cx{B.CreateExtractValue(v, 0), B.CreateExtractValue(v, 1)};
  };
  auto partTy = [&](const Type *ct) {
    return repr(ct == types::complex64() ? types::float32() : types::float64(),
                at);
  };

  switch (kind) {
  case MathKind::MakeComplex: {
    if (n == 1)
      return convert(valueOf(i.arg(0), at), argTypes[0], res, at);
    if (n != 2)
      badArgs();
    Cx c{convert(valueOf(i.arg(0), at), argTypes[0], types::float64(), at),
         convert(valueOf(i.arg(1), at), argTypes[1], types::float64(), at)};
    return convert(pack(c, types::complex128()), types::complex128(), res, at);
  }
  case MathKind::Conjugate: {
    const Instr *obj =
        i.callee()->numOperands() ? i.callee()->operand(0) : nullptr;
    if (!obj || n != 0)
      badArgs();
    const Type *ot = concretize(typeOf(obj, at));
    llvm::Value *v = valueOf(obj, at);
    if (ot->kind() == TypeKind::Complex) {
      llvm::Value *im = B.CreateFNeg(B.CreateExtractValue(v, 1));
      return convert(B.CreateInsertValue(v, im, 1), ot, res, at);
    }
    return convert(v, ot, res, at);
  }
  case MathKind::Rect: {
    if (n != 2)
      badArgs();
    CMath m(B, M.math, B.getDoubleTy());
    llvm::Value *r =
        convert(valueOf(i.arg(0), at), argTypes[0], types::float64(), at);
    llvm::Value *phi =
        convert(valueOf(i.arg(1), at), argTypes[1], types::float64(), at);
    Cx c{m.mul(r, m.f(MathFn::Cos, {phi})), m.mul(r, m.f(MathFn::Sin, {phi}))};
    // CPython: rect(r, 0) is (r, r * 0) so that infinite r gives a real result.
    c = m.sel(m.eq(phi, m.k(0.0)), Cx{r, m.mul(r, phi)}, c);
    c = m.withSpecials(CmathTable::Rect, Cx{r, phi}, c, CMath::InfFix::Rect);
    return convert(pack(c, types::complex128()), types::complex128(), res, at);
  }
  default:
    break;
  }

  const Type *ct = mathComplexResult(argTypes);
  CMath m(B, M.math, partTy(ct));
  if (n < 1)
    badArgs();
  Cx z = cxArg(0, ct);
  switch (kind) {
  case MathKind::CPredicate: {
    if (n != 1)
      badArgs();
    auto isInf = [&](llvm::Value *v) {
      return m.eq(m.fabs(v), llvm::ConstantFP::getInfinity(m.ty));
    };
    llvm::Value *r;
    if (name == "isnan")
      r = m.lor(B.CreateFCmpUNO(z.re, z.re), B.CreateFCmpUNO(z.im, z.im));
    else if (name == "isinf")
      r = m.lor(isInf(z.re), isInf(z.im));
    else
      r = m.land(m.lt(m.fabs(z.re), llvm::ConstantFP::getInfinity(m.ty)),
                 m.lt(m.fabs(z.im), llvm::ConstantFP::getInfinity(m.ty)));
    return convert(r, types::boolean(), res, at);
  }
  case MathKind::Phase:
  case MathKind::Polar: {
    if (n != 1)
      badArgs();
    const Type *ft =
        ct == types::complex64() ? types::float32() : types::float64();
    llvm::Value *ph = m.f(MathFn::Atan2, {z.im, z.re});
    if (kind == MathKind::Phase)
      return convert(ph, ft, res, at);
    const TupleType *tt = types::tuple({ft, ft});
    llvm::Value *out = llvm::PoisonValue::get(repr(tt, at));
    // CPython's abs: an infinite part gives inf even when the other is nan.
    llvm::Value *r = m.sel(m.lor(m.isInf(z.re), m.isInf(z.im)), m.inf(),
                           m.hypot(z.re, z.im));
    out = B.CreateInsertValue(out, r, 0);
    out = B.CreateInsertValue(out, ph, 1);
    return convert(out, tt, res, at);
  }
  case MathKind::CLog: {
    Cx r = m.withSpecials(CmathTable::Log, z, m.log(z));
    if (n == 2) {
      Cx base = cxArg(1, ct);
      r = m.cdiv(r, m.withSpecials(CmathTable::Log, base, m.log(base)));
    } else if (n != 1)
      badArgs();
    return convert(pack(r, ct), ct, res, at);
  }
  case MathKind::CUnary:
    if (n != 1)
      badArgs();
    return convert(complexUnary(name, pack(z, ct), at), ct, res, at);
  default:
    break;
  }
  internal(at, "complex builtin " + path);
}

} // namespace ptxjit::codegen::detail
