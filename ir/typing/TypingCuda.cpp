// Typing of the cooperating-threads builtins (ir/typing/CudaBuiltins.def): shared, local and constant
// arrays, barriers and fences, warp functions, atomics and the integer/float intrinsics. The
// argument and result types follow Numba's CUDA target (numba/cuda/cudadecl.py).
#include "ir/ConstantOf.h"
#include "ir/NamedTuples.h"
#include "ir/typing/CudaBuiltins.h"
#include "ir/typing/TypingInternal.h"

#include <algorithm>
#include <cctype>
#include <unordered_map>
#include <utility>

namespace ptxjit::ir {

// ---- The table ----

const CudaBuiltinInfo *cudaBuiltinInfo(BuiltinId id) {
  switch (id) {
#define PTXJIT_CUDA_BUILTIN(i, path, kind, variant)                                                \
  case BuiltinId::i: {                                                                             \
    static const CudaBuiltinInfo info{CudaKind::kind, variant};                                    \
    return &info;                                                                                  \
  }
#include "ir/typing/CudaBuiltins.def"
#undef PTXJIT_CUDA_BUILTIN
  default:
    return nullptr;
  }
}

const char *cacheOperator(CudaKind kind, int variant) {
  static const char *const loads[] = {"ca", "cg", "cs", "lu", "cv"};
  static const char *const stores[] = {"cg", "cs", "wb", "wt"};
  if (kind == CudaKind::CacheLoad && variant >= 0 && variant < 5)
    return loads[variant];
  if (kind == CudaKind::CacheStore && variant >= 0 && variant < 4)
    return stores[variant];
  return "";
}

// ---- Vector types ----

namespace {

/// The base types of the vector types, in CudaBuiltins.def's order (variant / 4).
const ScalarType *vectorBase(int index) {
  using namespace types;
  static const ScalarType *const bases[] = {int8(),   int16(),  int32(),  int64(),   uint8(),
                                            uint16(), uint32(), uint64(), float32(), float64()};
  return index >= 0 && index < 10 ? bases[index] : nullptr;
}

} // namespace

VectorTypeInfo vectorTypeOfVariant(int variant) {
  return VectorTypeInfo{vectorBase(variant / 4), variant % 4 + 1};
}

const TupleType *vectorType(VectorTypeInfo v) {
  static const char *const names[] = {"x", "y", "z", "w"};
  std::vector<std::string> fields(names, names + v.count);
  return types::namedTuple(v.base->str() + "x" + std::to_string(v.count), fields,
                           std::vector<const Type *>(static_cast<size_t>(v.count), v.base));
}

std::optional<VectorTypeInfo> vectorTypeInfo(const Type *t) {
  if (!namedTupleNames(t))
    return std::nullopt;
  auto *tup = cast<TupleType>(t);
  const int count = static_cast<int>(tup->size());
  auto *base = count >= 1 && count <= 4 ? dyn_cast<ScalarType>(tup->elements()[0]) : nullptr;
  for (int k = 0; base && k < 10; ++k)
    if (vectorBase(k) == base) {
      VectorTypeInfo v{base, count};
      if (vectorType(v) == t) // the class name and the fields too
        return v;
      break;
    }
  return std::nullopt;
}

int dim3Symbol(const Type *t) {
  auto *sym = t ? dyn_cast<SymbolType>(t) : nullptr;
  if (!sym)
    return -1;
  static const char *const paths[] = {"cuda.threadIdx", "cuda.blockDim", "cuda.blockIdx",
                                      "cuda.gridDim"};
  for (int k = 0; k < 4; ++k)
    if (sym->path() == paths[k])
      return k;
  return -1;
}

// ---- Compile-time arguments ----

namespace {

/// A constant shape: its dimensions, and whether it was written as a tuple.
struct Shape {
  std::vector<int64_t> dims;
  bool tuple = false;
};

std::optional<Shape> shapeOfConst(const ConstValue &v) {
  if (v.kind == ConstValue::Kind::Int && !v.isUnsigned)
    return Shape{{v.i}, false};
  if (v.kind != ConstValue::Kind::Tuple)
    return std::nullopt;
  Shape s{{}, true};
  for (const ConstValue &e : v.elems) {
    if (e.kind != ConstValue::Kind::Int || e.isUnsigned)
      return std::nullopt;
    s.dims.push_back(e.i);
  }
  return s;
}

/// The operand a TupleGet of a tuple display selects (`(4, np.float32)[1]`, as `f(*t)` unpacks
/// it), or null.
const Instr *tupleElement(const TupleGetInstr *g) {
  auto *t = dyn_cast<BuildTupleInstr>(g->operand(0));
  if (!t || t->isList || t->hasSpread() || g->index < 0 || size_t(g->index) >= t->numOperands())
    return nullptr;
  return t->operand(static_cast<size_t>(g->index));
}

std::optional<Shape> shapeOf(const Instr *i, const Function &fn, int depth) {
  if (!i || depth > 16)
    return std::nullopt;
  if (auto *c = dyn_cast<ConstInstr>(i))
    return shapeOfConst(c->value);
  if (auto *g = dyn_cast<GlobalInstr>(i)) {
    if (g->value.kind != GlobalValue::Kind::Constant)
      return std::nullopt;
    // A NumPy scalar global counts when it is an integer (np.int32(16)).
    if (!g->value.dtype.empty() && g->value.dtype.find("int") == std::string::npos)
      return std::nullopt;
    return shapeOfConst(g->value.constant);
  }
  if (auto *g = dyn_cast<TupleGetInstr>(i)) { // an element of a constant tuple: `n, m = SHAPE`
    if (const Instr *e = tupleElement(g))
      return shapeOf(e, fn, depth + 1);
    std::optional<Shape> whole = shapeOf(g->operand(0), fn, depth + 1);
    if (!whole || !whole->tuple || g->index < 0 || size_t(g->index) >= whole->dims.size())
      return std::nullopt;
    return Shape{{whole->dims[static_cast<size_t>(g->index)]}, false};
  }
  if (auto *g = dyn_cast<GetItemInstr>(i)) { // SHAPE[1]: an element of a constant tuple
    std::optional<Shape> whole = shapeOf(g->operand(0), fn, depth + 1);
    std::optional<Shape> index = shapeOf(g->operand(1), fn, depth + 1);
    if (!whole || !whole->tuple || !index || index->tuple)
      return std::nullopt;
    int64_t n = static_cast<int64_t>(whole->dims.size()), k = index->dims[0];
    if (k < 0) // Python's negative index (SHAPE[-1])
      k += n;
    if (k < 0 || k >= n)
      return std::nullopt;
    return Shape{{whole->dims[static_cast<size_t>(k)]}, false};
  }
  if (auto *t = dyn_cast<BuildTupleInstr>(i)) {
    if (t->isList || t->hasSpread()) // a list is no shape (as in Numba)
      return std::nullopt;
    Shape s{{}, true};
    for (const Instr *e : t->operands()) {
      std::optional<Shape> d = shapeOf(e, fn, depth + 1);
      if (!d || d->tuple)
        return std::nullopt;
      s.dims.push_back(d->dims[0]);
    }
    return s;
  }
  if (auto *ld = dyn_cast<LoadLocalInstr>(i)) {
    // A local assigned exactly once (n = 16; ...; cuda.local.array(n, ...)); a parameter's one
    // store is of its Arg (below).
    const Instr *only = onlyStoredValue(fn, ld->var);
    return only ? shapeOf(only, fn, depth + 1) : std::nullopt;
  }
  if (auto *a = dyn_cast<ArgInstr>(i)) { // int literals the caller passed (types::intLiteral)
    if (a->index < 0 || size_t(a->index) >= fn.argTypes.size())
      return std::nullopt;
    auto literal = [](const Type *t) -> std::optional<int64_t> {
      auto *w = dyn_cast<WeakType>(t);
      if (w && w->literalValue())
        return *w->literalValue();
      return std::nullopt;
    };
    const Type *t = fn.argTypes[a->index];
    if (auto v = literal(t))
      return Shape{{*v}, false};
    auto *tup = dyn_cast<TupleType>(t);
    if (!tup)
      return std::nullopt;
    Shape s{{}, true};
    for (const Type *e : tup->elements()) {
      auto v = literal(e);
      if (!v)
        return std::nullopt;
      s.dims.push_back(*v);
    }
    return s;
  }
  return std::nullopt;
}

} // namespace

std::optional<std::vector<int64_t>> constantShape(const Instr *i, const Function &fn) {
  std::optional<Shape> s = shapeOf(i, fn, 0);
  if (!s)
    return std::nullopt;
  return s->dims;
}

const Type *constantIntsType(const Instr *i, const Function &fn) {
  std::optional<Shape> s = shapeOf(i, fn, 0);
  if (!s)
    return nullptr;
  if (!s->tuple)
    return types::intLiteral(s->dims[0]);
  std::vector<const Type *> elems;
  for (int64_t d : s->dims)
    elems.push_back(types::intLiteral(d));
  return types::tuple(elems);
}

NumpyDtypeName numpyDtypeString(const std::string &text) {
  std::string s = text;
  // Byte order: '<', '=' and '|' are this (little-endian) machine's; '>' is known to NumPy but
  // kernels read native order only (one-byte types have none).
  bool bigEndian = false;
  if (!s.empty() && (s[0] == '<' || s[0] == '=' || s[0] == '|' || s[0] == '>')) {
    bigEndian = s[0] == '>';
    s.erase(0, 1);
  }
  // NumPy's own spellings where they differ from Numba's names (np.dtype('byte') is int8).
  // clang-format off
  static const std::unordered_map<std::string, std::string> numpyNames = {
      {"?", "bool"},         {"b", "int8"},         {"B", "uint8"},      {"byte", "int8"},
      {"ubyte", "uint8"},    {"h", "int16"},        {"H", "uint16"},     {"short", "int16"},
      {"ushort", "uint16"},  {"i", "int32"},        {"I", "uint32"},     {"l", "int64"},
      {"L", "uint64"},       {"long", "int64"},     {"ulong", "uint64"}, {"q", "int64"},
      {"Q", "uint64"},       {"longlong", "int64"}, {"int", "int64"},    {"uint", "uint64"},
      {"ulonglong", "uint64"}, {"p", "int64"},      {"P", "uint64"},     {"e", "float16"},
      {"f", "float32"},      {"d", "float64"},      {"float", "float64"}, {"F", "complex64"},
      {"D", "complex128"},   {"complex", "complex128"}, {"csingle", "complex64"},
      {"cdouble", "complex128"}, {"cfloat", "complex128"}, {"bool8", "bool"}};
  // clang-format on
  auto it = numpyNames.find(s);
  const ScalarType *t = types::scalarByName(it != numpyNames.end() ? it->second : s);
  if (t)
    return {bigEndian && t->byteSize() > 1 ? nullptr : t, true};
  // Dtypes NumPy has and kernels do not: objects, strings, bytes, void, datetimes, long
  // doubles, and structured dtypes written as strings ("i4,f8").
  static const char *const others[] = {
      "O",        "object",     "object_",     "S",       "a", "bytes",      "bytes_",
      "U",        "str",        "str_",        "unicode", "V", "void",       "M",
      "m",        "datetime64", "timedelta64", "g",       "G", "longdouble", "clongdouble",
      "float128", "complex256", "f16",         "c32"};
  for (const char *o : others) {
    std::string p = o;
    if (s.rfind(p, 0) != 0)
      continue;
    std::string rest = s.substr(p.size()); // a size ("S5", "M8"), a unit ("M8[D]")
    bool digits = rest.find_first_not_of("0123456789") == std::string::npos;
    bool unit =
        !rest.empty() && (rest[0] == '[' || std::isdigit(static_cast<unsigned char>(rest[0])));
    if (digits || ((p == "M" || p == "m" || p == "datetime64" || p == "timedelta64") && unit))
      return {nullptr, true};
  }
  if (s.find(',') != std::string::npos)
    return {nullptr, true};
  return {nullptr, false};
}

const Type *constantDtype(const Instr *i) {
  if (!i)
    return nullptr;
  if (auto *g = dyn_cast<TupleGetInstr>(i))
    if (const Instr *e = tupleElement(g))
      return constantDtype(e);
  const ConstValue *str = nullptr;
  if (auto *c = dyn_cast<ConstInstr>(i))
    str = &c->value;
  else if (auto *g = dyn_cast<GlobalInstr>(i); g && g->value.kind == GlobalValue::Kind::Constant)
    str = &g->value.constant;
  if (str)
    return str->kind == ConstValue::Kind::String ? numpyDtypeString(str->s).type : nullptr;
  // numpy.float32, np.float32, a ptxjit/numba type object, a structured numpy.dtype or a
  // record array's `.dtype`: the symbol "numpy.<name>" ("numpy.Record(...)" for records).
  if (auto *sym = i->type ? dyn_cast<SymbolType>(i->type) : nullptr) {
    const std::string prefix = "numpy.";
    if (sym->path().rfind(prefix, 0) == 0)
      return types::dtypeByName(sym->path().substr(prefix.size()));
  }
  return nullptr;
}

int64_t arrayAlignment(const CallInstr *i, const Instr *arg, const Function &fn,
                       const std::string &name) {
  if (!arg)
    return 0;
  const ConstValue *c = constantValueOf(arg);
  if ((c && c->kind == ConstValue::Kind::None) ||
      (arg->type && arg->type->kind() == TypeKind::None))
    return 0;
  const Type *lit = c && c->kind == ConstValue::Kind::Bool ? nullptr : constantIntsType(arg, fn);
  auto *w = lit ? dyn_cast<WeakType>(lit) : nullptr;
  if (!w || !w->literalValue())
    raiseDiag(DiagCode::ConstantRequired, fn.filename, i->loc,
              {name, "the alignment",
               "RequireLiteralValue: alignment must be a constant integer; got " +
                   (arg->type ? arg->type->str() : std::string("?"))});
  const int64_t a = *w->literalValue();
  const char *why = a <= 0               ? "Alignment must be positive"
                    : (a & (a - 1)) != 0 ? "Alignment must be a power of 2"
                    : a % 8 != 0         ? "Alignment must be a multiple of 8"
                                         : nullptr;
  if (why)
    raiseDiag(DiagCode::ArgumentValue, fn.filename, i->loc,
              {name, std::string(why) + " (the size of a pointer), got " + std::to_string(a)});
  return a;
}

bool bindCallArgs(const CallInstr *i, const std::vector<std::string> &names,
                  std::vector<const Instr *> &out, std::string &why) {
  out.assign(names.size(), nullptr);
  size_t n = i->numArgs(), nkw = std::min(i->kwNames.size(), n), npos = n - nkw;
  if (npos > names.size()) {
    why = "takes at most " + std::to_string(names.size()) + " arguments";
    return false;
  }
  for (size_t k = 0; k < npos; ++k)
    out[k] = i->arg(k);
  for (size_t k = 0; k < nkw; ++k) {
    const std::string &kw = i->kwNames[k];
    size_t p = 0;
    while (p < names.size() && names[p] != kw)
      ++p;
    if (p == names.size()) {
      why = "unexpected keyword argument '" + kw + "'";
      return false;
    }
    if (out[p]) {
      why = "argument '" + kw + "' given twice";
      return false;
    }
    out[p] = i->arg(npos + k);
  }
  return true;
}

namespace typing_detail {
namespace {

std::string callName(BuiltinId id) { return builtinPath(id); }

bool isType(const Type *t, std::initializer_list<const ScalarType *> allowed) {
  for (const ScalarType *a : allowed)
    if (t == a)
      return true;
  return false;
}

/// Numba's spelling of a tuple of elements spelled `elems`: "UniTuple(int32 x 2)" when they
/// are all the same, else "Tuple(Literal[int](1), int32)".
std::string numbaTupleSpelling(const std::vector<std::string> &elems) {
  if (!elems.empty() &&
      std::all_of(elems.begin(), elems.end(), [&](const std::string &e) { return e == elems[0]; }))
    return "UniTuple(" + elems[0] + " x " + std::to_string(elems.size()) + ")";
  std::string s;
  for (const std::string &e : elems)
    s += (s.empty() ? "" : ", ") + e;
  return "Tuple(" + s + ")";
}

std::string numbaConstSpelling(const ConstValue &v) {
  switch (v.kind) {
  case ConstValue::Kind::Int:
    return v.isUnsigned ? "uint64" : "Literal[int](" + v.str() + ")";
  case ConstValue::Kind::Bool:
    return "Literal[bool](" + v.str() + ")";
  case ConstValue::Kind::String:
    return "Literal[str](" + v.s + ")";
  case ConstValue::Kind::Float:
    return "float64";
  case ConstValue::Kind::Complex:
    return "complex128";
  case ConstValue::Kind::Bytes:
    return "readonly bytes(uint8, 1d, C)";
  case ConstValue::Kind::None:
    return "none";
  case ConstValue::Kind::Ellipsis:
    return "ellipsis";
  case ConstValue::Kind::Tuple: {
    std::vector<std::string> elems;
    for (const ConstValue &e : v.elems)
      elems.push_back(numbaConstSpelling(e));
    return numbaTupleSpelling(elems);
  }
  case ConstValue::Kind::Unsupported:
    break;
  }
  return "pyobject";
}

/// How Numba spells the type of call argument `i` in its "No implementation of function"
/// messages: constants as literals (Literal[int](5)), tuples built of them as Tuple/UniTuple of
/// those, a NumPy or ptxjit scalar type as its class (class(float32)), others as typed.
std::string numbaSpelling(const Instr *i, const Function &fn, int depth = 0) {
  if (depth > 16 || !i)
    return "?";
  if (const ConstValue *v = constantValueOf(i))
    return numbaConstSpelling(*v);
  if (auto *t = dyn_cast<BuildTupleInstr>(i); t && !t->isList && !t->hasSpread()) {
    std::vector<std::string> elems;
    for (const Instr *e : t->operands())
      elems.push_back(numbaSpelling(e, fn, depth + 1));
    return numbaTupleSpelling(elems);
  }
  if (auto *ld = dyn_cast<LoadLocalInstr>(i)) // a local assigned once: what it was given
    if (const Instr *only = onlyStoredValue(fn, ld->var); only && !isa<ArgInstr>(only))
      return numbaSpelling(only, fn, depth + 1);
  const Type *t = i->type;
  if (!t)
    return "?";
  if (auto *sym = dyn_cast<SymbolType>(t)) {
    const std::string prefix = "numpy.";
    if (sym->path().rfind(prefix, 0) == 0) {
      std::string rest = sym->path().substr(prefix.size());
      const ScalarType *s = types::scalarByName(rest);
      return s && s->str() == rest ? "class(" + rest + ")" : rest;
    }
  }
  if (auto *w = dyn_cast<WeakType>(t); w && w->literalValue())
    return t->str();
  return concretize(t)->str();
}

/// "Literal[int](10), dtype=class(float32)": the arguments of call `i` as Numba lists them.
std::string numbaArgList(const CallInstr *i, const Function &fn) {
  std::string s;
  size_t n = i->numArgs(), nkw = std::min(i->kwNames.size(), n);
  for (size_t k = 0; k < n; ++k) {
    s += k ? ", " : "";
    if (k >= n - nkw)
      s += i->kwNames[k - (n - nkw)] + "=";
    s += numbaSpelling(i->arg(k), fn);
  }
  return s;
}

/// The Python variable (not a "$stack" slot) the result of `i` is assigned to, or "".
std::string assignedVariable(const Function &fn, const Instr *i) {
  if (!i->parent)
    return "";
  for (const auto &ip : i->parent->instrs)
    if (auto *st = dyn_cast<StoreLocalInstr>(ip.get()); st && st->operand(0) == i) {
      const std::string &name = fn.vars.at(static_cast<size_t>(st->var)).name;
      if (!name.empty() && name[0] != '$')
        return name;
    }
  return "";
}

/// Why dtype argument `d` names no element type (constantDtype gave null): Numba's words for a
/// string NumPy does not know.
std::string dtypeProblem(const Instr *d, const Function &fn, const std::string &name) {
  const std::string supported =
      "kernels support bool, int8..int64, uint8..uint64, float16, float32, float64, complex64, "
      "complex128 and structured dtypes of those";
  if (std::optional<std::string> s = constantStringOf(d, &fn)) {
    if (!numpyDtypeString(*s).known)
      return "Invalid NumPy dtype specified: '" + *s + "'";
    return "NumPy dtype '" + *s + "' is not supported (" + supported + ")";
  }
  if (auto *sym = d->type ? dyn_cast<SymbolType>(d->type) : nullptr;
      sym && sym->path().rfind("numpy.dtype(", 0) == 0)
    return "NumPy " + sym->path().substr(6) + " is not supported (" + supported + ")";
  return formatDiag(DiagCode::ConstantRequired,
                    {name, "the dtype",
                     "a NumPy or ptxjit scalar type such as numpy.float32, a string such as "
                     "'float32' or a structured numpy.dtype (a record type); got " +
                         (d->type ? d->type->str() : std::string("?"))});
}

/// Numba's atomic operand types per operation.
bool atomicSupports(AtomicOp op, const ScalarType *d, std::string &supported) {
  using namespace types;
  switch (op) {
  case AtomicOp::And:
  case AtomicOp::Or:
  case AtomicOp::Xor:
    supported = "int32, uint32, int64 and uint64 arrays";
    return isType(d, {int32(), uint32(), int64(), uint64()});
  case AtomicOp::Inc:
  case AtomicOp::Dec:
    supported = "uint32 and uint64 arrays";
    return isType(d, {uint32(), uint64()});
  case AtomicOp::Exch:
    supported = "int32, uint32, int64, uint64, float32 and float64 arrays";
    return isType(d, {int32(), uint32(), int64(), uint64(), float32(), float64()});
  default:
    // add, sub, max, min, nanmax, nanmin; float16 and bfloat16 are ptxjit's additions
    // (atom.add.noftz.f16 on sm_70+, .bf16 on sm_90+, a compare-and-swap loop elsewhere).
    supported = "int32, uint32, int64, uint64, float16, bfloat16, float32 and float64 arrays";
    return isType(
        d, {int32(), uint32(), int64(), uint64(), float16(), bfloat16(), float32(), float64()});
  }
}

} // namespace

const char *cudaVectorAlias(const std::string &attr) {
  // CUDA C's base names and the base types numba-cuda maps them to (NumPy's byte, short, intc,
  // int_, longlong, ... on Linux).
  static const std::pair<const char *, const char *> bases[] = {
      {"char", "int8"},      {"short", "int16"},      {"int", "int32"},     {"long", "int64"},
      {"longlong", "int64"}, {"uchar", "uint8"},      {"ushort", "uint16"}, {"uint", "uint32"},
      {"ulong", "uint64"},   {"ulonglong", "uint64"}, {"float", "float32"}, {"double", "float64"}};
  static const std::unordered_map<std::string, std::string> table = [] {
    std::unordered_map<std::string, std::string> t;
    for (const auto &[alias, base] : bases)
      for (int n = 1; n <= 4; ++n)
        t[alias + std::to_string(n)] = base + std::string("x") + std::to_string(n);
    return t;
  }();
  auto it = table.find(attr);
  return it == table.end() ? nullptr : it->second.c_str();
}

const Type *cudaAttrType(BuiltinId id) {
  const CudaBuiltinInfo *info = cudaBuiltinInfo(id);
  return info && info->kind == CudaKind::Value ? types::int32() : nullptr;
}

const Type *globalArrayType(const GlobalValue &g, const GlobalInstr *i, const std::string &file) {
  const Type *dt = types::dtypeByName(g.dtype);
  if (!dt || !g.bytes)
    raiseDiag(DiagCode::UnsupportedGlobal, file, i->loc,
              {i->name, "numpy array of dtype " + g.dtype + " and " +
                            std::to_string(g.shape.size()) + " dimensions"});
  int64_t bytes = static_cast<int64_t>(g.bytes->size());
  if (bytes > kMaxConstArrayBytes)
    raiseDiag(DiagCode::UnsupportedGlobal, file, i->loc,
              {i->name, "numpy array of " + std::to_string(bytes) +
                            " bytes (global arrays are frozen into constant memory, which holds " +
                            std::to_string(kMaxConstArrayBytes) + " bytes)"});
  return types::array(dt, static_cast<int>(g.shape.size()), Layout::C, /*readonly=*/true);
}

const Type *globalDeviceArrayType(const GlobalValue &g, const GlobalInstr *i,
                                  const std::string &file) {
  const ScalarType *dt = types::scalarByName(g.dtype);
  if (!dt || g.strides.size() != g.shape.size())
    raiseDiag(DiagCode::UnsupportedGlobal, file, i->loc,
              {i->name, "device array of dtype " + g.dtype});
  // NumPy's contiguity, as device arrays passed as arguments are typed.
  auto contiguous = [&](bool fortran) {
    int64_t expect = dt->byteSize();
    size_t n = g.shape.size();
    for (size_t k = 0; k < n; ++k) {
      size_t d = fortran ? k : n - 1 - k;
      if (g.shape[d] == 0)
        return true;
      if (g.shape[d] != 1 && g.strides[d] != expect)
        return false;
      expect *= g.shape[d];
    }
    return true;
  };
  Layout layout = contiguous(false)                        ? Layout::C
                  : g.shape.size() > 1 && contiguous(true) ? Layout::F
                                                           : Layout::A;
  return types::array(dt, static_cast<int>(g.shape.size()), layout, /*readonly=*/false);
}

const Type *cudaCallType(const Function &fn, CallInstr *i, const CudaBuiltinInfo &info) {
  const std::string name = callName(i->builtin);
  const std::string &file = fn.filename;
  const size_t n = i->numArgs();
  std::vector<const Type *> args;
  for (size_t k = 0; k < n; ++k)
    args.push_back(i->arg(k)->type);
  auto bad = [&](const std::string &why = {}) -> const Type * {
    raiseDiag(DiagCode::CallArgs, file, i->loc,
              {name, argListStr(i) + (why.empty() ? "" : "; " + why)});
  };
  auto noKeywords = [&] {
    if (!i->kwNames.empty())
      bad("keyword arguments are not supported");
  };
  auto intArg = [&](size_t k, const char *what) {
    if (!isIntOrBool(args[k]))
      bad(std::string(what) + " must be an integer");
  };
  auto warpValue = [&](size_t k) -> const Type * {
    const Type *c = concretize(args[k]);
    using namespace types;
    if (!isType(c, {int32(), int64(), uint32(), uint64(), float32(), float64()}))
      raiseDiag(DiagCode::UnsupportedDtype, file, i->loc,
                {name, "a value of type " + c->str(),
                 "int32, int64, uint32, uint64, float32 and float64 values"});
    return c;
  };

  switch (info.kind) {
  case CudaKind::SharedArray:
  case CudaKind::LocalArray: {
    std::vector<const Instr *> bound;
    std::string why;
    if (!bindCallArgs(i, {"shape", "dtype", "alignment"}, bound, why))
      bad(why);
    if (!bound[0] || !bound[1])
      bad("expected (shape, dtype[, alignment])");
    arrayAlignment(i, bound[2], fn, name); // checked here, used by codegen
    // Numba's message for arguments its typer refuses ("No implementation of function ...
    // >>> array(shape=float32, dtype=class(float32))"), naming the variable whose type this
    // leaves unknown, then the reason.
    auto refuse = [&](const std::string &reason) {
      std::string var = assignedVariable(fn, i);
      raiseDiag(
          DiagCode::NoImplementation, file, i->loc,
          {name.substr(std::string("cuda.").size()), "array", numbaArgList(i, fn),
           (var.empty() ? "" : "Cannot infer the type of variable '" + var + "': ") + reason});
    };
    std::optional<std::vector<int64_t>> shape = constantShape(bound[0], fn);
    if (!shape)
      refuse(formatDiag(DiagCode::ConstantRequired,
                        {name, "the shape",
                         "an int or a tuple of ints written as literals, module globals or "
                         "closure constants; got a value of type " +
                             bound[0]->type->str()}));
    const Type *dt = constantDtype(bound[1]);
    if (!dt)
      refuse(dtypeProblem(bound[1], fn, name));
    if (shape->empty())
      bad("the shape must have at least one dimension");
    for (int64_t d : *shape)
      if (d < 0)
        bad("the shape has a negative dimension " + std::to_string(d));
    bool dynamic = shape->size() == 1 && (*shape)[0] == 0;
    if (dynamic && info.kind == CudaKind::LocalArray)
      bad("a local array needs a positive size");
    if (info.kind == CudaKind::SharedArray && shape->size() > 1)
      for (int64_t d : *shape)
        if (d == 0)
          bad("dynamic shared arrays (size 0) are one-dimensional");
    return types::array(dt, static_cast<int>(shape->size()), Layout::C);
  }
  case CudaKind::ConstArray: {
    noKeywords();
    if (n != 1)
      bad();
    auto *g = dyn_cast<GlobalInstr>(i->arg(0));
    if (!g || g->value.kind != GlobalValue::Kind::Array)
      raiseDiag(DiagCode::ConstantRequired, file, i->loc,
                {name, "the array",
                 "a NumPy array that is a module global or closure variable; "
                 "got a value of type " +
                     args[0]->str()});
    return args[0];
  }
  case CudaKind::Barrier:
    noKeywords();
    if (info.variant == 0) {
      if (n != 0)
        bad();
      return types::void_();
    }
    if (n != 1 || !isRealNumber(args[0]))
      bad("expected one predicate");
    return types::int32();
  case CudaKind::Syncwarp:
    noKeywords();
    if (n > 1)
      bad();
    if (n == 1)
      intArg(0, "the mask");
    return types::void_();
  case CudaKind::Fence:
    noKeywords();
    if (n != 0)
      bad();
    return types::void_();
  case CudaKind::Nanosleep:
    noKeywords();
    if (n != 1)
      bad("expected the time in nanoseconds");
    intArg(0, "the time");
    return types::void_();
  case CudaKind::Grid: // this_grid() gives the group (a compile-time value); group.sync()
    noKeywords();
    if (n != 0)
      bad("expected no arguments");
    return info.variant == 0 ? types::symbol(kGridGroupSymbol) : types::void_();
  case CudaKind::Value:
    raiseDiag(DiagCode::UnsupportedCall, file, i->loc,
              {name + " (it is a value: write " + name + " without parentheses)"});
  case CudaKind::Shfl: {
    noKeywords();
    if (n != 3)
      bad("expected (mask, value, " +
          std::string(info.variant == 0   ? "src_lane"
                      : info.variant == 3 ? "lane_mask"
                                          : "delta") +
          ")");
    intArg(0, "the mask");
    intArg(2, info.variant == 0   ? "the source lane"
              : info.variant == 3 ? "the lane mask"
                                  : "delta");
    // 16-bit floats are shuffled in a 32-bit register (ptxjit's addition to numba-cuda's types).
    const Type *v = concretize(args[1]);
    if (v == types::float16() || v == types::bfloat16())
      return v;
    return warpValue(1);
  }
  case CudaKind::Vote:
    // numba-cuda's rules and messages: an integer mask (not a bool), an integer or bool
    // predicate (not a float).
    noKeywords();
    if (n != 2)
      bad("expected (mask, predicate)");
    if (!isIntLike(args[0]))
      bad("Mask type must be an integer. Got " + args[0]->str());
    if (!isIntOrBool(args[1]))
      bad("Predicate must be an integer or boolean. Got " + args[1]->str());
    return info.variant == 3 ? static_cast<const Type *>(types::int32()) : types::boolean();
  case CudaKind::Match:
    noKeywords();
    if (n != 2)
      bad("expected (mask, value)");
    intArg(0, "the mask");
    warpValue(1);
    if (info.variant == 0)
      return types::int32();
    return types::tuple({types::int32(), types::boolean()});
  case CudaKind::LaneMask:
    noKeywords();
    if (n != 0)
      bad();
    return types::uint32();
  case CudaKind::Atomic:
  case CudaKind::AtomicCas: {
    noKeywords();
    const bool isCas = info.kind == CudaKind::AtomicCas;
    const bool hasIndex = !(isCas && info.variant == 0);
    const size_t want = isCas ? (hasIndex ? 4 : 3) : 3;
    if (n != want)
      bad(isCas
              ? (hasIndex ? "expected (array, index, old, value)" : "expected (array, old, value)")
              : "expected (array, index, value)");
    auto *arr = dyn_cast<ArrayType>(args[0]);
    if (!arr)
      bad("the first argument must be an array");
    if (arr->readonly())
      raiseDiag(DiagCode::ReadonlyArray, file, i->loc, {arr->str() + " (atomics write)"});
    std::string supported;
    const ScalarType *dt = arr->scalarDtype(); // null for records: no atomics on whole records
    bool ok = isCas ? atomicSupports(AtomicOp::And, dt, supported)
                    : atomicSupports(static_cast<AtomicOp>(info.variant), dt, supported);
    if (!ok)
      raiseDiag(DiagCode::UnsupportedDtype, file, i->loc,
                {name, "an array of " + arr->dtype()->str(), supported});
    if (hasIndex) {
      // numba-cuda converts each index to intp: a float (or bool) index is truncated as int()
      // truncates.
      const Type *idx = args[1];
      bool good = false;
      if (isRealNumber(idx))
        good = arr->ndim() == 1;
      else if (auto *tup = dyn_cast<TupleType>(idx)) {
        good = static_cast<int>(tup->size()) == arr->ndim();
        for (const Type *e : tup->elements())
          good = good && isRealNumber(e);
      }
      if (!good)
        raiseDiag(DiagCode::IndexTypes, file, i->loc,
                  {arr->str(), idx->str() + " (an atomic needs one index per dimension, each an "
                                            "integer or a float, which is truncated)"});
    } else if (arr->ndim() != 1) {
      bad("compare_and_swap needs a one-dimensional array (use cuda.atomic.cas with an index)");
    }
    for (size_t k = hasIndex ? 2 : 1; k < n; ++k)
      if (!isRealNumber(args[k]))
        bad("the value must be a real number");
    return arr->dtype();
  }
  case CudaKind::BitOp: {
    noKeywords();
    if (n != 1 || !isIntLike(args[0]))
      bad("expected one integer");
    auto *c = cast<ScalarType>(concretize(args[0]));
    switch (info.variant) {
    case 1: // brev: Numba's uint32 and uint64 loops
      return c->bits() <= 32 ? types::uint32() : types::uint64();
    case 3: // ffs
      return types::uint32();
    default: // popc, clz
      return c;
    }
  }
  case CudaKind::Fma:
    noKeywords();
    if (n != 3 || !isRealNumber(args[0]) || !isRealNumber(args[1]) || !isRealNumber(args[2]))
      bad("expected three real numbers");
    return mathFloatResult(args);
  case CudaKind::Cbrt:
    noKeywords();
    if (n != 1 || !isRealNumber(args[0]))
      bad("expected one real number");
    return mathFloatResult(args);
  case CudaKind::Vector: {
    // numba-cuda's constructors: scalars (converted to the base type) and vectors of the same
    // base type, whose components count in order, as many components in all as the result has.
    noKeywords();
    const VectorTypeInfo v = vectorTypeOfVariant(info.variant);
    int total = 0;
    for (size_t k = 0; k < n; ++k) {
      if (std::optional<VectorTypeInfo> a = vectorTypeInfo(args[k])) {
        if (a->base != v.base)
          bad("argument " + std::to_string(k + 1) + " is a vector of " + a->base->str() +
              ", not of " + v.base->str());
        total += a->count;
      } else if (isRealNumber(args[k])) {
        total += 1;
      } else {
        bad("the arguments must be numbers or " + v.base->str() + " vectors");
      }
    }
    if (total != v.count)
      bad("expected " + std::to_string(v.count) + " component" + (v.count > 1 ? "s" : "") +
          " in all, got " + std::to_string(total));
    return vectorType(v);
  }
  case CudaKind::CacheLoad:
  case CudaKind::CacheStore: {
    // numba-cuda's checks and messages (numba/cuda/cache_hints.py).
    noKeywords();
    const bool store = info.kind == CudaKind::CacheStore;
    const std::string op =
        std::string(store ? "st" : "ld") + cacheOperator(info.kind, info.variant);
    if (n != (store ? 3u : 2u))
      bad(store ? "expected (array, index, value)" : "expected (array, index)");
    auto *arr = dyn_cast<ArrayType>(args[0]);
    auto *ptr = dyn_cast<PointerType>(args[0]);
    if (!arr && !ptr)
      bad(op + " operates on arrays or pointers. Got type " + args[0]->str());
    const int ndim = arr ? arr->ndim() : 1;
    const Type *idx = args[1];
    const std::string idxName = concretize(idx)->str();
    if (isIntLike(idx)) {
      if (arr && ndim != 1)
        bad("Expected " + std::to_string(ndim) + " indices, got a scalar");
    } else if (auto *tup = dyn_cast<TupleType>(idx)) {
      if (ptr)
        bad("Pointers only support scalar indexing, got tuple of " + std::to_string(tup->size()));
      if (static_cast<int>(tup->size()) != ndim)
        bad("Expected " + std::to_string(ndim) + " indices, got " + std::to_string(tup->size()));
      for (const Type *e : tup->elements())
        if (!isIntLike(e))
          bad(idxName + " is not a valid index");
    } else {
      bad(idxName + " is not a valid index");
    }
    const ScalarType *dt = arr ? arr->scalarDtype() : ptr->pointee();
    if (!dt || (dt->kind() != TypeKind::Int && dt->kind() != TypeKind::Float))
      bad(op + " requires array of integer or float type, got " +
          (arr ? arr->dtype()->str() : std::string(dt ? dt->str() : "void")));
    if (!store)
      return dt;
    if (arr && arr->readonly())
      raiseDiag(DiagCode::ReadonlyArray, file, i->loc, {arr->str() + " (" + op + " writes)"});
    if (!isRealNumber(args[2]))
      bad("the value must be a real number (it is converted to " + dt->str() + ")");
    return types::void_();
  }
  case CudaKind::Selp: {
    noKeywords();
    if (n != 3 || !isRealNumber(args[0]) || !isRealNumber(args[1]) || !isRealNumber(args[2]))
      bad("expected (condition, a, b) with real numbers");
    const Type *p = promote(args[1], args[2]);
    if (!p)
      bad();
    return concretize(p);
  }
  }
  raiseDiag(DiagCode::Internal, file, i->loc, {"unknown kind of builtin " + name});
}

} // namespace typing_detail
} // namespace ptxjit::ir
