// The per-launch reading of Python arguments: each argument becomes fingerprint codes (its
// type, computed from type pointers and array flags without attribute lookups where possible)
// and leaves (scalar values, array pointers/shapes/strides) that PackingPlan slots refer to.
#pragma once

#include "compiler/Packing.h"
#include "ir/Types.h"
#include "ir/Values.h"

#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ptxjit::bindings {

namespace py = pybind11;

class DeviceNDArray;

/// The element types kernels accept, in a fixed order (fingerprint codes store the index).
enum class DType : uint8_t {
  Bool,
  Int8,
  Int16,
  Int32,
  Int64,
  UInt8,
  UInt16,
  UInt32,
  UInt64,
  Float16,
  Float32,
  Float64,
  Complex64,
  Complex128,
  Record,   ///< a structured dtype: the leaf or device array carries its ir::RecordType
  BFloat16, ///< ml_dtypes.bfloat16 (a NumPy user dtype: its number is learned at first sight)
  /// datetime64 of unit code u (ir::DateUnit) is DatetimeFirst + u; timedelta64 TimedeltaFirst
  /// + u (see datetimeDType).
  DatetimeFirst = 32,
  TimedeltaFirst = 48,
  Invalid = 0xff,
};

/// The DType of datetime64 (or, with `timedelta`, timedelta64) of `unit`.
inline DType datetimeDType(bool timedelta, ir::DateUnit unit) {
  return static_cast<DType>(
      static_cast<int>(timedelta ? DType::TimedeltaFirst : DType::DatetimeFirst) +
      static_cast<int>(unit));
}

const ir::ScalarType *dtypeType(DType d);
DType dtypeOf(const ir::ScalarType *t);
int dtypeSize(DType d);
/// NumPy's name ("float32", "bool").
const char *dtypeName(DType d);
/// The DType of NumPy dtype number `num` (dtype.num) with byte order `byteorder`
/// (dtype.byteorder: '=', '<', '>', '|'); Invalid for unsupported dtypes or non-native order.
/// A user dtype's number (ml_dtypes.bfloat16's) is known once dtypeFromNumpy or
/// numpyArrayDType has seen the dtype.
DType dtypeFromNumpyNum(int num, char byteorder);
/// The DType of a numpy.dtype object; Invalid when unsupported (datetime64 / timedelta64 with a
/// multiple of their unit, "M8[2D]", included: numba does not support those either).
DType dtypeFromNumpy(py::handle dtype);

/// The record type of structured numpy.dtype `dtype` (fields from dtype.names and dtype.fields,
/// itemsize, isalignedstruct); null with `why` set when it is not a structured dtype or has a
/// field ptxjit cannot type (objects, arrays of strings, non-native byte order, ...). Needs the GIL.
const ir::RecordType *recordFromNumpy(py::handle dtype, std::string &why);
/// recordFromNumpy for the descr of a NumPy array (cached per descr object: launches of the same
/// array types do not read the dtype again).
const ir::RecordType *recordOfDescr(PyObject *descr, std::string &why);
/// The string type of NumPy dtype `dtype` when it is `S<n>` (Numba's CharSeq) or `U<n>` of
/// native byte order (UnicodeCharSeq); null otherwise, with `why` set when it is a string
/// dtype kernels cannot take (a big-endian U<n>, a zero length). Needs the GIL.
const ir::CharSeqType *charSeqFromNumpy(py::handle dtype, std::string &why);
/// The element type of a NumPy array's descr that fingerprints carry by number (DType::Record):
/// a record (recordOfDescr) or a string (charSeqFromNumpy); null with `why` set otherwise.
/// Cached per descr object, as recordOfDescr.
const ir::Type *numberedDtypeOfDescr(PyObject *descr, std::string &why);
/// Bytes of one element of numbered dtype `t` (a record's size, a string's itemsize).
int64_t numberedDtypeSize(const ir::Type *t);
/// The number of numbered dtype `t` (a record or a string type) in fingerprint codes (numbered
/// on first use, process-wide).
uint32_t recordId(const ir::Type *t);
/// The numbered dtype numbered `id` by recordId.
const ir::Type *dtypeById(uint32_t id);
/// The record type numbered `id` by recordId (a record scalar's code).
const ir::RecordType *recordById(uint32_t id);

/// The kernels' view of enum class `cls` (a subclass of enum.Enum; ir::EnumClassInfo): numbered
/// on first use (the class is kept alive), its members read then. Null, with `why` set, when
/// `cls` is not an enum class or a member's value is not a constant kernels can hold. Needs the
/// GIL.
std::shared_ptr<const ir::EnumClassInfo> enumClassInfo(PyObject *cls, std::string &why);
/// The enum class numbered `id` by enumClassInfo.
std::shared_ptr<const ir::EnumClassInfo> enumClassById(uint64_t id);
/// True when `o` is a member of an enum class (an instance of enum.Enum). Needs the GIL.
bool isEnumMember(PyObject *o);
/// True when `o` is an enum class (a subclass of enum.Enum). Needs the GIL.
bool isEnumClass(PyObject *o);

/// Memory layout codes (as ir::Layout).
ir::Layout layoutFromStrides(int ndim, const int64_t *shape, const int64_t *strides, int itemsize);

/// The largest ndim an argument array may have.
using compiler::kMaxDims;

/// One leaf of the launch arguments (scalar or array), in flattening order: the value the
/// packer reads (compiler::ArgValue), and where it came from.
struct LeafValue : compiler::ArgValue {
  enum class Origin : uint8_t { HostArray, DeviceArray, CudaInterface };
  LeafValue() noexcept {}
  DType dtype = DType::Invalid;
  /// DType::Record: the numbered element type (numberedDtypeOfDescr): a record type (of an
  /// array's elements, or of a record scalar, which is a 0-d array leaf over the scalar's
  /// bytes), or a string type (an S<n> or U<n> array's elements).
  const ir::Type *record = nullptr;
  /// Bytes of one element.
  int itemsize() const {
    return record ? static_cast<int>(numberedDtypeSize(record)) : dtypeSize(dtype);
  }
  // Arrays.
  Origin origin = Origin::HostArray;
  bool writeable = true;
  /// Host arrays: which copies a launch makes (cuda.In: to the device only; cuda.Out: back
  /// only; cuda.InOut and a bare array: both, back only when writeable).
  enum class Transfer : uint8_t { InOut, In, Out };
  Transfer transfer = Transfer::InOut;
  PyObject *object = nullptr;            ///< borrowed: the argument tuple keeps it alive
  const DeviceNDArray *device = nullptr; ///< Origin::DeviceArray
  /// Origin::CudaInterface: the producer's stream (the interface's v3 "stream"; 0 for none),
  /// which a consumer synchronizes before using the memory.
  uint64_t producerStream = 0;
  int arg = 0; ///< the top-level argument index
};

/// Fingerprint codes: one code per scalar or array, tuples as a header code plus their
/// elements. Bits 24..27 hold the tag. Arrays of records and record scalars carry the record's
/// number (recordId) instead of a DType.
namespace codes {
constexpr uint32_t kScalar = 1u << 24;
constexpr uint32_t kArray = 2u << 24;
constexpr uint32_t kTuple = 3u << 24;
constexpr uint32_t kRecordArray = 4u << 24; ///< bits 0..3 ndim, 4..5 layout, 6 readonly, 7.. id
constexpr uint32_t kRecord = 5u << 24;      ///< a record scalar: bits 0..23 the record's id
/// A collections.namedtuple: bits 0..23 its class's number (namedTupleClass), followed by the
/// codes of the tuple itself (kTuple and its elements).
constexpr uint32_t kNamedTuple = 6u << 24;
/// An enum member (ir/Enums.h): bits 0..23 its class's number (enumClassInfo), followed by the
/// codes of its value.
constexpr uint32_t kEnum = 7u << 24;
constexpr uint32_t kMaxRecordId = (1u << 17) - 1;
constexpr uint32_t kTagMask = 0xfu << 24;
constexpr uint32_t kPython = 1u << 8; ///< scalars: a Python int/float/complex (weak for eager)
inline uint32_t scalar(DType d, bool python) {
  return kScalar | static_cast<uint32_t>(d) | (python ? kPython : 0);
}
inline uint32_t array(DType d, int ndim, ir::Layout layout, bool readonly) {
  return kArray | static_cast<uint32_t>(d) | (static_cast<uint32_t>(ndim) << 8) |
         (static_cast<uint32_t>(layout) << 12) | (readonly ? 1u << 14 : 0u);
}
inline uint32_t recordArray(uint32_t id, int ndim, ir::Layout layout, bool readonly) {
  return kRecordArray | static_cast<uint32_t>(ndim) | (static_cast<uint32_t>(layout) << 4) |
         (readonly ? 1u << 6 : 0u) | (id << 7);
}
inline uint32_t record(uint32_t id) { return kRecord | id; }
/// True for the codes of arrays (of scalars or of records).
inline bool isArray(uint32_t c) {
  return (c & kTagMask) == kArray || (c & kTagMask) == kRecordArray;
}
} // namespace codes

struct CodesHash {
  size_t operator()(const std::vector<uint32_t> &v) const {
    size_t h = v.size();
    for (uint32_t c : v)
      h = h * 0x9E3779B97F4A7C15ull ^ c;
    return h;
  }
};

/// Decodes fingerprint codes into argument types. With `weak`, Python scalars give weak types
/// (for matching eager signatures); otherwise int64/float64/complex128.
std::vector<const ir::Type *> typesFromCodes(const std::vector<uint32_t> &codes, bool weak);
/// The type of one scalar or array code (not a tuple's), as typesFromCodes decodes it.
const ir::Type *typeFromCode(uint32_t code, bool weak);

/// Reads launch arguments. Reused across launches (clear() keeps capacity).
class ArgReader {
public:
  std::vector<uint32_t> codes;
  std::vector<LeafValue> leaves;
  /// Device arrays made while reading (of DLPack producers), which leaves point into: alive
  /// until the next clear().
  std::vector<py::object> held;

  void clear() {
    codes.clear();
    leaves.clear();
    held.clear();
  }
  /// Appends argument `arg`; on an unsupported value returns false and sets `why`.
  bool read(PyObject *o, int arg, std::string &why, int depth = 0);

private:
  bool readNumpyArray(PyObject *o, int arg, std::string &why);
  /// A record scalar (numpy.void / numpy.record, e.g. `arr[0]` of a structured array): a 0-d
  /// array leaf over its bytes, copied to the device and back (when writeable) around the
  /// launch, as numba-cuda passes records.
  bool readRecordScalar(PyObject *o, int arg, std::string &why);
  /// cuda.In / Out / InOut around an array: reads the array and marks its transfer; nullopt
  /// when `o` is not a transfer hint.
  std::optional<bool> readTransferHint(PyObject *o, int arg, std::string &why);
  /// A __cuda_array_interface__ producer. `*opaque` (when given) is set when the only fault is
  /// a typestr naming no element type ("<V2": PyTorch's bfloat16), which DLPack may name.
  bool readInterface(PyObject *o, int arg, std::string &why, bool *opaque = nullptr);
  /// A DLPack producer without __cuda_array_interface__ (JAX, ...): read as the device array
  /// importDLPack makes of it, ordered before the default stream.
  bool readDLPack(PyObject *o, int arg, std::string &why, int depth);
  /// A numpy.datetime64 / timedelta64 scalar: its count, typed by its unit.
  bool readDatetimeScalar(PyObject *o, int arg, std::string &why);
  /// An enum member: its class's code, then its value (ir/Enums.h).
  bool readEnumMember(PyObject *o, int arg, std::string &why, int depth);
  LeafValue &newLeaf(LeafValue::Kind k, DType d, int arg);
};

/// NumPy's objects, looked up once (needs the GIL). Imports numpy on first use; throws if
/// numpy is not installed.
struct NumpyApi {
  PyTypeObject *ndarray = nullptr;
  PyTypeObject *voidScalar = nullptr; ///< numpy.void (numpy.record derives from it)
  PyTypeObject *datetimeScalar = nullptr;  ///< numpy.datetime64 (every unit)
  PyTypeObject *timedeltaScalar = nullptr; ///< numpy.timedelta64
  struct Scalar {
    PyTypeObject *type;
    DType dtype;
  };
  std::vector<Scalar> scalars;
  py::object module;
};
const NumpyApi &numpyApi();

/// The numpy.dtype object of a scalar type (cached; needs the GIL).
py::object numpyDtypeOf(const ir::ScalarType *t);

/// The C++ object behind a pybind11 instance `self` of a class with the simple layout (one value
/// and holder) without a pybind11 cast; `what` names the class for the error when it was never
/// initialized.
template <typename T> T &simpleInstance(PyObject *self, const char *what) {
  auto *inst = reinterpret_cast<py::detail::instance *>(self);
  if (!inst->simple_layout)
    return py::handle(self).cast<T &>();
  if (!inst->simple_holder_constructed)
    throw py::type_error(std::string("this ") + what + " was never initialized");
  return *static_cast<T *>(inst->simple_value_holder[0]);
}

/// True when `o` is a numpy.ndarray (or subclass).
bool isNumpyArray(PyObject *o);

/// The layout-relevant fields of a NumPy array object (through NumPy's C API).
struct NumpyArrayFields {
  char *data;
  int ndim;
  const Py_ssize_t *shape;
  const Py_ssize_t *strides;
  PyObject *descr;
  int flags;
};
NumpyArrayFields numpyFields(PyObject *array);
/// NumPy's array flags.
constexpr int kNpyCContiguous = 0x1;
constexpr int kNpyFContiguous = 0x2;
constexpr int kNpyWriteable = 0x400;
/// The DType of an array's descr (its type_num and byte order).
DType numpyArrayDType(PyObject *array);

/// The Python description of a type for ptxjit.types.from_description:
/// ("scalar", name) / ("array", dtype, ndim, layout, readonly) / ("tuple", [...]) / ("none",)
/// / ("other", spelling).
py::object typeDescription(const ir::Type *t);

} // namespace ptxjit::bindings
