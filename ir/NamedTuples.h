// Named tuples (a collections.namedtuple kernel argument; Numba's NamedTuple and NamedUniTuple):
// TupleTypes that also have a class name and one field name per element. They are TupleTypes, so
// every tuple rule (indexing, unpacking, len, passing) applies to them; `p.x` reads a field. Each
// named tuple type is its own interned TupleType, distinct from the plain tuple of the same
// elements and from other classes' (the names are part of the type, as in Numba).
#pragma once

#include "ir/Types.h"

#include <string>
#include <vector>

namespace ptxjit::ir {

/// The names of a named tuple type.
struct NamedTupleNames {
  std::string className;
  std::vector<std::string> fields;
};

namespace types {
/// The named tuple type of class `className` with fields `fields` (one per element of `elems`),
/// printed as Numba prints it: "Point(int64 x 2)", "Point(int64, float64)". Interned: the same
/// arguments give the same type. Throws std::invalid_argument when the counts differ.
const TupleType *namedTuple(const std::string &className, const std::vector<std::string> &fields,
                            const std::vector<const Type *> &elems);
} // namespace types

/// The names of `t` when it is a named tuple type; null for any other type.
const NamedTupleNames *namedTupleNames(const Type *t);

/// The index of field `field` of named tuple type `t`, or -1 (also for other types).
int namedTupleField(const Type *t, const std::string &field);

} // namespace ptxjit::ir
