// Copies a Python function into a frontend::CodeSnapshot: its code object's fields and every
// global or closure value it may read, resolved to plain C++ values (ir::ConstValue,
// ir::GlobalValue) so that no compiler layer touches a Python object.
#pragma once

#include "compiler/Compiler.h"
#include "frontend/CodeSnapshot.h"

#include <pybind11/pybind11.h>

#include <memory>

namespace ptxjit::bindings {

namespace py = pybind11;

/// The snapshot of Python function `func` (a types.FunctionType). Globals are read now. With
/// `callees`, the device functions (@cuda.jit(device=True) objects) that its globals and
/// closure cells name are appended to it. With `self` (the function's own dispatcher), a global
/// or an empty closure cell named as the function itself (co_name) that is not defined yet
/// means the function: numba's rule for a function that calls itself while its decorator runs
/// (an eager signature compiles before the name is bound). Throws
/// PtxjitPyError("UnsupportedError") on an interpreter other than CPython 3.11-3.13 or for
/// objects that are not Python functions; Python errors propagate.
std::shared_ptr<frontend::CodeSnapshot>
snapshotFunction(py::handle func, std::vector<py::object> *callees = nullptr,
                 const ir::GlobalValue *self = nullptr);

/// What the compiler reads to compile function `id` (Python function `func`): its snapshot and,
/// transitively, those of the device functions it names, taken now (the interpreter held), so
/// that the compiler never calls back into Python. Throws as snapshotFunction.
compiler::SnapshotSet snapshotWithCallees(py::handle func, int id);

/// The UTF-8 text of Python str `s`. A code object built by hand (code.replace) can hold names
/// with lone surrogates, which UTF-8 cannot encode: they are written as `\udcff` escapes
/// (Python's "backslashreplace"), so that such a name reaches the compiler's messages instead
/// of failing the conversion. Throws py::type_error when `s` is not a str.
std::string textOf(py::handle s);

/// A code-object constant as a ConstValue (nested code objects, bytes, huge ints, ... become
/// ConstValue::unsupported(<type name>)).
ir::ConstValue constFromPython(py::handle value);

/// What a global or closure value means to the compiler (see ir::GlobalValue).
ir::GlobalValue globalFromPython(py::handle value);

/// The global for exception class `cls` (a subclass of BaseException): builtins by name
/// (handle 0), other classes by a handle that keeps the class alive for the process.
ir::GlobalValue exceptionClassGlobal(py::handle cls);
/// The class a GlobalValue of Kind::ExceptionClass names (RuntimeError for an unknown one).
/// The GIL must be held.
py::object exceptionClassOf(const ir::GlobalValue &g);
/// A ConstValue as the Python value it came from.
py::object constToPython(const ir::ConstValue &c);

/// External code to link, as ptxjit.cuda normalizes link= (a list of (kind, name, bytes)
/// tuples: _link_items); throws py::type_error for another shape.
std::vector<ir::LinkItem> linkItemsFrom(py::handle items);

/// The snapshot as a dict of Python values (for tests and debugging).
py::dict snapshotToDict(const frontend::CodeSnapshot &s);

} // namespace ptxjit::bindings
