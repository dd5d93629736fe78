// Shared helpers of the codegen tests: fixtures, golden checks, ptxas.
#pragma once

#include "FileCheckLite.h"

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
#ifndef PTXJIT_PTXAS
#define PTXJIT_PTXAS ""
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

inline bool havePtxas() {
  std::error_code ec;
  return *PTXJIT_PTXAS && std::filesystem::is_regular_file(PTXJIT_PTXAS, ec);
}

/// Assembles `ptx` with ptxas -arch=sm_90; success or ptxas's diagnostics.
inline ::testing::AssertionResult ptxasAccepts(const std::string &ptx,
                                               const std::string &arch = "sm_90") {
  std::string dir = ::testing::TempDir();
  std::string base = dir + "/ptxjit_codegen_" + std::to_string(::getpid()) + "_" +
                     std::to_string(std::rand());
  std::string in = base + ".ptx", out = base + ".cubin", log = base + ".log";
  {
    std::ofstream f(in);
    f << ptx;
  }
  std::string cmd = std::string(PTXJIT_PTXAS) + " -arch=" + arch + " " + in + " -o " + out +
                    " > " + log + " 2>&1";
  int rc = std::system(cmd.c_str());
  std::string diag = readFile(log);
  std::remove(in.c_str());
  std::remove(out.c_str());
  std::remove(log.c_str());
  if (rc != 0)
    return ::testing::AssertionFailure() << "ptxas failed (" << rc << "):\n"
                                         << diag << "\n--- PTX ---\n"
                                         << ptx;
  return ::testing::AssertionSuccess();
}

} // namespace ptxjit::codegen::test
