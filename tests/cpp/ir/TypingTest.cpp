// Type inference of hand-built functions: kernels, loops, weak literals, builtins, calls.
#include "IrBuilder.h"

#include <gtest/gtest.h>

#include <functional>

using namespace ptxjit::ir;
using ptxjit::ir::test::arr1;
using ptxjit::ir::test::FnBuilder;

namespace {

const ArrayType *f32a() { return arr1(types::float32()); }

/// def saxpy(a, x, y, out):
///     i = cuda.grid(1)
///     if i < x.size:
///         out[i] = a * x[i] + y[i]
struct Saxpy {
  FnBuilder b{"saxpy", {"a", "x", "y", "out"}};
  CallInstr *grid;
  Instr *size, *cmp, *xi, *mul, *add, *set;
  Saxpy() {
    b.line = 2;
    grid = b.grid(1);
    b.store("i", grid);
    b.line = 3;
    size = b.attr(b.load("x"), "size");
    cmp = b.cmp(CmpOp::Lt, b.load("i"), size);
    Block *body = b.newBlock(), *exit = b.newBlock();
    b.branch(cmp, body, exit);
    b.at(body);
    b.line = 4;
    xi = b.item(b.load("x"), b.load("i"));
    mul = b.bin(BinaryOp::Mul, b.load("a"), xi);
    add = b.bin(BinaryOp::Add, mul, b.item(b.load("y"), b.load("i")));
    set = b.setItem(b.load("out"), b.load("i"), add);
    b.jump(exit);
    b.at(exit);
    b.ret(b.cnone());
  }
};

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

} // namespace

TEST(Typing, SaxpyFloat32) {
  Saxpy s;
  inferTypes(*s.b.fn, {types::float32(), f32a(), f32a(), f32a()}, nullptr);
  Function &fn = *s.b.fn;
  EXPECT_EQ(s.grid->type, types::int64());
  EXPECT_EQ(s.grid->builtin, BuiltinId::CudaGrid);
  EXPECT_EQ(s.size->type, types::int64());
  EXPECT_EQ(s.size->builtin, BuiltinId::ArraySize);
  EXPECT_EQ(s.cmp->type, types::boolean());
  EXPECT_EQ(s.xi->type, types::float32());
  EXPECT_EQ(s.mul->type, types::float32());
  EXPECT_EQ(s.add->type, types::float32());
  EXPECT_EQ(s.set->type, types::void_());
  EXPECT_EQ(s.b.var("i").type, types::int64());
  EXPECT_EQ(s.b.var("x").type, f32a());
  EXPECT_TRUE(s.b.var("x").isArgument);
  EXPECT_EQ(fn.returnType, types::void_());
  EXPECT_EQ(fn.argTypes.size(), 4u);
  for (auto &blk : fn.blocks)
    for (auto &i : blk->instrs)
      EXPECT_NE(i->type, nullptr) << opcodeName(i->op());
}

TEST(Typing, SaxpyMixedPrecisionPromotes) {
  Saxpy s;
  inferTypes(*s.b.fn, {types::float64(), f32a(), arr1(types::int32()), arr1(types::float64())},
             nullptr);
  EXPECT_EQ(s.mul->type, types::float64());
  EXPECT_EQ(s.add->type, types::float64());
}

TEST(Typing, RetypingIsFromScratch) {
  Saxpy s;
  inferTypes(
      *s.b.fn,
      {types::float64(), arr1(types::float64()), arr1(types::float64()), arr1(types::float64())},
      nullptr);
  EXPECT_EQ(s.add->type, types::float64());
  inferTypes(*s.b.fn, {types::float32(), f32a(), f32a(), f32a()}, nullptr);
  EXPECT_EQ(s.add->type, types::float32());
}

namespace {

/// def k(x, out):
///     acc = <init>
///     for i in range(len(x)):
///         acc += x[i]
///     out[0] = acc
struct SumLoop {
  FnBuilder b{"sumk", {"x", "out"}};
  Instr *init, *accAdd, *rng, *iter, *next;
  explicit SumLoop(const std::function<Instr *(FnBuilder &)> &makeInit) {
    init = makeInit(b);
    b.store("acc", init);
    auto *len = b.call(b.sym("len", "builtins.len"), {b.load("x")});
    rng = b.call(b.sym("range", "builtins.range"), {len});
    iter = b.add<GetIterInstr>(rng);
    b.store("$stack0", iter);
    Block *head = b.newBlock(), *body = b.newBlock(), *exit = b.newBlock();
    b.jump(head);
    b.at(head);
    b.branch(b.add<IterValidInstr>(b.load("$stack0")), body, exit);
    b.at(body);
    next = b.add<IterNextInstr>(b.load("$stack0"));
    b.store("i", next);
    accAdd = b.bin(BinaryOp::Add, b.load("acc"), b.item(b.load("x"), b.load("i")), true);
    b.store("acc", accAdd);
    b.jump(head);
    b.at(exit);
    b.setItem(b.load("out"), b.cint(0), b.load("acc"));
    b.ret();
  }
};

Instr *zeroFloat(FnBuilder &b) { return b.cfloat(0.0); }
Instr *zeroInt(FnBuilder &b) { return b.cint(0); }

} // namespace

TEST(Typing, LoopAccumulatorFromFloatLiteralAdoptsFloat32) {
  SumLoop l(zeroFloat);
  inferTypes(*l.b.fn, {f32a(), f32a()}, nullptr);
  EXPECT_EQ(l.b.var("acc").type, types::float32());
  EXPECT_EQ(l.accAdd->type, types::float32());
  EXPECT_EQ(l.b.var("i").type, types::int64());
  EXPECT_EQ(l.rng->type, types::range());
  EXPECT_EQ(l.rng->builtin, BuiltinId::Range);
  EXPECT_EQ(l.iter->type, types::iterator(IterKind::Range, types::int64(), {types::range()}));
  EXPECT_EQ(l.b.var("$stack0").type, l.iter->type);
  EXPECT_EQ(l.next->type, types::int64());
  // The literal itself stays weak; the variable does not.
  EXPECT_EQ(l.init->type, types::weakFloat());
}

TEST(Typing, LoopAccumulatorFloat64) {
  SumLoop l(zeroFloat);
  inferTypes(*l.b.fn, {arr1(types::float64()), arr1(types::float64())}, nullptr);
  EXPECT_EQ(l.b.var("acc").type, types::float64());
}

TEST(Typing, LoopAccumulatorFromIntLiteral) {
  SumLoop f(zeroInt);
  inferTypes(*f.b.fn, {f32a(), f32a()}, nullptr);
  EXPECT_EQ(f.b.var("acc").type, types::float32());

  SumLoop i(zeroInt);
  inferTypes(*i.b.fn, {arr1(types::int32()), arr1(types::int32())}, nullptr);
  EXPECT_EQ(i.b.var("acc").type, types::int32());
  EXPECT_EQ(i.accAdd->type, types::int32());

  // An int literal accumulating float32 and int64 values: float64 (NumPy's int64+float32).
  SumLoop m(zeroInt);
  inferTypes(*m.b.fn, {f32a(), arr1(types::int64())}, nullptr);
  EXPECT_EQ(m.b.var("acc").type, types::float32());
}

TEST(Typing, LiteralOnlyVariablesGetDefaultTypes) {
  // n = 0; n += 1; f = 1.5; c = 2j; b = True
  FnBuilder b("k", {});
  b.store("n", b.cint(0));
  auto *inc = b.bin(BinaryOp::Add, b.load("n"), b.cint(1), true);
  b.store("n", inc);
  b.store("f", b.cfloat(1.5));
  b.store("c", b.add<ConstInstr>(ConstValue::complexNum({0, 2})));
  b.store("b", b.add<ConstInstr>(ConstValue::boolean(true)));
  auto *lit = b.bin(BinaryOp::Add, b.cint(1), b.cint(2));
  b.store("s", lit);
  b.ret();
  inferTypes(*b.fn, {}, nullptr);
  EXPECT_EQ(b.var("n").type, types::int64());
  EXPECT_EQ(inc->type, types::int64()); // retyped after the variable became concrete
  EXPECT_EQ(b.var("f").type, types::float64());
  EXPECT_EQ(b.var("c").type, types::complex128());
  EXPECT_EQ(b.var("b").type, types::boolean());
  EXPECT_EQ(lit->type, types::weakInt());
  EXPECT_EQ(b.var("s").type, types::int64());
}

TEST(Typing, ConcretizedVariablesWidenTheirUses) {
  // n = 0; m = n + i   with i int32: n is int64, so m is int64 (not int32).
  FnBuilder b("k", {"i"});
  b.store("n", b.cint(0));
  auto *sum = b.bin(BinaryOp::Add, b.load("n"), b.load("i"));
  b.store("m", sum);
  b.ret();
  inferTypes(*b.fn, {types::int32()}, nullptr);
  EXPECT_EQ(b.var("n").type, types::int64());
  EXPECT_EQ(sum->type, types::int64());
  EXPECT_EQ(b.var("m").type, types::int64());
}

TEST(Typing, VariablesUnifyAcrossBranches) {
  // if c: v = i  else: v = x      (i int32, x float32) → float64
  FnBuilder b("k", {"c", "i", "x", "a"});
  Block *t = b.newBlock(), *f = b.newBlock(), *j = b.newBlock();
  b.branch(b.truth(b.load("c")), t, f);
  b.at(t);
  b.store("v", b.load("i"));
  b.store("arr", b.load("a"));
  b.jump(j);
  b.at(f);
  b.store("v", b.load("x"));
  b.store("arr", b.arg(3));
  b.jump(j);
  b.at(j);
  b.ret();
  inferTypes(*b.fn,
             {types::int64(), types::int32(), types::float32(), arr1(types::float32(), Layout::C)},
             nullptr);
  EXPECT_EQ(b.var("v").type, types::float64());

  // Arrays of different layouts unify to layout A.
  FnBuilder b2("k2", {"a", "b"});
  b2.store("v", b2.load("a"));
  b2.store("v", b2.load("b"));
  b2.store("t", b2.tuple({b2.load("a"), b2.cint(1)}));
  b2.store("t", b2.tuple({b2.load("b"), b2.cfloat(1.0)}));
  b2.ret();
  inferTypes(*b2.fn, {arr1(types::float32(), Layout::C), arr1(types::float32(), Layout::A)},
             nullptr);
  EXPECT_EQ(b2.var("v").type, arr1(types::float32(), Layout::A));
  EXPECT_EQ(b2.var("t").type, types::tuple({arr1(types::float32(), Layout::A), types::float64()}));
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
  inferTypes(*b.fn, {types::float32(), types::int32(), types::uint8()}, nullptr);
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
  inferTypes(*b.fn,
             {types::boolean(), types::boolean(), types::int16(), types::int64(), types::float32()},
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
  FnBuilder b("k", {});
  auto *cuda = b.sym("cuda", "cuda");
  auto *tid = b.attr(cuda, "threadIdx");
  auto *tx = b.attr(tid, "x");
  auto *bdz = b.attr(b.attr(cuda, "blockDim"), "z");
  auto *e = b.bin(BinaryOp::Add, tx, b.bin(BinaryOp::Mul, bdz, b.cint(2)));
  b.ret();
  inferTypes(*b.fn, {}, nullptr);
  EXPECT_EQ(tid->type, types::symbol("cuda.threadIdx"));
  EXPECT_EQ(tid->builtin, BuiltinId::None);
  // int64 (Numba: int32 attributes, but every integer operation widened to int64).
  EXPECT_EQ(tx->type, types::int64());
  EXPECT_EQ(tx->builtin, BuiltinId::ThreadIdxX);
  EXPECT_EQ(bdz->builtin, BuiltinId::BlockDimZ);
  EXPECT_EQ(e->type, types::int64());
}

TEST(Typing, GridTuplesShapesAndUnpacking) {
  // i, j = cuda.grid(2); h, w = a.shape; v = a[i, j]; last = a.shape[-1]; n = a.ndim
  FnBuilder b("k", {"a"});
  auto *g = b.grid(2);
  b.store("i", b.tupleGet(g, 0));
  b.store("j", b.tupleGet(g, 1));
  auto *shape = b.attr(b.load("a"), "shape");
  b.store("h", b.tupleGet(shape, 0));
  auto *idx = b.tuple({b.load("i"), b.load("j")});
  auto *v = b.item(b.load("a"), idx);
  auto *last = b.item(shape, b.cint(-1));
  auto *nd = b.attr(b.load("a"), "ndim");
  auto *gs = b.call(b.attr(b.sym("cuda", "cuda"), "gridsize"), {b.cint(3)});
  auto *ln = b.call(b.sym("len", "builtins.len"), {shape});
  b.ret();
  auto *a2 = types::array(types::float64(), 2, Layout::F);
  inferTypes(*b.fn, {a2}, nullptr);
  EXPECT_EQ(g->type, types::tuple({types::int64(), types::int64()}));
  EXPECT_EQ(g->type->str(), "UniTuple(int64 x 2)");
  EXPECT_EQ(b.var("i").type, types::int64());
  EXPECT_EQ(shape->type, types::tuple({types::int64(), types::int64()}));
  EXPECT_EQ(shape->builtin, BuiltinId::ArrayShape);
  EXPECT_EQ(idx->type, types::tuple({types::int64(), types::int64()}));
  EXPECT_EQ(v->type, types::float64());
  EXPECT_EQ(last->type, types::int64());
  EXPECT_EQ(nd->type, types::int64());
  EXPECT_EQ(nd->builtin, BuiltinId::ArrayNdim);
  EXPECT_EQ(gs->type->str(), "UniTuple(int64 x 3)");
  EXPECT_EQ(gs->builtin, BuiltinId::CudaGridsize);
  EXPECT_EQ(ln->type, types::int64());
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
  inferTypes(*b.fn, {types::float32(), types::int32(), types::boolean()}, nullptr);
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
  FnBuilder b("k", {"x"});
  auto *py = b.global("SCALE", GlobalValue::makeConstant(ConstValue::floating(2.0)));
  auto *np = b.global("HALF", GlobalValue::makeConstant(ConstValue::floating(0.5), "float32"));
  auto *tup = b.global("DIMS", GlobalValue::makeConstant(ConstValue::tuple(
                                   {ConstValue::integer(2), ConstValue::floating(1)})));
  auto *m = b.bin(BinaryOp::Mul, b.load("x"), py);
  auto *h = b.bin(BinaryOp::Mul, b.load("x"), np);
  b.ret();
  inferTypes(*b.fn, {types::float32()}, nullptr);
  EXPECT_EQ(py->type, types::weakFloat());
  EXPECT_EQ(np->type, types::float32());
  EXPECT_EQ(tup->type, types::tuple({types::int64(), types::float64()}));
  EXPECT_EQ(m->type, types::float32());
  EXPECT_EQ(h->type, types::float32());

  FnBuilder c("k", {"x"});
  auto *np64 = c.global("S", GlobalValue::makeConstant(ConstValue::floating(0.5), "float64"));
  auto *h64 = c.bin(BinaryOp::Mul, c.load("x"), np64);
  c.ret();
  inferTypes(*c.fn, {types::float32()}, nullptr);
  EXPECT_EQ(h64->type, types::float64());
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
  FnBuilder b("k", {"x"});
  auto *h = b.global("helper", GlobalValue::deviceFunction(7, "helper"));
  auto *c = b.call(h, {b.load("x"), b.cint(3)});
  b.store("r", c);
  b.ret();
  FakeResolver r;
  inferTypes(*b.fn, {types::int16()}, &r);
  ASSERT_FALSE(r.requests.empty());
  EXPECT_EQ(r.requests.back().first, 7);
  EXPECT_EQ(r.requests.back().second, (std::vector<const Type *>{types::int16(), types::int64()}));
  EXPECT_EQ(c->type, types::float32());
  EXPECT_EQ(c->calleeFunction, r.made.back().get());
  EXPECT_EQ(b.var("r").type, types::float32());
  EXPECT_EQ(h->type, types::functionRef(7, "helper"));
}

TEST(Typing, DeviceFunctionReturnTypes) {
  // def f(a): if a > 0: return a + 1  else: return 2.5     (a int32) → float64
  FnBuilder b("f", {"a"}, FunctionKind::Device);
  Block *t = b.newBlock(), *e = b.newBlock();
  b.branch(b.cmp(CmpOp::Gt, b.load("a"), b.cint(0)), t, e);
  b.at(t);
  b.ret(b.bin(BinaryOp::Add, b.load("a"), b.cint(1)));
  b.at(e);
  b.ret(b.cfloat(2.5));
  inferTypes(*b.fn, {types::int32()}, nullptr);
  EXPECT_EQ(b.fn->returnType, types::float64());

  FnBuilder one("g", {}, FunctionKind::Device);
  one.ret(one.cint(1));
  inferTypes(*one.fn, {}, nullptr);
  EXPECT_EQ(one.fn->returnType, types::int64());

  FnBuilder f32("h", {"x"}, FunctionKind::Device);
  f32.ret(f32.bin(BinaryOp::Mul, f32.load("x"), f32.cfloat(2.0)));
  inferTypes(*f32.fn, {types::float32()}, nullptr);
  EXPECT_EQ(f32.fn->returnType, types::float32());

  FnBuilder none("v", {"x"}, FunctionKind::Device);
  none.ret();
  inferTypes(*none.fn, {types::float32()}, nullptr);
  EXPECT_EQ(none.fn->returnType, types::void_());
}

// ---- errors ----

TEST(TypingErrors, ArgumentCount) {
  Saxpy s;
  expectError(*s.b.fn, {types::float32()}, DiagCode::ArgumentCount, {"saxpy", "4", "1"});
}

TEST(TypingErrors, CannotUnifyNamesVariableAndTypes) {
  FnBuilder b("k", {"a"});
  b.store("v", b.load("a"));
  b.line = 9;
  b.store("v", b.cfloat(1.0));
  b.ret();
  expectError(*b.fn, {f32a()}, DiagCode::CannotUnify,
              {"'v'", "array(float32, 1d, C)", "Literal[float]"}, 9);

  FnBuilder t("k", {});
  t.store("p", t.tuple({t.cint(1), t.cint(2)}));
  t.store("p", t.tuple({t.cint(1)}));
  t.ret();
  expectError(*t.fn, {}, DiagCode::CannotUnify, {"UniTuple(int64 x 2)", "UniTuple(int64 x 1)"});
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
  FnBuilder b("k", {"x"});
  b.line = 4;
  b.bin(BinaryOp::Add, b.load("never"), b.load("x"));
  b.ret();
  expectError(*b.fn, {types::int64()}, DiagCode::UnboundLocal, {"'never'"}, 4);
}

TEST(TypingErrors, KernelReturnsValue) {
  FnBuilder b("k", {"x"});
  b.line = 6;
  b.ret(b.load("x"));
  expectError(*b.fn, {types::int32()}, DiagCode::KernelReturnsValue, {"int32"}, 6);
}

TEST(TypingErrors, DeviceReturnsValueAndNone) {
  FnBuilder b("f", {"x"}, FunctionKind::Device);
  Block *t = b.newBlock(), *e = b.newBlock();
  b.branch(b.cmp(CmpOp::Gt, b.load("x"), b.cint(0)), t, e);
  b.at(t);
  b.ret(b.load("x"));
  b.at(e);
  b.ret();
  expectError(*b.fn, {types::int32()}, DiagCode::CannotUnify, {"int32", "none"});
}

TEST(TypingErrors, Globals) {
  FnBuilder m("k", {});
  m.line = 3;
  m.global("undefined_thing", GlobalValue::missing());
  m.ret();
  expectError(*m.fn, {}, DiagCode::UndefinedName, {"undefined_thing"}, 3);

  FnBuilder u("k", {});
  u.global("df", GlobalValue::unsupported("DataFrame"));
  u.ret();
  expectError(*u.fn, {}, DiagCode::UnsupportedGlobal, {"df", "DataFrame"});

  FnBuilder c("k", {});
  c.add<ConstInstr>(ConstValue::unsupported("bytes"));
  c.ret();
  expectError(*c.fn, {}, DiagCode::UnsupportedConstant, {"bytes"});
}

TEST(TypingErrors, PlainPythonFunctionFailsOnlyWhenCalled) {
  FnBuilder ok("k", {});
  ok.store("f", ok.global("helper", GlobalValue::pyFunction("helper")));
  ok.ret();
  EXPECT_NO_THROW(inferTypes(*ok.fn, {}, nullptr));

  FnBuilder b("k", {"x"});
  auto *h = b.global("helper", GlobalValue::pyFunction("helper"));
  b.line = 8;
  b.call(h, {b.load("x")});
  b.ret();
  expectError(*b.fn, {types::int64()}, DiagCode::UndecoratedFunction, {"'helper'"}, 8);
}

TEST(TypingErrors, KernelCalledFromDevice) {
  FnBuilder b("k", {});
  b.call(b.global("other", GlobalValue::kernel(2, "other")), {});
  b.ret();
  FakeResolver r;
  expectError(*b.fn, {}, DiagCode::KernelCallFromDevice, {"other"}, -1, &r);
  EXPECT_TRUE(r.requests.empty());
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
  a.attr(a.load("x"), "dtype");
  a.ret();
  expectError(*a.fn, {f32a()}, DiagCode::UnsupportedAttribute, {"dtype", "array(float32, 1d, C)"});

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
  expectError(*tdyn.fn, {a2, types::int64()}, DiagCode::IndexTypes, {"non-constant int64"});

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
      inferTypes(*ok.fn, {arr1(types::complex128()), types::int8(), types::complex64()}, nullptr));

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
  inferTypes(*b.fn, {types::array(types::float64(), 2, Layout::C), types::int64(), types::int32()},
             nullptr);
  EXPECT_EQ(row->type, types::array(types::float64(), 1, Layout::C));

  FnBuilder f("k", {"a", "i"});
  Instr *plane = f.item(f.load("a"), f.load("i"));
  Instr *line = f.item(f.load("a"), f.tuple({f.load("i"), f.load("i")}));
  f.ret();
  inferTypes(*f.fn, {c3, types::int64()}, nullptr);
  EXPECT_EQ(plane->type, types::array(types::float64(), 2, Layout::C));
  EXPECT_EQ(line->type, types::array(types::float64(), 1, Layout::C));

  FnBuilder g("k", {"a", "i"});
  Instr *col = g.item(g.load("a"), g.load("i"));
  g.ret();
  inferTypes(*g.fn, {types::array(types::float32(), 2, Layout::F, true), types::int64()}, nullptr);
  EXPECT_EQ(col->type, types::array(types::float32(), 1, Layout::A, true));
}

TEST(Typing, IteratingArraysYieldsElementsOrRows) {
  FnBuilder b("k", {"a", "m"});
  Instr *elems = b.add<GetIterInstr>(b.load("a"));
  Instr *rows = b.add<GetIterInstr>(b.load("m"));
  b.ret();
  auto *m = types::array(types::int32(), 2, Layout::F);
  inferTypes(*b.fn, {f32a(), m}, nullptr);
  EXPECT_EQ(cast<IteratorType>(elems->type)->yieldType(), types::float32());
  EXPECT_EQ(cast<IteratorType>(rows->type)->yieldType(),
            types::array(types::int32(), 1, Layout::A));
}
