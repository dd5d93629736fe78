#include "frontend/CodeSnapshot.h"

namespace ptxjit::frontend {

const char *pyVersionName(PyVersion v) {
  switch (v) {
  case PyVersion::Py311:
    return "3.11";
  case PyVersion::Py312:
    return "3.12";
  case PyVersion::Py313:
    return "3.13";
  }
  return "?";
}

std::optional<PyVersion> pyVersionFrom(int major, int minor) {
  if (major != 3)
    return std::nullopt;
  switch (minor) {
  case 11:
    return PyVersion::Py311;
  case 12:
    return PyVersion::Py312;
  case 13:
    return PyVersion::Py313;
  default:
    return std::nullopt;
  }
}

} // namespace ptxjit::frontend
