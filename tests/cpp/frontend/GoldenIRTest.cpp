// Golden IR text (Function::print with locations) of every supported sample, per version:
// tests/fixtures/bytecode/golden/py3XX/<name>.txt. Run with PTXJIT_UPDATE_GOLDEN=1 to
// rewrite the files after an intended change, then review the diff by eye.
#include "frontend/Frontend.h"
#include "tests/cpp/frontend/FixtureLoader.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ptxjit::frontend {
namespace {

class GoldenIRTest : public ::testing::TestWithParam<PyVersion> {};

bool updateGolden() {
  const char *e = std::getenv("PTXJIT_UPDATE_GOLDEN");
  return e && std::string(e) == "1";
}

std::string goldenPath(PyVersion v, const std::string &name) {
  return fixtures::fixturesRoot() + "/golden/" + fixtures::versionDir(v) + "/" + name + ".txt";
}

TEST_P(GoldenIRTest, MatchesGolden) {
  int compared = 0;
  for (const std::string &name : fixtures::fixtureNames(GetParam())) {
    fixtures::Fixture f = fixtures::loadFixture(GetParam(), name);
    // extended_arg's 300 near-identical statements are checked by IRBuilderTest instead.
    if (f.expectReject || name == "extended_arg")
      continue;
    SCOPED_TRACE(name);
    std::unique_ptr<ir::Function> fn;
    try {
      fn = buildFunction(f.snapshot, ir::FunctionKind::Kernel);
    } catch (const ir::CompileError &e) {
      ADD_FAILURE() << "unexpected CompileError: " << e.what();
      continue;
    }
    std::string text = fn->print(/*withLocs=*/true);
    std::string path = goldenPath(GetParam(), name);
    if (updateGolden()) {
      std::filesystem::create_directories(std::filesystem::path(path).parent_path());
      std::ofstream(path) << text;
      continue;
    }
    std::ifstream in(path);
    ASSERT_TRUE(in.good()) << "missing golden file " << path
                           << " (run with PTXJIT_UPDATE_GOLDEN=1 to create it)";
    std::stringstream expected;
    expected << in.rdbuf();
    EXPECT_EQ(text, expected.str()) << "IR of " << name << " changed; if intended, rerun with "
                                    << "PTXJIT_UPDATE_GOLDEN=1 and review the diff";
    ++compared;
  }
  if (!updateGolden()) {
    EXPECT_GE(compared, 20);
  }
}

INSTANTIATE_TEST_SUITE_P(AllVersions, GoldenIRTest,
                         ::testing::Values(PyVersion::Py311, PyVersion::Py312, PyVersion::Py313),
                         [](const ::testing::TestParamInfo<PyVersion> &info) {
                           return fixtures::versionDir(info.param);
                         });

} // namespace
} // namespace ptxjit::frontend
