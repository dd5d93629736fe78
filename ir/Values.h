// Plain C++ values that cross from Python into the compiler: the constants of a code object
// and the snapshot of the globals and closure cells a function refers to. The bindings build
// these before compiling; no compiler layer touches a Python object.
#pragma once

#include <complex>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ptxjit::ir {

/// A Python constant: None, bool, int, float, complex, str, bytes, Ellipsis (`...`), a tuple of
/// those, or a marker for a constant the compiler cannot represent (a nested code object, a huge
/// int, ...).
struct ConstValue {
  enum class Kind : uint8_t {
    None,
    Bool,
    Int,
    Float,
    Complex,
    String,
    Tuple,
    Unsupported,
    Bytes,
    Ellipsis
  };
  Kind kind = Kind::None;
  bool b = false;
  /// Kind::Int: the value. Python ints outside int64 that fit uint64 set `isUnsigned`;
  /// larger ones are Unsupported.
  int64_t i = 0;
  bool isUnsigned = false;
  double f = 0.0;
  std::complex<double> c;
  /// Kind::String: the text (UTF-8); Kind::Bytes: the bytes; Kind::Unsupported: the Python type
  /// name (e.g. "code", "bytearray").
  std::string s;
  std::vector<ConstValue> elems; ///< Kind::Tuple

  static ConstValue none() { return {}; }
  static ConstValue boolean(bool v) { ConstValue r; r.kind = Kind::Bool; r.b = v; return r; }
  static ConstValue integer(int64_t v) { ConstValue r; r.kind = Kind::Int; r.i = v; return r; }
  static ConstValue floating(double v) { ConstValue r; r.kind = Kind::Float; r.f = v; return r; }
  static ConstValue complexNum(std::complex<double> v) { ConstValue r; r.kind = Kind::Complex; r.c = v; return r; }
  static ConstValue string(std::string v) { ConstValue r; r.kind = Kind::String; r.s = std::move(v); return r; }
  static ConstValue bytes(std::string v) { ConstValue r; r.kind = Kind::Bytes; r.s = std::move(v); return r; }
  static ConstValue ellipsis() { ConstValue r; r.kind = Kind::Ellipsis; return r; }
  static ConstValue tuple(std::vector<ConstValue> v) { ConstValue r; r.kind = Kind::Tuple; r.elems = std::move(v); return r; }
  static ConstValue unsupported(std::string typeName) { ConstValue r; r.kind = Kind::Unsupported; r.s = std::move(typeName); return r; }

  /// Python's repr-like text ("1", "2.5", "(1, 2)", "None", "'abc'", "b'abc'", "Ellipsis",
  /// "<code>").
  std::string str() const;
  bool operator==(const ConstValue &o) const;
};

/// What a global name or closure cell referred to when the function was snapshotted.
/// Every field is part of the disk cache's key (compiler/DiskCache.cpp, addGlobals): a new
/// field must be added there too, or cache=True could load code built for another value.
class Type;

/// External code linked into a kernel's module when the kernel is loaded on the GPU
/// (cuda.jit(link=...), cuda.declare_device(..., link=...)). `kind` is "ptx", "cu" (CUDA C++,
/// compiled with NVRTC), "cubin", "fatbin", "object" or "library"; `name` names it in messages;
/// `data` holds its bytes (shared: snapshots and options are copied).
struct LinkItem {
  std::string kind;
  std::string name;
  std::shared_ptr<const std::string> data;
  bool operator==(const LinkItem &o) const {
    return kind == o.kind && name == o.name && *data == *o.data;
  }
};

/// A foreign device function declared with cuda.declare_device(name, sig, link=, abi=): called
/// by `name` with `params`; Numba's ABI (`int name(result *out, params...)`, status ignored) or
/// the C ABI (`result name(params...)`). `id` tells declarations apart (one per call).
struct ExternDecl {
  int id = -1;
  std::string name;
  const Type *result = nullptr;
  std::vector<const Type *> params;
  bool cAbi = false;
  std::vector<LinkItem> links;
  /// use_cooperative=True: the code needs a cooperative launch (it synchronizes the grid), so
  /// every kernel calling it gets one.
  bool cooperative = false;
};

/// An enum.Enum or enum.IntEnum class as kernels see it (Numba's EnumClass / IntEnumClass; see
/// ir/Enums.h): every member name, aliases included, in the class's __members__ order, with its
/// value. `id` tells classes apart in the process (the bindings number them and keep them alive).
struct EnumClassInfo {
  uint64_t id = 0;
  std::string name;     ///< __name__ ("Color")
  std::string qualname; ///< module and qualified name ("app.colors.Color")
  bool isInt = false;   ///< an IntEnum: its members are ints too
  std::vector<std::pair<std::string, ConstValue>> members;
};

struct GlobalValue {
  enum class Kind : uint8_t {
    Constant,       ///< a number, bool, complex, tuple of those, or NumPy scalar (`constant`)
    Symbol,         ///< a module, builtin, ptxjit intrinsic or NumPy type: `path` ("math", "cuda",
                    ///< "builtins.range", "numpy.float32", "numpy")
    DeviceFunction, ///< a @cuda.jit(device=True) function: `functionId` in the Compiler
    Kernel,         ///< a @cuda.jit kernel (calling it from device code is an error)
    PyFunction,     ///< a plain Python function (error: decorate it)
    Unsupported,    ///< anything else: `path` holds its Python type name
    Missing,        ///< the name is not defined (NameError at compile time)
    Array,          ///< a NumPy array, frozen: `dtype`, `shape`, `bytes` (C order)
    DeviceArray,    ///< a device array (or __cuda_array_interface__ producer), by reference:
                    ///< `dtype`, `shape`, `strides` (bytes) and the `address` of its first
                    ///< element, baked into the code (which is then never disk-cached)
    ExternFunction, ///< a cuda.declare_device function: `externDecl`
    ExceptionClass, ///< a subclass of BaseException (for `raise`): `path` is its qualified name
                    ///< ("ValueError", "mymod.MyError"); `address` 0 for a builtin exception
                    ///< (found by name), else the bindings' handle of the class object
    Tuple,          ///< a tuple holding something a Constant cannot (an array, a NumPy scalar, a
                    ///< type, a device function, a nested such tuple): `elems`, each a global of
                    ///< its own (never Unsupported, Missing or PyFunction: such a tuple is
                    ///< Unsupported as a whole); tuples of plain numbers stay Constant
    EnumClass,      ///< an enum.Enum / IntEnum class: `enumClass`
    EnumMember,     ///< a member of one: `enumClass`, its name in `path`, its value in `constant`
  };
  Kind kind = Kind::Missing;
  ConstValue constant;
  /// Kind::Constant from a NumPy scalar: its dtype name ("float32"); empty for Python values.
  std::string dtype;
  std::string path;
  int functionId = -1;
  /// Kind::Array: the shape and the elements in C order (shared: snapshots are copied).
  std::vector<int64_t> shape;
  std::shared_ptr<const std::string> bytes;
  /// Kind::DeviceArray: the strides in bytes and the address of the first element.
  std::vector<int64_t> strides;
  uint64_t address = 0;
  /// Kind::ExternFunction: the declaration (shared).
  std::shared_ptr<const ExternDecl> externDecl;
  /// Kind::Tuple: the elements, in order.
  std::vector<GlobalValue> elems;
  /// Kind::EnumClass and Kind::EnumMember: the class (shared).
  std::shared_ptr<const EnumClassInfo> enumClass;

  static GlobalValue makeConstant(ConstValue v, std::string dtype = {}) {
    GlobalValue g; g.kind = Kind::Constant; g.constant = std::move(v); g.dtype = std::move(dtype); return g;
  }
  static GlobalValue symbol(std::string p) { GlobalValue g; g.kind = Kind::Symbol; g.path = std::move(p); return g; }
  static GlobalValue deviceFunction(int id, std::string name) {
    GlobalValue g; g.kind = Kind::DeviceFunction; g.functionId = id; g.path = std::move(name); return g;
  }
  static GlobalValue kernel(int id, std::string name) {
    GlobalValue g; g.kind = Kind::Kernel; g.functionId = id; g.path = std::move(name); return g;
  }
  static GlobalValue pyFunction(std::string name) { GlobalValue g; g.kind = Kind::PyFunction; g.path = std::move(name); return g; }
  static GlobalValue unsupported(std::string typeName) { GlobalValue g; g.kind = Kind::Unsupported; g.path = std::move(typeName); return g; }
  static GlobalValue missing() { return {}; }
  static GlobalValue array(std::string dtype, std::vector<int64_t> shape, std::string bytes) {
    GlobalValue g; g.kind = Kind::Array; g.dtype = std::move(dtype); g.shape = std::move(shape);
    g.bytes = std::make_shared<const std::string>(std::move(bytes)); return g;
  }

  static GlobalValue deviceArray(std::string dtype, std::vector<int64_t> shape,
                                 std::vector<int64_t> strides, uint64_t address) {
    GlobalValue g;
    g.kind = Kind::DeviceArray;
    g.dtype = std::move(dtype);
    g.shape = std::move(shape);
    g.strides = std::move(strides);
    g.address = address;
    return g;
  }

  static GlobalValue exceptionClass(std::string name, uint64_t handle) {
    GlobalValue g;
    g.kind = Kind::ExceptionClass;
    g.path = std::move(name);
    g.address = handle;
    return g;
  }

  static GlobalValue enumClassOf(std::shared_ptr<const EnumClassInfo> c) {
    GlobalValue g;
    g.kind = Kind::EnumClass;
    g.path = c->name;
    g.enumClass = std::move(c);
    return g;
  }

  static GlobalValue enumMember(std::shared_ptr<const EnumClassInfo> c, std::string name,
                                ConstValue value) {
    GlobalValue g;
    g.kind = Kind::EnumMember;
    g.path = std::move(name);
    g.constant = std::move(value);
    g.enumClass = std::move(c);
    return g;
  }

  static GlobalValue tuple(std::vector<GlobalValue> elems) {
    GlobalValue g;
    g.kind = Kind::Tuple;
    g.elems = std::move(elems);
    return g;
  }

  static GlobalValue externFunction(std::shared_ptr<const ExternDecl> d) {
    GlobalValue g;
    g.kind = Kind::ExternFunction;
    g.path = d->name;
    g.externDecl = std::move(d);
    return g;
  }

  std::string str() const;
};

/// What a `raise` statement or a failed `assert` in kernel code raises: the exception class (a
/// GlobalValue of Kind::ExceptionClass) and the constant arguments it is called with (empty for
/// `raise C`).
struct RaisedException {
  GlobalValue cls;
  std::vector<ConstValue> args;
  /// "ValueError('foo', 2)" / "ValueError".
  std::string str() const;
};

/// A raise site of a compiled kernel with exceptions enabled (CompileOptions::exceptions): what
/// it raises and where. The launcher turns the site a thread recorded into the host exception.
struct RaiseSite {
  RaisedException exception;
  std::string function; ///< the kernel or device function raising
  std::string file;     ///< its co_filename
  int line = 0;
};

} // namespace ptxjit::ir
