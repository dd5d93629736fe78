// Rejections: every REJECTED sample of samples.py must fail with the DiagCode, line and
// message text its `# reject` marker names, and the error must carry the file name.
#include "frontend/Frontend.h"
#include "frontend/Opcodes.h"
#include "ir/Types.h"
#include "ir/typing/Typing.h"
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
  // The nested code object's name ("code <lambda>" in the snapshot) says what it is.
  EXPECT_EQ(messageOf("lambda_expr"), "lambda is not supported in kernels");
  EXPECT_EQ(messageOf("import_inside"), "import statement is not supported in kernels");
  EXPECT_EQ(messageOf("dict_display"), "dict literal is not supported in kernels");
  // 3.11 calls a nested <listcomp> function; 3.12+ inline the comprehension
  // (LOAD_FAST_AND_CLEAR ... BUILD_LIST ... LIST_APPEND). Either way it is named.
  EXPECT_EQ(messageOf("list_comp"), "list comprehension is not supported in kernels");
  // Each construct in Python's words, never an opcode's, whatever the version compiles it to
  // (3.11: nested <setcomp>/<dictcomp>/<genexpr> functions, FORMAT_VALUE; 3.12: inlined
  // comprehensions; 3.13: FORMAT_SIMPLE/FORMAT_WITH_SPEC).
  EXPECT_EQ(messageOf("list_display"), "list literal is not supported in kernels");
  EXPECT_EQ(messageOf("set_display"), "set literal is not supported in kernels");
  EXPECT_EQ(messageOf("set_comp"), "set comprehension is not supported in kernels");
  EXPECT_EQ(messageOf("dict_comp"), "dict comprehension is not supported in kernels");
  EXPECT_EQ(messageOf("gen_expr"), "generator expression is not supported in kernels");
  EXPECT_EQ(messageOf("fstring"), "f-string is not supported in kernels");
  EXPECT_EQ(messageOf("fstring_spec"), "f-string is not supported in kernels");
  // The keywords of a star call must be a dict display with constant keys.
  EXPECT_EQ(messageOf("kwargs_unknown_keys"),
            "**-unpacking of a value other than a dict display with constant string keys "
            "(f(**{'k': v})) is not supported in kernels");

  // Without the code object's name (an older snapshot), what follows decides.
  CodeSnapshot lambda = fixtures::loadSnapshot(GetParam(), "lambda_expr");
  for (ir::ConstValue &c : lambda.consts)
    if (c.kind == ir::ConstValue::Kind::Unsupported)
      c.s = "code";
  try {
    buildFunction(lambda, ir::FunctionKind::Kernel);
    ADD_FAILURE() << "accepted";
  } catch (const ir::CompileError &e) {
    EXPECT_EQ(e.message(), "lambda or nested function is not supported in kernels");
  }
  // A comprehension's function (3.11) or a generator expression's without its name is still
  // not called a lambda: a function called at once on an iterator is one of those.
  for (const char *name : {"list_comp", "gen_expr", "set_comp"}) {
    CodeSnapshot s = fixtures::loadSnapshot(GetParam(), name);
    for (ir::ConstValue &c : s.consts)
      if (c.kind == ir::ConstValue::Kind::Unsupported)
        c.s = "code";
    try {
      buildFunction(s, ir::FunctionKind::Kernel);
      ADD_FAILURE() << name << " accepted";
    } catch (const ir::CompileError &e) {
      SCOPED_TRACE(name);
      EXPECT_EQ(e.message().find("lambda"), std::string::npos) << e.message();
      EXPECT_TRUE(e.message().find("comprehension") != std::string::npos ||
                  e.message().find("generator expression") != std::string::npos)
          << e.message();
    }
  }
}

TEST_P(RejectTest, MalformedCodeObjectsAreUnsupportedNotInternal) {
  // Operands out of range, jumps outside the code, a truncated instruction, a stack that
  // underflows: a plain UnsupportedError naming what is malformed, never an internal error.
  CodeSnapshot good = fixtures::loadSnapshot(GetParam(), "saxpy");
  auto messageOf = [&](const CodeSnapshot &s) -> std::string {
    try {
      buildFunction(s, ir::FunctionKind::Kernel);
    } catch (const ir::CompileError &e) {
      EXPECT_EQ(e.kind(), ir::DiagKind::Unsupported) << e.message();
      EXPECT_EQ(e.code(), ir::DiagCode::MalformedCode) << e.message();
      return e.message();
    }
    ADD_FAILURE() << "accepted";
    return "";
  };
  CodeSnapshot noConsts = good;
  noConsts.consts.clear();
  EXPECT_NE(messageOf(noConsts).find("malformed code object: constant index out of range"),
            std::string::npos);
  CodeSnapshot noNames = good;
  noNames.names.clear();
  EXPECT_NE(messageOf(noNames).find("name index out of range"), std::string::npos);
  CodeSnapshot odd = good;
  odd.code.push_back(0);
  EXPECT_NE(messageOf(odd).find("odd length"), std::string::npos);
  CodeSnapshot noLocals = good;
  noLocals.localsPlusNames.clear();
  EXPECT_NE(messageOf(noLocals).find("out of range"), std::string::npos);
  // Every byte of the code replaced, one at a time, by each opcode number: whatever the
  // result, no internal error (an exception escaping as anything but a CompileError fails).
  for (size_t at = 0; at < good.code.size(); at += 2) {
    for (int op = 0; op < 256; op += 7) {
      CodeSnapshot s = good;
      s.code[at] = static_cast<uint8_t>(op);
      try {
        buildFunction(s, ir::FunctionKind::Kernel);
      } catch (const ir::CompileError &e) {
        EXPECT_NE(e.kind(), ir::DiagKind::Internal)
            << "opcode " << op << " at " << at << ": " << e.message();
      }
    }
  }
}

TEST_P(RejectTest, JumpIntoALoopBodyIsMalformedNotInternal) {
  // Found by fuzz/FuzzFrontend.cpp: a loop's back edge retargeted past its FOR_ITER, into the
  // body (CPython never does this) was an internal compiler error.
  fixtures::Fixture f = fixtures::loadFixture(GetParam(), "range_1");
  CodeSnapshot s = f.snapshot;
  int forIter = -1, bodyStart = -1;
  for (size_t k = 0; k + 1 < f.dis.size(); ++k)
    if (f.dis[k].opname == "FOR_ITER") {
      forIter = f.dis[k].offset;
      bodyStart = f.dis[k + 1].offset;
    }
  ASSERT_GE(forIter, 0);
  bool retargeted = false;
  for (const fixtures::DisEntry &e : f.dis) {
    if (e.opname != "JUMP_BACKWARD" || e.jumpTarget != forIter)
      continue;
    int arg = *e.arg - (bodyStart - forIter) / 2;
    ASSERT_GT(arg, 0);
    s.code[static_cast<size_t>(e.offset) + 1] = static_cast<uint8_t>(arg);
    retargeted = true;
  }
  ASSERT_TRUE(retargeted);
  try {
    buildFunction(s, ir::FunctionKind::Kernel);
    ADD_FAILURE() << "accepted";
  } catch (const ir::CompileError &e) {
    EXPECT_EQ(e.code(), ir::DiagCode::MalformedCode) << e.message();
    EXPECT_NE(e.message().find("a for-loop body is also reached from elsewhere"), std::string::npos)
        << e.message();
  }
}

TEST_P(RejectTest, CallKwWithoutConstantNamesIsMalformedNotInternal) {
  // Found by fuzz/FuzzFrontend.cpp (3.13): CALL_KW whose names tuple is not a LOAD_CONST.
  fixtures::Fixture f = fixtures::loadFixture(GetParam(), "builtins_and_math");
  int loadFast = -1;
  for (const fixtures::DisEntry &e : f.dis)
    if (e.opname == "LOAD_FAST")
      loadFast = e.opcode;
  CodeSnapshot s = f.snapshot;
  bool changed = false;
  for (size_t k = 1; k < f.dis.size(); ++k)
    if (f.dis[k].opname == "CALL_KW" && f.dis[k - 1].opname == "LOAD_CONST") {
      s.code[static_cast<size_t>(f.dis[k - 1].offset)] = static_cast<uint8_t>(loadFast);
      s.code[static_cast<size_t>(f.dis[k - 1].offset) + 1] = 0;
      changed = true;
    }
  if (!changed)
    GTEST_SKIP() << "no CALL_KW before Python 3.13";
  try {
    buildFunction(s, ir::FunctionKind::Kernel);
    ADD_FAILURE() << "accepted";
  } catch (const ir::CompileError &e) {
    EXPECT_EQ(e.code(), ir::DiagCode::MalformedCode) << e.message();
    EXPECT_NE(e.message().find("CALL_KW without a constant tuple of names"), std::string::npos)
        << e.message();
  }
}

TEST_P(RejectTest, ForIterWithoutGetIterIsMalformedNotInternal) {
  // Found by fuzz/FuzzFrontend.cpp: GET_ITER replaced by a NOP leaves FOR_ITER iterating the
  // range object itself, which typing called an internal error.
  fixtures::Fixture f = fixtures::loadFixture(GetParam(), "range_1");
  CodeSnapshot s = f.snapshot;
  std::optional<uint8_t> nop = pyOpNumber(GetParam(), PyOp::NOP);
  ASSERT_TRUE(nop);
  bool changed = false;
  for (const fixtures::DisEntry &e : f.dis)
    if (e.opname == "GET_ITER") {
      s.code[static_cast<size_t>(e.offset)] = *nop;
      changed = true;
    }
  ASSERT_TRUE(changed);
  try {
    std::unique_ptr<ir::Function> fn = buildFunction(s, ir::FunctionKind::Kernel);
    ir::inferTypes(*fn, {ir::types::array(ir::types::int32(), 1, ir::Layout::C)}, nullptr);
    ADD_FAILURE() << "accepted";
  } catch (const ir::CompileError &e) {
    EXPECT_EQ(e.code(), ir::DiagCode::MalformedCode) << e.message();
    EXPECT_NE(e.message().find("FOR_ITER on a value that is not an iterator"), std::string::npos)
        << e.message();
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
