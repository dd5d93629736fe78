// NumPy's datetime64 and timedelta64 (Numba's NPDatetime and NPTimedelta): ScalarTypes of kind
// Datetime / Timedelta with a unit, held as int64 counts of that unit since 1970-01-01 (datetime)
// or as a duration (timedelta), NaT being INT64_MIN. The unit rules here are numba's
// (numba.np.npdatetime_helpers), shared by typing, the conversion table and codegen: which unit
// a result has, which units convert into which, and by what factor.
#pragma once

#include "ir/Types.h"

#include <cstdint>
#include <optional>
#include <string>

namespace ptxjit::ir {

/// NaT, NumPy's "not a time": the smallest int64.
inline constexpr int64_t kNaT = INT64_MIN;

/// True for datetime64 and timedelta64 types.
inline bool isDatetimeLike(const Type *t) {
  return t && (t->kind() == TypeKind::Datetime || t->kind() == TypeKind::Timedelta);
}

/// The unit's NumPy spelling: "Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs",
/// "as"; "" for the generic unit.
const char *dateUnitName(DateUnit u);
/// The unit named `name` (dateUnitName's spellings, "" for generic); nullopt otherwise.
std::optional<DateUnit> dateUnitByName(const std::string &name);

/// numba's can_cast_timedelta_units: a value in unit `from` converts exactly to unit `to` (the
/// same unit, a finer one of the same family — years and months apart from the others —, or
/// anything from the generic unit).
bool canCastDateUnits(DateUnit from, DateUnit to);
/// The factor converting a count of `from` into a count of `to` (finer, or generic `from`: 1);
/// nullopt when no integer factor does (a coarser unit, or years/months into days).
std::optional<int64_t> dateUnitFactor(DateUnit from, DateUnit to);
/// The finer of two units (the other one when one is generic).
DateUnit bestDateUnit(DateUnit a, DateUnit b);
/// The unit of datetime(unit `dt`) ± timedelta(unit `td`); nullopt when a years/months timedelta
/// meets a finer datetime (numba's combine_datetime_timedelta_units).
std::optional<DateUnit> combineDateUnits(DateUnit dt, DateUnit td);

} // namespace ptxjit::ir
