// Type inference of hand-written functions: kernels, loops, weak literals, builtins, calls.
// Functions whose shape matters (control flow, variables, locations) are written as IR text
// (ir/IRParser.h) and their instructions found by number (%N); expression-heavy ones are
// built with IrBuilder.h. Every function that types is also verified and parsed back.
#include "IRText.h"
#include "IrBuilder.h"

#include <gtest/gtest.h>

using namespace ptxjit::ir;
using ptxjit::ir::test::arr1;
using ptxjit::ir::test::FnBuilder;
using ptxjit::ir::test::parseIR;
using ptxjit::ir::test::typeChecked;
using ptxjit::ir::test::typedIR;
using ptxjit::ir::test::typeOf;
using ptxjit::ir::test::value;
using ptxjit::ir::test::var;

namespace {

const ArrayType *f32a() { return arr1(types::float32()); }

/// def saxpy(a, x, y, out):
///     i = cuda.grid(1)
///     if i < x.size:
///         out[i] = a * x[i] + y[i]
const char *kSaxpy = R"(function saxpy(a, x, y, out) kernel
bb0:
  %0 = Global cuda [symbol cuda]                ; line 2
  %1 = GetAttr %0 .grid                         ; line 2
  %2 = Const 1                                  ; line 2
  %3 = Call %1(%2)                              ; line 2
  StoreLocal i, %3                              ; line 2
  %5 = LoadLocal x                              ; line 3
  %6 = GetAttr %5 .size                         ; line 3
  %7 = LoadLocal i                              ; line 3
  %8 = Compare < %7, %6                         ; line 3
  Branch %8, bb1, bb2                           ; line 3
bb1:
  %10 = LoadLocal x                             ; line 4
  %11 = LoadLocal i                             ; line 4
  %12 = GetItem %10[%11]                        ; line 4
  %13 = LoadLocal a                             ; line 4
  %14 = BinOp * %13, %12                        ; line 4
  %15 = LoadLocal y                             ; line 4
  %16 = LoadLocal i                             ; line 4
  %17 = GetItem %15[%16]                        ; line 4
  %18 = BinOp + %14, %17                        ; line 4
  %19 = LoadLocal out                           ; line 4
  %20 = LoadLocal i                             ; line 4
  SetItem %19[%20] = %18                        ; line 4
  Jump bb2                                      ; line 4
bb2:
  %23 = Const None
  Return %23
)";

/// Runs inference and expects a CompileError with `code` whose message contains `parts`.
void expectError(Function &fn, const std::vector<const Type *> &args, DiagCode code,
                 const std::vector<std::string> &parts, int line = -1,
                 CallResolver *resolver = nullptr) {
  try {
    inferTypes(fn, args, resolver);
    ADD_FAILURE() << "expected " << diagName(code) << ", typing succeeded:\n" << fn.print();
  } catch (const CompileError &e) {
    EXPECT_EQ(e.code(), code) << diagName(e.code()) << ": " << e.what();
    for (const std::string &p : parts)
      EXPECT_NE(e.message().find(p), std::string::npos)
          << "message '" << e.message() << "' lacks '" << p << "'";
    EXPECT_EQ(e.file(), fn.filename);
    if (line >= 0) {
      EXPECT_EQ(e.loc().line, line) << e.what();
    }
  }
}

/// The same for a function written as IR text.
void expectError(std::string_view text, const std::vector<const Type *> &args, DiagCode code,
                 const std::vector<std::string> &parts, int line = -1,
                 CallResolver *resolver = nullptr) {
  std::unique_ptr<Function> fn = parseIR(text);
  expectError(*fn, args, code, parts, line, resolver);
}

} // namespace

TEST(Typing, SaxpyFloat32) {
  auto fn = typedIR(kSaxpy, {types::float32(), f32a(), f32a(), f32a()});
  EXPECT_EQ(typeOf(*fn, 3), types::int64()); // cuda.grid(1)
  EXPECT_EQ(value(*fn, 3)->builtin, BuiltinId::CudaGrid);
  EXPECT_EQ(typeOf(*fn, 6), types::int64()); // x.size
  EXPECT_EQ(value(*fn, 6)->builtin, BuiltinId::ArraySize);
  EXPECT_EQ(typeOf(*fn, 8), types::boolean());  // i < x.size
  EXPECT_EQ(typeOf(*fn, 12), types::float32()); // x[i]
  EXPECT_EQ(typeOf(*fn, 14), types::float32()); // a * x[i]
  EXPECT_EQ(typeOf(*fn, 18), types::float32()); // ... + y[i]
  EXPECT_EQ(typeOf(*fn, 21), types::void_());   // out[i] = ...
  EXPECT_EQ(var(*fn, "i").type, types::int64());
  EXPECT_EQ(var(*fn, "x").type, f32a());
  EXPECT_TRUE(var(*fn, "x").isArgument);
  EXPECT_EQ(fn->returnType, types::void_());
  EXPECT_EQ(fn->argTypes.size(), 4u);
  for (auto &blk : fn->blocks)
    for (auto &i : blk->instrs)
      EXPECT_NE(i->type, nullptr) << opcodeName(i->op());
}

TEST(Typing, SaxpyMixedPrecisionPromotes) {
  auto fn =
      typedIR(kSaxpy, {types::float64(), f32a(), arr1(types::int32()), arr1(types::float64())});
  EXPECT_EQ(typeOf(*fn, 14), types::float64());
  EXPECT_EQ(typeOf(*fn, 18), types::float64());
}

TEST(Typing, RetypingIsFromScratch) {
  auto fn = typedIR(kSaxpy, {types::float64(), arr1(types::float64()), arr1(types::float64()),
                             arr1(types::float64())});
  EXPECT_EQ(typeOf(*fn, 18), types::float64());
  typeChecked(*fn, {types::float32(), f32a(), f32a(), f32a()});
  EXPECT_EQ(typeOf(*fn, 18), types::float32());
}

namespace {

/// def sumk(x, out):
///     acc = <init>
///     for i in range(len(x)):
///         acc += x[i]
///     out[0] = acc
std::string sumLoop(const std::string &init) {
  return R"(function sumk(x, out) kernel
bb0:
  %0 = Const )" +
         init + R"(
  StoreLocal acc, %0
  %2 = Global len [symbol builtins.len]
  %3 = LoadLocal x
  %4 = Call %2(%3)
  %5 = Global range [symbol builtins.range]
  %6 = Call %5(%4)
  %7 = GetIter %6
  StoreLocal $stack0, %7
  Jump bb1
bb1:
  %10 = LoadLocal $stack0
  %11 = IterValid %10
  Branch %11, bb2, bb3
bb2:
  %13 = LoadLocal $stack0
  %14 = IterNext %13
  StoreLocal i, %14
  %16 = LoadLocal acc
  %17 = LoadLocal x
  %18 = LoadLocal i
  %19 = GetItem %17[%18]
  %20 = BinOp += %16, %19
  StoreLocal acc, %20
  Jump bb1
bb3:
  %23 = LoadLocal out
  %24 = Const 0
  %25 = LoadLocal acc
  SetItem %23[%24] = %25
  Return
)";
}

} // namespace

TEST(Typing, LoopAccumulatorFromFloatLiteralAdoptsFloat32) {
  auto fn = typedIR(sumLoop("0.0"), {f32a(), f32a()});
  EXPECT_EQ(var(*fn, "acc").type, types::float32());
  EXPECT_EQ(typeOf(*fn, 20), types::float32()); // acc += x[i]
  EXPECT_EQ(var(*fn, "i").type, types::int64());
  EXPECT_EQ(typeOf(*fn, 6), types::range());
  EXPECT_EQ(value(*fn, 6)->builtin, BuiltinId::Range);
  EXPECT_EQ(typeOf(*fn, 7), types::iterator(IterKind::Range, types::int64(), {types::range()}));
  EXPECT_EQ(var(*fn, "$stack0").type, typeOf(*fn, 7));
  EXPECT_EQ(typeOf(*fn, 14), types::int64()); // the IterNext
  // The literal itself stays weak; the variable does not.
  EXPECT_EQ(typeOf(*fn, 0), types::weakFloat());
}

TEST(Typing, LoopAccumulatorFloat64) {
  auto fn = typedIR(sumLoop("0.0"), {arr1(types::float64()), arr1(types::float64())});
  EXPECT_EQ(var(*fn, "acc").type, types::float64());
}

TEST(Typing, LoopAccumulatorFromIntLiteral) {
  auto f = typedIR(sumLoop("0"), {f32a(), f32a()});
  EXPECT_EQ(var(*f, "acc").type, types::float32());

  auto i = typedIR(sumLoop("0"), {arr1(types::int32()), arr1(types::int32())});
  EXPECT_EQ(var(*i, "acc").type, types::int32());
  EXPECT_EQ(typeOf(*i, 20), types::int32());

  // An int literal accumulating float32 and int64 values: float64 (NumPy's int64+float32).
  auto m = typedIR(sumLoop("0"), {f32a(), arr1(types::int64())});
  EXPECT_EQ(var(*m, "acc").type, types::float32());
}

TEST(Typing, LiteralOnlyVariablesGetDefaultTypes) {
  // n = 0; n += 1; f = 1.5; c = 2j; b = True; s = 1 + 2
  auto fn = typedIR(R"(function k() kernel
bb0:
  %0 = Const 0
  StoreLocal n, %0
  %2 = LoadLocal n
  %3 = Const 1
  %4 = BinOp += %2, %3
  StoreLocal n, %4
  %6 = Const 1.5
  StoreLocal f, %6
  %8 = Const 2j
  StoreLocal c, %8
  %10 = Const True
  StoreLocal b, %10
  %12 = Const 1
  %13 = Const 2
  %14 = BinOp + %12, %13
  StoreLocal s, %14
  Return
)",
                    {});
  EXPECT_EQ(var(*fn, "n").type, types::int64());
  EXPECT_EQ(typeOf(*fn, 4), types::int64()); // retyped after the variable became concrete
  EXPECT_EQ(var(*fn, "f").type, types::float64());
  EXPECT_EQ(var(*fn, "c").type, types::complex128());
  EXPECT_EQ(var(*fn, "b").type, types::boolean());
  EXPECT_EQ(typeOf(*fn, 14), types::weakInt());
  EXPECT_EQ(var(*fn, "s").type, types::int64());
}

TEST(Typing, ConcretizedVariablesWidenTheirUses) {
  // n = 0; m = n + i   with i int32: n is int64, so m is int64 (not int32).
  auto fn = typedIR(R"(function k(i) kernel
bb0:
  %0 = Const 0
  StoreLocal n, %0
  %2 = LoadLocal n
  %3 = LoadLocal i
  %4 = BinOp + %2, %3
  StoreLocal m, %4
  Return
)",
                    {types::int32()});
  EXPECT_EQ(var(*fn, "n").type, types::int64());
  EXPECT_EQ(typeOf(*fn, 4), types::int64());
  EXPECT_EQ(var(*fn, "m").type, types::int64());
}

TEST(Typing, VariablesUnifyAcrossBranches) {
  // if c: v = i; arr = a  else: v = x; arr = <argument 3>     (i int32, x float32) → float64
  auto fn = typedIR(
      R"(function k(c, i, x, a) kernel
bb0:
  %0 = LoadLocal c
  %1 = Truth %0
  Branch %1, bb1, bb2
bb1:
  %3 = LoadLocal i
  StoreLocal v, %3
  %5 = LoadLocal a
  StoreLocal arr, %5
  Jump bb3
bb2:
  %8 = LoadLocal x
  StoreLocal v, %8
  %10 = Arg 3 (a)
  StoreLocal arr, %10
  Jump bb3
bb3:
  %13 = LoadLocal v
  %14 = LoadLocal arr
  Return
)",
      {types::int64(), types::int32(), types::float32(), arr1(types::float32(), Layout::C)});
  EXPECT_EQ(var(*fn, "v").type, types::float64());

  // Arrays of different layouts unify to layout A (where the branches' values meet).
  auto fn2 = typedIR(
      R"(function k2(c, a, b) kernel
bb0:
  %0 = LoadLocal c
  %1 = Truth %0
  Branch %1, bb1, bb2
bb1:
  %3 = LoadLocal a
  StoreLocal v, %3
  %5 = LoadLocal a
  %6 = Const 1
  %7 = BuildTuple (%5, %6)
  StoreLocal t, %7
  Jump bb3
bb2:
  %10 = LoadLocal b
  StoreLocal v, %10
  %12 = LoadLocal b
  %13 = Const 1.0
  %14 = BuildTuple (%12, %13)
  StoreLocal t, %14
  Jump bb3
bb3:
  %17 = LoadLocal v
  %18 = LoadLocal t
  Return
)",
      {types::int64(), arr1(types::float32(), Layout::C), arr1(types::float32(), Layout::A)});
  EXPECT_EQ(var(*fn2, "v").type, arr1(types::float32(), Layout::A));
  EXPECT_EQ(var(*fn2, "t").type,
            types::tuple({arr1(types::float32(), Layout::A), types::float64()}));
}

TEST(Typing, WeakLiteralArithmetic) {
  FnBuilder b("k", {"x", "i", "u"});
  auto *x2 = b.bin(BinaryOp::Mul, b.load("x"), b.cfloat(2.0));
  auto *x1 = b.bin(BinaryOp::Add, b.load("x"), b.cint(1));
  auto *i1 = b.bin(BinaryOp::Add, b.load("i"), b.cint(1));
  auto *ih = b.bin(BinaryOp::Mul, b.load("i"), b.cfloat(0.5));
  auto *xd = b.bin(BinaryOp::TrueDiv, b.load("x"), b.cint(2));
  auto *id = b.bin(BinaryOp::TrueDiv, b.load("i"), b.cint(2));
  auto *ll = b.bin(BinaryOp::TrueDiv, b.cint(1), b.cint(2));
  auto *xc = b.bin(BinaryOp::Mul, b.load("x"), b.add<ConstInstr>(ConstValue::complexNum({0, 1})));
  auto *uf = b.bin(BinaryOp::FloorDiv, b.load("u"), b.cint(3));
  auto *neg = b.unary(UnaryOpKind::Neg, b.cfloat(1.0));
  b.ret();
  typeChecked(*b.fn, {types::float32(), types::int32(), types::uint8()}, nullptr);
  EXPECT_EQ(x2->type, types::float32());
  EXPECT_EQ(x1->type, types::float32());
  EXPECT_EQ(i1->type, types::int32());
  EXPECT_EQ(ih->type, types::float64());
  EXPECT_EQ(xd->type, types::float32());
  EXPECT_EQ(id->type, types::float64());
  EXPECT_EQ(ll->type, types::weakFloat());
  EXPECT_EQ(xc->type, types::complex64());
  EXPECT_EQ(uf->type, types::uint8());
  EXPECT_EQ(neg->type, types::weakFloat());
}

TEST(Typing, OperatorRules) {
  FnBuilder b("k", {"p", "q", "i", "j", "x"});
  auto *bb = b.bin(BinaryOp::Add, b.load("p"), b.load("q"));
  auto *band = b.bin(BinaryOp::And, b.load("p"), b.load("q"));
  auto *bxor = b.bin(BinaryOp::Xor, b.load("p"), b.load("i"));
  auto *sh = b.bin(BinaryOp::LShift, b.load("i"), b.load("j"));
  auto *pw = b.bin(BinaryOp::Pow, b.load("i"), b.cint(2));
  auto *pwf = b.bin(BinaryOp::Pow, b.load("i"), b.load("x"));
  auto *md = b.bin(BinaryOp::Mod, b.load("p"), b.load("q"));
  auto *inv = b.unary(UnaryOpKind::Invert, b.load("p"));
  auto *invi = b.unary(UnaryOpKind::Invert, b.load("i"));
  auto *negb = b.unary(UnaryOpKind::Neg, b.load("p"));
  auto *nt = b.unary(UnaryOpKind::Not, b.load("x"));
  auto *cmp = b.cmp(CmpOp::Ge, b.load("x"), b.cint(0));
  auto *isn = b.cmp(CmpOp::Is, b.load("x"), b.cnone());
  auto *tr = b.truth(b.load("i"));
  b.ret();
  typeChecked(
      *b.fn, {types::boolean(), types::boolean(), types::int16(), types::int64(), types::float32()},
      nullptr);
  EXPECT_EQ(bb->type, types::int64());
  EXPECT_EQ(band->type, types::boolean());
  EXPECT_EQ(bxor->type, types::int16());
  EXPECT_EQ(sh->type, types::int64());
  EXPECT_EQ(pw->type, types::int16());
  EXPECT_EQ(pwf->type, types::float32());
  EXPECT_EQ(md->type, types::int64());
  EXPECT_EQ(inv->type, types::int64());
  EXPECT_EQ(invi->type, types::int16());
  EXPECT_EQ(negb->type, types::int64());
  EXPECT_EQ(nt->type, types::boolean());
  EXPECT_EQ(cmp->type, types::boolean());
  EXPECT_EQ(isn->type, types::boolean());
  EXPECT_EQ(tr->type, types::boolean());
}

TEST(Typing, ThreadIndexAttributes) {
  // cuda.threadIdx.x + cuda.blockDim.z * 2
  auto fn = typedIR(R"(function k() kernel
bb0:
  %0 = Global cuda [symbol cuda]
  %1 = GetAttr %0 .threadIdx
  %2 = GetAttr %1 .x
  %3 = GetAttr %0 .blockDim
  %4 = GetAttr %3 .z
  %5 = Const 2
  %6 = BinOp * %4, %5
  %7 = BinOp + %2, %6
  Return
)",
                    {});
  EXPECT_EQ(typeOf(*fn, 1), types::symbol("cuda.threadIdx"));
  EXPECT_EQ(value(*fn, 1)->builtin, BuiltinId::None);
  // int64 (Numba: int32 attributes, but every integer operation widened to int64).
  EXPECT_EQ(typeOf(*fn, 2), types::int64());
  EXPECT_EQ(value(*fn, 2)->builtin, BuiltinId::ThreadIdxX);
  EXPECT_EQ(value(*fn, 4)->builtin, BuiltinId::BlockDimZ);
  EXPECT_EQ(typeOf(*fn, 7), types::int64());
}

TEST(Typing, GridTuplesShapesAndUnpacking) {
  // i, j = cuda.grid(2); h, w = a.shape; v = a[i, j]; last = a.shape[-1]; n = a.ndim;
  // cuda.gridsize(3); len(a.shape)
  auto *a2 = types::array(types::float64(), 2, Layout::F);
  auto fn = typedIR(R"(function k(a) kernel
bb0:
  %0 = Global cuda [symbol cuda]
  %1 = GetAttr %0 .grid
  %2 = Const 2
  %3 = Call %1(%2)
  %4 = TupleGet %3, 0
  StoreLocal i, %4
  %6 = TupleGet %3, 1
  StoreLocal j, %6
  %8 = LoadLocal a
  %9 = GetAttr %8 .shape
  %10 = TupleGet %9, 0
  StoreLocal h, %10
  %12 = LoadLocal i
  %13 = LoadLocal j
  %14 = BuildTuple (%12, %13)
  %15 = LoadLocal a
  %16 = GetItem %15[%14]
  %17 = Const -1
  %18 = GetItem %9[%17]
  %19 = LoadLocal a
  %20 = GetAttr %19 .ndim
  %21 = GetAttr %0 .gridsize
  %22 = Const 3
  %23 = Call %21(%22)
  %24 = Global len [symbol builtins.len]
  %25 = Call %24(%9)
  Return
)",
                    {a2});
  EXPECT_EQ(typeOf(*fn, 3), types::tuple({types::int64(), types::int64()}));
  EXPECT_EQ(typeOf(*fn, 3)->str(), "UniTuple(int64 x 2)");
  EXPECT_EQ(var(*fn, "i").type, types::int64());
  EXPECT_EQ(typeOf(*fn, 9), types::tuple({types::int64(), types::int64()}));
  EXPECT_EQ(value(*fn, 9)->builtin, BuiltinId::ArrayShape);
  EXPECT_EQ(typeOf(*fn, 14), types::tuple({types::int64(), types::int64()}));
  EXPECT_EQ(typeOf(*fn, 16), types::float64());
  EXPECT_EQ(typeOf(*fn, 18), types::int64());
  EXPECT_EQ(typeOf(*fn, 20), types::int64());
  EXPECT_EQ(value(*fn, 20)->builtin, BuiltinId::ArrayNdim);
  EXPECT_EQ(typeOf(*fn, 23)->str(), "UniTuple(int64 x 3)");
  EXPECT_EQ(value(*fn, 23)->builtin, BuiltinId::CudaGridsize);
  EXPECT_EQ(typeOf(*fn, 25), types::int64());
}

TEST(Typing, ScalarBuiltins) {
  FnBuilder b("k", {"x", "i", "p"});
  auto bi = [&](const char *n) { return b.sym(n, std::string("builtins.") + n); };
  auto *toInt = b.call(bi("int"), {b.load("x")});
  auto *toFloat = b.call(bi("float"), {b.load("i")});
  auto *toBool = b.call(bi("bool"), {b.load("x")});
  auto *absI = b.call(bi("abs"), {b.load("i")});
  auto *absB = b.call(bi("abs"), {b.load("p")});
  auto *absL = b.call(bi("abs"), {b.cint(-3)});
  auto *mn = b.call(bi("min"), {b.load("i"), b.cint(4)});
  auto *mx = b.call(bi("max"), {b.load("i"), b.load("x"), b.cfloat(0.5)});
  auto *mt = b.call(bi("max"), {b.tuple({b.load("i"), b.cint(1)})});
  auto *ml = b.call(bi("min"), {b.cint(1), b.cint(2)});
  auto *r3 = b.call(bi("range"), {b.cint(0), b.load("i"), b.cint(2)});
  b.ret();
  typeChecked(*b.fn, {types::float32(), types::int32(), types::boolean()}, nullptr);
  EXPECT_EQ(toInt->type, types::int64());
  EXPECT_EQ(toInt->builtin, BuiltinId::Int);
  EXPECT_EQ(toFloat->type, types::float64());
  EXPECT_EQ(toBool->type, types::boolean());
  EXPECT_EQ(absI->type, types::int32());
  EXPECT_EQ(absI->builtin, BuiltinId::Abs);
  EXPECT_EQ(absB->type, types::int64());
  EXPECT_EQ(absL->type, types::int64());
  EXPECT_EQ(mn->type, types::int32());
  EXPECT_EQ(mn->builtin, BuiltinId::Min);
  EXPECT_EQ(mx->type, types::float64()); // int32 with float32 → float64
  EXPECT_EQ(mt->type, types::int64());   // the tuple's elements are concretized
  EXPECT_EQ(ml->type, types::int64());
  EXPECT_EQ(r3->type, types::range());
}

TEST(Typing, GlobalsAreTypedBySnapshot) {
  // A Python float, a NumPy float32 scalar and a tuple, frozen; x * SCALE; x * HALF
  auto fn = typedIR(R"(function k(x) kernel
bb0:
  %0 = Global SCALE [const 2.0]
  %1 = Global HALF [const float32 0.5]
  %2 = Global DIMS [const (2, 1.0)]
  %3 = LoadLocal x
  %4 = BinOp * %3, %0
  %5 = LoadLocal x
  %6 = BinOp * %5, %1
  Return
)",
                    {types::float32()});
  EXPECT_EQ(typeOf(*fn, 0), types::weakFloat());
  EXPECT_EQ(typeOf(*fn, 1), types::float32());
  EXPECT_EQ(typeOf(*fn, 2), types::tuple({types::int64(), types::float64()}));
  EXPECT_EQ(typeOf(*fn, 4), types::float32());
  EXPECT_EQ(typeOf(*fn, 6), types::float32());

  auto c = typedIR(R"(function k(x) kernel
bb0:
  %0 = Global S [const float64 0.5]
  %1 = LoadLocal x
  %2 = BinOp * %1, %0
  Return
)",
                   {types::float32()});
  EXPECT_EQ(typeOf(*c, 2), types::float64());
}

namespace {

/// A resolver that "specializes" device functions by returning a stub typed with a
/// configured return type, recording the requests.
class FakeResolver : public CallResolver {
public:
  const Type *returns = types::float32();
  std::vector<std::pair<int, std::vector<const Type *>>> requests;
  std::vector<std::unique_ptr<Function>> made;
  Function *specializeCallee(int id, const std::vector<const Type *> &args, const std::string &file,
                             const SourceLoc &loc) override {
    requests.push_back({id, args});
    auto f = std::make_unique<Function>();
    f->name = "helper";
    f->kind = FunctionKind::Device;
    f->argTypes = args;
    f->returnType = returns;
    made.push_back(std::move(f));
    return made.back().get();
  }
};

} // namespace

TEST(Typing, DeviceFunctionCallsGoThroughTheResolver) {
  // r = helper(x, 3)
  FakeResolver r;
  auto fn = typedIR(R"(function k(x) kernel
bb0:
  %0 = Global helper [device function helper #7]
  %1 = LoadLocal x
  %2 = Const 3
  %3 = Call %0(%1, %2)
  StoreLocal r, %3
  Return
)",
                    {types::int16()}, &r);
  ASSERT_FALSE(r.requests.empty());
  EXPECT_EQ(r.requests.back().first, 7);
  // The int constant keeps its value (Numba's IntegerLiteral): the callee sees Literal[int](3).
  EXPECT_EQ(r.requests.back().second,
            (std::vector<const Type *>{types::int16(), types::intLiteral(3)}));
  EXPECT_EQ(types::intLiteral(3)->str(), "Literal[int](3)");
  EXPECT_EQ(typeOf(*fn, 3), types::float32());
  EXPECT_EQ(cast<CallInstr>(value(*fn, 3))->calleeFunction, r.made.back().get());
  EXPECT_EQ(var(*fn, "r").type, types::float32());
  EXPECT_EQ(typeOf(*fn, 0), types::functionRef(7, "helper"));
}

TEST(Typing, DeviceFunctionReturnTypes) {
  // def f(a): if a > 0: return a + 1  else: return 2.5     (a int32) → float64
  auto f = typedIR(R"(function f(a) device
bb0:
  %0 = LoadLocal a
  %1 = Const 0
  %2 = Compare > %0, %1
  Branch %2, bb1, bb2
bb1:
  %4 = LoadLocal a
  %5 = Const 1
  %6 = BinOp + %4, %5
  Return %6
bb2:
  %8 = Const 2.5
  Return %8
)",
                   {types::int32()});
  EXPECT_EQ(f->returnType, types::float64());

  auto one = typedIR("function g() device\nbb0:\n  %0 = Const 1\n  Return %0\n", {});
  EXPECT_EQ(one->returnType, types::int64());

  auto f32 = typedIR(R"(function h(x) device
bb0:
  %0 = LoadLocal x
  %1 = Const 2.0
  %2 = BinOp * %0, %1
  Return %2
)",
                     {types::float32()});
  EXPECT_EQ(f32->returnType, types::float32());

  auto none = typedIR("function v(x) device\nbb0:\n  Return\n", {types::float32()});
  EXPECT_EQ(none->returnType, types::void_());
}

// ---- errors ----

TEST(TypingErrors, ArgumentCount) {
  expectError(kSaxpy, {types::float32()}, DiagCode::ArgumentCount, {"saxpy", "4", "1"});
}

TEST(TypingErrors, CannotUnifyNamesVariableAndTypes) {
  // Values that meet where the variable is read (after an if; around a loop) must unify; a
  // variable assigned again with no read between is a new version (ir/SplitVariables.h).
  expectError(R"(function k(c, a) kernel
bb0:
  %0 = LoadLocal c
  %1 = Truth %0
  Branch %1, bb1, bb2
bb1:
  %3 = LoadLocal a
  StoreLocal v, %3
  Jump bb3
bb2:
  %6 = Const 1.0                                ; line 9
  StoreLocal v, %6                              ; line 9
  Jump bb3
bb3:
  %9 = LoadLocal v
  Return
)",
              {types::int64(), f32a()}, DiagCode::CannotUnify,
              {"'v'", "array(float32, 1d, C)", "Literal[float]"}, 9);

  expectError(R"(function k(n) kernel
bb0:
  %0 = Const 1
  %1 = Const 2
  %2 = BuildTuple (%0, %1)
  StoreLocal p, %2
  Jump bb1
bb1:
  %5 = LoadLocal p
  %6 = LoadLocal n
  %7 = Truth %6
  Branch %7, bb2, bb3
bb2:
  %9 = Const 1
  %10 = BuildTuple (%9)
  StoreLocal p, %10
  Jump bb1
bb3:
  Return
)",
              {types::int64()}, DiagCode::CannotUnify,
              {"UniTuple(int64 x 2)", "UniTuple(int64 x 1)"});
}

TEST(TypingErrors, OperatorTypesNameBothOperands) {
  FnBuilder b("k", {"a", "x"});
  b.line = 5;
  b.bin(BinaryOp::Add, b.load("a"), b.load("x"));
  b.ret();
  expectError(*b.fn, {f32a(), types::float32()}, DiagCode::OperatorTypes,
              {"+", "array(float32, 1d, C)", "float32"}, 5);

  FnBuilder f("k", {"x"});
  f.bin(BinaryOp::And, f.load("x"), f.cint(1));
  f.ret();
  expectError(*f.fn, {types::float64()}, DiagCode::OperatorTypes, {"&", "float64", "Literal[int]"});

  FnBuilder u("k", {"i", "j"});
  u.bin(BinaryOp::Or, u.load("i"), u.load("j"));
  u.ret();
  expectError(*u.fn, {types::int64(), types::uint64()}, DiagCode::OperatorTypes,
              {"|", "int64", "uint64"});

  FnBuilder m("k", {"x"});
  m.bin(BinaryOp::MatMul, m.load("x"), m.load("x"));
  m.ret();
  expectError(*m.fn, {types::float64()}, DiagCode::OperatorTypes, {"@"});

  FnBuilder c("k", {"z"});
  c.cmp(CmpOp::Lt, c.load("z"), c.cint(1));
  c.ret();
  expectError(*c.fn, {types::complex64()}, DiagCode::OperatorTypes, {"<", "complex64"});

  FnBuilder n("k", {"x"});
  n.unary(UnaryOpKind::Invert, n.load("x"));
  n.ret();
  expectError(*n.fn, {types::float32()}, DiagCode::UnaryTypes, {"~", "float32"});
}

TEST(TypingErrors, UnboundLocal) {
  expectError(R"(function k(x) kernel
bb0:
  %0 = LoadLocal never                          ; line 4
  %1 = LoadLocal x                              ; line 4
  %2 = BinOp + %0, %1                           ; line 4
  Return
)",
              {types::int64()}, DiagCode::UnboundLocal, {"'never'"}, 4);
}

TEST(TypingErrors, KernelReturnsValue) {
  expectError(R"(function k(x) kernel
bb0:
  %0 = LoadLocal x                              ; line 6
  Return %0                                     ; line 6
)",
              {types::int32()}, DiagCode::KernelReturnsValue, {"int32"}, 6);
}

TEST(TypingErrors, DeviceReturnsValueAndNone) {
  expectError(R"(function f(x) device
bb0:
  %0 = LoadLocal x
  %1 = Const 0
  %2 = Compare > %0, %1
  Branch %2, bb1, bb2
bb1:
  %4 = LoadLocal x
  Return %4
bb2:
  Return
)",
              {types::int32()}, DiagCode::CannotUnify, {"int32", "none"});
}

TEST(TypingErrors, Globals) {
  expectError(R"(function k() kernel
bb0:
  %0 = Global undefined_thing [missing]         ; line 3
  Return
)",
              {}, DiagCode::UndefinedName, {"undefined_thing"}, 3);
  expectError("function k() kernel\nbb0:\n  %0 = Global df [unsupported DataFrame]\n  Return\n", {},
              DiagCode::UntypedGlobal, {"df", "DataFrame"});
  expectError("function k() kernel\nbb0:\n  %0 = Const <bytes>\n  Return\n", {},
              DiagCode::UnsupportedConstant, {"bytes"});
}

TEST(TypingErrors, UndefinedNamesSuggestTheClosestDefinedOne) {
  // The bindings give a missing global the closest defined name (ir::closestName over the
  // function's locals, globals and builtins); typing words it.
  FnBuilder f("k", {"out"});
  GlobalValue missing = GlobalValue::missing();
  missing.path = "value";
  f.setItem(f.load("out"), f.cint(0), f.global("valeu", missing));
  f.ret();
  expectError(*f.fn, {f32a()}, DiagCode::UndefinedName,
              {"NameError: name 'valeu' is not defined; did you mean 'value'?"});
  FnBuilder g("k", {"out"});
  g.setItem(g.load("out"), g.cint(0), g.global("zzz", GlobalValue::missing()));
  g.ret();
  try {
    inferTypes(*g.fn, {f32a()}, nullptr);
    ADD_FAILURE() << "typed";
  } catch (const CompileError &e) {
    EXPECT_EQ(e.message(), "NameError: name 'zzz' is not defined"); // nothing close: no hint
    EXPECT_EQ(e.kind(), DiagKind::Typing);
  }
}

TEST(TypingErrors, UnknownAttributesOfKnownModulesSuggestTheClosest) {
  FnBuilder g("k", {});
  g.call(g.attr(g.sym("cuda", "cuda"), "grdi"), {g.cint(1)});
  g.ret();
  expectError(*g.fn, {}, DiagCode::UnsupportedCall,
              {"call to cuda.grdi is not supported; did you mean 'cuda.grid'?"});

  FnBuilder s("k", {});
  s.call(s.attr(s.sym("cuda", "cuda"), "syncthread"), {});
  s.ret();
  expectError(*s.fn, {}, DiagCode::UnsupportedCall, {"did you mean 'cuda.syncthreads'?"});

  FnBuilder m("k", {"x"});
  m.call(m.attr(m.sym("math", "math"), "sqr"), {m.load("x")});
  m.ret();
  expectError(*m.fn, {types::float64()}, DiagCode::UnsupportedCall,
              {"call to math.sqr is not supported; did you mean 'math.sqrt'?"});

  FnBuilder a("k", {});
  a.attr(a.attr(a.sym("cuda", "cuda"), "threadidx"), "x");
  a.ret();
  expectError(*a.fn, {}, DiagCode::UnsupportedAttribute,
              {"attribute 'x' of cuda.threadidx is not supported; did you mean "
               "'cuda.threadIdx'?"});

  FnBuilder l("k", {});
  l.call(l.attr(l.attr(l.sym("cuda", "cuda"), "atomic"), "ad"), {});
  l.ret();
  expectError(*l.fn, {}, DiagCode::UnsupportedAttribute,
              {"attribute 'ad' of cuda.atomic is not supported; did you mean 'cuda.atomic.add'?"});

  // Nothing close: the message stays as it was.
  FnBuilder n("k", {"x"});
  n.call(n.attr(n.sym("math", "math"), "factorial"), {n.load("x")});
  n.ret();
  try {
    inferTypes(*n.fn, {types::int64()}, nullptr);
    ADD_FAILURE() << "typed";
  } catch (const CompileError &e) {
    EXPECT_EQ(e.message(), "call to math.factorial is not supported");
  }
}

TEST(TypingErrors, PlainPythonFunctionFailsOnlyWhenCalled) {
  auto ok = parseIR(R"(function k() kernel
bb0:
  %0 = Global helper [python function helper]
  StoreLocal f, %0
  Return
)");
  EXPECT_NO_THROW(typeChecked(*ok, {}));

  expectError(R"(function k(x) kernel
bb0:
  %0 = Global helper [python function helper]
  %1 = LoadLocal x                              ; line 8
  %2 = Call %0(%1)                              ; line 8
  Return
)",
              {types::int64()}, DiagCode::UndecoratedFunction, {"'helper'"}, 8);
}

TEST(Typing, KernelCalledFromDeviceCodeGoesThroughTheResolver) {
  // numba-cuda compiles a kernel called from device code as a device function.
  FakeResolver r;
  r.returns = types::none();
  auto fn = typedIR(R"(function k() kernel
bb0:
  %0 = Global other [kernel other #2]
  %1 = Call %0()
  Return
)",
                    {}, &r);
  ASSERT_EQ(r.requests.size(), 1u);
  EXPECT_EQ(r.requests[0].first, 2);
  EXPECT_TRUE(r.requests[0].second.empty());
}

TEST(TypingErrors, Calls) {
  FnBuilder f("k", {"x"});
  auto *math = f.sym("math", "math");
  f.call(f.attr(math, "factorial"), {f.load("x")});
  f.ret();
  expectError(*f.fn, {types::int64()}, DiagCode::UnsupportedCall, {"math.factorial"});

  FnBuilder kw("k", {"n"});
  kw.call(kw.sym("range", "builtins.range"), {kw.load("n"), kw.cint(2)}, {"step"});
  kw.ret();
  expectError(*kw.fn, {types::int64()}, DiagCode::CallArgs, {"range", "step=Literal[int]"});

  FnBuilder rf("k", {"x"});
  rf.call(rf.sym("range", "builtins.range"), {rf.load("x")});
  rf.ret();
  expectError(*rf.fn, {types::float32()}, DiagCode::CallArgs, {"range", "float32"});

  FnBuilder g("k", {"n"});
  g.call(g.attr(g.sym("cuda", "cuda"), "grid"), {g.load("n")});
  g.ret();
  expectError(*g.fn, {types::int64()}, DiagCode::CallArgs, {"cuda.grid", "int64"});

  FnBuilder g4("k", {});
  g4.grid(4);
  g4.ret();
  expectError(*g4.fn, {}, DiagCode::CallArgs, {"cuda.grid"});

  FnBuilder ln("k", {"x"});
  ln.call(ln.sym("len", "builtins.len"), {ln.load("x")});
  ln.ret();
  expectError(*ln.fn, {types::int32()}, DiagCode::CallArgs, {"len", "int32"});

  FnBuilder v("k", {"x"});
  v.call(v.load("x"), {});
  v.ret();
  expectError(*v.fn, {types::int32()}, DiagCode::UnsupportedCall, {"int32"});

  FnBuilder mm("k", {"x"});
  mm.call(mm.sym("min", "builtins.min"), {mm.load("x")});
  mm.ret();
  expectError(*mm.fn, {types::int32()}, DiagCode::CallArgs, {"min", "int32"});
}

TEST(TypingErrors, Attributes) {
  FnBuilder a("k", {"x"});
  a.attr(a.load("x"), "flags");
  a.ret();
  expectError(*a.fn, {f32a()}, DiagCode::UnsupportedAttribute, {"flags", "array(float32, 1d, C)"});

  FnBuilder t("k", {});
  t.attr(t.attr(t.sym("cuda", "cuda"), "threadIdx"), "w");
  t.ret();
  expectError(*t.fn, {}, DiagCode::UnsupportedAttribute, {"'w'", "cuda.threadIdx"});

  FnBuilder s("k", {"x"});
  s.attr(s.load("x"), "hex"); // .real/.imag/.conjugate exist on numbers; .hex does not
  s.ret();
  expectError(*s.fn, {types::float32()}, DiagCode::UnsupportedAttribute, {"hex", "float32"});
}

TEST(TypingErrors, Indexing) {
  auto *a2 = types::array(types::float32(), 2, Layout::C);
  FnBuilder many("k", {"a", "i"});
  many.item(many.load("a"), many.tuple({many.load("i"), many.load("i"), many.load("i")}));
  many.ret();
  expectError(*many.fn, {a2, types::int64()}, DiagCode::IndexTypes,
              {"array(float32, 2d, C)", "UniTuple(int64 x 3)"});

  // A row view takes a scalar or an array of no more dimensions (TypingSlicesTest.cpp).
  FnBuilder row("k", {"a", "i", "b"});
  row.setItem(row.load("a"), row.load("i"), row.load("b"));
  row.ret();
  expectError(*row.fn, {a2, types::int64(), a2}, DiagCode::SetItemTypes,
              {"array(float32, 2d, C)", "int64"});

  FnBuilder bidx("k", {"a", "p"});
  bidx.item(bidx.load("a"), bidx.load("p"));
  bidx.ret();
  expectError(*bidx.fn, {f32a(), types::boolean()}, DiagCode::IndexTypes, {"bool"});

  FnBuilder fidx("k", {"a", "x"});
  fidx.item(fidx.load("a"), fidx.load("x"));
  fidx.ret();
  expectError(*fidx.fn, {f32a(), types::float64()}, DiagCode::IndexTypes, {"float64"});

  FnBuilder tup("k", {"a"});
  tup.item(tup.attr(tup.load("a"), "shape"), tup.cint(2));
  tup.ret();
  expectError(*tup.fn, {a2}, DiagCode::IndexTypes, {"UniTuple(int64 x 2)", "2"});

  FnBuilder tdyn("k", {"a", "i"});
  tdyn.item(tdyn.attr(tdyn.load("a"), "shape"), tdyn.load("i"));
  tdyn.ret();
  // A run-time int index into a UniTuple types (IndexError at run time); a float one does not.
  expectError(*tdyn.fn, {a2, types::float64()}, DiagCode::IndexTypes, {"non-constant float64"});

  FnBuilder unpack("k", {"a"});
  unpack.tupleGet(unpack.attr(unpack.load("a"), "shape"), 3);
  unpack.ret();
  expectError(*unpack.fn, {a2}, DiagCode::IndexTypes, {"UniTuple(int64 x 2)"});

  // Slicing a scalar (TypingSlicesTest.cpp has the slice rules).
  FnBuilder sl("k", {"x"});
  sl.item(sl.load("x"), sl.add<BuildSliceInstr>(std::vector<Instr *>{sl.cint(0), sl.cint(2)}));
  sl.ret();
  expectError(*sl.fn, {types::float32()}, DiagCode::IndexTypes, {"float32", "slice<a:b>"});
}

TEST(TypingErrors, SetItem) {
  FnBuilder ro("k", {"a"});
  ro.line = 12;
  ro.setItem(ro.load("a"), ro.cint(0), ro.cfloat(1.0));
  ro.ret();
  expectError(*ro.fn, {types::array(types::float32(), 1, Layout::C, true)}, DiagCode::ReadonlyArray,
              {"readonly array(float32, 1d, C)"}, 12);

  FnBuilder cx("k", {"a", "z"});
  cx.setItem(cx.load("a"), cx.cint(0), cx.load("z"));
  cx.ret();
  expectError(*cx.fn, {f32a(), types::complex64()}, DiagCode::SetItemTypes,
              {"complex64", "array(float32, 1d, C)"});

  FnBuilder ok("k", {"a", "x", "z"});
  ok.setItem(ok.load("a"), ok.cint(0), ok.load("x"));
  ok.setItem(ok.load("a"), ok.cint(1), ok.load("z"));
  ok.ret();
  EXPECT_NO_THROW(
      typeChecked(*ok.fn, {arr1(types::complex128()), types::int8(), types::complex64()}, nullptr));

  FnBuilder tp("k", {"a", "b"});
  tp.setItem(tp.load("a"), tp.cint(0), tp.load("b"));
  tp.ret();
  expectError(*tp.fn, {f32a(), f32a()}, DiagCode::SetItemTypes, {"array(float32, 1d, C)"});
}

TEST(TypingErrors, IterationTruthAndCompare) {
  FnBuilder it("k", {"a"});
  it.add<GetIterInstr>(it.load("a"));
  it.ret();
  expectError(*it.fn, {types::float32()}, DiagCode::NotIterable, {"float32"});

  FnBuilder tr("k", {"a"});
  tr.truth(tr.load("a"));
  tr.ret();
  expectError(*tr.fn, {f32a()}, DiagCode::NoTruthValue, {"array(float32, 1d, C)"});

  FnBuilder br("k", {"a"});
  Block *t = br.newBlock();
  br.branch(br.load("a"), t, t);
  br.at(t);
  br.ret();
  expectError(*br.fn, {f32a()}, DiagCode::NoTruthValue, {"array(float32, 1d, C)"});
  FnBuilder bi("k", {"n"});
  Block *t2 = bi.newBlock();
  bi.branch(bi.load("n"), t2, t2);
  bi.at(t2);
  bi.ret();
  // Typing accepts a branch on an int (codegen tests it as Truth would); verify does not,
  // since the IR's branch conditions are bool (VerifyTest.cpp, BranchConditionsAreBool).
  EXPECT_NO_THROW(inferTypes(*bi.fn, {types::int32()}, nullptr));

  FnBuilder in("k", {"x", "a"});
  in.cmp(CmpOp::In, in.load("x"), in.load("a"));
  in.ret();
  expectError(*in.fn, {types::float32(), f32a()}, DiagCode::UnsupportedConstruct, {"in"});

  FnBuilder is("k", {"x"});
  is.cmp(CmpOp::Is, is.load("x"), is.cint(1));
  is.ret();
  expectError(*is.fn, {types::float32()}, DiagCode::UnsupportedConstruct, {"is", "float32"});
}

TEST(Typing, FewerIndicesGiveAView) {
  // out[y][x] = v: out[y] is a 1-d view; C stays C, F and A become A; readonly is kept.
  FnBuilder b("k", {"a", "i", "j"});
  Instr *row = b.item(b.load("a"), b.load("i"));
  b.setItem(row, b.load("j"), b.cfloat(2.0));
  b.ret();
  auto *c3 = types::array(types::float64(), 3, Layout::C);
  typeChecked(*b.fn, {types::array(types::float64(), 2, Layout::C), types::int64(), types::int32()},
              nullptr);
  EXPECT_EQ(row->type, types::array(types::float64(), 1, Layout::C));

  FnBuilder f("k", {"a", "i"});
  Instr *plane = f.item(f.load("a"), f.load("i"));
  Instr *line = f.item(f.load("a"), f.tuple({f.load("i"), f.load("i")}));
  f.ret();
  typeChecked(*f.fn, {c3, types::int64()}, nullptr);
  EXPECT_EQ(plane->type, types::array(types::float64(), 2, Layout::C));
  EXPECT_EQ(line->type, types::array(types::float64(), 1, Layout::C));

  FnBuilder g("k", {"a", "i"});
  Instr *col = g.item(g.load("a"), g.load("i"));
  g.ret();
  typeChecked(*g.fn, {types::array(types::float32(), 2, Layout::F, true), types::int64()}, nullptr);
  EXPECT_EQ(col->type, types::array(types::float32(), 1, Layout::A, true));
}

TEST(Typing, IteratingArraysYieldsElementsOrRows) {
  // for v in a: ...; for row in m: ...
  auto *m = types::array(types::int32(), 2, Layout::F);
  auto fn = typedIR(R"(function k(a, m) kernel
bb0:
  %0 = LoadLocal a
  %1 = GetIter %0
  %2 = LoadLocal m
  %3 = GetIter %2
  Return
)",
                    {f32a(), m});
  EXPECT_EQ(cast<IteratorType>(typeOf(*fn, 1))->yieldType(), types::float32());
  EXPECT_EQ(cast<IteratorType>(typeOf(*fn, 3))->yieldType(),
            types::array(types::int32(), 1, Layout::A));
}

TEST(Typing, GlobalDeviceArraysAreWritableWithTheLayoutOfTheirStrides) {
  // c = C[0, 1]; F[1, 0] = c; S[2] = c; z = Z[()]   (device arrays captured by reference)
  auto fn = typedIR(R"(function k() kernel
bb0:
  %0 = Global C [device array float64(2, 3) strides (24, 8) at 4096]
  %1 = Global F [device array float64(2, 3) strides (8, 16) at 8192]
  %2 = Global S [device array int32(5,) strides (-8,) at 12288]
  %3 = Global Z [device array float32() strides () at 16384]
  %4 = Const 0
  %5 = Const 1
  %6 = BuildTuple (%4, %5)
  %7 = GetItem %0[%6]
  %8 = BuildTuple (%5, %4)
  SetItem %1[%8] = %7
  %10 = Const 2
  SetItem %2[%10] = %7
  %12 = BuildTuple ()
  %13 = GetItem %3[%12]
  Return
)",
                    {});
  EXPECT_EQ(typeOf(*fn, 0), types::array(types::float64(), 2, Layout::C));
  EXPECT_EQ(typeOf(*fn, 1), types::array(types::float64(), 2, Layout::F));
  EXPECT_EQ(typeOf(*fn, 2), types::array(types::int32(), 1, Layout::A));
  EXPECT_EQ(typeOf(*fn, 3), types::array(types::float32(), 0, Layout::C));
  EXPECT_EQ(typeOf(*fn, 13), types::float32());
}
