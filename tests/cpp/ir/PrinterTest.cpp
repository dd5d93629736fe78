// The text form of IR (Function::print) before and after typing.
#include "IRText.h"
#include "IrBuilder.h"

#include <gtest/gtest.h>

using namespace ptxjit::ir;
using ptxjit::ir::test::FnBuilder;
using ptxjit::ir::test::typeChecked;

namespace {

/// def k(x, n): i = cuda.grid(1); if i < n: x[i] += 1.5   (roughly)
FnBuilder buildSmall() {
  FnBuilder b("k", {"x", "n"});
  b.line = 3;
  auto *c = b.sym("cuda", "cuda");
  auto *g = b.attr(c, "grid");
  auto *g1 = b.call(g, {b.cint(1)});
  b.store("i", g1);
  b.line = 4;
  Block *body = b.newBlock(), *exit = b.newBlock();
  // (Arguments are built one statement at a time: C++ leaves their evaluation order open.)
  auto *li = b.load("i");
  auto *ln = b.load("n");
  b.branch(b.cmp(CmpOp::Lt, li, ln), body, exit);
  b.at(body);
  b.line = 5;
  auto *x = b.load("x");
  auto *i = b.load("i");
  auto *xi = b.item(x, i);
  auto *v = b.bin(BinaryOp::Add, xi, b.cfloat(1.5), true);
  b.setItem(x, i, v);
  b.jump(exit);
  b.at(exit);
  b.line = 0;
  b.ret();
  return b;
}

} // namespace

TEST(Printer, UntypedText) {
  FnBuilder b = buildSmall();
  EXPECT_EQ(b.fn->print(), "function k(x, n) kernel\n"
                           "bb0:\n"
                           "  %0 = Global cuda [symbol cuda]\n"
                           "  %1 = GetAttr %0 .grid\n"
                           "  %2 = Const 1\n"
                           "  %3 = Call %1(%2)\n"
                           "  StoreLocal i, %3\n"
                           "  %5 = LoadLocal i\n"
                           "  %6 = LoadLocal n\n"
                           "  %7 = Compare < %5, %6\n"
                           "  Branch %7, bb1, bb2\n"
                           "bb1:\n"
                           "  %9 = LoadLocal x\n"
                           "  %10 = LoadLocal i\n"
                           "  %11 = GetItem %9[%10]\n"
                           "  %12 = Const 1.5\n"
                           "  %13 = BinOp += %11, %12\n"
                           "  SetItem %9[%10] = %13\n"
                           "  Jump bb2\n"
                           "bb2:\n"
                           "  Return\n");
}

TEST(Printer, LocationsAreAligned) {
  FnBuilder b = buildSmall();
  std::string text = b.fn->print(true);
  EXPECT_NE(text.find("  %0 = Global cuda [symbol cuda]                ; line 3\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  Branch %7, bb1, bb2                           ; line 4\n"),
            std::string::npos)
      << text;
  // Unknown lines print no comment.
  EXPECT_NE(text.find("bb2:\n  Return\n"), std::string::npos) << text;
}

TEST(Printer, TypedText) {
  FnBuilder b = buildSmall();
  typeChecked(*b.fn, {types::array(types::float32(), 1, Layout::C), types::int32()}, nullptr);
  std::string text = b.fn->print();
  EXPECT_EQ(text.substr(0, text.find("bb0:")),
            "function k(x: array(float32, 1d, C), n: int32) kernel -> void\n"
            "  var x : array(float32, 1d, C)\n"
            "  var n : int32\n"
            "  var i : int64\n");
  for (const char *line : {
           "  %0 = Global cuda [symbol cuda] : Symbol(cuda)\n",
           "  %1 = GetAttr %0 .grid : Symbol(cuda.grid)\n",
           "  %2 = Const 1 : Literal[int]\n",
           "  %3 = Call %1(%2) : int64 {cuda.grid}\n",
           "  StoreLocal i, %3\n",
           "  %7 = Compare < %5, %6 : bool\n",
           "  %11 = GetItem %9[%10] : float32\n",
           "  %13 = BinOp += %11, %12 : float32\n",
           "  SetItem %9[%10] = %13\n",
           "  Return\n",
       })
    EXPECT_NE(text.find(line), std::string::npos) << "missing: " << line << "in:\n" << text;
}

TEST(Printer, CallsAndTuples) {
  FnBuilder b("t", {"a"});
  auto *r = b.sym("range", "builtins.range");
  auto *c = b.call(r, {b.cint(1), b.load("a")}, {"step"});
  auto *t = b.tuple({b.load("a"), c});
  b.store("p", b.tupleGet(t, 1));
  b.ret();
  std::string text = b.fn->print();
  EXPECT_NE(text.find("  %3 = Call %0(%1, step=%2)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  %5 = BuildTuple (%4, %3)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  %6 = TupleGet %5, 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  StoreLocal p, %6\n"), std::string::npos) << text;
}
