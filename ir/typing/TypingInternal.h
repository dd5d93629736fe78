// Internal to the typing implementation (ir/typing/: Typing.cpp the driver and unification,
// TypingOps.cpp operators and memory, TypingCalls.cpp calls, TypingBuiltins.cpp Python builtins,
// TypingMath.cpp math and NumPy functions, TypingCuda.cpp the cuda module, TypingIter.cpp
// iteration, TypingRecords.cpp records): the per-function inference state and the rules for each
// instruction. Not for other layers.
#pragma once

#include "ir/Datetime.h"
#include "ir/Enums.h"
#include "ir/typing/CudaBuiltins.h"
#include "ir/typing/Libdevice.h"
#include "ir/typing/MathBuiltins.h"
#include "ir/typing/Typing.h"

#include <initializer_list>
#include <string>
#include <unordered_map>
#include <vector>

namespace ptxjit::ir::typing_detail {

/// Prefix of the SymbolType path given to a plain Python function (calling it is an error).
inline constexpr const char *kPyFunctionPrefix = "<python function>.";

/// The unification of two variable types (see Typing.h); null when they do not unify.
/// `a` may be null (no type yet): the result is `b`.
const Type *unifyTypes(const Type *a, const Type *b);

/// "int64, float32" (null entries print as "?").
std::string typeListStr(const std::vector<const Type *> &ts);
/// "int64, float32, n=int32": the argument types of call `i` as the call lists them (keyword
/// arguments by name; "?" for an argument not typed yet).
std::string argListStr(const CallInstr *i);

/// True for int types and weak int (not bool).
bool isIntLike(const Type *t);
/// True for bool, int types and weak int.
bool isIntOrBool(const Type *t);
/// True for numbers that are not complex (bool, ints, floats and their weak forms).
bool isRealNumber(const Type *t);
bool isComplexLike(const Type *t);

/// The result type of a call of math-like builtin `id` of kind `kind` (TypingMath.cpp); null
/// when the arguments do not fit.
const Type *mathCallType(BuiltinId id, MathKind kind, const std::vector<const Type *> &args);
/// The type of attribute `attr` (real, imag, conjugate) of a value of number type `t`, or null;
/// sets `builtin` for conjugate (TypingMath.cpp).
const Type *numberAttrType(const Type *t, const std::string &attr, BuiltinId &builtin);

/// The result type of a call of cooperating-threads builtin `i` (i->builtin set; `info` its
/// kind) in `fn`; raises the diagnostics itself (TypingCuda.cpp).
const Type *cudaCallType(const Function &fn, CallInstr *i, const CudaBuiltinInfo &info);
/// The result type of a call of libdevice function `f` (i->builtin set) in `fn`: its arguments
/// are real numbers, converted to the parameter types; raises LibdeviceArgs (Libdevice.cpp).
const Type *libdeviceCallType(const Function &fn, CallInstr *i, const LibdeviceFunction &f);
/// The type of value attribute `id` (cuda.laneid, cuda.warpsize: int32), or null
/// (TypingCuda.cpp).
const Type *cudaAttrType(BuiltinId id);
/// For CUDA C's name of a vector type, an attribute of `cuda` ("float4", "short2", "ulong3";
/// numba-cuda's aliases, `long` being 64-bit as on Linux): the vector type's own name
/// ("float32x4"); null for any other name (TypingCuda.cpp).
const char *cudaVectorAlias(const std::string &attr);
/// The type of NumPy array `g` (global `i`, or an element of the tuple it holds), frozen into
/// constant memory: a read-only C array of any ndim (0-d too); raises UnsupportedGlobal for
/// unsupported dtypes or arrays over 64 KiB (TypingCuda.cpp).
const Type *globalArrayType(const GlobalValue &g, const GlobalInstr *i, const std::string &file);
/// The type of device array `g` (global `i`, or an element of the tuple it holds), by
/// reference: a writable array whose layout (C, F or A) follows its strides; raises
/// UnsupportedGlobal for unsupported dtypes (TypingCuda.cpp).
const Type *globalDeviceArrayType(const GlobalValue &g, const GlobalInstr *i,
                                  const std::string &file);

/// The result type of `a op b` when `a` or `b` is a datetime64 / timedelta64, by numba's rules
/// (timedelta ± timedelta, datetime ± timedelta, datetime - datetime, timedelta * / // number,
/// timedelta / // % timedelta), with numba's result unit; null when they do not combine
/// (TypingDatetime.cpp).
const Type *datetimeBinaryType(BinaryOp op, const Type *a, const Type *b);
/// Whether `a cmp b` is defined for two datetimes or two timedeltas: datetimes always;
/// timedeltas for == and != always (different families are unequal), ordered when one unit is
/// a multiple of the other (TypingDatetime.cpp).
bool datetimeComparable(CmpOp cmp, const Type *a, const Type *b);
/// The unification of two datetimes or two timedeltas: the unit both convert into exactly;
/// null when there is none or they are not both datetimes or both timedeltas.
const Type *unifyDatetimes(const Type *a, const Type *b);

/// The text of a constant string operand (a literal or a frozen global), or null.
const std::string *constantString(const Instr *i);

/// The type a read of a record field of type `fieldType` gives: the field's scalar or record
/// type, or for a nested array a C-contiguous array view of it; read-only ones for a field of
/// a read-only record (TypingRecords.cpp).
const Type *recordFieldValueType(const Type *fieldType, bool readonly);

/// Thrown by the Typer when a `for` loop over a tuple must be unrolled (literal_unroll, or a
/// tuple whose elements differ in type): inferTypes unrolls it (LoopUnroll.h) and starts again.
struct UnrollRequest {
  GetIterInstr *getIter; ///< the loop's GetIter
  size_t count;          ///< the tuple's length
};

/// The inference state of one function specialization.
class Typer {
public:
  Typer(Function &fn, const std::vector<const Type *> &argTypes, CallResolver *resolver);
  void run();

private:
  // ---- driver (Typing.cpp) ----
  /// Types every instruction once; returns true when a variable or instruction type changed.
  bool pass();
  /// Unpacks the `*` operands of `i` (a star call's argument tuple, a display's spread
  /// operands) whose types are known: each becomes TupleGets of its elements, inserted before
  /// `i` and typed; StarUnpack when one is not a tuple. Returns true when it inserted any.
  bool unpackStars(Instr *i);
  void finalCheck();
  /// Computes the result type of `i` from its operands (null when an operand is not typed
  /// yet); may update variable types (StoreLocal) and the return type (Return).
  const Type *typeInstr(Instr *i);

  // ---- values and operators (TypingOps.cpp) ----
  const Type *typeConst(ConstInstr *i);
  const Type *typeGlobal(GlobalInstr *i);
  /// The type of snapshot value `g`: global `i` itself, or an element of the tuple it holds.
  const Type *typeGlobalValue(const GlobalValue &g, GlobalInstr *i);
  const Type *typeConstValue(const ConstValue &v, Instr *at);
  const Type *typeStore(StoreLocalInstr *i);
  const Type *typeBinOp(BinOpInstr *i);
  const Type *typeUnaryOp(UnaryOpInstr *i);
  const Type *typeCompare(CompareInstr *i);
  const Type *typeTruth(Instr *i, const Type *t);
  const Type *typeGetAttr(GetAttrInstr *i);
  const Type *typeGetItem(GetItemInstr *i);
  const Type *typeSetItem(SetItemInstr *i);

  // ---- records (TypingRecords.cpp) ----
  const Type *typeSetAttr(SetAttrInstr *i);
  /// Field `name` of `r`: NoRecordField when it has none, UnalignedRecordField (Numba's
  /// check) when its offset does not suit its scalars' alignment.
  const RecordField &recordField(Instr *at, const RecordType *r, const std::string &name);
  /// The field a constant index selects in `r[index]`: a string names it, an int counts the
  /// fields in offset order; null when `index` is not a constant string or int.
  const RecordField *recordKey(Instr *at, const RecordType *r, const Instr *index);
  /// Fails with SetItemTypes (naming `container`[`index`]) unless `value`, of type `v`, can be
  /// stored into memory of type `target` (a field's scalar, nested array, string or record
  /// type, or an array's record dtype).
  void checkRecordStore(Instr *at, const Type *target, const Instr *value, const Type *v,
                        const std::string &container, const std::string &index);

  // ---- fixed-length strings (TypingStrings.cpp) ----
  /// Fails with SetItemTypes (naming `container`[`index`] and why) unless `value` can be stored
  /// into an element of type `cs`: a constant of its kind (charSeqConstantUnits) or an element
  /// of the same type.
  void checkCharSeqStore(Instr *at, const CharSeqType *cs, const Instr *value,
                         const std::string &container, const std::string &index);
  /// The type of `a == b` / `a != b` (comparison `i`) where `a` or `b` is a string element
  /// (CharSeqType): bool when the other side is an element or constant of the same kind (bytes
  /// for S, str for U); OperatorTypes, saying why, otherwise.
  const Type *typeCharSeqCompare(CompareInstr *i, const Type *a, const Type *b);
  /// The type of `arr.name` / `arr['name']` for an array of records: a strided view of that
  /// field in every element (nested array fields add their dimensions).
  const Type *recordArrayField(Instr *at, const ArrayType *arr, const std::string &name);
  /// The element type of `arr` indexed by `index` (an integer, a slice or a tuple of them),
  /// or the array view type it selects (IndexTypes when the index does not fit).
  const Type *arrayIndex(Instr *at, const ArrayType *arr, const Type *index);
  /// The element type of `ptr[index]` (a CPointer's pointee); fails for void* and for an index
  /// that is not an integer.
  const Type *pointerElement(Instr *at, const PointerType *ptr, const Type *index);
  const Type *typeBuildSlice(BuildSliceInstr *i);
  /// The iterator type of `iter(value of type t)` (NotIterable when `t` is not iterable).
  const IteratorType *iteratorOf(Instr *at, const Type *t);
  const Type *typeTupleGet(TupleGetInstr *i);
  /// The one (concrete) type of `tup`'s elements, or null when they differ or there are none.
  static const Type *uniformElementType(const TupleType *tup);
  const Type *typeGetIter(GetIterInstr *i);
  const Type *typeIterOp(Instr *i);
  const Type *typeBranch(BranchInstr *i);
  const Type *typeReturn(ReturnInstr *i);

  // ---- calls (TypingCalls.cpp) ----
  const Type *typeCall(CallInstr *i);
  /// The ListType of list display `i` (a call's argument: the frontend lets a list reach
  /// nothing else), with its items' values when they are all constants.
  const Type *typeListDisplay(BuildTupleInstr *i);
  const Type *typeBuiltinCall(CallInstr *i, const SymbolType *sym,
                              const std::vector<const Type *> &args);
  /// A call of a cuda.declare_device function: each argument passes to its parameter as a kernel
  /// argument passes to an eager signature's (argumentConversion), an array to a pointer of its
  /// dtype (or void*) as its data pointer; the declared result type.
  const Type *typeExternCall(CallInstr *i, const ExternFunctionType *ext,
                             const std::vector<const Type *> &args);
  const Type *typeUserCall(CallInstr *i, const FunctionRefType *ref,
                           const std::vector<const Type *> &args);
  /// The constant int an instruction denotes (a Const or a constant Global), if any.
  static bool constantInt(const Instr *i, int64_t &out);

  // ---- divmod, round, pow, print (TypingBuiltins.cpp) ----
  /// The result type of a call of builtins.divmod/round/pow/print (`id`), or null when `id`
  /// is none of them. Only print takes keywords (constant `sep` and `end`).
  const Type *typeArithPrintBuiltin(CallInstr *i, BuiltinId id,
                                    const std::vector<const Type *> &args);
  /// Fails unless `src`, a print() argument of type `t`, can be printed (numbers, None,
  /// string constants, tuples of those, and the dim3 values cuda.threadIdx, ...).
  void checkPrintable(CallInstr *call, const Instr *src, const Type *t);

  // ---- enumerate, zip (TypingIter.cpp) ----
  /// The iterator type of a call of builtins.enumerate/zip (`id`), or null when `id` is
  /// neither. enumerate takes the keyword `start`.
  const Type *typeIterBuiltin(CallInstr *i, BuiltinId id, const std::vector<const Type *> &args);

  /// Throws CompileError(code) at `at` (the function's first line when null), the message
  /// followed by `hint` (e.g. didYouMean's "; did you mean 'x'?").
  [[noreturn]] void fail(DiagCode code, const Instr *at, std::initializer_list<std::string> args,
                         const std::string &hint = {});
  /// The didYouMean hint for attribute `attr` of the module or namespace `path` ("cuda",
  /// "cuda.threadIdx", "math", "numpy"): the closest attribute the compiler knows there
  /// (Builtins.def), as "; did you mean 'cuda.grid'?", or "". When `path` is itself unknown
  /// (cuda.threadidx), the hint is about its first unknown component.
  static std::string attributeHint(const std::string &path, const std::string &attr);

  Function &fn_;
  std::vector<const Type *> argTypes_;
  CallResolver *resolver_;
  /// Current type of each variable (null: never stored yet).
  std::vector<const Type *> varTypes_;
  /// Unification of the returned values in the current pass (null: no value returned yet).
  const Type *returnType_ = nullptr;
  bool sawBareReturn_ = false;
  bool changed_ = false;
  /// User functions referenced by Global instructions of this function, by id.
  std::unordered_map<int, GlobalValue> userFunctions_;
  struct CalleeCache {
    std::vector<const Type *> args;
    Function *callee = nullptr;
    /// CallResolver::isProvisional(callee): resolved again in every pass.
    bool provisional = false;
  };
  std::unordered_map<const CallInstr *, CalleeCache> callees_;

  // ---- recursion (see inferTypes) ----
  /// Calls left untyped in the current pass because their callee's return type is not known
  /// yet: this function's own recursive calls before any of its returns was typed.
  std::vector<const CallInstr *> pendingCalls_;
  /// A call used a provisional return type (CallResolver::isProvisional) in some pass: the
  /// return type then feeds back into itself, and a return that does not unify, or passes that
  /// do not settle, mean that it does not converge (RecursiveReturn).
  bool usedProvisional_ = false;
  /// Fails with RecursiveReturn (the return type feeds back into itself through a recursive
  /// call) when usedProvisional_, else with CannotUnify, for return values of types `a` and `b`
  /// at `at`.
  [[noreturn]] void failReturnUnify(const Instr *at, const std::string &a, const std::string &b);
};

} // namespace ptxjit::ir::typing_detail
