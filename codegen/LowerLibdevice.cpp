// Lowering of ptxjit.cuda.libdevice calls (ir/typing/Libdevice.h): one call to __nv_<name> on
// both backends. CUDA links it from NVIDIA's libdevice bitcode (emitPTX links libdevice when a
// __nv_ declaration exists); the host JIT resolves it to the CPU backend's version
// (codegen/HostLibdevice.h). Output parameters point at entry-block allocas, read back after
// the call into the returned value (a scalar, or a tuple: the return value, then the outputs).
#include "codegen/Lowering.h"
#include "codegen/ScalarValues.h"

#include <llvm/IR/Function.h>

namespace ptxjit::codegen::detail {

using namespace ir;

llvm::Value *FunctionLowerer::lowerLibdeviceCall(const CallInstr &i, const LibdeviceFunction &f) {
  SourceLoc at = i.loc;
  const Type *res = typeOf(&i, at);
  llvm::LLVMContext &ctx = B.getContext();
  std::vector<llvm::Type *> paramTypes;
  std::vector<llvm::Value *> args;
  std::vector<std::pair<llvm::AllocaInst *, llvm::Type *>> outputs;
  size_t next = 0;
  for (const LibdeviceFunction::Param &p : f.params) {
    llvm::Type *t = registerType(ctx, p.type);
    if (p.output) {
      llvm::AllocaInst *slot = entryAlloca(t, f.name + ".out");
      outputs.emplace_back(slot, t);
      paramTypes.push_back(slot->getType());
      args.push_back(slot);
      continue;
    }
    const Instr *a = i.arg(next++);
    paramTypes.push_back(t);
    args.push_back(convert(valueOf(a, at), typeOf(a, at), p.type, at));
  }
  llvm::Type *ret = f.returnType ? registerType(ctx, f.returnType) : B.getVoidTy();
  llvm::FunctionCallee callee =
      M.mod.getOrInsertFunction("__nv_" + f.name, llvm::FunctionType::get(ret, paramTypes, false));
  if (auto *fn = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    // libdevice declares its 16-bit values (float16 bits) zeroext; so do the host versions.
    if (ret->isIntegerTy(16))
      fn->addRetAttr(llvm::Attribute::ZExt);
    for (unsigned k = 0; k < paramTypes.size(); ++k)
      if (paramTypes[k]->isIntegerTy(16))
        fn->addParamAttr(k, llvm::Attribute::ZExt);
    // Pure functions of their arguments (the host versions restore the rounding mode they
    // change), so unused calls go away and loops can hoist them.
    fn->setDoesNotThrow();
    fn->setWillReturn();
    if (outputs.empty()) {
      fn->setDoesNotAccessMemory();
    } else {
      fn->setOnlyAccessesArgMemory();
      fn->setOnlyWritesMemory();
    }
  }
  llvm::Value *r = B.CreateCall(callee, args);
  std::vector<llvm::Value *> values;
  if (f.returnType)
    values.push_back(r);
  for (auto &[slot, t] : outputs)
    values.push_back(B.CreateLoad(t, slot));
  if (values.size() == 1)
    return values[0];
  llvm::Value *out = llvm::PoisonValue::get(repr(res, at));
  for (size_t k = 0; k < values.size(); ++k)
    out = B.CreateInsertValue(out, values[k], unsigned(k));
  return out;
}

} // namespace ptxjit::codegen::detail
