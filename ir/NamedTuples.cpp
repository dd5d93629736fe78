// Named tuple types (see NamedTuples.h): interned here, beside their names.
#include "ir/NamedTuples.h"

#include "ir/InterningLocks.h"

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

namespace ptxjit::ir {

namespace {

struct NamedTupleTable {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<TupleType>> byKey;
  std::unordered_map<const Type *, NamedTupleNames> names;
};

NamedTupleTable &table() {
  static auto *t = new NamedTupleTable(); // never destroyed: types outlive static destructors
  return *t;
}

} // namespace

std::mutex &namedTupleTableLock() { return table().mutex; }

const TupleType *types::namedTuple(const std::string &className,
                                   const std::vector<std::string> &fields,
                                   const std::vector<const Type *> &elems) {
  if (fields.size() != elems.size())
    throw std::invalid_argument("namedTuple: " + std::to_string(fields.size()) +
                                " field names for " + std::to_string(elems.size()) + " elements");
  bool uniform = !elems.empty();
  for (const Type *e : elems)
    uniform = uniform && e == elems.front();
  std::string s = className + "(";
  if (uniform) {
    s += elems.front()->str() + " x " + std::to_string(elems.size());
  } else {
    for (size_t k = 0; k < elems.size(); ++k)
      s += (k ? ", " : "") + elems[k]->str();
  }
  s += ")";
  std::string key = className + "(";
  for (size_t k = 0; k < elems.size(); ++k)
    key += fields[k] + "=" + std::to_string(reinterpret_cast<uintptr_t>(elems[k])) + ",";
  NamedTupleTable &t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  std::unique_ptr<TupleType> &slot = t.byKey[key];
  if (!slot) {
    slot = std::make_unique<TupleType>(elems, s);
    t.names.emplace(slot.get(), NamedTupleNames{className, fields});
  }
  return slot.get();
}

const NamedTupleNames *namedTupleNames(const Type *t) {
  if (!t || t->kind() != TypeKind::Tuple)
    return nullptr;
  NamedTupleTable &tab = table();
  std::lock_guard<std::mutex> lock(tab.mutex);
  auto it = tab.names.find(t);
  return it == tab.names.end() ? nullptr : &it->second; // stable: entries are never erased
}

int namedTupleField(const Type *t, const std::string &field) {
  if (const NamedTupleNames *n = namedTupleNames(t))
    for (size_t k = 0; k < n->fields.size(); ++k)
      if (n->fields[k] == field)
        return static_cast<int>(k);
  return -1;
}

} // namespace ptxjit::ir
