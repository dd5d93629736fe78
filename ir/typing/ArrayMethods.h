// Typing of the array attributes that are views of an array's memory, as numba-cuda types them
// (ir/typing/TypingArrayMethods.cpp; lowered by codegen/ArrayViews.h): `a.real` / `a.imag` of a
// complex array, `a.reshape(...)`, `a.view(dtype)`, and `a.copy()` of an array whose shape is
// known at compile time. Internal to typing and codegen.
#pragma once

#include "ir/IR.h"
#include "ir/Types.h"

#include <optional>
#include <string>
#include <vector>

namespace ptxjit::ir {

/// The SymbolType paths of the bound methods `a.reshape` and `a.view` (typed at their call).
inline constexpr const char *kArrayReshapePath = "array.reshape";
inline constexpr const char *kArrayViewPath = "array.view";
/// The SymbolType path of the bound method `a.copy` (typed at its call).
inline constexpr const char *kArrayCopyPath = "array.copy";
/// The SymbolType path of the bound method `a.fill` (typed at its call).
inline constexpr const char *kArrayFillPath = "array.fill";

/// The SymbolType paths of the bound methods `a.transpose` and `a.ravel` (typed at their call),
/// and of `numpy.transpose(a, axes=None)`.
inline constexpr const char *kArrayTransposePath = "array.transpose";
inline constexpr const char *kArrayRavelPath = "array.ravel";
inline constexpr const char *kNpTransposePath = "numpy.transpose";

/// True for the array-method paths above (reshape, view, copy, fill, transpose, ravel).
bool isArrayMethodPath(const std::string &path);

/// The type of `arr.attr` when it is a view or a method: for `.real`/`.imag` of a complex array
/// a strided (layout A) array of the part's float type, read-only as `arr` is; for `.T` the
/// transposed view (C and F layouts swap); for `.reshape`, `.view`, `.copy`, `.fill`,
/// `.transpose` and `.ravel` the method's SymbolType. Null for other attributes.
const Type *arrayViewAttrType(const ArrayType *arr, const std::string &attr);

/// The permutation of `ndim` axes that `a.transpose(*axes)` / `np.transpose(a, axes)` applies,
/// from `axes` (the call's operands giving them: none, or one None, for the reversed order;
/// one int or tuple of ints; or ints), each a compile-time constant, so that the result's layout
/// is exact (numba-cuda also takes run-time axes and types the result strided). NumPy's rules:
/// negative axes count from the end; the axes are a permutation of range(ndim). nullopt with
/// `why` set otherwise.
std::optional<std::vector<int>> transposeAxes(const std::vector<const Instr *> &axes, int ndim,
                                              const Function &fn, std::string &why);

/// (ndim - 1, ..., 1, 0): the permutation of `a.T` and of `a.transpose()` without axes.
std::vector<int> reversedAxes(int ndim);

/// The type of the transposed view of `arr` by permutation `perm` (transposeAxes): the same
/// layout for the identity, C and F swapped for the reversed order, else strided (A).
const Type *transposedType(const ArrayType *arr, const std::vector<int> &perm);

/// The operands of `np.transpose(a, axes=None)` call `i`: the array's, and the axes' (none when
/// not given) as transposeAxes takes them. False when the arguments do not bind to (a, axes).
bool npTransposeOperands(const CallInstr *i, const Instr *&array, std::vector<const Instr *> &axes);

/// The result type of `np.transpose(a, axes=None)` (call `i`): as a.transpose(axes). Raises the
/// diagnostic, located in `fn`'s file, when the call does not fit.
const Type *npTransposeCallType(const CallInstr *i, const Function &fn);

/// The result type of call `i` of array method `path` (the callee is the GetAttr on the array,
/// whose type is set): `a.reshape(shape)` / `a.reshape(d0, d1, ...)` gives a C-contiguous array
/// of as many dimensions as ints (only a C-contiguous array reshapes); `a.view(dtype)` the array
/// as compile-time dtype `dtype`, its layout kept (a Fortran-ordered or 0-d array cannot change
/// its itemsize); `a.copy()` a writable C-contiguous array of the same dtype and dimensions,
/// when constantArrayShape knows `a`'s shape (a kernel has no heap: the copy lives in the
/// thread's local memory, as a cuda.local.array); `a.fill(value)` None, storing a number or a
/// bool into every element of a writable array of numbers (as `a[...] = value`);
/// `a.transpose(*axes)` the permuted view (transposeAxes, transposedType); `a.ravel()` of a
/// C-contiguous array its 1-d C view (other layouts would copy: refused). Raises the
/// diagnostic, located in `fn`'s file, when the call does not fit.
const Type *arrayMethodCallType(const CallInstr *i, const std::string &path, const Function &fn);

/// The shape of array value `arr` of `fn` when it is known at compile time and the array is
/// C-contiguous with exactly that shape: a frozen global or closure NumPy array, a
/// cuda.local.array or a static cuda.shared.array of constant shape, cuda.const.array_like of a
/// frozen array, a.copy() of one of those, or a local assigned exactly once from one of those.
/// nullopt otherwise (an argument's shape is a run-time value).
std::optional<std::vector<int64_t>> constantArrayShape(const Instr *arr, const Function &fn);

/// The SymbolType paths of numba's carray and farray (ptxjit.carray, numba.carray,
/// numba.cuda.np.numpy_support.carray): an array view of the memory a raw pointer addresses.
inline constexpr const char *kCarrayPath = "numpy_support.carray";
inline constexpr const char *kFarrayPath = "numpy_support.farray";

/// The result type of call `i` of carray or farray (`path`): `carray(ptr, shape, dtype=None)`
/// with `ptr` a CPointer (a voidptr needs `dtype`), `shape` an int or a tuple of ints (run-time
/// values too) and `dtype` a compile-time dtype that must be the pointee's: a writable C (carray)
/// or F (farray) array of as many dimensions as the shape has. Raises the diagnostic, located in
/// `file`, when the call does not fit.
const Type *pointerArrayCallType(const CallInstr *i, const std::string &path,
                                 const std::string &file);

/// A cffi.FFI object a kernel reads (numba's cffi support; the bindings recognize it without
/// importing cffi), and its one method kernels may call: `ffi.from_buffer(array)`.
inline constexpr const char *kFfiPath = "cffi.ffi";
inline constexpr const char *kFfiFromBufferPath = "cffi.ffi.from_buffer";

/// The result type of call `i` of ffi.from_buffer: one contiguous (C or F) array of a scalar
/// dtype gives a CPointer to its first element (the array's data pointer), as numba's. Raises
/// the diagnostic, located in `file`, for anything else (numba: "from_buffer() unsupported on
/// non-contiguous buffers").
const Type *ffiFromBufferCallType(const CallInstr *i, const std::string &file);

} // namespace ptxjit::ir
