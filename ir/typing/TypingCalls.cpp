// Typing rules for calls: builtins (range, len, int, float, bool, abs, min, max, cuda.grid,
// cuda.gridsize) and user device functions through the CallResolver.
#include "ir/ConstantOf.h"
#include "ir/typing/ArrayMethods.h"
#include "ir/typing/ArrayReductions.h"
#include "ir/typing/CudaBuiltins.h"
#include "ir/typing/LowFloat.h"
#include "ir/typing/NumpyUfuncs.h"
#include "ir/typing/TypingInternal.h"

namespace ptxjit::ir::typing_detail {

// "int64, float32, n=int32": the argument types as a call would list them.
std::string argListStr(const CallInstr *i) {
  std::string s;
  size_t n = i->numArgs();
  size_t nkw = std::min(i->kwNames.size(), n);
  for (size_t k = 0; k < n; ++k) {
    if (k)
      s += ", ";
    if (k >= n - nkw)
      s += i->kwNames[k - (n - nkw)] + "=";
    const Type *t = i->arg(k)->type;
    s += t ? t->str() : "?";
  }
  return s;
}

namespace {

/// How a callee is named in messages: "range" for "builtins.range", else the path.
std::string displayName(const std::string &path) {
  const std::string b = "builtins.";
  return path.rfind(b, 0) == 0 ? path.substr(b.size()) : path;
}

} // namespace

const Type *Typer::typeListDisplay(BuildTupleInstr *i) {
  const Type *dtype = nullptr;
  std::string values;
  bool constant = true;
  for (Instr *o : i->operands()) {
    const Type *t = concretize(o->type);
    dtype = dtype ? unifyTypes(dtype, t) : t;
    if (!dtype) // items Numba could not unify either: the list is an error in any case
      fail(DiagCode::UnsupportedConstruct, i, {"list literal"});
    const ConstValue *v = constantValueOf(o);
    constant = constant && v && v->kind != ConstValue::Kind::Tuple;
    if (constant)
      values += (values.empty() ? "" : ", ") + v->str();
  }
  if (!dtype)
    return types::list(types::none(), "");
  return types::list(dtype, constant ? "[" + values + "]" : "");
}

const Type *Typer::typeCall(CallInstr *i) {
  const Type *ct = i->callee()->type;
  std::vector<const Type *> args;
  for (size_t k = 0; k < i->numArgs(); ++k)
    args.push_back(i->arg(k)->type);
  // A list display (only ever a call's argument) has no run-time form: a callee that does not
  // reject it in its own words gets this error.
  auto noLists = [&](const Type *result) {
    for (size_t k = 0; k < i->numArgs(); ++k)
      if (isa<ListType>(args[k]))
        fail(DiagCode::UnsupportedConstruct, i->arg(k), {"list literal"},
             " (kernels cannot allocate lists: write a tuple)");
    return result;
  };
  if (auto *sym = dyn_cast<SymbolType>(ct)) {
    const std::string &path = sym->path();
    if (path.rfind(kPyFunctionPrefix, 0) == 0)
      fail(DiagCode::UndecoratedFunction, i, {path.substr(std::string(kPyFunctionPrefix).size())});
    for (const Type *&t : args) // an IntEnum member is an int to builtins: int(m), int16(m)
      t = intEnumAsInt(t);
    return noLists(typeBuiltinCall(i, sym, args));
  }
  if (auto *ref = dyn_cast<FunctionRefType>(ct)) {
    noLists(nullptr); // before the callee is specialized for it
    return typeUserCall(i, ref, args);
  }
  if (auto *ext = dyn_cast<ExternFunctionType>(ct))
    return noLists(typeExternCall(i, ext, args));
  fail(DiagCode::UnsupportedCall, i, {"a value of type " + ct->str()});
}

static bool externArgumentFits(const Type *arg, const Type *param) {
  if (auto *p = dyn_cast<PointerType>(param))
    if (auto *a = dyn_cast<ArrayType>(concretize(arg))) // the array's data pointer
      return !p->pointee() || p->pointee() == a->dtype();
  return argumentConversion(arg, param) != Conversion::None;
}

const Type *Typer::typeExternCall(CallInstr *i, const ExternFunctionType *ext,
                                  const std::vector<const Type *> &args) {
  const ExternDecl &d = ext->decl();
  std::string name = "external function '" + d.name + "'";
  if (!i->kwNames.empty())
    fail(DiagCode::UnsupportedConstruct, i, {"calling " + name + " with keyword arguments"});
  if (args.size() != d.params.size())
    fail(DiagCode::ArgumentCount, i,
         {d.name, std::to_string(d.params.size()), std::to_string(args.size())});
  for (size_t k = 0; k < args.size(); ++k)
    if (!externArgumentFits(args[k], d.params[k])) {
      std::string declared;
      for (const Type *p : d.params)
        declared += (declared.empty() ? "" : ", ") + p->str();
      fail(DiagCode::CallArgs, i,
           {name, argListStr(i) + "; it is declared (" + declared + ") -> " + d.result->str() +
                      ", and argument " + std::to_string(k + 1) + " cannot pass as " +
                      d.params[k]->str()});
    }
  return d.result;
}

const Type *Typer::typeBuiltinCall(CallInstr *i, const SymbolType *sym,
                                   const std::vector<const Type *> &args) {
  const std::string &path = sym->path();
  if (isArrayMethodPath(path)) // a.reshape(...), a.view(dtype), a.copy() (TypingArrayMethods.cpp)
    return arrayMethodCallType(i, path, fn_);
  if (path == kCarrayPath || path == kFarrayPath) // carray/farray (TypingArrayMethods.cpp)
    return pointerArrayCallType(i, path, fn_.filename);
  if (path == kFfiFromBufferPath) // ffi.from_buffer(array) (TypingArrayMethods.cpp)
    return ffiFromBufferCallType(i, fn_.filename);
  if (path == kNpTransposePath) // np.transpose(a, axes=None) (TypingArrayMethods.cpp)
    return npTransposeCallType(i, fn_);
  BuiltinId id = builtinByPath(path);
  // Builtins without a case below (threadIdx.x, array attributes, ...) are not callables.
  // A path the compiler does not know at all (cuda.grdi) may be a misspelling.
  if (id == BuiltinId::None) {
    size_t dot = path.rfind('.');
    fail(DiagCode::UnsupportedCall, i, {displayName(path)},
         dot == std::string::npos ? std::string()
                                  : attributeHint(path.substr(0, dot), path.substr(dot + 1)));
  }
  auto bad = [&]() { fail(DiagCode::CallArgs, i, {displayName(path), argListStr(i)}); };
  if (const Type *r = typeArithPrintBuiltin(i, id, args)) // divmod, round, pow, print
    return r;
  if (const Type *r = typeIterBuiltin(i, id, args)) // enumerate, zip
    return r;
  if (const CudaBuiltinInfo *ci = cudaBuiltinInfo(id)) { // TypingCuda.cpp (keywords allowed)
    i->builtin = id;
    return cudaCallType(fn_, i, *ci);
  }
  if (const LowFloatFunction *lf = lowFloatFunction(id)) { // cuda.bf16, cuda.fp16 (LowFloat.cpp)
    i->builtin = id;
    return lowFloatCallType(fn_, i, *lf);
  }
  if (const LibdeviceFunction *lf = libdeviceFunction(id)) { // Libdevice.cpp
    i->builtin = id;
    return libdeviceCallType(fn_, i, *lf);
  }
  if (Reduction r; reductionOf(id, r)) { // np.sum(a), a.sum(), ... (TypingReductions.cpp)
    i->builtin = id;
    ReductionCall c = resolveReduction(i, r);
    if (!c.error.empty()) {
      const Instr *obj = i->callee()->numOperands() ? i->callee()->operand(0) : nullptr;
      std::string callee =
          id == builtinByPath(std::string("array.") + reductionName(r)) && obj && obj->type
              ? obj->type->str() + "." + reductionName(r)
              : displayName(path);
      fail(DiagCode::CallArgs, i, {callee, argListStr(i) + "; " + c.error});
    }
    return c.result;
  }
  if (id == BuiltinId::IsInstance) { // a constant decided by the value's type (MathBuiltins.h)
    if (args.size() != 2 || !i->kwNames.empty())
      fail(DiagCode::CallArgs, i,
           {"isinstance", argListStr(i) + "; it takes a value and a class (or a tuple of them)"});
    std::string why;
    if (!isInstanceOf(args[0], args[1], why))
      fail(DiagCode::CallArgs, i, {"isinstance", argListStr(i) + "; " + why});
    i->builtin = id;
    return types::boolean();
  }
  if (id == BuiltinId::LiteralUnroll) { // the identity; `for` over it unrolls (LoopUnroll.h)
    if (args.size() != 1 || !i->kwNames.empty())
      fail(DiagCode::CallArgs, i, {"literal_unroll", argListStr(i) + "; it takes one argument"});
    i->builtin = id;
    return args[0];
  }
  // NumPy ufuncs with arrays, an output or keywords, and the ufuncs that are not math functions
  // (NumpyUfuncs.h; keywords allowed).
  if (const NumpyUfunc *u = numpyUfunc(id); u && typedAsUfunc(*u, args, i->kwNames.size())) {
    i->builtin = id;
    UfuncCall c = resolveUfuncCall(*u, args, i->kwNames);
    if (!c.error.empty())
      fail(DiagCode::UfuncCall, i, {u->name, argListStr(i), c.error});
    return c.result;
  }
  if (!i->kwNames.empty())
    bad();
  i->builtin = id;
  const size_t n = args.size();
  if (const MathKind *mk = mathKindOf(id)) {
    if (*mk == MathKind::Constant)
      fail(DiagCode::UnsupportedCall, i, {displayName(path)});
    if (*mk == MathKind::Conjugate) {
      // z.conjugate(): the callee is the GetAttr on z.
      const Instr *obj = i->callee()->numOperands() ? i->callee()->operand(0) : nullptr;
      if (n != 0 || !obj || !obj->type || !obj->type->isScalarNumber())
        bad();
      return obj->type->kind() == TypeKind::Bool ? types::int64() : concretize(obj->type);
    }
    if (*mk == MathKind::BitCount) {
      // i.bit_count(): the number of ones in abs(i), as Python's int.bit_count.
      const Instr *obj = i->callee()->numOperands() ? i->callee()->operand(0) : nullptr;
      if (n != 0 || !obj || !obj->type || !isIntLike(obj->type))
        bad();
      return concretize(obj->type);
    }
    const Type *r = mathCallType(id, *mk, args);
    if (!r)
      bad();
    return r;
  }
  switch (id) {
  case BuiltinId::Range:
    if (n < 1 || n > 3)
      bad();
    for (const Type *t : args)
      if (!isIntLike(t))
        bad();
    return types::range();
  case BuiltinId::Len:
    if (n != 1 || (!isa<ArrayType>(args[0]) && !isa<TupleType>(args[0])))
      bad();
    return types::int64();
  case BuiltinId::TupleOf: // numba's tuple(): of a tuple only (kernels have no other iterables
                           // whose length is known at compile time)
    if (n == 0)
      return types::tuple({});
    if (n != 1 || !isa<TupleType>(args[0]))
      bad();
    return args[0];
  case BuiltinId::Int:
    if (n != 1 || !isRealNumber(args[0]))
      bad();
    return types::int64();
  case BuiltinId::Float:
    if (n == 1 &&
        (args[0]->kind() == TypeKind::String || args[0]->kind() == TypeKind::StrLiteral)) {
      // float("nan"), float("inf"), float("1.5"): a constant string, converted at compile time.
      std::optional<std::string> str = constantStringOf(i->arg(0), &fn_);
      if (!str)
        fail(DiagCode::CallArgs, i,
             {displayName(path), argListStr(i) + "; float() takes a string only as a constant"});
      if (!floatOfPythonString(*str))
        fail(DiagCode::CallArgs, i,
             {displayName(path), "'" + *str + "'; could not convert string to float"});
      return types::float64();
    }
    if (n != 1 || !isRealNumber(args[0]))
      bad();
    // Numba's float(): a float keeps its type (float32 stays float32), others become float64.
    if (const Type *c = concretize(args[0]); c->kind() == TypeKind::Float)
      return c;
    return types::float64();
  case BuiltinId::Bool:
    if (n != 1 || !(args[0]->isScalarNumber() || args[0]->kind() == TypeKind::None))
      bad();
    return types::boolean();
  case BuiltinId::Abs:
    if (n == 1 && args[0]->kind() == TypeKind::Timedelta)
      return args[0];
    if (n != 1 || !args[0]->isScalarNumber())
      bad();
    if (isComplexLike(args[0]))
      return concretize(args[0]) == types::complex64() ? types::float32() : types::float64();
    return args[0]->kind() == TypeKind::Bool ? types::int64() : concretize(args[0]);
  case BuiltinId::Min:
  case BuiltinId::Max: {
    std::vector<const Type *> items = args;
    if (n == 1)
      if (auto *arr = dyn_cast<ArrayType>(args[0])) {
        // min(a) / max(a) of a 1-d array: Python's iteration over its elements (an N-d array
        // iterates over sub-arrays, which do not compare); the element's type.
        const ScalarType *dt = arr->scalarDtype();
        if (arr->ndim() != 1 || !dt || !isRealNumber(dt))
          bad();
        return dt;
      }
    if (n == 1 && args[0]->kind() == TypeKind::Range)
      return types::int64(); // min(range(...)): its first or last element (LowerCalls.cpp)
    if (n == 1) {
      auto *tup = dyn_cast<TupleType>(args[0]);
      if (!tup || tup->size() == 0)
        bad();
      items = tup->elements();
    } else if (n < 2) {
      bad();
    }
    // An int literal that an unsigned argument's type cannot hold (min(-1, 2**63),
    // max(300, u8)) keeps its value as int64, the type the same value has in a variable:
    // NEP 50 would make it that unsigned type, wrapping it, and pick the wrong argument.
    if (n > 1) {
      const ScalarType *widestUnsigned = nullptr;
      for (const Type *t : items)
        if (auto *s = dyn_cast<ScalarType>(t); s && s->kind() == TypeKind::Int && !s->isSigned())
          if (!widestUnsigned || s->bits() > widestUnsigned->bits())
            widestUnsigned = s;
      for (size_t k = 0; widestUnsigned && k < items.size(); ++k) {
        int64_t v = 0;
        if (items[k]->kind() == TypeKind::WeakInt && constantInt(i->arg(k), v) &&
            (v < 0 || (widestUnsigned->bits() < 64 && v >> widestUnsigned->bits() != 0)))
          items[k] = types::int64();
      }
    }
    const Type *r = nullptr;
    for (const Type *t : items) {
      if (!isRealNumber(t))
        bad();
      r = r ? promote(r, t) : t;
    }
    return concretize(r);
  }
  case BuiltinId::NumpyDtype: {
    // np.dtype('float32'), np.dtype(np.float32): the symbol of that dtype, as the NumPy type
    // itself is typed. A dtype NumPy has and kernels do not ('O', 'U5') is a symbol too, so
    // that where it is used as an element type says so; a string NumPy rejects is an error.
    if (n != 1)
      bad();
    if (std::optional<std::string> s = constantStringOf(i->arg(0), &fn_)) {
      NumpyDtypeName d = numpyDtypeString(*s);
      if (!d.known)
        fail(DiagCode::CallArgs, i,
             {displayName(path), argListStr(i) + "; Invalid NumPy dtype specified: '" + *s + "'"});
      return types::symbol("numpy." + (d.type ? d.type->str() : "dtype('" + *s + "')"));
    }
    auto *sym = dyn_cast<SymbolType>(args[0]);
    if (!sym || sym->path().rfind("numpy.", 0) != 0 || !constantDtype(i->arg(0)))
      bad();
    return sym;
  }
  case BuiltinId::CudaGrid:
  case BuiltinId::CudaGridsize: {
    int64_t dims = 0;
    if (n != 1 || !constantInt(i->arg(0), dims) || dims < 1 || dims > 3)
      fail(DiagCode::CallArgs, i,
           {displayName(path), argListStr(i) +
                                   "; expected a constant 1, 2 or 3 (RequireLiteralValue: "
                                   "Numba's name for a literal-only argument)"});
    if (dims == 1)
      return types::int64();
    return types::tuple(std::vector<const Type *>(static_cast<size_t>(dims), types::int64()));
  }
  default:
    break;
  }
  fail(DiagCode::UnsupportedCall, i, {displayName(path)});
}

const Type *Typer::typeUserCall(CallInstr *i, const FunctionRefType *ref,
                                const std::vector<const Type *> &args) {
  auto it = userFunctions_.find(ref->functionId());
  std::string name = it != userFunctions_.end() ? it->second.path : ref->str();
  if (!i->kwNames.empty())
    fail(DiagCode::UnsupportedConstruct, i,
         {"calling device function '" + name + "' with keyword arguments"});
  std::vector<const Type *> concrete;
  for (size_t k = 0; k < args.size(); ++k) {
    // A Python int constant keeps its value (Numba's IntegerLiteral), so that the callee can
    // use it where a compile-time constant is needed: cuda.shared.array(n, dtype) with the n
    // its caller passed. One specialization per value, as in Numba.
    // (int64 too: such a parameter passed on, or an int64 constant, keeps its type there; and
    // tuples of those, a shape (4, 8).)
    const Type *plain = concretize(args[k]); // an int literal's is int64
    bool intsOnly = plain == types::int64();
    if (auto *tup = dyn_cast<TupleType>(plain)) {
      intsOnly = tup->size() > 0;
      for (const Type *e : tup->elements())
        intsOnly = intsOnly && e == types::int64();
    }
    const Type *lit = intsOnly ? constantIntsType(i->arg(k), fn_) : nullptr;
    // A string constant keeps its value too (Numba's Literal[str]): `f(buf, "add")`.
    if (plain->kind() == TypeKind::String)
      if (std::optional<std::string> s = constantStringOf(i->arg(k), &fn_))
        lit = types::stringLiteral(*s);
    concrete.push_back(lit ? lit : plain);
  }
  if (!resolver_)
    fail(DiagCode::Internal, i, {"no call resolver to type the call to '" + name + "'"});
  CalleeCache &cache = callees_[i];
  if (!cache.callee || cache.args != concrete || cache.provisional) {
    Function *callee = nullptr;
    try {
      callee = resolver_->specializeCallee(ref->functionId(), concrete, fn_.filename, i->loc);
    } catch (const RecursionPending &p) {
      // A callee (mutually) recursive with this function needs its return type, which no pass
      // has typed yet: the call waits for the next pass.
      if (p.target != &fn_)
        throw;
      pendingCalls_.push_back(i);
      return nullptr;
    }
    if (!callee)
      fail(DiagCode::Internal, i,
           {"the call resolver returned no typed function for '" + name + "'"});
    cache = {concrete, callee, resolver_->isProvisional(callee)};
  }
  Function *callee = cache.callee;
  if (cache.provisional) {
    usedProvisional_ = true;
    if (!callee->returnType) {
      // A recursive call before any return of the callee was typed: numba types recursion from
      // the returns that do not recurse, so the call waits for a pass that typed one (here, or
      // in the typing of the outer function it calls back into).
      if (callee != &fn_)
        throw RecursionPending{callee};
      pendingCalls_.push_back(i);
      return nullptr;
    }
  } else if (!callee->returnType) {
    fail(DiagCode::Internal, i,
         {"the call resolver returned no typed function for '" + name + "'"});
  }
  i->calleeFunction = callee;
  return callee->returnType;
}

} // namespace ptxjit::ir::typing_detail
