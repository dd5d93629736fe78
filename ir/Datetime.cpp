// Unit rules of datetime64 / timedelta64 (see Datetime.h), after numba's npdatetime_helpers.
#include "ir/Datetime.h"

namespace ptxjit::ir {

namespace {

int code(DateUnit u) { return static_cast<int>(u); }
constexpr int kGeneric = static_cast<int>(DateUnit::Generic);

} // namespace

const char *dateUnitName(DateUnit u) {
  switch (u) {
  case DateUnit::Y:
    return "Y";
  case DateUnit::M:
    return "M";
  case DateUnit::W:
    return "W";
  case DateUnit::D:
    return "D";
  case DateUnit::h:
    return "h";
  case DateUnit::m:
    return "m";
  case DateUnit::s:
    return "s";
  case DateUnit::ms:
    return "ms";
  case DateUnit::us:
    return "us";
  case DateUnit::ns:
    return "ns";
  case DateUnit::ps:
    return "ps";
  case DateUnit::fs:
    return "fs";
  case DateUnit::as:
    return "as";
  case DateUnit::Generic:
    break;
  }
  return "";
}

std::optional<DateUnit> dateUnitByName(const std::string &name) {
  for (DateUnit u : {DateUnit::Y, DateUnit::M, DateUnit::W, DateUnit::D, DateUnit::h, DateUnit::m,
                     DateUnit::s, DateUnit::ms, DateUnit::us, DateUnit::ns, DateUnit::ps,
                     DateUnit::fs, DateUnit::as, DateUnit::Generic})
    if (name == dateUnitName(u))
      return u;
  return std::nullopt;
}

bool canCastDateUnits(DateUnit from, DateUnit to) {
  int src = code(from), dest = code(to);
  if (src == dest || src == kGeneric)
    return true;
  if (src > dest || dest == kGeneric)
    return false;
  return !(src <= code(DateUnit::M) && dest > code(DateUnit::M));
}

std::optional<int64_t> dateUnitFactor(DateUnit from, DateUnit to) {
  // Each unit's exact factor into the next finer one (weeks go to days: code 3 is unused).
  struct Step {
    int next;
    int64_t factor;
  };
  auto step = [](int c) -> std::optional<Step> {
    switch (c) {
    case 0:
      return Step{1, 12}; // years -> months
    case 2:
      return Step{4, 7}; // weeks -> days
    case 4:
      return Step{5, 24};
    case 5:
      return Step{6, 60};
    case 6:
      return Step{7, 60};
    default:
      if (c >= 7 && c < 13)
        return Step{c + 1, 1000};
      return std::nullopt;
    }
  };
  int c = code(from), dest = code(to);
  if (c == kGeneric)
    return 1;
  int64_t factor = 1;
  while (c < dest) {
    std::optional<Step> s = step(c);
    if (!s)
      return std::nullopt;
    c = s->next;
    factor *= s->factor;
  }
  if (c != dest)
    return std::nullopt;
  return factor;
}

DateUnit bestDateUnit(DateUnit a, DateUnit b) {
  if (a == DateUnit::Generic)
    return b;
  if (b == DateUnit::Generic)
    return a;
  return code(b) > code(a) ? b : a;
}

std::optional<DateUnit> combineDateUnits(DateUnit dt, DateUnit td) {
  if (dt == DateUnit::Generic)
    return td;
  if (td == DateUnit::Generic)
    return dt;
  if (code(td) < code(DateUnit::W) && code(dt) >= code(DateUnit::W))
    return std::nullopt;
  return code(dt) > code(td) ? dt : td;
}

} // namespace ptxjit::ir
