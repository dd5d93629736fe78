// The IR text parser and the verifier on real frontend output: every golden file of every
// Python version (tests/fixtures/bytecode/golden/py3XX/<name>.txt) parses back to the same
// text, the frontend's functions survive print → parse with their structure (value numbers,
// variables, locations) intact, and verify accepts every function the frontend builds.
#include "frontend/Frontend.h"
#include "ir/IRParser.h"
#include "ir/Verify.h"
#include "tests/cpp/frontend/FixtureLoader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace ptxjit::frontend {
namespace {

class IRTextRoundTrip : public ::testing::TestWithParam<PyVersion> {};

std::string readFile(const std::filesystem::path &p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The same blocks, instructions (op, number, line, operands, variables, targets) and
/// parameters in `a` and `b`: what print does not show but the parser reconstructs. Untyped
/// text does not give the order of the variables after the parameters, so variables are
/// compared by name.
void expectSameStructure(const ir::Function &a, const ir::Function &b) {
  ASSERT_EQ(a.argNames, b.argNames);
  for (size_t k = 0; k < a.argNames.size(); ++k) {
    EXPECT_EQ(a.vars[k].name, b.vars[k].name);
    EXPECT_TRUE(b.vars[k].isArgument) << b.vars[k].name;
  }
  auto varName = [](const ir::Function &f, const ir::Instr &i) -> std::string {
    if (auto *l = ir::dyn_cast<ir::LoadLocalInstr>(&i))
      return f.vars.at(l->var).printedName();
    if (auto *s = ir::dyn_cast<ir::StoreLocalInstr>(&i))
      return f.vars.at(s->var).printedName();
    return "";
  };
  ASSERT_EQ(a.blocks.size(), b.blocks.size());
  for (size_t k = 0; k < a.blocks.size(); ++k) {
    const ir::Block &x = *a.blocks[k], &y = *b.blocks[k];
    EXPECT_EQ(x.id, y.id);
    ASSERT_EQ(x.instrs.size(), y.instrs.size()) << "bb" << x.id;
    for (size_t n = 0; n < x.instrs.size(); ++n) {
      const ir::Instr &i = *x.instrs[n], &j = *y.instrs[n];
      SCOPED_TRACE("bb" + std::to_string(x.id) + " instruction " + std::to_string(n));
      EXPECT_EQ(i.op(), j.op());
      EXPECT_EQ(i.id, j.id);
      EXPECT_EQ(i.loc.line, j.loc.line);
      ASSERT_EQ(i.numOperands(), j.numOperands());
      for (size_t o = 0; o < i.numOperands(); ++o)
        EXPECT_EQ(i.operand(o)->id, j.operand(o)->id);
      EXPECT_EQ(varName(a, i), varName(b, j));
      EXPECT_EQ(i.parent->id, j.parent->id);
      std::vector<ir::Block *> si = x.successors(), sj = y.successors();
      ASSERT_EQ(si.size(), sj.size());
      for (size_t s = 0; s < si.size(); ++s)
        EXPECT_EQ(si[s]->id, sj[s]->id);
    }
  }
}

TEST_P(IRTextRoundTrip, EveryGoldenFileParsesBackToItsText) {
  std::filesystem::path dir =
      fixtures::fixturesRoot() + "/golden/" + fixtures::versionDir(GetParam());
  int parsed = 0;
  for (const auto &e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".txt")
      continue;
    SCOPED_TRACE(e.path().string());
    std::string text = readFile(e.path());
    std::unique_ptr<ir::Function> fn;
    try {
      fn = ir::parseFunction(text);
    } catch (const ir::CompileError &err) {
      ADD_FAILURE() << err.what();
      continue;
    }
    EXPECT_EQ(fn->print(/*withLocs=*/true), text);
    EXPECT_NO_THROW(ir::verify(*fn));
    ++parsed;
  }
  EXPECT_GE(parsed, 25);
}

TEST_P(IRTextRoundTrip, FrontendFunctionsSurvivePrintAndParse) {
  int checked = 0;
  for (const std::string &name : fixtures::fixtureNames(GetParam())) {
    fixtures::Fixture f = fixtures::loadFixture(GetParam(), name);
    if (f.expectReject)
      continue;
    SCOPED_TRACE(name);
    std::unique_ptr<ir::Function> fn = buildFunction(f.snapshot, ir::FunctionKind::Kernel);
    for (bool withLocs : {false, true}) {
      std::string text = fn->print(withLocs);
      std::unique_ptr<ir::Function> back = ir::parseFunction(text);
      EXPECT_EQ(back->print(withLocs), text);
      if (withLocs)
        expectSameStructure(*fn, *back);
    }
    ++checked;
  }
  EXPECT_GE(checked, 26); // every supported sample, extended_arg included
}

TEST_P(IRTextRoundTrip, VerifyAcceptsEveryFrontendFunction) {
  int checked = 0;
  for (const std::string &name : fixtures::fixtureNames(GetParam())) {
    fixtures::Fixture f = fixtures::loadFixture(GetParam(), name);
    if (f.expectReject)
      continue;
    SCOPED_TRACE(name);
    for (ir::FunctionKind kind : {ir::FunctionKind::Kernel, ir::FunctionKind::Device}) {
      std::unique_ptr<ir::Function> fn = buildFunction(f.snapshot, kind);
      try {
        ir::verify(*fn);
      } catch (const ir::CompileError &e) {
        ADD_FAILURE() << e.what() << "\n" << fn->print(true);
      }
    }
    ++checked;
  }
  EXPECT_GE(checked, 26);
}

INSTANTIATE_TEST_SUITE_P(AllVersions, IRTextRoundTrip,
                         ::testing::Values(PyVersion::Py311, PyVersion::Py312, PyVersion::Py313),
                         [](const ::testing::TestParamInfo<PyVersion> &info) {
                           return fixtures::versionDir(info.param);
                         });

} // namespace
} // namespace ptxjit::frontend
