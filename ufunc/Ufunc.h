// A ufunc (@vectorize) or generalized ufunc (@guvectorize) over a registered device function:
// its loops (signatures), type resolution cached per input and output types, and the running
// of one loop over operands already in the memory of the backend that runs it. The loop
// kernels are the compiler's specializations (Compiler::specializeLoop): compiled once per
// loop, backend and loop descriptor, and with cache=True kept on disk as kernels are. The
// NumPy semantics of a whole call (outputs, casts, staging) are ufunc/Call.h's.
#pragma once

#include "compiler/Compiler.h"
#include "compiler/Packing.h"
#include "ir/LoopResolution.h"
#include "ufunc/Broadcast.h"
#include "ufunc/Layout.h"
#include "ufunc/Loops.h"

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace ptxjit::ufunc {

/// Where the ufunc's loops run: 'cuda' (the backend in use: the GPU, or the CPU backend
/// without one), 'cpu' (one host thread) or 'parallel' (all host threads).
enum class Target : uint8_t { Cuda, Cpu, Parallel };

/// The target named `name` ("cuda", "cpu", "parallel"); std::invalid_argument otherwise.
Target targetFromName(const std::string &name);
/// "cuda", "cpu" or "parallel".
const char *targetName(Target t);

/// A type error of a call or a signature (the bindings raise TypeError).
struct TypeMismatch : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// One loop (signature) of a ufunc: its input and output dtypes (resolution) and the device
/// function's parameter types.
struct Loop : ir::LoopTypes {
  std::vector<const ir::Type *> params;
};

/// One operand of a loop: a scalar passed by value or an array in the memory of the backend
/// that runs the loop.
struct Operand {
  bool scalar = false;
  const ir::ScalarType *dtype = nullptr; ///< the array's element type, or the scalar's type
  compiler::ArgValue value;              ///< scalars
  uint64_t data = 0;                     ///< arrays: address of element 0
  Shape shape;
  Strides strides; ///< bytes
};

/// How a reduction is computed.
struct ReduceRequest {
  int loop = -1;         ///< a loop (acc, acc) -> acc
  Operand input;         ///< an array
  std::vector<int> axes; ///< normalized, sorted, distinct
  Operand output;        ///< an array with the kept dimensions (no keepdims ones of length 1)
};

/// What the bindings provide to compile loops (the ufunc layer never calls Python itself).
struct CompileHooks {
  /// The snapshots of the device function and its callees, taken before a compile (on the
  /// thread that compiles, never under the compiler's lock).
  std::function<compiler::SnapshotSet()> snapshot;
  /// Runs `work` (which compiles and takes the compiler's lock); the bindings release the
  /// interpreter around it. Default: runs it directly.
  std::function<void(const std::function<void()> &)> run;
  /// The compile options of loops for a backend. Default: the CompileOptions defaults.
  std::function<codegen::CompileOptions(codegen::Backend)> options;
};

class Ufunc {
public:
  /// `functionId`: a registered device function. `layout`: set for gufuncs.
  Ufunc(int functionId, std::string name, Target target, size_t nin,
        std::optional<GufuncLayout> layout, CompileHooks hooks = {});

  int functionId;
  std::string name;
  Target target;
  size_t nin, nout;
  std::optional<GufuncLayout> layout;
  /// No signatures were given: new input types compile new loops.
  bool lazy = true;
  /// The value of an empty reduction (NumPy's `identity`), when the ufunc has one.
  std::optional<compiler::ArgValue> identity;

  /// Adds the loop for device-function parameter types `params` (vectorize: nin scalars, with
  /// `declaredReturn` the signature's return type or null to use the function's; gufunc: nin +
  /// nout scalars or arrays, declaredReturn void, none or null). Type-checks the function.
  /// Returns the loop index. Throws TypeMismatch for signatures that do not fit the ufunc (a
  /// gufunc signature with a return type: numba-cuda's "guvectorized functions cannot return
  /// values"), ir::CompileError for functions that do not compile.
  int addLoop(const std::vector<const ir::Type *> &params, const ir::Type *declaredReturn);

  /// The loop for `inputs` and the output arrays given (`outputDtypes[k]`: output k's dtype,
  /// null when the call allocates it), cached per input and output types: ir::resolveLoop's
  /// choice, outputs cast under 'same_kind' (gufuncs: of the same dtype, since their loops
  /// write into the arrays given); gufuncs with signatures then try inputs narrowed within
  /// their kind (numba-cuda narrows gufunc inputs: an int64 scalar to an int32 parameter);
  /// for a lazy ufunc without one, a new loop for
  /// ir::lazyLoopTypes(inputs) (gufuncs: outputs of `outputDtypes` where given, else the inputs'
  /// common type). Throws TypeMismatch naming the input types and the signatures, or the
  /// output cast NumPy would refuse.
  int resolve(const std::vector<ir::InputType> &inputs,
              const std::vector<const ir::ScalarType *> &outputDtypes = {});

  /// The loop of a reduction over elements of `dtype`: the first loop (R, R) -> R with dtype
  /// casting safely to R (a lazy ufunc compiles (dtype, dtype)). Throws TypeMismatch.
  int resolveReduce(const ir::ScalarType *dtype);

  /// The compiled loop kernel of loop `loop` for `desc` on `backend`: the compiler's
  /// specialization, compiled through the hooks on first request and remembered here (the
  /// reference stays valid for the ufunc's lifetime).
  const compiler::Specialization &loopKernel(int loop, codegen::Backend backend,
                                             const codegen::LoopKernelDesc &desc);

  /// The flat loop kernel of elementwise loop `loop` for operands of the kinds and dtypes of
  /// `ops` (inputs, then the output): for callers that know every array operand is
  /// C-contiguous over the same shape (the bindings' fast path), launched with
  /// launchElementwise over n iterations with arguments n, then per operand its value or its
  /// data pointer (a 0-d array).
  const compiler::Specialization &flatKernel(int loop, codegen::Backend backend,
                                             const std::vector<Operand> &ops);

  /// Runs elementwise loop `loop` over `ops` (nin inputs then nout outputs, outputs arrays of
  /// the broadcast shape `shape`, inputs broadcasting to it) on `backend` in `mode`.
  /// Asynchronous on `stream` for ExecMode::Device. Returns launchElementwise's low-occupancy
  /// grid (0 when none).
  int64_t runElementwise(int loop, const std::vector<Operand> &ops, const Shape &shape,
                         codegen::Backend backend, ExecMode mode, CUstream stream);

  /// Runs gufunc loop `loop` over `ops` (inputs then outputs, all arrays; scalars allowed for
  /// inputs with no core dimensions) with core dimensions `cb`. Returns as runElementwise.
  int64_t runGufunc(int loop, const std::vector<Operand> &ops, const CoreBinding &cb,
                    codegen::Backend backend, ExecMode mode, CUstream stream);

  /// Reduces `r.input` over `r.axes` into `r.output` (every reduced extent > 0).
  void runReduce(const ReduceRequest &r, codegen::Backend backend, ExecMode mode, CUstream stream);

  /// Loop `index` (< loopCount()). Loops are only ever added, and each stays where it is, so
  /// the reference stays valid while other threads add loops.
  const Loop &loop(int index) const;
  size_t loopCount() const;

  /// "float64(float64, float64)" for each loop, one per line, for error messages.
  std::string signaturesStr() const;

  /// The loop kernels compiled so far (for inspection and tests).
  std::vector<const compiler::Specialization *> kernels() const;

private:
  struct KernelKey {
    int loop;
    codegen::Backend backend;
    codegen::LoopKernelDesc desc;
    bool operator==(const KernelKey &) const = default;
  };
  struct KernelKeyHash {
    size_t operator()(const KernelKey &k) const {
      return (k.desc.hash() * 31u + static_cast<size_t>(k.loop)) * 2u +
             static_cast<size_t>(k.backend);
    }
  };

  /// Takes the snapshots, then runs `work` with them through the hooks.
  void compileGuarded(const std::function<void(const compiler::SnapshotSet &)> &work);

  CompileHooks hooks_;
  /// Guards loops_, resolved_ and kernels_ (never held while compiling).
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Loop>> loops_;
  std::map<std::vector<const ir::Type *>, int> resolved_;
  std::unordered_map<KernelKey, const compiler::Specialization *, KernelKeyHash> kernels_;
};

/// The backend's execution mode for `target` (Cuda on the CPU backend → Parallel).
ExecMode execMode(Target target, codegen::Backend backend);

/// NumPy's axis normalization: each axis in [-ndim, ndim) wrapped, sorted; throws AxisError
/// ("axis 2 is out of bounds for array of dimension 2") and std::invalid_argument("duplicate
/// value in 'axis'").
std::vector<int> normalizeAxes(const std::vector<int64_t> &axes, int ndim);

/// An axis out of range (the bindings raise NumPy's AxisError).
struct AxisError : std::out_of_range {
  using std::out_of_range::out_of_range;
};

} // namespace ptxjit::ufunc
