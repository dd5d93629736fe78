// Lowering of cuda.bf16 and cuda.fp16 (ir::LowFloatFunction): numba-cuda's bfloat16 and float16
// intrinsics. Operands are converted to the function's parameter types and the operation is
// LLVM's on `bfloat` / `half` where it has one, so that the NVPTX backend selects the 16-bit
// instructions of the target (add.bf16 and fma.rn.bf16 on sm_90, max.bf16 and max.NaN.bf16 on
// sm_80, add.f16 on sm_53) and computes the rest in float32, rounding once. Conversions with a
// rounding mode go through codegen/ScalarValues.h's exact routines; on the host every result is
// the correctly rounded one (see docs/language.md).
#include "codegen/Lowering.h"
#include "ir/typing/LowFloat.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Intrinsics.h>

namespace ptxjit::codegen::detail {

using namespace ir;

namespace {

/// The math function of a one-operand math operation of LowFloatOp (Trunc ... Exp10; Rsqrt,
/// Rcp and TanhApprox are lowered on their own and map to Fabs here, unused).
MathFn lowFloatMathFn(LowFloatOp op) {
  switch (op) {
  case LowFloatOp::Trunc:
    return MathFn::Trunc;
  case LowFloatOp::Ceil:
    return MathFn::Ceil;
  case LowFloatOp::Floor:
    return MathFn::Floor;
  case LowFloatOp::Rint:
    return MathFn::Rint;
  case LowFloatOp::Sqrt:
    return MathFn::Sqrt;
  case LowFloatOp::Log:
    return MathFn::Log;
  case LowFloatOp::Log2:
    return MathFn::Log2;
  case LowFloatOp::Log10:
    return MathFn::Log10;
  case LowFloatOp::Cos:
    return MathFn::Cos;
  case LowFloatOp::Sin:
    return MathFn::Sin;
  case LowFloatOp::Tanh:
    return MathFn::Tanh;
  case LowFloatOp::Exp:
    return MathFn::Exp;
  case LowFloatOp::Exp2:
    return MathFn::Exp2;
  case LowFloatOp::Exp10:
    return MathFn::Exp10;
  default:
    return MathFn::Fabs;
  }
}

/// The integer rounding function of a float → integer conversion's rounding mode.
MathFn roundingFn(Rounding r) {
  switch (r) {
  case Rounding::Nearest:
    return MathFn::Rint;
  case Rounding::TowardZero:
    return MathFn::Trunc;
  case Rounding::Down:
    return MathFn::Floor;
  case Rounding::Up:
    break;
  }
  return MathFn::Ceil;
}

} // namespace

llvm::Value *FunctionLowerer::lowerLowFloatCall(const CallInstr &i, const LowFloatFunction &f) {
  SourceLoc at = i.loc;
  const ScalarType *e = f.elem;
  std::vector<const ScalarType *> params = f.params();
  if (i.numArgs() != params.size())
    internal(at, std::string(builtinPath(i.builtin)) + " call with " + std::to_string(i.numArgs()) +
                     " operands");
  std::vector<llvm::Value *> x;
  for (size_t k = 0; k < params.size(); ++k)
    x.push_back(convert(valueOf(i.arg(k), at), typeOf(i.arg(k), at), params[k], at));
  llvm::Type *ety = registerType(M.ctx, e);
  const bool bf16 = e->isBFloat16();
  const bool cuda = !M.isHost();
  const int sm = M.opts.ccMajor * 10 + M.opts.ccMinor;
  llvm::Type *f32 = B.getFloatTy();
  auto fp = [&](double v) { return llvm::ConstantFP::get(ety, v); };
  auto intrinsic = [&](llvm::Intrinsic::ID id, std::vector<llvm::Value *> ops) -> llvm::Value * {
    return B.CreateCall(llvm::Intrinsic::getDeclaration(&M.mod, id, {ety}), ops);
  };
  // PTX on 16-bit registers (.b16 "h" operands, passed as i16: the NVPTX backend binds `h` to
  // integers).
  auto asmCall = [&](const std::string &text, std::vector<llvm::Value *> ops) -> llvm::Value * {
    llvm::Type *i16 = B.getInt16Ty();
    std::vector<llvm::Type *> tys(ops.size(), i16);
    std::string constraints = "=h";
    for (llvm::Value *&op : ops) {
      op = B.CreateBitCast(op, i16);
      constraints += ",h";
    }
    auto *fty = llvm::FunctionType::get(i16, tys, false);
    return B.CreateBitCast(B.CreateCall(llvm::InlineAsm::get(fty, text, constraints, false), ops),
                           ety);
  };
  auto binary = [&](BinaryOp b) { return binaryValues(b, x[0], e, x[1], e, e, at); };
  // In float32, rounded once to the 16-bit type: exact for + - * (float32 carries more than
  // twice the precision of either 16-bit type) and never contracted into an fma.
  auto viaFloat = [&](BinaryOp b) {
    const ScalarType *s = types::float32();
    llvm::Value *r =
        binaryValues(b, castScalar(B, x[0], e, s), s, castScalar(B, x[1], e, s), s, s, at);
    return castScalar(B, r, s, e);
  };
  auto clampUnit = [&](llvm::Value *r) { // [0, 1], NaN to 0 (maxnum drops the NaN)
    return intrinsic(llvm::Intrinsic::minnum,
                     {intrinsic(llvm::Intrinsic::maxnum, {r, fp(0.0)}), fp(1.0)});
  };
  auto rounded = [&](BinaryOp b, const char *op) -> llvm::Value * {
    // PTX's add.rn/sub.rn/mul.rn are never fused: f16 on sm_53+, bf16 on sm_90+; sm_80's bf16
    // has only fma.rn.bf16, with 1.0, -1.0 and -0.0 making it an add, a subtraction and a
    // product exactly.
    if (cuda && !bf16 && sm >= 53)
      return asmCall(std::string(op) + ".rn.f16 $0, $1, $2;", {x[0], x[1]});
    if (cuda && bf16 && sm >= 90)
      return asmCall(std::string(op) + ".rn.bf16 $0, $1, $2;", {x[0], x[1]});
    if (cuda && bf16 && sm >= 80) {
      auto k = [&](uint16_t bits) { return B.CreateBitCast(B.getInt16(bits), ety); };
      const std::string fma = "fma.rn.bf16 $0, $1, $2, $3;";
      if (b == BinaryOp::Add)
        return asmCall(fma, {x[0], k(0x3f80), x[1]});
      if (b == BinaryOp::Sub)
        return asmCall(fma, {x[1], k(0xbf80), x[0]});
      return asmCall(fma, {x[0], x[1], k(0x8000)});
    }
    return viaFloat(b);
  };
  using P = llvm::CmpInst::Predicate;
  auto cmp = [&](P p) { return B.CreateFCmp(p, x[0], x[1]); };
  switch (f.op) {
  case LowFloatOp::Add:
    return binary(BinaryOp::Add);
  case LowFloatOp::Sub:
    return binary(BinaryOp::Sub);
  case LowFloatOp::Mul:
    return binary(BinaryOp::Mul);
  case LowFloatOp::Div:
    return binary(BinaryOp::TrueDiv);
  case LowFloatOp::AddRn:
    return rounded(BinaryOp::Add, "add");
  case LowFloatOp::SubRn:
    return rounded(BinaryOp::Sub, "sub");
  case LowFloatOp::MulRn:
    return rounded(BinaryOp::Mul, "mul");
  case LowFloatOp::AddSat:
    return clampUnit(binary(BinaryOp::Add));
  case LowFloatOp::SubSat:
    return clampUnit(binary(BinaryOp::Sub));
  case LowFloatOp::MulSat:
    return clampUnit(binary(BinaryOp::Mul));
  case LowFloatOp::Neg:
    return B.CreateFNeg(x[0]);
  case LowFloatOp::Abs:
    return mathCall(MathFn::Fabs, {x[0]});
  case LowFloatOp::Fma:
    return mathCall(MathFn::Fma, {x[0], x[1], x[2]});
  case LowFloatOp::FmaSat:
    return clampUnit(mathCall(MathFn::Fma, {x[0], x[1], x[2]}));
  case LowFloatOp::FmaRelu: {
    llvm::Value *r = mathCall(MathFn::Fma, {x[0], x[1], x[2]});
    return B.CreateSelect(B.CreateFCmpOLT(r, fp(0.0)), fp(0.0), r);
  }
  // CUDA's comparisons are ordered (false with a NaN, __hne too, where Python's != is true);
  // the ...u variants unordered.
  case LowFloatOp::Eq:
    return cmp(P::FCMP_OEQ);
  case LowFloatOp::Ne:
    return cmp(P::FCMP_ONE);
  case LowFloatOp::Ge:
    return cmp(P::FCMP_OGE);
  case LowFloatOp::Gt:
    return cmp(P::FCMP_OGT);
  case LowFloatOp::Le:
    return cmp(P::FCMP_OLE);
  case LowFloatOp::Lt:
    return cmp(P::FCMP_OLT);
  case LowFloatOp::Equ:
    return cmp(P::FCMP_UEQ);
  case LowFloatOp::Neu:
    return cmp(P::FCMP_UNE);
  case LowFloatOp::Geu:
    return cmp(P::FCMP_UGE);
  case LowFloatOp::Gtu:
    return cmp(P::FCMP_UGT);
  case LowFloatOp::Leu:
    return cmp(P::FCMP_ULE);
  case LowFloatOp::Ltu:
    return cmp(P::FCMP_ULT);
  case LowFloatOp::Max: // the other operand when one is NaN (IEEE maxNum)
    return intrinsic(llvm::Intrinsic::maxnum, {x[0], x[1]});
  case LowFloatOp::Min:
    return intrinsic(llvm::Intrinsic::minnum, {x[0], x[1]});
  case LowFloatOp::MaxNan:
  case LowFloatOp::MinNan: {
    bool isMax = f.op == LowFloatOp::MaxNan;
    if (cuda && sm >= 80) // max.NaN / min.NaN
      return intrinsic(isMax ? llvm::Intrinsic::maximum : llvm::Intrinsic::minimum, {x[0], x[1]});
    llvm::Value *r =
        intrinsic(isMax ? llvm::Intrinsic::maxnum : llvm::Intrinsic::minnum, {x[0], x[1]});
    return B.CreateSelect(cmp(P::FCMP_UNO), B.CreateFAdd(x[0], x[1]), r); // a NaN propagates
  }
  case LowFloatOp::IsNan:
    return B.CreateFCmpUNO(x[0], x[0]);
  case LowFloatOp::IsInf: {
    llvm::Value *inf =
        B.CreateFCmpOEQ(mathCall(MathFn::Fabs, {x[0]}), llvm::ConstantFP::getInfinity(ety));
    llvm::Value *sign =
        B.CreateSelect(B.CreateFCmpOGT(x[0], fp(0.0)), B.getInt32(1), B.getInt32(-1));
    return B.CreateSelect(inf, sign, B.getInt32(0));
  }
  case LowFloatOp::Rsqrt: { // 1/sqrt(x) in float32, rounded once
    llvm::Value *s = mathCall(MathFn::Sqrt, {B.CreateFPExt(x[0], f32)});
    return B.CreateFPTrunc(B.CreateFDiv(llvm::ConstantFP::get(f32, 1.0), s), ety);
  }
  case LowFloatOp::Rcp:
    return B.CreateFDiv(fp(1.0), x[0]);
  case LowFloatOp::TanhApprox:
    // tanh.approx.bf16 (sm_90), tanh.approx.f16 and .f32 (sm_75); elsewhere the accurate tanh.
    if (cuda && bf16 && sm >= 90)
      return asmCall("tanh.approx.bf16 $0, $1;", {x[0]});
    if (cuda && !bf16 && sm >= 75)
      return asmCall("tanh.approx.f16 $0, $1;", {x[0]});
    if (cuda && sm >= 75) {
      auto *fty = llvm::FunctionType::get(f32, {f32}, false);
      llvm::Value *t =
          B.CreateCall(llvm::InlineAsm::get(fty, "tanh.approx.f32 $0, $1;", "=f,f", false),
                       {B.CreateFPExt(x[0], f32)});
      return B.CreateFPTrunc(t, ety);
    }
    return mathCall(MathFn::Tanh, {x[0]});
  case LowFloatOp::From: {
    const ScalarType *o = f.other;
    if (o == types::float64()) // (to nearest only) fptrunc: correctly rounded on both backends
      return castScalar(B, x[0], o, e);
    llvm::Value *v =
        o->kind() == TypeKind::Int ? intToFloatRoundedToOdd(B, x[0], o->isSigned()) : x[0];
    return roundFloatTo16(B, v, ety, f.rounding);
  }
  case LowFloatOp::To: {
    const ScalarType *o = f.other;
    llvm::Value *v = B.CreateFPExt(x[0], f32);
    if (o->kind() != TypeKind::Int)
      return castScalar(B, v, types::float32(), o);
    // The integer of the mode's rounding, then the saturating conversion (NaN gives 0, as
    // PTX's cvt.rni / rzi / rmi / rpi).
    return castScalar(B, mathCall(roundingFn(f.rounding), {v}), types::float32(), o);
  }
  case LowFloatOp::AsBits:
    return B.CreateBitCast(x[0], B.getInt16Ty());
  case LowFloatOp::FromBits:
    return B.CreateBitCast(x[0], ety);
  default: // the one-operand math functions
    return mathCall(lowFloatMathFn(f.op), {x[0]});
  }
}

} // namespace ptxjit::codegen::detail
