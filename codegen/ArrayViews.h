// The array values {data, [N x i64] shape, [N x i64] strides (bytes)} of the views typed in
// ir/typing/ArrayMethods.h: `a.real` / `a.imag`, `a.reshape(...)`, `a.view(dtype)`. Each is a new
// array value over the same bytes; nothing is copied. Where NumPy raises ValueError at run time
// (a reshape to another size, a view whose itemsize does not fit the last dimension), a kernel
// cannot: the view is empty (every dimension 0), so nothing outside the array is touched.
// Internal to codegen (LowerCalls.cpp).
#pragma once

#include <llvm/IR/IRBuilder.h>

#include <vector>

namespace ptxjit::codegen::detail {

/// The real (`imag` false) or imaginary part of every element of complex array value `arr`
/// (elements of `itemSize` bytes): the same shape and strides, the data moved by the offset.
llvm::Value *complexPartView(llvm::IRBuilder<> &B, llvm::Value *arr, bool imag, int64_t itemSize);

/// `arr.transpose(perm)` (and `arr.T`, perm reversed): array value `arr` whose dimension d is
/// `arr`'s dimension perm[d] (shape and strides); `perm` is a permutation of its dimensions (typing
/// checked it).
llvm::Value *permutedView(llvm::IRBuilder<> &B, llvm::Value *arr, const std::vector<int> &perm);

/// `arr.reshape(dims)` of C-contiguous array value `arr` (`srcNdim` dimensions, elements of
/// `itemSize` bytes) as a C-contiguous array value of type `resultType` (len(dims) dimensions):
/// NumPy's shape rules, one dimension -1 inferred from the size; an empty view where NumPy
/// raises (another size, more than one -1).
llvm::Value *reshapeView(llvm::IRBuilder<> &B, llvm::StructType *resultType, llvm::Value *arr,
                         int srcNdim, std::vector<llvm::Value *> dims, int64_t itemSize);

/// `arr.view(dtype)` of array value `arr` (`ndim` dimensions, elements of `oldSize` bytes) for
/// a dtype of `newSize` bytes: the same value when the sizes agree; otherwise the last dimension
/// is reinterpreted (NumPy's rule), which needs it contiguous (`cContiguous` says it is known to
/// be; else its stride is checked) and its bytes a multiple of `newSize` (else an empty view).
llvm::Value *dtypeView(llvm::IRBuilder<> &B, llvm::Value *arr, int ndim, bool cContiguous,
                       int64_t oldSize, int64_t newSize);

/// carray/farray: the array value of type `resultType` over the memory at pointer `data`, of
/// dimensions `dims` (i64 values; negative ones count as 0) and elements of `itemSize` bytes, with
/// C (`fortran` false) or Fortran strides.
llvm::Value *pointerArrayView(llvm::IRBuilder<> &B, llvm::StructType *resultType, llvm::Value *data,
                              std::vector<llvm::Value *> dims, int64_t itemSize, bool fortran);

} // namespace ptxjit::codegen::detail
