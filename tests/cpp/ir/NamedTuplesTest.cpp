// Named tuple types: interned TupleTypes with a class name and field names, distinct from plain
// tuples and from other classes, spelled as Numba spells NamedTuple / NamedUniTuple.
#include "ir/NamedTuples.h"

#include <gtest/gtest.h>

#include <stdexcept>

using namespace ptxjit::ir;

TEST(NamedTuples, InternedDistinctAndSpelledAsNumba) {
  const TupleType *p = types::namedTuple("Pair", {"x", "y"}, {types::int64(), types::int64()});
  EXPECT_EQ(p, types::namedTuple("Pair", {"x", "y"}, {types::int64(), types::int64()}));
  EXPECT_EQ(p->str(), "Pair(int64 x 2)");
  EXPECT_EQ(p->size(), 2u);
  const TupleType *plain = types::tuple({types::int64(), types::int64()});
  EXPECT_NE(p, plain);
  EXPECT_NE(p, types::namedTuple("Pair", {"y", "x"}, {types::int64(), types::int64()}));
  EXPECT_NE(p, types::namedTuple("Other", {"x", "y"}, {types::int64(), types::int64()}));
  const TupleType *q = types::namedTuple("Point", {"x", "r"}, {types::int64(), types::float64()});
  EXPECT_EQ(q->str(), "Point(int64, float64)");
  EXPECT_THROW(types::namedTuple("Bad", {"x"}, {types::int64(), types::int64()}),
               std::invalid_argument);
}

TEST(NamedTuples, FieldsByName) {
  const TupleType *q = types::namedTuple("Point", {"x", "r"}, {types::int64(), types::float64()});
  ASSERT_NE(namedTupleNames(q), nullptr);
  EXPECT_EQ(namedTupleNames(q)->className, "Point");
  EXPECT_EQ(namedTupleField(q, "x"), 0);
  EXPECT_EQ(namedTupleField(q, "r"), 1);
  EXPECT_EQ(namedTupleField(q, "z"), -1);
  // Plain tuples and other types have no fields.
  const TupleType *plain = types::tuple({types::int64(), types::float64()});
  EXPECT_EQ(namedTupleNames(plain), nullptr);
  EXPECT_EQ(namedTupleField(plain, "x"), -1);
  EXPECT_EQ(namedTupleField(types::int64(), "x"), -1);
  EXPECT_EQ(namedTupleNames(nullptr), nullptr);
  // A tuple rule rebuilding the elements (concretize) keeps a concrete named tuple as it is.
  EXPECT_EQ(concretize(q), q);
}
