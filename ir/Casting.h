// LLVM-style isa<>/cast<>/dyn_cast<> for the IR's own class hierarchies (types and
// instructions). A class participates by providing `static bool classof(const Base *)`.
#pragma once

#include <cassert>

namespace ptxjit::ir {

/// True when `v` (non-null) is a `To`.
template <typename To, typename From> bool isa(const From *v) {
  assert(v && "isa<> on a null pointer");
  return To::classof(v);
}

/// `v` as a `To`; `v` must be one.
template <typename To, typename From> const To *cast(const From *v) {
  assert(isa<To>(v) && "cast<> to the wrong class");
  return static_cast<const To *>(v);
}
template <typename To, typename From> To *cast(From *v) {
  assert(isa<To>(v) && "cast<> to the wrong class");
  return static_cast<To *>(v);
}

/// `v` as a `To`, or null when it is not one (or is null).
template <typename To, typename From> const To *dyn_cast(const From *v) {
  return v && To::classof(v) ? static_cast<const To *>(v) : nullptr;
}
template <typename To, typename From> To *dyn_cast(From *v) {
  return v && To::classof(v) ? static_cast<To *>(v) : nullptr;
}

} // namespace ptxjit::ir
