#include "bindings/DeviceArray.h"

#include "bindings/Streams.h"
#include "bindings/Target.h"
#include "runtime/Staging.h"
#include "ufunc/Broadcast.h"

#include <pybind11/stl.h>

#include <stdexcept>

namespace ptxjit::bindings {
PyTypeObject *detail::deviceArrayType = nullptr;
uint64_t detail::deviceArrayFrees = 0;

namespace {
/// pybind11's deallocator of the DeviceNDArray class, which countingDealloc wraps.
destructor gPybindDealloc = nullptr;

/// The class's tp_dealloc: counts the object (detail::deviceArrayFrees), then pybind11 frees it.
/// A Python subclass's deallocation reaches it too, as its base's tp_dealloc.
void countingDealloc(PyObject *self) {
  ++detail::deviceArrayFrees;
  gPybindDealloc(self);
}
} // namespace

namespace {

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

[[noreturn]] void notImplemented(const std::string &message) {
  PyErr_SetString(PyExc_NotImplementedError, message.c_str());
  throw py::error_already_set();
}

/// ptxjit._devicearray: the device-side copies (assignment and transpose kernels) written with
/// ptxjit's own cuda.jit.
py::object helpers() { return py::module_::import("ptxjit._devicearray"); }

/// numba-cuda's rule: an explicit stream argument wins, else the array's own stream.
py::object effectiveStream(const DeviceNDArray &d, py::handle stream) {
  if (!isDefaultStreamArg(stream.ptr()))
    return py::reinterpret_borrow<py::object>(stream);
  return d.stream().is_none() ? py::object(py::int_(0)) : d.stream();
}

CUstream streamFor(const DeviceNDArray &d, py::handle stream) {
  return streamHandle(effectiveStream(d, stream), d.backend());
}

/// A host array viewing a fresh buffer of the device array's span, with its geometry.
py::object hostStaging(const DeviceNDArray &d) {
  py::object buf = numpy().attr("empty")(py::int_(std::max<size_t>(d.extent(), 1)), "uint8");
  return numpy().attr("ndarray")(toTuple(d.shape()), d.numpyDtype(), buf,
                                 py::int_(d.offset() - d.spanOffset()), toTuple(d.strides()));
}

void *arrayData(py::handle a) { return numpyFields(a.ptr()).data; }

/// True when host array `a` has exactly the device array's shape and strides (ignoring axes of
/// length 1) and both are contiguous, so the span's bytes are exactly the elements.
bool sameContiguousGeometry(py::handle a, const DeviceNDArray &d) {
  NumpyArrayFields f = numpyFields(a.ptr());
  if (f.ndim != d.ndim() || !(d.cContiguous() || d.fContiguous()))
    return false;
  for (int k = 0; k < f.ndim; ++k)
    if (f.shape[k] != d.shape()[k] || (f.strides[k] != d.strides()[k] && f.shape[k] != 1))
      return false;
  return static_cast<int64_t>(d.extent()) == d.size() * d.itemsize();
}

std::vector<int64_t> squeezed(const std::vector<int64_t> &shape) {
  std::vector<int64_t> out;
  for (int64_t s : shape)
    if (s != 1)
      out.push_back(s);
  return out;
}

/// Host array `a` checked against device array `d` as numba-cuda does (same dtype; same shape
/// once axes of length 1 are dropped) and given d's shape.
py::object compatibleHost(const DeviceNDArray &d, py::object a, const char *what) {
  if (!py::cast<bool>(a.attr("dtype").attr("__eq__")(d.numpyDtype())))
    throw py::type_error(std::string(what) + ": incompatible dtype: " +
                         py::cast<std::string>(py::str(a.attr("dtype"))) + " vs. " +
                         py::cast<std::string>(py::str(d.numpyDtype())));
  NumpyArrayFields f = numpyFields(a.ptr());
  std::vector<int64_t> shape(f.shape, f.shape + f.ndim);
  if (shape == d.shape())
    return a;
  if (squeezed(shape) != squeezed(d.shape()))
    throw py::value_error(std::string(what) + ": incompatible shape: " + shapeStr(shape) + " vs. " +
                          shapeStr(d.shape()));
  return a.attr("reshape")(toTuple(d.shape()));
}

std::shared_ptr<DeviceNDArray> makeView(const DeviceNDArray &d, const runtime::ArrayGeometry &g,
                                        py::object stream) {
  auto v = std::make_shared<DeviceNDArray>(d.allocation(), static_cast<size_t>(g.offset), g.shape,
                                           g.strides, d.dtype(), d.numpyDtype(), d.backend(),
                                           std::move(stream));
  v->owner = d.owner;
  if (d.readonly())
    v->markReadonly();
  return v;
}

runtime::ArrayGeometry geometryOf(const DeviceNDArray &d) {
  return {d.shape(), d.strides(), static_cast<int64_t>(d.offset())};
}

/// The stream object a view made with `stream` (0: the array's own) remembers.
py::object viewStream(const DeviceNDArray &d, py::handle stream) {
  return isDefaultStreamArg(stream.ptr()) ? d.stream() : streamObject(stream);
}

// ---- Copies -------------------------------------------------------------------------------

py::object copyToHost(const DeviceNDArray &d, py::object ary, py::handle stream);

void copyToDevice(DeviceNDArray &d, py::handle src, py::handle stream) {
  d.checkWritable();
  const DeviceNDArray *s = asDeviceArray(src.ptr());
  if (!s && !isNumpyArray(src.ptr()) &&
      PyObject_HasAttrString(src.ptr(), "__cuda_array_interface__"))
    return copyToDevice(d, helpers().attr("as_device_array")(src), stream);
  if (s) {
    if (s->size() == 0)
      return;
    if (s->backend() != d.backend())
      throw std::invalid_argument("copy_to_device: the arrays belong to different backends");
    if (s->dtype() == d.dtype() && squeezed(s->shape()) == squeezed(d.shape()) &&
        squeezed(s->strides()) == squeezed(d.strides()) &&
        ((s->cContiguous() && d.cContiguous()) || (s->fContiguous() && d.fContiguous())) &&
        s->extent() == d.extent()) {
      CUstream h = streamFor(d, stream);
      py::gil_scoped_release release;
      runtime::copyAllocation(*d.allocation(), d.spanOffset(), *s->allocation(), s->spanOffset(),
                              d.extent(), h);
      return;
    }
    // Other layouts, dtypes or broadcasts: element by element on the device.
    helpers().attr("assign")(wrapDeviceArray(makeView(d, geometryOf(d), d.stream())), src,
                             effectiveStream(d, stream));
    return;
  }
  py::object a = numpy().attr("asarray")(src);
  if (py::cast<int64_t>(a.attr("size")) == 0)
    return;
  if (!(d.cContiguous() || d.fContiguous())) {
    // The span of a strided view holds elements of other arrays between its own: filled on the
    // device, element by element.
    compatibleHost(d, a, "copy_to_device");
    helpers().attr("assign")(wrapDeviceArray(makeView(d, geometryOf(d), d.stream())), a,
                             effectiveStream(d, stream));
    return;
  }
  a = compatibleHost(d, a, "copy_to_device");
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
  d.allocation()->upload(p, n, d.spanOffset(), h);
}

py::object copyToHost(const DeviceNDArray &d, py::object ary, py::handle stream) {
  if (d.negativeStrides())
    // numba-cuda's rule (its tests expect it); a negatively strided view is copied back after
    // copying it on the device, e.g. d[::-1].copy_to_host() -> use d.copy_to_host()[::-1].
    notImplemented("D->H copy not implemented for negative strides: " + shapeStr(d.strides()));
  CUstream h = streamFor(d, stream);
  if (ary.is_none()) {
    py::object out = hostStaging(d);
    if (d.extent() > 0) {
      void *p = arrayData(out);
      size_t n = d.extent();
      py::gil_scoped_release release;
      d.allocation()->download(p, n, d.spanOffset(), h);
    }
    return out;
  }
  if (!isNumpyArray(ary.ptr()))
    throw py::type_error("copy_to_host: ary must be a NumPy array, not " +
                         std::string(Py_TYPE(ary.ptr())->tp_name));
  py::object target = compatibleHost(d, ary, "copy_to_host");
  if (!(numpyFields(ary.ptr()).flags & kNpyWriteable))
    throw std::invalid_argument("copy_to_host: the destination array is read-only");
  if (d.extent() == 0)
    return ary;
  if (sameContiguousGeometry(target, d)) {
    void *p = arrayData(target);
    size_t n = d.extent();
    py::gil_scoped_release release;
    d.allocation()->download(p, n, d.spanOffset(), h);
    return ary;
  }
  // Another layout (strided, Fortran order, ...): through a staging copy of the span, complete
  // before it is read (an asynchronous copy into pinned memory may still be running).
  py::object tmp = copyToHost(d, py::none(), stream);
  if (h) {
    py::gil_scoped_release release;
    runtime::synchronizeStream(h);
  }
  target.attr("__setitem__")(py::ellipsis(), tmp);
  return ary;
}

// ---- Construction ---------------------------------------------------------------------------

std::shared_ptr<DeviceNDArray> makeDeviceArray(const std::vector<int64_t> &shape,
                                               const std::vector<int64_t> &strides,
                                               py::object npDtype, py::handle stream,
                                               codegen::Backend backend) {
  DType d = dtypeFromNumpy(npDtype);
  int itemsize = dtypeSize(d);
  // Records and strings; the dtype's Python attributes are read only when it is not a number
  // (every device array of numbers is made here).
  auto numbered = [&] {
    if (!npDtype.attr("names").is_none())
      return true;
    std::string kind = py::cast<std::string>(npDtype.attr("kind"));
    return kind == "S" || kind == "U";
  };
  if (d == DType::Invalid && numbered()) {
    std::string why;
    const ir::Type *r = numberedDtypeOfDescr(npDtype.ptr(), why);
    if (!r)
      throw py::type_error("device arrays of dtype " + py::cast<std::string>(py::str(npDtype)) +
                           " are not supported: " + why);
    d = DType::Record;
    itemsize = static_cast<int>(numberedDtypeSize(r));
  }
  if (d == DType::Invalid)
    throw py::type_error("device arrays of dtype " + py::cast<std::string>(py::str(npDtype)) +
                         " are not supported");
  if (shape.size() > static_cast<size_t>(kMaxDims))
    throw std::invalid_argument("device arrays have at most " + std::to_string(kMaxDims) +
                                " dimensions");
  if (strides.size() != shape.size())
    throw std::invalid_argument("strides must have one entry per dimension");
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] < 0)
      throw std::invalid_argument("negative dimensions are not allowed");
    if (strides[k] < 0)
      throw std::invalid_argument("device arrays need non-negative strides");
  }
  runtime::Span span;
  try {
    span = runtime::spanOf(shape, strides, itemsize);
  } catch (const std::overflow_error &) {
    throw std::invalid_argument("device array too large: shape " + shapeStr(shape));
  }
  size_t extent = static_cast<size_t>(span.bytes());
  if (backend == codegen::Backend::CUDA)
    startCuda(); // the first allocation of a process opens its device with the memory pool
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

// ---- Indexing -------------------------------------------------------------------------------

std::vector<runtime::IndexItem> parseIndex(py::handle key) {
  py::tuple items =
      PyTuple_Check(key.ptr()) ? py::reinterpret_borrow<py::tuple>(key) : py::make_tuple(key);
  std::vector<runtime::IndexItem> out;
  for (py::handle it : items) {
    runtime::IndexItem item;
    PyObject *o = it.ptr();
    if (o == Py_None) {
      item.kind = runtime::IndexItem::Kind::NewAxis;
    } else if (o == Py_Ellipsis) {
      item.kind = runtime::IndexItem::Kind::Ellipsis;
    } else if (PySlice_Check(o)) {
      Py_ssize_t start, stop, step;
      if (PySlice_Unpack(o, &start, &stop, &step) < 0)
        throw py::error_already_set();
      item.kind = runtime::IndexItem::Kind::Slice;
      item.start = start;
      item.stop = stop;
      item.step = step;
    } else if (!PyBool_Check(o) && !isNumpyArray(o) && PyIndex_Check(o)) {
      Py_ssize_t v = PyNumber_AsSsize_t(o, PyExc_IndexError);
      if (v == -1 && PyErr_Occurred())
        throw py::error_already_set();
      item.value = v;
    } else {
      throw py::index_error(std::string("only integers, slices (`:`), ellipsis (`...`) and None "
                                        "are valid indices of a device array, not ") +
                            Py_TYPE(o)->tp_name);
    }
    out.push_back(item);
  }
  return out;
}

py::object getItem(const DeviceNDArray &d, py::handle key, py::handle stream) {
  runtime::IndexResult r = runtime::indexArray(geometryOf(d), parseIndex(key));
  py::object s = viewStream(d, stream);
  if (!r.element)
    return wrapDeviceArray(makeView(d, r.view, s));
  // One element: copied back into a NumPy scalar.
  py::object host = numpy().attr("empty")(1, d.numpyDtype());
  void *p = arrayData(host);
  CUstream h = streamFor(d, stream);
  {
    py::gil_scoped_release release;
    d.allocation()->download(p, static_cast<size_t>(d.itemsize()),
                             static_cast<size_t>(r.view.offset), h);
    if (h)
      runtime::synchronizeStream(h);
  }
  return host.attr("__getitem__")(0);
}

void setItem(const DeviceNDArray &d, py::handle key, py::handle value, py::handle stream) {
  d.checkWritable();
  runtime::IndexResult r = runtime::indexArray(geometryOf(d), parseIndex(key));
  auto lhs = makeView(d, r.view, d.stream());
  helpers().attr("assign")(wrapDeviceArray(lhs), value, effectiveStream(d, stream));
}

// ---- Views ----------------------------------------------------------------------------------

std::vector<int64_t> shapeArgs(py::args args) {
  if (args.size() == 1 && !PyIndex_Check(args[0].ptr()))
    return py::cast<std::vector<int64_t>>(args[0]);
  return py::cast<std::vector<int64_t>>(args);
}

std::shared_ptr<DeviceNDArray> reshape(const DeviceNDArray &d, std::vector<int64_t> shape,
                                       std::string order) {
  if (shape == d.shape())
    return makeView(d, geometryOf(d), d.stream());
  int64_t known = 1;
  int unknown = -1;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] < 0) {
      if (unknown >= 0)
        throw std::invalid_argument("can only specify one unknown dimension");
      unknown = static_cast<int>(k);
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
  if (shape.size() > static_cast<size_t>(kMaxDims))
    throw std::invalid_argument("device arrays have at most " + std::to_string(kMaxDims) +
                                " dimensions");
  if (order == "A")
    order = d.fContiguous() && !d.cContiguous() ? "F" : "C";
  if (order != "C" && order != "F")
    throw std::invalid_argument("order not C|F|A");
  auto strides = runtime::reshapeStrides(d.shape(), d.strides(), d.itemsize(), shape, order == "F");
  if (!strides)
    notImplemented("operation requires copying (reshape of a non-contiguous device "
                   "array)");
  return makeView(d, {shape, *strides, static_cast<int64_t>(d.offset())}, d.stream());
}

std::shared_ptr<DeviceNDArray> ravel(const DeviceNDArray &d, const std::string &order,
                                     py::handle stream) {
  if (order != "C" && order != "F" && order != "A")
    throw std::invalid_argument("order not C|F|A");
  bool ok = ((order == "C" || order == "A") && d.cContiguous()) ||
            ((order == "F" || order == "A") && d.fContiguous());
  if (!ok)
    notImplemented("ravel on non-contiguous array");
  // The first element of a contiguous array is the lowest one.
  return makeView(d, {{d.size()}, {d.itemsize()}, static_cast<int64_t>(d.spanOffset())},
                  viewStream(d, stream));
}

std::shared_ptr<DeviceNDArray> viewAs(const DeviceNDArray &d, py::object dtypeArg) {
  py::object npDtype = numpy().attr("dtype")(dtypeArg);
  DType dt = dtypeFromNumpy(npDtype);
  if (dt == DType::Invalid)
    throw py::type_error("device arrays of dtype " + py::cast<std::string>(py::str(npDtype)) +
                         " are not supported");
  std::vector<int64_t> shape = d.shape(), strides = d.strides();
  int newSize = dtypeSize(dt);
  if (newSize != d.itemsize()) {
    if (!d.cContiguous() || d.ndim() == 0)
      throw py::value_error("To change to a dtype of a different size, the array must be "
                            "C-contiguous");
    int64_t bytes = shape.back() * d.itemsize();
    if (bytes % newSize != 0)
      throw py::value_error("When changing to a larger dtype, its size must be a divisor of the "
                            "total size in bytes of the last axis of the array.");
    shape.back() = bytes / newSize;
    strides.back() = newSize;
  }
  auto v = std::make_shared<DeviceNDArray>(d.allocation(), d.offset(), shape, strides, dt, npDtype,
                                           d.backend(), d.stream());
  v->owner = d.owner;
  return v;
}

std::shared_ptr<DeviceNDArray> squeeze(const DeviceNDArray &d, py::object axis, py::handle stream) {
  std::vector<bool> drop(d.ndim(), false);
  if (axis.is_none()) {
    for (int k = 0; k < d.ndim(); ++k)
      drop[k] = d.shape()[k] == 1;
  } else {
    std::vector<int64_t> axes = PyTuple_Check(axis.ptr()) || PyList_Check(axis.ptr())
                                    ? py::cast<std::vector<int64_t>>(axis)
                                    : std::vector<int64_t>{py::cast<int64_t>(axis)};
    for (int64_t a : axes) {
      int64_t k = a < 0 ? a + d.ndim() : a;
      if (k < 0 || k >= d.ndim())
        throw py::index_error("axis " + std::to_string(a) +
                              " is out of bounds for array of "
                              "dimension " +
                              std::to_string(d.ndim()));
      if (d.shape()[k] != 1)
        throw py::value_error("cannot select an axis to squeeze out which has size not equal "
                              "to one");
      drop[k] = true;
    }
  }
  runtime::ArrayGeometry g{{}, {}, static_cast<int64_t>(d.offset())};
  for (int k = 0; k < d.ndim(); ++k)
    if (!drop[k]) {
      g.shape.push_back(d.shape()[k]);
      g.strides.push_back(d.strides()[k]);
    }
  return makeView(d, g, viewStream(d, stream));
}

py::object split(const DeviceNDArray &d, int64_t section, py::handle stream) {
  if (d.ndim() != 1)
    throw py::value_error("only support 1d array");
  if (d.strides()[0] != d.itemsize())
    throw py::value_error("only support unit stride");
  if (section <= 0)
    throw py::value_error("section must be a positive number of elements");
  py::list parts;
  py::object s = viewStream(d, stream);
  for (int64_t begin = 0; begin < d.size(); begin += section) {
    int64_t end = std::min(begin + section, d.size());
    parts.append(wrapDeviceArray(makeView(
        d, {{end - begin}, {d.itemsize()}, static_cast<int64_t>(d.offset()) + begin * d.itemsize()},
        s)));
  }
  return parts.attr("__iter__")();
}

/// Any geometry over the same memory (broadcasts for the assignment kernel); checked against
/// the allocation by DeviceNDArray's constructor.
std::shared_ptr<DeviceNDArray> asStrided(const DeviceNDArray &d, std::vector<int64_t> shape,
                                         std::vector<int64_t> strides) {
  if (shape.size() != strides.size() || shape.size() > static_cast<size_t>(kMaxDims))
    throw std::invalid_argument("_as_strided: one stride per dimension, at most " +
                                std::to_string(kMaxDims));
  for (int64_t s : shape)
    if (s < 0)
      throw std::invalid_argument("negative dimensions are not allowed");
  return makeView(d, {std::move(shape), std::move(strides), static_cast<int64_t>(d.offset())},
                  d.stream());
}

// ---- Interfaces -----------------------------------------------------------------------------

py::dict cudaArrayInterface(const DeviceNDArray &d) {
  if (d.backend() != codegen::Backend::CUDA)
    throw py::attribute_error("__cuda_array_interface__: device arrays of the CPU backend live in "
                              "host memory");
  py::dict iface;
  iface["shape"] = toTuple(d.shape());
  // numba-cuda's rule: strides are given unless the array is C-contiguous ignoring axes of
  // length 1 and broadcast axes (is_contiguous in its devicearray.py).
  bool contiguous = true;
  int64_t expect = d.itemsize();
  for (int k = d.ndim() - 1; k >= 0; --k) {
    if (d.shape()[k] > 1 && d.strides()[k] != 0) {
      if (d.strides()[k] != expect)
        contiguous = false;
      expect *= d.shape()[k];
    }
  }
  iface["strides"] = contiguous ? py::object(py::none()) : py::object(toTuple(d.strides()));
  iface["data"] = py::make_tuple(py::int_(d.size() == 0 ? 0 : d.address()), false);
  iface["typestr"] = d.numpyDtype().attr("str");
  iface["descr"] = d.numpyDtype().attr("descr");
  py::object s = d.stream();
  iface["stream"] = s.is_none() ? py::object(py::none()) : py::object(py::int_(s));
  iface["version"] = 3;
  return iface;
}

/// The bytes of a device array's span as (lowest address, one past the highest), for overlap
/// checks of copies on the device.
py::tuple memorySpan(const DeviceNDArray &d) {
  uint64_t lo = d.allocation()->address() + d.spanOffset();
  return py::make_tuple(py::int_(lo), py::int_(lo + d.extent()));
}

} // namespace

DeviceNDArray::DeviceNDArray(std::shared_ptr<runtime::Allocation> alloc, size_t offset,
                             std::vector<int64_t> shape, std::vector<int64_t> strides, DType dtype,
                             py::object npDtype, codegen::Backend backend, py::object stream)
    : alloc_(std::move(alloc)), offset_(offset), shape_(std::move(shape)),
      strides_(std::move(strides)), dtype_(dtype), itemsize_(dtypeSize(dtype)),
      npDtype_(std::move(npDtype)), backend_(backend), stream_(std::move(stream)) {
  if (dtype_ == DType::Record) {
    std::string why;
    record_ = numberedDtypeOfDescr(npDtype_.ptr(), why);
    if (!record_)
      throw py::type_error("device arrays of dtype " + py::cast<std::string>(py::str(npDtype_)) +
                           " are not supported: " + why);
    itemsize_ = static_cast<int>(numberedDtypeSize(record_));
  }
  runtime::Span span = runtime::spanOf(shape_, strides_, itemsize_);
  int64_t lo = static_cast<int64_t>(offset_) + span.begin;
  if (span.bytes() > 0 && (lo < 0 || static_cast<uint64_t>(lo + span.bytes()) > alloc_->size()))
    throw std::out_of_range("a device array view of shape " + shapeStr(shape_) + " and strides " +
                            shapeStr(strides_) + " reaches outside its memory");
  extent_ = static_cast<size_t>(span.bytes());
  spanOffset_ = span.bytes() > 0 ? static_cast<size_t>(lo) : offset_;
  layout_ = layoutFromStrides(ndim(), shape_.data(), strides_.data(), itemsize_);
  cContiguous_ = runtime::isCContiguous(shape_, strides_, itemsize_);
  fContiguous_ = runtime::isFContiguous(shape_, strides_, itemsize_);
  code_ = record_ ? codes::recordArray(recordId(record_), ndim(), layout_, false)
                  : codes::array(dtype_, ndim(), layout_, false);
}

void DeviceNDArray::markReadonly() {
  readonly_ = true;
  code_ = record_ ? codes::recordArray(recordId(record_), ndim(), layout_, true)
                  : codes::array(dtype_, ndim(), layout_, true);
}

void DeviceNDArray::checkWritable() const {
  if (readonly_)
    throw py::value_error("assignment destination is read-only");
}

void DeviceNDArray::markRecordScalar() {
  if (!record_ || !ir::isa<ir::RecordType>(record_) || ndim() != 0)
    throw std::logic_error("only a 0-d device array of a record dtype is a record scalar");
  code_ = codes::record(recordId(record_));
}

int64_t DeviceNDArray::size() const {
  int64_t n = 1;
  for (int64_t s : shape_)
    n *= s;
  return n;
}

bool DeviceNDArray::negativeStrides() const {
  for (size_t k = 0; k < shape_.size(); ++k)
    if (strides_[k] < 0 && shape_[k] > 1)
      return true;
  return false;
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

void checkArrayPeer(const DeviceNDArray &arr, const std::string &what) {
  if (arr.backend() == codegen::Backend::Host || !arr.allocation()->onDevice())
    return;
  int mine = arr.device(), current = runtime::Device::currentOrdinal();
  if (mine == current || runtime::Device::get(current).peerAccessEnabled(mine))
    return;
  std::string m = std::to_string(mine), c = std::to_string(current);
  throw py::value_error(what + " is a device array in the memory of device " + m +
                        ", but this thread's current device is " + c +
                        ": use it under `with cuda.gpus[" + m + "]:`, copy it to device " + c +
                        " (copy_to_device), or enable peer access first "
                        "(cuda.current_context().enable_peer_access(" +
                        m + ") on device " + c + ")");
}

DeviceNDArray *asMutableDeviceArray(PyObject *o) {
  return const_cast<DeviceNDArray *>(asDeviceArray(o));
}

py::object wrapForeignMemory(uint64_t address, const std::vector<int64_t> &shape,
                             const std::vector<int64_t> &strides, py::object dtype,
                             py::object owner, py::object stream, codegen::Backend backend,
                             bool onDevice, int device) {
  DType dt = dtypeFromNumpy(dtype);
  if (dt == DType::Invalid)
    throw py::type_error("device arrays of dtype " + py::cast<std::string>(py::str(dtype)) +
                         " are not supported");
  if (shape.size() != strides.size() || shape.size() > static_cast<size_t>(kMaxDims))
    throw std::invalid_argument("one stride per dimension, at most " + std::to_string(kMaxDims) +
                                " dimensions");
  runtime::Span span = runtime::spanOf(shape, strides, dtypeSize(dt));
  auto alloc = runtime::wrapMemory(address + span.begin, static_cast<size_t>(span.bytes()),
                                   onDevice, device);
  auto arr =
      std::make_shared<DeviceNDArray>(alloc, static_cast<size_t>(-span.begin), shape, strides, dt,
                                      std::move(dtype), backend, std::move(stream));
  arr->owner = std::move(owner);
  return wrapDeviceArray(std::move(arr));
}

const DeviceNDArray *detail::asDeviceArraySlow(PyObject *o) {
  if (!deviceArrayType)
    return nullptr;
  if (Py_TYPE(o) != deviceArrayType && !PyObject_TypeCheck(o, deviceArrayType))
    return nullptr;
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
      .def_property_readonly(
          "gpu_data",
          [](py::object self) {
            // numba-cuda's MemoryPointer, as far as users read it: the array's device address
            // (`int(d.gpu_data.device_pointer)`), holding the array alive.
            // Equal for arrays over the same bytes (a view(dtype)), as numba-cuda's views share
            // their MemoryPointer (ptxjit.devicearray.MemoryPointer).
            const auto &d = py::cast<const DeviceNDArray &>(self);
            uint64_t addr = d.size() == 0 ? 0 : d.address();
            return py::module_::import("ptxjit.devicearray")
                .attr("MemoryPointer")(py::int_(addr), d.extent(), self);
          })
      .def_property_readonly("device_ctypes_pointer",
                             [](const DeviceNDArray &d) {
                               return py::module_::import("ctypes").attr("c_void_p")(
                                   py::int_(d.size() == 0 ? 0 : d.address()));
                             })
      .def_property_readonly("flags",
                             [](const DeviceNDArray &d) {
                               py::dict f;
                               f["C_CONTIGUOUS"] = d.cContiguous();
                               f["F_CONTIGUOUS"] = d.fContiguous();
                               return f;
                             })
      .def_property_readonly("__cuda_array_interface__", &cudaArrayInterface)
      .def_property_readonly("_memory_span", &memorySpan)
      .def("__len__",
           [](const DeviceNDArray &d) {
             if (d.ndim() == 0)
               throw py::type_error("len() of unsized object");
             return d.shape()[0];
           })
      .def("is_c_contiguous", &DeviceNDArray::cContiguous)
      .def("is_f_contiguous", &DeviceNDArray::fContiguous)
      .def(
          "copy_to_host",
          [](const DeviceNDArray &d, py::object ary, py::handle stream) {
            bool fresh = ary.is_none();
            py::object out = copyToHost(d, std::move(ary), stream);
            // A DeviceRecord comes back as a record scalar (numpy.void), as numba's does.
            return fresh && d.recordScalar() ? py::object(out[py::tuple()]) : out;
          },
          py::arg("ary") = py::none(), py::arg("stream") = 0,
          "Copies to a new host array (or into `ary`, of any layout) and returns it; a device "
          "record (cuda.to_device of a record scalar) comes back as a numpy.void.")
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
          py::arg("ary"), py::arg("stream") = 0,
          "Fills the device array from a host array or another device array.")
      .def("__getitem__",
           [](const DeviceNDArray &d, py::handle key) { return getItem(d, key, py::int_(0)); })
      .def("getitem", &getItem, py::arg("item"), py::arg("stream") = 0, "__getitem__ on `stream`.")
      .def("__setitem__", [](const DeviceNDArray &d, py::handle key,
                             py::handle value) { setItem(d, key, value, py::int_(0)); })
      .def("setitem", &setItem, py::arg("key"), py::arg("value"), py::arg("stream") = 0,
           "__setitem__ on `stream`.")
      .def(
          "reshape",
          [](const DeviceNDArray &d, py::args args, py::kwargs kw) {
            std::string order = "C";
            for (auto item : kw) {
              if (py::cast<std::string>(item.first) != "order")
                throw py::type_error("reshape() got an unexpected keyword argument '" +
                                     py::cast<std::string>(item.first) + "'");
              order = py::cast<std::string>(item.second);
            }
            return reshape(d, shapeArgs(args), order);
          },
          "A view with another shape; NotImplementedError when that needs a copy.")
      .def("ravel", &ravel, py::arg("order") = "C", py::arg("stream") = 0,
           "A 1-d view of a contiguous array.")
      .def("view", &viewAs, py::arg("dtype"), "The same memory read as another dtype.")
      .def("squeeze", &squeeze, py::arg("axis") = py::none(), py::arg("stream") = 0,
           "A view without axes of length 1 (all of them, or those of `axis`).")
      .def("split", &split, py::arg("section"), py::arg("stream") = 0,
           "Views of consecutive pieces of `section` elements (1-d, unit stride).")
      .def(
          "bind",
          [](const DeviceNDArray &d, py::object stream) {
            auto v = makeView(d, geometryOf(d), d.stream());
            v->hostArray = d.hostArray;
            v->setStream(streamObject(stream));
            return v;
          },
          py::arg("stream") = 0, "The array with `stream` as its default stream.")
      .def(
          "transpose",
          [](py::object self, py::object axes) { return helpers().attr("transpose")(self, axes); },
          py::arg("axes") = py::none(), "A transposed copy (2-d), made on the device.")
      .def_property_readonly(
          "T", [](py::object self) { return helpers().attr("transpose")(self, py::none()); })
      .def("_as_strided", &asStrided, py::arg("shape"), py::arg("strides"))
      .def(
          "__array__",
          [](const DeviceNDArray &d, py::object dtype, py::object copy) {
            if (copy.ptr() == Py_False)
              throw py::value_error("`copy=False` is not supported. A copy is always created.");
            py::object a = copyToHost(d, py::none(), py::int_(0));
            return dtype.is_none() ? a : a.attr("astype")(dtype);
          },
          py::arg("dtype") = py::none(), py::arg("copy") = py::none())
      .def("__reduce__",
           [](py::object self) {
             // Pickled as its host copy; unpickled onto the current device.
             return py::make_tuple(helpers().attr("_unpickle"),
                                   py::make_tuple(helpers().attr("host_copy")(self)));
           })
      .def("__repr__", [](const DeviceNDArray &d) {
        return "<ptxjit DeviceNDArray shape=" + shapeStr(d.shape()) +
               " dtype=" + py::cast<std::string>(py::str(d.numpyDtype())) + " on " +
               backendName(d.backend()) + ">";
      });
  detail::deviceArrayType = reinterpret_cast<PyTypeObject *>(cls.ptr());
  // Before any instance exists (none can be made from Python: the class has no __init__).
  gPybindDealloc = detail::deviceArrayType->tp_dealloc;
  detail::deviceArrayType->tp_dealloc = countingDealloc;

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
        d->checkWritable();
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
  m.def(
      "_wrap_memory",
      [](uint64_t address, std::vector<int64_t> shape, std::vector<int64_t> strides,
         py::object dtype, py::object owner, py::object stream, bool hostMemory) {
        // A device array over memory someone else owns (__cuda_array_interface__ imports,
        // host memory mapped by cuda.mapped): the span its elements reach, relative to
        // `address`, becomes the allocation. Mapped host memory is device memory to CUDA
        // kernels and host memory to the CPU backend's.
        codegen::Backend backend = currentBackend();
        if (backend != codegen::Backend::CUDA && !hostMemory)
          throw py::type_error("arrays in GPU memory (__cuda_array_interface__) cannot be used "
                               "by the CPU backend");
        // The interface does not say whose memory it is: the driver does, so that a
        // `cuda:1` tensor imported while device 0 is current is checked as device 1's at
        // launch. Memory the driver names no device for (managed, host, unknown) and mapped
        // host memory count as the current device's.
        int device = -1;
        if (backend == codegen::Backend::CUDA && !hostMemory && address != 0)
          device = runtime::deviceOfPointer(address);
        return wrapForeignMemory(address, shape, strides, std::move(dtype), std::move(owner),
                                 streamObject(stream), backend,
                                 /*onDevice=*/backend == codegen::Backend::CUDA, device);
      },
      py::arg("address"), py::arg("shape"), py::arg("strides"), py::arg("dtype"), py::arg("owner"),
      py::arg("stream"), py::arg("host_memory") = false);
}

} // namespace ptxjit::bindings
