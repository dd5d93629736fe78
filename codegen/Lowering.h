// Codegen-internal: the translator from typed IR to LLVM IR, split by construct over
// Lowering.cpp (modules, the kernel and device-function entries, locals, control flow),
// LowerArith.cpp (constants, conversions, operators), LowerCalls.cpp (builtins, attributes,
// thread indices, device calls), LowerMath.cpp (math and NumPy functions), LowerNumeric.cpp
// (divmod, round, pow), LowerComplex.cpp (cmath and complex operations), LowerPrint.cpp
// (print), LowerCuda.cpp (shared/local/constant memory, barriers, warp functions, atomics),
// LowerArrays.cpp (arrays, tuples, iterators), LowerSlices.cpp (slices, views, assignment to
// views), LowerRecords.cpp (record fields and copies), LowerNumpyUfuncs.cpp (NumPy ufuncs called in
// kernels: their element loops over output arrays) and LowerUfunc.cpp (the loop kernels of
// @vectorize ufuncs). The entries follow the kernel ABI (KernelEntry.h); scalar types, casts and
// element access are ScalarValues.h's.
//
// Representation of values in registers (reprType):
//   bool → i1 (i8 in array memory and in kernel parameters); intN/uintN → iN; float32/64 →
//   float/double; complex → {T, T}; weak types → their default concrete type; array of ndim N
//   → {ptr data, [N x i64] shape, [N x i64] strides (bytes)}; tuple → a literal struct of its
//   elements; range → {i64 start, i64 stop, i64 step}; iterator → ptr to an entry-block alloca
//   holding its state; record → ptr to its bytes (an array of records' elements are
//   [size x i8]); compile-time-only values (symbols, functions, None, strings) → {}.
//
// Slices (LowerSlices.cpp): a slice value is {i64 start, i64 stop, i64 step}, the form
// CPython's PySlice_Unpack gives. BuildSlice fills None parts with sentinels that the clamping
// below turns into Python's defaults, so no "is None" flags are needed: step None → 1; start
// None → 0 (step > 0) or INT64_MAX (step < 0); stop None → INT64_MAX (step > 0) or INT64_MIN
// (step < 0). Unsigned parts above INT64_MAX saturate to INT64_MAX and a step below -INT64_MAX
// becomes -INT64_MAX, so -step never overflows. Applying a slice to a dimension of length n
// (sliceDimension) is PySlice_AdjustIndices: negative bounds add n, then clamp to [0, n] (to
// [-1, n-1] for a negative step); the count is 0 when the range is empty or step is 0 (a
// run-time step of 0 gives an empty view rather than Python's ValueError). A view is a new
// array value: data advanced by start*stride, that dimension's shape = count and stride =
// stride*step; integer components remove their dimension.
//
// Iterator states (LowerArrays.cpp): range → {i64 cur, i64 stop, i64 step}; array → {i64
// index, array}; enumerate → {i64 count, ptr inner state}; zip → {ptr state, ...}, one per
// iterable. enumerate()/zip() calls allocate their state (and, for arguments that are not
// iterators yet, the inner states) in the entry block; iter() of an iterator is the iterator.
//
// Every ir::Function becomes one internal LLVM function taking its arguments in that
// representation (plus, on the host, a trailing `ptr ctx` to the HostThreadCtx) and
// returning its value (void for None). The kernel/device entry wrappers flatten parameters.
#pragma once

#include "codegen/DatetimeValues.h"
#include "codegen/MathLib.h"
#include "codegen/ModuleImpl.h"
#include "codegen/ScalarValues.h"
#include "ir/Datetime.h"
#include "ir/Dominators.h"
#include "ir/Enums.h"
#include "ir/typing/ArrayReductions.h"
#include "ir/typing/CudaBuiltins.h"
#include "ir/typing/Libdevice.h"
#include "ir/typing/LowFloat.h"
#include "ir/typing/MathBuiltins.h"
#include "ir/typing/NumpyUfuncs.h"

#include <llvm/IR/DIBuilder.h>
#include <llvm/IR/IRBuilder.h>

#include <array>
#include <deque>
#include <functional>
#include <initializer_list>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace ptxjit::codegen::detail {

/// The CUDA special registers read by thread-index builtins (x/y/z = dimension 0/1/2).
enum class Sreg : uint8_t { Tid = 0, Ntid = 1, Ctaid = 2, Nctaid = 3 };

/// The MathFn of math builtin `id` (MathBuiltins.def's last column; Fabs when it has none).
MathFn mathFnOf(ir::BuiltinId id);

/// The value of a constant integer (or bool) operand — a literal or a frozen global — if it
/// is one.
std::optional<int64_t> constantIntOf(const ir::Instr *i);

/// A new module for `opts`' backend (its triple and data layout) whose entry will be `symbol`,
/// in a context of its own that keeps or drops value names as `names` says.
std::unique_ptr<LoweredModule::Impl> newModule(const CompileOptions &opts,
                                               const std::string &symbol, ValueNames names);
/// Throws CompileError(Internal) at `fn` when an entry symbol is not a valid PTX name.
void checkSymbol(const std::string &symbol, const ir::Function &fn);
/// Runs LLVM's verifier over `m`; throws CompileError(Internal) at `fn` with its findings.
void verifyModule(llvm::Module &m, const ir::Function &fn);

/// `s` (at most 31 bytes, NUL-padded) as the four little-endian words of a BoundsRecord name.
std::array<uint64_t, 4> nameWords(const std::string &s);

/// Module-wide lowering state: the function bodies, the type mapping, shared helpers.
class ModuleLowerer {
public:
  ModuleLowerer(llvm::Module &m, const CompileOptions &opts);
  ~ModuleLowerer();

  llvm::LLVMContext &ctx;
  llvm::Module &mod;
  const CompileOptions &opts;
  MathLib math;
  /// External code of the foreign device functions called so far (LoweredModule::links), and
  /// the declarations it came from.
  std::vector<ir::LinkItem> links;
  std::unordered_set<int> linkedDecls;
  /// The raise sites lowered so far with opts.exceptions (LoweredModule::raiseSites); a thread
  /// raising records its site's index in the fault record.
  std::vector<ir::RaiseSite> raiseSites;
  /// Lowering a ufunc loop kernel (LowerUfunc.cpp): one thread runs many elements, so a raise,
  /// which would end them all, is refused.
  bool loopKernel = false;

  bool isHost() const { return opts.backend == Backend::Host; }

  /// The internal LLVM function of `fn`'s body: declared on first request and queued for
  /// lowering.
  llvm::Function *bodyFor(const ir::Function &fn);
  /// Lowers every queued body (bodies may queue their callees).
  void lowerQueued();
  /// Whether spliceKernelBody moves kernel bodies at these options: not at optimization level
  /// 0, nor with debug information, whose scopes only inlining rewrites. The lowering holds a
  /// kernel's aggregate parameters as values only then.
  bool splicesKernelBodies() const;
  /// Moves the kernel's lowered body into `entry`, which calls it once and returns, in place of
  /// the call: the body's allocas, then the entry's unpacking of the parameters, then the rest of
  /// the body, its returns joined in one last block. Inlining would do the same by cloning the
  /// body, after computing block frequencies of both functions; moving it saves a tenth of a
  /// small kernel's optimization. Each field the body reads from an aggregate built in place
  /// (insertvalue) becomes the value put there, and the entry's aggregates left unread are
  /// deleted. Left to the inliner (false) where splicesKernelBodies() is false. Call after
  /// lowerQueued().
  bool spliceKernelBody(llvm::Function *entry, const ir::Function &kernel);
  /// Marks alwaysinline every local function of the module called from exactly one place in
  /// another function (a device function called once; the kernel's body where spliceKernelBody
  /// left it a function), so that the optimizer inlines it before simplifying rather than
  /// after. Not at optimization level 0. Call once the module's functions are all lowered.
  void inlineSingleCalls();

  /// The register representation of `t` (see the file comment). Throws
  /// CompileError(UnsupportedConstruct) at fn/loc for types with no run-time form.
  llvm::Type *reprType(const ir::Type *t, const ir::Function &fn, ir::SourceLoc loc);
  /// The in-memory type of an array element of dtype `t` (bool → i8).
  llvm::Type *memType(const ir::ScalarType *t);
  /// The in-memory type of an array element of dtype `t`, a scalar or a record ([size x i8]).
  llvm::Type *memType(const ir::Type *t);
  /// {ptr, [ndim x i64], [ndim x i64]}.
  llvm::StructType *arrayType(int ndim);
  /// {} — the value of compile-time-only things.
  llvm::StructType *emptyType() { return llvm::StructType::get(ctx); }
  /// True for types whose values exist only at compile time (represented by {}).
  static bool isCompileTimeOnly(const ir::Type *t);
  /// True for LLVM types of no bits: empty structs and arrays, and aggregates of those.
  static bool isZeroSized(llvm::Type *t);
  /// The return type of a body for `fn`'s returnType (void for Void/None and for values of
  /// zero size, such as an empty tuple).
  llvm::Type *bodyReturnType(const ir::Function &fn);
  /// True when the body of `fn` takes its parameter `k` as an LLVM parameter: values of zero
  /// size (compile-time-only ones, such as a function or an intrinsic passed to a device
  /// function, and empty tuples) are not passed, because NVPTX cannot lower parameters of
  /// empty types (LLVM aborts the process); the body uses a poison value of their type.
  bool passesParam(const ir::Function &fn, size_t k);
  /// `args` (one per parameter of `fn`, then the host context where there is one) without the
  /// parameters that passesParam drops: the arguments of a call of bodyFor(fn).
  std::vector<llvm::Value *> bodyArgs(const ir::Function &fn,
                                      const std::vector<llvm::Value *> &args);

  /// A module-unique symbol name derived from `base` (PTX-safe characters only).
  std::string uniqueName(const std::string &base);

  /// Whether these options emit source lines: opts.debugInfo set and the CUDA backend (see
  /// DebugInfo.cpp). The one test subprogramFor and splicesKernelBodies share.
  bool emitsDebugInfo() const;
  /// Source lines (opts.debugInfo, CUDA only; see DebugInfo.cpp): gives `f`, the code of
  /// Python function `fn` (a body or an entry), its DISubprogram; null when lines are off.
  llvm::DISubprogram *subprogramFor(const ir::Function &fn, llvm::Function *f);
  /// Completes the debug info (before the module is verified); a no-op when lines are off.
  void finishDebugInfo();
  /// CUDA kernels: the launch bounds and register limit of opts as NVVM annotations on `entry`.
  void annotateKernel(llvm::Function *entry);

  /// Helper function computing base**exp for integers of type `ty` with Python semantics
  /// (repeated squaring; a negative signed exponent gives 0 unless base is ±1).
  llvm::Function *intPowHelper(llvm::IntegerType *ty, bool isSigned);

  /// Module-wide state of the cooperating-threads features (LowerCuda.cpp).
  struct CudaState {
    uint64_t sharedBytes = 0;     ///< static shared memory laid out so far (host offsets)
    uint64_t dynSharedAlign = 16; ///< the largest alignment= of a dynamic shared array
    bool cooperative = false;     ///< a barrier or warp collective was lowered
    bool gridSync = false;        ///< cuda.cg was used: the kernel needs a cooperative launch
    uint64_t localBytes = 0;      ///< cuda.local.array bytes (all functions; host stack sizing)
    uint32_t activeSites = 0;     ///< cuda.activemask() calls numbered so far (host call sites)
    bool raises = false;          ///< a raise was lowered: host threads may end early (LowerRaise)
    std::unordered_map<const ir::Instr *, llvm::Constant *> sharedArrays; ///< per call site
    std::unordered_map<const void *, llvm::Constant *> constArrays;       ///< per frozen array
  } cuda;
  /// The module's bounds record and scratch element (opts.boundscheck; created on first use,
  /// named `<entry>__bounds` by finishCuda), as generic pointers from `b`'s position.
  llvm::Value *boundsRecord(llvm::IRBuilderBase &b);
  llvm::Value *boundsScratch(llvm::IRBuilderBase &b, uint64_t bytes = 16);
  /// Host: records the cuda state in the module as the constant `<entry>$launch` (see
  /// codegen::HostLaunchInfo); CUDA: checks the static shared size (LowerCuda.cpp).
  void finishCuda(const std::string &entry, const ir::Function &kernel);

private:
  llvm::GlobalVariable *boundsRecord_ = nullptr;
  llvm::GlobalVariable *boundsScratch_ = nullptr;
  uint64_t boundsScratchWords_ = 0;
  std::unordered_map<const ir::Function *, llvm::Function *> bodies_;
  std::deque<const ir::Function *> queue_;
  std::unordered_set<std::string> names_;
  std::unique_ptr<llvm::DIBuilder> di_;
  llvm::DICompileUnit *cu_ = nullptr;
};

/// Lowers one ir::Function into its body llvm::Function.
class FunctionLowerer {
public:
  FunctionLowerer(ModuleLowerer &m, const ir::Function &fn, llvm::Function *body);
  void run();

private:
  // ---- Lowering.cpp: core, locals, control flow ----
  void lowerInstr(const ir::Instr &i);
  /// The lowered value of operand `v` of `user`.
  llvm::Value *valueOf(const ir::Instr *v, ir::SourceLoc at);
  /// The type of `i`'s value: `i.type`, an IntEnum member's as its int value (ir/Enums.h); an
  /// Internal error if typing did not set it.
  const ir::Type *typeOf(const ir::Instr *i, ir::SourceLoc at) const;
  /// The value of member `name` of enum class `cls` (a constant of its value type).
  llvm::Value *enumMemberValue(const ir::EnumClassType *cls, const std::string &name,
                               ir::SourceLoc at);
  llvm::Type *repr(const ir::Type *t, ir::SourceLoc at) { return M.reprType(t, fn, at); }
  llvm::Value *placeholder() { return llvm::PoisonValue::get(M.emptyType()); }
  /// An alloca in the entry block.
  llvm::AllocaInst *entryAlloca(llvm::Type *ty, const llvm::Twine &name);
  /// True when variable `var` has a run-time value and no slot: it is the value of its one
  /// assignment (directValues), not memory.
  bool heldAsValue(size_t var) const;
  void lowerReturn(const ir::ReturnInstr &r);
  /// Raises `e` at `at` from the current position (LowerRaise.cpp): with opts.exceptions the
  /// first raising thread of a launch records the raise site, the line and its thread in the
  /// fault record (BoundsRecord, failed = 2); then the thread ends (PTX `exit`; on the host a
  /// jump back to the grid runner), as numba-cuda's kernels return. Leaves B in no block.
  void raiseException(const ir::RaisedException &e, ir::SourceLoc at);
  /// `if (cond) raise cls(message)` at `at`, `cls` a builtin exception class, the raise marked
  /// unlikely; B continues where `cond` is false (LowerRaise.cpp).
  void raiseIf(llvm::Value *cond, const char *cls, const std::string &message, ir::SourceLoc at);
  /// `if (cond) raise ValueError(message)` (raiseIf), except in a ufunc loop kernel, which cannot
  /// raise: there nothing is emitted and the caller's result for the bad case stands.
  void valueErrorIf(llvm::Value *cond, const std::string &message, ir::SourceLoc at);
  /// Debug builds (opts.exceptions): `if (isZero) raise ZeroDivisionError(message)` at `at`,
  /// numba's Python error model; B continues where the divisor is not zero. A no-op otherwise.
  void checkZeroDivision(llvm::Value *isZero, const char *message, ir::SourceLoc at);

public:
  [[noreturn]] void fail(ir::SourceLoc at, ir::DiagCode code,
                         std::initializer_list<std::string> args) const;
  [[noreturn]] void internal(ir::SourceLoc at, const std::string &what) const;

private:
  // ---- LowerArith.cpp: constants, conversions, operators ----
  /// `v` (of IR type `from`) converted to IR type `to` (numeric conversions, weak →
  /// concrete, tuples elementwise, array layout changes). Internal error when impossible.
  llvm::Value *convert(llvm::Value *v, const ir::Type *from, const ir::Type *to, ir::SourceLoc at);
  llvm::Value *constant(const ir::ConstValue &c, const ir::Type *t, ir::SourceLoc at);
  /// A BinOp instruction: binaryValues on its operands.
  llvm::Value *lowerBinOp(const ir::BinOpInstr &i);

public:
  /// `l <op> r` for operand values of IR types `lt` and `rt` giving IR type `res` (the type
  /// typing gave the operator): the code of every binary operator (Python/NumPy semantics,
  /// tuple `+`), shared by BinOp, divmod() and pow(). `constRhs` is r's value when it is a
  /// compile-time integer constant (small `**` exponents are unrolled).
  llvm::Value *binaryValues(ir::BinaryOp op, llvm::Value *l, const ir::Type *lt, llvm::Value *r,
                            const ir::Type *rt, const ir::Type *res, ir::SourceLoc at,
                            std::optional<int64_t> constRhs = std::nullopt);

private:
  llvm::Value *intBinary(ir::BinaryOp op, llvm::Value *l, llvm::Value *r, bool isSigned,
                         ir::SourceLoc at);
  llvm::Value *floatBinary(ir::BinaryOp op, llvm::Value *l, llvm::Value *r, ir::SourceLoc at);
  llvm::Value *complexBinary(ir::BinaryOp op, llvm::Value *l, llvm::Value *r, ir::SourceLoc at);
  /// l ** r in scalar result type `result` (`k`: r's value when constant).
  llvm::Value *lowerPow(llvm::Value *l, const ir::Type *lt, llvm::Value *r, const ir::Type *rt,
                        const ir::ScalarType *result, ir::SourceLoc at, std::optional<int64_t> k);
  llvm::Value *lowerUnaryOp(const ir::UnaryOpInstr &i);
  llvm::Value *lowerCompare(const ir::CompareInstr &i);
  /// l <cmp> r for two values of scalar type `t` (Lt..Ne only).
  /// Python's min(a) / max(a) of 1-d array value `arr` of type `aty` (the first of equal
  /// elements; an empty array raises ValueError), converted to `res` (LowerCalls.cpp).
  llvm::Value *arrayMinMax(llvm::Value *arr, const ir::ArrayType *aty, bool isMax,
                           const ir::ScalarType *res, ir::SourceLoc at);
  llvm::Value *compareScalars(ir::CmpOp cmp, llvm::Value *l, llvm::Value *r,
                              const ir::ScalarType *t, ir::SourceLoc at);
  /// l <cmp> r for scalar values of types lt and rt with Python's meaning: a signed and an
  /// unsigned integer compare exactly; other pairs in comparisonType.
  llvm::Value *compareNumbers(ir::CmpOp cmp, llvm::Value *l, const ir::Type *lt, llvm::Value *r,
                              const ir::Type *rt, ir::SourceLoc at);
  /// Whether two values of type `t` (scalars or tuples of them) are equal, as i1.
  llvm::Value *valuesEqual(llvm::Value *l, const ir::Type *t, llvm::Value *r, ir::SourceLoc at);
  /// bool(v) for v of type t, as i1.
  llvm::Value *truth(llvm::Value *v, const ir::Type *t, ir::SourceLoc at);
  /// The common type for comparing values of types a and b (NumPy promotion).
  const ir::ScalarType *comparisonType(const ir::Type *a, const ir::Type *b, ir::SourceLoc at);

  // ---- LowerCalls.cpp: calls, builtins, attributes, thread indices ----
  llvm::Value *lowerCall(const ir::CallInstr &i);
  /// abs() of a value of scalar type `st` (complex: its magnitude), in result type `rs`.
  llvm::Value *absValue(llvm::Value *v, const ir::ScalarType *st, const ir::ScalarType *rs,
                        ir::SourceLoc at);
  llvm::Value *lowerBuiltinCall(const ir::CallInstr &i);
  llvm::Value *lowerDeviceCall(const ir::CallInstr &i);
  /// A call of a cuda.declare_device function (LowerExtern.cpp): CUDA only.
  llvm::Value *lowerExternCall(const ir::CallInstr &i, const ir::ExternFunctionType &ext);
  llvm::Value *lowerGetAttr(const ir::GetAttrInstr &i);
  llvm::Value *lowerMinMax(const ir::CallInstr &i, bool isMax);
  /// min/max of two float32 or float64 values of one type, as PTX's min/max (libdevice's
  /// fmin/fmax): a NaN operand gives the other operand, both NaN give NaN, and +0.0 is greater
  /// than -0.0.
  llvm::Value *floatMinMax(bool isMax, llvm::Value *a, llvm::Value *b);
  /// The special register `r` of dimension `dim` as i32.
  llvm::Value *specialRegister(Sreg r, int dim);
  /// cuda.grid / cuda.gridsize component `dim` as i64.
  llvm::Value *gridComponent(bool gridsize, int dim);
  // ---- LowerMath.cpp: math.*, numpy.* scalar functions and constants, NumPy casts ----
  llvm::Value *lowerMathCall(const ir::CallInstr &i, ir::MathKind kind);
  // ---- LowerNumpyUfuncs.cpp: NumPy ufuncs typed by their loops (ir/typing/NumpyUfuncs.h) ----
  /// A call of ufunc `u` typed by resolveUfuncCall: with an output array, the element loop
  /// over it (inputs broadcast NumPy-style; the value is the output array); else the loop's
  /// value for scalar inputs.
  llvm::Value *lowerNumpyUfuncCall(const ir::CallInstr &i, const ir::NumpyUfunc &u);
  /// One element of ufunc `u`: its loop `loop` applied to `x` (one value per input, of the
  /// loop's input types); the result has the loop's output type.
  llvm::Value *ufuncElement(const ir::NumpyUfunc &u, const ir::LoopTypes &loop,
                            const std::vector<llvm::Value *> &x, ir::SourceLoc at);
  /// NumPy's comparison `cmp` (Lt..Ne) of `l` and `r` of loop types `lt` and `rt`: complex
  /// numbers in NumPy's lexicographic order, int64 with uint64 exactly (NumPy 1.25).
  llvm::Value *ufuncCompare(ir::CmpOp cmp, llvm::Value *l, const ir::ScalarType *lt, llvm::Value *r,
                            const ir::ScalarType *rt, ir::SourceLoc at);
  /// numpy.maximum/minimum (nan propagates) or fmax/fmin (nan ignored) of two values of type
  /// `t`; complex numbers in NumPy's lexicographic order.
  llvm::Value *ufuncMinMax(bool isMax, bool ignoreNan, llvm::Value *a, llvm::Value *b,
                           const ir::ScalarType *t);
  // ---- LowerReductions.cpp: NumPy's array reductions (ir/typing/ArrayReductions.h) ----
  /// A call of reduction `r` (np.sum(a), a.min(), ...): one loop over the array's elements in
  /// C order, with NumPy's results (NaN semantics, empty arrays); min, max, argmin, argmax of
  /// an empty array raise ValueError as numba-cuda does.
  llvm::Value *lowerReduction(const ir::CallInstr &i, ir::Reduction r);
  // ---- LowerNumeric.cpp: divmod(), round(), pow() ----
  /// divmod(a, b): the tuple (a // b, a % b) through binaryValues.
  llvm::Value *lowerDivmod(const ir::CallInstr &i);
  /// round(x) and round(x, ndigits) (Python's results; see docs/language.md).
  llvm::Value *lowerRound(const ir::CallInstr &i);
  /// pow(a, b) as a ** b; pow(a, b, m) for integers (modular, Python's signs).
  llvm::Value *lowerPowCall(const ir::CallInstr &i);
  // ---- LowerPrint.cpp: print() ----
  /// print(...): one vprintf (CUDA) or printf + fflush (host) call per statement.
  llvm::Value *lowerPrint(const ir::CallInstr &i);

  // ---- LowerComplex.cpp: cmath, complex(), z.conjugate(), complex ** ----
  llvm::Value *lowerComplexCall(const ir::CallInstr &i, ir::MathKind kind);
  /// Complex function `name` of complex value `z` (cmath's names: "exp", "log10", "asin", ...,
  /// and NumPy's "log2", "exp2", "expm1", "log1p", "rint"), in z's type.
  llvm::Value *complexUnary(const std::string &name, llvm::Value *z, ir::SourceLoc at);
  /// l ** r for two complex values of one LLVM type (CPython's algorithm).
  llvm::Value *complexPow(llvm::Value *l, llvm::Value *r);
  /// The value of math constant builtin `id` (math.pi, ...) as IR type `res`.
  llvm::Value *mathConstant(ir::BuiltinId id, const ir::Type *res, ir::SourceLoc at);
  /// math function call for a float or double value.
  llvm::Value *mathCall(MathFn fn, std::initializer_list<llvm::Value *> args) {
    return M.math.call(B, fn, args);
  }

  // ---- LowerCuda.cpp: shared/local/constant arrays, barriers, warp functions, atomics,
  // intrinsics ----
  llvm::Value *lowerCudaCall(const ir::CallInstr &i, const ir::CudaBuiltinInfo &info);
  // ---- LowerLibdevice.cpp: ptxjit.cuda.libdevice ----
  llvm::Value *lowerLibdeviceCall(const ir::CallInstr &i, const ir::LibdeviceFunction &f);
  /// cuda.laneid, cuda.warpsize.
  llvm::Value *lowerCudaValue(const ir::GetAttrInstr &i, const ir::CudaBuiltinInfo &info);
  /// cuda.bf16.<f>(...) and cuda.fp16.<f>(...) (ir::LowFloatFunction): operands converted to
  /// the function's parameter types, the operation in 16-bit precision where the target has it
  /// (LowerLowFloat.cpp).
  llvm::Value *lowerLowFloatCall(const ir::CallInstr &i, const ir::LowFloatFunction &f);
  /// A global NumPy array `g` (global `name`, or an element of a tuple it holds) of type `t`,
  /// frozen into constant memory (a read-only array value; an empty one has a null pointer).
  llvm::Value *lowerGlobalArray(const ir::GlobalValue &g, const std::string &name,
                                const ir::Type *t, ir::SourceLoc at);
  /// A global device array `g` captured by reference: an array value whose data pointer, shape
  /// and strides are constants (its address in device memory, host memory on the CPU backend).
  llvm::Value *lowerGlobalDeviceArray(const ir::GlobalValue &g, const std::string &name,
                                      const ir::Type *t, ir::SourceLoc at);
  /// The value of snapshot value `g` of global `name` (or of an element of the tuple it holds)
  /// typed `t`: a constant, a frozen or captured array, a tuple of those (compile-time-only
  /// elements as {}).
  llvm::Value *globalValue(const ir::GlobalValue &g, const std::string &name, const ir::Type *t,
                           ir::SourceLoc at);
  /// A new C-contiguous array of `aty`'s dtype and constant `shape` in the thread's local memory
  /// (an alloca of the function's entry block, aligned to `align`), counted in the module's
  /// local-memory bytes: cuda.local.array's storage and a.copy()'s.
  llvm::Value *localArray(const ir::ArrayType *aty, const std::vector<int64_t> &shape,
                          uint64_t align);
  /// A C-contiguous array value at `data` of shape `dims` and elements of `itemSize` bytes.
  llvm::Value *cudaArrayValue(llvm::Value *data, const std::vector<llvm::Value *> &dims,
                              int64_t itemSize);
  llvm::Value *lowerAtomic(const ir::CallInstr &i, const ir::CudaBuiltinInfo &info);
  /// CUDA: cuda.cg's grid.sync() at the builder's position (LowerCuda.cpp); leaves the builder
  /// in the block after it.
  void lowerGridSync();
  /// cuda.ldca ... cuda.ldcv and cuda.stcg ... cuda.stwt: PTX ld.global / st.global with the
  /// builtin's cache operator (inline assembly) on CUDA; plain loads and stores on the host.
  llvm::Value *lowerCacheHint(const ir::CallInstr &i, const ir::CudaBuiltinInfo &info);
  llvm::Value *lowerWarpCall(const ir::CallInstr &i, const ir::CudaBuiltinInfo &info);
  llvm::Value *hostCtxField(unsigned offset, llvm::Type *ty);
  llvm::FunctionCallee hostHelper(const char *name, llvm::Type *ret,
                                  std::initializer_list<llvm::Type *> params);

  // ---- LowerArrays.cpp: arrays, tuples, ranges, iterators ----
  llvm::Value *lowerGetItem(const ir::GetItemInstr &i);
  void lowerSetItem(const ir::SetItemInstr &i);
  llvm::Value *lowerBuildTuple(const ir::BuildTupleInstr &i);
  llvm::Value *lowerTupleGet(const ir::TupleGetInstr &i);
  llvm::Value *lowerGetIter(const ir::GetIterInstr &i);
  llvm::Value *lowerIterValid(const ir::IterValidInstr &i);
  llvm::Value *lowerIterNext(const ir::IterNextInstr &i);
  /// The i64 indices of index value `idx` (an integer or a tuple of integers) for `arr`, with
  /// negative signed indices wrapped by the dimension.
  std::vector<llvm::Value *> arrayIndices(llvm::Value *arr, const ir::ArrayType *aty,
                                          llvm::Value *idx, const ir::Type *idxType,
                                          ir::SourceLoc at);
  /// Address of element `idx` (one i64 per dimension) of array value `arr`.
  /// The address of the element `index` (of type `idxType`: one integer or a tuple) selects
  /// in `arr`, the array `array` names (for the message). With opts.boundscheck, an index out
  /// of bounds records the first failure in the module's bounds record (BoundsRecord) and
  /// gives the address of a scratch element instead, so that nothing outside the array is
  /// read or written.
  llvm::Value *checkedElementAddress(llvm::Value *arr, const ir::ArrayType *aty, llvm::Value *index,
                                     const ir::Type *idxType, const ir::Instr *array,
                                     ir::SourceLoc at);
  llvm::Value *elementAddress(llvm::Value *arr, const ir::ArrayType *aty,
                              const std::vector<llvm::Value *> &idx);
  /// One index checked against its axis: `ok` is 0 <= index < size (after negative indices
  /// wrapped), `index` the index as written (for the message).
  struct BoundsCheck {
    llvm::Value *ok, *index, *size;
    int64_t axis;
  };
  /// Emits the failure path of `checks` (non-empty): when one fails, the first thread to fail
  /// records the first failing check, the array `array` names, `at` and the thread in the
  /// module's bounds record (BoundsRecord, failed = 1), and goes on. Returns whether all
  /// passed; the builder continues in the block both paths join.
  llvm::Value *recordOutOfBounds(const std::vector<BoundsCheck> &checks, const ir::Instr *array,
                                 ir::SourceLoc at);
  /// A sub-array view `arr[idx...]` for fewer indices than dimensions.
  llvm::Value *subarray(llvm::Value *arr, const ir::ArrayType *aty,
                        const std::vector<llvm::Value *> &idx);
  /// The number of elements of a range {start, stop, step} as i64 (0 for step 0).
  llvm::Value *rangeLength(llvm::Value *range);
  llvm::Value *arraySize(llvm::Value *arr, int ndim);
  /// The iterator-state struct type for iterator type `it`.
  llvm::Type *iterStateType(const ir::IteratorType *it, ir::SourceLoc at);
  void initIterState(llvm::Value *state, const ir::IteratorType *it, llvm::Value *source,
                     const ir::Type *sourceType, ir::SourceLoc at);
  llvm::Value *iterValid(llvm::Value *state, const ir::IteratorType *it, ir::SourceLoc at);
  llvm::Value *iterNext(llvm::Value *state, const ir::IteratorType *it, ir::SourceLoc at);
  /// Integer value `v` of IR type `t` as an i64 index (sign- or zero-extended).
  llvm::Value *toIndex(llvm::Value *v, const ir::Type *t, ir::SourceLoc at);
  /// The element type of pointer `p` indexed by a value of `indexType` (VoidPointerIndex for
  /// void*, IndexTypes for a non-integer index).
  const ir::ScalarType *pointee(const ir::PointerType *p, const ir::Type *indexType,
                                ir::SourceLoc at);
  /// The address of `ptr[index]`, elements of `elem`: no bounds, negative indices not wrapped.
  llvm::Value *pointerElementAddress(llvm::Value *ptr, const ir::ScalarType *elem,
                                     llvm::Value *index, const ir::Type *indexType,
                                     ir::SourceLoc at);
  /// The state of an enumerate()/zip() call (builtin Enumerate or Zip): a pointer to a new
  /// iterator state.
  llvm::Value *lowerIterBuiltin(const ir::CallInstr &i);

  // ---- LowerStrings.cpp: fixed-length strings (see CharSeqType) ----
  /// Stores into the string element of type `cs` at `addr` (aligned to `align` bytes) what
  /// instruction `value` computed (`v`, of IR type `vt`, as typing checked): a constant's code
  /// units, cut or zero-padded to the length, or an element of the same type.
  void storeCharSeq(llvm::Value *addr, const ir::CharSeqType *cs, uint64_t align,
                    const ir::Instr *value, llvm::Value *v, const ir::Type *vt, ir::SourceLoc at);
  /// `lhs == rhs` (an i1) where one side is a string element and the other an element or a
  /// constant of its kind (as typing checked), by numba's rule: equal lengths (up to the last
  /// nonzero code unit) and equal code units.
  llvm::Value *charSeqEqual(const ir::Instr *lhs, const ir::Instr *rhs, ir::SourceLoc at);

  // ---- LowerRecords.cpp: records (see RecordType) ----
  void lowerSetAttr(const ir::SetAttrInstr &i);
  /// The address of field `f` of the record at `rec`.
  llvm::Value *recordFieldAddress(llvm::Value *rec, const ir::RecordField &f);
  /// The value of field `f` of record `r` at `rec` as IR type `res`: a scalar (converted), an
  /// array view of a nested array, a nested record's address.
  llvm::Value *loadRecordField(llvm::Value *rec, const ir::RecordType *r, const ir::RecordField &f,
                               const ir::Type *res, ir::SourceLoc at);
  /// Stores `v` (of IR type `vt`, as typing checked; computed by instruction `value`) into
  /// field `f` of record `r` at `rec`.
  void storeRecordField(llvm::Value *rec, const ir::RecordType *r, const ir::RecordField &f,
                        const ir::Instr *value, llvm::Value *v, const ir::Type *vt,
                        ir::SourceLoc at);
  /// Copies the bytes of record `r` from `src` to `dst` (which may overlap).
  void copyRecord(llvm::Value *dst, llvm::Value *src, const ir::RecordType *r);
  /// `arr.f` for an array of records: a strided view of field `f` in every element.
  llvm::Value *recordArrayFieldView(llvm::Value *arr, const ir::ArrayType *aty,
                                    const ir::RecordField &f, ir::SourceLoc at);
  /// The field constant index `index` selects in a record of type `r` (typing checked it).
  const ir::RecordField &fieldOf(const ir::RecordType *r, const ir::Instr *index, ir::SourceLoc at);
  /// Field `name` of `r` (NoRecordField when missing).
  const ir::RecordField &fieldNamed(const ir::RecordType *r, const std::string &name,
                                    ir::SourceLoc at);

  // ---- LowerSlices.cpp: slices, views, assignment to views ----
  /// One component of an index: an integer or a slice value with its IR type.
  struct IndexComponent {
    llvm::Value *value;
    const ir::Type *type;
  };
  /// The components of index value `idx` of type `idxType` (a tuple gives one per element).
  std::vector<IndexComponent> indexComponents(llvm::Value *idx, const ir::Type *idxType);
  /// Index `idx` of type `idxType` into `aty` with its Ellipsis replaced by full slices, the
  /// value and its type (ir::indexComponentTypes, as typing saw it); unchanged without one.
  std::pair<llvm::Value *, const ir::Type *> expandEllipsis(llvm::Value *idx,
                                                            const ir::Type *idxType,
                                                            const ir::ArrayType *aty,
                                                            ir::SourceLoc at);
  /// True when indexing `aty` with `comps` selects a view rather than one element.
  static bool selectsView(const ir::ArrayType *aty, const std::vector<IndexComponent> &comps);
  /// {start, stop, step} from a BuildSlice (see the file comment for None parts).
  llvm::Value *lowerBuildSlice(const ir::BuildSliceInstr &i);
  /// A slice value of type `t` from its three parts (i64, None already resolved).
  llvm::Value *sliceValue(const ir::Type *t, llvm::Value *start, llvm::Value *stop,
                          llvm::Value *step, ir::SourceLoc at);
  /// A slice {start, stop, step} applied to a dimension of length `len`: the first index, the
  /// number of elements and the step (Python's slice semantics; count 0 for step 0).
  struct SliceDim {
    llvm::Value *start, *count, *step;
  };
  SliceDim sliceDimension(llvm::Value *slice, llvm::Value *len);
  /// The view `arr[comps]` (integers and slices, fewer components than dimensions allowed)
  /// as an array value of ndim = ndim(aty) - (number of integer components). With
  /// opts.boundscheck an integer component out of its axis records the failure (naming the
  /// array `array` names) and gives an empty view at the array's start, so that nothing outside
  /// the array is reached through it.
  llvm::Value *indexView(llvm::Value *arr, const ir::ArrayType *aty,
                         const std::vector<IndexComponent> &comps, const ir::Instr *array,
                         ir::SourceLoc at);
  /// Stores `value` (a scalar, or an array broadcast NumPy-style) into every element of the
  /// view `dst`. Mismatched shapes copy the overlapping part; overlapping memory is copied in
  /// the direction that keeps shifted copies (a[1:] = a[:-1]) correct.
  void assignToView(llvm::Value *dst, const ir::ArrayType *dty, llvm::Value *value,
                    const ir::Type *valueType, ir::SourceLoc at);
  /// Emits nested counting loops 0 <= k[d] < extents[d] (outermost first) around `body`;
  /// the builder continues after the loops.
  void emitLoopNest(const std::vector<llvm::Value *> &extents,
                    const std::function<void(const std::vector<llvm::Value *> &)> &body);

  ModuleLowerer &M;
  const ir::Function &fn;
  llvm::Function *F;
  llvm::IRBuilder<> B;
  llvm::BasicBlock *allocaBlock = nullptr;
  llvm::Value *ctxArg = nullptr; ///< host: the HostThreadCtx pointer
  std::vector<llvm::Value *> args;
  std::vector<llvm::AllocaInst *> slots;   ///< per variable; null if no run-time value
  std::vector<const ir::Type *> slotTypes; ///< concretized variable types
  /// Per variable: ir::singleValueVariables (one assignment dominates every read).
  std::vector<bool> singleValue;
  /// The value of each variable held as a value (heldAsValue), once assigned.
  std::vector<llvm::Value *> directValues;
  std::unordered_map<const ir::Instr *, llvm::Value *> values;
  std::unordered_map<const ir::Block *, llvm::BasicBlock *> blocks;
};

} // namespace ptxjit::codegen::detail
