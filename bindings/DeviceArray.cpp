#include "bindings/DeviceArray.h"

#include "bindings/Streams.h"
#include "bindings/Target.h"
#include "ufunc/Broadcast.h"

#include <pybind11/stl.h>

#include <stdexcept>

namespace ptxjit::bindings {
namespace {

PyTypeObject *gDeviceArrayType = nullptr;

std::string shapeStr(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += std::to_string(shape[i]) + (shape.size() == 1 ? "," : i + 1 < shape.size() ? ", " : "");
  return s + ")";
}

py::tuple toTuple(const std::vector<int64_t> &v) {
  py::tuple t(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    t[i] = py::int_(v[i]);
  return t;
}

py::object numpy() { return numpyApi().module; }

/// A host array viewing a fresh buffer of `extent` bytes with the device array's geometry.
py::object hostStaging(const DeviceNDArray &d) {
  py::object buf = numpy().attr("empty")(py::int_(std::max<size_t>(d.extent(), 1)), "uint8");
  return numpy().attr("ndarray")(toTuple(d.shape()), d.numpyDtype(), buf, 0, toTuple(d.strides()));
}

void *arrayData(py::handle a) { return numpyFields(a.ptr()).data; }

/// True when host array `a` has exactly the device array's strides and the device array is
/// contiguous (so `extent` bytes from a's data are exactly its elements).
bool sameContiguousGeometry(py::handle a, const DeviceNDArray &d) {
  NumpyArrayFields f = numpyFields(a.ptr());
  if (f.ndim != d.ndim() || d.layout() == ir::Layout::A)
    return false;
  for (int k = 0; k < f.ndim; ++k)
    if (f.shape[k] != d.shape()[k] || (f.strides[k] != d.strides()[k] && f.shape[k] != 1))
      return false;
  return static_cast<int64_t>(d.extent()) == d.size() * d.itemsize();
}

void checkCompatible(const DeviceNDArray &d, py::handle a, const char *what) {
  NumpyArrayFields f = numpyFields(a.ptr());
  std::vector<int64_t> shape(f.shape, f.shape + f.ndim);
  if (shape != d.shape())
    throw std::invalid_argument(std::string(what) + ": incompatible shape " + shapeStr(shape) +
                                " for a device array of shape " + shapeStr(d.shape()));
  if (!py::cast<bool>(
          py::reinterpret_borrow<py::object>(a).attr("dtype").attr("__eq__")(d.numpyDtype())))
    throw py::type_error(
        std::string(what) + ": incompatible dtype " +
        py::cast<std::string>(py::str(py::reinterpret_borrow<py::object>(a).attr("dtype"))) +
        " for a device array of dtype " + py::cast<std::string>(py::str(d.numpyDtype())));
}

CUstream streamFor(const DeviceNDArray &d, py::handle stream) {
  return streamHandle(stream, d.backend());
}

void copyToDevice(DeviceNDArray &d, py::handle src, py::handle stream) {
  if (const DeviceNDArray *s = asDeviceArray(src.ptr())) {
    if (s->shape() != d.shape() || s->dtype() != d.dtype())
      throw std::invalid_argument("copy_to_device: incompatible shape or dtype");
    if (s->strides() != d.strides() || s->layout() == ir::Layout::A)
      throw std::invalid_argument("copy_to_device: device-to-device copies need arrays of the "
                                  "same contiguous layout");
    if (s->backend() != d.backend())
      throw std::invalid_argument("copy_to_device: the arrays belong to different backends");
    CUstream h = streamFor(d, stream);
    py::gil_scoped_release release;
    runtime::copyAllocation(*d.allocation(), d.offset(), *s->allocation(), s->offset(), d.extent(),
                            h);
    return;
  }
  py::object a = numpy().attr("asarray")(src);
  checkCompatible(d, a, "copy_to_device");
  if (d.extent() == 0)
    return;
  CUstream h = streamFor(d, stream);
  py::object from = a;
  if (!sameContiguousGeometry(a, d)) {
    from = hostStaging(d);
    from.attr("__setitem__")(py::ellipsis(), a);
  }
  void *p = arrayData(from);
  size_t n = d.extent();
  py::gil_scoped_release release;
  d.allocation()->upload(p, n, d.offset(), h);
}

py::object copyToHost(const DeviceNDArray &d, py::object ary, py::handle stream) {
  CUstream h = streamFor(d, stream);
  if (ary.is_none()) {
    py::object out = hostStaging(d);
    if (d.extent() > 0) {
      void *p = arrayData(out);
      size_t n = d.extent();
      py::gil_scoped_release release;
      d.allocation()->download(p, n, d.offset(), h);
    }
    return out;
  }
  if (!isNumpyArray(ary.ptr()))
    throw py::type_error("copy_to_host: ary must be a NumPy array");
  checkCompatible(d, ary, "copy_to_host");
  if (!(numpyFields(ary.ptr()).flags & kNpyWriteable))
    throw std::invalid_argument("copy_to_host: the destination array is read-only");
  if (d.extent() == 0)
    return ary;
  if (sameContiguousGeometry(ary, d)) {
    void *p = arrayData(ary);
    size_t n = d.extent();
    py::gil_scoped_release release;
    d.allocation()->download(p, n, d.offset(), h);
    return ary;
  }
  py::object tmp = copyToHost(d, py::none(), stream);
  // Copies into pageable memory return once complete, so tmp is filled here.
  ary.attr("__setitem__")(py::ellipsis(), tmp);
  return ary;
}

std::shared_ptr<DeviceNDArray> makeDeviceArray(const std::vector<int64_t> &shape,
                                               const std::vector<int64_t> &strides,
                                               py::object npDtype, py::handle stream,
                                               codegen::Backend backend) {
  DType d = dtypeFromNumpy(npDtype);
  int itemsize = dtypeSize(d);
  if (d == DType::Invalid && !npDtype.attr("names").is_none()) {
    std::string why;
    const ir::RecordType *r = recordOfDescr(npDtype.ptr(), why);
    if (!r)
      throw py::type_error("device arrays of dtype " + py::cast<std::string>(py::str(npDtype)) +
                           " are not supported: " + why);
    d = DType::Record;
    itemsize = static_cast<int>(r->size());
  }
  if (d == DType::Invalid)
    throw py::type_error("device arrays of dtype " + py::cast<std::string>(py::str(npDtype)) +
                         " are not supported");
  if (shape.size() > static_cast<size_t>(kMaxDims))
    throw std::invalid_argument("device arrays have at most " + std::to_string(kMaxDims) +
                                " dimensions");
  if (strides.size() != shape.size())
    throw std::invalid_argument("strides must have one entry per dimension");
  size_t extent = 0;
  bool empty = false;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] < 0)
      throw std::invalid_argument("negative dimensions are not allowed");
    if (strides[k] < 0)
      throw std::invalid_argument("device arrays need non-negative strides");
    empty = empty || shape[k] == 0;
  }
  if (!empty) {
    int64_t last = 0, term = 0;
    for (size_t k = 0; k < shape.size(); ++k)
      if (__builtin_mul_overflow(shape[k] - 1, strides[k], &term) ||
          __builtin_add_overflow(last, term, &last))
        throw std::invalid_argument("device array too large: shape " + shapeStr(shape));
    if (__builtin_add_overflow(last, static_cast<int64_t>(itemsize), &last))
      throw std::invalid_argument("device array too large: shape " + shapeStr(shape));
    extent = static_cast<size_t>(last);
  }
  CUstream h = streamHandle(stream, backend);
  std::shared_ptr<runtime::Allocation> alloc;
  {
    py::gil_scoped_release release;
    alloc = backend == codegen::Backend::CUDA ? runtime::allocateDevice(extent, h)
                                              : runtime::allocateHost(extent);
  }
  return std::make_shared<DeviceNDArray>(std::move(alloc), 0, shape, strides, d, std::move(npDtype),
                                         backend, streamObject(stream));
}

std::shared_ptr<DeviceNDArray> toDevice(py::object ary, py::object stream, bool copy) {
  // A record scalar (numpy.void) becomes numba's DeviceRecord: kernels take it as a record.
  bool recordScalar = PyObject_TypeCheck(ary.ptr(), numpyApi().voidScalar) &&
                      !ary.attr("dtype").attr("names").is_none();
  if (!isNumpyArray(ary.ptr()))
    ary = numpy().attr("asarray")(ary);
  NumpyArrayFields f = numpyFields(ary.ptr());
  std::vector<int64_t> shape(f.shape, f.shape + f.ndim);
  py::object dtype = ary.attr("dtype");
  int itemsize = py::cast<int>(dtype.attr("itemsize"));
  bool fortran = !(f.flags & kNpyCContiguous) && (f.flags & kNpyFContiguous) && f.ndim > 1;
  auto strides = ufunc::contiguousStrides(shape, std::max(itemsize, 1), fortran);
  auto dev = makeDeviceArray(shape, strides, dtype, stream, currentBackend());
  if (copy)
    copyToDevice(*dev, ary, stream);
  if (recordScalar)
    dev->markRecordScalar();
  dev->hostArray = ary;
  return dev;
}

std::shared_ptr<DeviceNDArray> view(const DeviceNDArray &d, std::vector<int64_t> shape,
                                    std::vector<int64_t> strides) {
  auto v = std::make_shared<DeviceNDArray>(d.allocation(), d.offset(), std::move(shape),
                                           std::move(strides), d.dtype(), d.numpyDtype(),
                                           d.backend(), d.stream());
  return v;
}

std::shared_ptr<DeviceNDArray> reshape(const DeviceNDArray &d, std::vector<int64_t> shape,
                                       const std::string &order) {
  int64_t known = 1;
  int unknown = -1;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == -1) {
      if (unknown >= 0)
        throw std::invalid_argument("can only specify one unknown dimension");
      unknown = static_cast<int>(k);
    } else if (shape[k] < 0) {
      throw std::invalid_argument("negative dimensions are not allowed");
    } else {
      known *= shape[k];
    }
  }
  if (unknown >= 0) {
    if (known == 0 || d.size() % known != 0)
      throw std::invalid_argument("cannot reshape array of size " + std::to_string(d.size()) +
                                  " into shape " + shapeStr(shape));
    shape[unknown] = d.size() / known;
    known *= shape[unknown];
  }
  if (known != d.size())
    throw std::invalid_argument("cannot reshape array of size " + std::to_string(d.size()) +
                                " into shape " + shapeStr(shape));
  bool fortran = order == "F";
  if (order != "C" && order != "F")
    throw std::invalid_argument("order must be 'C' or 'F'");
  bool ok = d.ndim() <= 1 || (fortran ? d.layout() == ir::Layout::F : d.layout() == ir::Layout::C);
  if (d.ndim() > 1 && d.layout() == ir::Layout::C && fortran && shape.size() <= 1)
    ok = true;
  if (!ok)
    throw py::value_error("reshape: the operation requires copying (the array is not " +
                          std::string(fortran ? "Fortran" : "C") + "-contiguous)");
  return view(d, shape, ufunc::contiguousStrides(shape, d.itemsize(), fortran));
}

py::dict cudaArrayInterface(const DeviceNDArray &d) {
  if (d.backend() != codegen::Backend::CUDA)
    throw py::attribute_error("__cuda_array_interface__: device arrays of the CPU backend live in "
                              "host memory");
  py::dict iface;
  iface["shape"] = toTuple(d.shape());
  iface["strides"] =
      d.layout() == ir::Layout::C ? py::object(py::none()) : py::object(toTuple(d.strides()));
  iface["data"] = py::make_tuple(py::int_(d.size() == 0 ? 0 : d.address()), false);
  iface["typestr"] = d.numpyDtype().attr("str");
  iface["descr"] = d.record()
                       ? py::object(d.numpyDtype().attr("descr"))
                       : py::object(py::make_tuple(py::make_tuple("", d.numpyDtype().attr("str"))));
  py::object s = d.stream();
  iface["stream"] =
      s.is_none()
          ? py::object(py::none())
          : py::object(py::int_(reinterpret_cast<uintptr_t>(s.cast<const PyStream &>().handle())));
  iface["version"] = 3;
  return iface;
}

} // namespace

DeviceNDArray::DeviceNDArray(std::shared_ptr<runtime::Allocation> alloc, size_t offset,
                             std::vector<int64_t> shape, std::vector<int64_t> strides, DType dtype,
                             py::object npDtype, codegen::Backend backend, py::object stream)
    : alloc_(std::move(alloc)), offset_(offset), shape_(std::move(shape)),
      strides_(std::move(strides)), dtype_(dtype), npDtype_(std::move(npDtype)), backend_(backend),
      stream_(std::move(stream)) {
  if (dtype_ == DType::Record) {
    std::string why;
    record_ = recordOfDescr(npDtype_.ptr(), why);
    if (!record_)
      throw py::type_error("device arrays of dtype " + py::cast<std::string>(py::str(npDtype_)) +
                           " are not supported: " + why);
  }
  bool empty = false;
  int64_t last = 0;
  for (size_t k = 0; k < shape_.size(); ++k) {
    empty = empty || shape_[k] == 0;
    last += (shape_[k] - 1) * strides_[k];
  }
  extent_ = empty ? 0 : static_cast<size_t>(last) + itemsize();
  layout_ = layoutFromStrides(ndim(), shape_.data(), strides_.data(), itemsize());
  code_ = record_ ? codes::recordArray(recordId(record_), ndim(), layout_, false)
                  : codes::array(dtype_, ndim(), layout_, false);
}

void DeviceNDArray::markRecordScalar() {
  if (!record_ || ndim() != 0)
    throw std::logic_error("only a 0-d device array of a record dtype is a record scalar");
  code_ = codes::record(recordId(record_));
}

int64_t DeviceNDArray::size() const {
  int64_t n = 1;
  for (int64_t s : shape_)
    n *= s;
  return n;
}

py::object wrapDeviceArray(std::shared_ptr<DeviceNDArray> arr) {
  // py::cast(arr) without its per-call lookup of the registered type (by type name).
  static const py::detail::type_info *type = py::detail::get_type_info(typeid(DeviceNDArray));
  DeviceNDArray *raw = arr.get();
  py::object o = py::reinterpret_steal<py::object>(py::detail::type_caster_generic::cast(
      raw, py::return_value_policy::take_ownership, py::handle(), type, nullptr, nullptr, &arr));
  if (!o)
    throw py::error_already_set();
  return o;
}

const DeviceNDArray *asDeviceArray(PyObject *o) {
  if (!gDeviceArrayType)
    return nullptr;
  if (Py_TYPE(o) != gDeviceArrayType && !PyObject_TypeCheck(o, gDeviceArrayType))
    return nullptr;
  // The value pointer straight from pybind11's instance record (its common, single-base layout)
  // avoids the registered-type lookup of a cast on every launch.
  auto *inst = reinterpret_cast<py::detail::instance *>(o);
  if (inst->simple_layout) {
    if (!inst->simple_holder_constructed)
      throw py::type_error("this DeviceNDArray was never initialized");
    return static_cast<const DeviceNDArray *>(inst->simple_value_holder[0]);
  }
  return py::handle(o).cast<const DeviceNDArray *>();
}

void defineDeviceArrays(py::module_ &m) {
  py::class_<DeviceNDArray, std::shared_ptr<DeviceNDArray>> cls(
      m, "DeviceNDArray", "An array in device memory (host memory on the CPU backend).");
  cls.def_property_readonly("shape", [](const DeviceNDArray &d) { return toTuple(d.shape()); })
      .def_property_readonly("strides", [](const DeviceNDArray &d) { return toTuple(d.strides()); })
      .def_property_readonly("dtype", [](const DeviceNDArray &d) { return d.numpyDtype(); })
      .def_property_readonly("ndim", &DeviceNDArray::ndim)
      .def_property_readonly("size", &DeviceNDArray::size)
      .def_property_readonly("nbytes",
                             [](const DeviceNDArray &d) { return d.size() * d.itemsize(); })
      .def_property_readonly("alloc_size", &DeviceNDArray::extent)
      .def_property_readonly("stream",
                             [](const DeviceNDArray &d) {
                               return d.stream().is_none() ? py::object(py::int_(0)) : d.stream();
                             })
      .def_property_readonly("backend",
                             [](const DeviceNDArray &d) { return backendName(d.backend()); })
      .def_property_readonly("device_ctypes_pointer",
                             [](const DeviceNDArray &d) {
                               return py::module_::import("ctypes").attr("c_void_p")(
                                   py::int_(d.size() == 0 ? 0 : d.address()));
                             })
      .def_property_readonly("__cuda_array_interface__", &cudaArrayInterface)
      .def("__len__",
           [](const DeviceNDArray &d) {
             if (d.ndim() == 0)
               throw py::type_error("len() of unsized object");
             return d.shape()[0];
           })
      .def("is_c_contiguous", [](const DeviceNDArray &d) { return d.layout() == ir::Layout::C; })
      .def("is_f_contiguous",
           [](const DeviceNDArray &d) {
             return d.layout() == ir::Layout::F || (d.ndim() <= 1 && d.layout() == ir::Layout::C);
           })
      .def(
          "copy_to_host",
          [](const DeviceNDArray &d, py::object ary, py::handle stream) {
            bool fresh = ary.is_none();
            py::object out = copyToHost(d, std::move(ary), stream);
            // A DeviceRecord comes back as a record scalar (numpy.void), as numba's does.
            return fresh && d.recordScalar() ? py::object(out[py::tuple()]) : out;
          },
          py::arg("ary") = py::none(), py::arg("stream") = 0,
          "Copies to a new host array (or into `ary`) and returns it; a device record "
          "(cuda.to_device of a record scalar) comes back as a numpy.void.")
      .def(
          "to_host",
          [](const DeviceNDArray &d, py::object stream) {
            if (d.hostArray.is_none())
              throw py::value_error("to_host(): this device array was not made by "
                                    "cuda.to_device(); use copy_to_host()");
            return copyToHost(d, d.hostArray, stream);
          },
          py::arg("stream") = 0,
          "Copies back into the host array given to cuda.to_device() and returns it.")
      .def(
          "copy_to_device",
          [](DeviceNDArray &d, py::object ary, py::object stream) { copyToDevice(d, ary, stream); },
          py::arg("ary"), py::arg("stream") = 0, "Fills the device array from a host array.")
      .def(
          "reshape",
          [](const DeviceNDArray &d, py::args args, py::kwargs kw) {
            std::string order = kw.contains("order") ? py::cast<std::string>(kw["order"]) : "C";
            std::vector<int64_t> shape;
            if (args.size() == 1 && !PyLong_Check(args[0].ptr()))
              shape = py::cast<std::vector<int64_t>>(args[0]);
            else
              shape = py::cast<std::vector<int64_t>>(args);
            return reshape(d, shape, order);
          },
          "A view with another shape (contiguous arrays only).")
      .def(
          "ravel",
          [](const DeviceNDArray &d, const std::string &order) {
            return reshape(d, {d.size()}, order);
          },
          py::arg("order") = "C")
      .def("transpose",
           [](const DeviceNDArray &d) {
             return view(d, {d.shape().rbegin(), d.shape().rend()},
                         {d.strides().rbegin(), d.strides().rend()});
           })
      .def_property_readonly("T",
                             [](const DeviceNDArray &d) {
                               return view(d, {d.shape().rbegin(), d.shape().rend()},
                                           {d.strides().rbegin(), d.strides().rend()});
                             })
      .def(
          "__array__",
          [](const DeviceNDArray &d, py::object dtype, py::object) {
            py::object a = copyToHost(d, py::none(), py::int_(0));
            return dtype.is_none() ? a : a.attr("astype")(dtype);
          },
          py::arg("dtype") = py::none(), py::arg("copy") = py::none())
      .def("__repr__", [](const DeviceNDArray &d) {
        return "<ptxjit DeviceNDArray shape=" + shapeStr(d.shape()) +
               " dtype=" + py::cast<std::string>(py::str(d.numpyDtype())) + " on " +
               backendName(d.backend()) + ">";
      });
  gDeviceArrayType = reinterpret_cast<PyTypeObject *>(cls.ptr());

  m.def("to_device", &toDevice, py::arg("ary"), py::arg("stream") = 0, py::arg("copy") = true);
  m.def(
      "_store_first",
      [](py::object array, py::object value) {
        const DeviceNDArray *d = asDeviceArray(array.ptr());
        if (!d)
          throw py::type_error("res must be a device array, not " +
                               std::string(Py_TYPE(array.ptr())->tp_name));
        if (d->size() < 1)
          throw py::value_error("res must have at least one element");
        py::object v = numpy().attr("asarray")(value, d->numpyDtype());
        const void *p = numpyFields(v.ptr()).data;
        d->allocation()->upload(p, static_cast<size_t>(d->itemsize()), d->offset());
      },
      py::arg("array"), py::arg("value"),
      "Writes `value` into the first element of a device array (cuda.reduce's res=).");
  m.def(
      "device_array",
      [](std::vector<int64_t> shape, std::vector<int64_t> strides, py::object dtype,
         py::object stream) {
        return makeDeviceArray(shape, strides, std::move(dtype), stream, currentBackend());
      },
      py::arg("shape"), py::arg("strides"), py::arg("dtype"), py::arg("stream") = 0);
}

} // namespace ptxjit::bindings
