// Lowering of the numeric builtins divmod(), round() and pow().
//
// divmod and two-argument pow reuse the operators' code (binaryValues), so they agree with
// `//`, `%` and `**` bit for bit. round(x, n) of a float follows Numba's algorithm (scale by
// 10**n, round half to even, scale back) with one correction that makes it agree with
// CPython's correctly rounded result: when the scaled value is exactly halfway between two
// integers, the exact residual of the scaling (an FMA) says on which side the true product lies.
// pow(a, b, m) is modular exponentiation by squaring.
#include "codegen/Lowering.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

namespace ptxjit::codegen::detail {

using namespace ir;

namespace {

/// The module's private constant array `name`, created from `init` on first use.
llvm::GlobalVariable *constantArray(llvm::Module &m, const std::string &name,
                                    llvm::Constant *init) {
  if (llvm::GlobalVariable *g = m.getNamedGlobal(name))
    return g;
  auto *g = new llvm::GlobalVariable(m, init->getType(), /*isConstant=*/true,
                                     llvm::GlobalValue::PrivateLinkage, init, name);
  g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  return g;
}

/// Largest n with 10**n exact in a double.
constexpr int kExactPow10 = 22;

/// Builds `u64 mulmod(u64 x, u64 y, u64 m)` = x * y mod m for x, y < m: one 64-bit product
/// when m <= 2**32, else double-and-add (no 128-bit division: the host has no __umodti3).
llvm::Function *mulmodHelper(ModuleLowerer &M) {
  const char *name = "__ptxjit_mulmod_u64";
  if (llvm::Function *f = M.mod.getFunction(name))
    return f;
  llvm::LLVMContext &ctx = M.ctx;
  auto *i64 = llvm::Type::getInt64Ty(ctx);
  auto *f = llvm::Function::Create(llvm::FunctionType::get(i64, {i64, i64, i64}, false),
                                   llvm::GlobalValue::InternalLinkage, name, M.mod);
  f->setDoesNotThrow();
  llvm::Value *x = f->getArg(0), *y = f->getArg(1), *m = f->getArg(2);
  auto *entry = llvm::BasicBlock::Create(ctx, "entry", f);
  auto *small = llvm::BasicBlock::Create(ctx, "small", f);
  auto *loop = llvm::BasicBlock::Create(ctx, "loop", f);
  auto *done = llvm::BasicBlock::Create(ctx, "done", f);
  llvm::IRBuilder<> b(entry);
  auto c64 = [&](uint64_t v) { return llvm::ConstantInt::get(i64, v); };
  b.CreateCondBr(b.CreateICmpULE(m, c64(uint64_t(1) << 32)), small, loop);
  b.SetInsertPoint(small);
  b.CreateRet(b.CreateURem(b.CreateMul(x, y), m));
  // a + b mod m for a, b < m, without overflow.
  auto addmod = [&](llvm::Value *a, llvm::Value *c) {
    llvm::Value *t = b.CreateSub(m, c);
    return b.CreateSelect(b.CreateICmpUGE(a, t), b.CreateSub(a, t), b.CreateAdd(a, c));
  };
  b.SetInsertPoint(loop);
  llvm::PHINode *acc = b.CreatePHI(i64, 2), *bit = b.CreatePHI(i64, 2);
  acc->addIncoming(c64(0), entry);
  bit->addIncoming(c64(63), entry);
  llvm::Value *dbl = addmod(acc, acc);
  llvm::Value *set = b.CreateICmpNE(b.CreateAnd(b.CreateLShr(y, bit), c64(1)), c64(0));
  llvm::Value *next = b.CreateSelect(set, addmod(dbl, x), dbl);
  llvm::Value *nextBit = b.CreateSub(bit, c64(1));
  acc->addIncoming(next, loop);
  bit->addIncoming(nextBit, loop);
  b.CreateCondBr(b.CreateICmpEQ(bit, c64(0)), done, loop);
  b.SetInsertPoint(done);
  b.CreateRet(next);
  return f;
}

/// Builds `i64 powmod(i64 a, i64 b, i64 m)` (signed: Python's pow(a, b, m), a negative b
/// through the modular inverse) or its unsigned twin. m == 0, and a negative b when a has no
/// inverse modulo m, give 0 (Python raises ValueError; kernels cannot).
llvm::Function *powmodHelper(ModuleLowerer &M, bool isSigned) {
  std::string name = isSigned ? "__ptxjit_powmod_i64" : "__ptxjit_powmod_u64";
  if (llvm::Function *f = M.mod.getFunction(name))
    return f;
  llvm::LLVMContext &ctx = M.ctx;
  auto *i64 = llvm::Type::getInt64Ty(ctx);
  auto *i128 = llvm::Type::getInt128Ty(ctx);
  auto *fty = llvm::FunctionType::get(i64, {i64, i64, i64}, false);
  auto *f = llvm::Function::Create(fty, llvm::GlobalValue::InternalLinkage, name, M.mod);
  f->setDoesNotThrow();
  llvm::Value *a = f->getArg(0), *b = f->getArg(1), *m = f->getArg(2);
  auto *entry = llvm::BasicBlock::Create(ctx, "entry", f);
  auto *zeroMod = llvm::BasicBlock::Create(ctx, "mod.zero", f);
  auto *start = llvm::BasicBlock::Create(ctx, "start", f);
  auto *invHead = llvm::BasicBlock::Create(ctx, "inv.head", f);
  auto *invBody = llvm::BasicBlock::Create(ctx, "inv.body", f);
  auto *invDone = llvm::BasicBlock::Create(ctx, "inv.done", f);
  auto *loopPre = llvm::BasicBlock::Create(ctx, "loop.pre", f);
  auto *loop = llvm::BasicBlock::Create(ctx, "loop", f);
  auto *body = llvm::BasicBlock::Create(ctx, "loop.body", f);
  auto *done = llvm::BasicBlock::Create(ctx, "done", f);
  llvm::IRBuilder<> b2(entry);
  auto c64 = [&](uint64_t v) { return llvm::ConstantInt::get(i64, v); };
  auto c128 = [&](uint64_t v) { return llvm::ConstantInt::get(i128, v); };
  llvm::Function *mulmodFn = mulmodHelper(M);
  auto mulmod = [&](llvm::Value *x, llvm::Value *y, llvm::Value *mod) {
    return b2.CreateCall(mulmodFn, {x, y, mod});
  };

  // entry: m == 0 gives 0.
  b2.CreateCondBr(b2.CreateICmpEQ(m, c64(0)), zeroMod, start);
  b2.SetInsertPoint(zeroMod);
  b2.CreateRet(c64(0));

  // start: |m| and a reduced into [0, |m|) (unsigned arithmetic: |INT64_MIN| is 2**63).
  b2.SetInsertPoint(start);
  llvm::Value *um = m, *ua, *e = b, *bNeg = b2.getFalse();
  if (isSigned) {
    llvm::Value *mNeg = b2.CreateICmpSLT(m, c64(0));
    um = b2.CreateSelect(mNeg, b2.CreateNeg(m), m);
    llvm::Value *aNeg = b2.CreateICmpSLT(a, c64(0));
    llvm::Value *r = b2.CreateURem(b2.CreateSelect(aNeg, b2.CreateNeg(a), a), um);
    ua = b2.CreateSelect(b2.CreateAnd(aNeg, b2.CreateICmpNE(r, c64(0))), b2.CreateSub(um, r), r);
    bNeg = b2.CreateICmpSLT(b, c64(0));
    e = b2.CreateSelect(bNeg, b2.CreateNeg(b), b);
  } else {
    ua = b2.CreateURem(a, um);
  }
  b2.CreateCondBr(bNeg, invHead, loopPre);

  // Extended Euclid on (|m|, a): t with a * t == gcd (mod |m|); coefficients in i128.
  b2.SetInsertPoint(invHead);
  llvm::PHINode *r0 = b2.CreatePHI(i64, 2), *r1 = b2.CreatePHI(i64, 2);
  llvm::PHINode *t0 = b2.CreatePHI(i128, 2), *t1 = b2.CreatePHI(i128, 2);
  r0->addIncoming(um, start);
  r1->addIncoming(ua, start);
  t0->addIncoming(c128(0), start);
  t1->addIncoming(c128(1), start);
  b2.CreateCondBr(b2.CreateICmpEQ(r1, c64(0)), invDone, invBody);
  b2.SetInsertPoint(invBody);
  llvm::Value *q = b2.CreateUDiv(r0, r1);
  llvm::Value *r2 = b2.CreateSub(r0, b2.CreateMul(q, r1));
  llvm::Value *t2 = b2.CreateSub(t0, b2.CreateMul(b2.CreateZExt(q, i128), t1));
  r0->addIncoming(r1, invBody);
  r1->addIncoming(r2, invBody);
  t0->addIncoming(t1, invBody);
  t1->addIncoming(t2, invBody);
  b2.CreateBr(invHead);
  b2.SetInsertPoint(invDone);
  llvm::Value *invertible = b2.CreateICmpEQ(r0, c64(1));
  llvm::Value *tNeg = b2.CreateICmpSLT(t0, c128(0));
  llvm::Value *inv =
      b2.CreateTrunc(b2.CreateSelect(tNeg, b2.CreateAdd(t0, b2.CreateZExt(um, i128)), t0), i64);
  b2.CreateCondBr(invertible, loopPre, zeroMod);

  // Square and multiply: result = base**e mod |m|.
  b2.SetInsertPoint(loopPre);
  llvm::PHINode *base0 = b2.CreatePHI(i64, 2);
  base0->addIncoming(ua, start);
  base0->addIncoming(inv, invDone);
  llvm::Value *one = b2.CreateURem(c64(1), um); // 0 when |m| == 1
  b2.CreateBr(loop);
  b2.SetInsertPoint(loop);
  llvm::PHINode *acc = b2.CreatePHI(i64, 2), *base = b2.CreatePHI(i64, 2);
  llvm::PHINode *exp = b2.CreatePHI(i64, 2);
  acc->addIncoming(one, loopPre);
  base->addIncoming(base0, loopPre);
  exp->addIncoming(e, loopPre);
  b2.CreateCondBr(b2.CreateICmpEQ(exp, c64(0)), done, body);
  b2.SetInsertPoint(body);
  llvm::Value *odd = b2.CreateICmpNE(b2.CreateAnd(exp, c64(1)), c64(0));
  llvm::Value *acc2 = b2.CreateSelect(odd, mulmod(acc, base, um), acc);
  llvm::Value *base2 = mulmod(base, base, um);
  acc->addIncoming(acc2, body);
  base->addIncoming(base2, body);
  exp->addIncoming(b2.CreateLShr(exp, c64(1)), body);
  b2.CreateBr(loop);

  // A negative modulus gives a result in (m, 0], as Python's %.
  b2.SetInsertPoint(done);
  llvm::Value *res = acc;
  if (isSigned)
    res = b2.CreateSelect(b2.CreateAnd(b2.CreateICmpSLT(m, c64(0)), b2.CreateICmpNE(acc, c64(0))),
                          b2.CreateSub(acc, um), acc);
  b2.CreateRet(res);
  return f;
}

} // namespace

llvm::Value *FunctionLowerer::lowerDivmod(const CallInstr &i) {
  SourceLoc at = i.loc;
  auto *tt = dyn_cast<TupleType>(concretize(typeOf(&i, at)));
  if (i.numArgs() != 2 || !tt || tt->size() != 2)
    internal(at, "divmod typed " + typeOf(&i, at)->str());
  const Instr *a = i.arg(0), *b = i.arg(1);
  llvm::Value *l = valueOf(a, at), *r = valueOf(b, at);
  const Type *lt = typeOf(a, at), *rt = typeOf(b, at), *et = tt->elements()[0];
  llvm::Value *out = llvm::PoisonValue::get(repr(tt, at));
  out = B.CreateInsertValue(out, binaryValues(BinaryOp::FloorDiv, l, lt, r, rt, et, at), 0);
  return B.CreateInsertValue(out, binaryValues(BinaryOp::Mod, l, lt, r, rt, et, at), 1);
}

llvm::Value *FunctionLowerer::lowerPowCall(const CallInstr &i) {
  SourceLoc at = i.loc;
  const Type *res = typeOf(&i, at);
  const size_t n = i.numArgs();
  if (n == 2)
    return binaryValues(BinaryOp::Pow, valueOf(i.arg(0), at), typeOf(i.arg(0), at),
                        valueOf(i.arg(1), at), typeOf(i.arg(1), at), res, at,
                        constantIntOf(i.arg(1)));
  auto *rs = dyn_cast<ScalarType>(concretize(res));
  if (n != 3 || !rs || rs->kind() != TypeKind::Int)
    internal(at, "pow typed " + res->str());
  // In 64 bits (the result fits the result type: |result| < |m|).
  const ScalarType *wide = rs->isSigned() ? types::int64() : types::uint64();
  llvm::Value *v[3];
  for (size_t k = 0; k < 3; ++k)
    v[k] = convert(convert(valueOf(i.arg(k), at), typeOf(i.arg(k), at), rs, at), rs, wide, at);
  llvm::Value *r = B.CreateCall(powmodHelper(M, rs->isSigned()), {v[0], v[1], v[2]});
  return convert(r, wide, res, at);
}

llvm::Value *FunctionLowerer::lowerRound(const CallInstr &i) {
  SourceLoc at = i.loc;
  const Type *res = typeOf(&i, at);
  const size_t n = i.numArgs();
  auto *xs = dyn_cast<ScalarType>(concretize(typeOf(i.arg(0), at)));
  if (n < 1 || n > 2 || !xs || xs->kind() == TypeKind::Complex)
    internal(at, "round typed " + res->str());
  const Type *xt = typeOf(i.arg(0), at);
  llvm::Value *x = valueOf(i.arg(0), at);
  const bool digits = n == 2 && concretize(typeOf(i.arg(1), at))->kind() != TypeKind::None;
  auto *i64 = B.getInt64Ty();
  auto *f64 = B.getDoubleTy();

  llvm::Value *nd = nullptr;
  if (digits) {
    const Type *nt = typeOf(i.arg(1), at);
    nd = convert(valueOf(i.arg(1), at), nt, types::int64(), at);
    if (auto *ns = dyn_cast<ScalarType>(concretize(nt));
        ns && ns->kind() == TypeKind::Int && !ns->isSigned() && ns->bits() == 64)
      nd = B.CreateSelect(B.CreateICmpSLT(nd, B.getInt64(0)), B.getInt64(1000), nd); // huge
  }

  if (xs->kind() != TypeKind::Float) {
    // An int (or bool): unchanged, or rounded half to even to a multiple of 10**-ndigits.
    if (!digits)
      return convert(x, xt, res, at);
    const bool isSigned = xs->kind() == TypeKind::Bool || xs->isSigned();
    const ScalarType *wide = isSigned ? types::int64() : types::uint64();
    llvm::Value *w = convert(x, xt, wide, at);
    std::vector<llvm::Constant *> pows;
    uint64_t p = 1;
    for (int k = 0; k <= 19; ++k, p *= 10)
      pows.push_back(llvm::ConstantInt::get(i64, p));
    auto *tableTy = llvm::ArrayType::get(i64, pows.size());
    llvm::GlobalVariable *table =
        constantArray(M.mod, "__ptxjit_pow10_u64", llvm::ConstantArray::get(tableTy, pows));
    llvm::Value *k = B.CreateNeg(nd);
    llvm::Value *keep = B.CreateICmpSGE(nd, B.getInt64(0));
    llvm::Value *toZero = B.CreateICmpSGT(k, B.getInt64(isSigned ? 18 : 19));
    llvm::Value *idx = B.CreateSelect(B.CreateOr(keep, toZero), B.getInt64(0), k);
    llvm::Value *pw = B.CreateLoad(i64, B.CreateInBoundsGEP(tableTy, table, {B.getInt64(0), idx}));
    llvm::Value *q = intBinary(BinaryOp::FloorDiv, w, pw, isSigned, at);
    llvm::Value *r = intBinary(BinaryOp::Mod, w, pw, isSigned, at); // in [0, pw)
    llvm::Value *half = B.CreateSub(pw, r);
    llvm::Value *up =
        B.CreateOr(B.CreateICmpUGT(r, half),
                   B.CreateAnd(B.CreateICmpEQ(r, half),
                               B.CreateICmpNE(B.CreateAnd(q, B.getInt64(1)), B.getInt64(0))));
    llvm::Value *rounded = B.CreateAdd(B.CreateMul(q, pw), B.CreateSelect(up, pw, B.getInt64(0)));
    llvm::Value *out = B.CreateSelect(keep, w, B.CreateSelect(toZero, B.getInt64(0), rounded));
    return convert(out, wide, res, at);
  }

  if (!digits) {
    // round(x) of a float: half to even, to int64 (nan gives 0, ±inf saturate).
    llvm::Value *r = mathCall(MathFn::Rint, {x});
    llvm::Function *sat =
        llvm::Intrinsic::getDeclaration(&M.mod, llvm::Intrinsic::fptosi_sat, {i64, r->getType()});
    return convert(B.CreateCall(sat, {r}), types::int64(), res, at);
  }

  // round(x, ndigits) of a float, computed in float64 (float32 results are rounded from it).
  llvm::Value *xd = convert(x, xt, types::float64(), at);
  std::vector<llvm::Constant *> pows;
  double p = 1.0;
  for (int k = 0; k <= kExactPow10; ++k, p *= 10.0)
    pows.push_back(llvm::ConstantFP::get(f64, p)); // exact: every 10**k, k <= 22, is a double
  auto *tableTy = llvm::ArrayType::get(f64, pows.size());
  llvm::GlobalVariable *table =
      constantArray(M.mod, "__ptxjit_pow10_f64", llvm::ConstantArray::get(tableTy, pows));
  // 10**k for 0 <= k: exact from the table up to 22, else pow() (as Numba).
  auto pow10 = [&](llvm::Value *k) {
    llvm::Value *exact = B.CreateICmpSLE(k, B.getInt64(kExactPow10));
    llvm::Value *idx = B.CreateSelect(exact, k, B.getInt64(0));
    llvm::Value *t = B.CreateLoad(f64, B.CreateInBoundsGEP(tableTy, table, {B.getInt64(0), idx}));
    llvm::Value *pw =
        mathCall(MathFn::Pow, {llvm::ConstantFP::get(f64, 10.0), B.CreateSIToFP(k, f64)});
    return B.CreateSelect(exact, t, pw);
  };
  auto fp = [&](double v) { return llvm::ConstantFP::get(f64, v); };
  // Half to even, except that an exact tie of the scaled value y follows the sign of the exact
  // residual `resid` (the true value minus y): CPython's correctly rounded result.
  auto roundTie = [&](llvm::Value *y, llvm::Value *resid) {
    llvm::Value *z = mathCall(MathFn::Rint, {y});
    llvm::Value *fl = mathCall(MathFn::Floor, {y});
    llvm::Value *tie = B.CreateFCmpOEQ(B.CreateFSub(y, fl), fp(0.5));
    llvm::Value *fixed = B.CreateSelect(B.CreateFCmpOGT(resid, fp(0.0)), B.CreateFAdd(fl, fp(1.0)),
                                        B.CreateSelect(B.CreateFCmpOLT(resid, fp(0.0)), fl, z));
    return mathCall(MathFn::Copysign, {B.CreateSelect(tie, fixed, z), y});
  };
  llvm::Value *nonNeg = B.CreateICmpSGE(nd, B.getInt64(0));
  // ndigits >= 0: y = x * 10**ndigits (in two factors above 22 so neither overflows).
  llvm::Value *big = B.CreateICmpSGT(nd, B.getInt64(kExactPow10));
  llvm::Value *pow1 = pow10(B.CreateSelect(
      nonNeg, B.CreateSelect(big, B.CreateSub(nd, B.getInt64(kExactPow10)), nd), B.getInt64(0)));
  llvm::Value *pow2 = B.CreateSelect(big, fp(1e22), fp(1.0));
  llvm::Value *y1 = B.CreateFMul(B.CreateFMul(xd, pow1), pow2);
  llvm::Value *resid1 =
      B.CreateSelect(big, fp(0.0), mathCall(MathFn::Fma, {xd, pow1, B.CreateFNeg(y1)}));
  llvm::Value *r1 = B.CreateFDiv(B.CreateFDiv(roundTie(y1, resid1), pow2), pow1);
  // From 2**52 on, y is an integer and rounding can move x by less than half an ULP: x is the
  // nearest double to the result (CPython), where scaling back could be an ULP off (and inf).
  auto integral = [&](llvm::Value *y) {
    return B.CreateFCmpUGE(mathCall(MathFn::Fabs, {y}), fp(4503599627370496.0));
  };
  r1 = B.CreateSelect(integral(y1), xd, r1);
  // ndigits < 0: y = x / 10**-ndigits; x - y * 10**-ndigits exactly by an FMA.
  llvm::Value *k2 = B.CreateSelect(nonNeg, B.getInt64(0), B.CreateNeg(nd));
  llvm::Value *pw2 = pow10(k2);
  llvm::Value *y2 = B.CreateFDiv(xd, pw2);
  llvm::Value *resid2 = B.CreateSelect(B.CreateICmpSGT(k2, B.getInt64(kExactPow10)), fp(0.0),
                                       mathCall(MathFn::Fma, {B.CreateFNeg(y2), pw2, xd}));
  llvm::Value *r2 = B.CreateSelect(integral(y2), xd, B.CreateFMul(roundTie(y2, resid2), pw2));
  llvm::Value *r = B.CreateSelect(nonNeg, r1, r2);
  // CPython's limits: beyond 323 digits x is unchanged; below -308 the result is a signed 0.
  r = B.CreateSelect(B.CreateICmpSGT(nd, B.getInt64(323)), xd, r);
  r = B.CreateSelect(B.CreateICmpSLT(nd, B.getInt64(-308)), B.CreateFMul(fp(0.0), xd), r);
  // nan and ±inf are returned unchanged.
  llvm::Value *finite =
      B.CreateFCmpOLT(mathCall(MathFn::Fabs, {xd}), llvm::ConstantFP::getInfinity(f64));
  r = B.CreateSelect(finite, r, xd);
  return convert(r, types::float64(), res, at);
}

} // namespace ptxjit::codegen::detail
