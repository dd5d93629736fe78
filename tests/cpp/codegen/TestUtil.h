// Shared helpers of the codegen tests: fixtures, golden checks, ptxas.
#pragma once

#include "FileCheckLite.h"
#include "tests/cpp/common/Ptxas.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#ifndef PTXJIT_SOURCE_DIR
#define PTXJIT_SOURCE_DIR "."
#endif

namespace ptxjit::codegen::test {

inline std::string fixturePath(const std::string &name) {
  return std::string(PTXJIT_SOURCE_DIR) + "/tests/fixtures/codegen/" + name;
}

/// Matches `text` against tests/fixtures/codegen/<checkFile>.
inline ::testing::AssertionResult matchesGolden(const std::string &text,
                                                const std::string &checkFile) {
  bool ok = false;
  std::string checks = readFile(fixturePath(checkFile), &ok);
  if (!ok)
    return ::testing::AssertionFailure() << "missing check file " << fixturePath(checkFile);
  CheckResult r = fileCheck(text, checks);
  if (!r.ok)
    return ::testing::AssertionFailure() << checkFile << ": " << r.message << "\n--- input ---\n"
                                         << text;
  return ::testing::AssertionSuccess();
}

using testutil::havePtxas;
using testutil::ptxasAccepts;

} // namespace ptxjit::codegen::test
