// Shared helpers of the codegen tests: fixtures, golden checks, ptxas, hand-written LLVM IR.
#pragma once

#include "FileCheckLite.h"
#include "tests/cpp/common/Ptxas.h"

#include <gtest/gtest.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
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

/// Parses hand-written test IR into `ctx`; on a syntax error records a test failure (the
/// parser's message, labelled `what`) and returns null.
inline std::unique_ptr<llvm::Module> parseTestIR(const std::string &text, llvm::LLVMContext &ctx,
                                                 const char *what) {
  llvm::SMDiagnostic err;
  std::unique_ptr<llvm::Module> m = llvm::parseAssemblyString(text, err, ctx);
  if (!m) {
    std::string msg;
    llvm::raw_string_ostream os(msg);
    err.print(what, os);
    ADD_FAILURE() << "bad test IR: " << os.str();
  }
  return m;
}

/// Records a test failure, with the verifier's findings, when `m` is not valid IR.
inline void expectValidIR(const llvm::Module &m) {
  std::string findings;
  llvm::raw_string_ostream os(findings);
  EXPECT_FALSE(llvm::verifyModule(m, &os)) << os.str();
}

/// The textual IR of `m`.
inline std::string moduleText(const llvm::Module &m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m.print(os, nullptr);
  return os.str();
}

using testutil::havePtxas;
using testutil::ptxasAccepts;

/// New-pass-manager analysis managers with every analysis registered and the proxies wired,
/// for running codegen's passes alone over hand-written IR (`fam` for function passes).
struct AnalysisManagers {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb;
  AnalysisManagers() {
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
  }
};

} // namespace ptxjit::codegen::test
