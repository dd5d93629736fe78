// Record types (NumPy structured dtypes): their spelling, layout queries and parsing back (IR
// text and signatures), and the typing of field reads and writes.
#include "IRText.h"

#include "ir/Types.h"
#include "ir/typing/Typing.h"

#include <gtest/gtest.h>

#include <stdexcept>

using namespace ptxjit::ir;
using ptxjit::ir::test::parseIR;
using ptxjit::ir::test::typedIR;
using ptxjit::ir::test::typeOf;

namespace {

/// np.dtype([('a', 'f8'), ('b', 'i4')], align=True)
const RecordType *alignedAB() {
  return types::record({{"b", types::int32(), 8}, {"a", types::float64(), 0}}, 16, true);
}

/// np.dtype([('a', 'f8'), ('b', 'i4'), ('c', 'i1')]): packed, 13 bytes.
const RecordType *packedABC() {
  return types::record(
      {{"a", types::float64(), 0}, {"b", types::int32(), 8}, {"c", types::int8(), 12}}, 13, false);
}

/// Parses a whole record spelling.
const Type *parseRecord(const std::string &s) {
  size_t pos = 0;
  const Type *t = types::parseRecordSpelling(s, pos);
  EXPECT_EQ(pos, s.size()) << s;
  return t;
}

} // namespace

TEST(Records, StringTypesAreSpelledAsNumbaAndReadBack) {
  const CharSeqType *s = types::charSeq(12, false);
  const CharSeqType *u = types::charSeq(12, true);
  EXPECT_EQ(s->str(), "[char x 12]");
  EXPECT_EQ(u->str(), "[unichr x 12]");
  EXPECT_EQ(s, types::charSeq(12, false));
  EXPECT_NE(s, u);
  EXPECT_EQ(s->byteSize(), 12);
  EXPECT_EQ(u->byteSize(), 48);
  EXPECT_THROW(types::charSeq(0, false), std::invalid_argument);
  EXPECT_EQ(types::array(u, 1, Layout::C)->itemSize(), 48);
  EXPECT_EQ(types::array(s, 1, Layout::C)->scalarDtype(), nullptr);
  EXPECT_EQ(alignmentScalar(u), types::uint32());
  EXPECT_EQ(alignmentScalar(s), types::uint8());
  // np.dtype([('x', 'i4'), ('y', 'U3')]): the string field's spelling reads back.
  const RecordType *r = types::record({{"x", types::int32(), 0}, {"y", u, 4}}, 52, false);
  EXPECT_EQ(r->str(), "Record(x[type=int32;offset=0],y[type=[unichr x 12];offset=4];52;False)");
  EXPECT_EQ(parseRecord(r->str()), r);
  EXPECT_EQ(r->maxAlignment(), 4);
  EXPECT_EQ(parseRecord("[char x 12]"), s);
  EXPECT_THROW(types::record({{"y", s, 1}}, 12, false), std::invalid_argument); // past the end
  EXPECT_EQ(types::dtypeByName("[char x 12]"), nullptr); // not a local/shared array dtype
  Signature sig = parseSignature("void([char x 12][::1], [unichr x 12][:, :])");
  ASSERT_EQ(sig.args.size(), 2u);
  EXPECT_EQ(sig.args[0], types::array(s, 1, Layout::C));
  EXPECT_EQ(sig.args[1], types::array(u, 2, Layout::A));
  EXPECT_THROW(parseSignature("void([char x 12])"), std::exception);
}

TEST(Records, SpelledAsNumbaInOffsetOrderAndInterned) {
  const RecordType *r = alignedAB();
  EXPECT_EQ(r->str(), "Record(a[type=float64;offset=0],b[type=int32;offset=8];16;True)");
  EXPECT_EQ(r, types::record({{"a", types::float64(), 0}, {"b", types::int32(), 8}}, 16, true));
  EXPECT_NE(r, types::record({{"a", types::float64(), 0}, {"b", types::int32(), 8}}, 16, false));
  ASSERT_EQ(r->fields().size(), 2u);
  EXPECT_EQ(r->fields()[0].name, "a");
  EXPECT_EQ(r->field("b")->offset, 8);
  EXPECT_EQ(r->field("zz"), nullptr);
  EXPECT_EQ(r->kind(), TypeKind::Record);
  const NestedArrayType *n = types::nestedArray(types::float32(), {3, 2});
  EXPECT_EQ(n->str(), "nestedarray(float32, (3, 2))");
  EXPECT_EQ(types::nestedArray(types::int16(), {3})->str(), "nestedarray(int16, (3,))");
  EXPECT_EQ(n->byteSize(), 24);
  auto *arr = types::array(r, 1, Layout::C);
  EXPECT_EQ(arr->dtype(), r);
  EXPECT_EQ(arr->scalarDtype(), nullptr);
  EXPECT_EQ(arr->itemSize(), 16);
  EXPECT_EQ(types::array(types::int16(), 1, Layout::C)->itemSize(), 2);
}

TEST(Records, AlignmentOfFieldsFollowsTheLayout) {
  const RecordType *r = alignedAB();
  EXPECT_EQ(r->baseAlignment(), 16);
  EXPECT_EQ(r->maxAlignment(), 8);
  EXPECT_EQ(r->fieldAlignment(0, types::float64()), 8);
  EXPECT_EQ(r->fieldAlignment(8, types::int32()), 4);
  // 13 bytes: element 1 starts at an odd address, so every field is byte-aligned.
  const RecordType *p = packedABC();
  EXPECT_EQ(p->baseAlignment(), 1);
  EXPECT_EQ(p->fieldAlignment(0, types::float64()), 1);
  // 12 bytes: the start is 4-byte aligned, so a float64 at offset 0 is read with 4.
  const RecordType *q =
      types::record({{"a", types::float64(), 0}, {"b", types::int32(), 8}}, 12, false);
  EXPECT_EQ(q->fieldAlignment(0, types::float64()), 4);
  EXPECT_EQ(q->fieldAlignment(8, types::int32()), 4);
  EXPECT_EQ(naturalAlignment(types::complex64()), 4);
  EXPECT_EQ(alignmentScalar(types::nestedArray(types::int16(), {3})), types::int16());
  EXPECT_EQ(alignmentScalar(r), nullptr);
}

TEST(Records, MalformedFieldsAreRefused) {
  EXPECT_THROW(types::record({{"a", types::float64(), 4}}, 8, false), std::invalid_argument);
  EXPECT_THROW(types::record({{"a", types::int8(), 0}, {"a", types::int8(), 1}}, 2, false),
               std::invalid_argument);
  EXPECT_THROW(types::record({{"a[0]", types::int8(), 0}}, 1, false), std::invalid_argument);
  EXPECT_THROW(types::record({{"", types::int8(), 0}}, 1, false), std::invalid_argument);
  EXPECT_THROW(types::record({{"a", types::range(), 0}}, 8, false), std::invalid_argument);
  EXPECT_THROW(types::nestedArray(types::int8(), {}), std::invalid_argument);
}

TEST(Records, SpellingsParseBackToTheSameTypes) {
  const RecordType *inner = types::record({{"p", types::int16(), 0}}, 2, false);
  const RecordType *r = types::record({{"x", types::float32(), 0},
                                       {"j", types::nestedArray(types::float32(), {3, 2}), 4},
                                       {"in", inner, 28}},
                                      32, true);
  EXPECT_EQ(parseRecord(r->str()), r);
  EXPECT_EQ(parseRecord("Record(;0;False)"), types::record({}, 0, false));
  EXPECT_EQ(types::dtypeByName(r->str()), r);
  EXPECT_EQ(types::dtypeByName("float32"), types::float32());
  EXPECT_EQ(types::dtypeByName("Record(a[type=float99;offset=0];8;True)"), nullptr);
  EXPECT_EQ(types::dtypeByName(r->str() + "x"), nullptr);
  // IR text: the record, an array of them, a dtype symbol.
  EXPECT_EQ(parseTypeText(r->str()), r);
  const Type *arr = types::array(r, 2, Layout::F, true);
  EXPECT_EQ(parseTypeText(arr->str()), arr);
  const Type *sym = types::symbol("numpy." + r->str());
  EXPECT_EQ(parseTypeText(sym->str()), sym);
  GlobalValue g = GlobalValue::array(r->str(), {2}, std::string(64, '\1'));
  GlobalValue back = parseGlobalText(g.str());
  EXPECT_EQ(back.str(), g.str());
  EXPECT_EQ(back.bytes->size(), 64u);
  // Signatures: Numba's spelling, and arrays of it with the usual slices.
  EXPECT_EQ(parseType(r->str()), r);
  EXPECT_EQ(parseType(r->str() + "[::1]"), types::array(r, 1, Layout::C));
  Signature s = parseSignature("void(" + r->str() + "[:], int64)");
  ASSERT_EQ(s.args.size(), 2u);
  EXPECT_EQ(s.args[0], types::array(r, 1, Layout::A));
  for (const char *bad : {"Record(a[type=float64;offset=0];8;Maybe)", "Record(a[type=float64",
                          "Record(a[type=int8;offset=9];8;True)", "nestedarray(int8, ())"}) {
    size_t pos = 0;
    EXPECT_THROW(types::parseRecordSpelling(bad, pos), std::invalid_argument) << bad;
    EXPECT_THROW(parseType(bad), CompileError) << bad;
    EXPECT_THROW(parseTypeText(bad), CompileError) << bad;
  }
  EXPECT_THROW(parseType("nestedarray(int8, (3,))"), CompileError);
}

TEST(RecordTyping, FieldReadsWritesAndElements) {
  const RecordType *r = alignedAB();
  const RecordType *nested =
      types::record({{"h", types::nestedArray(types::float32(), {2}), 0}, {"in", r, 16}}, 32, true);
  // def k(a, out): e = a[0]; out[0] = e.a + e['b'] + e[1]; e.b = 7; a[1] = e; out[1] = a[0].in.a
  //                v = a[1].h; v[0] = 1
  auto fn =
      typedIR(R"(function k(a, out) kernel
bb0:
  %0 = Arg 0 (a)
  StoreLocal a, %0
  %2 = Arg 1 (out)
  StoreLocal out, %2
  %4 = LoadLocal a
  %5 = Const 0
  %6 = GetItem %4[%5]
  %7 = GetAttr %6 .in
  %8 = GetAttr %7 .a
  %9 = Const 'b'
  %10 = GetItem %7[%9]
  %11 = Const 1
  %12 = GetItem %7[%11]
  %13 = BinOp + %8, %10
  %14 = BinOp + %13, %12
  %15 = LoadLocal out
  SetItem %15[%5] = %14
  %17 = Const 7
  SetAttr %7 .b = %17
  SetItem %4[%11] = %6
  %20 = GetItem %4[%11]
  %21 = GetAttr %20 .h
  %22 = Const 1.0
  SetItem %21[%5] = %22
  %24 = GetAttr %4 .h
  Return
)",
              {types::array(nested, 1, Layout::C), types::array(types::float64(), 1, Layout::C)});
  EXPECT_EQ(typeOf(*fn, 6), nested);
  EXPECT_EQ(typeOf(*fn, 7), r);
  EXPECT_EQ(typeOf(*fn, 8), types::float64());
  EXPECT_EQ(typeOf(*fn, 10), types::int32());
  EXPECT_EQ(typeOf(*fn, 12), types::int32());
  EXPECT_EQ(typeOf(*fn, 21), types::array(types::float32(), 1, Layout::C));
  EXPECT_EQ(typeOf(*fn, 24), types::array(types::float32(), 2, Layout::A));
}

namespace {

void expectTypingError(const std::string &body, const std::vector<const Type *> &args,
                       DiagCode code, const std::string &part) {
  auto fn = parseIR("function k(a) kernel\nbb0:\n  %0 = Arg 0 (a)\n  StoreLocal a, %0\n" + body +
                    "  Return\n");
  try {
    inferTypes(*fn, args, nullptr);
    ADD_FAILURE() << "typing succeeded:\n" << fn->print();
  } catch (const CompileError &e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(e.message().find(part), std::string::npos) << e.message();
  }
}

} // namespace

TEST(RecordTyping, ErrorsNameTheRecordAndField) {
  const std::vector<const Type *> one = {alignedAB()};
  expectTypingError("  %2 = LoadLocal a\n  %3 = GetAttr %2 .zz\n", one, DiagCode::NoRecordField,
                    "has no field 'zz'");
  expectTypingError("  %2 = LoadLocal a\n  %3 = Const 'zz'\n  %4 = GetItem %2[%3]\n", one,
                    DiagCode::NoRecordField, "has no field 'zz'");
  expectTypingError("  %2 = LoadLocal a\n  %3 = Const 5\n  %4 = GetItem %2[%3]\n", one,
                    DiagCode::IndexTypes, "field index 5");
  expectTypingError("  %2 = LoadLocal a\n  %3 = Const 1j\n  SetAttr %2 .a = %3\n", one,
                    DiagCode::SetItemTypes, "cannot store");
  expectTypingError("  %2 = LoadLocal a\n  %3 = LoadLocal a\n  %4 = GetAttr %3 .a\n"
                    "  %5 = GetItem %2[%4]\n",
                    one, DiagCode::IndexTypes, "constant name or position");
  // Numba's strict-alignment check: a float64 at offset 4 of a packed record.
  const RecordType *unaligned =
      types::record({{"a", types::int32(), 0}, {"b", types::float64(), 4}}, 12, false);
  expectTypingError("  %2 = LoadLocal a\n  %3 = GetAttr %2 .b\n", {unaligned},
                    DiagCode::UnalignedRecordField, ".b of type float64 is not aligned");
  expectTypingError("  %2 = LoadLocal a\n  %3 = Const 1\n  SetAttr %2 .x = %3\n",
                    {types::array(types::float32(), 1, Layout::C)}, DiagCode::UnsupportedConstruct,
                    "only the fields of records");
  // Whole records: only one of the same dtype.
  expectTypingError("  %2 = LoadLocal a\n  %3 = Const 0\n  %4 = Const 1\n  SetItem %2[%3] = %4\n",
                    {types::array(alignedAB(), 1, Layout::C)}, DiagCode::SetItemTypes,
                    "cannot store");
}

TEST(RecordTyping, RecordsOfReadOnlyArraysAreReadOnly) {
  const RecordType *r = alignedAB();
  const RecordType *ro = types::readonlyRecord(r);
  EXPECT_TRUE(ro->readonly());
  EXPECT_FALSE(r->readonly());
  EXPECT_EQ(ro->writable(), r);
  EXPECT_EQ(types::readonlyRecord(ro), ro);
  EXPECT_EQ(ro->str(), "readonly " + r->str());
  EXPECT_EQ(parseTypeText(ro->str()), ro);
  const std::vector<const Type *> roArray = {types::array(r, 1, Layout::C, true)};
  // Reading works and gives read-only records; writing a field is refused.
  auto fn = typedIR(R"(function k(a) kernel
bb0:
  %0 = Arg 0 (a)
  StoreLocal a, %0
  %2 = LoadLocal a
  %3 = Const 0
  %4 = GetItem %2[%3]
  %5 = GetAttr %4 .a
  Return
)",
                    roArray);
  EXPECT_EQ(typeOf(*fn, 4), ro);
  EXPECT_EQ(typeOf(*fn, 5), types::float64());
  expectTypingError("  %2 = LoadLocal a\n  %3 = Const 0\n  %4 = GetItem %2[%3]\n"
                    "  %5 = Const 1\n  SetAttr %4 .b = %5\n",
                    roArray, DiagCode::ReadonlyArray, "read-only");
  expectTypingError("  %2 = LoadLocal a\n  %3 = Const 0\n  %4 = GetItem %2[%3]\n"
                    "  %5 = Const 'b'\n  %6 = Const 1\n  SetItem %4[%5] = %6\n",
                    roArray, DiagCode::ReadonlyArray, "read-only");
}
