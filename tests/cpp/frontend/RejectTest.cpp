// Rejections: every REJECTED sample of samples.py must fail with the DiagCode, line and
// message text its `# reject` marker names, and the error must carry the file name.
#include "frontend/Frontend.h"
#include "tests/cpp/frontend/FixtureLoader.h"

#include <gtest/gtest.h>

namespace ptxjit::frontend {
namespace {

class RejectTest : public ::testing::TestWithParam<PyVersion> {};

TEST_P(RejectTest, RejectedSamplesFailWhereMarked) {
  int rejected = 0;
  for (const std::string &name : fixtures::fixtureNames(GetParam())) {
    fixtures::Fixture f = fixtures::loadFixture(GetParam(), name);
    if (!f.expectReject)
      continue;
    SCOPED_TRACE(name);
    ++rejected;
    try {
      buildFunction(f.snapshot, ir::FunctionKind::Kernel);
      ADD_FAILURE() << name << " was not rejected";
    } catch (const ir::CompileError &e) {
      EXPECT_EQ(ir::diagName(e.code()), f.expectReject->code) << e.what();
      EXPECT_EQ(e.kind(), ir::DiagKind::Unsupported);
      EXPECT_EQ(e.loc().line, f.expectReject->line) << e.what();
      EXPECT_NE(e.message().find(f.expectReject->text), std::string::npos) << e.what();
      EXPECT_EQ(e.file(), "samples.py");
      EXPECT_NE(std::string(e.what()).find("samples.py:" + std::to_string(f.expectReject->line)),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_GE(rejected, 15);
}

TEST_P(RejectTest, MessagesNameTheConstruct) {
  // The user-facing wording, checked exactly for a few constructs.
  auto messageOf = [&](const std::string &name) {
    try {
      buildFunction(fixtures::loadSnapshot(GetParam(), name), ir::FunctionKind::Kernel);
    } catch (const ir::CompileError &e) {
      return e.message();
    }
    return std::string("<accepted>");
  };
  EXPECT_EQ(messageOf("try_except"), "try/except is not supported in kernels");
  EXPECT_EQ(messageOf("try_finally"), "try/finally is not supported in kernels");
  EXPECT_EQ(messageOf("with_stmt"), "with statement is not supported in kernels");
  EXPECT_EQ(messageOf("generator"), "generator (yield) is not supported in kernels");
  EXPECT_EQ(messageOf("lambda_expr"), "lambda or nested function is not supported in kernels");
  EXPECT_EQ(messageOf("import_inside"), "import statement is not supported in kernels");
  EXPECT_EQ(messageOf("dict_display"), "unsupported bytecode instruction BUILD_MAP");
  switch (GetParam()) {
  case PyVersion::Py311:
    // 3.11 calls a nested <listcomp> function; the snapshot does not keep its name.
    EXPECT_EQ(messageOf("list_comp"),
              "comprehension or generator expression is not supported in kernels");
    break;
  case PyVersion::Py312:
  case PyVersion::Py313:
    // 3.12+ inline the comprehension (LOAD_FAST_AND_CLEAR ... BUILD_LIST ... LIST_APPEND).
    EXPECT_EQ(messageOf("list_comp"), "list comprehension is not supported in kernels");
    break;
  }
}

TEST_P(RejectTest, SupportedSamplesAreAccepted) {
  int accepted = 0;
  for (const std::string &name : fixtures::fixtureNames(GetParam())) {
    fixtures::Fixture f = fixtures::loadFixture(GetParam(), name);
    if (f.expectReject)
      continue;
    SCOPED_TRACE(name);
    EXPECT_NO_THROW(buildFunction(f.snapshot, ir::FunctionKind::Kernel));
    ++accepted;
  }
  EXPECT_GE(accepted, 20);
}

TEST_P(RejectTest, FlagsAloneReject) {
  // co_flags decide even before any instruction is looked at.
  CodeSnapshot s = fixtures::loadSnapshot(GetParam(), "saxpy");
  struct Case {
    int flag;
    const char *text;
  } cases[] = {{coflags::Generator, "generator (yield)"},
               {coflags::Coroutine, "async function"},
               {coflags::AsyncGenerator, "async generator"},
               {coflags::VarArgs, "*args"},
               {coflags::VarKeywords, "**kwargs"}};
  for (const Case &c : cases) {
    CodeSnapshot t = s;
    t.flags |= c.flag;
    try {
      buildFunction(t, ir::FunctionKind::Kernel);
      ADD_FAILURE() << "flag " << c.flag << " accepted";
    } catch (const ir::CompileError &e) {
      EXPECT_EQ(e.code(), ir::DiagCode::UnsupportedConstruct);
      EXPECT_NE(e.message().find(c.text), std::string::npos) << e.message();
      EXPECT_EQ(e.loc().line, s.firstLine);
    }
  }
}

TEST_P(RejectTest, StoreDerefIsRejected) {
  // nonlocal_store writes its closure cell; reading one (global_and_closure) is fine.
  fixtures::Fixture f = fixtures::loadFixture(GetParam(), "nonlocal_store");
  ASSERT_FALSE(f.snapshot.freevars.empty());
  EXPECT_THROW(buildFunction(f.snapshot, ir::FunctionKind::Kernel), ir::CompileError);
  EXPECT_NO_THROW(buildFunction(fixtures::loadSnapshot(GetParam(), "global_and_closure"),
                                ir::FunctionKind::Device));
}

INSTANTIATE_TEST_SUITE_P(AllVersions, RejectTest,
                         ::testing::Values(PyVersion::Py311, PyVersion::Py312, PyVersion::Py313),
                         [](const ::testing::TestParamInfo<PyVersion> &info) {
                           return fixtures::versionDir(info.param);
                         });

} // namespace
} // namespace ptxjit::frontend
