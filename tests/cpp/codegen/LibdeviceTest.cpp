// libdevice is linked only when a module references an __nv_* function, and math lowers to
// libdevice on CUDA and to libm/intrinsics on the host.
#include "HostRun.h"
#include "Kernels.h"
#include "TestUtil.h"
#include "tests/cpp/common/NeedsLibdevice.h"

#include "codegen/Codegen.h"

#include <cmath>
#include <cstdlib>
#include <regex>

namespace ptxjit::codegen::test {
namespace {

/// out[i] = x[i] ** y[i]  (float ** float → pow)
std::unique_ptr<Function> makePow(const ScalarType *dt) {
  return makeElementwise(BinaryOp::Pow, dt, dt, dt, dt);
}

TEST(Libdevice, NotLinkedWithoutMath) {
  auto fn = makeSaxpy();
  CompileOptions o;
  LoweredModule m = lowerKernel(*fn, o, "saxpy");
  EXPECT_EQ(m.llvmIR().find("__nv_"), std::string::npos);
  std::string ptx = emitPTX(m, o);
  EXPECT_FALSE(m.linkedLibdevice());
  EXPECT_EQ(m.llvmIR().find("__nv_"), std::string::npos);
  EXPECT_EQ(ptx.find("__nv_"), std::string::npos);
  // Integer arithmetic (even // and %) needs no libdevice either.
  auto i64 = types::int64();
  auto ints = makeElementwise(BinaryOp::FloorDiv, i64, i64, i64, i64);
  LoweredModule mi = lowerKernel(*ints, o, "ints");
  emitPTX(mi, o);
  EXPECT_FALSE(mi.linkedLibdevice());
}

TEST(Libdevice, LinkedForPowAndResolved) {
  PTXJIT_SKIP_WITHOUT_LIBDEVICE();
  for (const ScalarType *dt : {types::float32(), types::float64()}) {
    auto fn = makePow(dt);
    CompileOptions o;
    LoweredModule m = lowerKernel(*fn, o, "powk");
    std::string ir = m.llvmIR();
    const char *name = dt == types::float32() ? "@__nv_powf(" : "@__nv_pow(";
    EXPECT_NE(
        ir.find(std::string("declare ") + (dt == types::float32() ? "float " : "double ") + name),
        std::string::npos)
        << ir;
    std::string ptx = emitPTX(m, o);
    EXPECT_TRUE(m.linkedLibdevice());
    // Linked, internalized and inlined: nothing external is left to resolve.
    EXPECT_EQ(ptx.find(".extern"), std::string::npos) << ptx;
    EXPECT_EQ(ptx.find("__nvvm_reflect"), std::string::npos);
    EXPECT_NE(ptx.find(".visible .entry powk("), std::string::npos);
    // Only the kernel stays visible.
    EXPECT_EQ(ptx.find(".visible .func"), std::string::npos) << ptx;
    if (havePtxas()) {
      EXPECT_TRUE(ptxasAccepts(ptx));
    }
  }
}

// A compile links the part of libdevice its calls need, made once per process for each set of
// functions: a module needing a set already made gets the same PTX as the one that made it,
// whatever other sets were made in between.
TEST(Libdevice, PartsAreMadeOncePerSetOfFunctions) {
  PTXJIT_SKIP_WITHOUT_LIBDEVICE();
  auto ptxOf = [](const ScalarType *dt, const std::string &name) {
    auto fn = makePow(dt);
    CompileOptions o;
    LoweredModule m = lowerKernel(*fn, o, name);
    std::string ptx = emitPTX(m, o);
    EXPECT_TRUE(m.linkedLibdevice());
    EXPECT_EQ(ptx.find(".extern"), std::string::npos) << ptx;
    // "// callseq N" comments number call sites across the process (a counter in the pooled
    // target machines): not code.
    return std::regex_replace(ptx, std::regex("callseq [0-9]+"), "callseq N");
  };
  std::string first = ptxOf(types::float64(), "partk");
  std::string other = ptxOf(types::float32(), "partk"); // __nv_powf: another part
  EXPECT_NE(first, other);
  EXPECT_EQ(ptxOf(types::float64(), "partk"), first);
  EXPECT_EQ(ptxOf(types::float32(), "partk"), other);
  if (havePtxas()) {
    EXPECT_TRUE(ptxasAccepts(first));
    EXPECT_TRUE(ptxasAccepts(other));
  }
}

TEST(Libdevice, ReflectResolvedAtO0) {
  PTXJIT_SKIP_WITHOUT_LIBDEVICE();
  auto fn = makePow(types::float32());
  CompileOptions o;
  o.optLevel = 0;
  LoweredModule m = lowerKernel(*fn, o, "pow0");
  std::string ptx = emitPTX(m, o);
  EXPECT_TRUE(m.linkedLibdevice());
  EXPECT_EQ(ptx.find("__nvvm_reflect"), std::string::npos);
  if (havePtxas()) {
    EXPECT_TRUE(ptxasAccepts(ptx));
  }
}

TEST(Libdevice, FastmathSelectsFlushToZero) {
  PTXJIT_SKIP_WITHOUT_LIBDEVICE();
  auto fn = makePow(types::float32());
  CompileOptions o;
  LoweredModule precise = lowerKernel(*fn, o, "powp");
  std::string ptxPrecise = emitPTX(precise, o);
  o.fastmath = true;
  LoweredModule fast = lowerKernel(*fn, o, "powf");
  std::string ptxFast = emitPTX(fast, o);
  EXPECT_NE(fast.llvmIR().find("\"nvvm-reflect-ftz\", i32 1"), std::string::npos);
  EXPECT_NE(precise.llvmIR().find("\"nvvm-reflect-ftz\", i32 0"), std::string::npos);
  auto count = [](const std::string &s, const std::string &what) {
    size_t n = 0;
    for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1))
      ++n;
    return n;
  };
  // With fastmath, float32 pow is libdevice's __nv_fast_powf (lg2.approx / ex2.approx, flushed
  // to zero); the precise powf computes the logarithm in software, without flushing.
  EXPECT_GT(count(ptxFast, "lg2.approx.ftz.f32"), 0u);
  EXPECT_EQ(count(ptxPrecise, "lg2.approx"), 0u);
  EXPECT_EQ(count(ptxPrecise, "abs.ftz.f32"), 0u);
  EXPECT_GT(count(ptxFast, ".ftz."), count(ptxPrecise, ".ftz."));
  if (havePtxas()) {
    EXPECT_TRUE(ptxasAccepts(ptxFast));
  }
}

TEST(Libdevice, FloatIntPowerUsesPowiOnCuda) {
  PTXJIT_SKIP_WITHOUT_LIBDEVICE();
  // float64 ** int64 (run-time exponent): __nv_powi when it fits in i32, __nv_pow otherwise;
  // the NVPTX backend cannot select llvm.powi.
  auto f64 = types::float64(), i64 = types::int64();
  auto fn = makeElementwise(BinaryOp::Pow, f64, i64, f64, f64);
  CompileOptions o;
  LoweredModule m = lowerKernel(*fn, o, "powi");
  std::string ir = m.llvmIR();
  EXPECT_NE(ir.find("@__nv_powi("), std::string::npos);
  EXPECT_EQ(ir.find("llvm.powi"), std::string::npos);
  std::string ptx = emitPTX(m, o);
  if (havePtxas()) {
    EXPECT_TRUE(ptxasAccepts(ptx));
  }
}

TEST(Libdevice, MissingLibdeviceIsACompileError) {
  const char *old = std::getenv("PTXJIT_LIBDEVICE");
  std::string saved = old ? old : "";
  setenv("PTXJIT_LIBDEVICE", "/nonexistent/libdevice.10.bc", 1);
  auto fn = makePow(types::float64());
  CompileOptions o;
  LoweredModule m = lowerKernel(*fn, o, "powmissing");
  try {
    emitPTX(m, o);
    ADD_FAILURE() << "emitPTX succeeded without libdevice";
  } catch (const ir::CompileError &e) {
    EXPECT_EQ(e.kind(), ir::DiagKind::Internal);
    EXPECT_NE(e.message().find("/nonexistent/libdevice.10.bc"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("PTXJIT_LIBDEVICE"), std::string::npos) << e.what();
  }
  if (old)
    setenv("PTXJIT_LIBDEVICE", saved.c_str(), 1);
  else
    unsetenv("PTXJIT_LIBDEVICE");
  // With the path restored, the same kernel compiles (where there is a libdevice).
  PTXJIT_SKIP_WITHOUT_LIBDEVICE();
  LoweredModule again = lowerKernel(*fn, o, "powagain");
  EXPECT_NO_THROW(emitPTX(again, o));
  EXPECT_TRUE(again.linkedLibdevice());
}

TEST(Libdevice, HostUsesLibm) {
  auto f64 = types::float64();
  auto fn = makePow(f64);
  CompileOptions o;
  o.backend = Backend::Host;
  LoweredModule m = lowerKernel(*fn, o, "hostpow");
  EXPECT_EQ(m.llvmIR().find("__nv_"), std::string::npos);
  HostEntry e = reinterpret_cast<HostEntry>(addToHostJIT(std::move(m), o));
  std::vector<double> x = {2.0, 10.0, 0.5}, y = {0.5, -2.0, 3.3}, out(3);
  KernelArgs args;
  args.vec(x).vec(y).vec(out);
  launchHost(e, args, {1}, {3});
  for (int k = 0; k < 3; ++k)
    EXPECT_DOUBLE_EQ(out[k], std::pow(x[k], y[k]));
  // float % float uses fmod from libm on the host.
  auto fm = makeElementwise(BinaryOp::Mod, f64, f64, f64, f64);
  HostEntry em = compileHost(*fm, "hostmod");
  std::vector<double> a = {5.5, -5.5, 1e300}, b = {2.0, 2.0, 3.0}, r(3);
  KernelArgs args2;
  args2.vec(a).vec(b).vec(r);
  launchHost(em, args2, {1}, {3});
  EXPECT_EQ(r[0], 1.5);
  EXPECT_EQ(r[1], 0.5);
  double expect = std::fmod(1e300, 3.0);
  EXPECT_EQ(r[2], expect < 0 ? expect + 3.0 : expect);
}

} // namespace
} // namespace ptxjit::codegen::test
