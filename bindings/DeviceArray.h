// Device arrays: cuda.to_device, cuda.device_array and the DeviceNDArray class. On the CPU
// backend they live in host memory (runtime::allocateHost) and behave the same.
#pragma once

#include "bindings/ArgTypes.h"
#include "codegen/CompileOptions.h"
#include "runtime/Memory.h"

#include <pybind11/pybind11.h>

#include <memory>
#include <vector>

namespace ptxjit::bindings {

namespace py = pybind11;

class DeviceNDArray {
public:
  /// A view of `alloc` starting at byte `offset` with the given geometry (strides >= 0, the
  /// extent within the allocation). A DType::Record array reads its record type from `npDtype`
  /// (a structured numpy.dtype); throws py::type_error when ptxjit cannot type it.
  DeviceNDArray(std::shared_ptr<runtime::Allocation> alloc, size_t offset,
                std::vector<int64_t> shape, std::vector<int64_t> strides, DType dtype,
                py::object npDtype, codegen::Backend backend, py::object stream);

  DType dtype() const { return dtype_; }
  /// DType::Record: the record type of the elements (null otherwise).
  const ir::RecordType *record() const { return record_; }
  const py::object &numpyDtype() const { return npDtype_; }
  int itemsize() const { return record_ ? static_cast<int>(record_->size()) : dtypeSize(dtype_); }
  int ndim() const { return static_cast<int>(shape_.size()); }
  const std::vector<int64_t> &shape() const { return shape_; }
  const std::vector<int64_t> &strides() const { return strides_; }
  int64_t size() const;
  /// Bytes from the first element to the end of the last (0 for empty arrays).
  size_t extent() const { return extent_; }
  /// The address kernels use (device address, or host address on the CPU backend).
  uint64_t address() const { return alloc_->address() + offset_; }
  size_t offset() const { return offset_; }
  const std::shared_ptr<runtime::Allocation> &allocation() const { return alloc_; }
  codegen::Backend backend() const { return backend_; }
  ir::Layout layout() const { return layout_; }
  /// The fingerprint code of this array as a kernel argument.
  uint32_t code() const { return code_; }
  /// True for numba's DeviceRecord: `cuda.to_device(record_scalar)`, a 0-d array of a record
  /// dtype that kernels take as a record (by reference), not as a 0-d array.
  bool recordScalar() const { return (code_ & codes::kTagMask) == codes::kRecord; }
  /// Makes this 0-d array of a record dtype a record scalar (see recordScalar).
  void markRecordScalar();
  /// The stream the array was made with (None: the default stream).
  const py::object &stream() const { return stream_; }

  /// The host array given to to_device (None otherwise), for to_host().
  py::object hostArray;

private:
  std::shared_ptr<runtime::Allocation> alloc_;
  size_t offset_;
  std::vector<int64_t> shape_, strides_;
  DType dtype_;
  const ir::RecordType *record_ = nullptr;
  py::object npDtype_;
  codegen::Backend backend_;
  py::object stream_;
  size_t extent_ = 0;
  ir::Layout layout_ = ir::Layout::C;
  uint32_t code_ = 0;
};

/// The Python object of a new DeviceNDArray (cheaper than py::cast: no per-call type lookup).
py::object wrapDeviceArray(std::shared_ptr<DeviceNDArray> arr);

/// The DeviceNDArray behind `o`, or null when `o` is not one. Cheap (a type check).
const DeviceNDArray *asDeviceArray(PyObject *o);

/// Registers DeviceNDArray, to_device(), device_array(), _store_first().
void defineDeviceArrays(py::module_ &m);

} // namespace ptxjit::bindings
