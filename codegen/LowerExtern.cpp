// Lowering of calls to foreign device functions declared with cuda.declare_device(name, sig,
// link=, abi=). The call names the function; its code comes from the declaration's link items,
// which the module records (LoweredModule::links) and the loader links in (CUDA only: the
// CPU backend has no way to run CUDA C++ or PTX, so it refuses such calls).
//
// Numba's ABI (abi="numba", the default): `int name(result *out, params...)`: the result is
// written through the first argument, the int is a status code (ptxjit reads no exceptions from
// foreign code, so it is not examined). The C ABI: `result name(params...)`.
// Arguments convert to the declared parameter types; an array passed for a pointer parameter
// passes its data pointer, an integer its value as an address.
#include "codegen/Lowering.h"

#include <llvm/IR/Constants.h>

namespace ptxjit::codegen::detail {

using namespace ir;

llvm::Value *FunctionLowerer::lowerExternCall(const CallInstr &i, const ExternFunctionType &ext) {
  SourceLoc at = i.loc;
  const ExternDecl &d = ext.decl();
  if (M.isHost())
    fail(at, DiagCode::CudaOnly,
         {"calling external device function '" + d.name + "' (cuda.declare_device)",
          "its code is CUDA code, linked when a CUDA kernel is loaded"});
  if (i.numArgs() != d.params.size() || !i.kwNames.empty())
    internal(at, "call of external function '" + d.name + "' with a checked argument count");

  auto *ptr = B.getPtrTy();
  std::vector<llvm::Type *> paramTys;
  std::vector<llvm::Value *> args;
  const Type *result = concretize(d.result);
  bool returnsValue = !ModuleLowerer::isCompileTimeOnly(result);
  llvm::Type *resultTy = returnsValue ? repr(result, at) : nullptr;
  llvm::AllocaInst *out = nullptr;
  if (!d.cAbi) { // Numba's ABI: the result through a pointer, an int status returned
    out = entryAlloca(resultTy ? resultTy : B.getInt8Ty(), "extern.result");
    paramTys.push_back(ptr);
    args.push_back(out);
  }
  for (size_t k = 0; k < d.params.size(); ++k) {
    const Type *param = d.params[k];
    const Instr *a = i.arg(k);
    const Type *from = concretize(typeOf(a, at));
    llvm::Value *v = valueOf(a, at);
    if (isa<PointerType>(param)) {
      if (isa<ArrayType>(from))
        v = B.CreateExtractValue(v, 0); // the data pointer
      else if (from->kind() == TypeKind::Int || from->kind() == TypeKind::WeakInt)
        v = B.CreateIntToPtr(convert(v, typeOf(a, at), types::uint64(), at), ptr);
      else if (!isa<PointerType>(from))
        internal(at, "argument of type " + from->str() + " for pointer parameter");
      paramTys.push_back(ptr);
    } else {
      v = convert(v, typeOf(a, at), param, at);
      paramTys.push_back(repr(param, at));
    }
    args.push_back(v);
  }

  llvm::Type *returned = d.cAbi ? (resultTy ? resultTy : B.getVoidTy()) : B.getInt32Ty();
  auto *fty = llvm::FunctionType::get(returned, paramTys, false);
  llvm::Function *f = M.mod.getFunction(d.name);
  if (!f) {
    f = llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage, d.name, M.mod);
  } else if (f->getFunctionType() != fty) {
    fail(at, DiagCode::UnsupportedConstruct,
         {"external device function '" + d.name +
          "' declared twice with different signatures in one kernel"});
  }
  if (d.cooperative)
    M.cuda.gridSync = true;
  if (M.linkedDecls.insert(d.id).second)
    for (const LinkItem &l : d.links)
      if (std::find(M.links.begin(), M.links.end(), l) == M.links.end())
        M.links.push_back(l);

  llvm::CallInst *call = B.CreateCall(f, args);
  if (!returnsValue)
    return placeholder();
  llvm::Value *r = d.cAbi ? static_cast<llvm::Value *>(call) : B.CreateLoad(resultTy, out);
  return convert(r, result, typeOf(&i, at), at);
}

} // namespace ptxjit::codegen::detail
