// PTX emission: internalize, link libdevice on demand, NVVMReflect + O<n>, NVPTX codegen.
#include "codegen/CudaPaths.h"
#include "codegen/ModuleImpl.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/CodeGen/AsmPrinter.h>
#include <llvm/CodeGen/MachineModuleInfo.h>
#include <llvm/CodeGen/Passes.h>
#include <llvm/CodeGen/TargetPassConfig.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/MCAsmBackend.h>
#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCCodeEmitter.h>
#include <llvm/MC/MCInstPrinter.h>
#include <llvm/MC/MCStreamer.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/FormattedStream.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetLoweringObjectFile.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/IPO/Internalize.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <map>
#include <mutex>
#include <system_error>
#include <vector>

namespace ptxjit::codegen {

namespace detail {
namespace {

/// libdevice's bitcode at `path` (libdevicePath(); read only to make a libdevicePart).
std::unique_ptr<llvm::MemoryBuffer> readLibdevice(const std::string &path) {
  if (path.empty())
    internalError(libdeviceNotFoundMessage());
  auto mb = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!mb)
    internalError("cannot read libdevice at '" + path + "' (" + mb.getError().message() +
                  "); set PTXJIT_LIBDEVICE to the path of libdevice.10.bc or CUDA_HOME to the "
                  "CUDA toolkit");
  return std::move(*mb);
}

/// The libdevice functions `m` declares (`__nv_*`), sorted.
std::vector<std::string> libdeviceCalls(const llvm::Module &m) {
  std::vector<std::string> names;
  for (const llvm::Function &f : m)
    if (f.isDeclaration() && f.getName().starts_with("__nv_"))
      names.push_back(f.getName().str());
  std::sort(names.begin(), names.end());
  return names;
}

/// The part of libdevice that calls of `names` need (those functions, what they call, the
/// tables they read), as bitcode for the NVPTX triple and data layout: made once per process
/// for each set of names (and libdevice path), by linking libdevice into an empty module that
/// declares them. Even a lazy load of the whole of libdevice reads every one of its function
/// records and symbols (a fifth of a small compile that calls `exp`); a compile parses this
/// instead. Throws CompileError(Internal) when libdevice cannot be read or linked.
const std::string &libdevicePart(const std::vector<std::string> &names) {
  static std::mutex mutex;
  static auto *parts = new std::map<std::string, std::string>; // never freed: handed out
  const std::string path = libdevicePath();
  std::string key = path;
  for (const std::string &n : names)
    key += "\n" + n;
  // Held while a part is made, so that compiles needing the same one make it once.
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = parts->find(key); it != parts->end())
    return it->second;
  std::unique_ptr<llvm::MemoryBuffer> file = readLibdevice(path);
  llvm::LLVMContext ctx;
  auto lib = llvm::getLazyBitcodeModule(file->getMemBufferRef(), ctx);
  if (!lib) {
    std::string err = llvm::toString(lib.takeError());
    internalError("cannot parse libdevice at '" + path + "': " + err);
  }
  (*lib)->setTargetTriple(nvptxTriple());
  (*lib)->setDataLayout(nvptxDataLayout());
  llvm::Module part("libdevice", ctx);
  part.setTargetTriple(nvptxTriple());
  part.setDataLayout(nvptxDataLayout());
  for (const std::string &n : names)
    if (const llvm::Function *f = (*lib)->getFunction(n)) // not in libdevice: stays declared
      part.getOrInsertFunction(n, f->getFunctionType());
  if (llvm::Linker::linkModules(part, std::move(*lib), llvm::Linker::LinkOnlyNeeded))
    internalError("linking libdevice failed");
  std::string bitcode;
  llvm::raw_string_ostream os(bitcode);
  llvm::WriteBitcodeToFile(part, os);
  os.flush();
  return parts->emplace(std::move(key), std::move(bitcode)).first->second;
}

void linkLibdevice(llvm::Module &m, const std::vector<std::string> &names) {
  const std::string &part = libdevicePart(names);
  auto lib = llvm::parseBitcodeFile(llvm::MemoryBufferRef(part, "libdevice"), m.getContext());
  if (!lib) {
    std::string err = llvm::toString(lib.takeError());
    internalError("cannot parse libdevice's part for this module: " + err);
  }
  if (llvm::Linker::linkModules(m, std::move(*lib), llvm::Linker::LinkOnlyNeeded))
    internalError("linking libdevice failed");
}

/// Answers libdevice's `__nvvm_reflect("__CUDA_PREC_SQRT")` queries with `precise`. LLVM's
/// NVVMReflect pass knows only __CUDA_FTZ and __CUDA_ARCH and answers 0 to anything else, which
/// would make __nv_sqrtf, __nv_hypotf, __nv_normf, ... use sqrt.approx.f32; NVVM (and so
/// numba-cuda) answers 1 unless fast math asks for approximate square roots.
void resolvePrecSqrt(llvm::Module &m, bool precise) {
  llvm::Function *reflect = m.getFunction("__nvvm_reflect");
  if (!reflect)
    return;
  std::vector<llvm::CallInst *> calls;
  for (llvm::User *u : reflect->users()) {
    auto *call = llvm::dyn_cast<llvm::CallInst>(u);
    if (!call || call->getCalledFunction() != reflect || call->arg_size() != 1)
      continue;
    auto *gv = llvm::dyn_cast<llvm::GlobalVariable>(call->getArgOperand(0)->stripPointerCasts());
    auto *init = gv && gv->hasInitializer()
                     ? llvm::dyn_cast<llvm::ConstantDataSequential>(gv->getInitializer())
                     : nullptr;
    if (init && init->isCString() && init->getAsCString() == "__CUDA_PREC_SQRT")
      calls.push_back(call);
  }
  for (llvm::CallInst *call : calls) {
    call->replaceAllUsesWith(llvm::ConstantInt::get(call->getType(), precise ? 1 : 0));
    call->eraseFromParent();
  }
}

} // namespace
} // namespace detail

namespace {

/// The stream the assembly printer writes PTX through. The printer asks for a
/// formatted_raw_ostream, whose only use is the column of padded end-of-line comments, which
/// only verbose assembly has (ptxjit's is not verbose); counting that column costs a Unicode
/// width look-up per character, 2% of a small kernel's compile. This one passes the text
/// through unexamined and unbuffered: the PTX is read as soon as the passes have run, while the
/// printer holding this stream lives on.
class PtxTextStream final : public llvm::formatted_raw_ostream {
public:
  explicit PtxTextStream(llvm::raw_ostream &out) : out_(out) { SetUnbuffered(); }

private:
  void write_impl(const char *ptr, size_t size) override { out_.write(ptr, size); }
  uint64_t current_pos() const override { return out_.tell(); }

  llvm::raw_ostream &out_;
};

/// Adds NVPTX code generation writing assembly to `out` to `pm`, as
/// LLVMTargetMachine::addPassesToEmitFile does (LLVM 19, no verifier: the module was verified
/// after optimization), but printing through a PtxTextStream. False where the target cannot.
bool addPtxPrinting(llvm::LLVMTargetMachine &tm, llvm::legacy::PassManager &pm,
                    llvm::raw_pwrite_stream &out) {
  auto *mmi = new llvm::MachineModuleInfoWrapperPass(&tm);
  llvm::TargetPassConfig *config = tm.createPassConfig(pm);
  config->setDisableVerify(true);
  pm.add(config);
  pm.add(mmi);
  if (config->addISelPasses())
    return false;
  config->addMachinePasses();
  config->setInitialized();
  const llvm::Target &target = tm.getTarget();
  const llvm::MCAsmInfo &mai = *tm.getMCAsmInfo();
  llvm::MCInstPrinter *printer =
      target.createMCInstPrinter(tm.getTargetTriple(), mai.getAssemblerDialect(), mai,
                                 *tm.getMCInstrInfo(), *tm.getMCRegisterInfo());
  if (!printer)
    return false;
  std::unique_ptr<llvm::MCStreamer> streamer(target.createAsmStreamer(
      mmi->getMMI().getContext(), std::make_unique<PtxTextStream>(out), printer, nullptr, nullptr));
  llvm::FunctionPass *asmPrinter = target.createAsmPrinter(tm, std::move(streamer));
  if (!asmPrinter)
    return false;
  pm.add(asmPrinter);
  pm.add(llvm::createFreeMachineFunctionPass());
  // The assembly printer's doInitialization sets the object file lowering up in the pipeline's
  // MCContext, making the ELF sections it names (2% of a small kernel's compile, on the
  // compiling thread). Done here first, on the thread that builds the pipeline, it finds them
  // made and only looks them up.
  const_cast<llvm::TargetLoweringObjectFile &>(*tm.getObjFileLowering())
      .Initialize(mmi->getMMI().getContext(), tm);
  return true;
}

/// NVPTX code generation for one module, built before the module is ready: the pass manager
/// writes the PTX into `ptx` through `os`, with a target machine of its own. Not movable (the
/// stream points into `ptx`, the passes at the stream and the target machine).
struct CodegenPipeline {
  explicit CodegenPipeline(const CompileOptions &opts) : tm(opts) {
    if (!addPtxPrinting(static_cast<llvm::LLVMTargetMachine &>(*tm), pm, os))
      detail::internalError("the NVPTX target cannot emit PTX");
  }
  CodegenPipeline(const CodegenPipeline &) = delete;
  CodegenPipeline &operator=(const CodegenPipeline &) = delete;

  detail::NvptxTargetMachineLease tm;
  llvm::SmallString<0> ptx;
  llvm::raw_svector_ostream os{ptx};
  llvm::legacy::PassManager pm; // last: destroyed first
};

/// LLVM's optimization pipeline for `opts`, with the target machine it optimizes for.
struct PreparedOptimization {
  explicit PreparedOptimization(const CompileOptions &opts)
      : tm(opts), pipeline(std::make_unique<detail::OptimizationPipeline>(*tm, opts.optLevel)) {}

  detail::NvptxTargetMachineLease tm;
  /// After tm: destroyed first. Its destruction never uses the target machine (which the lease
  /// only lends: the process keeps it), so emitPTX may keep it past the lease.
  std::unique_ptr<detail::OptimizationPipeline> pipeline;
};

/// Sets `promise` to make()'s result, or to its exception.
template <class T, class Make> void fulfil(std::promise<T> &promise, Make make) noexcept {
  try {
    promise.set_value(make());
  } catch (...) {
    try {
      promise.set_exception(std::current_exception());
    } catch (...) {
      // The promise was already set: nothing is waiting for this one.
    }
  }
}

} // namespace

/// The pipelines one emitPTX runs, being built (startPtxPipelines). A pipeline the caller
/// abandons (it threw before taking it, or built its own) is destroyed by whichever lets go of it
/// last, the task or the future here.
class PtxPipelines {
public:
  CompileOptions opts;
  /// Not valid where no runner builds it: emitPTX builds it.
  std::future<std::unique_ptr<PreparedOptimization>> optimization;
  std::future<std::unique_ptr<CodegenPipeline>> codegen;
  /// After emitPTX: the optimization pipeline that ran on the module (its passes and its
  /// analyses of the module; its target machine went back at once) and code generation's.
  std::unique_ptr<detail::OptimizationPipeline> optimized;
  std::unique_ptr<CodegenPipeline> ran;
};

std::shared_ptr<PtxPipelines> startPtxPipelines(const CompileOptions &opts, TaskRunner runner) {
  auto started = std::make_shared<PtxPipelines>();
  started->opts = opts;
  auto makeCodegen = [opts] { return std::make_unique<CodegenPipeline>(opts); };
  if (!runner) {
    // A thread of this call's own, for code generation's pipeline only (it has the time the
    // optimization takes; the optimization pipeline has none before it is needed). Built when
    // asked for instead where no thread can be started. The future's destructor waits for the
    // thread, so an error on the caller's side leaves nothing running.
    try {
      started->codegen = std::async(std::launch::async, makeCodegen);
    } catch (const std::system_error &) {
      started->codegen = std::async(std::launch::deferred, makeCodegen);
    }
    return started;
  }
  // std::function needs a copyable callable: the promises are shared.
  auto optimization = std::make_shared<std::promise<std::unique_ptr<PreparedOptimization>>>();
  auto codegen = std::make_shared<std::promise<std::unique_ptr<CodegenPipeline>>>();
  started->optimization = optimization->get_future();
  started->codegen = codegen->get_future();
  // The optimization pipeline first: it is needed first.
  runner([opts, optimization, codegen, makeCodegen] {
    fulfil(*optimization, [&] { return std::make_unique<PreparedOptimization>(opts); });
    fulfil(*codegen, makeCodegen);
  });
  return started;
}

std::string emitPTX(LoweredModule &lm, const CompileOptions &opts,
                    std::shared_ptr<PtxPipelines> pipelines) {
  using namespace detail;
  LoweredModule::Impl *impl = lm.impl();
  if (!impl || !impl->module)
    internalError("emitPTX on an empty module");
  if (impl->backend != Backend::CUDA || opts.backend != Backend::CUDA)
    internalError("emitPTX needs a module lowered for the CUDA backend");
  if (pipelines && !(pipelines->opts == opts))
    internalError("emitPTX was given pipelines started for other options (" +
                  pipelines->opts.str() + ", not " + opts.str() + ")");
  llvm::Module &m = *impl->module;
  // The pass pipelines do not depend on the module: they are built on another thread while this
  // one links and optimizes (building code generation's is a tenth of a small kernel's compile),
  // or, started by the caller, while it types and lowers.
  if (!pipelines)
    pipelines = startPtxPipelines(opts, nullptr);

  if (std::vector<std::string> calls = libdeviceCalls(m); !calls.empty()) {
    linkLibdevice(m, calls);
    resolvePrecSqrt(m, !opts.fastmath);
    impl->libdeviceLinked = true;
  }
  if (opts.fastmath) {
    // libdevice's functions must carry the same fast-math attributes as ours: inlining a
    // function without "unsafe-fp-math" clears it on the caller (div.rn instead of
    // div.approx), and differing attributes can block inlining.
    for (llvm::Function &f : m) {
      if (f.isDeclaration())
        continue;
      for (const char *a : {"unsafe-fp-math", "no-signed-zeros-fp-math", "approx-func-fp-math"})
        f.addFnAttr(a, "true");
      f.addFnAttr("denormal-fp-math-f32", "preserve-sign,preserve-sign");
    }
  }
  const std::string entry = impl->entry;
  // The entry and its bounds record (CompileOptions::boundscheck: read by the launcher through
  // cuModuleGetGlobal) stay visible.
  llvm::internalizeModule(m, [&](const llvm::GlobalValue &gv) {
    return gv.getName() == entry || gv.getName() == entry + "__bounds";
  });
  m.setModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", opts.fastmath ? 1u : 0u);

  {
    // Built ahead if the task has finished; if not (its thread had other work first), built
    // here, as waiting could take longer.
    std::future<std::unique_ptr<PreparedOptimization>> &ahead = pipelines->optimization;
    std::unique_ptr<PreparedOptimization> prepared =
        ahead.valid() && ahead.wait_for(std::chrono::seconds(0)) == std::future_status::ready
            ? ahead.get()
            : std::make_unique<PreparedOptimization>(opts);
    prepared->pipeline->run(m);
    // Destroying the pipeline (the analyses it cached for the module, its passes) is 1% of a
    // small kernel's compile: it goes with the module, off the compiling thread, as code
    // generation's pipeline does below. Its target machine goes back now, for the next compile.
    pipelines->optimized = std::move(prepared->pipeline);
  }
  useFloat32Copies(m, entry);

  std::string err;
  llvm::raw_string_ostream es(err);
  if (llvm::verifyModule(m, &es)) {
    es.flush();
    internalError("the optimized module is invalid: " + err);
  }

  std::unique_ptr<CodegenPipeline> cg = pipelines->codegen.get();
  cg->pm.run(m);
  std::string text(cg->ptx.str());
  // Freeing the pass manager is 2% of a small kernel's compile: it goes with the module, which
  // the compiler destroys off the compiling thread (compiler/Background.h), and so does the
  // handle, whose optimization pipeline, when it was built too late to be used, costs as much.
  pipelines->ran = std::move(cg);
  impl->finishedCodegen = std::move(pipelines);
  spellIntegerNegations(text);
  return text;
}

namespace detail {

void useFloat32Copies(llvm::Module &m, const std::string &entry) {
  llvm::Function *f = m.getFunction(entry);
  if (!f || !f->hasFnAttribute(kFloat32CopiesAttr))
    return;
  llvm::StringRef list = f->getFnAttribute(kFloat32CopiesAttr).getValueAsString();
  while (!list.empty()) {
    auto [pair, rest] = list.split(',');
    list = rest;
    auto [d, c] = pair.split(':');
    unsigned di = 0, ci = 0;
    if (d.getAsInteger(10, di) || c.getAsInteger(10, ci) || di >= f->arg_size() ||
        ci >= f->arg_size() || !f->getArg(di)->getType()->isDoubleTy() ||
        !f->getArg(ci)->getType()->isFloatTy())
      internalError("malformed " + std::string(kFloat32CopiesAttr) + " on " + entry);
    llvm::SmallVector<llvm::FPTruncInst *, 4> truncs;
    for (llvm::User *u : f->getArg(di)->users())
      if (auto *t = llvm::dyn_cast<llvm::FPTruncInst>(u); t && t->getType()->isFloatTy())
        truncs.push_back(t);
    for (llvm::FPTruncInst *t : truncs) {
      t->replaceAllUsesWith(f->getArg(ci));
      t->eraseFromParent();
    }
  }
  f->removeFnAttr(kFloat32CopiesAttr);
}

void spellIntegerNegations(std::string &ptx) {
  if (ptx.find("neg.s") == std::string::npos)
    return;
  std::string out;
  out.reserve(ptx.size() + 256);
  size_t pos = 0;
  while (pos < ptx.size()) {
    size_t end = ptx.find('\n', pos);
    end = end == std::string::npos ? ptx.size() : end + 1;
    llvm::StringRef line(ptx.data() + pos, end - pos);
    pos = end;
    // "\t[@%p ]neg.s32 \t%r5, %r4;\n": indentation, guard, opcode, destination, source.
    llvm::StringRef rest = line.ltrim(" \t");
    llvm::StringRef indent = line.take_front(line.size() - rest.size());
    llvm::StringRef guard;
    if (rest.starts_with("@")) {
      size_t sp = rest.find_first_of(" \t");
      if (sp == llvm::StringRef::npos)
        sp = rest.size();
      guard = rest.take_front(sp);
      rest = rest.drop_front(sp).ltrim(" \t");
    }
    const char *width = rest.starts_with("neg.s32")   ? "32"
                        : rest.starts_with("neg.s16") ? "16"
                                                      : nullptr;
    llvm::StringRef operands = width ? rest.drop_front(7) : llvm::StringRef();
    auto [dst, src] = operands.split(',');
    dst = dst.trim();
    src = src.trim().rtrim(";").trim();
    if (!width || operands.empty() || !std::isspace(static_cast<unsigned char>(operands[0])) ||
        dst.empty() || src.empty() || src.contains(' ')) {
      out.append(line.data(), line.size());
      continue;
    }
    std::string g = guard.empty() ? std::string() : guard.str() + " ";
    out += indent.str() + g + "not.b" + width + " \t" + dst.str() + ", " + src.str() + ";\n";
    out += indent.str() + g + "add.s" + width + " \t" + dst.str() + ", " + dst.str() + ", 1;\n";
  }
  ptx = std::move(out);
}

} // namespace detail
} // namespace ptxjit::codegen
