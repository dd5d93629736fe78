// Typed IR of the kernels the codegen tests share.
#pragma once

#include "TypedIR.h"

namespace ptxjit::codegen::test {

/// def saxpy(a, x, y, out):
///     i = cuda.grid(1)
///     if i < x.size:
///         out[i] = a * x[i] + y[i]
inline std::unique_ptr<Function> makeSaxpy(const ScalarType *dt = types::float32(),
                                           Layout layout = Layout::C) {
  TypedBuilder b("saxpy", {"a", "x", "y", "out"},
                 {dt, arr(dt, 1, layout), arr(dt, 1, layout), arr(dt, 1, layout)});
  b.declare("i", types::int64());
  b.store("i", b.grid(1));
  Instr *size = b.attr(b.load("x"), "size", types::int64(), BuiltinId::ArraySize);
  b.ifThen(b.cmp(CmpOp::Lt, b.load("i"), size), [&] {
    Instr *ax = b.bin(BinaryOp::Mul, b.load("a"), b.item(b.load("x"), b.load("i"), dt), dt);
    Instr *v = b.bin(BinaryOp::Add, ax, b.item(b.load("y"), b.load("i"), dt), dt);
    b.setItem(b.load("out"), b.load("i"), v);
  });
  b.ret();
  return std::move(b.fn);
}

/// def binop(a, b, out):  out[cuda.grid(1)] = a[i] <op> b[i]   (computed in `compute`, stored
/// into `outType` arrays)
inline std::unique_ptr<Function> makeElementwise(BinaryOp op, const ScalarType *lt,
                                                 const ScalarType *rt, const Type *result,
                                                 const ScalarType *outType) {
  TypedBuilder b("elementwise", {"a", "b", "out"}, {arr(lt), arr(rt), arr(outType)});
  b.declare("i", types::int64());
  b.store("i", b.grid(1));
  Instr *size = b.attr(b.load("out"), "size", types::int64(), BuiltinId::ArraySize);
  b.ifThen(b.cmp(CmpOp::Lt, b.load("i"), size), [&] {
    Instr *v = b.bin(op, b.item(b.load("a"), b.load("i"), lt), b.item(b.load("b"), b.load("i"), rt),
                     result);
    b.setItem(b.load("out"), b.load("i"), v);
  });
  b.ret();
  return std::move(b.fn);
}

} // namespace ptxjit::codegen::test
