#include "bindings/Snapshot.h"

#include "bindings/ArgTypes.h"
#include "bindings/DeviceArray.h"
#include "bindings/Dispatcher.h"
#include "bindings/Errors.h"
#include "bindings/Target.h"

#include <pybind11/stl.h>

#include "frontend/Bytecode.h"
#include "ir/typing/ArrayMethods.h"
#include "ir/typing/CudaBuiltins.h"
#include "ir/typing/Typing.h"

#include <climits>
#include <cstring>
#include <set>
#include <unordered_map>

namespace ptxjit::bindings {
std::string textOf(py::handle s) {
  if (!PyUnicode_Check(s.ptr()))
    throw py::type_error("expected a str, not " + std::string(Py_TYPE(s.ptr())->tp_name));
  Py_ssize_t n = 0;
  if (const char *utf8 = PyUnicode_AsUTF8AndSize(s.ptr(), &n))
    return std::string(utf8, static_cast<size_t>(n));
  PyErr_Clear(); // lone surrogates
  PyObject *b = PyUnicode_AsEncodedString(s.ptr(), "utf-8", "backslashreplace");
  if (!b)
    throw py::error_already_set();
  std::string out(PyBytes_AS_STRING(b), static_cast<size_t>(PyBytes_GET_SIZE(b)));
  Py_DECREF(b);
  return out;
}

namespace {

std::string typeName(py::handle v) { return Py_TYPE(v.ptr())->tp_name; }

/// The short type name ("code", "bytes", "ndarray"), without the module prefix.
std::string shortTypeName(py::handle v) {
  std::string n = typeName(v);
  size_t dot = n.rfind('.');
  return dot == std::string::npos ? n : n.substr(dot + 1);
}

std::vector<uint8_t> bytesOf(py::handle b) {
  char *data = nullptr;
  Py_ssize_t n = 0;
  if (PyBytes_AsStringAndSize(b.ptr(), &data, &n) != 0)
    throw py::error_already_set();
  return std::vector<uint8_t>(data, data + n);
}

std::vector<std::string> stringsOf(py::handle tuple) {
  std::vector<std::string> out;
  for (py::handle item : tuple)
    out.push_back(textOf(item));
  return out;
}

py::object numpyModule() {
  py::dict modules = py::module_::import("sys").attr("modules");
  if (modules.contains("numpy"))
    return modules["numpy"];
  return py::none();
}

/// A cffi FFI object (cffi.FFI(), or the `ffi` of a module cffi built, of class
/// _cffi_backend.FFI), recognized by its class so that cffi is never imported.
bool isCffiFfi(PyObject *o) {
  PyTypeObject *t = Py_TYPE(o);
  for (PyTypeObject *c = t; c; c = c->tp_base) {
    const char *name = c->tp_name ? c->tp_name : "";
    if (std::strcmp(name, "_cffi_backend.FFI") == 0)
      return true;
    if (std::strcmp(name, "FFI") == 0) {
      PyObject *mod = PyDict_GetItemString(c->tp_dict, "__module__"); // borrowed
      if (mod && PyUnicode_Check(mod) && PyUnicode_CompareWithASCIIString(mod, "cffi.api") == 0)
        return true;
    }
  }
  return false;
}

/// A cuda.declare_device descriptor's `_ptxjit_extern`: (id, name, signature text, C ABI?,
/// link items, needs a cooperative launch?).
ir::GlobalValue externFromPython(py::handle desc) {
  auto t = py::cast<py::tuple>(desc);
  if (t.size() != 6)
    throw py::type_error("malformed cuda.declare_device descriptor");
  auto d = std::make_shared<ir::ExternDecl>();
  d->id = py::cast<int>(t[0]);
  d->name = py::cast<std::string>(t[1]);
  ir::Signature sig = ir::parseSignature(py::cast<std::string>(t[2]));
  d->result = sig.returnType ? sig.returnType : ir::types::void_();
  d->params = sig.args;
  d->cAbi = py::cast<bool>(t[3]);
  d->links = linkItemsFrom(t[4]);
  d->cooperative = py::cast<bool>(t[5]);
  return ir::GlobalValue::externFunction(std::move(d));
}

std::optional<std::string> moduleSymbol(const std::string &name) {
  if (name == "ptxjit.cuda" || name == "numba.cuda")
    return "cuda";
  if (name == "ptxjit.libdevice" || name == "numba.cuda.libdevice")
    return "cuda.libdevice";
  // cuda.bf16 and cuda.fp16 as modules (`from ptxjit.cuda import bf16; bf16.hadd(a, b)`).
  if (name == "ptxjit.cuda.bf16" || name == "numba.cuda.bf16")
    return "cuda.bf16";
  if (name == "ptxjit.cuda.fp16" || name == "numba.cuda.fp16")
    return "cuda.fp16";
  if (name == "ml_dtypes") // ml_dtypes.bfloat16(x)
    return name;
  if (name == "ptxjit") // ptxjit.literal_unroll, ptxjit.float32, ... (typing maps the names)
    return "ptxjit";
  if (name == "math" || name == "cmath" || name == "numpy" || name == "operator")
    return name;
  // `types.uint8(x)`: the type modules' scalar types (typing maps them to NumPy's).
  if (name == "ptxjit.types" || name == "numba.types" || name == "numba.core.types" ||
      name == "numba.cuda.types")
    return "types";
  return std::nullopt;
}

bool hasAttrNoThrow(py::handle v, const char *attr, py::object *out) {
  PyObject *r = PyObject_GetAttrString(v.ptr(), attr);
  if (!r) {
    PyErr_Clear();
    return false;
  }
  *out = py::reinterpret_steal<py::object>(r);
  return true;
}

/// A NumPy array global, frozen by value (Numba's rule: global arrays are constants, and
/// cuda.const.array_like takes one); nullopt when `v` is not an ndarray. Arrays beyond
/// constant memory's 64 KiB are not copied (typing reports them).
std::optional<ir::GlobalValue> numpyArrayGlobal(py::handle v) {
  py::object np = numpyModule();
  if (np.is_none() || PyObject_IsInstance(v.ptr(), np.attr("ndarray").ptr()) != 1)
    return std::nullopt;
  py::object dtype = v.attr("dtype");
  int64_t nbytes = py::cast<int64_t>(v.attr("nbytes"));
  int ndim = py::cast<int>(v.attr("ndim"));
  std::string name = py::cast<std::string>(dtype.attr("name"));
  if (!dtype.attr("names").is_none() && !py::cast<bool>(dtype.attr("hasobject"))) {
    std::string why; // a record array: its dtype by the record's spelling
    if (const ir::RecordType *r = recordFromNumpy(dtype, why))
      name = r->str();
  }
  if (py::cast<bool>(dtype.attr("hasobject")) || !ir::types::dtypeByName(name))
    return ir::GlobalValue::unsupported("ndarray of dtype " + name + " and " +
                                        std::to_string(ndim) + " dimensions");
  if (nbytes > ir::kMaxConstArrayBytes)
    return ir::GlobalValue::unsupported("ndarray of " + std::to_string(nbytes) +
                                        " bytes (global arrays are frozen into "
                                        "constant memory, which holds " +
                                        std::to_string(ir::kMaxConstArrayBytes) + " bytes)");
  std::vector<int64_t> shape;
  for (py::handle d : v.attr("shape"))
    shape.push_back(py::cast<int64_t>(d));
  // C order and native byte order, as kernels read them.
  py::object native = dtype.attr("newbyteorder")("=");
  py::object c = np.attr("ascontiguousarray")(v, native);
  return ir::GlobalValue::array(name, std::move(shape), py::cast<std::string>(c.attr("tobytes")()));
}

/// NumPy-related globals; nullopt when `v` is none of them (or NumPy is not loaded).
std::optional<ir::GlobalValue> numpyGlobal(py::handle v) {
  py::object np = numpyModule();
  if (np.is_none())
    return std::nullopt;
  py::object generic = np.attr("generic");
  if (PyObject_IsInstance(v.ptr(), generic.ptr()) == 1) {
    std::string dtype = py::cast<std::string>(py::getattr(v, "dtype").attr("name"));
    py::object item = v.attr("item")();
    ir::ConstValue c = constFromPython(item);
    if (c.kind == ir::ConstValue::Kind::Unsupported || c.kind == ir::ConstValue::Kind::String ||
        c.kind == ir::ConstValue::Kind::Bytes || c.kind == ir::ConstValue::Kind::Tuple ||
        c.kind == ir::ConstValue::Kind::None)
      return ir::GlobalValue::unsupported(shortTypeName(v));
    return ir::GlobalValue::makeConstant(c, dtype);
  }
  if (PyType_Check(v.ptr()) && PyObject_IsSubclass(v.ptr(), generic.ptr()) == 1) {
    try {
      std::string dtype = py::cast<std::string>(np.attr("dtype")(v).attr("name"));
      return ir::GlobalValue::symbol("numpy." + dtype);
    } catch (py::error_already_set &) {
      PyErr_Clear();
      return ir::GlobalValue::unsupported("type");
    }
  }
  if (PyObject_IsInstance(v.ptr(), np.attr("dtype").ptr()) == 1) {
    // A numpy.dtype object (a dtype argument of cuda.local.array and the like): the symbol of
    // its NumPy type, for a structured dtype its record type's spelling.
    std::string why;
    if (!v.attr("names").is_none()) {
      if (const ir::RecordType *r = recordFromNumpy(v, why))
        return ir::GlobalValue::symbol("numpy." + r->str());
      return ir::GlobalValue::unsupported("numpy.dtype (" + why + ")");
    }
    std::string name = py::cast<std::string>(v.attr("name"));
    if (ir::types::scalarByName(name) && py::cast<std::string>(v.attr("byteorder")) != ">")
      return ir::GlobalValue::symbol("numpy." + name);
    return ir::GlobalValue::unsupported("numpy.dtype " + name);
  }
  py::object ufunc = np.attr("ufunc");
  if (PyObject_IsInstance(v.ptr(), ufunc.ptr()) == 1)
    return ir::GlobalValue::symbol("numpy." + py::cast<std::string>(v.attr("__name__")));
  // A NumPy function held by value (`npsum = np.sum`, `from numpy import nanmax`): the symbol
  // of its name in numpy (np.max is numpy.amax), as `np.<name>` would give it.
  py::object mod, name, same;
  if (!PyType_Check(v.ptr()) && hasAttrNoThrow(v, "__module__", &mod) &&
      PyUnicode_Check(mod.ptr()) && py::cast<std::string>(mod).rfind("numpy", 0) == 0 &&
      hasAttrNoThrow(v, "__name__", &name) && PyUnicode_Check(name.ptr()) &&
      hasAttrNoThrow(np, py::cast<std::string>(name).c_str(), &same) && same.is(v))
    return ir::GlobalValue::symbol("numpy." + py::cast<std::string>(name));
  return std::nullopt;
}

/// One of numba's scalar type objects (`numba.float32`, `numba.types.int64`, from a
/// half-ported program) or its Record read as a global: the NumPy type of the same name (the
/// record's dtype symbol), as ptxjit's own type objects are. Recognized by the class's module, so
/// numba is never imported; nullopt for anything else.
std::optional<ir::GlobalValue> numbaScalarTypeGlobal(py::handle v) {
  if (PyType_Check(v.ptr()))
    return std::nullopt;
  py::object mod, name;
  if (!hasAttrNoThrow(py::type::handle_of(v), "__module__", &mod) || !PyUnicode_Check(mod.ptr()))
    return std::nullopt;
  std::string m = py::cast<std::string>(mod);
  if (m.rfind("numba.", 0) != 0 && m.rfind("numba_cuda.", 0) != 0)
    return std::nullopt;
  if (!hasAttrNoThrow(v, "name", &name) || !PyUnicode_Check(name.ptr()))
    return std::nullopt;
  std::string n = py::cast<std::string>(name);
  if (ir::types::scalarByName(n))
    return ir::GlobalValue::symbol("numpy." + n);
  if (py::cast<std::string>(py::type::handle_of(v).attr("__name__")) != "Record")
    return std::nullopt;
  // numba's Record (numba's from_dtype(dt), a dtype argument of cuda.shared.array): mapped by
  // structure (ptxjit.types.as_type) to the record's dtype symbol.
  try {
    py::object mapped = py::module_::import("ptxjit.types").attr("as_type")(v);
    return ir::GlobalValue::symbol(py::cast<std::string>(mapped.attr("_ptxjit_symbol")));
  } catch (py::error_already_set &e) {
    return ir::GlobalValue::unsupported("numba Record (" + std::string(e.what()) + ")");
  }
}

} // namespace

namespace {

/// Tuples nested deeper than this are refused (an UnsupportedError naming the depth): every
/// layer below recurses over them, and a tuple nested thousands deep would overflow the stack.
constexpr int kMaxTupleNesting = 64;
const char *const kTooDeep = "tuple nested more than 64 levels deep";

ir::ConstValue constFromPythonAt(py::handle v, int depth);

} // namespace

ir::ConstValue constFromPython(py::handle v) { return constFromPythonAt(v, 0); }

namespace {

ir::ConstValue constFromPythonAt(py::handle v, int depth) {
  PyObject *o = v.ptr();
  if (o == Py_None)
    return ir::ConstValue::none();
  if (o == Py_Ellipsis)
    return ir::ConstValue::ellipsis();
  if (PyBool_Check(o))
    return ir::ConstValue::boolean(o == Py_True);
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (x == -1 && PyErr_Occurred())
      throw py::error_already_set();
    if (!overflow)
      return ir::ConstValue::integer(x);
    if (overflow > 0) {
      unsigned long long u = PyLong_AsUnsignedLongLong(o);
      if (!(u == static_cast<unsigned long long>(-1) && PyErr_Occurred())) {
        ir::ConstValue c = ir::ConstValue::integer(static_cast<int64_t>(u));
        c.isUnsigned = true;
        return c;
      }
      PyErr_Clear();
    }
    return ir::ConstValue::unsupported("int");
  }
  if (PyFloat_Check(o))
    return ir::ConstValue::floating(PyFloat_AsDouble(o));
  if (PyComplex_Check(o))
    return ir::ConstValue::complexNum({PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o)});
  if (PyUnicode_Check(o)) {
    Py_ssize_t n = 0;
    const char *s = PyUnicode_AsUTF8AndSize(o, &n);
    if (!s) {
      PyErr_Clear();
      return ir::ConstValue::unsupported("str");
    }
    return ir::ConstValue::string(std::string(s, n));
  }
  if (PyBytes_CheckExact(o)) // b"XYZ": stored into S<n> elements (NumPy's bytes strings)
    return ir::ConstValue::bytes(
        std::string(PyBytes_AS_STRING(o), static_cast<size_t>(PyBytes_GET_SIZE(o))));
  if (PyTuple_Check(o)) {
    if (depth >= kMaxTupleNesting)
      return ir::ConstValue::unsupported(kTooDeep);
    std::vector<ir::ConstValue> elems;
    for (py::handle item : v) {
      elems.push_back(constFromPythonAt(item, depth + 1));
      if (elems.back().kind == ir::ConstValue::Kind::Unsupported && elems.back().s == kTooDeep)
        return elems.back(); // the reason, not "tuple"
    }
    return ir::ConstValue::tuple(std::move(elems));
  }
  return ir::ConstValue::unsupported(shortTypeName(v));
}

bool representable(const ir::ConstValue &c) {
  if (c.kind == ir::ConstValue::Kind::Unsupported)
    return false;
  for (const auto &e : c.elems)
    if (!representable(e))
      return false;
  return true;
}

} // namespace

namespace {

/// A device array global (a ptxjit device array or a __cuda_array_interface__ producer), taken
/// by reference as numba-cuda captures it: its address, shape and strides become constants of
/// the code. The code keeps using that memory, so the object is kept alive for the rest of the
/// process. nullopt when `v` is neither.
std::optional<ir::GlobalValue> deviceArrayGlobal(py::handle v) {
  static py::list &captured = *new py::list(); // never destroyed: kept until exit
  if (const DeviceNDArray *d = asDeviceArray(v.ptr())) {
    codegen::Backend backend = currentBackend();
    if (d->backend() != backend)
      return ir::GlobalValue::unsupported(
          std::string("device array of the ") + backendName(d->backend()) +
          " backend (kernels run on the " + backendName(backend) + " backend)");
    captured.append(v);
    return ir::GlobalValue::deviceArray(py::cast<std::string>(d->numpyDtype().attr("name")),
                                        d->shape(), d->strides(), d->size() ? d->address() : 0);
  }
  py::object iface;
  if (PyType_Check(v.ptr()) || !hasAttrNoThrow(v, "__cuda_array_interface__", &iface) ||
      !PyDict_Check(iface.ptr()))
    return std::nullopt;
  if (currentBackend() != codegen::Backend::CUDA)
    return ir::GlobalValue::unsupported("__cuda_array_interface__ array (GPU memory, which the "
                                        "CPU backend cannot use)");
  try {
    py::dict desc = py::reinterpret_borrow<py::dict>(iface);
    py::object dtype = numpyApi().module.attr("dtype")(desc["typestr"]);
    std::vector<int64_t> shape = py::cast<std::vector<int64_t>>(desc["shape"]);
    int64_t itemsize = py::cast<int64_t>(dtype.attr("itemsize"));
    std::vector<int64_t> strides;
    if (desc.contains("strides") && !desc["strides"].is_none())
      strides = py::cast<std::vector<int64_t>>(desc["strides"]);
    else
      for (int64_t k = static_cast<int64_t>(shape.size()) - 1, acc = itemsize; k >= 0; --k) {
        strides.insert(strides.begin(), acc);
        acc *= std::max<int64_t>(shape[k], 1);
      }
    if (strides.size() != shape.size())
      return ir::GlobalValue::unsupported("__cuda_array_interface__ with malformed strides");
    uint64_t address = py::cast<uint64_t>(py::tuple(desc["data"])[0]);
    captured.append(v);
    return ir::GlobalValue::deviceArray(py::cast<std::string>(dtype.attr("name")), std::move(shape),
                                        std::move(strides), address);
  } catch (py::error_already_set &) {
    return ir::GlobalValue::unsupported("object with a malformed __cuda_array_interface__");
  } catch (py::cast_error &) {
    return ir::GlobalValue::unsupported("object with a malformed __cuda_array_interface__");
  }
}

} // namespace

namespace {

/// The exception classes kernels raise, by handle - 1 (strong references: a handle in compiled
/// code stays valid for the life of the process). Used with the GIL held. Never destroyed, so
/// no Python object is released after the interpreter is gone.
struct ExceptionClasses {
  std::vector<py::object> classes;
  std::unordered_map<PyObject *, uint64_t> handles;
};
ExceptionClasses &exceptionClasses() {
  static auto *r = new ExceptionClasses();
  return *r;
}

} // namespace

ir::GlobalValue exceptionClassGlobal(py::handle cls) {
  py::object mod, name;
  std::string qual = hasAttrNoThrow(cls, "__qualname__", &name) && PyUnicode_Check(name.ptr())
                         ? py::cast<std::string>(name)
                         : std::string(reinterpret_cast<PyTypeObject *>(cls.ptr())->tp_name);
  std::string m = hasAttrNoThrow(cls, "__module__", &mod) && PyUnicode_Check(mod.ptr())
                      ? py::cast<std::string>(mod)
                      : std::string();
  if (m == "builtins")
    return ir::GlobalValue::exceptionClass(qual, 0);
  ExceptionClasses &r = exceptionClasses();
  auto [it, added] = r.handles.try_emplace(cls.ptr(), r.classes.size() + 1);
  if (added)
    r.classes.push_back(py::reinterpret_borrow<py::object>(cls));
  return ir::GlobalValue::exceptionClass(m.empty() ? qual : m + "." + qual, it->second);
}

py::object exceptionClassOf(const ir::GlobalValue &g) {
  ExceptionClasses &r = exceptionClasses();
  if (g.address > 0 && g.address <= r.classes.size())
    return r.classes[g.address - 1];
  py::object builtins = py::module_::import("builtins");
  if (g.address == 0 && py::hasattr(builtins, g.path.c_str()))
    return builtins.attr(g.path.c_str());
  return py::reinterpret_borrow<py::object>(PyExc_RuntimeError);
}

namespace {

/// A tuple that is not a plain constant, frozen as numba freezes global tuples: each element
/// as a global of its own (a NumPy array by value, a device array by reference, a NumPy scalar
/// with its dtype, a type, a device function, a nested tuple). Unsupported, naming the element,
/// when one cannot be used in kernels. (Nesting is bounded: constFromPython refused tuples
/// nested too deep before this is called.)
ir::GlobalValue tupleGlobal(py::handle v) {
  std::vector<ir::GlobalValue> elems;
  size_t k = 0;
  for (py::handle item : v) {
    ir::GlobalValue g = globalFromPython(item);
    using K = ir::GlobalValue::Kind;
    if (g.kind == K::Unsupported || g.kind == K::Missing || g.kind == K::PyFunction ||
        g.kind == K::ExceptionClass)
      return ir::GlobalValue::unsupported(
          "tuple whose element " + std::to_string(k) + " is " +
          (g.kind == K::PyFunction
               ? "a plain Python function (decorate it with @cuda.jit)"
               : "of type " + (g.kind == K::Unsupported ? g.path : shortTypeName(item))));
    elems.push_back(std::move(g));
    ++k;
  }
  return ir::GlobalValue::tuple(std::move(elems));
}

/// An enum class or member global (ir/Enums.h); nullopt when `v` is neither.
std::optional<ir::GlobalValue> enumGlobal(py::handle v) {
  PyObject *o = v.ptr();
  // Exact builtin values are never enums (checked first: globals are mostly those).
  if (o == Py_None || PyLong_CheckExact(o) || PyFloat_CheckExact(o) || PyBool_Check(o) ||
      PyUnicode_CheckExact(o) || PyTuple_CheckExact(o) || PyModule_Check(o) || PyFunction_Check(o))
    return std::nullopt;
  std::string why;
  if (isEnumClass(o)) {
    if (auto info = enumClassInfo(o, why))
      return ir::GlobalValue::enumClassOf(std::move(info));
    return ir::GlobalValue::unsupported("enum class (" + why + ")");
  }
  if (!isEnumMember(o))
    return std::nullopt;
  auto info = enumClassInfo(reinterpret_cast<PyObject *>(Py_TYPE(o)), why);
  if (!info)
    return ir::GlobalValue::unsupported("enum member (" + why + ")");
  return ir::GlobalValue::enumMember(std::move(info), py::cast<std::string>(v.attr("name")),
                                     constFromPython(v.attr("value")));
}

} // namespace

ir::GlobalValue globalFromPython(py::handle v) {
  PyObject *o = v.ptr();
  if (auto g = enumGlobal(v)) // IntEnum members are ints: before the numbers
    return *g;
  // Plain values first: None, Ellipsis, numbers, strings, tuples of those.
  if (o == Py_None || o == Py_Ellipsis || PyBool_Check(o) || PyLong_Check(o) || PyFloat_Check(o) ||
      PyComplex_Check(o) || PyUnicode_Check(o) || PyTuple_Check(o) || PyBytes_CheckExact(o)) {
    // NumPy scalars that subclass Python numbers (float64, complex128) keep their dtype.
    bool subclass = (PyFloat_Check(o) && !PyFloat_CheckExact(o)) ||
                    (PyComplex_Check(o) && !PyComplex_CheckExact(o)) ||
                    (PyLong_Check(o) && !PyLong_CheckExact(o) && !PyBool_Check(o));
    if (subclass)
      if (auto g = numpyGlobal(v))
        return *g;
    ir::ConstValue c = constFromPython(v);
    if (c.kind == ir::ConstValue::Kind::Unsupported && c.s == kTooDeep)
      return ir::GlobalValue::unsupported(kTooDeep);
    if (!representable(c)) {
      if (PyTuple_Check(o)) // a tuple of arrays, NumPy scalars, types, functions, ...
        return tupleGlobal(v);
      return ir::GlobalValue::unsupported(shortTypeName(v));
    }
    return ir::GlobalValue::makeConstant(std::move(c));
  }
  if (PyModule_Check(o)) {
    const char *name = PyModule_GetName(o);
    if (!name) {
      PyErr_Clear();
      return ir::GlobalValue::unsupported("module");
    }
    if (auto sym = moduleSymbol(name))
      return ir::GlobalValue::symbol(*sym);
    return ir::GlobalValue::unsupported(std::string("module '") + name + "'");
  }
  if (auto d = dispatcherIdentity(v)) {
    if (d->isDevice)
      return ir::GlobalValue::deviceFunction(d->functionId, d->name);
    return ir::GlobalValue::kernel(d->functionId, d->name);
  }
  py::object sym;
  if (!PyType_Check(o) && hasAttrNoThrow(v, "_ptxjit_extern", &sym)) // cuda.declare_device
    return externFromPython(sym);
  if (!PyType_Check(o) && hasAttrNoThrow(v, "_ptxjit_symbol", &sym) && PyUnicode_Check(sym.ptr()))
    return ir::GlobalValue::symbol(py::cast<std::string>(sym));
  if (isCffiFfi(o)) // ffi.from_buffer(array) in kernels (numba's cffi support)
    return ir::GlobalValue::symbol(ir::kFfiPath);
  if (auto g = deviceArrayGlobal(v))
    return *g;
  if (auto g = numpyArrayGlobal(v))
    return *g;
  if (auto g = numpyGlobal(v))
    return *g;
  if (auto g = numbaScalarTypeGlobal(v))
    return *g;
  if (PyType_Check(o) && PyObject_IsSubclass(o, PyExc_BaseException) == 1)
    return exceptionClassGlobal(v);
  if (PyCFunction_Check(o) || PyType_Check(o)) {
    py::object mod, name;
    if (hasAttrNoThrow(v, "__module__", &mod) && hasAttrNoThrow(v, "__name__", &name) &&
        PyUnicode_Check(mod.ptr()) && PyUnicode_Check(name.ptr())) {
      std::string m = py::cast<std::string>(mod);
      if (m == "builtins" || m == "math" || m == "cmath")
        return ir::GlobalValue::symbol(m + "." + py::cast<std::string>(name));
      if (m == "_operator" || m == "operator") // operator.add: compiled as `+` (frontend)
        return ir::GlobalValue::symbol("operator." + py::cast<std::string>(name));
    }
  }
  if (PyFunction_Check(o)) {
    py::object name, mod;
    // numba's carray/farray (numba.carray, numba.cuda.np.numpy_support.carray): the array view
    // of a pointer, as ptxjit.carray/farray (ir/typing/ArrayMethods.h); numba is not imported.
    if (hasAttrNoThrow(v, "__module__", &mod) && hasAttrNoThrow(v, "__name__", &name) &&
        PyUnicode_Check(mod.ptr()) && PyUnicode_Check(name.ptr())) {
      std::string m = py::cast<std::string>(mod), n = py::cast<std::string>(name);
      if ((m == "numba.np.numpy_support" || m == "numba.cuda.np.numpy_support") &&
          (n == "carray" || n == "farray"))
        return ir::GlobalValue::symbol("numpy_support." + n);
    }
    if (hasAttrNoThrow(v, "__name__", &name) && PyUnicode_Check(name.ptr()))
      return ir::GlobalValue::pyFunction(py::cast<std::string>(name));
    return ir::GlobalValue::pyFunction("<function>");
  }
  return ir::GlobalValue::unsupported(shortTypeName(v));
}

namespace {

/// A @cuda.jit function a kernel may call: a device function, or a kernel (called from device
/// code, numba-cuda compiles a kernel as a device function).
bool isCallable(const ir::GlobalValue &g) {
  return g.kind == ir::GlobalValue::Kind::DeviceFunction || g.kind == ir::GlobalValue::Kind::Kernel;
}

/// Appends the @cuda.jit functions global `g` (the snapshot of Python value `v`) names, itself
/// or, for a tuple, its elements at any depth.
void appendCallables(py::handle v, const ir::GlobalValue &g, std::vector<py::object> &out) {
  if (isCallable(g)) {
    out.push_back(py::reinterpret_borrow<py::object>(v));
  } else if (g.kind == ir::GlobalValue::Kind::Tuple && PyTuple_Check(v.ptr())) {
    size_t k = 0;
    for (py::handle item : v) {
      if (k < g.elems.size())
        appendCallables(item, g.elems[k], out);
      ++k;
    }
  }
}

/// The string keys of `d` (a dict), appended to `out`.
void appendKeys(py::handle d, std::vector<std::string> &out) {
  if (!PyDict_Check(d.ptr()))
    return;
  for (auto item : py::reinterpret_borrow<py::dict>(d))
    if (PyUnicode_Check(item.first.ptr()))
      out.push_back(textOf(item.first));
}

/// Gives each name the code loads as a global (LOAD_GLOBAL) and that nothing defines the
/// closest defined name as its `path` (ir::closestName over the function's locals, the module's
/// globals and the builtins): typing's NameError then says "did you mean". Only code that
/// cannot compile has such names, so the search costs nothing otherwise; co_names also holds
/// attribute names (missing as globals, never loaded as one), hence the look at the bytecode.
/// Bytecode the frontend cannot decode is left to the frontend's own error.
void suggestForMissingGlobals(frontend::CodeSnapshot &s, py::handle globals, py::handle builtins) {
  bool anyMissing = false;
  for (const auto &entry : s.globals)
    anyMissing |= entry.second.kind == ir::GlobalValue::Kind::Missing;
  if (!anyMissing)
    return;
  std::set<std::string> missing;
  try {
    frontend::BytecodeView view(s);
    for (const frontend::Instruction &in : view) {
      if (in.op != frontend::PyOp::LOAD_GLOBAL)
        continue;
      const std::string &name = *view.loadGlobal(in).name;
      auto it = s.globals.find(name);
      if (it != s.globals.end() && it->second.kind == ir::GlobalValue::Kind::Missing)
        missing.insert(name);
    }
  } catch (const ir::CompileError &) {
    return;
  }
  if (missing.empty())
    return;
  std::vector<std::string> candidates = s.varnames;
  candidates.insert(candidates.end(), s.cellvars.begin(), s.cellvars.end());
  candidates.insert(candidates.end(), s.freevars.begin(), s.freevars.end());
  appendKeys(globals, candidates);
  appendKeys(builtins, candidates);
  for (const std::string &name : missing)
    s.globals[name].path = ir::closestName(name, candidates);
}

/// True when `v`, or its class, comes from one of numba's modules (numba, numba.*,
/// numba_cuda.*): the objects python/ptxjit/_numba_bridge.py may map onto ptxjit's.
bool fromNumba(py::handle v) {
  auto numbaModule = [](const py::object &m) {
    if (!PyUnicode_Check(m.ptr()))
      return false;
    std::string s = py::cast<std::string>(m);
    return s == "numba" || s.rfind("numba.", 0) == 0 || s.rfind("numba_cuda.", 0) == 0;
  };
  py::object mod;
  py::handle cls(reinterpret_cast<PyObject *>(Py_TYPE(v.ptr())));
  if (hasAttrNoThrow(cls, "__module__", &mod) && numbaModule(mod))
    return true;
  // A class of numba's (numba-cuda's vector type stubs, cuda.float32x4) names its module itself.
  return hasAttrNoThrow(v, "__module__", &mod) && numbaModule(mod);
}

/// The global value of `v` as globalFromPython gives it, except that a numba-cuda object that
/// ptxjit does not know as such (a half-ported program's numba.cuda.random function, its
/// @numba.njit helper) is replaced by ptxjit's equivalent when _numba_bridge.equivalent names
/// one. `used` becomes the object the value stands for (the callee to snapshot, for device
/// functions).
ir::GlobalValue globalOf(py::handle v, py::object &used) {
  used = py::reinterpret_borrow<py::object>(v);
  ir::GlobalValue g = globalFromPython(v);
  if ((g.kind != ir::GlobalValue::Kind::Unsupported &&
       g.kind != ir::GlobalValue::Kind::PyFunction) ||
      !fromNumba(v))
    return g;
  py::object eq = py::module_::import("ptxjit._numba_bridge").attr("equivalent")(v);
  if (eq.is_none())
    return g;
  used = eq;
  return globalFromPython(eq);
}

/// True for a module that kernels do not know by name (see enterModule).
bool isUserModule(py::handle v) {
  if (!PyModule_Check(v.ptr()))
    return false;
  const char *name = PyModule_GetName(v.ptr());
  if (!name) {
    PyErr_Clear();
    return false;
  }
  return !moduleSymbol(name).has_value();
}

/// A module other than those kernels know by name (moduleSymbol: math, numpy, cuda, ...), as a
/// global or closure value `name` of the function: the symbol kModuleSymbolPrefix + its name,
/// and into `table`, as "name.attr", each of its attributes that the code names (co_names), so
/// that the frontend reads `name.attr` as a global of its own (a device function, a constant, an
/// array, ...). Attributes that are such modules again are entered the same way, to a depth of
/// 4. Appends the device functions it finds to `callees`.
void enterModule(py::handle module, const std::string &name, const std::vector<std::string> &names,
                 std::map<std::string, ir::GlobalValue> &table, std::vector<py::object> *callees,
                 int depth = 0) {
  const char *modname = PyModule_GetName(module.ptr());
  if (!modname) {
    PyErr_Clear();
    return;
  }
  table[name] = ir::GlobalValue::symbol(frontend::kModuleSymbolPrefix + std::string(modname));
  if (depth >= 4)
    return;
  for (const std::string &attr : names) {
    PyObject *a = PyObject_GetAttrString(module.ptr(), attr.c_str());
    if (!a) {
      PyErr_Clear();
      continue;
    }
    py::object value = py::reinterpret_steal<py::object>(a);
    const std::string key = name + "." + attr;
    if (isUserModule(value)) {
      enterModule(value, key, names, table, callees, depth + 1);
      continue;
    }
    py::object used;
    table[key] = globalOf(value, used);
    if (callees)
      appendCallables(used, table[key], *callees);
  }
}

} // namespace

std::shared_ptr<frontend::CodeSnapshot> snapshotFunction(py::handle func,
                                                         std::vector<py::object> *callees,
                                                         const ir::GlobalValue *self) {
  if (!PyFunction_Check(func.ptr()))
    throw PtxjitPyError("UnsupportedError",
                        "only Python functions can be compiled, not " + typeName(func));
  py::object info = py::module_::import("sys").attr("version_info");
  int major = py::cast<int>(info.attr("major")), minor = py::cast<int>(info.attr("minor"));
  auto version = frontend::pyVersionFrom(major, minor);
  if (!version)
    throw PtxjitPyError("UnsupportedError",
                        "ptxjit compiles the bytecode of CPython 3.11, 3.12 and 3.13; this is "
                        "Python " +
                            std::to_string(major) + "." + std::to_string(minor));

  auto s = std::make_shared<frontend::CodeSnapshot>();
  py::object code = func.attr("__code__");
  s->version = *version;
  s->name = textOf(code.attr("co_name"));
  s->qualname = textOf(code.attr("co_qualname"));
  s->filename = textOf(code.attr("co_filename"));
  s->firstLine = py::cast<int>(code.attr("co_firstlineno"));
  s->flags = py::cast<int>(code.attr("co_flags"));
  s->argCount = py::cast<int>(code.attr("co_argcount"));
  s->posOnlyArgCount = py::cast<int>(code.attr("co_posonlyargcount"));
  s->kwOnlyArgCount = py::cast<int>(code.attr("co_kwonlyargcount"));
  s->code = bytesOf(code.attr("co_code"));
  // A nested code object (a lambda, comprehension, class body) keeps its co_name, by which
  // the frontend names the construct: "code <listcomp>".
  for (py::handle c : code.attr("co_consts"))
    s->consts.push_back(PyCode_Check(c.ptr())
                            ? ir::ConstValue::unsupported("code " + textOf(c.attr("co_name")))
                            : constFromPython(c));
  s->names = stringsOf(code.attr("co_names"));
  s->varnames = stringsOf(code.attr("co_varnames"));
  s->cellvars = stringsOf(code.attr("co_cellvars"));
  s->freevars = stringsOf(code.attr("co_freevars"));
  {
    py::object byOparg = code.attr("_varname_from_oparg");
    size_t limit = s->varnames.size() + s->cellvars.size() + s->freevars.size();
    for (size_t i = 0; i < limit; ++i) {
      PyObject *r = PyObject_CallFunction(byOparg.ptr(), "n", static_cast<Py_ssize_t>(i));
      if (!r) {
        PyErr_Clear();
        break;
      }
      py::object name = py::reinterpret_steal<py::object>(r);
      s->localsPlusNames.push_back(textOf(name));
    }
  }
  s->exceptionTable = bytesOf(code.attr("co_exceptiontable"));
  s->positions = frontend::decodeLocationTable(bytesOf(code.attr("co_linetable")), s->firstLine,
                                               s->code.size() / 2);

  // Globals: every name the code may load, through __globals__ then the builtins.
  py::dict globals = func.attr("__globals__");
  py::object builtins = func.attr("__builtins__");
  if (PyModule_Check(builtins.ptr()))
    builtins = builtins.attr("__dict__");
  for (const std::string &name : s->names) {
    py::str key(name);
    PyObject *v = PyDict_GetItemWithError(globals.ptr(), key.ptr());
    if (!v && PyErr_Occurred())
      throw py::error_already_set();
    if (!v && PyDict_Check(builtins.ptr())) {
      v = PyDict_GetItemWithError(builtins.ptr(), key.ptr());
      if (!v && PyErr_Occurred())
        throw py::error_already_set();
    }
    py::object used;
    if (v && isUserModule(v)) { // `import helpers` ... helpers.f(x): its attributes
      enterModule(v, name, s->names, s->globals, callees);
      continue;
    }
    if (!v && self && name == s->name) // itself, before its decorator bound the name
      s->globals[name] = *self;
    else
      s->globals[name] = v ? globalOf(v, used) : ir::GlobalValue::missing();
    if (callees && v)
      appendCallables(used, s->globals[name], *callees);
  }
  suggestForMissingGlobals(*s, globals, builtins);

  // Closure cells, by free-variable name.
  py::object closure = func.attr("__closure__");
  if (!closure.is_none()) {
    py::tuple cells = closure;
    for (size_t i = 0; i < cells.size() && i < s->freevars.size(); ++i) {
      PyObject *contents = PyCell_GET(cells[i].ptr());
      py::object used;
      if (contents && isUserModule(contents)) {
        enterModule(contents, s->freevars[i], s->names, s->closure, callees);
        continue;
      }
      if (!contents && self && s->freevars[i] == s->name) // itself, before the cell is filled
        s->closure[s->freevars[i]] = *self;
      else
        s->closure[s->freevars[i]] =
            contents ? globalOf(contents, used) : ir::GlobalValue::missing();
      if (callees && contents)
        appendCallables(used, s->closure[s->freevars[i]], *callees);
    }
  }

  py::object defaults = func.attr("__defaults__");
  if (!defaults.is_none())
    for (py::handle d : defaults)
      s->defaults.push_back(constFromPython(d));
  return s;
}

compiler::SnapshotSet snapshotWithCallees(py::handle func, int id) {
  compiler::SnapshotSet set;
  std::vector<std::pair<int, py::object>> todo{{id, py::reinterpret_borrow<py::object>(func)}};
  while (!todo.empty()) {
    auto [fid, f] = std::move(todo.back());
    todo.pop_back();
    if (set.count(fid))
      continue; // recursion: typing reports it
    std::vector<py::object> callees;
    // The function as a global of its own (for a call of itself before its name is bound).
    std::optional<ir::GlobalValue> self;
    compiler::Compiler &c = compiler::Compiler::instance();
    if (c.isRegistered(fid))
      self = c.kind(fid) == ir::FunctionKind::Kernel ? ir::GlobalValue::kernel(fid, c.name(fid))
                                                     : ir::GlobalValue::deviceFunction(fid, c.name(fid));
    set[fid] = snapshotFunction(f, &callees, self ? &*self : nullptr);
    for (const py::object &d : callees)
      if (std::optional<DispatcherIdentity> ident = dispatcherIdentity(d))
        todo.emplace_back(ident->functionId, ident->pyFunc);
  }
  return set;
}

py::object constToPython(const ir::ConstValue &c) {
  using K = ir::ConstValue::Kind;
  switch (c.kind) {
  case K::None:
    return py::none();
  case K::Ellipsis:
    return py::ellipsis();
  case K::Bool:
    return py::bool_(c.b);
  case K::Int:
    if (c.isUnsigned)
      return py::int_(static_cast<unsigned long long>(c.i));
    return py::int_(c.i);
  case K::Float:
    return py::float_(c.f);
  case K::Complex:
    return py::reinterpret_steal<py::object>(PyComplex_FromDoubles(c.c.real(), c.c.imag()));
  case K::String:
    return py::str(c.s);
  case K::Bytes:
    return py::bytes(c.s);
  case K::Tuple: {
    py::list items;
    for (const auto &e : c.elems)
      items.append(constToPython(e));
    return py::tuple(items);
  }
  case K::Unsupported:
    return py::make_tuple("unsupported", c.s);
  }
  return py::none();
}

namespace {

py::object globalToPython(const ir::GlobalValue &g) {
  using K = ir::GlobalValue::Kind;
  switch (g.kind) {
  case K::Constant:
    return py::make_tuple("constant", constToPython(g.constant), g.dtype);
  case K::Symbol:
    return py::make_tuple("symbol", g.path);
  case K::DeviceFunction:
    return py::make_tuple("device_function", g.functionId, g.path);
  case K::Kernel:
    return py::make_tuple("kernel", g.functionId, g.path);
  case K::PyFunction:
    return py::make_tuple("py_function", g.path);
  case K::Unsupported:
    return py::make_tuple("unsupported", g.path);
  case K::Missing:
    return py::make_tuple("missing");
  case K::Array:
    return py::make_tuple("array", g.dtype, py::tuple(py::cast(g.shape)),
                          py::bytes(g.bytes ? *g.bytes : std::string()));
  case K::DeviceArray:
    return py::make_tuple("device_array", g.dtype, py::tuple(py::cast(g.shape)),
                          py::tuple(py::cast(g.strides)), py::int_(g.address));
  case K::ExternFunction:
    return py::make_tuple("extern_function", g.path);
  case K::ExceptionClass:
    return py::make_tuple("exception_class", g.path);
  case K::Tuple: {
    py::list items;
    for (const ir::GlobalValue &e : g.elems)
      items.append(globalToPython(e));
    return py::make_tuple("tuple", py::tuple(items));
  }
  case K::EnumClass:
    return py::make_tuple("enum_class", g.enumClass->qualname);
  case K::EnumMember:
    return py::make_tuple("enum_member", g.enumClass->qualname, g.path, constToPython(g.constant));
  }
  return py::none();
}

} // namespace

py::dict snapshotToDict(const frontend::CodeSnapshot &s) {
  py::dict d;
  d["version"] = frontend::pyVersionName(s.version);
  d["name"] = s.name;
  d["qualname"] = s.qualname;
  d["filename"] = s.filename;
  d["first_line"] = s.firstLine;
  d["flags"] = s.flags;
  d["arg_count"] = s.argCount;
  d["posonly_arg_count"] = s.posOnlyArgCount;
  d["kwonly_arg_count"] = s.kwOnlyArgCount;
  d["code"] = py::bytes(reinterpret_cast<const char *>(s.code.data()), s.code.size());
  py::list consts;
  for (const auto &c : s.consts)
    consts.append(constToPython(c));
  d["consts"] = consts;
  d["names"] = s.names;
  d["varnames"] = s.varnames;
  d["cellvars"] = s.cellvars;
  d["freevars"] = s.freevars;
  d["locals_plus_names"] = s.localsPlusNames;
  d["exception_table"] =
      py::bytes(reinterpret_cast<const char *>(s.exceptionTable.data()), s.exceptionTable.size());
  py::list positions;
  for (const auto &p : s.positions)
    positions.append(py::make_tuple(p.line, p.endLine, p.col, p.endCol));
  d["positions"] = positions;
  py::dict globals, closure;
  for (const auto &[k, v] : s.globals)
    globals[py::str(k)] = globalToPython(v);
  for (const auto &[k, v] : s.closure)
    closure[py::str(k)] = globalToPython(v);
  d["globals"] = globals;
  d["closure"] = closure;
  py::list defaults;
  for (const auto &c : s.defaults)
    defaults.append(constToPython(c));
  d["defaults"] = defaults;
  return d;
}

std::vector<ir::LinkItem> linkItemsFrom(py::handle items) {
  std::vector<ir::LinkItem> out;
  for (py::handle item : items) {
    auto t = py::cast<py::tuple>(item);
    if (t.size() != 3 || !PyBytes_Check(t[2].ptr()))
      throw py::type_error("link items are (kind, name, bytes) tuples");
    out.push_back({py::cast<std::string>(t[0]), py::cast<std::string>(t[1]),
                   std::make_shared<const std::string>(py::cast<std::string>(t[2]))});
  }
  return out;
}

} // namespace ptxjit::bindings
