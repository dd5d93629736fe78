// kernel[griddim, blockdim, stream, sharedmem] and the call of the resulting LaunchConfig: the
// launch hot path, written against the CPython API (a type with vectorcall, and the
// Dispatcher type's subscript slot) so that a launch pays no pybind11 dispatch.
#include "bindings/DispatcherImpl.h"

#include "bindings/Errors.h"
#include "bindings/Streams.h"
#include "bindings/Target.h"

#include <pybind11/stl.h>
#include <structmember.h>

#include <climits>
#include <cstddef>
#include <cstdlib>
#include <optional>
#include <string>

namespace ptxjit::bindings {
namespace {

struct LaunchConfigObject {
  PyObject_HEAD vectorcallfunc vectorcall;
  PyObject *owner; ///< the Dispatcher object (strong reference)
  Dispatcher *dispatcher;
  runtime::Dim3 grid, block;
  unsigned sharedMem;
  PyObject *stream;    ///< strong reference: 0, None or a Stream
  int64_t forallTasks; ///< forall(): the task count (grid and block chosen at launch); else -1
  PyObject *callbacks; ///< pre_launch_callbacks: a list, made on first access (else null)
};

PyTypeObject *gLaunchConfigType = nullptr;

/// numba-cuda's threshold for the low-occupancy warning: fewer blocks than this.
constexpr uint64_t kLowOccupancyBlocks = 128;

[[noreturn]] void badDim(const char *what, const std::string &why) {
  throw py::value_error(std::string("invalid launch configuration: ") + what + " " + why);
}

/// Numba's spelling of a shape in messages: the items as a list, "[2.0]", "[1, 2, 3, 4]".
std::string dimsText(PyObject *v) {
  py::object seq = (PyTuple_Check(v) || PyList_Check(v))
                       ? py::reinterpret_borrow<py::object>(v)
                       : py::make_tuple(py::reinterpret_borrow<py::object>(v));
  return py::repr(py::list(seq)).cast<std::string>();
}

unsigned readDim(PyObject *x, PyObject *dims, const char *what) {
  long long n;
  if (PyLong_CheckExact(x)) {
    n = PyLong_AsLongLong(x);
  } else {
    if (PyBool_Check(x) || !PyIndex_Check(x))
      throw py::type_error(std::string(what) + " must be a sequence of integers, got " +
                           dimsText(dims) + " (an int or a tuple of 1 to 3 ints; " +
                           Py_TYPE(x)->tp_name + " is not an integer)");
    py::object idx = py::reinterpret_steal<py::object>(PyNumber_Index(x));
    if (!idx)
      throw py::error_already_set();
    n = PyLong_AsLongLong(idx.ptr());
  }
  if (n == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    badDim(what, "dimension does not fit in 64 bits");
  }
  if (n <= 0)
    badDim(what, "dimensions must be positive, got " + std::to_string(n));
  if (n > static_cast<long long>(UINT_MAX))
    badDim(what, "dimension " + std::to_string(n) + " is too large");
  return static_cast<unsigned>(n);
}

/// A grid or block shape from an int or a tuple/list of 1-3 ints.
runtime::Dim3 readDims(PyObject *v, const char *what) {
  runtime::Dim3 d;
  if (PyTuple_Check(v) || PyList_Check(v)) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
    if (n < 1 || n > 3)
      throw py::value_error(std::string("invalid launch configuration: ") + what +
                            " must be a sequence of 1, 2 or 3 integers, got " + dimsText(v));
    PyObject **items = PySequence_Fast_ITEMS(v);
    d.x = readDim(items[0], v, what);
    if (n > 1)
      d.y = readDim(items[1], v, what);
    if (n > 2)
      d.z = readDim(items[2], v, what);
    return d;
  }
  d.x = readDim(v, v, what);
  return d;
}

PyObject *launchVectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                           PyObject *kwnames) {
  auto *c = reinterpret_cast<LaunchConfigObject *>(self);
  if (kwnames && PyTuple_GET_SIZE(kwnames) > 0) {
    PyErr_Format(PyExc_TypeError, "kernel '%s' takes no keyword arguments",
                 c->dispatcher->name.c_str());
    return nullptr;
  }
  try {
    size_t nargs = PyVectorcall_NARGS(nargsf);
    if (c->callbacks && PyList_GET_SIZE(c->callbacks) > 0) [[unlikely]] {
      // numba-cuda's pre_launch_callbacks: callback(kernel, launch_config) before each launch.
      for (py::handle callback : py::list(py::reinterpret_borrow<py::list>(c->callbacks)))
        callback(py::handle(c->owner), py::handle(self));
    }
    if (PyList_GET_SIZE(c->dispatcher->extensions.ptr()) > 0) {
      // ptxjit._dispatcher.prepare_args: (arguments, callbacks to run after the launch)
      py::tuple given(nargs);
      for (size_t k = 0; k < nargs; ++k)
        given[k] = py::reinterpret_borrow<py::object>(args[k]);
      py::tuple prepared =
          py::module_::import("ptxjit._dispatcher")
              .attr("prepare_args")(c->dispatcher->extensions, given, py::handle(c->stream));
      py::tuple newArgs = prepared[0];
      c->dispatcher->launch(c->grid, c->block, c->sharedMem, c->stream, c->forallTasks,
                            &PyTuple_GET_ITEM(newArgs.ptr(), 0), newArgs.size());
      if (gGraphCaptures != 0)
        noteCapturedLaunch(py::handle(c->owner), *c->dispatcher, c->grid, c->block, c->sharedMem,
                           c->stream, &PyTuple_GET_ITEM(newArgs.ptr(), 0), newArgs.size());
      for (py::handle callback : py::list(prepared[1]))
        callback();
      Py_RETURN_NONE;
    }
    c->dispatcher->launch(c->grid, c->block, c->sharedMem, c->stream, c->forallTasks, args, nargs);
    if (gGraphCaptures != 0) [[unlikely]] // cuda.graph: the node this launch added
      noteCapturedLaunch(py::handle(c->owner), *c->dispatcher, c->grid, c->block, c->sharedMem,
                         c->stream, args, nargs);
  } catch (...) {
    setPythonError();
    return nullptr;
  }
  Py_RETURN_NONE;
}

void launchConfigDealloc(PyObject *self) {
  auto *c = reinterpret_cast<LaunchConfigObject *>(self);
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  Py_XDECREF(c->owner);
  Py_XDECREF(c->stream);
  Py_XDECREF(c->callbacks);
  tp->tp_free(self);
  Py_DECREF(tp);
}

// A configuration kept in the kernel's own module (`launch = kernel[grid, block]` in a namespace
// made by exec) is in a cycle through the kernel's function: the collector must see its
// references. Clearing drops only the callbacks: the owner stays, so a configuration the
// collector is tearing down can still be called by another object's finalizer.
int launchConfigTraverse(PyObject *self, visitproc visit, void *arg) {
  auto *c = reinterpret_cast<LaunchConfigObject *>(self);
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(c->owner);
  Py_VISIT(c->stream);
  Py_VISIT(c->callbacks);
  return 0;
}

int launchConfigClear(PyObject *self) {
  Py_CLEAR(reinterpret_cast<LaunchConfigObject *>(self)->callbacks);
  return 0;
}

PyObject *dimsTuple(const runtime::Dim3 &d) { return Py_BuildValue("(III)", d.x, d.y, d.z); }

PyObject *getGrid(PyObject *self, void *) {
  return dimsTuple(reinterpret_cast<LaunchConfigObject *>(self)->grid);
}
PyObject *getBlock(PyObject *self, void *) {
  return dimsTuple(reinterpret_cast<LaunchConfigObject *>(self)->block);
}
PyObject *getStream(PyObject *self, void *) {
  PyObject *s = reinterpret_cast<LaunchConfigObject *>(self)->stream;
  Py_INCREF(s);
  return s;
}
PyObject *getSharedMem(PyObject *self, void *) {
  return PyLong_FromUnsignedLong(reinterpret_cast<LaunchConfigObject *>(self)->sharedMem);
}
PyObject *getDispatcher(PyObject *self, void *) {
  PyObject *o = reinterpret_cast<LaunchConfigObject *>(self)->owner;
  Py_INCREF(o);
  return o;
}

PyObject *getCallbacks(PyObject *self, void *) {
  auto *c = reinterpret_cast<LaunchConfigObject *>(self);
  if (!c->callbacks && !(c->callbacks = PyList_New(0)))
    return nullptr;
  Py_INCREF(c->callbacks);
  return c->callbacks;
}

PyObject *launchConfigRepr(PyObject *self) {
  auto *c = reinterpret_cast<LaunchConfigObject *>(self);
  std::string s = "<ptxjit launch of '" + c->dispatcher->name + "' grid=(" +
                  std::to_string(c->grid.x) + ", " + std::to_string(c->grid.y) + ", " +
                  std::to_string(c->grid.z) + ") block=(" + std::to_string(c->block.x) + ", " +
                  std::to_string(c->block.y) + ", " + std::to_string(c->block.z) + ")>";
  return PyUnicode_FromString(s.c_str());
}

PyGetSetDef launchConfigGetSet[] = {
    {"griddim", getGrid, nullptr, "The grid shape (x, y, z).", nullptr},
    {"blockdim", getBlock, nullptr, "The block shape (x, y, z).", nullptr},
    {"stream", getStream, nullptr, "The stream the kernel is launched on.", nullptr},
    {"sharedmem", getSharedMem, nullptr, "Dynamic shared memory per block, in bytes.", nullptr},
    {"dispatcher", getDispatcher, nullptr, "The kernel.", nullptr},
    {"pre_launch_callbacks", getCallbacks, nullptr,
     "Functions called as f(kernel, launch_config) before each launch of this configuration "
     "(numba-cuda's hook; a list to append to).",
     nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyMemberDef launchConfigMembers[] = {
    {"__vectorcalloffset__", T_PYSSIZET,
     static_cast<Py_ssize_t>(offsetof(LaunchConfigObject, vectorcall)), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr},
};

PyType_Slot launchConfigSlots[] = {
    {Py_tp_dealloc, reinterpret_cast<void *>(launchConfigDealloc)},
    {Py_tp_traverse, reinterpret_cast<void *>(launchConfigTraverse)},
    {Py_tp_clear, reinterpret_cast<void *>(launchConfigClear)},
    {Py_tp_call, reinterpret_cast<void *>(PyVectorcall_Call)},
    {Py_tp_getset, launchConfigGetSet},
    {Py_tp_members, launchConfigMembers},
    {Py_tp_repr, reinterpret_cast<void *>(launchConfigRepr)},
    {Py_tp_doc, const_cast<char *>("A kernel with its launch configuration: call it with the "
                                   "kernel's arguments.")},
    {0, nullptr},
};

PyType_Spec launchConfigSpec = {
    "ptxjit._core.LaunchConfig",
    sizeof(LaunchConfigObject),
    0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_DISALLOW_INSTANTIATION |
        Py_TPFLAGS_HAVE_GC,
    launchConfigSlots,
};

PyObject *subscriptSlot(PyObject *self, PyObject *key) {
  try {
    return configureLaunch(self, key);
  } catch (...) {
    setPythonError();
    return nullptr;
  }
}

PyTypeObject *gDispatcherType = nullptr;

} // namespace

Dispatcher &dispatcherOf(PyObject *self) {
  if (gDispatcherType && PyObject_TypeCheck(self, gDispatcherType))
    return simpleInstance<Dispatcher>(self, "Dispatcher (use cuda.jit)");
  return py::handle(self).cast<Dispatcher &>();
}

PyObject *newLaunchConfig(PyObject *owner, runtime::Dim3 grid, runtime::Dim3 block,
                          unsigned sharedMem, PyObject *stream, int64_t forallTasks) {
  Dispatcher &d = dispatcherOf(owner);
  auto *c =
      reinterpret_cast<LaunchConfigObject *>(gLaunchConfigType->tp_alloc(gLaunchConfigType, 0));
  if (!c)
    throw py::error_already_set();
  c->vectorcall = launchVectorcall;
  Py_INCREF(owner);
  c->owner = owner;
  c->dispatcher = &d;
  c->grid = grid;
  c->block = block;
  c->sharedMem = sharedMem;
  Py_INCREF(stream);
  c->stream = stream;
  c->forallTasks = forallTasks;
  c->callbacks = nullptr;
  return reinterpret_cast<PyObject *>(c);
}

PyObject *configureLaunch(PyObject *self, PyObject *key) {
  Dispatcher &d = dispatcherOf(self);
  if (d.device)
    d.notALaunch();
  if (!PyTuple_Check(key) || PyTuple_GET_SIZE(key) < 2 || PyTuple_GET_SIZE(key) > 4)
    throw py::value_error("a launch configuration is kernel[griddim, blockdim] or "
                          "kernel[griddim, blockdim, stream, sharedmem]");
  Py_ssize_t n = PyTuple_GET_SIZE(key);
  runtime::Dim3 grid = readDims(PyTuple_GET_ITEM(key, 0), "griddim");
  runtime::Dim3 block = readDims(PyTuple_GET_ITEM(key, 1), "blockdim");
  static PyObject *zero = PyLong_FromLong(0);
  PyObject *stream = n > 2 ? PyTuple_GET_ITEM(key, 2) : zero;
  if (!isDefaultStreamArg(stream) && !py::isinstance<PyStream>(stream))
    throw py::type_error(std::string("the stream of a launch configuration must be a ptxjit "
                                     "stream or 0, not ") +
                         Py_TYPE(stream)->tp_name);
  unsigned shared = 0;
  if (n > 3) {
    PyObject *s = PyTuple_GET_ITEM(key, 3);
    if (!PyLong_Check(s))
      throw py::type_error(std::string("sharedmem must be an int, not ") + Py_TYPE(s)->tp_name);
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(s, &overflow);
    if (overflow || v < 0 || v > static_cast<long long>(UINT_MAX))
      throw py::value_error("invalid launch configuration: sharedmem must be a non-negative "
                            "number of bytes that fits in 32 bits");
    shared = static_cast<unsigned>(v);
  }
  if (uint64_t(grid.x) * grid.y * grid.z < kLowOccupancyBlocks && !d.warnedLowOccupancy &&
      !warnLowOccupancy(d, grid))
    throw py::error_already_set();
  return newLaunchConfig(self, grid, block, shared, stream, -1);
}

namespace {

bool envFlag(const char *name, bool fallback) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    return fallback;
  return std::string(v) != "0";
}

bool performanceWarning(const std::string &message) {
  py::object cls = py::module_::import("ptxjit.errors").attr("NumbaPerformanceWarning");
  return PyErr_WarnEx(cls.ptr(), message.c_str(), 1) == 0;
}

/// numba-cuda's run-time setting `numba.cuda.config.<name>` (numba.cuda.core.config, or
/// numba.core.config of older numbas) when the program has imported it: a half-ported program,
/// or one that silences a warning the numba way (`config.CUDA_LOW_OCCUPANCY_WARNINGS = 0`).
/// ptxjit never imports numba; nullopt when it is not loaded or has no such setting. Read only
/// where a warning is about to be given, never per launch otherwise.
std::optional<bool> numbaConfigFlag(const char *name) {
  PyObject *modules = PyImport_GetModuleDict(); // borrowed
  for (const char *mod : {"numba.cuda.core.config", "numba.core.config"}) {
    PyObject *config = PyDict_GetItemString(modules, mod); // borrowed
    if (!config)
      continue;
    PyObject *v = PyObject_GetAttrString(config, name);
    if (!v) {
      PyErr_Clear();
      continue;
    }
    int truth = PyObject_IsTrue(v);
    Py_DECREF(v);
    if (truth < 0) {
      PyErr_Clear();
      continue;
    }
    return truth != 0;
  }
  return std::nullopt;
}

bool lowOccupancyWarnings() {
  static const bool enabled = !envFlag("NUMBA_DISABLE_PERFORMANCE_WARNINGS", false) &&
                              envFlag("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", true);
  return enabled && numbaConfigFlag("CUDA_LOW_OCCUPANCY_WARNINGS").value_or(true);
}

/// numba-cuda's message, then `what` warned of in parentheses.
bool lowOccupancyWarning(uint64_t blocks, const std::string &what) {
  std::string message = "Grid size " + std::to_string(blocks) +
                        " will likely result in GPU under-utilization due to low occupancy (";
  return performanceWarning(message + what + ")");
}

} // namespace

bool warnLowOccupancy(Dispatcher &d, runtime::Dim3 grid) {
  if (!lowOccupancyWarnings() || currentBackend() != codegen::Backend::CUDA)
    return true;
  d.warnedLowOccupancy = true;
  return lowOccupancyWarning(uint64_t(grid.x) * grid.y * grid.z,
                             "kernel '" + d.name + "'; warned once per kernel");
}

bool warnUfuncLowOccupancy(const std::string &ufuncName, int64_t blocks, bool &warned) {
  if (!lowOccupancyWarnings())
    return true;
  warned = true;
  return lowOccupancyWarning(static_cast<uint64_t>(blocks),
                             "ufunc '" + ufuncName + "'; warned once per ufunc");
}

bool cudaArrayInterfaceSync() {
  static const bool enabled = envFlag("NUMBA_CUDA_ARRAY_INTERFACE_SYNC", true);
  return enabled && numbaConfigFlag("CUDA_ARRAY_INTERFACE_SYNC").value_or(true);
}

bool warnImplicitCopy() {
  static const bool enabled = !envFlag("NUMBA_DISABLE_PERFORMANCE_WARNINGS", false) &&
                              envFlag("NUMBA_CUDA_WARN_ON_IMPLICIT_COPY", true);
  if (!enabled || !numbaConfigFlag("CUDA_WARN_ON_IMPLICIT_COPY").value_or(true))
    return true;
  return performanceWarning("Host array used in CUDA kernel will incur copy overhead to/from "
                            "device.");
}

void defineLaunchConfig(py::module_ &m, py::handle dispatcherType) {
  m.def("cuda_array_interface_sync", &cudaArrayInterfaceSync,
        "Whether __cuda_array_interface__ consumers synchronize the producer's stream.");
  PyObject *type = PyType_FromSpec(&launchConfigSpec);
  if (!type)
    throw py::error_already_set();
  gLaunchConfigType = reinterpret_cast<PyTypeObject *>(type);
  m.add_object("LaunchConfig", py::reinterpret_steal<py::object>(type));
  // kernel[...] without pybind11's argument dispatch: the mapping slot of the Dispatcher type
  // (a heap type whose __getitem__ pybind11 defined) calls configureLaunch directly.
  gDispatcherType = reinterpret_cast<PyTypeObject *>(dispatcherType.ptr());
  if (gDispatcherType->tp_as_mapping)
    gDispatcherType->tp_as_mapping->mp_subscript = subscriptSlot;
}

} // namespace ptxjit::bindings
