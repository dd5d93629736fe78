// Enum class and member types (see Enums.h): interned here, per class.
#include "ir/Enums.h"

#include <map>
#include <mutex>

namespace ptxjit::ir {

namespace {

struct EnumTable {
  std::mutex mutex;
  std::map<uint64_t, std::unique_ptr<EnumClassType>> classes;
  std::map<uint64_t, std::unique_ptr<EnumMemberType>> members;
};

EnumTable &table() {
  static auto *t = new EnumTable(); // never destroyed: types outlive static destructors
  return *t;
}

/// numba's typeof of a member's value; null for values kernels cannot hold.
const Type *typeOfValue(const ConstValue &v) {
  switch (v.kind) {
  case ConstValue::Kind::Bool:
    return types::boolean();
  case ConstValue::Kind::Int:
    return v.isUnsigned ? types::uint64() : types::int64();
  case ConstValue::Kind::Float:
    return types::float64();
  case ConstValue::Kind::Complex:
    return types::complex128();
  case ConstValue::Kind::Tuple: {
    std::vector<const Type *> elems;
    for (const ConstValue &e : v.elems) {
      const Type *t = typeOfValue(e);
      if (!t)
        return nullptr;
      elems.push_back(t);
    }
    return types::tuple(elems);
  }
  default:
    return nullptr;
  }
}

} // namespace

const ConstValue *EnumClassType::member(const std::string &name) const {
  for (const auto &m : info_->members)
    if (m.first == name)
      return &m.second;
  return nullptr;
}

const Type *enumValueType(const EnumClassInfo &info, std::string &why) {
  if (info.isInt)
    return types::int64();
  const Type *dtype = nullptr;
  for (const auto &[name, value] : info.members) {
    const Type *t = typeOfValue(value);
    if (!t) {
      why = "member " + info.name + "." + name + " has the value " + value.str() +
            ", which kernels cannot hold";
      return nullptr;
    }
    if (dtype && t != dtype) {
      why = "its members have values of different types (" + dtype->str() + " and " + t->str() +
            ": numba cannot type heterogeneous enums either)";
      return nullptr;
    }
    dtype = t;
  }
  if (!dtype)
    why = "it has no members";
  return dtype;
}

const EnumClassType *enumClassOf(std::shared_ptr<const EnumClassInfo> info, const Type *dtype) {
  EnumTable &t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  std::unique_ptr<EnumClassType> &slot = t.classes[info->id];
  if (!slot) {
    std::string base = info->isInt ? "IntEnum" : "Enum";
    std::string suffix = "<" + dtype->str() + ">(" + info->name + ")";
    slot = std::make_unique<EnumClassType>(info, dtype, base + " class" + suffix);
    auto member = std::make_unique<EnumMemberType>(slot.get(), base + suffix);
    slot->member_ = member.get();
    t.members[info->id] = std::move(member);
  }
  return slot.get();
}

const Type *enumValueOf(const Type *t) {
  if (auto *m = dyn_cast<EnumMemberType>(t))
    return m->dtype();
  return t;
}

const Type *intEnumAsInt(const Type *t) {
  if (auto *m = dyn_cast<EnumMemberType>(t); m && m->isIntEnum())
    return m->dtype();
  return t;
}

} // namespace ptxjit::ir
