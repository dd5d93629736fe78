// Loop kernels for ufuncs (ufunc/): LLVM IR generated around a typed scalar (or gufunc core)
// device function, for @vectorize, @guvectorize, ufunc.reduce and cuda.reduce.
//
// No LLVM type appears here. The generated module holds the device function (lowered as by
// lowerDeviceFunction, then made internal) and one externally visible entry, so emitPTX and
// addToHostJIT treat it like any kernel module.
//
// Entry ABI. The flattened parameters (listed per kernel below) are passed as
// cuLaunchKernel's kernelParams on CUDA; on the host the entry is a runtime::HostKernelEntry
// `void entry(void **args, const HostThreadCtx *ctx)` taking the same pointer array, run with
// one thread per block: block b of nb handles the b-th contiguous chunk of the iteration space.
// On CUDA the entry is a grid-stride loop (any grid and block shape along x).
#pragma once

#include "codegen/Codegen.h"

#include <vector>

namespace ptxjit::codegen {

/// One operand of an elementwise (or gufunc) loop, in the device function's parameter order;
/// for vectorize the last operand is the output that receives the function's return value.
struct LoopOperand {
  /// Scalar: an input passed by value as kernel parameters of the device function's parameter
  /// type (flattened as the kernel ABI does: bool as i8, complex as two floats). Array: a
  /// pointer into memory holding elements of `elemType`.
  enum class Kind : uint8_t { Scalar, Array };
  Kind kind = Kind::Array;
  /// Array: the element type in memory; converted to the function's parameter type on load
  /// and from its return type on store (NumPy casts). Unused for Scalar.
  const ir::ScalarType *elemType = nullptr;
  /// gufunc arrays whose device-function parameter is an array: the number of core
  /// dimensions (their shape and strides are kernel parameters). A parameter array of ndim 1
  /// over an operand with 0 core dimensions sees one element.
  int coreDims = 0;
};

/// What an elementwise loop kernel looks like.
struct ElementwiseKernelDesc {
  std::vector<LoopOperand> operands;
  /// vectorize: the device function returns the value stored into the last operand (which
  /// is not a parameter of the function). guvectorize: the function returns nothing and every
  /// operand is a parameter.
  bool returnsValue = true;
  /// Fast path: every Array operand is contiguous over the whole iteration space and is
  /// indexed by one flat offset (i * itemsize); loopDims is then ignored.
  bool flat = true;
  /// General path: the number of loop dimensions walked through per-operand strides (zero
  /// strides broadcast).
  int loopDims = 0;
};

/// Lowers the loop kernel for `desc` around typed device function `fn` (kind Device).
/// Parameters, in order: i64 n (iterations); general path: i64 shape[loopDims]; then per
/// operand: Scalar → the function parameter's flattened values; Array → ptr data, general
/// path: i64 strides[loopDims] (bytes), then gufunc core arrays: i64 coreShape[coreDims],
/// i64 coreStrides[coreDims]. Throws ir::CompileError (Internal when `desc` does not fit
/// `fn`'s parameter and return types, Unsupported* for the function body).
LoweredModule lowerElementwiseKernel(const ir::Function &fn, const ElementwiseKernelDesc &desc,
                                     const CompileOptions &opts, const std::string &symbol);

/// What a reduction kernel looks like: the function (acc, acc) -> acc folds elements of
/// `inType` (converted to accType) and the results are stored as `outType`.
struct ReduceKernelDesc {
  const ir::ScalarType *inType = nullptr;
  const ir::ScalarType *accType = nullptr;
  const ir::ScalarType *outType = nullptr;
  int keptDims = 0;    ///< dimensions of the result
  int reducedDims = 0; ///< dimensions folded
  /// CUDA: the block size the kernel must be launched with (a power of two <= 1024); the
  /// block's partial results are combined in shared memory as a tree.
  unsigned blockSize = 256;
};

/// Lowers the reduction kernel for `desc` around `fn` (two parameters and a result, all of
/// accType). Parameters: i64 M (results), i64 K (elements folded per result), i64 P
/// (partitions per result: result j, partition p is written at out + outKept(j) + p *
/// outPartStride), i64 keptShape[keptDims], i64 reducedShape[reducedDims], ptr in,
/// i64 inKeptStrides[keptDims], i64 inReducedStrides[reducedDims], ptr out,
/// i64 outKeptStrides[keptDims], i64 outPartStride. Every partition must hold at least one
/// element: CUDA partition p of a result folds elements p*blockSize + t + s*P*blockSize
/// (needs p*blockSize < K; elements are combined in no fixed order, so the function must be
/// associative and commutative); host partition p folds the contiguous range
/// [p*ceil(K/P), min(K, (p+1)*ceil(K/P))) from left to right.
LoweredModule lowerReduceKernel(const ir::Function &fn, const ReduceKernelDesc &desc,
                                const CompileOptions &opts, const std::string &symbol);

} // namespace ptxjit::codegen
