// Lowering of constants, numeric conversions and operators with Python/NumPy semantics:
// wrapping integer arithmetic, floor division and modulo with the divisor's sign, integer
// division by zero giving 0, shifts defined for every count, ** by repeated squaring, ordered
// float comparisons (`!=` unordered).
#include "codegen/Lowering.h"
#include "ir/ConstantOf.h"

#include "ir/typing/Typing.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

namespace ptxjit::codegen::detail {

using namespace ir;

namespace {

const ScalarType *scalarOf(const Type *t) {
  return dyn_cast<ScalarType>(concretize(intEnumAsInt(t)));
}

} // namespace

// ---- Conversions ----

llvm::Value *FunctionLowerer::convert(llvm::Value *v, const Type *from, const Type *to,
                                      SourceLoc at) {
  if (from == to)
    return v;
  // An enum member is its value (typing allowed the conversion: an IntEnum member where an int
  // is expected, a member passed on as a member).
  const Type *f = concretize(enumValueOf(from)), *t = concretize(enumValueOf(to));
  if (f == t)
    return v;
  auto *fs = dyn_cast<ScalarType>(f);
  auto *ts = dyn_cast<ScalarType>(t);
  if (fs && ts)
    return castScalar(B, v, fs, ts);
  if (auto *ft = dyn_cast<TupleType>(f)) {
    if (auto *tt = dyn_cast<TupleType>(t); tt && tt->size() == ft->size()) {
      llvm::Value *out = llvm::PoisonValue::get(repr(tt, at));
      for (size_t k = 0; k < ft->size(); ++k) {
        llvm::Value *e = B.CreateExtractValue(v, unsigned(k));
        out = B.CreateInsertValue(out, convert(e, ft->elements()[k], tt->elements()[k], at),
                                  unsigned(k));
      }
      return out;
    }
  }
  if (auto *fa = dyn_cast<ArrayType>(f)) {
    if (auto *ta = dyn_cast<ArrayType>(t);
        ta && ta->dtype() == fa->dtype() && ta->ndim() == fa->ndim())
      return v; // only the layout/readonly flag differs: same view
  }
  if (auto *fr = dyn_cast<RecordType>(f)) {
    if (auto *tr = dyn_cast<RecordType>(t); tr && tr->writable() == fr->writable())
      return v; // only the read-only flag differs: the same address
  }
  if (t->kind() == TypeKind::Pointer) {
    if (f->kind() == TypeKind::Pointer) // into void*: the same address
      return v;
    if (fs && fs->kind() == TypeKind::Int) // an integer address passed for a pointer parameter
      return B.CreateIntToPtr(castScalar(B, v, fs, types::int64()), repr(t, at));
  }
  if (ModuleLowerer::isCompileTimeOnly(f) && ModuleLowerer::isCompileTimeOnly(t))
    return v;
  if (f->kind() == TypeKind::Iterator && t->kind() == TypeKind::Iterator &&
      repr(f, at) == repr(t, at))
    return v;
  internal(at, "cannot convert a value of type " + from->str() + " to " + to->str());
}

// ---- Constants ----

llvm::Value *FunctionLowerer::constant(const ConstValue &c, const Type *t, SourceLoc at) {
  const Type *ct = concretize(t);
  if (ModuleLowerer::isCompileTimeOnly(ct)) {
    if (c.kind == ConstValue::Kind::Unsupported)
      fail(at, DiagCode::UnsupportedConstant, {c.s});
    return placeholder();
  }
  llvm::LLVMContext &ctx = M.ctx;
  switch (c.kind) {
  case ConstValue::Kind::Bool:
    return convert(B.getInt1(c.b), types::boolean(), ct, at);
  case ConstValue::Kind::Int:
    return convert(B.getInt64(static_cast<uint64_t>(c.i)),
                   c.isUnsigned ? types::uint64() : types::int64(), ct, at);
  case ConstValue::Kind::Float:
    return convert(llvm::ConstantFP::get(llvm::Type::getDoubleTy(ctx), c.f), types::float64(), ct,
                   at);
  case ConstValue::Kind::Complex: {
    auto *d = llvm::Type::getDoubleTy(ctx);
    llvm::Constant *parts[] = {llvm::ConstantFP::get(d, c.c.real()),
                               llvm::ConstantFP::get(d, c.c.imag())};
    return convert(llvm::ConstantStruct::getAnon(ctx, parts), types::complex128(), ct, at);
  }
  case ConstValue::Kind::Tuple: {
    auto *tt = dyn_cast<TupleType>(ct);
    if (!tt || tt->size() != c.elems.size())
      internal(at, "tuple constant " + c.str() + " typed " + t->str());
    llvm::Value *out = llvm::PoisonValue::get(repr(tt, at));
    for (size_t k = 0; k < c.elems.size(); ++k)
      out = B.CreateInsertValue(out, constant(c.elems[k], tt->elements()[k], at), unsigned(k));
    return out;
  }
  case ConstValue::Kind::Unsupported:
    fail(at, DiagCode::UnsupportedConstant, {c.s});
  case ConstValue::Kind::None:
  case ConstValue::Kind::String:
  case ConstValue::Kind::Bytes:
  case ConstValue::Kind::Ellipsis:
    break;
  }
  internal(at, "constant " + c.str() + " typed " + t->str());
}

// ---- Binary operators ----

llvm::Value *FunctionLowerer::intBinary(BinaryOp op, llvm::Value *l, llvm::Value *r, bool isSigned,
                                        SourceLoc at) {
  llvm::Type *ty = l->getType();
  unsigned bits = ty->getIntegerBitWidth();
  auto *zero = llvm::ConstantInt::get(ty, 0);
  auto *one = llvm::ConstantInt::get(ty, 1);
  switch (op) {
  case BinaryOp::Add:
    return B.CreateAdd(l, r);
  case BinaryOp::Sub:
    return B.CreateSub(l, r);
  case BinaryOp::Mul:
    return B.CreateMul(l, r);
  case BinaryOp::And:
    return B.CreateAnd(l, r);
  case BinaryOp::Or:
    return B.CreateOr(l, r);
  case BinaryOp::Xor:
    return B.CreateXor(l, r);
  case BinaryOp::FloorDiv:
  case BinaryOp::Mod: {
    // NumPy's error model: x // 0 == x % 0 == 0. The divisor is made safe first so that no
    // division by zero (or INT_MIN / -1 overflow) ever executes.
    llvm::Value *isZero = B.CreateICmpEQ(r, zero);
    if (!isSigned) {
      llvm::Value *safe = B.CreateSelect(isZero, one, r);
      llvm::Value *v = op == BinaryOp::FloorDiv ? B.CreateUDiv(l, safe) : B.CreateURem(l, safe);
      return B.CreateSelect(isZero, zero, v);
    }
    llvm::Value *minusOne = llvm::ConstantInt::getSigned(ty, -1);
    llvm::Value *isMinusOne = B.CreateICmpEQ(r, minusOne);
    llvm::Value *safe = B.CreateSelect(B.CreateOr(isZero, isMinusOne), one, r);
    llvm::Value *q = B.CreateSDiv(l, safe);
    llvm::Value *rem = B.CreateSRem(l, safe);
    // Round toward negative infinity: adjust when the remainder and divisor differ in sign.
    llvm::Value *adjust =
        B.CreateAnd(B.CreateICmpNE(rem, zero), B.CreateICmpSLT(B.CreateXor(rem, r), zero));
    if (op == BinaryOp::FloorDiv) {
      q = B.CreateSelect(adjust, B.CreateSub(q, one), q);
      q = B.CreateSelect(isMinusOne, B.CreateSub(zero, l), q); // wraps for INT_MIN
      return B.CreateSelect(isZero, zero, q);
    }
    rem = B.CreateSelect(adjust, B.CreateAdd(rem, r), rem);
    return B.CreateSelect(isZero, zero, rem); // x % -1 is already 0
  }
  case BinaryOp::LShift:
  case BinaryOp::RShift: {
    // Counts >= the width (or negative) shift everything out: 0, or the sign for >> of a
    // signed value. No poison for any count.
    auto *width = llvm::ConstantInt::get(ty, bits);
    auto *mask = llvm::ConstantInt::get(ty, bits - 1);
    llvm::Value *tooBig = B.CreateICmpUGE(r, width);
    llvm::Value *amount = B.CreateAnd(r, mask);
    if (op == BinaryOp::LShift)
      return B.CreateSelect(tooBig, zero, B.CreateShl(l, amount));
    if (isSigned)
      return B.CreateAShr(l, B.CreateSelect(tooBig, mask, amount));
    return B.CreateSelect(tooBig, zero, B.CreateLShr(l, amount));
  }
  default:
    internal(at, std::string("integer operator ") + binaryOpName(op));
  }
}

llvm::Value *FunctionLowerer::floatBinary(BinaryOp op, llvm::Value *l, llvm::Value *r,
                                          SourceLoc at) {
  llvm::Type *ty = l->getType();
  auto *zero = llvm::ConstantFP::get(ty, 0.0);
  switch (op) {
  case BinaryOp::Add:
    return B.CreateFAdd(l, r);
  case BinaryOp::Sub:
    return B.CreateFSub(l, r);
  case BinaryOp::Mul:
    return B.CreateFMul(l, r);
  case BinaryOp::TrueDiv:
    if (ty->isBFloatTy() && !M.isHost()) {
      // bfloat16 on the GPU as CUDA's __hdiv: div.approx.f32 of the float32 values, which is
      // correctly rounded once rounded to bfloat16 (the quotient of two 8-bit significands is
      // never a bfloat16 rounding boundary, nor within div.approx's 2 ulp of one), with the
      // divisor scaled by 1/4 from 2**126 on, where div.approx.f32 would flush the result.
      llvm::Type *f32 = B.getFloatTy();
      llvm::Value *a = B.CreateFPExt(l, f32), *b = B.CreateFPExt(r, f32);
      llvm::Value *big =
          B.CreateFCmpOGE(mathCall(MathFn::Fabs, {b}), llvm::ConstantFP::get(f32, 0x1p126));
      auto *quarter = llvm::ConstantFP::get(f32, 0.25);
      b = B.CreateSelect(big, B.CreateFMul(b, quarter), b);
      llvm::Value *q = B.CreateCall(
          llvm::Intrinsic::getDeclaration(&M.mod, llvm::Intrinsic::nvvm_div_approx_f), {a, b});
      q = B.CreateSelect(big, B.CreateFMul(q, quarter), q);
      return B.CreateFPTrunc(q, ty);
    }
    return B.CreateFDiv(l, r);
  case BinaryOp::FloorDiv:
  case BinaryOp::Mod: {
    // Python's float divmod (as NumPy's npy_divmod): mod = fmod(a, b) moved to b's sign;
    // div = (a - mod) / b, floored and corrected; b == 0 gives a / b and nan.
    llvm::Value *mod = mathCall(MathFn::Fmod, {l, r});
    llvm::Value *modNonZero = B.CreateFCmpUNE(mod, zero);
    llvm::Value *signsDiffer = B.CreateXor(B.CreateFCmpOLT(r, zero), B.CreateFCmpOLT(mod, zero));
    llvm::Value *adjust = B.CreateAnd(modNonZero, signsDiffer);
    llvm::Value *modAdj = B.CreateSelect(adjust, B.CreateFAdd(mod, r), mod);
    modAdj = B.CreateSelect(modNonZero, modAdj, mathCall(MathFn::Copysign, {zero, r}));
    if (op == BinaryOp::Mod)
      return modAdj;
    llvm::Value *div = B.CreateFDiv(B.CreateFSub(l, mod), r);
    div = B.CreateSelect(adjust, B.CreateFSub(div, llvm::ConstantFP::get(ty, 1.0)), div);
    llvm::Value *fl = mathCall(MathFn::Floor, {div});
    llvm::Value *roundUp = B.CreateFCmpOGT(B.CreateFSub(div, fl), llvm::ConstantFP::get(ty, 0.5));
    fl = B.CreateSelect(roundUp, B.CreateFAdd(fl, llvm::ConstantFP::get(ty, 1.0)), fl);
    llvm::Value *quot = B.CreateFDiv(l, r);
    llvm::Value *divZero = B.CreateFCmpOEQ(div, zero);
    llvm::Value *result = B.CreateSelect(divZero, mathCall(MathFn::Copysign, {zero, quot}), fl);
    return B.CreateSelect(B.CreateFCmpOEQ(r, zero), quot, result);
  }
  default:
    internal(at, std::string("float operator ") + binaryOpName(op));
  }
}

llvm::Value *FunctionLowerer::complexBinary(BinaryOp op, llvm::Value *l, llvm::Value *r,
                                            SourceLoc at) {
  llvm::Value *a = B.CreateExtractValue(l, 0), *b = B.CreateExtractValue(l, 1);
  llvm::Value *c = B.CreateExtractValue(r, 0), *d = B.CreateExtractValue(r, 1);
  llvm::Value *re, *im;
  switch (op) {
  case BinaryOp::Add:
    re = B.CreateFAdd(a, c);
    im = B.CreateFAdd(b, d);
    break;
  case BinaryOp::Sub:
    re = B.CreateFSub(a, c);
    im = B.CreateFSub(b, d);
    break;
  case BinaryOp::Mul:
    re = B.CreateFSub(B.CreateFMul(a, c), B.CreateFMul(b, d));
    im = B.CreateFAdd(B.CreateFMul(a, d), B.CreateFMul(b, c));
    break;
  case BinaryOp::TrueDiv: {
    // Smith's algorithm: scale by the larger of |c|, |d|.
    llvm::Value *bigC = B.CreateFCmpOGE(mathCall(MathFn::Fabs, {c}), mathCall(MathFn::Fabs, {d}));
    llvm::Value *r1 = B.CreateFDiv(d, c), *den1 = B.CreateFAdd(c, B.CreateFMul(d, r1));
    llvm::Value *re1 = B.CreateFDiv(B.CreateFAdd(a, B.CreateFMul(b, r1)), den1);
    llvm::Value *im1 = B.CreateFDiv(B.CreateFSub(b, B.CreateFMul(a, r1)), den1);
    llvm::Value *r2 = B.CreateFDiv(c, d), *den2 = B.CreateFAdd(B.CreateFMul(c, r2), d);
    llvm::Value *re2 = B.CreateFDiv(B.CreateFAdd(B.CreateFMul(a, r2), b), den2);
    llvm::Value *im2 = B.CreateFDiv(B.CreateFSub(B.CreateFMul(b, r2), a), den2);
    re = B.CreateSelect(bigC, re1, re2);
    im = B.CreateSelect(bigC, im1, im2);
    break;
  }
  default:
    fail(at, DiagCode::UnsupportedConstruct,
         {std::string("operator ") + binaryOpName(op) + " on complex numbers"});
  }
  llvm::Value *out = llvm::PoisonValue::get(l->getType());
  out = B.CreateInsertValue(out, re, 0);
  return B.CreateInsertValue(out, im, 1);
}

std::optional<int64_t> constantIntOf(const Instr *i) {
  const ConstValue *c = nullptr;
  if (auto *ci = dyn_cast<ConstInstr>(i))
    c = &ci->value;
  else if (auto *gi = dyn_cast<GlobalInstr>(i); gi && gi->value.kind == GlobalValue::Kind::Constant)
    c = &gi->value.constant;
  if (c && c->kind == ConstValue::Kind::Int && !c->isUnsigned)
    return c->i;
  if (c && c->kind == ConstValue::Kind::Bool)
    return c->b ? 1 : 0;
  return std::nullopt;
}

namespace {

/// x**n for a small constant n >= 0 by square-and-multiply, unrolled. `mul` multiplies.
template <typename Mul>
llvm::Value *unrolledPower(llvm::Value *x, int64_t n, llvm::Value *one, Mul mul) {
  llvm::Value *acc = nullptr;
  llvm::Value *sq = x;
  while (n > 0) {
    if (n & 1)
      acc = acc ? mul(acc, sq) : sq;
    n >>= 1;
    if (n)
      sq = mul(sq, sq);
  }
  return acc ? acc : one;
}

} // namespace

llvm::Value *FunctionLowerer::lowerPow(llvm::Value *l, const Type *lt, llvm::Value *r,
                                       const Type *rt, const ScalarType *result, SourceLoc at,
                                       std::optional<int64_t> k) {
  constexpr int64_t kMaxUnrolled = 16;

  if (result->kind() == TypeKind::Int) {
    llvm::Value *base = convert(l, lt, result, at);
    if (k && *k >= 0 && *k <= kMaxUnrolled)
      return unrolledPower(base, *k, llvm::ConstantInt::get(base->getType(), 1),
                           [&](llvm::Value *a, llvm::Value *b) { return B.CreateMul(a, b); });
    llvm::Value *exp = convert(r, rt, result, at);
    return B.CreateCall(
        M.intPowHelper(llvm::cast<llvm::IntegerType>(base->getType()), result->isSigned()),
        {base, exp});
  }
  if (result->kind() == TypeKind::Complex)
    return complexPow(convert(l, lt, result, at), convert(r, rt, result, at));
  if (result->kind() != TypeKind::Float)
    internal(at, "** with result type " + result->str());

  llvm::Value *base = convert(l, lt, result, at);
  llvm::Type *fty = base->getType();
  auto *one = llvm::ConstantFP::get(fty, 1.0);
  const ScalarType *rs = scalarOf(rt);
  if (!rs || (rs->kind() != TypeKind::Int && rs->kind() != TypeKind::Bool))
    return mathCall(MathFn::Pow, {base, convert(r, rt, result, at)});

  // float ** int.
  auto mul = [&](llvm::Value *a, llvm::Value *b) { return B.CreateFMul(a, b); };
  if (k && *k >= -kMaxUnrolled && *k <= kMaxUnrolled) {
    llvm::Value *p = unrolledPower(base, *k < 0 ? -*k : *k, one, mul);
    return *k < 0 ? B.CreateFDiv(one, p) : p;
  }
  llvm::Value *e = convert(r, rt, rs->kind() == TypeKind::Bool ? types::int64() : rs, at);
  bool isSigned = rs->kind() == TypeKind::Int && rs->isSigned();
  if (rs->kind() == TypeKind::Bool || rs->bits() < 32 || (rs->bits() == 32 && isSigned)) {
    llvm::Value *e32 =
        isSigned ? B.CreateSExtOrTrunc(e, B.getInt32Ty()) : B.CreateZExtOrTrunc(e, B.getInt32Ty());
    return M.math.powi(B, base, e32);
  }
  // A wide exponent: powi when it fits in i32, else pow(x, float(n)) as Python.
  llvm::Value *fits;
  llvm::Value *e32 = B.CreateTrunc(e, B.getInt32Ty());
  if (isSigned)
    fits = B.CreateICmpEQ(B.CreateSExt(e32, e->getType()), e);
  else
    fits = B.CreateICmpULT(e, llvm::ConstantInt::get(e->getType(), 1u << 31));
  llvm::BasicBlock *small = llvm::BasicBlock::Create(M.ctx, "powi", F);
  llvm::BasicBlock *large = llvm::BasicBlock::Create(M.ctx, "powf", F);
  llvm::BasicBlock *join = llvm::BasicBlock::Create(M.ctx, "pow.join", F);
  B.CreateCondBr(fits, small, large);
  B.SetInsertPoint(small);
  llvm::Value *p1 = M.math.powi(B, base, e32);
  B.CreateBr(join);
  B.SetInsertPoint(large);
  llvm::Value *ef = isSigned ? B.CreateSIToFP(e, fty) : B.CreateUIToFP(e, fty);
  llvm::Value *p2 = mathCall(MathFn::Pow, {base, ef});
  B.CreateBr(join);
  B.SetInsertPoint(join);
  llvm::PHINode *phi = B.CreatePHI(fty, 2);
  phi->addIncoming(p1, small);
  phi->addIncoming(p2, large);
  return phi;
}

llvm::Value *FunctionLowerer::lowerBinOp(const BinOpInstr &i) {
  SourceLoc at = i.loc;
  const Instr *lhs = i.operand(0), *rhs = i.operand(1);
  return binaryValues(i.binop, valueOf(lhs, at), typeOf(lhs, at), valueOf(rhs, at),
                      typeOf(rhs, at), typeOf(&i, at), at, constantIntOf(rhs));
}

llvm::Value *FunctionLowerer::binaryValues(BinaryOp op, llvm::Value *lv, const Type *lt,
                                           llvm::Value *rv, const Type *rt, const Type *resType,
                                           SourceLoc at, std::optional<int64_t> constRhs) {
  const Type *res = concretize(resType);

  // Tuple concatenation.
  if (auto *tres = dyn_cast<TupleType>(res)) {
    auto *tl = dyn_cast<TupleType>(concretize(lt));
    auto *tr = dyn_cast<TupleType>(concretize(rt));
    if (op != BinaryOp::Add || !tl || !tr || tl->size() + tr->size() != tres->size())
      fail(at, DiagCode::OperatorTypes, {binaryOpName(op), lt->str(), rt->str()});
    llvm::Value *out = llvm::PoisonValue::get(repr(tres, at));
    for (size_t k = 0; k < tres->size(); ++k) {
      bool left = k < tl->size();
      llvm::Value *e = B.CreateExtractValue(left ? lv : rv, unsigned(left ? k : k - tl->size()));
      const Type *et = left ? tl->elements()[k] : tr->elements()[k - tl->size()];
      out = B.CreateInsertValue(out, convert(e, et, tres->elements()[k], at), unsigned(k));
    }
    return out;
  }

  auto *rs = dyn_cast<ScalarType>(res);
  if (!rs || !scalarOf(lt) || !scalarOf(rt))
    fail(at, DiagCode::OperatorTypes, {binaryOpName(op), lt->str(), rt->str()});
  if (isDatetimeLike(scalarOf(lt)) || isDatetimeLike(scalarOf(rt))) // DatetimeValues.cpp
    return datetimeBinary(B, op, lv, scalarOf(lt), rv, scalarOf(rt), rs);
  if (op == BinaryOp::MatMul)
    fail(at, DiagCode::OperatorTypes, {binaryOpName(op), lt->str(), rt->str()});
  if (op == BinaryOp::Pow)
    return lowerPow(lv, lt, rv, rt, rs, at, constRhs);

  // Both operands in the result (computation) type: the promoted operand type; float64 for
  // int / int; int64 for bool + - *.
  llvm::Value *l = convert(lv, lt, rs, at);
  llvm::Value *r = convert(rv, rt, rs, at);
  switch (rs->kind()) {
  case TypeKind::Bool:
    switch (op) {
    case BinaryOp::And:
      return B.CreateAnd(l, r);
    case BinaryOp::Or:
      return B.CreateOr(l, r);
    case BinaryOp::Xor:
      return B.CreateXor(l, r);
    default:
      internal(at, std::string("operator ") + binaryOpName(op) + " typed bool");
    }
  case TypeKind::Int:
    if (op == BinaryOp::FloorDiv || op == BinaryOp::Mod) // debug=True: numba's Python model
      checkZeroDivision(B.CreateICmpEQ(r, llvm::ConstantInt::get(r->getType(), 0)),
                        op == BinaryOp::Mod ? "integer modulo by zero" : "integer division by zero",
                        at);
    return intBinary(op, l, r, rs->isSigned(), at);
  case TypeKind::Float:
    if (!M.opts.fastmath &&
        (op == BinaryOp::TrueDiv || op == BinaryOp::FloorDiv || op == BinaryOp::Mod))
      checkZeroDivision(B.CreateFCmpOEQ(r, llvm::ConstantFP::get(r->getType(), 0.0)),
                        op == BinaryOp::Mod ? "modulo by zero" : "division by zero", at);
    return floatBinary(op, l, r, at);
  default:
    return complexBinary(op, l, r, at);
  }
}

// ---- Unary operators ----

llvm::Value *FunctionLowerer::lowerUnaryOp(const UnaryOpInstr &i) {
  SourceLoc at = i.loc;
  const Instr *src = i.operand(0);
  const Type *st = typeOf(src, at);
  const Type *res = concretize(typeOf(&i, at));
  llvm::Value *v = valueOf(src, at);
  if (i.unop == UnaryOpKind::Not)
    return convert(B.CreateNot(truth(v, st, at)), types::boolean(), res, at);
  auto *rs = dyn_cast<ScalarType>(res);
  if (!rs || !scalarOf(st))
    fail(at, DiagCode::UnaryTypes, {unaryOpName(i.unop), st->str()});
  llvm::Value *x = convert(v, st, rs, at);
  switch (i.unop) {
  case UnaryOpKind::Pos:
    return x;
  case UnaryOpKind::Neg:
    switch (rs->kind()) {
    case TypeKind::Timedelta:
      return timedeltaNeg(B, x);
    case TypeKind::Int:
      return B.CreateSub(llvm::ConstantInt::get(x->getType(), 0), x);
    case TypeKind::Float:
      return B.CreateFNeg(x);
    case TypeKind::Complex: {
      llvm::Value *out = B.CreateInsertValue(x, B.CreateFNeg(B.CreateExtractValue(x, 0)), 0);
      return B.CreateInsertValue(out, B.CreateFNeg(B.CreateExtractValue(x, 1)), 1);
    }
    default:
      break;
    }
    break;
  case UnaryOpKind::Invert:
    if (rs->kind() == TypeKind::Int || rs->kind() == TypeKind::Bool)
      return B.CreateNot(x); // ~x == -x - 1; on bool, logical not (NumPy)
    break;
  case UnaryOpKind::Not:
    break;
  }
  fail(at, DiagCode::UnaryTypes, {unaryOpName(i.unop), st->str()});
}

// ---- Comparisons and truth ----

const ScalarType *FunctionLowerer::comparisonType(const Type *a, const Type *b, SourceLoc at) {
  const Type *p = concretize(a) == concretize(b) ? concretize(a) : concretize(promote(a, b));
  auto *s = dyn_cast<ScalarType>(p);
  if (!s)
    fail(at, DiagCode::OperatorTypes, {"comparison", a->str(), b->str()});
  return s;
}

llvm::Value *FunctionLowerer::compareScalars(CmpOp cmp, llvm::Value *l, llvm::Value *r,
                                             const ScalarType *t, SourceLoc at) {
  using P = llvm::CmpInst::Predicate;
  switch (t->kind()) {
  case TypeKind::Bool:
  case TypeKind::Int: {
    std::optional<P> p = intPredicate(cmp, t->kind() == TypeKind::Int && t->isSigned());
    if (!p)
      internal(at, std::string("comparison ") + cmpOpName(cmp));
    return B.CreateICmp(*p, l, r);
  }
  case TypeKind::Float: {
    P p;
    switch (cmp) {
    case CmpOp::Lt:
      p = P::FCMP_OLT;
      break;
    case CmpOp::Le:
      p = P::FCMP_OLE;
      break;
    case CmpOp::Gt:
      p = P::FCMP_OGT;
      break;
    case CmpOp::Ge:
      p = P::FCMP_OGE;
      break;
    case CmpOp::Eq:
      p = P::FCMP_OEQ;
      break;
    case CmpOp::Ne:
      p = P::FCMP_UNE;
      break;
    default:
      internal(at, std::string("comparison ") + cmpOpName(cmp));
    }
    return B.CreateFCmp(p, l, r);
  }
  case TypeKind::Complex: {
    llvm::Value *lr = B.CreateExtractValue(l, 0), *li = B.CreateExtractValue(l, 1);
    llvm::Value *rr = B.CreateExtractValue(r, 0), *ri = B.CreateExtractValue(r, 1);
    if (cmp == CmpOp::Eq)
      return B.CreateAnd(B.CreateFCmpOEQ(lr, rr), B.CreateFCmpOEQ(li, ri));
    if (cmp == CmpOp::Ne)
      return B.CreateOr(B.CreateFCmpUNE(lr, rr), B.CreateFCmpUNE(li, ri));
    fail(at, DiagCode::OperatorTypes, {cmpOpName(cmp), t->str(), t->str()});
  }
  default:
    internal(at, "comparison of " + t->str());
  }
}

llvm::Value *FunctionLowerer::compareNumbers(CmpOp cmp, llvm::Value *l, const Type *lt,
                                             llvm::Value *r, const Type *rt, SourceLoc at) {
  const ScalarType *ls = scalarOf(lt), *rs = scalarOf(rt);
  if (ls && rs && ls->kind() == TypeKind::Int && rs->kind() == TypeKind::Int &&
      ls->isSigned() != rs->isSigned()) {
    // Python's (exact) order of a signed and an unsigned integer, whatever NumPy promotion
    // would give: -1 < 2**63 is True (uint64 would wrap -1), and int64 against uint64 does
    // not round both to float64.
    int bits = std::max(ls->bits(), rs->bits());
    const ScalarType *lw = types::integer(bits, ls->isSigned());
    const ScalarType *rw = types::integer(bits, rs->isSigned());
    return ufuncCompare(cmp, castScalar(B, l, ls, lw), lw, castScalar(B, r, rs, rw), rw, at);
  }
  const ScalarType *ct = comparisonType(lt, rt, at);
  return compareScalars(cmp, convert(l, lt, ct, at), convert(r, rt, ct, at), ct, at);
}

llvm::Value *FunctionLowerer::lowerCompare(const CompareInstr &i) {
  SourceLoc at = i.loc;
  const Instr *lhs = i.operand(0), *rhs = i.operand(1);
  const Type *lt = concretize(typeOf(lhs, at)), *rt = concretize(typeOf(rhs, at));
  const Type *res = typeOf(&i, at);
  // Enum members (ir/Enums.h, typed by TypingOps.cpp): of one class, compared by value; of
  // different classes (or a non-int member and anything else), never equal nor identical.
  auto *ma = dyn_cast<EnumMemberType>(lhs->type), *mb = dyn_cast<EnumMemberType>(rhs->type);
  if (ma || mb) {
    const bool eqNe = i.cmp == CmpOp::Eq || i.cmp == CmpOp::Ne;
    const bool isNot = i.cmp == CmpOp::Is || i.cmp == CmpOp::IsNot;
    const bool positive = i.cmp == CmpOp::Eq || i.cmp == CmpOp::Is;
    if ((eqNe || isNot) && ma && ma == mb) { // the values, as == compares them
      llvm::Value *eq = valuesEqual(valueOf(lhs, at), ma->dtype(), valueOf(rhs, at), at);
      return convert(positive ? eq : B.CreateNot(eq), types::boolean(), res, at);
    }
    const bool numeric = (!ma || ma->isIntEnum()) && (!mb || mb->isIntEnum()) &&
                         lt->isScalarNumber() && rt->isScalarNumber();
    if (isNot || (eqNe && !numeric)) {
      bool noneBoth = lt->kind() == TypeKind::None && rt->kind() == TypeKind::None;
      return convert(B.getInt1(noneBoth == positive), types::boolean(), res, at);
    }
  }
  if (isDatetimeLike(lt) && isDatetimeLike(rt)) // DatetimeValues.cpp
    return convert(datetimeCompare(B, i.cmp, valueOf(lhs, at), cast<ScalarType>(lt),
                                   valueOf(rhs, at), cast<ScalarType>(rt)),
                   types::boolean(), res, at);
  if (isa<CharSeqType>(lt) || isa<CharSeqType>(rt)) { // S / U elements (LowerStrings.cpp)
    llvm::Value *eq = charSeqEqual(lhs, rhs, at);
    return convert(i.cmp == CmpOp::Eq ? eq : B.CreateNot(eq), types::boolean(), res, at);
  }
  if (i.cmp == CmpOp::Eq || i.cmp == CmpOp::Ne) // strings known at compile time (typing checked)
    if (std::optional<std::string> ls = constantStringOf(lhs, &fn))
      if (std::optional<std::string> rs = constantStringOf(rhs, &fn))
        return convert(B.getInt1((*ls == *rs) == (i.cmp == CmpOp::Eq)), types::boolean(), res, at);
  llvm::Value *l = valueOf(lhs, at), *r = valueOf(rhs, at);
  llvm::Value *out = nullptr;
  switch (i.cmp) {
  case CmpOp::Is:
  case CmpOp::IsNot: {
    bool lNone = lt->kind() == TypeKind::None, rNone = rt->kind() == TypeKind::None;
    if (lNone || rNone) {
      out = B.getInt1((lNone && rNone) == (i.cmp == CmpOp::Is));
    } else if (lt->kind() == TypeKind::Bool && rt->kind() == TypeKind::Bool) {
      out =
          B.CreateICmp(i.cmp == CmpOp::Is ? llvm::CmpInst::ICMP_EQ : llvm::CmpInst::ICMP_NE, l, r);
    } else {
      fail(at, DiagCode::UnsupportedConstruct,
           {std::string("'") + cmpOpName(i.cmp) + "' between " + lt->str() + " and " + rt->str()});
    }
    break;
  }
  case CmpOp::In:
  case CmpOp::NotIn: {
    auto *tt = dyn_cast<TupleType>(rt);
    if (!tt || !dyn_cast<ScalarType>(lt))
      fail(at, DiagCode::OperatorTypes, {cmpOpName(i.cmp), lt->str(), rt->str()});
    out = B.getInt1(false);
    for (size_t k = 0; k < tt->size(); ++k) {
      const Type *et = concretize(tt->elements()[k]);
      if (!dyn_cast<ScalarType>(et))
        fail(at, DiagCode::OperatorTypes, {cmpOpName(i.cmp), lt->str(), rt->str()});
      llvm::Value *e = B.CreateExtractValue(r, unsigned(k));
      out = B.CreateOr(out, compareNumbers(CmpOp::Eq, l, lt, e, et, at));
    }
    if (i.cmp == CmpOp::NotIn)
      out = B.CreateNot(out);
    break;
  }
  default: {
    auto *ltup = dyn_cast<TupleType>(lt), *rtup = dyn_cast<TupleType>(rt);
    if (ltup && rtup && (i.cmp == CmpOp::Eq || i.cmp == CmpOp::Ne)) {
      // Tuples: equal when the sizes match and every element compares equal.
      out = B.getInt1(ltup->size() == rtup->size());
      for (size_t k = 0; k < ltup->size() && k < rtup->size(); ++k) {
        const Type *a = concretize(ltup->elements()[k]), *b = concretize(rtup->elements()[k]);
        if (!dyn_cast<ScalarType>(a) || !dyn_cast<ScalarType>(b))
          fail(at, DiagCode::OperatorTypes, {cmpOpName(i.cmp), lt->str(), rt->str()});
        out = B.CreateAnd(out, compareNumbers(CmpOp::Eq, B.CreateExtractValue(l, unsigned(k)), a,
                                              B.CreateExtractValue(r, unsigned(k)), b, at));
      }
      if (i.cmp == CmpOp::Ne)
        out = B.CreateNot(out);
      break;
    }
    if (!dyn_cast<ScalarType>(lt) || !dyn_cast<ScalarType>(rt))
      fail(at, DiagCode::OperatorTypes, {cmpOpName(i.cmp), lt->str(), rt->str()});
    out = compareNumbers(i.cmp, l, typeOf(lhs, at), r, typeOf(rhs, at), at);
  }
  }
  return convert(out, types::boolean(), res, at);
}

llvm::Value *FunctionLowerer::valuesEqual(llvm::Value *l, const Type *t, llvm::Value *r,
                                          SourceLoc at) {
  const Type *c = concretize(t);
  if (auto *tt = dyn_cast<TupleType>(c)) { // element by element
    llvm::Value *out = B.getInt1(true);
    for (size_t k = 0; k < tt->size(); ++k)
      out = B.CreateAnd(out, valuesEqual(B.CreateExtractValue(l, unsigned(k)), tt->elements()[k],
                                         B.CreateExtractValue(r, unsigned(k)), at));
    return out;
  }
  auto *s = dyn_cast<ScalarType>(c);
  if (!s)
    internal(at, "equality of values of type " + t->str());
  return compareScalars(CmpOp::Eq, l, r, s, at);
}

llvm::Value *FunctionLowerer::truth(llvm::Value *v, const Type *t, SourceLoc at) {
  const Type *c = concretize(t);
  switch (c->kind()) {
  case TypeKind::Bool:
    return v;
  case TypeKind::Int:
  case TypeKind::Float:
  case TypeKind::Complex:
    return castScalar(B, v, cast<ScalarType>(c), types::boolean());
  case TypeKind::None:
    return B.getInt1(false);
  case TypeKind::Tuple:
    return B.getInt1(cast<TupleType>(c)->size() != 0);
  case TypeKind::Range:
    return B.CreateICmpSGT(rangeLength(v), B.getInt64(0));
  default:
    fail(at, DiagCode::NoTruthValue, {t->str()});
  }
}

} // namespace ptxjit::codegen::detail
