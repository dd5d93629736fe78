// Compile-time diagnostics: an enum of codes, each with a kind and a message template, and the
// one exception type every compiler layer throws. The bindings turn a CompileError into
// ptxjit.errors.UnsupportedError / TypingError / CompileError and add the source line.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ptxjit::ir {

/// A position in the Python source (1-based line, 0-based column as CPython's co_positions).
/// line == 0 means unknown.
struct SourceLoc {
  int line = 0;
  int col = 0;
  int endLine = 0;
  int endCol = 0;
};

enum class DiagKind : uint8_t {
  Unsupported, ///< valid Python the kernel language does not support
  Typing,      ///< types that do not fit (a TypeError for the user)
  Internal,    ///< a compiler bug or an environment problem (LLVM, libdevice missing)
};

// X(code, kind, template): {0}, {1}, ... are replaced by the arguments in order.
#define PTXJIT_DIAGNOSTICS(X)                                                                      \
  X(UnsupportedOpcode, Unsupported, "unsupported bytecode instruction {0}")                        \
  X(MalformedCode, Unsupported, "malformed code object: {0}")                                      \
  X(UnsupportedConstruct, Unsupported, "{0} is not supported in kernels")                          \
  X(UnsupportedConstant, Unsupported, "constant of type {0} is not supported in kernels")          \
  X(UnsupportedGlobal, Unsupported, "global '{0}' of type {1} cannot be used in kernels")          \
  X(UntypedGlobal, Typing,                                                                         \
    "Untyped global name '{0}': a value of type {1} cannot be used in kernels")                    \
  X(UnsupportedAttribute, Unsupported, "attribute '{1}' of {0} is not supported")                  \
  X(UnsupportedCall, Unsupported, "call to {0} is not supported")                                  \
  X(UndefinedName, Typing, "NameError: name '{0}' is not defined")                                 \
  X(MissingModuleAttribute, Typing, "AttributeError: module '{0}' has no attribute '{1}'")         \
  X(UndecoratedFunction, Unsupported,                                                              \
    "'{0}' is a plain Python function: decorate it with @cuda.jit(device=True) to call it from "   \
    "a kernel")                                                                                    \
  X(KernelCallFromDevice, Unsupported,                                                             \
    "kernel '{0}' cannot be called from device code; use @cuda.jit(device=True)")                  \
  X(Recursion, Unsupported, "recursive call to '{0}' is not supported: {1}")                       \
  X(RunawayRecursion, Typing,                                                                      \
    "cannot type infer runaway recursion: every return of '{0}' goes through a recursive call, "   \
    "so nothing gives its return type")                                                            \
  X(RecursiveReturn, Typing, "Return type of recursive function does not converge: {0}")           \
  X(UnboundLocal, Typing, "local variable '{0}' may be used before assignment")                    \
  X(OperatorTypes, Typing, "operator {0} is not defined for {1} and {2}")                          \
  X(UnaryTypes, Typing, "unary operator {0} is not defined for {1}")                               \
  X(CannotUnify, Typing, "variable '{0}' has incompatible types {1} and {2}")                      \
  X(CallArgs, Typing, "{0} cannot be called with ({1})")                                           \
  X(NoImplementation, Typing,                                                                      \
    "No implementation of function Function(<function {0}>) found for signature:\n \n >>> "        \
    "{1}({2})\n \n{3}")                                                                            \
  X(StarUnpack, Typing,                                                                            \
    "cannot unpack {0} with * in {1}: only tuples, whose length is known at compile time, can "    \
    "be")                                                                                          \
  X(UfuncCall, Typing, "numpy.{0} cannot be called with ({1}): {2}")                               \
  X(DeclaredReturn, Typing,                                                                        \
    "device function '{0}' returns {1}, which does not convert to its declared return type {2}")   \
  X(LibdeviceArgs, Typing, "cuda.libdevice.{0} cannot be called with ({1}): {2}")                  \
  X(IndexTypes, Typing, "cannot index {0} with {1}")                                               \
  X(NoRecordField, Typing, "{0} has no field '{1}'")                                               \
  X(UnalignedRecordField, Typing, "{0}.{1} of type {2} is not aligned")                            \
  X(SetItemTypes, Typing, "cannot store {2} into {0}[{1}]")                                        \
  X(StringStore, Typing, "cannot store {2} into {0}[{1}]: {3}")                                    \
  X(ReadonlyArray, Typing, "cannot write to read-only array {0}")                                  \
  X(VoidPointerIndex, Typing,                                                                      \
    "cannot index {0}: a void pointer has no element type (use CPointer(dtype) in the "            \
    "signature)")                                                                                  \
  X(PointerArithmetic, Typing,                                                                     \
    "pointer arithmetic is not supported: operator {0} on {1} and {2} (index the pointer "         \
    "instead)")                                                                                    \
  X(NotIterable, Typing, "{0} is not iterable in kernels")                                         \
  X(SliceBound, Typing, "slice indices must be integers or None, not {0}")                         \
  X(SliceStepZero, Typing, "slice step cannot be zero")                                            \
  X(NoTruthValue, Typing, "{0} has no truth value")                                                \
  X(KernelReturnsValue, Typing, "a kernel must have void return type; it returns {0}")             \
  X(ArgumentCount, Typing, "{0}() takes {1} arguments but {2} were given")                         \
  X(BadSignature, Typing, "invalid signature '{0}': {1}")                                          \
  X(ConstantRequired, Typing, "{0}: {1} must be a compile-time constant ({2})")                    \
  X(UnsupportedDtype, Typing, "{0} does not support {1}; it supports {2}")                         \
  /* a constant argument of a wrong value: the bindings raise NumbaValueError (a ValueError),      \
     as numba-cuda raises ValueError ("cuda.local.array: Alignment must be a power of 2") */       \
  X(ArgumentValue, Typing, "{0}: {1}")                                                             \
  X(CudaOnly, Unsupported, "{0} is not supported on the CPU backend: {1}")                         \
  X(IRSyntax, Internal, "IR text line {0}: {1}")                                                   \
  X(Internal, Internal, "internal compiler error: {0}")

enum class DiagCode : uint16_t {
#define PTXJIT_DIAG_ENUM(code, kind, text) code,
  PTXJIT_DIAGNOSTICS(PTXJIT_DIAG_ENUM)
#undef PTXJIT_DIAG_ENUM
};

/// The kind of a code.
DiagKind diagKind(DiagCode code);
/// The code's name ("UnsupportedOpcode").
const char *diagName(DiagCode code);
/// The message template filled with `args` in order.
std::string formatDiag(DiagCode code, std::initializer_list<std::string> args);

/// Where a function whose compile failed was called from: the error happened inside `callee`,
/// called by `caller` at `file`:`loc` (the call expression).
struct CallSite {
  std::string callee;
  std::string caller;
  std::string file;
  SourceLoc loc;
};

/// The error every compiler layer throws for bad input. `what()` is "file:line: message",
/// followed by " (in 'callee', called from 'caller' at file:line)" for each call site.
class CompileError : public std::runtime_error {
public:
  CompileError(DiagCode code, std::string message, std::string file, SourceLoc loc);
  DiagCode code() const { return code_; }
  DiagKind kind() const { return diagKind(code_); }
  /// The message without location.
  const std::string &message() const { return message_; }
  const std::string &file() const { return file_; }
  const SourceLoc &loc() const { return loc_; }
  /// The calls that led to the error, innermost first (empty when it is in the function
  /// being compiled itself).
  const std::vector<CallSite> &callSites() const { return callSites_; }
  /// Records that the failing code was reached through `site` (outside the calls recorded so
  /// far). A site at the error's own location (an error the caller's call itself caused, such
  /// as a wrong argument count) is not recorded.
  void addCallSite(CallSite site);
  const char *what() const noexcept override { return what_.c_str(); }

private:
  DiagCode code_;
  std::string message_;
  std::string file_;
  SourceLoc loc_;
  std::vector<CallSite> callSites_;
  std::string what_;
};

/// Throws CompileError(code, formatDiag(code, args), file, loc).
[[noreturn]] void raiseDiag(DiagCode code, const std::string &file, SourceLoc loc,
                            std::initializer_list<std::string> args);

/// The candidate most similar to `word`, as Python's difflib.get_close_matches(word,
/// candidates, n=1, cutoff=0.6) picks it (Ratcliff/Obershelp similarity 2*M/T of at least 0.6;
/// ties go to the greater string); "" when none is that similar. Candidates equal to `word`,
/// and private ones ("_x") unless `word` is private too, are never suggested. This is the one
/// home of "did you mean" suggestions: unknown attributes of cuda, math, numpy (typing) and
/// undefined names (the bindings, from the function's locals, globals and builtins).
std::string closestName(std::string_view word, const std::vector<std::string> &candidates);

/// The hint appended to a message that names an unknown thing: "; did you mean 'x'?", or ""
/// when `suggestion` is empty.
std::string didYouMean(const std::string &suggestion);

/// Compile-time warnings (numba-cuda's NumbaWarning at compile time, e.g. a print() with more
/// values than CUDA's printf formats): a compiler layer adds them on the thread that compiles,
/// and the bindings take them when the compile returns and give them to Python's warnings (as
/// ptxjit.errors.NumbaWarning). Thread-local, so concurrent compiles keep theirs apart.
void addCompileWarning(std::string message);
/// The warnings added on this thread since the last call, in order; forgets them.
std::vector<std::string> takeCompileWarnings();

} // namespace ptxjit::ir
