// The Dispatcher class shared by Dispatcher.cpp (compiling, packing, launching) and
// LaunchConfig.cpp (kernel[grid, block] objects, called without pybind11 on the hot path).
#pragma once

#include "bindings/ArgTypes.h"
#include "bindings/DeviceArray.h"
#include "compiler/Compiler.h"
#include "runtime/Launch.h"

#include <pybind11/pybind11.h>

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace ptxjit::bindings {

namespace py = pybind11;

/// How a launch whose arguments have the fingerprint of a dispatcher's last specialization is
/// packed straight from the Python objects, skipping ArgReader's leaves and fingerprint: one
/// entry per argument, each a device array, an exact Python float, int (fitting int64) or bool,
/// with that argument's slots of the packing plan. Not `usable` when the specialization has an
/// argument of another kind (a tuple, a host array, a NumPy scalar, a complex): its launches
/// read their arguments into leaves.
struct DirectPlan {
  /// How packDirect writes a slot: an array's word, a float's double or float32, an int64; any
  /// other conversion (a bool, an int as a float, a float16) through compiler::packSlot.
  enum class Op : uint8_t { Data, Shape, Stride, Float64, Float32, Int64, Other };
  /// One slot's write, 8 bytes: a launch reads these and not the plan's 32-byte slots.
  struct Write {
    uint32_t offset; ///< the slot's byte offset in the packed buffer
    Op op;
    uint8_t dim;   ///< Shape / Stride: the dimension
    uint16_t slot; ///< Other: the plan's slot index, for compiler::packSlot
  };
  /// What an argument must be: a device array (of `code`), an exact Python float, int or bool.
  /// An Array's writes are its data, then shape[0..ndim), then strides[0..ndim), as the kernel
  /// ABI lays out every array parameter, so packing one reads no Op. FloatPair is the common
  /// Float written as its double, then its float32 copy (a lazily compiled kernel's Python
  /// float), packed without reading its Ops either.
  enum class Kind : uint8_t { Array, Float, Int, Bool, FloatPair };
  struct Arg {
    uint32_t code; ///< the argument's fingerprint code (ArgTypes.h, codes::)
    Kind kind;
    uint8_t ndim;        ///< Array: the array's dimensions
    uint32_t firstWrite; ///< its slots' writes are writes[firstWrite, endWrite)
    uint32_t endWrite;
  };
  /// The room of a direct launch: 8-byte words of the packed buffer (`words` below:
  /// plan.bufferSize() / 8 + 1) and pointers for the pointer forms (on the launching thread's
  /// stack: plan.slots.size() + 1). A plan needing more is not `usable` (1 KiB covers 42 arrays
  /// of 1 dimension; the driver's own limit on a kernel's parameters is 32,764 bytes).
  static constexpr size_t kBufferWords = 128, kParamPointers = 128;
  bool usable = false;
  bool hasArrays = false; ///< some argument is an Array
  std::vector<Arg> args;
  std::vector<Write> writes;

  /// What the last direct launch packed, so that a launch given the same argument objects again
  /// sends `words` as they are and reads none of them (a loop launching a kernel on the same
  /// arrays touches no array object). Argument i's slots in `words` hold the values of
  /// `objects[i]` (null: none yet). A scalar is held (`held[i]`: Python's floats, ints and
  /// bools are immutable, so the same object means the same value). A device array is borrowed,
  /// not kept alive (a launch must not delay freeing the user's memory), and is the same live
  /// array only while no device array object was freed since it was packed
  /// (detail::deviceArrayFrees equals `frees`) and the thread's device is `ordinal` (its
  /// arrays were checked against that device); its geometry never changes.
  std::vector<PyObject *> objects;
  std::vector<py::object> held;
  std::vector<uint64_t> words; ///< the packed buffer: kBufferWords, 16-byte aligned (malloc)
  uint64_t frees = 0;
  int ordinal = -1;
  /// Whether the borrowed arrays in `objects` are still the arrays packed, checked against the
  /// thread's device `current` (see above).
  bool arraysLive(int current) const {
    return frees == detail::deviceArrayFrees && ordinal == current;
  }
};

/// The compiler's options of a function from the options dict ptxjit.cuda passes (device,
/// fastmath, opt, debug, lineinfo, inline, cache, max_registers, launch_bounds,
/// shared_memory_carveout; missing ones take their defaults).
compiler::FunctionOptions functionOptionsFrom(const py::dict &options);

/// Compiler::llvmIR of `spec` (which may compile again: made with the interpreter released).
std::string llvmIRText(const compiler::Specialization &spec);

/// The C++ side of a @cuda.jit function (exposed as ptxjit._core.Dispatcher).
class Dispatcher {
public:
  Dispatcher(py::object pyFunc, py::dict options, std::vector<std::string> sigs);
  ~Dispatcher();

  int id = 0;
  bool device = false;
  std::string name;
  py::object pyFunc;
  compiler::FunctionOptions fopts;
  std::vector<std::string> argNames;
  /// Parameters without a default value (launches may omit the others).
  size_t requiredArgs = 0;
  /// The function takes *args or **kwargs: the kernel language rejects them, so a launch skips
  /// the argument count and compiles, which reports the UnsupportedError at the def line.
  bool starParams = false;
  /// Parameter types of the eager signatures (empty: lazy).
  std::vector<std::vector<const ir::Type *>> eager;
  /// Made for one signature given alone (cuda.jit("sig"), not a list) or by specialize():
  /// numba-cuda's "specialized" kernel, which launches its one definition whatever the
  /// arguments, so an array argument whose dtype differs from its parameter's (of the same item
  /// size and dimensions) is read as the parameter's dtype (specializedParams).
  bool specialized = false;
  /// The argument-type lists compiled so far (or given eagerly), in order.
  std::vector<std::vector<const ir::Type *>> compiled;
  /// cache=True: per argument-type list, the specializations loaded from the disk cache (hits)
  /// and compiled because it had none (misses), and the directory of the last entry.
  std::map<std::vector<const ir::Type *>, int> cacheHits, cacheMisses;
  std::string cachePath;
  std::set<const compiler::Specialization *> cacheCounted; ///< counted once each

  struct Cache {
    std::vector<uint32_t> lastCodes;
    const compiler::Specialization *last = nullptr;
    DirectPlan direct; ///< for `last`
    std::unordered_map<std::vector<uint32_t>, const compiler::Specialization *, CodesHash> map;
  };
  Cache caches[2];

  const compiler::Specialization &lookup(const std::vector<uint32_t> &codes,
                                         codegen::Backend backend);
  /// For the "No matching definition" error: a line naming the first argument that no eager
  /// signature of its arity can take and the parameter type it fails ("" when none).
  std::string firstMismatch(const std::vector<const ir::Type *> &actual) const;
  /// For a specialized kernel: `actual` with each array whose scalar dtype differs from its
  /// eager parameter's, but has the same item size and dimensions, given the parameter's dtype
  /// (its layout and writability kept), so that its memory is read as that dtype. The
  /// arguments unchanged when the kernel is not specialized.
  std::vector<const ir::Type *> specializedParams(std::vector<const ir::Type *> actual) const;
  const compiler::Specialization &compileFor(const std::vector<const ir::Type *> &params,
                                             codegen::Backend backend);
  /// The compiler's specialization for `params` under `opts`: snapshots the function and its
  /// device functions (interpreter held), then compiles without the interpreter.
  const compiler::Specialization &specialize(const std::vector<const ir::Type *> &params,
                                             const codegen::CompileOptions &opts);
  /// The specialization of the last launch on `backend` with `args` packed into its
  /// DirectPlan's `words` (only the arguments that are not the objects packed there last are
  /// read), when they have the kinds and fingerprint codes of that launch's arguments and its
  /// device arrays are on device `ordinal` (the thread's current one); else null, for the
  /// general path to read them (the words of the arguments read before the mismatch rewritten,
  /// with their objects). Runs no Python code, so nothing can launch in between.
  const compiler::Specialization *packDirect(codegen::Backend backend, int ordinal,
                                             PyObject *const *args, size_t nargs);
  /// The last specialization on `backend` when `args` are the very objects its DirectPlan's
  /// words were packed from and those words still hold them (for device arrays: none was
  /// freed since and the thread's device is still `ordinal`); else null. Reads no argument
  /// object, so relaunching on the same arrays costs the same whatever their number; inline,
  /// as every launch asks.
  [[gnu::always_inline]] const compiler::Specialization *
  sameAsLast(codegen::Backend backend, int ordinal, PyObject *const *args, size_t nargs) const {
    const Cache &c = caches[static_cast<int>(backend)];
    const DirectPlan &d = c.direct;
    if (!d.usable || nargs != d.objects.size())
      return nullptr;
    PyObject *const *last = d.objects.data();
    for (size_t i = 0; i < nargs; ++i)
      if (args[i] != last[i])
        return nullptr;
    if (d.hasArrays && !d.arraysLive(ordinal))
      return nullptr;
    return c.last;
  }
  /// Launches with `nargs` positional arguments `args` (borrowed). Throws for bad arguments
  /// (py::type_error), bad configurations (std::invalid_argument), compile and driver errors.
  void launch(runtime::Dim3 grid, runtime::Dim3 block, unsigned sharedMem, py::handle stream,
              int64_t forallTasks, PyObject *const *args, size_t nargs);
  /// For a captured launch whose arguments are set anew (cuda.graph: bindings/Graphs.cpp):
  /// reads `args` as a CUDA launch does, finds their specialization (compiled if new) and packs
  /// them into `buffer` (resized to the plan's words). Throws py::type_error for bad arguments
  /// as a launch does, and for host arrays (their copies to and from the device would not be
  /// in the graph).
  const compiler::Specialization &packForGraph(PyObject *const *args, size_t nargs,
                                               std::vector<uint64_t> &buffer);
  std::vector<const ir::Type *> paramsFromPython(py::handle signature);
  py::object signatures() const;
  /// Numba's `dispatcher.stats`: cache_path, cache_hits and cache_misses (Counters keyed by
  /// signature tuples).
  py::object stats() const;
  py::object inspect(bool ptx, py::handle signature);
  /// Numba's `dispatcher.compile(sig)`: compiles `signature` for the backend in use, as an
  /// eager signature is (compileParams), and returns its argument types (a tuple of ptxjit
  /// types, as `signatures` holds them). Throws as a launch's compile.
  py::tuple compileSignature(py::handle signature);
  /// The Python locals of the function typed for `signature` and their types, as a dict of
  /// name -> type description (ArgTypes.h's typeDescription): Numba's `typemap` of a compiled
  /// signature. Types the function if it was not yet.
  py::dict localTypes(py::handle signature);
  /// The argument types of `signature` (as `signatures` holds them) and the typed IR of the
  /// function for it, with source lines (ir::Function::print): what `inspect_types` shows.
  /// Types the function if it was not yet.
  py::tuple typedIR(py::handle signature);
  /// The CUDA driver's attributes of `signature`'s compiled kernel (cuFuncGetAttribute: regs,
  /// const/shared/local memory, max threads per block), compiling and loading it if needed.
  /// Throws UnsupportedError for device functions and on the CPU backend (the attributes are
  /// the CUDA binary's), CudaDriverError / CudaSupportError from the driver.
  runtime::FunctionAttributes attributes(py::handle signature);
  /// Whether `signature`'s kernel, compiled for the backend in use, synchronizes its grid and
  /// so is launched cooperatively (numba-cuda's `overloads[sig].cooperative`).
  bool cooperative(py::handle signature);
  /// numba-cuda's max_cooperative_grid_blocks: the most blocks of `threadsPerBlock` threads
  /// (with `dynamicSharedMem` bytes each) a cooperative launch of `signature`'s kernel may have
  /// on the backend in use (compiler::Specialization::maxCooperativeGridBlocks; loads the
  /// module on CUDA). Throws UnsupportedError for device functions, ValueError for fewer than
  /// one thread.
  int maxCooperativeGridBlocks(py::handle signature, int64_t threadsPerBlock,
                               int64_t dynamicSharedMem);
  /// How CUDA launches of `signature` (compiled for the CUDA backend, loaded on its first
  /// launch) pass the parameters: "buffer" (one packed buffer, the driver confirmed its
  /// layout), "pointers" (one pointer per parameter), or "not loaded" (not launched yet).
  /// For tests and the benchmark suite.
  std::string launchParams(py::handle signature);
  /// Launches whose arguments were packed by the last specialization's DirectPlan (for tests).
  uint64_t directLaunches = 0;
  /// Numba's argument extensions (`kernel.extensions`): objects whose prepare_args(ty, val,
  /// stream=, retr=) rewrite each launch argument (e.g. into cuda.In(val)); launches of a
  /// kernel with any go through them (LaunchConfig.cpp), the others never look.
  py::list extensions;
  /// The low-occupancy warning was given for this kernel (once per kernel: warnLowOccupancy).
  bool warnedLowOccupancy = false;
  [[noreturn]] void notALaunch() const;

private:
  /// launch() for arguments the last specialization's DirectPlan does not take: read into
  /// leaves, fingerprinted, looked up (compiled if new), host arrays staged around the launch.
  [[gnu::noinline]] void launchGeneral(runtime::Dim3 grid, runtime::Dim3 block, unsigned sharedMem,
                                       py::handle stream, int64_t forallTasks,
                                       PyObject *const *args, size_t nargs,
                                       codegen::Backend backend);
  /// Reads launch arguments `args` into `r` (appending); throws launch()'s TypeError naming the
  /// first argument it cannot pass and why.
  void readArgs(ArgReader &r, PyObject *const *args, size_t nargs) const;
  /// Throws launch()'s TypeError for `nargs` arguments outside [requiredArgs, argNames.size()].
  [[noreturn, gnu::cold, gnu::noinline]] void throwArgCount(size_t nargs) const;
  void recordCompiled(const std::vector<const ir::Type *> &params);
  /// Compiles `params` for `backend` (device functions: type-checks them, they are compiled
  /// into their callers) and adds them to `compiled`.
  void compileParams(const std::vector<const ir::Type *> &params, codegen::Backend backend);
  /// `params` as a tuple of ptxjit type objects (weak scalars as their concrete types).
  static py::tuple typeTuple(const std::vector<const ir::Type *> &params);
};

/// Numba's performance warnings (NumbaPerformanceWarning), given where numba-cuda gives them
/// and switched off by its environment variables (NUMBA_DISABLE_PERFORMANCE_WARNINGS=1, or
/// NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS=0 / NUMBA_CUDA_WARN_ON_IMPLICIT_COPY=0), read once. CUDA
/// backend only. `lowOccupancy`: kernel[grid, block] with fewer than 128 blocks, once per
/// kernel (numba-cuda warns at every configuration; once keeps the launch path free of Python's
/// warning machinery). `implicitCopy`: a launch that copies host arrays to and from the device.
/// `ufuncLowOccupancy`: a ufunc or gufunc loop launched on `blocks` blocks, fewer than 128
/// because its work is small (ufunc::launchElementwise says when); `warned` is set when the
/// warning was given (the caller warns once per ufunc; while the warnings are off by numba's
/// run-time config it asks again). Return false when the warning was turned into an exception
/// (the Python error is set).
bool warnLowOccupancy(Dispatcher &d, runtime::Dim3 grid);

/// Whether consumers of __cuda_array_interface__ synchronize the producer's stream (kernel
/// launches, cuda.as_cuda_array): numba-cuda's CUDA_ARRAY_INTERFACE_SYNC, on unless
/// NUMBA_CUDA_ARRAY_INTERFACE_SYNC=0 (read once) or numba's run-time config turns it off.
bool cudaArrayInterfaceSync();
bool warnImplicitCopy();
bool warnUfuncLowOccupancy(const std::string &ufuncName, int64_t blocks, bool &warned);

/// The Dispatcher of Python object `self` (an instance of ptxjit._core.Dispatcher), without a
/// pybind11 cast on the usual layout.
Dispatcher &dispatcherOf(PyObject *self);

/// A new LaunchConfig object (new reference) for `owner`'s dispatcher.
PyObject *newLaunchConfig(PyObject *owner, runtime::Dim3 grid, runtime::Dim3 block,
                          unsigned sharedMem, PyObject *stream, int64_t forallTasks);

/// kernel[key]: parses (griddim, blockdim[, stream[, sharedmem]]) and returns a new
/// LaunchConfig (new reference). Throws for bad keys.
PyObject *configureLaunch(PyObject *self, PyObject *key);

/// Registers the LaunchConfig type and makes `dispatcherType`'s [] call configureLaunch
/// directly.
void defineLaunchConfig(py::module_ &m, py::handle dispatcherType);

} // namespace ptxjit::bindings
