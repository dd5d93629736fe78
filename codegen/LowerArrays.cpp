// Lowering of arrays (indexing, element access, views, attributes), tuples, ranges and
// iterators (range, arrays, enumerate, zip). Slices and view assignment: LowerSlices.cpp.
#include "codegen/Lowering.h"
#include "ir/ConstantOf.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/MDBuilder.h>

#include <array>
#include <tuple>

namespace ptxjit::codegen::detail {

using namespace ir;

// ---- Indices and addresses ----

llvm::Value *FunctionLowerer::toIndex(llvm::Value *v, const Type *t, SourceLoc at) {
  auto *s = dyn_cast<ScalarType>(concretize(t));
  if (!s || (s->kind() != TypeKind::Int && s->kind() != TypeKind::Bool))
    internal(at, "index of type " + t->str());
  return convert(
      v, t, s->kind() == TypeKind::Int && !s->isSigned() ? types::uint64() : types::int64(), at);
}

std::vector<llvm::Value *> FunctionLowerer::arrayIndices(llvm::Value *arr, const ArrayType *aty,
                                                         llvm::Value *idx, const Type *idxType,
                                                         SourceLoc at) {
  const Type *it = concretize(idxType);
  std::vector<std::pair<llvm::Value *, const Type *>> comps;
  if (auto *tt = dyn_cast<TupleType>(it)) {
    for (size_t k = 0; k < tt->size(); ++k)
      comps.push_back({B.CreateExtractValue(idx, unsigned(k)), tt->elements()[k]});
  } else {
    comps.push_back({idx, idxType});
  }
  if (comps.size() > static_cast<size_t>(aty->ndim()))
    fail(at, DiagCode::IndexTypes, {aty->str(), idxType->str()});
  std::vector<llvm::Value *> out;
  for (size_t k = 0; k < comps.size(); ++k) {
    const Type *ct = concretize(comps[k].second);
    auto *s = dyn_cast<ScalarType>(ct);
    if (!s || (s->kind() != TypeKind::Int && s->kind() != TypeKind::Bool))
      fail(at, DiagCode::IndexTypes, {aty->str(), idxType->str()});
    llvm::Value *i = toIndex(comps[k].first, comps[k].second, at);
    bool isSigned = s->kind() == TypeKind::Int && s->isSigned();
    auto *ci = llvm::dyn_cast<llvm::ConstantInt>(i);
    if (isSigned && !(ci && !ci->isNegative())) {
      // A negative index counts from the end (Numba's wraparound).
      llvm::Value *dim = B.CreateExtractValue(arr, {1u, unsigned(k)});
      i = B.CreateSelect(B.CreateICmpSLT(i, B.getInt64(0)), B.CreateAdd(i, dim), i);
    }
    out.push_back(i);
  }
  return out;
}

namespace {

/// The name the source gives the array `i` loads ("a"), or "array" when it is an expression.
std::string arrayNameOf(const Instr *i, const Function &fn) {
  if (auto *l = dyn_cast<LoadLocalInstr>(i);
      l && l->var >= 0 && static_cast<size_t>(l->var) < fn.vars.size())
    return fn.vars[static_cast<size_t>(l->var)].name;
  if (auto *a = dyn_cast<ArgInstr>(i);
      a && a->index >= 0 && static_cast<size_t>(a->index) < fn.argNames.size())
    return fn.argNames[static_cast<size_t>(a->index)];
  if (auto *g = dyn_cast<GlobalInstr>(i)) // a global array frozen into the kernel
    return g->name;
  return "array";
}

} // namespace

std::array<uint64_t, 4> nameWords(const std::string &s) {
  std::array<uint64_t, 4> w{};
  for (size_t k = 0; k < s.size() && k < 31; ++k)
    w[k / 8] |= static_cast<uint64_t>(static_cast<unsigned char>(s[k])) << (8 * (k % 8));
  return w;
}

llvm::Value *FunctionLowerer::recordOutOfBounds(const std::vector<BoundsCheck> &checks,
                                                const Instr *array, SourceLoc at) {
  llvm::Value *ok = B.getTrue();
  for (const BoundsCheck &c : checks)
    ok = B.CreateAnd(ok, c.ok);
  llvm::BasicBlock *failBB = llvm::BasicBlock::Create(M.ctx, "bounds.fail", F);
  llvm::BasicBlock *recordBB = llvm::BasicBlock::Create(M.ctx, "bounds.record", F);
  llvm::BasicBlock *contBB = llvm::BasicBlock::Create(M.ctx, "bounds.ok", F);
  llvm::MDBuilder md(M.ctx);
  B.CreateCondBr(ok, contBB, failBB, md.createBranchWeights(1 << 20, 1));

  // The first failing check: its index, size and axis. The first thread to fail records them.
  B.SetInsertPoint(failBB);
  llvm::Value *axis = B.getInt64(checks[0].axis), *badIndex = checks[0].index,
              *size = checks[0].size;
  for (size_t k = checks.size(); k-- > 0;) {
    llvm::Value *bad = B.CreateNot(checks[k].ok);
    axis = B.CreateSelect(bad, B.getInt64(checks[k].axis), axis);
    badIndex = B.CreateSelect(bad, checks[k].index, badIndex);
    size = B.CreateSelect(bad, checks[k].size, size);
  }
  llvm::Value *rec = M.boundsRecord(B);
  llvm::Value *won = B.CreateExtractValue(
      B.CreateAtomicCmpXchg(rec, B.getInt64(0), B.getInt64(1), llvm::MaybeAlign(8),
                            llvm::AtomicOrdering::Monotonic, llvm::AtomicOrdering::Monotonic),
      1);
  B.CreateCondBr(won, recordBB, contBB);

  B.SetInsertPoint(recordBB);
  auto word = [&](unsigned k, llvm::Value *v) {
    B.CreateAlignedStore(v, B.CreateConstInBoundsGEP1_32(B.getInt64Ty(), rec, k), llvm::Align(8));
  };
  word(1, badIndex);
  word(2, size);
  word(3, axis);
  word(4, B.getInt64(at.line));
  for (int d = 0; d < 3; ++d) {
    word(5 + d, B.CreateZExt(specialRegister(Sreg::Tid, d), B.getInt64Ty()));
    word(8 + d, B.CreateZExt(specialRegister(Sreg::Ctaid, d), B.getInt64Ty()));
  }
  std::array<uint64_t, 4> arrayName = nameWords(arrayNameOf(array, fn));
  std::array<uint64_t, 4> fnName = nameWords(fn.name);
  for (unsigned k = 0; k < 4; ++k) {
    word(11 + k, B.getInt64(arrayName[k]));
    word(15 + k, B.getInt64(fnName[k]));
  }
  B.CreateBr(contBB);
  B.SetInsertPoint(contBB);
  return ok;
}

llvm::Value *FunctionLowerer::checkedElementAddress(llvm::Value *arr, const ArrayType *aty,
                                                    llvm::Value *index, const Type *idxType,
                                                    const Instr *array, SourceLoc at) {
  std::vector<llvm::Value *> idx = arrayIndices(arr, aty, index, idxType, at);
  if (!M.opts.boundscheck || idx.empty())
    return elementAddress(arr, aty, idx);
  // The indices as written, for the message (arrayIndices has wrapped negative ones).
  std::vector<llvm::Value *> raw;
  if (auto *tt = dyn_cast<TupleType>(concretize(idxType))) {
    for (size_t k = 0; k < idx.size(); ++k)
      raw.push_back(toIndex(B.CreateExtractValue(index, unsigned(k)), tt->elements()[k], at));
  } else {
    raw.push_back(toIndex(index, idxType, at));
  }
  // In bounds: 0 <= i < size for every wrapped index (one unsigned compare each).
  std::vector<BoundsCheck> checks;
  for (size_t k = 0; k < idx.size(); ++k) {
    llvm::Value *size = B.CreateExtractValue(arr, {1u, unsigned(k)});
    checks.push_back({B.CreateICmpULT(idx[k], size), raw[k], size, static_cast<int64_t>(k)});
  }
  // Out of bounds, the access goes to the scratch element, which holds one element of any dtype
  // (records and strings may exceed 16 bytes).
  llvm::Value *ok = recordOutOfBounds(checks, array, at);
  uint64_t bytes = std::max<uint64_t>(16, static_cast<uint64_t>(aty->itemSize()));
  return B.CreateSelect(ok, elementAddress(arr, aty, idx), M.boundsScratch(B, bytes));
}

llvm::Value *FunctionLowerer::elementAddress(llvm::Value *arr, const ArrayType *aty,
                                             const std::vector<llvm::Value *> &idx) {
  llvm::Value *data = B.CreateExtractValue(arr, 0);
  int nd = aty->ndim();
  llvm::Type *elemTy = M.memType(aty->dtype());
  auto shape = [&](int d) { return B.CreateExtractValue(arr, {1u, unsigned(d)}); };
  if (nd == 0)
    return data;
  if (aty->layout() == Layout::C || (aty->layout() == Layout::F && nd == 1)) {
    llvm::Value *off = idx[0];
    for (int d = 1; d < nd; ++d)
      off = B.CreateAdd(B.CreateMul(off, shape(d)), idx[d]);
    return B.CreateGEP(elemTy, data, off);
  }
  if (aty->layout() == Layout::F) {
    llvm::Value *off = idx[nd - 1];
    for (int d = nd - 2; d >= 0; --d)
      off = B.CreateAdd(B.CreateMul(off, shape(d)), idx[d]);
    return B.CreateGEP(elemTy, data, off);
  }
  llvm::Value *off = nullptr;
  for (int d = 0; d < nd; ++d) {
    llvm::Value *term = B.CreateMul(idx[d], B.CreateExtractValue(arr, {2u, unsigned(d)}));
    off = off ? B.CreateAdd(off, term) : term;
  }
  return B.CreateGEP(B.getInt8Ty(), data, off);
}

llvm::Value *FunctionLowerer::subarray(llvm::Value *arr, const ArrayType *aty,
                                       const std::vector<llvm::Value *> &idx) {
  int nd = aty->ndim(), k = static_cast<int>(idx.size());
  llvm::Value *off = B.getInt64(0);
  for (int d = 0; d < k; ++d)
    off = B.CreateAdd(off, B.CreateMul(idx[d], B.CreateExtractValue(arr, {2u, unsigned(d)})));
  llvm::Value *data = B.CreateGEP(B.getInt8Ty(), B.CreateExtractValue(arr, 0), off);
  llvm::Value *out = llvm::PoisonValue::get(M.arrayType(nd - k));
  out = B.CreateInsertValue(out, data, 0);
  for (int d = k; d < nd; ++d) {
    out = B.CreateInsertValue(out, B.CreateExtractValue(arr, {1u, unsigned(d)}),
                              {1u, unsigned(d - k)});
    out = B.CreateInsertValue(out, B.CreateExtractValue(arr, {2u, unsigned(d)}),
                              {2u, unsigned(d - k)});
  }
  return out;
}

llvm::Value *FunctionLowerer::arraySize(llvm::Value *arr, int ndim) {
  llvm::Value *n = B.getInt64(1);
  for (int d = 0; d < ndim; ++d)
    n = B.CreateMul(n, B.CreateExtractValue(arr, {1u, unsigned(d)}));
  return n;
}

// ---- Indexing ----

const ScalarType *FunctionLowerer::pointee(const PointerType *p, const Type *indexType,
                                           SourceLoc at) {
  if (!p->pointee())
    fail(at, DiagCode::VoidPointerIndex, {p->str()});
  if (!isa<ScalarType>(concretize(indexType)) || concretize(indexType)->kind() != TypeKind::Int)
    fail(at, DiagCode::IndexTypes, {p->str(), indexType->str()});
  return p->pointee();
}

llvm::Value *FunctionLowerer::pointerElementAddress(llvm::Value *ptr, const ScalarType *elem,
                                                    llvm::Value *index, const Type *indexType,
                                                    SourceLoc at) {
  // No bounds and no wrapping: a raw pointer, as in numba (p[-1] is the element before).
  return B.CreateGEP(M.memType(elem), ptr, toIndex(index, indexType, at), "ptr.elem");
}

llvm::Value *FunctionLowerer::lowerGetItem(const GetItemInstr &i) {
  SourceLoc at = i.loc;
  const Instr *obj = i.operand(0), *index = i.operand(1);
  if (auto *ec = dyn_cast<EnumClassType>(obj->type)) { // Color["red"]: the member's value
    std::optional<std::string> name = constantStringOf(index, &fn);
    if (!name)
      internal(at, "enum class indexed by a non-constant " + typeOf(index, at)->str());
    return enumMemberValue(ec, *name, at);
  }
  const Type *ot = concretize(typeOf(obj, at)), *it = typeOf(index, at);
  const Type *res = typeOf(&i, at);
  llvm::Value *v = valueOf(obj, at);
  if (auto *aty = dyn_cast<ArrayType>(ot)) {
    if (auto *r = dyn_cast<RecordType>(aty->dtype()); r && typeOf(index, at) == types::string())
      return recordArrayFieldView(v, aty, fieldOf(r, index, at), at);
    llvm::Value *iv = valueOf(index, at);
    std::tie(iv, it) = expandEllipsis(iv, it, aty, at);
    std::vector<IndexComponent> comps = indexComponents(iv, it);
    if (selectsView(aty, comps)) {
      llvm::Value *view = indexView(v, aty, comps, obj, at);
      auto *rty = dyn_cast<ArrayType>(concretize(res));
      if (!rty || rty->dtype() != aty->dtype() ||
          M.arrayType(rty->ndim()) != view->getType())
        internal(at, "view of " + aty->str() + " typed " + res->str());
      return view;
    }
    llvm::Value *addr = checkedElementAddress(v, aty, iv, it, obj, at);
    if (isa<RecordType>(aty->dtype()))
      return addr; // a record is its address
    if (auto *cs = dyn_cast<CharSeqType>(aty->dtype())) // a string: its code units
      return B.CreateAlignedLoad(M.memType(cs), addr, llvm::Align(cs->unitBytes()), "str");
    const ScalarType *dt = cast<ScalarType>(aty->dtype());
    return convert(loadScalar(B, addr, dt), dt, res, at);
  }
  if (auto *r = dyn_cast<RecordType>(ot))
    return loadRecordField(v, r, fieldOf(r, index, at), res, at);
  if (auto *pty = dyn_cast<PointerType>(ot)) {
    const ScalarType *elem = pointee(pty, it, at);
    llvm::Value *p = pointerElementAddress(v, elem, valueOf(index, at), it, at);
    return convert(loadScalar(B, p, elem), elem, res, at);
  }
  if (auto *tt = dyn_cast<TupleType>(ot)) {
    auto *its = dyn_cast<ScalarType>(concretize(it));
    if (!its || (its->kind() != TypeKind::Int && its->kind() != TypeKind::Bool))
      fail(at, DiagCode::IndexTypes, {ot->str(), it->str()});
    int64_t n = static_cast<int64_t>(tt->size());
    if (std::optional<int64_t> k = constantIntOf(index)) {
      int64_t j = *k < 0 ? *k + n : *k;
      if (j < 0 || j >= n)
        fail(at, DiagCode::IndexTypes,
             {ot->str(), "index " + std::to_string(*k) + " (out of range)"});
      return convert(B.CreateExtractValue(v, unsigned(j)), tt->elements()[j], res, at);
    }
    // A run-time index: only for tuples whose elements all have one type.
    const Type *et = n ? concretize(tt->elements()[0]) : nullptr;
    for (const Type *e : tt->elements())
      if (concretize(e) != et)
        et = nullptr;
    if (!et)
      fail(at, DiagCode::UnsupportedConstruct,
           {"indexing the heterogeneous tuple " + ot->str() + " with a non-constant index"});
    llvm::Value *j = toIndex(valueOf(index, at), it, at);
    if (its->kind() == TypeKind::Int && its->isSigned())
      j = B.CreateSelect(B.CreateICmpSLT(j, B.getInt64(0)), B.CreateAdd(j, B.getInt64(n)), j);
    llvm::Value *inRange = B.CreateICmpULT(j, B.getInt64(n));
    if (!M.loopKernel) {
      // numba: IndexError("tuple index out of range"), raised on the host with debug=True.
      llvm::BasicBlock *bad = llvm::BasicBlock::Create(M.ctx, "tuple.range", F);
      llvm::BasicBlock *ok = llvm::BasicBlock::Create(M.ctx, "tuple.ok", F);
      B.CreateCondBr(inRange, ok, bad, llvm::MDBuilder(M.ctx).createBranchWeights(1 << 20, 1));
      B.SetInsertPoint(bad);
      RaisedException e;
      e.cls = GlobalValue::exceptionClass("IndexError", 0);
      e.args.push_back(ConstValue::string("tuple index out of range"));
      raiseException(e, at);
      B.SetInsertPoint(ok);
    }
    // Out-of-range indices (loop kernels) read element 0 rather than arbitrary memory.
    j = B.CreateSelect(inRange, j, B.getInt64(0));
    llvm::Type *ety = repr(et, at);
    llvm::AllocaInst *slot = entryAlloca(llvm::ArrayType::get(ety, n), "tuple.tmp");
    for (int64_t k = 0; k < n; ++k)
      B.CreateStore(B.CreateExtractValue(v, unsigned(k)),
                    B.CreateConstInBoundsGEP2_64(slot->getAllocatedType(), slot, 0, k));
    llvm::Value *p = B.CreateInBoundsGEP(slot->getAllocatedType(), slot, {B.getInt64(0), j});
    return convert(B.CreateLoad(ety, p), et, res, at);
  }
  fail(at, DiagCode::IndexTypes, {ot->str(), it->str()});
}

void FunctionLowerer::lowerSetItem(const SetItemInstr &i) {
  SourceLoc at = i.loc;
  const Instr *obj = i.operand(0), *index = i.operand(1), *value = i.operand(2);
  const Type *ot = concretize(typeOf(obj, at)), *it = typeOf(index, at);
  if (auto *pty = dyn_cast<PointerType>(ot)) {
    const Type *vt = typeOf(value, at);
    const ScalarType *elem = pointee(pty, it, at);
    if (!dyn_cast<ScalarType>(concretize(vt)))
      fail(at, DiagCode::SetItemTypes, {ot->str(), it->str(), vt->str()});
    llvm::Value *p = pointerElementAddress(valueOf(obj, at), elem, valueOf(index, at), it, at);
    storeScalar(B, p, convert(valueOf(value, at), vt, elem, at), elem);
    return;
  }
  if (auto *r = dyn_cast<RecordType>(ot)) {
    storeRecordField(valueOf(obj, at), r, fieldOf(r, index, at), value, valueOf(value, at),
                     typeOf(value, at), at);
    return;
  }
  auto *aty = dyn_cast<ArrayType>(ot);
  if (!aty)
    fail(at, DiagCode::SetItemTypes, {ot->str(), it->str(), typeOf(value, at)->str()});
  if (aty->readonly())
    fail(at, DiagCode::ReadonlyArray, {ot->str()});
  llvm::Value *arr = valueOf(obj, at);
  llvm::Value *iv = valueOf(index, at);
  std::tie(iv, it) = expandEllipsis(iv, it, aty, at);
  const Type *vt = typeOf(value, at);
  if (auto *cs = dyn_cast<CharSeqType>(aty->dtype())) { // one element (typing refused views)
    storeCharSeq(checkedElementAddress(arr, aty, iv, it, obj, at), cs,
                 static_cast<uint64_t>(cs->unitBytes()), value, valueOf(value, at), vt, at);
    return;
  }
  if (auto *r = dyn_cast<RecordType>(aty->dtype())) {
    auto *src = dyn_cast<RecordType>(concretize(vt));
    if (!src || src->writable() != r->writable())
      fail(at, DiagCode::SetItemTypes, {ot->str(), it->str(), vt->str()});
    copyRecord(checkedElementAddress(arr, aty, iv, it, obj, at), valueOf(value, at), r);
    return;
  }
  std::vector<IndexComponent> comps = indexComponents(iv, it);
  if (selectsView(aty, comps)) {
    // a[i:j] = x, img[y] = 0, a[:, k] = v: every element of the view.
    llvm::Value *view = indexView(arr, aty, comps, obj, at);
    int vnd = static_cast<int>(
        llvm::cast<llvm::ArrayType>(view->getType()->getStructElementType(1))->getNumElements());
    assignToView(view, types::array(aty->dtype(), vnd, Layout::A), valueOf(value, at), vt, at);
    return;
  }
  if (!dyn_cast<ScalarType>(concretize(vt)))
    fail(at, DiagCode::SetItemTypes, {ot->str(), it->str(), vt->str()});
  const ScalarType *dt = cast<ScalarType>(aty->dtype());
  llvm::Value *v = convert(valueOf(value, at), vt, dt, at);
  storeScalar(B, checkedElementAddress(arr, aty, iv, it, obj, at), v, dt);
}

// ---- Tuples ----

llvm::Value *FunctionLowerer::lowerBuildTuple(const BuildTupleInstr &i) {
  SourceLoc at = i.loc;
  auto *tt = dyn_cast<TupleType>(concretize(typeOf(&i, at)));
  if (!tt || tt->size() != i.numOperands())
    internal(at, "tuple of " + std::to_string(i.numOperands()) + " typed " + typeOf(&i, at)->str());
  llvm::Value *out = llvm::PoisonValue::get(repr(tt, at));
  for (size_t k = 0; k < tt->size(); ++k) {
    const Instr *e = i.operand(k);
    out = B.CreateInsertValue(out, convert(valueOf(e, at), typeOf(e, at), tt->elements()[k], at),
                              unsigned(k));
  }
  return out;
}

llvm::Value *FunctionLowerer::lowerTupleGet(const TupleGetInstr &i) {
  SourceLoc at = i.loc;
  const Instr *src = i.operand(0);
  const Type *st = concretize(typeOf(src, at));
  auto *tt = dyn_cast<TupleType>(st);
  if (!tt)
    fail(at, DiagCode::UnsupportedConstruct, {"unpacking a value of type " + st->str()});
  if (i.index < 0 || static_cast<size_t>(i.index) >= tt->size())
    internal(at, "tuple element " + std::to_string(i.index) + " of " + st->str());
  return convert(B.CreateExtractValue(valueOf(src, at), unsigned(i.index)), tt->elements()[i.index],
                 typeOf(&i, at), at);
}

// ---- Ranges and iterators ----

llvm::Value *FunctionLowerer::rangeLength(llvm::Value *range) {
  llvm::Value *start = B.CreateExtractValue(range, 0);
  llvm::Value *stop = B.CreateExtractValue(range, 1);
  llvm::Value *step = B.CreateExtractValue(range, 2);
  llvm::Value *zero = B.getInt64(0);
  llvm::Value *pos = B.CreateICmpSGT(step, zero);
  llvm::Value *lo = B.CreateSelect(pos, start, stop);
  llvm::Value *hi = B.CreateSelect(pos, stop, start);
  llvm::Value *absStep = B.CreateSelect(pos, step, B.CreateSub(zero, step));
  llvm::Value *isZero = B.CreateICmpEQ(step, zero);
  llvm::Value *nonEmpty = B.CreateAnd(B.CreateICmpSLT(lo, hi), B.CreateNot(isZero));
  llvm::Value *safeStep = B.CreateSelect(isZero, B.getInt64(1), absStep);
  // (hi - lo - 1) as unsigned never overflows for lo < hi.
  llvm::Value *n = B.CreateAdd(
      B.CreateUDiv(B.CreateSub(B.CreateSub(hi, lo), B.getInt64(1)), safeStep), B.getInt64(1));
  return B.CreateSelect(nonEmpty, n, zero);
}

llvm::Type *FunctionLowerer::iterStateType(const IteratorType *it, SourceLoc at) {
  auto *i64 = B.getInt64Ty();
  auto *ptr = llvm::PointerType::getUnqual(M.ctx);
  switch (it->iterKind()) {
  case IterKind::Range:
    return llvm::StructType::get(M.ctx, {i64, i64, i64});
  case IterKind::Array: {
    if (it->sources().size() != 1)
      internal(at, "array iterator without its array type");
    return llvm::StructType::get(M.ctx, {i64, repr(it->sources()[0], at)});
  }
  case IterKind::Tuple: { // {index, the elements as an array (indexed at run time)}
    auto *tt = it->sources().size() == 1 ? dyn_cast<TupleType>(it->sources()[0]) : nullptr;
    if (!tt || tt->size() == 0)
      internal(at, "tuple iterator without its tuple type");
    return llvm::StructType::get(
        M.ctx, {i64, llvm::ArrayType::get(repr(it->yieldType(), at), tt->size())});
  }
  case IterKind::Enumerate:
    if (it->sources().size() != 1)
      internal(at, "enumerate without its inner iterator");
    return llvm::StructType::get(M.ctx, {i64, ptr});
  case IterKind::Zip:
    return llvm::StructType::get(M.ctx, std::vector<llvm::Type *>(it->sources().size(), ptr));
  }
  internal(at, "iterator kind");
}

void FunctionLowerer::initIterState(llvm::Value *state, const IteratorType *it, llvm::Value *source,
                                    const Type *sourceType, SourceLoc at) {
  llvm::Type *sty = iterStateType(it, at);
  const Type *st = concretize(sourceType);
  switch (it->iterKind()) {
  case IterKind::Range:
    if (st->kind() != TypeKind::Range)
      internal(at, "range iterator over " + sourceType->str());
    B.CreateStore(source, state);
    return;
  case IterKind::Array: {
    auto *aty = dyn_cast<ArrayType>(st);
    if (!aty || aty->ndim() < 1)
      fail(at, DiagCode::NotIterable, {sourceType->str()});
    llvm::Value *v = llvm::PoisonValue::get(sty);
    v = B.CreateInsertValue(v, B.getInt64(0), 0);
    v = B.CreateInsertValue(v, convert(source, sourceType, it->sources()[0], at), 1);
    B.CreateStore(v, state);
    return;
  }
  case IterKind::Tuple: {
    auto *tt = dyn_cast<TupleType>(st);
    if (!tt || tt->size() == 0)
      fail(at, DiagCode::NotIterable, {sourceType->str()});
    B.CreateStore(B.getInt64(0), B.CreateStructGEP(sty, state, 0));
    for (size_t k = 0; k < tt->size(); ++k)
      B.CreateStore(
          convert(B.CreateExtractValue(source, unsigned(k)), tt->elements()[k], it->yieldType(),
                  at),
          B.CreateGEP(sty, state, {B.getInt32(0), B.getInt32(1), B.getInt32(unsigned(k))}));
    return;
  }
  default:
    internal(at, "initializing an " + it->str() + " state from " + sourceType->str());
  }
}

llvm::Value *FunctionLowerer::iterValid(llvm::Value *state, const IteratorType *it, SourceLoc at) {
  llvm::Type *sty = iterStateType(it, at);
  auto field = [&](unsigned k, llvm::Type *ty) {
    return B.CreateLoad(ty, B.CreateStructGEP(sty, state, k));
  };
  auto *i64 = B.getInt64Ty();
  auto *ptr = llvm::PointerType::getUnqual(M.ctx);
  auto inner = [&](size_t k) { return cast<IteratorType>(it->sources()[k]); };
  switch (it->iterKind()) {
  case IterKind::Range: {
    llvm::Value *cur = field(0, i64), *stop = field(1, i64), *step = field(2, i64);
    llvm::Value *zero = B.getInt64(0);
    // step > 0 ? cur < stop : (step < 0 && cur > stop); a zero step yields nothing.
    return B.CreateSelect(B.CreateICmpSGT(step, zero), B.CreateICmpSLT(cur, stop),
                          B.CreateAnd(B.CreateICmpSLT(step, zero), B.CreateICmpSGT(cur, stop)));
  }
  case IterKind::Array: {
    llvm::Value *idx = field(0, i64);
    llvm::Value *len = B.CreateLoad(
        i64,
        B.CreateGEP(sty, state, {B.getInt32(0), B.getInt32(1), B.getInt32(1), B.getInt32(0)}));
    return B.CreateICmpSLT(idx, len);
  }
  case IterKind::Tuple:
    return B.CreateICmpSLT(
        field(0, i64),
        B.getInt64(static_cast<int64_t>(sty->getStructElementType(1)->getArrayNumElements())));
  case IterKind::Enumerate:
    return iterValid(field(1, ptr), inner(0), at);
  case IterKind::Zip: {
    // zip stops at the shortest iterable; zip() of nothing yields nothing.
    llvm::Value *all = B.getInt1(!it->sources().empty());
    for (size_t k = 0; k < it->sources().size(); ++k)
      all = B.CreateAnd(all, iterValid(field(unsigned(k), ptr), inner(k), at));
    return all;
  }
  }
  internal(at, "iterator kind");
}

llvm::Value *FunctionLowerer::iterNext(llvm::Value *state, const IteratorType *it, SourceLoc at) {
  llvm::Type *sty = iterStateType(it, at);
  auto *i64 = B.getInt64Ty();
  auto *ptr = llvm::PointerType::getUnqual(M.ctx);
  auto inner = [&](size_t k) { return cast<IteratorType>(it->sources()[k]); };
  switch (it->iterKind()) {
  case IterKind::Range: {
    llvm::Value *curP = B.CreateStructGEP(sty, state, 0);
    llvm::Value *cur = B.CreateLoad(i64, curP);
    llvm::Value *step = B.CreateLoad(i64, B.CreateStructGEP(sty, state, 2));
    B.CreateStore(B.CreateAdd(cur, step), curP);
    return cur;
  }
  case IterKind::Array: {
    auto *aty = dyn_cast<ArrayType>(concretize(it->sources()[0]));
    if (!aty || aty->ndim() < 1)
      internal(at, "array iterator over " + it->sources()[0]->str());
    llvm::Value *idxP = B.CreateStructGEP(sty, state, 0);
    llvm::Value *idx = B.CreateLoad(i64, idxP);
    B.CreateStore(B.CreateAdd(idx, B.getInt64(1)), idxP);
    llvm::Value *arr =
        B.CreateLoad(sty->getStructElementType(1), B.CreateStructGEP(sty, state, 1));
    if (aty->ndim() == 1 && isa<RecordType>(aty->dtype()))
      return elementAddress(arr, aty, {idx}); // a record is its address
    if (auto *cs = dyn_cast<CharSeqType>(aty->dtype()); cs && aty->ndim() == 1)
      return B.CreateAlignedLoad(M.memType(cs), elementAddress(arr, aty, {idx}),
                                 llvm::Align(cs->unitBytes()), "str"); // its code units
    if (aty->ndim() == 1)
      return loadScalar(B, elementAddress(arr, aty, {idx}), cast<ScalarType>(aty->dtype()));
    return subarray(arr, aty, {idx});
  }
  case IterKind::Tuple: {
    llvm::Value *idxP = B.CreateStructGEP(sty, state, 0);
    llvm::Value *idx = B.CreateLoad(i64, idxP);
    B.CreateStore(B.CreateAdd(idx, B.getInt64(1)), idxP);
    llvm::Type *ety = sty->getStructElementType(1)->getArrayElementType();
    return B.CreateLoad(ety, B.CreateGEP(sty, state, {B.getInt32(0), B.getInt32(1), idx}));
  }
  case IterKind::Enumerate: {
    llvm::Value *countP = B.CreateStructGEP(sty, state, 0);
    llvm::Value *count = B.CreateLoad(i64, countP);
    B.CreateStore(B.CreateAdd(count, B.getInt64(1)), countP);
    llvm::Value *v = iterNext(B.CreateLoad(ptr, B.CreateStructGEP(sty, state, 1)), inner(0), at);
    llvm::Value *out = llvm::PoisonValue::get(repr(it->yieldType(), at));
    out = B.CreateInsertValue(out, count, 0);
    return B.CreateInsertValue(out, v, 1);
  }
  case IterKind::Zip: {
    llvm::Value *out = llvm::PoisonValue::get(repr(it->yieldType(), at));
    for (size_t k = 0; k < it->sources().size(); ++k) {
      llvm::Value *p = B.CreateLoad(ptr, B.CreateStructGEP(sty, state, unsigned(k)));
      out = B.CreateInsertValue(out, iterNext(p, inner(k), at), unsigned(k));
    }
    return out;
  }
  }
  internal(at, "iterator kind");
}

llvm::Value *FunctionLowerer::lowerIterBuiltin(const CallInstr &i) {
  SourceLoc at = i.loc;
  auto *it = dyn_cast<IteratorType>(concretize(typeOf(&i, at)));
  bool isEnum = i.builtin == BuiltinId::Enumerate;
  if (!it || it->iterKind() != (isEnum ? IterKind::Enumerate : IterKind::Zip))
    internal(at, std::string(builtinPath(i.builtin)) + " typed " + typeOf(&i, at)->str());
  size_t nIter = isEnum ? 1 : i.numArgs();
  if (it->sources().size() != nIter || (isEnum && (i.numArgs() < 1 || i.numArgs() > 2)))
    internal(at, "arguments of " + it->str());
  llvm::Type *sty = iterStateType(it, at);
  llvm::AllocaInst *state = entryAlloca(sty, isEnum ? "enumerate" : "zip");
  // The inner iterators: an argument that is an iterator already (a zip, an enumerate) is
  // shared, as in Python; anything else gets its own state, as iter() would make.
  std::vector<llvm::Value *> inner;
  for (size_t k = 0; k < nIter; ++k) {
    const Instr *a = i.arg(k);
    const Type *argT = typeOf(a, at);
    if (concretize(argT)->kind() == TypeKind::Iterator) {
      inner.push_back(valueOf(a, at));
      continue;
    }
    auto *innerIt = cast<IteratorType>(it->sources()[k]);
    llvm::AllocaInst *s = entryAlloca(iterStateType(innerIt, at), "iter");
    initIterState(s, innerIt, valueOf(a, at), argT, at);
    inner.push_back(s);
  }
  if (isEnum) {
    llvm::Value *start = B.getInt64(0);
    if (i.numArgs() == 2)
      start = convert(valueOf(i.arg(1), at), typeOf(i.arg(1), at), types::int64(), at);
    B.CreateStore(start, B.CreateStructGEP(sty, state, 0));
    B.CreateStore(inner[0], B.CreateStructGEP(sty, state, 1));
  } else {
    for (size_t k = 0; k < nIter; ++k)
      B.CreateStore(inner[k], B.CreateStructGEP(sty, state, unsigned(k)));
  }
  return state;
}

llvm::Value *FunctionLowerer::lowerGetIter(const GetIterInstr &i) {
  SourceLoc at = i.loc;
  auto *it = dyn_cast<IteratorType>(concretize(typeOf(&i, at)));
  if (!it)
    fail(at, DiagCode::NotIterable, {typeOf(i.operand(0), at)->str()});
  if (concretize(typeOf(i.operand(0), at))->kind() == TypeKind::Iterator)
    return valueOf(i.operand(0), at); // iter() of an iterator is the iterator itself
  llvm::AllocaInst *state = entryAlloca(iterStateType(it, at), "iter");
  initIterState(state, it, valueOf(i.operand(0), at), typeOf(i.operand(0), at), at);
  return state;
}

llvm::Value *FunctionLowerer::lowerIterValid(const IterValidInstr &i) {
  SourceLoc at = i.loc;
  auto *it = dyn_cast<IteratorType>(concretize(typeOf(i.operand(0), at)));
  if (!it)
    internal(at, "IterValid on " + typeOf(i.operand(0), at)->str());
  return convert(iterValid(valueOf(i.operand(0), at), it, at), types::boolean(), typeOf(&i, at),
                 at);
}

llvm::Value *FunctionLowerer::lowerIterNext(const IterNextInstr &i) {
  SourceLoc at = i.loc;
  auto *it = dyn_cast<IteratorType>(concretize(typeOf(i.operand(0), at)));
  if (!it)
    internal(at, "IterNext on " + typeOf(i.operand(0), at)->str());
  llvm::Value *v = iterNext(valueOf(i.operand(0), at), it, at);
  const Type *yield = it->iterKind() == IterKind::Range ? types::int64() : it->yieldType();
  return convert(v, yield, typeOf(&i, at), at);
}

} // namespace ptxjit::codegen::detail
