// Loop kernels for ufuncs (ufunc/): LLVM IR generated around a typed scalar (or gufunc core)
// device function, for @vectorize, @guvectorize, ufunc.reduce and cuda.reduce.
//
// No LLVM type appears here. The generated module holds the device function's body and one
// externally visible entry, so emitPTX and addToHostJIT treat it like any kernel module.
//
// Entry ABI: the kernel ABI (codegen/KernelABI.h) over the parameter types that
// loopKernelParams() gives for a descriptor, so the compiler packs a loop kernel's arguments
// as any kernel's. On the host, the entry is run with one thread per block: block b of nb
// handles the b-th contiguous chunk of the iteration space. On CUDA it is a grid-stride loop
// (any grid and block shape along x).
#pragma once

#include "codegen/Codegen.h"

#include <string>
#include <vector>

namespace ptxjit::codegen {

/// One operand of an elementwise (or gufunc) loop, in the device function's parameter order;
/// for vectorize the last operand is the output that receives the function's return value.
struct LoopOperand {
  /// Scalar: an input passed by value as the device function's parameter type. Array: memory
  /// holding elements of `elemType`.
  enum class Kind : uint8_t { Scalar, Array };
  Kind kind = Kind::Array;
  /// Array: the element type in memory; converted to the function's parameter type on load
  /// and from its return type on store (NumPy casts). Unused for Scalar.
  const ir::ScalarType *elemType = nullptr;
  /// gufunc arrays whose device-function parameter is an array: the number of core
  /// dimensions (the last dimensions of the operand). A parameter array of ndim 1 over an
  /// operand with 0 core dimensions sees one element.
  int coreDims = 0;
  /// gufunc arrays with core dimensions: the innermost core dimension's stride is the item
  /// size (rows of a C-contiguous array). The loop then gives the function that stride as a
  /// constant, so that its accesses along the core are offsets from one address, as in a
  /// kernel over a C-contiguous array (a row-wise dot product of float32 rows of 64 ran 1.6x
  /// the instructions with the stride read at run time, H200).
  bool unitCoreStride = false;
  /// gufunc arrays with a unit core stride: an alignment in bytes (a power of two, at most 16)
  /// that the start of every core array has (the operand's address and its strides over the
  /// loop are multiples of it), when it exceeds the item size; else 0. The loop asserts it to
  /// LLVM, whose load-store vectorizer then combines the function's loads along the core into
  /// vector loads (ld.global.v4.f32 for float32 rows at 16 bytes): with one thread per core
  /// array, each load instruction touches as many rows as the warp has threads, so four
  /// elements per instruction make a quarter of the requests.
  uint8_t coreAlign = 0;
  bool operator==(const LoopOperand &) const = default;
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
  bool operator==(const ElementwiseKernelDesc &) const = default;
};

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
  bool operator==(const ReduceKernelDesc &) const = default;
};

/// A loop kernel as the compiler's caches see it: its kind and description (a hashable value).
struct LoopKernelDesc {
  enum class Kind : uint8_t { Elementwise, Reduce };
  Kind kind = Kind::Elementwise;
  ElementwiseKernelDesc elementwise; ///< Kind::Elementwise
  ReduceKernelDesc reduce;           ///< Kind::Reduce
  bool operator==(const LoopKernelDesc &) const = default;
  size_t hash() const;
  /// Every field spelled out ("elementwise flat value (a float32, s, a float64)"), for cache
  /// keys and dumps.
  std::string str() const;
};

/// The kernel parameter types of loop `desc` around a device function whose parameter types
/// are `fnParams` (for reductions: (acc, acc)). The kernel ABI flattens them.
///   elementwise: int64 n (iterations), then per operand: Scalar → the function parameter's
///     scalar type; Array → an array of its element type of ndim 0 on the flat path (its data
///     pointer alone), else of ndim loopDims + coreDims: the loop shape then the core shape,
///     and the operand's strides over them (zero where it broadcasts).
///   reduce: int64 M (results), int64 K (elements folded per result), int64 P (partitions per
///     result), the input as an array of ndim keptDims + reducedDims (kept dimensions first),
///     the output as an array of ndim keptDims (partition p of result j is written at
///     outPartStride * p past result j), int64 outPartStride.
/// Throws ir::CompileError(Internal) when `desc` does not fit `fnParams`.
std::vector<const ir::Type *> loopKernelParams(const LoopKernelDesc &desc,
                                               const std::vector<const ir::Type *> &fnParams);

/// Lowers the loop kernel for `desc` around typed device function `fn` (kind Device) as entry
/// `symbol`, taking loopKernelParams(desc, fn.argTypes). Reductions: every partition must hold
/// at least one element; CUDA partition p of a result folds elements p*blockSize + t +
/// s*P*blockSize (needs p*blockSize < K; elements are combined in no fixed order, so the
/// function must be associative and commutative); host partition p folds the contiguous range
/// [p*ceil(K/P), min(K, (p+1)*ceil(K/P))) from left to right. Throws ir::CompileError
/// (Internal when `desc` does not fit `fn`'s parameter and return types, Unsupported* for the
/// function body). `names`: as lowerKernel's.
LoweredModule lowerLoopKernel(const ir::Function &fn, const LoopKernelDesc &desc,
                              const CompileOptions &opts, const std::string &symbol,
                              ValueNames names = ValueNames::Keep);

} // namespace ptxjit::codegen

template <> struct std::hash<ptxjit::codegen::LoopKernelDesc> {
  size_t operator()(const ptxjit::codegen::LoopKernelDesc &d) const { return d.hash(); }
};
