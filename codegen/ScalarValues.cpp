#include "codegen/ScalarValues.h"

#include "codegen/DatetimeValues.h"
#include "ir/Datetime.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>

namespace ptxjit::codegen::detail {

std::optional<llvm::CmpInst::Predicate> intPredicate(ir::CmpOp cmp, bool isSigned) {
  using P = llvm::CmpInst::Predicate;
  switch (cmp) {
  case ir::CmpOp::Lt:
    return isSigned ? P::ICMP_SLT : P::ICMP_ULT;
  case ir::CmpOp::Le:
    return isSigned ? P::ICMP_SLE : P::ICMP_ULE;
  case ir::CmpOp::Gt:
    return isSigned ? P::ICMP_SGT : P::ICMP_UGT;
  case ir::CmpOp::Ge:
    return isSigned ? P::ICMP_SGE : P::ICMP_UGE;
  case ir::CmpOp::Eq:
    return P::ICMP_EQ;
  case ir::CmpOp::Ne:
    return P::ICMP_NE;
  default:
    return std::nullopt;
  }
}

using ir::isDatetimeLike;
using ir::ScalarType;
using ir::TypeKind;

namespace {

/// The alignment of an element in memory: its size, or a complex type's part size.
llvm::Align elementAlign(const ScalarType *t) {
  return llvm::Align(t->kind() == TypeKind::Complex ? t->byteSize() / 2 : t->byteSize());
}

/// The float type of a complex type's parts, as an IR type.
const ScalarType *complexPart(const ScalarType *c) { return ir::types::floating(c->bits() / 2); }

/// Float `v` to the integer type `to`, truncating toward zero and saturating: NaN gives 0,
/// values beyond the range (±inf included) its nearest bound. LLVM's fptosi/fptoui would give
/// poison there, which lets the optimizer delete the code that depends on it. On NVPTX too the
/// generic llvm.fpto[su]i.sat: PTX's cvt.rzi gives the type's minimum for NaN on the H100 (not
/// 0), and LLVM does not fold NVVM's cvt intrinsics for NaN and infinities as cvt computes them.
llvm::Value *floatToIntSaturating(llvm::IRBuilderBase &b, llvm::Value *v, const ScalarType *to) {
  llvm::Type *toTy = registerType(b.getContext(), to);
  return b.CreateIntrinsic(to->isSigned() ? llvm::Intrinsic::fptosi_sat
                                          : llvm::Intrinsic::fptoui_sat,
                           {toTy, v->getType()}, {v});
}

} // namespace

llvm::Type *partType(llvm::LLVMContext &ctx, const ScalarType *t) {
  int bits = t->kind() == TypeKind::Complex ? t->bits() / 2 : t->bits();
  switch (bits) {
  case 16:
    return t->isBFloat16() ? llvm::Type::getBFloatTy(ctx) : llvm::Type::getHalfTy(ctx);
  case 32:
    return llvm::Type::getFloatTy(ctx);
  default:
    return llvm::Type::getDoubleTy(ctx);
  }
}

llvm::Type *registerType(llvm::LLVMContext &ctx, const ScalarType *t) {
  switch (t->kind()) {
  case TypeKind::Bool:
    return llvm::Type::getInt1Ty(ctx);
  case TypeKind::Int:
    return llvm::Type::getIntNTy(ctx, t->bits());
  case TypeKind::Float:
    return partType(ctx, t);
  case TypeKind::Datetime: // a count of the unit (ir/Datetime.h)
  case TypeKind::Timedelta:
    return llvm::Type::getInt64Ty(ctx);
  default: // complex
    return llvm::StructType::get(ctx, {partType(ctx, t), partType(ctx, t)});
  }
}

llvm::Type *memoryType(llvm::LLVMContext &ctx, const ScalarType *t) {
  return t->kind() == TypeKind::Bool ? llvm::Type::getInt8Ty(ctx) : registerType(ctx, t);
}

llvm::StructType *arrayValueType(llvm::LLVMContext &ctx, int ndim) {
  auto *dims = llvm::ArrayType::get(llvm::Type::getInt64Ty(ctx), ndim);
  return llvm::StructType::get(ctx, {llvm::PointerType::getUnqual(ctx), dims, dims});
}

llvm::Value *loadScalar(llvm::IRBuilderBase &b, llvm::Value *addr, const ScalarType *t,
                        uint64_t align) {
  llvm::Value *v = b.CreateAlignedLoad(memoryType(b.getContext(), t), addr,
                                       align ? llvm::Align(align) : elementAlign(t));
  return t->kind() == TypeKind::Bool ? b.CreateICmpNE(v, b.getInt8(0)) : v;
}

void storeScalar(llvm::IRBuilderBase &b, llvm::Value *addr, llvm::Value *v, const ScalarType *t,
                 uint64_t align) {
  if (t->kind() == TypeKind::Bool)
    v = b.CreateZExt(v, b.getInt8Ty());
  b.CreateAlignedStore(v, addr, align ? llvm::Align(align) : elementAlign(t));
}

llvm::Value *intToFloatRoundedToOdd(llvm::IRBuilderBase &b, llvm::Value *v, bool isSigned) {
  llvm::Type *f32 = b.getFloatTy();
  auto *ity = llvm::cast<llvm::IntegerType>(v->getType());
  const unsigned w = ity->getBitWidth();
  if (w <= 16) // exact in float32
    return isSigned ? b.CreateSIToFP(v, f32) : b.CreateUIToFP(v, f32);
  auto c = [&](uint64_t x) { return llvm::ConstantInt::get(ity, x); };
  llvm::Value *negative = isSigned ? b.CreateICmpSLT(v, c(0)) : b.getFalse();
  // The magnitude as an unsigned number (the minimum of a signed type is 2**(w-1) there).
  llvm::Value *mag = isSigned ? b.CreateSelect(negative, b.CreateNeg(v), v) : v;
  llvm::Value *lz = b.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, mag, b.getFalse());
  llvm::Value *digits = b.CreateSub(c(w), lz);
  llvm::Value *shift = b.CreateSelect(b.CreateICmpUGT(digits, c(24)), b.CreateSub(digits, c(24)),
                                      c(0)); // at most w - 24: defined
  llvm::Value *kept = b.CreateLShr(mag, shift);
  llvm::Value *lost = b.CreateAnd(mag, b.CreateSub(b.CreateShl(c(1), shift), c(1)));
  kept = b.CreateOr(kept, b.CreateZExt(b.CreateICmpNE(lost, c(0)), ity));
  llvm::Value *f = b.CreateUIToFP(kept, f32); // < 2**24: exact
  // times 2**shift (shift <= 40), exactly: the float32 of exponent bits shift + 127.
  llvm::Value *scaleBits = b.CreateShl(
      b.CreateAdd(b.CreateTrunc(shift, b.getInt32Ty()), b.getInt32(127)), b.getInt32(23));
  f = b.CreateFMul(f, b.CreateBitCast(scaleBits, f32));
  return b.CreateSelect(negative, b.CreateFNeg(f), f);
}

llvm::Value *roundFloatTo16(llvm::IRBuilderBase &b, llvm::Value *f, llvm::Type *to,
                            ir::Rounding mode) {
  llvm::Value *r = b.CreateFPTrunc(f, to);
  if (mode == ir::Rounding::Nearest)
    return r;
  // The nearest value is one of the two neighbours of f: when it lies on the side the mode
  // excludes, the other neighbour is one step (one unit of the bits) away. Stepping the bits
  // moves away from zero for a positive sign bit pattern when adding, toward zero when
  // subtracting (and the reverse for negative values); ±inf steps to the largest finite value.
  llvm::Value *back = b.CreateFPExt(r, f->getType());
  llvm::Type *i16 = b.getInt16Ty();
  llvm::Value *bits = b.CreateBitCast(r, i16);
  llvm::Value *negative = b.CreateICmpSLT(bits, b.getInt16(0));
  llvm::Value *towardZero = b.CreateSub(bits, b.getInt16(1));
  llvm::Value *awayFromZero = b.CreateAdd(bits, b.getInt16(1));
  llvm::Value *stepped, *wrongSide;
  switch (mode) {
  case ir::Rounding::TowardZero:
    wrongSide = b.CreateFCmpOGT(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, back),
                                b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, f));
    stepped = towardZero;
    break;
  case ir::Rounding::Down: // a step down: toward zero when positive, away when negative
    wrongSide = b.CreateFCmpOGT(back, f);
    stepped = b.CreateSelect(negative, awayFromZero, towardZero);
    break;
  default: // Up
    wrongSide = b.CreateFCmpOLT(back, f);
    stepped = b.CreateSelect(negative, towardZero, awayFromZero);
    break;
  }
  return b.CreateSelect(wrongSide, b.CreateBitCast(stepped, to), r);
}

llvm::Value *castScalar(llvm::IRBuilderBase &b, llvm::Value *v, const ScalarType *from,
                        const ScalarType *to) {
  if (from == to)
    return v;
  if (isDatetimeLike(from) || isDatetimeLike(to)) // DatetimeValues.cpp
    return castDatetime(b, v, from, to);
  // bfloat16 goes through float32, which holds every bfloat16 and float16 exactly: out of
  // bfloat16 by extension; into it by one rounding from float32 (or float64, which LLVM rounds
  // correctly: to odd on the GPU, ir/BFloat16.h on the host), from integers through their
  // float32 rounded to odd, from float16 through its exact float32.
  const ScalarType *f32 = ir::types::float32();
  if (from->isBFloat16() && to->kind() != TypeKind::Bool && to != ir::types::float64())
    return castScalar(b, b.CreateFPExt(v, b.getFloatTy()), f32, to);
  if (to->isBFloat16()) {
    if (from->kind() == TypeKind::Int)
      return b.CreateFPTrunc(intToFloatRoundedToOdd(b, v, from->isSigned()), b.getBFloatTy());
    if (from == ir::types::float16())
      return b.CreateFPTrunc(b.CreateFPExt(v, b.getFloatTy()), b.getBFloatTy());
  }
  llvm::Type *toTy = registerType(b.getContext(), to);
  auto makeComplex = [&](llvm::Value *re, llvm::Value *im) {
    llvm::Value *c = llvm::PoisonValue::get(toTy);
    c = b.CreateInsertValue(c, re, 0);
    return b.CreateInsertValue(c, im, 1);
  };
  // A real value as the complex `to`: the value cast to the part type, and a zero part.
  auto realToComplex = [&]() {
    const ScalarType *part = complexPart(to);
    return makeComplex(castScalar(b, v, from, part),
                       llvm::ConstantFP::get(partType(b.getContext(), to), 0.0));
  };
  switch (from->kind()) {
  case TypeKind::Bool:
    switch (to->kind()) {
    case TypeKind::Int:
      return b.CreateZExt(v, toTy);
    case TypeKind::Float:
      return b.CreateUIToFP(v, toTy);
    case TypeKind::Complex:
      return realToComplex();
    default:
      return v;
    }
  case TypeKind::Int:
    switch (to->kind()) {
    case TypeKind::Bool:
      return b.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
    case TypeKind::Int:
      return b.CreateIntCast(v, toTy, from->isSigned());
    case TypeKind::Float:
      return from->isSigned() ? b.CreateSIToFP(v, toTy) : b.CreateUIToFP(v, toTy);
    default:
      return realToComplex();
    }
  case TypeKind::Float:
    switch (to->kind()) {
    case TypeKind::Bool:
      return b.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0));
    case TypeKind::Int:
      return floatToIntSaturating(b, v, to);
    case TypeKind::Float:
      return b.CreateFPCast(v, toTy);
    default:
      return realToComplex();
    }
  default: { // Complex
    const ScalarType *fpart = complexPart(from);
    llvm::Value *re = b.CreateExtractValue(v, 0), *im = b.CreateExtractValue(v, 1);
    if (to->kind() == TypeKind::Complex) {
      const ScalarType *tpart = complexPart(to);
      return makeComplex(castScalar(b, re, fpart, tpart), castScalar(b, im, fpart, tpart));
    }
    if (to->kind() == TypeKind::Bool)
      return b.CreateOr(castScalar(b, re, fpart, to), castScalar(b, im, fpart, to));
    // NumPy discards the imaginary part.
    return castScalar(b, re, fpart, to);
  }
  }
}

} // namespace ptxjit::codegen::detail
