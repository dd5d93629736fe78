// Lowering of NumPy ufuncs called in kernels (ir/typing/NumpyUfuncs.h): with an output array,
// one loop nest over the output's elements in which every array input is read with NumPy's
// broadcasting, the element is computed in the loop types typing chose and cast to the output's
// dtype; with scalar inputs only, the element alone. The loop follows assignment to a view
// (LowerSlices.cpp): a dimension whose lengths disagree (NumPy raises ValueError, a kernel
// cannot) computes only the part every operand has, and the direction of the walk keeps a
// shifted in-place call such as np.add(a[:-1], 1, a[1:]) equal to NumPy's.
#include "codegen/Lowering.h"

#include <llvm/IR/Constants.h>

#include <algorithm>
#include <numeric>

namespace ptxjit::codegen::detail {

using namespace ir;

namespace {

constexpr double kPi = 3.141592653589793238462643383279502884;

/// The cmath-style name of the complex version of math ufunc `id` ("asin" for numpy.arcsin),
/// or null when NumPy has no complex loop for it.
const char *complexNameOf(BuiltinId id) {
  switch (id) {
  case BuiltinId::NpSqrt:
    return "sqrt";
  case BuiltinId::NpExp:
    return "exp";
  case BuiltinId::NpExp2:
    return "exp2";
  case BuiltinId::NpExpm1:
    return "expm1";
  case BuiltinId::NpLog:
    return "log";
  case BuiltinId::NpLog2:
    return "log2";
  case BuiltinId::NpLog10:
    return "log10";
  case BuiltinId::NpLog1p:
    return "log1p";
  case BuiltinId::NpSin:
    return "sin";
  case BuiltinId::NpCos:
    return "cos";
  case BuiltinId::NpTan:
    return "tan";
  case BuiltinId::NpArcsin:
    return "asin";
  case BuiltinId::NpArccos:
    return "acos";
  case BuiltinId::NpArctan:
    return "atan";
  case BuiltinId::NpSinh:
    return "sinh";
  case BuiltinId::NpCosh:
    return "cosh";
  case BuiltinId::NpTanh:
    return "tanh";
  case BuiltinId::NpArcsinh:
    return "asinh";
  case BuiltinId::NpArccosh:
    return "acosh";
  case BuiltinId::NpArctanh:
    return "atanh";
  case BuiltinId::NpRint:
    return "rint";
  default:
    return nullptr;
  }
}

} // namespace

llvm::Value *FunctionLowerer::lowerNumpyUfuncCall(const CallInstr &i, const NumpyUfunc &u) {
  SourceLoc at = i.loc;
  std::vector<const Type *> argTypes;
  std::string argsStr;
  for (size_t k = 0; k < i.numArgs(); ++k) {
    argTypes.push_back(typeOf(i.arg(k), at));
    argsStr += (k ? ", " : "") + argTypes.back()->str();
  }
  UfuncCall c = resolveUfuncCall(u, argTypes, i.kwNames);
  if (!c.error.empty())
    fail(at, DiagCode::UfuncCall, {u.name, argsStr, c.error});
  const Type *res = typeOf(&i, at);
  const LoopTypes &loop = c.loop;
  if (c.out < 0) {
    std::vector<llvm::Value *> x;
    for (size_t j = 0; j < c.inputs.size(); ++j) {
      size_t k = c.inputs[j];
      x.push_back(convert(valueOf(i.arg(k), at), argTypes[k], loop.inputs[j], at));
    }
    return convert(ufuncElement(u, loop, x, at), loop.outputs[0], res, at);
  }

  const auto *oty = dyn_cast<ArrayType>(concretize(argTypes[c.out]));
  if (!oty)
    internal(at, "ufunc output of type " + argTypes[c.out]->str());
  llvm::Value *outArr = valueOf(i.arg(c.out), at);
  const int nd = oty->ndim();
  // The loop runs over the output's shape; each array input's dimensions align with its last
  // ones, a dimension of 1 repeats, and a mismatched one shortens the loop to the overlap.
  std::vector<llvm::Value *> extents;
  for (int d = 0; d < nd; ++d)
    extents.push_back(B.CreateExtractValue(outArr, {1u, unsigned(d)}));
  struct Input {
    llvm::Value *value;               ///< the array, or the scalar already in its loop type
    const ArrayType *aty = nullptr;   ///< null for scalars
    std::vector<llvm::Value *> isOne; ///< per dimension: length 1 (broadcast)
  };
  std::vector<Input> inputs;
  llvm::Value *outAddr = B.CreatePtrToInt(B.CreateExtractValue(outArr, 0), B.getInt64Ty());
  llvm::Value *backwards = B.getFalse();
  for (size_t j = 0; j < c.inputs.size(); ++j) {
    size_t k = c.inputs[j];
    llvm::Value *v = valueOf(i.arg(k), at);
    const auto *aty = dyn_cast<ArrayType>(concretize(argTypes[k]));
    if (!aty) {
      inputs.push_back({convert(v, argTypes[k], loop.inputs[j], at), nullptr, {}});
      continue;
    }
    Input in{v, aty, {}};
    const int lead = nd - aty->ndim();
    for (int q = 0; q < aty->ndim(); ++q) {
      llvm::Value *len = B.CreateExtractValue(v, {1u, unsigned(q)});
      llvm::Value *one = B.CreateICmpEQ(len, B.getInt64(1));
      llvm::Value *&ext = extents[lead + q];
      ext = B.CreateSelect(one, ext, B.CreateSelect(B.CreateICmpSLT(len, ext), len, ext));
      in.isOne.push_back(one);
    }
    // An input that starts below the output (a[:-1] read into a[1:]) is walked from the end,
    // so that no element is overwritten before it is read (as for assignment to a view).
    llvm::Value *inAddr = B.CreatePtrToInt(B.CreateExtractValue(v, 0), B.getInt64Ty());
    backwards = B.CreateOr(backwards, B.CreateICmpULT(inAddr, outAddr));
    inputs.push_back(std::move(in));
  }
  // Walk in the output's memory order: the first dimension innermost for a Fortran array.
  std::vector<int> order(nd);
  std::iota(order.begin(), order.end(), 0);
  if (oty->layout() == Layout::F)
    std::reverse(order.begin(), order.end());
  std::vector<llvm::Value *> nest;
  for (int d : order)
    nest.push_back(extents[d]);
  emitLoopNest(nest, [&](const std::vector<llvm::Value *> &ks) {
    std::vector<llvm::Value *> idx(nd);
    for (int p = 0; p < nd; ++p) {
      int d = order[p];
      llvm::Value *rev = B.CreateSub(B.CreateSub(extents[d], B.getInt64(1)), ks[p]);
      idx[d] = B.CreateSelect(backwards, rev, ks[p]);
    }
    std::vector<llvm::Value *> x;
    for (size_t j = 0; j < inputs.size(); ++j) {
      const Input &in = inputs[j];
      if (!in.aty) {
        x.push_back(in.value);
        continue;
      }
      const int lead = nd - in.aty->ndim();
      std::vector<llvm::Value *> si;
      for (int q = 0; q < in.aty->ndim(); ++q)
        si.push_back(B.CreateSelect(in.isOne[q], B.getInt64(0), idx[lead + q]));
      llvm::Value *v = loadScalar(B, elementAddress(in.value, in.aty, si), in.aty->scalarDtype());
      x.push_back(convert(v, in.aty->scalarDtype(), loop.inputs[j], at));
    }
    llvm::Value *r = convert(ufuncElement(u, loop, x, at), loop.outputs[0], oty->scalarDtype(), at);
    storeScalar(B, elementAddress(outArr, oty, idx), r, oty->scalarDtype());
  });
  return convert(outArr, oty, res, at);
}

llvm::Value *FunctionLowerer::ufuncCompare(CmpOp cmp, llvm::Value *l, const ScalarType *lt,
                                           llvm::Value *r, const ScalarType *rt, SourceLoc at) {
  if (lt != rt) {
    // NumPy 1.25's int64/uint64 loops (qQ, Qq): exact. With the signed operand on the left,
    // a negative value is below every unsigned one; otherwise both compare as unsigned.
    const bool ints = lt->kind() == TypeKind::Int && rt->kind() == TypeKind::Int;
    if (ints && !lt->isSigned() && rt->isSigned()) {
      CmpOp mirrored = cmp == CmpOp::Lt   ? CmpOp::Gt
                       : cmp == CmpOp::Gt ? CmpOp::Lt
                       : cmp == CmpOp::Le ? CmpOp::Ge
                       : cmp == CmpOp::Ge ? CmpOp::Le
                                          : cmp;
      return ufuncCompare(mirrored, r, rt, l, lt, at);
    }
    if (!ints || !lt->isSigned() || rt->isSigned() || lt->bits() != rt->bits())
      internal(at, "comparison loop of " + lt->str() + " and " + rt->str());
    llvm::Value *neg = B.CreateICmpSLT(l, llvm::ConstantInt::get(l->getType(), 0));
    llvm::Value *u = compareScalars(cmp, l, r, rt, at); // as unsigned
    switch (cmp) {
    case CmpOp::Lt:
    case CmpOp::Le:
    case CmpOp::Ne:
      return B.CreateOr(neg, u);
    default: // Gt, Ge, Eq
      return B.CreateAnd(B.CreateNot(neg), u);
    }
  }
  if (lt->kind() != TypeKind::Complex)
    return compareScalars(cmp, l, r, lt, at);
  // NumPy's complex order (loops.c.src CLT, CLE, ...): by real part, then imaginary part;
  // a nan imaginary part makes the real parts' order false.
  llvm::Value *lr = B.CreateExtractValue(l, 0), *li = B.CreateExtractValue(l, 1);
  llvm::Value *rr = B.CreateExtractValue(r, 0), *ri = B.CreateExtractValue(r, 1);
  llvm::Value *noNanIm = B.CreateAnd(B.CreateFCmpORD(li, li), B.CreateFCmpORD(ri, ri));
  llvm::Value *reEq = B.CreateFCmpOEQ(lr, rr);
  switch (cmp) {
  case CmpOp::Lt:
    return B.CreateOr(B.CreateAnd(B.CreateFCmpOLT(lr, rr), noNanIm),
                      B.CreateAnd(reEq, B.CreateFCmpOLT(li, ri)));
  case CmpOp::Le:
    return B.CreateOr(B.CreateAnd(B.CreateFCmpOLT(lr, rr), noNanIm),
                      B.CreateAnd(reEq, B.CreateFCmpOLE(li, ri)));
  case CmpOp::Gt:
    return B.CreateOr(B.CreateAnd(B.CreateFCmpOGT(lr, rr), noNanIm),
                      B.CreateAnd(reEq, B.CreateFCmpOGT(li, ri)));
  case CmpOp::Ge:
    return B.CreateOr(B.CreateAnd(B.CreateFCmpOGT(lr, rr), noNanIm),
                      B.CreateAnd(reEq, B.CreateFCmpOGE(li, ri)));
  default: // Eq, Ne
    return compareScalars(cmp, l, r, lt, at);
  }
}

llvm::Value *FunctionLowerer::ufuncMinMax(bool isMax, bool ignoreNan, llvm::Value *a,
                                          llvm::Value *b, const ScalarType *t) {
  switch (t->kind()) {
  case TypeKind::Bool:
    return isMax ? B.CreateOr(a, b) : B.CreateAnd(a, b);
  case TypeKind::Int: {
    llvm::Value *keepA = isMax ? (t->isSigned() ? B.CreateICmpSGE(a, b) : B.CreateICmpUGE(a, b))
                               : (t->isSigned() ? B.CreateICmpSLE(a, b) : B.CreateICmpULE(a, b));
    return B.CreateSelect(keepA, a, b);
  }
  case TypeKind::Float: {
    // NumPy's loops: maximum keeps a when a >= b or a is nan (nan propagates); fmax keeps a
    // when a >= b or b is nan (a nan loses to a number).
    llvm::Value *order = isMax ? B.CreateFCmpOGE(a, b) : B.CreateFCmpOLE(a, b);
    llvm::Value *nan = ignoreNan ? B.CreateFCmpUNO(b, b) : B.CreateFCmpUNO(a, a);
    return B.CreateSelect(B.CreateOr(order, nan), a, b);
  }
  default: {
    // The same with NumPy's complex order (CGE / CLE); a nan part counts as nan.
    llvm::Value *ar = B.CreateExtractValue(a, 0), *ai = B.CreateExtractValue(a, 1);
    llvm::Value *br = B.CreateExtractValue(b, 0), *bi = B.CreateExtractValue(b, 1);
    llvm::Value *noNanIm = B.CreateAnd(B.CreateFCmpORD(ai, ai), B.CreateFCmpORD(bi, bi));
    llvm::Value *strict = isMax ? B.CreateFCmpOGT(ar, br) : B.CreateFCmpOLT(ar, br);
    llvm::Value *imOrder = isMax ? B.CreateFCmpOGE(ai, bi) : B.CreateFCmpOLE(ai, bi);
    llvm::Value *order =
        B.CreateOr(B.CreateAnd(strict, noNanIm), B.CreateAnd(B.CreateFCmpOEQ(ar, br), imOrder));
    llvm::Value *aNan = B.CreateOr(B.CreateFCmpUNO(ar, ar), B.CreateFCmpUNO(ai, ai));
    llvm::Value *bNan = B.CreateOr(B.CreateFCmpUNO(br, br), B.CreateFCmpUNO(bi, bi));
    return B.CreateSelect(B.CreateOr(order, ignoreNan ? bNan : aNan), a, b);
  }
  }
}

llvm::Value *FunctionLowerer::ufuncElement(const NumpyUfunc &u, const LoopTypes &loop,
                                           const std::vector<llvm::Value *> &x, SourceLoc at) {
  const ScalarType *t = loop.inputs[0];
  const ScalarType *rt = loop.outputs[0];
  const TypeKind kind = t->kind();
  auto noLoop = [&]() -> llvm::Value * {
    internal(at, "numpy." + u.name + " has no code for loop " + loopTypesStr(loop));
  };
  auto binary = [&](BinaryOp op) {
    return binaryValues(op, x[0], t, x[1], loop.inputs[1], rt, at);
  };
  switch (u.id) {
  case BuiltinId::NpEqual:
    return ufuncCompare(CmpOp::Eq, x[0], t, x[1], loop.inputs[1], at);
  case BuiltinId::NpNotEqual:
    return ufuncCompare(CmpOp::Ne, x[0], t, x[1], loop.inputs[1], at);
  case BuiltinId::NpLess:
    return ufuncCompare(CmpOp::Lt, x[0], t, x[1], loop.inputs[1], at);
  case BuiltinId::NpLessEqual:
    return ufuncCompare(CmpOp::Le, x[0], t, x[1], loop.inputs[1], at);
  case BuiltinId::NpGreater:
    return ufuncCompare(CmpOp::Gt, x[0], t, x[1], loop.inputs[1], at);
  case BuiltinId::NpGreaterEqual:
    return ufuncCompare(CmpOp::Ge, x[0], t, x[1], loop.inputs[1], at);
  case BuiltinId::NpLogicalAnd:
    return B.CreateAnd(truth(x[0], t, at), truth(x[1], t, at));
  case BuiltinId::NpLogicalOr:
    return B.CreateOr(truth(x[0], t, at), truth(x[1], t, at));
  case BuiltinId::NpLogicalXor:
    return B.CreateXor(truth(x[0], t, at), truth(x[1], t, at));
  case BuiltinId::NpLogicalNot:
    return B.CreateNot(truth(x[0], t, at));
  case BuiltinId::NpMaximum:
  case BuiltinId::NpMinimum:
  case BuiltinId::NpFmax:
  case BuiltinId::NpFmin: {
    bool isMax = u.id == BuiltinId::NpMaximum || u.id == BuiltinId::NpFmax;
    bool ignoreNan = u.id == BuiltinId::NpFmax || u.id == BuiltinId::NpFmin;
    return ufuncMinMax(isMax, ignoreNan, x[0], x[1], t);
  }
  case BuiltinId::NpBitwiseAnd:
    return binary(BinaryOp::And);
  case BuiltinId::NpBitwiseOr:
    return binary(BinaryOp::Or);
  case BuiltinId::NpBitwiseXor:
    return binary(BinaryOp::Xor);
  case BuiltinId::NpInvert:
  case BuiltinId::NpBitwiseNot:
    return B.CreateNot(x[0]); // ~ of every bit; of a bool (i1), not
  case BuiltinId::NpAdd:      // bool + bool is or, bool * bool is and (NumPy's ?? loops)
    return kind == TypeKind::Bool ? B.CreateOr(x[0], x[1]) : binary(BinaryOp::Add);
  case BuiltinId::NpMultiply:
    return kind == TypeKind::Bool ? B.CreateAnd(x[0], x[1]) : binary(BinaryOp::Mul);
  case BuiltinId::NpSubtract:
    return binary(BinaryOp::Sub);
  case BuiltinId::NpDivide:
  case BuiltinId::NpTrueDivide:
    return binary(BinaryOp::TrueDiv);
  case BuiltinId::NpFloorDivide: // Python's floor semantics, x // 0 == 0 for integers (NumPy's)
    return binary(BinaryOp::FloorDiv);
  case BuiltinId::NpRemainder:
  case BuiltinId::NpMod:
    return binary(BinaryOp::Mod);
  case BuiltinId::NpNegative:
    if (kind == TypeKind::Int)
      return B.CreateNeg(x[0]);
    if (kind == TypeKind::Float)
      return B.CreateFNeg(x[0]);
    {
      llvm::Value *z = B.CreateInsertValue(x[0], B.CreateFNeg(B.CreateExtractValue(x[0], 0)), 0);
      return B.CreateInsertValue(z, B.CreateFNeg(B.CreateExtractValue(x[0], 1)), 1);
    }
  case BuiltinId::NpPower:
    if (kind == TypeKind::Float)
      return mathCall(MathFn::Pow, {x[0], x[1]});
    return binary(BinaryOp::Pow); // integers: Python's (repeated squaring); complex: CPython's
  case BuiltinId::NpFmod: {
    if (kind == TypeKind::Float)
      return mathCall(MathFn::Fmod, {x[0], x[1]});
    // C's % (the sign of the dividend); by zero 0, as NumPy's integer loops give.
    llvm::Value *zero = llvm::ConstantInt::get(x[1]->getType(), 0);
    llvm::Value *one = llvm::ConstantInt::get(x[1]->getType(), 1);
    llvm::Value *bad = B.CreateICmpEQ(x[1], zero);
    if (t->isSigned()) // x % -1 is 0, and INT_MIN % -1 must not execute
      bad =
          B.CreateOr(bad, B.CreateICmpEQ(x[1], llvm::ConstantInt::getSigned(x[1]->getType(), -1)));
    llvm::Value *safe = B.CreateSelect(bad, one, x[1]);
    llvm::Value *rem = t->isSigned() ? B.CreateSRem(x[0], safe) : B.CreateURem(x[0], safe);
    return B.CreateSelect(bad, zero, rem);
  }
  case BuiltinId::NpAbs:
  case BuiltinId::NpAbsolute:
    return absValue(x[0], t, rt, at);
  case BuiltinId::NpIsnan:
  case BuiltinId::NpIsinf:
  case BuiltinId::NpIsfinite: {
    const bool isnan = u.id == BuiltinId::NpIsnan, isinf = u.id == BuiltinId::NpIsinf;
    if (kind == TypeKind::Bool || kind == TypeKind::Int)
      return B.getInt1(!isnan && !isinf); // integers are finite
    auto test = [&](llvm::Value *v) {
      if (isnan)
        return B.CreateFCmpUNO(v, v);
      llvm::Value *av = mathCall(MathFn::Fabs, {v});
      llvm::Value *inf = llvm::ConstantFP::getInfinity(v->getType());
      return isinf ? B.CreateFCmpOEQ(av, inf) : B.CreateFCmpOLT(av, inf);
    };
    if (kind == TypeKind::Float)
      return test(x[0]);
    llvm::Value *re = test(B.CreateExtractValue(x[0], 0)),
                *im = test(B.CreateExtractValue(x[0], 1));
    return isnan || isinf ? B.CreateOr(re, im) : B.CreateAnd(re, im);
  }
  case BuiltinId::NpFloor: // NumPy 2's integer and bool loops: the value itself
  case BuiltinId::NpCeil:
  case BuiltinId::NpTrunc:
    if (kind == TypeKind::Bool || kind == TypeKind::Int)
      return x[0];
    break;
  case BuiltinId::NpDegrees:
  case BuiltinId::NpRad2deg:
  case BuiltinId::NpRadians:
  case BuiltinId::NpDeg2rad: {
    if (kind != TypeKind::Float)
      return noLoop();
    bool toDeg = u.id == BuiltinId::NpDegrees || u.id == BuiltinId::NpRad2deg;
    return B.CreateFMul(x[0],
                        llvm::ConstantFP::get(x[0]->getType(), toDeg ? 180.0 / kPi : kPi / 180.0));
  }
  default:
    break;
  }
  // The math functions of one or two float arguments, and their complex versions.
  if (kind == TypeKind::Complex) {
    const char *name = complexNameOf(u.id);
    if (!name || u.nin != 1)
      return noLoop();
    return complexUnary(name, x[0], at);
  }
  if (kind != TypeKind::Float)
    return noLoop();
  if (u.nin == 1)
    return mathCall(mathFnOf(u.id), {x[0]});
  return mathCall(mathFnOf(u.id), {x[0], x[1]});
}

} // namespace ptxjit::codegen::detail
