// Math library calls for both backends (see MathLib.h).
#include "codegen/MathLib.h"

#include <llvm/IR/Attributes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Intrinsics.h>

namespace ptxjit::codegen::detail {
namespace {

enum IntrUse : uint8_t { IntrNone, IntrHost, IntrBoth };

struct MathInfo {
  const char *name;
  int arity;
  const char *nvDouble;
  const char *nvFloat;
  const char *libmDouble;
  const char *libmFloat;
  llvm::Intrinsic::ID intrinsic;
  IntrUse use;
};

const MathInfo &info(MathFn fn) {
  static const MathInfo table[] = {
#define PTXJIT_MATH_INFO(name, arity, nvd, nvf, lmd, lmf, intr, use)                               \
  {#name, arity, nvd, nvf, lmd, lmf, llvm::Intrinsic::intr, use},
      PTXJIT_MATH_FUNCTIONS(PTXJIT_MATH_INFO)
#undef PTXJIT_MATH_INFO
  };
  return table[static_cast<size_t>(fn)];
}

} // namespace

int mathArity(MathFn fn) { return info(fn).arity; }
const char *mathName(MathFn fn) { return info(fn).libmDouble; }

llvm::FunctionCallee MathLib::declare(const char *name, llvm::Type *ty, int arity) {
  std::vector<llvm::Type *> params(arity, ty);
  auto *fty = llvm::FunctionType::get(ty, params, false);
  llvm::FunctionCallee callee = m_.getOrInsertFunction(name, fty);
  if (auto *f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    // Math functions here neither touch memory nor errno (as with -fno-math-errno), so calls
    // can be hoisted, vectorized and removed when unused.
    f->setDoesNotThrow();
    f->setWillReturn();
    f->setDoesNotAccessMemory();
  }
  return callee;
}

llvm::Value *MathLib::call(llvm::IRBuilderBase &b, MathFn fn, llvm::ArrayRef<llvm::Value *> args) {
  const MathInfo &mi = info(fn);
  llvm::Type *ty = args.front()->getType();
  bool isDouble = ty->isDoubleTy();
  bool useIntrinsic = mi.intrinsic != llvm::Intrinsic::not_intrinsic &&
                      (mi.use == IntrBoth || (mi.use == IntrHost && backend_ == Backend::Host));
  if (useIntrinsic) {
    llvm::Function *decl = llvm::Intrinsic::getDeclaration(&m_, mi.intrinsic, {ty});
    return b.CreateCall(decl, args);
  }
  const char *name = backend_ == Backend::CUDA ? (isDouble ? mi.nvDouble : mi.nvFloat)
                                               : (isDouble ? mi.libmDouble : mi.libmFloat);
  return b.CreateCall(declare(name, ty, mi.arity), args);
}

llvm::Value *MathLib::powi(llvm::IRBuilderBase &b, llvm::Value *x, llvm::Value *n) {
  llvm::Type *ty = x->getType();
  if (backend_ == Backend::Host) {
    llvm::Function *decl =
        llvm::Intrinsic::getDeclaration(&m_, llvm::Intrinsic::powi, {ty, n->getType()});
    return b.CreateCall(decl, {x, n});
  }
  const char *name = ty->isDoubleTy() ? "__nv_powi" : "__nv_powif";
  auto *fty = llvm::FunctionType::get(ty, {ty, n->getType()}, false);
  llvm::FunctionCallee callee = m_.getOrInsertFunction(name, fty);
  if (auto *f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    f->setDoesNotThrow();
    f->setWillReturn();
    f->setDoesNotAccessMemory();
  }
  return b.CreateCall(callee, {x, n});
}

} // namespace ptxjit::codegen::detail
