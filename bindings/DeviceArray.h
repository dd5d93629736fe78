// Device arrays: cuda.to_device, cuda.device_array and the DeviceNDArray class. On the CPU
// backend they live in host memory (runtime::allocateHost) and behave the same.
#pragma once

#include "bindings/ArgTypes.h"
#include "codegen/CompileOptions.h"
#include "runtime/ArrayGeometry.h"
#include "runtime/Device.h"
#include "runtime/Memory.h"

#include <pybind11/pybind11.h>

#include <memory>
#include <vector>

namespace ptxjit::bindings {

namespace py = pybind11;

class DeviceNDArray {
public:
  /// A view of `alloc` whose first element (index 0, ..., 0) is at byte `offset`, with the given
  /// geometry (strides of any sign, 0 for broadcast dimensions). A DType::Record array reads its
  /// record or string type from `npDtype` (a structured, S<n> or U<n> numpy.dtype). Throws
  /// std::out_of_range when the elements reach outside the allocation, py::type_error when
  /// ptxjit cannot type the dtype.
  DeviceNDArray(std::shared_ptr<runtime::Allocation> alloc, size_t offset,
                std::vector<int64_t> shape, std::vector<int64_t> strides, DType dtype,
                py::object npDtype, codegen::Backend backend, py::object stream);

  DType dtype() const { return dtype_; }
  /// DType::Record: the numbered type of the elements, a record or a string type
  /// (numberedDtypeOfDescr; null otherwise).
  const ir::Type *record() const { return record_; }
  const py::object &numpyDtype() const { return npDtype_; }
  int itemsize() const { return itemsize_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  const std::vector<int64_t> &shape() const { return shape_; }
  const std::vector<int64_t> &strides() const { return strides_; }
  int64_t size() const;
  /// Bytes from the lowest to one past the highest byte the elements occupy (0 for empty
  /// arrays): numba-cuda's alloc_size.
  size_t extent() const { return extent_; }
  /// The allocation offset of the lowest byte the elements occupy (below offset() when some
  /// stride is negative).
  size_t spanOffset() const { return spanOffset_; }
  /// The address kernels use (device address, or host address on the CPU backend).
  uint64_t address() const { return alloc_->address() + offset_; }
  /// The allocation offset of the first element.
  size_t offset() const { return offset_; }
  const std::shared_ptr<runtime::Allocation> &allocation() const { return alloc_; }
  /// The ordinal of the device whose memory holds the elements (0 on the CPU backend).
  int device() const { return alloc_->device(); }
  codegen::Backend backend() const { return backend_; }
  ir::Layout layout() const { return layout_; }
  /// NumPy's C_CONTIGUOUS and F_CONTIGUOUS flags (runtime/ArrayGeometry.h).
  bool cContiguous() const { return cContiguous_; }
  bool fContiguous() const { return fContiguous_; }
  /// True when some stride is negative.
  bool negativeStrides() const;
  /// The fingerprint code of this array as a kernel argument.
  uint32_t code() const { return code_; }
  /// True for an array kernels may not write (a read-only DLPack import): its fingerprint code
  /// says so, and copies into it raise ValueError. Views inherit it.
  bool readonly() const { return readonly_; }
  /// Makes the array read-only (see readonly).
  void markReadonly();
  /// Raises numpy's ValueError("assignment destination is read-only") for a read-only array.
  void checkWritable() const;
  /// True for numba's DeviceRecord: `cuda.to_device(record_scalar)`, a 0-d array of a record
  /// dtype that kernels take as a record (by reference), not as a 0-d array.
  bool recordScalar() const { return (code_ & codes::kTagMask) == codes::kRecord; }
  /// Makes this 0-d array of a record dtype a record scalar (see recordScalar).
  void markRecordScalar();
  /// The stream the array was made with or bound to (None: the default stream).
  const py::object &stream() const { return stream_; }
  /// Binds the array to `stream` (None: the default stream); for bind() on a fresh view.
  void setStream(py::object stream) { stream_ = std::move(stream); }

  /// The host array given to to_device (None otherwise), for to_host().
  py::object hostArray;
  /// What keeps memory this array does not own alive (the producer an array was imported from
  /// through __cuda_array_interface__); None for ptxjit's own memory. Views share it.
  py::object owner;

private:
  std::shared_ptr<runtime::Allocation> alloc_;
  size_t offset_;
  std::vector<int64_t> shape_, strides_;
  DType dtype_;
  const ir::Type *record_ = nullptr;
  int itemsize_;
  py::object npDtype_;
  codegen::Backend backend_;
  py::object stream_;
  size_t extent_ = 0;
  size_t spanOffset_ = 0;
  ir::Layout layout_ = ir::Layout::C;
  bool cContiguous_ = true, fContiguous_ = true;
  bool readonly_ = false;
  uint32_t code_ = 0;
};

/// The Python object of a new DeviceNDArray (cheaper than py::cast: no per-call type lookup).
py::object wrapDeviceArray(std::shared_ptr<DeviceNDArray> arr);

namespace detail {
/// The DeviceNDArray class object (null until the module registered it).
extern PyTypeObject *deviceArrayType;
/// How many DeviceNDArray objects (Python objects, of the class or a subclass) were deallocated
/// so far: while it stays the same, a pointer to a live one still points to that same array (its
/// memory cannot have been reused for another), which lets a launch skip reading the arrays it
/// packed last (DirectPlan). Counted by the class's tp_dealloc; read with the GIL held.
extern uint64_t deviceArrayFrees;
/// asDeviceArray for everything but an initialized object of exactly that class.
const DeviceNDArray *asDeviceArraySlow(PyObject *o);
} // namespace detail

/// The DeviceNDArray behind `o`, or null when `o` is not one. Cheap: inline, as launches read
/// every argument through it, the value pointer comes straight from pybind11's instance record
/// (its common single-base layout) without the registered-type lookup of a cast. Forced inline:
/// GCC had made it a call from the launch's packer, 18 instructions per array argument.
[[gnu::always_inline]] inline const DeviceNDArray *asDeviceArray(PyObject *o) {
  if (Py_TYPE(o) == detail::deviceArrayType) [[likely]] {
    auto *inst = reinterpret_cast<py::detail::instance *>(o);
    if (inst->simple_layout && inst->simple_holder_constructed) [[likely]]
      return static_cast<const DeviceNDArray *>(inst->simple_value_holder[0]);
  }
  return detail::asDeviceArraySlow(o);
}
/// asDeviceArray for the code that made `o` and still completes it (markReadonly).
DeviceNDArray *asMutableDeviceArray(PyObject *o);

/// A device array over memory someone else owns (imported through __cuda_array_interface__ or
/// DLPack) whose first element is at `address`: the span its elements reach becomes the
/// allocation, and `owner` (kept with the array and its views) keeps the memory alive. Device
/// memory of device `device` (-1: the calling thread's current device) when `onDevice`, else host
/// memory (the CPU backend). Scalar dtypes only (TypeError otherwise).
py::object wrapForeignMemory(uint64_t address, const std::vector<int64_t> &shape,
                             const std::vector<int64_t> &strides, py::object dtype,
                             py::object owner, py::object stream, codegen::Backend backend,
                             bool onDevice, int device = -1);

/// For a device array whose device() differs from the calling thread's current device (callers
/// compare first: one compare per array on the launch path): returns when the array is in host
/// memory (CPU backend) or the current device has peer access to the array's device enabled,
/// else throws py::value_error naming `what` (e.g. "argument 2"), both devices and the ways
/// out.
void checkArrayPeer(const DeviceNDArray &arr, const std::string &what);

/// Registers DeviceNDArray, to_device(), device_array(), _store_first(), _wrap_memory().
void defineDeviceArrays(py::module_ &m);

} // namespace ptxjit::bindings
