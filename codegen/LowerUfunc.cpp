// Loop kernels for ufuncs (see codegen/UfuncKernels.h): the scalar or core function is lowered
// as a device function, then an entry around it walks the iteration space.
#include "codegen/UfuncKernels.h"

#include "codegen/ModuleImpl.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <string>

namespace ptxjit::codegen {
namespace {

using ir::ScalarType;
using ir::TypeKind;

/// Builds one entry function around the device function of a lowered module.
class LoopGen {
public:
  LoopGen(LoweredModule &m, const ir::Function &fn, const std::string &symbol)
      : mod(*m.impl()->module), ctx(mod.getContext()), host(m.backend() == Backend::Host), fn(fn),
        b(ctx), symbol(symbol) {
    i8 = b.getInt8Ty();
    i32 = b.getInt32Ty();
    i64 = b.getInt64Ty();
    ptr = llvm::PointerType::getUnqual(ctx);
    dev = mod.getFunction(m.entrySymbol());
    if (!dev)
      detail::internalError("ufunc loop: the device function is missing from its module");
    // Only the loop entry stays visible; the device function can be inlined into it.
    dev->setLinkage(llvm::GlobalValue::InternalLinkage);
  }

  llvm::Module &mod;
  llvm::LLVMContext &ctx;
  bool host;
  const ir::Function &fn;
  llvm::IRBuilder<> b;
  std::string symbol;
  llvm::Type *i8, *i32, *i64, *ptr;
  llvm::Function *dev;
  llvm::Function *entry = nullptr;
  llvm::Value *ctxArg = nullptr; ///< host: the HostThreadCtx pointer
  llvm::BasicBlock *allocas = nullptr;

  // ---- types and values ----

  llvm::Type *partType(const ScalarType *t) {
    return t->bits() == 64 ? llvm::Type::getFloatTy(ctx) : llvm::Type::getDoubleTy(ctx);
  }
  /// The type of a value in registers (bool → i1, complex → {T, T}).
  llvm::Type *regType(const ScalarType *t) {
    switch (t->kind()) {
    case TypeKind::Bool:
      return b.getInt1Ty();
    case TypeKind::Int:
      return b.getIntNTy(t->bits());
    case TypeKind::Float:
      return t->bits() == 32 ? llvm::Type::getFloatTy(ctx) : llvm::Type::getDoubleTy(ctx);
    case TypeKind::Complex:
      return llvm::StructType::get(ctx, {partType(t), partType(t)});
    default:
      detail::internalError("ufunc loop: a non-scalar element type " + t->str());
    }
  }
  /// The type of an element in memory (bool → i8).
  llvm::Type *memType(const ScalarType *t) { return t->kind() == TypeKind::Bool ? i8 : regType(t); }
  llvm::Align align(const ScalarType *t) {
    return llvm::Align(t->kind() == TypeKind::Complex ? t->byteSize() / 2 : t->byteSize());
  }
  llvm::Value *load(llvm::Value *p, const ScalarType *t) {
    llvm::Value *v = b.CreateAlignedLoad(memType(t), p, align(t));
    return t->kind() == TypeKind::Bool ? b.CreateICmpNE(v, b.getInt8(0)) : v;
  }
  void store(llvm::Value *p, llvm::Value *v, const ScalarType *t) {
    if (t->kind() == TypeKind::Bool)
      v = b.CreateZExt(v, i8);
    b.CreateAlignedStore(v, p, align(t));
  }

  llvm::Value *toFloat(llvm::Value *v, const ScalarType *from, llvm::Type *to) {
    switch (from->kind()) {
    case TypeKind::Bool:
      return b.CreateUIToFP(v, to);
    case TypeKind::Int:
      return from->isSigned() ? b.CreateSIToFP(v, to) : b.CreateUIToFP(v, to);
    case TypeKind::Float:
      return b.CreateFPCast(v, to);
    case TypeKind::Complex:
      return b.CreateFPCast(b.CreateExtractValue(v, 0), to);
    default:
      detail::internalError("ufunc loop: bad conversion source " + from->str());
    }
  }

  /// NumPy's cast of register value `v` from `from` to `to`.
  llvm::Value *convert(llvm::Value *v, const ScalarType *from, const ScalarType *to) {
    if (from == to)
      return v;
    switch (to->kind()) {
    case TypeKind::Bool:
      switch (from->kind()) {
      case TypeKind::Int:
        return b.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
      case TypeKind::Float:
        return b.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0));
      case TypeKind::Complex: {
        llvm::Value *re = b.CreateExtractValue(v, 0), *im = b.CreateExtractValue(v, 1);
        llvm::Value *zero = llvm::ConstantFP::get(re->getType(), 0.0);
        return b.CreateOr(b.CreateFCmpUNE(re, zero), b.CreateFCmpUNE(im, zero));
      }
      default:
        break;
      }
      break;
    case TypeKind::Int: {
      llvm::Type *t = regType(to);
      switch (from->kind()) {
      case TypeKind::Bool:
        return b.CreateZExt(v, t);
      case TypeKind::Int:
        return b.CreateIntCast(v, t, from->isSigned());
      case TypeKind::Complex:
        v = b.CreateExtractValue(v, 0);
        [[fallthrough]];
      case TypeKind::Float:
        return to->isSigned() ? b.CreateFPToSI(v, t) : b.CreateFPToUI(v, t);
      default:
        break;
      }
      break;
    }
    case TypeKind::Float:
      return toFloat(v, from, regType(to));
    case TypeKind::Complex: {
      llvm::Type *part = partType(to);
      llvm::Value *re, *im;
      if (from->kind() == TypeKind::Complex) {
        re = b.CreateFPCast(b.CreateExtractValue(v, 0), part);
        im = b.CreateFPCast(b.CreateExtractValue(v, 1), part);
      } else {
        re = toFloat(v, from, part);
        im = llvm::ConstantFP::get(part, 0.0);
      }
      llvm::Value *c = llvm::PoisonValue::get(regType(to));
      c = b.CreateInsertValue(c, re, 0);
      return b.CreateInsertValue(c, im, 1);
    }
    default:
      break;
    }
    detail::internalError("ufunc loop: cannot convert " + from->str() + " to " + to->str());
  }

  /// Appends the flattened device-function arguments of scalar register value `v`.
  void flattenScalar(llvm::Value *v, const ScalarType *t, std::vector<llvm::Value *> &out) {
    if (t->kind() == TypeKind::Bool) {
      out.push_back(b.CreateZExt(v, i8));
    } else if (t->kind() == TypeKind::Complex) {
      out.push_back(b.CreateExtractValue(v, 0));
      out.push_back(b.CreateExtractValue(v, 1));
    } else {
      out.push_back(v);
    }
  }
  /// The number of flattened parameters of a scalar type.
  static int flatCount(const ScalarType *t) { return t->kind() == TypeKind::Complex ? 2 : 1; }

  /// The concrete scalar type of parameter k, or null when it is an array.
  const ScalarType *paramScalar(size_t k) {
    return ir::dyn_cast<ScalarType>(ir::concretize(fn.argTypes[k]));
  }

  // ---- the entry ----

  /// Creates the entry taking `types` and returns their values (host: loaded from args[]).
  std::vector<llvm::Value *> beginEntry(const std::vector<llvm::Type *> &types) {
    std::vector<llvm::Value *> vals;
    if (!host) {
      entry = llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), types, false),
                                     llvm::GlobalValue::ExternalLinkage, symbol, mod);
      allocas = llvm::BasicBlock::Create(ctx, "entry", entry);
      b.SetInsertPoint(allocas);
      for (size_t k = 0; k < types.size(); ++k)
        vals.push_back(entry->getArg(k));
      llvm::Metadata *md[] = {llvm::ValueAsMetadata::get(entry), llvm::MDString::get(ctx, "kernel"),
                              llvm::ConstantAsMetadata::get(b.getInt32(1))};
      mod.getOrInsertNamedMetadata("nvvm.annotations")->addOperand(llvm::MDNode::get(ctx, md));
    } else {
      entry = llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr}, false),
                                     llvm::GlobalValue::ExternalLinkage, symbol, mod);
      allocas = llvm::BasicBlock::Create(ctx, "entry", entry);
      b.SetInsertPoint(allocas);
      llvm::Value *argv = entry->getArg(0);
      ctxArg = entry->getArg(1);
      for (size_t k = 0; k < types.size(); ++k) {
        llvm::Value *slot =
            b.CreateAlignedLoad(ptr, b.CreateConstInBoundsGEP1_64(ptr, argv, k), llvm::Align(8));
        vals.push_back(b.CreateLoad(types[k], slot));
      }
    }
    return vals;
  }

  llvm::AllocaInst *var(llvm::Type *t, const char *name) {
    llvm::IRBuilder<> eb(allocas, allocas->begin());
    return eb.CreateAlloca(t, nullptr, name);
  }

  /// CUDA: a special register (r: 0 tid, 1 ntid, 2 ctaid, 3 nctaid; x only) as i64. Host: the
  /// same field of the HostThreadCtx.
  llvm::Value *sreg(int r) {
    if (host) {
      llvm::Value *p = b.CreateConstInBoundsGEP1_32(i32, ctxArg, r * 3);
      return b.CreateZExt(b.CreateAlignedLoad(i32, p, llvm::Align(4)), i64);
    }
    static const llvm::Intrinsic::ID ids[4] = {
        llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x,
        llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x};
    return b.CreateZExt(b.CreateCall(llvm::Intrinsic::getDeclaration(&mod, ids[r])), i64);
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

  /// Emits `for (i = begin; i < end; i += step) body(i)` (unsigned compare).
  template <typename Body>
  void loop(llvm::Value *begin, llvm::Value *end, llvm::Value *step, const char *name, Body body) {
    llvm::AllocaInst *iv = var(i64, name);
    b.CreateStore(begin, iv);
    auto *head = llvm::BasicBlock::Create(ctx, std::string(name) + ".head", entry);
    auto *bodyBB = llvm::BasicBlock::Create(ctx, std::string(name) + ".body", entry);
    auto *exit = llvm::BasicBlock::Create(ctx, std::string(name) + ".exit", entry);
    b.CreateBr(head);
    b.SetInsertPoint(head);
    llvm::Value *i = b.CreateLoad(i64, iv);
    b.CreateCondBr(b.CreateICmpULT(i, end), bodyBB, exit);
    b.SetInsertPoint(bodyBB);
    body(i);
    b.CreateStore(b.CreateAdd(b.CreateLoad(i64, iv), step), iv);
    b.CreateBr(head);
    b.SetInsertPoint(exit);
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

  llvm::Value *callDevice(std::vector<llvm::Value *> args) {
    if (host)
      args.push_back(ctxArg);
    if (args.size() != dev->arg_size())
      detail::internalError("ufunc loop: the device function of '" + fn.name + "' takes " +
                            std::to_string(dev->arg_size()) + " parameters, the loop passes " +
                            std::to_string(args.size()));
    return b.CreateCall(dev, args);
  }

  void finish() {
    b.CreateRetVoid();
    std::string err;
    llvm::raw_string_ostream os(err);
    if (llvm::verifyModule(mod, &os)) {
      os.flush();
      detail::internalError("the generated ufunc loop for '" + fn.name + "' is invalid: " + err);
    }
  }
};

struct ArrayParams {
  llvm::Value *data = nullptr;
  std::vector<llvm::Value *> strides;     ///< loop strides
  std::vector<llvm::Value *> coreShape;   ///< gufunc
  std::vector<llvm::Value *> coreStrides; ///< gufunc
};

} // namespace

LoweredModule lowerElementwiseKernel(const ir::Function &fn, const ElementwiseKernelDesc &desc,
                                     const CompileOptions &opts, const std::string &symbol) {
  size_t nparams = fn.argTypes.size();
  size_t nops = desc.operands.size();
  if (nops != nparams + (desc.returnsValue ? 1 : 0))
    detail::internalError("ufunc loop: " + std::to_string(nops) + " operands for '" + fn.name +
                          "' with " + std::to_string(nparams) + " parameters");
  LoweredModule m = lowerDeviceFunction(fn, opts, symbol + "_scalar");
  LoopGen g(m, fn, symbol);
  auto &b = g.b;
  int L = desc.flat ? 0 : desc.loopDims;

  // The parameter list.
  std::vector<llvm::Type *> types{g.i64};
  for (int d = 0; d < L; ++d)
    types.push_back(g.i64);
  for (size_t k = 0; k < nops; ++k) {
    const LoopOperand &op = desc.operands[k];
    if (op.kind == LoopOperand::Kind::Scalar) {
      const ScalarType *st = k < nparams ? g.paramScalar(k) : nullptr;
      if (!st)
        detail::internalError("ufunc loop: scalar operand " + std::to_string(k) +
                              " without a scalar parameter");
      if (st->kind() == TypeKind::Bool)
        types.push_back(g.i8);
      else if (st->kind() == TypeKind::Complex)
        types.insert(types.end(), 2, g.partType(st));
      else
        types.push_back(g.regType(st));
      continue;
    }
    types.push_back(g.ptr);
    for (int d = 0; d < L + 2 * op.coreDims; ++d)
      types.push_back(g.i64);
  }
  std::vector<llvm::Value *> vals = g.beginEntry(types);

  size_t pos = 0;
  llvm::Value *n = vals[pos++];
  std::vector<llvm::Value *> shape(vals.begin() + 1, vals.begin() + 1 + L);
  pos += L;
  std::vector<ArrayParams> arrays(nops);
  std::vector<std::vector<llvm::Value *>> scalars(nops);
  std::vector<std::vector<llvm::Value *>> strideLists;
  std::vector<size_t> strideOwner;
  for (size_t k = 0; k < nops; ++k) {
    const LoopOperand &op = desc.operands[k];
    if (op.kind == LoopOperand::Kind::Scalar) {
      int c = LoopGen::flatCount(g.paramScalar(k));
      scalars[k].assign(vals.begin() + pos, vals.begin() + pos + c);
      pos += c;
      continue;
    }
    ArrayParams &a = arrays[k];
    a.data = vals[pos++];
    a.strides.assign(vals.begin() + pos, vals.begin() + pos + L);
    pos += L;
    a.coreShape.assign(vals.begin() + pos, vals.begin() + pos + op.coreDims);
    pos += op.coreDims;
    a.coreStrides.assign(vals.begin() + pos, vals.begin() + pos + op.coreDims);
    pos += op.coreDims;
    strideLists.push_back(a.strides);
    strideOwner.push_back(k);
  }

  llvm::Value *begin, *end, *step;
  g.iterationSpace(n, begin, end, step);
  g.loop(begin, end, step, "i", [&](llvm::Value *i) {
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
    std::vector<llvm::Value *> args;
    for (size_t k = 0; k < nparams; ++k) {
      const LoopOperand &op = desc.operands[k];
      if (op.kind == LoopOperand::Kind::Scalar) {
        args.insert(args.end(), scalars[k].begin(), scalars[k].end());
        continue;
      }
      llvm::Value *p = b.CreateInBoundsGEP(g.i8, arrays[k].data, off[k]);
      const ir::Type *pt = ir::concretize(fn.argTypes[k]);
      if (const auto *st = ir::dyn_cast<ScalarType>(pt)) {
        g.flattenScalar(g.convert(g.load(p, op.elemType), op.elemType, st), st, args);
        continue;
      }
      const auto *at = ir::dyn_cast<ir::ArrayType>(pt);
      if (!at || at->dtype() != op.elemType)
        detail::internalError("ufunc loop: operand " + std::to_string(k) + " of '" + fn.name +
                              "' does not match parameter type " + pt->str());
      args.push_back(p);
      if (op.coreDims == at->ndim()) {
        args.insert(args.end(), arrays[k].coreShape.begin(), arrays[k].coreShape.end());
        args.insert(args.end(), arrays[k].coreStrides.begin(), arrays[k].coreStrides.end());
      } else if (op.coreDims == 0 && at->ndim() == 1) {
        args.push_back(b.getInt64(1));
        args.push_back(b.getInt64(op.elemType->byteSize()));
      } else {
        detail::internalError("ufunc loop: operand " + std::to_string(k) + " has " +
                              std::to_string(op.coreDims) + " core dimensions for parameter " +
                              pt->str());
      }
    }
    llvm::Value *r = g.callDevice(args);
    if (desc.returnsValue) {
      const LoopOperand &out = desc.operands.back();
      const auto *rt = ir::dyn_cast<ScalarType>(ir::concretize(fn.returnType));
      if (!rt || out.kind != LoopOperand::Kind::Array)
        detail::internalError("ufunc loop: '" + fn.name + "' does not return a scalar");
      llvm::Value *p = b.CreateInBoundsGEP(g.i8, arrays[nops - 1].data, off[nops - 1]);
      g.store(p, g.convert(r, rt, out.elemType), out.elemType);
    }
  });
  g.finish();
  m.impl()->entry = symbol;
  return m;
}

LoweredModule lowerReduceKernel(const ir::Function &fn, const ReduceKernelDesc &desc,
                                const CompileOptions &opts, const std::string &symbol) {
  const ScalarType *acc = desc.accType;
  if (fn.argTypes.size() != 2 || ir::concretize(fn.argTypes[0]) != acc ||
      ir::concretize(fn.argTypes[1]) != acc)
    detail::internalError("reduce loop: '" + fn.name + "' must take two " + acc->str());
  const auto *rt = ir::dyn_cast<ScalarType>(ir::concretize(fn.returnType));
  if (!rt)
    detail::internalError("reduce loop: '" + fn.name + "' does not return a scalar");
  unsigned B = desc.blockSize;
  if (B == 0 || (B & (B - 1)) || B > 1024)
    detail::internalError("reduce loop: the block size must be a power of two <= 1024");
  LoweredModule m = lowerDeviceFunction(fn, opts, symbol + "_scalar");
  LoopGen g(m, fn, symbol);
  auto &b = g.b;
  int nk = desc.keptDims, nr = desc.reducedDims;

  std::vector<llvm::Type *> types(3 + nk + nr, g.i64);
  types.push_back(g.ptr);
  types.insert(types.end(), nk + nr, g.i64);
  types.push_back(g.ptr);
  types.insert(types.end(), nk + 1, g.i64);
  std::vector<llvm::Value *> v = g.beginEntry(types);
  size_t pos = 0;
  auto take = [&](int count) {
    std::vector<llvm::Value *> r(v.begin() + pos, v.begin() + pos + count);
    pos += count;
    return r;
  };
  llvm::Value *M = v[pos++], *K = v[pos++], *P = v[pos++];
  auto keptShape = take(nk), redShape = take(nr);
  llvm::Value *in = v[pos++];
  auto inKept = take(nk), inRed = take(nr);
  llvm::Value *out = v[pos++];
  auto outKept = take(nk);
  llvm::Value *outPart = v[pos++];

  // f(a, b) on register values of the accumulator type, converted back to it.
  auto combine = [&](llvm::Value *a, llvm::Value *x) {
    std::vector<llvm::Value *> args;
    g.flattenScalar(a, acc, args);
    g.flattenScalar(x, acc, args);
    return g.convert(g.callDevice(args), rt, acc);
  };
  llvm::AllocaInst *accVar = g.var(g.regType(acc), "acc");
  llvm::AllocaInst *valid = g.var(b.getInt1Ty(), "valid");
  auto fold = [&](llvm::Value *inBase, llvm::Value *k) {
    llvm::Value *off = g.offsets(k, redShape, {inRed})[0];
    llvm::Value *p = b.CreateInBoundsGEP(g.i8, in, b.CreateAdd(inBase, off));
    llvm::Value *x = g.convert(g.load(p, desc.inType), desc.inType, acc);
    llvm::Value *isValid = b.CreateLoad(b.getInt1Ty(), valid);
    auto *doCombine = llvm::BasicBlock::Create(g.ctx, "combine", g.entry);
    auto *first = llvm::BasicBlock::Create(g.ctx, "first", g.entry);
    auto *join = llvm::BasicBlock::Create(g.ctx, "join", g.entry);
    b.CreateCondBr(isValid, doCombine, first);
    b.SetInsertPoint(doCombine);
    b.CreateStore(combine(b.CreateLoad(g.regType(acc), accVar), x), accVar);
    b.CreateBr(join);
    b.SetInsertPoint(first);
    b.CreateStore(x, accVar);
    b.CreateStore(b.getTrue(), valid);
    b.CreateBr(join);
    b.SetInsertPoint(join);
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
      b.CreateStore(b.getFalse(), valid);
      g.loop(kb, ke, b.getInt64(1), "k", [&](llvm::Value *k) { fold(o[0], k); });
      llvm::Value *dst = b.CreateInBoundsGEP(g.i8, out, b.CreateAdd(o[1], b.CreateMul(p, outPart)));
      g.store(dst, g.convert(b.CreateLoad(g.regType(acc), accVar), acc, desc.outType),
              desc.outType);
    });
    g.finish();
    m.impl()->entry = symbol;
    return m;
  }

  // CUDA: block-per-task grid-stride loop, a strided fold per thread, a shared-memory tree.
  llvm::Type *accMem = g.memType(acc);
  auto *sharedTy = llvm::ArrayType::get(accMem, B);
  auto *sAcc = new llvm::GlobalVariable(g.mod, sharedTy, false, llvm::GlobalValue::InternalLinkage,
                                        llvm::PoisonValue::get(sharedTy), symbol + "_acc", nullptr,
                                        llvm::GlobalValue::NotThreadLocal, 3);
  sAcc->setAlignment(llvm::Align(16));
  auto *validTy = llvm::ArrayType::get(g.i8, B);
  auto *sValid = new llvm::GlobalVariable(g.mod, validTy, false, llvm::GlobalValue::InternalLinkage,
                                          llvm::PoisonValue::get(validTy), symbol + "_valid",
                                          nullptr, llvm::GlobalValue::NotThreadLocal, 3);
  llvm::Function *barrier = llvm::Intrinsic::getDeclaration(&g.mod, llvm::Intrinsic::nvvm_barrier0);
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
    b.CreateStore(b.getFalse(), valid);
    llvm::Value *kb = b.CreateAdd(b.CreateMul(p, b.getInt64(B)), tid);
    g.loop(kb, K, b.CreateMul(P, b.getInt64(B)), "k", [&](llvm::Value *k) { fold(o[0], k); });
    llvm::Value *isValid = b.CreateLoad(b.getInt1Ty(), valid);
    b.CreateStore(b.CreateZExt(isValid, g.i8), sValidAt(tid));
    llvm::Value *a = b.CreateLoad(g.regType(acc), accVar);
    g.store(sAccAt(tid), b.CreateSelect(isValid, a, llvm::Constant::getNullValue(a->getType())),
            acc);
    b.CreateCall(barrier);
    for (unsigned s = B / 2; s > 0; s /= 2) {
      auto *lower = llvm::BasicBlock::Create(g.ctx, "tree.lower", g.entry);
      auto *act = llvm::BasicBlock::Create(g.ctx, "tree", g.entry);
      auto *both = llvm::BasicBlock::Create(g.ctx, "tree.both", g.entry);
      auto *copy = llvm::BasicBlock::Create(g.ctx, "tree.copy", g.entry);
      auto *next = llvm::BasicBlock::Create(g.ctx, "tree.next", g.entry);
      b.CreateCondBr(b.CreateICmpULT(tid, b.getInt64(s)), lower, next);
      b.SetInsertPoint(lower);
      llvm::Value *other = b.CreateAdd(tid, b.getInt64(s));
      llvm::Value *otherValid = b.CreateICmpNE(b.CreateLoad(g.i8, sValidAt(other)), b.getInt8(0));
      b.CreateCondBr(otherValid, act, next);
      b.SetInsertPoint(act);
      llvm::Value *mine = b.CreateICmpNE(b.CreateLoad(g.i8, sValidAt(tid)), b.getInt8(0));
      b.CreateCondBr(mine, both, copy);
      b.SetInsertPoint(both);
      g.store(sAccAt(tid), combine(g.load(sAccAt(tid), acc), g.load(sAccAt(other), acc)), acc);
      b.CreateBr(next);
      b.SetInsertPoint(copy);
      g.store(sAccAt(tid), g.load(sAccAt(other), acc), acc);
      b.CreateStore(b.getInt8(1), sValidAt(tid));
      b.CreateBr(next);
      b.SetInsertPoint(next);
      b.CreateCall(barrier);
    }
    auto *write = llvm::BasicBlock::Create(g.ctx, "write", g.entry);
    auto *done = llvm::BasicBlock::Create(g.ctx, "written", g.entry);
    llvm::Value *zeroValid =
        b.CreateICmpNE(b.CreateLoad(g.i8, sValidAt(b.getInt64(0))), b.getInt8(0));
    b.CreateCondBr(b.CreateAnd(b.CreateICmpEQ(tid, b.getInt64(0)), zeroValid), write, done);
    b.SetInsertPoint(write);
    llvm::Value *dst = b.CreateInBoundsGEP(g.i8, out, b.CreateAdd(o[1], b.CreateMul(p, outPart)));
    g.store(dst, g.convert(g.load(sAccAt(b.getInt64(0)), acc), acc, desc.outType), desc.outType);
    b.CreateBr(done);
    b.SetInsertPoint(done);
    // The next task reuses the shared arrays.
    b.CreateCall(barrier);
  });
  g.finish();
  m.impl()->entry = symbol;
  return m;
}

} // namespace ptxjit::codegen
