// A ufunc (@vectorize) or generalized ufunc (@guvectorize) over a registered device function:
// its loops (signatures), type resolution cached per input-type tuple, loop kernels cached per
// operand kinds, and the execution of one call on operands already in memory (the bindings turn
// Python values into Operands, stage host arrays and allocate outputs).
#pragma once

#include "compiler/Compiler.h"
#include "ufunc/Broadcast.h"
#include "ufunc/Layout.h"
#include "ufunc/Loops.h"
#include "ufunc/TypeResolution.h"

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ptxjit::ufunc {

/// Where the ufunc's loops run: 'cuda' (the backend in use: the GPU, or the CPU backend
/// without one), 'cpu' (one host thread) or 'parallel' (all host threads).
enum class Target : uint8_t { Cuda, Cpu, Parallel };

/// A type error of a call or a signature (the bindings raise TypeError).
struct TypeMismatch : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// One loop (signature) of a ufunc: its input and output dtypes (resolution) and the device
/// function's parameter types.
struct Loop : LoopTypes {
  std::vector<const ir::Type *> params;
};

/// A Python scalar or NumPy scalar value.
struct ScalarValue {
  enum class Kind : uint8_t { Bool, Int, UInt, Float, Complex };
  Kind kind = Kind::Int;
  bool b = false;
  int64_t i = 0;
  uint64_t u = 0;
  double re = 0, im = 0;
};

/// One operand of a call: a scalar passed by value or an array in the memory of the backend
/// that runs the loop.
struct Operand {
  bool scalar = false;
  const ir::ScalarType *dtype = nullptr; ///< the array's element type, or the scalar's type
  ScalarValue value;                     ///< scalars
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

class Ufunc {
public:
  /// `functionId`: a registered device function. `layout`: set for gufuncs.
  Ufunc(int functionId, std::string name, Target target, size_t nin,
        std::optional<GufuncLayout> layout);

  int functionId;
  std::string name;
  Target target;
  size_t nin, nout;
  std::optional<GufuncLayout> layout;
  std::vector<Loop> loops;
  /// No signatures were given: new input types compile new loops.
  bool lazy = true;
  /// The snapshots of the device function and its callees, for a compile about to start
  /// (called before compileWrapper, on the thread that compiles; the bindings take them with
  /// the interpreter held). Default: none (compiles then fail unless typed IR is cached).
  std::function<compiler::SnapshotSet()> snapshot;
  /// Runs `work` (which may compile and take the compiler's lock); the bindings release the
  /// GIL around it. Default: runs it directly.
  std::function<void(const std::function<void()> &)> compileWrapper;
  /// The compile options of loops for a backend (the bindings use the device's compute
  /// capability and the function's fastmath). Default: the CompileOptions defaults.
  std::function<codegen::CompileOptions(codegen::Backend)> compileOptions;

  /// Adds the loop for device-function parameter types `params` (vectorize: nin scalars, with
  /// `declaredReturn` the signature's return type or null to use the function's; gufunc: nin +
  /// nout scalars or arrays, declaredReturn void or null). Type-checks the function. Returns
  /// the loop index. Throws TypeMismatch for signatures that do not fit the ufunc,
  /// ir::CompileError for functions that do not compile.
  int addLoop(const std::vector<const ir::Type *> &params, const ir::Type *declaredReturn);

  /// The loop for `inputs` and the output arrays given (`outputDtypes[k]`: output k's dtype,
  /// null when the call allocates it), cached per input and output types: resolveLoop's
  /// choice, outputs cast under 'same_kind' (gufuncs: of the same dtype, since their loops
  /// write into the arrays given); for a lazy ufunc without one, a new loop for
  /// lazyLoopTypes(inputs) (gufuncs: outputs of `outputDtypes` where given, else the inputs'
  /// common type). Throws TypeMismatch naming the input types and the signatures, or the
  /// output cast NumPy would refuse.
  int resolve(const std::vector<InputType> &inputs,
              const std::vector<const ir::ScalarType *> &outputDtypes = {});

  /// The loop of a reduction over elements of `dtype`: the first loop (R, R) -> R with dtype
  /// casting safely to R (a lazy ufunc compiles (dtype, dtype)). Throws TypeMismatch.
  int resolveReduce(const ir::ScalarType *dtype);

  /// Runs elementwise loop `loop` over `ops` (nin inputs then nout outputs, outputs arrays of
  /// the broadcast shape `shape`, inputs broadcasting to it) on `backend` in `mode`.
  /// Asynchronous on `stream` for ExecMode::Device.
  void runElementwise(int loop, const std::vector<Operand> &ops, const Shape &shape,
                      codegen::Backend backend, ExecMode mode, CUstream stream);

  /// The compiled elementwise kernel of loop `loop` for `desc` on `backend` (compiled on the
  /// first request, through compileWrapper; cached for the ufunc's lifetime, so the reference
  /// stays valid). runElementwise uses the same cache.
  const LoopKernel &elementwiseKernel(int loop, codegen::Backend backend,
                                      const codegen::ElementwiseKernelDesc &desc);

  /// Runs gufunc loop `loop` over `ops` (inputs then outputs, all arrays; scalars allowed for
  /// inputs with no core dimensions) with core dimensions `cb`.
  void runGufunc(int loop, const std::vector<Operand> &ops, const CoreBinding &cb,
                 codegen::Backend backend, ExecMode mode, CUstream stream);

  /// Reduces `r.input` over `r.axes` into `r.output` (every reduced extent > 0).
  void runReduce(const ReduceRequest &r, codegen::Backend backend, ExecMode mode, CUstream stream);

  /// "float64(float64, float64)" for each loop, one per line, for error messages.
  std::string signaturesStr() const;

  /// The LLVM IR / PTX of the kernels compiled so far (for inspection and tests).
  std::vector<const LoopKernel *> kernels() const;

private:
  const LoopKernel &
  kernel(const std::string &key,
         const std::function<std::unique_ptr<LoopKernel>(const compiler::SnapshotSet &)> &make);
  /// Takes the snapshots, then runs `work` with them through compileWrapper.
  void compileGuarded(const std::function<void(const compiler::SnapshotSet &)> &work);

  mutable std::mutex mutex_;
  std::map<std::vector<const ir::Type *>, int> resolved_;
  std::map<std::string, std::unique_ptr<LoopKernel>> kernels_;
};

/// Writes `v` converted to `t` (NumPy's cast) as kernel parameters at `dst`: one 8-byte slot
/// holding a bool byte, an int or a float, or two slots for a complex (real, imaginary).
/// Returns the number of slots (1 or 2).
int packScalar(const ScalarValue &v, const ir::ScalarType *t, uint64_t *dst);

/// `v` as a value of type `t` stored in memory (`dst`: t->itemsize() bytes).
void storeScalar(const ScalarValue &v, const ir::ScalarType *t, void *dst);

/// The backend's execution mode for `target` (Cuda on the CPU backend → Parallel).
ExecMode execMode(Target target, codegen::Backend backend);

/// NumPy's axis normalization: each axis in [-ndim, ndim) wrapped, sorted; throws
/// std::out_of_range("axis 2 is out of bounds for array of dimension 2") and
/// std::invalid_argument("duplicate value in 'axis'").
std::vector<int> normalizeAxes(const std::vector<int64_t> &axes, int ndim);

} // namespace ptxjit::ufunc
