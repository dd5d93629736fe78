// The ufunc loop kernels (codegen/UfuncKernels.h) around hand-built typed device functions:
// host kernels run through the JIT, CUDA kernels are checked by ptxas.
#include "codegen/UfuncKernels.h"

#include "ir/IRParser.h"
#include "ir/Verify.h"
#include "tests/cpp/common/Ptxas.h"
#include "tests/cpp/common/TestPacking.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace ptxjit;
using namespace ptxjit::codegen;
namespace types = ptxjit::ir::types;

namespace {

/// The host entry ABI (ThreadCtx: tid, ntid, ctaid, nctaid, each x/y/z).
struct ThreadCtx {
  uint32_t tid[3], ntid[3], ctaid[3], nctaid[3];
};
using Entry = void (*)(void **, const ThreadCtx *);

CompileOptions hostOpts() {
  CompileOptions o;
  o.backend = Backend::Host;
  return o;
}

CompileOptions cudaOpts() {
  CompileOptions o;
  o.backend = Backend::CUDA;
  o.ccMajor = 9;
  o.ccMinor = 0;
  o.ptxVersion = choosePtxVersion(9, 0, 0);
  return o;
}

/// Typed IR written as text (ir/IRParser.h), verified.
std::unique_ptr<ir::Function> typedFunction(const std::string &text) {
  std::unique_ptr<ir::Function> fn = ir::parseFunction(text);
  fn->filename = "kernels.py";
  ir::verify(*fn);
  return fn;
}

/// f(x, y) = x * 10 + y over `t`.
std::unique_ptr<ir::Function> makeCombine(const ir::ScalarType *t) {
  std::string T = t->str(), ten = t->kind() == ir::TypeKind::Int ? "10" : "10.0";
  return typedFunction("function combine(x: " + T + ", y: " + T + ") device -> " + T + R"(
  var x : )" + T + R"(
  var y : )" + T + R"(
bb0:
  %0 = LoadLocal x : )" +
                       T + R"(
  %1 = Const )" + ten + " : " +
                       T + R"(
  %2 = BinOp * %0, %1 : )" +
                       T + R"(
  %3 = LoadLocal y : )" +
                       T + R"(
  %4 = BinOp + %2, %3 : )" +
                       T + R"(
  Return %4
)");
}

/// f(x, y) = x + y over `t`.
std::unique_ptr<ir::Function> makeAdd(const ir::ScalarType *t) {
  std::string T = t->str();
  return typedFunction("function add(x: " + T + ", y: " + T + ") device -> " + T + R"(
  var x : )" + T + R"(
  var y : )" + T + R"(
bb0:
  %0 = LoadLocal x : )" +
                       T + R"(
  %1 = LoadLocal y : )" +
                       T + R"(
  %2 = BinOp + %0, %1 : )" +
                       T + R"(
  Return %2
)");
}

Entry hostEntry(LoweredModule m) {
  return reinterpret_cast<Entry>(addToHostJIT(std::move(m), hostOpts()));
}

LoopKernelDesc elementwise(const ElementwiseKernelDesc &d) {
  LoopKernelDesc k;
  k.elementwise = d;
  return k;
}

LoopKernelDesc reduction(const ReduceKernelDesc &d) {
  LoopKernelDesc k;
  k.kind = LoopKernelDesc::Kind::Reduce;
  k.reduce = d;
  return k;
}

/// The packed arguments of loop `desc` around `fn`, laid out by the kernel ABI.
testutil::Packed packLoop(const ir::Function &fn, const LoopKernelDesc &desc,
                          const std::vector<testutil::TestLeaf> &leaves) {
  return testutil::Packed(buildPackingPlan(loopKernelParams(desc, fn.argTypes)), leaves);
}

void runChunks(Entry e, std::vector<void *> &params, unsigned chunks) {
  for (unsigned b = 0; b < chunks; ++b) {
    ThreadCtx ctx{{0, 0, 0}, {1, 1, 1}, {b, 0, 0}, {chunks, 1, 1}};
    e(params.data(), &ctx);
  }
}

} // namespace

using testutil::arrayLeaf;
using testutil::scalarLeaf;
using testutil::stridedLeaf;

TEST(UfuncKernel, FlatLoopWithScalarOperandOnHost) {
  auto fn = makeCombine(types::float64());
  ElementwiseKernelDesc d;
  d.operands = {{LoopOperand::Kind::Array, types::float32(), 0},
                {LoopOperand::Kind::Scalar, nullptr, 0},
                {LoopOperand::Kind::Array, types::float64(), 0}};
  // A flat loop takes n, then each array as its data pointer alone.
  EXPECT_EQ(buildPackingPlan(loopKernelParams(elementwise(d), fn->argTypes)).str(),
            "int64@0 <- leaf0; ptr@8 <- leaf1.data; float64@16 <- leaf2; ptr@24 <- leaf3.data");
  auto e = hostEntry(lowerLoopKernel(*fn, elementwise(d), hostOpts(), "flat_loop"));
  std::vector<float> x{1, 2, 3, 4, 5};
  std::vector<double> out(5, -1);
  auto p = packLoop(*fn, elementwise(d),
                    {scalarLeaf(5), stridedLeaf(x.data(), {}, {}), scalarLeaf(0.5),
                     stridedLeaf(out.data(), {}, {})});
  runChunks(e, p.params, 3); // chunks of 2, 2, 1
  for (int i = 0; i < 5; ++i)
    EXPECT_DOUBLE_EQ(out[i], x[i] * 10 + 0.5);
}

TEST(UfuncKernel, StridedLoopBroadcastsWithZeroStrides) {
  auto fn = makeCombine(types::int64());
  ElementwiseKernelDesc d;
  d.flat = false;
  d.loopDims = 2;
  d.operands = {{LoopOperand::Kind::Array, types::int32(), 0},
                {LoopOperand::Kind::Array, types::int64(), 0},
                {LoopOperand::Kind::Array, types::int64(), 0}};
  auto e = hostEntry(lowerLoopKernel(*fn, elementwise(d), hostOpts(), "strided_loop"));
  // x: column (3, 1) broadcast along 4 columns; y: row (4,) broadcast along 3 rows, strided by 2.
  std::vector<int32_t> x{1, 2, 3};
  std::vector<int64_t> y{1, 0, 2, 0, 3, 0, 4, 0};
  std::vector<int64_t> out(12, -1);
  auto p = packLoop(*fn, elementwise(d),
                    {scalarLeaf(12), stridedLeaf(x.data(), {3, 4}, {4, 0}),
                     stridedLeaf(y.data(), {3, 4}, {0, 16}), arrayLeaf(out.data(), {3, 4}, 8)});
  runChunks(e, p.params, 1);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      EXPECT_EQ(out[i * 4 + j], x[i] * 10 + y[2 * j]) << i << "," << j;
}

TEST(UfuncKernel, ReduceFoldsLeftToRightOnHost) {
  // combine is not commutative: the host reduction must fold in order.
  auto fn = makeCombine(types::int64());
  ReduceKernelDesc d;
  d.inType = types::int32();
  d.accType = types::int64();
  d.outType = types::int64();
  d.keptDims = 1;
  d.reducedDims = 1;
  d.blockSize = 1;
  auto e = hostEntry(lowerLoopKernel(*fn, reduction(d), hostOpts(), "reduce_loop"));
  // in: 2 x 3, reduce axis 1.
  std::vector<int32_t> in{1, 2, 3, 4, 5, 6};
  std::vector<int64_t> out(2, -1);
  auto p = packLoop(*fn, reduction(d),
                    {scalarLeaf(2), scalarLeaf(3), scalarLeaf(1), arrayLeaf(in.data(), {2, 3}, 4),
                     arrayLeaf(out.data(), {2}, 8), scalarLeaf(0)});
  runChunks(e, p.params, 2);
  EXPECT_EQ(out[0], 123);
  EXPECT_EQ(out[1], 456);
}

TEST(UfuncKernel, CudaLoopsPassPtxas) {
  auto fn = makeAdd(types::float32());
  ElementwiseKernelDesc flat;
  flat.operands = {{LoopOperand::Kind::Array, types::float32(), 0},
                   {LoopOperand::Kind::Scalar, nullptr, 0},
                   {LoopOperand::Kind::Array, types::float32(), 0}};
  LoweredModule m = lowerLoopKernel(*fn, elementwise(flat), cudaOpts(), "ufunc_flat");
  std::string ptx = emitPTX(m, cudaOpts());
  EXPECT_NE(ptx.find(".entry ufunc_flat"), std::string::npos);
  EXPECT_TRUE(testutil::ptxasAccepts(ptx));

  ElementwiseKernelDesc strided = flat;
  strided.flat = false;
  strided.loopDims = 3;
  LoweredModule m2 = lowerLoopKernel(*fn, elementwise(strided), cudaOpts(), "ufunc_strided");
  EXPECT_TRUE(testutil::ptxasAccepts(emitPTX(m2, cudaOpts())));

  for (const ir::ScalarType *acc : {types::float32(), types::float64()}) {
    auto add = makeAdd(acc);
    ReduceKernelDesc r;
    r.inType = types::float32();
    r.accType = acc;
    r.outType = acc;
    r.keptDims = 1;
    r.reducedDims = 2;
    r.blockSize = 128;
    LoweredModule m3 = lowerLoopKernel(*add, reduction(r), cudaOpts(), "ufunc_reduce");
    std::string rptx = emitPTX(m3, cudaOpts());
    EXPECT_NE(rptx.find("bar.sync"), std::string::npos);
    EXPECT_NE(rptx.find(".shared"), std::string::npos);
    EXPECT_TRUE(testutil::ptxasAccepts(rptx));
  }
}

TEST(UfuncKernel, CudaFlatLoopsLoadFourElementsBeforeStoring) {
  // a + b over contiguous float32 arrays: the main loop of the grid-stride loop loads four
  // elements of each input before its first store (lowerElementwise's kFlatUnroll), then a
  // loop of single elements takes the rest.
  auto fn = makeAdd(types::float32());
  ElementwiseKernelDesc flat;
  flat.operands = {{LoopOperand::Kind::Array, types::float32(), 0},
                   {LoopOperand::Kind::Array, types::float32(), 0},
                   {LoopOperand::Kind::Array, types::float32(), 0}};
  LoweredModule m = lowerLoopKernel(*fn, elementwise(flat), cudaOpts(), "add_flat");
  std::string ptx = emitPTX(m, cudaOpts());
  EXPECT_TRUE(testutil::ptxasAccepts(ptx));
  auto count = [&](const std::string &what, size_t from, size_t to) {
    size_t n = 0;
    for (size_t at = ptx.find(what, from); at < to; at = ptx.find(what, at + 1))
      ++n;
    return n;
  };
  size_t firstStore = ptx.find("st.global.f32");
  ASSERT_NE(firstStore, std::string::npos);
  EXPECT_EQ(count("ld.global.f32", 0, firstStore), 8u) << ptx;
  EXPECT_EQ(count("st.global.f32", 0, ptx.size()), 5u) << ptx; // 4 in the main loop, 1 after
  EXPECT_EQ(count("ld.global.f32", 0, ptx.size()), 10u) << ptx;
}

TEST(UfuncKernel, CudaReductionsFoldEightElementsPerTrip) {
  // A float32 add reduction: each thread's first element starts its accumulator, then the main
  // loop loads eight elements before folding any (lowerReduce's kReduceUnroll), then a loop of
  // single elements takes the rest: 1 + 8 + 1 loads.
  auto add = makeAdd(types::float32());
  ReduceKernelDesc r;
  r.inType = r.accType = r.outType = types::float32();
  r.keptDims = 0;
  r.reducedDims = 1;
  LoweredModule m = lowerLoopKernel(*add, reduction(r), cudaOpts(), "sum_f32");
  std::string ptx = emitPTX(m, cudaOpts());
  EXPECT_TRUE(testutil::ptxasAccepts(ptx));
  auto count = [&](const std::string &what) {
    size_t n = 0;
    for (size_t at = ptx.find(what); at != std::string::npos; at = ptx.find(what, at + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(count("ld.global.f32"), 10u) << ptx;
  // Eight loads in a row: the main loop's, before its first add.
  size_t run = ptx.find("ld.global.f32");
  run = ptx.find("ld.global.f32", run + 1);
  size_t firstAdd = ptx.find("add.f32", run);
  size_t loadsBefore = 0;
  for (size_t at = run; at < firstAdd; at = ptx.find("ld.global.f32", at + 1))
    ++loadsBefore;
  EXPECT_EQ(loadsBefore, 8u) << ptx;
}

TEST(UfuncKernel, MismatchedOperandsAreInternalErrors) {
  auto fn = makeAdd(types::float64());
  ElementwiseKernelDesc d;
  d.operands = {{LoopOperand::Kind::Array, types::float64(), 0}};
  EXPECT_THROW(lowerLoopKernel(*fn, elementwise(d), hostOpts(), "bad"), ir::CompileError);
  ReduceKernelDesc r;
  r.inType = types::float32();
  r.accType = types::float32(); // the function takes float64
  r.outType = types::float32();
  EXPECT_THROW(lowerLoopKernel(*fn, reduction(r), hostOpts(), "bad_reduce"), ir::CompileError);
}

TEST(UfuncKernel, DescriptorsAreKeys) {
  ElementwiseKernelDesc a;
  a.operands = {{LoopOperand::Kind::Array, types::float32(), 0},
                {LoopOperand::Kind::Array, types::float32(), 0}};
  ElementwiseKernelDesc b = a;
  EXPECT_EQ(elementwise(a), elementwise(b));
  EXPECT_EQ(elementwise(a).hash(), elementwise(b).hash());
  b.operands[0].elemType = types::float64();
  EXPECT_NE(elementwise(a), elementwise(b));
  EXPECT_EQ(elementwise(a).str(), "elementwise flat value (array float32, array float32)");
  ElementwiseKernelDesc core;
  core.flat = false;
  core.loopDims = 1;
  core.returnsValue = false;
  core.operands = {{LoopOperand::Kind::Array, types::float32(), 1}};
  ElementwiseKernelDesc unit = core;
  unit.operands[0].unitCoreStride = true;
  EXPECT_NE(elementwise(core), elementwise(unit));
  EXPECT_NE(elementwise(core).hash(), elementwise(unit).hash());
  EXPECT_EQ(elementwise(unit).str(), "elementwise dims 1 void (array float32 core 1 unit)");
  ElementwiseKernelDesc aligned = unit;
  aligned.operands[0].coreAlign = 16;
  EXPECT_NE(elementwise(unit), elementwise(aligned));
  EXPECT_NE(elementwise(unit).hash(), elementwise(aligned).hash());
  EXPECT_EQ(elementwise(aligned).str(),
            "elementwise dims 1 void (array float32 core 1 unit align 16)");
  ReduceKernelDesc r;
  r.inType = r.accType = r.outType = types::int32();
  r.keptDims = 1;
  r.reducedDims = 2;
  EXPECT_EQ(reduction(r).str(), "reduce int32 -> int32 -> int32 kept 1 reduced 2 block 256");
}
