// Codegen-internal: how scalar values and array views look in LLVM, in one place for the
// function lowering (Lowering.h), the kernel entries (KernelEntry.h) and the ufunc loop
// generator (LowerUfunc.cpp): the register and memory types of each scalar type, the array
// view struct, element loads and stores, and the one emitter of numeric casts.
//
// Register form: bool → i1, intN/uintN → iN, float16/bfloat16/float32/float64 → half/bfloat/
// float/double, complex → {T, T}.
// Memory form (array elements, kernel parameters): the same, but bool → i8. An array view is
// {ptr data, [N x i64] shape, [N x i64] strides (bytes)}.
#pragma once

#include "ir/BFloat16.h"
#include "ir/Types.h"

#include <llvm/IR/IRBuilder.h>

#include <optional>

namespace ptxjit::ir {
enum class CmpOp : uint8_t; // ir/IR.h
} // namespace ptxjit::ir

namespace ptxjit::codegen::detail {

/// The predicate comparing two integers of one signedness (`isSigned`) by `cmp` (<, <=, ==,
/// !=, >, >=); nullopt for the comparisons that never reach integer code (is, in).
std::optional<llvm::CmpInst::Predicate> intPredicate(ir::CmpOp cmp, bool isSigned);

/// The register type of scalar `t`.
llvm::Type *registerType(llvm::LLVMContext &ctx, const ir::ScalarType *t);
/// The in-memory type of an element of dtype `t` (bool → i8).
llvm::Type *memoryType(llvm::LLVMContext &ctx, const ir::ScalarType *t);
/// float for complex64 and float32, double for complex128 and float64 (a complex type's parts).
llvm::Type *partType(llvm::LLVMContext &ctx, const ir::ScalarType *t);
/// {ptr, [ndim x i64], [ndim x i64]}.
llvm::StructType *arrayValueType(llvm::LLVMContext &ctx, int ndim);

/// Loads an element of dtype `t` from `addr` in register form, assuming `align` bytes of
/// alignment (0: the element's, or a complex type's part's; a record field may have less).
llvm::Value *loadScalar(llvm::IRBuilderBase &b, llvm::Value *addr, const ir::ScalarType *t,
                        uint64_t align = 0);
/// Stores register value `v` of type `t` at `addr` in memory form (`align` as loadScalar's).
void storeScalar(llvm::IRBuilderBase &b, llvm::Value *addr, llvm::Value *v, const ir::ScalarType *t,
                 uint64_t align = 0);

/// Register value `v` of type `from` cast to `to` as NumPy casts (and Numba converts): ints
/// wrap or extend by their sign, floats round to nearest, float → int truncates toward zero and
/// saturates (NaN → 0, out-of-range values and ±inf → the nearest bound of `to`), x → bool is x !=
/// 0 (either part for complex), complex → real drops the imaginary part.
llvm::Value *castScalar(llvm::IRBuilderBase &b, llvm::Value *v, const ir::ScalarType *from,
                        const ir::ScalarType *to);

/// Integer `v` (signed or not) as a float32 rounded "to odd": exact when it fits float32's 24
/// significant bits, else truncated to 24 bits with the lowest one set when that lost a one.
/// Rounding it once more to float16 or bfloat16 (fewer than 23 bits) under any mode gives the
/// integer's correctly rounded value: converting through a plainly rounded float32 would round
/// twice (int64 2**60 + 2**52 + 1 to bfloat16 must round up, not to even).
llvm::Value *intToFloatRoundedToOdd(llvm::IRBuilderBase &b, llvm::Value *v, bool isSigned);

/// float32 `f` rounded to the 16-bit float type `to` (half or bfloat) under `mode`: to nearest
/// by the target's conversion (fptrunc: cvt.rn on the GPU, ir/Half.h's and ir/BFloat16.h's
/// routines on the host), the directed modes by moving that result one step where it lies on
/// the wrong side of `f` (NaN stays NaN).
llvm::Value *roundFloatTo16(llvm::IRBuilderBase &b, llvm::Value *f, llvm::Type *to,
                            ir::Rounding mode);

} // namespace ptxjit::codegen::detail
