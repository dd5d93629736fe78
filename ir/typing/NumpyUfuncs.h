// NumPy's ufuncs called in kernels (`np.sin(x, out)`, `np.add(a, b, out=c)`, `np.equal(i, j)`):
// their loops (ir/typing/NumpyUfuncs.def, NumPy's own lists), and the one resolution of a call
// that typing and codegen both ask: which arguments are inputs and output, which loop computes
// the elements (NumPy's rules through ir/LoopResolution.h), and the call's type. The element
// loop over the output array is codegen/LowerNumpyUfuncs.cpp's.
#pragma once

#include "ir/IR.h"
#include "ir/LoopResolution.h"

#include <cstddef>
#include <string>
#include <vector>

namespace ptxjit::ir {

/// How NumPy picks a ufunc's loop beyond the first loop that every input casts to safely.
enum class UfuncResolver : uint8_t {
  Default,    ///< the first loop the inputs cast to safely
  TrueDivide, ///< inputs that are all integers or bools use float64 (NumPy's true division)
  NoBool,     ///< as Default, but inputs that are all bool are refused (subtract, negative)
};

/// One of NumPy's ufuncs as kernels call it (one output).
struct NumpyUfunc {
  BuiltinId id = BuiltinId::None;
  std::string name; ///< the attribute of numpy: "sin", "bitwise_not"
  int nin = 1;
  UfuncResolver resolver = UfuncResolver::Default;
  /// NumPy's loops whose types ptxjit has, in NumPy's order.
  std::vector<LoopTypes> loops;
};

/// The ufunc that builtin `id` (numpy.<name>) is, or null when it is not one.
const NumpyUfunc *numpyUfunc(BuiltinId id);

/// Every ufunc of the table, in its order.
std::vector<const NumpyUfunc *> numpyUfuncs();

/// `l` in NumPy's type characters ("ff->f", "qQ->?").
std::string loopTypesStr(const LoopTypes &l);

/// True when a call of `u` with argument types `args` (the last `numKw` of them keywords) is
/// typed by NumPy's ufunc rules (resolveUfuncCall) rather than as the scalar math builtin of
/// the same name (ir/typing/MathBuiltins.h): ufuncs that are not math functions, and calls with
/// an output array, a keyword, or an operand that is an array or complex. Scalar calls of the
/// math functions keep their own typing (float64 for int arguments, as Numba's).
bool typedAsUfunc(const NumpyUfunc &u, const std::vector<const Type *> &args, size_t numKw);

/// What resolveUfuncCall decides about a call.
struct UfuncCall {
  std::vector<size_t> inputs; ///< the argument index of each input
  /// The argument index of the output array (positional, or the keyword `out`); -1 when the
  /// call has none (its inputs are then scalars and it returns the loop's value).
  int out = -1;
  LoopTypes loop;               ///< the loop that computes each element
  const Type *result = nullptr; ///< the call's type: the output array, or the loop's output
  std::string error;            ///< why the call is refused (the other fields are then unset)
};

/// Resolves a call of `u` with argument types `args`, the last `kwNames.size()` of them passed
/// by the keywords named: `nin` inputs (numbers or arrays), then an optional output array
/// (positionally or as `out=`; `out=None` is no output). The loop is NumPy's choice for the
/// inputs (Python scalars weak, NEP 50) whose output casts to the output array's dtype under
/// 'same_kind'. Refused, with `error` saying why in NumPy's words where NumPy has some: other
/// keywords, operands that are neither numbers nor arrays, an output that is not a writable
/// array, array inputs without an output array (a kernel cannot allocate the result), an input
/// with more dimensions than the output, inputs no loop takes, an output the loop's result does
/// not cast to.
UfuncCall resolveUfuncCall(const NumpyUfunc &u, const std::vector<const Type *> &args,
                           const std::vector<std::string> &kwNames);

} // namespace ptxjit::ir
