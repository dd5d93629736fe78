// Lowering of cuda.fp16 (ir::HalfOp): numba-cuda's half-precision intrinsics. Operands are
// converted to float16 and the operation is LLVM's on `half`, so the NVPTX backend selects the
// f16 instructions sm_53+ has (add.f16, fma.rn.f16, setp.lt.f16, neg.f16, abs.f16, max.f16) and
// legalizes the rest through float32; the host backend computes in float32 and rounds once.
#include "codegen/Lowering.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

namespace ptxjit::codegen::detail {

using namespace ir;

namespace {

/// The math function of a one-operand cuda.fp16 operation that is one (hsin ... htanh, but
/// not hrsqrt and hrcp), in HalfOp's order from HalfOp::Sin; Fabs marks the two exceptions.
MathFn halfMathFn(HalfOp op) {
  static const MathFn fns[] = {MathFn::Sin,   MathFn::Cos,   MathFn::Log,  MathFn::Log2,
                               MathFn::Log10, MathFn::Exp,   MathFn::Exp2, MathFn::Exp10,
                               MathFn::Sqrt,  MathFn::Fabs,  MathFn::Ceil, MathFn::Floor,
                               MathFn::Fabs,  MathFn::Trunc, MathFn::Rint, MathFn::Tanh};
  static_assert(sizeof(fns) / sizeof(fns[0]) ==
                static_cast<size_t>(HalfOp::Tanh) - static_cast<size_t>(HalfOp::Sin) + 1);
  return fns[static_cast<size_t>(op) - static_cast<size_t>(HalfOp::Sin)];
}

} // namespace

llvm::Value *FunctionLowerer::lowerHalfCall(const CallInstr &i, HalfOp op) {
  SourceLoc at = i.loc;
  const ScalarType *h = types::float16();
  std::vector<llvm::Value *> x;
  for (size_t k = 0; k < i.numArgs(); ++k)
    x.push_back(convert(valueOf(i.arg(k), at), typeOf(i.arg(k), at), h, at));
  if (static_cast<int>(x.size()) != halfOpArity(op))
    internal(at, "cuda.fp16 call with " + std::to_string(x.size()) + " operands");
  llvm::Type *half = B.getHalfTy();
  auto intrinsic = [&](llvm::Intrinsic::ID id) {
    return B.CreateCall(llvm::Intrinsic::getDeclaration(&M.mod, id, {half}), x);
  };
  auto binary = [&](BinaryOp b) { return binaryValues(b, x[0], h, x[1], h, h, at); };
  switch (op) {
  case HalfOp::Add:
    return binary(BinaryOp::Add);
  case HalfOp::Sub:
    return binary(BinaryOp::Sub);
  case HalfOp::Mul:
    return binary(BinaryOp::Mul);
  case HalfOp::Div:
    return binary(BinaryOp::TrueDiv);
  case HalfOp::Neg:
    return B.CreateFNeg(x[0]);
  case HalfOp::Abs:
    return mathCall(MathFn::Fabs, {x[0]});
  case HalfOp::Fma:
    return intrinsic(llvm::Intrinsic::fma);
  // CUDA's __heq ... __hlt are ordered comparisons, as the operators' are, except __hne: false
  // when an operand is NaN, where Python's `!=` is true.
  case HalfOp::Eq:
    return compareScalars(CmpOp::Eq, x[0], x[1], h, at);
  case HalfOp::Ne:
    return B.CreateFCmpONE(x[0], x[1]);
  case HalfOp::Ge:
    return compareScalars(CmpOp::Ge, x[0], x[1], h, at);
  case HalfOp::Gt:
    return compareScalars(CmpOp::Gt, x[0], x[1], h, at);
  case HalfOp::Le:
    return compareScalars(CmpOp::Le, x[0], x[1], h, at);
  case HalfOp::Lt:
    return compareScalars(CmpOp::Lt, x[0], x[1], h, at);
  case HalfOp::Max: // __hmax/__hmin: the other operand when one is NaN (IEEE maxNum)
    return intrinsic(llvm::Intrinsic::maxnum);
  case HalfOp::Min:
    return intrinsic(llvm::Intrinsic::minnum);
  case HalfOp::Rsqrt: { // 1/sqrt(x) in float32, rounded once to half
    llvm::Value *s = mathCall(MathFn::Sqrt, {B.CreateFPExt(x[0], B.getFloatTy())});
    return B.CreateFPTrunc(B.CreateFDiv(llvm::ConstantFP::get(B.getFloatTy(), 1.0), s), half);
  }
  case HalfOp::Rcp:
    return B.CreateFDiv(llvm::ConstantFP::get(half, 1.0), x[0]);
  default: // hsin ... htanh
    return mathCall(halfMathFn(op), {x[0]});
  }
}

} // namespace ptxjit::codegen::detail
