// The bytecode view against what each interpreter's `dis` recorded in the fixtures:
// instruction sequence, operands, jump targets, EXTENDED_ARG folding, operand helpers, and
// FOR_ITER's exit against the offsets the interpreter actually executed.
#include "frontend/Bytecode.h"
#include "tests/cpp/frontend/FixtureLoader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace ptxjit::frontend {
namespace {

using fixtures::Fixture;

class BytecodeTest : public ::testing::TestWithParam<PyVersion> {};

std::string versionLabel(const ::testing::TestParamInfo<PyVersion> &info) {
  return fixtures::versionDir(info.param);
}

/// The dis entries without EXTENDED_ARG (which the view folds away).
std::vector<fixtures::DisEntry> realDis(const Fixture &f) {
  std::vector<fixtures::DisEntry> out;
  for (const fixtures::DisEntry &d : f.dis)
    if (d.opname != "EXTENDED_ARG")
      out.push_back(d);
  return out;
}

TEST_P(BytecodeTest, EveryFixtureMatchesDis) {
  std::vector<std::string> names = fixtures::fixtureNames(GetParam());
  ASSERT_GE(names.size(), 40u) << "fixtures missing for " << pyVersionName(GetParam());
  for (const std::string &name : names) {
    SCOPED_TRACE(name);
    Fixture f = fixtures::loadFixture(GetParam(), name);
    ASSERT_EQ(f.snapshot.version, GetParam());
    BytecodeView view(f.snapshot);
    std::vector<fixtures::DisEntry> dis = realDis(f);
    ASSERT_EQ(view.size(), dis.size());
    for (size_t k = 0; k < dis.size(); ++k) {
      const Instruction &in = view.at(InstrIndex(static_cast<int>(k)));
      const fixtures::DisEntry &d = dis[k];
      SCOPED_TRACE("offset " + std::to_string(d.offset));
      EXPECT_EQ(in.index.value, static_cast<int>(k));
      EXPECT_EQ(in.offset.value, d.offset);
      EXPECT_EQ(pyOpName(in.op), d.opname);
      EXPECT_EQ(in.opcode, d.opcode);
      if (d.arg) {
        EXPECT_EQ(in.arg, static_cast<uint32_t>(*d.arg));
      }
      // Positions: one per code unit, taken at the opcode (not at an EXTENDED_ARG prefix).
      const Position &p = f.snapshot.positions.at(static_cast<size_t>(d.offset / 2));
      EXPECT_EQ(in.pos.line, p.line);
      EXPECT_EQ(in.pos.col, p.col);
      EXPECT_EQ(in.jumpOffset.has_value(), d.jumpTarget.has_value());
      EXPECT_EQ(in.target.has_value(), d.jumpTarget.has_value());
      if (d.jumpTarget && in.jumpOffset && in.target) {
        EXPECT_EQ(in.jumpOffset->value, *d.jumpTarget);
        std::optional<InstrIndex> landing = view.indexAtStart(ByteOffset(*d.jumpTarget));
        ASSERT_TRUE(landing.has_value());
        if (in.op != PyOp::FOR_ITER) {
          EXPECT_EQ(in.target->value, landing->value);
        }
      }
      // Instructions are contiguous: each starts where the previous one (with caches) ends.
      if (k > 0) {
        EXPECT_EQ(in.start.value, view.at(InstrIndex(static_cast<int>(k - 1))).end().value);
      }
    }
    if (!view.empty()) {
      EXPECT_EQ(view.at(InstrIndex(static_cast<int>(view.size() - 1))).end().value,
                static_cast<int>(f.snapshot.code.size()));
    }
  }
}

TEST_P(BytecodeTest, ForIterExitMatchesExecution) {
  Fixture f = fixtures::loadFixture(GetParam(), "for_iter_probe");
  ASSERT_TRUE(f.executedOffsets.has_value());
  const std::vector<int> &exec = *f.executedOffsets;
  BytecodeView view(f.snapshot);
  auto forIter = std::find_if(view.begin(), view.end(),
                              [](const Instruction &in) { return in.op == PyOp::FOR_ITER; });
  ASSERT_NE(forIter, view.end());
  // The probe ran `for i in range(2)`: FOR_ITER executes three times; the instruction executed
  // right after its last execution is where the exhausted loop continues.
  std::vector<size_t> at;
  for (size_t k = 0; k < exec.size(); ++k)
    if (exec[k] == forIter->offset.value)
      at.push_back(k);
  ASSERT_EQ(at.size(), 3u);
  ASSERT_LT(at.back() + 1, exec.size());
  ASSERT_TRUE(forIter->target.has_value());
  EXPECT_EQ(view.at(*forIter->target).offset.value, exec[at.back() + 1]);
  // The body starts right after FOR_ITER and its caches.
  EXPECT_EQ(forIter->end().value, exec[at.front() + 1]);
  // Only in 3.11 does the exit coincide with where dis says FOR_ITER jumps.
  bool same = view.at(*forIter->target).start == *forIter->jumpOffset;
  switch (GetParam()) {
  case PyVersion::Py311:
    EXPECT_TRUE(same);
    break;
  case PyVersion::Py312:
  case PyVersion::Py313:
    EXPECT_FALSE(same);
    break;
  }
}

TEST_P(BytecodeTest, ExtendedArgIsFolded) {
  Fixture f = fixtures::loadFixture(GetParam(), "extended_arg");
  BytecodeView view(f.snapshot);
  int prefixes = 0;
  for (size_t k = 0; k < f.dis.size(); ++k) {
    if (f.dis[k].opname != "EXTENDED_ARG")
      continue;
    ++prefixes;
    // The instruction the prefix belongs to starts at the prefix.
    size_t j = k;
    while (j < f.dis.size() && f.dis[j].opname == "EXTENDED_ARG")
      ++j;
    ASSERT_LT(j, f.dis.size());
    std::optional<InstrIndex> i = view.indexAtOffset(ByteOffset(f.dis[j].offset));
    ASSERT_TRUE(i.has_value());
    EXPECT_LE(view.at(*i).start.value, f.dis[k].offset);
    EXPECT_GT(view.at(*i).arg, 255u);
  }
  EXPECT_GT(prefixes, 0) << "the sample no longer needs EXTENDED_ARG";

  // Constants beyond index 255 decode to the values dis shows (repr of the constant).
  std::vector<fixtures::DisEntry> dis = realDis(f);
  ASSERT_EQ(view.size(), dis.size());
  int bigConsts = 0;
  bool longForwardJump = false, longBackwardJump = false;
  for (const Instruction &in : view) {
    if (in.op == PyOp::LOAD_CONST && in.arg > 255) {
      ++bigConsts;
      const ir::ConstValue &c = view.constant(in);
      const std::string &repr = dis[static_cast<size_t>(in.index.value)].argrepr;
      switch (c.kind) {
      case ir::ConstValue::Kind::Float:
        EXPECT_EQ(c.f, std::stod(repr));
        break;
      case ir::ConstValue::Kind::Int:
        EXPECT_EQ(c.i, std::stoll(repr));
        break;
      default:
        ADD_FAILURE() << "unexpected constant " << repr;
      }
    }
    if (in.target && in.arg > 255) {
      if (in.target->value > in.index.value)
        longForwardJump = true;
      else
        longBackwardJump = true;
    }
  }
  EXPECT_GT(bigConsts, 0);
  EXPECT_TRUE(longForwardJump);
  EXPECT_TRUE(longBackwardJump);
}

/// dis spells a global/attribute operand "NULL + name" (3.11/3.12) or "name + NULL" (3.13),
/// a method-form attribute "NULL|self + name" / "name + NULL|self".
std::string stripNull(std::string s) {
  for (const char *affix : {"NULL|self + ", "NULL + "})
    if (s.rfind(affix, 0) == 0)
      return s.substr(std::string(affix).size());
  for (const char *affix : {" + NULL|self", " + NULL"}) {
    std::string a(affix);
    if (s.size() > a.size() && s.compare(s.size() - a.size(), a.size(), a) == 0)
      return s.substr(0, s.size() - a.size());
  }
  return s;
}

TEST_P(BytecodeTest, OperandHelpersMatchDis) {
  int checked = 0;
  for (const std::string &name : fixtures::fixtureNames(GetParam())) {
    SCOPED_TRACE(name);
    Fixture f = fixtures::loadFixture(GetParam(), name);
    BytecodeView view(f.snapshot);
    std::vector<fixtures::DisEntry> dis = realDis(f);
    ASSERT_EQ(view.size(), dis.size());
    for (size_t k = 0; k < dis.size(); ++k) {
      const Instruction &in = view.at(InstrIndex(static_cast<int>(k)));
      const std::string &repr = dis[k].argrepr;
      SCOPED_TRACE(std::string(pyOpName(in.op)) + " " + repr);
      switch (in.op) {
      case PyOp::LOAD_GLOBAL: {
        GlobalOperand g = view.loadGlobal(in);
        EXPECT_EQ(*g.name, stripNull(repr));
        EXPECT_EQ(g.pushNull, repr.find("NULL") != std::string::npos);
        ++checked;
        break;
      }
      case PyOp::LOAD_ATTR:
      case PyOp::LOAD_METHOD: {
        AttrOperand a = view.loadAttr(in);
        EXPECT_EQ(*a.name, stripNull(repr));
        bool method = in.op == PyOp::LOAD_METHOD || repr.find("NULL|self") != std::string::npos;
        EXPECT_EQ(a.method, method);
        ++checked;
        break;
      }
      case PyOp::COMPARE_OP: {
        CompareOperand c = view.compareOp(in);
        std::string expected = cmpOpName(c.cmp);
        if (c.toBool)
          expected = "bool(" + expected + ")";
        EXPECT_EQ(expected, repr);
        ++checked;
        break;
      }
      case PyOp::BINARY_OP: {
        BinaryOperand b = view.binaryOp(in);
        EXPECT_EQ(std::string(binaryOpName(b.op)) + (b.inplace ? "=" : ""), repr);
        ++checked;
        break;
      }
      case PyOp::LOAD_FAST_LOAD_FAST:
      case PyOp::STORE_FAST_LOAD_FAST:
      case PyOp::STORE_FAST_STORE_FAST: {
        auto [a, b] = view.fastPair(in);
        EXPECT_EQ(view.localName(a) + ", " + view.localName(b), repr);
        ++checked;
        break;
      }
      case PyOp::LOAD_FAST:
      case PyOp::STORE_FAST:
        EXPECT_EQ(view.localName(in), repr);
        ++checked;
        break;
      case PyOp::IS_OP:
        EXPECT_EQ(view.isOrContainsOp(in), in.arg ? ir::CmpOp::IsNot : ir::CmpOp::Is);
        break;
      default:
        break;
      }
    }
  }
  EXPECT_GT(checked, 500);
}

TEST_P(BytecodeTest, KeywordNames) {
  Fixture f = fixtures::loadFixture(GetParam(), "builtins_and_math");
  BytecodeView view(f.snapshot);
  std::vector<std::string> kw;
  for (const Instruction &in : view) {
    switch (GetParam()) {
    case PyVersion::Py311:
    case PyVersion::Py312:
      // KW_NAMES names the constant tuple for the next CALL.
      if (in.op == PyOp::KW_NAMES)
        kw = view.kwNames(view.constant(in), in.index);
      EXPECT_NE(in.op, PyOp::CALL_KW);
      break;
    case PyVersion::Py313:
      // 3.13 dropped KW_NAMES: CALL_KW pops the tuple, loaded by the LOAD_CONST before it.
      if (in.op == PyOp::CALL_KW) {
        const Instruction &prev = view.at(InstrIndex(in.index.value - 1));
        ASSERT_EQ(prev.op, PyOp::LOAD_CONST);
        kw = view.kwNames(view.constant(prev), prev.index);
      }
      EXPECT_NE(in.op, PyOp::KW_NAMES);
      break;
    }
  }
  EXPECT_EQ(kw, std::vector<std::string>{"rel_tol"});
}

TEST_P(BytecodeTest, ExceptionTableDecodes) {
  Fixture f = fixtures::loadFixture(GetParam(), "try_except");
  BytecodeView view(f.snapshot);
  std::vector<ExceptionTableEntry> table = view.exceptionTable();
  ASSERT_FALSE(table.empty());
  for (const ExceptionTableEntry &e : table) {
    EXPECT_LT(e.start, e.end);
    // Every handler starts at an instruction; the first handler begins with PUSH_EXC_INFO.
    EXPECT_TRUE(view.indexAtStart(e.target).has_value());
  }
  std::optional<InstrIndex> h = view.indexAtStart(table.front().target);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(view.at(*h).op, PyOp::PUSH_EXC_INFO);
  EXPECT_TRUE(BytecodeView(fixtures::loadSnapshot(GetParam(), "saxpy")).exceptionTable().empty());
}

TEST_P(BytecodeTest, MalformedBytecodeThrows) {
  CodeSnapshot s = fixtures::loadSnapshot(GetParam(), "saxpy");
  CodeSnapshot odd = s;
  odd.code.pop_back();
  EXPECT_THROW(BytecodeView{odd}, ir::CompileError);

  CodeSnapshot truncated = s;
  // Cut inside LOAD_GLOBAL's caches (it is the second instruction).
  truncated.code.resize(6);
  EXPECT_THROW(BytecodeView{truncated}, ir::CompileError);

  CodeSnapshot badJump = s;
  for (size_t u = 0; u + 1 < badJump.code.size(); u += 2) {
    std::optional<PyOp> op = pyOpFromNumber(s.version, badJump.code[u]);
    if (op && pyOpJumpKind(*op) != JumpKind::None) {
      badJump.code[u + 1] = 250; // far past the end
      break;
    }
  }
  try {
    BytecodeView v(badJump);
    FAIL() << "expected a CompileError";
  } catch (const ir::CompileError &e) {
    EXPECT_EQ(e.code(), ir::DiagCode::MalformedCode);
    EXPECT_NE(e.message().find("jumps outside"), std::string::npos) << e.message();
  }

  CodeSnapshot unknown = s;
  // Find an opcode number the version does not use.
  for (int n = 255; n > 0; --n)
    if (!pyOpFromNumber(s.version, static_cast<uint8_t>(n))) {
      unknown.code[2] = static_cast<uint8_t>(n);
      break;
    }
  EXPECT_THROW(BytecodeView{unknown}, ir::CompileError);
}

// The bindings decode co_linetable themselves: every sample's table gives what co_positions()
// gave, and the samples hold every form of entry in each version.
TEST_P(BytecodeTest, LocationTableGivesCoPositions) {
  std::set<int> forms;
  for (const std::string &name : fixtures::fixtureNames(GetParam())) {
    SCOPED_TRACE(name);
    Fixture f = fixtures::loadFixture(GetParam(), name);
    std::vector<Position> got =
        decodeLocationTable(f.lineTable, f.snapshot.firstLine, f.snapshot.code.size() / 2);
    ASSERT_EQ(got.size(), f.snapshot.positions.size());
    for (size_t u = 0; u < got.size(); ++u) {
      const Position &want = f.snapshot.positions[u];
      SCOPED_TRACE("code unit " + std::to_string(u));
      EXPECT_EQ(got[u].line, want.line);
      EXPECT_EQ(got[u].endLine, want.endLine);
      EXPECT_EQ(got[u].col, want.col);
      EXPECT_EQ(got[u].endCol, want.endCol);
    }
    for (uint8_t b : f.lineTable)
      if (b & 0x80) { // an entry's first byte; 0 stands for all the short forms (0-9)
        int form = (b >> 3) & 15;
        forms.insert(form < 10 ? 0 : form);
      }
  }
  EXPECT_EQ(forms, (std::set<int>{0, 10, 11, 12, 13, 14, 15}));
}

TEST(LocationTableTest, EachFormOfEntry) {
  // clang-format off
  const std::vector<uint8_t> table = {
      0x90, 0x53,                   // short form 2, 1 unit: column 2*8+5, 3 wide
      0xE1, 4, 9,                   // one-line form, 2 lines on, 2 units: columns 4-9
      0xF0, 0x07, 0x46, 0x01, 0x49, // long form, 1 unit: 3 lines back, ending 70 lines on,
      0x03, 0x00,                   //   column 200 (varint 201), no end column (varint 0)
      0xE8, 0x0A,                   // no columns, 1 unit: 5 lines on
      0xFA,                         // no location, 3 units
      0xD0, 7, 8};                  // one-line form, same line, 1 unit: columns 7-8
  // clang-format on
  auto pos = [](int line, int endLine, int col, int endCol) {
    return std::vector<int>{line, endLine, col, endCol};
  };
  auto flat = [](const std::vector<Position> &ps) {
    std::vector<std::vector<int>> out;
    for (const Position &p : ps)
      out.push_back({p.line, p.endLine, p.col, p.endCol});
    return out;
  };
  std::vector<std::vector<int>> want = {
      pos(10, 10, 21, 24), pos(12, 12, 4, 9),   pos(12, 12, 4, 9),
      pos(9, 79, 200, -1), pos(14, 14, -1, -1), pos(0, 0, -1, -1),
      pos(0, 0, -1, -1),   pos(0, 0, -1, -1),   pos(14, 14, 7, 8)};
  EXPECT_EQ(flat(decodeLocationTable(table, 10, 9)), want);
  // Fewer code units than the table describes: cut there; more: the rest have no position.
  EXPECT_EQ(flat(decodeLocationTable(table, 10, 4)),
            std::vector<std::vector<int>>(want.begin(), want.begin() + 4));
  std::vector<std::vector<int>> longer = want;
  longer.push_back(pos(0, 0, -1, -1));
  longer.push_back(pos(0, 0, -1, -1));
  EXPECT_EQ(flat(decodeLocationTable(table, 10, 11)), longer);
  // A table cut inside an entry reads nothing past its end.
  std::vector<uint8_t> cut(table.begin(), table.end() - 1);
  std::vector<std::vector<int>> truncated = want;
  truncated.back() = pos(14, 14, 7, 0);
  EXPECT_EQ(flat(decodeLocationTable(cut, 10, 9)), truncated);
  EXPECT_EQ(flat(decodeLocationTable({}, 10, 2)),
            (std::vector<std::vector<int>>{pos(0, 0, -1, -1), pos(0, 0, -1, -1)}));
}

TEST(PyVersionTest, NamesAndLookup) {
  EXPECT_STREQ(pyVersionName(PyVersion::Py311), "3.11");
  EXPECT_STREQ(pyVersionName(PyVersion::Py312), "3.12");
  EXPECT_STREQ(pyVersionName(PyVersion::Py313), "3.13");
  EXPECT_EQ(pyVersionFrom(3, 12), PyVersion::Py312);
  EXPECT_EQ(pyVersionFrom(3, 10), std::nullopt);
  EXPECT_EQ(pyVersionFrom(3, 14), std::nullopt);
  EXPECT_EQ(pyVersionFrom(2, 11), std::nullopt);
}

INSTANTIATE_TEST_SUITE_P(AllVersions, BytecodeTest,
                         ::testing::Values(PyVersion::Py311, PyVersion::Py312, PyVersion::Py313),
                         versionLabel);

} // namespace
} // namespace ptxjit::frontend
