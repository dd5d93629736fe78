// Lowering of slices, views made by basic indexing (integers and slices, fewer indices than
// dimensions) and assignment to whole views (a scalar broadcast, or an array copied with
// NumPy's broadcasting). The slice representation is described in Lowering.h.
#include "codegen/Lowering.h"

#include <llvm/IR/Constants.h>

#include <limits>

namespace ptxjit::codegen::detail {

using namespace ir;

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

} // namespace

std::vector<FunctionLowerer::IndexComponent> FunctionLowerer::indexComponents(llvm::Value *idx,
                                                                              const Type *idxType) {
  std::vector<IndexComponent> comps;
  if (auto *tt = dyn_cast<TupleType>(concretize(idxType))) {
    for (size_t k = 0; k < tt->size(); ++k)
      comps.push_back({B.CreateExtractValue(idx, unsigned(k)), tt->elements()[k]});
  } else {
    comps.push_back({idx, idxType});
  }
  return comps;
}

std::pair<llvm::Value *, const Type *> FunctionLowerer::expandEllipsis(llvm::Value *idx,
                                                                       const Type *idxType,
                                                                       const ArrayType *aty,
                                                                       SourceLoc at) {
  int ellipses = 0;
  std::vector<const Type *> types = indexComponentTypes(idxType, aty->ndim(), &ellipses);
  if (ellipses != 1)
    return {idx, idxType}; // typing refused two or more
  std::vector<IndexComponent> comps = indexComponents(idx, idxType);
  const size_t fullSlices = types.size() - (comps.size() - 1);
  const SliceType *full = types::slice(/*hasStep=*/false);
  std::vector<llvm::Value *> values;
  for (const IndexComponent &c : comps) {
    if (c.type->kind() != TypeKind::Ellipsis) {
      values.push_back(c.value);
      continue;
    }
    for (size_t k = 0; k < fullSlices; ++k) // `:` as lowerBuildSlice makes it: 0, max, 1
      values.push_back(sliceValue(full, B.getInt64(0), B.getInt64(kMax), B.getInt64(1), at));
  }
  if (types.size() == 1)
    return {values[0], types[0]};
  const Type *tt = types::tuple(types);
  llvm::Value *out = llvm::PoisonValue::get(repr(tt, at));
  for (size_t k = 0; k < values.size(); ++k)
    out = B.CreateInsertValue(out, values[k], unsigned(k));
  return {out, tt};
}

bool FunctionLowerer::selectsView(const ArrayType *aty, const std::vector<IndexComponent> &comps) {
  if (comps.size() < static_cast<size_t>(aty->ndim()))
    return true;
  for (const IndexComponent &c : comps)
    if (TypeKind k = concretize(c.type)->kind(); k == TypeKind::Slice || k == TypeKind::None)
      return true;
  return false;
}

llvm::Value *FunctionLowerer::lowerBuildSlice(const BuildSliceInstr &i) {
  SourceLoc at = i.loc;
  if (i.numOperands() < 2 || i.numOperands() > 3)
    internal(at, "slice with " + std::to_string(i.numOperands()) + " parts");
  // Each part as i64, or null for None.
  auto part = [&](size_t k) -> llvm::Value * {
    if (k >= i.numOperands())
      return nullptr;
    const Instr *p = i.operand(k);
    const Type *t = concretize(typeOf(p, at));
    if (t->kind() == TypeKind::None)
      return nullptr;
    auto *s = dyn_cast<ScalarType>(t);
    if (!s || s->kind() != TypeKind::Int)
      fail(at, DiagCode::SliceBound, {t->str()});
    llvm::Value *v = toIndex(valueOf(p, at), t, at);
    if (!s->isSigned() && s->bits() == 64) // above INT64_MAX: past any end anyway
      v = B.CreateSelect(B.CreateICmpSLT(v, B.getInt64(0)), B.getInt64(kMax), v);
    return v;
  };
  llvm::Value *start = part(0), *stop = part(1), *step = part(2);
  if (step) {
    // -INT64_MAX at the lowest, so that -step never overflows (CPython does the same).
    step = B.CreateSelect(B.CreateICmpSLT(step, B.getInt64(-kMax)), B.getInt64(-kMax), step);
  } else {
    step = B.getInt64(1);
  }
  llvm::Value *neg = B.CreateICmpSLT(step, B.getInt64(0));
  if (!start)
    start = B.CreateSelect(neg, B.getInt64(kMax), B.getInt64(0));
  if (!stop)
    stop = B.CreateSelect(neg, B.getInt64(kMin), B.getInt64(kMax));
  return sliceValue(typeOf(&i, at), start, stop, step, at);
}

llvm::Value *FunctionLowerer::sliceValue(const Type *t, llvm::Value *start, llvm::Value *stop,
                                         llvm::Value *step, SourceLoc at) {
  llvm::Value *out = llvm::PoisonValue::get(repr(t, at));
  out = B.CreateInsertValue(out, start, 0);
  out = B.CreateInsertValue(out, stop, 1);
  return B.CreateInsertValue(out, step, 2);
}

FunctionLowerer::SliceDim FunctionLowerer::sliceDimension(llvm::Value *slice, llvm::Value *len) {
  llvm::Value *start = B.CreateExtractValue(slice, 0);
  llvm::Value *stop = B.CreateExtractValue(slice, 1);
  llvm::Value *step = B.CreateExtractValue(slice, 2);
  llvm::Value *zero = B.getInt64(0), *one = B.getInt64(1);
  llvm::Value *neg = B.CreateICmpSLT(step, zero);
  // PySlice_AdjustIndices: negative bounds count from the end, then clamp to the dimension.
  auto adjust = [&](llvm::Value *x) {
    llvm::Value *wrapped = B.CreateAdd(x, len);
    llvm::Value *low = B.CreateSelect(neg, B.getInt64(-1), zero);
    llvm::Value *high = B.CreateSelect(neg, B.CreateSub(len, one), len);
    llvm::Value *below = B.CreateSelect(B.CreateICmpSLT(wrapped, zero), low, wrapped);
    return B.CreateSelect(B.CreateICmpSLT(x, zero), below,
                          B.CreateSelect(B.CreateICmpSGE(x, len), high, x));
  };
  start = adjust(start);
  stop = adjust(stop);
  // Count: (hi - lo - 1) / |step| + 1 when lo < hi, else 0; both bounds lie in [-1, len].
  llvm::Value *lo = B.CreateSelect(neg, stop, start);
  llvm::Value *hi = B.CreateSelect(neg, start, stop);
  llvm::Value *isZero = B.CreateICmpEQ(step, zero);
  llvm::Value *absStep = B.CreateSelect(neg, B.CreateSub(zero, step), step);
  llvm::Value *safeStep = B.CreateSelect(isZero, one, absStep);
  llvm::Value *n = B.CreateAdd(B.CreateUDiv(B.CreateSub(B.CreateSub(hi, lo), one), safeStep), one);
  llvm::Value *nonEmpty = B.CreateAnd(B.CreateICmpSLT(lo, hi), B.CreateNot(isZero));
  return {start, B.CreateSelect(nonEmpty, n, zero), step};
}

llvm::Value *FunctionLowerer::indexView(llvm::Value *arr, const ArrayType *aty,
                                        const std::vector<IndexComponent> &comps,
                                        const Instr *array, SourceLoc at) {
  const int nd = aty->ndim();
  llvm::Value *offset = B.getInt64(0);                       // bytes
  std::vector<std::pair<llvm::Value *, llvm::Value *>> dims; // (shape, stride) of the view
  std::vector<BoundsCheck> checks;                           // the integer components
  int d = 0; // the array's dimension the next component indexes
  for (const IndexComponent &c : comps) {
    const Type *ct = concretize(c.type);
    if (ct->kind() == TypeKind::None) { // a new axis: length 1 (its stride is never used)
      dims.push_back({B.getInt64(1), B.getInt64(0)});
      continue;
    }
    if (d == nd)
      fail(at, DiagCode::IndexTypes, {aty->str(), "too many indices"});
    llvm::Value *len = B.CreateExtractValue(arr, {1u, unsigned(d)});
    llvm::Value *stride = B.CreateExtractValue(arr, {2u, unsigned(d)});
    if (ct->kind() == TypeKind::Slice) {
      SliceDim s = sliceDimension(c.value, len);
      offset = B.CreateAdd(offset, B.CreateMul(s.start, stride));
      dims.push_back({s.count, B.CreateMul(stride, s.step)});
      ++d;
      continue;
    }
    auto *s = dyn_cast<ScalarType>(ct);
    if (!s || s->kind() != TypeKind::Int)
      fail(at, DiagCode::IndexTypes, {aty->str(), c.type->str()});
    llvm::Value *written = toIndex(c.value, c.type, at), *i = written;
    if (s->isSigned()) // a negative index counts from the end
      i = B.CreateSelect(B.CreateICmpSLT(i, B.getInt64(0)), B.CreateAdd(i, len), i);
    if (M.opts.boundscheck)
      checks.push_back({B.CreateICmpULT(i, len), written, len, d});
    offset = B.CreateAdd(offset, B.CreateMul(i, stride));
    ++d;
  }
  for (; d < nd; ++d) // the dimensions no component indexes stay whole
    dims.push_back({B.CreateExtractValue(arr, {1u, unsigned(d)}),
                    B.CreateExtractValue(arr, {2u, unsigned(d)})});
  if (!checks.empty()) {
    // Out of bounds: an empty view at the array's start (every access through it fails its
    // own check, after this failure was recorded).
    llvm::Value *ok = recordOutOfBounds(checks, array, at);
    offset = B.CreateSelect(ok, offset, B.getInt64(0));
    for (auto &[len, stride] : dims)
      len = B.CreateSelect(ok, len, B.getInt64(0));
  }
  llvm::Value *data = B.CreateGEP(B.getInt8Ty(), B.CreateExtractValue(arr, 0), offset);
  llvm::Value *out = llvm::PoisonValue::get(M.arrayType(static_cast<int>(dims.size())));
  out = B.CreateInsertValue(out, data, 0);
  for (size_t k = 0; k < dims.size(); ++k) {
    out = B.CreateInsertValue(out, dims[k].first, {1u, unsigned(k)});
    out = B.CreateInsertValue(out, dims[k].second, {2u, unsigned(k)});
  }
  return out;
}

void FunctionLowerer::emitLoopNest(
    const std::vector<llvm::Value *> &extents,
    const std::function<void(const std::vector<llvm::Value *> &)> &body) {
  std::vector<llvm::Value *> ivs;
  std::function<void(size_t)> level = [&](size_t d) {
    if (d == extents.size()) {
      body(ivs);
      return;
    }
    llvm::BasicBlock *pre = B.GetInsertBlock();
    auto *head = llvm::BasicBlock::Create(M.ctx, "view.loop", F);
    auto *inner = llvm::BasicBlock::Create(M.ctx, "view.body", F);
    auto *exit = llvm::BasicBlock::Create(M.ctx, "view.exit", F);
    B.CreateBr(head);
    B.SetInsertPoint(head);
    llvm::PHINode *iv = B.CreatePHI(B.getInt64Ty(), 2, "k");
    iv->addIncoming(B.getInt64(0), pre);
    B.CreateCondBr(B.CreateICmpSLT(iv, extents[d]), inner, exit);
    B.SetInsertPoint(inner);
    ivs.push_back(iv);
    level(d + 1);
    ivs.pop_back();
    iv->addIncoming(B.CreateAdd(iv, B.getInt64(1)), B.GetInsertBlock());
    B.CreateBr(head);
    B.SetInsertPoint(exit);
  };
  level(0);
}

void FunctionLowerer::assignToView(llvm::Value *dst, const ArrayType *dty, llvm::Value *value,
                                   const Type *valueType, SourceLoc at) {
  const int nd = dty->ndim();
  std::vector<llvm::Value *> dshape;
  for (int d = 0; d < nd; ++d)
    dshape.push_back(B.CreateExtractValue(dst, {1u, unsigned(d)}));
  const Type *vt = concretize(valueType);
  auto *sty = dyn_cast<ArrayType>(vt);
  const ScalarType *ddt = dty->scalarDtype(); // views of records are not assignable (typing)
  if (!ddt)
    fail(at, DiagCode::SetItemTypes, {dty->str(), ":", valueType->str()});
  if (!sty) {
    auto *s = dyn_cast<ScalarType>(vt);
    if (!s || (s->kind() == TypeKind::Complex && ddt->kind() != TypeKind::Complex))
      fail(at, DiagCode::SetItemTypes, {dty->str(), ":", valueType->str()});
    llvm::Value *v = convert(value, valueType, ddt, at);
    emitLoopNest(dshape, [&](const std::vector<llvm::Value *> &k) {
      storeScalar(B, elementAddress(dst, dty, k), v, ddt);
    });
    return;
  }
  const int m = sty->ndim();
  const ScalarType *sdt = sty->scalarDtype();
  if (!sdt || m > nd || (sdt->kind() == TypeKind::Complex && ddt->kind() != TypeKind::Complex))
    fail(at, DiagCode::SetItemTypes, {dty->str(), ":", valueType->str()});
  // NumPy broadcasting: the source's dimensions align with the view's last ones; missing and
  // size-1 source dimensions repeat. A mismatched dimension copies only the overlap (NumPy
  // and Numba raise ValueError, which a kernel cannot).
  const int lead = nd - m;
  std::vector<llvm::Value *> extents, isOne;
  for (int j = 0; j < m; ++j) {
    llvm::Value *sd = B.CreateExtractValue(value, {1u, unsigned(j)});
    llvm::Value *dd = dshape[lead + j];
    llvm::Value *one = B.CreateICmpEQ(sd, B.getInt64(1));
    isOne.push_back(one);
    extents.push_back(B.CreateSelect(one, dd, B.CreateSelect(B.CreateICmpSLT(sd, dd), sd, dd)));
  }
  extents.insert(extents.begin(), dshape.begin(), dshape.begin() + lead);
  // When source and destination overlap (views of one array), copying from the end when the
  // destination starts after the source keeps shifted copies such as a[1:] = a[:-1] right.
  llvm::Value *dstAddr = B.CreatePtrToInt(B.CreateExtractValue(dst, 0), B.getInt64Ty());
  llvm::Value *srcAddr = B.CreatePtrToInt(B.CreateExtractValue(value, 0), B.getInt64Ty());
  llvm::Value *backwards = B.CreateICmpUGT(dstAddr, srcAddr);
  emitLoopNest(extents, [&](const std::vector<llvm::Value *> &k) {
    std::vector<llvm::Value *> di, si;
    for (int d = 0; d < nd; ++d) {
      llvm::Value *rev = B.CreateSub(B.CreateSub(extents[d], B.getInt64(1)), k[d]);
      di.push_back(B.CreateSelect(backwards, rev, k[d]));
    }
    for (int j = 0; j < m; ++j)
      si.push_back(B.CreateSelect(isOne[j], B.getInt64(0), di[lead + j]));
    llvm::Value *v = loadScalar(B, elementAddress(value, sty, si), sdt);
    storeScalar(B, elementAddress(dst, dty, di), convert(v, sdt, ddt, at), ddt);
  });
}

} // namespace ptxjit::codegen::detail
