#include "compiler/Compiler.h"

#include "codegen/Codegen.h"
#include "compiler/Background.h"
#include "compiler/DiskCache.h"
#include "compiler/Dump.h"
#include "compiler/Packing.h"
#include "frontend/Frontend.h"
#include "ir/Conversions.h"
#include "ir/InterningLocks.h"
#include "ir/PruneBranches.h"
#include "ir/Verify.h"
#include "ir/typing/Typing.h"
#include "runtime/Fork.h"
#include "runtime/HostBlock.h"
#include "runtime/Launch.h"
#include "runtime/Module.h"
#include "runtime/Stream.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

namespace ptxjit::compiler {

// ---- Specialization -------------------------------------------------------------------------

namespace {

/// The loader's kind of a link item (ir::LinkItem::kind, checked by the Python layer).
runtime::Module::LinkInput::Kind linkKind(const std::string &k) {
  using K = runtime::Module::LinkInput::Kind;
  if (k == "ptx")
    return K::Ptx;
  if (k == "cu")
    return K::Cu;
  if (k == "cubin")
    return K::Cubin;
  if (k == "fatbin")
    return K::Fatbin;
  if (k == "object")
    return K::Object;
  if (k == "library")
    return K::Library;
  throw std::invalid_argument("unknown kind of external code to link: '" + k + "'");
}

} // namespace

Specialization::~Specialization() {
  for (std::atomic<PerDevice *> &d : devices_)
    delete d.load(std::memory_order_relaxed);
  // Specializations die with their function's entry (freeRetiredLocked), when no launch can
  // still run them.
  if (hostEntry)
    codegen::releaseHostCode(reinterpret_cast<const void *>(hostEntry));
}

Specialization::PerDevice &Specialization::perDevice(int ordinal) const {
  if (ordinal == 0) [[likely]]
    return device0_;
  if (ordinal < 0 || ordinal >= runtime::Device::kMaxDevices)
    throw std::out_of_range("device ordinal " + std::to_string(ordinal) + " is out of range");
  std::atomic<PerDevice *> &slot = devices_[ordinal - 1];
  if (PerDevice *d = slot.load(std::memory_order_acquire))
    return *d;
  std::lock_guard<std::mutex> lock(loadMutex_);
  if (PerDevice *d = slot.load(std::memory_order_relaxed))
    return *d;
  PerDevice *d = new PerDevice;
  slot.store(d, std::memory_order_release);
  return *d;
}

CUfunction Specialization::loadFunction(int ordinal) const {
  PerDevice &dev = perDevice(ordinal);
  if (CUfunction f = dev.function.load(std::memory_order_acquire)) [[likely]]
    return f;
  std::lock_guard<std::mutex> lock(loadMutex_);
  if (!dev.function.load(std::memory_order_relaxed)) {
    if (options.backend != codegen::Backend::CUDA || ptx.empty())
      throw std::logic_error("specialization of '" + functionName + "' has no PTX to load");
    // The module loads into the current device's context: device `ordinal` for this call, then
    // the thread's own device again.
    runtime::Device::Selection on(ordinal);
    std::shared_ptr<runtime::Module> module;
    if (links.empty()) {
      module = runtime::Module::loadPTX(ptx);
    } else {
      std::vector<runtime::Module::LinkInput> inputs;
      for (const ir::LinkItem &l : links)
        inputs.push_back({linkKind(l.kind), l.name, l.data.get()});
      module = runtime::Module::loadLinked(ptx, inputs);
    }
    CUfunction f = module->function(symbol);
    if (options.carveout != codegen::CompileOptions::kNoCarveout)
      runtime::setSharedMemoryCarveout(f, options.carveout);
    if (!paramBufferKnown_) {
      // The same PTX gives the same parameter layout on every device: asked once.
      std::vector<runtime::ParamExtent> extents;
      extents.reserve(plan.slots.size());
      for (const codegen::ParamSlot &s : plan.slots)
        extents.push_back({s.offset, s.size});
      paramBuffer_ = runtime::functionParamLayoutIs(f, extents);
      paramBufferKnown_ = true;
    }
    dev.module = std::move(module);
    dev.function.store(f, std::memory_order_release);
  }
  return dev.function.load(std::memory_order_relaxed);
}

bool Specialization::loaded() const {
  int ordinal = runtime::Device::currentOrdinal();
  if (ordinal == 0)
    return device0_.function.load(std::memory_order_acquire) != nullptr;
  const PerDevice *d = ordinal < runtime::Device::kMaxDevices
                           ? devices_[ordinal - 1].load(std::memory_order_acquire)
                           : nullptr;
  return d && d->function.load(std::memory_order_acquire) != nullptr;
}

runtime::BlockSizeSuggestion Specialization::occupancy() const {
  PerDevice &dev = perDevice(runtime::Device::currentOrdinal());
  if (dev.occupancyRead.load(std::memory_order_acquire)) [[likely]]
    return dev.occupancy;
  CUfunction f = cudaFunction();
  std::lock_guard<std::mutex> lock(loadMutex_);
  if (!dev.occupancyRead.load(std::memory_order_relaxed)) {
    dev.occupancy = runtime::maxPotentialBlockSize(f);
    dev.occupancyRead.store(true, std::memory_order_release);
  }
  return dev.occupancy;
}

namespace {

std::string recordName(const char (&chars)[32]) { return std::string(chars, strnlen(chars, 32)); }

} // namespace

ArrayIndexError::ArrayIndexError(const std::string &kernel, const codegen::BoundsRecord &r,
                                 bool ufunc)
    : std::out_of_range([&] {
        std::string where = "array '" + recordName(r.array) + "'";
        std::string fn = recordName(r.function);
        where += fn == kernel ? "" : " in device function '" + fn + "'";
        std::string what = "index " + std::to_string(r.index) + " is out of bounds for axis " +
                           std::to_string(r.axis) + " with size " + std::to_string(r.size) + ": " +
                           where + " at line " + std::to_string(r.line);
        if (ufunc)
          return what + " of ufunc '" + kernel + "'";
        return what + " of kernel '" + kernel + "', thread (" + std::to_string(r.tid[0]) + ", " +
               std::to_string(r.tid[1]) + ", " + std::to_string(r.tid[2]) + ") of block (" +
               std::to_string(r.ctaid[0]) + ", " + std::to_string(r.ctaid[1]) + ", " +
               std::to_string(r.ctaid[2]) + ")";
      }()),
      record(r) {}

namespace {

/// numba-cuda's "In function 'k', file /abs/f.py, line 7, tid=[z, y, x] ctaid=[z, y, x]".
std::string raisePrefix(const ir::RaiseSite &s, const codegen::BoundsRecord &r) {
  std::error_code ec;
  std::filesystem::path file = std::filesystem::absolute(s.file, ec);
  std::string where = "In function '" + s.function + "', file " +
                      (ec ? s.file : file.lexically_normal().string()) + ", line " +
                      std::to_string(s.line) + ", ";
  auto list = [](const int64_t(&v)[3]) {
    return "[" + std::to_string(v[2]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[0]) +
           "]";
  };
  return where + "tid=" + list(r.tid) + " ctaid=" + list(r.ctaid);
}

std::string raiseMessage(const ir::RaiseSite &s, const codegen::BoundsRecord &r) {
  std::string m = raisePrefix(s, r);
  const std::vector<ir::ConstValue> &args = s.exception.args;
  if (!args.empty())
    m += ": " + (args[0].kind == ir::ConstValue::Kind::String ? args[0].s : args[0].str());
  return m;
}

} // namespace

KernelException::KernelException(ir::RaiseSite s, const codegen::BoundsRecord &r)
    : std::runtime_error(raiseMessage(s, r)), site(std::move(s)), record(r),
      prefix(raisePrefix(site, r)) {}

void Specialization::throwFault(const codegen::BoundsRecord &r) const {
  if (r.failed == codegen::BoundsRecord::kRaised && r.index >= 0 &&
      static_cast<size_t>(r.index) < raiseSites.size())
    throw KernelException(raiseSites[static_cast<size_t>(r.index)], r);
  throw ArrayIndexError(functionName, r, loop.has_value());
}

void Specialization::launchCuda(int ordinal, runtime::Dim3 grid, runtime::Dim3 block,
                                unsigned sharedMem, CUstream stream, char *buf,
                                void **params) const {
  // The thread's device once: it picks the function and is the one launched on.
  const runtime::Device &dev = runtime::Device::current(ordinal);
  CUfunction f = cudaFunction(dev.ordinal());
  if (cooperativeLaunch) [[unlikely]] { // cuLaunchCooperativeKernel takes no packed buffer
    pointAtSlots(plan, buf, params);
    runtime::launchCooperativeKernel(dev, f, grid, block, sharedMem, stream, params);
  } else if (paramBuffer()) {
    runtime::launchKernelBuffer(dev, f, grid, block, sharedMem, stream, buf, plan.paramBytes);
  } else {
    pointAtSlots(plan, buf, params);
    runtime::launchKernel(dev, f, grid, block, sharedMem, stream, params);
  }
  if (checksFaults)
    checkCudaFaults(stream);
}

int Specialization::maxCooperativeGridBlocks(int threadsPerBlock, size_t dynamicSharedMem) const {
  if (options.backend == codegen::Backend::CUDA)
    return runtime::maxCooperativeGridBlocks(cudaFunction(), threadsPerBlock, dynamicSharedMem);
  return runtime::hostMaxCooperativeBlocks(threadsPerBlock);
}

void Specialization::checkCudaFaults(CUstream stream) const {
  if (runtime::streamIsCapturing(stream))
    // The wait below would break the capture (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED), and a
    // replay could not report either: the launch just recorded is discarded with the capture.
    throw std::invalid_argument(
        "kernel '" + functionName +
        "' cannot be launched on a stream being captured into a graph: it was compiled to "
        "report out-of-bounds indexing or exceptions (boundscheck=True, or debug=True), so each "
        "launch waits for the kernel and reads its report, which a graph's replays cannot do; "
        "capture a version compiled without them");
  // The device-side record, read once the kernel is done (a checked launch is synchronous).
  const runtime::DriverApi &d = runtime::driver();
  runtime::check(d.cuStreamSynchronize(stream), "cuStreamSynchronize");
  std::pair<CUdeviceptr, size_t> g;
  try {
    g = perDevice(runtime::Device::currentOrdinal()).module->global(symbol + "__bounds");
  } catch (const runtime::CudaError &e) {
    if (e.code() == CUDA_ERROR_NOT_FOUND)
      return; // no array indexing in the kernel: no record
    throw;
  }
  auto [ptr, bytes] = g;
  if (bytes < sizeof(codegen::BoundsRecord))
    return;
  codegen::BoundsRecord r;
  runtime::check(d.cuMemcpyDtoH_v2(&r, ptr, sizeof r), "cuMemcpyDtoH");
  if (!r.failed)
    return;
  runtime::check(d.cuMemsetD8_v2(ptr, 0, sizeof r), "cuMemsetD8");
  throwFault(r);
}

void Specialization::launchHost(runtime::Dim3 grid, runtime::Dim3 block, unsigned sharedMem,
                                char *buf, void **params) const {
  pointAtSlots(plan, buf, params);
  runtime::HostLaunchOptions opts = hostLaunch;
  opts.dynamicSharedBytes = sharedMem;
  try {
    runtime::launchHost(hostEntry, grid, block, params, opts);
  } catch (const runtime::HostSyncError &) {
    // Threads that raised and a barrier or warp collective they left behind: the raise (or
    // index error) that caused it is what the user needs to see.
    if (!hostBounds || !hostBounds->failed)
      throw;
  }
  checkHostFaults();
}

void Specialization::takeHostFault() const {
  codegen::BoundsRecord r = *hostBounds;
  *hostBounds = codegen::BoundsRecord{};
  throwFault(r);
}

// ---- Compiler internals ---------------------------------------------------------------------

/// A kernel's argument types, or a loop's device-function parameter types and its descriptor
/// (`isLoop`), under options.
struct Compiler::SpecKey {
  std::vector<const ir::Type *> args;
  codegen::CompileOptions opts;
  bool isLoop = false;
  codegen::LoopKernelDesc loop;
  bool operator==(const SpecKey &o) const = default;
};

struct Compiler::SpecKeyHash {
  size_t operator()(const SpecKey &k) const {
    size_t h = k.opts.hash();
    for (const ir::Type *t : k.args)
      h = h * 1000003u ^ std::hash<const void *>()(t);
    return k.isLoop ? h * 1000003u ^ k.loop.hash() : h;
  }
};

struct Compiler::Entry {
  // Set at registration, then only read.
  std::string name;
  ir::FunctionKind kind = ir::FunctionKind::Kernel;
  FunctionOptions options;
  /// Eager signatures of a device function (declareSignatures), set before any compile.
  std::vector<ir::Signature> declared;
  /// Guarded by the registry lock.
  bool registered = true;
  // Guarded by the compile lock.
  /// Typed IR per argument types (kept after unregistering while other functions' typed IR
  /// points at it: `callers` not empty).
  std::map<std::vector<const ir::Type *>, std::unique_ptr<ir::Function>> typed;
  /// A kernel's typed IR as a device function (called from device code: numba-cuda compiles it
  /// so, and it may return a value), per argument types.
  std::map<std::vector<const ir::Type *>, std::unique_ptr<ir::Function>> typedAsDevice;
  /// The functions whose typed IR `typed` calls into, and those whose typed IR calls into
  /// this one's: an unregistered entry is erased when no caller is left (freeRetiredLocked).
  std::set<int> callees;
  std::set<int> callers;
  /// The snapshots `typed` was built from (a disk-cache key is only trusted when the function's
  /// current snapshot matches them).
  std::vector<std::shared_ptr<const frontend::CodeSnapshot>> typedFrom;
  /// Typed IR made from the provisional return type of a function whose typing was under way
  /// (mutual recursion: see Frame): never looked up again, kept for the typed IR calling it.
  std::vector<std::unique_ptr<ir::Function>> provisionalTyped;
  std::unordered_map<SpecKey, std::unique_ptr<Specialization>, SpecKeyHash> specs;
};

namespace {

constexpr int kMaxCallDepth = 64;
/// The most specializations of one function whose typing may be under way at once: recursion
/// through calls with other argument types at each level.
constexpr int kMaxRecursiveSpecializations = 8;

/// "int64, float64", for messages.
std::string argsText(const std::vector<const ir::Type *> &args) {
  std::string s;
  for (size_t k = 0; k < args.size(); ++k)
    s += (k ? ", " : "") + args[k]->str();
  return s;
}

/// "saxpy(float32, array(float32, 1d, C))", for dumps.
std::string signatureText(const std::string &name, const std::vector<const ir::Type *> &args) {
  std::string s = name + "(";
  for (size_t k = 0; k < args.size(); ++k)
    s += (k ? ", " : "") + args[k]->str();
  return s + ")";
}

/// PTXJIT_DUMP's llvm and ptx stages for a compiled entry (`what` names it).
void dumpCode(const Specialization &spec, const std::string &what) {
  const DumpStages &stages = dumpStages();
  std::string from = spec.fromDiskCache ? " (from the disk cache)" : "";
  if (stages.llvm)
    dump("llvm", what + from, spec.llvmIR);
  if (stages.ptx && !spec.ptx.empty())
    dump("ptx", what + from, spec.ptx);
}

/// Host kernels: makes the runtime helpers they may call resolvable by the JIT (once), and
/// records the launch facts of `spec`'s entry (shared memory, fibers, local arrays).
void defineHostHelpers() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::pair<std::string, void *>> symbols;
    for (const auto &[name, addr] : runtime::hostIntrinsicSymbols())
      symbols.emplace_back(name, addr);
    codegen::defineHostSymbols(symbols);
  });
}

/// A disk cache entry's fourth section for a kernel launched cooperatively (CUDA).
constexpr const char *kCooperativeSection = "cooperative";

void recordHostLaunch(Specialization &spec) {
  codegen::HostLaunchInfo info =
      codegen::hostLaunchInfo(reinterpret_cast<const void *>(spec.hostEntry));
  spec.hostLaunch.staticSharedBytes = info.staticSharedBytes;
  spec.hostLaunch.cooperative = info.cooperative;
  spec.hostLaunch.gridSync = info.gridSync;
  spec.cooperativeLaunch = info.gridSync;
  spec.hostLaunch.extraStackBytes = info.localBytes;
  spec.hostLaunch.threadsMayExit = info.raises;
  spec.hostBounds = info.bounds;
}

/// Specializes `fn` for its first `given` parameters: each later parameter (which has a
/// default) becomes a local variable that the entry block initializes with the default.
void bindDefaults(ir::Function &fn, const frontend::CodeSnapshot &snap, size_t given) {
  size_t params = fn.argNames.size();
  size_t firstDefault = params - std::min(snap.defaults.size(), params);
  for (size_t k = given; k < params; ++k) {
    const ir::ConstValue &value = snap.defaults[k - firstDefault];
    // The frontend stores each argument into its variable in the entry block:
    // %a = Arg k; StoreLocal k, %a. The Arg becomes the default constant.
    bool replaced = false;
    for (auto &block : fn.blocks) {
      for (auto &instr : block->instrs) {
        auto *arg = ir::dyn_cast<ir::ArgInstr>(instr.get());
        if (!arg || arg->index != static_cast<int>(k))
          continue;
        if (value.kind == ir::ConstValue::Kind::Unsupported)
          ir::raiseDiag(ir::DiagCode::UnsupportedConstant, fn.filename, arg->loc, {value.s});
        auto c = std::make_unique<ir::ConstInstr>(value);
        c->loc = arg->loc;
        c->parent = block.get();
        c->id = fn.nextValueId();
        for (auto &b : fn.blocks)
          for (auto &user : b->instrs)
            for (size_t o = 0; o < user->numOperands(); ++o)
              if (user->operand(o) == arg)
                user->setOperand(o, c.get());
        instr = std::move(c);
        replaced = true;
        break;
      }
      if (replaced)
        break;
    }
    if (!replaced)
      ir::raiseDiag(ir::DiagCode::Internal, fn.filename, {},
                    {"no entry store of parameter '" + fn.argNames[k] + "'"});
    fn.vars[k].isArgument = false;
  }
  fn.argNames.resize(given);
}

} // namespace

/// Resolves calls from the function being typed to user device functions.
class Compiler::Resolver final : public ir::CallResolver {
public:
  /// Resolves the calls of `callerName`, itself reached through `depth` calls.
  Resolver(Compiler &c, std::string callerName, int depth)
      : compiler_(c), callerName_(std::move(callerName)), depth_(depth) {}

  /// The functions resolved so far (the typed function's callees).
  const std::set<int> &callees() const { return callees_; }

  ir::Function *specializeCallee(int functionId, const std::vector<const ir::Type *> &argTypes,
                                 const std::string &file, const ir::SourceLoc &loc) override {
    Entry *found = nullptr;
    try {
      found = &compiler_.entry(functionId);
    } catch (const std::out_of_range &) {
      ir::raiseDiag(
          ir::DiagCode::Internal, file, loc,
          {"the called function (id " + std::to_string(functionId) + ") no longer exists"});
    }
    // A kernel called from device code is compiled as a device function of its caller, as
    // numba-cuda does (its body returns nothing: typing keeps the kernel's rules).
    Entry &callee = *found;
    // A literal passed to a device function becomes a parameter variable: its default type;
    // an int literal keeps its value (types::intLiteral: typing gives the variable int64 and
    // knows the value where a constant is needed), one specialization per value.
    std::vector<const ir::Type *> concrete;
    concrete.reserve(argTypes.size());
    for (const ir::Type *t : argTypes)
      concrete.push_back(ir::hasIntLiteral(t) ? t : ir::concretize(t));
    if (!callee.declared.empty())
      concrete = declaredParams(callee, argTypes, file, loc);
    // A recursive call: the function being typed, whose return type is provisional until its
    // typing ends (ir::inferTypes). Everything typed since then depends on it.
    // (A kernel called from device code is typed as a device function: a kernel calling itself
    // calls its device form.)
    std::vector<Frame> &frames = compiler_.inProgress_;
    int sameFunction = 0;
    for (size_t j = 0; j < frames.size(); ++j) {
      if (frames[j].id == functionId)
        ++sameFunction;
      if (frames[j].id != functionId || frames[j].argTypes != concrete ||
          frames[j].fn->kind != ir::FunctionKind::Device)
        continue;
      for (size_t k = j + 1; k < frames.size(); ++k)
        frames[k].dependsOn = std::min(frames[k].dependsOn, j);
      callees_.insert(functionId);
      return frames[j].fn;
    }
    // Recursion with other argument types types another specialization (an int argument that
    // becomes a float); argument types that change at every level would never end (and may
    // grow exponentially: f((x, x))), so the chain is cut short.
    if (sameFunction >= kMaxRecursiveSpecializations)
      ir::raiseDiag(ir::DiagCode::Recursion, file, loc,
                    {callee.name, "its recursive calls need " +
                                      std::to_string(kMaxRecursiveSpecializations) +
                                      " specializations for different argument types, the last "
                                      "for (" + argsText(concrete) +
                                      "): recursive calls whose argument types keep changing "
                                      "cannot be typed"});
    if (depth_ >= kMaxCallDepth)
      ir::raiseDiag(ir::DiagCode::Recursion, file, loc,
                    {callee.name, "calls nest more than " + std::to_string(kMaxCallDepth) +
                                      " deep"});
    ir::Function *typed = nullptr;
    try {
      typed = compiler_.typedLocked(functionId, concrete, file, loc, depth_ + 1, true);
    } catch (ir::CompileError &e) {
      // The error points into the callee; the user also needs the call that led there.
      e.addCallSite({callee.name, callerName_, file, loc});
      throw;
    }
    callees_.insert(functionId);
    return typed;
  }

  bool isProvisional(const ir::Function *callee) const override {
    return compiler_.provisional_.count(callee) != 0;
  }

private:
  /// The parameters of the eager signature of `callee` that a call with `argTypes` picks.
  static std::vector<const ir::Type *> declaredParams(const Entry &callee,
                                                      const std::vector<const ir::Type *> &argTypes,
                                                      const std::string &file,
                                                      const ir::SourceLoc &loc) {
    std::vector<std::vector<const ir::Type *>> lists;
    for (const ir::Signature &s : callee.declared)
      lists.push_back(s.args);
    int k = ir::selectSignature(argTypes, lists);
    if (k >= 0)
      return lists[static_cast<size_t>(k)];
    std::string got, known;
    for (size_t i = 0; i < argTypes.size(); ++i)
      got += (i ? ", " : "") + argTypes[i]->str();
    for (const ir::Signature &s : callee.declared)
      known += (known.empty() ? "" : ", ") + s.str();
    ir::raiseDiag(ir::DiagCode::CallArgs, file, loc,
                  {"device function '" + callee.name + "'",
                   got + "); its signatures are " + known + " (no matching definition"});
  }

  Compiler &compiler_;
  std::string callerName_;
  int depth_;
  std::set<int> callees_;
};

// ---- Compiler -------------------------------------------------------------------------------

Compiler &Compiler::instance() {
  // Leaked on purpose: nothing to tear down at exit. Its locks, and those of the type tables
  // that compiles fill, are taken around every fork() (runtime/Fork.h), so that a child forked
  // while another thread compiles finds them free; registered here, before their first use.
  static Compiler *c = [] {
    auto *made = new Compiler();
    runtime::registerForkLock(made->mutex_, runtime::kForkCompile);
    runtime::registerForkLock(made->registryMutex_);
    runtime::registerForkLock(ir::typeTableLock());
    runtime::registerForkLock(ir::namedTupleTableLock());
    return made;
  }();
  return *c;
}

Compiler::Compiler() = default;
Compiler::~Compiler() = default;

/// Makes `snapshots` the compile-locked call's snapshots until the scope ends.
class Compiler::SnapshotScope {
public:
  SnapshotScope(Compiler &c, const SnapshotSet &s) : c_(c) { c_.snapshots_ = &s; }
  ~SnapshotScope() { c_.snapshots_ = nullptr; }
  SnapshotScope(const SnapshotScope &) = delete;
  SnapshotScope &operator=(const SnapshotScope &) = delete;

private:
  Compiler &c_;
};

int Compiler::registerFunction(std::string name, ir::FunctionKind kind, FunctionOptions options) {
  auto e = std::make_unique<Entry>();
  e->name = std::move(name);
  e->kind = kind;
  e->options = options;
  std::lock_guard<std::mutex> lock(registryMutex_);
  int id = nextId_++;
  entries_.emplace(id, std::move(e));
  return id;
}

void Compiler::declareSignatures(int id, std::vector<ir::Signature> signatures) {
  std::lock_guard<std::mutex> lock(mutex_);
  entry(id).declared = std::move(signatures);
}

void Compiler::unregisterFunction(int id) {
  {
    std::lock_guard<std::mutex> lock(registryMutex_);
    auto it = entries_.find(id);
    if (it == entries_.end() || !it->second->registered)
      return;
    it->second->registered = false;
    retired_.push_back(id);
  }
  // Free the specializations now unless a compile is under way (never wait for one: the
  // caller may hold the interpreter, which a compile never needs, but waiting would stall it).
  std::unique_lock<std::mutex> compile(mutex_, std::try_to_lock);
  if (compile.owns_lock())
    freeRetiredLocked();
}

void Compiler::freeRetiredLocked() {
  std::vector<int> check;
  {
    std::lock_guard<std::mutex> lock(registryMutex_);
    check.swap(retired_);
  }
  // Erase each unregistered entry no typed IR points into; erasing one may free its callees.
  // (Entries are erased only here, under the compile lock, and only once unregistered, so no
  // compile holds a reference to them.)
  while (!check.empty()) {
    int id = check.back();
    check.pop_back();
    std::unique_ptr<Entry> erased;
    {
      std::lock_guard<std::mutex> lock(registryMutex_);
      auto it = entries_.find(id);
      if (it == entries_.end() || it->second->registered)
        continue;
      if (!it->second->callers.empty()) {
        it->second->specs.clear(); // its typed IR stays for its callers
        continue;
      }
      erased = std::move(it->second);
      entries_.erase(it);
      for (int callee : erased->callees) {
        auto c = entries_.find(callee);
        if (c == entries_.end())
          continue;
        c->second->callers.erase(id);
        if (!c->second->registered && c->second->callers.empty())
          check.push_back(callee);
      }
    }
    // `erased` (its typed IR and specializations) is freed here, outside the registry lock.
  }
}

size_t Compiler::entryCount() const {
  std::lock_guard<std::mutex> lock(registryMutex_);
  return entries_.size();
}

bool Compiler::isRegistered(int id) const {
  std::lock_guard<std::mutex> lock(registryMutex_);
  auto it = entries_.find(id);
  return it != entries_.end() && it->second->registered;
}

Compiler::Entry &Compiler::entry(int id) const {
  std::lock_guard<std::mutex> lock(registryMutex_);
  auto it = entries_.find(id);
  if (it == entries_.end() || !it->second->registered)
    throw std::out_of_range("no registered function with id " + std::to_string(id));
  return *it->second;
}

Compiler::Entry &Compiler::entryOfKind(int id, ir::FunctionKind kind) const {
  Entry &e = entry(id);
  if (e.kind != kind)
    throw std::invalid_argument("'" + e.name + "' is a " +
                                (e.kind == ir::FunctionKind::Kernel
                                     ? "kernel, not a device function"
                                     : "device function, not a kernel"));
  return e;
}

ir::FunctionKind Compiler::kind(int id) const { return entry(id).kind; }

std::string Compiler::name(int id) const { return entry(id).name; }

const FunctionOptions &Compiler::options(int id) const { return entry(id).options; }

size_t Compiler::compiledCount() const { return compiled_.load(); }

std::string sanitizeSymbol(const std::string &name) {
  std::string s;
  for (char c : name)
    s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
    s = "_" + s;
  return s;
}

std::string Compiler::makeSymbol(const Entry &e) {
  return "_ptxjit_" + sanitizeSymbol(e.name) + "_" + std::to_string(nextSymbol_++);
}

namespace {

/// A device function typed for the parameters of one of its eager signatures returns that
/// signature's declared type: its returns convert to it (Numba's rule), when they can.
void applyDeclaredReturn(const std::vector<ir::Signature> &declared, const std::string &name,
                         ir::Function &fn, const std::vector<const ir::Type *> &argTypes,
                         const frontend::CodeSnapshot &snap) {
  for (const ir::Signature &s : declared) {
    if (s.args != argTypes || !s.returnType || s.returnType->kind() == ir::TypeKind::Void)
      continue;
    const ir::Type *inferred = fn.returnType;
    bool ok = inferred == s.returnType ||
              (inferred && ir::isa<ir::ScalarType>(ir::concretize(inferred)) &&
               ir::isa<ir::ScalarType>(s.returnType) &&
               ir::argumentConversion(inferred, s.returnType) != ir::Conversion::None);
    if (!ok)
      ir::raiseDiag(ir::DiagCode::DeclaredReturn, snap.filename,
                    ir::SourceLoc{snap.firstLine, 0, 0, 0},
                    {name, inferred ? inferred->str() : std::string("none"), s.returnType->str()});
    fn.returnType = s.returnType;
    fn.returnTypeDeclared = true;
    return;
  }
}

} // namespace

ir::Function *Compiler::typedLocked(int id, const std::vector<const ir::Type *> &argTypes,
                                    const std::string &callerFile, const ir::SourceLoc &callerLoc,
                                    int depth, bool called) {
  Entry &e = entry(id);
  // A kernel called from device code is compiled as a device function, as numba-cuda does.
  const ir::FunctionKind kind = called ? ir::FunctionKind::Device : e.kind;
  auto &cache = kind == e.kind ? e.typed : e.typedAsDevice;
  auto found = cache.find(argTypes);
  if (found != cache.end())
    return found->second.get();
  auto given = snapshots_ ? snapshots_->find(id) : SnapshotSet::const_iterator();
  if (!snapshots_ || given == snapshots_->end() || !given->second)
    throw std::logic_error("no snapshot of '" + e.name + "' was given to the compiler");
  std::shared_ptr<const frontend::CodeSnapshot> snap = given->second;
  std::unique_ptr<ir::Function> fn = frontend::buildFunction(*snap, kind);
  fn->alwaysInline =
      kind == ir::FunctionKind::Device && (e.options.inlineHint || e.options.forceInline);
  ir::verifyInDebug(*fn);
  const DumpStages &stages = dumpStages();
  if (stages.ir)
    dump("ir", signatureText(e.name, argTypes), fn->print(true));
  size_t params = fn->argNames.size();
  size_t optional = std::min(snap->defaults.size(), params);
  if (argTypes.size() > params || argTypes.size() < params - optional) {
    ir::raiseDiag(ir::DiagCode::ArgumentCount, callerFile.empty() ? snap->filename : callerFile,
                  callerFile.empty() ? ir::SourceLoc{snap->firstLine, 0, 0, 0} : callerLoc,
                  {e.name, std::to_string(params), std::to_string(argTypes.size())});
  }
  if (argTypes.size() < params)
    bindDefaults(*fn, *snap, argTypes.size());
  // Branches this specialization decides (`if y is None:` with y omitted): only the path taken
  // is typed, as Numba prunes them.
  if (ir::pruneConstantBranches(*fn, argTypes) && stages.ir)
    dump("ir pruned", signatureText(e.name, argTypes), fn->print(true));
  // Recursive calls of a function with an eager signature get its declared return type.
  for (const ir::Signature &s : e.declared)
    if (s.args == argTypes && s.returnType && s.returnType->kind() != ir::TypeKind::Void) {
      fn->returnType = s.returnType;
      fn->returnTypeDeclared = true;
      break;
    }
  ir::Function *raw = fn.get();
  const size_t index = inProgress_.size();
  std::set<int> callees;
  size_t dependsOn = index;
  {
    // The frame is popped however typing ends; the provisional set is emptied with the last
    // frame, and a typing that fails leaves nothing in it.
    struct FrameGuard {
      Compiler &c;
      const ir::Function *fn;
      bool ok = false;
      ~FrameGuard() {
        c.inProgress_.pop_back();
        if (c.inProgress_.empty())
          c.provisional_.clear();
        else if (!ok)
          c.provisional_.erase(fn);
      }
    } guard{*this, raw};
    inProgress_.push_back(Frame{id, argTypes, raw, index});
    provisional_.insert(raw);
    Resolver resolver(*this, e.name, depth);
    ir::inferTypes(*fn, argTypes, &resolver);
    callees = resolver.callees();
    dependsOn = inProgress_.back().dependsOn;
    guard.ok = true;
  }
  // Typed from the provisional return type of a function further up whose typing goes on: it
  // stays provisional (typed again at the next call) and is not cached.
  const bool provisional = dependsOn < index;
  if (!provisional)
    provisional_.erase(raw);
  applyDeclaredReturn(e.declared, e.name, *fn, argTypes, *snap);
  ir::verifyInDebug(*fn);
  if (stages.typed)
    dump("typed", signatureText(e.name, argTypes), fn->print(true));
  if (provisional)
    e.provisionalTyped.push_back(std::move(fn));
  else
    cache.emplace(argTypes, std::move(fn));
  e.typedFrom.push_back(std::move(snap));
  // Only typed IR that is kept records its callees: a failed typing keeps nothing.
  for (int callee : callees) {
    if (callee == id)
      continue;
    e.callees.insert(callee);
    std::lock_guard<std::mutex> lock(registryMutex_);
    if (auto it = entries_.find(callee); it != entries_.end())
      it->second->callers.insert(id);
  }
  return raw;
}

const ir::Type *Compiler::typeCheck(int id, const std::vector<const ir::Type *> &argTypes,
                                    const SnapshotSet &snapshots) {
  std::lock_guard<std::mutex> lock(mutex_);
  freeRetiredLocked();
  SnapshotScope scope(*this, snapshots);
  return typedLocked(id, argTypes, {}, {}, 0)->returnType;
}

std::vector<std::pair<std::string, const ir::Type *>>
Compiler::localTypes(int id, const std::vector<const ir::Type *> &argTypes,
                     const SnapshotSet &snapshots) {
  std::lock_guard<std::mutex> lock(mutex_);
  freeRetiredLocked();
  SnapshotScope scope(*this, snapshots);
  const ir::Function *fn = typedLocked(id, argTypes, {}, {}, 0);
  std::vector<std::pair<std::string, const ir::Type *>> out;
  for (const ir::Variable &v : fn->vars)
    if (!v.name.empty() && v.name[0] != '$')
      out.emplace_back(v.printedName(), v.type);
  return out;
}

std::string Compiler::typedIR(int id, const std::vector<const ir::Type *> &argTypes,
                              const SnapshotSet &snapshots) {
  std::lock_guard<std::mutex> lock(mutex_);
  freeRetiredLocked();
  SnapshotScope scope(*this, snapshots);
  return typedLocked(id, argTypes, {}, {}, 0)->print(/*withLocs=*/true);
}

// ---- Disk cache (cache=True) ----------------------------------------------------------------

struct Compiler::DiskKey {
  Digest key;
  std::string path;   ///< the entry's file
  std::string prefix; ///< entries of older versions of this specialization start with it
};

namespace {

/// A digest of `s` alone (device functions by their in-process id): equal digests mean the
/// function was snapshotted with the same code and globals.
Digest shallowDigest(const frontend::CodeSnapshot &s) {
  CacheKey k;
  addSnapshot(k, s, [](CacheKey &kk, const ir::GlobalValue &g) { kk.addInt("id", g.functionId); });
  return k.digest();
}

void addFunctionOptions(CacheKey &k, const FunctionOptions &o) {
  k.addInt("fastmath", o.fastmath).addInt("opt", o.opt).addInt("debug", o.debug);
  k.addInt("lineinfo", o.lineinfo).addInt("inline", o.inlineHint);
  k.addInt("forceinline", o.forceInline);
}

} // namespace

std::optional<Compiler::DiskKey>
Compiler::diskKeyLocked(int id, const std::string &what,
                        const std::vector<const ir::Type *> &argTypes,
                        const codegen::CompileOptions &opts) {
  // A PTXJIT_CACHE_POLICY that does not parse is reported here, to the cache=True compile that
  // would store under it (diskcache::store cannot throw).
  diskcache::pruningPolicy();
  CacheKey k;
  k.add("entry", what);
  bool ok = true;
  std::vector<int> stack;
  // Appends function `fid`'s options and snapshot, and its callees' transitively.
  std::function<void(CacheKey &, int)> addFunction = [&](CacheKey &key, int fid) {
    if (!ok)
      return;
    Entry *fe = nullptr;
    try {
      fe = &entry(fid);
    } catch (const std::out_of_range &) {
      ok = false; // the compile that follows reports it
      return;
    }
    if (std::find(stack.begin(), stack.end(), fid) != stack.end()) {
      key.add("recursive", fe->name); // its snapshot is in the key already
      return;
    }
    auto given = snapshots_->find(fid);
    if (given == snapshots_->end() || !given->second) {
      ok = false;
      return;
    }
    const frontend::CodeSnapshot &snap = *given->second;
    // A captured device array is baked in by address, which means nothing to another process.
    std::function<bool(const ir::GlobalValue &)> capturesDeviceArray =
        [&](const ir::GlobalValue &g) {
          if (g.kind == ir::GlobalValue::Kind::DeviceArray)
            return true;
          for (const ir::GlobalValue &e : g.elems) // a tuple holding one
            if (capturesDeviceArray(e))
              return true;
          return false;
        };
    for (const auto *globals : {&snap.globals, &snap.closure})
      for (const auto &entry : *globals)
        if (capturesDeviceArray(entry.second))
          ok = false;
    // Typed IR built earlier in this process from other globals would be reused by the
    // compile: then the key would not describe the code.
    if (!fe->typedFrom.empty()) {
      Digest now = shallowDigest(snap);
      for (const auto &old : fe->typedFrom)
        if (old.get() != &snap && shallowDigest(*old) != now)
          ok = false;
    }
    key.addInt("kind", static_cast<int>(fe->kind));
    addFunctionOptions(key, fe->options);
    // A device function's eager signatures convert its calls' arguments and result: code.
    key.addInt("declared", static_cast<int64_t>(fe->declared.size()));
    for (const ir::Signature &s : fe->declared)
      key.add("signature", s.str());
    stack.push_back(fid);
    addSnapshot(key, snap,
                [&](CacheKey &kk, const ir::GlobalValue &g) { addFunction(kk, g.functionId); });
    stack.pop_back();
  };
  addFunction(k, id);
  if (!ok)
    return std::nullopt;
  CacheKey slot;
  slot.add("entry", what);
  addArgTypes(slot, argTypes);
  addCompileOptions(slot, opts);
  addArgTypes(k, argTypes);
  addCompileOptions(k, opts);
  addToolchain(k, opts.backend);
  const frontend::CodeSnapshot &snap = *snapshots_->at(id);
  std::string dir = diskcache::directoryFor(snap.filename);
  if (dir.empty())
    return std::nullopt;
  DiskKey dk;
  dk.key = k.digest();
  dk.prefix = diskcache::entryPrefix(snap.filename, snap.qualname, toHex(slot.digest()));
  dk.path = diskcache::entryPath(dir, dk.prefix, dk.key);
  return dk;
}

bool Compiler::loadFromDiskLocked(const DiskKey &k, Specialization &spec) {
  std::optional<CacheEntry> entry = diskcache::load(k.path, k.key);
  if (!entry)
    return false;
  bool cuda = spec.options.backend == codegen::Backend::CUDA;
  auto kind = static_cast<uint32_t>(cuda ? EntryKind::Ptx : EntryKind::HostObject);
  if (entry->kind != kind || entry->sections.size() != 5 || entry->sections[0].empty()) {
    ++cacheCounters().rejected;
    return false;
  }
  std::string &symbol = entry->sections[0];
  std::string &code = entry->sections[1];
  if (cuda) {
    // PTX linked with another libdevice than today's: a miss (compiled again and replaced), not
    // a damaged entry.
    if (!entry->sections[4].empty() && entry->sections[4] != libdeviceStamp())
      return false;
    if (code.find(".entry " + symbol) == std::string::npos) {
      ++cacheCounters().rejected;
      return false;
    }
    spec.ptx = std::move(code);
    spec.cooperativeLaunch = entry->sections[3] == kCooperativeSection;
  } else {
    try {
      defineHostHelpers();
      spec.hostEntry =
          reinterpret_cast<runtime::HostKernelEntry>(codegen::loadHostObject(code, symbol));
      recordHostLaunch(spec);
    } catch (const ir::CompileError &) {
      ++cacheCounters().rejected;
      return false;
    }
  }
  spec.symbol = std::move(symbol);
  spec.llvmIR = std::move(entry->sections[2]);
  spec.returnType = ir::types::void_(); // kernels and loops alike
  spec.fromDiskCache = true;
  spec.checksFaults = spec.options.boundscheck; // entries with raise sites are never stored
  spec.cachePath = k.path;
  ++cacheCounters().hits;
  return true;
}

const Specialization &Compiler::specialize(int id, const std::vector<const ir::Type *> &argTypes,
                                           const codegen::CompileOptions &opts,
                                           const SnapshotSet &snapshots) {
  std::lock_guard<std::mutex> lock(mutex_);
  freeRetiredLocked();
  SnapshotScope scope(*this, snapshots);
  Entry &e = entryOfKind(id, ir::FunctionKind::Kernel);
  auto spec = std::make_unique<Specialization>();
  for (const ir::Type *t : argTypes) // weak Python-scalar arguments travel concrete
    spec->argTypes.push_back(ir::concretize(t));
  spec->plan = codegen::buildPackingPlan(argTypes); // weak floats get their float32 copy
  return compileLocked(id, e, SpecKey{argTypes, opts}, std::move(spec), argTypes, "kernel");
}

const Specialization &Compiler::specializeLoop(int id, const LoopKey &key,
                                               const codegen::CompileOptions &opts,
                                               const SnapshotSet &snapshots) {
  std::lock_guard<std::mutex> lock(mutex_);
  freeRetiredLocked();
  SnapshotScope scope(*this, snapshots);
  Entry &e = entryOfKind(id, ir::FunctionKind::Device);
  auto spec = std::make_unique<Specialization>();
  spec->loop = key;
  spec->argTypes = codegen::loopKernelParams(key.desc, key.fnParams);
  spec->plan = codegen::buildPackingPlan(spec->argTypes);
  return compileLocked(id, e, SpecKey{key.fnParams, opts, true, key.desc}, std::move(spec),
                       key.fnParams, "loop " + key.desc.str());
}

namespace {

/// The module of `spec` (its symbol, options and loop set) from its typed function `fn`.
codegen::LoweredModule lowerSpec(const Specialization &spec, const ir::Function &fn,
                                 codegen::ValueNames names) {
  if (spec.loop)
    return codegen::lowerLoopKernel(fn, spec.loop->desc, spec.options, spec.symbol, names);
  return codegen::lowerKernel(fn, spec.options, spec.symbol, names);
}

} // namespace

std::string Compiler::llvmIR(const Specialization &spec) {
  std::lock_guard<std::mutex> lock(mutex_);
  // From the disk cache: the text stored with the code (no typed IR to lower again).
  if (!spec.llvmIR.empty() || spec.fromDiskCache)
    return spec.llvmIR;
  Entry &e = entry(spec.functionId);
  const SpecKey *key = nullptr;
  for (const auto &[k, s] : e.specs)
    if (s.get() == &spec)
      key = &k;
  if (!key)
    throw std::invalid_argument("llvmIR: not a specialization of this compiler");
  // Started before the lowering, as a compile starts them, so that the optimization pipeline is
  // built in time (else emitPTX builds another while this one is built for nothing).
  std::shared_ptr<codegen::PtxPipelines> pipelines =
      spec.options.backend == codegen::Backend::CUDA
          ? codegen::startPtxPipelines(spec.options, runLater)
          : nullptr;
  // Typed when the specialization was compiled, so no snapshot is read.
  ir::Function *fn = typedLocked(spec.functionId, key->args, {}, {}, 0);
  codegen::LoweredModule m = lowerSpec(spec, *fn, codegen::ValueNames::Keep);
  if (pipelines)
    codegen::emitPTX(m, spec.options, std::move(pipelines));
  spec.llvmIR = m.llvmIR();
  return spec.llvmIR;
}

const Specialization &Compiler::compileLocked(int id, Entry &e, SpecKey key,
                                              std::unique_ptr<Specialization> spec,
                                              const std::vector<const ir::Type *> &fnParams,
                                              const std::string &what) {
  auto found = e.specs.find(key);
  if (found != e.specs.end())
    return *found->second;
  const codegen::CompileOptions &opts = key.opts;
  spec->functionId = id;
  spec->functionName = e.name;
  spec->kind = e.kind;
  spec->options = opts;
  std::string dumpWhat = signatureText(e.name, fnParams) + (what == "kernel" ? "" : " " + what) +
                         " [" + opts.str() + "]";

  // cache=True: look in the disk cache first (no typing, lowering or LLVM on a hit).
  std::optional<DiskKey> disk;
  if (e.options.cache && e.options.links.empty()) {
    disk = diskKeyLocked(id, what, fnParams, opts);
    if (disk && loadFromDiskLocked(*disk, *spec)) {
      dumpCode(*spec, dumpWhat);
      Specialization &ref = *spec;
      e.specs.emplace(std::move(key), std::move(spec));
      return ref;
    }
    ++cacheCounters().misses;
  }

  // The pass pipelines of the CUDA compile are built on the background thread meanwhile.
  std::shared_ptr<codegen::PtxPipelines> pipelines =
      opts.backend == codegen::Backend::CUDA ? codegen::startPtxPipelines(opts, runLater) : nullptr;
  ir::Function *fn = typedLocked(id, fnParams, {}, {}, 0);
  spec->returnType = spec->loop ? ir::types::void_() : fn->returnType;
  spec->symbol = makeSymbol(e);
  // The IR text is printed now only for the disk cache and PTXJIT_DUMP=llvm; otherwise
  // Compiler::llvmIR makes it when asked, and the compile spares LLVM the value names.
  const bool textNow = disk.has_value() || dumpStages().llvm;
  codegen::LoweredModule m =
      lowerSpec(*spec, *fn, textNow ? codegen::ValueNames::Keep : codegen::ValueNames::Drop);
  spec->raiseSites = m.raiseSites();
  spec->checksFaults = opts.boundscheck || !spec->raiseSites.empty();
  // The raise sites name Python classes: the disk cache holds code alone.
  if (!spec->raiseSites.empty())
    disk.reset();
  std::string code; // what the disk cache stores: the PTX or the host object file
  std::string libdevice; // the disk cache's libdevice section: the file the PTX linked, if any
  if (opts.backend == codegen::Backend::CUDA) {
    spec->cooperativeLaunch = m.gridSync();
    spec->ptx = codegen::emitPTX(m, opts, std::move(pipelines));
    if (disk && m.linkedLibdevice())
      libdevice = libdeviceStamp();
    if (textNow)
      spec->llvmIR = m.llvmIR();
    code = spec->ptx;
    spec->links = e.options.links;
    for (const ir::LinkItem &l : m.links())
      if (std::find(spec->links.begin(), spec->links.end(), l) == spec->links.end())
        spec->links.push_back(l);
    if (!spec->links.empty())
      disk.reset(); // the disk cache holds PTX alone, not the code it links
  } else if (disk) {
    spec->llvmIR = m.llvmIR();
    code = codegen::compileHostObject(std::move(m), opts);
    defineHostHelpers();
    spec->hostEntry =
        reinterpret_cast<runtime::HostKernelEntry>(codegen::loadHostObject(code, spec->symbol));
    recordHostLaunch(*spec);
  } else {
    if (textNow)
      spec->llvmIR = m.llvmIR();
    defineHostHelpers();
    spec->hostEntry =
        reinterpret_cast<runtime::HostKernelEntry>(codegen::addToHostJIT(std::move(m), opts));
    recordHostLaunch(*spec);
  }
  // LLVM's module, its context and code generation's pass manager are freed off this thread.
  disposeLater(std::make_shared<codegen::LoweredModule>(std::move(m)));
  if (disk) {
    uint32_t kind = static_cast<uint32_t>(
        opts.backend == codegen::Backend::CUDA ? EntryKind::Ptx : EntryKind::HostObject);
    // The fourth section: the CUDA launch facts (the host object carries its own).
    std::string launch = spec->cooperativeLaunch && opts.backend == codegen::Backend::CUDA
                             ? kCooperativeSection
                             : "";
    diskcache::store(disk->path, disk->key,
                     CacheEntry{kind, {spec->symbol, code, spec->llvmIR, launch, libdevice}},
                     disk->prefix);
    spec->cachePath = disk->path;
  }
  ++compiled_;
  dumpCode(*spec, dumpWhat);
  Specialization &ref = *spec;
  e.specs.emplace(std::move(key), std::move(spec));
  return ref;
}

Compiler::PtxResult Compiler::compilePTX(int id, const std::vector<const ir::Type *> &argTypes,
                                         const codegen::CompileOptions &opts,
                                         const SnapshotSet &snapshots, const std::string &symbol,
                                         bool withLLVM) {
  if (opts.backend != codegen::Backend::CUDA)
    throw std::invalid_argument("compilePTX needs CUDA compile options");
  if (!symbol.empty() && entry(id).kind == ir::FunctionKind::Kernel)
    throw std::invalid_argument("compilePTX names device functions only");
  std::lock_guard<std::mutex> lock(mutex_);
  freeRetiredLocked();
  SnapshotScope scope(*this, snapshots);
  Entry &e = entry(id);
  std::shared_ptr<codegen::PtxPipelines> pipelines = codegen::startPtxPipelines(opts, runLater);
  ir::Function *fn = typedLocked(id, argTypes, {}, {}, 0);
  PtxResult r;
  r.symbol = e.kind == ir::FunctionKind::Kernel ? makeSymbol(e)
             : symbol.empty()                   ? sanitizeSymbol(e.name)
                                                : symbol;
  const DumpStages &stages = dumpStages();
  withLLVM = withLLVM || stages.llvm;
  const codegen::ValueNames names =
      withLLVM ? codegen::ValueNames::Keep : codegen::ValueNames::Drop;
  codegen::LoweredModule m = e.kind == ir::FunctionKind::Kernel
                                 ? codegen::lowerKernel(*fn, opts, r.symbol, names)
                                 : codegen::lowerDeviceFunction(*fn, opts, r.symbol, names);
  r.ptx = codegen::emitPTX(m, opts, std::move(pipelines));
  if (withLLVM)
    r.llvmIR = m.llvmIR();
  disposeLater(std::make_shared<codegen::LoweredModule>(std::move(m)));
  r.returnType = fn->returnType;
  std::string what = signatureText(e.name, argTypes) + " compile_ptx [" + opts.str() + "]";
  if (stages.llvm)
    dump("llvm", what, r.llvmIR);
  if (stages.ptx)
    dump("ptx", what, r.ptx);
  return r;
}

} // namespace ptxjit::compiler
