// Type inference for one specialization of a function, with Numba's typing rules except that
// Python literals are NEP 50 weak scalars (see docs/language.md).
#pragma once

#include "ir/Conversions.h"
#include "ir/IR.h"

#include <string>
#include <vector>

namespace ptxjit::ir {

/// Resolves calls to other user functions while typing (implemented by the compiler layer).
class CallResolver {
public:
  virtual ~CallResolver() = default;
  /// The typed specialization (returnType set) of user function `functionId` for `argTypes`.
  /// Throws CompileError for recursion, kernels called from device code, or the callee's own
  /// typing errors. `file`/`loc` locate the call for messages.
  virtual Function *specializeCallee(int functionId, const std::vector<const Type *> &argTypes,
                                     const std::string &file, const SourceLoc &loc) = 0;
};

/// Infers the types of `fn` (fresh from the frontend) for arguments of `argTypes`: sets
/// fn.argTypes, fn.returnType, every Instr::type, every Variable::type and the resolution
/// fields (Instr::builtin, CallInstr::calleeFunction). Variables unify across assignments
/// (int64 and float64 give float64); weak literal types never survive in variables stored
/// only from literals (they become int64/float64/complex128); a weak argument type (a Python
/// scalar launch argument) stays weak in its parameter's variable unless an assignment widens
/// it, and is passed in its default representation. Kernels must return None.
/// `resolver` may be null when the function calls no user functions.
/// Throws CompileError (kind Typing or Unsupported) naming the types and the location.
void inferTypes(Function &fn, const std::vector<const Type *> &argTypes, CallResolver *resolver);

/// The field of record `r` that constant index `index` selects in `r[index]`: a string names
/// it, an int counts the fields in offset order; null when `index` is not a constant string or
/// int, or selects no field. Typing (which reports the errors) and codegen share it.
const RecordField *selectedRecordField(const RecordType *r, const Instr *index);

/// A parsed signature: `void(float32, float32[:])` or an argument tuple `(float32[:], int64)`
/// (returnType null then).
struct Signature {
  const Type *returnType = nullptr;
  std::vector<const Type *> args;
  /// "(float32, array(float32, 1d, A))" (with "-> T" when returnType is set).
  std::string str() const;
};

/// Parses a Numba type string: "float32", "f4", "int64", "bool", "void", "complex128",
/// "float32[:]" (layout A), "float32[::1]" (C), "float32[:, ::1]" (2-d C), "float32[::1, :]"
/// (2-d F), "float64[:,:,:]"; throws CompileError(BadSignature) for bad text.
const Type *parseType(const std::string &text);
/// Parses "ret(args...)" or "(args...)"; throws CompileError(BadSignature).
Signature parseSignature(const std::string &text);

} // namespace ptxjit::ir
