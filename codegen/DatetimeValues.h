// Codegen-internal: datetime64 / timedelta64 values (ir/Datetime.h) in LLVM, as numba-cuda
// lowers them (numba.np.npdatetime): int64 counts, NaT propagating through arithmetic (and
// unequal to everything, itself included), units converted by exact integer factors, and
// datetimes of years or months brought to days through the Gregorian calendar when they meet a
// finer unit. Used by the function lowering (operators, casts) and, through castScalar, by
// every scalar conversion.
#pragma once

#include "ir/IR.h"

#include <llvm/IR/IRBuilder.h>

namespace ptxjit::codegen::detail {

/// `v` (a datetime or timedelta of type `from`) as a count of unit `to`, NaT kept: multiplied
/// by the factor into a finer unit, floor-divided into a coarser one; a datetime of years or
/// months becomes days or weeks through the calendar first. A conversion with no exact meaning
/// (a timedelta of months into days, any unit into years or months from a finer one) is an
/// internal error: typing never asks for one.
llvm::Value *convertDateUnit(llvm::IRBuilderBase &b, llvm::Value *v, const ir::ScalarType *from,
                             ir::DateUnit to);

/// castScalar for a cast from or to a datetime64 / timedelta64 type: between two of the same
/// kind, convertDateUnit; to or from an integer or bool, the count itself (NumPy's unsafe
/// cast); a float to a timedelta rounds toward zero (NaN → NaT), a timedelta to a float gives
/// NaN for NaT.
llvm::Value *castDatetime(llvm::IRBuilderBase &b, llvm::Value *v, const ir::ScalarType *from,
                          const ir::ScalarType *to);

/// `l op r` where one side is a datetime or timedelta (types concrete, as typing resolved them:
/// ir/typing's datetimeBinaryType) with result type `res`.
llvm::Value *datetimeBinary(llvm::IRBuilderBase &b, ir::BinaryOp op, llvm::Value *l,
                            const ir::ScalarType *lt, llvm::Value *r, const ir::ScalarType *rt,
                            const ir::ScalarType *res);

/// The comparison `l cmp r` (==, !=, <, <=, >, >=) of two datetimes or two timedeltas: false
/// when either is NaT (true for !=); timedeltas whose units do not convert are unequal.
llvm::Value *datetimeCompare(llvm::IRBuilderBase &b, ir::CmpOp cmp, llvm::Value *l,
                             const ir::ScalarType *lt, llvm::Value *r, const ir::ScalarType *rt);

/// -v, +v and abs(v) of a timedelta (NaT stays NaT).
llvm::Value *timedeltaNeg(llvm::IRBuilderBase &b, llvm::Value *v);
llvm::Value *timedeltaAbs(llvm::IRBuilderBase &b, llvm::Value *v);

} // namespace ptxjit::codegen::detail
