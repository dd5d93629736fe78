// Parsing Numba signature strings.
#include "ir/NamedTuples.h"
#include "ir/typing/Typing.h"

#include <gtest/gtest.h>

using namespace ptxjit::ir;

TEST(Signature, ScalarTypesAndAliases) {
  EXPECT_EQ(parseType("float32"), types::float32());
  EXPECT_EQ(parseType("  f8 "), types::float64());
  EXPECT_EQ(parseType("i4"), types::int32());
  EXPECT_EQ(parseType("u1"), types::uint8());
  EXPECT_EQ(parseType("b1"), types::boolean());
  EXPECT_EQ(parseType("boolean"), types::boolean());
  EXPECT_EQ(parseType("intp"), types::int64());
  EXPECT_EQ(parseType("complex64"), types::complex64());
  EXPECT_EQ(parseType("void"), types::void_());
}

TEST(Signature, ArrayLayouts) {
  EXPECT_EQ(parseType("float32[:]"), types::array(types::float32(), 1, Layout::A));
  EXPECT_EQ(parseType("float32[::1]"), types::array(types::float32(), 1, Layout::C));
  EXPECT_EQ(parseType("float64[:,:]"), types::array(types::float64(), 2, Layout::A));
  EXPECT_EQ(parseType("int32[:, ::1]"), types::array(types::int32(), 2, Layout::C));
  EXPECT_EQ(parseType("float32[::1, :]"), types::array(types::float32(), 2, Layout::F));
  EXPECT_EQ(parseType("float64[:,:,:]"), types::array(types::float64(), 3, Layout::A));
  EXPECT_EQ(parseType("u1[ : , : , : : 1 ]"), types::array(types::uint8(), 3, Layout::C));
}

TEST(Signature, FullSignatures) {
  Signature s = parseSignature("void(float32, float32[:], float32[::1])");
  EXPECT_EQ(s.returnType, types::void_());
  ASSERT_EQ(s.args.size(), 3u);
  EXPECT_EQ(s.args[0], types::float32());
  EXPECT_EQ(s.args[1], types::array(types::float32(), 1, Layout::A));
  EXPECT_EQ(s.args[2], types::array(types::float32(), 1, Layout::C));
  EXPECT_EQ(s.str(), "(float32, array(float32, 1d, A), array(float32, 1d, C)) -> void");

  Signature t = parseSignature("(float32[:], int64)");
  EXPECT_EQ(t.returnType, nullptr);
  EXPECT_EQ(t.args, (std::vector<const Type *>{types::array(types::float32(), 1, Layout::A),
                                               types::int64()}));
  EXPECT_EQ(t.str(), "(array(float32, 1d, A), int64)");

  Signature d = parseSignature("float64(float64, i8,)");
  EXPECT_EQ(d.returnType, types::float64());
  EXPECT_EQ(d.args.size(), 2u);

  EXPECT_TRUE(parseSignature("void()").args.empty());
  EXPECT_TRUE(parseSignature("()").args.empty());
}

TEST(Signature, NumbasOtherSpellings) {
  // The way Numba prints a signature, and its tuple constructors.
  Signature a = parseSignature("(int32, int32) -> int32");
  EXPECT_EQ(a.returnType, types::int32());
  EXPECT_EQ(a.args, (std::vector<const Type *>{types::int32(), types::int32()}));
  Signature t = parseSignature("Tuple((int32, float64))(UniTuple(int32, 2), Tuple((float32,)))");
  EXPECT_EQ(t.returnType, types::tuple({types::int32(), types::float64()}));
  EXPECT_EQ(t.args[0], types::tuple({types::int32(), types::int32()}));
  EXPECT_EQ(t.args[1], types::tuple({types::float32()}));
  EXPECT_EQ(parseSignature("(Tuple(()),)").args[0], types::tuple({}));
}

namespace {

void expectBad(const std::string &text, const std::string &reasonPart, bool signature = true) {
  try {
    if (signature)
      parseSignature(text);
    else
      parseType(text);
    ADD_FAILURE() << "'" << text << "' parsed";
  } catch (const CompileError &e) {
    EXPECT_EQ(e.code(), DiagCode::BadSignature);
    EXPECT_EQ(e.kind(), DiagKind::Typing);
    EXPECT_NE(e.message().find("'" + text + "'"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find(reasonPart), std::string::npos) << e.message();
  }
}

} // namespace

TEST(Signature, Errors) {
  expectBad("void(flaot32)", "unknown type name 'flaot32'");
  expectBad("void(float32", "expected ',' or ')'");
  expectBad("void(float32[::2])", "expected '1'");
  expectBad("void(float32[:, ::1, :])", "first (F) or the last (C)");
  expectBad("void(float32[::1, ::1])", "first (F) or the last (C)");
  expectBad("void(void)", "only valid as a return type");
  expectBad("void(float32) extra", "unexpected text");
  expectBad("", "empty");
  expectBad("void(float32[])", "':' or '::1'");
  expectBad("void(float32[:)", "']'");
  expectBad("float32", "'('");
  expectBad("float32[:]x", "unexpected text", false);
  expectBad("void[:]", "array element", false);
  expectBad("(,)", "type name");
  expectBad("int32(int32) -> int32", "names its return type once");
  expectBad("(int32) - int32", "expected '->'");
  expectBad("(UniTuple(int32, n),)", "a count");
  expectBad("(UniTuple(int32),)", "a count in UniTuple");
  expectBad("(Tuple(int32),)", "'(' opening the element types");
  expectBad("(UniTuple(int32, 2)[:],)", "array element");
}

TEST(Signature, PointersAsNumbaPrintsThem) {
  const PointerType *i32p = types::pointer(types::int32());
  EXPECT_EQ(i32p->str(), "int32*");
  EXPECT_EQ(i32p->pointee(), types::int32());
  EXPECT_EQ(types::voidPointer()->str(), "void*");
  EXPECT_EQ(types::voidPointer()->pointee(), nullptr);
  EXPECT_EQ(parseType("int32*"), i32p);
  EXPECT_EQ(parseType("i4 *"), i32p);
  EXPECT_EQ(parseType("CPointer(int32)"), i32p);
  EXPECT_EQ(parseType("void*"), types::voidPointer());
  EXPECT_EQ(parseType("voidptr"), types::voidPointer());
  Signature s = parseSignature("void(int32*, int32, void*, float64*)");
  ASSERT_EQ(s.args.size(), 4u);
  EXPECT_EQ(s.args[0], i32p);
  EXPECT_EQ(s.args[2], types::voidPointer());
  EXPECT_EQ(s.args[3], types::pointer(types::float64()));
  EXPECT_EQ(parseSignature("(int32*, int64)").str(), "(int32*, int64)");
  EXPECT_THROW(parseType("int32**"), CompileError);
  EXPECT_THROW(parseType("int32*[:]"), CompileError);
  EXPECT_THROW(parseType("CPointer(float32[:])"), CompileError);
}

TEST(Signature, NumbasArrayConstructorAndPrintedArrays) {
  EXPECT_EQ(parseType("Array(float32, 1, 'C')"), types::array(types::float32(), 1, Layout::C));
  EXPECT_EQ(parseType("Array(int64, 3, \"F\", readonly=True)"),
            types::array(types::int64(), 3, Layout::F, true));
  EXPECT_EQ(parseType("Array(f8, 2, 'A', readonly=False)"),
            types::array(types::float64(), 2, Layout::A));
  EXPECT_EQ(parseType("array(float32, 2d, C)"), types::array(types::float32(), 2, Layout::C));
  // numba's C names
  EXPECT_EQ(parseType("char"), types::int8());
  EXPECT_EQ(parseType("ushort"), types::uint16());
  EXPECT_EQ(parseType("ulong"), types::uint64());
  EXPECT_EQ(parseType("long_"), types::int64());
  expectBad("void(Array(float32, 0, 'C'))", "1 to 32 dimensions");
  expectBad("void(Array(float32, 1, C))", "quoted layout");
  expectBad("void(Array(float32, 1, 'K'))", "'C', 'F' or 'A'");
  expectBad("void(Array(float32[:], 1, 'C'))", "must be a scalar or a record");
  expectBad("void(Array(float32, 1, 'C', mutable=True))", "readonly=True or readonly=False");
  expectBad("void(Array(float32, 1, 'C')[:])", "array element");
  expectBad("void(array(float32, 2, C))", "'d' after the number of dimensions");
}

TEST(Signature, NamedTuplesInPtxjitsSpelling) {
  const Type *p = parseType("NamedTuple(Point, (x, y), (int32, float64))");
  EXPECT_EQ(p, types::namedTuple("Point", {"x", "y"}, {types::int32(), types::float64()}));
  EXPECT_EQ(namedTupleField(p, "y"), 1);
  EXPECT_NE(p, types::tuple({types::int32(), types::float64()})); // the names are the type's
  expectBad("void(NamedTuple(P, (x, y), (int32,)))", "2 field names and 1 element types");
  expectBad("void(NamedTuple(P, (x), int32))", "'(' opening the element types");
  expectBad("void(NamedTuple(P, (x), (int32))[:])", "array element");
}
