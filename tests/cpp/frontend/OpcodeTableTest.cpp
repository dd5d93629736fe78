// Checks the per-version opcode tables (frontend/Opcodes31x.cpp) against the `dis` module of
// each installed interpreter (/root/.pyenv/versions/3.1x.*/bin/python3, run with popen):
// opcode numbers, inline cache counts, which opcodes jump, BINARY_OP's NB_* numbering and
// COMPARE_OP's operator order. A version whose interpreter is missing is skipped.
#include "frontend/Bytecode.h"
#include "frontend/Opcodes.h"

#include <gtest/gtest.h>
#include <llvm/Support/JSON.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <glob.h>
#include <set>
#include <unistd.h>

namespace ptxjit::frontend {
namespace {

// Prints what the test compares, as JSON. Only real opcodes (< 256): pseudo-ops never appear
// in co_code.
constexpr const char *kDumpScript = R"PY(
import dis, json, sys
real = {n: v for n, v in dis.opmap.items() if v < 256}
ce = dis._inline_cache_entries
caches = {n: (ce.get(n, 0) if isinstance(ce, dict) else ce[v]) for n, v in real.items()}
fmt = {n: sum(f.values()) for n, f in dis._cache_format.items() if n in real}
jumps = sorted(v for v in set(getattr(dis, "hasjump", None) or dis.hasjrel) if v < 256)
absjumps = sorted(v for v in getattr(dis, "hasjabs", []) if v < 256)
print(json.dumps({"version": "%d.%d" % sys.version_info[:2], "opmap": real, "caches": caches,
                  "cacheFormat": fmt, "jumps": jumps, "absJumps": absjumps,
                  "nbOps": [s for _, s in dis._nb_ops], "cmpOp": list(dis.cmp_op)}))
)PY";

std::string findInterpreter(PyVersion v) {
  std::string pattern = std::string("/root/.pyenv/versions/") + pyVersionName(v) + ".*/bin/python3";
  glob_t g{};
  std::string found;
  if (glob(pattern.c_str(), 0, nullptr, &g) == 0 && g.gl_pathc > 0)
    found = g.gl_pathv[0];
  globfree(&g);
  return found;
}

/// Runs the dump script with `python`; returns its parsed output.
llvm::json::Value dumpDis(const std::string &python) {
  std::filesystem::path script = std::filesystem::temp_directory_path() /
                                 ("ptxjit_opcode_dump_" + std::to_string(getpid()) + ".py");
  {
    std::ofstream out(script);
    out << kDumpScript;
  }
  std::string cmd = "'" + python + "' '" + script.string() + "'";
  std::string text;
  if (FILE *p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0)
      text.append(buf, n);
    int rc = pclose(p);
    EXPECT_EQ(rc, 0) << cmd;
  }
  std::filesystem::remove(script);
  llvm::Expected<llvm::json::Value> v = llvm::json::parse(text);
  if (!v) {
    ADD_FAILURE() << "bad output from " << cmd << ": " << llvm::toString(v.takeError());
    return llvm::json::Value(nullptr);
  }
  return std::move(*v);
}

class OpcodeTableTest : public ::testing::TestWithParam<PyVersion> {
protected:
  void SetUp() override {
    python_ = findInterpreter(GetParam());
    if (python_.empty())
      GTEST_SKIP() << "no CPython " << pyVersionName(GetParam()) << " interpreter installed";
    dump_ = dumpDis(python_);
    ASSERT_NE(dump_.getAsObject(), nullptr);
    obj_ = dump_.getAsObject();
    ASSERT_EQ(obj_->getString("version").value_or(""), pyVersionName(GetParam()));
  }
  std::string python_;
  llvm::json::Value dump_{nullptr};
  const llvm::json::Object *obj_ = nullptr;
};

TEST_P(OpcodeTableTest, NumbersMatchOpmap) {
  const llvm::json::Object *opmap = obj_->getObject("opmap");
  ASSERT_NE(opmap, nullptr);
  EXPECT_EQ(pyOpcodeTable(GetParam()).size(), opmap->size());
  for (const auto &kv : *opmap) {
    std::string name = kv.first.str();
    int number = static_cast<int>(*kv.second.getAsInteger());
    std::optional<PyOp> op = pyOpFromName(name);
    ASSERT_TRUE(op.has_value()) << name << " is missing from PyOpcodes.def";
    EXPECT_EQ(pyOpNumber(GetParam(), *op), std::optional<uint8_t>(static_cast<uint8_t>(number)))
        << name;
    std::optional<PyOp> back = pyOpFromNumber(GetParam(), static_cast<uint8_t>(number));
    ASSERT_TRUE(back.has_value()) << name;
    EXPECT_EQ(pyOpName(*back), name);
  }
  // Our table has nothing the interpreter lacks.
  for (const PyOpcodeEntry &e : pyOpcodeTable(GetParam()))
    EXPECT_NE(opmap->get(pyOpName(e.op)), nullptr) << pyOpName(e.op);
}

TEST_P(OpcodeTableTest, CacheCountsMatch) {
  const llvm::json::Object *caches = obj_->getObject("caches");
  const llvm::json::Object *fmt = obj_->getObject("cacheFormat");
  ASSERT_NE(caches, nullptr);
  ASSERT_NE(fmt, nullptr);
  int withCaches = 0;
  for (const auto &kv : *caches) {
    std::optional<PyOp> op = pyOpFromName(kv.first.str());
    ASSERT_TRUE(op.has_value());
    int expected = static_cast<int>(*kv.second.getAsInteger());
    EXPECT_EQ(pyOpCacheEntries(GetParam(), *op), expected) << kv.first.str();
    // _cache_format lists the fields of each cached opcode; their sizes add up to the count.
    const llvm::json::Value *f = fmt->get(kv.first);
    EXPECT_EQ(pyOpCacheEntries(GetParam(), *op), f ? static_cast<int>(*f->getAsInteger()) : 0)
        << kv.first.str();
    withCaches += expected > 0;
  }
  EXPECT_GT(withCaches, 5);
}

TEST_P(OpcodeTableTest, JumpOpcodesMatch) {
  std::set<int> expected;
  for (const llvm::json::Value &v : *obj_->getArray("jumps"))
    expected.insert(static_cast<int>(*v.getAsInteger()));
  // Since 3.11 no real opcode jumps to an absolute offset.
  EXPECT_TRUE(obj_->getArray("absJumps")->empty());
  std::set<int> ours;
  for (const PyOpcodeEntry &e : pyOpcodeTable(GetParam())) {
    if (pyOpJumpKind(e.op) != JumpKind::None)
      ours.insert(e.number);
    bool backward = std::string(pyOpName(e.op)).find("BACKWARD") != std::string::npos;
    EXPECT_EQ(pyOpJumpsBackward(e.op), backward && pyOpJumpKind(e.op) != JumpKind::None)
        << pyOpName(e.op);
  }
  EXPECT_EQ(ours, expected);
}

TEST_P(OpcodeTableTest, BinaryAndCompareOperands) {
  CodeSnapshot empty;
  empty.version = GetParam();
  BytecodeView view(empty);
  const llvm::json::Array *nb = obj_->getArray("nbOps");
  ASSERT_NE(nb, nullptr);
  ASSERT_EQ(nb->size(), 26u);
  for (size_t k = 0; k < nb->size(); ++k) {
    Instruction in;
    in.op = PyOp::BINARY_OP;
    in.arg = static_cast<uint32_t>(k);
    BinaryOperand b = view.binaryOp(in);
    EXPECT_EQ(std::string(binaryOpName(b.op)) + (b.inplace ? "=" : ""),
              (*nb)[k].getAsString().value_or("").str());
  }
  const llvm::json::Array *cmp = obj_->getArray("cmpOp");
  ASSERT_NE(cmp, nullptr);
  ASSERT_EQ(cmp->size(), 6u);
  for (size_t k = 0; k < cmp->size(); ++k) {
    Instruction in;
    in.op = PyOp::COMPARE_OP;
    switch (GetParam()) {
    case PyVersion::Py311:
      in.arg = static_cast<uint32_t>(k);
      break;
    case PyVersion::Py312:
      in.arg = static_cast<uint32_t>(k << 4);
      break;
    case PyVersion::Py313:
      in.arg = static_cast<uint32_t>(k << 5);
      break;
    }
    EXPECT_STREQ(cmpOpName(view.compareOp(in).cmp),
                 (*cmp)[k].getAsString().value_or("").str().c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(AllVersions, OpcodeTableTest,
                         ::testing::Values(PyVersion::Py311, PyVersion::Py312, PyVersion::Py313),
                         [](const ::testing::TestParamInfo<PyVersion> &info) {
                           std::string n = pyVersionName(info.param);
                           return "py" + n.substr(0, 1) + n.substr(2);
                         });

} // namespace
} // namespace ptxjit::frontend
