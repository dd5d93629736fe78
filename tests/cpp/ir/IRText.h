// Helpers for ir tests that write IR as text (ir/IRParser.h): parse and verify a hand-written
// function, type it and check the typed result (verify, and print → parse → print), and find
// instructions and variables by their printed names to assert on them.
#pragma once

#include "ir/IRParser.h"
#include "ir/Verify.h"
#include "ir/typing/Typing.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ptxjit::ir::test {

/// Parses hand-written IR and verifies it; the file name is "kernels.py" (what typing's
/// messages carry). Throws CompileError for bad text or IR.
inline std::unique_ptr<Function> parseIR(std::string_view text) {
  std::unique_ptr<Function> fn = parseFunction(text);
  fn->filename = "kernels.py";
  verify(*fn);
  return fn;
}

/// Checks typed `fn` the way every typing test should: verify accepts it, and its text
/// parses back to the same text with the same (interned) types on every instruction and
/// variable; calls keep their callee through a lookup of `fn`'s own callees.
inline void expectTypedIRHolds(const Function &fn) {
  try {
    verify(fn);
  } catch (const CompileError &e) {
    ADD_FAILURE() << e.what() << "\n" << fn.print();
    return;
  }
  std::map<std::string, Function *> callees;
  for (const auto &b : fn.blocks)
    for (const auto &i : b->instrs)
      if (auto *c = dyn_cast<CallInstr>(i.get()); c && c->calleeFunction)
        callees[c->calleeFunction->name] = c->calleeFunction;
  CalleeLookup lookup = [&](const std::string &name) -> Function * {
    auto it = callees.find(name);
    return it == callees.end() ? nullptr : it->second;
  };
  std::string text = fn.print(/*withLocs=*/true);
  std::unique_ptr<Function> back;
  try {
    back = parseFunction(text, lookup);
  } catch (const CompileError &e) {
    ADD_FAILURE() << e.what() << "\n" << text;
    return;
  }
  EXPECT_EQ(back->print(true), text);
  ASSERT_EQ(back->vars.size(), fn.vars.size());
  for (size_t k = 0; k < fn.vars.size(); ++k) {
    EXPECT_EQ(back->vars[k].type, fn.vars[k].type) << fn.vars[k].printedName();
    EXPECT_EQ(back->vars[k].printedName(), fn.vars[k].printedName());
  }
  EXPECT_EQ(back->argTypes, fn.argTypes);
  EXPECT_EQ(back->returnType, fn.returnType);
  ASSERT_EQ(back->blocks.size(), fn.blocks.size());
  for (size_t b = 0; b < fn.blocks.size(); ++b) {
    ASSERT_EQ(back->blocks[b]->instrs.size(), fn.blocks[b]->instrs.size());
    for (size_t k = 0; k < fn.blocks[b]->instrs.size(); ++k) {
      const Instr *i = fn.blocks[b]->instrs[k].get();
      const Instr *j = back->blocks[b]->instrs[k].get();
      EXPECT_EQ(j->type, i->type) << "%" << i->id << " " << (i->type ? i->type->str() : "");
      EXPECT_EQ(j->builtin, i->builtin) << "%" << i->id;
    }
  }
  EXPECT_NO_THROW(verify(*back));
}

/// inferTypes, then expectTypedIRHolds.
inline void typeChecked(Function &fn, const std::vector<const Type *> &argTypes,
                        CallResolver *resolver = nullptr) {
  inferTypes(fn, argTypes, resolver);
  expectTypedIRHolds(fn);
}

/// parseIR, then typeChecked.
inline std::unique_ptr<Function> typedIR(std::string_view text,
                                         const std::vector<const Type *> &argTypes,
                                         CallResolver *resolver = nullptr) {
  std::unique_ptr<Function> fn = parseIR(text);
  typeChecked(*fn, argTypes, resolver);
  return fn;
}

/// The instruction printed as %id; throws std::out_of_range when there is none.
inline Instr *value(const Function &fn, int id) {
  for (const auto &b : fn.blocks)
    for (const auto &i : b->instrs)
      if (i->id == id)
        return i.get();
  throw std::out_of_range("no instruction %" + std::to_string(id) + " in " + fn.name);
}

/// The type of %id.
inline const Type *typeOf(const Function &fn, int id) { return value(fn, id)->type; }

/// The variable printed as `name` ("x", or "x.1" for version 1 of x); throws
/// std::out_of_range when there is none.
inline const Variable &var(const Function &fn, const std::string &name) {
  for (const Variable &v : fn.vars)
    if (v.printedName() == name)
      return v;
  throw std::out_of_range("no variable '" + name + "' in " + fn.name);
}

} // namespace ptxjit::ir::test
