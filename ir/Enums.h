// enum.Enum and enum.IntEnum in kernels (Numba's EnumClass / EnumMember and their IntEnum
// forms): a class read as a global names its members (`Color.red`, `Color["red"]`); a member
// (a global, a kernel argument, a device function's result) is a value of its class's member
// type, represented by its value (`member.value`), all members of a class having values of one
// type (Numba's rule). Members of the same class compare by value (==, !=, is, is not); members
// of different classes are never identical. IntEnum members are also ints: in arithmetic,
// comparisons with numbers and conversions they act as their int64 value
// (IntEnumMember.can_convert_to).
#pragma once

#include "ir/Types.h"
#include "ir/Values.h"

#include <memory>
#include <string>

namespace ptxjit::ir {

class EnumMemberType;

/// An enum class (Numba's EnumClass, "Enum class<int64>(Color)"; "IntEnum class<...>(...)"):
/// compile-time only, it names its members.
class EnumClassType final : public Type {
public:
  const EnumClassInfo &info() const { return *info_; }
  bool isIntEnum() const { return info_->isInt; }
  /// The type of every member's value (int64 for an IntEnum).
  const Type *dtype() const { return dtype_; }
  /// The type of its members.
  const EnumMemberType *memberType() const { return member_; }
  /// The value of member `name` (an alias included), or null when the class has none.
  const ConstValue *member(const std::string &name) const;
  static bool classof(const Type *t) { return t->kind() == TypeKind::EnumClass; }
  EnumClassType(std::shared_ptr<const EnumClassInfo> info, const Type *dtype, std::string s)
      : Type(TypeKind::EnumClass, std::move(s)), info_(std::move(info)), dtype_(dtype) {}

private:
  friend const EnumClassType *enumClassOf(std::shared_ptr<const EnumClassInfo>, const Type *);
  std::shared_ptr<const EnumClassInfo> info_;
  const Type *dtype_;
  const EnumMemberType *member_ = nullptr;
};

/// A member of an enum class (Numba's EnumMember "Enum<int64>(Color)" / IntEnumMember
/// "IntEnum<int64>(Shape)"), represented as its value.
class EnumMemberType final : public Type {
public:
  const EnumClassType *enumClass() const { return class_; }
  bool isIntEnum() const { return class_->isIntEnum(); }
  /// The type of its value.
  const Type *dtype() const { return class_->dtype(); }
  static bool classof(const Type *t) { return t->kind() == TypeKind::EnumMember; }
  EnumMemberType(const EnumClassType *cls, std::string s)
      : Type(TypeKind::EnumMember, std::move(s)), class_(cls) {}

private:
  const EnumClassType *class_;
};

/// The type of the values of `info`'s members: int64 for an IntEnum; otherwise the type every
/// member's value has (int64, float64, complex128, bool or a tuple of those); null with `why`
/// set when the values have different types or one that kernels cannot hold (numba refuses
/// such heterogeneous enums too).
const Type *enumValueType(const EnumClassInfo &info, std::string &why);

/// The class type of `info` with member values of type `dtype` (enumValueType), interned per
/// class (EnumClassInfo::id).
const EnumClassType *enumClassOf(std::shared_ptr<const EnumClassInfo> info, const Type *dtype);

/// The value type of an enum member type, `t` itself for any other type: how a member is
/// represented (kernel parameters, values).
const Type *enumValueOf(const Type *t);

/// For an IntEnum member type its int value type, `t` itself otherwise: IntEnum members are ints
/// wherever a number is expected.
const Type *intEnumAsInt(const Type *t);

} // namespace ptxjit::ir
