// Slices, view assignment and enumerate/zip from real bytecode of every supported CPython
// (tests/fixtures/compiler/py3XX/slices_and_zip.json): 3.11 builds slices with BUILD_SLICE,
// 3.12+ with BINARY_SLICE / STORE_SLICE. Each version's function is decoded, typed, run on the
// host and assembled by ptxas.
#include "frontend/Frontend.h"
#include "ir/typing/Typing.h"
#include "tests/cpp/codegen/HostRun.h"
#include "tests/cpp/common/Ptxas.h"
#include "tests/cpp/frontend/FixtureLoader.h"

#include <gtest/gtest.h>

using namespace ptxjit;
namespace t = ptxjit::ir::types;

namespace {

class SliceFixture : public ::testing::TestWithParam<frontend::PyVersion> {};

std::unique_ptr<ir::Function> load(frontend::PyVersion v) {
  std::string path = std::string(PTXJIT_SOURCE_DIR) + "/tests/fixtures/compiler/" +
                     fixtures::versionDir(v) + "/slices_and_zip.json";
  frontend::CodeSnapshot snap = fixtures::loadFixtureFile(path).snapshot;
  return frontend::buildFunction(snap, ir::FunctionKind::Kernel);
}

/// The Python semantics of slices_and_zip(a, out, k) for 0 < k <= len(out), len(a) >= k - 1.
std::vector<double> reference(const std::vector<double> &a, std::vector<double> out, int64_t k) {
  int64_t n = static_cast<int64_t>(out.size());
  for (int64_t j = 1; j < k; ++j)
    out[j] = a[j - 1];
  for (int64_t j = k; j < n; ++j)
    out[j] = 0.5;
  std::vector<double> rev, tail(out.begin() + 1, out.end());
  for (int64_t j = static_cast<int64_t>(a.size()) - 1; j >= 0; j -= 2)
    rev.push_back(a[j]);
  for (size_t j = 0; j < rev.size() && j < tail.size(); ++j)
    out[0] += static_cast<double>(j + 1) * rev[j] + tail[j];
  return out;
}

TEST_P(SliceFixture, DecodesTypesAndRuns) {
  auto fn = load(GetParam());
  auto arr = t::array(t::float64(), 1, ir::Layout::C);
  ir::inferTypes(*fn, {arr, arr, t::int64()}, nullptr);
  codegen::test::HostEntry e = codegen::test::compileHost(*fn, "slices_and_zip");
  std::vector<double> a = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  for (int64_t k : {1, 3, 6}) {
    std::vector<double> out(7, 0.0);
    std::vector<double> expected = reference(a, out, k);
    codegen::test::KernelArgs args;
    args.vec(a).vec(out).scalar(k);
    codegen::test::launchHost(e, args, {1}, {1});
    EXPECT_EQ(out, expected) << "k = " << k;
  }
  codegen::CompileOptions o;
  codegen::LoweredModule m = codegen::lowerKernel(*fn, o, "slices_and_zip");
  EXPECT_TRUE(testutil::ptxasAccepts(codegen::emitPTX(m, o)));
}

std::string versionName(const ::testing::TestParamInfo<frontend::PyVersion> &info) {
  return fixtures::versionDir(info.param);
}

INSTANTIATE_TEST_SUITE_P(AllPythons, SliceFixture, ::testing::ValuesIn(fixtures::allPyVersions()),
                         versionName);

} // namespace
