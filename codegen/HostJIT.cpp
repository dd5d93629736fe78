// The host backend's process-wide ORC LLJIT.
#include "codegen/ModuleImpl.h"

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <atomic>
#include <mutex>

namespace ptxjit::codegen {
namespace detail {
namespace {

/// The host's target description (CPU and features detected once).
struct HostTarget {
  std::unique_ptr<llvm::orc::JITTargetMachineBuilder> jtmb;
  std::string triple;
  std::string layout;
};

const HostTarget &hostTarget() {
  static const HostTarget target = [] {
    initializeTargets();
    auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!jtmb)
      internalError("cannot detect the host target: " + llvm::toString(jtmb.takeError()));
    jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
    auto dl = jtmb->getDefaultDataLayoutForTarget();
    if (!dl)
      internalError("cannot get the host data layout: " + llvm::toString(dl.takeError()));
    HostTarget t;
    t.triple = jtmb->getTargetTriple().str();
    t.layout = dl->getStringRepresentation();
    t.jtmb = std::make_unique<llvm::orc::JITTargetMachineBuilder>(std::move(*jtmb));
    return t;
  }();
  return target;
}

llvm::orc::LLJIT &hostJIT() {
  static std::unique_ptr<llvm::orc::LLJIT> jit = [] {
    auto j = llvm::orc::LLJITBuilder()
                 .setJITTargetMachineBuilder(*hostTarget().jtmb)
                 // Modules may be compiled by several threads at once (a target machine
                 // per compilation).
                 .setSupportConcurrentCompilation(true)
                 .create();
    if (!j)
      internalError("cannot create the host JIT: " + llvm::toString(j.takeError()));
    return std::move(*j);
  }();
  return *jit;
}

} // namespace

const std::string &hostTriple() { return hostTarget().triple; }
const std::string &hostDataLayout() { return hostTarget().layout; }

} // namespace detail

void *addToHostJIT(LoweredModule &&lm, const CompileOptions &opts) {
  using namespace detail;
  LoweredModule::Impl *impl = lm.impl();
  if (!impl || !impl->module)
    internalError("addToHostJIT on an empty module");
  if (impl->backend != Backend::Host)
    internalError("addToHostJIT needs a module lowered for the host backend");

  {
    auto tm = hostTarget().jtmb->createTargetMachine();
    if (!tm)
      internalError("cannot create the host target machine: " + llvm::toString(tm.takeError()));
    runOptimizationPipeline(*impl->module, **tm, opts.optLevel < 3 ? opts.optLevel : 3);
  }
  std::string err;
  llvm::raw_string_ostream es(err);
  if (llvm::verifyModule(*impl->module, &es)) {
    es.flush();
    internalError("the optimized host module is invalid: " + err);
  }

  llvm::orc::LLJIT &jit = hostJIT();
  static std::atomic<uint64_t> counter{0};
  std::string entry = impl->entry;
  auto jd = jit.createJITDylib("ptxjit_" + std::to_string(counter++) + "_" + entry);
  if (!jd)
    internalError("cannot create a JITDylib: " + llvm::toString(jd.takeError()));
  llvm::orc::ThreadSafeModule tsm(std::move(impl->module), std::move(impl->ctx));
  if (llvm::Error e = jit.addIRModule(*jd, std::move(tsm)))
    internalError("cannot add the module to the host JIT: " + llvm::toString(std::move(e)));
  auto addr = jit.lookup(*jd, entry);
  if (!addr)
    internalError("cannot compile '" + entry +
                  "' for the host: " + llvm::toString(addr.takeError()));
  return addr->toPtr<void *>();
}

} // namespace ptxjit::codegen
