// The compiler's registry and specialization pipeline, driven by bytecode fixtures: kernels are
// compiled for the host and run on the CPU grid, PTX is produced without a GPU (and checked by
// ptxas when the toolkit has it), device functions are specialized per argument types.
#include "compiler/Compiler.h"

#include "codegen/Codegen.h"
#include "runtime/HostGrid.h"
#include "tests/cpp/common/Ptxas.h"
#include "tests/cpp/frontend/FixtureLoader.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>

using namespace ptxjit;
namespace t = ptxjit::ir::types;

namespace {

std::string compilerFixturePath(frontend::PyVersion v, const std::string &name) {
  return std::string(PTXJIT_SOURCE_DIR) + "/tests/fixtures/compiler/" + fixtures::versionDir(v) +
         "/" + name + ".json";
}

/// A provider returning the fixture's snapshot, with some globals redirected to registered
/// functions, and counting its calls.
struct FixtureProvider {
  std::shared_ptr<frontend::CodeSnapshot> snap;
  std::shared_ptr<std::atomic<int>> calls = std::make_shared<std::atomic<int>>(0);

  FixtureProvider(frontend::PyVersion v, const std::string &name, bool compilerFixture = true) {
    std::string path =
        compilerFixture ? compilerFixturePath(v, name) : fixtures::fixturePath(v, name);
    snap = std::make_shared<frontend::CodeSnapshot>(fixtures::loadFixtureFile(path).snapshot);
  }
  void redirect(const std::string &global, ir::GlobalValue g) { snap->globals[global] = g; }
  compiler::SnapshotProvider provider() const {
    auto s = snap;
    auto c = calls;
    return [s, c] {
      ++*c;
      return std::shared_ptr<const frontend::CodeSnapshot>(s);
    };
  }
};

codegen::CompileOptions hostOpts() {
  codegen::CompileOptions o;
  o.backend = codegen::Backend::Host;
  return o;
}

codegen::CompileOptions cudaOpts() {
  codegen::CompileOptions o;
  o.backend = codegen::Backend::CUDA;
  o.ccMajor = 9;
  o.ccMinor = 0;
  o.ptxVersion = codegen::choosePtxVersion(9, 0, 0);
  return o;
}

/// A leaf value for packing in tests: a scalar (as double) or a 1-3 d array.
struct TestLeaf {
  double value = 0;
  void *data = nullptr;
  std::vector<int64_t> shape, strides;
};

/// Packs leaves by the plan, as the bindings do.
struct Packed {
  std::vector<uint64_t> buffer;
  std::vector<void *> params;
  Packed(const compiler::PackingPlan &plan, const std::vector<TestLeaf> &leaves) {
    buffer.assign(plan.bufferSize() / 8 + 1, 0);
    char *buf = reinterpret_cast<char *>(buffer.data());
    for (const compiler::ParamSlot &s : plan.slots) {
      const TestLeaf &l = leaves.at(s.leaf);
      char *dst = buf + s.offset;
      using S = compiler::ParamSlot::Source;
      if (s.source == S::Data) {
        std::memcpy(dst, &l.data, 8);
      } else if (s.source == S::Shape) {
        std::memcpy(dst, &l.shape.at(s.dim), 8);
      } else if (s.source == S::Stride) {
        std::memcpy(dst, &l.strides.at(s.dim), 8);
      } else if (s.type == t::float32()) {
        float f = static_cast<float>(l.value);
        std::memcpy(dst, &f, 4);
      } else if (s.type == t::float64()) {
        std::memcpy(dst, &l.value, 8);
      } else if (s.type == t::int64()) {
        int64_t i = static_cast<int64_t>(l.value);
        std::memcpy(dst, &i, 8);
      } else {
        ADD_FAILURE() << "test packing does not handle " << s.type->str();
      }
      params.push_back(dst);
    }
  }
};

TestLeaf arrayLeaf(void *data, std::vector<int64_t> shape, int itemsize) {
  TestLeaf l;
  l.data = data;
  l.shape = shape;
  l.strides.assign(shape.size(), 0);
  int64_t acc = itemsize;
  for (size_t k = shape.size(); k-- > 0;) {
    l.strides[k] = acc;
    acc *= shape[k];
  }
  return l;
}

TestLeaf scalarLeaf(double v) {
  TestLeaf l;
  l.value = v;
  return l;
}

class CompilerTest : public ::testing::TestWithParam<frontend::PyVersion> {
protected:
  compiler::Compiler &c = compiler::Compiler::instance();
  frontend::PyVersion v() const { return GetParam(); }
};

std::string versionName(const ::testing::TestParamInfo<frontend::PyVersion> &info) {
  return fixtures::versionDir(info.param);
}

} // namespace

TEST_P(CompilerTest, SaxpyCompilesForHostAndRuns) {
  FixtureProvider fx(v(), "saxpy", /*compilerFixture=*/false);
  int id = c.registerFunction("saxpy", ir::FunctionKind::Kernel, fx.provider());
  auto arr = t::array(t::float32(), 1, ir::Layout::C);
  const compiler::Specialization &spec =
      c.specialize(id, {t::float32(), arr, arr, arr}, hostOpts());
  ASSERT_NE(spec.hostEntry, nullptr);
  EXPECT_EQ(spec.returnType, t::void_());
  EXPECT_NE(spec.llvmIR.find(spec.symbol), std::string::npos);
  EXPECT_TRUE(spec.ptx.empty());
  ASSERT_EQ(spec.plan.leaves.size(), 4u);

  const int n = 1000;
  std::vector<float> x(n), y(n), out(n, -1.0f);
  for (int i = 0; i < n; ++i) {
    x[i] = 0.5f * i;
    y[i] = 1.0f - i;
  }
  Packed p(spec.plan, {scalarLeaf(2.0), arrayLeaf(x.data(), {n}, 4), arrayLeaf(y.data(), {n}, 4),
                       arrayLeaf(out.data(), {n}, 4)});
  runtime::launchHost(spec.hostEntry, {(n + 127) / 128, 1, 1}, {128, 1, 1}, p.params.data());
  for (int i = 0; i < n; ++i)
    ASSERT_FLOAT_EQ(out[i], 2.0f * x[i] + y[i]) << "at " << i;
  c.unregisterFunction(id);
}

TEST_P(CompilerTest, SpecializationsAreCachedByTypesAndOptions) {
  FixtureProvider fx(v(), "saxpy", false);
  int id = c.registerFunction("saxpy", ir::FunctionKind::Kernel, fx.provider());
  auto arr = t::array(t::float32(), 1, ir::Layout::C);
  std::vector<const ir::Type *> args{t::float32(), arr, arr, arr};
  size_t before = c.compiledCount();
  const auto &a = c.specialize(id, args, hostOpts());
  const auto &b = c.specialize(id, args, hostOpts());
  EXPECT_EQ(&a, &b);
  EXPECT_EQ(c.compiledCount(), before + 1);
  EXPECT_EQ(fx.calls->load(), 1);

  // Other options: a new specialization, but the typed IR is reused (no new snapshot).
  codegen::CompileOptions o0 = hostOpts();
  o0.optLevel = 0;
  const auto &d = c.specialize(id, args, o0);
  EXPECT_NE(&a, &d);
  EXPECT_EQ(fx.calls->load(), 1);
  // Other argument types: typed again.
  auto arr64 = t::array(t::float64(), 1, ir::Layout::A);
  const auto &e = c.specialize(id, {t::float64(), arr64, arr64, arr64}, hostOpts());
  EXPECT_NE(&a, &e);
  EXPECT_EQ(fx.calls->load(), 2);
  EXPECT_EQ(c.compiledCount(), before + 3);
  c.unregisterFunction(id);
  EXPECT_FALSE(c.isRegistered(id));
  EXPECT_THROW(c.specialize(id, args, hostOpts()), std::out_of_range);
}

TEST_P(CompilerTest, PtxWithoutAGpu) {
  FixtureProvider fx(v(), "saxpy", false);
  int id = c.registerFunction("saxpy", ir::FunctionKind::Kernel, fx.provider());
  auto arr = t::array(t::float32(), 1, ir::Layout::C);
  const compiler::Specialization &spec =
      c.specialize(id, {t::float32(), arr, arr, arr}, cudaOpts());
  EXPECT_EQ(spec.hostEntry, nullptr);
  EXPECT_FALSE(spec.loaded());
  EXPECT_NE(spec.ptx.find(".entry " + spec.symbol), std::string::npos) << spec.ptx;
  EXPECT_NE(spec.ptx.find(".target sm_90"), std::string::npos);
  EXPECT_NE(spec.llvmIR.find("nvptx64-nvidia-cuda"), std::string::npos);
  EXPECT_TRUE(testutil::ptxasAccepts(spec.ptx));
  c.unregisterFunction(id);
}

TEST_P(CompilerTest, DeviceFunctionsAreSpecializedPerArgumentTypes) {
  FixtureProvider dev(v(), "add_one");
  int devId = c.registerFunction("add_one", ir::FunctionKind::Device, dev.provider());
  FixtureProvider ker(v(), "calls_add_one");
  ker.redirect("add_one", ir::GlobalValue::deviceFunction(devId, "add_one"));
  int id = c.registerFunction("calls_add_one", ir::FunctionKind::Kernel, ker.provider());

  auto f32 = t::array(t::float32(), 1, ir::Layout::C);
  const auto &spec = c.specialize(id, {f32, f32}, hostOpts());
  EXPECT_EQ(dev.calls->load(), 1);
  std::vector<float> x{1.5f, -2.0f, 10.0f}, out(3, 0.0f);
  Packed p(spec.plan, {arrayLeaf(x.data(), {3}, 4), arrayLeaf(out.data(), {3}, 4)});
  runtime::launchHost(spec.hostEntry, {1, 1, 1}, {32, 1, 1}, p.params.data());
  EXPECT_FLOAT_EQ(out[0], 2.5f);
  EXPECT_FLOAT_EQ(out[1], -1.0f);
  EXPECT_FLOAT_EQ(out[2], 11.0f);

  // The same callee types from another backend: the typed device function is reused.
  const auto &ptxSpec = c.specialize(id, {f32, f32}, cudaOpts());
  EXPECT_EQ(dev.calls->load(), 1);
  EXPECT_TRUE(testutil::ptxasAccepts(ptxSpec.ptx));
  // Other element types: the device function is specialized again.
  auto f64 = t::array(t::float64(), 1, ir::Layout::C);
  c.specialize(id, {f64, f64}, hostOpts());
  EXPECT_EQ(dev.calls->load(), 2);
  EXPECT_EQ(c.typeCheck(devId, {t::int32()}), t::float64());

  // Device functions are not kernels.
  EXPECT_THROW(c.specialize(devId, {t::float32()}, hostOpts()), std::invalid_argument);
  c.unregisterFunction(id);
  c.unregisterFunction(devId);
}

TEST_P(CompilerTest, CompilePtxOfADeviceFunction) {
  FixtureProvider dev(v(), "add_one");
  int devId = c.registerFunction("add_one", ir::FunctionKind::Device, dev.provider());
  compiler::Compiler::PtxResult r = c.compilePTX(devId, {t::float32()}, cudaOpts());
  EXPECT_EQ(r.returnType, t::float32()); // NEP 50: float32 + 1.0 stays float32
  EXPECT_NE(r.ptx.find(".func"), std::string::npos) << r.ptx;
  EXPECT_NE(r.ptx.find(r.symbol), std::string::npos);
  EXPECT_EQ(r.ptx.find(".entry"), std::string::npos);
  EXPECT_THROW(c.compilePTX(devId, {t::float32()}, hostOpts()), std::invalid_argument);
  c.unregisterFunction(devId);
}

TEST_P(CompilerTest, RecursionIsRejected) {
  FixtureProvider fact(v(), "fact");
  int factId = c.registerFunction("fact", ir::FunctionKind::Device, fact.provider());
  fact.redirect("fact", ir::GlobalValue::deviceFunction(factId, "fact"));
  FixtureProvider ker(v(), "calls_fact");
  ker.redirect("fact", ir::GlobalValue::deviceFunction(factId, "fact"));
  int id = c.registerFunction("calls_fact", ir::FunctionKind::Kernel, ker.provider());
  try {
    c.specialize(id, {t::array(t::int64(), 1, ir::Layout::C)}, hostOpts());
    FAIL() << "recursion was not detected";
  } catch (const ir::CompileError &e) {
    EXPECT_EQ(e.code(), ir::DiagCode::Recursion) << e.what();
    EXPECT_NE(e.message().find("fact"), std::string::npos);
    EXPECT_NE(e.file().find("compiler_samples.py"), std::string::npos);
    EXPECT_GT(e.loc().line, 0);
  }
  c.unregisterFunction(id);
  c.unregisterFunction(factId);
}

TEST_P(CompilerTest, KernelsCannotBeCalledFromKernels) {
  FixtureProvider scale(v(), "scale");
  int scaleId = c.registerFunction("scale", ir::FunctionKind::Kernel, scale.provider());
  FixtureProvider ker(v(), "calls_kernel");
  ker.redirect("scale", ir::GlobalValue::kernel(scaleId, "scale"));
  int id = c.registerFunction("calls_kernel", ir::FunctionKind::Kernel, ker.provider());
  try {
    c.specialize(id, {t::array(t::float64(), 1, ir::Layout::C)}, hostOpts());
    FAIL() << "a kernel call from a kernel compiled";
  } catch (const ir::CompileError &e) {
    EXPECT_EQ(e.code(), ir::DiagCode::KernelCallFromDevice) << e.what();
  }
  c.unregisterFunction(id);
  c.unregisterFunction(scaleId);
}

TEST_P(CompilerTest, WrongArgumentCountOfADeviceFunction) {
  FixtureProvider dev(v(), "add_one");
  int devId = c.registerFunction("add_one", ir::FunctionKind::Device, dev.provider());
  FixtureProvider ker(v(), "calls_add_one_twice_arity");
  ker.redirect("add_one", ir::GlobalValue::deviceFunction(devId, "add_one"));
  int id = c.registerFunction("k", ir::FunctionKind::Kernel, ker.provider());
  try {
    c.specialize(id, {t::array(t::float64(), 1, ir::Layout::C)}, hostOpts());
    FAIL() << "wrong arity compiled";
  } catch (const ir::CompileError &e) {
    EXPECT_EQ(e.kind(), ir::DiagKind::Typing) << e.what();
    EXPECT_NE(std::string(e.what()).find("add_one"), std::string::npos) << e.what();
  }
  c.unregisterFunction(id);
  c.unregisterFunction(devId);
}

TEST_P(CompilerTest, TuplesAnd2dArraysAsArguments) {
  FixtureProvider fx(v(), "tuple_and_2d");
  int id = c.registerFunction("tuple_and_2d", ir::FunctionKind::Kernel, fx.provider());
  auto a2 = t::array(t::float64(), 2, ir::Layout::C);
  const auto &spec = c.specialize(id, {t::tuple({t::float64(), t::float64()}), a2, a2}, hostOpts());
  ASSERT_EQ(spec.plan.leaves.size(), 4u);
  const int rows = 5, cols = 7;
  std::vector<double> a(rows * cols), out(rows * cols, 0);
  for (int i = 0; i < rows * cols; ++i)
    a[i] = i;
  Packed p(spec.plan, {scalarLeaf(3.0), scalarLeaf(0.5), arrayLeaf(a.data(), {rows, cols}, 8),
                       arrayLeaf(out.data(), {rows, cols}, 8)});
  runtime::launchHost(spec.hostEntry, {2, 2, 1}, {4, 4, 1}, p.params.data());
  for (int i = 0; i < rows * cols; ++i)
    ASSERT_DOUBLE_EQ(out[i], a[i] * 3.0 + 0.5) << "at " << i;
  c.unregisterFunction(id);
}

TEST_P(CompilerTest, RejectedConstructsSurfaceAsCompileErrors) {
  FixtureProvider fx(v(), "try_except", false);
  int id = c.registerFunction("try_except", ir::FunctionKind::Kernel, fx.provider());
  auto arr = t::array(t::float64(), 1, ir::Layout::C);
  try {
    c.specialize(id, {arr, arr}, hostOpts());
    FAIL() << "try/except compiled";
  } catch (const ir::CompileError &e) {
    EXPECT_EQ(e.kind(), ir::DiagKind::Unsupported);
    EXPECT_GT(e.loc().line, 0);
  }
  // A failed compile caches nothing: the next request snapshots again.
  EXPECT_THROW(c.specialize(id, {arr, arr}, hostOpts()), ir::CompileError);
  EXPECT_EQ(fx.calls->load(), 2);
  c.unregisterFunction(id);
}

TEST_P(CompilerTest, OmittedParametersTakeTheirDefaults) {
  // with_default(x, out, scale=2.0): with two arguments `scale` is the constant 2.0.
  FixtureProvider fx(v(), "with_default");
  int id = c.registerFunction("with_default", ir::FunctionKind::Kernel, fx.provider());
  auto arr = t::array(t::float64(), 1, ir::Layout::C);
  const auto &spec = c.specialize(id, {arr, arr}, hostOpts());
  EXPECT_EQ(spec.plan.leaves.size(), 2u);
  std::vector<double> x{1.5, 2.5}, out(2, 0.0);
  Packed p(spec.plan, {arrayLeaf(x.data(), {2}, 8), arrayLeaf(out.data(), {2}, 8)});
  runtime::launchHost(spec.hostEntry, {1, 1, 1}, {2, 1, 1}, p.params.data());
  EXPECT_EQ(out, (std::vector<double>{3.0, 5.0}));
  // All three given: another specialization.
  const auto &full = c.specialize(id, {arr, arr, t::float64()}, hostOpts());
  EXPECT_NE(&full, &spec);
  Packed p2(full.plan,
            {arrayLeaf(x.data(), {2}, 8), arrayLeaf(out.data(), {2}, 8), scalarLeaf(10.0)});
  runtime::launchHost(full.hostEntry, {1, 1, 1}, {2, 1, 1}, p2.params.data());
  EXPECT_EQ(out, (std::vector<double>{15.0, 25.0}));
  // Too few: a parameter without a default is missing.
  try {
    c.specialize(id, {arr}, hostOpts());
    FAIL() << "a missing argument compiled";
  } catch (const ir::CompileError &e) {
    EXPECT_EQ(e.code(), ir::DiagCode::ArgumentCount) << e.what();
  }
  c.unregisterFunction(id);
}

TEST_P(CompilerTest, ConcurrentRequestsCompileOnce) {
  FixtureProvider fx(v(), "saxpy", false);
  int id = c.registerFunction("saxpy", ir::FunctionKind::Kernel, fx.provider());
  auto arr = t::array(t::float32(), 1, ir::Layout::A);
  std::vector<const ir::Type *> args{t::float32(), arr, arr, arr};
  std::vector<const compiler::Specialization *> got(4, nullptr);
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k)
    threads.emplace_back([&, k] { got[k] = &c.specialize(id, args, hostOpts()); });
  for (auto &th : threads)
    th.join();
  for (int k = 1; k < 4; ++k)
    EXPECT_EQ(got[k], got[0]);
  EXPECT_EQ(fx.calls->load(), 1);
  c.unregisterFunction(id);
}

TEST(CompilerRegistry, IdsNamesAndKinds) {
  compiler::Compiler &c = compiler::Compiler::instance();
  int a = c.registerFunction("first", ir::FunctionKind::Kernel, nullptr);
  int b = c.registerFunction("second", ir::FunctionKind::Device, nullptr);
  EXPECT_GT(a, 0);
  EXPECT_NE(a, b);
  EXPECT_EQ(c.name(a), "first");
  EXPECT_EQ(c.kind(b), ir::FunctionKind::Device);
  c.unregisterFunction(a);
  EXPECT_THROW(c.kind(a), std::out_of_range);
  c.unregisterFunction(a); // twice: ignored
  c.unregisterFunction(b);
  int d = c.registerFunction("third", ir::FunctionKind::Kernel, nullptr);
  EXPECT_GT(d, b); // ids are not reused
  c.unregisterFunction(d);
}

TEST(CompilerRegistry, SanitizedSymbols) {
  EXPECT_EQ(compiler::sanitizeSymbol("saxpy"), "saxpy");
  EXPECT_EQ(compiler::sanitizeSymbol("<lambda>"), "_lambda_");
  EXPECT_EQ(compiler::sanitizeSymbol("9x"), "_9x");
  EXPECT_EQ(compiler::sanitizeSymbol(""), "_");
}

INSTANTIATE_TEST_SUITE_P(AllPythons, CompilerTest, ::testing::ValuesIn(fixtures::allPyVersions()),
                         versionName);
