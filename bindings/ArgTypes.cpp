#include "bindings/ArgTypes.h"

#include "bindings/DLPack.h"
#include "bindings/DeviceArray.h"
#include "bindings/Snapshot.h"
#include "ir/Datetime.h"
#include "ir/Enums.h"
#include "ir/NamedTuples.h"
#include "runtime/Fork.h"

#include <pybind11/stl.h>

// NumPy's C API, through its headers (only this file uses it): the array and scalar objects of
// the NumPy built against, whose fields read here keep their places across 1.x and 2.x.
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <numpy/arrayscalars.h>

#include <atomic>
#include <complex>
#include <cstring>
#include <mutex>
#include <string_view>
#include <unordered_map>

namespace ptxjit::bindings {

// ---- DTypes -------------------------------------------------------------------------------

const ir::ScalarType *dtypeType(DType d) {
  namespace t = ir::types;
  switch (d) {
  case DType::Bool:
    return t::boolean();
  case DType::Int8:
    return t::int8();
  case DType::Int16:
    return t::int16();
  case DType::Int32:
    return t::int32();
  case DType::Int64:
    return t::int64();
  case DType::UInt8:
    return t::uint8();
  case DType::UInt16:
    return t::uint16();
  case DType::UInt32:
    return t::uint32();
  case DType::UInt64:
    return t::uint64();
  case DType::Float16:
    return t::float16();
  case DType::Float32:
    return t::float32();
  case DType::Float64:
    return t::float64();
  case DType::Complex64:
    return t::complex64();
  case DType::Complex128:
    return t::complex128();
  case DType::BFloat16:
    return t::bfloat16();
  case DType::Record: // a record array's type comes from its dtype's fields, not from here
  case DType::Invalid:
    break;
  default: { // datetime64 / timedelta64 (ArgTypes.h)
    int code = static_cast<int>(d);
    int first = code >= static_cast<int>(DType::TimedeltaFirst)
                    ? static_cast<int>(DType::TimedeltaFirst)
                    : static_cast<int>(DType::DatetimeFirst);
    int unit = code - first;
    if (code < static_cast<int>(DType::DatetimeFirst) ||
        unit > static_cast<int>(ir::DateUnit::Generic))
      break;
    return first == static_cast<int>(DType::DatetimeFirst)
               ? t::datetime(static_cast<ir::DateUnit>(unit))
               : t::timedelta(static_cast<ir::DateUnit>(unit));
  }
  }
  return nullptr;
}

DType dtypeOf(const ir::ScalarType *t) {
  if (ir::isDatetimeLike(t))
    return datetimeDType(t->kind() == ir::TypeKind::Timedelta, t->unit());
  for (int i = 0; i <= static_cast<int>(DType::BFloat16); ++i)
    if (dtypeType(static_cast<DType>(i)) == t)
      return static_cast<DType>(i);
  return DType::Invalid;
}

int dtypeSize(DType d) {
  const ir::ScalarType *t = dtypeType(d);
  return t ? t->byteSize() : 0;
}

const char *dtypeName(DType d) {
  static const char *names[] = {
      "bool",   "int8",    "int16",   "int32",   "int64",     "uint8",      "uint16", "uint32",
      "uint64", "float16", "float32", "float64", "complex64", "complex128", "record", "bfloat16"};
  if (d == DType::Invalid)
    return "invalid";
  if (static_cast<int>(d) <= static_cast<int>(DType::BFloat16))
    return names[static_cast<int>(d)];
  const ir::ScalarType *t = dtypeType(d); // datetime64[D] ...: interned, never freed
  return t ? t->str().c_str() : "invalid";
}

namespace {

/// NumPy's number of ml_dtypes.bfloat16 in this process (a user dtype: numbered when ml_dtypes
/// registers it), or -1 before one was seen.
std::atomic<int> bfloat16Num{-1};

/// True (remembering its number) when `dtype`, a user dtype numbered `num`, is
/// ml_dtypes.bfloat16: named "bfloat16", two bytes.
bool learnBFloat16(py::handle dtype, int num) {
  if (num < NPY_USERDEF)
    return false;
  if (py::cast<std::string>(dtype.attr("name")) != "bfloat16" ||
      py::cast<int>(dtype.attr("itemsize")) != 2)
    return false;
  bfloat16Num.store(num);
  return true;
}

} // namespace

DType dtypeFromNumpyNum(int num, char byteorder) {
  if (byteorder == '>')
    return DType::Invalid; // x86-64 and AArch64 Linux are little-endian
  if (num >= NPY_USERDEF)
    return num == bfloat16Num.load() ? DType::BFloat16 : DType::Invalid;
  constexpr bool longIs64 = sizeof(long) == 8;
  switch (num) {
  case 0:
    return DType::Bool;
  case 1:
    return DType::Int8;
  case 2:
    return DType::UInt8;
  case 3:
    return DType::Int16;
  case 4:
    return DType::UInt16;
  case 5:
    return DType::Int32;
  case 6:
    return DType::UInt32;
  case 7:
    return longIs64 ? DType::Int64 : DType::Int32;
  case 8:
    return longIs64 ? DType::UInt64 : DType::UInt32;
  case 9:
    return DType::Int64;
  case 10:
    return DType::UInt64;
  case 11:
    return DType::Float32;
  case 12:
    return DType::Float64;
  case 14:
    return DType::Complex64;
  case 15:
    return DType::Complex128;
  case 23: // NPY_HALF
    return DType::Float16;
  default:
    return DType::Invalid;
  }
}

namespace {

/// The DType of a datetime64 / timedelta64 dtype from its C metadata (the unit and its
/// multiple); Invalid for a multiple other than 1 or another dtype.
DType datetimeDTypeOfDescr(PyArray_Descr *descr) {
  if (descr->type_num != NPY_DATETIME && descr->type_num != NPY_TIMEDELTA)
    return DType::Invalid;
  if (descr->byteorder == '>')
    return DType::Invalid;
#if NPY_ABI_VERSION < 0x02000000 // NumPy 1.x headers: the descr's field
  NpyAuxData *aux = descr->c_metadata;
#else // NumPy 2 headers: through the accessor (the descr's layout depends on the runtime)
  NpyAuxData *aux = PyDataType_C_METADATA(descr);
#endif
  auto *meta = reinterpret_cast<PyArray_DatetimeDTypeMetaData *>(aux);
  if (!meta || meta->meta.num != 1 || meta->meta.base < NPY_FR_Y ||
      meta->meta.base > NPY_FR_GENERIC || meta->meta.base == 3) // 3: NumPy's removed unit B
    return DType::Invalid;
  return datetimeDType(descr->type_num == NPY_TIMEDELTA,
                       static_cast<ir::DateUnit>(static_cast<int>(meta->meta.base)));
}

} // namespace

DType dtypeFromNumpy(py::handle dtype) {
  try {
    int num = py::cast<int>(dtype.attr("num"));
    if (num == NPY_DATETIME || num == NPY_TIMEDELTA) {
      numpyApi(); // NumPy's C API (its initialization never reads a datetime dtype)
      if (!PyObject_TypeCheck(dtype.ptr(), &PyArrayDescr_Type))
        return DType::Invalid;
      return datetimeDTypeOfDescr(reinterpret_cast<PyArray_Descr *>(dtype.ptr()));
    }
    std::string order = py::cast<std::string>(dtype.attr("byteorder"));
    DType d = dtypeFromNumpyNum(num, order.empty() ? '=' : order[0]);
    if (d == DType::Invalid && learnBFloat16(dtype, num))
      return DType::BFloat16;
    return d;
  } catch (py::error_already_set &) {
    PyErr_Clear();
    return DType::Invalid;
  } catch (py::cast_error &) {
    return DType::Invalid;
  }
}

ir::Layout layoutFromStrides(int ndim, const int64_t *shape, const int64_t *strides, int itemsize) {
  for (int d = 0; d < ndim; ++d)
    if (shape[d] == 0)
      return ir::Layout::C;
  auto contiguous = [&](bool fortran) {
    int64_t expect = itemsize;
    for (int k = 0; k < ndim; ++k) {
      int d = fortran ? k : ndim - 1 - k;
      if (shape[d] != 1 && strides[d] != expect)
        return false;
      expect *= shape[d];
    }
    return true;
  };
  if (contiguous(false))
    return ir::Layout::C;
  if (ndim > 1 && contiguous(true))
    return ir::Layout::F;
  return ir::Layout::A;
}

// ---- NumPy --------------------------------------------------------------------------------

namespace {

static_assert(kNpyCContiguous == NPY_ARRAY_C_CONTIGUOUS &&
              kNpyFContiguous == NPY_ARRAY_F_CONTIGUOUS && kNpyWriteable == NPY_ARRAY_WRITEABLE);

PyArrayObject *asArray(PyObject *o) { return reinterpret_cast<PyArrayObject *>(o); }

/// The value of a NumPy scalar of dtype `d` (its C scalar object's obval).
const void *scalarValue(PyObject *o, DType d) {
  switch (d) {
  case DType::Bool:
    return &reinterpret_cast<PyBoolScalarObject *>(o)->obval;
  case DType::Int8:
  case DType::UInt8:
    return &reinterpret_cast<PyByteScalarObject *>(o)->obval;
  case DType::Int16:
  case DType::UInt16:
    return &reinterpret_cast<PyShortScalarObject *>(o)->obval;
  case DType::Int32:
  case DType::UInt32:
    return &reinterpret_cast<PyIntScalarObject *>(o)->obval;
  case DType::Int64:
  case DType::UInt64:
    return &reinterpret_cast<PyLongLongScalarObject *>(o)->obval;
  case DType::Float16:
    return &reinterpret_cast<PyHalfScalarObject *>(o)->obval;
  case DType::Float32:
    return &reinterpret_cast<PyFloatScalarObject *>(o)->obval;
  case DType::Float64:
    return &reinterpret_cast<PyDoubleScalarObject *>(o)->obval;
  case DType::Complex64:
    return &reinterpret_cast<PyCFloatScalarObject *>(o)->obval;
  case DType::Complex128:
    return &reinterpret_cast<PyCDoubleScalarObject *>(o)->obval;
  case DType::BFloat16: // ml_dtypes' scalars are read by readBFloat16Scalar
  default: // records, datetimes (readDatetimeScalar) and Invalid
    break;
  }
  return nullptr;
}

} // namespace

const NumpyApi &numpyApi() {
  static NumpyApi *api = [] {
    auto *a = new NumpyApi();
    a->module = py::module_::import("numpy");
    if (_import_array() < 0) // NumPy's C API table (PyArray_* below)
      throw py::error_already_set();
    a->ndarray = reinterpret_cast<PyTypeObject *>(a->module.attr("ndarray").ptr());
    a->voidScalar = reinterpret_cast<PyTypeObject *>(a->module.attr("void").ptr());
    a->datetimeScalar = reinterpret_cast<PyTypeObject *>(a->module.attr("datetime64").ptr());
    a->timedeltaScalar = reinterpret_cast<PyTypeObject *>(a->module.attr("timedelta64").ptr());
    const char *names[] = {"bool_",     "int8",       "int16",    "int32",     "int64",   "uint8",
                           "uint16",    "uint32",     "uint64",   "float16",   "float32", "float64",
                           "complex64", "complex128", "longlong", "ulonglong", "intc",    "uintc",
                           "int_",      "uint",       "byte",     "ubyte",     "short",   "ushort"};
    for (const char *n : names) {
      if (!py::hasattr(a->module, n))
        continue;
      py::object t = a->module.attr(n);
      if (!PyType_Check(t.ptr()))
        continue;
      auto *tp = reinterpret_cast<PyTypeObject *>(t.ptr());
      bool seen = false;
      for (auto &s : a->scalars)
        seen = seen || s.type == tp;
      if (seen)
        continue;
      DType d = dtypeFromNumpy(a->module.attr("dtype")(t));
      if (d == DType::Invalid)
        continue;
      a->scalars.push_back({tp, d});
    }
    return a;
  }();
  return *api;
}

py::object numpyDtypeOf(const ir::ScalarType *t) {
  static auto *cache = new std::unordered_map<const ir::ScalarType *, py::object>();
  auto it = cache->find(t);
  if (it != cache->end())
    return it->second;
  py::object d = numpyApi().module.attr("dtype")(dtypeName(dtypeOf(t)));
  (*cache)[t] = d;
  return d;
}

// ---- Records ------------------------------------------------------------------------------

const ir::RecordType *recordFromNumpy(py::handle dtype, std::string &why) {
  try {
    py::object names = dtype.attr("names");
    if (names.is_none()) {
      why = "dtype " + py::cast<std::string>(py::str(dtype)) + " is not a structured dtype";
      return nullptr;
    }
    py::dict fields = dtype.attr("fields");
    std::vector<ir::RecordField> out;
    for (py::handle n : names) {
      ir::RecordField f;
      f.name = py::cast<std::string>(n);
      py::tuple info = fields[n];
      py::object sub = info[0];
      f.offset = py::cast<int64_t>(info[1]);
      py::object shaped = sub.attr("subdtype");
      std::vector<int64_t> shape;
      if (!shaped.is_none()) { // ('j', 'f4', (3, 2)): a nested array of its base dtype
        py::tuple st = shaped;
        for (py::handle d : py::tuple(st[1]))
          shape.push_back(py::cast<int64_t>(d));
        sub = st[0];
      }
      const ir::Type *t = nullptr;
      if (!sub.attr("names").is_none()) {
        if (!shape.empty()) {
          why = "field '" + f.name + "' is an array of records, which is not supported";
          return nullptr;
        }
        t = recordFromNumpy(sub, why);
        if (!t) {
          why = "field '" + f.name + "': " + why;
          return nullptr;
        }
      } else if (std::string whyString;
                 const ir::CharSeqType *cs = charSeqFromNumpy(sub, whyString)) {
        if (!shape.empty()) { // ('y', 'S4', 3): numba has no nested arrays of strings either
          why = "field '" + f.name + "' is an array of strings, which is not supported";
          return nullptr;
        }
        t = cs; // ('y', 'U12'): numba's UnicodeCharSeq field
      } else if (!whyString.empty()) {
        why = "field '" + f.name + "': " + whyString;
        return nullptr;
      } else {
        DType d = dtypeFromNumpy(sub);
        if (d == DType::Invalid) {
          why = "field '" + f.name + "' has dtype " + py::cast<std::string>(py::str(sub)) +
                ", which kernels do not support";
          return nullptr;
        }
        t = dtypeType(d);
        if (!shape.empty())
          t = ir::types::nestedArray(dtypeType(d), shape);
      }
      f.type = t;
      out.push_back(std::move(f));
    }
    return ir::types::record(std::move(out), py::cast<int64_t>(dtype.attr("itemsize")),
                             py::cast<bool>(dtype.attr("isalignedstruct")));
  } catch (py::error_already_set &e) {
    why = std::string("its dtype could not be read: ") + e.what();
  } catch (py::cast_error &e) {
    why = std::string("its dtype could not be read: ") + e.what();
  } catch (std::invalid_argument &e) {
    why = e.what();
  }
  return nullptr;
}

namespace {

/// The numbered dtypes (records and strings) of the descr objects seen, so that launches of the
/// same array types do not read the dtype again. Keyed by the descr object, which the cache
/// keeps alive so that its address is never reused by another dtype (arrays made from one dtype
/// share its descr). Used with the GIL held.
std::unordered_map<PyObject *, const ir::Type *> &descrTypes() {
  static auto *cache = new std::unordered_map<PyObject *, const ir::Type *>();
  return *cache;
}

/// `t`, remembered as the type of `descr` when it is one (and the cache has room).
template <class T> const T *rememberDescr(PyObject *descr, const T *t) {
  if (t && descrTypes().size() < 4096) {
    Py_INCREF(descr);
    descrTypes().emplace(descr, t);
  }
  return t;
}

} // namespace

const ir::RecordType *recordOfDescr(PyObject *descr, std::string &why) {
  auto it = descrTypes().find(descr);
  if (it != descrTypes().end())
    return ir::dyn_cast<ir::RecordType>(it->second);
  return rememberDescr(descr, recordFromNumpy(descr, why));
}

const ir::CharSeqType *charSeqFromNumpy(py::handle dtype, std::string &why) {
  std::string kind = py::cast<std::string>(dtype.attr("kind"));
  if (kind != "S" && kind != "U")
    return nullptr;
  bool unicode = kind == "U";
  int64_t itemsize = py::cast<int64_t>(dtype.attr("itemsize"));
  if (unicode && py::cast<std::string>(dtype.attr("byteorder")) == ">") {
    why = "dtype " + py::cast<std::string>(py::str(dtype)) +
          " is a big-endian string, which kernels do not support";
    return nullptr;
  }
  int64_t count = unicode ? itemsize / 4 : itemsize;
  if (count < 1) {
    why = "dtype " + py::cast<std::string>(py::str(dtype)) + " has no characters";
    return nullptr;
  }
  return ir::types::charSeq(count, unicode);
}

const ir::Type *numberedDtypeOfDescr(PyObject *descr, std::string &why) {
  if (auto it = descrTypes().find(descr); it != descrTypes().end())
    return it->second;
  py::handle d(descr);
  if (!d.attr("names").is_none())
    return recordOfDescr(descr, why);
  if (const ir::CharSeqType *cs = charSeqFromNumpy(d, why))
    return rememberDescr(descr, cs);
  if (why.empty())
    why = "dtype " + py::cast<std::string>(py::str(d)) + " is neither a record nor a string";
  return nullptr;
}

int64_t numberedDtypeSize(const ir::Type *t) {
  if (const auto *cs = ir::dyn_cast<ir::CharSeqType>(t))
    return cs->byteSize();
  return ir::cast<ir::RecordType>(t)->size();
}

namespace {
struct RecordIds {
  std::mutex mutex;
  std::unordered_map<const ir::Type *, uint32_t> ids;
  std::vector<const ir::Type *> types;
};
RecordIds &recordIds() {
  static auto *r = new RecordIds();
  return *r;
}
} // namespace

uint32_t recordId(const ir::Type *r) {
  RecordIds &t = recordIds();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.ids.find(r);
  if (it != t.ids.end())
    return it->second;
  if (t.types.size() > codes::kMaxRecordId)
    throw std::length_error("too many distinct record dtypes in one process");
  uint32_t id = static_cast<uint32_t>(t.types.size());
  t.types.push_back(r);
  t.ids.emplace(r, id);
  return id;
}

namespace {
/// The namedtuple classes seen in arguments, numbered by their names (classes alike in name and
/// fields share a number: they type alike), and a cache by class object.
struct NamedTupleClasses {
  std::mutex mutex;
  std::unordered_map<PyTypeObject *, uint32_t> byClass; ///< the classes referenced (kept alive)
  std::unordered_map<std::string, uint32_t> ids;
  std::vector<ir::NamedTupleNames> names;
};
NamedTupleClasses &namedTupleClasses() {
  static auto *r = new NamedTupleClasses();
  return *r;
}

// Both tables are leaf locks, taken around every fork() (runtime/Fork.h); registered at static
// initialization, before their first use.
[[maybe_unused]] const bool gForkLocksRegistered = [] {
  runtime::registerForkLock(recordIds().mutex);
  runtime::registerForkLock(namedTupleClasses().mutex);
  return true;
}();

/// The number of the namedtuple class of `o`, an instance of a tuple subclass (the class's
/// `_fields`: one string per element); -1 when it is not a namedtuple, -2 (with `why`) when
/// there are too many classes.
int64_t namedTupleClass(PyObject *o, std::string &why) {
  PyTypeObject *cls = Py_TYPE(o);
  NamedTupleClasses &t = namedTupleClasses();
  {
    std::lock_guard<std::mutex> lock(t.mutex);
    auto it = t.byClass.find(cls);
    if (it != t.byClass.end())
      return it->second;
  }
  PyObject *fields = PyObject_GetAttrString(reinterpret_cast<PyObject *>(cls), "_fields");
  if (!fields) {
    PyErr_Clear();
    return -1;
  }
  ir::NamedTupleNames names;
  bool ok = PyTuple_Check(fields) && PyTuple_GET_SIZE(fields) == PyTuple_GET_SIZE(o);
  for (Py_ssize_t k = 0; ok && k < PyTuple_GET_SIZE(fields); ++k) {
    PyObject *f = PyTuple_GET_ITEM(fields, k);
    const char *u = PyUnicode_Check(f) ? PyUnicode_AsUTF8(f) : nullptr;
    if (!u)
      PyErr_Clear();
    ok = u != nullptr;
    if (ok)
      names.fields.emplace_back(u);
  }
  Py_DECREF(fields);
  if (!ok)
    return -1;
  names.className = cls->tp_name ? cls->tp_name : "namedtuple";
  if (size_t dot = names.className.rfind('.'); dot != std::string::npos)
    names.className = names.className.substr(dot + 1);
  std::string key = names.className + "(";
  for (const std::string &n : names.fields)
    key += n + ",";
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.ids.find(key);
  uint32_t id;
  if (it != t.ids.end()) {
    id = it->second;
  } else {
    if (t.names.size() >= (1u << 24)) {
      why = "too many distinct namedtuple classes in one process";
      return -2;
    }
    id = static_cast<uint32_t>(t.names.size());
    t.names.push_back(std::move(names));
    t.ids.emplace(key, id);
  }
  if (t.byClass.size() < 4096 && t.byClass.emplace(cls, id).second)
    Py_INCREF(cls);
  return id;
}

/// The named tuple type of class number `id` over the elements of `plain`, made concrete (a
/// Python float in a namedtuple is float64, as in a plain tuple argument).
const ir::TupleType *namedTupleType(uint32_t id, const ir::TupleType *plain) {
  ir::NamedTupleNames names;
  {
    NamedTupleClasses &t = namedTupleClasses();
    std::lock_guard<std::mutex> lock(t.mutex);
    if (id >= t.names.size())
      throw std::logic_error("corrupt argument fingerprint (namedtuple class)");
    names = t.names[id];
  }
  std::vector<const ir::Type *> elems;
  for (const ir::Type *e : plain->elements())
    elems.push_back(ir::concretize(e));
  return ir::types::namedTuple(names.className, names.fields, elems);
}
} // namespace

const ir::Type *dtypeById(uint32_t id) {
  RecordIds &t = recordIds();
  std::lock_guard<std::mutex> lock(t.mutex);
  if (id >= t.types.size())
    throw std::logic_error("corrupt argument fingerprint (record id)");
  return t.types[id];
}

const ir::RecordType *recordById(uint32_t id) {
  const auto *r = ir::dyn_cast<ir::RecordType>(dtypeById(id));
  if (!r)
    throw std::logic_error("corrupt argument fingerprint (a record scalar's id)");
  return r;
}

// ---- Enum classes ---------------------------------------------------------------------------

namespace {
struct EnumClasses {
  std::mutex mutex;
  py::object enumBase, intEnumBase;                            ///< enum.Enum, enum.IntEnum
  std::unordered_map<PyObject *, uint64_t> byClass;            ///< the classes (kept alive)
  std::vector<std::shared_ptr<const ir::EnumClassInfo>> infos; ///< by id
};
EnumClasses &enumClasses() {
  static auto *r = [] {
    auto *e = new EnumClasses();
    py::module_ m = py::module_::import("enum");
    e->enumBase = m.attr("Enum");
    e->intEnumBase = m.attr("IntEnum");
    return e;
  }();
  return *r;
}
} // namespace

bool isEnumClass(PyObject *o) {
  // Enum classes are made by enum's metaclass: a plain class (metaclass `type`) is none, which
  // keeps this C-only for the types kernels usually meet.
  if (!PyType_Check(o) || Py_IS_TYPE(o, &PyType_Type))
    return false;
  return PyType_IsSubtype(reinterpret_cast<PyTypeObject *>(o),
                          reinterpret_cast<PyTypeObject *>(enumClasses().enumBase.ptr()));
}

bool isEnumMember(PyObject *o) {
  // Called for most launch arguments (ArgReader::read): no Python-level isinstance.
  return isEnumClass(reinterpret_cast<PyObject *>(Py_TYPE(o)));
}

std::shared_ptr<const ir::EnumClassInfo> enumClassInfo(PyObject *cls, std::string &why) {
  EnumClasses &e = enumClasses();
  {
    std::lock_guard<std::mutex> lock(e.mutex);
    auto it = e.byClass.find(cls);
    if (it != e.byClass.end())
      return e.infos[it->second];
  }
  if (!isEnumClass(cls)) {
    why = "not an enum class";
    return nullptr;
  }
  auto info = std::make_shared<ir::EnumClassInfo>();
  py::handle c(cls);
  try {
    info->name = py::cast<std::string>(c.attr("__name__"));
    info->qualname = py::cast<std::string>(py::str(c.attr("__module__"))) + "." +
                     py::cast<std::string>(c.attr("__qualname__"));
    info->isInt = PyObject_IsSubclass(cls, e.intEnumBase.ptr()) == 1;
    py::object members = c.attr("__members__");
    for (py::handle name : members) {
      py::object value = members[name].attr("value");
      ir::ConstValue v = constFromPython(value);
      if (v.kind == ir::ConstValue::Kind::Unsupported) {
        why = "member " + info->name + "." + py::cast<std::string>(name) + " has a value of type " +
              std::string(Py_TYPE(value.ptr())->tp_name) + ", which kernels cannot hold";
        return nullptr;
      }
      info->members.emplace_back(py::cast<std::string>(name), std::move(v));
    }
  } catch (py::error_already_set &err) {
    why = std::string("its members could not be read: ") + err.what();
    return nullptr;
  } catch (py::cast_error &err) {
    why = std::string("its members could not be read: ") + err.what();
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(e.mutex);
  auto it = e.byClass.find(cls); // numbered meanwhile by another thread
  if (it != e.byClass.end())
    return e.infos[it->second];
  if (e.infos.size() >= (1u << 24)) {
    why = "too many enum classes in one process";
    return nullptr;
  }
  info->id = e.infos.size();
  Py_INCREF(cls);
  e.byClass.emplace(cls, info->id);
  e.infos.push_back(info);
  return info;
}

std::shared_ptr<const ir::EnumClassInfo> enumClassById(uint64_t id) {
  EnumClasses &e = enumClasses();
  std::lock_guard<std::mutex> lock(e.mutex);
  if (id >= e.infos.size())
    throw std::logic_error("corrupt argument fingerprint (enum class)");
  return e.infos[id];
}

bool isNumpyArray(PyObject *o) {
  const NumpyApi &np = numpyApi();
  return Py_TYPE(o) == np.ndarray || PyObject_TypeCheck(o, np.ndarray);
}

NumpyArrayFields numpyFields(PyObject *array) {
  PyArrayObject *a = asArray(array);
  return {static_cast<char *>(PyArray_DATA(a)),
          PyArray_NDIM(a),
          PyArray_DIMS(a),
          PyArray_STRIDES(a),
          reinterpret_cast<PyObject *>(PyArray_DESCR(a)),
          PyArray_FLAGS(a)};
}

DType numpyArrayDType(PyObject *array) {
  PyArray_Descr *d = PyArray_DESCR(asArray(array));
  if (d->type_num == NPY_DATETIME || d->type_num == NPY_TIMEDELTA) [[unlikely]]
    return datetimeDTypeOfDescr(d);
  DType dt = dtypeFromNumpyNum(d->type_num, d->byteorder);
  if (dt == DType::Invalid && d->type_num >= NPY_USERDEF) // not seen yet: a bfloat16 array?
    return dtypeFromNumpy(py::handle(reinterpret_cast<PyObject *>(d)));
  return dt;
}

// ---- Argument reading ---------------------------------------------------------------------

LeafValue &ArgReader::newLeaf(LeafValue::Kind k, DType d, int arg) {
  leaves.emplace_back();
  LeafValue &l = leaves.back();
  l.kind = k;
  l.dtype = d;
  l.arg = arg;
  return l;
}

bool ArgReader::readNumpyArray(PyObject *o, int arg, std::string &why) {
  NumpyArrayFields f = numpyFields(o);
  DType d = numpyArrayDType(o);
  const ir::Type *record = nullptr;
  if (d == DType::Invalid) { // not a number: a record, or an S<n> / U<n> string (CharSeq)
    int typeNum = reinterpret_cast<PyArray_Descr *>(f.descr)->type_num;
    if (typeNum == NPY_VOID || typeNum == NPY_STRING || typeNum == NPY_UNICODE) {
      std::string whyNot;
      record = numberedDtypeOfDescr(f.descr, whyNot);
      if (!record) {
        why = (typeNum == NPY_VOID ? "its structured dtype is not supported: " : "") + whyNot;
        return false;
      }
      d = DType::Record;
    }
  }
  if (d == DType::Invalid) {
    py::object dt = py::reinterpret_borrow<py::object>(o).attr("dtype");
    why = "arrays of dtype " + py::cast<std::string>(py::str(dt)) + " are not supported";
    return false;
  }
  if (f.ndim > kMaxDims) {
    why = "arrays of more than " + std::to_string(kMaxDims) + " dimensions are not supported";
    return false;
  }
  LeafValue &l = newLeaf(LeafValue::Kind::Array, d, arg);
  l.record = record;
  l.origin = LeafValue::Origin::HostArray;
  l.object = o;
  l.ndim = f.ndim;
  l.data = reinterpret_cast<uint64_t>(f.data);
  l.writeable = (f.flags & kNpyWriteable) != 0;
  for (int k = 0; k < f.ndim; ++k) {
    l.shape[k] = f.shape[k];
    l.strides[k] = f.strides[k];
  }
  ir::Layout layout = (f.flags & kNpyCContiguous)                   ? ir::Layout::C
                      : (f.ndim > 1 && (f.flags & kNpyFContiguous)) ? ir::Layout::F
                                                                    : ir::Layout::A;
  codes.push_back(record ? codes::recordArray(recordId(record), f.ndim, layout, !l.writeable)
                         : codes::array(d, f.ndim, layout, !l.writeable));
  return true;
}

bool ArgReader::readRecordScalar(PyObject *o, int arg, std::string &why) {
  py::object self = py::reinterpret_borrow<py::object>(o);
  py::object dtype = self.attr("dtype");
  std::string whyRecord;
  const ir::RecordType *record = recordOfDescr(dtype.ptr(), whyRecord);
  if (!record) {
    why = "its structured dtype is not supported: " + whyRecord;
    return false;
  }
  // The buffer of a numpy.void is its own bytes, or the array element it views; numba-cuda
  // writes a kernel's changes back into it, so it is written through its buffer here too
  // when NumPy's flags say it is writeable (the buffer itself is always marked read-only).
  Py_buffer view;
  if (PyObject_GetBuffer(o, &view, PyBUF_SIMPLE) != 0) {
    PyErr_Clear();
    why = "the record's bytes could not be read";
    return false;
  }
  void *data = view.buf;
  Py_ssize_t len = view.len;
  PyBuffer_Release(&view);
  if (len != record->size()) {
    why = "the record's buffer has " + std::to_string(len) + " bytes, not its dtype's " +
          std::to_string(record->size());
    return false;
  }
  LeafValue &l = newLeaf(LeafValue::Kind::Array, DType::Record, arg);
  l.record = record;
  l.origin = LeafValue::Origin::HostArray;
  l.object = o;
  l.ndim = 0;
  l.data = reinterpret_cast<uint64_t>(data);
  l.writeable = py::cast<bool>(self.attr("flags").attr("writeable"));
  codes.push_back(codes::record(recordId(record)));
  return true;
}

bool ArgReader::readInterface(PyObject *o, int arg, std::string &why, bool *opaque) {
  py::object self = py::reinterpret_borrow<py::object>(o);
  py::dict iface;
  try {
    iface = self.attr("__cuda_array_interface__");
    py::tuple shape = iface["shape"];
    py::object typestr = iface["typestr"];
    py::tuple data = iface["data"];
    py::object stridesObj = iface.contains("strides") ? py::object(iface["strides"]) : py::none();
    DType d = dtypeFromNumpy(numpyApi().module.attr("dtype")(typestr));
    if (d == DType::Invalid &&
        py::cast<std::string>(py::str(typestr)).find("V2") != std::string::npos &&
        py::hasattr(self, "dtype")) {
      // A bfloat16 array's typestr is that of two opaque bytes ("<V2", as NumPy spells
      // ml_dtypes.bfloat16): its own dtype (CuPy's) says what they hold.
      try {
        if (dtypeFromNumpy(numpyApi().module.attr("dtype")(self.attr("dtype"))) == DType::BFloat16)
          d = DType::BFloat16;
      } catch (py::error_already_set &) {
        PyErr_Clear();
      }
    }
    if (d == DType::Invalid) {
      std::string ts = py::cast<std::string>(py::str(typestr));
      why = "__cuda_array_interface__ typestr " + ts + " is not supported";
      if (opaque)
        *opaque = ts.find('V') != std::string::npos;
      return false;
    }
    int ndim = static_cast<int>(shape.size());
    if (ndim > kMaxDims) {
      why = "arrays of more than " + std::to_string(kMaxDims) + " dimensions are not supported";
      return false;
    }
    LeafValue &l = newLeaf(LeafValue::Kind::Array, d, arg);
    l.origin = LeafValue::Origin::CudaInterface;
    l.object = o;
    l.ndim = ndim;
    l.data = py::cast<uint64_t>(data[0]);
    l.writeable = !py::cast<bool>(data[1]);
    int64_t expect = dtypeSize(d);
    for (int k = ndim - 1; k >= 0; --k) {
      l.shape[k] = py::cast<int64_t>(shape[k]);
      l.strides[k] = stridesObj.is_none() ? expect : py::cast<int64_t>(stridesObj[py::int_(k)]);
      expect *= l.shape[k];
    }
    if (iface.contains("stream") && !iface["stream"].is_none())
      l.producerStream = py::cast<uint64_t>(iface["stream"]);
    ir::Layout layout = layoutFromStrides(ndim, l.shape, l.strides, dtypeSize(d));
    codes.push_back(codes::array(d, ndim, layout, !l.writeable));
    return true;
  } catch (py::error_already_set &e) {
    why = std::string("its __cuda_array_interface__ could not be read: ") + e.what();
    return false;
  } catch (py::cast_error &e) {
    why = std::string("its __cuda_array_interface__ is malformed: ") + e.what();
    return false;
  }
}

bool ArgReader::readDatetimeScalar(PyObject *o, int arg, std::string &why) {
  const bool timedelta = Py_TYPE(o) == numpyApi().timedeltaScalar;
  int64_t count;
  PyArray_DatetimeMetaData meta;
  if (timedelta) {
    count = reinterpret_cast<PyTimedeltaScalarObject *>(o)->obval;
    meta = reinterpret_cast<PyTimedeltaScalarObject *>(o)->obmeta;
  } else {
    count = reinterpret_cast<PyDatetimeScalarObject *>(o)->obval;
    meta = reinterpret_cast<PyDatetimeScalarObject *>(o)->obmeta;
  }
  if (meta.num != 1 || meta.base < NPY_FR_Y || meta.base > NPY_FR_GENERIC || meta.base == 3) {
    why = "datetime64 and timedelta64 values in multiples of a unit (" +
          py::cast<std::string>(py::str(py::handle(o).attr("dtype"))) +
          ") are not supported (numba does not support them either)";
    return false;
  }
  DType d = datetimeDType(timedelta, static_cast<ir::DateUnit>(static_cast<int>(meta.base)));
  LeafValue &l = newLeaf(LeafValue::Kind::Int, d, arg);
  l.i = count;
  codes.push_back(codes::scalar(d, false));
  return true;
}

bool ArgReader::readEnumMember(PyObject *o, int arg, std::string &why, int depth) {
  std::shared_ptr<const ir::EnumClassInfo> info =
      enumClassInfo(reinterpret_cast<PyObject *>(Py_TYPE(o)), why);
  std::string whyType;
  if (info && !ir::enumValueType(*info, whyType))
    why = whyType;
  if (!info || !whyType.empty()) {
    why = "members of enum class " + std::string(Py_TYPE(o)->tp_name) + " cannot be passed: " + why;
    return false;
  }
  codes.push_back(codes::kEnum | static_cast<uint32_t>(info->id));
  py::object value = py::handle(o).attr("value");
  return read(value.ptr(), arg, why, depth + 1);
}

bool ArgReader::read(PyObject *o, int arg, std::string &why, int depth) {
  PyTypeObject *t = Py_TYPE(o);
  if (t == &PyFloat_Type) [[likely]] { // exact Python floats first: no subtype walks
    LeafValue &l = newLeaf(LeafValue::Kind::Float, DType::Float64, arg);
    l.re = PyFloat_AS_DOUBLE(o);
    codes.push_back(codes::scalar(DType::Float64, true));
    return true;
  }
  if (t == &PyBool_Type) {
    LeafValue &l = newLeaf(LeafValue::Kind::Bool, DType::Bool, arg);
    l.b = o == Py_True;
    codes.push_back(codes::scalar(DType::Bool, false));
    return true;
  }
  if (t != &PyLong_Type && !PyFloat_Check(o) && isEnumMember(o)) // IntEnum members are ints too
    return readEnumMember(o, arg, why, depth);
  if (t == &PyLong_Type || PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      why = "the integer could not be read";
      return false;
    }
    if (!overflow) {
      LeafValue &l = newLeaf(LeafValue::Kind::Int, DType::Int64, arg);
      l.i = v;
      codes.push_back(codes::scalar(DType::Int64, true));
      return true;
    }
    unsigned long long u = overflow > 0 ? PyLong_AsUnsignedLongLong(o) : 0;
    if (overflow < 0 || (u == static_cast<unsigned long long>(-1) && PyErr_Occurred())) {
      PyErr_Clear();
      why = "the integer does not fit in 64 bits";
      return false;
    }
    LeafValue &l = newLeaf(LeafValue::Kind::UInt, DType::UInt64, arg);
    l.u = u;
    codes.push_back(codes::scalar(DType::UInt64, false));
    return true;
  }
  // Then arrays (a subtype check each), after the cheap exact scalar types.
  const NumpyApi &np = numpyApi();
  if (const DeviceNDArray *dev = asDeviceArray(o)) {
    if (dev->device() != runtime::Device::currentOrdinal()) [[unlikely]]
      checkArrayPeer(*dev, "argument " + std::to_string(arg + 1));
    LeafValue &l = newLeaf(LeafValue::Kind::Array, dev->dtype(), arg);
    l.record = dev->record();
    l.origin = LeafValue::Origin::DeviceArray;
    l.object = o;
    l.device = dev;
    l.ndim = dev->ndim();
    l.data = dev->address();
    l.writeable = !dev->readonly();
    for (int k = 0; k < l.ndim; ++k) {
      l.shape[k] = dev->shape()[k];
      l.strides[k] = dev->strides()[k];
    }
    codes.push_back(dev->code());
    return true;
  }
  if (t == np.ndarray)
    return readNumpyArray(o, arg, why);
  if (PyObject_TypeCheck(o, np.ndarray)) {
    // A subclass in memory the device addresses (cuda.mapped_array, cuda.managed_array) offers
    // __cuda_array_interface__ and is used in place; other arrays (np.recarray, ...) are copied.
    if (PyObject_HasAttrString(o, "__cuda_array_interface__"))
      return readInterface(o, arg, why);
    return readNumpyArray(o, arg, why);
  }
  if (PyObject_TypeCheck(o, np.voidScalar))
    return readRecordScalar(o, arg, why);
  if (t == np.datetimeScalar || t == np.timedeltaScalar)
    return readDatetimeScalar(o, arg, why);
  for (const NumpyApi::Scalar &s : np.scalars) {
    if (s.type != t)
      continue;
    LeafValue &l = newLeaf(LeafValue::Kind::Int, s.dtype, arg);
    static_cast<compiler::ArgValue &>(l) =
        compiler::ArgValue::load(dtypeType(s.dtype), scalarValue(o, s.dtype));
    codes.push_back(codes::scalar(s.dtype, false));
    return true;
  }
  if (std::string_view(t->tp_name).ends_with("bfloat16") && PyObject_HasAttrString(o, "dtype")) {
    // An ml_dtypes.bfloat16 scalar (a NumPy user type, not in np.scalars): its value through
    // float(), which is exact.
    py::object self = py::reinterpret_borrow<py::object>(o);
    if (dtypeFromNumpy(self.attr("dtype")) == DType::BFloat16) {
      double v = PyFloat_AsDouble(o);
      if (v == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        why = "the bfloat16 scalar could not be read";
        return false;
      }
      LeafValue &l = newLeaf(LeafValue::Kind::Float, DType::BFloat16, arg);
      static_cast<compiler::ArgValue &>(l) = compiler::ArgValue::floating(v);
      codes.push_back(codes::scalar(DType::BFloat16, false));
      return true;
    }
  }
  if (t == &PyComplex_Type || PyComplex_Check(o)) {
    LeafValue &l = newLeaf(LeafValue::Kind::Complex, DType::Complex128, arg);
    l.re = PyComplex_RealAsDouble(o);
    l.im = PyComplex_ImagAsDouble(o);
    codes.push_back(codes::scalar(DType::Complex128, true));
    return true;
  }
  if (PyFloat_Check(o)) { // float subclasses
    LeafValue &l = newLeaf(LeafValue::Kind::Float, DType::Float64, arg);
    l.re = PyFloat_AsDouble(o);
    codes.push_back(codes::scalar(DType::Float64, true));
    return true;
  }
  if (PyTuple_Check(o)) {
    if (depth > 8) {
      why = "tuples nested this deeply are not supported";
      return false;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(o);
    if (!PyTuple_CheckExact(o)) { // a namedtuple: its class's number, then the tuple
      int64_t id = namedTupleClass(o, why);
      if (id == -2)
        return false;
      if (id >= 0)
        codes.push_back(codes::kNamedTuple | static_cast<uint32_t>(id));
    }
    codes.push_back(codes::kTuple | static_cast<uint32_t>(n));
    for (Py_ssize_t k = 0; k < n; ++k)
      if (!read(PyTuple_GET_ITEM(o, k), arg, why, depth + 1))
        return false;
    return true;
  }
  auto offersDLPack = [o] {
    return PyObject_HasAttrString(o, "__dlpack__") &&
           PyObject_HasAttrString(o, "__dlpack_device__");
  };
  if (PyObject_HasAttrString(o, "__cuda_array_interface__")) {
    bool opaque = false;
    if (readInterface(o, arg, why, &opaque))
      return true;
    // Opaque bytes ("<V2") name no element type: a producer that also offers DLPack (PyTorch's
    // bfloat16 tensors) says there what they are.
    return opaque && offersDLPack() && readDLPack(o, arg, why, depth);
  }
  if (offersDLPack())
    return readDLPack(o, arg, why, depth);
  if (depth == 0)
    if (std::optional<bool> ok = readTransferHint(o, arg, why))
      return *ok;
  why = "values of this type cannot be passed to kernels";
  return false;
}

bool ArgReader::readDLPack(PyObject *o, int arg, std::string &why, int depth) {
  py::object arr;
  try {
    arr = importDLPack(o, py::int_(0), /*order=*/true);
  } catch (py::error_already_set &e) {
    why = std::string("its DLPack tensor could not be imported: ") + e.what();
    return false;
  } catch (const std::exception &e) {
    why = std::string("its DLPack tensor could not be imported: ") + e.what();
    return false;
  }
  held.push_back(arr);
  return read(arr.ptr(), arg, why, depth);
}

std::optional<bool> ArgReader::readTransferHint(PyObject *o, int arg, std::string &why) {
  // cuda.In / cuda.Out / cuda.InOut (python/ptxjit/cuda.py): `_ptxjit_transfer` on the class,
  // the array in `value`.
  PyObject *kind =
      PyObject_GetAttrString(reinterpret_cast<PyObject *>(Py_TYPE(o)), "_ptxjit_transfer");
  if (!kind) {
    PyErr_Clear();
    return std::nullopt;
  }
  py::object k = py::reinterpret_steal<py::object>(kind);
  if (!PyUnicode_Check(kind))
    return std::nullopt;
  std::string name = py::cast<std::string>(k);
  py::object value = py::reinterpret_borrow<py::object>(o).attr("value");
  size_t before = leaves.size();
  if (!read(value.ptr(), arg, why, 1)) {
    why = "cuda." + name + "(...) holds a value that " + why;
    return false;
  }
  if (leaves.size() == before + 1 && leaves.back().kind == LeafValue::Kind::Array &&
      leaves.back().origin == LeafValue::Origin::HostArray) {
    leaves.back().transfer = name == "In"    ? LeafValue::Transfer::In
                             : name == "Out" ? LeafValue::Transfer::Out
                                             : LeafValue::Transfer::InOut;
    return true;
  }
  if (leaves.size() == before + 1 && leaves.back().kind == LeafValue::Kind::Array)
    return true; // a device array: already where the kernel reads it, nothing to copy
  why = "cuda." + name + "(...) takes an array, not " + std::string(Py_TYPE(value.ptr())->tp_name);
  return false;
}

// ---- Decoding -----------------------------------------------------------------------------

namespace {

const ir::Type *decode(const std::vector<uint32_t> &cs, size_t &pos, bool weak) {
  uint32_t c = cs.at(pos++);
  DType d = static_cast<DType>(c & 0xff);
  switch (c & codes::kTagMask) {
  case codes::kScalar:
    if (weak && (c & codes::kPython)) {
      if (d == DType::Int64)
        return ir::types::weakInt();
      if (d == DType::Float64)
        return ir::types::weakFloat();
      if (d == DType::Complex128)
        return ir::types::weakComplex();
    }
    return dtypeType(d);
  case codes::kArray:
    return ir::types::array(dtypeType(d), static_cast<int>((c >> 8) & 0xf),
                            static_cast<ir::Layout>((c >> 12) & 0x3), (c >> 14) & 1);
  case codes::kRecordArray:
    return ir::types::array(dtypeById((c >> 7) & codes::kMaxRecordId), static_cast<int>(c & 0xf),
                            static_cast<ir::Layout>((c >> 4) & 0x3), (c >> 6) & 1);
  case codes::kRecord:
    return recordById(c & 0xffffff);
  case codes::kTuple: {
    uint32_t n = c & 0xffffff;
    std::vector<const ir::Type *> elems;
    for (uint32_t k = 0; k < n; ++k)
      elems.push_back(decode(cs, pos, weak));
    return ir::types::tuple(elems);
  }
  case codes::kNamedTuple: {
    auto *plain = ir::dyn_cast<ir::TupleType>(decode(cs, pos, weak));
    if (!plain)
      throw std::logic_error("corrupt argument fingerprint (namedtuple)");
    return namedTupleType(c & 0xffffff, plain);
  }
  case codes::kEnum: { // the member type of the class; its value's codes follow
    std::shared_ptr<const ir::EnumClassInfo> info = enumClassById(c & 0xffffff);
    decode(cs, pos, weak);
    std::string why;
    const ir::Type *dtype = ir::enumValueType(*info, why);
    if (!dtype)
      throw std::logic_error("enum class " + info->name + " in a fingerprint: " + why);
    return ir::enumClassOf(info, dtype)->memberType();
  }
  }
  throw std::logic_error("corrupt argument fingerprint");
}

} // namespace

const ir::Type *typeFromCode(uint32_t code, bool weak) {
  if ((code & codes::kTagMask) == codes::kTuple || (code & codes::kTagMask) == codes::kNamedTuple ||
      (code & codes::kTagMask) == codes::kEnum)
    throw std::logic_error("typeFromCode: a tuple's code");
  size_t pos = 0;
  return decode({code}, pos, weak);
}

std::vector<const ir::Type *> typesFromCodes(const std::vector<uint32_t> &cs, bool weak) {
  std::vector<const ir::Type *> out;
  size_t pos = 0;
  while (pos < cs.size())
    out.push_back(decode(cs, pos, weak));
  return out;
}

py::object typeDescription(const ir::Type *t) {
  if (!t || t->kind() == ir::TypeKind::Void || t->kind() == ir::TypeKind::None)
    return py::make_tuple("none");
  if (const auto *s = ir::dyn_cast<ir::ScalarType>(t))
    return py::make_tuple("scalar", s->str());
  if (const auto *r = ir::dyn_cast<ir::RecordType>(t)) {
    py::list fields;
    for (const ir::RecordField &f : r->fields())
      fields.append(py::make_tuple(f.name, typeDescription(f.type), f.offset));
    return py::make_tuple("record", fields, r->size(), r->aligned());
  }
  if (const auto *n = ir::dyn_cast<ir::NestedArrayType>(t))
    return py::make_tuple("nestedarray", n->dtype()->str(), py::tuple(py::cast(n->shape())));
  if (const auto *cs = ir::dyn_cast<ir::CharSeqType>(t))
    return py::make_tuple("charseq", cs->count(), cs->isUnicode());
  if (const auto *a = ir::dyn_cast<ir::ArrayType>(t)) {
    const char *layout = a->layout() == ir::Layout::C   ? "C"
                         : a->layout() == ir::Layout::F ? "F"
                                                        : "A";
    py::object dtype =
        a->scalarDtype() ? py::object(py::str(a->dtype()->str())) : typeDescription(a->dtype());
    return py::make_tuple("array", dtype, a->ndim(), layout, a->readonly());
  }
  if (const auto *tt = ir::dyn_cast<ir::TupleType>(t)) {
    py::list elems;
    for (const ir::Type *e : tt->elements())
      elems.append(typeDescription(e));
    if (const ir::NamedTupleNames *n = ir::namedTupleNames(tt))
      return py::make_tuple("namedtuple", n->className, py::cast(n->fields), elems);
    return py::make_tuple("tuple", elems);
  }
  if (const auto *p = ir::dyn_cast<ir::PointerType>(t))
    return py::make_tuple("pointer", p->pointee() ? py::object(py::str(p->pointee()->str()))
                                                  : py::object(py::none()));
  return py::make_tuple("other", t->str());
}

} // namespace ptxjit::bindings
