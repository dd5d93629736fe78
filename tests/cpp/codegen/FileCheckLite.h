// A tiny FileCheck: matches text against CHECK directives (line-based).
//
//   CHECK: pat       the next line (at or after the current position) containing pat
//   CHECK-NEXT: pat  the line right after the previous match contains pat
//   CHECK-SAME: pat  the line of the previous match contains pat (after the previous match)
//   CHECK-NOT: pat   no line between the previous match and the next positive match (or the
//                    end of the input) contains pat
// Patterns are literal text with optional {{regex}} parts (ECMAScript syntax). Leading and
// trailing blanks of a pattern are ignored. Lines that hold no directive are comments.
#pragma once

#include <string>

namespace ptxjit::codegen::test {

struct CheckResult {
  bool ok = true;
  std::string message; ///< why it failed: the directive, its line and where matching stood
};

/// Matches `input` against the directives in `checks`.
CheckResult fileCheck(const std::string &input, const std::string &checks);

/// Reads a whole file (empty string and `ok` false when missing).
std::string readFile(const std::string &path, bool *ok = nullptr);

} // namespace ptxjit::codegen::test
