// Lowering of math/numpy/cmath builtins: the libdevice or libm routine chosen
// per type and backend, the fastmath variants, and PTX that ptxas accepts for
// every math function.
#include "../ir/IrBuilder.h"
#include "TestUtil.h"
#include "tests/cpp/common/NeedsLibdevice.h"

#include "codegen/Codegen.h"
#include "ir/typing/Typing.h"

#include <gtest/gtest.h>

namespace ptxjit::codegen::test {
namespace {

using ir::test::FnBuilder;
using namespace ir;

/// def k(x, out): out[0] = <module>.<name>(x[0]) (or of (x[0], x[1]) when
/// binary)
std::unique_ptr<Function> makeCall(const std::string &module,
                                   const std::string &name, int nargs,
                                   const ScalarType *in,
                                   const ScalarType *out) {
  FnBuilder b("k", {"x", "out"});
  Instr *f = b.attr(b.sym(module, module), name);
  std::vector<Instr *> args;
  for (int k = 0; k < nargs; ++k)
    args.push_back(b.item(b.load("x"), b.cint(k)));
  Instr *r = b.call(f, args);
  b.setItem(b.load("out"), b.cint(0), r);
  b.ret();
  inferTypes(*b.fn,
             {types::array(in, 1, Layout::C), types::array(out, 1, Layout::C)},
             nullptr);
  return std::move(b.fn);
}

std::string loweredIR(const Function &fn, Backend backend,
                      bool fastmath = false) {
  CompileOptions o;
  o.backend = backend;
  o.fastmath = fastmath;
  LoweredModule m = lowerKernel(fn, o, "k");
  return m.llvmIR();
}

TEST(MathCodegen, RoutinePerTypeAndBackend) {
  auto f32 = makeCall("math", "sin", 1, types::float32(), types::float32());
  auto f64 = makeCall("math", "sin", 1, types::float64(), types::float64());
  EXPECT_NE(loweredIR(*f32, Backend::CUDA).find("@__nv_sinf("),
            std::string::npos);
  EXPECT_NE(loweredIR(*f64, Backend::CUDA).find("@__nv_sin("),
            std::string::npos);
  EXPECT_NE(loweredIR(*f32, Backend::CUDA, true).find("@__nv_fast_sinf("),
            std::string::npos);
  EXPECT_EQ(loweredIR(*f64, Backend::CUDA, true).find("__nv_fast"),
            std::string::npos);
  // On the host a float32 routine is the C library's, in a call LLVM does not fold
  // (nobuiltin: MathLib.cpp); float64 and fastmath keep the intrinsic.
  std::string host32 = loweredIR(*f32, Backend::Host);
  EXPECT_NE(host32.find("@sinf("), std::string::npos) << host32;
  EXPECT_NE(host32.find("nobuiltin"), std::string::npos) << host32;
  EXPECT_NE(loweredIR(*f64, Backend::Host).find("@llvm.sin.f64("), std::string::npos);
  EXPECT_NE(loweredIR(*f32, Backend::Host, true).find("@llvm.sin.f32("), std::string::npos);
  auto tan32 = makeCall("numpy", "tan", 1, types::float32(), types::float32());
  EXPECT_NE(loweredIR(*tan32, Backend::Host).find("@tanf("), std::string::npos);
  auto na =
      makeCall("math", "nextafter", 2, types::float64(), types::float64());
  EXPECT_NE(loweredIR(*na, Backend::CUDA).find("@__nv_nextafter("),
            std::string::npos);
  EXPECT_NE(loweredIR(*na, Backend::Host).find("@nextafter("),
            std::string::npos);
  // An int argument converts to float64 first.
  auto si = makeCall("math", "sqrt", 1, types::int32(), types::float64());
  std::string ir = loweredIR(*si, Backend::CUDA);
  EXPECT_NE(ir.find("sitofp i32"), std::string::npos) << ir;
}

TEST(MathCodegen, EveryFunctionGivesValidPtx) {
  PTXJIT_SKIP_WITHOUT_LIBDEVICE();
  const char *unary[] = {
      "acos",    "asin",    "atan",  "acosh", "asinh", "atanh",  "cos",
      "sin",     "tan",     "cosh",  "sinh",  "tanh",  "erf",    "erfc",
      "exp",     "exp2",    "expm1", "fabs",  "gamma", "lgamma", "log",
      "log2",    "log10",   "log1p", "sqrt",  "ceil",  "floor",  "trunc",
      "degrees", "radians", "isnan"};
  const char *binary[] = {"atan2", "hypot",     "copysign", "fmod",
                          "pow",   "nextafter", "remainder"};
  const char *cunary[] = {"exp",  "log",   "log10", "sqrt", "sin",  "cos",
                          "tan",  "asin",  "acos",  "atan", "sinh", "cosh",
                          "tanh", "asinh", "acosh", "atanh"};
  for (const ScalarType *dt : {types::float32(), types::float64()}) {
    for (const char *n : unary) {
      auto fn = makeCall("math", n, 1, dt, dt);
      CompileOptions o;
      LoweredModule m = lowerKernel(*fn, o, "k");
      std::string ptx = emitPTX(m, o);
      EXPECT_EQ(ptx.find(".extern"), std::string::npos) << n;
      if (havePtxas()) {
        EXPECT_TRUE(ptxasAccepts(ptx)) << n;
      }
    }
    for (const char *n : binary) {
      auto fn = makeCall("math", n, 2, dt, dt);
      CompileOptions o;
      LoweredModule m = lowerKernel(*fn, o, "k");
      std::string ptx = emitPTX(m, o);
      if (havePtxas()) {
        EXPECT_TRUE(ptxasAccepts(ptx)) << n;
      }
    }
  }
  for (const ScalarType *ct : {types::complex64(), types::complex128()})
    for (const char *n : cunary) {
      auto fn = makeCall("cmath", n, 1, ct, ct);
      CompileOptions o;
      LoweredModule m = lowerKernel(*fn, o, "k");
      std::string ptx = emitPTX(m, o);
      EXPECT_EQ(ptx.find(".extern"), std::string::npos) << n;
      if (havePtxas()) {
        EXPECT_TRUE(ptxasAccepts(ptx)) << n;
      }
    }
}

TEST(MathCodegen, FastmathApproximatesFloat32Only) {
  PTXJIT_SKIP_WITHOUT_LIBDEVICE();
  auto f32 = makeCall("math", "sqrt", 1, types::float32(), types::float32());
  CompileOptions o;
  o.fastmath = true;
  LoweredModule fast = lowerKernel(*f32, o, "k");
  std::string ptxFast = emitPTX(fast, o);
  EXPECT_NE(ptxFast.find("sqrt.approx.ftz.f32"), std::string::npos) << ptxFast;
  CompileOptions p;
  LoweredModule precise = lowerKernel(*f32, p, "k");
  std::string ptxPrecise = emitPTX(precise, p);
  EXPECT_NE(ptxPrecise.find("sqrt.rn.f32"), std::string::npos) << ptxPrecise;
  EXPECT_EQ(ptxPrecise.find(".approx"), std::string::npos);
  auto f64 = makeCall("math", "sqrt", 1, types::float64(), types::float64());
  LoweredModule fast64 = lowerKernel(*f64, o, "k");
  std::string ptx64 = emitPTX(fast64, o);
  EXPECT_NE(ptx64.find("sqrt.rn.f64"), std::string::npos) << ptx64;
}

} // namespace
} // namespace ptxjit::codegen::test
