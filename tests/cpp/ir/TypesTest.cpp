// Interned types and their spellings, constant/global text, diagnostics.
#include "ir/Types.h"
#include "ir/Diagnostics.h"
#include "ir/IR.h"
#include "ir/Values.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <thread>

using namespace ptxjit::ir;

TEST(Types, ScalarsAreInternedWithNumbaSpellings) {
  EXPECT_EQ(types::int64(), types::integer(64, true));
  EXPECT_EQ(types::uint8(), types::integer(8, false));
  EXPECT_NE(types::int32(), types::uint32());
  EXPECT_EQ(types::float32(), types::floating(32));
  EXPECT_EQ(types::complex128(), types::complex(128));
  EXPECT_EQ(types::boolean()->str(), "bool");
  EXPECT_EQ(types::int8()->str(), "int8");
  EXPECT_EQ(types::uint64()->str(), "uint64");
  EXPECT_EQ(types::float32()->str(), "float32");
  EXPECT_EQ(types::complex64()->str(), "complex64");
  EXPECT_EQ(types::void_()->str(), "void");
  EXPECT_EQ(types::none()->str(), "none");
  EXPECT_EQ(types::range()->str(), "range_state64");
  EXPECT_EQ(types::int16()->bits(), 16);
  EXPECT_EQ(types::complex64()->byteSize(), 8);
  EXPECT_EQ(types::boolean()->byteSize(), 1);
  EXPECT_FALSE(types::uint16()->isSigned());
  EXPECT_TRUE(types::int16()->isSigned());
  EXPECT_EQ(types::none()->kind(), TypeKind::None);
  EXPECT_EQ(types::void_()->kind(), TypeKind::Void);
}

TEST(Types, WeakTypes) {
  EXPECT_TRUE(types::weakInt()->isWeak());
  EXPECT_FALSE(types::int64()->isWeak());
  EXPECT_TRUE(types::weakFloat()->isScalarNumber());
  EXPECT_EQ(types::weakInt()->defaultType(), types::int64());
  EXPECT_EQ(types::weakFloat()->defaultType(), types::float64());
  EXPECT_EQ(types::weakComplex()->defaultType(), types::complex128());
  EXPECT_EQ(concretize(types::weakFloat()), types::float64());
  EXPECT_EQ(concretize(types::float32()), types::float32());
  EXPECT_EQ(concretize(types::tuple({types::weakInt(), types::float32()})),
            types::tuple({types::int64(), types::float32()}));
  EXPECT_EQ(types::weakInt()->str(), "Literal[int]");
}

TEST(Types, ArraysAndTuples) {
  auto *a = types::array(types::float32(), 1, Layout::C);
  EXPECT_EQ(a, types::array(types::float32(), 1, Layout::C));
  EXPECT_NE(a, types::array(types::float32(), 1, Layout::A));
  EXPECT_NE(a, types::array(types::float32(), 1, Layout::C, true));
  EXPECT_EQ(a->str(), "array(float32, 1d, C)");
  EXPECT_EQ(types::array(types::int64(), 3, Layout::F)->str(), "array(int64, 3d, F)");
  EXPECT_EQ(types::array(types::float64(), 2, Layout::A, true)->str(),
            "readonly array(float64, 2d, A)");
  EXPECT_EQ(a->dtype(), types::float32());
  EXPECT_EQ(a->ndim(), 1);

  auto *u = types::tuple({types::int64(), types::int64()});
  EXPECT_EQ(u->str(), "UniTuple(int64 x 2)");
  EXPECT_EQ(u, types::tuple({types::int64(), types::int64()}));
  EXPECT_EQ(types::tuple({types::int64(), types::float32()})->str(), "Tuple(int64, float32)");
  EXPECT_EQ(types::tuple({})->str(), "Tuple()");
  EXPECT_EQ(types::tuple({u, types::boolean()})->str(), "Tuple(UniTuple(int64 x 2), bool)");
  EXPECT_EQ(u->size(), 2u);

  auto *it = types::iterator(IterKind::Range, types::int64(), {types::range()});
  EXPECT_EQ(it, types::iterator(IterKind::Range, types::int64(), {types::range()}));
  EXPECT_EQ(it->str(), "range_iter64");
  EXPECT_EQ(it->yieldType(), types::int64());

  EXPECT_EQ(types::symbol("math.sin"), types::symbol("math.sin"));
  EXPECT_EQ(types::symbol("math.sin")->path(), "math.sin");
  EXPECT_NE(types::functionRef(1, "f"), types::functionRef(2, "f"));
  EXPECT_EQ(types::functionRef(3, "g")->functionId(), 3);
}

TEST(Types, ScalarByName) {
  EXPECT_EQ(types::scalarByName("float32"), types::float32());
  EXPECT_EQ(types::scalarByName("f4"), types::float32());
  EXPECT_EQ(types::scalarByName("f8"), types::float64());
  EXPECT_EQ(types::scalarByName("i4"), types::int32());
  EXPECT_EQ(types::scalarByName("i8"), types::int64());
  EXPECT_EQ(types::scalarByName("u1"), types::uint8());
  EXPECT_EQ(types::scalarByName("b1"), types::boolean());
  EXPECT_EQ(types::scalarByName("bool"), types::boolean());
  EXPECT_EQ(types::scalarByName("boolean"), types::boolean());
  EXPECT_EQ(types::scalarByName("intp"), types::int64());
  EXPECT_EQ(types::scalarByName("complex128"), types::complex128());
  EXPECT_EQ(types::scalarByName("c8"), types::complex64());
  EXPECT_EQ(types::scalarByName("flaot32"), nullptr);
  EXPECT_EQ(types::scalarByName(""), nullptr);
}

TEST(Types, InterningIsThreadSafe) {
  std::vector<std::thread> threads;
  std::vector<std::vector<const Type *>> seen(8);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([t, &seen] {
      for (int n = 1; n <= 40; ++n) {
        seen[t].push_back(types::array(types::integer(8 << (n % 4), n % 2), n % 5, Layout::A));
        seen[t].push_back(types::tuple(std::vector<const Type *>(n % 7, types::float32())));
      }
    });
  for (auto &th : threads)
    th.join();
  for (int t = 1; t < 8; ++t)
    EXPECT_EQ(seen[t], seen[0]);
}

TEST(Values, ConstRepr) {
  EXPECT_EQ(ConstValue::none().str(), "None");
  EXPECT_EQ(ConstValue::boolean(true).str(), "True");
  EXPECT_EQ(ConstValue::integer(-42).str(), "-42");
  ConstValue big = ConstValue::integer(static_cast<int64_t>(UINT64_C(18446744073709551615)));
  big.isUnsigned = true;
  EXPECT_EQ(big.str(), "18446744073709551615");
  EXPECT_EQ(ConstValue::floating(2.5).str(), "2.5");
  EXPECT_EQ(ConstValue::floating(1.0).str(), "1.0");
  EXPECT_EQ(ConstValue::floating(0.1).str(), "0.1");
  EXPECT_EQ(ConstValue::floating(100000.0).str(), "100000.0");
  EXPECT_EQ(ConstValue::floating(1e16).str(), "1e+16");
  EXPECT_EQ(ConstValue::floating(1e-5).str(), "1e-05");
  EXPECT_EQ(ConstValue::floating(0.0001).str(), "0.0001");
  EXPECT_EQ(ConstValue::floating(-1.5e300).str(), "-1.5e+300");
  EXPECT_EQ(ConstValue::complexNum({0, 2}).str(), "2j");
  EXPECT_EQ(ConstValue::complexNum({1, -2.5}).str(), "(1-2.5j)");
  EXPECT_EQ(ConstValue::string("a'b").str(), "'a\\'b'");
  EXPECT_EQ(ConstValue::tuple({ConstValue::integer(1)}).str(), "(1,)");
  EXPECT_EQ(ConstValue::tuple({ConstValue::integer(1), ConstValue::floating(2)}).str(), "(1, 2.0)");
  EXPECT_EQ(ConstValue::unsupported("code").str(), "<code>");
}

TEST(Values, ConstEquality) {
  EXPECT_EQ(ConstValue::integer(3), ConstValue::integer(3));
  EXPECT_FALSE(ConstValue::integer(3) == ConstValue::integer(4));
  EXPECT_FALSE(ConstValue::integer(1) == ConstValue::floating(1.0));
  EXPECT_FALSE(ConstValue::floating(0.0) == ConstValue::floating(-0.0));
  EXPECT_EQ(ConstValue::floating(NAN), ConstValue::floating(NAN));
  EXPECT_EQ(ConstValue::tuple({ConstValue::none()}), ConstValue::tuple({ConstValue::none()}));
  EXPECT_FALSE(ConstValue::tuple({}) == ConstValue::tuple({ConstValue::none()}));
}

TEST(Values, GlobalText) {
  EXPECT_EQ(GlobalValue::symbol("cuda").str(), "symbol cuda");
  EXPECT_EQ(GlobalValue::makeConstant(ConstValue::floating(2.5)).str(), "const 2.5");
  EXPECT_EQ(GlobalValue::makeConstant(ConstValue::floating(2.5), "float32").str(),
            "const float32 2.5");
  EXPECT_EQ(GlobalValue::deviceFunction(3, "helper").str(), "device function helper #3");
  EXPECT_EQ(GlobalValue::kernel(1, "k").str(), "kernel k #1");
  EXPECT_EQ(GlobalValue::missing().str(), "missing");
}

TEST(Diagnostics, FormatAndError) {
  EXPECT_EQ(diagKind(DiagCode::OperatorTypes), DiagKind::Typing);
  EXPECT_EQ(diagKind(DiagCode::UnsupportedCall), DiagKind::Unsupported);
  EXPECT_EQ(diagKind(DiagCode::Internal), DiagKind::Internal);
  EXPECT_STREQ(diagName(DiagCode::CannotUnify), "CannotUnify");
  EXPECT_EQ(formatDiag(DiagCode::OperatorTypes, {"+", "int64", "array(float32, 1d, C)"}),
            "operator + is not defined for int64 and array(float32, 1d, C)");
  EXPECT_EQ(formatDiag(DiagCode::SetItemTypes, {"a", "b", "c"}), "cannot store c into a[b]");
  try {
    raiseDiag(DiagCode::UndefinedName, "k.py", SourceLoc{7, 4, 7, 9}, {"foo"});
    FAIL() << "raiseDiag returned";
  } catch (const CompileError &e) {
    EXPECT_EQ(e.code(), DiagCode::UndefinedName);
    // numba-cuda's: a TypingError reading "NameError: name 'foo' is not defined".
    EXPECT_EQ(e.kind(), DiagKind::Typing);
    EXPECT_EQ(e.message(), "NameError: name 'foo' is not defined");
    EXPECT_STREQ(e.what(), "k.py:7: NameError: name 'foo' is not defined");
    EXPECT_EQ(e.file(), "k.py");
    EXPECT_EQ(e.loc().col, 4);
    EXPECT_TRUE(e.callSites().empty());
  }
}

TEST(Diagnostics, CallSitesFollowTheErrorOut) {
  CompileError e(DiagCode::OperatorTypes, "operator + is not defined for a and b", "lib.py",
                 SourceLoc{5, 11, 5, 20});
  // The call that caused the error itself (a wrong argument count is reported at the call)
  // adds nothing.
  e.addCallSite({"dev", "k", "lib.py", SourceLoc{5, 11, 5, 20}});
  EXPECT_TRUE(e.callSites().empty());
  e.addCallSite({"dev", "helper", "lib.py", SourceLoc{12, 4, 12, 13}});
  e.addCallSite({"helper", "k", "main.py", SourceLoc{30, 8, 30, 20}});
  ASSERT_EQ(e.callSites().size(), 2u);
  EXPECT_EQ(e.callSites()[0].caller, "helper");
  EXPECT_EQ(e.callSites()[1].loc.line, 30);
  EXPECT_EQ(e.message(), "operator + is not defined for a and b");
  EXPECT_STREQ(e.what(), "lib.py:5: operator + is not defined for a and b (in 'dev', called "
                         "from 'helper' at lib.py:12) (in 'helper', called from 'k' at "
                         "main.py:30)");
  CompileError copy = e; // copies keep the sites (errors are rethrown by value)
  EXPECT_STREQ(copy.what(), e.what());
}

TEST(Diagnostics, ClosestNameIsDifflibsChoice) {
  // Each expectation is what difflib.get_close_matches(word, candidates, n=1) returns.
  const std::vector<std::string> cuda = {"grid",      "gridsize", "syncthreads",
                                         "threadIdx", "blockIdx", "blockDim",
                                         "shared",    "local",    "atomic"};
  EXPECT_EQ(closestName("grdi", cuda), "grid"); // CPython's own hint misses this one
  EXPECT_EQ(closestName("gird", cuda), "grid");
  EXPECT_EQ(closestName("syncthread", cuda), "syncthreads");
  EXPECT_EQ(closestName("threadidx", cuda), "threadIdx");
  EXPECT_EQ(closestName("blockidx", cuda), "blockIdx");
  EXPECT_EQ(closestName("shard", cuda), "shared");
  EXPECT_EQ(closestName("to_device", cuda), "");    // nothing is similar enough
  EXPECT_EQ(closestName("grid", cuda), "gridsize"); // never the word itself
  EXPECT_EQ(closestName("w", {"x", "y", "z"}), "");
  EXPECT_EQ(closestName("sqr", {"sqrt", "sin", "cbrt"}), "sqrt");
  // Ratcliff/Obershelp matches blocks recursively, not just the longest common substring:
  // "valeu" and "value" share "val" and then "e" (ratio 0.8); ties go to the greater string.
  EXPECT_EQ(closestName("valeu", {"value", "values"}), "value");
  EXPECT_EQ(closestName("abc", {"abx", "aby"}), "aby");
  EXPECT_EQ(closestName("abc", {"aby", "abx"}), "aby");
  // Private names are suggested only for a private word.
  EXPECT_EQ(closestName("data", {"_data"}), "");
  EXPECT_EQ(closestName("_dat", {"_data"}), "_data");
  EXPECT_EQ(closestName("", cuda), "");
  EXPECT_EQ(didYouMean("grid"), "; did you mean 'grid'?");
  EXPECT_EQ(didYouMean(""), "");
}

TEST(IR, Names) {
  EXPECT_STREQ(opcodeName(Opcode::BinOp), "BinOp");
  EXPECT_STREQ(opcodeName(Opcode::Return), "Return");
  EXPECT_STREQ(binaryOpName(BinaryOp::FloorDiv), "//");
  EXPECT_STREQ(binaryOpName(BinaryOp::Pow), "**");
  EXPECT_STREQ(unaryOpName(UnaryOpKind::Invert), "~");
  EXPECT_STREQ(unaryOpName(UnaryOpKind::Not), "not");
  EXPECT_STREQ(cmpOpName(CmpOp::IsNot), "is not");
  EXPECT_STREQ(cmpOpName(CmpOp::Le), "<=");
  EXPECT_EQ(builtinByPath("cuda.grid"), BuiltinId::CudaGrid);
  EXPECT_EQ(builtinByPath("cuda.threadIdx.y"), BuiltinId::ThreadIdxY);
  EXPECT_EQ(builtinByPath("builtins.range"), BuiltinId::Range);
  EXPECT_EQ(builtinByPath("math.factorial"), BuiltinId::None);
  EXPECT_STREQ(builtinPath(BuiltinId::GridDimZ), "cuda.gridDim.z");
  EXPECT_STREQ(builtinPath(BuiltinId::ArrayShape), "array.shape");
  std::set<std::string> paths;
  for (int k = 1; k <= static_cast<int>(BuiltinId::ArrayNdim); ++k) {
    std::string p = builtinPath(static_cast<BuiltinId>(k));
    EXPECT_EQ(builtinByPath(p), static_cast<BuiltinId>(k)) << p;
    paths.insert(p);
  }
  EXPECT_EQ(paths.size(), static_cast<size_t>(BuiltinId::ArrayNdim));
}
