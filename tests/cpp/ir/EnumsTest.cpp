// Enum class and member types (ir/Enums.h): numba's spelling, interning, value types and the
// conversions of IntEnum members.
#include "ir/Enums.h"
#include "ir/Conversions.h"

#include <gtest/gtest.h>

using namespace ptxjit::ir;

namespace {

std::shared_ptr<EnumClassInfo> enumInfo(uint64_t id, const std::string &name, bool isInt,
                                        std::vector<std::pair<std::string, ConstValue>> m) {
  auto info = std::make_shared<EnumClassInfo>();
  info->id = id;
  info->name = name;
  info->qualname = "tests." + name;
  info->isInt = isInt;
  info->members = std::move(m);
  return info;
}

} // namespace

TEST(Enums, ClassesAndMembersAreTypedAsNumba) {
  auto color = enumInfo(1000, "Color", false,
                        {{"red", ConstValue::integer(1)}, {"green", ConstValue::integer(2)}});
  std::string why;
  const Type *dtype = enumValueType(*color, why);
  ASSERT_EQ(dtype, types::int64()) << why;
  const EnumClassType *cls = enumClassOf(color, dtype);
  EXPECT_EQ(cls, enumClassOf(color, dtype)); // interned per class
  EXPECT_EQ(cls->str(), "Enum class<int64>(Color)");
  EXPECT_EQ(cls->memberType()->str(), "Enum<int64>(Color)");
  EXPECT_EQ(cls->memberType()->enumClass(), cls);
  ASSERT_NE(cls->member("green"), nullptr);
  EXPECT_EQ(cls->member("green")->i, 2);
  EXPECT_EQ(cls->member("blue"), nullptr);
  EXPECT_EQ(enumValueOf(cls->memberType()), types::int64());
  EXPECT_EQ(intEnumAsInt(cls->memberType()), cls->memberType()); // not an IntEnum

  auto shape = enumInfo(1001, "Shape", true, {{"circle", ConstValue::integer(2)}});
  const EnumClassType *ints = enumClassOf(shape, enumValueType(*shape, why));
  EXPECT_EQ(ints->memberType()->str(), "IntEnum<int64>(Shape)");
  EXPECT_EQ(intEnumAsInt(ints->memberType()), types::int64());
  // An IntEnum member passes where an int does, at best safely (IntEnumMember.can_convert_to).
  EXPECT_EQ(argumentConversion(ints->memberType(), types::int64()), Conversion::Safe);
  EXPECT_EQ(argumentConversion(ints->memberType(), types::int16()), Conversion::Unsafe);
  EXPECT_EQ(argumentConversion(cls->memberType(), types::int64()), Conversion::None);
  // ... and nowhere an int could not go (numba's IntEnumMember.can_convert_to, numba PR 10047).
  EXPECT_EQ(argumentConversion(ints->memberType(), types::array(types::int64(), 1, Layout::C)),
            Conversion::None);

  auto planet = enumInfo(
      1002, "Planet", false,
      {{"EARTH", ConstValue::tuple({ConstValue::floating(5.9), ConstValue::floating(6.3)})}});
  EXPECT_EQ(enumValueType(*planet, why), types::tuple({types::float64(), types::float64()}));
  auto mixed = enumInfo(1003, "Mixed", false,
                        {{"a", ConstValue::integer(1)}, {"b", ConstValue::floating(2.5)}});
  EXPECT_EQ(enumValueType(*mixed, why), nullptr);
  EXPECT_NE(why.find("different types"), std::string::npos) << why;
}
