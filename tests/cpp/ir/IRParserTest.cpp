// The IR text parser (ir/IRParser.h): types, constants and globals read back from their
// printed spellings, every op and suffix of the text form, callee lookup, the error for each
// kind of malformed text (with its line), and no crash on mangled text.
#include "IRText.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace ptxjit::ir;
using ptxjit::ir::test::typedIR;
using ptxjit::ir::test::typeOf;
using ptxjit::ir::test::value;

namespace {

const ArrayType *arr(const ScalarType *dt, int nd, Layout l, bool ro = false) {
  return types::array(dt, nd, l, ro);
}

const IteratorType *rangeIter() {
  return types::iterator(IterKind::Range, types::int64(), {types::range()});
}

/// Parsing `text` fails on `line` with a message containing `part`.
void expectSyntaxError(std::string_view text, int line, const std::string &part) {
  SCOPED_TRACE(std::string(text));
  try {
    std::unique_ptr<Function> fn = parseFunction(text);
    ADD_FAILURE() << "parsed without error:\n" << fn->print();
  } catch (const CompileError &e) {
    EXPECT_EQ(e.code(), DiagCode::IRSyntax) << e.what();
    EXPECT_EQ(e.loc().line, line) << e.what();
    EXPECT_NE(e.message().find("line " + std::to_string(line) + ":"), std::string::npos)
        << e.message();
    EXPECT_NE(e.message().find(part), std::string::npos) << e.message() << "\nlacks: " << part;
  }
}

} // namespace

TEST(IRParserTypes, EveryTypeSpellingReadsBackToTheSameType) {
  const ScalarType *f32 = types::float32();
  std::vector<const Type *> all = {
      types::void_(),
      types::none(),
      types::ellipsis(),
      types::boolean(),
      types::int8(),
      types::int16(),
      types::int32(),
      types::int64(),
      types::uint8(),
      types::uint16(),
      types::uint32(),
      types::uint64(),
      f32,
      types::float64(),
      types::complex64(),
      types::complex128(),
      types::weakInt(),
      types::weakFloat(),
      types::weakComplex(),
      arr(f32, 1, Layout::C),
      arr(types::int64(), 2, Layout::F, true),
      arr(types::complex128(), 3, Layout::A),
      arr(types::boolean(), 0, Layout::A),
      types::tuple({}),
      types::tuple({types::int64(), types::int64()}),
      types::tuple({types::int64(), types::float32(), types::tuple({f32, f32})}),
      types::tuple({arr(f32, 2, Layout::C, true), types::weakFloat()}),
      types::range(),
      types::string(),
      types::slice(true),
      types::slice(false),
      rangeIter(),
      types::symbol("cuda.threadIdx"),
      types::symbol("<python function>.helper"),
  };
  // Iterators exactly as typing builds them (the yield types are part of their identity).
  std::unique_ptr<Function> fn =
      typedIR(R"(
function k(a, m, f, r) kernel
bb0:
  %0 = LoadLocal a
  %1 = GetIter %0
  %2 = LoadLocal m
  %3 = GetIter %2
  %4 = LoadLocal f
  %5 = GetIter %4
  %6 = LoadLocal r
  %7 = GetIter %6
  %8 = Global enumerate [symbol builtins.enumerate]
  %9 = Call %8(%2)
  %10 = Global zip [symbol builtins.zip]
  %11 = Global range [symbol builtins.range]
  %12 = Const 4
  %13 = Call %11(%12)
  %14 = Call %10(%13, %0, %9)
  %15 = Call %10()
  Return
)",
              {arr(f32, 1, Layout::C), arr(types::int32(), 2, Layout::C),
               arr(types::float64(), 2, Layout::F), arr(types::uint8(), 3, Layout::A, true)});
  for (int id : {1, 3, 5, 7, 9, 14, 15})
    all.push_back(typeOf(*fn, id));
  EXPECT_EQ(typeOf(*fn, 14)->str(),
            "zip(range_iter64, iter(array(float32, 1d, C)), enumerate(iter(array(int32, 2d, C))))");
  for (const Type *t : all) {
    SCOPED_TRACE(t->str());
    EXPECT_EQ(parseTypeText(t->str()), t);
  }
}

TEST(IRParserTypes, TupleIteratorsRoundTrip) {
  const Type *uni = types::tuple({types::int64(), types::int64(), types::int64()});
  const Type *it = types::iterator(IterKind::Tuple, types::int64(), {uni});
  EXPECT_EQ(it->str(), "iter(UniTuple(int64 x 3))");
  EXPECT_EQ(parseTypeText(it->str()), it);
  const Type *en =
      types::iterator(IterKind::Enumerate, types::tuple({types::int64(), types::int64()}), {it});
  EXPECT_EQ(parseTypeText(en->str()), en);
}

TEST(IRParserTypes, PointersRoundTrip) {
  for (const Type *t : {static_cast<const Type *>(types::pointer(types::float32())),
                        static_cast<const Type *>(types::voidPointer()),
                        static_cast<const Type *>(
                            types::tuple({types::pointer(types::uint8()), types::int64()}))}) {
    SCOPED_TRACE(t->str());
    EXPECT_EQ(parseTypeText(t->str()), t);
  }
  EXPECT_EQ(parseTypeText("void"), types::void_());
}

TEST(IRParserTypes, FunctionTypesTakeTheirIdFromTheGlobal) {
  std::unique_ptr<Function> fn = parseFunction(R"(
function k() kernel -> void
  var f : Function(helper)
bb0:
  %0 = Global helper [device function helper #42] : Function(helper)
  StoreLocal f, %0
  Return
)");
  EXPECT_EQ(fn->vars[0].type, types::functionRef(42, "helper"));
  EXPECT_EQ(typeOf(*fn, 0), types::functionRef(42, "helper"));
  EXPECT_THROW(parseTypeText("Function(helper)"), CompileError);
}

TEST(IRParserConsts, ConstantsReadBack) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  ConstValue big = ConstValue::integer(-1);
  big.isUnsigned = true; // 18446744073709551615
  std::vector<ConstValue> all = {
      ConstValue::none(),
      ConstValue::boolean(true),
      ConstValue::boolean(false),
      ConstValue::integer(0),
      ConstValue::integer(-5),
      ConstValue::integer(std::numeric_limits<int64_t>::min()),
      ConstValue::integer(std::numeric_limits<int64_t>::max()),
      big,
      ConstValue::floating(2.5),
      ConstValue::floating(-0.0),
      ConstValue::floating(1.0),
      ConstValue::floating(1e-6),
      ConstValue::floating(1e16),
      ConstValue::floating(0.1),
      ConstValue::floating(-1.7976931348623157e308),
      ConstValue::floating(5e-324),
      ConstValue::floating(nan),
      ConstValue::floating(inf),
      ConstValue::floating(-inf),
      ConstValue::complexNum({0, 2}),
      ConstValue::complexNum({0, -0.0}),
      ConstValue::complexNum({1, 2}),
      ConstValue::complexNum({-0.0, -1}),
      ConstValue::complexNum({1e16, -2.5e-7}),
      ConstValue::complexNum({nan, nan}),
      ConstValue::complexNum({inf, -inf}),
      ConstValue::string(""),
      ConstValue::string("a'b\\c\n\r\t\x01\x7f caf\xc3\xa9 ) , ]"),
      ConstValue::bytes(""),
      ConstValue::bytes(std::string("a'b\\c\n\x00\x7f\x80\xff ) , ]", 16)),
      ConstValue::ellipsis(),
      ConstValue::tuple({}),
      ConstValue::tuple({ConstValue::integer(1)}),
      ConstValue::tuple({ConstValue::ellipsis(), ConstValue::integer(0)}),
      ConstValue::tuple({ConstValue::complexNum({1, 2})}),
      ConstValue::tuple({ConstValue::integer(1), ConstValue::floating(nan),
                         ConstValue::tuple({ConstValue::string("x, y)"), ConstValue::none()})}),
      ConstValue::unsupported("code"),
  };
  for (const ConstValue &c : all) {
    SCOPED_TRACE(c.str());
    ConstValue back = parseConstText(c.str());
    EXPECT_EQ(back.str(), c.str());
    if (c.str().find("nan") == std::string::npos) { // NaN payloads need not survive
      EXPECT_TRUE(back == c);
    }
  }
  EXPECT_TRUE(parseConstText("-0.0").f == 0.0 && std::signbit(parseConstText("-0.0").f));
  EXPECT_EQ(parseConstText("1e-06").kind, ConstValue::Kind::Float);
  EXPECT_EQ(parseConstText("7").kind, ConstValue::Kind::Int);
}

TEST(IRParserGlobals, GlobalsReadBack) {
  std::vector<GlobalValue> all = {
      GlobalValue::makeConstant(ConstValue::floating(2.5)),
      GlobalValue::makeConstant(ConstValue::floating(0.5), "float32"),
      GlobalValue::makeConstant(ConstValue::boolean(true), "bool"),
      GlobalValue::makeConstant(
          ConstValue::tuple({ConstValue::integer(1), ConstValue::integer(2)})),
      GlobalValue::makeConstant(ConstValue::unsupported("object")),
      GlobalValue::symbol("builtins.range"),
      GlobalValue::deviceFunction(3, "helper"),
      GlobalValue::kernel(9, "other_kernel"),
      GlobalValue::pyFunction("plain"),
      GlobalValue::unsupported("DataFrame"),
      GlobalValue::missing(),
      GlobalValue::array("float32", {4}, std::string(16, '\x01')),
      GlobalValue::array("int64", {2, 3}, std::string(48, '\x02')),
      GlobalValue::array("uint8", {}, std::string(1, '\x03')),
      GlobalValue::deviceArray("float64", {2, 3}, {24, 8}, 0x7f0012340000),
      GlobalValue::deviceArray("int32", {5}, {-8}, 4096),
      GlobalValue::deviceArray("float32", {}, {}, 0),
      GlobalValue::tuple({}),
      GlobalValue::tuple({GlobalValue::array("float64", {3}, std::string(24, '\x04')),
                          GlobalValue::symbol("numpy.float32"),
                          GlobalValue::makeConstant(ConstValue::floating(1.5), "float32"),
                          GlobalValue::tuple({GlobalValue::deviceFunction(2, "f"),
                                              GlobalValue::makeConstant(ConstValue::integer(4))})}),
  };
  for (const GlobalValue &g : all) {
    SCOPED_TRACE(g.str());
    GlobalValue back = parseGlobalText(g.str());
    EXPECT_EQ(back.str(), g.str());
    EXPECT_EQ(back.kind, g.kind);
    EXPECT_EQ(back.path, g.path);
    EXPECT_EQ(back.dtype, g.dtype);
    EXPECT_EQ(back.functionId, g.functionId);
    EXPECT_EQ(back.shape, g.shape);
    EXPECT_EQ(back.strides, g.strides);
    EXPECT_EQ(back.address, g.address);
    EXPECT_TRUE(back.constant == g.constant);
    EXPECT_EQ(back.elems.size(), g.elems.size());
    if (g.kind == GlobalValue::Kind::Array) {
      // The elements are not in the text: zeros of the same size come back.
      ASSERT_TRUE(back.bytes);
      EXPECT_EQ(*back.bytes, std::string(g.bytes->size(), '\0'));
    }
  }
}

TEST(IRParser, EveryOpAndItsFields) {
  const char *text = R"(function k(x, n) kernel
bb0:
  %0 = Arg 0 (x)
  StoreLocal x, %0
  %2 = Arg 1 (n)
  StoreLocal n, %2
  %4 = Global cuda [symbol cuda]
  %5 = GetAttr %4 .grid
  %6 = Const 1
  %7 = Call %5(%6)
  StoreLocal i, %7
  %9 = LoadLocal i
  %10 = LoadLocal n
  %11 = Compare is not %9, %10
  %12 = Compare not in %9, %10
  %13 = UnaryOp not %11
  %14 = UnaryOp ~ %9
  %15 = BinOp //= %9, %14
  %16 = BinOp ** %15, %6
  %17 = Truth %13
  Branch %17, bb2, bb1
bb1:
  %19 = LoadLocal x
  %20 = Const None
  %21 = BuildSlice %20, %20, %6
  %22 = GetItem %19[%21]
  %23 = BuildTuple (%9, %10)
  %24 = BuildTuple ()
  %25 = TupleGet %23, 1
  %26 = Global range [symbol builtins.range]
  %27 = Call %26(%6, %10, step=%6)
  %28 = GetIter %27
  %29 = IterValid %28
  %30 = IterNext %28
  SetItem %19[%25] = %30
  Jump bb2
bb2:
  Return
)";
  std::unique_ptr<Function> fn = parseFunction(text);
  EXPECT_EQ(fn->print(), text);
  EXPECT_NO_THROW(verify(*fn));
  EXPECT_EQ(fn->name, "k");
  EXPECT_EQ(fn->qualname, "k");
  EXPECT_EQ(fn->kind, FunctionKind::Kernel);
  EXPECT_EQ(fn->argNames, (std::vector<std::string>{"x", "n"}));
  ASSERT_EQ(fn->vars.size(), 3u);
  EXPECT_TRUE(fn->vars[1].isArgument);
  EXPECT_EQ(fn->vars[2].name, "i");
  EXPECT_FALSE(fn->vars[2].isArgument);
  EXPECT_EQ(cast<ArgInstr>(value(*fn, 2))->index, 1);
  EXPECT_EQ(cast<GlobalInstr>(value(*fn, 4))->name, "cuda");
  EXPECT_EQ(cast<GlobalInstr>(value(*fn, 4))->value.path, "cuda");
  EXPECT_EQ(cast<GetAttrInstr>(value(*fn, 5))->attr, "grid");
  EXPECT_EQ(cast<CompareInstr>(value(*fn, 11))->cmp, CmpOp::IsNot);
  EXPECT_EQ(cast<CompareInstr>(value(*fn, 12))->cmp, CmpOp::NotIn);
  EXPECT_EQ(cast<UnaryOpInstr>(value(*fn, 13))->unop, UnaryOpKind::Not);
  EXPECT_EQ(cast<UnaryOpInstr>(value(*fn, 14))->unop, UnaryOpKind::Invert);
  auto *fd = cast<BinOpInstr>(value(*fn, 15));
  EXPECT_EQ(fd->binop, BinaryOp::FloorDiv);
  EXPECT_TRUE(fd->inplace);
  EXPECT_EQ(fd->operand(1), value(*fn, 14));
  EXPECT_FALSE(cast<BinOpInstr>(value(*fn, 16))->inplace);
  EXPECT_EQ(value(*fn, 21)->numOperands(), 3u);
  EXPECT_EQ(value(*fn, 24)->numOperands(), 0u);
  EXPECT_EQ(cast<TupleGetInstr>(value(*fn, 25))->index, 1);
  auto *call = cast<CallInstr>(value(*fn, 27));
  EXPECT_EQ(call->numArgs(), 3u);
  EXPECT_EQ(call->kwNames, (std::vector<std::string>{"step"}));
  // Branch targets are wired, forward references included.
  auto *br = cast<BranchInstr>(fn->blocks[0]->terminator());
  EXPECT_EQ(br->ifTrue, fn->blocks[2].get());
  EXPECT_EQ(br->ifFalse, fn->blocks[1].get());
  EXPECT_EQ(br->operand(0), value(*fn, 17));
  EXPECT_EQ(cast<ReturnInstr>(fn->blocks[2]->terminator())->value(), nullptr);
  // Instructions without a value are numbered as the frontend numbers them.
  EXPECT_EQ(fn->blocks[0]->instrs[1]->id, 1);
  EXPECT_EQ(br->id, 18);
  EXPECT_EQ(fn->blocks[2]->instrs[0]->id, 33);
  // New instructions get fresh numbers.
  EXPECT_GT(fn->nextValueId(), 33);
}

TEST(IRParser, LocationsTypesBuiltinsAndLeniency) {
  // Free indentation and padding (tabs too), blank and ';' comment lines, "Arg N" without its name,
  // a value used on a line before its definition.
  std::unique_ptr<Function> fn = parseFunction(R"(
; a hand-written device function
function f(a: int32) device -> float64
    var a : int32
    var r : float64

bb0:
    %0 = Arg 0 : int32 ; line 6
    %1 = LoadLocal a : int32 ; line 7
    Jump bb1   ; line 8
bb1:
    %3 = BinOp	+	%1, %5 : float64 ; line 9
    StoreLocal r, %3
    %5 = Const 2.5 : Literal[float]
    %6 = Global abs [symbol builtins.abs] : Symbol(builtins.abs)
    %7 = Call %6(%3) : float64 {builtins.abs}      ; line 12
    Return %7
)");
  EXPECT_EQ(fn->kind, FunctionKind::Device);
  EXPECT_EQ(fn->argTypes, (std::vector<const Type *>{types::int32()}));
  EXPECT_EQ(fn->returnType, types::float64());
  EXPECT_EQ(fn->vars[1].type, types::float64());
  EXPECT_EQ(cast<ArgInstr>(value(*fn, 0))->index, 0);
  EXPECT_EQ(value(*fn, 0)->loc.line, 6);
  EXPECT_EQ(value(*fn, 1)->loc.line, 7);
  EXPECT_EQ(fn->blocks[0]->terminator()->loc.line, 8);
  EXPECT_EQ(value(*fn, 5)->loc.line, 0);
  EXPECT_EQ(value(*fn, 3)->operand(1), value(*fn, 5));
  EXPECT_EQ(value(*fn, 7)->builtin, BuiltinId::Abs);
  EXPECT_EQ(typeOf(*fn, 5), types::weakFloat());
  // Typed text: instructions without a value are void, as typing leaves them.
  EXPECT_EQ(fn->blocks[1]->instrs[1]->type, types::void_());
  EXPECT_EQ(fn->blocks[1]->terminator()->type, types::void_());
  EXPECT_EQ(fn->print(true), R"(function f(a: int32) device -> float64
  var a : int32
  var r : float64
bb0:
  %0 = Arg 0 (a) : int32                        ; line 6
  %1 = LoadLocal a : int32                      ; line 7
  Jump bb1                                      ; line 8
bb1:
  %3 = BinOp + %1, %5 : float64                 ; line 9
  StoreLocal r, %3
  %5 = Const 2.5 : Literal[float]
  %6 = Global abs [symbol builtins.abs] : Symbol(builtins.abs)
  %7 = Call %6(%3) : float64 {builtins.abs}     ; line 12
  Return %7
)");
}

TEST(IRParser, CalleesResolveThroughTheLookup) {
  const char *text = R"(function k(x: int64) kernel -> void
  var x : int64
bb0:
  %0 = Global helper [device function helper #7] : Function(helper)
  %1 = LoadLocal x : int64
  %2 = Call %0(%1) : float32 -> helper
  Return
)";
  // Without a lookup the callee stays unknown (and is not printed).
  std::unique_ptr<Function> plain = parseFunction(text);
  EXPECT_EQ(cast<CallInstr>(value(*plain, 2))->calleeFunction, nullptr);
  EXPECT_EQ(typeOf(*plain, 0), types::functionRef(7, "helper"));

  Function helper;
  helper.name = "helper";
  std::unique_ptr<Function> fn =
      parseFunction(text, [&](const std::string &n) { return n == "helper" ? &helper : nullptr; });
  EXPECT_EQ(cast<CallInstr>(value(*fn, 2))->calleeFunction, &helper);
  EXPECT_EQ(fn->print(), text);

  try {
    parseFunction(text, [](const std::string &) { return nullptr; });
    ADD_FAILURE() << "an unknown callee parsed";
  } catch (const CompileError &e) {
    EXPECT_EQ(e.loc().line, 6);
    EXPECT_NE(e.message().find("does not know function 'helper'"), std::string::npos)
        << e.message();
  }
}

TEST(IRParserErrors, NameTheLineAndWhatWasExpected) {
  const std::string k = "function k(a) kernel\nbb0:\n";
  const std::string t = "function k(a: int64) kernel -> void\n  var a : int64\nbb0:\n";
  expectSyntaxError("", 1, "empty text");
  expectSyntaxError("\n\n  \n", 1, "empty text");
  expectSyntaxError("func k() kernel\n", 1, "expected 'function <name>(...)'");
  expectSyntaxError("function k(a, a) kernel\n", 1, "parameter 'a' appears twice");
  expectSyntaxError("function k(a b) kernel\n", 1, "expected ',' or ')'");
  expectSyntaxError("function k() gpu\n", 1, "expected 'kernel' or 'device'");
  expectSyntaxError("function k() kernel -> void extra\n", 1, "end of the header");
  expectSyntaxError("function k(a: float128) kernel\n", 1, "expected a type, found 'float128");
  expectSyntaxError("function k(a: f4) kernel\n", 1, "type 'f4' is printed as 'float32'");
  expectSyntaxError("function k() kernel\n  %0 = Const 1\n", 2, "before the first block label");
  expectSyntaxError(k + "  %0 = Frob 1\n", 3, "expected an instruction");
  expectSyntaxError(k + "  Const 1\n", 3, "expected '%N = ' before Const");
  expectSyntaxError(k + "  %0 = Const 1\n  %1 = StoreLocal a, %0\n", 4,
                    "StoreLocal produces no value");
  expectSyntaxError(k + "  %0 = Const 1\n  %0 = Const 2\n", 4,
                    "value %0 is defined twice (first on line 3)");
  expectSyntaxError(k + "  %0 = Const 1\n  Return %9\n", 4, "use of undefined value %9");
  expectSyntaxError(k + "  Jump bb5\n", 3, "branch to undefined block bb5");
  expectSyntaxError(k + "  Jump bb0\nbb0:\n  Return\n", 4, "block bb0 is defined twice");
  expectSyntaxError(k + "  Jump bb0 x\n", 3, "expected the end of the instruction");
  expectSyntaxError(k + "  Jump 0\n", 3, "expected a block 'bbN'");
  expectSyntaxError(k + "  %0 = Const 'abc\n", 3, "unterminated string constant");
  expectSyntaxError(k + "  %0 = Const 'a\\qb'\n", 3, "unknown escape");
  expectSyntaxError(k + "  %0 = Const 'a\\x4'\n", 3, "two hex digits");
  expectSyntaxError(k + "  %0 = Const 99999999999999999999\n", 3, "does not fit uint64");
  expectSyntaxError(k + "  %0 = Const -9999999999999999999\n", 3, "does not fit int64");
  expectSyntaxError(k + "  %0 = Const (1+2)\n", 3, "imaginary part");
  expectSyntaxError(k + "  %0 = Const (1, 2\n", 3, "expected ',' or ')' in the tuple");
  expectSyntaxError(k + "  %0 = Const\n", 3, "expected a constant");
  expectSyntaxError(k + "  %0 = Global g [frob]\n", 3, "expected a global");
  expectSyntaxError(k + "  %0 = Global g [symbol math\n", 3, "expected ']'");
  expectSyntaxError(k + "  %0 = Global g [device function h]\n", 3, "'<name> #<id>'");
  expectSyntaxError(k + "  %0 = Arg 0 (b)\n", 3, "Arg 0 is not parameter 'b'");
  expectSyntaxError(k + "  %0 = Arg x\n", 3, "expected the argument index");
  expectSyntaxError(k + "  %0 = LoadLocal a\n  %1 = BinOp ++ %0, %0\n", 4,
                    "expected a binary operator");
  expectSyntaxError(k + "  %0 = LoadLocal a\n  %1 = BinOp + %0 %0\n", 4,
                    "',' between the operands");
  expectSyntaxError(k + "  %0 = LoadLocal a\n  %1 = UnaryOp ! %0\n", 4,
                    "expected a unary operator");
  expectSyntaxError(k + "  %0 = LoadLocal a\n  %1 = Compare is in %0, %0\n", 4,
                    "expected a value '%N'");
  expectSyntaxError(k + "  %0 = LoadLocal a\n  %1 = GetAttr %0 . x\n", 4, "an attribute name");
  expectSyntaxError(k + "  %0 = LoadLocal a\n  %1 = Call %0(k=%0, %0)\n", 4, "keywords come last");
  expectSyntaxError(k + "  %0 = LoadLocal a\n  %1 = BuildSlice %0\n", 4,
                    "',' between the slice's parts");
  expectSyntaxError(k + "  %0 = LoadLocal a\n  %1 = TupleGet %0, -1\n", 4,
                    "expected the element index");
  expectSyntaxError(k + "  %0 = LoadLocal a : int64 {cuda.nope}\n", 3, "unknown builtin");
  expectSyntaxError(k + "  %0 = LoadLocal a -> helper\n", 3, "'-> callee' belongs to Call");
  expectSyntaxError(k + "  %0 = LoadLocal a ; lines 3\n", 3, "expected 'line'");
  expectSyntaxError(k + "  %0 = LoadLocal a : array(int64, 1d, X)\n", 3, "unknown array layout");
  expectSyntaxError(k + "  %0 = LoadLocal a : array(int64, 99d, C)\n", 3,
                    "the array's dimension count");
  expectSyntaxError(k + "  %0 = LoadLocal a : UniTuple(int64 x 0)\n", 3, "at least one element");
  expectSyntaxError(k + "  %0 = LoadLocal a : Literal[bytes]\n", 3, "unknown literal type");
  expectSyntaxError(k + "  %0 = LoadLocal a : Literal[str]\n", 3,
                    "'(' before the string literal's value");
  expectSyntaxError(k + "  %0 = LoadLocal a : Literal[str](add)\n", 3, "a quoted string");
  expectSyntaxError(k + "  %0 = LoadLocal a : iter(int64)\n", 3, "iter() takes an array");
  expectSyntaxError(k + "  %0 = LoadLocal a : enumerate(int64)\n", 3, "an iterator type");
  expectSyntaxError(k + "  %0 = LoadLocal a : Function(h)\n", 3, "names no '[device function h");
  expectSyntaxError("function k(a) kernel\n  var a : int64\n", 2, "belong to typed text");
  expectSyntaxError(t + "  var b : int64\n", 4, "before the first block");
  expectSyntaxError("function k(a: int64) kernel -> void\n  var b : int64\n", 2,
                    "must be parameter 'a', not 'b'");
  expectSyntaxError("function k(a: int64) kernel -> void\n  var a : int64\n  var a : int64\n", 3,
                    "listed twice");
  expectSyntaxError(t + "  %0 = LoadLocal q : int64\n", 4, "'q' is not among the 'var' lines");
  expectSyntaxError("function k(a: int64) kernel -> void\nbb0:\n  Return\n", 1,
                    "lists every variable");
  EXPECT_THROW(parseTypeText("int64 junk"), CompileError);
  EXPECT_THROW(parseTypeText("int64\nint64"), CompileError);
  EXPECT_THROW(parseConstText("1 2"), CompileError);
  EXPECT_THROW(parseGlobalText("array float32(4"), CompileError);
  EXPECT_THROW(parseGlobalText("array float32(1073741824, 4)"), CompileError);
}

TEST(IRParserErrors, MangledTextNeverCrashes) {
  // Each one-character deletion and each truncation of a typed function's text either parses
  // or throws CompileError: no crash, no assert, no other exception.
  std::unique_ptr<Function> fn = typedIR(R"(function k(x, n) kernel
bb0:
  %0 = Global cuda [symbol cuda]          ; line 2
  %1 = GetAttr %0 .grid
  %2 = Const 1
  %3 = Call %1(%2)
  StoreLocal i, %3
  %5 = LoadLocal i
  %6 = LoadLocal n
  %7 = Compare < %5, %6
  %8 = Truth %7
  Branch %8, bb1, bb2
bb1:
  %10 = LoadLocal x
  %11 = Const (1.5+2j)
  %12 = Const 'a\tb'
  %13 = BuildTuple (%5, %5)
  %14 = GetItem %10[%5]
  %15 = BinOp += %14, %2
  SetItem %10[%5] = %15
  Jump bb2
bb2:
  Return
)",
                                         {arr(types::float32(), 1, Layout::C), types::int32()});
  std::string text = fn->print(true);
  int parsed = 0, rejected = 0;
  auto attempt = [&](const std::string &s) {
    try {
      parseFunction(s);
      ++parsed;
    } catch (const CompileError &e) {
      EXPECT_EQ(e.code(), DiagCode::IRSyntax);
      ++rejected;
    }
  };
  for (size_t k = 0; k < text.size(); ++k) {
    attempt(text.substr(0, k) + text.substr(k + 1));
    attempt(text.substr(0, k));
  }
  EXPECT_GT(rejected, 0);
  EXPECT_GT(parsed, 0);
}

TEST(IRParser, IntLiteralTypesRoundTrip) {
  // A device function specialized on an int literal prints its parameter as Literal[int](v).
  EXPECT_EQ(parseTypeText("Literal[int](32)"), types::intLiteral(32));
  EXPECT_EQ(parseTypeText("Literal[int](-7)"), types::intLiteral(-7));
  EXPECT_EQ(parseTypeText(types::intLiteral(-7)->str()), types::intLiteral(-7));
  // String literals a caller passed (Literal[str]): the value quoted, escapes round-trip.
  EXPECT_EQ(types::stringLiteral("add")->str(), "Literal[str]('add')");
  EXPECT_EQ(parseTypeText("Literal[str]('add')"), types::stringLiteral("add"));
  EXPECT_EQ(parseTypeText(types::stringLiteral("a')b\n")->str()), types::stringLiteral("a')b\n"));
  EXPECT_EQ(parseTypeText("Literal[int]"), types::weakInt());
  EXPECT_NE(types::intLiteral(3), types::weakInt());
  EXPECT_EQ(concretize(types::intLiteral(3)), types::int64());
  EXPECT_EQ(promote(types::intLiteral(3), types::intLiteral(4)), types::weakInt());
}

TEST(IRParser, LiteralsAsInt64StripsTuplesToo) {
  const Type *t = types::tuple({types::intLiteral(4), types::intLiteral(8)});
  EXPECT_TRUE(hasIntLiteral(t));
  EXPECT_FALSE(hasIntLiteral(types::tuple({types::int64(), types::weakInt()})));
  EXPECT_EQ(replaceIntLiterals(t, types::int64()), types::tuple({types::int64(), types::int64()}));
  EXPECT_EQ(parseTypeText(t->str()), t);
}

TEST(IRParser, RaiseAndExceptionClassesRoundTrip) {
  // Raise carries its class and constant arguments; exception globals are builtins by name.
  std::unique_ptr<Function> fn = parseFunction(R"(
function f(a) kernel
bb0:
    %0 = Arg 0
    %1 = Global E [exception ValueError]
    %2 = Truth %0
    Branch %2, bb1, bb2
bb1:
    Raise ValueError('negative', 3)
bb2:
    Raise AssertionError
)");
  auto *r = cast<RaiseInstr>(fn->blocks[1]->terminator());
  EXPECT_EQ(r->exception.cls.kind, GlobalValue::Kind::ExceptionClass);
  EXPECT_EQ(r->exception.cls.path, "ValueError");
  EXPECT_EQ(r->exception.cls.address, 0u);
  ASSERT_EQ(r->exception.args.size(), 2u);
  EXPECT_EQ(r->exception.args[0], ConstValue::string("negative"));
  EXPECT_EQ(r->exception.args[1], ConstValue::integer(3));
  EXPECT_TRUE(cast<RaiseInstr>(fn->blocks[2]->terminator())->exception.args.empty());
  EXPECT_TRUE(fn->blocks[1]->successors().empty());
  std::string text = fn->print();
  EXPECT_NE(text.find("Raise ValueError('negative', 3)"), std::string::npos) << text;
  EXPECT_NE(text.find("Raise AssertionError\n"), std::string::npos) << text;
  EXPECT_NE(text.find("[exception ValueError]"), std::string::npos) << text;
  EXPECT_EQ(parseFunction(text)->print(), text);
}
