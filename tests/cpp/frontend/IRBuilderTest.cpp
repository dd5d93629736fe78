// The stack simulation: structural invariants of the IR of every supported sample, specific
// translations (loops, calls with keywords, augmented assignment, closures, constants past
// EXTENDED_ARG), hand-assembled bytecode for the corner cases, and mutated bytecode that must
// fail with a CompileError rather than crash.
#include "frontend/Cfg.h"
#include "frontend/Frontend.h"
#include "tests/cpp/frontend/FixtureLoader.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <set>

namespace ptxjit::frontend {
namespace {

using ir::cast;
using ir::dyn_cast;
using ir::isa;

class IRBuilderTest : public ::testing::TestWithParam<PyVersion> {
protected:
  std::unique_ptr<ir::Function> build(const std::string &name) {
    return buildFunction(fixtures::loadSnapshot(GetParam(), name), ir::FunctionKind::Kernel);
  }
};

template <typename T> std::vector<T *> instrsOf(const ir::Function &fn) {
  std::vector<T *> out;
  for (const auto &b : fn.blocks)
    for (const auto &i : b->instrs)
      if (auto *t = dyn_cast<T>(i.get()))
        out.push_back(t);
  return out;
}

/// Invariants every function the frontend builds must satisfy.
void checkInvariants(const ir::Function &fn, const CodeSnapshot &s) {
  ASSERT_FALSE(fn.blocks.empty());
  EXPECT_EQ(fn.name, s.name);
  EXPECT_EQ(fn.qualname, s.qualname);
  EXPECT_EQ(fn.filename, s.filename);
  EXPECT_EQ(fn.firstLine, s.firstLine);
  // Parameters first, flagged, in order.
  ASSERT_EQ(fn.argNames.size(), static_cast<size_t>(s.argCount + s.kwOnlyArgCount));
  for (size_t k = 0; k < fn.vars.size(); ++k) {
    EXPECT_EQ(fn.vars[k].isArgument, k < fn.argNames.size()) << fn.vars[k].name;
    if (k < fn.argNames.size()) {
      EXPECT_EQ(fn.vars[k].name, fn.argNames[k]);
    }
  }
  // The entry block stores each argument into its variable.
  std::set<int> storedArgs;
  for (const auto &i : fn.entry()->instrs)
    if (auto *st = dyn_cast<ir::StoreLocalInstr>(i.get()))
      if (auto *a = dyn_cast<ir::ArgInstr>(st->operand(0))) {
        EXPECT_EQ(st->var, a->index);
        storedArgs.insert(a->index);
      }
  EXPECT_EQ(storedArgs.size(), fn.argNames.size());

  std::set<const ir::Block *> blocks;
  for (const auto &b : fn.blocks)
    blocks.insert(b.get());
  std::set<int> ids;
  std::set<int> loadedStack, storedStack;
  for (size_t bi = 0; bi < fn.blocks.size(); ++bi) {
    const ir::Block &b = *fn.blocks[bi];
    EXPECT_EQ(b.id, static_cast<int>(bi));
    ASSERT_FALSE(b.instrs.empty()) << "bb" << b.id;
    EXPECT_NE(b.terminator(), nullptr) << "bb" << b.id;
    std::set<const ir::Instr *> defined; // values defined so far in this block
    for (size_t k = 0; k < b.instrs.size(); ++k) {
      const ir::Instr *i = b.instrs[k].get();
      EXPECT_EQ(i->parent, &b);
      EXPECT_TRUE(ids.insert(i->id).second) << "duplicate %" << i->id;
      EXPECT_GT(i->loc.line, 0) << "%" << i->id << " in bb" << b.id << " has no line";
      EXPECT_EQ(i->isTerminator(), k + 1 == b.instrs.size()) << "%" << i->id;
      // Values never cross blocks: across edges they go through "$stack" variables.
      for (const ir::Instr *op : i->operands()) {
        ASSERT_NE(op, nullptr) << "%" << i->id;
        EXPECT_TRUE(defined.count(op))
            << "%" << i->id << " uses %" << op->id << " not defined before it in bb" << b.id;
      }
      defined.insert(i);
      if (auto *l = dyn_cast<ir::LoadLocalInstr>(i)) {
        ASSERT_GE(l->var, 0);
        ASSERT_LT(static_cast<size_t>(l->var), fn.vars.size());
        if (fn.vars[static_cast<size_t>(l->var)].name.rfind("$stack", 0) == 0)
          loadedStack.insert(l->var);
      }
      if (auto *st = dyn_cast<ir::StoreLocalInstr>(i)) {
        ASSERT_GE(st->var, 0);
        ASSERT_LT(static_cast<size_t>(st->var), fn.vars.size());
        if (fn.vars[static_cast<size_t>(st->var)].name.rfind("$stack", 0) == 0)
          storedStack.insert(st->var);
      }
      if (auto *j = dyn_cast<ir::JumpInstr>(i)) {
        EXPECT_TRUE(blocks.count(j->target));
      }
      if (auto *br = dyn_cast<ir::BranchInstr>(i)) {
        EXPECT_TRUE(blocks.count(br->ifTrue));
        EXPECT_TRUE(blocks.count(br->ifFalse));
        EXPECT_TRUE(isa<ir::TruthInstr>(br->operand(0)) || isa<ir::IterValidInstr>(br->operand(0)))
            << "branch on %" << br->operand(0)->id;
      }
    }
  }
  // Each "$stack" variable read is written somewhere, and vice versa.
  EXPECT_EQ(loadedStack, storedStack);
  // Every block is reachable from the entry.
  std::set<const ir::Block *> seen{fn.entry()};
  std::vector<const ir::Block *> work{fn.entry()};
  while (!work.empty()) {
    const ir::Block *b = work.back();
    work.pop_back();
    for (const ir::Block *s : b->successors())
      if (seen.insert(s).second)
        work.push_back(s);
  }
  EXPECT_EQ(seen.size(), fn.blocks.size());
}

TEST_P(IRBuilderTest, InvariantsHoldForEverySupportedSample) {
  int n = 0;
  for (const std::string &name : fixtures::fixtureNames(GetParam())) {
    fixtures::Fixture f = fixtures::loadFixture(GetParam(), name);
    if (f.expectReject)
      continue;
    SCOPED_TRACE(name);
    std::unique_ptr<ir::Function> fn = buildFunction(f.snapshot, ir::FunctionKind::Device);
    EXPECT_EQ(fn->kind, ir::FunctionKind::Device);
    checkInvariants(*fn, f.snapshot);
    ++n;
  }
  EXPECT_GE(n, 20);
}

TEST_P(IRBuilderTest, ForLoopShape) {
  for (const char *name :
       {"range_1", "range_2", "range_3_negative", "nested_loops", "for_iter_probe"}) {
    SCOPED_TRACE(name);
    std::unique_ptr<ir::Function> fn = build(name);
    std::vector<ir::IterValidInstr *> valids = instrsOf<ir::IterValidInstr>(*fn);
    std::vector<ir::IterNextInstr *> nexts = instrsOf<ir::IterNextInstr>(*fn);
    std::vector<ir::GetIterInstr *> iters = instrsOf<ir::GetIterInstr>(*fn);
    size_t loops = std::string(name) == "nested_loops" ? 2 : 1;
    ASSERT_EQ(valids.size(), loops);
    ASSERT_EQ(nexts.size(), loops);
    ASSERT_EQ(iters.size(), loops);
    for (ir::IterValidInstr *v : valids) {
      // Header: load of the iterator variable, IterValid, Branch on it, nothing else.
      ir::Block *header = v->parent;
      ASSERT_EQ(header->instrs.size(), 3u);
      auto *load = dyn_cast<ir::LoadLocalInstr>(header->instrs[0].get());
      ASSERT_NE(load, nullptr);
      EXPECT_EQ(fn->vars[static_cast<size_t>(load->var)].name.rfind("$stack", 0), 0u);
      auto *br = dyn_cast<ir::BranchInstr>(header->terminator());
      ASSERT_NE(br, nullptr);
      EXPECT_EQ(br->operand(0), v);
      // The body (true edge) starts with IterNext of the same variable.
      ir::Block *body = br->ifTrue;
      ASSERT_GE(body->instrs.size(), 2u);
      auto *bodyLoad = dyn_cast<ir::LoadLocalInstr>(body->instrs[0].get());
      ASSERT_NE(bodyLoad, nullptr);
      EXPECT_EQ(bodyLoad->var, load->var);
      auto *next = dyn_cast<ir::IterNextInstr>(body->instrs[1].get());
      ASSERT_NE(next, nullptr);
      EXPECT_EQ(next->operand(0), bodyLoad);
      // The loop variable is stored right after.
      ASSERT_GE(body->instrs.size(), 3u);
      EXPECT_TRUE(isa<ir::StoreLocalInstr>(body->instrs[2].get()));
      // The exit does not see the iterator again.
      EXPECT_NE(br->ifFalse, body);
    }
  }
  // range() gets one, two and three arguments.
  for (auto [name, argc] :
       {std::pair<const char *, size_t>{"range_1", 1}, {"range_2", 2}, {"range_3_negative", 3}}) {
    std::unique_ptr<ir::Function> fn = build(name);
    ir::Instr *it = instrsOf<ir::GetIterInstr>(*fn).at(0)->operand(0);
    auto *call = dyn_cast<ir::CallInstr>(it);
    ASSERT_NE(call, nullptr) << name;
    EXPECT_EQ(call->numArgs(), argc) << name;
    auto *g = dyn_cast<ir::GlobalInstr>(call->callee());
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->value.path, "builtins.range");
  }
}

TEST_P(IRBuilderTest, CallsAndKeywords) {
  std::unique_ptr<ir::Function> fn = build("builtins_and_math");
  std::vector<ir::CallInstr *> calls = instrsOf<ir::CallInstr>(*fn);
  // cuda.grid(1), min, abs, max, float, math.sqrt, len, math.isclose
  ASSERT_EQ(calls.size(), 8u);
  ir::CallInstr *isclose = calls.back();
  auto *attr = dyn_cast<ir::GetAttrInstr>(isclose->callee());
  ASSERT_NE(attr, nullptr);
  EXPECT_EQ(attr->attr, "isclose");
  auto *math = dyn_cast<ir::GlobalInstr>(attr->operand(0));
  ASSERT_NE(math, nullptr);
  EXPECT_EQ(math->value.kind, ir::GlobalValue::Kind::Symbol);
  EXPECT_EQ(math->value.path, "math");
  EXPECT_EQ(isclose->numArgs(), 3u);
  EXPECT_EQ(isclose->kwNames, std::vector<std::string>{"rel_tol"});
  auto *tol = dyn_cast<ir::ConstInstr>(isclose->arg(2));
  ASSERT_NE(tol, nullptr);
  EXPECT_EQ(tol->value.f, 1e-6);
  for (ir::CallInstr *c : calls)
    if (c != isclose) {
      EXPECT_TRUE(c->kwNames.empty());
    }
  // The method-form call cuda.grid(1) has the attribute as callee and no extra self.
  ir::CallInstr *grid = calls.front();
  auto *gridAttr = dyn_cast<ir::GetAttrInstr>(grid->callee());
  ASSERT_NE(gridAttr, nullptr);
  EXPECT_EQ(gridAttr->attr, "grid");
  EXPECT_EQ(grid->numArgs(), 1u);
}

TEST_P(IRBuilderTest, AugmentedAssignment) {
  std::unique_ptr<ir::Function> fn = build("augmented");
  int inplace = 0, plain = 0;
  for (ir::BinOpInstr *b : instrsOf<ir::BinOpInstr>(*fn))
    (b->inplace ? inplace : plain)++;
  EXPECT_EQ(inplace, 13); // s op= ... eleven times, out[i] += v, a[i, 0] -= s
  EXPECT_EQ(plain, 0);
  // out[i] += v reads and writes the same element.
  std::vector<ir::SetItemInstr *> sets = instrsOf<ir::SetItemInstr>(*fn);
  ASSERT_EQ(sets.size(), 2u);
  auto *sum = dyn_cast<ir::BinOpInstr>(sets[0]->operand(2));
  ASSERT_NE(sum, nullptr);
  EXPECT_EQ(sum->binop, ir::BinaryOp::Add);
  auto *get = dyn_cast<ir::GetItemInstr>(sum->operand(0));
  ASSERT_NE(get, nullptr);
  EXPECT_EQ(get->operand(0), sets[0]->operand(0));
  EXPECT_EQ(get->operand(1), sets[0]->operand(1));
}

TEST_P(IRBuilderTest, GlobalsClosuresAndMissingNames) {
  std::unique_ptr<ir::Function> fn = build("global_and_closure");
  std::map<std::string, ir::GlobalValue> seen;
  for (ir::GlobalInstr *g : instrsOf<ir::GlobalInstr>(*fn))
    seen[g->name] = g->value;
  ASSERT_TRUE(seen.count("factor")); // the closure cell
  EXPECT_EQ(seen["factor"].kind, ir::GlobalValue::Kind::Constant);
  EXPECT_EQ(seen["factor"].constant.i, 3);
  EXPECT_EQ(seen["SCALE"].constant.f, 2.5);
  EXPECT_EQ(seen["OFFSETS"].constant.kind, ir::ConstValue::Kind::Tuple);
  EXPECT_EQ(seen["cuda"].path, "cuda");

  std::unique_ptr<ir::Function> missing = build("missing_global");
  std::vector<ir::GlobalInstr *> gs = instrsOf<ir::GlobalInstr>(*missing);
  ASSERT_EQ(gs.size(), 1u);
  EXPECT_EQ(gs[0]->name, "not_defined_anywhere");
  EXPECT_EQ(gs[0]->value.kind, ir::GlobalValue::Kind::Missing);
}

TEST_P(IRBuilderTest, ComparisonsUnaryAndTuples) {
  std::unique_ptr<ir::Function> fn = build("is_none_compare");
  std::multiset<ir::CmpOp> cmps;
  for (ir::CompareInstr *c : instrsOf<ir::CompareInstr>(*fn)) {
    cmps.insert(c->cmp);
    if (c->cmp == ir::CmpOp::Is || c->cmp == ir::CmpOp::IsNot) {
      auto *k = dyn_cast<ir::ConstInstr>(c->operand(1));
      ASSERT_NE(k, nullptr);
      EXPECT_EQ(k->value.kind, ir::ConstValue::Kind::None);
    }
  }
  EXPECT_EQ(cmps.count(ir::CmpOp::Is) + cmps.count(ir::CmpOp::IsNot), 2u);

  std::multiset<ir::UnaryOpKind> un;
  std::unique_ptr<ir::Function> unary = build("unary_ops");
  for (ir::UnaryOpInstr *u : instrsOf<ir::UnaryOpInstr>(*unary))
    un.insert(u->unop);
  EXPECT_EQ(un, (std::multiset<ir::UnaryOpKind>{ir::UnaryOpKind::Neg, ir::UnaryOpKind::Pos,
                                                ir::UnaryOpKind::Invert}));

  std::unique_ptr<ir::Function> tu = build("tuple_unpack");
  std::vector<int> idx;
  for (ir::TupleGetInstr *t : instrsOf<ir::TupleGetInstr>(*tu))
    idx.push_back(t->index);
  EXPECT_EQ(idx, (std::vector<int>{0, 1, 0, 1, 0, 1}));     // cuda.grid(2), p, a.shape
  EXPECT_EQ(instrsOf<ir::BuildTupleInstr>(*tu).size(), 2u); // (i, j) and out[q, r]

  // `0 <= i < n` compares i twice but evaluates it once.
  std::unique_ptr<ir::Function> cc = build("chained_compare");
  std::vector<ir::CompareInstr *> c = instrsOf<ir::CompareInstr>(*cc);
  ASSERT_GE(c.size(), 2u);
  EXPECT_EQ(c[0]->cmp, ir::CmpOp::Le);
  EXPECT_EQ(c[1]->cmp, ir::CmpOp::Lt);
  auto *lhs = dyn_cast<ir::LoadLocalInstr>(c[1]->operand(0));
  ASSERT_NE(lhs, nullptr); // i, carried across the edge in a "$stack" variable
  EXPECT_EQ(cc->vars[static_cast<size_t>(lhs->var)].name.rfind("$stack", 0), 0u);
}

TEST_P(IRBuilderTest, SlicesAndReturns) {
  std::unique_ptr<ir::Function> fn = build("slices");
  std::vector<size_t> parts;
  for (ir::BuildSliceInstr *s : instrsOf<ir::BuildSliceInstr>(*fn))
    parts.push_back(s->numOperands());
  EXPECT_EQ(parts, (std::vector<size_t>{2, 3, 2})); // x[1:3], x[::2], x[1:]

  std::unique_ptr<ir::Function> rn = build("return_none");
  std::vector<ir::ReturnInstr *> rets = instrsOf<ir::ReturnInstr>(*rn);
  ASSERT_GE(rets.size(), 2u);
  for (ir::ReturnInstr *r : rets)
    EXPECT_EQ(r->value(), nullptr);

  std::unique_ptr<ir::Function> probe = build("for_iter_probe");
  std::vector<ir::ReturnInstr *> pr = instrsOf<ir::ReturnInstr>(*probe);
  ASSERT_EQ(pr.size(), 1u);
  ASSERT_NE(pr[0]->value(), nullptr);
  EXPECT_TRUE(isa<ir::LoadLocalInstr>(pr[0]->value()));
}

TEST_P(IRBuilderTest, ConstantsPastExtendedArg) {
  std::unique_ptr<ir::Function> fn = build("extended_arg");
  std::vector<double> factors;
  for (ir::BinOpInstr *b : instrsOf<ir::BinOpInstr>(*fn))
    if (b->binop == ir::BinaryOp::Mul)
      if (auto *c = dyn_cast<ir::ConstInstr>(b->operand(1)))
        factors.push_back(c->value.f);
  ASSERT_EQ(factors.size(), 300u);
  for (size_t k = 0; k < factors.size(); ++k)
    EXPECT_EQ(factors[k], k + 0.5);
  EXPECT_EQ(instrsOf<ir::IterNextInstr>(*fn).size(), 1u);
}

TEST_P(IRBuilderTest, UnreachableBlocksAreDropped) {
  CodeSnapshot s = fixtures::loadSnapshot(GetParam(), "range_1");
  BytecodeView view(s);
  Cfg cfg(view);
  size_t reachable = 0;
  for (const CfgBlock &b : cfg.blocks())
    reachable += b.reachable;
  std::unique_ptr<ir::Function> fn = buildFunction(s, ir::FunctionKind::Kernel);
  EXPECT_EQ(fn->blocks.size(), reachable); // the entry is merged into the first block
  switch (GetParam()) {
  case PyVersion::Py311:
    EXPECT_EQ(reachable, cfg.blocks().size());
    break;
  case PyVersion::Py312:
  case PyVersion::Py313:
    // The END_FOR that FOR_ITER jumps over starts a block nothing reaches.
    EXPECT_EQ(reachable + 1, cfg.blocks().size());
    for (const CfgBlock &b : cfg.blocks())
      if (!b.reachable) {
        EXPECT_EQ(view.at(b.begin).op, PyOp::END_FOR);
      }
    break;
  }
}

/// Assembles instructions {op, arg} for `v`, adding inline caches; a jump's arg is given
/// as the index of its target instruction and converted to CPython's relative operand.
CodeSnapshot assemble(PyVersion v, const std::vector<std::pair<PyOp, int>> &prog) {
  std::vector<int> offsets;
  int off = 0;
  for (const auto &[op, arg] : prog) {
    offsets.push_back(off);
    off += 2 + 2 * pyOpCacheEntries(v, op);
  }
  offsets.push_back(off);
  CodeSnapshot s;
  s.version = v;
  s.name = s.qualname = "synthetic";
  s.filename = "synthetic.py";
  s.firstLine = 1;
  for (size_t k = 0; k < prog.size(); ++k) {
    auto [op, arg] = prog[k];
    if (pyOpJumpKind(op) != JumpKind::None) {
      int end = offsets[k + 1];
      int dest = offsets[static_cast<size_t>(arg)];
      arg = (pyOpJumpsBackward(op) ? end - dest : dest - end) / 2;
    }
    EXPECT_TRUE(pyOpNumber(v, op).has_value()) << pyOpName(op);
    s.code.push_back(*pyOpNumber(v, op));
    s.code.push_back(static_cast<uint8_t>(arg));
    for (int c = 0; c < pyOpCacheEntries(v, op); ++c)
      s.code.insert(s.code.end(), {0, 0});
  }
  for (size_t u = 0; u < s.code.size() / 2; ++u)
    s.positions.push_back(Position{2, 2, 0, 1});
  s.consts = {ir::ConstValue::none(), ir::ConstValue::integer(7)};
  return s;
}

TEST_P(IRBuilderTest, EntryJumpsToALoopAtTheStart) {
  // NOP at offset 0 is the target of a backward jump: the argument stores get their own
  // entry block.
  CodeSnapshot s = assemble(GetParam(), {{PyOp::NOP, 0}, {PyOp::JUMP_BACKWARD, 0}});
  s.argCount = 1;
  s.varnames = s.localsPlusNames = {"a"};
  std::unique_ptr<ir::Function> fn = buildFunction(s, ir::FunctionKind::Kernel);
  ASSERT_EQ(fn->blocks.size(), 2u);
  auto *j = dyn_cast<ir::JumpInstr>(fn->blocks[0]->terminator());
  ASSERT_NE(j, nullptr);
  EXPECT_EQ(j->target, fn->blocks[1].get());
  auto *loop = dyn_cast<ir::JumpInstr>(fn->blocks[1]->terminator());
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->target, fn->blocks[1].get());
  EXPECT_EQ(fn->blocks[0]->instrs.size(), 3u); // Arg, StoreLocal, Jump
}

PyOp popJumpIfFalse(PyVersion v) {
  switch (v) {
  case PyVersion::Py311:
    return PyOp::POP_JUMP_FORWARD_IF_FALSE;
  case PyVersion::Py312:
  case PyVersion::Py313:
    return PyOp::POP_JUMP_IF_FALSE;
  }
  return PyOp::POP_JUMP_IF_FALSE;
}

TEST_P(IRBuilderTest, InconsistentStackDepthIsMalformedCode) {
  // Two paths reach RETURN_VALUE with different stack depths.
  CodeSnapshot s = assemble(GetParam(), {{PyOp::LOAD_CONST, 1},
                                         {PyOp::LOAD_CONST, 1},
                                         {popJumpIfFalse(GetParam()), 4},
                                         {PyOp::LOAD_CONST, 1},
                                         {PyOp::RETURN_VALUE, 0}});
  try {
    buildFunction(s, ir::FunctionKind::Kernel);
    FAIL() << "accepted";
  } catch (const ir::CompileError &e) {
    // Not a compiler bug: CPython never makes such code. An UnsupportedError naming it.
    EXPECT_EQ(e.code(), ir::DiagCode::MalformedCode);
    EXPECT_EQ(e.kind(), ir::DiagKind::Unsupported);
    EXPECT_NE(e.message().find("stack depth"), std::string::npos) << e.message();
    EXPECT_EQ(e.file(), "synthetic.py");
  }
  // Popping an empty stack.
  EXPECT_THROW(buildFunction(assemble(GetParam(), {{PyOp::POP_TOP, 0}, {PyOp::RETURN_VALUE, 0}}),
                             ir::FunctionKind::Kernel),
               ir::CompileError);
  // Running off the end.
  EXPECT_THROW(buildFunction(assemble(GetParam(), {{PyOp::NOP, 0}}), ir::FunctionKind::Kernel),
               ir::CompileError);
}

TEST_P(IRBuilderTest, ValuesMergeThroughStackVariables) {
  // `7 if cond else None` left on the stack by both arms and returned after the join.
  PyOp jf = popJumpIfFalse(GetParam());
  CodeSnapshot s = assemble(GetParam(), {{PyOp::LOAD_FAST, 0},
                                         {jf, 4},
                                         {PyOp::LOAD_CONST, 1},
                                         {PyOp::JUMP_FORWARD, 5},
                                         {PyOp::LOAD_CONST, 0},
                                         {PyOp::RETURN_VALUE, 0}});
  s.argCount = 1;
  s.varnames = s.localsPlusNames = {"cond"};
  std::unique_ptr<ir::Function> fn = buildFunction(s, ir::FunctionKind::Device);
  checkInvariants(*fn, s);
  std::vector<ir::ReturnInstr *> rets = instrsOf<ir::ReturnInstr>(*fn);
  ASSERT_EQ(rets.size(), 1u);
  auto *load = dyn_cast<ir::LoadLocalInstr>(rets[0]->value());
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(fn->vars[static_cast<size_t>(load->var)].name, "$stack0");
  // Both arms store a constant into it.
  int stores = 0;
  for (ir::StoreLocalInstr *st : instrsOf<ir::StoreLocalInstr>(*fn))
    if (st->var == load->var) {
      EXPECT_TRUE(isa<ir::ConstInstr>(st->operand(0)));
      ++stores;
    }
  EXPECT_EQ(stores, 2);
}

TEST_P(IRBuilderTest, ConstantsAcrossAConditionalStayConstants) {
  // `7 + (a if cond else b)`: the 7 is pushed before the branch and still on the stack at the
  // join. It stays a constant there (a weak literal for typing: with an int8 `a` the sum is
  // int8), not a "$stack" variable, whose type would be the literal's default, int64.
  PyOp jf = popJumpIfFalse(GetParam());
  CodeSnapshot s = assemble(GetParam(), {{PyOp::LOAD_CONST, 1},
                                         {PyOp::LOAD_FAST, 0},
                                         {jf, 5},
                                         {PyOp::LOAD_FAST, 1},
                                         {PyOp::JUMP_FORWARD, 6},
                                         {PyOp::LOAD_FAST, 2},
                                         {PyOp::BINARY_OP, 0},
                                         {PyOp::RETURN_VALUE, 0}});
  s.argCount = 3;
  s.varnames = s.localsPlusNames = {"cond", "a", "b"};
  std::unique_ptr<ir::Function> fn = buildFunction(s, ir::FunctionKind::Device);
  checkInvariants(*fn, s);
  std::vector<ir::BinOpInstr *> adds = instrsOf<ir::BinOpInstr>(*fn);
  ASSERT_EQ(adds.size(), 1u);
  auto *seven = dyn_cast<ir::ConstInstr>(adds[0]->operand(0));
  ASSERT_NE(seven, nullptr);
  EXPECT_EQ(seven->parent, adds[0]->parent); // emitted at the join, where it is used
  EXPECT_EQ(seven->loc.line, 2);
  // Only the arms' values go through a variable; no store of the constant is left behind.
  EXPECT_TRUE(isa<ir::LoadLocalInstr>(adds[0]->operand(1)));
  for (ir::StoreLocalInstr *st : instrsOf<ir::StoreLocalInstr>(*fn))
    EXPECT_FALSE(isa<ir::ConstInstr>(st->operand(0))) << "%" << st->id;
}

TEST_P(IRBuilderTest, MutatedBytecodeNeverCrashes) {
  // Random byte changes to real samples must give IR or a CompileError, nothing else.
  std::mt19937 rng(12345 + static_cast<int>(GetParam()));
  // PTXJIT_FUZZ_TRIALS raises the number of mutations per sample (e.g. under sanitizers).
  const char *env = std::getenv("PTXJIT_FUZZ_TRIALS");
  const int trials = env ? std::max(1, std::atoi(env)) : 150;
  int errors = 0, built = 0;
  for (const std::string &name : fixtures::fixtureNames(GetParam())) {
    if (name == "extended_arg")
      continue;
    CodeSnapshot base = fixtures::loadSnapshot(GetParam(), name);
    for (int trial = 0; trial < trials; ++trial) {
      CodeSnapshot s = base;
      int changes = 1 + static_cast<int>(rng() % 3);
      for (int c = 0; c < changes; ++c)
        s.code[rng() % s.code.size()] = static_cast<uint8_t>(rng() % 256);
      // Now and then, tables that do not fit the code.
      switch (rng() % 8) {
      case 0:
        s.consts.resize(rng() % (s.consts.size() + 1));
        break;
      case 1:
        s.names.resize(rng() % (s.names.size() + 1));
        break;
      case 2:
        s.localsPlusNames.resize(rng() % (s.localsPlusNames.size() + 1));
        break;
      case 3:
        s.positions.resize(rng() % (s.positions.size() + 1));
        break;
      case 4:
        s.exceptionTable.push_back(static_cast<uint8_t>(rng() % 256));
        break;
      default:
        break;
      }
      try {
        std::unique_ptr<ir::Function> fn = buildFunction(s, ir::FunctionKind::Kernel);
        ASSERT_NE(fn, nullptr);
        (void)fn->print();
        ++built;
      } catch (const ir::CompileError &) {
        ++errors;
      }
    }
  }
  EXPECT_GT(errors, 0);
  EXPECT_GT(built, 0);
}

INSTANTIATE_TEST_SUITE_P(AllVersions, IRBuilderTest,
                         ::testing::Values(PyVersion::Py311, PyVersion::Py312, PyVersion::Py313),
                         [](const ::testing::TestParamInfo<PyVersion> &info) {
                           return fixtures::versionDir(info.param);
                         });

} // namespace
} // namespace ptxjit::frontend
