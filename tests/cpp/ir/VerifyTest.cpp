// The IR verifier (ir/Verify.h): well-formed functions pass, and each kind of broken IR is
// rejected with a message naming the function, the block, the instruction and the fault.
#include "IRText.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace ptxjit::ir;
using ptxjit::ir::test::parseIR;
using ptxjit::ir::test::typedIR;
using ptxjit::ir::test::value;

namespace {

/// verify(fn) throws CompileError(Internal) whose message contains every one of `parts`.
void expectRejected(const Function &fn, const std::vector<std::string> &parts) {
  try {
    verify(fn);
    ADD_FAILURE() << "verify accepted:\n" << fn.print();
  } catch (const CompileError &e) {
    EXPECT_EQ(e.code(), DiagCode::Internal) << e.what();
    EXPECT_NE(e.message().find("verify: function " + fn.name), std::string::npos) << e.message();
    for (const std::string &p : parts)
      EXPECT_NE(e.message().find(p), std::string::npos) << e.message() << "\nlacks: " << p;
  }
}

/// parseFunction without verifying (the text is broken on purpose).
std::unique_ptr<Function> parse(std::string_view text) {
  std::unique_ptr<Function> fn = parseFunction(text);
  fn->filename = "kernels.py";
  return fn;
}

/// def k(x, n): i = cuda.grid(1); if i < n: x[i] = 1.5
const char *kSmall = R"(function k(x, n) kernel
bb0:
  %0 = Global cuda [symbol cuda]                ; line 3
  %1 = GetAttr %0 .grid                         ; line 3
  %2 = Const 1                                  ; line 3
  %3 = Call %1(%2)                              ; line 3
  StoreLocal i, %3                              ; line 3
  %5 = LoadLocal i                              ; line 4
  %6 = LoadLocal n                              ; line 4
  %7 = Compare < %5, %6                         ; line 4
  %8 = Truth %7                                 ; line 4
  Branch %8, bb1, bb2                           ; line 4
bb1:
  %10 = LoadLocal x                             ; line 5
  %11 = Const 1.5                               ; line 5
  SetItem %10[%5] = %11                         ; line 5
  Jump bb2                                      ; line 5
bb2:
  Return
)";

std::vector<const Type *> smallArgs() {
  return {types::array(types::float32(), 1, Layout::C), types::int32()};
}

} // namespace

TEST(Verify, AcceptsWellFormedFunctions) {
  std::unique_ptr<Function> fn = parse(kSmall);
  EXPECT_NO_THROW(verify(*fn));
  inferTypes(*fn, smallArgs(), nullptr);
  EXPECT_NO_THROW(verify(*fn));

  // A loop: the header's values dominate the body; the body reaches the exit through the
  // header; an unreachable block may use what its own block defines.
  std::unique_ptr<Function> loop = typedIR(R"(function k(n) kernel
bb0:
  %0 = Global range [symbol builtins.range]
  %1 = LoadLocal n
  %2 = Call %0(%1)
  %3 = GetIter %2
  Jump bb1
bb1:
  %5 = IterValid %3
  Branch %5, bb2, bb3
bb2:
  %7 = IterNext %3
  StoreLocal i, %7
  Jump bb1
bb3:
  Return
bb4:
  %11 = Const 2
  StoreLocal i, %11
  Jump bb1
)",
                                           {types::int64()});
  EXPECT_NO_THROW(verify(*loop));
}

TEST(Verify, UseBeforeDefinitionInTheBlock) {
  std::unique_ptr<Function> fn = parse(R"(function k(a) kernel
bb0:
  %0 = LoadLocal a
  %1 = BinOp + %0, %2
  %2 = Const 1
  Return
)");
  expectRejected(*fn, {"bb0", "%1 (BinOp)", "operand %2 is used before its definition"});
}

TEST(Verify, DefinitionThatDoesNotDominateTheUse) {
  // %3 is defined on one side of the branch and used at the join.
  std::unique_ptr<Function> fn = parse(R"(function k(a) kernel
bb0:
  %0 = LoadLocal a
  %1 = Truth %0
  Branch %1, bb1, bb2
bb1:
  %3 = Const 1
  Jump bb2
bb2:
  %5 = BinOp + %0, %3
  Return
)");
  expectRejected(*fn, {"bb2", "%5 (BinOp)", "operand %3 is defined in bb1",
                       "which does not dominate this use"});

  // A value of the loop body used in the loop header.
  std::unique_ptr<Function> loop = parse(R"(function k(a) kernel
bb0:
  Jump bb1
bb1:
  %1 = Truth %3
  Branch %1, bb2, bb3
bb2:
  %3 = LoadLocal a
  Jump bb1
bb3:
  Return
)");
  expectRejected(*loop, {"bb1", "%1 (Truth)", "operand %3 is defined in bb2"});

  // A reachable use of a value from an unreachable block.
  std::unique_ptr<Function> dead = parse(R"(function k(a) kernel
bb0:
  %0 = Truth %5
  Return
bb1:
  %5 = LoadLocal a
  Jump bb0
)");
  expectRejected(*dead, {"bb0", "%0 (Truth)", "operand %5 is defined in bb1"});
}

TEST(Verify, BlocksEndInExactlyOneTerminator) {
  std::unique_ptr<Function> missing = parse(R"(function k(a) kernel
bb0:
  %0 = LoadLocal a
  StoreLocal b, %0
)");
  expectRejected(*missing, {"bb0", "%1 (StoreLocal)", "does not end in a terminator"});

  std::unique_ptr<Function> middle = parse(R"(function k(a) kernel
bb0:
  Jump bb1
bb1:
  Return
  %2 = Const 1
  Return
)");
  expectRejected(*middle, {"bb1", "%1 (Return)", "a terminator in the middle of the block"});

  std::unique_ptr<Function> empty = parse(R"(function k(a) kernel
bb0:
  Jump bb1
bb1:
bb2:
  Return
)");
  expectRejected(*empty, {"bb1", "the block is empty"});

  std::unique_ptr<Function> none = parse("function k(a) kernel\n");
  expectRejected(*none, {"has no blocks"});
}

TEST(Verify, TargetsAndOperandsBelongToTheFunction) {
  std::unique_ptr<Function> other = parse(R"(function other() kernel
bb0:
  %0 = Const 7
  Jump bb1
bb1:
  Return
)");
  // A jump to another function's block.
  std::unique_ptr<Function> jump = parse(kSmall);
  cast<JumpInstr>(jump->blocks[1]->terminator())->target = other->blocks[1].get();
  expectRejected(*jump, {"bb1", "%13 (Jump)", "jumps to block bb1 of function other"});

  // A branch to a block that belongs to no function.
  std::unique_ptr<Function> branch = parse(kSmall);
  Block stray;
  stray.id = 7;
  cast<BranchInstr>(branch->blocks[0]->terminator())->ifFalse = &stray;
  expectRejected(*branch,
                 {"bb0", "%9 (Branch)", "jumps to block bb7 that is not in this function"});

  // An operand of another function.
  std::unique_ptr<Function> operand = parse(kSmall);
  value(*operand, 7)->setOperand(1, value(*other, 0));
  expectRejected(*operand, {"bb0", "%7 (Compare)", "operand %0 belongs to function other"});

  // An operand that produces no value (the StoreLocal %4).
  std::unique_ptr<Function> store = parse(kSmall);
  value(*store, 7)->setOperand(0, store->blocks[0]->instrs[4].get());
  expectRejected(*store, {"%7 (Compare)", "operand %4 (StoreLocal) produces no value"});

  std::unique_ptr<Function> null = parse(kSmall);
  value(*null, 8)->setOperand(0, nullptr);
  expectRejected(*null, {"%8 (Truth)", "operand 0 is null"});
}

TEST(Verify, IdsParentsVariablesAndArguments) {
  std::unique_ptr<Function> dup = parse(kSmall);
  value(*dup, 11)->id = 5;
  expectRejected(*dup, {"bb1", "%5 (Const)", "id %5 is also the id of %5 (LoadLocal) in bb0"});

  std::unique_ptr<Function> blocks = parse(kSmall);
  blocks->blocks[2]->id = 1;
  expectRejected(*blocks, {"two blocks have id bb1"});

  std::unique_ptr<Function> parent = parse(kSmall);
  value(*parent, 10)->parent = parent->blocks[0].get();
  expectRejected(*parent, {"bb1", "%10 (LoadLocal)", "parent is not this block"});

  std::unique_ptr<Function> var = parse(kSmall);
  cast<LoadLocalInstr>(value(*var, 6))->var = 9;
  expectRejected(*var, {"bb0", "%6 (LoadLocal)", "variable index 9 is out of range (3 variables)"});

  std::unique_ptr<Function> store = parse(kSmall);
  cast<StoreLocalInstr>(store->blocks[0]->instrs[4].get())->var = -1;
  expectRejected(*store, {"%4 (StoreLocal)", "variable index -1 is out of range"});

  std::unique_ptr<Function> arg = parse(R"(function k(a) kernel
bb0:
  %0 = Arg 1
  Return
)");
  expectRejected(*arg, {"bb0", "%0 (Arg)", "argument index 1 is out of range (1 parameters)"});

  std::unique_ptr<Function> params = parse(kSmall);
  params->vars[1].name = "m";
  expectRejected(*params, {"variable 1 is 'm', not parameter 'n'"});

  std::unique_ptr<Function> slice = parse(kSmall);
  Block *b1 = slice->blocks[1].get();
  auto s = std::make_unique<BuildSliceInstr>(std::vector<Instr *>{value(*slice, 11)});
  s->parent = b1;
  s->id = 40;
  b1->instrs.insert(b1->instrs.begin() + 2, std::move(s));
  expectRejected(*slice, {"%40 (BuildSlice)", "a slice has 2 or 3 parts, not 1"});
}

TEST(Verify, TypedFunctionsHaveTypes) {
  std::unique_ptr<Function> untyped = parse(kSmall);
  inferTypes(*untyped, smallArgs(), nullptr);
  value(*untyped, 7)->type = nullptr;
  expectRejected(*untyped, {"bb0", "%7 (Compare)", "no type after typing"});

  std::unique_ptr<Function> noArgTypes = parse(kSmall);
  inferTypes(*noArgTypes, smallArgs(), nullptr);
  noArgTypes->argTypes.pop_back();
  expectRejected(*noArgTypes, {"is typed but has 1 argument types for 2 parameters"});

  // What typing would have given a value it did not: hand-written typed text.
  const std::string head = "function k(a: int32) kernel -> void\n  var a : int32\n"
                           "  var s : ?\nbb0:\n";
  expectRejected(*parse(head + "  %0 = LoadLocal a\n  Return\n"),
                 {"bb0", "%0 (LoadLocal)", "no type after typing"});
  expectRejected(*parse(head + "  %0 = LoadLocal a : int64\n  Return\n"),
                 {"%0 (LoadLocal)", "has type int64 but variable 'a' is int32"});
  expectRejected(*parse(head + "  %0 = Arg 0 (a) : float32\n  Return\n"),
                 {"%0 (Arg)", "has type float32 but the parameter is int32"});
  expectRejected(*parse(head + "  %0 = LoadLocal a : int32\n  StoreLocal s, %0\n  Return\n"),
                 {"%1 (StoreLocal)", "stores to variable 's', which has no type"});
  expectRejected(*parse(head + "  %0 = LoadLocal a : int32\n  StoreLocal a, %0 : int32\n"
                               "  Return\n"),
                 {"%1 (StoreLocal)", "an instruction without a value has type int32"});
}

TEST(Verify, BranchConditionsAreBool) {
  std::unique_ptr<Function> fn = parse(R"(function k(n: int32) kernel -> void
  var n : int32
bb0:
  %0 = LoadLocal n : int32
  Branch %0, bb1, bb1
bb1:
  Return
)");
  expectRejected(*fn, {"bb0", "%1 (Branch)", "the condition %0 is int32, not bool"});

  // Typing accepts a branch on any value with a truth value (codegen tests it as Truth
  // would), but the IR's contract is a bool condition, which the frontend always gives
  // (Truth): verify holds typing's output to it.
  std::unique_ptr<Function> typed = parse(R"(function k(n) kernel
bb0:
  %0 = LoadLocal n
  Branch %0, bb1, bb1
bb1:
  Return
)");
  inferTypes(*typed, {types::int32()}, nullptr);
  expectRejected(*typed, {"the condition %0 is int32, not bool"});
}

TEST(Verify, ReturnValuesFitTheReturnType) {
  expectRejected(*parse(R"(function k(a: int64) kernel -> void
  var a : int64
bb0:
  %0 = LoadLocal a : int64
  Return %0
)"),
                 {"%1 (Return)", "returns %0 of type int64 from a function that returns void"});
  expectRejected(*parse(R"(function k() kernel -> int64
bb0:
  Return
)"),
                 {"is a kernel with return type int64, not void"});
  expectRejected(*parse(R"(function f(a: float64) device -> int32
  var a : float64
bb0:
  %0 = LoadLocal a : float64
  Return %0
)"),
                 {"%1 (Return)", "returns %0 of type float64, which does not fit the return "
                                 "type int32"});
  // A declared return type (a device function's eager signature) takes any number: Numba casts.
  std::unique_ptr<Function> declared = parse(R"(function f(a: float64) device -> int32 declared
  var a : float64
bb0:
  %0 = LoadLocal a : float64
  Return %0
)");
  EXPECT_TRUE(declared->returnTypeDeclared);
  EXPECT_NO_THROW(verify(*declared));
  EXPECT_NE(declared->print().find("-> int32 declared"), std::string::npos);
  // A device function to inline into every caller round-trips its mark.
  std::unique_ptr<Function> inlined = parse(R"(function f(a: float64) device alwaysinline -> float64
  var a : float64
bb0:
  %0 = LoadLocal a : float64
  Return %0
)");
  EXPECT_TRUE(inlined->alwaysInline);
  EXPECT_FALSE(declared->alwaysInline);
  EXPECT_NE(inlined->print().find(") device alwaysinline -> float64"), std::string::npos);
  expectRejected(*parse(R"(function f() device -> int64
bb0:
  Return
)"),
                 {"%0 (Return)", "returns nothing from a function that returns int64"});
  expectRejected(*parse(R"(function f() device -> int64
bb0:
  %0 = Const None : none
  Return %0
)"),
                 {"%1 (Return)", "returns none from a function that returns int64"});

  // What typing unifies passes: a weak literal and an int32 into float64, arrays of other
  // layouts into layout A, None from a kernel.
  EXPECT_NO_THROW(verify(*parse(R"(function f(a: int32) device -> float64
  var a : int32
bb0:
  %0 = LoadLocal a : int32
  %1 = Truth %0 : bool
  Branch %1, bb1, bb2
bb1:
  %3 = Const 2.5 : Literal[float]
  Return %3
bb2:
  Return %0
)")));
  EXPECT_NO_THROW(
      verify(*parse(R"(function f(x: array(float32, 1d, C)) device -> array(float32, 1d, A)
  var x : array(float32, 1d, C)
bb0:
  %0 = LoadLocal x : array(float32, 1d, C)
  Return %0
)")));
  EXPECT_NO_THROW(verify(*parse(R"(function k() kernel -> void
bb0:
  %0 = Const None : none
  Return %0
)")));
}

TEST(Verify, MessagesCarryTheInstructionsLocation) {
  std::unique_ptr<Function> fn = parse(kSmall);
  // SetItem %12 (line 5) stores itself.
  fn->blocks[1]->instrs[2]->setOperand(2, fn->blocks[1]->instrs[2].get());
  try {
    verify(*fn);
    ADD_FAILURE() << "accepted";
  } catch (const CompileError &e) {
    EXPECT_NE(e.message().find("%12 (SetItem): operand %12 (SetItem) produces no value"),
              std::string::npos)
        << e.message();
    EXPECT_EQ(e.loc().line, 5);
    EXPECT_EQ(e.file(), "kernels.py");
  }
}

TEST(Verify, VerifyInDebugFollowsTheBuildAndTheEnvironment) {
  std::unique_ptr<Function> broken = parse("function k() kernel\nbb0:\n  %0 = Const 1\n");
  ::setenv("PTXJIT_VERIFY_IR", "1", 1);
  EXPECT_THROW(verifyInDebug(*broken), CompileError);
  ::setenv("PTXJIT_VERIFY_IR", "0", 1);
#ifdef NDEBUG
  EXPECT_NO_THROW(verifyInDebug(*broken));
#else
  EXPECT_THROW(verifyInDebug(*broken), CompileError);
#endif
  ::unsetenv("PTXJIT_VERIFY_IR");
  EXPECT_NO_THROW(verifyInDebug(*parseIR(kSmall)));
}
