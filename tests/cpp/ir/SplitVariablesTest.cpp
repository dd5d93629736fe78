// Versions of locals (ir/SplitVariables.h): which stores and loads become one variable, what
// stays one (merges, loop-carried values, parameters), how versions print and parse, and that
// typing then gives each version its own type.
#include "IRText.h"

#include "ir/SplitVariables.h"

#include <gtest/gtest.h>

using namespace ptxjit::ir;
using ptxjit::ir::test::parseIR;
using ptxjit::ir::test::typedIR;
using ptxjit::ir::test::value;
using ptxjit::ir::test::var;

namespace {

/// The printed name of the variable that instruction %id loads or stores.
std::string varOf(const Function &fn, int id) {
  const Instr *i = value(fn, id);
  if (auto *l = dyn_cast<LoadLocalInstr>(i))
    return fn.vars.at(static_cast<size_t>(l->var)).printedName();
  if (auto *s = dyn_cast<StoreLocalInstr>(i))
    return fn.vars.at(static_cast<size_t>(s->var)).printedName();
  throw std::out_of_range("%" + std::to_string(id) + " is no LoadLocal or StoreLocal");
}

std::unique_ptr<Function> split(const char *text) {
  std::unique_ptr<Function> fn = parseIR(text);
  splitVariables(*fn);
  verify(*fn);
  return fn;
}

/// def k(out): x = 1.5; out[0] = x; x = (1, 2); out[1] = x[0]
const char *kStraight = R"(function k(out) kernel
bb0:
  %0 = Arg 0
  StoreLocal out, %0
  %2 = Const 1.5
  StoreLocal x, %2
  %4 = LoadLocal x
  %5 = LoadLocal out
  %6 = Const 0
  SetItem %5[%6] = %4
  %8 = Const 1
  %9 = Const 2
  %10 = BuildTuple (%8, %9)
  StoreLocal x, %10
  %12 = LoadLocal x
  %13 = TupleGet %12, 0
  %14 = LoadLocal out
  %15 = Const 1
  SetItem %14[%15] = %13
  Return
)";

/// def k(c, out): if c: x = 1 else: x = <else value>; out[0] = x
std::string branches(const std::string &elseValue) {
  return R"(function k(c, out) kernel
bb0:
  %0 = Arg 0
  StoreLocal c, %0
  %2 = Arg 1
  StoreLocal out, %2
  %4 = LoadLocal c                              ; line 2
  %5 = Truth %4                                 ; line 2
  Branch %5, bb1, bb2                           ; line 2
bb1:
  %7 = Const 1                                  ; line 3
  StoreLocal x, %7                              ; line 3
  Jump bb3                                      ; line 3
bb2:
)" + elseValue +
         R"(
  StoreLocal x, %10                             ; line 5
  Jump bb3                                      ; line 5
bb3:
  %13 = LoadLocal x                             ; line 6
  %14 = LoadLocal out                           ; line 6
  %15 = Const 0                                 ; line 6
  SetItem %14[%15] = %13                        ; line 6
  Return                                        ; line 6
)";
}

/// def k(n, out):
///     x = 0
///     while n > 0:
///         t = n * 2          (dead at the loop's head: assigned before read)
///         x = x + 0.5        (carried around the loop)
///         t = (t, t)
///         out[1] = t[0]
///         n = n - 1
///     out[0] = x
const char *kLoop = R"(function k(n, out) kernel
bb0:
  %0 = Arg 0
  StoreLocal n, %0
  %2 = Arg 1
  StoreLocal out, %2
  %4 = Const 0
  StoreLocal x, %4
  Jump bb1
bb1:
  %7 = LoadLocal n
  %8 = Const 0
  %9 = Compare > %7, %8
  Branch %9, bb2, bb3
bb2:
  %11 = LoadLocal n
  %12 = Const 2
  %13 = BinOp * %11, %12
  StoreLocal t, %13
  %15 = LoadLocal x
  %16 = Const 0.5
  %17 = BinOp + %15, %16
  StoreLocal x, %17
  %19 = LoadLocal t
  %20 = BuildTuple (%19, %19)
  StoreLocal t, %20
  %22 = LoadLocal t
  %23 = TupleGet %22, 0
  %24 = LoadLocal out
  %25 = Const 1
  SetItem %24[%25] = %23
  %27 = LoadLocal n
  %28 = Const 1
  %29 = BinOp - %27, %28
  StoreLocal n, %29
  Jump bb1
bb3:
  %32 = LoadLocal x
  %33 = LoadLocal out
  %34 = Const 0
  SetItem %33[%34] = %32
  Return
)";

const ArrayType *f64a() { return types::array(types::float64(), 1, Layout::C); }

} // namespace

TEST(SplitVariables, StraightLineAssignmentsAreVersions) {
  auto fn = split(kStraight);
  EXPECT_EQ(varOf(*fn, 3), "x"); // StoreLocal x, %2 is instruction %3
  EXPECT_EQ(varOf(*fn, 4), "x");
  EXPECT_EQ(varOf(*fn, 11), "x.1");
  EXPECT_EQ(varOf(*fn, 12), "x.1");
  EXPECT_EQ(var(*fn, "x.1").name, "x");
  EXPECT_EQ(var(*fn, "x.1").version, 1);
  EXPECT_FALSE(var(*fn, "x.1").isArgument);
  EXPECT_NE(fn->print().find("StoreLocal x.1, %10"), std::string::npos) << fn->print();
}

TEST(SplitVariables, TypingGivesEachVersionItsType) {
  auto fn = typedIR(kStraight, {f64a()});
  EXPECT_EQ(var(*fn, "x").type, types::float64());
  EXPECT_EQ(var(*fn, "x.1").type->str(), "UniTuple(int64 x 2)");
}

TEST(SplitVariables, BranchesMeetingAtAUseStayOneVariable) {
  auto fn = split(branches("  %10 = Const 2.5                              ; line 5").c_str());
  EXPECT_EQ(varOf(*fn, 8), "x");
  EXPECT_EQ(varOf(*fn, 11), "x");
  EXPECT_EQ(varOf(*fn, 13), "x");
  EXPECT_THROW(var(*fn, "x.1"), std::out_of_range);
  auto typed = typedIR(branches("  %10 = Const 2.5                              ; line 5"),
                       {types::int64(), f64a()});
  EXPECT_EQ(var(*typed, "x").type, types::float64());
}

TEST(SplitVariables, BranchesOfIncompatibleTypesAreRefusedNamingTheVariable) {
  auto fn = parseIR(branches("  %10 = BuildTuple (%4, %4)                     ; line 5"));
  try {
    inferTypes(*fn, {types::int64(), f64a()}, nullptr);
    ADD_FAILURE() << "expected CannotUnify:\n" << fn->print();
  } catch (const CompileError &e) {
    EXPECT_EQ(e.code(), DiagCode::CannotUnify) << e.what();
    EXPECT_NE(e.message().find(
                  "variable 'x' has incompatible types Literal[int] and UniTuple(int64 x 2)"),
              std::string::npos)
        << e.message();
    EXPECT_EQ(e.loc().line, 5);
  }
}

TEST(SplitVariables, LoopCarriedValuesStayOneVariableDeadOnesSplit) {
  auto fn = split(kLoop);
  // x: the store before the loop and the one in it meet at the loop's head.
  EXPECT_EQ(varOf(*fn, 5), "x");
  EXPECT_EQ(varOf(*fn, 18), "x");
  EXPECT_EQ(varOf(*fn, 32), "x");
  // n: the parameter, carried around the loop.
  EXPECT_EQ(varOf(*fn, 1), "n");
  EXPECT_EQ(varOf(*fn, 30), "n");
  // t: two versions in the body, neither live at the head.
  EXPECT_EQ(varOf(*fn, 14), "t");
  EXPECT_EQ(varOf(*fn, 19), "t");
  EXPECT_EQ(varOf(*fn, 21), "t.1");
  EXPECT_EQ(varOf(*fn, 22), "t.1");
  auto typed = typedIR(kLoop, {types::int64(), f64a()});
  EXPECT_EQ(var(*typed, "x").type, types::float64());
  EXPECT_EQ(var(*typed, "t").type, types::int64());
  EXPECT_EQ(var(*typed, "t.1").type->str(), "UniTuple(int64 x 2)");
}

TEST(SplitVariables, ParameterKeepsItsIndexAndArgument) {
  // def k(a, out): out[0] = a; a = (1, 2); out[1] = a[1]; the parameter's own load comes
  // first, without an entry store (hand-written IR may omit it).
  auto fn = split(R"(function k(a, out) kernel
bb0:
  %0 = LoadLocal a
  %1 = LoadLocal out
  %2 = Const 0
  SetItem %1[%2] = %0
  %4 = Const 1
  %5 = Const 2
  %6 = BuildTuple (%4, %5)
  StoreLocal a, %6
  %8 = LoadLocal a
  %9 = TupleGet %8, 1
  %10 = Const 1
  SetItem %1[%10] = %9
  Return
)");
  EXPECT_EQ(varOf(*fn, 0), "a");
  EXPECT_EQ(fn->vars[0].printedName(), "a");
  EXPECT_TRUE(fn->vars[0].isArgument);
  EXPECT_EQ(varOf(*fn, 7), "a.1");
  EXPECT_EQ(varOf(*fn, 8), "a.1");
  EXPECT_FALSE(var(*fn, "a.1").isArgument);
}

TEST(SplitVariables, ReadBeforeAnyAssignmentStaysWithTheFirstVersion) {
  auto fn = split(R"(function k(out) kernel
bb0:
  %0 = LoadLocal y
  %1 = Const 1
  StoreLocal y, %1
  %3 = Const 2.5
  StoreLocal y, %3
  %5 = LoadLocal y
  Return
)");
  EXPECT_EQ(varOf(*fn, 0), "y");
  EXPECT_EQ(varOf(*fn, 2), "y");
  EXPECT_EQ(varOf(*fn, 4), "y.1");
  EXPECT_EQ(varOf(*fn, 5), "y.1");
}

TEST(SplitVariables, IsIdempotentAndNumbersAfterExistingVersions) {
  auto fn = split(kLoop);
  std::string once = fn->print();
  splitVariables(*fn);
  EXPECT_EQ(fn->print(), once);
  // A function already holding versions: new ones come after the highest.
  auto more = split(R"(function k(out) kernel
bb0:
  %0 = Const 1
  StoreLocal x.1, %0
  %2 = LoadLocal x.1
  %3 = Const 2
  StoreLocal x.1, %3
  %5 = LoadLocal x.1
  Return
)");
  EXPECT_EQ(varOf(*more, 1), "x.1");
  EXPECT_EQ(varOf(*more, 4), "x.2");
}

TEST(SplitVariables, PrintedVersionsParseBack) {
  auto fn = split(kStraight);
  auto back = parseIR(fn->print());
  EXPECT_EQ(back->print(), fn->print());
  EXPECT_EQ(var(*back, "x.1").name, "x");
  EXPECT_EQ(var(*back, "x.1").version, 1);
  EXPECT_EQ(parseVariableName("x.12"), std::make_pair(std::string("x"), 12));
  EXPECT_EQ(parseVariableName("$stack3"), std::make_pair(std::string("$stack3"), 0));
  EXPECT_EQ(parseVariableName("x.0"), std::make_pair(std::string("x.0"), 0));
  EXPECT_EQ(parseVariableName("x."), std::make_pair(std::string("x."), 0));
}
