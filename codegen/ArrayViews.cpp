// Array values of views of an array's memory (see ArrayViews.h).
#include "codegen/ArrayViews.h"

namespace ptxjit::codegen::detail {

llvm::Value *complexPartView(llvm::IRBuilder<> &B, llvm::Value *arr, bool imag, int64_t itemSize) {
  if (!imag)
    return arr;
  llvm::Value *data = B.CreateExtractValue(arr, 0);
  data = B.CreateInBoundsGEP(B.getInt8Ty(), data, B.getInt64(itemSize / 2), "imag");
  return B.CreateInsertValue(arr, data, 0);
}

llvm::Value *permutedView(llvm::IRBuilder<> &B, llvm::Value *arr, const std::vector<int> &perm) {
  llvm::Value *out = arr;
  for (unsigned part : {1u, 2u}) // the shape, then the strides
    for (size_t d = 0; d < perm.size(); ++d)
      out = B.CreateInsertValue(out, B.CreateExtractValue(arr, {part, unsigned(perm[d])}),
                                {part, unsigned(d)});
  return out;
}

llvm::Value *reshapeView(llvm::IRBuilder<> &B, llvm::StructType *resultType, llvm::Value *arr,
                         int srcNdim, std::vector<llvm::Value *> dims, int64_t itemSize) {
  llvm::Value *zero = B.getInt64(0), *one = B.getInt64(1);
  llvm::Value *size = one;
  for (int d = 0; d < srcNdim; ++d)
    size = B.CreateMul(size, B.CreateExtractValue(arr, {1u, unsigned(d)}));
  // NumPy's rule: at most one dimension is negative (-1); it is inferred from the size.
  llvm::Value *known = one, *negatives = zero;
  for (llvm::Value *d : dims) {
    llvm::Value *neg = B.CreateICmpSLT(d, zero);
    negatives = B.CreateAdd(negatives, B.CreateZExt(neg, B.getInt64Ty()));
    known = B.CreateMul(known, B.CreateSelect(neg, one, d));
  }
  llvm::Value *knownZero = B.CreateICmpEQ(known, zero);
  llvm::Value *divisor = B.CreateSelect(knownZero, one, known);
  llvm::Value *inferred = B.CreateSelect(knownZero, zero, B.CreateSDiv(size, divisor));
  llvm::Value *divides = B.CreateSelect(knownZero, B.CreateICmpEQ(size, zero),
                                        B.CreateICmpEQ(B.CreateSRem(size, divisor), zero));
  llvm::Value *ok = B.CreateSelect(B.CreateICmpEQ(negatives, zero), B.CreateICmpEQ(known, size),
                                   B.CreateAnd(B.CreateICmpEQ(negatives, one), divides));
  for (llvm::Value *&d : dims)
    d = B.CreateSelect(ok, B.CreateSelect(B.CreateICmpSLT(d, zero), inferred, d), zero);
  // C-contiguous strides over the new dimensions.
  llvm::Value *out = llvm::PoisonValue::get(resultType);
  out = B.CreateInsertValue(out, B.CreateExtractValue(arr, 0), 0);
  llvm::Value *stride = B.getInt64(itemSize);
  for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
    out = B.CreateInsertValue(out, dims[d], {1u, unsigned(d)});
    out = B.CreateInsertValue(out, stride, {2u, unsigned(d)});
    stride = B.CreateMul(stride, dims[d]);
  }
  return out;
}

llvm::Value *dtypeView(llvm::IRBuilder<> &B, llvm::Value *arr, int ndim, bool cContiguous,
                       int64_t oldSize, int64_t newSize) {
  if (oldSize == newSize || ndim == 0)
    return arr;
  llvm::Value *zero = B.getInt64(0);
  unsigned last = unsigned(ndim - 1);
  llvm::Value *n = B.CreateExtractValue(arr, {1u, last});
  llvm::Value *stride = B.CreateExtractValue(arr, {2u, last});
  llvm::Value *bytes = B.CreateMul(n, B.getInt64(oldSize));
  // NumPy's condition: the last dimension is contiguous (or has at most one element) and its
  // bytes are a multiple of the new itemsize.
  llvm::Value *contiguous = cContiguous ? B.getTrue()
                                        : B.CreateOr(B.CreateICmpEQ(stride, B.getInt64(oldSize)),
                                                     B.CreateICmpSLE(n, B.getInt64(1)));
  llvm::Value *ok =
      B.CreateAnd(contiguous, B.CreateICmpEQ(B.CreateSRem(bytes, B.getInt64(newSize)), zero));
  llvm::Value *out = arr;
  for (unsigned d = 0; d < last; ++d) // every dimension 0 when not ok
    out = B.CreateInsertValue(out, B.CreateSelect(ok, B.CreateExtractValue(arr, {1u, d}), zero),
                              {1u, d});
  out = B.CreateInsertValue(out, B.CreateSelect(ok, B.CreateSDiv(bytes, B.getInt64(newSize)), zero),
                            {1u, last});
  return B.CreateInsertValue(out, B.getInt64(newSize), {2u, last});
}

llvm::Value *pointerArrayView(llvm::IRBuilder<> &B, llvm::StructType *resultType, llvm::Value *data,
                              std::vector<llvm::Value *> dims, int64_t itemSize, bool fortran) {
  llvm::Value *out = llvm::PoisonValue::get(resultType);
  out = B.CreateInsertValue(out, data, 0);
  llvm::Value *stride = B.getInt64(itemSize);
  int n = static_cast<int>(dims.size());
  for (int k = 0; k < n; ++k) {
    int d = fortran ? k : n - 1 - k; // the dimension whose stride comes next
    llvm::Value *dim =
        B.CreateSelect(B.CreateICmpSLT(dims[d], B.getInt64(0)), B.getInt64(0), dims[d]);
    out = B.CreateInsertValue(out, dim, {1u, unsigned(d)});
    out = B.CreateInsertValue(out, stride, {2u, unsigned(d)});
    stride = B.CreateMul(stride, dim);
  }
  return out;
}

} // namespace ptxjit::codegen::detail
