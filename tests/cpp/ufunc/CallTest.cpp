// The NumPy semantics of ufunc calls (ufunc/Call.h), Python-free, on the host backend: device
// functions come from the compiler fixtures (weighted_add(a, b) = a * 10 + b, row_sum(x, out)),
// arrays are host memory.
#include "ufunc/Call.h"

#include "tests/cpp/frontend/FixtureLoader.h"

#include <gtest/gtest.h>

#include <complex>
#include <cstring>

namespace ptxjit::ufunc {
namespace {

namespace t = ir::types;
constexpr codegen::Backend kHost = codegen::Backend::Host;

/// A ufunc over compiler fixture `name` (registered as a device function), its loops running on
/// the calling thread.
struct TestUfunc {
  int id;
  std::unique_ptr<Ufunc> u;
  std::shared_ptr<frontend::CodeSnapshot> snap;
  TestUfunc(const std::string &name, size_t nin, std::optional<GufuncLayout> layout = {}) {
    std::string path = std::string(PTXJIT_SOURCE_DIR) + "/tests/fixtures/compiler/" +
                       fixtures::versionDir(frontend::PyVersion::Py312) + "/" + name + ".json";
    snap = std::make_shared<frontend::CodeSnapshot>(fixtures::loadFixtureFile(path).snapshot);
    id = compiler::Compiler::instance().registerFunction(name, ir::FunctionKind::Device);
    CompileHooks hooks;
    hooks.snapshot = [this] { return compiler::SnapshotSet{{id, snap}}; };
    hooks.options = [](codegen::Backend b) {
      codegen::CompileOptions o;
      o.backend = b;
      return o;
    };
    u = std::make_unique<Ufunc>(id, name, Target::Cpu, nin, std::move(layout), std::move(hooks));
  }
  ~TestUfunc() { compiler::Compiler::instance().unregisterFunction(id); }
};

/// A host array argument over `data` (C order unless `strides` are given).
template <typename T>
CallArg hostArray(std::vector<T> &data, const ir::ScalarType *dtype, Shape shape,
                  Strides strides = {}, bool writeable = true) {
  if (strides.empty())
    strides = contiguousStrides(shape, sizeof(T), false);
  return CallArg::array(dtype, reinterpret_cast<uint64_t>(data.data()),
                        static_cast<int>(shape.size()), shape.data(), strides.data(), Memory::Host,
                        kHost, writeable);
}

/// A host array made for an output request (kept in `storage`).
CallArg allocated(const OutputRequest &req, std::vector<double> &storage) {
  EXPECT_EQ(req.dtype, t::float64());
  storage.assign(static_cast<size_t>(shapeSize(req.shape)), -1.0);
  return hostArray(storage, req.dtype, req.shape, contiguousStrides(req.shape, 8, req.fortran));
}

TEST(UfuncCall, ElementwiseBroadcastsAndAllocatesTheOutput) {
  TestUfunc f("weighted_add", 2);
  f.u->addLoop({t::float64(), t::float64()}, nullptr);
  std::vector<double> col{1, 2, 3}, row{4, 5};
  CallPlan p = planCall(*f.u, kHost,
                        {hostArray(col, t::float64(), {3, 1}), hostArray(row, t::float64(), {2})},
                        {nullptr});
  EXPECT_EQ(p.shape, (Shape{3, 2}));
  ASSERT_TRUE(p.allocate[0]);
  EXPECT_EQ(p.allocate[0]->shape, (Shape{3, 2}));
  EXPECT_FALSE(p.allocate[0]->device);
  EXPECT_FALSE(p.scalarResult);
  std::vector<double> out;
  CallArg o = allocated(*p.allocate[0], out);
  runCall(*f.u, p, {o}, nullptr);
  EXPECT_EQ(out, (std::vector<double>{14, 15, 24, 25, 34, 35}));
}

TEST(UfuncCall, ScalarsAloneGiveAScalarAndPythonIntsMustFit) {
  TestUfunc f("weighted_add", 2);
  f.u->addLoop({t::int8(), t::int8()}, nullptr);
  std::vector<int8_t> a{1, 2};
  CallPlan p = planCall(*f.u, kHost,
                        {CallArg::scalar(t::weakInt(), compiler::ArgValue::integer(3)),
                         CallArg::scalar(t::weakInt(), compiler::ArgValue::integer(4))},
                        {nullptr});
  EXPECT_TRUE(p.scalarResult);
  EXPECT_TRUE(p.allocate[0]->shape.empty());
  // NEP 50: a Python int beside an int8 array takes int8, and must fit it.
  EXPECT_THROW(planCall(*f.u, kHost,
                        {hostArray(a, t::int8(), {2}),
                         CallArg::scalar(t::weakInt(), compiler::ArgValue::integer(300))},
                        {nullptr}),
               std::overflow_error);
}

TEST(UfuncCall, FortranInputsGiveAFortranOutput) {
  TestUfunc f("weighted_add", 2);
  f.u->addLoop({t::float64(), t::float64()}, nullptr);
  std::vector<double> a(6, 1.0);
  CallArg fa = hostArray(a, t::float64(), {2, 3}, {8, 16});
  EXPECT_TRUE(planCall(*f.u, kHost, {fa, fa}, {nullptr}).allocate[0]->fortran);
  CallArg ca = hostArray(a, t::float64(), {2, 3});
  EXPECT_FALSE(planCall(*f.u, kHost, {fa, ca}, {nullptr}).allocate[0]->fortran);
}

TEST(UfuncCall, OutputArraysAreCheckedAndChooseTheLoop) {
  TestUfunc f("weighted_add", 2);
  f.u->addLoop({t::float32(), t::float32()}, nullptr);
  f.u->addLoop({t::float64(), t::float64()}, nullptr);
  f.u->addLoop({t::int64(), t::int64()}, nullptr);
  std::vector<int64_t> a{1, 2, 3}, out(3, 0), wide(4, 0);
  CallArg in = hostArray(a, t::int64(), {3});
  CallArg o = hostArray(out, t::int64(), {3});
  CallPlan p = planCall(*f.u, kHost, {in, in}, {&o});
  EXPECT_EQ(f.u->loop(p.loop).outputs[0], t::int64());
  EXPECT_FALSE(p.allocate[0]);
  runCall(*f.u, p, {o}, nullptr);
  EXPECT_EQ(out, (std::vector<int64_t>{11, 22, 33}));
  CallArg w = hostArray(wide, t::int64(), {4});
  EXPECT_THROW(planCall(*f.u, kHost, {in, in}, {&w}), std::invalid_argument);
  CallArg ro = hostArray(out, t::int64(), {3}, {}, /*writeable=*/false);
  EXPECT_THROW(planCall(*f.u, kHost, {in, in}, {&ro}), std::invalid_argument);
}

TEST(UfuncCall, MemoryOfAnotherBackendIsRefused) {
  TestUfunc f("weighted_add", 2);
  f.u->addLoop({t::float64(), t::float64()}, nullptr);
  std::vector<double> a{1, 2};
  CallArg dev = hostArray(a, t::float64(), {2});
  dev.memory = Memory::Backend;
  dev.memoryBackend = codegen::Backend::CUDA;
  EXPECT_THROW(planCall(*f.u, kHost, {dev, dev}, {nullptr}), TypeMismatch);
  CallArg gpu = hostArray(a, t::float64(), {2});
  gpu.memory = Memory::Gpu;
  EXPECT_THROW(planCall(*f.u, kHost, {gpu, gpu}, {nullptr}), TypeMismatch);
  // Device arrays of the backend in use give device outputs.
  CallArg mine = hostArray(a, t::float64(), {2});
  mine.memory = Memory::Backend;
  mine.memoryBackend = kHost;
  EXPECT_TRUE(planCall(*f.u, kHost, {mine, mine}, {nullptr}).allocate[0]->device);
}

TEST(UfuncCall, GufuncInputsOfAnotherDtypeAreCastOnTheHost) {
  TestUfunc f("row_sum", 1, parseLayout("(n)->()"));
  f.u->addLoop({t::array(t::float64(), 1, ir::Layout::A), t::array(t::float64(), 1, ir::Layout::A)},
               nullptr);
  std::vector<int32_t> x{1, 2, 3, 4, 5, 6};
  CallPlan p = planCall(*f.u, kHost, {hostArray(x, t::int32(), {2, 3})}, {nullptr});
  EXPECT_EQ(p.inputs[0].dtype(), t::float64());
  EXPECT_EQ(p.temporaries.size(), 1u);
  EXPECT_EQ(p.shape, (Shape{2}));
  ASSERT_TRUE(p.allocate[0]);
  EXPECT_EQ(p.allocate[0]->shape, (Shape{2}));
  std::vector<double> out;
  CallArg o = allocated(*p.allocate[0], out);
  runCall(*f.u, p, {o}, nullptr);
  EXPECT_EQ(out, (std::vector<double>{6, 15}));
  // A device array of another dtype cannot be cast on the host.
  CallArg dev = hostArray(x, t::int32(), {2, 3});
  dev.memory = Memory::Backend;
  dev.memoryBackend = kHost;
  EXPECT_THROW(planCall(*f.u, kHost, {dev}, {nullptr}), TypeMismatch);
}

TEST(UfuncCall, GufuncsNarrowInputsWithinAKindAsNumbaCuda) {
  TestUfunc f("row_sum", 1, parseLayout("(n)->()"));
  const ir::Type *f32 = t::array(t::float32(), 1, ir::Layout::A);
  f.u->lazy = false;
  f.u->addLoop({f32, f32}, nullptr);
  std::vector<double> x{1.5, 2, 3, 4, 5, 6};
  CallPlan p = planCall(*f.u, kHost, {hostArray(x, t::float64(), {2, 3})}, {nullptr});
  EXPECT_EQ(p.inputs[0].dtype(), t::float32()); // float64 narrowed to the float32 loop
  ASSERT_TRUE(p.allocate[0]);
  EXPECT_EQ(p.allocate[0]->dtype, t::float32());
  std::vector<int16_t> shorts{1, 2, 3};
  EXPECT_EQ(
      planCall(*f.u, kHost, {hostArray(shorts, t::int16(), {3})}, {nullptr}).inputs[0].dtype(),
      t::float32()); // a safe cast, as before
  // Kind changes are refused: int32 to float32 (numba-cuda too), complex to float.
  std::vector<int32_t> ints{1, 2, 3};
  std::vector<std::complex<double>> c(3);
  for (CallArg a : {hostArray(ints, t::int32(), {3}), hostArray(c, t::complex128(), {3})}) {
    try {
      planCall(*f.u, kHost, {a}, {nullptr});
      FAIL() << "no error";
    } catch (const TypeMismatch &e) {
      EXPECT_NE(std::string(e.what()).find("with safe casting or narrowing within a kind"),
                std::string::npos);
    }
  }
}

TEST(UfuncCall, GufuncSignaturesNameNoReturnType) {
  TestUfunc f("row_sum", 1, parseLayout("(n)->()"));
  const ir::Type *f64 = t::array(t::float64(), 1, ir::Layout::A);
  try {
    f.u->addLoop({f64, f64}, t::int32());
    FAIL() << "no error";
  } catch (const TypeMismatch &e) {
    EXPECT_STREQ(e.what(), "guvectorized functions cannot return values: signature "
                           "int32(array(float64, 1d, A), array(float64, 1d, A)) specifies int32 "
                           "return type");
  }
  EXPECT_EQ(f.u->loopCount(), 0u);
  f.u->addLoop({f64, f64}, t::void_());
  EXPECT_EQ(f.u->loopCount(), 1u);
}

TEST(UfuncCall, ReductionsFoldLeftToRightOnOneThread) {
  TestUfunc f("weighted_add", 2);
  f.u->addLoop({t::float64(), t::float64()}, nullptr);
  std::vector<double> a{1, 2, 3, 4, 5, 6};
  CallArg in = hostArray(a, t::float64(), {2, 3});
  ReducePlan p = planReduce(*f.u, kHost, in, std::vector<int64_t>{-1}, false, nullptr, -1);
  EXPECT_EQ(p.axes, (std::vector<int>{1}));
  EXPECT_EQ(p.resultShape, (Shape{2}));
  std::vector<double> out;
  CallArg o = allocated(*p.allocate, out);
  runReduce(*f.u, p, o, nullptr);
  EXPECT_EQ(out, (std::vector<double>{123, 456}));
  ReducePlan kept = planReduce(*f.u, kHost, in, std::vector<int64_t>{0}, true, nullptr, -1);
  EXPECT_EQ(kept.resultShape, (Shape{1, 3}));
  EXPECT_EQ(kept.keptShape, (Shape{3}));
  ReducePlan all = planReduce(*f.u, kHost, in, std::nullopt, false, nullptr, -1);
  EXPECT_TRUE(all.scalarResult);
  EXPECT_THROW(planReduce(*f.u, kHost, in, std::vector<int64_t>{2}, false, nullptr, -1), AxisError);
  EXPECT_THROW(planReduce(*f.u, kHost, in, std::vector<int64_t>{0, -2}, false, nullptr, -1),
               std::invalid_argument);
  EXPECT_THROW(planReduce(*f.u, kHost,
                          CallArg::scalar(t::float64(), compiler::ArgValue::floating(1)),
                          std::nullopt, false, nullptr, -1),
               TypeMismatch);
}

TEST(UfuncCall, EmptyReductionsTakeTheIdentity) {
  TestUfunc f("weighted_add", 2);
  f.u->addLoop({t::float64(), t::float64()}, nullptr);
  std::vector<double> none;
  CallArg in = hostArray(none, t::float64(), {2, 0});
  ReducePlan p = planReduce(*f.u, kHost, in, std::vector<int64_t>{1}, false, nullptr, -1);
  std::vector<double> out;
  CallArg o = allocated(*p.allocate, out);
  EXPECT_THROW(runReduce(*f.u, p, o, nullptr), std::invalid_argument); // no identity
  f.u->identity = compiler::ArgValue::integer(7);
  runReduce(*f.u, p, o, nullptr);
  EXPECT_EQ(out, (std::vector<double>{7, 7}));
}

} // namespace
} // namespace ptxjit::ufunc
