// Typing rules for constants, globals, variables, operators, attributes, indexing and slices,
// tuples, iteration and control flow.
#include "ir/ConstantOf.h"
#include "ir/NamedTuples.h"
#include "ir/typing/ArrayMethods.h"
#include "ir/typing/ArrayReductions.h"
#include "ir/typing/TypingInternal.h"

#include <unordered_set>

namespace ptxjit::ir::typing_detail {
namespace {

bool isValueBuiltin(BuiltinId id) {
  return id >= BuiltinId::ThreadIdxX && id <= BuiltinId::GridDimZ;
}

/// Every builtin's path (Builtins.def).
const std::vector<std::string> &builtinPaths() {
  static const std::vector<std::string> paths = {
#define PTXJIT_BUILTIN(id, p) p,
#include "ir/typing/Builtins.def"
#undef PTXJIT_BUILTIN
  };
  return paths;
}

/// True when `path` is a proper prefix (at a dot) of some builtin's path ("cuda.threadIdx").
bool isBuiltinPrefix(const std::string &path) {
  // Every attribute read of a module or namespace asks (cuda.blockIdx.x: "cuda", then
  // "cuda.blockIdx"): a set of the prefixes, made once, rather than a scan of every path.
  static const std::unordered_set<std::string> prefixes = [] {
    std::unordered_set<std::string> set;
    for (const std::string &p : builtinPaths())
      for (size_t dot = p.find('.'); dot != std::string::npos; dot = p.find('.', dot + 1))
        set.insert(p.substr(0, dot));
    return set;
  }();
  return prefixes.count(path) != 0;
}

bool isModule(const std::string &path) {
  return path == "math" || path == "cmath" || path == "numpy" || path == "cuda" ||
         path == "builtins" || path == "operator";
}

} // namespace

std::string Typer::attributeHint(const std::string &path, const std::string &attr) {
  // In cuda.threadidx.x the misspelling is a level up: hint at the first unknown component.
  size_t dot = path.rfind('.');
  if (dot != std::string::npos && !isModule(path) && !isBuiltinPrefix(path) &&
      builtinByPath(path) == BuiltinId::None)
    return attributeHint(path.substr(0, dot), path.substr(dot + 1));
  // The names one level below `path`: "grid", "threadIdx", ... for "cuda".
  std::string prefix = path + ".";
  std::vector<std::string> names;
  for (const std::string &p : builtinPaths()) {
    if (p.compare(0, prefix.size(), prefix) != 0)
      continue;
    std::string name = p.substr(prefix.size(), p.find('.', prefix.size()) - prefix.size());
    if (names.empty() || names.back() != name)
      names.push_back(name);
  }
  std::string best = closestName(attr, names);
  return didYouMean(best.empty() ? best : prefix + best);
}

const Type *Typer::typeConstValue(const ConstValue &v, Instr *at) {
  switch (v.kind) {
  case ConstValue::Kind::None:
    return types::none();
  case ConstValue::Kind::Ellipsis: // compile-time only: an index component (arrayIndex)
    return types::ellipsis();
  case ConstValue::Kind::Bool:
    return types::boolean();
  case ConstValue::Kind::Int:
    // A literal above int64's range only fits uint64: it cannot adopt a signed type.
    return v.isUnsigned ? static_cast<const Type *>(types::uint64()) : types::weakInt();
  case ConstValue::Kind::Float:
    return types::weakFloat();
  case ConstValue::Kind::Complex:
    return types::weakComplex();
  case ConstValue::Kind::String:
    return types::string();
  case ConstValue::Kind::Bytes: // compile-time only: stored into S<n> elements (TypingStrings)
    return types::bytes();
  case ConstValue::Kind::Tuple: {
    // A string element keeps its value (numba's Literal[str]), as a string constant passed to a
    // device function does: `for op in literal_unroll(("add", "mul"))` compares `op == "add"`
    // at compile time in each unrolled copy.
    std::vector<const Type *> elems;
    for (const ConstValue &e : v.elems)
      elems.push_back(e.kind == ConstValue::Kind::String ? types::stringLiteral(e.s)
                                                         : concretize(typeConstValue(e, at)));
    return types::tuple(elems);
  }
  case ConstValue::Kind::Unsupported:
    fail(DiagCode::UnsupportedConstant, at, {v.s});
  }
  fail(DiagCode::Internal, at, {"unknown constant kind"});
}

const Type *Typer::typeConst(ConstInstr *i) { return typeConstValue(i->value, i); }

const Type *Typer::typeGlobal(GlobalInstr *i) { return typeGlobalValue(i->value, i); }

const Type *Typer::typeGlobalValue(const GlobalValue &g, GlobalInstr *i) {
  switch (g.kind) {
  case GlobalValue::Kind::Constant:
    if (g.constant.kind == ConstValue::Kind::Unsupported)
      fail(DiagCode::UnsupportedGlobal, i, {i->name, g.constant.s});
    if (!g.dtype.empty()) {
      const ScalarType *t = types::scalarByName(g.dtype);
      if (!t)
        fail(DiagCode::UnsupportedGlobal, i, {i->name, "numpy." + g.dtype});
      return t;
    }
    return typeConstValue(g.constant, i);
  case GlobalValue::Kind::Symbol:
    return types::symbol(g.path);
  case GlobalValue::Kind::DeviceFunction:
  case GlobalValue::Kind::Kernel:
    userFunctions_[g.functionId] = g;
    return types::functionRef(g.functionId, g.path);
  case GlobalValue::Kind::PyFunction:
    return types::symbol(kPyFunctionPrefix + (g.path.empty() ? i->name : g.path));
  case GlobalValue::Kind::Unsupported: // an object Numba cannot type: its TypingError and words
    fail(DiagCode::UntypedGlobal, i, {i->name, g.path});
  case GlobalValue::Kind::Missing: // `path`: the closest defined name (bindings/Snapshot.cpp)
    if (size_t dot = i->name.rfind('.'); dot != std::string::npos) // helpers.f of a module
      fail(DiagCode::MissingModuleAttribute, i, {i->name.substr(0, dot), i->name.substr(dot + 1)});
    fail(DiagCode::UndefinedName, i, {i->name}, didYouMean(g.path));
  case GlobalValue::Kind::Array: // a frozen NumPy array (TypingCuda.cpp)
    return globalArrayType(g, i, fn_.filename);
  case GlobalValue::Kind::DeviceArray: // a device array, by reference (TypingCuda.cpp)
    return globalDeviceArrayType(g, i, fn_.filename);
  case GlobalValue::Kind::Tuple: { // a tuple of arrays, NumPy scalars, types, functions, ...
    std::vector<const Type *> elems;
    for (const GlobalValue &e : g.elems)
      elems.push_back(concretize(typeGlobalValue(e, i)));
    return types::tuple(elems);
  }
  case GlobalValue::Kind::ExternFunction:
    return types::externFunction(g.externDecl);
  case GlobalValue::Kind::ExceptionClass: // only raised (the frontend folds `raise C(...)`)
    return types::symbol("exception." + g.path);
  case GlobalValue::Kind::EnumClass: // ir/Enums.h
  case GlobalValue::Kind::EnumMember: {
    std::string why;
    const Type *dtype = enumValueType(*g.enumClass, why);
    if (!dtype)
      fail(DiagCode::UnsupportedGlobal, i,
           {i->name, "enum class " + g.enumClass->name + " (" + why + ")"});
    const EnumClassType *cls = enumClassOf(g.enumClass, dtype);
    if (g.kind == GlobalValue::Kind::EnumClass)
      return cls;
    return cls->memberType();
  }
  }
  fail(DiagCode::Internal, i, {"unknown global kind"});
}

const Type *Typer::typeStore(StoreLocalInstr *i) {
  int v = i->var;
  if (v < 0 || static_cast<size_t>(v) >= varTypes_.size())
    fail(DiagCode::Internal, i, {"variable index " + std::to_string(v) + " out of range"});
  const Type *t = i->operand(0)->type;
  if (t->kind() == TypeKind::Void)
    fail(DiagCode::UnsupportedConstruct, i, {"using the result of a call that returns nothing"});
  const Type *old = varTypes_[v];
  const Type *u = unifyTypes(old, t);
  if (!u)
    fail(DiagCode::CannotUnify, i, {fn_.vars[v].name, old->str(), t->str()});
  if (u != old) {
    varTypes_[v] = u;
    changed_ = true;
  }
  return types::void_();
}

const Type *Typer::typeBinOp(BinOpInstr *i) {
  const Type *a = i->operand(0)->type;
  const Type *b = i->operand(1)->type;
  // An int literal that the other operand's integer type (narrower than 64 bits) cannot hold
  // (`i8 + 1000`, `u8 * -1`) is int64, the type the same value has in a variable, as for
  // min/max and as in Numba: adopting the narrow type (NEP 50) would wrap the literal
  // silently, where NumPy 2 raises OverflowError. With uint64 a negative literal still wraps
  // (`u & -16` is a mask): int64 would make the result float64.
  auto held = [](const Instr *lit, const Type *t, const Type *other) -> const Type * {
    auto *s = dyn_cast<ScalarType>(other);
    int64_t v = 0;
    if (t->kind() != TypeKind::WeakInt || !s || s->kind() != TypeKind::Int || s->bits() >= 64 ||
        !constantInt(lit, v))
      return t;
    const int64_t lo = s->isSigned() ? -(int64_t(1) << (s->bits() - 1)) : 0;
    const int64_t hi = (int64_t(1) << (s->isSigned() ? s->bits() - 1 : s->bits())) - 1;
    return v < lo || v > hi ? types::int64() : t;
  };
  const Type *a0 = a;
  a = held(i->operand(0), a, b);
  b = held(i->operand(1), b, a0);
  auto bad = [&]() {
    fail(DiagCode::OperatorTypes, i,
         {std::string(binaryOpName(i->binop)) + (i->inplace ? "=" : ""), i->operand(0)->type->str(),
          i->operand(1)->type->str()});
  };
  if (isDatetimeLike(a) || isDatetimeLike(b)) { // TypingDatetime.cpp
    if (const Type *r = datetimeBinaryType(i->binop, a, b))
      return r;
    bad();
  }
  a = intEnumAsInt(a); // an IntEnum member computes as its int value
  b = intEnumAsInt(b);
  if (a->kind() == TypeKind::Pointer || b->kind() == TypeKind::Pointer)
    fail(DiagCode::PointerArithmetic, i,
         {std::string(binaryOpName(i->binop)) + (i->inplace ? "=" : ""), a->str(), b->str()});
  if (!a->isScalarNumber() || !b->isScalarNumber())
    bad();
  const Type *p = promote(a, b);
  if (!p)
    bad();
  const bool isBool = p->kind() == TypeKind::Bool;
  switch (i->binop) {
  case BinaryOp::Add:
  case BinaryOp::Sub:
  case BinaryOp::Mul:
  case BinaryOp::Pow:
    return isBool ? types::int64() : p;
  case BinaryOp::TrueDiv:
    if (isBool || p->kind() == TypeKind::Int)
      return types::float64();
    if (p->kind() == TypeKind::WeakInt)
      return types::weakFloat();
    return p;
  case BinaryOp::FloorDiv:
  case BinaryOp::Mod:
    if (isComplexLike(p))
      bad();
    return isBool ? types::int64() : p;
  case BinaryOp::And:
  case BinaryOp::Or:
  case BinaryOp::Xor:
    // int64 & uint64 promotes to float64: NumPy rejects it too.
    if (!isIntOrBool(a) || !isIntOrBool(b) || !isIntOrBool(p))
      bad();
    return p;
  case BinaryOp::LShift:
  case BinaryOp::RShift:
    if (!isIntOrBool(a) || !isIntOrBool(b) || !isIntOrBool(p))
      bad();
    return isBool ? types::int64() : p;
  case BinaryOp::MatMul:
    bad();
  }
  bad();
  return nullptr;
}

const Type *Typer::typeUnaryOp(UnaryOpInstr *i) {
  const Type *t = intEnumAsInt(i->operand(0)->type);
  if (auto *w = dyn_cast<WeakType>(t); w && w->literalValue())
    t = types::weakInt(); // -n is not n: the literal's value stays with its own instruction
  switch (i->unop) {
  case UnaryOpKind::Not:
    return typeTruth(i, t);
  case UnaryOpKind::Neg:
  case UnaryOpKind::Pos:
    if (t->kind() == TypeKind::Timedelta)
      return t;
    if (!t->isScalarNumber())
      break;
    return t->kind() == TypeKind::Bool ? types::int64() : t;
  case UnaryOpKind::Invert:
    if (t->kind() == TypeKind::Bool)
      return types::int64();
    if (isIntLike(t))
      return t;
    break;
  }
  fail(DiagCode::UnaryTypes, i, {unaryOpName(i->unop), t->str()});
}

const Type *Typer::typeCompare(CompareInstr *i) {
  const Type *a = i->operand(0)->type;
  const Type *b = i->operand(1)->type;
  const bool noneSide = a->kind() == TypeKind::None || b->kind() == TypeKind::None;
  const bool eqNe = i->cmp == CmpOp::Eq || i->cmp == CmpOp::Ne;
  const bool isNot = i->cmp == CmpOp::Is || i->cmp == CmpOp::IsNot;
  // Enum members (ir/Enums.h): members compare by value within a class (==, !=, is, is not);
  // members of different classes, and an Enum member and anything else, are never equal or
  // identical (as in Python); IntEnum members are ints otherwise.
  auto *ma = dyn_cast<EnumMemberType>(a), *mb = dyn_cast<EnumMemberType>(b);
  if (ma || mb) {
    if ((isNot && ma && mb) || (eqNe && ma == mb))
      return types::boolean();
    const bool intA = !ma || ma->isIntEnum(), intB = !mb || mb->isIntEnum();
    if (eqNe &&
        !(intA && intB && intEnumAsInt(a)->isScalarNumber() && intEnumAsInt(b)->isScalarNumber()))
      return types::boolean(); // never equal
    a = intEnumAsInt(a);
    b = intEnumAsInt(b);
  }
  if (isa<CharSeqType>(a) || isa<CharSeqType>(b)) // S and U elements (TypingStrings.cpp)
    return typeCharSeqCompare(i, a, b);
  if (isDatetimeLike(a) || isDatetimeLike(b)) { // TypingDatetime.cpp
    if (!isNot && datetimeComparable(i->cmp, a, b))
      return types::boolean();
    fail(DiagCode::OperatorTypes, i, {cmpOpName(i->cmp), a->str(), b->str()});
  }
  switch (i->cmp) {
  case CmpOp::In:
  case CmpOp::NotIn:
    fail(DiagCode::UnsupportedConstruct, i,
         {std::string("the '") + cmpOpName(i->cmp) + "' operator"});
  case CmpOp::Is:
  case CmpOp::IsNot:
    // None on a side; two bools (`pred is True`): the singletons compare by value, as numba's
    if (noneSide ||
        (concretize(a)->kind() == TypeKind::Bool && concretize(b)->kind() == TypeKind::Bool))
      return types::boolean();
    fail(DiagCode::UnsupportedConstruct, i,
         {std::string("'") + cmpOpName(i->cmp) + "' between " + a->str() + " and " + b->str()});
  case CmpOp::Eq:
  case CmpOp::Ne:
    if (noneSide || (a->isScalarNumber() && b->isScalarNumber()))
      return types::boolean();
    // Strings known at compile time (constants, literals passed by callers): folded.
    if (constantStringOf(i->operand(0), &fn_) && constantStringOf(i->operand(1), &fn_))
      return types::boolean();
    break;
  case CmpOp::Lt:
  case CmpOp::Le:
  case CmpOp::Gt:
  case CmpOp::Ge:
    if (isRealNumber(a) && isRealNumber(b))
      return types::boolean();
    break;
  }
  fail(DiagCode::OperatorTypes, i, {cmpOpName(i->cmp), a->str(), b->str()});
}

const Type *Typer::typeTruth(Instr *i, const Type *t) {
  t = intEnumAsInt(t);
  if (t->isScalarNumber() || t->kind() == TypeKind::None)
    return types::boolean();
  fail(DiagCode::NoTruthValue, i, {t->str()});
}

const Type *Typer::typeGetAttr(GetAttrInstr *i) {
  const Type *t = i->operand(0)->type;
  const std::string &attr = i->attr;
  if (auto *ec = dyn_cast<EnumClassType>(t)) { // Color.red: a member
    if (ec->member(attr))
      return ec->memberType();
    std::vector<std::string> names;
    for (const auto &m : ec->info().members)
      names.push_back(m.first);
    fail(DiagCode::UnsupportedAttribute, i, {t->str(), attr}, didYouMean(closestName(attr, names)));
  }
  if (auto *em = dyn_cast<EnumMemberType>(t)) { // member.value
    if (attr == "value")
      return em->dtype();
    fail(DiagCode::UnsupportedAttribute, i, {t->str(), attr},
         attr == "name" ? " (only 'value' is: member names are not values in kernels)" : "");
  }
  if (auto *sym = dyn_cast<SymbolType>(t)) {
    const std::string &path = sym->path();
    if (path.rfind(kPyFunctionPrefix, 0) == 0)
      fail(DiagCode::UnsupportedAttribute, i,
           {"function " + path.substr(std::string(kPyFunctionPrefix).size()), attr});
    if (path == builtinPath(BuiltinId::ArrayCtypes)) {
      // a.ctypes.data: the address of the array's data, as numba's uintp. `a.ctypes` has no
      // run-time value, so only the chained form compiles.
      auto *ct = dyn_cast<GetAttrInstr>(i->operand(0));
      if (attr != "data")
        fail(DiagCode::UnsupportedAttribute, i, {"array.ctypes", attr});
      if (!ct || ct->builtin != BuiltinId::ArrayCtypes)
        fail(DiagCode::UnsupportedConstruct, i,
             {"a.ctypes kept in a variable (write a.ctypes.data)"});
      i->builtin = BuiltinId::ArrayCtypesData;
      return types::uint64();
    }
    if (path == kFfiPath) { // a cffi.FFI object: only from_buffer compiles (numba's set)
      if (attr == "from_buffer")
        return types::symbol(kFfiFromBufferPath);
      fail(DiagCode::UnsupportedAttribute, i, {"cffi.FFI", attr},
           " (kernels can call ffi.from_buffer(array) only)");
    }
    if (path == "ptxjit") { // the package: the names it shares with the kernel language
      if (attr == "literal_unroll" || attr == "cuda")
        return types::symbol(attr == "cuda" ? "cuda" : builtinPath(BuiltinId::LiteralUnroll));
      if (attr == "carray" || attr == "farray")
        return types::symbol("numpy_support." + attr);
      if (const ScalarType *s = types::scalarByName(attr))
        return types::symbol("numpy." + s->str());
      fail(DiagCode::UnsupportedAttribute, i, {"module ptxjit", attr});
    }
    if (path == "cuda") { // cuda.float32 (numba.cuda's type names): the NumPy type
      if (const ScalarType *s = types::scalarByName(attr))
        return types::symbol("numpy." + s->str());
      if (const char *vector = cudaVectorAlias(attr)) // cuda.float4 is cuda.float32x4
        return types::symbol(std::string("cuda.") + vector);
    }
    if (path == "types" || path == "cuda.types") { // types.uint8, cuda.types.float16: the
                                                   // NumPy type of that name
      if (const ScalarType *s = types::scalarByName(attr))
        return types::symbol("numpy." + s->str());
      fail(DiagCode::UnsupportedAttribute, i, {"module types", attr});
    }
    std::string full = path + "." + attr;
    BuiltinId id = builtinByPath(full);
    if (isValueBuiltin(id)) {
      // int64, not Numba's int32: Numba widens every integer operation to int64, so with
      // NumPy's promotion (ours) an int32 `threadIdx.x + blockIdx.x * blockDim.x` would wrap
      // around where Numba's does not (grids of more than 2**31 threads). The values are
      // never negative, which also lets the index arithmetic skip negative-index wraparound.
      i->builtin = id;
      return types::int64();
    }
    if (const Type *v = cudaAttrType(id)) { // cuda.laneid, cuda.warpsize (TypingCuda.cpp)
      i->builtin = id;
      return v;
    }
    if (const MathKind *mk = mathKindOf(id); mk && *mk == MathKind::Constant) {
      i->builtin = id; // math.pi, numpy.inf, ...: a weak float constant
      return types::weakFloat();
    }
    if (full == "numpy.newaxis") // NumPy's name for None in indexes: `a[:, np.newaxis]`
      return types::none();
    if (id != BuiltinId::None || isBuiltinPrefix(full) || isModule(path))
      return types::symbol(full);
    fail(DiagCode::UnsupportedAttribute, i, {path, attr}, attributeHint(path, attr));
  }
  if (auto *arr = dyn_cast<ArrayType>(t)) {
    if (attr == "shape") {
      i->builtin = BuiltinId::ArrayShape;
      return types::tuple(std::vector<const Type *>(arr->ndim(), types::int64()));
    }
    if (attr == "size") {
      i->builtin = BuiltinId::ArraySize;
      return types::int64();
    }
    if (attr == "ndim") {
      i->builtin = BuiltinId::ArrayNdim;
      return types::int64();
    }
    if (attr == "dtype") // compile-time: the NumPy type, e.g. cuda.local.array(n, a.dtype)
      return types::symbol("numpy." + arr->dtype()->str());
    if (const Type *v = arrayViewAttrType(arr, attr)) // .real, .imag, .reshape, .view
      return v;
    auto *rec = dyn_cast<RecordType>(arr->dtype());
    if (attr == "ctypes" && !(rec && rec->field(attr))) { // only `a.ctypes.data` (below)
      i->builtin = BuiltinId::ArrayCtypes;
      return types::symbol(builtinPath(BuiltinId::ArrayCtypes));
    }
    if (rec)
      return recordArrayField(i, arr, attr);
    if (const char *path = reductionMethodPath(attr)) // a.sum(), a.min(), ... (typed at the call)
      return types::symbol(path);
  }
  if (auto *r = dyn_cast<RecordType>(t))
    return recordFieldValueType(recordField(i, r, attr).type, r->readonly());
  if (int k = namedTupleField(t, attr); k >= 0) // p.x of a namedtuple (ir/NamedTuples.h)
    return cast<TupleType>(t)->elements()[k];
  BuiltinId numberBuiltin = BuiltinId::None;
  if (const Type *r = numberAttrType(t, attr, numberBuiltin)) {
    i->builtin = numberBuiltin; // z.real, z.imag, z.conjugate (see TypingMath.cpp)
    return r;
  }
  fail(DiagCode::UnsupportedAttribute, i, {t->str(), attr});
}

namespace {

/// Numba's rule for whether index component `t` keeps a contiguous array contiguous: an
/// integer always does; a slice only as the innermost component, and only without a step.
bool keepsContiguity(const Type *t, bool innermost) {
  if (isIntLike(t))
    return true;
  auto *s = dyn_cast<SliceType>(t);
  return innermost && s && !s->hasStep();
}

/// True when indexing with `comps` (outermost physical dimension first) keeps contiguity.
bool keepsContiguity(const std::vector<const Type *> &comps) {
  for (size_t k = 0; k < comps.size(); ++k)
    if (!keepsContiguity(comps[k], k + 1 == comps.size()))
      return false;
  return true;
}

} // namespace

const Type *Typer::arrayIndex(Instr *at, const ArrayType *arr, const Type *index) {
  // An index is one component or a tuple of them; each component is an integer (removes its
  // dimension), a slice (keeps it) or None (np.newaxis: adds a dimension of length 1), and one
  // Ellipsis stands for full slices of the dimensions the others leave. Fewer components than
  // dimensions keep the trailing dimensions whole (`out[y][x]`). All integers for all
  // dimensions give the element.
  int ellipses = 0;
  std::vector<const Type *> comps = indexComponentTypes(index, arr->ndim(), &ellipses);
  if (ellipses > 1)
    fail(DiagCode::IndexTypes, at,
         {arr->str(), index->str() + " (an index can only have a single ellipsis ('...'))"});
  int ints = 0, newAxes = 0;
  // `a[()]`: the element of a 0-d array, or the whole of any other (NumPy's rule).
  bool ok = true;
  for (const Type *c : comps) {
    if (isIntLike(c))
      ++ints;
    else if (c->kind() == TypeKind::None)
      ++newAxes;
    else if (!isa<SliceType>(c))
      ok = false;
  }
  const int nd = arr->ndim();
  if (ok && static_cast<int>(comps.size()) - newAxes > nd)
    fail(DiagCode::IndexTypes, at,
         {arr->str(), index->str() + " (too many indices for a " + std::to_string(nd) +
                          "-d array)"});
  if (!ok)
    fail(DiagCode::IndexTypes, at, {arr->str(), index->str()});
  if (ints == nd && newAxes == 0) {
    if (auto *r = dyn_cast<RecordType>(arr->dtype()); r && arr->readonly())
      return types::readonlyRecord(r); // its fields cannot be written either
    return arr->dtype();
  }
  // The view's layout, by Numba's rules, on the components as written (an Ellipsis splits
  // them into those before and after it; when every dimension is indexed its place does not
  // matter): a C array stays C when nothing follows an Ellipsis and the components before it
  // keep it contiguous; an F array stays F when nothing precedes one and those after it, read
  // from the innermost (last) dimension, do (without an Ellipsis: only when every dimension is
  // indexed). Anything else may be strided, a new axis included (Numba's rule: None does not
  // keep contiguity, although its stride does not matter).
  std::vector<const Type *> before, after;
  auto *tup = dyn_cast<TupleType>(index);
  bool afterEllipsis = false;
  for (const Type *c : tup ? tup->elements() : std::vector<const Type *>{index})
    if (c->kind() == TypeKind::Ellipsis)
      afterEllipsis = true;
    else
      (afterEllipsis ? after : before).push_back(c);
  int indexed = static_cast<int>(before.size() + after.size()) - newAxes;
  if (!afterEllipsis || indexed == nd) { // the Ellipsis (if any) stands for no dimension
    before.insert(before.end(), after.begin(), after.end());
    after.clear();
  }
  if (arr->layout() == Layout::F && indexed == nd) {
    after = std::move(before);
    before.clear();
  }
  Layout layout = Layout::A;
  if (arr->layout() == Layout::C && after.empty() && keepsContiguity(before))
    layout = Layout::C;
  else if (arr->layout() == Layout::F && before.empty() &&
           keepsContiguity(std::vector<const Type *>(after.rbegin(), after.rend())))
    layout = Layout::F;
  const int viewDims = nd - ints + newAxes;
  if (viewDims == 1 && layout == Layout::F)
    layout = Layout::C; // a contiguous 1-d view: C and F are the same, and kernels take C
  return types::array(arr->dtype(), viewDims, layout, arr->readonly());
}

const Type *Typer::typeBuildSlice(BuildSliceInstr *i) {
  // start:stop[:step], each part an integer or None. A step that is absent, None or the
  // constant 1 makes a "slice<a:b>" (it may keep contiguity); a constant 0 step is an error
  // here (a run-time 0 gives an empty view, see codegen/LowerSlices.cpp).
  if (i->numOperands() < 2 || i->numOperands() > 3)
    fail(DiagCode::Internal, i, {"slice with " + std::to_string(i->numOperands()) + " parts"});
  for (Instr *o : i->operands())
    if (o->type->kind() != TypeKind::None && !isIntLike(o->type))
      fail(DiagCode::SliceBound, i, {o->type->str()});
  bool hasStep = false;
  if (i->numOperands() == 3 && i->operand(2)->type->kind() != TypeKind::None) {
    int64_t step = 0;
    if (constantInt(i->operand(2), step)) {
      if (step == 0)
        fail(DiagCode::SliceStepZero, i, {});
      hasStep = step != 1;
    } else {
      hasStep = true;
    }
  }
  return types::slice(hasStep);
}

bool Typer::constantInt(const Instr *i, int64_t &out) {
  const ConstValue *v = nullptr;
  if (auto *c = dyn_cast<ConstInstr>(i))
    v = &c->value;
  else if (auto *g = dyn_cast<GlobalInstr>(i);
           g && g->value.kind == GlobalValue::Kind::Constant &&
           (g->value.dtype.empty() || g->value.dtype.find("int") != std::string::npos))
    v = &g->value.constant;
  if (!v || v->kind != ConstValue::Kind::Int || v->isUnsigned)
    return false;
  out = v->i;
  return true;
}

const Type *Typer::pointerElement(Instr *at, const PointerType *ptr, const Type *index) {
  // A raw pointer is indexed as numba does: one integer, no bounds, no wrapping of negative
  // indices (p[-1] is the element before the address).
  if (!ptr->pointee())
    fail(DiagCode::VoidPointerIndex, at, {ptr->str()});
  if (!isIntLike(index))
    fail(DiagCode::IndexTypes, at, {ptr->str(), index->str()});
  return ptr->pointee();
}

const Type *Typer::typeGetItem(GetItemInstr *i) {
  const Type *c = i->operand(0)->type;
  const Type *x = i->operand(1)->type;
  if (auto *ec = dyn_cast<EnumClassType>(c)) { // Color["red"]: a member, by constant name
    const std::string *name = constantString(i->operand(1));
    if (name && ec->member(*name))
      return ec->memberType();
    fail(DiagCode::IndexTypes, i,
         {c->str(), name ? "'" + *name + "' (no member has this name)"
                         : x->str() + " (an enum class is indexed by a member's name, a "
                                      "string constant)"});
  }
  if (auto *arr = dyn_cast<ArrayType>(c)) {
    if (const std::string *name = constantString(i->operand(1));
        name && isa<RecordType>(arr->dtype()))
      return recordArrayField(i, arr, *name);
    return arrayIndex(i, arr, x);
  }
  if (auto *r = dyn_cast<RecordType>(c)) {
    if (const RecordField *f = recordKey(i, r, i->operand(1)))
      return recordFieldValueType(f->type, r->readonly());
    fail(DiagCode::IndexTypes, i,
         {c->str(), x->str() + " (a record's field is selected by a "
                               "constant name or position)"});
  }
  if (auto *ptr = dyn_cast<PointerType>(c))
    return pointerElement(i, ptr, x);
  if (auto *tup = dyn_cast<TupleType>(c)) {
    int64_t k = 0;
    if (constantInt(i->operand(1), k)) {
      int64_t n = static_cast<int64_t>(tup->size());
      int64_t w = k < 0 ? k + n : k;
      if (w >= 0 && w < n)
        return tup->elements()[w];
      fail(DiagCode::IndexTypes, i, {c->str(), "out-of-range index " + std::to_string(k)});
    }
    // A run-time index into a tuple whose elements share one type (numba's UniTuple): an
    // index out of range raises IndexError (codegen/LowerArrays.cpp).
    auto *xs = dyn_cast<ScalarType>(concretize(x));
    const Type *et = tup->size() ? concretize(tup->elements()[0]) : nullptr;
    for (const Type *e : tup->elements())
      if (concretize(e) != et)
        et = nullptr;
    if (et && xs && (xs->kind() == TypeKind::Int || xs->kind() == TypeKind::Bool))
      return et;
    fail(DiagCode::IndexTypes, i, {c->str(), "non-constant " + x->str()});
  }
  fail(DiagCode::IndexTypes, i, {c->str(), x->str()});
}

const Type *Typer::typeSetItem(SetItemInstr *i) {
  const Type *c = i->operand(0)->type;
  const Type *x = i->operand(1)->type;
  const Type *v = intEnumAsInt(i->operand(2)->type); // an IntEnum member stores its value
  if (auto *ptr = dyn_cast<PointerType>(c)) {
    const ScalarType *elem = cast<ScalarType>(pointerElement(i, ptr, x));
    // Converted as an array store is: any real number, complex only into complex.
    if (!v->isScalarNumber() || (isComplexLike(v) && elem->kind() != TypeKind::Complex))
      fail(DiagCode::SetItemTypes, i, {c->str(), x->str(), v->str()});
    return types::void_();
  }
  if (auto *r = dyn_cast<RecordType>(c)) {
    const RecordField *f = recordKey(i, r, i->operand(1));
    if (!f)
      fail(DiagCode::IndexTypes, i,
           {c->str(), x->str() + " (a record's field is selected by a "
                                 "constant name or position)"});
    if (r->readonly())
      fail(DiagCode::ReadonlyArray, i, {c->str() + " (an element of a read-only array)"});
    checkRecordStore(i, f->type, i->operand(2), v, c->str(), "'" + f->name + "'");
    return types::void_();
  }
  auto *arr = dyn_cast<ArrayType>(c);
  if (!arr)
    fail(DiagCode::SetItemTypes, i, {c->str(), x->str(), v->str()});
  if (arr->readonly())
    fail(DiagCode::ReadonlyArray, i, {c->str()});
  if (isa<RecordType>(arr->dtype()) || isa<CharSeqType>(arr->dtype())) {
    // One element: a record of the same dtype, copied; a string constant or element. Views
    // of records and strings are not assignable.
    const Type *target = arrayIndex(i, arr, x);
    if (isa<ArrayType>(target))
      fail(DiagCode::UnsupportedConstruct, i,
           {"assigning to a view of an array of " +
            std::string(isa<RecordType>(arr->dtype()) ? "records" : arr->dtype()->str()) +
            " (assign its elements one by one)"});
    checkRecordStore(i, target, i->operand(2), v, c->str(), x->str());
    return types::void_();
  }
  bool ok = v->isScalarNumber() || isDatetimeLike(v);
  if (auto *view = dyn_cast<ArrayType>(arrayIndex(i, arr, x))) {
    // Assigning to a whole view: a scalar is broadcast into it; an array of no more
    // dimensions is copied with NumPy's broadcasting of its leading and size-1 dimensions.
    if (auto *src = dyn_cast<ArrayType>(v)) {
      ok = src->scalarDtype() && src->ndim() <= view->ndim();
      v = src->dtype();
    }
  }
  if (ok && isComplexLike(v) && arr->dtype()->kind() != TypeKind::Complex)
    ok = false;
  // Datetimes and timedeltas store into arrays of their kind in a unit they convert to exactly
  // (numba's safe conversion), and nothing else mixes with them.
  if (ok && (isDatetimeLike(v) || isDatetimeLike(arr->dtype())))
    ok = isDatetimeLike(v) && v->kind() == arr->dtype()->kind() &&
         canCastDateUnits(cast<ScalarType>(v)->unit(), cast<ScalarType>(arr->dtype())->unit());
  if (!ok)
    fail(DiagCode::SetItemTypes, i, {c->str(), x->str(), i->operand(2)->type->str()});
  return types::void_();
}

const Type *Typer::typeTupleGet(TupleGetInstr *i) {
  const Type *t = i->operand(0)->type;
  auto *tup = dyn_cast<TupleType>(t);
  if (!tup)
    fail(DiagCode::UnsupportedConstruct, i, {"unpacking a value of type " + t->str()});
  if (i->index < 0 || static_cast<size_t>(i->index) >= tup->size())
    fail(DiagCode::IndexTypes, i, {t->str(), "out-of-range index " + std::to_string(i->index)});
  return tup->elements()[i->index];
}

const IteratorType *Typer::iteratorOf(Instr *at, const Type *t) {
  if (t->kind() == TypeKind::Range)
    return types::iterator(IterKind::Range, types::int64(), {t});
  if (auto *arr = dyn_cast<ArrayType>(t)) {
    // Iterating an array yields its elements (1-d) or views of its rows, as a[k] does.
    if (arr->ndim() >= 1)
      return types::iterator(IterKind::Array, arrayIndex(at, arr, types::int64()), {t});
  }
  if (auto *it = dyn_cast<IteratorType>(t))
    return it; // iter() of an iterator (enumerate, zip) is the iterator itself
  if (auto *tup = dyn_cast<TupleType>(t)) {
    // A tuple whose elements share one type (numba's UniTuple) is iterated at run time; any
    // other tuple only by a `for` loop, which is unrolled (typeGetIter).
    if (const Type *e = uniformElementType(tup))
      return types::iterator(IterKind::Tuple, e, {t});
    fail(DiagCode::NotIterable, at,
         {t->str() + " (a tuple of elements of different types can only be iterated by a for "
                     "loop, which is unrolled)"});
  }
  fail(DiagCode::NotIterable, at, {t->str()});
}

const Type *Typer::uniformElementType(const TupleType *tup) {
  if (tup->size() == 0)
    return nullptr;
  const Type *e = concretize(tup->elements()[0]);
  for (const Type *x : tup->elements())
    if (concretize(x) != e)
      return nullptr;
  return e;
}

const Type *Typer::typeGetIter(GetIterInstr *i) {
  const Type *t = i->operand(0)->type;
  if (auto *tup = dyn_cast<TupleType>(t)) {
    // `for x in literal_unroll(t)`, and any for loop over a tuple whose elements differ in type
    // (or an empty one): the loop is unrolled, each copy of its body typed for its element
    // (LoopUnroll.h). The driver makes the copies and types the function again.
    auto *call = dyn_cast<CallInstr>(i->operand(0));
    bool literalUnroll = call && call->builtin == BuiltinId::LiteralUnroll;
    if (literalUnroll || !uniformElementType(tup))
      throw UnrollRequest{i, tup->size()};
  }
  return iteratorOf(i, t);
}

const Type *Typer::typeIterOp(Instr *i) {
  auto *it = dyn_cast<IteratorType>(i->operand(0)->type);
  // The frontend iterates only GET_ITER's results, which are iterators or a NotIterable error:
  // anything else comes from a code object whose FOR_ITER has no GET_ITER (found by fuzzing).
  if (!it)
    fail(DiagCode::MalformedCode, i,
         {"FOR_ITER on a value that is not an iterator (" + i->operand(0)->type->str() + ")"});
  return i->op() == Opcode::IterValid ? types::boolean() : it->yieldType();
}

const Type *Typer::typeBranch(BranchInstr *i) {
  const Type *t = i->operand(0)->type;
  // The frontend branches on Truth results (bool); anything else with a truth value is
  // accepted too (codegen tests it the way Truth would).
  typeTruth(i, t);
  return types::void_();
}

const Type *Typer::typeReturn(ReturnInstr *i) {
  Instr *v = i->value();
  const Type *t = v ? v->type : types::none();
  if (fn_.kind == FunctionKind::Kernel) {
    if (t->kind() != TypeKind::None && t->kind() != TypeKind::Void)
      fail(DiagCode::KernelReturnsValue, i, {t->str()});
    return types::void_();
  }
  if (t->kind() == TypeKind::None || t->kind() == TypeKind::Void) {
    if (returnType_)
      failReturnUnify(i, concretize(returnType_)->str(), "none");
    sawBareReturn_ = true;
    return types::void_();
  }
  if (sawBareReturn_)
    failReturnUnify(i, "none", concretize(t)->str());
  const Type *u = unifyTypes(returnType_, t);
  if (!u)
    failReturnUnify(i, concretize(returnType_)->str(), concretize(t)->str());
  returnType_ = u;
  return types::void_();
}

} // namespace ptxjit::ir::typing_detail
