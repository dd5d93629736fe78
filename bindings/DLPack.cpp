// DLPack (the data interchange protocol of the Python array API standard): device arrays export
// themselves (__dlpack__, __dlpack_device__), and any producer is imported without a copy
// (cuda.from_dlpack, cuda.as_cuda_array and kernel arguments, through importDLPack). The C
// structures are DLPack 1.x's ABI, declared here (dlpack.h is not a dependency).
#include "bindings/DLPack.h"

#include "bindings/DeviceArray.h"
#include "bindings/Streams.h"
#include "bindings/Target.h"
#include "runtime/Event.h"
#include "runtime/Memory.h"

#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace ptxjit::bindings {
namespace {

// ---- DLPack's ABI (dlpack.h, version 1.1) ------------------------------------------------------

enum : int32_t { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13 };
enum : uint8_t {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLBfloat = 4,
  kDLComplex = 5,
  kDLBool = 6
};
constexpr uint64_t kReadOnly = 1u << 0;
constexpr uint64_t kIsCopied = 1u << 1;
constexpr uint32_t kMajor = 1, kMinor = 0; // what ptxjit produces (1.0's types suffice)

struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides;
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(DLManagedTensor *self);
};
struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void *manager_ctx;
  void (*deleter)(DLManagedTensorVersioned *self);
  uint64_t flags;
  DLTensor dl_tensor;
};

constexpr const char *kTensorName = "dltensor";
constexpr const char *kUsedTensorName = "used_dltensor";
constexpr const char *kVersionedName = "dltensor_versioned";
constexpr const char *kUsedVersionedName = "used_dltensor_versioned";

[[noreturn]] void bufferError(const std::string &message) {
  PyErr_SetString(PyExc_BufferError, message.c_str());
  throw py::error_already_set();
}

// ---- Export ------------------------------------------------------------------------------------

/// The DLPack dtype of a device array's elements; BufferError for records (DLPack has no
/// structured types).
DLDataType dlDataType(const DeviceNDArray &d) {
  uint8_t bits = static_cast<uint8_t>(d.itemsize() * 8);
  switch (d.dtype()) {
  case DType::Bool:
    return {kDLBool, 8, 1};
  case DType::Int8:
  case DType::Int16:
  case DType::Int32:
  case DType::Int64:
    return {kDLInt, bits, 1};
  case DType::UInt8:
  case DType::UInt16:
  case DType::UInt32:
  case DType::UInt64:
    return {kDLUInt, bits, 1};
  case DType::Float16:
  case DType::Float32:
  case DType::Float64:
    return {kDLFloat, bits, 1};
  case DType::Complex64:
  case DType::Complex128:
    return {kDLComplex, bits, 1};
  case DType::BFloat16:
    return {kDLBfloat, 16, 1};
  default:
    bufferError("__dlpack__: arrays of dtype " + py::cast<std::string>(py::str(d.numpyDtype())) +
                " cannot be exported through DLPack, which has no structured types");
  }
}

/// What an exported tensor owns: the array (a strong reference, released with the GIL by the
/// deleter) and its shape and strides in elements.
template <class Managed> struct Export {
  Managed managed{};
  PyObject *array = nullptr;
  int64_t shape[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};
};

template <class Managed> void deleteExport(Managed *m) {
  auto *e = static_cast<Export<Managed> *>(m->manager_ctx);
  // Consumers may call the deleter from any thread, with or without the interpreter; after it
  // has finalized the reference is left (as NumPy's deleter does).
  if (Py_IsInitialized()) {
    PyGILState_STATE gil = PyGILState_Ensure();
    Py_XDECREF(e->array);
    PyGILState_Release(gil);
  }
  delete e;
}

/// The destructor of an exported capsule: a capsule no consumer took still owns its tensor.
template <class Managed> void destroyUnusedCapsule(PyObject *capsule) {
  const char *name = std::is_same_v<Managed, DLManagedTensor> ? kTensorName : kVersionedName;
  if (!PyCapsule_IsValid(capsule, name))
    return; // renamed "used_...": the consumer owns the tensor now
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  if (auto *m = static_cast<Managed *>(PyCapsule_GetPointer(capsule, name)))
    m->deleter(m);
  else
    PyErr_WriteUnraisable(capsule);
  PyErr_Restore(type, value, traceback);
}

template <class Managed>
py::capsule makeCapsule(py::object array, const DeviceNDArray &d, DLDevice device, uint64_t flags) {
  auto *e = new Export<Managed>;
  DLTensor &t = e->managed.dl_tensor;
  try {
    t.dtype = dlDataType(d);
  } catch (...) {
    delete e;
    throw;
  }
  for (int k = 0; k < d.ndim(); ++k) {
    e->shape[k] = d.shape()[k];
    if (d.strides()[k] % d.itemsize() != 0 && d.shape()[k] > 1) {
      delete e;
      bufferError("__dlpack__: a stride of " + std::to_string(d.strides()[k]) +
                  " bytes is not a whole number of elements, which DLPack needs");
    }
    e->strides[k] = d.strides()[k] / d.itemsize();
  }
  // The address of the first element itself (byte_offset 0), as NumPy and CuPy export it.
  t.data = reinterpret_cast<void *>(d.size() == 0 ? d.allocation()->address() : d.address());
  t.device = device;
  t.ndim = d.ndim();
  t.shape = e->shape;
  t.strides = e->strides;
  t.byte_offset = 0;
  e->managed.manager_ctx = e;
  e->managed.deleter = deleteExport<Managed>;
  if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) {
    e->managed.version = {kMajor, kMinor};
    e->managed.flags = flags;
  }
  e->array = array.release().ptr();
  const char *name = std::is_same_v<Managed, DLManagedTensor> ? kTensorName : kVersionedName;
  PyObject *c = PyCapsule_New(&e->managed, name, destroyUnusedCapsule<Managed>);
  if (!c) {
    deleteExport(&e->managed);
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(c);
}

DLDevice dlDevice(const DeviceNDArray &d) {
  if (d.backend() != codegen::Backend::CUDA)
    return {kDLCPU, 0};
  return {kDLCUDA, d.device()};
}

/// The consumer's stream of __dlpack__(stream=...) on CUDA (DLPack's convention): None and 1 the
/// legacy default stream, 2 the per-thread default stream, another integer a stream handle, -1
/// "no ordering wanted" (nullopt). 0 is ambiguous and refused, as the protocol asks.
std::optional<CUstream> consumerStream(py::handle stream) {
  if (stream.is_none())
    return CUstream(nullptr);
  if (!PyLong_Check(stream.ptr()))
    throw py::type_error("__dlpack__: stream must be an integer or None, not " +
                         std::string(Py_TYPE(stream.ptr())->tp_name));
  long long v = py::cast<long long>(stream);
  if (v == -1)
    return std::nullopt;
  if (v == 0)
    throw py::value_error("__dlpack__: stream=0 is ambiguous for CUDA (DLPack): pass 1 for the "
                          "legacy default stream, 2 for the per-thread default stream");
  if (v == 1)
    return CUstream(nullptr);
  if (v == 2)
    return CU_STREAM_PER_THREAD;
  return reinterpret_cast<CUstream>(static_cast<uintptr_t>(v));
}

/// Orders the consumer's stream after the work of the array's stream (an event recorded on one
/// and waited for by the other), unless they are the same stream.
void orderForConsumer(const DeviceNDArray &d, CUstream consumer) {
  CUstream producer = streamHandle(d.stream(), d.backend());
  if (producer == consumer)
    return;
  std::shared_ptr<runtime::Event> e = runtime::Event::create(/*timing=*/false);
  e->record(producer);
  e->wait(consumer);
}

py::object exportDLPack(py::object self, py::object stream, py::object maxVersion,
                        py::object dlDeviceArg, py::object copy) {
  const DeviceNDArray *d = asDeviceArray(self.ptr());
  DLDevice device = dlDevice(*d);
  if (!dlDeviceArg.is_none()) {
    auto want = py::cast<std::pair<int, int>>(dlDeviceArg);
    if (want.first != device.device_type || want.second != device.device_id)
      bufferError("__dlpack__: the array is on DLPack device (" +
                  std::to_string(device.device_type) + ", " + std::to_string(device.device_id) +
                  ") and is not exported to another device");
  }
  uint64_t flags = d->readonly() ? kReadOnly : 0;
  if (copy.ptr() == Py_True) {
    // A copy of its own, contiguous, made on the device (on the array's stream).
    py::object fresh = py::module_::import("ptxjit._devicearray").attr("contiguous_copy")(self);
    self = fresh;
    d = asDeviceArray(self.ptr());
    flags = kIsCopied;
  } else if (!copy.is_none() && copy.ptr() != Py_False) {
    throw py::type_error("__dlpack__: copy must be True, False or None");
  }
  if (device.device_type == kDLCUDA) {
    if (std::optional<CUstream> consumer = consumerStream(stream))
      orderForConsumer(*d, *consumer);
  } else if (!stream.is_none()) {
    bufferError("__dlpack__: the CPU backend's arrays are in host memory, which has no streams: "
                "stream must be None");
  }
  bool versioned = false;
  if (!maxVersion.is_none()) {
    auto v = py::cast<std::pair<int, int>>(maxVersion);
    versioned = v.first >= 1;
  }
  if (versioned)
    return makeCapsule<DLManagedTensorVersioned>(self, *d, device, flags);
  if (flags & kReadOnly)
    bufferError("__dlpack__: a read-only array needs DLPack 1.0 or newer (max_version), whose "
                "tensors can say so");
  return makeCapsule<DLManagedTensor>(self, *d, device, flags);
}

// ---- Import ------------------------------------------------------------------------------------

/// What keeps an imported tensor alive: a capsule owning the managed tensor, whose destructor
/// calls the producer's deleter (the device array's owner).
template <class Managed> void releaseImported(PyObject *capsule) {
  if (auto *m = static_cast<Managed *>(PyCapsule_GetPointer(capsule, nullptr))) {
    if (m->deleter)
      m->deleter(m);
  } else {
    PyErr_Clear();
  }
}

py::object numpyDtypeOfDL(DLDataType t) {
  if (t.lanes != 1)
    bufferError("DLPack tensors of vector types (" + std::to_string(t.lanes) +
                " lanes) cannot be imported");
  const char *kind = nullptr;
  switch (t.code) {
  case kDLBool:
    kind = t.bits == 8 ? "b" : nullptr;
    break;
  case kDLInt:
    kind = "i";
    break;
  case kDLUInt:
    kind = "u";
    break;
  case kDLFloat:
    kind = "f";
    break;
  case kDLComplex:
    kind = "c";
    break;
  case kDLBfloat:
    if (t.bits == 16) {
      // NumPy's host type for bfloat16 is ml_dtypes' (as for CuPy's bfloat16 arrays); without it
      // there is no dtype to give the array.
      py::object mlDtypes;
      try {
        mlDtypes = py::module_::import("ml_dtypes");
      } catch (py::error_already_set &) {
        PyErr_Clear();
        bufferError("DLPack bfloat16 tensors (type code 4) need ml_dtypes, NumPy's bfloat16 "
                    "dtype, which is not installed (pip install ml-dtypes)");
      }
      return py::module_::import("numpy").attr("dtype")(mlDtypes.attr("bfloat16"));
    }
    break;
  default:
    break;
  }
  if (!kind || t.bits % 8 != 0)
    bufferError("DLPack type code " + std::to_string(t.code) + " of " + std::to_string(t.bits) +
                " bits cannot be imported");
  std::string spec = std::string(kind) + std::to_string(t.bits / 8);
  if (t.code == kDLBool)
    spec = "bool";
  py::object dtype = py::module_::import("numpy").attr("dtype")(spec);
  if (dtypeFromNumpy(dtype) == DType::Invalid)
    bufferError("DLPack tensors of type " + py::cast<std::string>(py::str(dtype)) +
                " cannot be imported");
  return dtype;
}

/// A device array over the tensor that `capsule` holds (renamed "used_..." once taken).
py::object arrayOfCapsule(py::object capsule, codegen::Backend backend, py::object stream) {
  PyObject *c = capsule.ptr();
  DLTensor *t = nullptr;
  bool readonly = false;
  py::object owner;
  if (PyCapsule_IsValid(c, kVersionedName)) {
    auto *m = static_cast<DLManagedTensorVersioned *>(PyCapsule_GetPointer(c, kVersionedName));
    if (m->version.major > kMajor) {
      // Not understood: the consumer still owns the tensor, so its deleter runs now.
      PyCapsule_SetName(c, kUsedVersionedName);
      if (m->deleter)
        m->deleter(m);
      bufferError("the DLPack tensor has version " + std::to_string(m->version.major) + "." +
                  std::to_string(m->version.minor) + "; ptxjit reads major version 1");
    }
    t = &m->dl_tensor;
    readonly = (m->flags & kReadOnly) != 0;
    owner = py::reinterpret_steal<py::object>(
        PyCapsule_New(m, nullptr, releaseImported<DLManagedTensorVersioned>));
    if (!owner)
      throw py::error_already_set();
    PyCapsule_SetName(c, kUsedVersionedName);
  } else if (PyCapsule_IsValid(c, kTensorName)) {
    auto *m = static_cast<DLManagedTensor *>(PyCapsule_GetPointer(c, kTensorName));
    t = &m->dl_tensor;
    owner = py::reinterpret_steal<py::object>(
        PyCapsule_New(m, nullptr, releaseImported<DLManagedTensor>));
    if (!owner)
      throw py::error_already_set();
    PyCapsule_SetName(c, kUsedTensorName);
  } else {
    throw py::type_error("__dlpack__ returned something other than an unused DLPack capsule "
                         "(\"dltensor\" or \"dltensor_versioned\")");
  }
  // From here on `owner` releases the tensor whatever happens.
  if (t->ndim < 0 || t->ndim > kMaxDims)
    bufferError("DLPack tensors of " + std::to_string(t->ndim) +
                " dimensions cannot be imported (at most " + std::to_string(kMaxDims) + ")");
  py::object dtype = numpyDtypeOfDL(t->dtype);
  int64_t item = py::cast<int64_t>(dtype.attr("itemsize"));
  std::vector<int64_t> shape(t->shape, t->shape + t->ndim), strides(t->ndim);
  int64_t expect = item;
  for (int k = t->ndim - 1; k >= 0; --k) {
    strides[k] = t->strides ? t->strides[k] * item : expect;
    expect *= std::max<int64_t>(shape[k], 1);
  }
  uint64_t address = reinterpret_cast<uint64_t>(t->data) + t->byte_offset;
  bool onDevice = backend == codegen::Backend::CUDA;
  int device = t->device.device_type == kDLCPU ? 0 : t->device.device_id;
  py::object arr =
      wrapForeignMemory(address, shape, strides, dtype, owner, stream, backend, onDevice, device);
  if (readonly)
    asMutableDeviceArray(arr.ptr())->markReadonly();
  return arr;
}

} // namespace

py::object importDLPack(py::handle obj, py::handle stream, bool order) {
  codegen::Backend backend = currentBackend();
  py::object self = py::reinterpret_borrow<py::object>(obj);
  auto device = py::cast<std::pair<int, int>>(self.attr("__dlpack_device__")());
  int type = device.first;
  bool gpuOnly = type == kDLCUDA;
  bool hostOnly = type == kDLCPU;
  if (type != kDLCUDA && type != kDLCPU && type != kDLCUDAHost && type != kDLCUDAManaged)
    throw py::type_error("a DLPack producer on device type " + std::to_string(type) +
                         " cannot be used by ptxjit (CUDA, CUDA host or managed memory, or host "
                         "memory on the CPU backend)");
  if (backend == codegen::Backend::CUDA && hostOnly)
    throw py::type_error("the DLPack producer's data is in host memory (kDLCPU), which CUDA "
                         "kernels cannot read: copy it with cuda.to_device()");
  if (backend != codegen::Backend::CUDA && gpuOnly)
    throw py::type_error("arrays in GPU memory (DLPack kDLCUDA) cannot be used by the CPU "
                         "backend");
  // The consumer's stream: the one the array will be used on (the producer orders its work
  // before it), -1 when no ordering is wanted; host memory has no streams.
  py::object dlStream = py::none();
  if (backend == codegen::Backend::CUDA && type != kDLCPU) {
    CUstream h = streamHandle(stream, backend);
    dlStream = !order ? py::int_(-1)
               : h    ? py::int_(reinterpret_cast<uintptr_t>(h))
                      : py::int_(1); // ptxjit's default stream is the legacy default stream
  }
  py::object capsule;
  try {
    capsule = self.attr("__dlpack__")(py::arg("stream") = dlStream,
                                      py::arg("max_version") = py::make_tuple(kMajor, kMinor));
  } catch (py::error_already_set &e) {
    if (!e.matches(PyExc_TypeError))
      throw;
    // A producer of DLPack before 1.0 takes no max_version.
    capsule = self.attr("__dlpack__")(py::arg("stream") = dlStream);
  }
  return arrayOfCapsule(capsule, backend, streamObject(stream));
}

void defineDLPack(py::module_ &m) {
  auto cls = py::reinterpret_borrow<py::class_<DeviceNDArray, std::shared_ptr<DeviceNDArray>>>(
      m.attr("DeviceNDArray"));
  cls.def("__dlpack__", &exportDLPack, py::kw_only(), py::arg("stream") = py::none(),
          py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(),
          py::arg("copy") = py::none(),
          "A DLPack capsule of the array (no copy unless copy=True); the consumer's `stream` "
          "is ordered after the array's stream.")
      .def(
          "__dlpack_device__",
          [](const DeviceNDArray &d) {
            DLDevice dev = dlDevice(d);
            return py::make_tuple(dev.device_type, dev.device_id);
          },
          "(kDLCUDA, device id), or (kDLCPU, 0) on the CPU backend (its arrays are host memory).");
  m.def(
      "_from_dlpack",
      [](py::object obj, py::object stream, bool order) {
        return importDLPack(obj, stream, order);
      },
      py::arg("obj"), py::arg("stream") = 0, py::arg("order") = true);
}

} // namespace ptxjit::bindings
