// Golden checks (tests/fixtures/codegen/*.check) of lowered LLVM IR and emitted PTX, and PTX
// validation with ptxas.
#include "Kernels.h"
#include "TestUtil.h"
#include "tests/cpp/common/NeedsLibdevice.h"

#include "codegen/Codegen.h"

namespace ptxjit::codegen::test {
namespace {

CompileOptions cudaOpts() { return CompileOptions{}; }

CompileOptions hostOpts() {
  CompileOptions o;
  o.backend = Backend::Host;
  return o;
}

TEST(Golden, SaxpyCudaIR) {
  auto fn = makeSaxpy();
  LoweredModule m = lowerKernel(*fn, cudaOpts(), "saxpy");
  EXPECT_EQ(m.entrySymbol(), "saxpy");
  EXPECT_EQ(m.backend(), Backend::CUDA);
  EXPECT_TRUE(matchesGolden(m.llvmIR(), "saxpy.cuda.ll.check"));
}

TEST(Golden, SaxpyHostIR) {
  auto fn = makeSaxpy();
  LoweredModule m = lowerKernel(*fn, hostOpts(), "saxpy");
  EXPECT_EQ(m.backend(), Backend::Host);
  EXPECT_TRUE(matchesGolden(m.llvmIR(), "saxpy.host.ll.check"));
}

TEST(Golden, SaxpyPTX) {
  auto fn = makeSaxpy();
  CompileOptions o = cudaOpts();
  LoweredModule m = lowerKernel(*fn, o, "saxpy");
  std::string ptx = emitPTX(m, o);
  EXPECT_TRUE(matchesGolden(ptx, "saxpy.ptx.check"));
  EXPECT_FALSE(m.linkedLibdevice());
  if (!havePtxas())
    GTEST_SKIP() << "ptxas not found";
  EXPECT_TRUE(ptxasAccepts(ptx));
}

TEST(Golden, IntegerDivisionHasNoUndefinedBehaviour) {
  auto i64 = types::int64();
  TypedBuilder b("intops", {"a", "b", "out"}, {arr(i64), arr(i64), arr(i64)});
  b.declare("i", i64);
  b.store("i", b.grid(1));
  Instr *x = b.item(b.load("a"), b.load("i"), i64);
  Instr *y = b.item(b.load("b"), b.load("i"), i64);
  Instr *v = b.bin(BinaryOp::Add, b.bin(BinaryOp::FloorDiv, x, y, i64),
                   b.bin(BinaryOp::Mul, b.bin(BinaryOp::Mod, x, y, i64), x, i64), i64);
  b.setItem(b.load("out"), b.load("i"), v);
  b.ret();
  LoweredModule m = lowerKernel(*b.fn, cudaOpts(), "intops");
  std::string ir = m.llvmIR();
  EXPECT_TRUE(matchesGolden(ir, "intops.ll.check"));
  EXPECT_EQ(ir.find(" nsw "), std::string::npos);
  EXPECT_EQ(ir.find(" nuw "), std::string::npos);
  std::string ptx = emitPTX(m, cudaOpts());
  if (!havePtxas())
    GTEST_SKIP() << "ptxas not found";
  EXPECT_TRUE(ptxasAccepts(ptx));
}

TEST(Golden, DeviceFunctionPTX) {
  // def axpb(a, x, n): return a * x + n     (float64, float64, int32) -> float64
  auto f64 = types::float64();
  TypedBuilder b("axpb", {"a", "x", "n"}, {f64, f64, types::int32()}, FunctionKind::Device, f64);
  b.ret(
      b.bin(BinaryOp::Add, b.bin(BinaryOp::Mul, b.load("a"), b.load("x"), f64), b.load("n"), f64));
  CompileOptions o = cudaOpts();
  LoweredModule m = lowerDeviceFunction(*b.fn, o, "axpb");
  EXPECT_EQ(m.entrySymbol(), "axpb");
  EXPECT_EQ(m.llvmIR().find("nvvm.annotations"), std::string::npos);
  std::string ptx = emitPTX(m, o);
  EXPECT_TRUE(matchesGolden(ptx, "devfn.ptx.check"));
  if (!havePtxas())
    GTEST_SKIP() << "ptxas not found";
  EXPECT_TRUE(ptxasAccepts(ptx));
}

/// A kernel exercising most constructs, for ptxas: 2-d indexing, loops, tuples, device
/// calls, conversions, thread indices, min/max/abs, pow, floor division of floats.
std::unique_ptr<Function> makeKitchenSink(std::unique_ptr<Function> &helper) {
  auto i64 = types::int64(), f32 = types::float32(), f64 = types::float64(), i32 = types::int32();
  TypedBuilder h("clampf", {"v", "lo", "hi"}, {f32, f32, f32}, FunctionKind::Device, f32);
  h.ret(h.builtin("builtins.min",
                  {h.builtin("builtins.max", {h.load("v"), h.load("lo")}, f32), h.load("hi")},
                  f32));
  TypedBuilder b("sink", {"a", "out", "n"}, {arr(f32, 2, Layout::A), arr(f64, 2), i32});
  const Type *pair = types::tuple({i64, i64});
  b.declare("ij", pair);
  b.declare("acc", f64);
  b.declare("k", i64);
  b.store("ij", b.grid(2));
  b.store("acc", b.cint(0));
  b.forRange("k", {b.load("n"), b.cint(-1), b.cint(-2)}, [&] {
    Instr *v = b.item(b.load("a"), b.load("ij"), f32);
    Instr *c = b.callDevice(h.fn.get(), {v, b.cfloat(-1.0), b.cfloat(1.0)});
    Instr *p = b.bin(BinaryOp::Pow, c, b.load("k"), f32);
    Instr *fd = b.bin(BinaryOp::FloorDiv, p, b.cfloat(0.25), f32);
    b.store("acc", b.bin(BinaryOp::Add, b.load("acc"), fd, f64));
  });
  Instr *t = b.bin(BinaryOp::Mod, b.threadAttr("threadIdx", "y"), b.cint(3), i32);
  b.store("acc", b.bin(BinaryOp::Sub, b.load("acc"), b.builtin("builtins.abs", {t}, i32), f64));
  b.setItem(b.load("out"), b.load("ij"), b.load("acc"));
  b.ret();
  helper = std::move(h.fn);
  return std::move(b.fn);
}

TEST(Golden, KitchenSinkPTXAssembles) {
  PTXJIT_SKIP_WITHOUT_LIBDEVICE();
  std::unique_ptr<Function> helper;
  auto fn = makeKitchenSink(helper);
  for (int opt : {0, 3}) {
    for (bool fast : {false, true}) {
      CompileOptions o = cudaOpts();
      o.optLevel = opt;
      o.fastmath = fast;
      LoweredModule m = lowerKernel(*fn, o, "sink");
      std::string ptx = emitPTX(m, o);
      EXPECT_NE(ptx.find(".visible .entry sink("), std::string::npos);
      EXPECT_TRUE(m.linkedLibdevice()); // float floor division calls __nv_fmodf
      if (havePtxas()) {
        EXPECT_TRUE(ptxasAccepts(ptx)) << "O" << opt << (fast ? " fastmath" : "");
      }
    }
  }
}

TEST(Golden, PtxVersionAndArchitectureFollowOptions) {
  auto fn = makeSaxpy();
  CompileOptions o = cudaOpts();
  o.ccMajor = 7;
  o.ccMinor = 5;
  o.ptxVersion = 78;
  LoweredModule m = lowerKernel(*fn, o, "saxpy");
  std::string ptx = emitPTX(m, o);
  EXPECT_NE(ptx.find(".version 7.8"), std::string::npos);
  EXPECT_NE(ptx.find(".target sm_75"), std::string::npos);
  if (havePtxas()) {
    EXPECT_TRUE(ptxasAccepts(ptx, "sm_75"));
  }
  // A compute capability newer than LLVM 19 knows is compiled for sm_90 (the driver JITs it).
  CompileOptions n = cudaOpts();
  n.ccMajor = 12;
  n.ccMinor = 0;
  n.ptxVersion = 85;
  LoweredModule m2 = lowerKernel(*fn, n, "saxpy");
  std::string ptx2 = emitPTX(m2, n);
  EXPECT_NE(ptx2.find(".version 8.5"), std::string::npos);
  EXPECT_NE(ptx2.find(".target sm_90"), std::string::npos);
}

TEST(Golden, ParameterKindsAndAggregateReturnsAssemble) {
  // Kernel parameters of every kind: bool (i8), complex (two floats), a tuple (flattened),
  // a 3-d F array (data + 3 shapes + 3 strides), uint8; and device functions returning a
  // tuple and a bool, called without inlining at O0.
  auto i64 = types::int64(), f64 = types::float64(), i32 = types::int32();
  const Type *pair = types::tuple({i64, f64});
  TypedBuilder mk("mkpair", {"a", "b"}, {i64, f64}, FunctionKind::Device, pair);
  mk.ret(mk.tuple({mk.load("a"), mk.load("b")}));
  TypedBuilder pos("positive", {"x"}, {f64}, FunctionKind::Device, types::boolean());
  pos.ret(pos.cmp(CmpOp::Gt, pos.load("x"), pos.cfloat(0.0)));
  TypedBuilder b("kinds", {"flag", "z", "t", "a", "u"},
                 {types::boolean(), types::complex64(), types::tuple({i32, f64}),
                  arr(f64, 3, Layout::F), types::uint8()});
  Instr *p = b.callDevice(mk.fn.get(), {b.load("u"), b.tupleGet(b.load("t"), 1)});
  Instr *v =
      b.bin(BinaryOp::Add, b.tupleGet(p, 1), b.attr(b.load("z"), "real", types::float32()), f64);
  b.ifThen(b.load("flag"), [&] {
    b.ifThen(b.callDevice(pos.fn.get(), {v}), [&] {
      Instr *idx = b.tuple({b.tupleGet(b.load("t"), 0), b.cint(0), b.cint(-1)});
      b.setItem(b.load("a"), idx, v);
    });
  });
  b.ret();
  for (int opt : {0, 3}) {
    CompileOptions o = cudaOpts();
    o.optLevel = opt;
    LoweredModule m = lowerKernel(*b.fn, o, "kinds");
    std::string ptx = emitPTX(m, o);
    // 1 (flag) + 2 (z) + 2 (t) + 7 (a) + 1 (u) flattened parameters.
    EXPECT_NE(ptx.find("kinds_param_12"), std::string::npos) << ptx;
    EXPECT_EQ(ptx.find("kinds_param_13"), std::string::npos) << ptx;
    EXPECT_NE(ptx.find(".param .u8 kinds_param_0"), std::string::npos) << ptx;
    if (havePtxas()) {
      EXPECT_TRUE(ptxasAccepts(ptx)) << "O" << opt;
    }
  }
  for (Function *dev : {mk.fn.get(), pos.fn.get()}) {
    CompileOptions o = cudaOpts();
    LoweredModule m = lowerDeviceFunction(*dev, o, dev->name);
    std::string ptx = emitPTX(m, o);
    EXPECT_NE(ptx.find(".visible .func"), std::string::npos);
    if (havePtxas()) {
      EXPECT_TRUE(ptxasAccepts(ptx)) << dev->name;
    }
  }
}

} // namespace
} // namespace ptxjit::codegen::test
