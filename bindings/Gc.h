// Python's cyclic garbage collector over the Python objects a pybind11-bound C++ object holds.
//
// A kernel's Dispatcher holds its Python function, whose globals (or closure) usually hold the
// Dispatcher again: a reference cycle. pybind11's py::dynamic_attr() makes such a type a GC type,
// but its traverse visits only the instance dict, so the collector counts the function as
// referenced from outside and never frees the cycle (kernels made by exec() in a namespace that
// is then dropped: the host code, the compiled entries and the function stay until the process
// ends). gcTraversed adds the held objects to the traverse.
#pragma once

#include <pybind11/pybind11.h>

namespace ptxjit::bindings {

namespace py = pybind11;

/// Passes each Python object a C++ object holds to the collector's visit function, stopping at
/// the first non-zero result (tp_traverse's contract).
class GcVisitor {
public:
  GcVisitor(visitproc visit, void *arg) : visit_(visit), arg_(arg) {}
  /// Visits `h` (null handles are skipped).
  void operator()(py::handle h) {
    if (!result_ && h.ptr())
      result_ = visit_(h.ptr(), arg_);
  }
  int result() const { return result_; }

private:
  visitproc visit_;
  void *arg_;
  int result_ = 0;
};

/// The C++ object of pybind11 instance `self` (one pybind11 base: the simple layout), or null
/// while it has none: the collector may traverse an instance between its allocation and the end
/// of __init__, and one whose __init__ failed.
template <typename T> T *constructedValue(PyObject *self) {
  auto *inst = reinterpret_cast<py::detail::instance *>(self);
  if (!inst->simple_layout || !inst->simple_holder_constructed)
    return nullptr;
  return static_cast<T *>(inst->simple_value_holder[0]);
}

namespace detail {
template <typename T, void (*Referents)(const T &, GcVisitor &)> struct GcHooks {
  static inline traverseproc baseTraverse = nullptr;
  static int traverse(PyObject *self, visitproc visit, void *arg) {
    if (baseTraverse) {
      if (int r = baseTraverse(self, visit, arg))
        return r;
    } else {
      Py_VISIT(Py_TYPE(self)); // a heap type's instances own a reference to it
    }
    const T *value = constructedValue<T>(self);
    if (!value)
      return 0;
    GcVisitor visitor(visit, arg);
    Referents(*value, visitor);
    return visitor.result();
  }
};
} // namespace detail

/// For py::class_<T>(..., py::dynamic_attr(), gcTraversed<T, referents>()): the collector sees
/// what pybind11's own traverse shows (the instance dict, the type) and every object
/// `referents(value, visitor)` passes to `visitor`, so cycles through them are collected.
/// tp_clear stays pybind11's (it clears the instance dict): the held objects are never cleared,
/// so an object the collector is tearing down stays usable by the others' finalizers; each cycle
/// through them also runs through a function, dict or list, whose own tp_clear breaks it.
template <typename T, void (*Referents)(const T &, GcVisitor &)>
py::custom_type_setup gcTraversed() {
  return py::custom_type_setup([](PyHeapTypeObject *heapType) {
    PyTypeObject *type = &heapType->ht_type;
    type->tp_flags |= Py_TPFLAGS_HAVE_GC;
    // pybind11 runs this after py::dynamic_attr() installed its hooks: keep them as the base.
    detail::GcHooks<T, Referents>::baseTraverse = type->tp_traverse;
    type->tp_traverse = &detail::GcHooks<T, Referents>::traverse;
  });
}

} // namespace ptxjit::bindings
