// Runs the CUDA toolkit's ptxas (found at configure time: PTXJIT_PTXAS) on PTX text, for the
// tests of every layer. Each call works in a fresh temporary directory, so tests may run in
// parallel (ctest -j).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#ifndef PTXJIT_PTXAS
#define PTXJIT_PTXAS ""
#endif

namespace ptxjit::testutil {

/// True when the configured ptxas exists.
inline bool havePtxas() {
  std::error_code ec;
  return *PTXJIT_PTXAS && std::filesystem::is_regular_file(PTXJIT_PTXAS, ec);
}

/// Assembles `ptx` for `arch`; returns ptxas's exit status (-1 when there is no ptxas) and
/// stores its diagnostics in *log.
inline int runPtxas(const std::string &ptx, const std::string &arch, std::string *log) {
  if (!havePtxas())
    return -1;
  std::string tmpl = (std::filesystem::path(::testing::TempDir()) / "ptxjit_ptxas_XXXXXX").string();
  if (!::mkdtemp(tmpl.data()))
    return -1;
  std::filesystem::path dir = tmpl;
  std::ofstream(dir / "in.ptx") << ptx;
  std::string cmd = std::string("'") + PTXJIT_PTXAS + "' -arch=" + arch + " '" +
                    (dir / "in.ptx").string() + "' -o '" + (dir / "out.cubin").string() +
                    "' > '" + (dir / "log").string() + "' 2>&1";
  int status = std::system(cmd.c_str());
  std::ifstream f(dir / "log");
  log->assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return status;
}

/// Success when ptxas accepts `ptx` for `arch` (or there is no ptxas), else its diagnostics.
inline ::testing::AssertionResult ptxasAccepts(const std::string &ptx,
                                               const std::string &arch = "sm_90") {
  std::string log;
  int rc = runPtxas(ptx, arch, &log);
  if (rc > 0)
    return ::testing::AssertionFailure() << "ptxas failed (" << rc << "):\n"
                                         << log << "\n--- PTX ---\n"
                                         << ptx;
  return ::testing::AssertionSuccess();
}

} // namespace ptxjit::testutil
