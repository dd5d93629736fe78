#include "bindings/Dispatcher.h"
#include "bindings/DispatcherImpl.h"

#include "bindings/ArgTypes.h"
#include "bindings/DeviceArray.h"
#include "bindings/Errors.h"
#include "bindings/Gc.h"
#include "bindings/Snapshot.h"
#include "bindings/Streams.h"
#include "bindings/Target.h"
#include "compiler/Compiler.h"
#include "ir/typing/Typing.h"
#include "runtime/Device.h"
#include "runtime/Driver.h"
#include "runtime/HostGrid.h"
#include "runtime/Launch.h"
#include "runtime/Memory.h"
#include "runtime/Staging.h"
#include "runtime/StartupTrace.h"

#include <pybind11/stl.h>

#include <climits>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <unordered_map>

namespace ptxjit::bindings {
namespace {

bool interpreterFinalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

std::string joinTypes(const std::vector<const ir::Type *> &types) {
  std::string s;
  for (const ir::Type *t : types) {
    if (!s.empty())
      s += ", ";
    s += t->str();
  }
  return s;
}

const char *kMissingConfig =
    "Kernel launch configuration was not specified. Use the syntax:\n\n"
    "kernel_function[blockspergrid, threadsperblock](arg0, arg1, ..., argn)\n\n"
    "See https://numba.readthedocs.io/en/stable/cuda/kernels.html#kernel-invocation for help.";

template <typename T> void put(char *dst, T v) { std::memcpy(dst, &v, sizeof(T)); }

/// Writes a Python float's or int's value `v` into `slot` at `dst` as pack() converts a leaf (a
/// DirectPlan write of Op::Other). Out of line, so that the packer's loops stay in registers.
template <typename T>
[[gnu::noinline]] void packConverted(const codegen::ParamSlot &slot, T v, char *dst) {
  if constexpr (std::is_floating_point_v<T>)
    compiler::packSlot(slot, compiler::ArgValue::floating(v), dst);
  else
    compiler::packSlot(slot, compiler::ArgValue::integer(v), dst);
}

/// The DirectPlan of a specialization with argument fingerprint `codes` and packing plan `plan`.
DirectPlan makeDirectPlan(const std::vector<uint32_t> &codes, const codegen::PackingPlan &plan) {
  using Kind = DirectPlan::Kind;
  using Op = DirectPlan::Op;
  using Source = codegen::ParamSlot::Source;
  DirectPlan d;
  // No tuples: argument i is leaf i. Write's narrow fields hold any plan a kernel can have
  // (the driver takes at most 32,764 bytes of parameters); a larger one takes the general path.
  if (plan.leaves.size() != codes.size() || plan.slots.size() > UINT16_MAX)
    return d;
  if (plan.bufferSize() / 8 + 1 > DirectPlan::kBufferWords ||
      plan.slots.size() + 1 > DirectPlan::kParamPointers)
    return d; // more than a direct launch's room on the stack
  for (size_t a = 0; a < codes.size(); ++a) {
    const uint32_t code = codes[a];
    Kind kind;
    if (codes::isArray(code))
      kind = Kind::Array;
    else if (code == codes::scalar(DType::Float64, true))
      kind = Kind::Float;
    else if (code == codes::scalar(DType::Int64, true))
      kind = Kind::Int;
    else if (code == codes::scalar(DType::Bool, false))
      kind = Kind::Bool;
    else
      return DirectPlan(); // a tuple, host array, NumPy scalar, complex: the general path
    DirectPlan::Arg arg{code, kind, 0, static_cast<uint32_t>(d.writes.size()), 0};
    for (size_t i = 0; i < plan.slots.size(); ++i) {
      const codegen::ParamSlot &slot = plan.slots[i];
      if (slot.leaf != static_cast<int>(a))
        continue;
      Op op = Op::Other;
      if (kind == Kind::Array) {
        if (slot.source == Source::Data)
          op = Op::Data;
        else if (slot.source == Source::Shape)
          op = Op::Shape;
        else if (slot.source == Source::Stride)
          op = Op::Stride;
        else
          return DirectPlan(); // an array slot the direct path does not write
        if (slot.dim < 0 || slot.dim > UINT8_MAX)
          return DirectPlan();
      } else if (slot.source == Source::Value && slot.type) {
        const ir::TypeKind k = slot.type->kind();
        const unsigned bits = slot.type->bits();
        if (kind == Kind::Float && k == ir::TypeKind::Float && bits == 64)
          op = Op::Float64;
        else if (kind == Kind::Float && k == ir::TypeKind::Float && bits == 32)
          op = Op::Float32;
        else if (kind == Kind::Int && k == ir::TypeKind::Int && bits == 64)
          op = Op::Int64;
      }
      d.writes.push_back(
          {slot.offset, op, static_cast<uint8_t>(slot.dim), static_cast<uint16_t>(i)});
    }
    arg.endWrite = static_cast<uint32_t>(d.writes.size());
    const DirectPlan::Write *w = d.writes.data() + arg.firstWrite;
    const size_t n = arg.endWrite - arg.firstWrite;
    if (kind == Kind::Array) { // the kernel ABI's order, which packDirect writes without Ops
      const size_t ndim = n / 2;
      bool abiOrder = n % 2 == 1 && ndim <= UINT8_MAX && w[0].op == Op::Data;
      for (size_t k = 0; k < ndim && abiOrder; ++k)
        abiOrder = w[1 + k].op == Op::Shape && w[1 + k].dim == k &&
                   w[1 + ndim + k].op == Op::Stride && w[1 + ndim + k].dim == k;
      if (!abiOrder)
        return DirectPlan();
      arg.ndim = static_cast<uint8_t>(ndim);
    } else if (kind == Kind::Float && n == 2 && w[0].op == Op::Float64 && w[1].op == Op::Float32) {
      arg.kind = Kind::FloatPair;
    }
    d.args.push_back(arg);
  }
  d.usable = true;
  d.hasArrays = std::any_of(d.args.begin(), d.args.end(),
                            [](const DirectPlan::Arg &a) { return a.kind == Kind::Array; });
  d.objects.assign(codes.size(), nullptr);
  d.held.resize(codes.size());
  d.words.assign(DirectPlan::kBufferWords, 0);
  return d;
}

/// Per-thread launch scratch space, reused across launches.
struct Scratch {
  ArgReader reader;
  std::vector<uint64_t> buffer;
  std::vector<void *> params;
  bool busy = false;
};

} // namespace

namespace {

/// A copy of host array leaf `l`'s bytes (the span its strides reach, negative ones too), kept
/// in `keep`; returns the address that stands for the array's first element in the copy.
uint64_t hostCopyOf(const LeafValue &l, std::vector<std::unique_ptr<char[]>> &keep) {
  int64_t lo = 0, hi = 0; // byte offsets of the lowest and highest element from data
  bool empty = false;
  for (int k = 0; k < l.ndim; ++k) {
    if (l.shape[k] == 0)
      empty = true;
    int64_t reach = (l.shape[k] - 1) * l.strides[k];
    (reach < 0 ? lo : hi) += reach;
  }
  if (empty)
    return l.data;
  size_t bytes = static_cast<size_t>(hi - lo) + static_cast<size_t>(l.itemsize());
  keep.push_back(std::make_unique<char[]>(bytes));
  std::memcpy(keep.back().get(), reinterpret_cast<const char *>(l.data) + lo, bytes);
  return reinterpret_cast<uint64_t>(keep.back().get() - lo);
}

} // namespace

// ---- Dispatcher -----------------------------------------------------------------------------

namespace {

/// PTX and (`withLLVM`) LLVM IR of function `id` (Python function `func`) for `params`,
/// compiled alone: snapshots taken with the interpreter held, the compile without it.
compiler::Compiler::PtxResult compilePTXOf(py::handle func, int id,
                                           const std::vector<const ir::Type *> &params,
                                           const codegen::CompileOptions &opts,
                                           const std::string &symbol, bool withLLVM) {
  compiler::SnapshotSet snaps = snapshotWithCallees(func, id);
  std::optional<compiler::Compiler::PtxResult> r;
  {
    py::gil_scoped_release release;
    r = compiler::Compiler::instance().compilePTX(id, params, opts, snaps, symbol, withLLVM);
  }
  warnCompileWarnings();
  return std::move(*r);
}

} // namespace

std::string llvmIRText(const compiler::Specialization &spec) {
  py::gil_scoped_release release;
  return compiler::Compiler::instance().llvmIR(spec);
}

compiler::FunctionOptions functionOptionsFrom(const py::dict &options) {
  auto flag = [&](const char *k, bool dflt) {
    return options.contains(k) ? py::cast<bool>(py::bool_(options[k])) : dflt;
  };
  auto integer = [&](const char *k, int dflt) {
    return options.contains(k) ? py::cast<int>(options[k]) : dflt;
  };
  compiler::FunctionOptions fo;
  fo.fastmath = flag("fastmath", false);
  fo.opt = flag("opt", true);
  fo.debug = flag("debug", false);
  fo.lineinfo = flag("lineinfo", false);
  fo.inlineHint = flag("inline", false);
  fo.forceInline = flag("forceinline", false);
  fo.cache = flag("cache", false);
  if (options.contains("boundscheck") && !options["boundscheck"].is_none())
    fo.boundscheck = py::cast<bool>(py::bool_(options["boundscheck"])) ? 1 : 0;
  // Normalized by ptxjit.cuda (_kernel_options): ints; launch_bounds as (threads per block,
  // blocks per SM, cluster rank), 0 for none.
  fo.maxRegisters = integer("max_registers", 0);
  fo.carveout = integer("shared_memory_carveout", codegen::CompileOptions::kNoCarveout);
  if (options.contains("launch_bounds")) {
    auto lb = py::cast<std::tuple<int, int, int>>(options["launch_bounds"]);
    fo.maxThreadsPerBlock = std::get<0>(lb);
    fo.minBlocksPerSM = std::get<1>(lb);
    fo.maxClusterRank = std::get<2>(lb);
  }
  if (options.contains("link"))
    fo.links = linkItemsFrom(options["link"]);
  return fo;
}

Dispatcher::Dispatcher(py::object func, py::dict options, std::vector<std::string> sigs)
    : pyFunc(std::move(func)) {
  if (!PyFunction_Check(pyFunc.ptr()))
    throw py::type_error("cuda.jit can only compile Python functions");
  device = options.contains("device") && py::cast<bool>(py::bool_(options["device"]));
  specialized = options.contains("specialized") &&
                py::cast<bool>(py::bool_(options["specialized"])) && sigs.size() == 1;
  fopts = functionOptionsFrom(options);
  py::object code = pyFunc.attr("__code__");
  name = textOf(code.attr("co_name"));
  int argc = py::cast<int>(code.attr("co_argcount"));
  py::tuple varnames = code.attr("co_varnames");
  for (int i = 0; i < argc && i < static_cast<int>(varnames.size()); ++i)
    argNames.push_back(textOf(varnames[i]));
  py::object defaults = pyFunc.attr("__defaults__");
  size_t ndefaults = defaults.is_none() ? 0 : py::len(defaults);
  requiredArgs = argNames.size() - std::min(ndefaults, argNames.size());
  starParams = (py::cast<int>(code.attr("co_flags")) & (CO_VARARGS | CO_VARKEYWORDS)) != 0;

  std::vector<ir::Signature> declared;
  for (const std::string &text : sigs) {
    ir::Signature sig = ir::parseSignature(text);
    if (!device && sig.returnType && sig.returnType->kind() != ir::TypeKind::Void)
      throw PtxjitPyError("TypingError", "invalid signature '" + text + "' for kernel '" + name +
                                             "': kernels must return void");
    eager.push_back(sig.args);
    declared.push_back(sig);
  }
  id = compiler::Compiler::instance().registerFunction(
      name, device ? ir::FunctionKind::Device : ir::FunctionKind::Kernel, fopts);
  if (device && !declared.empty())
    compiler::Compiler::instance().declareSignatures(id, std::move(declared));
  // Eager signatures compile now, for the backend in use (device functions are type-checked:
  // they are compiled into the kernels that call them).
  if (eager.empty())
    return;
  try {
    codegen::Backend backend = eagerCompileBackend();
    for (const auto &params : eager)
      compileParams(params, backend);
  } catch (...) {
    compiler::Compiler::instance().unregisterFunction(id);
    throw;
  }
}

// The interpreter stays held: releasing it in the middle of pybind11's deallocation of this
// object let another thread's deallocations run and abort ("Tried to deallocate unregistered
// instance"), and unregisterFunction never waits for a compile.
Dispatcher::~Dispatcher() {
  if (Py_IsInitialized() && !interpreterFinalizing()) // at exit, nothing needs freeing
    compiler::Compiler::instance().unregisterFunction(id);
}

void Dispatcher::recordCompiled(const std::vector<const ir::Type *> &params) {
  for (const auto &c : compiled)
    if (c == params)
      return;
  compiled.push_back(params);
}

const compiler::Specialization &Dispatcher::compileFor(const std::vector<const ir::Type *> &params,
                                                       codegen::Backend backend) {
  codegen::CompileOptions opts = compileOptionsFor(backend, fopts);
  const compiler::Specialization *spec = &specialize(params, opts);
  recordCompiled(params);
  if (fopts.cache && cacheCounted.insert(spec).second) {
    ++(spec->fromDiskCache ? cacheHits : cacheMisses)[params];
    if (!spec->cachePath.empty())
      cachePath = std::filesystem::path(spec->cachePath).parent_path().string();
  }
  return *spec;
}

const compiler::Specialization &Dispatcher::specialize(const std::vector<const ir::Type *> &params,
                                                       const codegen::CompileOptions &opts) {
  compiler::SnapshotSet snaps = snapshotWithCallees(pyFunc, id);
  const compiler::Specialization *spec = nullptr;
  {
    py::gil_scoped_release release;
    runtime::StartupTimer timer("compiling a kernel (or loading it from the disk cache)");
    spec = &compiler::Compiler::instance().specialize(id, params, opts, snaps);
  }
  warnCompileWarnings();
  return *spec;
}

py::object Dispatcher::stats() const {
  py::object fromDesc = py::module_::import("ptxjit.types").attr("from_description");
  py::object counter = py::module_::import("collections").attr("Counter");
  auto counts = [&](const std::map<std::vector<const ir::Type *>, int> &m) {
    py::dict d;
    for (const auto &[params, n] : m) {
      py::tuple t(params.size());
      for (size_t i = 0; i < params.size(); ++i)
        t[i] = fromDesc(typeDescription(ir::concretize(params[i])));
      d[t] = n;
    }
    return counter(d);
  };
  py::dict d;
  d["cache_path"] = cachePath.empty() ? py::object(py::none()) : py::object(py::str(cachePath));
  d["cache_hits"] = counts(cacheHits);
  d["cache_misses"] = counts(cacheMisses);
  return py::module_::import("types").attr("SimpleNamespace")(**d);
}

std::string Dispatcher::firstMismatch(const std::vector<const ir::Type *> &actual) const {
  for (const auto &params : eager) {
    if (params.size() != actual.size())
      continue;
    for (size_t i = 0; i < params.size(); ++i) {
      if (ir::argumentConversion(actual[i], params[i]) != ir::Conversion::None)
        continue;
      std::string arg = i < argNames.size() ? "'" + argNames[i] + "'" : std::to_string(i);
      std::string why = params[i]->kind() == ir::TypeKind::Pointer
                            ? " (a pointer parameter takes an integer address)"
                            : "";
      return "\n  argument " + arg + " of type " + ir::concretize(actual[i])->str() +
             " cannot be passed as " + params[i]->str() + why;
    }
  }
  return "";
}

std::vector<const ir::Type *>
Dispatcher::specializedParams(std::vector<const ir::Type *> actual) const {
  if (!specialized || eager.size() != 1 || eager[0].size() != actual.size())
    return actual;
  for (size_t k = 0; k < actual.size(); ++k) {
    auto *a = ir::dyn_cast<ir::ArrayType>(actual[k]);
    auto *p = ir::dyn_cast<ir::ArrayType>(eager[0][k]);
    if (!a || !p || !a->scalarDtype() || !p->scalarDtype() || a->dtype() == p->dtype() ||
        a->ndim() != p->ndim() || a->itemSize() != p->itemSize())
      continue;
    actual[k] = ir::types::array(p->dtype(), a->ndim(), a->layout(), a->readonly());
  }
  return actual;
}

const compiler::Specialization &Dispatcher::lookup(const std::vector<uint32_t> &codes,
                                                   codegen::Backend backend) {
  Cache &c = caches[static_cast<int>(backend)];
  if (c.last && codes == c.lastCodes) [[likely]]
    return *c.last;
  auto it = c.map.find(codes);
  if (it == c.map.end()) {
    std::vector<const ir::Type *> params;
    if (!eager.empty()) {
      std::vector<const ir::Type *> actual = typesFromCodes(codes, /*weak=*/true);
      std::vector<int> tied;
      int idx = ir::selectSignature(specializedParams(actual), eager, &tied);
      std::vector<const ir::Type *> shown;
      for (const ir::Type *t : actual)
        shown.push_back(ir::concretize(t));
      if (tied.size() > 1) { // Numba's kernel dispatcher refuses a tie between the best
        std::string best;
        for (int t : tied)
          best += "\n(" + joinTypes(eager[static_cast<size_t>(t)]) + ") -> none";
        throw py::type_error("Ambiguous overloading for kernel '" + name + "' (" +
                             joinTypes(shown) + "):" + best);
      }
      if (idx < 0) {
        std::string have;
        for (const auto &e : eager)
          have += "\n    (" + joinTypes(e) + ")";
        throw py::type_error("No matching definition for argument type(s) " + joinTypes(shown) +
                             " of kernel '" + name + "'; its signatures are:" + have +
                             firstMismatch(actual));
      }
      params = eager[idx];
    } else {
      // NEP 50: a Python float or complex argument is a weak scalar, as a literal is (a
      // float32 kernel given `0.3` stays float32); Python ints stay int64, as in Numba.
      params = typesFromCodes(codes, /*weak=*/true);
      for (const ir::Type *&t : params)
        if (t->kind() != ir::TypeKind::WeakFloat && t->kind() != ir::TypeKind::WeakComplex)
          t = ir::concretize(t); // a Python int is int64, tuples are concrete throughout
    }
    const compiler::Specialization &spec = compileFor(params, backend);
    it = c.map.emplace(codes, &spec).first;
  }
  c.last = it->second;
  c.lastCodes = codes;
  c.direct = makeDirectPlan(codes, c.last->plan);
  return *c.last;
}

// Kept out of launch(): inlined there (LTO did), its loops kept their iterators on the stack,
// about 13 instructions per slot written against 8 here.
[[gnu::noinline]] const compiler::Specialization *
Dispatcher::packDirect(codegen::Backend backend, int ordinal, PyObject *const *args, size_t nargs) {
  using Kind = DirectPlan::Kind;
  using Op = DirectPlan::Op;
  Cache &c = caches[static_cast<int>(backend)];
  DirectPlan &d = c.direct;
  if (!c.last || !d.usable || nargs != d.args.size())
    return nullptr;
  PyObject **last = d.objects.data();
  const bool arraysLive = d.arraysLive(ordinal);
  if (!arraysLive)
    d.ordinal = -1; // no array counts as live again until a whole pass below has checked each
  char *buf = reinterpret_cast<char *>(d.words.data());
  const DirectPlan::Write *writes = d.writes.data();
  const codegen::ParamSlot *slots = c.last->plan.slots.data(); // for Other writes
  // Locals, as the buffer's char writes may alias anything reached through `d` or `a`.
  const DirectPlan::Arg *argv = d.args.data();
  py::object *held = d.held.data();
  for (size_t i = 0; i < nargs; ++i) {
    const DirectPlan::Arg &a = argv[i];
    PyObject *o = args[i];
    if (o == last[i] && (arraysLive || a.kind != Kind::Array))
      continue; // its words hold it
    const DirectPlan::Write *w = writes + a.firstWrite, *end = writes + a.endWrite;
    switch (a.kind) {
    case Kind::Array: {
      const DeviceNDArray *dev = asDeviceArray(o);
      if (!dev || dev->code() != a.code || dev->backend() != backend || dev->device() != ordinal)
        return nullptr;
      put<uint64_t>(buf + w[0].offset, dev->address());
      const int64_t *shape = dev->shape().data();
      const int64_t *strides = dev->strides().data();
      const unsigned ndim = a.ndim;
      const DirectPlan::Write *shapeW = w + 1, *strideW = w + 1 + ndim;
      for (unsigned k = 0; k < ndim; ++k) {
        put<int64_t>(buf + shapeW[k].offset, shape[k]);
        put<int64_t>(buf + strideW[k].offset, strides[k]);
      }
      last[i] = o; // borrowed: see DirectPlan::objects
      continue;
    }
    case Kind::FloatPair: {
      if (Py_TYPE(o) != &PyFloat_Type)
        return nullptr;
      const double v = PyFloat_AS_DOUBLE(o);
      put<double>(buf + w[0].offset, v);
      put<float>(buf + w[1].offset, static_cast<float>(v));
      break;
    }
    case Kind::Float: {
      if (Py_TYPE(o) != &PyFloat_Type)
        return nullptr;
      const double v = PyFloat_AS_DOUBLE(o);
      for (; w != end; ++w) {
        if (w->op == Op::Float64) {
          put<double>(buf + w->offset, v);
        } else if (w->op == Op::Float32) {
          put<float>(buf + w->offset, static_cast<float>(v));
        } else { // another conversion, as pack() converts leaves
          packConverted(slots[w->slot], v, buf + w->offset);
        }
      }
      break;
    }
    case Kind::Int: {
      if (Py_TYPE(o) != &PyLong_Type)
        return nullptr;
      int overflow = 0;
      const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
      if (overflow || (v == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return nullptr; // the general path reads (or rejects) it
      }
      for (; w != end; ++w) {
        if (w->op == Op::Int64) {
          put<int64_t>(buf + w->offset, v);
        } else {
          packConverted(slots[w->slot], static_cast<int64_t>(v), buf + w->offset);
        }
      }
      break;
    }
    case Kind::Bool: {
      if (Py_TYPE(o) != &PyBool_Type)
        return nullptr;
      const compiler::ArgValue l = compiler::ArgValue::boolean(o == Py_True);
      for (; w != end; ++w)
        compiler::packSlot(slots[w->slot], l, buf + w->offset);
      break;
    }
    }
    // A scalar, held: the one it replaces is a float, int or bool, freed without running Python.
    held[i] = py::reinterpret_borrow<py::object>(o);
    last[i] = o;
  }
  d.frees = detail::deviceArrayFrees; // each array was checked just now, or is live since
  d.ordinal = ordinal;
  return c.last;
}

void Dispatcher::notALaunch() const {
  if (device)
    throw py::type_error("'" + name +
                         "' is a device function (@cuda.jit(device=True)): call it "
                         "from a kernel, it cannot be called or launched from the host");
  throw py::value_error(kMissingConfig);
}

namespace {

/// A forall's launch of `spec` (forallTasks >= 0): its block (the best occupancy unless given)
/// and the grid that covers the tasks.
void sizeForall(const compiler::Specialization &spec, codegen::Backend backend, int64_t forallTasks,
                unsigned sharedMem, runtime::Dim3 &grid, runtime::Dim3 &block) {
  unsigned tpb = block.x;
  if (tpb == 0)
    tpb = backend == codegen::Backend::CUDA
              ? static_cast<unsigned>(
                    sharedMem == 0
                        ? spec.occupancy().blockSize
                        : runtime::maxPotentialBlockSize(spec.cudaFunction(), sharedMem).blockSize)
              : 256u;
  block = {tpb, 1, 1};
  grid = {static_cast<unsigned>(std::max<int64_t>(1, (forallTasks + tpb - 1) / tpb)), 1, 1};
}

/// Runs `spec` on the CPU backend, the interpreter released (the host launch is synchronous).
void launchOnHost(const compiler::Specialization &spec, runtime::Dim3 grid, runtime::Dim3 block,
                  unsigned sharedMem, char *buf, void **params) {
  py::gil_scoped_release release;
  spec.launchHost(grid, block, sharedMem, buf, params);
}

} // namespace

void Dispatcher::throwArgCount(size_t nargs) const {
  std::string count =
      requiredArgs == argNames.size()
          ? std::to_string(argNames.size())
          : "from " + std::to_string(requiredArgs) + " to " + std::to_string(argNames.size());
  throw py::type_error(name + "() takes " + count + " positional argument" +
                       (argNames.size() == 1 ? "" : "s") + " but " + std::to_string(nargs) +
                       (nargs == 1 ? " was" : " were") + " given");
}

void Dispatcher::launch(runtime::Dim3 grid, runtime::Dim3 block, unsigned sharedMem,
                        py::handle stream, int64_t forallTasks, PyObject *const *args,
                        size_t nargs) {
  if (device)
    notALaunch();
  const codegen::Backend backend = currentBackend();
  if (!starParams && (nargs < requiredArgs || nargs > argNames.size())) [[unlikely]]
    throwArgCount(nargs);
  // The common case: the arguments of the last launch again (their kinds and types), packed
  // into the dispatcher's words for them. Nothing from here to the driver's call runs Python
  // code or releases the interpreter, so no other launch can rewrite those words in between.
  void *params[DirectPlan::kParamPointers];
  const int ordinal = runtime::Device::currentOrdinal(); // arrays elsewhere: the general path
  const compiler::Specialization *spec = sameAsLast(backend, ordinal, args, nargs);
  if (!spec)
    spec = packDirect(backend, ordinal, args, nargs);
  if (!spec) [[unlikely]]
    return launchGeneral(grid, block, sharedMem, stream, forallTasks, args, nargs, backend);
  ++directLaunches;
  CUstream h = isDefaultStreamArg(stream.ptr()) ? nullptr : streamHandle(stream, backend, true);
  if (forallTasks >= 0) [[unlikely]]
    sizeForall(*spec, backend, forallTasks, sharedMem, grid, block);
  std::vector<uint64_t> &words = caches[static_cast<int>(backend)].direct.words;
  if (backend == codegen::Backend::Host) {
    // The host launch releases the interpreter: it runs on a copy another launch cannot touch.
    alignas(16) uint64_t copy[DirectPlan::kBufferWords];
    std::memcpy(copy, words.data(), sizeof copy);
    return launchOnHost(*spec, grid, block, sharedMem, reinterpret_cast<char *>(copy), params);
  }
  // Device arrays only: an asynchronous launch, short enough to keep the GIL (as Numba). The
  // driver copies the words before cuLaunchKernel returns.
  spec->launchCuda(ordinal, grid, block, sharedMem, h, reinterpret_cast<char *>(words.data()),
                   params);
}

void Dispatcher::readArgs(ArgReader &r, PyObject *const *args, size_t nargs) const {
  std::string why;
  for (size_t i = 0; i < nargs; ++i) {
    PyObject *o = args[i];
    if (!r.read(o, static_cast<int>(i), why))
      throw py::type_error("argument '" + argNames[i] + "' of kernel '" + name +
                           "': cannot pass a value of type " + Py_TYPE(o)->tp_name + " (" + why +
                           ")");
  }
}

void Dispatcher::launchGeneral(runtime::Dim3 grid, runtime::Dim3 block, unsigned sharedMem,
                               py::handle stream, int64_t forallTasks, PyObject *const *args,
                               size_t nargs, codegen::Backend backend) {
  thread_local Scratch cached;
  std::optional<Scratch> nested; // made only for a launch inside a launch (an extension's)
  Scratch &sc = cached.busy ? nested.emplace() : cached;
  struct BusyGuard {
    Scratch &s;
    bool prev;
    ~BusyGuard() {
      s.reader.held.clear(); // imports of DLPack producers hold them: not past this launch
      s.busy = prev;
    }
  } busyGuard{sc, sc.busy};
  sc.busy = true;

  ArgReader &r = sc.reader;
  r.clear();
  readArgs(r, args, nargs);
  bool hostArrays = false;
  for (LeafValue &l : r.leaves) {
    if (l.kind != LeafValue::Kind::Array)
      continue;
    hostArrays = hostArrays || l.origin == LeafValue::Origin::HostArray;
    if (l.origin == LeafValue::Origin::DeviceArray && l.device->backend() != backend)
      throw py::type_error("argument '" + argNames[l.arg] + "' of kernel '" + name +
                           "': the device array belongs to the " +
                           backendName(l.device->backend()) + " backend but kernels run on the " +
                           backendName(backend) + " backend");
    if (l.origin == LeafValue::Origin::CudaInterface && backend != codegen::Backend::CUDA)
      throw py::type_error("argument '" + argNames[l.arg] + "' of kernel '" + name +
                           "': arrays in GPU memory (__cuda_array_interface__) cannot be used by "
                           "the CPU backend");
    // The __cuda_array_interface__ v3 protocol: a consumer waits for the producer's stream.
    if (l.producerStream && cudaArrayInterfaceSync())
      synchronizeProducerStream(l.producerStream);
  }

  const compiler::Specialization &spec = lookup(r.codes, backend);
  const codegen::PackingPlan &plan = spec.plan;
  CUstream h = streamHandle(stream, backend, true);
  if (forallTasks >= 0)
    sizeForall(spec, backend, forallTasks, sharedMem, grid, block);
  sc.params.resize(plan.slots.size() + 1);
  sc.buffer.resize(plan.bufferSize() / 8 + 1);
  char *buf = reinterpret_cast<char *>(sc.buffer.data());

  if (backend == codegen::Backend::Host) {
    // cuda.In on the host: the kernel works on a copy, so the array is left as it was (on
    // CUDA nothing is copied back). Out and InOut use the array in place.
    std::vector<std::unique_ptr<char[]>> inCopies;
    for (LeafValue &l : r.leaves)
      if (l.kind == LeafValue::Kind::Array && l.transfer == LeafValue::Transfer::In)
        l.data = hostCopyOf(l, inCopies);
    compiler::pack(plan, r.leaves.data(), buf);
    return launchOnHost(spec, grid, block, sharedMem, buf, sc.params.data());
  }
  if (!hostArrays) {
    // Device arrays only: an asynchronous launch, short enough to keep the GIL (as Numba).
    compiler::pack(plan, r.leaves.data(), buf);
    spec.launchCuda(grid, block, sharedMem, h, buf, sc.params.data());
    return;
  }
  // Host arrays are copied to the device around the launch, as Numba does
  // (runtime/Staging.h: the launch returns once they are back).
  if (!warnImplicitCopy())
    throw py::error_already_set();
  spec.cudaFunction(); // load (or fail) before copying anything
  py::gil_scoped_release release;
  runtime::HostStaging staging(h);
  for (LeafValue &l : r.leaves)
    if (l.kind == LeafValue::Kind::Array && l.origin == LeafValue::Origin::HostArray)
      l.data = staging.stage(l.data, l.ndim, l.shape, l.strides, l.itemsize(),
                             l.transfer != LeafValue::Transfer::Out,
                             l.writeable && l.transfer != LeafValue::Transfer::In);
  compiler::pack(plan, r.leaves.data(), buf);
  spec.launchCuda(grid, block, sharedMem, h, buf, sc.params.data());
  staging.finish();
}

const compiler::Specialization &Dispatcher::packForGraph(PyObject *const *args, size_t nargs,
                                                         std::vector<uint64_t> &buffer) {
  if (device)
    notALaunch();
  if (!starParams && (nargs < requiredArgs || nargs > argNames.size()))
    throwArgCount(nargs);
  ArgReader r;
  readArgs(r, args, nargs);
  for (const LeafValue &l : r.leaves) {
    if (l.kind != LeafValue::Kind::Array)
      continue;
    if (l.origin == LeafValue::Origin::HostArray)
      throw py::type_error("argument '" + argNames[l.arg] + "' of kernel '" + name +
                           "': a captured launch cannot take a host array (its copies to and "
                           "from the device are not part of the graph); pass a device array");
    if (l.origin == LeafValue::Origin::DeviceArray && l.device->backend() != codegen::Backend::CUDA)
      throw py::type_error("argument '" + argNames[l.arg] + "' of kernel '" + name +
                           "': the device array belongs to the " +
                           backendName(l.device->backend()) + " backend, not CUDA's");
  }
  const compiler::Specialization &spec = lookup(r.codes, codegen::Backend::CUDA);
  buffer.assign(spec.plan.bufferSize() / 8 + 1, 0);
  compiler::pack(spec.plan, r.leaves.data(), reinterpret_cast<char *>(buffer.data()));
  return spec;
}

std::vector<const ir::Type *> Dispatcher::paramsFromPython(py::handle signature) {
  // A tuple from .signatures maps back to the exact types compiled (readonly arrays too).
  if (PyTuple_Check(signature.ptr())) {
    py::object known = signatures();
    py::list list = known;
    for (size_t i = 0; i < list.size() && i < compiled.size(); ++i)
      if (PyObject_RichCompareBool(list[i].ptr(), signature.ptr(), Py_EQ) == 1)
        return compiled[i];
  }
  py::object text = py::module_::import("ptxjit.types").attr("signature_text")(signature);
  return ir::parseSignature(py::cast<std::string>(text)).args;
}

py::tuple Dispatcher::typeTuple(const std::vector<const ir::Type *> &params) {
  py::object fromDesc = py::module_::import("ptxjit.types").attr("from_description");
  py::tuple t(params.size());
  for (size_t i = 0; i < params.size(); ++i)
    t[i] = fromDesc(typeDescription(ir::concretize(params[i]))); // weak: a Python scalar
  return t;
}

py::object Dispatcher::signatures() const {
  py::list out;
  for (const auto &params : compiled)
    out.append(typeTuple(params));
  return out;
}

py::object Dispatcher::inspect(bool ptx, py::handle signature) {
  codegen::CompileOptions opts = compileOptionsFor(codegen::Backend::CUDA, fopts);
  auto textOf = [&](const std::vector<const ir::Type *> &params) {
    recordCompiled(params);
    if (device) {
      // The device function alone (as cuda.compile_ptx(func, sig, device=True) gives it): in
      // kernels it is compiled into their module instead.
      compiler::Compiler::PtxResult r = compilePTXOf(pyFunc, id, params, opts, {}, !ptx);
      return py::str(ptx ? r.ptx : r.llvmIR);
    }
    const compiler::Specialization *spec = &specialize(params, opts);
    return py::str(ptx ? spec->ptx : llvmIRText(*spec));
  };
  if (!signature.is_none())
    return textOf(paramsFromPython(signature));
  py::dict out;
  py::list keys = signatures();
  std::vector<std::vector<const ir::Type *>> all = compiled;
  for (size_t i = 0; i < all.size(); ++i)
    out[keys[i]] = textOf(all[i]);
  return out;
}

void Dispatcher::compileParams(const std::vector<const ir::Type *> &params,
                               codegen::Backend backend) {
  if (!device) {
    compileFor(params, backend);
    return;
  }
  compiler::SnapshotSet snaps = snapshotWithCallees(pyFunc, id);
  {
    py::gil_scoped_release release;
    compiler::Compiler::instance().typeCheck(id, params, snaps);
  }
  recordCompiled(params);
}

py::dict Dispatcher::localTypes(py::handle signature) {
  std::vector<const ir::Type *> params = paramsFromPython(signature);
  compiler::SnapshotSet snaps = snapshotWithCallees(pyFunc, id);
  std::vector<std::pair<std::string, const ir::Type *>> locals;
  {
    py::gil_scoped_release release;
    locals = compiler::Compiler::instance().localTypes(id, params, snaps);
  }
  py::dict out;
  for (const auto &[name, type] : locals)
    out[py::str(name)] = typeDescription(ir::concretize(type));
  return out;
}

py::tuple Dispatcher::typedIR(py::handle signature) {
  std::vector<const ir::Type *> params = paramsFromPython(signature);
  compiler::SnapshotSet snaps = snapshotWithCallees(pyFunc, id);
  std::string text;
  {
    py::gil_scoped_release release;
    text = compiler::Compiler::instance().typedIR(id, params, snaps);
  }
  return py::make_tuple(typeTuple(params), text);
}

py::tuple Dispatcher::compileSignature(py::handle signature) {
  std::vector<const ir::Type *> params = paramsFromPython(signature);
  compileParams(params, currentBackend());
  return typeTuple(params);
}

runtime::FunctionAttributes Dispatcher::attributes(py::handle signature) {
  if (device)
    throw PtxjitPyError("UnsupportedError", "'" + name +
                                                "' is a device function: it has no kernel "
                                                "attributes of its own (it is compiled into the "
                                                "kernels that call it)");
  if (currentBackend() != codegen::Backend::CUDA)
    throw PtxjitPyError("UnsupportedError",
                        "kernel attributes (registers, shared, local and constant memory, "
                        "threads per block) are properties of the CUDA binary; kernels on the CPU "
                        "backend (PTXJIT_TARGET=cpu, or no GPU) have none");
  const compiler::Specialization &spec =
      compileFor(paramsFromPython(signature), codegen::Backend::CUDA);
  CUfunction f;
  {
    py::gil_scoped_release release;
    f = spec.cudaFunction();
  }
  return runtime::functionAttributes(f);
}

bool Dispatcher::cooperative(py::handle signature) {
  if (device)
    notALaunch();
  return compileFor(paramsFromPython(signature), currentBackend()).cooperativeLaunch;
}

int Dispatcher::maxCooperativeGridBlocks(py::handle signature, int64_t threadsPerBlock,
                                         int64_t dynamicSharedMem) {
  if (device)
    notALaunch();
  if (threadsPerBlock < 1 || threadsPerBlock > std::numeric_limits<int>::max())
    throw py::value_error("max_cooperative_grid_blocks: the block has " +
                          std::to_string(threadsPerBlock) + " threads");
  if (dynamicSharedMem < 0)
    throw py::value_error("max_cooperative_grid_blocks: negative dynamic shared memory");
  const compiler::Specialization &spec = compileFor(paramsFromPython(signature), currentBackend());
  py::gil_scoped_release release;
  return spec.maxCooperativeGridBlocks(static_cast<int>(threadsPerBlock),
                                       static_cast<size_t>(dynamicSharedMem));
}

std::string Dispatcher::launchParams(py::handle signature) {
  if (device)
    notALaunch();
  std::vector<const ir::Type *> params = paramsFromPython(signature);
  codegen::CompileOptions opts = compileOptionsFor(codegen::Backend::CUDA, fopts);
  const compiler::Specialization *spec = &specialize(params, opts);
  if (!spec->loaded())
    return "not loaded";
  return spec->paramBuffer() ? "buffer" : "pointers";
}

// ---- Launch configurations ------------------------------------------------------------------

std::optional<DispatcherIdentity> dispatcherIdentity(py::handle v) {
  if (!py::isinstance<Dispatcher>(v))
    return std::nullopt;
  const Dispatcher &d = dispatcherOf(v.ptr());
  return DispatcherIdentity{d.id, d.device, d.name, d.pyFunc};
}

namespace {
/// The Python objects a Dispatcher holds, for the cyclic collector: its function's globals or
/// closure usually hold the Dispatcher again.
void dispatcherReferents(const Dispatcher &d, GcVisitor &visit) {
  visit(d.pyFunc);
  visit(d.extensions);
}
} // namespace

void defineDispatcher(py::module_ &m) {
  py::class_<Dispatcher> cls(m, "Dispatcher", py::dynamic_attr(),
                             gcTraversed<Dispatcher, dispatcherReferents>(),
                             "A function compiled by @cuda.jit: launch it with kernel[grid, block]"
                             "(args...).");
  cls.def(py::init<py::object, py::dict, std::vector<std::string>>(), py::arg("py_func"),
          py::arg("options"), py::arg("signatures"))
      .def("__getitem__",
           [](py::object self, py::object key) {
             return py::reinterpret_steal<py::object>(configureLaunch(self.ptr(), key.ptr()));
           })
      .def("__call__", [](const Dispatcher &d, py::args, py::kwargs) { d.notALaunch(); })
      .def(
          "forall",
          [](py::object self, int64_t ntasks, unsigned tpb, py::object stream, unsigned sharedmem) {
            Dispatcher &d = self.cast<Dispatcher &>();
            if (d.device)
              d.notALaunch();
            if (ntasks < 0)
              throw py::value_error("Can't create ForAll with negative task count (forall() takes "
                                    "a number of tasks >= 0, got " +
                                    std::to_string(ntasks) + ")");
            return py::reinterpret_steal<py::object>(newLaunchConfig(
                self.ptr(), {1, 1, 1}, {tpb, 1, 1}, sharedmem, stream.ptr(), ntasks));
          },
          py::arg("ntasks"), py::arg("tpb") = 0, py::arg("stream") = 0, py::arg("sharedmem") = 0)
      .def_property_readonly("py_func", [](const Dispatcher &d) { return d.pyFunc; })
      .def_property_readonly("signatures", &Dispatcher::signatures)
      .def_property_readonly("stats", &Dispatcher::stats)
      .def_property_readonly("device", [](const Dispatcher &d) { return d.device; })
      .def_property_readonly("function_id", [](const Dispatcher &d) { return d.id; })
      .def_property_readonly("targetoptions",
                             [](const Dispatcher &d) {
                               py::dict o;
                               o["device"] = d.device;
                               o["fastmath"] = d.fopts.fastmath;
                               o["opt"] = d.fopts.opt;
                               o["debug"] = d.fopts.debug;
                               o["lineinfo"] = d.fopts.lineinfo;
                               return o;
                             })
      .def(
          "inspect_llvm", [](Dispatcher &d, py::object sig) { return d.inspect(false, sig); },
          py::arg("signature") = py::none(),
          "LLVM IR (CUDA target): a dict keyed by signature, or one signature's text.")
      .def(
          "inspect_ptx", [](Dispatcher &d, py::object sig) { return d.inspect(true, sig); },
          py::arg("signature") = py::none(),
          "PTX: a dict keyed by signature, or one signature's text.")
      .def(
          "_compile", [](Dispatcher &d, py::object sig) { return d.compileSignature(sig); },
          py::arg("signature"),
          "Compiles `signature` for the backend in use (Numba's dispatcher.compile); returns "
          "its argument types.")
      .def(
          "_local_types", [](Dispatcher &d, py::object sig) { return d.localTypes(sig); },
          py::arg("signature"),
          "The Python locals of the function typed for `signature`: name -> type description.")
      .def(
          "_typed_ir", [](Dispatcher &d, py::object sig) { return d.typedIR(sig); },
          py::arg("signature"),
          "(argument types, typed IR with source lines) of the function for `signature` "
          "(inspect_types).")
      .def(
          "_attributes",
          [](Dispatcher &d, py::object sig) {
            runtime::FunctionAttributes a = d.attributes(sig);
            py::dict out;
            out["regs_per_thread"] = a.numRegs;
            out["const_mem_size"] = a.constSizeBytes;
            out["shared_mem_per_block"] = a.sharedSizeBytes;
            out["local_mem_per_thread"] = a.localSizeBytes;
            out["max_threads_per_block"] = a.maxThreadsPerBlock;
            return out;
          },
          py::arg("signature"),
          "The CUDA driver's attributes of the kernel compiled for `signature`.")
      .def(
          "_cooperative", [](Dispatcher &d, py::object sig) { return d.cooperative(sig); },
          py::arg("signature"),
          "Whether the kernel compiled for `signature` is launched cooperatively (cuda.cg).")
      .def(
          "_max_cooperative_grid_blocks",
          [](Dispatcher &d, py::object sig, int64_t threads, int64_t dynsmem) {
            return d.maxCooperativeGridBlocks(sig, threads, dynsmem);
          },
          py::arg("signature"), py::arg("threads_per_block"), py::arg("dynamic_shared_mem") = 0,
          "The most blocks a cooperative launch of `signature`'s kernel may have.")
      .def(
          "_launch_params", [](Dispatcher &d, py::object sig) { return d.launchParams(sig); },
          py::arg("signature"),
          "How CUDA launches pass the parameters: 'buffer', 'pointers' or 'not loaded'.")
      .def_readonly("extensions", &Dispatcher::extensions,
                    "Numba's argument extensions: append objects with prepare_args(ty, val, "
                    "stream=, retr=) to rewrite launch arguments.")
      .def_readonly("_direct_launches", &Dispatcher::directLaunches,
                    "Launches that packed their arguments without reading them into leaves "
                    "(the arguments had the kinds and types of the launch before).")
      .def("__repr__", [](const Dispatcher &d) {
        return std::string("<ptxjit ") + (d.device ? "device function '" : "kernel '") + d.name +
               "'>";
      });

  defineLaunchConfig(m, cls);

  m.def(
      "_signature_types",
      [](const std::string &text) {
        ir::Signature sig = ir::parseSignature(text);
        py::list args;
        for (const ir::Type *t : sig.args)
          args.append(typeDescription(t));
        return py::make_tuple(sig.returnType ? typeDescription(sig.returnType) : py::none(), args);
      },
      py::arg("text"),
      "The compiler's reading of a signature string: (return type description or None, "
      "[argument type descriptions]) (ArgTypes.h's typeDescription).");
  m.def(
      "compile_ptx",
      [](py::object func, const std::string &sigText, bool device, py::dict options, int ccMajor,
         int ccMinor, bool archSpecific, const std::string &symbol) {
        if (py::isinstance<Dispatcher>(func))
          func = func.cast<const Dispatcher &>().pyFunc;
        if (!PyFunction_Check(func.ptr()))
          throw py::type_error("compile_ptx() needs a Python function");
        ir::Signature sig = ir::parseSignature(sigText);
        std::string fname = textOf(func.attr("__code__").attr("co_name"));
        compiler::FunctionOptions fo = functionOptionsFrom(options);
        compiler::Compiler &c = compiler::Compiler::instance();
        int id = c.registerFunction(
            fname, device ? ir::FunctionKind::Device : ir::FunctionKind::Kernel, fo);
        if (device && sig.returnType)
          c.declareSignatures(id, {sig}); // "int32(float64)": the result converts to int32
        struct Unregister {
          int id;
          ~Unregister() { compiler::Compiler::instance().unregisterFunction(id); }
        } unregister{id};
        codegen::CompileOptions opts = cudaOptionsForCC(ccMajor, ccMinor, fo);
        opts.archSpecific = archSpecific;
        compiler::Compiler::PtxResult r = compilePTXOf(func, id, sig.args, opts, symbol, false);
        return py::make_tuple(r.ptx, typeDescription(r.returnType));
      },
      py::arg("pyfunc"), py::arg("sig"), py::arg("device"), py::arg("options"), py::arg("cc_major"),
      py::arg("cc_minor"), py::arg("arch_specific") = false, py::arg("symbol") = std::string());
}

} // namespace ptxjit::bindings
