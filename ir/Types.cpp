// Interned type factories. Every type lives in one process-wide table keyed by a string that
// identifies it (usually its spelling), guarded by a mutex; types are never freed.
#include "ir/Types.h"

#include "ir/Values.h"

#include <memory>
#include <mutex>
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

private:
  std::mutex mutex_;
  std::unordered_map<std::string, std::unique_ptr<Type>> table_;
};

TypeTable &table() {
  // Leaked on purpose: types must outlive every static that might refer to them.
  static TypeTable *t = new TypeTable();
  return *t;
}

const SimpleType *simple(TypeKind k, const char *spelling) {
  return table().get<SimpleType>(std::string("simple:") + spelling,
                                 [&] { return std::make_unique<SimpleType>(k, spelling); });
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

const Type *void_() { return simple(TypeKind::Void, "void"); }
const Type *none() { return simple(TypeKind::None, "none"); }
const Type *range() { return simple(TypeKind::Range, "range_state64"); }
const Type *string() { return simple(TypeKind::String, "unicode_type"); }
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

const ArrayType *array(const ScalarType *dtype, int ndim, Layout layout, bool readonly) {
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
  return table().get<FunctionRefType>("function:" + std::to_string(functionId), [&] {
    return std::make_unique<FunctionRefType>(functionId, "Function(" + name + ")");
  });
}

const ExternFunctionType *externFunction(std::shared_ptr<const ExternDecl> d) {
  return table().get<ExternFunctionType>("extern:" + std::to_string(d->id), [&] {
    std::string s = "ExternFunction(" + d->name + ")";
    return std::make_unique<ExternFunctionType>(std::move(d), std::move(s));
  });
}

const ScalarType *scalarByName(const std::string &name) {
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
      {"c16", complex128},
  };
  auto it = names.find(name);
  return it == names.end() ? nullptr : it->second();
}

} // namespace types

const Type *replaceIntLiterals(const Type *t, const Type *with) {
  if (auto *w = dyn_cast<WeakType>(t); w && w->literalValue())
    return with;
  if (auto *tup = dyn_cast<TupleType>(t)) {
    std::vector<const Type *> elems;
    for (const Type *e : tup->elements())
      elems.push_back(replaceIntLiterals(e, with));
    return types::tuple(elems);
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
    return changed ? types::tuple(elems) : t;
  }
  return t;
}

} // namespace ptxjit::ir
