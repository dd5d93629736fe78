// Lowering of exceptions raised in kernel code: `raise`, a failed `assert` and, in debug builds,
// division by zero (numba's Python error model). numba-cuda's semantics: the raising thread
// ends; with debug=True (CompileOptions::exceptions) the first raising thread of a launch also
// records where and what in the module's fault record (BoundsRecord, shared with the bounds
// checks), which the launcher turns into the exception on the host (compiler::KernelException).
#include "codegen/Lowering.h"

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/MDBuilder.h>

namespace ptxjit::codegen::detail {

using namespace ir;

void FunctionLowerer::raiseException(const RaisedException &e, SourceLoc at) {
  if (M.loopKernel)
    fail(at, DiagCode::UnsupportedConstruct,
         {"raise or assert in a @vectorize/@guvectorize function (it would end the other "
          "elements of its thread)"});
  if (M.opts.exceptions) {
    auto site = static_cast<int64_t>(M.raiseSites.size());
    M.raiseSites.push_back(RaiseSite{e, fn.name, fn.filename, at.line});
    // The first thread to fail wins (compare-and-swap on `failed`), as for the bounds checks.
    llvm::Value *rec = M.boundsRecord(B);
    llvm::Value *won = B.CreateExtractValue(
        B.CreateAtomicCmpXchg(rec, B.getInt64(0), B.getInt64(BoundsRecord::kRaised),
                              llvm::MaybeAlign(8), llvm::AtomicOrdering::Monotonic,
                              llvm::AtomicOrdering::Monotonic),
        1);
    llvm::BasicBlock *recordBB = llvm::BasicBlock::Create(M.ctx, "raise.record", F);
    llvm::BasicBlock *exitBB = llvm::BasicBlock::Create(M.ctx, "raise.exit", F);
    B.CreateCondBr(won, recordBB, exitBB);
    B.SetInsertPoint(recordBB);
    auto word = [&](unsigned k, llvm::Value *v) {
      B.CreateAlignedStore(v, B.CreateConstInBoundsGEP1_32(B.getInt64Ty(), rec, k), llvm::Align(8));
    };
    word(1, B.getInt64(site));
    word(4, B.getInt64(at.line));
    for (int d = 0; d < 3; ++d) {
      word(5 + d, B.CreateZExt(specialRegister(Sreg::Tid, d), B.getInt64Ty()));
      word(8 + d, B.CreateZExt(specialRegister(Sreg::Ctaid, d), B.getInt64Ty()));
    }
    std::array<uint64_t, 4> fnName = nameWords(fn.name);
    for (unsigned k = 0; k < 4; ++k)
      word(15 + k, B.getInt64(fnName[k]));
    B.CreateBr(exitBB);
    B.SetInsertPoint(exitBB);
  }
  // End the thread, also from inside a device function: numba-cuda's callers propagate the
  // status to the kernel, which returns.
  M.cuda.raises = true;
  if (M.isHost()) {
    llvm::FunctionCallee exitThread =
        hostHelper("ptxjit_host_exit_thread", B.getVoidTy(), {B.getPtrTy()});
    if (auto *f = llvm::dyn_cast<llvm::Function>(exitThread.getCallee()))
      f->setDoesNotReturn();
    B.CreateCall(exitThread, {ctxArg})->setDoesNotReturn();
  } else {
    auto *asmTy = llvm::FunctionType::get(B.getVoidTy(), false);
    B.CreateCall(llvm::InlineAsm::get(asmTy, "exit;", "", /*hasSideEffects=*/true))
        ->setDoesNotReturn();
  }
  B.CreateUnreachable();
  B.ClearInsertionPoint();
}

void FunctionLowerer::raiseIf(llvm::Value *cond, const char *cls, const std::string &message,
                              SourceLoc at) {
  llvm::BasicBlock *raiseBB = llvm::BasicBlock::Create(M.ctx, "raise", F);
  llvm::BasicBlock *okBB = llvm::BasicBlock::Create(M.ctx, "raise.not", F);
  B.CreateCondBr(cond, raiseBB, okBB, llvm::MDBuilder(M.ctx).createBranchWeights(1, 1 << 20));
  B.SetInsertPoint(raiseBB);
  RaisedException e;
  e.cls = GlobalValue::exceptionClass(cls, 0);
  e.args.push_back(ConstValue::string(message));
  raiseException(e, at);
  B.SetInsertPoint(okBB);
}

void FunctionLowerer::valueErrorIf(llvm::Value *cond, const std::string &message, SourceLoc at) {
  if (!M.loopKernel)
    raiseIf(cond, "ValueError", message, at);
}

void FunctionLowerer::checkZeroDivision(llvm::Value *isZero, const char *message, SourceLoc at) {
  if (M.opts.exceptions)
    raiseIf(isZero, "ZeroDivisionError", message, at);
}

} // namespace ptxjit::codegen::detail
