// Source lines in the generated code (CompileOptions::debugInfo, CUDA only): each lowered
// function — a Python function's body, and the kernel or device-function entry around it —
// gets a DISubprogram in the Python file, and every instruction the DILocation of the bytecode
// it came from (FunctionLowerer::run). NVPTX turns these into .file/.loc directives (with
// inlined_at for inlined device functions), which Nsight Compute and cuda-gdb map back to
// Python lines; LineTables also emits DWARF .debug_* sections (the line table, no variables).
// Kernel launch bounds and register limits are NVVM annotations on the entry (annotateKernel).
#include "codegen/Lowering.h"

#include <llvm/BinaryFormat/Dwarf.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DebugInfoMetadata.h>

#include <filesystem>

namespace ptxjit::codegen::detail {

ModuleLowerer::~ModuleLowerer() = default;

bool ModuleLowerer::emitsDebugInfo() const {
  return opts.debugInfo != CompileOptions::DebugInfo::None && opts.backend == Backend::CUDA;
}

llvm::DISubprogram *ModuleLowerer::subprogramFor(const ir::Function &fn, llvm::Function *f) {
  if (!emitsDebugInfo())
    return nullptr;
  std::filesystem::path path(fn.filename.empty() ? std::string("<unknown>") : fn.filename);
  if (!di_) {
    di_ = std::make_unique<llvm::DIBuilder>(mod);
    // DWARF 2, as NVPTX emits it; the version of the metadata format LLVM reads.
    mod.addModuleFlag(llvm::Module::Warning, "Dwarf Version", 2);
    mod.addModuleFlag(llvm::Module::Warning, "Debug Info Version", llvm::DEBUG_METADATA_VERSION);
    auto kind = opts.debugInfo == CompileOptions::DebugInfo::LineInfo
                    ? llvm::DICompileUnit::DebugDirectivesOnly
                    : llvm::DICompileUnit::LineTablesOnly;
    cu_ = di_->createCompileUnit(
        llvm::dwarf::DW_LANG_Python,
        di_->createFile(path.filename().string(), path.parent_path().string()), "ptxjit",
        opts.optLevel > 0, "", 0, "", kind);
  }
  llvm::DIFile *file = di_->createFile(path.filename().string(), path.parent_path().string());
  auto *type = di_->createSubroutineType(di_->getOrCreateTypeArray({}));
  auto flags = llvm::DISubprogram::SPFlagDefinition;
  if (opts.optLevel > 0)
    flags |= llvm::DISubprogram::SPFlagOptimized;
  llvm::DISubprogram *sp = di_->createFunction(cu_, fn.name, f->getName(), file, fn.firstLine, type,
                                               fn.firstLine, llvm::DINode::FlagZero, flags);
  f->setSubprogram(sp);
  return sp;
}

void ModuleLowerer::finishDebugInfo() {
  if (di_)
    di_->finalize();
}

void ModuleLowerer::annotateKernel(llvm::Function *entry) {
  if (opts.backend != Backend::CUDA)
    return;
  llvm::NamedMDNode *md = mod.getOrInsertNamedMetadata("nvvm.annotations");
  auto annotate = [&](const char *key, int value) {
    if (value <= 0)
      return;
    llvm::Metadata *ops[] = {
        llvm::ValueAsMetadata::get(entry), llvm::MDString::get(ctx, key),
        llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), value))};
    md->addOperand(llvm::MDNode::get(ctx, ops));
  };
  annotate("maxntidx", opts.maxThreadsPerBlock); // .maxntid N, 1, 1
  annotate("minctasm", opts.minBlocksPerSM);     // .minnctapersm
  annotate("maxclusterrank", opts.maxClusterRank);
  annotate("maxnreg", opts.maxRegisters);
}

} // namespace ptxjit::codegen::detail
