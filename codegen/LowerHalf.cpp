// Lowering of cuda.fp16 (ir::HalfOp): numba-cuda's half-precision intrinsics. Operands are
// converted to float16 and the operation is LLVM's on `half`, so the NVPTX backend selects the
// f16 instructions sm_53+ has (add.f16, fma.rn.f16, setp.lt.f16, neg.f16, abs.f16, max.f16) and
// legalizes the rest through float32; the host backend computes in float32 and rounds once.
#include "codegen/Lowering.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

namespace ptxjit::codegen::detail {

using namespace ir;

llvm::Value *FunctionLowerer::lowerHalfCall(const CallInstr &i, HalfOp op) {
  SourceLoc at = i.loc;
  const Type *res = typeOf(&i, at);
  std::vector<llvm::Value *> x;
  for (size_t k = 0; k < i.numArgs(); ++k)
    x.push_back(convert(valueOf(i.arg(k), at), typeOf(i.arg(k), at), types::float16(), at));
  if (static_cast<int>(x.size()) != halfOpArity(op))
    internal(at, "cuda.fp16 call with " + std::to_string(x.size()) + " operands");
  llvm::Type *half = B.getHalfTy();
  auto one = [&] { return llvm::ConstantFP::get(half, 1.0); };
  auto intrinsic = [&](llvm::Intrinsic::ID id) {
    return B.CreateCall(llvm::Intrinsic::getDeclaration(&M.mod, id, {half}), x);
  };
  auto math = [&](MathFn fn) { return M.math.call(B, fn, x); };
  switch (op) {
  case HalfOp::Add:
    return B.CreateFAdd(x[0], x[1]);
  case HalfOp::Sub:
    return B.CreateFSub(x[0], x[1]);
  case HalfOp::Mul:
    return B.CreateFMul(x[0], x[1]);
  case HalfOp::Div:
    return B.CreateFDiv(x[0], x[1]);
  case HalfOp::Neg:
    return B.CreateFNeg(x[0]);
  case HalfOp::Abs:
    return math(MathFn::Fabs);
  case HalfOp::Fma:
    return intrinsic(llvm::Intrinsic::fma);
  // CUDA's __heq ... __hlt are ordered comparisons: false when an operand is NaN (so __hne is
  // `one`, unlike Python's `!=`).
  case HalfOp::Eq:
    return B.CreateFCmpOEQ(x[0], x[1]);
  case HalfOp::Ne:
    return B.CreateFCmpONE(x[0], x[1]);
  case HalfOp::Ge:
    return B.CreateFCmpOGE(x[0], x[1]);
  case HalfOp::Gt:
    return B.CreateFCmpOGT(x[0], x[1]);
  case HalfOp::Le:
    return B.CreateFCmpOLE(x[0], x[1]);
  case HalfOp::Lt:
    return B.CreateFCmpOLT(x[0], x[1]);
  case HalfOp::Max: // __hmax/__hmin: the other operand when one is NaN (IEEE maxNum)
    return intrinsic(llvm::Intrinsic::maxnum);
  case HalfOp::Min:
    return intrinsic(llvm::Intrinsic::minnum);
  case HalfOp::Sin:
    return math(MathFn::Sin);
  case HalfOp::Cos:
    return math(MathFn::Cos);
  case HalfOp::Log:
    return math(MathFn::Log);
  case HalfOp::Log2:
    return math(MathFn::Log2);
  case HalfOp::Log10:
    return math(MathFn::Log10);
  case HalfOp::Exp:
    return math(MathFn::Exp);
  case HalfOp::Exp2:
    return math(MathFn::Exp2);
  case HalfOp::Exp10:
    return math(MathFn::Exp10);
  case HalfOp::Sqrt:
    return math(MathFn::Sqrt);
  case HalfOp::Rsqrt: { // 1/sqrt(x) in float32, rounded once to half
    llvm::Value *f = B.CreateFPExt(x[0], B.getFloatTy());
    llvm::Value *s = M.math.call(B, MathFn::Sqrt, {f});
    return B.CreateFPTrunc(B.CreateFDiv(llvm::ConstantFP::get(B.getFloatTy(), 1.0), s), half);
  }
  case HalfOp::Ceil:
    return math(MathFn::Ceil);
  case HalfOp::Floor:
    return math(MathFn::Floor);
  case HalfOp::Rcp:
    return B.CreateFDiv(one(), x[0]);
  case HalfOp::Trunc:
    return math(MathFn::Trunc);
  case HalfOp::Rint:
    return math(MathFn::Rint);
  case HalfOp::Tanh:
    return math(MathFn::Tanh);
  }
  (void)res;
  internal(at, "unknown cuda.fp16 operation");
}

} // namespace ptxjit::codegen::detail
