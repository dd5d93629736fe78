// Typing rules for the array attributes that are views of an array's memory (ArrayMethods.h).
#include "ir/typing/ArrayMethods.h"

#include "ir/ConstantOf.h"
#include "ir/Diagnostics.h"
#include "ir/typing/CudaBuiltins.h"

namespace ptxjit::ir {

bool isArrayMethodPath(const std::string &path) {
  return path == kArrayReshapePath || path == kArrayViewPath || path == kArrayCopyPath ||
         path == kArrayFillPath;
}

const Type *arrayViewAttrType(const ArrayType *arr, const std::string &attr) {
  if (attr == "real" || attr == "imag") {
    // A part of each complex element: the same shape and strides, the data moved by the part's
    // offset, so the view is strided (Numba's 'A' layout) and writable as the array is (so
    // `cuda.atomic.add(a.imag, i, v)` updates the array).
    const ScalarType *s = arr->scalarDtype();
    if (!s || s->kind() != TypeKind::Complex)
      return nullptr;
    return types::array(types::floating(s->bits() / 2), arr->ndim(), Layout::A, arr->readonly());
  }
  if (attr == "T") {
    // NumPy's transpose: the dimensions (shape and strides) in reverse order, a view of the
    // same memory, so a C-contiguous array's is Fortran-contiguous and the other way round.
    Layout l = arr->layout();
    if (arr->ndim() > 1)
      l = l == Layout::C ? Layout::F : l == Layout::F ? Layout::C : Layout::A;
    return types::array(arr->dtype(), arr->ndim(), l, arr->readonly());
  }
  if (attr == "reshape")
    return types::symbol(kArrayReshapePath);
  if (attr == "view")
    return types::symbol(kArrayViewPath);
  if (attr == "copy")
    return types::symbol(kArrayCopyPath);
  if (attr == "fill")
    return types::symbol(kArrayFillPath);
  return nullptr;
}

namespace {

std::string argTypes(const CallInstr *i) {
  std::string s;
  for (size_t k = 0; k < i->numArgs(); ++k) {
    const Type *t = i->arg(k)->type;
    s += (k ? ", " : "") + (t ? t->str() : std::string("?"));
  }
  return s;
}

bool isInt(const Type *t) {
  return t && (t->kind() == TypeKind::Int || t->kind() == TypeKind::WeakInt);
}

std::optional<std::vector<int64_t>> arrayShapeOf(const Instr *arr, const Function &fn, int depth) {
  if (!arr || depth > 16)
    return std::nullopt;
  if (auto *g = dyn_cast<GlobalInstr>(arr)) // a frozen global or closure array (C order)
    return g->value.kind == GlobalValue::Kind::Array ? std::optional(g->value.shape) : std::nullopt;
  if (auto *ld = dyn_cast<LoadLocalInstr>(arr))
    return arrayShapeOf(onlyStoredValue(fn, ld->var), fn, depth + 1);
  auto *call = dyn_cast<CallInstr>(arr);
  if (!call)
    return std::nullopt;
  if (const CudaBuiltinInfo *info = cudaBuiltinInfo(call->builtin)) {
    std::vector<const Instr *> bound;
    std::string why;
    if (info->kind == CudaKind::LocalArray || info->kind == CudaKind::SharedArray) {
      if (!bindCallArgs(call, {"shape", "dtype", "alignment"}, bound, why) || !bound[0])
        return std::nullopt;
      std::optional<std::vector<int64_t>> s = constantShape(bound[0], fn);
      // shape 0 of a shared array is the launch's dynamic shared memory: a run-time length
      if (s && info->kind == CudaKind::SharedArray && s->size() == 1 && (*s)[0] == 0)
        return std::nullopt;
      return s;
    }
    if (info->kind == CudaKind::ConstArray && call->numArgs() == 1)
      return arrayShapeOf(call->arg(0), fn, depth + 1);
    return std::nullopt;
  }
  // a.copy() of such an array
  auto *sym =
      call->callee() && call->callee()->type ? dyn_cast<SymbolType>(call->callee()->type) : nullptr;
  if (sym && sym->path() == kArrayCopyPath && call->callee()->numOperands())
    return arrayShapeOf(call->callee()->operand(0), fn, depth + 1);
  return std::nullopt;
}

} // namespace

std::optional<std::vector<int64_t>> constantArrayShape(const Instr *arr, const Function &fn) {
  return arrayShapeOf(arr, fn, 0);
}

const Type *arrayMethodCallType(const CallInstr *i, const std::string &path, const Function &fn) {
  const std::string &file = fn.filename;
  const Instr *obj = i->callee()->numOperands() ? i->callee()->operand(0) : nullptr;
  auto *arr = obj && obj->type ? dyn_cast<ArrayType>(concretize(obj->type)) : nullptr;
  bool reshape = path == kArrayReshapePath;
  bool copy = path == kArrayCopyPath;
  bool fill = path == kArrayFillPath;
  std::string method = std::string(reshape ? "reshape" : copy ? "copy" : fill ? "fill" : "view");
  if (!arr)
    raiseDiag(DiagCode::Internal, file, i->loc, {"array method " + method + " without its array"});
  std::string callee = arr->str() + "." + method;
  auto badArgs = [&](const std::string &expected) {
    raiseDiag(DiagCode::CallArgs, file, i->loc, {callee, argTypes(i) + "; it takes " + expected});
  };
  // "a.reshape() does not support <what>; it supports <supported>" (a TypingError, as Numba's).
  auto unsupported = [&](const std::string &what, const std::string &supported) {
    raiseDiag(DiagCode::UnsupportedDtype, file, i->loc, {"a." + method + "()", what, supported});
  };
  if (fill) {
    // a.fill(value): NumPy's, every element set to the value converted to the dtype (as
    // a[...] = value stores it; a complex value only into a complex array).
    if (i->numArgs() != 1 || !i->kwNames.empty())
      badArgs("one value");
    const ScalarType *dt = arr->scalarDtype();
    if (!dt)
      unsupported("an array of " + arr->dtype()->str(), "arrays of numbers and bools");
    if (arr->readonly())
      raiseDiag(DiagCode::ReadonlyArray, file, i->loc, {arr->str() + " (a.fill writes)"});
    auto *v = i->arg(0)->type ? dyn_cast<ScalarType>(concretize(i->arg(0)->type)) : nullptr;
    if (!v || (v->kind() == TypeKind::Complex && dt->kind() != TypeKind::Complex) ||
        isa<ArrayType>(concretize(i->arg(0)->type)))
      badArgs("one number or bool (a complex value only for a complex array)");
    return types::void_();
  }
  if (copy) {
    // a.copy(): numba-cuda allocates the copy on the heap (its NRT); ptxjit kernels have no
    // heap, so the copy is a local array, which needs its size at compile time.
    if (i->numArgs() != 0 || !i->kwNames.empty())
      badArgs("no arguments (the copy is C-ordered)");
    std::optional<std::vector<int64_t>> shape = constantArrayShape(obj, fn);
    if (!shape || arr->layout() != Layout::C)
      unsupported("an array whose shape is a run-time value (" + arr->str() + ")",
                  "arrays whose shape is known at compile time: global or closure NumPy "
                  "arrays, cuda.local.array, cuda.shared.array and cuda.const.array_like of "
                  "constant shape; the copy is a local array of the thread (kernels cannot "
                  "allocate memory of a run-time size: copy into a cuda.local.array instead)");
    return types::array(arr->dtype(), arr->ndim(), Layout::C, /*readonly=*/false);
  }
  if (!i->kwNames.empty())
    badArgs(reshape ? "a shape (no keywords)" : "a dtype (no keywords)");
  if (reshape) {
    // a.reshape(shape) with shape an int or a tuple of ints, or a.reshape(d0, d1, ...): the
    // number of dimensions is the number of ints; their values may be run-time values.
    std::vector<const Type *> dims;
    for (size_t k = 0; k < i->numArgs(); ++k)
      dims.push_back(i->arg(k)->type);
    if (dims.size() == 1)
      if (auto *t = dyn_cast<TupleType>(dims[0]))
        dims = t->elements();
    bool ok = i->numArgs() > 0;
    for (const Type *d : dims)
      ok = ok && isInt(d);
    if (!ok)
      badArgs("a shape: an int, a tuple of ints, or ints");
    // Numba's rule: only a contiguous array reshapes without a copy (ptxjit: C-contiguous).
    if (arr->layout() != Layout::C)
      unsupported(arr->str(), "C-contiguous arrays (copy a strided or Fortran-ordered array into "
                              "one first)");
    // A 0-d view always has one element, so a size mismatch could not give an empty view.
    if (dims.empty())
      unsupported("a 0-d result", "shapes of one or more dimensions");
    return types::array(arr->dtype(), static_cast<int>(dims.size()), Layout::C, arr->readonly());
  }
  // a.view(dtype): a compile-time dtype (np.int32, a ptxjit or numba type object, 'int32', a
  // structured dtype).
  if (i->numArgs() != 1)
    badArgs("one dtype");
  const Type *dt = constantDtype(i->arg(0));
  if (!dt)
    raiseDiag(DiagCode::ConstantRequired, file, i->loc,
              {callee + "()", "the dtype",
               "a NumPy or ptxjit type such as numpy.int32, a string such as 'int32' or a "
               "structured numpy.dtype; got a value of type " +
                   i->arg(0)->type->str()});
  int64_t newSize =
      isa<RecordType>(dt) ? cast<RecordType>(dt)->size() : cast<ScalarType>(dt)->byteSize();
  if (newSize != arr->itemSize()) {
    // NumPy's rule: the last dimension, contiguous, is reinterpreted (checked at run time for a
    // strided array); a Fortran-ordered array's last dimension is not contiguous.
    std::string change = dt->str() + " (another itemsize) of " + arr->str();
    std::string supported = "another itemsize on arrays of one or more dimensions whose last "
                            "dimension is contiguous (C arrays; strided ones are checked at run "
                            "time)";
    if (arr->ndim() == 0 || (arr->layout() == Layout::F && arr->ndim() > 1))
      unsupported(change, supported);
  }
  return types::array(dt, arr->ndim(), arr->layout(), arr->readonly());
}

const Type *pointerArrayCallType(const CallInstr *i, const std::string &path,
                                 const std::string &file) {
  std::string name = path == kCarrayPath ? "carray" : "farray";
  std::vector<const Instr *> bound;
  std::string why;
  auto bad = [&](const std::string &expected) {
    raiseDiag(DiagCode::CallArgs, file, i->loc, {name, argTypes(i) + "; it takes " + expected});
  };
  const std::string expected = "(ptr, shape, dtype=None): a CPointer, an int or a tuple of ints, "
                               "and the pointee's dtype (needed for a voidptr)";
  if (!bindCallArgs(i, {"ptr", "shape", "dtype"}, bound, why) || !bound[0] || !bound[1])
    bad(expected);
  auto *ptr = bound[0]->type ? dyn_cast<PointerType>(bound[0]->type) : nullptr;
  std::vector<const Type *> dims{bound[1]->type};
  if (auto *t = dyn_cast<TupleType>(bound[1]->type))
    dims = t->elements();
  bool ok = ptr != nullptr;
  for (const Type *d : dims)
    ok = ok && isInt(d);
  if (!ok)
    bad(expected);
  const Type *dtype = ptr->pointee();
  if (bound[2]) {
    const Type *dt = constantDtype(bound[2]);
    if (!dt || !isa<ScalarType>(dt))
      raiseDiag(DiagCode::ConstantRequired, file, i->loc,
                {name + "()", "the dtype",
                 "a NumPy or ptxjit scalar type such as numpy.float32; got a value of type " +
                     bound[2]->type->str()});
    if (dtype && dt != dtype) // numba: "mismatching dtype"
      bad("a dtype equal to the pointer's (" + dtype->str() + "), not " + dt->str());
    dtype = dt;
  }
  if (!dtype)
    bad("a dtype for a void pointer");
  return types::array(dtype, static_cast<int>(dims.size()),
                      path == kCarrayPath ? Layout::C : Layout::F);
}

const Type *ffiFromBufferCallType(const CallInstr *i, const std::string &file) {
  auto bad = [&](const std::string &why) {
    raiseDiag(DiagCode::CallArgs, file, i->loc, {"ffi.from_buffer", argTypes(i) + "; " + why});
  };
  if (!i->kwNames.empty() || i->numArgs() != 1)
    bad("it takes one array");
  auto *arr = i->arg(0)->type ? dyn_cast<ArrayType>(concretize(i->arg(0)->type)) : nullptr;
  if (!arr)
    bad("it takes one array");
  auto *st = dyn_cast<ScalarType>(arr->dtype());
  if (!st)
    bad("the array's dtype must be a scalar type");
  if (arr->layout() == Layout::A && arr->ndim() > 0)
    bad("from_buffer() unsupported on non-contiguous buffers (the array's layout is A)");
  return types::pointer(st);
}

} // namespace ptxjit::ir
