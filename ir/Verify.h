// Well-formedness checks of a Function, untyped or typed: what every pass may assume of the
// IR and what a pass that breaks it should hear about at once rather than in codegen.
//
// Structure (always): the function has blocks; each block is non-empty, belongs to the
// function, has a unique id and ends in exactly one terminator (none in the middle); branch
// and jump targets are blocks of the function; instructions have unique ids and know their
// block; every operand is a value-producing instruction of the same function, defined
// earlier in the same block or in a block that dominates the use (dominators of the block
// CFG from the entry; uses in unreachable blocks are only checked within their block);
// LoadLocal/StoreLocal variables and Arg indices are in range; the first variables are the
// parameters.
//
// Types (once typing has run, i.e. returnType is set): every parameter has a type; every
// value-producing instruction has a type, the others none or void; LoadLocal has its
// variable's type and Arg its parameter's; StoreLocal's variable has a type; Branch
// conditions are bool (the frontend branches on Truth); Return values fit the return type
// (none for void, else a type that promotes or unifies to it); kernels return void; no call
// with *args, `*` operand of a display or list display is left (typing unpacks or rejects them).
#pragma once

#include "ir/IR.h"

namespace ptxjit::ir {

/// Checks `fn` as described above. Returns normally when it is well-formed; otherwise throws
/// CompileError(DiagCode::Internal) at the offending instruction's location, whose message
/// names the function, the block, the instruction ("%7 (Branch)") and what is wrong.
void verify(const Function &fn);

/// verify(fn) in builds without NDEBUG, or when the environment variable PTXJIT_VERIFY_IR is
/// "1" (read at every call); otherwise does nothing. For the compiler to call after each
/// stage that produces IR. Throws what verify throws.
void verifyInDebug(const Function &fn);

} // namespace ptxjit::ir
