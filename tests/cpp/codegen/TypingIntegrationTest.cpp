// The lowering consumes what ir::inferTypes produces: kernels built with the test builder
// are stripped of every type and resolution, re-typed by ir/Typing, lowered and run on the
// host.
#include "HostRun.h"
#include "Kernels.h"

#include "ir/typing/Typing.h"

#include <gtest/gtest.h>

namespace ptxjit::codegen::test {
namespace {

/// Clears what typing sets: instruction/variable/argument/return types and resolutions.
void untype(Function &fn) {
  for (auto &b : fn.blocks)
    for (auto &i : b->instrs) {
      i->type = nullptr;
      i->builtin = BuiltinId::None;
      if (auto *c = dyn_cast<CallInstr>(i.get()))
        c->calleeFunction = nullptr;
    }
  for (Variable &v : fn.vars)
    v.type = nullptr;
  fn.argTypes.clear();
  fn.returnType = nullptr;
}

/// Types device functions on demand (each one once per argument-type list).
class Resolver : public CallResolver {
public:
  std::map<int, Function *> functions;
  Function *specializeCallee(int id, const std::vector<const Type *> &argTypes, const std::string &,
                             const SourceLoc &) override {
    Function *f = functions.at(id);
    if (f->argTypes != argTypes)
      inferTypes(*f, argTypes, this);
    return f;
  }
};

TEST(TypingIntegration, Saxpy) {
  auto fn = makeSaxpy();
  std::vector<const Type *> argTypes = fn->argTypes;
  untype(*fn);
  inferTypes(*fn, argTypes, nullptr);
  HostEntry e = compileHost(*fn, "saxpy_typed");
  std::vector<float> x = {1, 2, 3, 4, 5}, y = {10, 20, 30, 40, 50}, out(5);
  KernelArgs args;
  args.scalar(3.0f).vec(x).vec(y).vec(out);
  launchHost(e, args, {2}, {4});
  EXPECT_EQ(out, (std::vector<float>{13, 26, 39, 52, 65}));
  // The same typed IR also lowers to PTX.
  LoweredModule m = lowerKernel(*fn, CompileOptions{}, "saxpy_typed");
  EXPECT_NE(emitPTX(m, CompileOptions{}).find(".entry saxpy_typed("), std::string::npos);
}

TEST(TypingIntegration, LoopsLiteralsAndDeviceCall) {
  // def poly(v, k): return v * k + 0.5          (device; float32 * int64 → float64)
  // def kern(out, n):
  //     i = cuda.grid(1)
  //     acc = 0.0
  //     for j in range(n, 0, -1): acc += poly(out[i], j) // 2
  //     out[i] = acc
  auto f32 = types::float32(), i64 = types::int64();
  TypedBuilder d("poly", {"v", "k"}, {f32, i64}, FunctionKind::Device, f32);
  d.ret(d.bin(BinaryOp::Add, d.bin(BinaryOp::Mul, d.load("v"), d.load("k"), f32), d.cfloat(0.5),
              f32));
  TypedBuilder b("kern", {"out", "n"}, {arr(f32), i64});
  b.declare("i", i64);
  b.declare("acc", f32);
  b.declare("j", i64);
  b.store("i", b.grid(1));
  b.store("acc", b.cfloat(0.0));
  b.forRange("j", {b.load("n"), b.cint(0), b.cint(-1)}, [&] {
    Instr *c = b.callDevice(d.fn.get(), {b.item(b.load("out"), b.load("i"), f32), b.load("j")});
    Instr *q = b.bin(BinaryOp::FloorDiv, c, b.cint(2), f32);
    b.store("acc", b.bin(BinaryOp::Add, b.load("acc"), q, f32));
  });
  b.setItem(b.load("out"), b.load("i"), b.load("acc"));
  b.ret();

  std::vector<const Type *> argTypes = b.fn->argTypes;
  untype(*b.fn);
  untype(*d.fn);
  // The frontend's global for a device function carries its id: 1 in the builder.
  Resolver r;
  r.functions[1] = d.fn.get();
  inferTypes(*b.fn, argTypes, &r);
  // float32 * int64 promotes to float64 (NumPy); acc = 0.0 (weak) unifies with it.
  EXPECT_EQ(d.fn->returnType, types::float64()) << d.fn->print();
  EXPECT_EQ(b.fn->vars[b.fn->varIndex("acc")].type, types::float64()) << b.fn->print();

  HostEntry e = compileHost(*b.fn, "kern_typed");
  std::vector<float> out = {1.0f, -2.0f, 0.25f};
  std::vector<float> expect = out;
  for (float &v : expect) {
    double acc = 0.0;
    for (int64_t j = 4; j > 0; --j)
      acc += std::floor((double(v) * double(j) + 0.5) / 2.0);
    v = static_cast<float>(acc);
  }
  KernelArgs args;
  args.vec(out).scalar<int64_t>(4);
  launchHost(e, args, {1}, {3});
  EXPECT_EQ(out, expect);
}

} // namespace
} // namespace ptxjit::codegen::test
