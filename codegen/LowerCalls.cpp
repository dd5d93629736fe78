// Lowering of calls (builtins, user device functions), attributes and the CUDA thread-index
// builtins: llvm.nvvm.read.ptx.sreg.* on CUDA, loads from the HostThreadCtx on the host.
#include "codegen/ArrayViews.h"
#include "codegen/Lowering.h"
#include "ir/ConstantOf.h"
#include "ir/NamedTuples.h"
#include "ir/typing/ArrayMethods.h"
#include "ir/typing/ArrayReductions.h"
#include "ir/typing/CudaBuiltins.h"
#include "ir/typing/MathBuiltins.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

namespace ptxjit::codegen::detail {

using namespace ir;

// ---- Thread indices ----

llvm::Value *FunctionLowerer::specialRegister(Sreg r, int dim) {
  if (dim < 0 || dim > 2)
    internal(SourceLoc{}, "special register dimension " + std::to_string(dim));
  if (M.isHost()) {
    // HostThreadCtx: uint32 tid[3], ntid[3], ctaid[3], nctaid[3].
    unsigned index = static_cast<unsigned>(r) * 3 + static_cast<unsigned>(dim);
    llvm::Value *p = B.CreateConstInBoundsGEP1_32(B.getInt32Ty(), ctxArg, index);
    llvm::LoadInst *load = B.CreateAlignedLoad(B.getInt32Ty(), p, llvm::Align(4));
    load->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(M.ctx, {}));
    return load;
  }
  static const llvm::Intrinsic::ID ids[4][3] = {
      {llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_y,
       llvm::Intrinsic::nvvm_read_ptx_sreg_tid_z},
      {llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_y,
       llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_z},
      {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
       llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z},
      {llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y,
       llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_z},
  };
  llvm::Function *decl = llvm::Intrinsic::getDeclaration(&M.mod, ids[static_cast<int>(r)][dim]);
  return B.CreateCall(decl);
}

llvm::Value *FunctionLowerer::gridComponent(bool gridsize, int dim) {
  auto wide = [&](Sreg r) { return B.CreateZExt(specialRegister(r, dim), B.getInt64Ty()); };
  if (gridsize)
    return B.CreateMul(wide(Sreg::Ntid), wide(Sreg::Nctaid));
  return B.CreateAdd(B.CreateMul(wide(Sreg::Ctaid), wide(Sreg::Ntid)), wide(Sreg::Tid));
}

// ---- Attributes ----

llvm::Value *FunctionLowerer::lowerGetAttr(const GetAttrInstr &i) {
  SourceLoc at = i.loc;
  const Type *res = typeOf(&i, at);
  const Instr *obj = i.operand(0);
  auto sreg = [&](Sreg r, int dim) { // an unsigned 32-bit register, typed int64
    return convert(specialRegister(r, dim), types::uint32(), res, at);
  };
  if (const CudaBuiltinInfo *ci = cudaBuiltinInfo(i.builtin)) // cuda.laneid, cuda.warpsize
    return lowerCudaValue(i, *ci);
  if (auto *ec = dyn_cast<EnumClassType>(obj->type)) // Color.red: the member's value
    return enumMemberValue(ec, i.attr, at);
  if (isa<EnumMemberType>(obj->type) && i.attr == "value") // a member is its value
    return convert(valueOf(obj, at), enumValueOf(obj->type), res, at);
  if (i.builtin == BuiltinId::None && !ModuleLowerer::isCompileTimeOnly(res)) {
    const Type *ot = concretize(typeOf(obj, at));
    if (auto *r = dyn_cast<RecordType>(ot)) // r.x
      return loadRecordField(valueOf(obj, at), r, fieldNamed(r, i.attr, at), res, at);
    if (auto *aty = dyn_cast<ArrayType>(ot); aty && i.attr == "T") // a.T (ArrayViews.h)
      return permutedView(B, valueOf(obj, at), reversedAxes(aty->ndim()));
    if (auto *aty = dyn_cast<ArrayType>(ot); // z.real, z.imag of a complex array (ArrayViews.h)
        aty && (i.attr == "real" || i.attr == "imag") && aty->scalarDtype() &&
        aty->scalarDtype()->kind() == TypeKind::Complex)
      return complexPartView(B, valueOf(obj, at), i.attr == "imag", aty->itemSize());
    if (int k = namedTupleField(ot, i.attr); k >= 0) // p.x of a namedtuple (ir/NamedTuples.h)
      return convert(B.CreateExtractValue(valueOf(obj, at), unsigned(k)),
                     cast<TupleType>(ot)->elements()[k], res, at);
    if (auto *aty = dyn_cast<ArrayType>(ot)) // a.x: the field across an array of records
      if (auto *r = dyn_cast<RecordType>(aty->dtype()))
        return recordArrayFieldView(valueOf(obj, at), aty, fieldNamed(r, i.attr, at), at);
  }
  switch (i.builtin) {
  case BuiltinId::ThreadIdxX:
    return sreg(Sreg::Tid, 0);
  case BuiltinId::ThreadIdxY:
    return sreg(Sreg::Tid, 1);
  case BuiltinId::ThreadIdxZ:
    return sreg(Sreg::Tid, 2);
  case BuiltinId::BlockDimX:
    return sreg(Sreg::Ntid, 0);
  case BuiltinId::BlockDimY:
    return sreg(Sreg::Ntid, 1);
  case BuiltinId::BlockDimZ:
    return sreg(Sreg::Ntid, 2);
  case BuiltinId::BlockIdxX:
    return sreg(Sreg::Ctaid, 0);
  case BuiltinId::BlockIdxY:
    return sreg(Sreg::Ctaid, 1);
  case BuiltinId::BlockIdxZ:
    return sreg(Sreg::Ctaid, 2);
  case BuiltinId::GridDimX:
    return sreg(Sreg::Nctaid, 0);
  case BuiltinId::GridDimY:
    return sreg(Sreg::Nctaid, 1);
  case BuiltinId::GridDimZ:
    return sreg(Sreg::Nctaid, 2);
  case BuiltinId::ArrayShape:
  case BuiltinId::ArraySize:
  case BuiltinId::ArrayNdim: {
    auto *aty = dyn_cast<ArrayType>(concretize(typeOf(obj, at)));
    if (!aty)
      internal(at, "array attribute ." + i.attr + " of " + typeOf(obj, at)->str());
    llvm::Value *arr = valueOf(obj, at);
    if (i.builtin == BuiltinId::ArrayNdim)
      return convert(B.getInt64(aty->ndim()), types::int64(), res, at);
    if (i.builtin == BuiltinId::ArraySize)
      return convert(arraySize(arr, aty->ndim()), types::int64(), res, at);
    std::vector<const Type *> elems(aty->ndim(), types::int64());
    const TupleType *shapeType = types::tuple(elems);
    llvm::Value *out = llvm::PoisonValue::get(repr(shapeType, at));
    for (int d = 0; d < aty->ndim(); ++d)
      out = B.CreateInsertValue(out, B.CreateExtractValue(arr, {1u, unsigned(d)}), unsigned(d));
    return convert(out, shapeType, res, at);
  }
  case BuiltinId::ArrayCtypesData: { // a.ctypes.data: obj is the GetAttr `a.ctypes`
    const Instr *array = obj->numOperands() ? obj->operand(0) : nullptr;
    if (!array || !isa<ArrayType>(concretize(typeOf(array, at))))
      internal(at, "a.ctypes.data without its array");
    llvm::Value *data = B.CreateExtractValue(valueOf(array, at), 0);
    return convert(B.CreatePtrToInt(data, B.getInt64Ty()), types::uint64(), res, at);
  }
  default:
    break;
  }
  if (const MathKind *mk = mathKindOf(i.builtin); mk && *mk == MathKind::Constant)
    return mathConstant(i.builtin, res, at);
  if (ModuleLowerer::isCompileTimeOnly(concretize(res)))
    return placeholder(); // a module attribute such as cuda.threadIdx
  const Type *ot = concretize(typeOf(obj, at));
  if (auto *s = dyn_cast<ScalarType>(ot); s && (i.attr == "real" || i.attr == "imag")) {
    llvm::Value *v = valueOf(obj, at);
    if (s->kind() == TypeKind::Complex) {
      const ScalarType *part = types::floating(s->bits() / 2);
      return convert(B.CreateExtractValue(v, i.attr == "real" ? 0 : 1), part, res, at);
    }
    if (i.attr == "real")
      return convert(v, s, res, at);
    return convert(llvm::Constant::getNullValue(repr(s, at)), s, res, at);
  }
  fail(at, DiagCode::UnsupportedAttribute, {typeOf(obj, at)->str(), i.attr});
}

// ---- Calls ----

llvm::Value *FunctionLowerer::lowerCall(const CallInstr &i) {
  SourceLoc at = i.loc;
  if (i.builtin != BuiltinId::None)
    return lowerBuiltinCall(i);
  if (i.calleeFunction)
    return lowerDeviceCall(i);
  const Type *ct = typeOf(i.callee(), at);
  // The permutation of a.transpose(*axes) / np.transpose(a, axes) (typing checked the axes).
  auto axesOf = [&](const std::vector<const Instr *> &axes, int ndim) {
    std::string why;
    std::optional<std::vector<int>> perm = transposeAxes(axes, ndim, fn, why);
    if (!perm)
      internal(at, "transpose axes typing accepted: " + why);
    return *perm;
  };
  if (auto *s = dyn_cast<SymbolType>(ct); s && isArrayMethodPath(s->path())) {
    // a.reshape(...), a.view(dtype): views of the array the callee's GetAttr reads (ArrayViews.h);
    // a.copy(): a new local array
    const Instr *obj = i.callee()->numOperands() ? i.callee()->operand(0) : nullptr;
    auto *aty = obj ? dyn_cast<ArrayType>(concretize(typeOf(obj, at))) : nullptr;
    if (s->path() == kArrayFillPath && aty) { // a.fill(v): the store of a[...] = v
      assignToView(valueOf(obj, at), aty, valueOf(i.arg(0), at), typeOf(i.arg(0), at), at);
      return placeholder();
    }
    auto *rty = dyn_cast<ArrayType>(concretize(typeOf(&i, at)));
    if (!aty || !rty)
      internal(at, s->path() + " call typed " + typeOf(&i, at)->str());
    llvm::Value *arr = valueOf(obj, at);
    if (s->path() == kArrayCopyPath) {
      // a.copy(): a local array of the compile-time shape typing found, filled from the source,
      // which is C-contiguous with that shape (constantArrayShape's sources all are).
      std::optional<std::vector<int64_t>> shape = constantArrayShape(obj, fn);
      if (!shape)
        internal(at, "a.copy() of an array without a constant shape");
      const uint64_t itemSize = static_cast<uint64_t>(rty->itemSize());
      llvm::Value *copy = localArray(rty, *shape, std::max<uint64_t>(16, itemSize));
      uint64_t count = 1;
      for (int64_t d : *shape)
        count *= static_cast<uint64_t>(d);
      if (count) {
        llvm::Align srcAlign(isa<ScalarType>(rty->dtype()) ? itemSize : 1);
        B.CreateMemCpy(B.CreateExtractValue(copy, 0), llvm::Align(16), B.CreateExtractValue(arr, 0),
                       srcAlign, count * itemSize);
      }
      return copy;
    }
    if (s->path() == kArrayTransposePath) { // a.transpose(*axes): typing checked the axes
      std::vector<const Instr *> axes;
      for (size_t k = 0; k < i.numArgs(); ++k)
        axes.push_back(i.arg(k));
      return permutedView(B, arr, axesOf(axes, aty->ndim()));
    }
    if (s->path() == kArrayRavelPath) // a.ravel() of a contiguous array: a 1-d view
      return reshapeView(B, M.arrayType(1), arr, aty->ndim(), {B.getInt64(-1)}, aty->itemSize());
    if (s->path() == kArrayViewPath)
      return dtypeView(B, arr, aty->ndim(), aty->layout() == Layout::C, aty->itemSize(),
                       rty->itemSize());
    std::vector<llvm::Value *> dims; // the ints given, or the elements of one tuple, as int64
    const Type *t0 = i.numArgs() == 1 ? concretize(typeOf(i.arg(0), at)) : nullptr;
    if (auto *tt = t0 ? dyn_cast<TupleType>(t0) : nullptr) {
      llvm::Value *tv = valueOf(i.arg(0), at);
      for (size_t k = 0; k < tt->size(); ++k)
        dims.push_back(
            convert(B.CreateExtractValue(tv, unsigned(k)), tt->elements()[k], types::int64(), at));
    } else {
      for (size_t k = 0; k < i.numArgs(); ++k)
        dims.push_back(convert(valueOf(i.arg(k), at), typeOf(i.arg(k), at), types::int64(), at));
    }
    if (static_cast<int>(dims.size()) != rty->ndim())
      internal(at, "reshape to " + std::to_string(dims.size()) + " dimensions typed " + rty->str());
    return reshapeView(B, M.arrayType(rty->ndim()), arr, aty->ndim(), dims, aty->itemSize());
  }
  if (auto *s = dyn_cast<SymbolType>(ct);
      s && (s->path() == kCarrayPath || s->path() == kFarrayPath)) {
    // carray(ptr, shape, dtype=None), farray(...): an array over the pointer's memory
    std::vector<const Instr *> bound;
    std::string why;
    auto *rty = dyn_cast<ArrayType>(concretize(typeOf(&i, at)));
    if (!bindCallArgs(&i, {"ptr", "shape", "dtype"}, bound, why) || !bound[0] || !bound[1] || !rty)
      internal(at, s->path() + " call typed " + typeOf(&i, at)->str());
    std::vector<llvm::Value *> dims;
    const Type *st = concretize(typeOf(bound[1], at));
    llvm::Value *sv = valueOf(bound[1], at);
    if (auto *tt = dyn_cast<TupleType>(st)) {
      for (size_t k = 0; k < tt->size(); ++k)
        dims.push_back(
            convert(B.CreateExtractValue(sv, unsigned(k)), tt->elements()[k], types::int64(), at));
    } else {
      dims.push_back(convert(sv, typeOf(bound[1], at), types::int64(), at));
    }
    return pointerArrayView(B, M.arrayType(rty->ndim()), valueOf(bound[0], at), dims,
                            rty->itemSize(), s->path() == kFarrayPath);
  }
  if (auto *s = dyn_cast<SymbolType>(ct); s && s->path() == kNpTransposePath) {
    // np.transpose(a, axes=None): the view a.transpose(axes) gives
    const Instr *a = nullptr;
    std::vector<const Instr *> axes;
    auto *aty =
        npTransposeOperands(&i, a, axes) ? dyn_cast<ArrayType>(concretize(typeOf(a, at))) : nullptr;
    if (!aty)
      internal(at, "numpy.transpose call typed " + typeOf(&i, at)->str());
    return permutedView(B, valueOf(a, at), axesOf(axes, aty->ndim()));
  }
  if (auto *s = dyn_cast<SymbolType>(ct); s && s->path() == kFfiFromBufferPath) {
    // ffi.from_buffer(a): the array's data pointer (typing checked a contiguous array)
    if (i.numArgs() != 1 || !isa<ArrayType>(concretize(typeOf(i.arg(0), at))))
      internal(at, "ffi.from_buffer call typed " + typeOf(&i, at)->str());
    return B.CreateExtractValue(valueOf(i.arg(0), at), 0);
  }
  if (auto *s = dyn_cast<SymbolType>(ct))
    fail(at, DiagCode::UnsupportedCall, {s->path()});
  if (auto *ext = dyn_cast<ExternFunctionType>(ct))
    return lowerExternCall(i, *ext);
  if (ct->kind() == TypeKind::Function)
    internal(at, "call to an unresolved device function " + ct->str());
  fail(at, DiagCode::UnsupportedCall, {ct->str()});
}

llvm::Value *FunctionLowerer::lowerDeviceCall(const CallInstr &i) {
  SourceLoc at = i.loc;
  const Function &callee = *i.calleeFunction;
  llvm::Function *body = M.bodyFor(callee);
  size_t nparams = callee.argTypes.size();
  size_t nkw = i.kwNames.size();
  if (nkw > i.numArgs())
    internal(at, "more keyword names than arguments");
  size_t npos = i.numArgs() - nkw;
  std::vector<const Instr *> bound(nparams, nullptr);
  auto tooMany = [&] {
    fail(at, DiagCode::ArgumentCount,
         {callee.name, std::to_string(nparams), std::to_string(i.numArgs())});
  };
  if (npos > nparams)
    tooMany();
  for (size_t k = 0; k < npos; ++k)
    bound[k] = i.arg(k);
  for (size_t k = 0; k < nkw; ++k) {
    size_t p = 0;
    while (p < callee.argNames.size() && callee.argNames[p] != i.kwNames[k])
      ++p;
    if (p >= nparams || bound[p])
      fail(at, DiagCode::CallArgs, {callee.name, "keyword '" + i.kwNames[k] + "'"});
    bound[p] = i.arg(npos + k);
  }
  std::vector<llvm::Value *> vals;
  for (size_t p = 0; p < nparams; ++p) {
    if (!bound[p])
      fail(at, DiagCode::ArgumentCount,
           {callee.name, std::to_string(nparams), std::to_string(i.numArgs())});
    vals.push_back(convert(valueOf(bound[p], at), typeOf(bound[p], at), callee.argTypes[p], at));
  }
  if (M.isHost())
    vals.push_back(ctxArg);
  llvm::CallInst *call = B.CreateCall(body, M.bodyArgs(callee, vals));
  const Type *res = typeOf(&i, at);
  if (body->getReturnType()->isVoidTy()) {
    if (ModuleLowerer::isCompileTimeOnly(concretize(res)))
      return placeholder();
    llvm::Type *rt = repr(concretize(res), at);
    if (!ModuleLowerer::isZeroSized(rt)) // bodyReturnType drops only values of zero size
      internal(at, "call of " + callee.name + " returning None typed " + res->str());
    return llvm::PoisonValue::get(rt);
  }
  return convert(call, callee.returnType, res, at);
}

namespace {
/// CPython's ValueError message for min()/max() of an empty iterable.
std::string emptyMinMaxMessage(bool isMax) {
  return std::string(isMax ? "max" : "min") + "() arg is an empty sequence";
}
} // namespace

llvm::Value *FunctionLowerer::arrayMinMax(llvm::Value *arr, const ArrayType *aty, bool isMax,
                                          const ScalarType *res, SourceLoc at) {
  // Python's min/max over the elements of a 1-d array: the first element, then each one that
  // is strictly smaller (larger), so the first of equal values wins and a NaN is taken only
  // when it comes first (comparisons with NaN are false), as CPython iterates. An empty array
  // raises Python's ValueError (reaching the host with debug=True, as every kernel exception).
  const ScalarType *et = aty->scalarDtype();
  llvm::Value *n = B.CreateExtractValue(arr, {1u, 0u});
  valueErrorIf(B.CreateICmpSLE(n, B.getInt64(0)), emptyMinMaxMessage(isMax), at);
  llvm::AllocaInst *acc = entryAlloca(repr(et, at), "minmax.acc");
  // An empty array in a ufunc loop (which cannot raise) gives the dtype's zero.
  llvm::Value *first = B.CreateSelect(B.CreateICmpSGT(n, B.getInt64(0)),
                                      loadScalar(B, elementAddress(arr, aty, {B.getInt64(0)}), et),
                                      llvm::Constant::getNullValue(repr(et, at)));
  B.CreateStore(first, acc);
  emitLoopNest({n}, [&](const std::vector<llvm::Value *> &k) {
    llvm::Value *v = loadScalar(B, elementAddress(arr, aty, k), et);
    llvm::Value *cur = B.CreateLoad(repr(et, at), acc);
    llvm::Value *better = compareScalars(isMax ? CmpOp::Gt : CmpOp::Lt, v, cur, et, at);
    B.CreateStore(B.CreateSelect(better, v, cur), acc);
  });
  return convert(B.CreateLoad(repr(et, at), acc), et, res, at);
}

llvm::Value *FunctionLowerer::lowerMinMax(const CallInstr &i, bool isMax) {
  SourceLoc at = i.loc;
  const Type *res = concretize(typeOf(&i, at));
  auto *rs = dyn_cast<ScalarType>(res);
  if (!rs || rs->kind() == TypeKind::Complex)
    fail(at, DiagCode::CallArgs, {isMax ? "max" : "min", res->str()});
  std::vector<std::pair<llvm::Value *, const Type *>> items;
  if (i.numArgs() == 1)
    if (auto *aty = dyn_cast<ArrayType>(concretize(typeOf(i.arg(0), at))))
      return arrayMinMax(valueOf(i.arg(0), at), aty, isMax, rs, at);
  if (i.numArgs() == 1 && concretize(typeOf(i.arg(0), at))->kind() == TypeKind::Range) {
    // min/max of a range: its first or last element, by the step's sign (what iterating finds,
    // without the loop); an empty range raises Python's ValueError (0 in a ufunc loop).
    llvm::Value *r = valueOf(i.arg(0), at);
    llvm::Value *n = rangeLength(r);
    llvm::Value *start = B.CreateExtractValue(r, 0), *step = B.CreateExtractValue(r, 2);
    llvm::Value *nonEmpty = B.CreateICmpSGT(n, B.getInt64(0));
    valueErrorIf(B.CreateNot(nonEmpty), emptyMinMaxMessage(isMax), at);
    llvm::Value *last = B.CreateAdd(start, B.CreateMul(B.CreateSub(n, B.getInt64(1)), step));
    llvm::Value *up = B.CreateICmpSGT(step, B.getInt64(0));
    llvm::Value *v = B.CreateSelect(isMax ? up : B.CreateNot(up), last, start);
    return convert(B.CreateSelect(nonEmpty, v, B.getInt64(0)), types::int64(), rs, at);
  }
  if (i.numArgs() == 1) {
    auto *tt = dyn_cast<TupleType>(concretize(typeOf(i.arg(0), at)));
    if (!tt)
      fail(at, DiagCode::CallArgs, {isMax ? "max" : "min", typeOf(i.arg(0), at)->str()});
    llvm::Value *t = valueOf(i.arg(0), at);
    for (size_t k = 0; k < tt->size(); ++k)
      items.push_back({B.CreateExtractValue(t, unsigned(k)), tt->elements()[k]});
  } else {
    for (size_t k = 0; k < i.numArgs(); ++k)
      items.push_back({valueOf(i.arg(k), at), typeOf(i.arg(k), at)});
  }
  if (items.empty())
    fail(at, DiagCode::CallArgs, {isMax ? "max" : "min", ""});
  // Two float operands (numba-cuda's overloads for float32 and float64): libdevice's
  // fmin/fmax in the promoted type, which are PTX's min/max.
  auto isFloat = [](const Type *t) {
    const Type *c = concretize(t);
    return c->kind() == TypeKind::Float && cast<ScalarType>(c)->bits() >= 32;
  };
  if (i.numArgs() == 2 && rs->kind() == TypeKind::Float && rs->bits() >= 32 &&
      isFloat(items[0].second) && isFloat(items[1].second))
    return floatMinMax(isMax, convert(items[0].first, items[0].second, rs, at),
                       convert(items[1].first, items[1].second, rs, at));
  // Python semantics: the first of equal values wins; a candidate replaces the current value
  // only when strictly smaller (min) / larger (max).
  llvm::Value *cur = convert(items[0].first, items[0].second, rs, at);
  for (size_t k = 1; k < items.size(); ++k) {
    llvm::Value *v = convert(items[k].first, items[k].second, rs, at);
    llvm::Value *better = compareScalars(isMax ? CmpOp::Gt : CmpOp::Lt, v, cur, rs, at);
    cur = B.CreateSelect(better, v, cur);
  }
  return cur;
}

llvm::Value *FunctionLowerer::floatMinMax(bool isMax, llvm::Value *a, llvm::Value *b) {
  if (!M.isHost()) // max.f32 / max.f64 (NVPTX's lowering of maxnum, as libdevice's fmaxf)
    return B.CreateBinaryIntrinsic(isMax ? llvm::Intrinsic::maxnum : llvm::Intrinsic::minnum, a, b);
  // The host: PTX's semantics spelled out, since LLVM's maxnum leaves the sign of a zero
  // result open (x86's maxss returns its second operand for equal values). Equal operands
  // merge their bits: max(+0.0, -0.0) = +0.0 (and), min = -0.0 (or).
  llvm::Type *bits = B.getIntNTy(a->getType()->getPrimitiveSizeInBits());
  llvm::Value *ai = B.CreateBitCast(a, bits), *bi = B.CreateBitCast(b, bits);
  llvm::Value *merged =
      B.CreateBitCast(isMax ? B.CreateAnd(ai, bi) : B.CreateOr(ai, bi), a->getType());
  llvm::Value *r = B.CreateSelect(isMax ? B.CreateFCmpOGT(a, b) : B.CreateFCmpOLT(a, b), a, b);
  r = B.CreateSelect(B.CreateFCmpOEQ(a, b), merged, r);
  r = B.CreateSelect(B.CreateFCmpUNO(b, b), a, r);
  return B.CreateSelect(B.CreateFCmpUNO(a, a), b, r);
}

llvm::Value *FunctionLowerer::lowerBuiltinCall(const CallInstr &i) {
  SourceLoc at = i.loc;
  const Type *res = typeOf(&i, at);
  const char *path = builtinPath(i.builtin);
  if (i.builtin == BuiltinId::Print) // takes sep= and end=
    return lowerPrint(i);
  if (i.builtin == BuiltinId::NumpyDtype) // a dtype named at compile time: no run-time value
    return placeholder();
  if (const CudaBuiltinInfo *ci = cudaBuiltinInfo(i.builtin)) // LowerCuda.cpp (keywords too)
    return lowerCudaCall(i, *ci);
  if (const LowFloatFunction *lf = lowFloatFunction(i.builtin)) // LowerLowFloat.cpp
    return lowerLowFloatCall(i, *lf);
  if (const LibdeviceFunction *lf = libdeviceFunction(i.builtin)) // LowerLibdevice.cpp
    return lowerLibdeviceCall(i, *lf);
  if (i.builtin == BuiltinId::Enumerate || i.builtin == BuiltinId::Zip)
    return lowerIterBuiltin(i);               // LowerArrays.cpp (enumerate takes start=)
  if (Reduction r; reductionOf(i.builtin, r)) // LowerReductions.cpp (keywords too)
    return lowerReduction(i, r);
  if (i.builtin == BuiltinId::LiteralUnroll) // the identity (its loops are unrolled by typing)
    return convert(valueOf(i.arg(0), at), typeOf(i.arg(0), at), res, at);
  if (i.builtin == BuiltinId::IsInstance) { // decided by the value's type (typing checked it)
    std::string why;
    std::optional<bool> r = isInstanceOf(typeOf(i.arg(0), at), typeOf(i.arg(1), at), why);
    if (!r)
      internal(at, "isinstance typed but undecided: " + why);
    return B.getInt1(*r);
  }
  if (const NumpyUfunc *u = numpyUfunc(i.builtin)) { // LowerNumpyUfuncs.cpp (takes out=)
    std::vector<const Type *> argTypes;
    for (size_t k = 0; k < i.numArgs(); ++k)
      argTypes.push_back(typeOf(i.arg(k), at));
    if (typedAsUfunc(*u, argTypes, i.kwNames.size()))
      return lowerNumpyUfuncCall(i, *u);
  }
  if (!i.kwNames.empty())
    fail(at, DiagCode::CallArgs, {path, "keyword arguments"});
  size_t n = i.numArgs();
  auto argTypesStr = [&] {
    std::string s;
    for (size_t k = 0; k < n; ++k)
      s += (k ? ", " : "") + typeOf(i.arg(k), at)->str();
    return s;
  };
  auto badArgs = [&]() { fail(at, DiagCode::CallArgs, {path, argTypesStr()}); };
  auto arg = [&](size_t k) { return valueOf(i.arg(k), at); };
  auto argType = [&](size_t k) { return typeOf(i.arg(k), at); };
  if (const MathKind *mk = mathKindOf(i.builtin))
    return lowerMathCall(i, *mk);

  switch (i.builtin) {
  case BuiltinId::Range: {
    if (n < 1 || n > 3)
      badArgs();
    std::vector<llvm::Value *> parts;
    for (size_t k = 0; k < n; ++k) {
      const Type *t = concretize(argType(k));
      if (t->kind() != TypeKind::Int && t->kind() != TypeKind::Bool)
        badArgs();
      parts.push_back(convert(arg(k), argType(k), types::int64(), at));
    }
    llvm::Value *start = n >= 2 ? parts[0] : B.getInt64(0);
    llvm::Value *stop = n >= 2 ? parts[1] : parts[0];
    llvm::Value *step = n == 3 ? parts[2] : B.getInt64(1);
    llvm::Value *r = llvm::PoisonValue::get(repr(types::range(), at));
    r = B.CreateInsertValue(r, start, 0);
    r = B.CreateInsertValue(r, stop, 1);
    return B.CreateInsertValue(r, step, 2);
  }
  case BuiltinId::Len: {
    if (n != 1)
      badArgs();
    const Type *t = concretize(argType(0));
    llvm::Value *len = nullptr;
    if (auto *a = dyn_cast<ArrayType>(t)) {
      if (a->ndim() == 0)
        fail(at, DiagCode::CallArgs, {path, "a 0-d array"});
      len = B.CreateExtractValue(arg(0), {1u, 0u});
    } else if (auto *tt = dyn_cast<TupleType>(t)) {
      len = B.getInt64(tt->size());
    } else if (t->kind() == TypeKind::Range) {
      len = rangeLength(arg(0));
    } else {
      badArgs();
    }
    return convert(len, types::int64(), res, at);
  }
  case BuiltinId::TupleOf: // tuple(t) is t; tuple() the empty tuple
    if (n > 1)
      badArgs();
    if (n == 0)
      return llvm::Constant::getNullValue(repr(concretize(res), at));
    return convert(arg(0), argType(0), res, at);
  case BuiltinId::Int:
  case BuiltinId::Float:
  case BuiltinId::Bool: {
    if (n > 1)
      badArgs();
    if (n == 0)
      return llvm::Constant::getNullValue(repr(concretize(res), at));
    if (i.builtin == BuiltinId::Float) // float("nan"): typing checked the constant string
      if (std::optional<std::string> s = constantStringOf(i.arg(0), &fn))
        if (std::optional<double> v = floatOfPythonString(*s))
          return convert(llvm::ConstantFP::get(B.getDoubleTy(), *v), types::float64(), res, at);
    if (!dyn_cast<ScalarType>(concretize(argType(0))) && i.builtin != BuiltinId::Bool)
      badArgs();
    if (i.builtin == BuiltinId::Bool)
      return convert(truth(arg(0), argType(0), at), types::boolean(), res, at);
    return convert(arg(0), argType(0), res, at);
  }
  case BuiltinId::Abs: {
    if (n == 1 && argType(0)->kind() == TypeKind::Timedelta)
      return timedeltaAbs(B, arg(0));
    if (n != 1)
      badArgs();
    auto *st = dyn_cast<ScalarType>(concretize(argType(0)));
    auto *rs = dyn_cast<ScalarType>(concretize(res));
    if (!st || !rs)
      badArgs();
    return absValue(arg(0), st, rs, at);
  }
  case BuiltinId::Min:
  case BuiltinId::Max:
    return lowerMinMax(i, i.builtin == BuiltinId::Max);
  case BuiltinId::Divmod:
    return lowerDivmod(i);
  case BuiltinId::Round:
    return lowerRound(i);
  case BuiltinId::Pow:
    return lowerPowCall(i);
  case BuiltinId::CudaGrid:
  case BuiltinId::CudaGridsize: {
    bool gs = i.builtin == BuiltinId::CudaGridsize;
    const Type *rc = concretize(res);
    if (auto *tt = dyn_cast<TupleType>(rc)) {
      if (tt->size() < 1 || tt->size() > 3)
        badArgs();
      llvm::Value *out = llvm::PoisonValue::get(repr(tt, at));
      for (size_t d = 0; d < tt->size(); ++d)
        out = B.CreateInsertValue(
            out, convert(gridComponent(gs, int(d)), types::int64(), tt->elements()[d], at),
            unsigned(d));
      return out;
    }
    if (!dyn_cast<ScalarType>(rc))
      badArgs();
    return convert(gridComponent(gs, 0), types::int64(), rc, at);
  }
  default:
    break;
  }
  fail(at, DiagCode::UnsupportedCall, {path});
}

} // namespace ptxjit::codegen::detail
