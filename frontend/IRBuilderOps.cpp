// Per-opcode translation of the stack simulation (see IRBuilder.h for the model).
#include "frontend/IRBuilder.h"

#include <unordered_map>

#include <algorithm>

namespace ptxjit::frontend {

namespace {

ir::ConstValue noneValue() { return ir::ConstValue::none(); }

/// More items than any real unpacking has (CPython's own limit for starred unpacking is 256
/// before and 2**24 after the star; plain unpacking of this many is never written by hand).
constexpr uint32_t kMaxUnpack = 1u << 16;

} // namespace

void IRBuilder::translate(const Instruction &in) {
  switch (in.op) {
  // ---- no-ops ----
  case PyOp::NOP:
  case PyOp::RESUME:
  case PyOp::COPY_FREE_VARS: // closure cells are read from the snapshot, not from the frame
    return;
  case PyOp::PRECALL:
    // 3.11 only: prepares a CALL (bound-method unpacking); CALL does the work here.
    return;

  // ---- stack manipulation ----
  case PyOp::POP_TOP:
    pop();
    return;
  case PyOp::PUSH_NULL:
    push(nullCell());
    return;
  case PyOp::LOAD_ASSERTION_ERROR: // `assert`: a builtin, whatever the module's globals say
    pushValue(emit<ir::GlobalInstr>("AssertionError",
                                    ir::GlobalValue::exceptionClass("AssertionError", 0)));
    return;
  case PyOp::RAISE_VARARGS:
    translateRaise(in);
    return;
  case PyOp::COPY:
    push(peek(in.arg));
    return;
  case PyOp::SWAP: {
    Cell *top = peek(1);
    Cell *other = peek(in.arg);
    stack_[stack_.size() - 1] = other;
    stack_[stack_.size() - in.arg] = top;
    return;
  }
  case PyOp::END_FOR:
    // Only reached when a loop's exit is jumped to directly (FOR_ITER itself skips it).
    switch (view_.version()) {
    case PyVersion::Py311:
      unsupported(in); // no END_FOR in 3.11
    case PyVersion::Py312:
      pop(); // 3.12: END_FOR pops the value and the iterator
      pop();
      return;
    case PyVersion::Py313:
      pop(); // 3.13: END_FOR pops the value; a POP_TOP after it pops the iterator
      return;
    }
    return;

  // ---- constants, locals, globals, closure cells ----
  case PyOp::LOAD_CONST: {
    Cell *c = newCell();
    c->constFrom = in.index;
    push(c);
    return;
  }
  case PyOp::LOAD_FAST:
  case PyOp::LOAD_FAST_CHECK: // 3.12+: LOAD_FAST that checks for unbound locals
    pushValue(emit<ir::LoadLocalInstr>(localVar(in.arg)));
    return;
  case PyOp::STORE_FAST: {
    ir::Instr *v = popValue();
    emit<ir::StoreLocalInstr>(localVar(in.arg), v);
    return;
  }
  case PyOp::LOAD_FAST_LOAD_FAST: { // 3.13 superinstructions: two slots packed in nibbles
    auto [a, b] = view_.fastPair(in);
    pushValue(emit<ir::LoadLocalInstr>(localVar(a)));
    pushValue(emit<ir::LoadLocalInstr>(localVar(b)));
    return;
  }
  case PyOp::STORE_FAST_LOAD_FAST: {
    auto [a, b] = view_.fastPair(in);
    ir::Instr *v = popValue();
    emit<ir::StoreLocalInstr>(localVar(a), v);
    pushValue(emit<ir::LoadLocalInstr>(localVar(b)));
    return;
  }
  case PyOp::STORE_FAST_STORE_FAST: {
    auto [a, b] = view_.fastPair(in);
    ir::Instr *first = popValue();
    emit<ir::StoreLocalInstr>(localVar(a), first);
    ir::Instr *second = popValue();
    emit<ir::StoreLocalInstr>(localVar(b), second);
    return;
  }
  case PyOp::LOAD_GLOBAL:
    translateLoadGlobal(in);
    return;
  case PyOp::LOAD_DEREF:
    translateLoadDeref(in);
    return;
  case PyOp::LOAD_ATTR:
  case PyOp::LOAD_METHOD:
    translateLoadAttr(in);
    return;

  // ---- operators ----
  case PyOp::BINARY_OP: {
    BinaryOperand b = view_.binaryOp(in);
    std::vector<Cell *> ops = popN(2);
    ir::Instr *l = value(ops[0]);
    ir::Instr *r = value(ops[1]);
    pushValue(emit<ir::BinOpInstr>(b.op, l, r, b.inplace));
    return;
  }
  case PyOp::UNARY_NEGATIVE:
    pushValue(emit<ir::UnaryOpInstr>(ir::UnaryOpKind::Neg, popValue()));
    return;
  case PyOp::UNARY_POSITIVE: // 3.11; 3.12+ use CALL_INTRINSIC_1 INTRINSIC_UNARY_POSITIVE
    pushValue(emit<ir::UnaryOpInstr>(ir::UnaryOpKind::Pos, popValue()));
    return;
  case PyOp::UNARY_INVERT:
    pushValue(emit<ir::UnaryOpInstr>(ir::UnaryOpKind::Invert, popValue()));
    return;
  case PyOp::UNARY_NOT:
    pushValue(emit<ir::UnaryOpInstr>(ir::UnaryOpKind::Not, popValue()));
    return;
  case PyOp::CALL_INTRINSIC_1:
    if (in.arg == BytecodeView::kIntrinsicListToTuple) {
      translateDisplay(in);
      return;
    }
    if (in.arg != BytecodeView::kIntrinsicUnaryPositive)
      unsupported(in);
    pushValue(emit<ir::UnaryOpInstr>(ir::UnaryOpKind::Pos, popValue()));
    return;
  case PyOp::TO_BOOL: // 3.13: explicit bool conversion before branches and `not`
    pushValue(truth(popValue()));
    return;
  case PyOp::COMPARE_OP: {
    CompareOperand c = view_.compareOp(in);
    std::vector<Cell *> ops = popN(2);
    ir::Instr *l = value(ops[0]);
    ir::Instr *r = value(ops[1]);
    ir::Instr *cmp = emit<ir::CompareInstr>(c.cmp, l, r);
    pushValue(c.toBool ? truth(cmp) : cmp);
    return;
  }
  case PyOp::IS_OP:
  case PyOp::CONTAINS_OP: {
    ir::CmpOp op = view_.isOrContainsOp(in);
    std::vector<Cell *> ops = popN(2);
    ir::Instr *l = value(ops[0]);
    ir::Instr *r = value(ops[1]);
    pushValue(emit<ir::CompareInstr>(op, l, r));
    return;
  }

  // ---- subscripts, slices, tuples ----
  case PyOp::BINARY_SUBSCR: {
    std::vector<Cell *> ops = popN(2); // container, index
    ir::Instr *c = value(ops[0]);
    ir::Instr *i = value(ops[1]);
    pushValue(emit<ir::GetItemInstr>(c, i));
    return;
  }
  case PyOp::STORE_SUBSCR: {
    std::vector<Cell *> ops = popN(3); // value, container, index
    ir::Instr *v = value(ops[0]);
    ir::Instr *c = value(ops[1]);
    ir::Instr *i = value(ops[2]);
    emit<ir::SetItemInstr>(c, i, v);
    return;
  }
  case PyOp::STORE_ATTR: { // obj.attr = value (a record's field; typing refuses the rest)
    std::vector<Cell *> ops = popN(2); // value, object
    ir::Instr *v = value(ops[0]);
    ir::Instr *obj = value(ops[1]);
    emit<ir::SetAttrInstr>(obj, view_.name(in), v);
    return;
  }
  case PyOp::BUILD_SLICE: {
    if (in.arg != 2 && in.arg != 3)
      malformed("BUILD_SLICE with " + std::to_string(in.arg) + " parts");
    std::vector<ir::Instr *> parts;
    for (Cell *c : popN(in.arg))
      parts.push_back(value(c));
    pushValue(emit<ir::BuildSliceInstr>(std::move(parts)));
    return;
  }
  case PyOp::BINARY_SLICE: { // 3.12+: container[start:stop]
    std::vector<Cell *> ops = popN(3);
    ir::Instr *c = value(ops[0]);
    ir::Instr *start = value(ops[1]);
    ir::Instr *stop = value(ops[2]);
    ir::Instr *slice = emit<ir::BuildSliceInstr>(std::vector<ir::Instr *>{start, stop});
    pushValue(emit<ir::GetItemInstr>(c, slice));
    return;
  }
  case PyOp::STORE_SLICE: { // 3.12+: container[start:stop] = value
    std::vector<Cell *> ops = popN(4);
    ir::Instr *v = value(ops[0]);
    ir::Instr *c = value(ops[1]);
    ir::Instr *start = value(ops[2]);
    ir::Instr *stop = value(ops[3]);
    ir::Instr *slice = emit<ir::BuildSliceInstr>(std::vector<ir::Instr *>{start, stop});
    emit<ir::SetItemInstr>(c, slice, v);
    return;
  }
  case PyOp::BUILD_TUPLE: {
    std::vector<ir::Instr *> elems;
    for (Cell *c : popN(in.arg))
      elems.push_back(value(c));
    pushValue(emit<ir::BuildTupleInstr>(std::move(elems)));
    return;
  }
  case PyOp::UNPACK_SEQUENCE: {
    // Pushes the items last to first, so that the first item ends on top.
    if (in.arg > kMaxUnpack) // `a0, ..., a70000 = t` is valid Python, or the operand is forged
      view_.raise(ir::DiagCode::UnsupportedConstruct, cur_,
                  {"unpacking into " + std::to_string(in.arg) + " targets (more than " +
                   std::to_string(kMaxUnpack) + ")"});
    ir::Instr *seq = popValue();
    std::vector<ir::Instr *> items;
    for (uint32_t k = 0; k < in.arg; ++k)
      items.push_back(emit<ir::TupleGetInstr>(seq, static_cast<int>(k)));
    for (uint32_t k = in.arg; k-- > 0;)
      pushValue(items[k]);
    return;
  }

  // ---- displays that star calls and tuple displays build ----
  case PyOp::BUILD_LIST:
  case PyOp::LIST_APPEND:
  case PyOp::LIST_EXTEND:
  case PyOp::LIST_TO_TUPLE:
  case PyOp::BUILD_MAP:
  case PyOp::BUILD_CONST_KEY_MAP:
  case PyOp::DICT_MERGE:
    translateDisplay(in);
    return;

  // ---- calls ----
  case PyOp::CALL_FUNCTION_EX:
    translateCallEx(in);
    return;
  case PyOp::KW_NAMES: // 3.11/3.12: names the keyword arguments of the next CALL
    pendingKwNames_ = view_.kwNames(view_.constant(in), in.index);
    return;
  case PyOp::CALL: {
    std::vector<std::string> kw;
    if (pendingKwNames_)
      kw = std::move(*pendingKwNames_);
    pendingKwNames_.reset();
    translateCall(in, in.arg, std::move(kw));
    return;
  }
  case PyOp::CALL_KW: { // 3.13: the keyword names tuple is on top of the arguments
    Cell *names = pop();
    const ir::ConstValue *c = constantOf(names);
    if (!c) // CPython loads the names with LOAD_CONST: anything else is a malformed code object
      malformed("CALL_KW without a constant tuple of names");
    std::vector<std::string> kw = view_.kwNames(*c, in.index);
    translateCall(in, in.arg, std::move(kw));
    return;
  }

  // ---- iteration and control flow ----
  case PyOp::GET_ITER:
    pushValue(emit<ir::GetIterInstr>(popValue()));
    return;
  case PyOp::FOR_ITER:
    translateForIter(in);
    return;
  case PyOp::RETURN_VALUE: {
    Cell *c = pop();
    const ir::ConstValue *k = constantOf(c);
    finishBlock({});
    if (k && k->kind == ir::ConstValue::Kind::None)
      emit<ir::ReturnInstr>(nullptr); // `return` / `return None` / falling off the end
    else
      emit<ir::ReturnInstr>(value(c));
    terminated_ = true;
    return;
  }
  case PyOp::RETURN_CONST: { // 3.12+: LOAD_CONST + RETURN_VALUE in one
    const ir::ConstValue &k = view_.constant(in);
    finishBlock({});
    if (k.kind == ir::ConstValue::Kind::None)
      emit<ir::ReturnInstr>(nullptr);
    else
      emit<ir::ReturnInstr>(emit<ir::ConstInstr>(k));
    terminated_ = true;
    return;
  }
  case PyOp::JUMP_FORWARD:
  case PyOp::JUMP_BACKWARD:
  case PyOp::JUMP_BACKWARD_NO_INTERRUPT:
  case PyOp::POP_JUMP_IF_FALSE:
  case PyOp::POP_JUMP_IF_TRUE:
  case PyOp::POP_JUMP_IF_NONE:
  case PyOp::POP_JUMP_IF_NOT_NONE:
  case PyOp::POP_JUMP_FORWARD_IF_FALSE:
  case PyOp::POP_JUMP_FORWARD_IF_TRUE:
  case PyOp::POP_JUMP_FORWARD_IF_NONE:
  case PyOp::POP_JUMP_FORWARD_IF_NOT_NONE:
  case PyOp::POP_JUMP_BACKWARD_IF_FALSE:
  case PyOp::POP_JUMP_BACKWARD_IF_TRUE:
  case PyOp::POP_JUMP_BACKWARD_IF_NONE:
  case PyOp::POP_JUMP_BACKWARD_IF_NOT_NONE:
  case PyOp::JUMP_IF_FALSE_OR_POP:
  case PyOp::JUMP_IF_TRUE_OR_POP:
    translateJump(in);
    return;

  default:
    unsupported(in);
  }
}

void IRBuilder::translateCall(const Instruction &in, size_t argc,
                              std::vector<std::string> kwNames) {
  (void)in;
  std::vector<Cell *> args = popN(argc);
  std::vector<Cell *> pair = popN(2);
  emitCall(pair, args, std::move(kwNames));
}

std::pair<IRBuilder::Cell *, IRBuilder::Cell *>
IRBuilder::calleeOf(const std::vector<Cell *> &pair) const {
  Cell *callee = nullptr;
  Cell *self = nullptr; // an extra first argument when the pair holds (method, self)
  switch (view_.version()) {
  case PyVersion::Py311:
  case PyVersion::Py312:
    // Below the arguments: [NULL, callable] or [method, self].
    if (pair[0]->isNull) {
      callee = pair[1];
    } else {
      callee = pair[0];
      self = pair[1];
    }
    break;
  case PyVersion::Py313:
    // 3.13 swapped the pair: [callable, NULL] or [method, self].
    callee = pair[0];
    if (!pair[1]->isNull)
      self = pair[1];
    break;
  }
  if (callee->isNull)
    malformed("call of NULL");
  return {callee, self};
}

void IRBuilder::emitCall(const std::vector<Cell *> &pair, const std::vector<Cell *> &args,
                         std::vector<std::string> kwNames) {
  auto [callee, self] = calleeOf(pair);
  if (kwNames.empty()) {
    std::vector<Cell *> all;
    if (self)
      all.push_back(self); // `assert c, msg`: [AssertionError, msg] is a method pair
    all.insert(all.end(), args.begin(), args.end());
    if (auto e = exceptionCall(callee, all)) {
      Cell *c = newCell();
      c->exception = std::move(e);
      push(c);
      return;
    }
  }
  std::vector<ir::Instr *> operands{value(callee)};
  if (self)
    operands.push_back(value(self));
  for (Cell *a : args)
    operands.push_back(callArgValue(a));
  if (kwNames.size() > operands.size() - 1)
    malformed("more keyword names than arguments");
  if (kwNames.empty())
    if (ir::Instr *op = operatorCall(operands)) {
      pushValue(op);
      return;
    }
  pushValue(emit<ir::CallInstr>(std::move(operands), std::move(kwNames)));
}

namespace {

/// The `operator` module function a callee denotes ("add" for a global or closure value
/// `operator.add`, or `operator.add` read from the module), or empty.
std::string operatorFunctionName(const ir::Instr *callee) {
  if (const auto *g = ir::dyn_cast<ir::GlobalInstr>(callee)) {
    const ir::GlobalValue &v = g->value;
    const std::string prefix = "operator.";
    if (v.kind == ir::GlobalValue::Kind::Symbol && v.path.rfind(prefix, 0) == 0)
      return v.path.substr(prefix.size());
    return {};
  }
  if (const auto *a = ir::dyn_cast<ir::GetAttrInstr>(callee))
    if (const auto *m = ir::dyn_cast<ir::GlobalInstr>(a->operand(0)))
      if (m->value.kind == ir::GlobalValue::Kind::Symbol && m->value.path == "operator")
        return a->attr;
  return {};
}

} // namespace

ir::Instr *IRBuilder::operatorCall(const std::vector<ir::Instr *> &operands) {
  // Numba compiles the `operator` module's functions as the operators they name: operator.add(a,
  // b) is a + b, with the same typing and code. (Other names of the module stay calls, and
  // typing reports them unsupported.)
  std::string name = operatorFunctionName(operands[0]);
  if (name.empty())
    return nullptr;
  using B = ir::BinaryOp;
  static const std::unordered_map<std::string, B> binary = {
      {"add", B::Add},           {"sub", B::Sub},  {"mul", B::Mul}, {"truediv", B::TrueDiv},
      {"floordiv", B::FloorDiv}, {"mod", B::Mod},  {"pow", B::Pow}, {"lshift", B::LShift},
      {"rshift", B::RShift},     {"and_", B::And}, {"or_", B::Or},  {"xor", B::Xor},
      {"matmul", B::MatMul}};
  using C = ir::CmpOp;
  static const std::unordered_map<std::string, C> compare = {
      {"lt", C::Lt}, {"le", C::Le}, {"eq", C::Eq},  {"ne", C::Ne},
      {"gt", C::Gt}, {"ge", C::Ge}, {"is_", C::Is}, {"is_not", C::IsNot}};
  using U = ir::UnaryOpKind;
  static const std::unordered_map<std::string, U> unary = {{"neg", U::Neg},
                                                           {"pos", U::Pos},
                                                           {"invert", U::Invert},
                                                           {"inv", U::Invert},
                                                           {"not_", U::Not}};
  const size_t n = operands.size() - 1;
  // operator.iadd(a, b) and friends: a += b, which for the scalars of kernels is a + b.
  bool inplace = name.size() > 1 && name[0] == 'i' && binary.count(name.substr(1));
  if (auto it = binary.find(inplace ? name.substr(1) : name); it != binary.end() && n == 2)
    return emit<ir::BinOpInstr>(it->second, operands[1], operands[2], inplace);
  if (auto it = compare.find(name); it != compare.end() && n == 2)
    return emit<ir::CompareInstr>(it->second, operands[1], operands[2]);
  if (auto it = unary.find(name); it != unary.end() && n == 1)
    return emit<ir::UnaryOpInstr>(it->second, operands[1]);
  if (name == "truth" && n == 1)
    return emit<ir::TruthInstr>(operands[1]);
  return nullptr;
}

std::shared_ptr<const ir::RaisedException>
IRBuilder::exceptionCall(Cell *callee, const std::vector<Cell *> &args) {
  auto *g = callee->value ? ir::dyn_cast<ir::GlobalInstr>(callee->value) : nullptr;
  if (!g || g->value.kind != ir::GlobalValue::Kind::ExceptionClass)
    return nullptr;
  auto e = std::make_shared<ir::RaisedException>();
  e->cls = g->value;
  for (Cell *a : args) {
    const ir::ConstValue *k = constantOf(a);
    // A module global or closure value holding a plain constant (`raise ValueError(MSG)`).
    auto *g = a->value ? ir::dyn_cast<ir::GlobalInstr>(a->value) : nullptr;
    if (!k && g && g->value.kind == ir::GlobalValue::Kind::Constant && g->value.dtype.empty())
      k = &g->value.constant;
    if (!k || k->kind == ir::ConstValue::Kind::Unsupported)
      view_.raise(ir::DiagCode::UnsupportedConstruct, cur_,
                  {"a non-constant exception argument (numba-cuda raises exceptions with constant "
                   "arguments only)"});
    e->args.push_back(*k);
  }
  return e;
}

void IRBuilder::translateRaise(const Instruction &in) {
  if (in.arg != 1) // bare `raise` and `raise ... from ...` are rejected before (Reject.cpp)
    unsupported(in);
  Cell *c = pop();
  std::shared_ptr<const ir::RaisedException> e = c->exception;
  if (!e) {
    auto *g = c->value ? ir::dyn_cast<ir::GlobalInstr>(c->value) : nullptr;
    if (!g || g->value.kind != ir::GlobalValue::Kind::ExceptionClass)
      view_.raise(ir::DiagCode::UnsupportedConstruct, in.index,
                  {"raising a value other than an exception class or an exception class called "
                   "with constants"});
    auto own = std::make_shared<ir::RaisedException>();
    own->cls = g->value;
    e = std::move(own);
  }
  finishBlock({});
  emit<ir::RaiseInstr>(*e);
  terminated_ = true;
}

void IRBuilder::translateLoadGlobal(const Instruction &in) {
  GlobalOperand g = view_.loadGlobal(in);
  const CodeSnapshot &s = view_.snapshot();
  auto it = s.globals.find(*g.name);
  ir::GlobalValue v = it != s.globals.end() ? it->second : ir::GlobalValue::missing();
  Cell *global = valueCell(emit<ir::GlobalInstr>(*g.name, std::move(v)));
  if (!g.pushNull) {
    push(global);
    return;
  }
  switch (view_.version()) {
  case PyVersion::Py311:
  case PyVersion::Py312:
    push(nullCell()); // NULL below the callable
    push(global);
    return;
  case PyVersion::Py313:
    push(global); // 3.13: the callable below NULL
    push(nullCell());
    return;
  }
}

void IRBuilder::translateLoadAttr(const Instruction &in) {
  AttrOperand a = view_.loadAttr(in);
  ir::Instr *obj = popValue();
  Cell *attr = nullptr;
  // `helpers.f` of a module snapshotted with its attributes (CodeSnapshot::globals): the global
  // "helpers.f" itself, as if the function had imported f by name.
  if (auto *g = ir::dyn_cast<ir::GlobalInstr>(obj);
      g && g->value.kind == ir::GlobalValue::Kind::Symbol &&
      g->value.path.rfind(kModuleSymbolPrefix, 0) == 0) {
    const CodeSnapshot &s = view_.snapshot();
    const std::string key = g->name + "." + *a.name;
    ir::GlobalValue v = ir::GlobalValue::missing();
    if (auto it = s.globals.find(key); it != s.globals.end())
      v = it->second;
    else if (auto jt = s.closure.find(key); jt != s.closure.end())
      v = jt->second;
    attr = valueCell(emit<ir::GlobalInstr>(key, std::move(v)));
  } else {
    attr = valueCell(emit<ir::GetAttrInstr>(obj, *a.name));
  }
  if (!a.method) {
    push(attr);
    return;
  }
  // The method form pushes (method, self) or (NULL, attribute) in 3.11/3.12 and
  // (method, self) or (attribute, NULL) in 3.13; the IR always takes the attribute form.
  switch (view_.version()) {
  case PyVersion::Py311:
  case PyVersion::Py312:
    push(nullCell());
    push(attr);
    return;
  case PyVersion::Py313:
    push(attr);
    push(nullCell());
    return;
  }
}

void IRBuilder::translateLoadDeref(const Instruction &in) {
  // 3.11+: the operand indexes the fast locals, where free variables come last.
  const std::string &name = view_.localName(in);
  const CodeSnapshot &s = view_.snapshot();
  bool isFree = std::find(s.freevars.begin(), s.freevars.end(), name) != s.freevars.end();
  if (!isFree)
    unsupported(in); // a cell of this function: only nested functions create those
  auto it = s.closure.find(name);
  ir::GlobalValue v = it != s.closure.end() ? it->second : ir::GlobalValue::missing();
  pushValue(emit<ir::GlobalInstr>(name, std::move(v)));
}

void IRBuilder::translateForIter(const Instruction &in) {
  const CfgBlock &b = cfg_.block(block_);
  if (!b.fallthrough || !b.jump)
    internal("FOR_ITER without two successors");
  ir::Instr *iter = value(peek(1));
  ir::Instr *valid = emit<ir::IterValidInstr>(iter);
  std::vector<Cell *> exitStack(stack_.begin(), stack_.end() - 1); // the exhausted loop pops it
  finishBlock({Edge{*b.fallthrough, stack_, true}, Edge{*b.jump, exitStack, false}});
  emit<ir::BranchInstr>(valid, irBlockOf(*b.fallthrough), irBlockOf(*b.jump));
  terminated_ = true;
}

void IRBuilder::translateJump(const Instruction &in) {
  const CfgBlock &b = cfg_.block(block_);
  if (!b.jump)
    internal("jump without a target");
  const int target = *b.jump;
  switch (pyOpJumpKind(in.op)) {
  case JumpKind::Unconditional:
    finishBlock({Edge{target, stack_, false}});
    emit<ir::JumpInstr>(irBlockOf(target));
    terminated_ = true;
    return;
  case JumpKind::None:
    internal("not a jump");
  case JumpKind::Conditional:
    break;
  }
  if (!b.fallthrough)
    internal("conditional jump without a fall-through");
  const int fall = *b.fallthrough;

  bool jumpIfTrue = false; // the branch condition under which the jump is taken
  ir::Instr *cond = nullptr;
  std::vector<Cell *> jumpStack, fallStack;
  switch (in.op) {
  case PyOp::POP_JUMP_IF_FALSE:
  case PyOp::POP_JUMP_FORWARD_IF_FALSE:
  case PyOp::POP_JUMP_BACKWARD_IF_FALSE:
  case PyOp::POP_JUMP_IF_TRUE:
  case PyOp::POP_JUMP_FORWARD_IF_TRUE:
  case PyOp::POP_JUMP_BACKWARD_IF_TRUE: {
    cond = truth(popValue());
    jumpIfTrue = in.op == PyOp::POP_JUMP_IF_TRUE || in.op == PyOp::POP_JUMP_FORWARD_IF_TRUE ||
                 in.op == PyOp::POP_JUMP_BACKWARD_IF_TRUE;
    jumpStack = fallStack = stack_;
    break;
  }
  case PyOp::POP_JUMP_IF_NONE:
  case PyOp::POP_JUMP_FORWARD_IF_NONE:
  case PyOp::POP_JUMP_BACKWARD_IF_NONE:
  case PyOp::POP_JUMP_IF_NOT_NONE:
  case PyOp::POP_JUMP_FORWARD_IF_NOT_NONE:
  case PyOp::POP_JUMP_BACKWARD_IF_NOT_NONE: {
    bool ifNone = in.op == PyOp::POP_JUMP_IF_NONE || in.op == PyOp::POP_JUMP_FORWARD_IF_NONE ||
                  in.op == PyOp::POP_JUMP_BACKWARD_IF_NONE;
    ir::Instr *v = popValue();
    ir::Instr *none = emit<ir::ConstInstr>(noneValue());
    cond = truth(emit<ir::CompareInstr>(ifNone ? ir::CmpOp::Is : ir::CmpOp::IsNot, v, none));
    jumpIfTrue = true;
    jumpStack = fallStack = stack_;
    break;
  }
  case PyOp::JUMP_IF_FALSE_OR_POP: // 3.11: the value stays on the stack if the jump is taken
  case PyOp::JUMP_IF_TRUE_OR_POP:
    cond = truth(value(peek(1)));
    jumpIfTrue = in.op == PyOp::JUMP_IF_TRUE_OR_POP;
    jumpStack = stack_;
    fallStack.assign(stack_.begin(), stack_.end() - 1);
    break;
  default:
    unsupported(in); // SEND: generators are rejected before
  }
  finishBlock({Edge{fall, fallStack, false}, Edge{target, jumpStack, false}});
  ir::Block *t = irBlockOf(target), *f = irBlockOf(fall);
  emit<ir::BranchInstr>(cond, jumpIfTrue ? t : f, jumpIfTrue ? f : t);
  terminated_ = true;
}

} // namespace ptxjit::frontend
