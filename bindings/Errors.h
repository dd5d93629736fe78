// Turning C++ exceptions into the Python exceptions of ptxjit.errors, and raising those from
// the bindings.
#pragma once

#include "ir/Diagnostics.h"

#include <pybind11/pybind11.h>

#include <string>

namespace ptxjit::bindings {

namespace py = pybind11;

/// Registers the exception translator: ir::CompileError → UnsupportedError / TypingError /
/// UndefinedNameError / CompileError (message with the source line), runtime::CudaError →
/// CudaDriverError (with .code), runtime::DriverUnavailable → CudaSupportError,
/// std::invalid_argument → ValueError, std::out_of_range → IndexError, ufunc::TypeMismatch →
/// TypeError, ufunc::AxisError → NumPy's AxisError, std::overflow_error → OverflowError,
/// PtxjitPyError → its class.
void registerErrorTranslators();

/// An error to raise as ptxjit.errors.<className>(message) (e.g. "CudaSupportError").
class PtxjitPyError : public std::runtime_error {
public:
  PtxjitPyError(std::string className, const std::string &message)
      : std::runtime_error(message), className_(std::move(className)) {}
  const std::string &className() const { return className_; }

private:
  std::string className_;
};

/// The class ptxjit.errors.<name>.
py::object errorClass(const char *name);

/// The message shown for a compile error: "file:line:col: message", then the source line (read
/// with linecache) and a caret line under the located span; then, for each call that led into
/// the failing device function (innermost first), "in device function 'f', called from 'k' at
/// file:line:col:" with that call's source line and caret.
std::string formatCompileError(const ir::CompileError &e);

/// Sets the Python error for `e` (the matching ptxjit.errors class, with .filename/.lineno).
void setCompileError(const ir::CompileError &e);

/// Sets the Python error for the exception being handled (call inside a catch block), as
/// pybind11's translators would: for C functions registered without pybind11 (the launch
/// path). Never throws.
void setPythonError() noexcept;

/// Issues warnings.warn(message, ptxjit.errors.PtxjitWarning).
void warn(const std::string &message);

/// Issues the compile-time warnings this thread's compiles added (ir::takeCompileWarnings) as
/// warnings.warn(message, ptxjit.errors.NumbaWarning), in order. Needs the GIL; called where a
/// compile (or a launch that may compile) returns.
void warnCompileWarnings();

/// Logs `message` at INFO on Python's logger "ptxjit" (a note, not a warning: shown only where
/// the program configured logging). Needs the GIL.
void logInfo(const std::string &message);

} // namespace ptxjit::bindings
