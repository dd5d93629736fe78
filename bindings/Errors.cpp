#include "bindings/Errors.h"

#include "bindings/Snapshot.h"
#include "compiler/Compiler.h"

#include "runtime/Driver.h"
#include "runtime/Memory.h"
#include "ufunc/Ufunc.h"

#include <pybind11/stl.h>

#include <stdexcept>

namespace ptxjit::bindings {
namespace {

/// Code points in the first `bytes` bytes of UTF-8 text (CPython's columns count bytes).
size_t codePoints(const std::string &s, size_t bytes) {
  size_t n = 0;
  for (size_t i = 0; i < bytes && i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80)
      ++n;
  return n;
}

std::string sourceLine(const std::string &file, int line) {
  if (line <= 0 || file.empty())
    return {};
  try {
    py::object linecache = py::module_::import("linecache");
    std::string text = py::str(linecache.attr("getline")(file, line));
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
      text.pop_back();
    return text;
  } catch (py::error_already_set &) {
    PyErr_Clear();
    return {};
  }
}

/// The ptxjit.errors class of `e`: by kind, except an undefined name, which is numba-cuda's
/// TypingError and also Python's NameError, and a constant argument of a wrong value, which is
/// numba-cuda's ValueError (NumbaValueError, also a ValueError).
const char *classOf(const ir::CompileError &e) {
  if (e.code() == ir::DiagCode::UndefinedName)
    return "UndefinedNameError";
  if (e.code() == ir::DiagCode::ArgumentValue)
    return "NumbaValueError";
  switch (e.kind()) {
  case ir::DiagKind::Unsupported:
    return "UnsupportedError";
  case ir::DiagKind::Typing:
    return "TypingError";
  case ir::DiagKind::Internal:
    return "CompileError";
  }
  return "CompileError";
}

/// "file:line:col" of `loc` ("<unknown>" without a file; the column only when known).
std::string locationText(const std::string &file, const ir::SourceLoc &loc) {
  std::string out = file.empty() ? std::string("<unknown>") : file;
  if (loc.line > 0) {
    out += ":" + std::to_string(loc.line);
    if (loc.col >= 0)
      out += ":" + std::to_string(loc.col + 1);
  }
  return out;
}

/// The source line at `loc` (indented by four) and a caret line under its span, each after a
/// newline; "" when the source cannot be read.
std::string sourceExcerpt(const std::string &file, const ir::SourceLoc &loc) {
  std::string text = sourceLine(file, loc.line);
  size_t indent = text.find_first_not_of(" \t");
  if (text.empty() || indent == std::string::npos)
    return {};
  std::string out = "\n    " + text.substr(indent);
  if (loc.col >= 0 && static_cast<size_t>(loc.col) >= indent) {
    size_t start = codePoints(text, loc.col) - codePoints(text, indent);
    size_t width = 1;
    if (loc.endLine == loc.line && loc.endCol > loc.col)
      width = codePoints(text, loc.endCol) - codePoints(text, loc.col);
    else if (loc.endLine > loc.line)
      width = codePoints(text, text.size()) - codePoints(text, loc.col);
    width = std::max<size_t>(width, 1);
    out += "\n    " + std::string(start, ' ') + "^" + std::string(width - 1, '~');
  }
  return out;
}

void setError(py::handle cls, py::handle instance) { PyErr_SetObject(cls.ptr(), instance.ptr()); }

} // namespace

py::object errorClass(const char *name) { return py::module_::import("ptxjit.errors").attr(name); }

std::string formatCompileError(const ir::CompileError &e) {
  std::string out =
      locationText(e.file(), e.loc()) + ": " + e.message() + sourceExcerpt(e.file(), e.loc());
  for (const ir::CallSite &site : e.callSites()) {
    std::string excerpt = sourceExcerpt(site.file, site.loc);
    out += "\nin device function '" + site.callee + "', called from '" + site.caller + "' at " +
           locationText(site.file, site.loc) + (excerpt.empty() ? "" : ":") + excerpt;
  }
  return out;
}

void setCompileError(const ir::CompileError &e) {
  py::object cls = errorClass(classOf(e));
  py::object lineno =
      e.loc().line > 0 ? py::object(py::int_(e.loc().line)) : py::object(py::none());
  py::object col = e.loc().line > 0 && e.loc().col >= 0 ? py::object(py::int_(e.loc().col + 1))
                                                        : py::object(py::none());
  py::object inst = cls(formatCompileError(e), e.file(), lineno, col);
  inst.attr("code") = ir::diagName(e.code());
  setError(cls, inst);
}

void warn(const std::string &message) {
  py::object warnings = py::module_::import("warnings");
  warnings.attr("warn")(message, errorClass("PtxjitWarning"), 1);
}

void warnCompileWarnings() {
  std::vector<std::string> messages = ir::takeCompileWarnings();
  if (messages.empty())
    return;
  py::object warnings = py::module_::import("warnings");
  for (const std::string &m : messages)
    warnings.attr("warn")(m, errorClass("NumbaWarning"), 1);
}

void logInfo(const std::string &message) {
  py::module_::import("logging").attr("getLogger")("ptxjit").attr("info")(message);
}

namespace {

/// Sets the Python error for ptxjit's own exception types (and the Python-free layers' errors
/// that name a Python exception: ufunc type and axis errors, integer overflow); false for other
/// exceptions.
bool translateOwn(std::exception_ptr p) {
  // Building the Python exception can itself fail (e.g. ptxjit.errors cannot be imported):
  // then that error is the one raised.
  auto guarded = [](auto &&body) {
    try {
      body();
    } catch (py::error_already_set &err) {
      err.restore();
    }
  };
  try {
    std::rethrow_exception(p);
  } catch (const ir::CompileError &e) {
    guarded([&] { setCompileError(e); });
  } catch (const compiler::KernelException &e) {
    // numba-cuda: cls(prefix + ": " + str(args[0]), *args[1:]), or cls(prefix) without args.
    guarded([&] {
      py::object cls = exceptionClassOf(e.site.exception.cls);
      const std::vector<ir::ConstValue> &a = e.site.exception.args;
      py::list args;
      if (a.empty()) {
        args.append(e.prefix);
      } else {
        args.append(e.prefix + ": " + py::cast<std::string>(py::str(constToPython(a[0]))));
        for (size_t k = 1; k < a.size(); ++k)
          args.append(constToPython(a[k]));
      }
      setError(cls, cls(*py::tuple(args)));
    });
  } catch (const runtime::CudaError &e) {
    guarded([&] {
      py::object cls = errorClass("CudaDriverError");
      py::object inst = cls(e.what(), static_cast<int>(e.code()));
      setError(cls, inst);
    });
  } catch (const runtime::ForkedAfterInit &e) {
    guarded([&] {
      py::object cls = errorClass("CudaDriverError");
      setError(cls, cls(e.what()));
    });
  } catch (const runtime::DriverUnavailable &e) {
    guarded([&] {
      py::object cls = errorClass("CudaSupportError");
      setError(cls, cls(std::string("CUDA is not available: ") + e.what()));
    });
  } catch (const PtxjitPyError &e) {
    guarded([&] {
      py::object cls = errorClass(e.className().c_str());
      setError(cls, cls(e.what()));
    });
  } catch (const ufunc::TypeMismatch &e) {
    PyErr_SetString(PyExc_TypeError, e.what());
  } catch (const ufunc::AxisError &e) {
    guarded([&] {
      // numpy.exceptions appeared in NumPy 1.25; older versions have numpy.AxisError.
      py::object np = py::module_::import("numpy");
      py::object cls = py::hasattr(np, "exceptions") ? np.attr("exceptions").attr("AxisError")
                                                     : np.attr("AxisError");
      PyErr_SetString(cls.ptr(), e.what());
    });
  } catch (const std::overflow_error &e) {
    PyErr_SetString(PyExc_OverflowError, e.what());
  } catch (...) {
    return false;
  }
  return true;
}

} // namespace

void registerErrorTranslators() {
  py::register_exception_translator([](std::exception_ptr p) {
    if (p && !translateOwn(p))
      std::rethrow_exception(p);
  });
}

void setPythonError() noexcept {
  std::exception_ptr p = std::current_exception();
  if (!p) {
    PyErr_SetString(PyExc_SystemError, "ptxjit: no exception to translate");
    return;
  }
  try {
    if (translateOwn(p))
      return;
    std::rethrow_exception(p);
  } catch (py::error_already_set &e) {
    e.restore();
  } catch (const py::builtin_exception &e) {
    e.set_error();
  } catch (const std::invalid_argument &e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const std::out_of_range &e) {
    PyErr_SetString(PyExc_IndexError, e.what());
  } catch (const runtime::HostOutOfMemory &e) {
    PyErr_SetString(PyExc_MemoryError, e.what());
  } catch (const std::bad_alloc &) {
    PyErr_NoMemory();
  } catch (const std::exception &e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_SystemError, "ptxjit: unknown C++ exception");
  }
}

} // namespace ptxjit::bindings
