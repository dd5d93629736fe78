// Lowering of slices, view assignment and enumerate/zip (codegen/LowerSlices.cpp,
// codegen/LowerArrays.cpp): hand-built kernels typed by ir/Typing, run on the host and
// assembled by ptxas.
#include "HostRun.h"
#include "TestUtil.h"

#include "ir/typing/Typing.h"
#include "tests/cpp/ir/IrBuilder.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ptxjit::codegen::test {
namespace {

using ptxjit::ir::test::FnBuilder;
using namespace ptxjit::ir;

Instr *slice(FnBuilder &b, std::vector<Instr *> parts) {
  for (Instr *&p : parts)
    if (!p)
      p = b.cnone();
  return b.add<BuildSliceInstr>(std::move(parts));
}

Instr *builtinCall(FnBuilder &b, const std::string &name, std::vector<Instr *> args,
                   std::vector<std::string> kw = {}) {
  return b.call(b.sym(name, "builtins." + name), std::move(args), std::move(kw));
}

/// `for <target> in <iterable>:` with the loop's body built by `body(next value)`.
void forLoop(FnBuilder &b, Instr *iterable, const std::function<void(Instr *)> &body) {
  b.store("$it", b.add<GetIterInstr>(iterable));
  Block *head = b.newBlock(), *inner = b.newBlock(), *exit = b.newBlock();
  b.jump(head);
  b.at(head);
  b.branch(b.add<IterValidInstr>(b.load("$it")), inner, exit);
  b.at(inner);
  body(b.add<IterNextInstr>(b.load("$it")));
  b.jump(head);
  b.at(exit);
}

/// def k(a, out, s, e, st):
///     v = a[s:e:st]
///     out[0] = len(v)
///     for i, x in enumerate(zip(v, range(100)), start=1):
///         out[i] = x[0] * 10 + x[1]
std::unique_ptr<Function> makeSliceEnumerateZip() {
  FnBuilder b("slice_zip", {"a", "out", "s", "e", "st"});
  b.store("v", b.item(b.load("a"), slice(b, {b.load("s"), b.load("e"), b.load("st")})));
  b.setItem(b.load("out"), b.cint(0), builtinCall(b, "len", {b.load("v")}));
  Instr *zip = builtinCall(b, "zip", {b.load("v"), builtinCall(b, "range", {b.cint(100)})});
  Instr *en = builtinCall(b, "enumerate", {zip, b.cint(1)}, {"start"});
  forLoop(b, en, [&](Instr *next) {
    b.store("i", b.tupleGet(next, 0));
    b.store("x", b.tupleGet(next, 1));
    Instr *x0 = b.item(b.load("x"), b.cint(0));
    Instr *x1 = b.item(b.load("x"), b.cint(1));
    b.setItem(b.load("out"), b.load("i"),
              b.bin(BinaryOp::Add, b.bin(BinaryOp::Mul, x0, b.cint(10)), x1));
  });
  b.ret();
  return std::move(b.fn);
}

/// def k(img, src, y):
///     img[1:, ::2] = src      (src broadcast over the rows)
///     img[y] = -1.5
///     img[:, -1] = img[:, 0]
std::unique_ptr<Function> makeViewAssignment() {
  FnBuilder b("assign", {"img", "src", "y"});
  b.setItem(b.load("img"),
            b.tuple({slice(b, {b.cint(1), nullptr}), slice(b, {nullptr, nullptr, b.cint(2)})}),
            b.load("src"));
  b.setItem(b.load("img"), b.load("y"), b.cfloat(-1.5));
  b.setItem(b.load("img"), b.tuple({slice(b, {nullptr, nullptr}), b.cint(-1)}),
            b.item(b.load("img"), b.tuple({slice(b, {nullptr, nullptr}), b.cint(0)})));
  b.ret();
  return std::move(b.fn);
}

TEST(SliceCodegen, SliceEnumerateZipOnTheHost) {
  auto fn = makeSliceEnumerateZip();
  const Type *f64a = types::array(types::float64(), 1, Layout::C);
  inferTypes(*fn, {f64a, f64a, types::int64(), types::int32(), types::int64()}, nullptr);
  HostEntry e = compileHost(*fn, "slice_zip");
  std::vector<double> a(10);
  for (int k = 0; k < 10; ++k)
    a[k] = k + 0.5;
  struct Case {
    int64_t s;
    int32_t e;
    int64_t st;
    std::vector<double> expected; // the view a[s:e:st]
  } cases[] = {
      {1, 8, 3, {1.5, 4.5, 7.5}},
      {-1, -100, -4, {9.5, 5.5, 1.5}},
      {20, 0, -9, {9.5}},
      {20, -100, -9, {9.5, 0.5}},
      {3, 3, 1, {}},
      {0, 10, 0, {}}, // a run-time step of 0 gives an empty view
  };
  for (const Case &c : cases) {
    std::vector<double> out(12, -1.0);
    KernelArgs args;
    args.vec(a).vec(out).scalar(c.s).scalar(c.e).scalar(c.st);
    launchHost(e, args, {1}, {1});
    EXPECT_EQ(out[0], static_cast<double>(c.expected.size()));
    for (size_t k = 0; k < c.expected.size(); ++k)
      EXPECT_EQ(out[k + 1], c.expected[k] * 10 + k)
          << "a[" << c.s << ":" << c.e << ":" << c.st << "] element " << k;
    EXPECT_EQ(out[c.expected.size() + 1], -1.0);
  }
  LoweredModule m = lowerKernel(*fn, CompileOptions{}, "slice_zip");
  EXPECT_TRUE(ptxasAccepts(emitPTX(m, CompileOptions{})));
}

TEST(SliceCodegen, ViewAssignmentOnTheHost) {
  auto fn = makeViewAssignment();
  const Type *img2 = types::array(types::float32(), 2, Layout::C);
  const Type *src1 = types::array(types::int16(), 1, Layout::A);
  inferTypes(*fn, {img2, src1, types::int64()}, nullptr);
  HostEntry e = compileHost(*fn, "assign");
  std::vector<float> img(4 * 5, 0.0f);
  std::vector<int16_t> src = {7, 0, 8, 0, 9, 0}; // strided: every other element
  KernelArgs args;
  args.array(img.data(), {4, 5}, {20, 4}).array(src.data(), {3}, {4}).scalar<int64_t>(-2);
  launchHost(e, args, {1}, {1});
  std::vector<float> expected = {0,    0,    0,    0,    0,    //
                                 7,    0,    8,    0,    7,    //
                                 -1.5, -1.5, -1.5, -1.5, -1.5, //
                                 7,    0,    8,    0,    7};
  EXPECT_EQ(img, expected);
  LoweredModule m = lowerKernel(*fn, CompileOptions{}, "assign");
  EXPECT_TRUE(ptxasAccepts(emitPTX(m, CompileOptions{})));
}

TEST(SliceCodegen, SliceValuesAreThreeInt64s) {
  // The slice value's LLVM form, as Lowering.h documents: {i64, i64, i64}.
  auto fn = makeSliceEnumerateZip();
  const Type *f32a = types::array(types::float32(), 1, Layout::A);
  inferTypes(*fn, {f32a, f32a, types::uint8(), types::uint64(), types::int8()}, nullptr);
  CompileOptions o;
  o.backend = Backend::Host;
  LoweredModule m = lowerKernel(*fn, o, "slice_zip_types");
  std::string ir = m.llvmIR();
  EXPECT_NE(ir.find("{ i64, i64, i64 }"), std::string::npos) << ir;
}

} // namespace
} // namespace ptxjit::codegen::test
