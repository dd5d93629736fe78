// Typing rules for the array attributes that are views of an array's memory (ArrayMethods.h).
#include "ir/typing/ArrayMethods.h"

#include "ir/ConstantOf.h"
#include "ir/Diagnostics.h"
#include "ir/typing/CudaBuiltins.h"

namespace ptxjit::ir {

namespace {

/// The bound array methods typed at their call: the attribute's name and its SymbolType path.
struct ArrayMethod {
  const char *name;
  const char *path;
};
constexpr ArrayMethod kArrayMethods[] = {
    {"reshape", kArrayReshapePath}, {"view", kArrayViewPath},           {"copy", kArrayCopyPath},
    {"fill", kArrayFillPath},       {"transpose", kArrayTransposePath}, {"ravel", kArrayRavelPath},
};

/// The method of `path`, or null.
const ArrayMethod *arrayMethodOfPath(const std::string &path) {
  for (const ArrayMethod &m : kArrayMethods)
    if (path == m.path)
      return &m;
  return nullptr;
}

} // namespace

bool isArrayMethodPath(const std::string &path) { return arrayMethodOfPath(path) != nullptr; }

std::optional<std::vector<int>> transposeAxes(const std::vector<const Instr *> &axes, int ndim,
                                              const Function &fn, std::string &why) {
  std::vector<int> perm;
  auto isNone = [](const Instr *a) { return a->type && a->type->kind() == TypeKind::None; };
  if (axes.empty() || (axes.size() == 1 && isNone(axes[0])))
    return reversedAxes(ndim);
  std::vector<int64_t> given;
  for (const Instr *a : axes) {
    std::optional<std::vector<int64_t>> v = constantShape(a, fn);
    bool tuple = a->type && isa<TupleType>(a->type);
    if (!v || (tuple && axes.size() > 1)) {
      why = "the axes must be compile-time constant ints (literals, globals or a tuple of them); "
            "got " +
            (a->type ? a->type->str() : std::string("?"));
      return std::nullopt;
    }
    given.insert(given.end(), v->begin(), v->end());
  }
  std::vector<bool> seen(ndim, false);
  bool ok = static_cast<int>(given.size()) == ndim;
  for (int64_t g : given) {
    int64_t d = g < 0 ? g + ndim : g;
    if (!ok || d < 0 || d >= ndim || seen[d]) {
      ok = false;
      break;
    }
    seen[d] = true;
    perm.push_back(static_cast<int>(d));
  }
  if (!ok) {
    std::string list;
    for (int64_t g : given)
      list += (list.empty() ? "" : ", ") + std::to_string(g);
    why = "axes (" + list + ") are not a permutation of the array's " + std::to_string(ndim) +
          " dimensions (NumPy: \"axes don't match array\")";
    return std::nullopt;
  }
  return perm;
}

std::vector<int> reversedAxes(int ndim) {
  std::vector<int> perm;
  for (int d = ndim - 1; d >= 0; --d)
    perm.push_back(d);
  return perm;
}

const Type *transposedType(const ArrayType *arr, const std::vector<int> &perm) {
  bool identity = true, reversed = true;
  for (size_t d = 0; d < perm.size(); ++d) {
    identity = identity && perm[d] == static_cast<int>(d);
    reversed = reversed && perm[d] == static_cast<int>(perm.size() - 1 - d);
  }
  Layout l = arr->layout();
  if (!identity && arr->ndim() > 1)
    l = !reversed ? Layout::A : l == Layout::C ? Layout::F : l == Layout::F ? Layout::C : Layout::A;
  return types::array(arr->dtype(), arr->ndim(), l, arr->readonly());
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
    return transposedType(arr, reversedAxes(arr->ndim()));
  }
  for (const ArrayMethod &m : kArrayMethods)
    if (attr == m.name)
      return types::symbol(m.path);
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
  bool transpose = path == kArrayTransposePath;
  bool ravel = path == kArrayRavelPath;
  const ArrayMethod *am = arrayMethodOfPath(path);
  std::string method = am ? am->name : path;
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
  if (transpose) {
    // a.transpose(*axes) / a.transpose(axes): a view with the dimensions permuted.
    if (!i->kwNames.empty())
      badArgs("axes as ints or one tuple (no keywords)");
    std::vector<const Instr *> axes;
    for (size_t k = 0; k < i->numArgs(); ++k)
      axes.push_back(i->arg(k));
    std::string why;
    std::optional<std::vector<int>> perm = transposeAxes(axes, arr->ndim(), fn, why);
    if (!perm)
      raiseDiag(DiagCode::CallArgs, file, i->loc, {callee, argTypes(i) + "; " + why});
    return transposedType(arr, *perm);
  }
  if (ravel) {
    // a.ravel(): NumPy returns a view when it can (a C-contiguous array), else a copy, which
    // a kernel cannot allocate at a run-time size (numba-cuda's needs its NRT).
    if (i->numArgs() != 0 || !i->kwNames.empty())
      badArgs("no arguments (the C order)");
    if (arr->layout() == Layout::A || (arr->layout() == Layout::F && arr->ndim() > 1))
      unsupported(arr->str() + " (its ravel would be a copy)",
                  "C-contiguous arrays, whose ravel is a view (copy a strided or Fortran-ordered "
                  "array into a cuda.local.array first)");
    return types::array(arr->dtype(), 1, Layout::C, arr->readonly());
  }
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

bool npTransposeOperands(const CallInstr *i, const Instr *&array,
                         std::vector<const Instr *> &axes) {
  std::vector<const Instr *> bound;
  std::string why;
  if (!bindCallArgs(i, {"a", "axes"}, bound, why) || !bound[0])
    return false;
  array = bound[0];
  axes.clear();
  if (bound[1])
    axes.push_back(bound[1]);
  return true;
}

const Type *npTransposeCallType(const CallInstr *i, const Function &fn) {
  auto bad = [&](const std::string &w) {
    raiseDiag(DiagCode::CallArgs, fn.filename, i->loc, {"numpy.transpose", argTypes(i) + "; " + w});
  };
  const Instr *a = nullptr;
  std::vector<const Instr *> axes;
  if (!npTransposeOperands(i, a, axes))
    bad("it takes (a, axes=None): an array and compile-time axes");
  auto *arr = a->type ? dyn_cast<ArrayType>(concretize(a->type)) : nullptr;
  if (!arr)
    bad("its first argument must be an array");
  std::string why;
  std::optional<std::vector<int>> perm = transposeAxes(axes, arr->ndim(), fn, why);
  if (!perm)
    bad(why);
  return transposedType(arr, *perm);
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
