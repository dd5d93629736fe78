// Lowering of the cooperating-threads builtins (ir/typing/CudaBuiltins.def).
//
// CUDA: shared arrays are addrspace(3) globals (dynamic ones alias one external [0 x i8]
// array), local arrays entry-block allocas, constant arrays addrspace(4) globals; their data
// pointers are cast to generic so that ordinary array indexing applies (NVPTX's address-space
// inference turns the accesses back into ld/st.shared and ld.const). Barriers, warp functions
// and fences are llvm.nvvm.* intrinsics; atomics are atomicrmw / cmpxchg (CAS loops where PTX
// lacks the operation, as Numba).
//
// Host: shared arrays live in the block's shared memory (HostThreadCtx::shared at offsets laid
// out here; dynamic arrays at HostThreadCtx::dynShared); barriers and warp functions call the
// runtime helpers of runtime/HostBlock.h, which switch between the block's fibers; atomics are
// the same atomicrmw / cmpxchg, i.e. real host atomics.
#include "codegen/Lowering.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>

namespace ptxjit::codegen::detail {

using namespace ir;

namespace {

// HostThreadCtx byte offsets (runtime/HostGrid.h).
constexpr unsigned kCtxShared = 48, kCtxDynShared = 56, kCtxDynBytes = 72, kCtxLinearTid = 76;

/// The most static shared memory a CUDA block may declare without opting in.
constexpr uint64_t kMaxStaticShared = 48 * 1024;

uint64_t alignUp(uint64_t n, uint64_t a) { return (n + a - 1) / a * a; }

/// The alignment of a block's shared memory on the host (runtime/HostGrid.h, kHostSharedAlign).
constexpr uint64_t kHostSharedAlign = 4096;

} // namespace

// ---- Module-wide ----

namespace {

/// A mutable module global of `ty` in the global address space, zero-initialized.
llvm::GlobalVariable *deviceGlobal(llvm::Module &m, llvm::Type *ty, const std::string &name,
                                   bool host, llvm::GlobalValue::LinkageTypes linkage) {
  auto *g = new llvm::GlobalVariable(m, ty, false, linkage, llvm::Constant::getNullValue(ty), name,
                                     nullptr, llvm::GlobalValue::NotThreadLocal, host ? 0 : 1);
  g->setAlignment(llvm::Align(16));
  return g;
}

} // namespace

llvm::Value *ModuleLowerer::boundsRecord(llvm::IRBuilderBase &b) {
  if (!boundsRecord_)
    boundsRecord_ = deviceGlobal(mod, llvm::ArrayType::get(b.getInt64Ty(), kBoundsRecordWords),
                                 "__ptxjit_bounds", isHost(), llvm::GlobalValue::ExternalLinkage);
  return isHost() ? static_cast<llvm::Value *>(boundsRecord_)
                  : b.CreateAddrSpaceCast(boundsRecord_, b.getPtrTy(0));
}

llvm::Value *ModuleLowerer::boundsScratch(llvm::IRBuilderBase &b, uint64_t bytes) {
  // Room for the largest element accessed so far (scalars: complex128's 16 bytes; records their
  // itemsize): a larger request replaces the global everywhere it is used.
  uint64_t words = std::max<uint64_t>(2, (bytes + 7) / 8);
  if (!boundsScratch_ || words > boundsScratchWords_) {
    llvm::GlobalVariable *g =
        deviceGlobal(mod, llvm::ArrayType::get(b.getInt64Ty(), words), "__ptxjit_bounds_scratch",
                     isHost(), llvm::GlobalValue::InternalLinkage);
    if (boundsScratch_) {
      boundsScratch_->replaceAllUsesWith(g);
      g->takeName(boundsScratch_);
      boundsScratch_->eraseFromParent();
    }
    boundsScratch_ = g;
    boundsScratchWords_ = words;
  }
  return isHost() ? static_cast<llvm::Value *>(boundsScratch_)
                  : b.CreateAddrSpaceCast(boundsScratch_, b.getPtrTy(0));
}

void ModuleLowerer::finishCuda(const std::string &entry, const Function &kernel) {
  if (boundsRecord_)
    boundsRecord_->setName(entry + "__bounds");
  if (cuda.sharedBytes > kMaxStaticShared)
    raiseDiag(DiagCode::UnsupportedConstruct, kernel.filename, SourceLoc{kernel.firstLine, 0, 0, 0},
              {"declaring " + std::to_string(cuda.sharedBytes) +
               " bytes of static shared memory (cuda.shared.array) in kernel '" + kernel.name +
               "' (at most " + std::to_string(kMaxStaticShared) +
               " bytes per block; beyond that use dynamic shared memory: cuda.shared.array(0, "
               "dtype) and the launch's sharedmem argument)"});
  if (!isHost())
    return;
  // The dynamic part follows the static one: padded so that it starts as aligned as the dynamic
  // arrays' alignment= asks (the block's memory is kHostSharedAlign-aligned).
  if (cuda.dynSharedAlign > 16)
    cuda.sharedBytes = alignUp(cuda.sharedBytes, cuda.dynSharedAlign);
  // The grid runner's facts (codegen::HostLaunchInfo), kept in the module itself so that object
  // files from the disk cache carry them too.
  auto *i64 = llvm::Type::getInt64Ty(ctx);
  auto *ty = llvm::ArrayType::get(i64, 4);
  llvm::Constant *init = llvm::ConstantArray::get(
      ty, {llvm::ConstantInt::get(i64, cuda.sharedBytes),
           llvm::ConstantInt::get(i64, (cuda.cooperative ? 1 : 0) | (cuda.gridSync ? 2 : 0)),
           llvm::ConstantInt::get(i64, cuda.localBytes),
           llvm::ConstantInt::get(i64, cuda.raises ? 1 : 0)});
  auto *g = new llvm::GlobalVariable(mod, ty, true, llvm::GlobalValue::ExternalLinkage, init,
                                     entry + "__launch");
  g->setAlignment(llvm::Align(8));
}

// ---- Helpers ----

llvm::Value *FunctionLowerer::hostCtxField(unsigned offset, llvm::Type *ty) {
  llvm::Value *p = B.CreateConstInBoundsGEP1_32(B.getInt8Ty(), ctxArg, offset);
  llvm::LoadInst *load = B.CreateAlignedLoad(ty, p, llvm::Align(4));
  load->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(M.ctx, {}));
  return load;
}

llvm::FunctionCallee FunctionLowerer::hostHelper(const char *name, llvm::Type *ret,
                                                 std::initializer_list<llvm::Type *> params) {
  auto *fty = llvm::FunctionType::get(
      ret, llvm::ArrayRef<llvm::Type *>(params.begin(), params.size()), false);
  llvm::FunctionCallee f = M.mod.getOrInsertFunction(name, fty);
  if (auto *fn = llvm::dyn_cast<llvm::Function>(f.getCallee()))
    fn->setDoesNotThrow();
  return f;
}

llvm::Value *FunctionLowerer::cudaArrayValue(llvm::Value *data,
                                             const std::vector<llvm::Value *> &dims,
                                             int64_t itemSize) {
  int nd = static_cast<int>(dims.size());
  llvm::Value *arr = llvm::PoisonValue::get(M.arrayType(nd));
  arr = B.CreateInsertValue(arr, data, 0);
  llvm::Value *stride = B.getInt64(itemSize);
  for (int d = nd - 1; d >= 0; --d) {
    arr = B.CreateInsertValue(arr, dims[d], {1u, unsigned(d)});
    arr = B.CreateInsertValue(arr, stride, {2u, unsigned(d)});
    stride = B.CreateMul(stride, dims[d]);
  }
  return arr;
}

// ---- Arrays in the memory spaces ----

llvm::Value *FunctionLowerer::lowerGlobalArray(const GlobalValue &g, const std::string &name,
                                               const Type *t, SourceLoc at) {
  auto *aty = dyn_cast<ArrayType>(concretize(t));
  if (!aty || !g.bytes)
    internal(at, "global array '" + name + "' typed " + t->str());
  std::vector<llvm::Value *> dims;
  for (int64_t d : g.shape)
    dims.push_back(B.getInt64(d));
  const std::string &bytes = *g.bytes;
  if (bytes.empty()) // an empty array: no memory to point at (its elements are never read)
    return cudaArrayValue(llvm::ConstantPointerNull::get(llvm::PointerType::getUnqual(M.ctx)), dims,
                          aty->itemSize());
  llvm::Constant *&slot = M.cuda.constArrays[g.bytes.get()];
  if (!slot) {
    unsigned as = M.isHost() ? 0 : 4; // CUDA: the constant bank
    auto *init = llvm::ConstantDataArray::getRaw(bytes, bytes.size(), B.getInt8Ty());
    auto *gv = new llvm::GlobalVariable(
        M.mod, init->getType(), true, llvm::GlobalValue::InternalLinkage, init,
        M.uniqueName("ptxjit_const_" + name), nullptr, llvm::GlobalValue::NotThreadLocal, as);
    gv->setAlignment(llvm::Align(16));
    slot = as ? llvm::ConstantExpr::getAddrSpaceCast(gv, llvm::PointerType::getUnqual(M.ctx))
              : static_cast<llvm::Constant *>(gv);
  }
  return cudaArrayValue(slot, dims, aty->itemSize());
}

llvm::Value *FunctionLowerer::lowerGlobalDeviceArray(const GlobalValue &g, const std::string &name,
                                                     const Type *t, SourceLoc at) {
  auto *aty = dyn_cast<ArrayType>(concretize(t));
  const std::vector<int64_t> &shape = g.shape, &strides = g.strides;
  if (!aty || static_cast<size_t>(aty->ndim()) != shape.size() || strides.size() != shape.size())
    internal(at, "global device array '" + name + "' typed " + t->str());
  llvm::Value *arr = llvm::PoisonValue::get(M.arrayType(aty->ndim()));
  llvm::Value *data = B.CreateIntToPtr(B.getInt64(g.address), llvm::PointerType::getUnqual(M.ctx));
  arr = B.CreateInsertValue(arr, data, 0);
  for (unsigned d = 0; d < shape.size(); ++d) {
    arr = B.CreateInsertValue(arr, B.getInt64(shape[d]), {1u, d});
    arr = B.CreateInsertValue(arr, B.getInt64(strides[d]), {2u, d});
  }
  return arr;
}

llvm::Value *FunctionLowerer::localArray(const ArrayType *aty, const std::vector<int64_t> &shape,
                                         uint64_t align) {
  const uint64_t itemSize = static_cast<uint64_t>(aty->itemSize());
  uint64_t count = 1;
  std::vector<llvm::Value *> dims;
  for (int64_t d : shape) {
    count *= static_cast<uint64_t>(d);
    dims.push_back(B.getInt64(d));
  }
  M.cuda.localBytes += alignUp(count * itemSize, 16) + (align > 16 ? align : 0); // with padding
  // In the entry block, so that a loop around the call reuses one slot (as numba-cuda's alloca).
  llvm::IRBuilder<> eb(allocaBlock, allocaBlock->getFirstInsertionPt());
  llvm::AllocaInst *a =
      eb.CreateAlloca(llvm::ArrayType::get(M.memType(aty->dtype()), count), nullptr, "local.array");
  a->setAlignment(llvm::Align(align));
  return cudaArrayValue(a, dims, static_cast<int64_t>(itemSize));
}

// ---- Calls ----

llvm::Value *FunctionLowerer::lowerCudaCall(const CallInstr &i, const CudaBuiltinInfo &info) {
  SourceLoc at = i.loc;
  const Type *res = typeOf(&i, at);
  const std::string name = builtinPath(i.builtin);
  auto arg = [&](size_t k) { return valueOf(i.arg(k), at); };
  auto argType = [&](size_t k) { return typeOf(i.arg(k), at); };
  auto i32Arg = [&](size_t k) { return convert(arg(k), argType(k), types::uint32(), at); };
  auto *i32 = B.getInt32Ty();
  auto *ptr = llvm::PointerType::getUnqual(M.ctx);
  auto nvvm = [&](llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Value *> a = {}) {
    return B.CreateCall(llvm::Intrinsic::getDeclaration(&M.mod, id), a);
  };

  switch (info.kind) {
  case CudaKind::SharedArray:
  case CudaKind::LocalArray: {
    std::vector<const Instr *> bound;
    std::string why;
    if (!bindCallArgs(&i, {"shape", "dtype", "alignment"}, bound, why))
      fail(at, DiagCode::CallArgs, {name, why});
    // alignment= (numba-cuda's): exactly that alignment, else the default below.
    const uint64_t requested = static_cast<uint64_t>(arrayAlignment(&i, bound[2], fn, name));
    std::optional<std::vector<int64_t>> shape = constantShape(bound[0], fn);
    auto *aty = dyn_cast<ArrayType>(concretize(res));
    if (!shape || !aty)
      internal(at, name + " without a constant shape");
    const Type *dt = aty->dtype(); // a scalar or a record
    const uint64_t itemSize = static_cast<uint64_t>(aty->itemSize());
    uint64_t count = 1;
    std::vector<llvm::Value *> dims;
    for (int64_t d : *shape) {
      count *= static_cast<uint64_t>(d);
      dims.push_back(B.getInt64(d));
    }
    const uint64_t bytes = count * itemSize;
    const uint64_t align =
        requested ? requested : std::max<uint64_t>(16, isa<ScalarType>(dt) ? itemSize : 16);
    llvm::Type *elem = M.memType(dt);
    if (info.kind == CudaKind::LocalArray)
      return localArray(aty, *shape, align);
    const bool dynamic = shape->size() == 1 && (*shape)[0] == 0;
    if (dynamic) {
      // Every dynamic shared array aliases the launch's dynamic shared memory (as in Numba);
      // its length is sharedmem // itemsize.
      llvm::Value *data, *size;
      // alignment=: every dynamic array starts where the others do, at the largest alignment
      // any of them asks (the extern declaration's on CUDA; on the host the static part is
      // padded to it in finishCuda).
      if (requested > M.cuda.dynSharedAlign) {
        if (M.isHost() && requested > kHostSharedAlign)
          fail(at, DiagCode::UnsupportedConstruct,
               {"alignment=" + std::to_string(requested) +
                " for a dynamic shared array on the CPU backend (at most " +
                std::to_string(kHostSharedAlign) + ")"});
        M.cuda.dynSharedAlign = requested;
      }
      if (M.isHost()) {
        data = hostCtxField(kCtxDynShared, ptr);
        size = hostCtxField(kCtxDynBytes, i32);
      } else {
        llvm::GlobalVariable *gv = M.mod.getGlobalVariable("ptxjit_dynshared");
        if (!gv) {
          gv = new llvm::GlobalVariable(M.mod, llvm::ArrayType::get(B.getInt8Ty(), 0), false,
                                        llvm::GlobalValue::ExternalLinkage, nullptr,
                                        "ptxjit_dynshared", nullptr,
                                        llvm::GlobalValue::NotThreadLocal, 3);
          gv->setAlignment(llvm::Align(16));
        }
        if (gv->getAlign().valueOrOne().value() < M.cuda.dynSharedAlign)
          gv->setAlignment(llvm::Align(M.cuda.dynSharedAlign));
        data = B.CreateAddrSpaceCast(gv, ptr);
        auto *asmTy = llvm::FunctionType::get(i32, false);
        size = B.CreateCall(
            llvm::InlineAsm::get(asmTy, "mov.u32 $0, %dynamic_smem_size;", "=r", false), {});
      }
      llvm::Value *len = B.CreateUDiv(B.CreateZExt(size, B.getInt64Ty()), B.getInt64(itemSize));
      return cudaArrayValue(data, {len}, itemSize);
    }
    llvm::Constant *&slot = M.cuda.sharedArrays[&i];
    if (M.isHost()) {
      // The block's shared memory starts kHostSharedAlign-aligned (runtime/HostGrid.cpp): a
      // larger alignment= is reached at run time, within `align` bytes reserved before it.
      const uint64_t slack = align > kHostSharedAlign ? align : 0;
      if (!slot) {
        uint64_t offset = alignUp(M.cuda.sharedBytes, std::min(align, kHostSharedAlign));
        M.cuda.sharedBytes = offset + slack + bytes;
        slot = B.getInt64(offset);
      }
      llvm::Value *base = hostCtxField(kCtxShared, ptr);
      llvm::Value *data = B.CreateInBoundsGEP(B.getInt8Ty(), base, slot);
      if (slack) {
        llvm::Value *addr = B.CreatePtrToInt(data, B.getInt64Ty());
        llvm::Value *up =
            B.CreateAnd(B.CreateAdd(addr, B.getInt64(align - 1)), B.getInt64(~(align - 1)));
        data = B.CreateInBoundsGEP(B.getInt8Ty(), data, B.CreateSub(up, addr));
      }
      return cudaArrayValue(data, dims, itemSize);
    }
    if (!slot) {
      M.cuda.sharedBytes = alignUp(M.cuda.sharedBytes, align) + bytes;
      auto *ty = llvm::ArrayType::get(elem, count);
      auto *gv = new llvm::GlobalVariable(
          M.mod, ty, false, llvm::GlobalValue::InternalLinkage, llvm::UndefValue::get(ty),
          M.uniqueName("ptxjit_shared_" + fn.name), nullptr, llvm::GlobalValue::NotThreadLocal, 3);
      gv->setAlignment(llvm::Align(align));
      // Kept as declared, as NVVM keeps them: LLVM would drop an array whose loads it can
      // forward from the thread's own stores, and the kernel's shared size
      // (get_shared_mem_per_block, hence occupancy) would no longer be what the source says.
      llvm::appendToCompilerUsed(M.mod, {gv});
      slot = llvm::ConstantExpr::getAddrSpaceCast(gv, ptr);
    }
    return cudaArrayValue(slot, dims, itemSize);
  }
  case CudaKind::ConstArray: {
    auto *g = dyn_cast<GlobalInstr>(i.arg(0));
    if (!g)
      internal(at, name + " of a non-global array");
    return arg(0); // the Global instruction already is the frozen constant array
  }
  case CudaKind::Barrier: {
    M.cuda.cooperative = true;
    if (info.variant == 0) {
      if (M.isHost())
        B.CreateCall(hostHelper("ptxjit_host_syncthreads", B.getVoidTy(), {ptr}), {ctxArg});
      else
        nvvm(llvm::Intrinsic::nvvm_barrier0);
      return placeholder();
    }
    llvm::Value *pred =
        B.CreateZExt(truth(arg(0), argType(0), at), i32); // 0 or 1, as PTX's bar.red wants
    llvm::Value *r;
    if (M.isHost()) {
      r = B.CreateCall(hostHelper("ptxjit_host_syncthreads_reduce", i32, {ptr, i32, i32}),
                       {ctxArg, B.getInt32(info.variant), pred});
    } else {
      static const llvm::Intrinsic::ID ids[] = {llvm::Intrinsic::nvvm_barrier0_popc,
                                                llvm::Intrinsic::nvvm_barrier0_and,
                                                llvm::Intrinsic::nvvm_barrier0_or};
      r = nvvm(ids[info.variant - 1], {pred});
      if (info.variant != 1) // and/or: nonzero → 1, as Numba's result
        r = B.CreateZExt(B.CreateICmpNE(r, B.getInt32(0)), i32);
    }
    return convert(r, types::int32(), res, at);
  }
  case CudaKind::Fence: {
    if (M.isHost()) {
      B.CreateFence(llvm::AtomicOrdering::SequentiallyConsistent);
      return placeholder();
    }
    static const llvm::Intrinsic::ID ids[] = {llvm::Intrinsic::nvvm_membar_gl,
                                              llvm::Intrinsic::nvvm_membar_cta,
                                              llvm::Intrinsic::nvvm_membar_sys};
    nvvm(ids[info.variant]);
    return placeholder();
  }
  case CudaKind::Syncwarp:
  case CudaKind::Shfl:
  case CudaKind::Vote:
  case CudaKind::Match:
  case CudaKind::LaneMask:
    return lowerWarpCall(i, info);
  case CudaKind::Value:
    fail(at, DiagCode::UnsupportedCall, {name});
  case CudaKind::Atomic:
  case CudaKind::AtomicCas:
    return lowerAtomic(i, info);
  case CudaKind::BitOp: {
    auto *st = cast<ScalarType>(concretize(argType(0)));
    llvm::Value *x = convert(arg(0), argType(0), st, at);
    llvm::Type *ty = x->getType();
    llvm::Value *r = nullptr;
    switch (info.variant) {
    case 0:
      r = B.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, x);
      return convert(r, st, res, at);
    case 1: { // brev on uint32 / uint64
      auto *rt = cast<ScalarType>(concretize(res));
      x = convert(arg(0), argType(0), rt, at);
      return B.CreateUnaryIntrinsic(llvm::Intrinsic::bitreverse, x);
    }
    case 2: // clz: the operand's width for 0, as CUDA
      r = B.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, x, B.getFalse());
      return convert(r, st, res, at);
    default: { // ffs: 1 + the index of the lowest set bit, 0 for 0
      llvm::Value *tz = B.CreateBinaryIntrinsic(llvm::Intrinsic::cttz, x, B.getFalse());
      llvm::Value *pos = B.CreateAdd(tz, llvm::ConstantInt::get(ty, 1));
      r = B.CreateSelect(B.CreateICmpEQ(x, llvm::ConstantInt::get(ty, 0)),
                         llvm::ConstantInt::get(ty, 0), pos);
      return B.CreateZExtOrTrunc(r, i32);
    }
    }
  }
  case CudaKind::Fma: {
    std::vector<llvm::Value *> ops;
    for (size_t k = 0; k < 3; ++k)
      ops.push_back(convert(arg(k), argType(k), res, at));
    return mathCall(MathFn::Fma, {ops[0], ops[1], ops[2]}); // one rounding for bfloat16 too
  }
  case CudaKind::Cbrt:
    return mathCall(MathFn::Cbrt, {convert(arg(0), argType(0), res, at)});
  case CudaKind::Nanosleep:
    // PTX's nanosleep.u32 (sm_70+) sleeps between 0 and twice the given time; on the CPU
    // backend the thread goes on at once, which is the zero end of that range.
    if (M.isHost())
      return placeholder();
    if (M.opts.ccMajor < 7)
      fail(at, DiagCode::UnsupportedCall,
           {name + " on compute capability " + std::to_string(M.opts.ccMajor) + "." +
            std::to_string(M.opts.ccMinor) + " (nanosleep needs 7.0 or newer)"});
    nvvm(llvm::Intrinsic::nvvm_nanosleep, {i32Arg(0)});
    return placeholder();
  case CudaKind::Grid:
    // Both make the kernel need a cooperative launch (numba-cuda marks this_grid() alone too).
    M.cuda.cooperative = true;
    M.cuda.gridSync = true;
    if (info.variant == 0)
      return placeholder(); // the group is a compile-time value
    if (M.isHost()) {
      B.CreateCall(hostHelper("ptxjit_host_grid_sync", B.getVoidTy(), {ptr}), {ctxArg});
      return placeholder();
    }
    lowerGridSync();
    return placeholder();
  case CudaKind::Vector: {
    // The components in order: a scalar converted to the base type, a vector's own components.
    const VectorTypeInfo v = vectorTypeOfVariant(info.variant);
    const TupleType *vt = vectorType(v);
    llvm::Value *out = llvm::PoisonValue::get(repr(vt, at));
    unsigned slot = 0;
    for (size_t k = 0; k < i.numArgs(); ++k) {
      if (std::optional<VectorTypeInfo> a = vectorTypeInfo(concretize(argType(k)))) {
        llvm::Value *src = arg(k);
        for (int c = 0; c < a->count; ++c)
          out = B.CreateInsertValue(out, B.CreateExtractValue(src, unsigned(c)), slot++);
      } else {
        out = B.CreateInsertValue(out, convert(arg(k), argType(k), v.base, at), slot++);
      }
    }
    if (slot != static_cast<unsigned>(v.count))
      internal(at, name + " with " + std::to_string(slot) + " components");
    return convert(out, vt, res, at);
  }
  case CudaKind::CacheLoad:
  case CudaKind::CacheStore:
    return lowerCacheHint(i, info);
  case CudaKind::Selp: {
    llvm::Value *c = truth(arg(0), argType(0), at);
    return B.CreateSelect(c, convert(arg(1), argType(1), res, at),
                          convert(arg(2), argType(2), res, at));
  }
  }
  internal(at, "unknown kind of " + name);
}

llvm::Value *FunctionLowerer::lowerCudaValue(const GetAttrInstr &i, const CudaBuiltinInfo &info) {
  SourceLoc at = i.loc;
  const Type *res = typeOf(&i, at);
  if (info.variant == 1) // warpsize
    return convert(B.getInt32(32), types::int32(), res, at);
  llvm::Value *lane;
  if (M.isHost())
    lane = B.CreateAnd(hostCtxField(kCtxLinearTid, B.getInt32Ty()), B.getInt32(31));
  else
    lane = B.CreateCall(
        llvm::Intrinsic::getDeclaration(&M.mod, llvm::Intrinsic::nvvm_read_ptx_sreg_laneid));
  return convert(lane, types::int32(), res, at);
}

// ---- Warp functions ----

llvm::Value *FunctionLowerer::lowerWarpCall(const CallInstr &i, const CudaBuiltinInfo &info) {
  SourceLoc at = i.loc;
  const Type *res = typeOf(&i, at);
  auto arg = [&](size_t k) { return valueOf(i.arg(k), at); };
  auto argType = [&](size_t k) { return typeOf(i.arg(k), at); };
  auto *i32 = B.getInt32Ty();
  auto *i64 = B.getInt64Ty();
  auto *ptr = llvm::PointerType::getUnqual(M.ctx);
  auto mask = [&]() { return convert(arg(0), argType(0), types::uint32(), at); };
  auto nvvm = [&](llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Value *> a = {}) {
    return B.CreateCall(llvm::Intrinsic::getDeclaration(&M.mod, id), a);
  };
  /// A warp value as its bits, zero-extended to i64 (host helpers) — and back.
  auto toBits = [&](llvm::Value *v) -> llvm::Value * {
    unsigned bits = v->getType()->getPrimitiveSizeInBits();
    llvm::Value *asInt = B.CreateBitCast(v, B.getIntNTy(bits));
    return bits == 64 ? asInt : B.CreateZExt(asInt, i64);
  };
  auto fromBits = [&](llvm::Value *bits, llvm::Type *ty) -> llvm::Value * {
    unsigned n = ty->getPrimitiveSizeInBits();
    llvm::Value *v = n == 64 ? bits : B.CreateTrunc(bits, B.getIntNTy(n));
    return B.CreateBitCast(v, ty);
  };

  switch (info.kind) {
  case CudaKind::LaneMask:
    if (info.variant == 1) { // lanemask_lt
      if (!M.isHost())
        return nvvm(llvm::Intrinsic::nvvm_read_ptx_sreg_lanemask_lt);
      llvm::Value *lane = B.CreateAnd(hostCtxField(kCtxLinearTid, i32), B.getInt32(31));
      return B.CreateSub(B.CreateShl(B.getInt32(1), lane), B.getInt32(1));
    }
    if (!M.isHost())
      return nvvm(llvm::Intrinsic::nvvm_activemask);
    // The host groups the lanes that reach the same call site (runtime/HostBlock.h).
    M.cuda.cooperative = true;
    return B.CreateCall(hostHelper("ptxjit_host_activemask", i32, {ptr, i32}),
                        {ctxArg, B.getInt32(M.cuda.activeSites++)});
  case CudaKind::Syncwarp: {
    M.cuda.cooperative = true;
    llvm::Value *m = i.numArgs() ? mask() : B.getInt32(0xffffffffu);
    if (M.isHost())
      B.CreateCall(hostHelper("ptxjit_host_syncwarp", B.getVoidTy(), {ptr, i32}), {ctxArg, m});
    else
      nvvm(llvm::Intrinsic::nvvm_bar_warp_sync, {m});
    return placeholder();
  }
  case CudaKind::Shfl: {
    M.cuda.cooperative = true;
    const Type *vt = concretize(res);
    llvm::Value *v = convert(arg(1), argType(1), vt, at);
    llvm::Value *operand = convert(arg(2), argType(2), types::uint32(), at);
    llvm::Value *m = mask();
    llvm::Type *ty = v->getType();
    if (M.isHost()) {
      llvm::Value *r = B.CreateCall(hostHelper("ptxjit_host_shfl", i64, {ptr, i32, i32, i64, i32}),
                                    {ctxArg, m, B.getInt32(info.variant), toBits(v), operand});
      return fromBits(r, ty);
    }
    // shfl.sync's c operand: 0x1f (a 32-lane segment, clamp at lane 31) for idx/down/bfly,
    // 0 for up (clamp at lane 0).
    static const llvm::Intrinsic::ID i32Ids[] = {
        llvm::Intrinsic::nvvm_shfl_sync_idx_i32, llvm::Intrinsic::nvvm_shfl_sync_up_i32,
        llvm::Intrinsic::nvvm_shfl_sync_down_i32, llvm::Intrinsic::nvvm_shfl_sync_bfly_i32};
    static const llvm::Intrinsic::ID f32Ids[] = {
        llvm::Intrinsic::nvvm_shfl_sync_idx_f32, llvm::Intrinsic::nvvm_shfl_sync_up_f32,
        llvm::Intrinsic::nvvm_shfl_sync_down_f32, llvm::Intrinsic::nvvm_shfl_sync_bfly_f32};
    llvm::Value *c = B.getInt32(info.variant == 1 ? 0 : 0x1f);
    if (ty->isFloatTy())
      return nvvm(f32Ids[info.variant], {m, v, operand, c});
    if (ty->isIntegerTy(32))
      return nvvm(i32Ids[info.variant], {m, v, operand, c});
    if (ty->is16bitFPTy()) { // float16 and bfloat16: their bits in the low half of a register
      llvm::Value *bits = B.CreateZExt(B.CreateBitCast(v, B.getInt16Ty()), i32);
      bits = nvvm(i32Ids[info.variant], {m, bits, operand, c});
      return B.CreateBitCast(B.CreateTrunc(bits, B.getInt16Ty()), ty);
    }
    // 64-bit values: two 32-bit shuffles of the halves.
    llvm::Value *bits = B.CreateBitCast(v, i64);
    llvm::Value *lo = B.CreateTrunc(bits, i32);
    llvm::Value *hi = B.CreateTrunc(B.CreateLShr(bits, 32), i32);
    lo = nvvm(i32Ids[info.variant], {m, lo, operand, c});
    hi = nvvm(i32Ids[info.variant], {m, hi, operand, c});
    llvm::Value *joined = B.CreateOr(B.CreateZExt(lo, i64), B.CreateShl(B.CreateZExt(hi, i64), 32));
    return B.CreateBitCast(joined, ty);
  }
  case CudaKind::Vote: {
    M.cuda.cooperative = true;
    llvm::Value *m = mask();
    llvm::Value *p = truth(arg(1), argType(1), at);
    llvm::Value *r;
    if (M.isHost()) {
      r = B.CreateCall(hostHelper("ptxjit_host_vote", i32, {ptr, i32, i32, i32}),
                       {ctxArg, m, B.getInt32(info.variant), B.CreateZExt(p, i32)});
      if (info.variant != 3)
        r = B.CreateICmpNE(r, B.getInt32(0));
    } else {
      static const llvm::Intrinsic::ID ids[] = {
          llvm::Intrinsic::nvvm_vote_all_sync, llvm::Intrinsic::nvvm_vote_any_sync,
          llvm::Intrinsic::nvvm_vote_uni_sync, llvm::Intrinsic::nvvm_vote_ballot_sync};
      r = nvvm(ids[info.variant], {m, p});
    }
    return convert(r,
                   info.variant == 3 ? static_cast<const Type *>(types::int32()) : types::boolean(),
                   res, at);
  }
  case CudaKind::Match: {
    M.cuda.cooperative = true;
    llvm::Value *m = mask();
    const Type *vt = concretize(argType(1));
    llvm::Value *v = convert(arg(1), argType(1), vt, at);
    unsigned bits = v->getType()->getPrimitiveSizeInBits();
    llvm::Value *iv = B.CreateBitCast(v, B.getIntNTy(bits));
    llvm::Value *maskOut, *pred = nullptr;
    if (M.isHost()) {
      llvm::AllocaInst *predSlot = entryAlloca(i32, "match.pred");
      maskOut = B.CreateCall(hostHelper("ptxjit_host_match", i32, {ptr, i32, i32, i64, ptr}),
                             {ctxArg, m, B.getInt32(info.variant), toBits(v), predSlot});
      pred = B.CreateICmpNE(B.CreateLoad(i32, predSlot), B.getInt32(0));
    } else if (info.variant == 0) {
      maskOut = nvvm(bits == 64 ? llvm::Intrinsic::nvvm_match_any_sync_i64
                                : llvm::Intrinsic::nvvm_match_any_sync_i32,
                     {m, iv});
    } else {
      llvm::Value *pair = nvvm(bits == 64 ? llvm::Intrinsic::nvvm_match_all_sync_i64p
                                          : llvm::Intrinsic::nvvm_match_all_sync_i32p,
                               {m, iv});
      maskOut = B.CreateExtractValue(pair, 0);
      pred = B.CreateExtractValue(pair, 1);
    }
    if (info.variant == 0)
      return convert(maskOut, types::int32(), res, at);
    const TupleType *tt = types::tuple({types::int32(), types::boolean()});
    llvm::Value *out = llvm::PoisonValue::get(repr(tt, at));
    out = B.CreateInsertValue(out, maskOut, 0);
    out = B.CreateInsertValue(out, pred, 1);
    return convert(out, tt, res, at);
  }
  default:
    break;
  }
  internal(at, "unknown warp function");
}

// ---- Cache-hinted loads and stores ----

llvm::Value *FunctionLowerer::lowerCacheHint(const CallInstr &i, const CudaBuiltinInfo &info) {
  SourceLoc at = i.loc;
  const bool store = info.kind == CudaKind::CacheStore;
  const Type *bt = concretize(typeOf(i.arg(0), at));
  llvm::Value *base = valueOf(i.arg(0), at);
  llvm::Value *index = valueOf(i.arg(1), at);
  const Type *indexType = typeOf(i.arg(1), at);
  const ScalarType *dt = nullptr;
  llvm::Value *addr = nullptr;
  if (auto *pty = dyn_cast<PointerType>(bt)) {
    dt = pty->pointee();
    if (dt)
      addr = pointerElementAddress(base, dt, index, indexType, at);
  } else if (auto *aty = dyn_cast<ArrayType>(bt)) {
    dt = aty->scalarDtype();
    if (dt) // bounds-checked as a[index] is; negative indices wrap, as numba-cuda's do
      addr = checkedElementAddress(base, aty, index, indexType, i.arg(0), at);
  }
  if (!addr)
    internal(at, std::string(builtinPath(i.builtin)) + " of " + bt->str());
  llvm::Value *value =
      store ? convert(valueOf(i.arg(2), at), typeOf(i.arg(2), at), dt, at) : nullptr;
  if (M.isHost()) { // no caches to hint: plain loads and stores
    if (store) {
      storeScalar(B, addr, value, dt);
      return placeholder();
    }
    return convert(loadScalar(B, addr, dt), dt, typeOf(&i, at), at);
  }
  // PTX ld.global.<op>.b<N> / st.global.<op>.b<N> through inline assembly, as numba-cuda emits
  // them (LLVM has no intrinsic for cache operators). The element travels as an integer of its
  // width; an 8-bit one in a 32-bit register (PTX allows wider registers for .b8).
  const int bits = dt->bits();
  llvm::Type *elemTy = memoryType(M.ctx, dt);
  llvm::Type *regTy = bits == 8 ? B.getInt32Ty() : B.getIntNTy(bits);
  const char *reg = bits == 16 ? "h" : bits == 64 ? "l" : "r";
  const std::string insn = std::string(store ? "st" : "ld") + ".global." +
                           cacheOperator(info.kind, info.variant) + ".b" + std::to_string(bits);
  llvm::Value *gaddr = B.CreateAddrSpaceCast(addr, B.getPtrTy(1)); // cvta.to.global
  if (store) {
    llvm::Value *bitsV = B.CreateBitCast(value, B.getIntNTy(bits));
    if (bits == 8)
      bitsV = B.CreateZExt(bitsV, regTy);
    auto *fty = llvm::FunctionType::get(B.getVoidTy(), {gaddr->getType(), regTy}, false);
    auto *op =
        llvm::InlineAsm::get(fty, insn + " [$0], $1;", std::string("l,") + reg + ",~{memory}",
                             /*hasSideEffects=*/true);
    B.CreateCall(op, {gaddr, bitsV});
    return placeholder();
  }
  auto *fty = llvm::FunctionType::get(regTy, {gaddr->getType()}, false);
  auto *op = llvm::InlineAsm::get(fty, insn + " $0, [$1];", std::string("=") + reg + ",l",
                                  /*hasSideEffects=*/false);
  llvm::CallInst *call = B.CreateCall(op, {gaddr});
  call->setOnlyReadsMemory(); // ordered after earlier stores, and removable when unused
  llvm::Value *loaded = bits == 8 ? B.CreateTrunc(call, B.getInt8Ty()) : call;
  llvm::Value *v = B.CreateBitCast(loaded, elemTy);
  return convert(v, dt, typeOf(&i, at), at);
}

// ---- Grid synchronization ----

// What CUDA's cooperative_groups::grid_group::sync() does (its sync_grids_arrive/_wait): a
// barrier of the block; then one thread per block adds to the barrier word of the grid
// workspace the driver gives a cooperative launch (its address in %envreg1 (high half) and
// %envreg2 (low half), the word at offset 4), block (0, 0, 0) adding 0x80000000 - (blocks - 1)
// and every other block 1, so that the word's top bit flips once every block has arrived; that
// thread waits for the flip; a second barrier of the block releases the others. Release/acquire
// at GPU scope on sm_70+, fences around relaxed accesses before.
void FunctionLowerer::lowerGridSync() {
  auto *i32 = B.getInt32Ty();
  auto *i64 = B.getInt64Ty();
  auto sreg = [&](llvm::Intrinsic::ID id) {
    return B.CreateCall(llvm::Intrinsic::getDeclaration(&M.mod, id));
  };
  auto envreg = [&](const char *reg) {
    auto *fty = llvm::FunctionType::get(i32, false);
    return B.CreateCall(
        llvm::InlineAsm::get(fty, std::string("mov.u32 $0, %") + reg + ";", "=r", false), {});
  };
  const bool scoped = M.opts.ccMajor >= 7;
  llvm::Function *F = B.GetInsertBlock()->getParent();
  llvm::BasicBlock *arrive = llvm::BasicBlock::Create(M.ctx, "gridsync.arrive", F);
  llvm::BasicBlock *wait = llvm::BasicBlock::Create(M.ctx, "gridsync.wait", F);
  llvm::BasicBlock *done = llvm::BasicBlock::Create(M.ctx, "gridsync.done", F);

  sreg(llvm::Intrinsic::nvvm_barrier0);
  llvm::Value *tsum = B.CreateAdd(B.CreateAdd(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x),
                                              sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_y)),
                                  sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_z));
  B.CreateCondBr(B.CreateICmpEQ(tsum, B.getInt32(0)), arrive, done);

  B.SetInsertPoint(arrive);
  llvm::Value *blocks = B.CreateMul(B.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x),
                                                sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y)),
                                    sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_z));
  llvm::Value *csum = B.CreateAdd(B.CreateAdd(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x),
                                              sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y)),
                                  sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z));
  llvm::Value *first = B.CreateSub(B.getInt32(0x80000001u), blocks);
  llvm::Value *add = B.CreateSelect(B.CreateICmpEQ(csum, B.getInt32(0)), first, B.getInt32(1));
  llvm::Value *ws = B.CreateOr(B.CreateShl(B.CreateZExt(envreg("envreg1"), i64), 32),
                               B.CreateZExt(envreg("envreg2"), i64));
  llvm::Value *word = B.CreateAdd(ws, B.getInt64(4));
  auto *rmwTy = llvm::FunctionType::get(i32, {i64, i32}, false);
  if (!scoped)
    sreg(llvm::Intrinsic::nvvm_membar_gl);
  llvm::Value *old = B.CreateCall(
      llvm::InlineAsm::get(
          rmwTy, scoped ? "atom.add.release.gpu.u32 $0, [$1], $2;" : "atom.add.u32 $0, [$1], $2;",
          "=r,l,r,~{memory}", true),
      {word, add});
  B.CreateBr(wait);

  B.SetInsertPoint(wait);
  auto *ldTy = llvm::FunctionType::get(i32, {i64}, false);
  llvm::Value *now =
      B.CreateCall(llvm::InlineAsm::get(
                       ldTy, scoped ? "ld.acquire.gpu.u32 $0, [$1];" : "ld.volatile.u32 $0, [$1];",
                       "=r,l,~{memory}", true),
                   {word});
  llvm::Value *flipped =
      B.CreateICmpNE(B.CreateAnd(B.CreateXor(old, now), B.getInt32(0x80000000u)), B.getInt32(0));
  llvm::BasicBlock *waited = B.GetInsertBlock();
  llvm::BasicBlock *fence = scoped ? done : llvm::BasicBlock::Create(M.ctx, "gridsync.fence", F);
  B.CreateCondBr(flipped, fence, waited);
  if (!scoped) {
    B.SetInsertPoint(fence);
    sreg(llvm::Intrinsic::nvvm_membar_gl);
    B.CreateBr(done);
  }

  B.SetInsertPoint(done);
  sreg(llvm::Intrinsic::nvvm_barrier0);
}

// ---- Atomics ----

llvm::Value *FunctionLowerer::lowerAtomic(const CallInstr &i, const CudaBuiltinInfo &info) {
  SourceLoc at = i.loc;
  auto arg = [&](size_t k) { return valueOf(i.arg(k), at); };
  auto argType = [&](size_t k) { return typeOf(i.arg(k), at); };
  auto *aty = dyn_cast<ArrayType>(concretize(argType(0)));
  if (!aty)
    internal(at, "atomic on " + argType(0)->str());
  if (aty->readonly())
    fail(at, DiagCode::ReadonlyArray, {aty->str()});
  const ScalarType *dt = aty->scalarDtype();
  if (!dt)
    internal(at, "atomic on " + aty->str());
  llvm::Value *arr = arg(0);
  const bool isCas = info.kind == CudaKind::AtomicCas;
  const bool hasIndex = !(isCas && info.variant == 0);
  llvm::Value *addr;
  if (hasIndex) {
    const auto *tt = dyn_cast<TupleType>(concretize(argType(1)));
    if ((tt ? tt->size() : 1) != static_cast<size_t>(aty->ndim()))
      fail(at, DiagCode::IndexTypes, {aty->str(), argType(1)->str()});
    // numba-cuda converts each index to intp: floats (and bools) become int64, truncated;
    // integers stay as they are (an unsigned one is never taken for a negative index).
    llvm::Value *index = arg(1);
    const Type *indexType = argType(1);
    auto intp = [&](llvm::Value *v, const Type *t) -> std::pair<llvm::Value *, const Type *> {
      if (concretize(t)->kind() == TypeKind::Int)
        return {v, t};
      return {convert(v, t, types::int64(), at), types::int64()};
    };
    if (tt) {
      std::vector<const Type *> elems;
      std::vector<llvm::Value *> vals;
      for (size_t k = 0; k < tt->size(); ++k) {
        auto [v, t] = intp(B.CreateExtractValue(index, unsigned(k)), tt->elements()[k]);
        vals.push_back(v);
        elems.push_back(concretize(t));
      }
      const TupleType *nt = types::tuple(elems);
      index = llvm::PoisonValue::get(repr(nt, at));
      for (size_t k = 0; k < vals.size(); ++k)
        index = B.CreateInsertValue(index, vals[k], unsigned(k));
      indexType = nt;
    } else {
      std::tie(index, indexType) = intp(index, indexType);
    }
    addr = checkedElementAddress(arr, aty, index, indexType, i.arg(0), at);
  } else {
    addr = elementAddress(arr, aty, {B.getInt64(0)});
  }
  const size_t v0 = hasIndex ? 2 : 1;
  llvm::Value *val = convert(arg(v0), argType(v0), dt, at);
  llvm::Type *ty = val->getType();
  const llvm::Align align(dt->byteSize());
  const auto order = llvm::AtomicOrdering::Monotonic; // CUDA's atomics are relaxed
  const bool isFloat = dt->kind() == TypeKind::Float;
  const Type *res = typeOf(&i, at);

  if (isCas) {
    llvm::Value *nv = convert(arg(v0 + 1), argType(v0 + 1), dt, at);
    auto *cx = B.CreateAtomicCmpXchg(addr, val, nv, align, order, order);
    return convert(B.CreateExtractValue(cx, 0), dt, res, at);
  }

  using BinOp = llvm::AtomicRMWInst::BinOp;
  auto rmw = [&](BinOp op, llvm::Value *v) {
    return convert(B.CreateAtomicRMW(op, addr, v, align, order), dt, res, at);
  };
  const bool isSigned = dt->kind() == TypeKind::Int && dt->isSigned();
  switch (static_cast<AtomicOp>(info.variant)) {
  case AtomicOp::Add:
    return rmw(isFloat ? BinOp::FAdd : BinOp::Add, val);
  case AtomicOp::Sub: // floats: the addition of -val (PTX has no atom.sub)
    return isFloat ? rmw(BinOp::FAdd, B.CreateFNeg(val)) : rmw(BinOp::Sub, val);
  case AtomicOp::And:
    return rmw(BinOp::And, val);
  case AtomicOp::Or:
    return rmw(BinOp::Or, val);
  case AtomicOp::Xor:
    return rmw(BinOp::Xor, val);
  case AtomicOp::Inc: // old >= val ? 0 : old + 1 (atom.inc)
  case AtomicOp::Dec: // (old == 0 || old > val) ? val : old - 1 (atom.dec)
  {
    const bool inc = info.variant == int(AtomicOp::Inc);
    if (!M.isHost() && dt->bits() == 32) {
      // LLVM 19's NVPTX expands uinc_wrap/udec_wrap into CAS loops; PTX has them natively
      // for 32 bits (a generic address: global and shared alike).
      auto *fty = llvm::FunctionType::get(B.getInt32Ty(), {addr->getType(), B.getInt32Ty()}, false);
      auto *asmOp = llvm::InlineAsm::get(
          fty, inc ? "atom.inc.u32 $0, [$1], $2;" : "atom.dec.u32 $0, [$1], $2;",
          "=r,l,r,~{memory}", /*hasSideEffects=*/true);
      return convert(B.CreateCall(asmOp, {addr, val}), dt, res, at);
    }
    return rmw(inc ? BinOp::UIncWrap : BinOp::UDecWrap, val);
  }
  case AtomicOp::Exch:
    return rmw(BinOp::Xchg, val);
  case AtomicOp::Max:
  case AtomicOp::Min:
  case AtomicOp::NanMax:
  case AtomicOp::NanMin:
    if (!isFloat) {
      bool isMax = info.variant == int(AtomicOp::Max) || info.variant == int(AtomicOp::NanMax);
      return rmw(isMax ? (isSigned ? BinOp::Max : BinOp::UMax)
                       : (isSigned ? BinOp::Min : BinOp::UMin),
                 val);
    }
    break;
  }
  // Float min/max: a compare-and-swap loop with Numba's NaN rules. max/min leave memory
  // unchanged when `val` or the value found first is NaN and replace it while it is (ordered)
  // smaller/larger than `val`; nanmax/nanmin ignore a NaN `val` and also replace a NaN in
  // memory. The result is the value the location held before this update.
  const auto op = static_cast<AtomicOp>(info.variant);
  const bool isMax = op == AtomicOp::Max || op == AtomicOp::NanMax;
  const bool nanVariant = op == AtomicOp::NanMax || op == AtomicOp::NanMin;
  llvm::Type *ity = B.getIntNTy(dt->bits());
  llvm::BasicBlock *entry = B.GetInsertBlock();
  llvm::BasicBlock *check = llvm::BasicBlock::Create(M.ctx, "atomic.check", F);
  llvm::BasicBlock *attempt = llvm::BasicBlock::Create(M.ctx, "atomic.cas", F);
  llvm::BasicBlock *done = llvm::BasicBlock::Create(M.ctx, "atomic.done", F);
  llvm::LoadInst *first = B.CreateAlignedLoad(ty, addr, align);
  first->setAtomic(order);
  llvm::Value *early = nanVariant ? B.CreateFCmpUNO(val, val) : B.CreateFCmpUNO(val, first);
  B.CreateCondBr(early, done, check);
  B.SetInsertPoint(check);
  llvm::PHINode *cur = B.CreatePHI(ty, 2, "atomic.cur");
  cur->addIncoming(first, entry);
  llvm::Value *better = nanVariant
                            ? (isMax ? B.CreateFCmpULT(cur, val) : B.CreateFCmpUGT(cur, val))
                            : (isMax ? B.CreateFCmpOLT(cur, val) : B.CreateFCmpOGT(cur, val));
  B.CreateCondBr(better, attempt, done);
  B.SetInsertPoint(attempt);
  auto *cx = B.CreateAtomicCmpXchg(addr, B.CreateBitCast(cur, ity), B.CreateBitCast(val, ity),
                                   align, order, order);
  llvm::Value *seen = B.CreateBitCast(B.CreateExtractValue(cx, 0), ty);
  cur->addIncoming(seen, attempt);
  B.CreateCondBr(B.CreateExtractValue(cx, 1), done, check);
  B.SetInsertPoint(done);
  llvm::PHINode *old = B.CreatePHI(ty, 3, "atomic.old");
  old->addIncoming(first, entry);
  old->addIncoming(cur, check);
  old->addIncoming(seen, attempt);
  return convert(old, dt, res, at);
}

} // namespace ptxjit::codegen::detail
