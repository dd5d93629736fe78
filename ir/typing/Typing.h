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
  /// True when `callee` (a result of specializeCallee) is provisional: a function whose typing
  /// is still under way (a recursive call: its returnType is the unification of the values it
  /// returned in its last complete pass, null while none was typed), or one typed from such a
  /// provisional return type (mutual recursion). The caller must ask again in every pass
  /// instead of keeping the answer, as the return type may still change.
  virtual bool isProvisional(const Function *callee) const {
    (void)callee;
    return false;
  }
};

/// Thrown out of the typing of a function that calls `target`, a function whose typing is still
/// under way further up the call chain and has no provisional return type yet (none of its
/// returns was typed): the typing of `target` catches it, leaves its call untyped for this pass
/// and tries again once a pass has typed one of its returns (mutual recursion). Never escapes
/// inferTypes of `target`. Not a CompileError: nothing is wrong with the program (yet).
struct RecursionPending {
  const Function *target = nullptr;
};

/// Infers the types of `fn` (fresh from the frontend) for arguments of `argTypes`: sets
/// fn.argTypes, fn.returnType, every Instr::type, every Variable::type and the resolution
/// fields (Instr::builtin, CallInstr::calleeFunction). Variables unify across assignments
/// (int64 and float64 give float64); weak literal types never survive in variables stored
/// only from literals (they become int64/float64/complex128); a weak argument type (a Python
/// scalar launch argument) stays weak in its parameter's variable unless an assignment widens
/// it, and is passed in its default representation. Kernels must return None.
/// `resolver` may be null when the function calls no user functions.
/// Recursion: during typing fn.returnType is the provisional return type that recursive calls
/// get (the unification of the values returned in the last complete pass; null before one was
/// typed), unless the caller set fn.returnType and fn.returnTypeDeclared beforehand (an eager
/// signature's declared return type, which recursive calls then get). A call resolved to a
/// provisional function is typed again in every pass until the return type is stable.
/// Throws CompileError (kind Typing or Unsupported) naming the types and the location:
/// RunawayRecursion when every return goes through a recursive call, RecursiveReturn when the
/// return type does not converge. Throws RecursionPending (for an outer function's typing) when
/// a call needs the return type of such a function before one is known.
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
