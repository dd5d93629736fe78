// The host backend's process-wide ORC LLJIT.
#include "codegen/HostLibdevice.h"
#include "codegen/ModuleImpl.h"
#include "ir/BFloat16.h"
#include "ir/Half.h"

#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <atomic>
#include <bit>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

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
    // x86's bfloat16 conversion instructions (vcvtneps2bf16 of AVX512-BF16 and AVX-NE-CONVERT)
    // flush subnormal inputs and results to zero: without them LLVM rounds float32 and float64
    // to bfloat16 through the libcalls below, which round every value correctly.
    jtmb->getFeatures().AddFeature("avx512bf16", false);
    jtmb->getFeatures().AddFeature("avxneconvert", false);
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

/// compiler-rt's x ** n for a float and an int, which LLVM emits for llvm.powi (fast-math may
/// turn pow(x, (double)n) into it). The JIT cannot rely on the process exporting
/// them (libgcc_s may not be loaded), so the JIT gets its own: square-and-multiply, then the
/// reciprocal for a negative n, as compiler-rt computes them.
template <typename F> F hostPowi(F x, int n) {
  bool negative = n < 0;
  F r = 1;
  for (unsigned u = negative ? 0u - static_cast<unsigned>(n) : static_cast<unsigned>(n); u;
       u >>= 1) {
    if (u & 1)
      r *= x;
    x *= x;
  }
  return negative ? F(1) / r : r;
}
double hostPowidf2(double x, int n) { return hostPowi(x, n); }
float hostPowisf2(float x, int n) { return hostPowi(x, n); }

#if defined(__x86_64__) && defined(__FLT16_MAX__)
/// The half-precision libcalls LLVM emits on x86-64 (no instruction converts a double to half;
/// without F16C none converts a float). libgcc_s has them, but a Python extension's libraries
/// are loaded RTLD_LOCAL, so the process may not export them: the JIT gets its own, rounding
/// as ir/Half.h does (to nearest even). Half values travel in XMM registers, as _Float16.
_Float16 hostTruncdfhf2(double d) { return std::bit_cast<_Float16>(ir::halfFromDouble(d)); }
_Float16 hostTruncsfhf2(float f) { return hostTruncdfhf2(f); } // float → double is exact
float hostExtendhfsf2(_Float16 h) {
  return static_cast<float>(ir::halfToDouble(std::bit_cast<uint16_t>(h)));
}
/// The bfloat16 libcalls LLVM emits on x86-64 (without AVX512-BF16) for float → bfloat16 and
/// double → bfloat16, which also end its bfloat16 arithmetic (done in float32). A bfloat16
/// travels in an XMM register as _Float16 does, so the bits are returned as one.
_Float16 hostTruncsfbf2(float f) { return std::bit_cast<_Float16>(ir::bf16FromFloat(f)); }
_Float16 hostTruncdfbf2(double d) { return std::bit_cast<_Float16>(ir::bf16FromDouble(d)); }
#endif

/// cuda.bf16.hfma and fma on bfloat16 (codegen/MathLib.cpp): one rounding of a * b + c, on bits.
uint16_t hostBf16Fma(uint16_t a, uint16_t b, uint16_t c) { return ir::bf16Fma(a, b, c); }

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
    llvm::orc::JITDylibSP process = (*j)->getProcessSymbolsJITDylib();
    llvm::orc::JITDylib &jd = process ? *process : (*j)->getMainJITDylib();
    llvm::orc::SymbolMap builtins;
    auto flags = llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable;
    builtins[(*j)->mangleAndIntern("__powidf2")] = {llvm::orc::ExecutorAddr::fromPtr(&hostPowidf2),
                                                    flags};
    builtins[(*j)->mangleAndIntern("__powisf2")] = {llvm::orc::ExecutorAddr::fromPtr(&hostPowisf2),
                                                    flags};
#if defined(__x86_64__) && defined(__FLT16_MAX__)
    builtins[(*j)->mangleAndIntern("__truncdfhf2")] = {
        llvm::orc::ExecutorAddr::fromPtr(&hostTruncdfhf2), flags};
    builtins[(*j)->mangleAndIntern("__truncsfhf2")] = {
        llvm::orc::ExecutorAddr::fromPtr(&hostTruncsfhf2), flags};
    builtins[(*j)->mangleAndIntern("__extendhfsf2")] = {
        llvm::orc::ExecutorAddr::fromPtr(&hostExtendhfsf2), flags};
    builtins[(*j)->mangleAndIntern("__truncsfbf2")] = {
        llvm::orc::ExecutorAddr::fromPtr(&hostTruncsfbf2), flags};
    builtins[(*j)->mangleAndIntern("__truncdfbf2")] = {
        llvm::orc::ExecutorAddr::fromPtr(&hostTruncdfbf2), flags};
#endif
    builtins[(*j)->mangleAndIntern("ptxjit_bf16_fma")] = {
        llvm::orc::ExecutorAddr::fromPtr(&hostBf16Fma), flags};
    // ptxjit.cuda.libdevice's calls (__nv_sinf, ...) on the host (codegen/HostLibdevice.h).
    for (const HostSymbol &s : hostLibdeviceSymbols())
      builtins[(*j)->mangleAndIntern(s.name)] = {llvm::orc::ExecutorAddr::fromPtr(s.address),
                                                 flags};
    if (llvm::Error e = jd.define(llvm::orc::absoluteSymbols(std::move(builtins))))
      internalError("cannot define the host JIT's builtins: " + llvm::toString(std::move(e)));
    return std::move(*j);
  }();
  return *jit;
}

} // namespace

const std::string &hostTriple() { return hostTarget().triple; }
const std::string &hostDataLayout() { return hostTarget().layout; }

} // namespace detail

namespace detail {
namespace {

/// Runs the optimization pipeline for `opts` on `m` with a target machine made by `jtmb`, then
/// verifies the result; returns the target machine. Internal error on failure.
std::unique_ptr<llvm::TargetMachine> optimizeHostModule(llvm::Module &m,
                                                        llvm::orc::JITTargetMachineBuilder &jtmb,
                                                        const CompileOptions &opts) {
  auto tm = jtmb.createTargetMachine();
  if (!tm)
    internalError("cannot create the host target machine: " + llvm::toString(tm.takeError()));
  runOptimizationPipeline(m, **tm, opts.optLevel < 3 ? opts.optLevel : 3);
  std::string err;
  llvm::raw_string_ostream es(err);
  if (llvm::verifyModule(m, &es)) {
    es.flush();
    internalError("the optimized host module is invalid: " + err);
  }
  return std::move(*tm);
}

std::mutex gLaunchInfoMutex;
std::unordered_map<const void *, HostLaunchInfo> gLaunchInfo;
/// The JITDylib of each live entry (one per entry: addToHostJIT and loadHostObject make a fresh
/// one), for releaseHostCode. Guarded by gLaunchInfoMutex.
std::unordered_map<const void *, llvm::orc::JITDylib *> gEntryDylibs;

/// Reads `<entry>__launch` (written by LowerCuda.cpp) from `jd`, if the module has one, and
/// remembers it for hostLaunchInfo(entryAddr); remembers `jd` for releaseHostCode(entryAddr).
void recordLaunchInfo(llvm::orc::JITDylib &jd, const std::string &entry, const void *entryAddr) {
  llvm::orc::LLJIT &jit = hostJIT();
  HostLaunchInfo h;
  auto bounds = jit.lookup(jd, entry + "__bounds");
  if (bounds)
    h.bounds = bounds->toPtr<BoundsRecord *>();
  else
    llvm::consumeError(bounds.takeError()); // compiled without boundscheck
  auto info = jit.lookup(jd, entry + "__launch");
  if (info) {
    const auto *words = info->toPtr<const uint64_t *>();
    h.staticSharedBytes = words[0];
    h.cooperative = words[1] != 0;
    h.gridSync = (words[1] & 2) != 0;
    h.localBytes = words[2];
    h.raises = words[3] != 0;
  } else {
    llvm::consumeError(info.takeError()); // a kernel without cooperating-threads features
  }
  std::lock_guard<std::mutex> lock(gLaunchInfoMutex);
  gEntryDylibs[entryAddr] = &jd;
  // The address of a released entry may be reused by a new one: nothing of the old stays.
  if (h.bounds || info)
    gLaunchInfo[entryAddr] = h;
  else
    gLaunchInfo.erase(entryAddr);
}

} // namespace
} // namespace detail

HostLaunchInfo hostLaunchInfo(const void *entry) {
  std::lock_guard<std::mutex> lock(detail::gLaunchInfoMutex);
  auto it = detail::gLaunchInfo.find(entry);
  return it == detail::gLaunchInfo.end() ? HostLaunchInfo{} : it->second;
}

void releaseHostCode(const void *entry) noexcept {
  using namespace detail;
  llvm::orc::JITDylib *jd = nullptr;
  {
    std::lock_guard<std::mutex> lock(gLaunchInfoMutex);
    auto it = gEntryDylibs.find(entry);
    if (it == gEntryDylibs.end())
      return;
    jd = it->second;
    gEntryDylibs.erase(it);
    gLaunchInfo.erase(entry);
  }
  // Frees the dylib's code and data (ORC's resource trackers); no other dylib links to it.
  if (llvm::Error e = hostJIT().getExecutionSession().removeJITDylib(*jd))
    llvm::consumeError(std::move(e)); // the code stays in memory: nothing else to undo
}

void defineHostSymbols(const std::vector<std::pair<std::string, void *>> &symbols) {
  using namespace detail;
  static std::mutex mutex;
  static std::unordered_set<std::string> defined;
  std::lock_guard<std::mutex> lock(mutex);
  llvm::orc::LLJIT &jit = hostJIT();
  // Every JITDylib the JIT creates links against the process-symbols dylib: definitions there
  // are visible to all modules, including object files loaded from the disk cache.
  llvm::orc::JITDylibSP target = jit.getProcessSymbolsJITDylib();
  llvm::orc::JITDylib &jd = target ? *target : jit.getMainJITDylib();
  llvm::orc::SymbolMap map;
  for (const auto &[name, addr] : symbols) {
    if (!defined.insert(name).second)
      continue;
    map[jit.mangleAndIntern(name)] = {llvm::orc::ExecutorAddr::fromPtr(addr),
                                      llvm::JITSymbolFlags::Exported |
                                          llvm::JITSymbolFlags::Callable};
  }
  if (map.empty())
    return;
  if (llvm::Error e = jd.define(llvm::orc::absoluteSymbols(std::move(map))))
    internalError("cannot define the host runtime helpers: " + llvm::toString(std::move(e)));
}

void *addToHostJIT(LoweredModule &&lm, const CompileOptions &opts) {
  using namespace detail;
  LoweredModule::Impl *impl = lm.impl();
  if (!impl || !impl->module)
    internalError("addToHostJIT on an empty module");
  if (impl->backend != Backend::Host)
    internalError("addToHostJIT needs a module lowered for the host backend");

  optimizeHostModule(*impl->module, *hostTarget().jtmb, opts);

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
  recordLaunchInfo(*jd, entry, addr->toPtr<void *>());
  return addr->toPtr<void *>();
}

namespace {

/// A fresh JITDylib of its own for one entry (symbols of different modules never clash).
llvm::orc::JITDylib &freshDylib(const std::string &entry) {
  static std::atomic<uint64_t> counter{0};
  auto jd =
      detail::hostJIT().createJITDylib("ptxjit_obj_" + std::to_string(counter++) + "_" + entry);
  if (!jd)
    detail::internalError("cannot create a JITDylib: " + llvm::toString(jd.takeError()));
  return *jd;
}

} // namespace

std::string compileHostObject(LoweredModule &&lm, const CompileOptions &opts) {
  using namespace detail;
  LoweredModule::Impl *impl = lm.impl();
  if (!impl || !impl->module)
    internalError("compileHostObject on an empty module");
  if (impl->backend != Backend::Host)
    internalError("compileHostObject needs a module lowered for the host backend");
  llvm::orc::JITTargetMachineBuilder jtmb = *hostTarget().jtmb;
  // Position-independent and the small code model: what the JIT's linker expects of objects
  // (it sets the same for the modules it compiles itself).
  jtmb.setRelocationModel(llvm::Reloc::PIC_);
  jtmb.setCodeModel(llvm::CodeModel::Small);
  std::unique_ptr<llvm::TargetMachine> tm = optimizeHostModule(*impl->module, jtmb, opts);
  llvm::orc::SimpleCompiler compile(*tm);
  auto obj = compile(*impl->module);
  if (!obj)
    internalError("cannot compile the host module: " + llvm::toString(obj.takeError()));
  return std::string((*obj)->getBuffer());
}

void *loadHostObject(const std::string &object, const std::string &entry) {
  using namespace detail;
  llvm::orc::LLJIT &jit = hostJIT();
  llvm::orc::JITDylib &jd = freshDylib(entry);
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(object, entry + ".o");
  if (llvm::Error e = jit.addObjectFile(jd, std::move(buffer)))
    internalError("cannot add the object file of '" + entry +
                  "' to the host JIT: " + llvm::toString(std::move(e)));
  auto addr = jit.lookup(jd, entry);
  if (!addr)
    internalError("cannot link '" + entry + "' for the host: " + llvm::toString(addr.takeError()));
  detail::recordLaunchInfo(jd, entry, addr->toPtr<void *>());
  return addr->toPtr<void *>();
}

} // namespace ptxjit::codegen
