// Interned type factories. Every type lives in one process-wide table keyed by a string that
// identifies it (usually its spelling), guarded by a mutex; types are never freed.
#include "ir/Types.h"

#include "ir/Datetime.h"
#include "ir/InterningLocks.h"
#include "ir/NamedTuples.h"

#include "ir/Values.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <unordered_map>

namespace ptxjit::ir {
namespace {

class TypeTable {
public:
  /// The type for `key`, created by `make` on first use.
  template <typename T, typename Make> const T *get(const std::string &key, Make &&make) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = table_.find(key);
    if (it != table_.end())
      return static_cast<const T *>(it->second.get());
    std::unique_ptr<T> t = make();
    const T *raw = t.get();
    table_.emplace(key, std::move(t));
    return raw;
  }
  std::mutex &lock() { return mutex_; }

private:
  std::mutex mutex_;
  std::unordered_map<std::string, std::unique_ptr<Type>> table_;
};

TypeTable &table() {
  // Leaked on purpose: types must outlive every static that might refer to them.
  static TypeTable *t = new TypeTable();
  return *t;
}

} // namespace

std::mutex &typeTableLock() { return table().lock(); }

namespace {

const SimpleType *simple(TypeKind k, const char *spelling) {
  return table().get<SimpleType>(std::string("simple:") + spelling,
                                 [&] { return std::make_unique<SimpleType>(k, spelling); });
}

/// The simple type of kind K, looked up once (types are interned and never freed): the typer
/// asks for void and none at nearly every instruction, and each look-up builds a key and takes
/// the table's lock. One simple type per kind.
template <TypeKind K> const SimpleType *simpleOnce(const char *spelling) {
  static const SimpleType *t = simple(K, spelling);
  return t;
}

const ScalarType *scalar(TypeKind k, int bits, bool isSigned, const std::string &spelling) {
  return table().get<ScalarType>("scalar:" + spelling, [&] {
    return std::make_unique<ScalarType>(k, bits, isSigned, spelling);
  });
}

const char *layoutName(Layout l) {
  switch (l) {
  case Layout::C:
    return "C";
  case Layout::F:
    return "F";
  case Layout::A:
    return "A";
  }
  return "A";
}

std::string joinTypes(const std::vector<const Type *> &ts) {
  std::string s;
  for (size_t i = 0; i < ts.size(); ++i) {
    if (i)
      s += ", ";
    s += ts[i]->str();
  }
  return s;
}

/// A key component that is unique per type object (types are interned, so the pointer is).
std::string ptrKey(const Type *t) { return std::to_string(reinterpret_cast<uintptr_t>(t)); }

} // namespace

namespace types {

const Type *void_() { return simpleOnce<TypeKind::Void>("void"); }
const Type *none() { return simpleOnce<TypeKind::None>("none"); }
const Type *range() { return simpleOnce<TypeKind::Range>("range_state64"); }
const Type *string() { return simpleOnce<TypeKind::String>("unicode_type"); }
const Type *bytes() { return simpleOnce<TypeKind::Bytes>("readonly bytes(uint8, 1d, C)"); }
const Type *ellipsis() { return simpleOnce<TypeKind::Ellipsis>("ellipsis"); }
const CharSeqType *charSeq(int64_t count, bool unicode) {
  if (count < 1)
    throw std::invalid_argument("a character sequence needs a length >= 1, not " +
                                std::to_string(count));
  std::string s = std::string(unicode ? "[unichr x " : "[char x ") + std::to_string(count) + "]";
  return table().get<CharSeqType>("charseq:" + s,
                                  [&] { return std::make_unique<CharSeqType>(count, unicode, s); });
}
const SliceType *slice(bool hasStep) {
  const char *s = hasStep ? "slice<a:b:c>" : "slice<a:b>";
  return table().get<SliceType>(std::string("slice:") + s,
                                [&] { return std::make_unique<SliceType>(hasStep, s); });
}

const ScalarType *boolean() {
  static const ScalarType *t = scalar(TypeKind::Bool, 1, false, "bool");
  return t;
}

const ScalarType *integer(int bits, bool isSigned) {
  if (bits != 8 && bits != 16 && bits != 32 && bits != 64)
    bits = 64;
  std::string s = (isSigned ? "int" : "uint") + std::to_string(bits);
  return scalar(TypeKind::Int, bits, isSigned, s);
}
const ScalarType *int8() {
  static const ScalarType *t = integer(8, true);
  return t;
}
const ScalarType *int16() {
  static const ScalarType *t = integer(16, true);
  return t;
}
const ScalarType *int32() {
  static const ScalarType *t = integer(32, true);
  return t;
}
const ScalarType *int64() {
  static const ScalarType *t = integer(64, true);
  return t;
}
const ScalarType *uint8() {
  static const ScalarType *t = integer(8, false);
  return t;
}
const ScalarType *uint16() {
  static const ScalarType *t = integer(16, false);
  return t;
}
const ScalarType *uint32() {
  static const ScalarType *t = integer(32, false);
  return t;
}
const ScalarType *uint64() {
  static const ScalarType *t = integer(64, false);
  return t;
}

const ScalarType *floating(int bits) {
  if (bits != 16 && bits != 32)
    bits = 64;
  return scalar(TypeKind::Float, bits, true, "float" + std::to_string(bits));
}
const ScalarType *float16() {
  static const ScalarType *t = floating(16);
  return t;
}
const ScalarType *float32() {
  static const ScalarType *t = floating(32);
  return t;
}
const ScalarType *float64() {
  static const ScalarType *t = floating(64);
  return t;
}

const ScalarType *bfloat16() {
  static const ScalarType *t = table().get<ScalarType>("scalar:bfloat16", [] {
    return std::make_unique<ScalarType>(TypeKind::Float, 16, true, "bfloat16", true);
  });
  return t;
}

const ScalarType *complex(int bits) {
  if (bits != 64)
    bits = 128;
  return scalar(TypeKind::Complex, bits, true, "complex" + std::to_string(bits));
}
const ScalarType *complex64() {
  static const ScalarType *t = complex(64);
  return t;
}
const ScalarType *complex128() {
  static const ScalarType *t = complex(128);
  return t;
}

const WeakType *weakInt() {
  const ScalarType *def = int64(); // outside the lock: the table's mutex is not recursive
  return table().get<WeakType>("weak:int", [&] {
    return std::make_unique<WeakType>(TypeKind::WeakInt, def, "Literal[int]");
  });
}
const WeakType *intLiteral(int64_t value) {
  const ScalarType *def = int64(); // outside the lock: the table's mutex is not recursive
  std::string s = "Literal[int](" + std::to_string(value) + ")";
  return table().get<WeakType>("weak:int:" + std::to_string(value),
                               [&] { return std::make_unique<WeakType>(def, value, s); });
}
const WeakType *weakFloat() {
  const ScalarType *def = float64(); // outside the lock: the table's mutex is not recursive
  return table().get<WeakType>("weak:float", [&] {
    return std::make_unique<WeakType>(TypeKind::WeakFloat, def, "Literal[float]");
  });
}
const WeakType *weakComplex() {
  const ScalarType *def = complex128(); // outside the lock: the table's mutex is not recursive
  return table().get<WeakType>("weak:complex", [&] {
    return std::make_unique<WeakType>(TypeKind::WeakComplex, def, "Literal[complex]");
  });
}

const ArrayType *array(const Type *dtype, int ndim, Layout layout, bool readonly) {
  if (ndim < 0)
    ndim = 0;
  std::string s = std::string(readonly ? "readonly " : "") + "array(" + dtype->str() + ", " +
                  std::to_string(ndim) + "d, " + layoutName(layout) + ")";
  return table().get<ArrayType>(
      "array:" + s, [&] { return std::make_unique<ArrayType>(dtype, ndim, layout, readonly, s); });
}

const TupleType *tuple(const std::vector<const Type *> &elems) {
  bool uniform = !elems.empty();
  for (const Type *e : elems)
    uniform = uniform && e == elems.front();
  std::string s =
      uniform ? "UniTuple(" + elems.front()->str() + " x " + std::to_string(elems.size()) + ")"
              : "Tuple(" + joinTypes(elems) + ")";
  std::string key = "tuple:";
  for (const Type *e : elems)
    key += ptrKey(e) + ",";
  return table().get<TupleType>(key, [&] { return std::make_unique<TupleType>(elems, s); });
}

const PointerType *pointer(const ScalarType *pointee) {
  std::string s = (pointee ? pointee->str() : std::string("void")) + "*";
  return table().get<PointerType>("pointer:" + s,
                                  [&] { return std::make_unique<PointerType>(pointee, s); });
}
const PointerType *voidPointer() { return pointer(nullptr); }

const IteratorType *iterator(IterKind k, const Type *yield,
                             const std::vector<const Type *> &sources) {
  std::string s;
  switch (k) {
  case IterKind::Range:
    s = "range_iter64";
    break;
  case IterKind::Array:
  case IterKind::Tuple:
    s = "iter(" + joinTypes(sources) + ")";
    break;
  case IterKind::Enumerate:
    s = "enumerate(" + joinTypes(sources) + ")";
    break;
  case IterKind::Zip:
    s = "zip(" + joinTypes(sources) + ")";
    break;
  }
  std::string key = "iter:" + std::to_string(static_cast<int>(k)) + ":" + ptrKey(yield) + ":";
  for (const Type *t : sources)
    key += ptrKey(t) + ",";
  return table().get<IteratorType>(
      key, [&] { return std::make_unique<IteratorType>(k, yield, sources, s); });
}

const SymbolType *symbol(const std::string &path) {
  return table().get<SymbolType>(
      "symbol:" + path, [&] { return std::make_unique<SymbolType>(path, "Symbol(" + path + ")"); });
}

const FunctionRefType *functionRef(int functionId, const std::string &name) {
  // Keyed by name too: ids are unique in a process, but the type's text (its name) must not
  // depend on which caller interned the id first (tests reuse small ids with other names).
  return table().get<FunctionRefType>("function:" + std::to_string(functionId) + ":" + name, [&] {
    return std::make_unique<FunctionRefType>(functionId, "Function(" + name + ")");
  });
}

const ListType *list(const Type *dtype, const std::string &initialValue) {
  std::string s =
      "list(" + dtype->str() + ")" + (initialValue.empty() ? "" : "<iv=" + initialValue + ">");
  return table().get<ListType>("list:" + ptrKey(dtype) + ":" + initialValue,
                               [&] { return std::make_unique<ListType>(dtype, s); });
}

const StringLiteralType *stringLiteral(const std::string &value) {
  return table().get<StringLiteralType>("strlit:" + value, [&] {
    // The value quoted and escaped as IR text writes string constants (IRParser reads it).
    return std::make_unique<StringLiteralType>(value, "Literal[str](" +
                                                          ConstValue::string(value).str() + ")");
  });
}

const ExternFunctionType *externFunction(std::shared_ptr<const ExternDecl> d) {
  return table().get<ExternFunctionType>("extern:" + std::to_string(d->id), [&] {
    std::string s = "ExternFunction(" + d->name + ")";
    return std::make_unique<ExternFunctionType>(std::move(d), std::move(s));
  });
}

namespace {

const ScalarType *dateType(TypeKind k, DateUnit unit) {
  std::string base = k == TypeKind::Datetime ? "datetime64" : "timedelta64";
  std::string s = unit == DateUnit::Generic ? base : base + "[" + dateUnitName(unit) + "]";
  return table().get<ScalarType>(
      "scalar:" + s, [&] { return std::make_unique<ScalarType>(k, 64, true, s, false, unit); });
}

/// "datetime64[D]", "M8[D]", "timedelta64", "m8[s]": the datetime type named; null otherwise.
const ScalarType *dateTypeByName(const std::string &name) {
  size_t open = name.find('[');
  std::string base = name.substr(0, open);
  TypeKind k;
  if (base == "datetime64" || base == "M8")
    k = TypeKind::Datetime;
  else if (base == "timedelta64" || base == "m8")
    k = TypeKind::Timedelta;
  else
    return nullptr;
  std::string unit;
  if (open != std::string::npos) {
    if (name.back() != ']' || name.size() < open + 2)
      return nullptr;
    unit = name.substr(open + 1, name.size() - open - 2);
  }
  std::optional<DateUnit> u = dateUnitByName(unit);
  return u ? dateType(k, *u) : nullptr;
}

} // namespace

const ScalarType *datetime(DateUnit unit) { return dateType(TypeKind::Datetime, unit); }
const ScalarType *timedelta(DateUnit unit) { return dateType(TypeKind::Timedelta, unit); }

const ScalarType *scalarByName(const std::string &name) {
  // NumPy's and Numba's names, with numba's C names (char, short, long_, ... of 64-bit Linux).
  static const std::unordered_map<std::string, const ScalarType *(*)()> names = {
      {"bool", boolean},    {"boolean", boolean},
      {"bool_", boolean},   {"b1", boolean},
      {"int8", int8},       {"i1", int8},
      {"byte", uint8},      {"int16", int16},
      {"i2", int16},        {"int32", int32},
      {"i4", int32},        {"intc", int32},
      {"int64", int64},     {"i8", int64},
      {"intp", int64},      {"int_", int64},
      {"uint8", uint8},     {"u1", uint8},
      {"uint16", uint16},   {"u2", uint16},
      {"uint32", uint32},   {"u4", uint32},
      {"uintc", uint32},    {"uint64", uint64},
      {"u8", uint64},       {"uintp", uint64},
      {"float16", float16}, {"f2", float16},
      {"half", float16},    {"float32", float32},
      {"f4", float32},      {"single", float32},
      {"float64", float64}, {"f8", float64},
      {"double", float64},  {"complex64", complex64},
      {"c8", complex64},    {"complex128", complex128},
      {"c16", complex128},  {"bfloat16", bfloat16},
      {"char", int8},       {"uchar", uint8},
      {"short", int16},     {"ushort", uint16},
      {"long_", int64},     {"longlong", int64},
      {"uint", uint64},     {"ulonglong", uint64},
      {"ulong", uint64},    {"__nv_bfloat16", bfloat16},
  };
  auto it = names.find(name);
  if (it != names.end())
    return it->second();
  return dateTypeByName(name);
}

const NestedArrayType *nestedArray(const ScalarType *dtype, std::vector<int64_t> shape) {
  if (shape.empty())
    throw std::invalid_argument("a nested array needs at least one dimension");
  std::string dims;
  for (int64_t d : shape) {
    if (d < 0)
      throw std::invalid_argument("a nested array's dimensions must be >= 0");
    dims += (dims.empty() ? "" : ", ") + std::to_string(d);
  }
  std::string s = "nestedarray(" + dtype->str() + ", (" + dims + (shape.size() == 1 ? ",))" : "))");
  return table().get<NestedArrayType>(
      "nested:" + s, [&] { return std::make_unique<NestedArrayType>(dtype, shape, s); });
}

const RecordType *record(std::vector<RecordField> fields, int64_t size, bool aligned) {
  if (size < 0)
    throw std::invalid_argument("a record's size must be >= 0");
  std::stable_sort(fields.begin(), fields.end(), [](const RecordField &a, const RecordField &b) {
    return a.offset != b.offset ? a.offset < b.offset : a.name < b.name;
  });
  std::set<std::string> names;
  std::string desc;
  for (const RecordField &f : fields) {
    if (f.name.empty())
      throw std::invalid_argument("a record field needs a name");
    if (f.name.find_first_of("[],;=()'\\\"") != std::string::npos)
      throw std::invalid_argument("record field name '" + f.name +
                                  "' has a character ptxjit cannot carry ([],;=()'\\\")");
    if (!names.insert(f.name).second)
      throw std::invalid_argument("record field '" + f.name + "' appears twice");
    int64_t bytes = 0;
    if (const auto *sc = dyn_cast<ScalarType>(f.type))
      bytes = sc->byteSize();
    else if (const auto *na = dyn_cast<NestedArrayType>(f.type))
      bytes = na->byteSize();
    else if (const auto *r = dyn_cast<RecordType>(f.type))
      bytes = r->size();
    else if (const auto *cs = dyn_cast<CharSeqType>(f.type))
      bytes = cs->byteSize();
    else
      throw std::invalid_argument("record field '" + f.name + "' has type " +
                                  (f.type ? f.type->str() : std::string("null")) +
                                  ": fields are scalars, nested arrays, strings or records");
    if (f.offset < 0 || f.offset + bytes > size)
      throw std::invalid_argument("record field '" + f.name + "' lies outside the record's " +
                                  std::to_string(size) + " bytes");
    desc += (desc.empty() ? "" : ",") + f.name + "[type=" + f.type->str() +
            ";offset=" + std::to_string(f.offset) + "]";
  }
  std::string s =
      "Record(" + desc + ";" + std::to_string(size) + ";" + (aligned ? "True" : "False") + ")";
  return table().get<RecordType>(
      "record:" + s, [&] { return std::make_unique<RecordType>(fields, size, aligned, s); });
}

namespace {

/// Reads the spellings of records and nested arrays (see Types.h); errors name the position.
class RecordReader {
public:
  RecordReader(std::string_view text, size_t &pos) : t_(text), pos_(pos) {}

  const Type *any() {
    if (accept("Record("))
      return recordBody();
    if (accept("nestedarray("))
      return nestedBody();
    if (accept("[char x "))
      return charSeqBody(false);
    if (accept("[unichr x "))
      return charSeqBody(true);
    fail("'Record(', 'nestedarray(', '[char x ' or '[unichr x '");
  }

private:
  [[noreturn]] void fail(const std::string &expected) {
    std::string rest(t_.substr(pos_, 24));
    throw std::invalid_argument("expected " + expected + " at " +
                                (rest.empty() ? std::string("the end") : "'" + rest + "'"));
  }
  bool accept(std::string_view s) {
    while (pos_ < t_.size() && t_[pos_] == ' ')
      ++pos_;
    if (t_.substr(pos_, s.size()) != s)
      return false;
    pos_ += s.size();
    return true;
  }
  void expect(std::string_view s) {
    if (!accept(s))
      fail("'" + std::string(s) + "'");
  }
  int64_t number() {
    accept(""); // skip blanks
    size_t start = pos_;
    while (pos_ < t_.size() && t_[pos_] >= '0' && t_[pos_] <= '9')
      ++pos_;
    if (start == pos_ || pos_ - start > 15)
      fail("a number");
    return std::stoll(std::string(t_.substr(start, pos_ - start)));
  }
  const Type *fieldType() {
    if (t_.substr(pos_, 7) == "Record(" || t_.substr(pos_, 12) == "nestedarray(" ||
        t_.substr(pos_, 1) == "[")
      return any();
    const ScalarType *s = scalar();
    return s;
  }
  const ScalarType *scalar() {
    accept("");
    size_t start = pos_;
    while (pos_ < t_.size() &&
           (std::isalnum(static_cast<unsigned char>(t_[pos_])) || t_[pos_] == '_'))
      ++pos_;
    const ScalarType *s = scalarByName(std::string(t_.substr(start, pos_ - start)));
    if (!s) {
      pos_ = start;
      fail("a scalar type name");
    }
    return s;
  }
  const Type *recordBody() {
    std::vector<RecordField> fields;
    if (!accept(";")) {
      do {
        size_t start = pos_;
        while (pos_ < t_.size() && t_[pos_] != '[' && t_[pos_] != ';' && t_[pos_] != ',')
          ++pos_;
        RecordField f;
        f.name = std::string(t_.substr(start, pos_ - start));
        expect("[type=");
        f.type = fieldType();
        expect(";offset=");
        f.offset = number();
        expect("]");
        fields.push_back(std::move(f));
      } while (accept(","));
      expect(";");
    }
    int64_t size = number();
    expect(";");
    bool aligned = accept("True");
    if (!aligned && !accept("False"))
      fail("'True' or 'False'");
    expect(")");
    return record(std::move(fields), size, aligned);
  }
  const Type *charSeqBody(bool unicode) {
    int64_t n = number();
    if (n < 1)
      fail("a length >= 1");
    expect("]");
    return charSeq(n, unicode);
  }
  const Type *nestedBody() {
    const ScalarType *dtype = scalar();
    expect(",");
    expect("(");
    std::vector<int64_t> shape;
    do {
      if (accept(")")) {
        if (shape.empty())
          fail("a dimension");
        expect(")");
        return nestedArray(dtype, shape);
      }
      shape.push_back(number());
    } while (accept(","));
    expect(")");
    expect(")");
    return nestedArray(dtype, shape);
  }

  std::string_view t_;
  size_t &pos_;
};

} // namespace

const RecordType *readonlyRecord(const RecordType *r) {
  if (r->readonly())
    return r;
  return table().get<RecordType>("record:readonly " + r->str(), [&] {
    return std::make_unique<RecordType>(r->fields(), r->size(), r->aligned(),
                                        "readonly " + r->str(), r);
  });
}

const Type *parseRecordSpelling(std::string_view text, size_t &pos) {
  return RecordReader(text, pos).any();
}

const Type *dtypeByName(const std::string &name) {
  if (name.rfind("Record(", 0) != 0)
    return scalarByName(name);
  try {
    size_t pos = 0;
    const Type *t = parseRecordSpelling(name, pos);
    return pos == name.size() ? t : nullptr;
  } catch (const std::invalid_argument &) {
    return nullptr;
  }
}

} // namespace types

const ScalarType *ArrayType::scalarDtype() const { return dyn_cast<ScalarType>(dtype_); }

int64_t ArrayType::itemSize() const {
  if (const auto *r = dyn_cast<RecordType>(dtype_))
    return r->size();
  if (const auto *cs = dyn_cast<CharSeqType>(dtype_))
    return cs->byteSize();
  return cast<ScalarType>(dtype_)->byteSize();
}

int64_t NestedArrayType::byteSize() const {
  int64_t n = dtype_->byteSize();
  for (int64_t d : shape_)
    n *= d;
  return n;
}

const RecordField *RecordType::field(const std::string &name) const {
  for (const RecordField &f : fields_)
    if (f.name == name)
      return &f;
  return nullptr;
}

namespace {
int64_t largestPow2Dividing(int64_t n, int64_t cap) {
  if (n == 0)
    return cap;
  int64_t p = 1;
  while (p < cap && n % (p * 2) == 0)
    p *= 2;
  return p;
}
} // namespace

int64_t RecordType::baseAlignment() const { return largestPow2Dividing(size_, 16); }

int64_t RecordType::fieldAlignment(int64_t offset, const ScalarType *t) const {
  return std::min(naturalAlignment(t), largestPow2Dividing(offset, baseAlignment()));
}

int64_t RecordType::maxAlignment() const {
  int64_t a = 1;
  for (const RecordField &f : fields_) {
    if (const auto *r = dyn_cast<RecordType>(f.type))
      a = std::max(a, r->maxAlignment());
    else if (const ScalarType *s = alignmentScalar(f.type))
      a = std::max(a, naturalAlignment(s));
  }
  return a;
}

int64_t naturalAlignment(const ScalarType *t) {
  int64_t bytes = t->byteSize();
  return t->kind() == TypeKind::Complex ? bytes / 2 : bytes;
}

const ScalarType *alignmentScalar(const Type *fieldType) {
  if (const auto *s = dyn_cast<ScalarType>(fieldType))
    return s;
  if (const auto *n = dyn_cast<NestedArrayType>(fieldType))
    return n->dtype();
  if (const auto *cs = dyn_cast<CharSeqType>(fieldType))
    return cs->isUnicode() ? types::uint32() : types::uint8();
  return nullptr;
}

namespace {

/// A tuple of `elems` named as `like` is (ir/NamedTuples.h), or plain.
const TupleType *sameKindTuple(const TupleType *like, const std::vector<const Type *> &elems) {
  if (const NamedTupleNames *n = namedTupleNames(like))
    return types::namedTuple(n->className, n->fields, elems);
  return types::tuple(elems);
}

} // namespace

const Type *replaceIntLiterals(const Type *t, const Type *with) {
  if (auto *w = dyn_cast<WeakType>(t); w && w->literalValue())
    return with;
  if (auto *tup = dyn_cast<TupleType>(t)) {
    std::vector<const Type *> elems;
    bool changed = false;
    for (const Type *e : tup->elements()) {
      elems.push_back(replaceIntLiterals(e, with));
      changed = changed || elems.back() != e;
    }
    return changed ? sameKindTuple(tup, elems) : t;
  }
  return t;
}

bool hasIntLiteral(const Type *t) {
  if (auto *w = dyn_cast<WeakType>(t))
    return w->literalValue() != nullptr;
  if (auto *tup = dyn_cast<TupleType>(t))
    for (const Type *e : tup->elements())
      if (hasIntLiteral(e))
        return true;
  return false;
}

std::vector<const Type *> indexComponentTypes(const Type *index, int ndim, int *ellipses) {
  std::vector<const Type *> comps;
  if (auto *tup = dyn_cast<TupleType>(index))
    comps = tup->elements();
  else
    comps.push_back(index);
  int n = 0;
  size_t at = 0;
  for (size_t k = 0; k < comps.size(); ++k)
    if (comps[k]->kind() == TypeKind::Ellipsis) {
      ++n;
      at = k;
    }
  if (ellipses)
    *ellipses = n;
  if (n != 1)
    return comps;
  int others = 0; // the components that take a dimension (not the Ellipsis, not a new axis)
  for (const Type *c : comps)
    others += c->kind() != TypeKind::Ellipsis && c->kind() != TypeKind::None;
  std::vector<const Type *> out(comps.begin(), comps.begin() + static_cast<long>(at));
  for (int k = others; k < ndim; ++k)
    out.push_back(types::slice(/*hasStep=*/false));
  out.insert(out.end(), comps.begin() + static_cast<long>(at) + 1, comps.end());
  return out;
}

const Type *concretize(const Type *t) {
  if (!t)
    return t;
  if (auto *w = dyn_cast<WeakType>(t))
    return w->defaultType();
  if (auto *tup = dyn_cast<TupleType>(t)) {
    std::vector<const Type *> elems;
    bool changed = false;
    for (const Type *e : tup->elements()) {
      elems.push_back(concretize(e));
      changed = changed || elems.back() != e;
    }
    return changed ? sameKindTuple(tup, elems) : t;
  }
  return t;
}

} // namespace ptxjit::ir
