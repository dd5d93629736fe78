// The NumPy semantics of one ufunc call, Python-free: the bindings read the Python arguments
// into CallArgs; this file checks them, chooses the loop, says which outputs the bindings must
// allocate (shape, dtype, memory, order), and runs the call over the arrays: host arrays are
// staged when the loop runs on the GPU (runtime/Staging.h, whose rule says when the call
// returns), gufunc inputs of another dtype are cast on the host, empty reductions take the
// identity.
//
// Every call is planned (plan*) before its outputs exist, then run (run*) once they do. Errors:
// TypeMismatch (TypeError), std::invalid_argument (ValueError), AxisError, and
// std::overflow_error (OverflowError) for a Python int that does not fit its loop type.
#pragma once

#include "ufunc/Ufunc.h"

#include <memory>
#include <optional>
#include <vector>

namespace ptxjit::runtime {
class Allocation;
}

namespace ptxjit::ufunc {

/// Where an array argument's memory is.
enum class Memory : uint8_t {
  Host,    ///< host memory (a NumPy array)
  Backend, ///< memory of `CallArg::memoryBackend` (a ptxjit device array: GPU memory on CUDA,
           ///< host memory on the CPU backend)
  Gpu,     ///< GPU memory of another library (__cuda_array_interface__)
};

/// One argument of a call, as the bindings read it.
struct CallArg {
  compiler::ArgValue value; ///< Kind::Array for arrays
  /// Arrays: the dtype. Scalars: the dtype (NumPy scalars, Python bools), or a weak type for
  /// Python ints, floats and complexes (NEP 50).
  ir::InputType type = nullptr;
  Memory memory = Memory::Host;
  codegen::Backend memoryBackend = codegen::Backend::Host; ///< Memory::Backend only
  bool writeable = true;

  bool isArray() const { return value.kind == compiler::ArgValue::Kind::Array; }
  /// The dtype (a weak type's default).
  const ir::ScalarType *dtype() const;
  Shape shape() const;
  Strides strides() const;

  /// An array argument.
  static CallArg array(const ir::ScalarType *dtype, uint64_t data, int ndim, const int64_t *shape,
                       const int64_t *strides, Memory memory, codegen::Backend memoryBackend,
                       bool writeable);
  /// A scalar argument of type `type` (concrete or weak).
  static CallArg scalar(ir::InputType type, const compiler::ArgValue &value);
};

/// An output the call allocates: C order unless `fortran`; in the memory of the call's backend
/// when `device` (a device array), else on the host (a NumPy array).
struct OutputRequest {
  Shape shape;
  const ir::ScalarType *dtype = nullptr;
  bool device = false;
  bool fortran = false;
};

/// An elementwise or gufunc call, planned.
struct CallPlan {
  codegen::Backend backend = codegen::Backend::Host;
  ExecMode mode = ExecMode::Serial;
  int loop = -1;
  /// The inputs as the loop takes them (gufunc inputs of another dtype, cast on the host).
  std::vector<CallArg> inputs;
  /// Elementwise: the broadcast shape. Gufunc: the loop shape (core dimensions in `core`).
  Shape shape;
  CoreBinding core;
  /// Per output: what to allocate, or nothing when the call gave the output.
  std::vector<std::optional<OutputRequest>> allocate;
  /// The result is a scalar (an elementwise call of scalars alone, without `out`): the bindings
  /// return element () of the 0-d output.
  bool scalarResult = false;
  /// Host memory of inputs cast for the loop (kept alive by the plan).
  std::vector<std::shared_ptr<runtime::Allocation>> temporaries;
};

/// Plans `u(inputs..., out=outs)` with the loops running on `backend` (the call's one backend
/// decision: the bindings' for target 'cuda', the host for 'cpu' and 'parallel'). `outs` holds
/// one entry per output, null where the call allocates it. Checks that every array's memory is
/// usable by the backend, chooses the loop (out= dtypes taking part), checks Python ints
/// against it, broadcasts (elementwise) or binds core dimensions (gufunc), checks given
/// outputs (shape, writeable), and says what to allocate: outputs in backend memory when some
/// input is a device array (else NumPy arrays), in Fortran order when every array input is
/// F-contiguous (elementwise). Throws as the file comment says.
CallPlan planCall(Ufunc &u, codegen::Backend backend, std::vector<CallArg> inputs,
                  const std::vector<const CallArg *> &outs);

/// Runs planned call `plan` writing into `outs` (every output: given or allocated as
/// requested), asynchronous on `stream` unless host arrays were staged. Returns the grid of a
/// device launch too small to fill the GPU (launchElementwise), else 0.
int64_t runCall(Ufunc &u, const CallPlan &plan, const std::vector<CallArg> &outs, CUstream stream);

/// A reduction, planned.
struct ReducePlan {
  codegen::Backend backend = codegen::Backend::Host;
  ExecMode mode = ExecMode::Serial;
  int loop = -1;
  CallArg input;
  std::vector<int> axes;
  bool keepdims = false;
  /// The result's shape (with keepdims' ones) and the kept dimensions alone.
  Shape resultShape, keptShape;
  /// The output to allocate (the loop's accumulator dtype), or nothing when given.
  std::optional<OutputRequest> allocate;
  /// A full reduction without `out`: the bindings return the result as a scalar.
  bool scalarResult = false;
};

/// Plans `u.reduce(input, axis=axes, keepdims=keepdims, out=out)` on `backend`; `axes`:
/// nullopt for every axis; `size` >= 0 limits the first dimension to its first `size`
/// elements (cuda.reduce's size=). Throws as the file comment says, and TypeMismatch for a
/// scalar input or a ufunc that cannot reduce.
ReducePlan planReduce(Ufunc &u, codegen::Backend backend, CallArg input,
                      const std::optional<std::vector<int64_t>> &axes, bool keepdims,
                      const CallArg *out, int64_t size);

/// NEP 50: throws std::overflow_error ("Python integer 300 out of bounds for uint8") when the
/// value of a Python int `v` does not fit the integer type `t` it is passed as (other types:
/// nothing to check).
void checkPythonInt(const compiler::ArgValue &v, const ir::ScalarType *t);

/// Runs planned reduction `plan` into `out`; an empty reduction fills the result with the
/// ufunc's identity (std::invalid_argument when it has none).
void runReduce(Ufunc &u, const ReducePlan &plan, const CallArg &out, CUstream stream);

} // namespace ptxjit::ufunc
