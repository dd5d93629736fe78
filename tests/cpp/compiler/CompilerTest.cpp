// The compiler's registry and specialization pipeline, driven by bytecode fixtures: kernels are
// compiled for the host and run on the CPU grid, PTX is produced without a GPU (and checked by
// ptxas when the toolkit has it), device functions are specialized per argument types.
#include "compiler/Compiler.h"

#include "codegen/Codegen.h"
#include "runtime/HostGrid.h"
#include "tests/cpp/common/Ptxas.h"
#include "tests/cpp/common/TestPacking.h"
#include "tests/cpp/frontend/FixtureLoader.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <thread>

using namespace ptxjit;
namespace t = ptxjit::ir::types;

namespace {

std::string compilerFixturePath(frontend::PyVersion v, const std::string &name) {
  return std::string(PTXJIT_SOURCE_DIR) + "/tests/fixtures/compiler/" + fixtures::versionDir(v) +
         "/" + name + ".json";
}

/// A fixture's snapshot, with some globals redirected to registered functions.
struct Fixture {
  std::shared_ptr<frontend::CodeSnapshot> snap;

  Fixture(frontend::PyVersion v, const std::string &name, bool compilerFixture = true) {
    std::string path =
        compilerFixture ? compilerFixturePath(v, name) : fixtures::fixturePath(v, name);
    snap = std::make_shared<frontend::CodeSnapshot>(fixtures::loadFixtureFile(path).snapshot);
  }
  void redirect(const std::string &global, ir::GlobalValue g) { snap->globals[global] = g; }
};

/// The snapshots the bindings would take: function id → its fixture.
compiler::SnapshotSet snapshots(std::initializer_list<std::pair<int, const Fixture *>> fns) {
  compiler::SnapshotSet set;
  for (const auto &[id, fx] : fns)
    set[id] = fx->snap;
  return set;
}

/// No snapshots: a request that must not type anything new.
const compiler::SnapshotSet kNone;

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

using testutil::arrayLeaf;
using testutil::Packed;
using testutil::scalarLeaf;

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
  Fixture fx(v(), "saxpy", /*compilerFixture=*/false);
  int id = c.registerFunction("saxpy", ir::FunctionKind::Kernel);
  auto arr = t::array(t::float32(), 1, ir::Layout::C);
  const compiler::Specialization &spec =
      c.specialize(id, {t::float32(), arr, arr, arr}, hostOpts(), snapshots({{id, &fx}}));
  ASSERT_NE(spec.hostEntry, nullptr);
  EXPECT_EQ(spec.returnType, t::void_());
  // The IR text is made when first asked for (the compile printed none), then kept.
  EXPECT_TRUE(spec.llvmIR.empty());
  std::string ir = c.llvmIR(spec);
  EXPECT_NE(ir.find(spec.symbol), std::string::npos);
  EXPECT_EQ(c.llvmIR(spec), ir);
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

TEST_P(CompilerTest, BoundsCheckedLaunchThrowsArrayIndexError) {
  // saxpy loops over x; an `out` shorter than x is indexed out of bounds at out[4].
  Fixture fx(v(), "saxpy", false);
  int id = c.registerFunction("saxpy", ir::FunctionKind::Kernel);
  auto arr = t::array(t::float32(), 1, ir::Layout::C);
  codegen::CompileOptions opts = hostOpts();
  opts.boundscheck = true;
  const compiler::Specialization &spec =
      c.specialize(id, {t::float32(), arr, arr, arr}, opts, snapshots({{id, &fx}}));
  ASSERT_NE(spec.hostBounds, nullptr);
  std::vector<float> x(8, 1.0f), y(8, 1.0f), out(4, 0.0f), guard(4, -1.0f);
  Packed p(spec.plan, {scalarLeaf(2.0), arrayLeaf(x.data(), {8}, 4), arrayLeaf(y.data(), {8}, 4),
                       arrayLeaf(out.data(), {4}, 4)});
  try {
    spec.launchHost({1, 1, 1}, {8, 1, 1}, 0, reinterpret_cast<char *>(p.buffer.data()),
                    p.params.data());
    FAIL() << "no ArrayIndexError";
  } catch (const compiler::ArrayIndexError &e) {
    EXPECT_GE(e.record.index, 4);
    EXPECT_EQ(e.record.size, 4);
    EXPECT_EQ(e.record.axis, 0);
    EXPECT_EQ(e.record.tid[0], e.record.index); // thread i writes out[i]
    EXPECT_STREQ(e.record.array, "out");
    EXPECT_STREQ(e.record.function, "saxpy");
    EXPECT_NE(std::string(e.what()).find("array 'out'"), std::string::npos) << e.what();
  }
  for (float o : out)
    EXPECT_FLOAT_EQ(o, 3.0f);            // the in-bounds threads did their work
  EXPECT_EQ(spec.hostBounds->failed, 0); // cleared for the next launch
  // Unchecked options: no record.
  EXPECT_EQ(c.specialize(id, {t::float32(), arr, arr, arr}, hostOpts(), kNone).hostBounds, nullptr);
  c.unregisterFunction(id);
}

TEST_P(CompilerTest, RaisingThreadsEndAndDebugLaunchesThrowKernelException) {
  // raise_on_negative: `raise ValueError("negative", 3)` for x < 0, `assert x != 5, "five"`,
  // then out[i] = 60 // x[i] (ZeroDivisionError for 0 with exceptions on).
  Fixture fx(v(), "raise_on_negative");
  int id = c.registerFunction("raise_on_negative", ir::FunctionKind::Kernel);
  auto arr = t::array(t::int64(), 1, ir::Layout::C);
  auto launch = [&](const compiler::Specialization &spec, std::vector<int64_t> &x,
                    std::vector<int64_t> &out) {
    Packed p(spec.plan, {arrayLeaf(x.data(), {int64_t(x.size())}, 8),
                         arrayLeaf(out.data(), {int64_t(out.size())}, 8)});
    spec.launchHost({1, 1, 1}, {unsigned(x.size()), 1, 1}, 0,
                    reinterpret_cast<char *>(p.buffer.data()), p.params.data());
  };
  // Without exceptions: the raising threads end silently, the others do their work.
  const compiler::Specialization &quiet =
      c.specialize(id, {arr, arr}, hostOpts(), snapshots({{id, &fx}}));
  EXPECT_TRUE(quiet.raiseSites.empty());
  EXPECT_EQ(quiet.hostBounds, nullptr);
  std::vector<int64_t> x{1, -2, 3, 5, 0, 6}, out(6, -1);
  launch(quiet, x, out);
  EXPECT_EQ(out, (std::vector<int64_t>{60, -1, 20, -1, 0, 10})); // 60 // 0 is 0 (NumPy's)

  codegen::CompileOptions opts = hostOpts();
  opts.exceptions = true;
  const compiler::Specialization &spec = c.specialize(id, {arr, arr}, opts, kNone);
  ASSERT_NE(spec.hostBounds, nullptr);
  std::set<std::string> sites; // numbered in lowering order, which is not the source's
  for (const ir::RaiseSite &s : spec.raiseSites) {
    sites.insert(s.exception.str());
    EXPECT_EQ(s.function, "raise_on_negative");
  }
  EXPECT_EQ(sites, (std::set<std::string>{"ValueError('negative', 3)", "AssertionError('five')",
                                          "ZeroDivisionError('integer division by zero')"}));
  std::fill(out.begin(), out.end(), -1);
  try {
    launch(spec, x, out);
    FAIL() << "no KernelException";
  } catch (const compiler::KernelException &e) {
    // Thread 1 raises first (threads run in order on one block without barriers).
    EXPECT_EQ(e.site.exception.cls.path, "ValueError");
    EXPECT_EQ(e.record.tid[0], 1);
    std::string what = e.what();
    EXPECT_NE(what.find("In function 'raise_on_negative', file "), std::string::npos) << what;
    EXPECT_NE(what.find(", line " + std::to_string(e.site.line) +
                        ", tid=[0, 0, 1] ctaid=[0, 0, 0]: negative"),
              std::string::npos)
        << what;
    EXPECT_EQ(e.prefix + ": negative", what);
  }
  EXPECT_EQ(out, (std::vector<int64_t>{60, -1, 20, -1, -1, 10}));
  EXPECT_EQ(spec.hostBounds->failed, 0); // cleared
  std::vector<int64_t> zero{4, 0}, out2(2, -1);
  try {
    launch(spec, zero, out2);
    FAIL() << "no ZeroDivisionError";
  } catch (const compiler::KernelException &e) {
    EXPECT_EQ(e.site.exception.cls.path, "ZeroDivisionError");
    EXPECT_EQ(e.record.tid[0], 1);
  }
  EXPECT_EQ(out2, (std::vector<int64_t>{15, -1}));
  c.unregisterFunction(id);
}

TEST_P(CompilerTest, SpecializationsAreCachedByTypesAndOptions) {
  Fixture fx(v(), "saxpy", false);
  int id = c.registerFunction("saxpy", ir::FunctionKind::Kernel);
  auto arr = t::array(t::float32(), 1, ir::Layout::C);
  std::vector<const ir::Type *> args{t::float32(), arr, arr, arr};
  size_t before = c.compiledCount();
  const auto &a = c.specialize(id, args, hostOpts(), snapshots({{id, &fx}}));
  const auto &b = c.specialize(id, args, hostOpts(), kNone); // cached: no snapshot read
  EXPECT_EQ(&a, &b);
  EXPECT_EQ(c.compiledCount(), before + 1);

  // Other options: a new specialization, but the typed IR is reused (no snapshot read).
  codegen::CompileOptions o0 = hostOpts();
  o0.optLevel = 0;
  const auto &d = c.specialize(id, args, o0, kNone);
  EXPECT_NE(&a, &d);
  // Other argument types: typed again, which needs the snapshot.
  auto arr64 = t::array(t::float64(), 1, ir::Layout::A);
  std::vector<const ir::Type *> args64{t::float64(), arr64, arr64, arr64};
  EXPECT_THROW(c.specialize(id, args64, hostOpts(), kNone), std::logic_error);
  const auto &e = c.specialize(id, args64, hostOpts(), snapshots({{id, &fx}}));
  EXPECT_NE(&a, &e);
  EXPECT_EQ(c.compiledCount(), before + 3);
  c.unregisterFunction(id);
  EXPECT_FALSE(c.isRegistered(id));
  EXPECT_THROW(c.specialize(id, args, hostOpts(), kNone), std::out_of_range);
}

TEST_P(CompilerTest, PtxWithoutAGpu) {
  Fixture fx(v(), "saxpy", false);
  int id = c.registerFunction("saxpy", ir::FunctionKind::Kernel);
  auto arr = t::array(t::float32(), 1, ir::Layout::C);
  const compiler::Specialization &spec =
      c.specialize(id, {t::float32(), arr, arr, arr}, cudaOpts(), snapshots({{id, &fx}}));
  EXPECT_EQ(spec.hostEntry, nullptr);
  EXPECT_FALSE(spec.loaded());
  EXPECT_NE(spec.ptx.find(".entry " + spec.symbol), std::string::npos) << spec.ptx;
  EXPECT_NE(spec.ptx.find(".target sm_90"), std::string::npos);
  EXPECT_NE(c.llvmIR(spec).find("nvptx64-nvidia-cuda"), std::string::npos);
  EXPECT_TRUE(testutil::ptxasAccepts(spec.ptx));
  // The entry declares exactly one parameter per slot of the plan: the parameter layout check
  // (runtime::paramLayoutMatches) relies on it and never asks the driver past the last one.
  const std::string entry = spec.ptx.substr(spec.ptx.find(".entry " + spec.symbol));
  const std::string params = entry.substr(0, entry.find(')'));
  size_t count = 0;
  for (size_t at = params.find(".param"); at != std::string::npos;
       at = params.find(".param", at + 1))
    ++count;
  EXPECT_EQ(count, spec.plan.slots.size()) << params;
  c.unregisterFunction(id);
}

TEST_P(CompilerTest, DeviceFunctionsAreSpecializedPerArgumentTypes) {
  Fixture dev(v(), "add_one");
  int devId = c.registerFunction("add_one", ir::FunctionKind::Device);
  Fixture ker(v(), "calls_add_one");
  ker.redirect("add_one", ir::GlobalValue::deviceFunction(devId, "add_one"));
  int id = c.registerFunction("calls_add_one", ir::FunctionKind::Kernel);

  auto f32 = t::array(t::float32(), 1, ir::Layout::C);
  compiler::SnapshotSet both = snapshots({{id, &ker}, {devId, &dev}});
  const auto &spec = c.specialize(id, {f32, f32}, hostOpts(), both);
  std::vector<float> x{1.5f, -2.0f, 10.0f}, out(3, 0.0f);
  Packed p(spec.plan, {arrayLeaf(x.data(), {3}, 4), arrayLeaf(out.data(), {3}, 4)});
  runtime::launchHost(spec.hostEntry, {1, 1, 1}, {32, 1, 1}, p.params.data());
  EXPECT_FLOAT_EQ(out[0], 2.5f);
  EXPECT_FLOAT_EQ(out[1], -1.0f);
  EXPECT_FLOAT_EQ(out[2], 11.0f);

  // The same types for another backend: the typed kernel and device function are reused.
  const auto &ptxSpec = c.specialize(id, {f32, f32}, cudaOpts(), kNone);
  EXPECT_TRUE(testutil::ptxasAccepts(ptxSpec.ptx));
  // Other element types: the device function is specialized again, from its snapshot.
  auto f64 = t::array(t::float64(), 1, ir::Layout::C);
  EXPECT_THROW(c.specialize(id, {f64, f64}, hostOpts(), snapshots({{id, &ker}})), std::logic_error);
  c.specialize(id, {f64, f64}, hostOpts(), both);
  EXPECT_EQ(c.typeCheck(devId, {t::int32()}, both), t::float64());

  // Device functions are not kernels.
  EXPECT_THROW(c.specialize(devId, {t::float32()}, hostOpts(), both), std::invalid_argument);
  c.unregisterFunction(id);
  c.unregisterFunction(devId);
}

TEST_P(CompilerTest, CompilePtxOfADeviceFunction) {
  Fixture dev(v(), "add_one");
  int devId = c.registerFunction("add_one", ir::FunctionKind::Device);
  compiler::Compiler::PtxResult r =
      c.compilePTX(devId, {t::float32()}, cudaOpts(), snapshots({{devId, &dev}}));
  EXPECT_EQ(r.returnType, t::float32()); // NEP 50: float32 + 1.0 stays float32
  EXPECT_NE(r.ptx.find(".func"), std::string::npos) << r.ptx;
  EXPECT_NE(r.ptx.find(r.symbol), std::string::npos);
  EXPECT_EQ(r.ptx.find(".entry"), std::string::npos);
  EXPECT_THROW(c.compilePTX(devId, {t::float32()}, hostOpts(), kNone), std::invalid_argument);
  c.unregisterFunction(devId);
}

TEST_P(CompilerTest, RecursiveDeviceFunctions) {
  // fact calls itself: typed from its return that does not recurse (numba's rule), lowered as a
  // function calling itself on both backends.
  Fixture fact(v(), "fact");
  int factId = c.registerFunction("fact", ir::FunctionKind::Device);
  fact.redirect("fact", ir::GlobalValue::deviceFunction(factId, "fact"));
  Fixture ker(v(), "calls_fact");
  ker.redirect("fact", ir::GlobalValue::deviceFunction(factId, "fact"));
  int id = c.registerFunction("calls_fact", ir::FunctionKind::Kernel);
  compiler::SnapshotSet both = snapshots({{id, &ker}, {factId, &fact}});
  auto i64 = t::array(t::int64(), 1, ir::Layout::C);
  const auto &spec = c.specialize(id, {i64}, hostOpts(), both);
  std::vector<int64_t> out(1, 0);
  Packed p(spec.plan, {arrayLeaf(out.data(), {1}, 8)});
  runtime::launchHost(spec.hostEntry, {1, 1, 1}, {1, 1, 1}, p.params.data());
  EXPECT_EQ(out[0], 120);
  EXPECT_EQ(c.typeCheck(factId, {t::int64()}, both), t::int64());
  const auto &ptxSpec = c.specialize(id, {i64}, cudaOpts(), kNone);
  EXPECT_TRUE(testutil::ptxasAccepts(ptxSpec.ptx));
  c.unregisterFunction(id);
  c.unregisterFunction(factId);
}

TEST_P(CompilerTest, KernelsCalledFromKernelsAreDeviceFunctions) {
  // As in numba-cuda: a kernel called from device code is compiled into its caller.
  Fixture scale(v(), "scale");
  int scaleId = c.registerFunction("scale", ir::FunctionKind::Kernel);
  Fixture ker(v(), "calls_kernel");
  ker.redirect("scale", ir::GlobalValue::kernel(scaleId, "scale"));
  int id = c.registerFunction("calls_kernel", ir::FunctionKind::Kernel);
  const compiler::Specialization &spec =
      c.specialize(id, {t::array(t::float64(), 1, ir::Layout::C)}, hostOpts(),
                   snapshots({{id, &ker}, {scaleId, &scale}}));
  EXPECT_NE(spec.hostEntry, nullptr);
  EXPECT_NE(c.llvmIR(spec).find("scale"), std::string::npos);
  c.unregisterFunction(id);
  c.unregisterFunction(scaleId);
}

TEST_P(CompilerTest, WrongArgumentCountOfADeviceFunction) {
  Fixture dev(v(), "add_one");
  int devId = c.registerFunction("add_one", ir::FunctionKind::Device);
  Fixture ker(v(), "calls_add_one_twice_arity");
  ker.redirect("add_one", ir::GlobalValue::deviceFunction(devId, "add_one"));
  int id = c.registerFunction("k", ir::FunctionKind::Kernel);
  try {
    c.specialize(id, {t::array(t::float64(), 1, ir::Layout::C)}, hostOpts(),
                 snapshots({{id, &ker}, {devId, &dev}}));
    FAIL() << "wrong arity compiled";
  } catch (const ir::CompileError &e) {
    EXPECT_EQ(e.kind(), ir::DiagKind::Typing) << e.what();
    EXPECT_NE(std::string(e.what()).find("add_one"), std::string::npos) << e.what();
    EXPECT_EQ(e.loc().line, 42); // the call itself is wrong: no call site to add
    EXPECT_TRUE(e.callSites().empty()) << e.what();
  }
  c.unregisterFunction(id);
  c.unregisterFunction(devId);
}

TEST_P(CompilerTest, TypingErrorInADeviceFunctionNamesTheCallSite) {
  // calls_add_one with a 2-d x passes add_one a row (an array): `a + 1.0` fails in add_one.
  Fixture dev(v(), "add_one");
  int devId = c.registerFunction("add_one", ir::FunctionKind::Device);
  Fixture ker(v(), "calls_add_one");
  ker.redirect("add_one", ir::GlobalValue::deviceFunction(devId, "add_one"));
  int id = c.registerFunction("calls_add_one", ir::FunctionKind::Kernel);
  try {
    c.specialize(
        id, {t::array(t::float64(), 2, ir::Layout::C), t::array(t::float64(), 1, ir::Layout::C)},
        hostOpts(), snapshots({{id, &ker}, {devId, &dev}}));
    FAIL() << "an array + 1.0 was typed";
  } catch (const ir::CompileError &e) {
    EXPECT_EQ(e.code(), ir::DiagCode::OperatorTypes) << e.what();
    EXPECT_EQ(e.loc().line, 12) << e.what(); // in add_one
    ASSERT_EQ(e.callSites().size(), 1u) << e.what();
    const ir::CallSite &site = e.callSites()[0];
    EXPECT_EQ(site.callee, "add_one");
    EXPECT_EQ(site.caller, "calls_add_one");
    EXPECT_NE(site.file.find("compiler_samples.py"), std::string::npos);
    EXPECT_EQ(site.loc.line, 18); // out[i] = add_one(x[i])
    EXPECT_GT(site.loc.col, 0);
    EXPECT_NE(std::string(e.what()).find("(in 'add_one', called from 'calls_add_one' at "),
              std::string::npos)
        << e.what();
  }
  // The failure is not kept: the right types still compile.
  const compiler::Specialization &ok = c.specialize(
      id, {t::array(t::float64(), 1, ir::Layout::C), t::array(t::float64(), 1, ir::Layout::C)},
      hostOpts(), snapshots({{id, &ker}, {devId, &dev}}));
  EXPECT_NE(ok.hostEntry, nullptr);
  c.unregisterFunction(id);
  c.unregisterFunction(devId);
}

TEST_P(CompilerTest, TuplesAnd2dArraysAsArguments) {
  Fixture fx(v(), "tuple_and_2d");
  int id = c.registerFunction("tuple_and_2d", ir::FunctionKind::Kernel);
  auto a2 = t::array(t::float64(), 2, ir::Layout::C);
  const auto &spec = c.specialize(id, {t::tuple({t::float64(), t::float64()}), a2, a2}, hostOpts(),
                                  snapshots({{id, &fx}}));
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
  Fixture fx(v(), "try_except", false);
  int id = c.registerFunction("try_except", ir::FunctionKind::Kernel);
  auto arr = t::array(t::float64(), 1, ir::Layout::C);
  try {
    c.specialize(id, {arr, arr}, hostOpts(), snapshots({{id, &fx}}));
    FAIL() << "try/except compiled";
  } catch (const ir::CompileError &e) {
    EXPECT_EQ(e.kind(), ir::DiagKind::Unsupported);
    EXPECT_GT(e.loc().line, 0);
  }
  // A failed compile caches nothing: the next request reads a snapshot again.
  EXPECT_THROW(c.specialize(id, {arr, arr}, hostOpts(), kNone), std::logic_error);
  EXPECT_THROW(c.specialize(id, {arr, arr}, hostOpts(), snapshots({{id, &fx}})), ir::CompileError);
  c.unregisterFunction(id);
}

TEST_P(CompilerTest, UnregisteredFunctionsLeaveNoEntry) {
  const size_t before = c.entryCount();
  auto f32 = t::array(t::float32(), 1, ir::Layout::C);
  // A kernel compiled, then dropped.
  {
    Fixture fx(v(), "saxpy", /*compilerFixture=*/false);
    int id = c.registerFunction("saxpy", ir::FunctionKind::Kernel);
    c.specialize(id, {t::float32(), f32, f32, f32}, hostOpts(), snapshots({{id, &fx}}));
    EXPECT_EQ(c.entryCount(), before + 1);
    c.unregisterFunction(id);
    EXPECT_EQ(c.entryCount(), before);
  }
  // A failing compile, then dropped.
  {
    Fixture fx(v(), "try_except", false);
    int id = c.registerFunction("try_except", ir::FunctionKind::Kernel);
    auto arr = t::array(t::float64(), 1, ir::Layout::C);
    EXPECT_THROW(c.specialize(id, {arr, arr}, hostOpts(), snapshots({{id, &fx}})),
                 ir::CompileError);
    c.unregisterFunction(id);
    EXPECT_EQ(c.entryCount(), before);
  }
  // A device function dropped before its caller: its typed IR stays while the caller's typed
  // IR calls into it, and goes with the caller.
  {
    Fixture dev(v(), "add_one");
    int devId = c.registerFunction("add_one", ir::FunctionKind::Device);
    Fixture ker(v(), "calls_add_one");
    ker.redirect("add_one", ir::GlobalValue::deviceFunction(devId, "add_one"));
    int id = c.registerFunction("calls_add_one", ir::FunctionKind::Kernel);
    compiler::SnapshotSet both = snapshots({{id, &ker}, {devId, &dev}});
    c.specialize(id, {f32, f32}, hostOpts(), both);
    c.unregisterFunction(devId);
    EXPECT_FALSE(c.isRegistered(devId));
    EXPECT_EQ(c.entryCount(), before + 2);
    // The caller still compiles for another backend from its typed IR (the callee's kept).
    EXPECT_TRUE(testutil::ptxasAccepts(c.specialize(id, {f32, f32}, cudaOpts(), kNone).ptx));
    c.unregisterFunction(id);
    EXPECT_EQ(c.entryCount(), before);
  }
}

TEST_P(CompilerTest, OmittedParametersTakeTheirDefaults) {
  // with_default(x, out, scale=2.0): with two arguments `scale` is the constant 2.0.
  Fixture fx(v(), "with_default");
  int id = c.registerFunction("with_default", ir::FunctionKind::Kernel);
  auto arr = t::array(t::float64(), 1, ir::Layout::C);
  compiler::SnapshotSet snaps = snapshots({{id, &fx}});
  const auto &spec = c.specialize(id, {arr, arr}, hostOpts(), snaps);
  EXPECT_EQ(spec.plan.leaves.size(), 2u);
  std::vector<double> x{1.5, 2.5}, out(2, 0.0);
  Packed p(spec.plan, {arrayLeaf(x.data(), {2}, 8), arrayLeaf(out.data(), {2}, 8)});
  runtime::launchHost(spec.hostEntry, {1, 1, 1}, {2, 1, 1}, p.params.data());
  EXPECT_EQ(out, (std::vector<double>{3.0, 5.0}));
  // All three given: another specialization.
  const auto &full = c.specialize(id, {arr, arr, t::float64()}, hostOpts(), snaps);
  EXPECT_NE(&full, &spec);
  Packed p2(full.plan,
            {arrayLeaf(x.data(), {2}, 8), arrayLeaf(out.data(), {2}, 8), scalarLeaf(10.0)});
  runtime::launchHost(full.hostEntry, {1, 1, 1}, {2, 1, 1}, p2.params.data());
  EXPECT_EQ(out, (std::vector<double>{15.0, 25.0}));
  // Too few: a parameter without a default is missing.
  try {
    c.specialize(id, {arr}, hostOpts(), snaps);
    FAIL() << "a missing argument compiled";
  } catch (const ir::CompileError &e) {
    EXPECT_EQ(e.code(), ir::DiagCode::ArgumentCount) << e.what();
  }
  c.unregisterFunction(id);
}

TEST_P(CompilerTest, ConcurrentRequestsCompileOnce) {
  Fixture fx(v(), "saxpy", false);
  int id = c.registerFunction("saxpy", ir::FunctionKind::Kernel);
  auto arr = t::array(t::float32(), 1, ir::Layout::A);
  std::vector<const ir::Type *> args{t::float32(), arr, arr, arr};
  std::vector<const compiler::Specialization *> got(4, nullptr);
  compiler::SnapshotSet snaps = snapshots({{id, &fx}});
  size_t before = c.compiledCount();
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k)
    threads.emplace_back([&, k] { got[k] = &c.specialize(id, args, hostOpts(), snaps); });
  for (auto &th : threads)
    th.join();
  for (int k = 1; k < 4; ++k)
    EXPECT_EQ(got[k], got[0]);
  EXPECT_EQ(c.compiledCount(), before + 1);
  c.unregisterFunction(id);
}

TEST_P(CompilerTest, LoopKernelsAreSpecializations) {
  // weighted_add(a, b) = a * 10 + b as a flat elementwise loop: n, a, b (arrays, data alone),
  // out.
  Fixture fx(v(), "weighted_add");
  int id = c.registerFunction("weighted_add", ir::FunctionKind::Device);
  compiler::LoopKey key;
  key.fnParams = {t::float64(), t::float64()};
  using codegen::LoopOperand;
  key.desc.elementwise.operands = {{LoopOperand::Kind::Array, t::float32(), 0},
                                   {LoopOperand::Kind::Scalar, nullptr, 0},
                                   {LoopOperand::Kind::Array, t::float64(), 0}};
  compiler::SnapshotSet snaps = snapshots({{id, &fx}});
  size_t before = c.compiledCount();
  const compiler::Specialization &spec = c.specializeLoop(id, key, hostOpts(), snaps);
  EXPECT_EQ(&c.specializeLoop(id, key, hostOpts(), kNone), &spec); // cached
  EXPECT_EQ(c.compiledCount(), before + 1);
  ASSERT_TRUE(spec.loop);
  EXPECT_EQ(spec.loop->desc, key.desc);
  EXPECT_EQ(spec.plan.str(),
            "int64@0 <- leaf0; ptr@8 <- leaf1.data; float64@16 <- leaf2; ptr@24 <- leaf3.data");
  std::vector<float> x{1, 2, 3};
  std::vector<double> out(3, 0);
  Packed p(spec.plan, {scalarLeaf(3), testutil::stridedLeaf(x.data(), {}, {}), scalarLeaf(0.5),
                       testutil::stridedLeaf(out.data(), {}, {})});
  runtime::launchHost(spec.hostEntry, {1, 1, 1}, {1, 1, 1}, p.params.data());
  EXPECT_EQ(out, (std::vector<double>{10.5, 20.5, 30.5}));
  // Another descriptor is another specialization; the typed function is shared.
  compiler::LoopKey other = key;
  other.desc.elementwise.operands[0].elemType = t::float64();
  EXPECT_NE(&c.specializeLoop(id, other, hostOpts(), kNone), &spec);
  // Loops are of device functions; descriptors must fit the function.
  Fixture kernel(v(), "saxpy", false);
  int kid = c.registerFunction("saxpy", ir::FunctionKind::Kernel);
  EXPECT_THROW(c.specializeLoop(kid, key, hostOpts(), snapshots({{kid, &kernel}})),
               std::invalid_argument);
  compiler::LoopKey bad = key;
  bad.fnParams = {t::float64()};
  EXPECT_THROW(c.specializeLoop(id, bad, hostOpts(), snaps), ir::CompileError);
  c.unregisterFunction(kid);
  c.unregisterFunction(id);
}

TEST(CompilerRegistry, IdsNamesAndKinds) {
  compiler::Compiler &c = compiler::Compiler::instance();
  int a = c.registerFunction("first", ir::FunctionKind::Kernel);
  int b = c.registerFunction("second", ir::FunctionKind::Device);
  EXPECT_GT(a, 0);
  EXPECT_NE(a, b);
  EXPECT_EQ(c.name(a), "first");
  EXPECT_EQ(c.kind(b), ir::FunctionKind::Device);
  c.unregisterFunction(a);
  EXPECT_THROW(c.kind(a), std::out_of_range);
  c.unregisterFunction(a); // twice: ignored
  c.unregisterFunction(b);
  int d = c.registerFunction("third", ir::FunctionKind::Kernel);
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
