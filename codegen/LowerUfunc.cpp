// Loop kernels for ufuncs (see codegen/UfuncKernels.h): the scalar or core function's body is
// lowered as for any kernel, and an entry built by the kernel ABI (KernelEntry.h) walks the
// iteration space around calls to it.
#include "codegen/UfuncKernels.h"

#include "codegen/KernelEntry.h"
#include "codegen/Lowering.h"
#include "ir/Enums.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <string>

namespace ptxjit::codegen {
namespace {

using detail::castScalar;
using detail::loadScalar;
using detail::storeScalar;
using ir::ScalarType;
using ir::TypeKind;

/// Elements per trip of a CUDA flat loop's main loop (lowerElementwise).
constexpr int kFlatUnroll = 4;
/// Elements per trip of a CUDA reduction's per-thread fold (lowerReduce): twice kFlatUnroll, as
/// a fold reads one operand where a flat add's trip reads two.
constexpr int kReduceUnroll = 8;

/// True when the loop's work per element is its memory traffic: a body of one block, without
/// calls (math functions, device functions) and of at most kStreamingBodyInstrs instructions.
/// Only such loops take kFlatUnroll elements per trip: for a body that computes (the seed's
/// haversine: five sines, cosines and an atan2) the unrolled copies cost registers, hence
/// resident threads, and its kernel measured 8% slower on the H200 (2026-11-29).
constexpr size_t kStreamingBodyInstrs = 24;
bool streamingBody(const ir::Function &fn) {
  if (fn.blocks.size() != 1)
    return false;
  const ir::Block &only = *fn.blocks.front();
  if (only.instrs.size() > kStreamingBodyInstrs)
    return false;
  for (const auto &i : only.instrs)
    if (i->op() == ir::Opcode::Call)
      return false;
  return true;
}

/// One loop kernel under construction: a module holding the device function's body and the
/// entry, with the loop-building helpers.
class LoopGen {
public:
  LoopGen(const ir::Function &fn, const LoopKernelDesc &desc, const CompileOptions &opts,
          const std::string &symbol, const std::vector<std::string> &argNames, ValueNames names)
      : fn(fn), impl(detail::newModule(opts, symbol, names)), M(*impl->module, opts), b(M.ctx),
        host(opts.backend == Backend::Host) {
    detail::checkSymbol(symbol, fn);
    M.loopKernel = true;
    M.uniqueName(symbol);
    body = M.bodyFor(fn);
    std::vector<const ir::Type *> params = loopKernelParams(desc, fn.argTypes);
    entry = detail::buildEntry(*impl->module, b, opts.backend, detail::EntryKind::Kernel, symbol,
                               params, argNames, buildPackingPlan(params));
    i64 = b.getInt64Ty();
  }

  const ir::Function &fn;
  std::unique_ptr<LoweredModule::Impl> impl;
  detail::ModuleLowerer M;
  llvm::IRBuilder<> b;
  bool host;
  llvm::Function *body = nullptr;
  detail::KernelEntry entry;
  llvm::Type *i64 = nullptr;

  llvm::Value *arg(size_t k) const { return entry.args.at(k); }
  /// Field `field` (1: shape, 2: strides) entry `dim` of array value `a`.
  llvm::Value *dim(llvm::Value *a, unsigned field, int d) {
    return b.CreateExtractValue(a, {field, unsigned(d)});
  }

  llvm::AllocaInst *var(llvm::Type *t, const char *name) {
    llvm::BasicBlock &first = entry.function->getEntryBlock();
    llvm::IRBuilder<> eb(&first, first.begin());
    return eb.CreateAlloca(t, nullptr, name);
  }

  /// CUDA: a special register (r: 0 tid, 1 ntid, 2 ctaid, 3 nctaid; x only) as i64. Host: the
  /// same field of the HostThreadCtx.
  llvm::Value *sreg(int r) {
    if (host) {
      llvm::Value *p = b.CreateConstInBoundsGEP1_32(b.getInt32Ty(), entry.hostCtx, r * 3);
      return b.CreateZExt(b.CreateAlignedLoad(b.getInt32Ty(), p, llvm::Align(4)), i64);
    }
    static const llvm::Intrinsic::ID ids[4] = {
        llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x,
        llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x};
    return b.CreateZExt(b.CreateCall(llvm::Intrinsic::getDeclaration(impl->module.get(), ids[r])),
                        i64);
  }

  /// The range of iterations [begin, end) with `step` this thread runs over `count` items:
  /// CUDA grid-stride; host: block b's contiguous chunk.
  void iterationSpace(llvm::Value *count, llvm::Value *&begin, llvm::Value *&end,
                      llvm::Value *&step) {
    if (host) {
      llvm::Value *nb = sreg(3), *bi = sreg(2);
      llvm::Value *chunk = b.CreateUDiv(b.CreateAdd(count, b.CreateSub(nb, b.getInt64(1))), nb);
      begin = b.CreateMul(bi, chunk);
      llvm::Value *stop = b.CreateAdd(begin, chunk);
      end = b.CreateSelect(b.CreateICmpULT(stop, count), stop, count);
      step = b.getInt64(1);
    } else {
      begin = b.CreateAdd(b.CreateMul(sreg(2), sreg(1)), sreg(0));
      end = count;
      step = b.CreateMul(sreg(1), sreg(3));
    }
  }

  /// Emits `for (i = begin; i < end; i += step) body(i)` (unsigned compare); returns the value
  /// of i after the loop.
  template <typename Body>
  llvm::Value *loop(llvm::Value *begin, llvm::Value *end, llvm::Value *step, const char *name,
                    Body fn) {
    llvm::AllocaInst *iv = var(i64, name);
    b.CreateStore(begin, iv);
    llvm::Function *f = entry.function;
    auto *head = llvm::BasicBlock::Create(M.ctx, std::string(name) + ".head", f);
    auto *bodyBB = llvm::BasicBlock::Create(M.ctx, std::string(name) + ".body", f);
    auto *exit = llvm::BasicBlock::Create(M.ctx, std::string(name) + ".exit", f);
    b.CreateBr(head);
    b.SetInsertPoint(head);
    llvm::Value *i = b.CreateLoad(i64, iv);
    b.CreateCondBr(b.CreateICmpULT(i, end), bodyBB, exit);
    b.SetInsertPoint(bodyBB);
    fn(i);
    b.CreateStore(b.CreateAdd(b.CreateLoad(i64, iv), step), iv);
    b.CreateBr(head);
    b.SetInsertPoint(exit);
    return b.CreateLoad(i64, iv);
  }

  /// `for (i = begin; i < end; i += step) one(i)` with `unroll` iterations per trip while all of
  /// them are below `end`: `many(at)` builds such a trip, `at(u)` giving its iteration u (i +
  /// u * step), so that the caller orders the trip's work (its loads first); then `one` for the
  /// rest. unroll <= 1: the plain loop.
  template <typename Many, typename One>
  void unrolledLoop(llvm::Value *begin, llvm::Value *end, llvm::Value *step, int unroll,
                    const char *name, Many many, One one) {
    if (unroll > 1) {
      llvm::Value *span = b.CreateMul(step, b.getInt64(unroll - 1));
      llvm::Value *mainEnd =
          b.CreateSelect(b.CreateICmpUGT(end, span), b.CreateSub(end, span), b.getInt64(0));
      std::string unrolled = std::string(name) + "u";
      begin = loop(begin, mainEnd, b.CreateMul(step, b.getInt64(unroll)), unrolled.c_str(),
                   [&](llvm::Value *i) {
                     many([&](int u) {
                       return u == 0 ? i : b.CreateAdd(i, b.CreateMul(step, b.getInt64(u)));
                     });
                   });
    }
    loop(begin, end, step, name, one);
  }

  /// Byte offsets of flat index `i` over `shape` (C order) for each stride list.
  std::vector<llvm::Value *> offsets(llvm::Value *i, const std::vector<llvm::Value *> &shape,
                                     const std::vector<std::vector<llvm::Value *>> &strides) {
    std::vector<llvm::Value *> off(strides.size(), b.getInt64(0));
    if (shape.empty())
      return off;
    llvm::Value *rem = i;
    for (size_t d = shape.size(); d-- > 0;) {
      llvm::Value *idx = d == 0 ? rem : b.CreateURem(rem, shape[d]);
      if (d > 0)
        rem = b.CreateUDiv(rem, shape[d]);
      for (size_t k = 0; k < strides.size(); ++k)
        off[k] = b.CreateAdd(off[k], b.CreateMul(idx, strides[k][d]));
    }
    return off;
  }

  /// Calls the device function with register values `args` (plus the host context).
  llvm::Value *callBody(std::vector<llvm::Value *> args) {
    if (host)
      args.push_back(entry.hostCtx);
    return b.CreateCall(body, args);
  }

  LoweredModule finish() {
    b.CreateRetVoid();
    M.lowerQueued();
    M.inlineSingleCalls();
    // The fault record's name and the host launch facts (a body that raises ends the thread).
    M.finishCuda(impl->entry, fn);
    if (M.cuda.gridSync) // a loop's elements are spread over no fixed grid
      ir::raiseDiag(ir::DiagCode::UnsupportedConstruct, fn.filename,
                    ir::SourceLoc{fn.firstLine, 0, 0, 0},
                    {"cuda.cg grid synchronization in a ufunc body (@vectorize/@guvectorize)"});
    detail::verifyModule(*impl->module, fn);
    impl->links = std::move(M.links);
    impl->raiseSites = std::move(M.raiseSites);
    return LoweredModule(std::move(impl));
  }
};

struct ArrayOperand {
  llvm::Value *data = nullptr;
  std::vector<llvm::Value *> strides;     ///< over the loop dimensions
  std::vector<llvm::Value *> coreShape;   ///< gufunc
  std::vector<llvm::Value *> coreStrides; ///< gufunc
};

LoweredModule lowerElementwise(const ir::Function &fn, const ElementwiseKernelDesc &desc,
                               const CompileOptions &opts, const std::string &symbol,
                               ValueNames valueNames) {
  size_t nparams = fn.argTypes.size();
  size_t nops = desc.operands.size();
  LoopKernelDesc key;
  key.elementwise = desc;
  std::vector<std::string> names{"n"};
  for (size_t k = 0; k < nops; ++k)
    names.push_back("op" + std::to_string(k));
  LoopGen g(fn, key, opts, symbol, names, valueNames);
  auto &b = g.b;
  int L = desc.flat ? 0 : desc.loopDims;

  std::vector<ArrayOperand> arrays(nops);
  std::vector<std::vector<llvm::Value *>> strideLists;
  std::vector<size_t> strideOwner;
  std::vector<llvm::Value *> shape; // the loop shape, from the first array operand
  for (size_t k = 0; k < nops; ++k) {
    const LoopOperand &op = desc.operands[k];
    if (op.kind == LoopOperand::Kind::Scalar)
      continue;
    llvm::Value *a = g.arg(k + 1);
    ArrayOperand &ao = arrays[k];
    ao.data = b.CreateExtractValue(a, 0);
    for (int d = 0; d < L; ++d)
      ao.strides.push_back(g.dim(a, 2, d));
    for (int d = 0; d < op.coreDims; ++d) {
      ao.coreShape.push_back(g.dim(a, 1, L + d));
      ao.coreStrides.push_back(g.dim(a, 2, L + d));
    }
    if (op.coreDims > 0 && op.unitCoreStride) // the caller checked it (LoopOperand)
      ao.coreStrides.back() = b.getInt64(op.elemType->byteSize());
    if (shape.empty())
      for (int d = 0; d < L; ++d)
        shape.push_back(g.dim(a, 1, d));
    strideLists.push_back(ao.strides);
    strideOwner.push_back(k);
  }
  if (L > 0 && shape.empty())
    detail::internalError("ufunc loop: a strided loop without array operands");

  // One iteration in two halves: the body's arguments for element i (the operands' loads),
  // then the call and the store of its result.
  auto offsetsOf = [&](llvm::Value *i) {
    std::vector<llvm::Value *> off(nops, nullptr);
    if (desc.flat) {
      for (size_t k = 0; k < nops; ++k)
        if (desc.operands[k].kind == LoopOperand::Kind::Array)
          off[k] = b.CreateMul(i, b.getInt64(desc.operands[k].elemType->byteSize()));
    } else {
      std::vector<llvm::Value *> o = g.offsets(i, shape, strideLists);
      for (size_t s = 0; s < o.size(); ++s)
        off[strideOwner[s]] = o[s];
    }
    return off;
  };
  auto argumentsAt = [&](const std::vector<llvm::Value *> &off) {
    std::vector<llvm::Value *> args;
    for (size_t k = 0; k < nparams; ++k) {
      const LoopOperand &op = desc.operands[k];
      if (op.kind == LoopOperand::Kind::Scalar) {
        args.push_back(g.arg(k + 1));
        continue;
      }
      llvm::Value *p = b.CreateInBoundsGEP(b.getInt8Ty(), arrays[k].data, off[k]);
      const ir::Type *pt = ir::concretize(fn.argTypes[k]);
      if (const auto *st = ir::dyn_cast<ScalarType>(pt)) {
        args.push_back(castScalar(b, loadScalar(b, p, op.elemType), op.elemType, st));
        continue;
      }
      const auto *at = ir::dyn_cast<ir::ArrayType>(pt);
      if (!at || at->dtype() != op.elemType)
        detail::internalError("ufunc loop: operand " + std::to_string(k) + " of '" + fn.name +
                              "' does not match parameter type " + pt->str());
      // The core array the function sees: its own shape and strides, or one element.
      std::vector<llvm::Value *> cs = arrays[k].coreShape, cst = arrays[k].coreStrides;
      if (op.coreDims == 0 && at->ndim() == 1) {
        cs = {b.getInt64(1)};
        cst = {b.getInt64(op.elemType->byteSize())};
      } else if (op.coreDims != at->ndim()) {
        detail::internalError("ufunc loop: operand " + std::to_string(k) + " has " +
                              std::to_string(op.coreDims) + " core dimensions for parameter " +
                              pt->str());
      }
      if (op.coreAlign > 0) // the caller checked the address and strides (LoopOperand)
        b.CreateAlignmentAssumption(g.M.mod.getDataLayout(), p, op.coreAlign);
      llvm::Value *v = llvm::PoisonValue::get(detail::arrayValueType(g.M.ctx, at->ndim()));
      v = b.CreateInsertValue(v, p, 0);
      for (int d = 0; d < at->ndim(); ++d) {
        v = b.CreateInsertValue(v, cs[d], {1u, unsigned(d)});
        v = b.CreateInsertValue(v, cst[d], {2u, unsigned(d)});
      }
      args.push_back(v);
    }
    return args;
  };
  auto callAndStore = [&](const std::vector<llvm::Value *> &off, std::vector<llvm::Value *> args) {
    llvm::Value *r = g.callBody(std::move(args));
    if (!desc.returnsValue)
      return;
    const LoopOperand &out = desc.operands.back();
    const auto *rt = ir::dyn_cast<ScalarType>(ir::concretize(ir::intEnumAsInt(fn.returnType)));
    if (!rt || out.kind != LoopOperand::Kind::Array)
      detail::internalError("ufunc loop: '" + fn.name + "' does not return a scalar");
    llvm::Value *p = b.CreateInBoundsGEP(b.getInt8Ty(), arrays[nops - 1].data, off[nops - 1]);
    storeScalar(b, p, castScalar(b, r, rt, out.elemType), out.elemType);
  };
  auto iteration = [&](llvm::Value *i) {
    std::vector<llvm::Value *> off = offsetsOf(i);
    callAndStore(off, argumentsAt(off));
  };

  llvm::Value *begin, *end, *step;
  g.iterationSpace(g.arg(0), begin, end, step);
  if (g.host || !desc.flat || !streamingBody(fn)) {
    g.loop(begin, end, step, "i", iteration);
    return g.finish();
  }
  // CUDA, contiguous operands, a streaming body: kFlatUnroll elements per trip of the
  // grid-stride loop, all their loads before any call or store, so that each thread has that
  // many loads of each operand in flight (what a streaming loop needs to approach the copy
  // bandwidth: from 86.5% to 92.0% for a float32 add of 2^26 elements on the H200). LLVM would
  // not hoist them itself: an output may be an input. That order is safe: an output that is an
  // input (`out=a`) is read and written at the same element by one iteration, in order; an
  // output overlapping an input at another offset is a race between the threads of a launch
  // anyway (NumPy gives such a call the inputs' old values, as if copied, which this order also
  // gives within a thread). The remaining elements run one per trip.
  g.unrolledLoop(
      begin, end, step, kFlatUnroll, "i",
      [&](auto at) {
        std::vector<std::vector<llvm::Value *>> offs, args;
        for (int u = 0; u < kFlatUnroll; ++u) {
          offs.push_back(offsetsOf(at(u)));
          args.push_back(argumentsAt(offs.back()));
        }
        for (int u = 0; u < kFlatUnroll; ++u)
          callAndStore(offs[u], args[u]);
      },
      iteration);
  return g.finish();
}

LoweredModule lowerReduce(const ir::Function &fn, const ReduceKernelDesc &desc,
                          const CompileOptions &opts, const std::string &symbol, ValueNames names) {
  const ScalarType *acc = desc.accType;
  const auto *rt = ir::dyn_cast<ScalarType>(ir::concretize(ir::intEnumAsInt(fn.returnType)));
  if (!rt)
    detail::internalError("reduce loop: '" + fn.name + "' does not return a scalar");
  unsigned B = desc.blockSize;
  if (B == 0 || (B & (B - 1)) || B > 1024)
    detail::internalError("reduce loop: the block size must be a power of two <= 1024");
  LoopKernelDesc key;
  key.kind = LoopKernelDesc::Kind::Reduce;
  key.reduce = desc;
  LoopGen g(fn, key, opts, symbol, {"M", "K", "P", "in", "out", "outPartStride"}, names);
  auto &b = g.b;
  int nk = desc.keptDims, nr = desc.reducedDims;

  llvm::Value *M = g.arg(0), *K = g.arg(1), *P = g.arg(2);
  llvm::Value *inArr = g.arg(3), *outArr = g.arg(4), *outPart = g.arg(5);
  llvm::Value *in = b.CreateExtractValue(inArr, 0), *out = b.CreateExtractValue(outArr, 0);
  std::vector<llvm::Value *> keptShape, redShape, inKept, inRed, outKept;
  for (int d = 0; d < nk; ++d) {
    keptShape.push_back(g.dim(inArr, 1, d));
    inKept.push_back(g.dim(inArr, 2, d));
    outKept.push_back(g.dim(outArr, 2, d));
  }
  for (int d = nk; d < nk + nr; ++d) {
    redShape.push_back(g.dim(inArr, 1, d));
    inRed.push_back(g.dim(inArr, 2, d));
  }

  llvm::Type *accReg = detail::registerType(g.M.ctx, acc);
  // f(a, b) on register values of the accumulator type, converted back to it.
  auto combine = [&](llvm::Value *a, llvm::Value *x) {
    return castScalar(b, g.callBody({a, x}), rt, acc);
  };
  llvm::AllocaInst *accVar = g.var(accReg, "acc");
  llvm::Function *f = g.entry.function;
  // Element k of the reduced dimensions past `inBase`, as the accumulator type.
  auto elementAt = [&](llvm::Value *inBase, llvm::Value *k) {
    llvm::Value *off = g.offsets(k, redShape, {inRed})[0];
    llvm::Value *p = b.CreateInBoundsGEP(b.getInt8Ty(), in, b.CreateAdd(inBase, off));
    return castScalar(b, loadScalar(b, p, desc.inType), desc.inType, acc);
  };
  // Folds the elements first, first + step, ... below `end` into the accumulator from left to
  // right: the first one starts it (there is no identity to start from), the others come
  // `unroll` per trip of the main loop, all loaded before any is folded (the order of the folds
  // is the same either way). Returns whether there was an element (first < end); without one
  // the accumulator is left as it was.
  auto foldRange = [&](llvm::Value *inBase, llvm::Value *first, llvm::Value *end, llvm::Value *step,
                       int unroll) {
    llvm::Value *any = b.CreateICmpULT(first, end);
    auto *start = llvm::BasicBlock::Create(g.M.ctx, "fold.first", f);
    auto *folded = llvm::BasicBlock::Create(g.M.ctx, "folded", f);
    b.CreateCondBr(any, start, folded);
    b.SetInsertPoint(start);
    b.CreateStore(elementAt(inBase, first), accVar);
    g.unrolledLoop(
        b.CreateAdd(first, step), end, step, unroll, "k",
        [&](auto at) {
          std::vector<llvm::Value *> xs;
          for (int u = 0; u < unroll; ++u)
            xs.push_back(elementAt(inBase, at(u)));
          llvm::Value *a = b.CreateLoad(accReg, accVar);
          for (llvm::Value *x : xs)
            a = combine(a, x);
          b.CreateStore(a, accVar);
        },
        [&](llvm::Value *k) {
          b.CreateStore(combine(b.CreateLoad(accReg, accVar), elementAt(inBase, k)), accVar);
        });
    b.CreateBr(folded);
    b.SetInsertPoint(folded);
    return any;
  };

  llvm::Value *tasks = b.CreateMul(M, P);
  if (g.host) {
    llvm::Value *begin, *end, *step;
    g.iterationSpace(tasks, begin, end, step);
    g.loop(begin, end, step, "t", [&](llvm::Value *t) {
      llvm::Value *j = b.CreateUDiv(t, P), *p = b.CreateURem(t, P);
      auto o = g.offsets(j, keptShape, {inKept, outKept});
      llvm::Value *chunk = b.CreateUDiv(b.CreateAdd(K, b.CreateSub(P, b.getInt64(1))), P);
      llvm::Value *kb = b.CreateMul(p, chunk);
      llvm::Value *ke = b.CreateAdd(kb, chunk);
      ke = b.CreateSelect(b.CreateICmpULT(ke, K), ke, K);
      foldRange(o[0], kb, ke, b.getInt64(1), 1);
      llvm::Value *dst =
          b.CreateInBoundsGEP(b.getInt8Ty(), out, b.CreateAdd(o[1], b.CreateMul(p, outPart)));
      storeScalar(b, dst, castScalar(b, b.CreateLoad(accReg, accVar), acc, desc.outType),
                  desc.outType);
    });
    return g.finish();
  }

  // CUDA: block-per-task grid-stride loop, a strided fold per thread, a shared-memory tree.
  // A streaming function (an add, a max) takes its elements kReduceUnroll at a time; one that
  // computes would pay registers for the copies, as lowerElementwise's loops would.
  const int unroll = streamingBody(fn) ? kReduceUnroll : 1;
  llvm::Module &mod = *g.impl->module;
  llvm::Type *accMem = detail::memoryType(g.M.ctx, acc);
  auto *sharedTy = llvm::ArrayType::get(accMem, B);
  auto *sAcc = new llvm::GlobalVariable(mod, sharedTy, false, llvm::GlobalValue::InternalLinkage,
                                        llvm::PoisonValue::get(sharedTy), symbol + "_acc", nullptr,
                                        llvm::GlobalValue::NotThreadLocal, 3);
  sAcc->setAlignment(llvm::Align(16));
  auto *validTy = llvm::ArrayType::get(b.getInt8Ty(), B);
  auto *sValid = new llvm::GlobalVariable(mod, validTy, false, llvm::GlobalValue::InternalLinkage,
                                          llvm::PoisonValue::get(validTy), symbol + "_valid",
                                          nullptr, llvm::GlobalValue::NotThreadLocal, 3);
  llvm::Function *barrier = llvm::Intrinsic::getDeclaration(&mod, llvm::Intrinsic::nvvm_barrier0);
  llvm::Value *tid = g.sreg(0);
  auto sAccAt = [&](llvm::Value *idx) {
    return b.CreateInBoundsGEP(sharedTy, sAcc, {b.getInt64(0), idx});
  };
  auto sValidAt = [&](llvm::Value *idx) {
    return b.CreateInBoundsGEP(validTy, sValid, {b.getInt64(0), idx});
  };
  g.loop(g.sreg(2), tasks, g.sreg(3), "t", [&](llvm::Value *t) {
    llvm::Value *j = b.CreateUDiv(t, P), *p = b.CreateURem(t, P);
    auto o = g.offsets(j, keptShape, {inKept, outKept});
    // The thread's elements kb, kb + stride, ...: `unroll` loads in flight per thread (a fold
    // with one load per trip reached half the copy bandwidth on the H200). A thread without
    // elements has no value (isValid).
    llvm::Value *kb = b.CreateAdd(b.CreateMul(p, b.getInt64(B)), tid);
    llvm::Value *isValid = foldRange(o[0], kb, K, b.CreateMul(P, b.getInt64(B)), unroll);
    b.CreateStore(b.CreateZExt(isValid, b.getInt8Ty()), sValidAt(tid));
    llvm::Value *a = b.CreateLoad(accReg, accVar);
    storeScalar(b, sAccAt(tid),
                b.CreateSelect(isValid, a, llvm::Constant::getNullValue(a->getType())), acc);
    b.CreateCall(barrier);
    for (unsigned s = B / 2; s > 0; s /= 2) {
      auto *lower = llvm::BasicBlock::Create(g.M.ctx, "tree.lower", f);
      auto *act = llvm::BasicBlock::Create(g.M.ctx, "tree", f);
      auto *both = llvm::BasicBlock::Create(g.M.ctx, "tree.both", f);
      auto *copy = llvm::BasicBlock::Create(g.M.ctx, "tree.copy", f);
      auto *next = llvm::BasicBlock::Create(g.M.ctx, "tree.next", f);
      b.CreateCondBr(b.CreateICmpULT(tid, b.getInt64(s)), lower, next);
      b.SetInsertPoint(lower);
      llvm::Value *other = b.CreateAdd(tid, b.getInt64(s));
      llvm::Value *otherValid =
          b.CreateICmpNE(b.CreateLoad(b.getInt8Ty(), sValidAt(other)), b.getInt8(0));
      b.CreateCondBr(otherValid, act, next);
      b.SetInsertPoint(act);
      llvm::Value *mine = b.CreateICmpNE(b.CreateLoad(b.getInt8Ty(), sValidAt(tid)), b.getInt8(0));
      b.CreateCondBr(mine, both, copy);
      b.SetInsertPoint(both);
      storeScalar(b, sAccAt(tid),
                  combine(loadScalar(b, sAccAt(tid), acc), loadScalar(b, sAccAt(other), acc)), acc);
      b.CreateBr(next);
      b.SetInsertPoint(copy);
      storeScalar(b, sAccAt(tid), loadScalar(b, sAccAt(other), acc), acc);
      b.CreateStore(b.getInt8(1), sValidAt(tid));
      b.CreateBr(next);
      b.SetInsertPoint(next);
      b.CreateCall(barrier);
    }
    auto *write = llvm::BasicBlock::Create(g.M.ctx, "write", f);
    auto *done = llvm::BasicBlock::Create(g.M.ctx, "written", f);
    llvm::Value *zeroValid =
        b.CreateICmpNE(b.CreateLoad(b.getInt8Ty(), sValidAt(b.getInt64(0))), b.getInt8(0));
    b.CreateCondBr(b.CreateAnd(b.CreateICmpEQ(tid, b.getInt64(0)), zeroValid), write, done);
    b.SetInsertPoint(write);
    llvm::Value *dst =
        b.CreateInBoundsGEP(b.getInt8Ty(), out, b.CreateAdd(o[1], b.CreateMul(p, outPart)));
    storeScalar(b, dst, castScalar(b, loadScalar(b, sAccAt(b.getInt64(0)), acc), acc, desc.outType),
                desc.outType);
    b.CreateBr(done);
    b.SetInsertPoint(done);
    // The next task reuses the shared arrays.
    b.CreateCall(barrier);
  });
  return g.finish();
}

} // namespace

LoweredModule lowerLoopKernel(const ir::Function &fn, const LoopKernelDesc &desc,
                              const CompileOptions &opts, const std::string &symbol,
                              ValueNames names) {
  if (desc.kind == LoopKernelDesc::Kind::Reduce)
    return lowerReduce(fn, desc.reduce, opts, symbol, names);
  return lowerElementwise(fn, desc.elementwise, opts, symbol, names);
}

} // namespace ptxjit::codegen
