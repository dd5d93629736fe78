// Typing of the cooperating-threads builtins (ir/typing/CudaBuiltins.def): memory-space arrays with
// constant shapes and dtypes, barriers, warp functions, atomics and intrinsics, and their
// compile-time errors.
#include "IRText.h"
#include "IrBuilder.h"

#include "ir/Datetime.h"
#include "ir/typing/CudaBuiltins.h"

#include <gtest/gtest.h>

using namespace ptxjit::ir;
using ptxjit::ir::test::FnBuilder;
using ptxjit::ir::test::typeChecked;

namespace {

/// `cuda.<path>` (dotted) as the frontend emits it: GetAttr chains on the cuda module.
Instr *cudaFn(FnBuilder &b, const std::string &path) {
  Instr *v = b.sym("cuda", "cuda");
  size_t start = 0;
  for (;;) {
    size_t dot = path.find('.', start);
    v = b.attr(v, path.substr(start, dot - start));
    if (dot == std::string::npos)
      return v;
    start = dot + 1;
  }
}

Instr *cstr(FnBuilder &b, const std::string &s) { return b.add<ConstInstr>(ConstValue::string(s)); }

/// Types `b`'s function and returns the error message (empty when typing succeeded).
std::string typingError(FnBuilder &b, const std::vector<const Type *> &args) {
  try {
    inferTypes(*b.fn, args, nullptr);
  } catch (const CompileError &e) {
    return e.message();
  }
  return "";
}

} // namespace

TEST(TypingCuda, TableKinds) {
  const CudaBuiltinInfo *info = cudaBuiltinInfo(builtinByPath("cuda.atomic.nanmin"));
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->kind, CudaKind::Atomic);
  EXPECT_EQ(static_cast<AtomicOp>(info->variant), AtomicOp::NanMin);
  EXPECT_EQ(cudaBuiltinInfo(builtinByPath("cuda.shfl_xor_sync"))->variant, 3);
  EXPECT_EQ(cudaBuiltinInfo(builtinByPath("cuda.shared.array"))->kind, CudaKind::SharedArray);
  EXPECT_EQ(cudaBuiltinInfo(BuiltinId::MathSin), nullptr);
  EXPECT_EQ(cudaBuiltinInfo(BuiltinId::None), nullptr);
}

TEST(TypingCuda, ArraysWithConstantShapes) {
  FnBuilder b("k", {"out"});
  // cuda.shared.array(16, numpy.float32)
  auto *s1 = b.call(cudaFn(b, "shared.array"), {b.cint(16), b.sym("float32", "numpy.float32")});
  // cuda.shared.array(shape=(ROWS, 4), dtype='int64') with ROWS a global
  Instr *rows = b.global("ROWS", GlobalValue::makeConstant(ConstValue::integer(3)));
  auto *s2 = b.call(cudaFn(b, "shared.array"), {b.tuple({rows, b.cint(4)}), cstr(b, "int64")},
                    {"shape", "dtype"});
  // a global tuple shape, and a local assigned once
  Instr *shape = b.global(
      "SHAPE", GlobalValue::makeConstant(ConstValue::tuple(
                   {ConstValue::integer(2), ConstValue::integer(3), ConstValue::integer(4)})));
  auto *l1 = b.call(cudaFn(b, "local.array"), {shape, cstr(b, "f8")});
  b.store("n", b.cint(5));
  auto *l2 = b.call(cudaFn(b, "local.array"), {b.load("n"), b.sym("uint8", "numpy.uint8")});
  auto *dyn = b.call(cudaFn(b, "shared.array"), {b.cint(0), b.sym("float64", "numpy.float64")});
  b.ret();
  typeChecked(*b.fn, {types::array(types::float32(), 1, Layout::C)}, nullptr);
  EXPECT_EQ(s1->type, types::array(types::float32(), 1, Layout::C));
  EXPECT_EQ(s2->type, types::array(types::int64(), 2, Layout::C));
  EXPECT_EQ(l1->type, types::array(types::float64(), 3, Layout::C));
  EXPECT_EQ(l2->type, types::array(types::uint8(), 1, Layout::C));
  EXPECT_EQ(dyn->type, types::array(types::float64(), 1, Layout::C));
  EXPECT_EQ(s1->builtin, BuiltinId::CudaSharedArray);
  auto dims = constantShape(l1->arg(0), *b.fn);
  ASSERT_TRUE(dims.has_value());
  EXPECT_EQ(*dims, (std::vector<int64_t>{2, 3, 4}));
}

TEST(TypingCuda, DtypeStringsAsNumpyReadsThem) {
  EXPECT_EQ(numpyDtypeString("float32").type, types::float32());
  EXPECT_EQ(numpyDtypeString("<f4").type, types::float32());
  EXPECT_EQ(numpyDtypeString("=i8").type, types::int64());
  EXPECT_EQ(numpyDtypeString("|b1").type, types::boolean());
  EXPECT_EQ(numpyDtypeString("float").type, types::float64()); // Python's float
  EXPECT_EQ(numpyDtypeString("int").type, types::int64());
  EXPECT_EQ(numpyDtypeString("byte").type, types::int8()); // NumPy's byte is signed
  EXPECT_EQ(numpyDtypeString("B").type, types::uint8());
  EXPECT_EQ(numpyDtypeString("D").type, types::complex128());
  EXPECT_EQ(numpyDtypeString("e").type, types::float16());
  EXPECT_EQ(numpyDtypeString(">u1").type, types::uint8()); // one byte: no byte order
  // datetime64 / timedelta64 with their units (ir/Datetime.h).
  for (const char *dt : {"M8[D]", "m8", "datetime64[ns]"}) {
    NumpyDtypeName d = numpyDtypeString(dt);
    EXPECT_TRUE(d.known) << dt;
    EXPECT_TRUE(d.type && isDatetimeLike(d.type)) << dt;
  }
  for (const char *known : {"O", "object", "U5", "S3", "V8", "float128", "g", ">f4", "i4,f8"}) {
    NumpyDtypeName d = numpyDtypeString(known);
    EXPECT_TRUE(d.known) << known;
    EXPECT_EQ(d.type, nullptr) << known;
  }
  for (const char *unknown : {"int33", "float99", "i3", "Q1", "", "floats"})
    EXPECT_FALSE(numpyDtypeString(unknown).known) << unknown;
}

TEST(TypingCuda, BarriersWarpFunctionsAndIntrinsics) {
  FnBuilder b("k", {"f", "i", "d", "u"});
  Instr *mask = b.cint(0xffffffffLL);
  auto *sync = b.call(cudaFn(b, "syncthreads"), {});
  auto *count = b.call(cudaFn(b, "syncthreads_count"), {b.cmp(CmpOp::Gt, b.load("i"), b.cint(0))});
  auto *shf = b.call(cudaFn(b, "shfl_down_sync"), {mask, b.load("f"), b.cint(1)});
  auto *shd = b.call(cudaFn(b, "shfl_sync"), {mask, b.load("d"), b.cint(0)});
  auto *lit = b.call(cudaFn(b, "shfl_xor_sync"), {mask, b.cint(7), b.cint(1)});
  auto *all = b.call(cudaFn(b, "all_sync"), {mask, b.load("i")});
  auto *ballot = b.call(cudaFn(b, "ballot_sync"), {mask, b.load("i")});
  auto *matchAll = b.call(cudaFn(b, "match_all_sync"), {mask, b.load("d")});
  auto *active = b.call(cudaFn(b, "activemask"), {});
  auto *lane = cudaFn(b, "laneid");
  auto *warp = cudaFn(b, "warpsize");
  auto *popc = b.call(cudaFn(b, "popc"), {b.load("i")});
  auto *ffs = b.call(cudaFn(b, "ffs"), {b.load("u")});
  auto *brev = b.call(cudaFn(b, "brev"), {b.load("i")});
  auto *fma = b.call(cudaFn(b, "fma"), {b.load("f"), b.load("f"), b.cfloat(1.0)});
  auto *fmaMixed = b.call(cudaFn(b, "fma"), {b.load("f"), b.load("d"), b.load("f")});
  auto *selp = b.call(cudaFn(b, "selp"), {b.load("i"), b.load("i"), b.cint(3)});
  b.ret();
  typeChecked(*b.fn, {types::float32(), types::int32(), types::float64(), types::uint64()},
              nullptr);
  EXPECT_EQ(sync->type, types::void_());
  EXPECT_EQ(count->type, types::int32());
  EXPECT_EQ(shf->type, types::float32());
  EXPECT_EQ(shd->type, types::float64());
  EXPECT_EQ(lit->type, types::int64());
  EXPECT_EQ(all->type, types::boolean());
  EXPECT_EQ(ballot->type, types::int32());
  EXPECT_EQ(matchAll->type, types::tuple({types::int32(), types::boolean()}));
  EXPECT_EQ(active->type, types::uint32());
  EXPECT_EQ(lane->type, types::int32());
  EXPECT_EQ(lane->builtin, BuiltinId::CudaLaneid);
  EXPECT_EQ(warp->type, types::int32());
  EXPECT_EQ(popc->type, types::int32());
  EXPECT_EQ(ffs->type, types::uint32());
  EXPECT_EQ(brev->type, types::uint32());
  EXPECT_EQ(fma->type, types::float32());
  EXPECT_EQ(fmaMixed->type, types::float64());
  EXPECT_EQ(selp->type, types::int32());
}

TEST(TypingCuda, Atomics) {
  FnBuilder b("k", {"a", "m", "u"});
  auto *add = b.call(cudaFn(b, "atomic.add"), {b.load("a"), b.cint(0), b.cint(1)});
  auto *mx = b.call(cudaFn(b, "atomic.max"),
                    {b.load("m"), b.tuple({b.cint(0), b.cint(1)}), b.cfloat(2.0)});
  auto *inc = b.call(cudaFn(b, "atomic.inc"), {b.load("u"), b.cint(0), b.cint(9)});
  auto *cas = b.call(cudaFn(b, "atomic.compare_and_swap"), {b.load("u"), b.cint(0), b.cint(1)});
  auto *cas4 = b.call(cudaFn(b, "atomic.cas"), {b.load("u"), b.cint(0), b.cint(0), b.cint(1)});
  b.ret();
  typeChecked(*b.fn,
              {types::array(types::float32(), 1, Layout::C),
               types::array(types::float64(), 2, Layout::A),
               types::array(types::uint32(), 1, Layout::C)},
              nullptr);
  EXPECT_EQ(add->type, types::float32());
  EXPECT_EQ(mx->type, types::float64());
  EXPECT_EQ(inc->type, types::uint32());
  EXPECT_EQ(cas->type, types::uint32());
  EXPECT_EQ(cas4->type, types::uint32());
}

TEST(TypingCuda, Errors) {
  auto f32 = types::array(types::float32(), 1, Layout::C);
  {
    FnBuilder b("k", {"n"});
    b.line = 7;
    b.call(cudaFn(b, "shared.array"), {b.load("n"), b.sym("float32", "numpy.float32")});
    b.ret();
    try {
      inferTypes(*b.fn, {types::int64()}, nullptr);
      FAIL() << "no error";
    } catch (const CompileError &e) {
      // Numba's message for arguments its typer refuses, then the reason.
      EXPECT_EQ(e.code(), DiagCode::NoImplementation);
      EXPECT_EQ(e.loc().line, 7);
      EXPECT_EQ(e.message(),
                "No implementation of function Function(<function shared.array>) found for "
                "signature:\n \n >>> array(int64, class(float32))\n \ncuda.shared.array: the "
                "shape must be a compile-time constant (an int or a tuple of ints written as "
                "literals, module globals or closure constants; got a value of type int64)");
    }
  }
  {
    FnBuilder b("k", {"out"});
    b.call(cudaFn(b, "local.array"), {b.cint(4), cstr(b, "float128")});
    b.ret();
    EXPECT_NE(typingError(b, {f32}).find("NumPy dtype 'float128' is not supported"),
              std::string::npos);
  }
  {
    // The variable whose type is left unknown is named, as Numba names it; the shape is
    // spelled as Numba types it (literals, a tuple of a literal and an int32).
    FnBuilder b("k", {"n"});
    auto *c = b.call(cudaFn(b, "local.array"),
                     {b.tuple({b.cint(1), b.load("n")}), cstr(b, "int33")}, {"shape", "dtype"});
    b.store("arr", c);
    b.ret();
    EXPECT_EQ(typingError(b, {types::int32()}),
              "No implementation of function Function(<function local.array>) found for "
              "signature:\n \n >>> array(shape=Tuple(Literal[int](1), int32), "
              "dtype=Literal[str](int33))\n \nCannot infer the type of variable 'arr': "
              "cuda.local.array: the shape must be a compile-time constant (an int or a tuple of "
              "ints written as literals, module globals or closure constants; got a value of "
              "type Tuple(int64, int32))");
  }
  {
    FnBuilder b("k", {"a"});
    b.call(cudaFn(b, "atomic.and_"), {b.load("a"), b.cint(0), b.cint(1)});
    b.ret();
    EXPECT_EQ(typingError(b, {f32}),
              "cuda.atomic.and_ does not support an array of float32; it supports int32, uint32, "
              "int64 and uint64 arrays");
  }
  {
    FnBuilder b("k", {"a"});
    b.call(cudaFn(b, "atomic.add"), {b.load("a"), b.cint(0), b.cint(1)});
    b.ret();
    EXPECT_NE(
        typingError(b, {types::array(types::float32(), 1, Layout::C, true)}).find("read-only"),
        std::string::npos);
  }
  {
    FnBuilder b("k", {"a"});
    b.call(cudaFn(b, "atomic.add"), {b.load("a"), b.cint(0), b.cint(1)});
    b.ret();
    EXPECT_NE(typingError(b, {types::array(types::float32(), 2, Layout::C)})
                  .find("one index per dimension"),
              std::string::npos);
  }
  {
    FnBuilder b("k", {"z"});
    b.call(cudaFn(b, "shfl_sync"), {b.cint(-1), b.load("z"), b.cint(0)});
    b.ret();
    EXPECT_EQ(typingError(b, {types::complex64()}),
              "cuda.shfl_sync does not support a value of type complex64; it supports int32, "
              "int64, uint32, uint64, float32 and float64 values");
  }
  {
    FnBuilder b("k", {"x"});
    b.call(cudaFn(b, "ballot_sync"), {b.load("x"), b.cint(1)});
    b.ret();
    EXPECT_NE(typingError(b, {types::float64()}).find("Mask type must be an integer. Got float64"),
              std::string::npos);
  }
  {
    FnBuilder b("k", {"x"});
    b.call(cudaFn(b, "laneid"), {});
    b.ret();
    EXPECT_EQ(typingError(b, {types::float64()}), "call to a value of type int32 is not supported");
  }
}
