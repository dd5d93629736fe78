// Golden typed IR: each sample of tests/fixtures/bytecode/samples.py built by the frontend,
// typed by ir::inferTypes for the argument types in kSamples below, verified, printed with
// locations and compared with tests/fixtures/bytecode/golden/typed/<name>.txt; the printed
// text must also parse back (ir/IRParser.h) to the same text and pass verify.
//
// One file per sample holds the text of every Python version, in sections. A section starts
// with a header line naming the versions it is for, and runs to the next header or the end:
//
//   # py311, py312
//   function saxpy(a: float32, ...) kernel -> void
//   ...
//   # py313
//   function saxpy(a: float32, ...) kernel -> void
//   ...
//
// Each version is named by exactly one header; versions whose text is the same share a
// section, so most files have the single header "# py311, py312, py313". (IR text never
// starts a line with '#'.) Run with PTXJIT_UPDATE_GOLDEN=1 to rewrite the files after an
// intended change, then review the diff by eye.
#include "frontend/Frontend.h"
#include "ir/IRParser.h"
#include "ir/Verify.h"
#include "ir/typing/Typing.h"
#include "tests/cpp/frontend/FixtureLoader.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace ptxjit::frontend {
namespace {

using namespace ir::types;
using ir::Layout;

/// A sample to type: its function kind and the argument types of its specialization.
struct Sample {
  std::string name;
  ir::FunctionKind kind;
  std::vector<const ir::Type *> args;
};

const ir::Type *vec(const ir::ScalarType *dt, Layout l = Layout::C) { return array(dt, 1, l); }
const ir::Type *mat(const ir::ScalarType *dt, Layout l = Layout::C) { return array(dt, 2, l); }

/// The argument types of every typed sample: one table, so the choices are seen together.
/// Layouts, widths and weak (Python scalar) arguments vary, so the files show their rules.
const std::vector<Sample> &samples() {
  static const std::vector<Sample> table = {
      {"saxpy",
       ir::FunctionKind::Kernel,
       {float32(), vec(float32()), vec(float32()), vec(float32())}},
      {"index_2d", ir::FunctionKind::Kernel, {mat(float64()), mat(float64(), Layout::F)}},
      {"range_1", ir::FunctionKind::Kernel, {vec(int32())}},
      {"range_2", ir::FunctionKind::Kernel, {vec(float64()), int64()}},
      {"range_3_negative", ir::FunctionKind::Kernel, {vec(int64(), Layout::A)}},
      {"nested_loops", ir::FunctionKind::Kernel, {mat(float32()), vec(float32())}},
      {"while_break_continue", ir::FunctionKind::Kernel, {vec(int32()), vec(int64())}},
      {"loop_exits", ir::FunctionKind::Kernel, {vec(float32()), vec(float32())}},
      {"while_true", ir::FunctionKind::Kernel, {vec(float32()), vec(int64())}},
      {"loop_without_back_edge", ir::FunctionKind::Kernel, {vec(float32()), vec(uint8())}},
      {"if_elif_else", ir::FunctionKind::Kernel, {vec(float64(), Layout::A), vec(int32())}},
      {"conditional_expr", ir::FunctionKind::Kernel, {vec(float32()), vec(float32())}},
      {"bool_ops", ir::FunctionKind::Kernel, {vec(float32()), vec(boolean()), int64()}},
      {"chained_compare", ir::FunctionKind::Kernel, {vec(int32()), vec(int32()), int32()}},
      {"augmented", ir::FunctionKind::Kernel, {mat(int64()), vec(int64()), int64()}},
      {"tuple_unpack", ir::FunctionKind::Kernel, {mat(float32()), mat(int64())}},
      {"global_and_closure", ir::FunctionKind::Kernel, {vec(float32()), vec(float32())}},
      {"return_none", ir::FunctionKind::Kernel, {vec(complex64()), vec(complex128())}},
      {"unary_ops", ir::FunctionKind::Kernel, {vec(int32()), vec(int64())}},
      {"thread_indices", ir::FunctionKind::Kernel, {vec(int32())}},
      // `opt` given (float32): `opt is None` is known to be false. (With None, `out[i] = opt`
      // stores None into an array: a typing error.)
      {"is_none_compare", ir::FunctionKind::Kernel, {vec(float32()), vec(float32()), float32()}},
      {"slices", ir::FunctionKind::Kernel, {vec(float32()), vec(float32())}},
      {"numpy_types", ir::FunctionKind::Kernel, {vec(float64()), vec(float32())}},
      // `*t` unpacked into TupleGets once t's type is known.
      {"star_call", ir::FunctionKind::Kernel, {vec(float32()), vec(float32())}},
      // It returns a value: typed as a device function, with a Python int argument (weak).
      {"for_iter_probe", ir::FunctionKind::Device, {weakInt()}},
      // `x.flag = 1`: a record's field (a packed record with an int16 and a float32 field).
      {"attribute_store",
       ir::FunctionKind::Kernel,
       {record({{"flag", int16(), 0}, {"y", float32(), 2}}, 6, false), vec(int64())}},
  };
  return table;
}

/// Supported samples without a typed golden file, and why.
const std::map<std::string, std::string> &skipped() {
  static const std::map<std::string, std::string> table = {
      {"missing_global", "typing rejects it (UndefinedName), as it should"},
      {"builtins_and_math", "typing rejects math.isclose (UnsupportedCall)"},
      {"extended_arg", "300 near-identical statements; IRBuilderTest checks it"},
  };
  return table;
}

bool updateGolden() {
  const char *e = std::getenv("PTXJIT_UPDATE_GOLDEN");
  return e && std::string(e) == "1";
}

std::string goldenPath(const std::string &name) {
  return fixtures::fixturesRoot() + "/golden/typed/" + name + ".txt";
}

/// The section header for `versions`: "# py311, py312".
std::string sectionHeader(const std::vector<PyVersion> &versions) {
  std::string h = "#";
  for (size_t k = 0; k < versions.size(); ++k)
    h += (k ? ", " : " ") + fixtures::versionDir(versions[k]);
  return h + "\n";
}

/// The text of each version in a golden file's sections; a malformed file is a test failure
/// (and an empty map).
std::map<PyVersion, std::string> readSections(const std::string &path, const std::string &text) {
  std::map<PyVersion, std::string> out;
  std::vector<PyVersion> current;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.rfind("#", 0) == 0) {
      current.clear();
      std::istringstream names(line.substr(1));
      std::string v;
      while (std::getline(names >> std::ws, v, ',')) {
        while (!v.empty() && v.back() == ' ')
          v.pop_back();
        bool known = false;
        for (PyVersion pv : fixtures::allPyVersions())
          if (fixtures::versionDir(pv) == v) {
            known = true;
            if (out.count(pv)) {
              ADD_FAILURE() << path << ":" << number << ": " << v << " has two sections";
              return {};
            }
            out[pv] = "";
            current.push_back(pv);
          }
        if (!known) {
          ADD_FAILURE() << path << ":" << number << ": unknown version '" << v << "'";
          return {};
        }
      }
      continue;
    }
    if (current.empty()) {
      ADD_FAILURE() << path << ":" << number << ": text before the first '# py3XX' header";
      return {};
    }
    for (PyVersion pv : current)
      out[pv] += line + "\n";
  }
  return out;
}

/// Sections for `texts` (one per version, in version order), versions with equal text
/// sharing one.
std::string writeSections(const std::vector<std::pair<PyVersion, std::string>> &texts) {
  std::vector<std::pair<std::vector<PyVersion>, std::string>> sections;
  for (const auto &[v, text] : texts) {
    bool shared = false;
    for (auto &s : sections)
      if (s.second == text) {
        s.first.push_back(v);
        shared = true;
      }
    if (!shared)
      sections.push_back({{v}, text});
  }
  std::string out;
  for (const auto &[versions, text] : sections)
    out += sectionHeader(versions) + text;
  return out;
}

class GoldenTypedIR : public ::testing::TestWithParam<std::string> {};

const Sample &sampleNamed(const std::string &name) {
  for (const Sample &s : samples())
    if (s.name == name)
      return s;
  throw std::out_of_range("no sample " + name);
}

TEST_P(GoldenTypedIR, MatchesGoldenAndParsesBack) {
  const Sample &sample = sampleNamed(GetParam());
  std::vector<std::pair<PyVersion, std::string>> texts;
  for (PyVersion v : fixtures::allPyVersions()) {
    SCOPED_TRACE(fixtures::versionDir(v));
    fixtures::Fixture f = fixtures::loadFixture(v, sample.name);
    std::unique_ptr<ir::Function> fn;
    try {
      fn = buildFunction(f.snapshot, sample.kind);
      ir::verify(*fn);
      ir::inferTypes(*fn, sample.args, nullptr);
      ir::verify(*fn);
    } catch (const ir::CompileError &e) {
      ADD_FAILURE() << e.what() << (fn ? "\n" + fn->print(true) : "");
      return;
    }
    std::string text = fn->print(/*withLocs=*/true);
    std::unique_ptr<ir::Function> back;
    try {
      back = ir::parseFunction(text);
      ir::verify(*back);
    } catch (const ir::CompileError &e) {
      ADD_FAILURE() << "the typed text does not read back: " << e.what() << "\n" << text;
      return;
    }
    EXPECT_EQ(back->print(true), text);
    texts.push_back({v, text});
  }

  std::string path = goldenPath(sample.name);
  if (updateGolden()) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path) << writeSections(texts);
    return;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "missing golden file " << path
                         << " (run with PTXJIT_UPDATE_GOLDEN=1 to create it)";
  std::stringstream expected;
  expected << in.rdbuf();
  std::map<PyVersion, std::string> sections = readSections(path, expected.str());
  for (const auto &[v, text] : texts) {
    auto it = sections.find(v);
    if (it == sections.end()) {
      ADD_FAILURE() << path << " has no section for " << fixtures::versionDir(v);
      continue;
    }
    EXPECT_EQ(text, it->second) << "typed IR of " << sample.name << " for "
                                << fixtures::versionDir(v) << " changed; if intended, rerun "
                                << "with PTXJIT_UPDATE_GOLDEN=1 and review the diff";
  }
  // The file is exactly what the update would write (no stale or split sections).
  EXPECT_EQ(expected.str(), writeSections(texts)) << path;
}

std::vector<std::string> sampleNames() {
  std::vector<std::string> out;
  for (const Sample &s : samples())
    out.push_back(s.name);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Samples, GoldenTypedIR, ::testing::ValuesIn(sampleNames()),
                         [](const ::testing::TestParamInfo<std::string> &info) {
                           return info.param;
                         });

TEST(GoldenTypedIRTable, EverySupportedSampleIsTypedOrSkippedWithAReason) {
  std::set<std::string> typed;
  for (const Sample &s : samples())
    EXPECT_TRUE(typed.insert(s.name).second) << s.name << " is in the table twice";
  EXPECT_GE(typed.size(), 20u);
  for (PyVersion v : fixtures::allPyVersions())
    for (const std::string &name : fixtures::fixtureNames(v)) {
      fixtures::Fixture f = fixtures::loadFixture(v, name);
      if (f.expectReject)
        continue;
      EXPECT_NE(typed.count(name) + skipped().count(name), 0u)
          << name << " (" << fixtures::versionDir(v)
          << ") has neither argument types in samples() nor a reason in skipped()";
      EXPECT_FALSE(typed.count(name) && skipped().count(name)) << name;
    }
  // No golden file without a sample (a renamed or dropped sample leaves none behind).
  for (const auto &e :
       std::filesystem::directory_iterator(fixtures::fixturesRoot() + "/golden/typed"))
    EXPECT_TRUE(typed.count(e.path().stem().string())) << "stale golden file " << e.path();
}

TEST(GoldenTypedIRSections, ReadAndWriteAgree) {
  using V = PyVersion;
  std::string two = writeSections({{V::Py311, "a\n"}, {V::Py312, "b\n"}, {V::Py313, "a\n"}});
  EXPECT_EQ(two, "# py311, py313\na\n# py312\nb\n");
  std::map<V, std::string> back = readSections("two", two);
  EXPECT_EQ(back[V::Py311], "a\n");
  EXPECT_EQ(back[V::Py312], "b\n");
  EXPECT_EQ(back[V::Py313], "a\n");
  EXPECT_EQ(writeSections({{V::Py311, "x\n"}, {V::Py312, "x\n"}, {V::Py313, "x\n"}}),
            "# py311, py312, py313\nx\n");
}

} // namespace
} // namespace ptxjit::frontend
