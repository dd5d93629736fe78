// Displays and star calls: CPython builds `(a, *t)`, `[a, *t]` and the arguments of
// `f(a, *t, k=v, **{...})` with BUILD_LIST / LIST_APPEND / LIST_EXTEND / LIST_TO_TUPLE and
// BUILD_MAP / BUILD_CONST_KEY_MAP / DICT_MERGE, then CALL_FUNCTION_EX. The simulation keeps them
// as Display and Keywords cells (IRBuilder.h) until their consumer is known: a tuple display
// becomes a BuildTuple whose `*` operands typing unpacks (their length is known only there), a
// star call a Call with `starArgs`. Lists and dicts themselves cannot exist in kernels: a list
// display reaches only a call's arguments (the callee's error names it), a dict display only
// a call's keywords.
#include "frontend/IRBuilder.h"

#include <algorithm>

namespace ptxjit::frontend {

namespace {

/// More items than any display written by hand (CPython's own limit on a display is far
/// larger): a bigger count is a forged code object.
constexpr uint32_t kMaxDisplayItems = 1u << 16;

} // namespace

void IRBuilder::translateDisplay(const Instruction &in) {
  // The items of a constant tuple, as constants (`[5, 6, 7]` is BUILD_LIST 0 then LIST_EXTEND
  // of the constant (5, 6, 7); `f(*(1, 2))`).
  auto constantItems = [&](Cell *c, Display &d) {
    const ir::ConstValue *k = constantOf(c);
    if (!k || k->kind != ir::ConstValue::Kind::Tuple)
      return false;
    InstrIndex saved = cur_;
    cur_ = *c->constFrom;
    for (const ir::ConstValue &e : k->elems) {
      d.items.push_back(emit<ir::ConstInstr>(e));
      d.spread.push_back(false);
    }
    cur_ = saved;
    return true;
  };
  auto keywordsOf = [&](Cell *c) -> Keywords * {
    if (!c->keywords) // a value built elsewhere: its keys are unknown here
      view_.raise(ir::DiagCode::UnsupportedConstruct, in.index,
                  {"**-unpacking of a value other than a dict display with constant string keys "
                   "(f(**{'k': v}))"});
    return c->keywords.get();
  };

  switch (in.op) {
  case PyOp::BUILD_LIST: {
    if (in.arg > kMaxDisplayItems)
      malformed("BUILD_LIST of " + std::to_string(in.arg) + " items");
    auto d = std::make_shared<Display>();
    d->at = in.index;
    for (Cell *c : popN(in.arg)) {
      d->items.push_back(value(c));
      d->spread.push_back(false);
    }
    Cell *c = newCell();
    c->display = std::move(d);
    push(c);
    return;
  }
  case PyOp::LIST_APPEND: { // list.append(v): the list is below v at depth oparg
    Cell *v = pop();
    Display *d = displayOf(peek(in.arg));
    if (!d) // comprehensions append to their list; they are rejected before (Reject.cpp)
      view_.raise(ir::DiagCode::UnsupportedConstruct, in.index, {"list comprehension"});
    d->items.push_back(value(v));
    d->spread.push_back(false);
    return;
  }
  case PyOp::LIST_EXTEND: { // list.extend(v): `*v` in a display
    Cell *v = pop();
    Display *d = displayOf(peek(in.arg));
    if (!d)
      malformed("LIST_EXTEND of a value that is not a list display");
    if (constantItems(v, *d))
      return;
    if (Display *inner = displayOf(v); inner && inner != d) { // `(*[a, b], c)`
      d->items.insert(d->items.end(), inner->items.begin(), inner->items.end());
      d->spread.insert(d->spread.end(), inner->spread.begin(), inner->spread.end());
      return;
    }
    d->items.push_back(value(v));
    d->spread.push_back(true);
    return;
  }
  case PyOp::LIST_TO_TUPLE:
  case PyOp::CALL_INTRINSIC_1: { // INTRINSIC_LIST_TO_TUPLE (3.12+)
    Cell *c = pop();
    Display *d = displayOf(c);
    if (!d)
      malformed("LIST_TO_TUPLE of a value that is not a list display");
    Cell *t = newCell();
    t->display = std::make_shared<Display>(*d);
    t->display->tuple = true;
    push(t);
    return;
  }
  case PyOp::BUILD_MAP:
  case PyOp::BUILD_CONST_KEY_MAP: {
    auto kw = std::make_shared<Keywords>();
    kw->at = in.index;
    auto add = [&](const ir::ConstValue *key, Cell *v) {
      if (!key || key->kind != ir::ConstValue::Kind::String) // a dict, not keyword arguments
        view_.raise(ir::DiagCode::UnsupportedConstruct, in.index, {"dict literal"});
      ir::Instr *val = value(v);
      auto it = std::find(kw->names.begin(), kw->names.end(), key->s);
      if (it != kw->names.end()) // {'k': 1, 'k': 2}: the last one wins, as in Python
        kw->values[static_cast<size_t>(it - kw->names.begin())] = val;
      else
        kw->names.push_back(key->s), kw->values.push_back(val);
    };
    if (in.op == PyOp::BUILD_MAP) {
      if (in.arg > kMaxDisplayItems)
        malformed("BUILD_MAP of " + std::to_string(in.arg) + " items");
      std::vector<Cell *> cells = popN(2 * size_t(in.arg)); // key, value, key, value, ...
      for (size_t k = 0; k < cells.size(); k += 2)
        add(constantOf(cells[k]), cells[k + 1]);
    } else {
      Cell *keys = pop();
      const ir::ConstValue *names = constantOf(keys);
      if (!names || names->kind != ir::ConstValue::Kind::Tuple || names->elems.size() != in.arg)
        malformed("BUILD_CONST_KEY_MAP without a constant tuple of " + std::to_string(in.arg) +
                  " keys");
      std::vector<Cell *> cells = popN(in.arg);
      for (size_t k = 0; k < cells.size(); ++k)
        add(&names->elems[k], cells[k]);
    }
    Cell *c = newCell();
    c->keywords = std::move(kw);
    push(c);
    return;
  }
  case PyOp::DICT_MERGE: { // `**v` among a call's keyword arguments
    Cell *v = pop();
    Cell *target = peek(in.arg);
    if (!target->keywords)
      malformed("DICT_MERGE into a value that is not a dict display");
    Keywords *from = keywordsOf(v);
    Keywords *into = target->keywords.get();
    for (size_t k = 0; k < from->names.size(); ++k) {
      if (std::find(into->names.begin(), into->names.end(), from->names[k]) != into->names.end())
        view_.raise(ir::DiagCode::CallArgs, in.index,
                    {"the callee", "keyword argument '" + from->names[k] +
                                       "' twice (Python raises TypeError: got multiple values "
                                       "for it)"});
      into->names.push_back(from->names[k]);
      into->values.push_back(from->values[k]);
    }
    return;
  }
  default:
    unsupported(in);
  }
}

void IRBuilder::translateCallEx(const Instruction &in) {
  Cell *kwCell = (in.arg & 1) ? pop() : nullptr;
  Cell *argsCell = pop();
  std::vector<Cell *> pair = popN(2);

  std::vector<std::string> kwNames;
  std::vector<ir::Instr *> kwValues;
  if (kwCell) {
    if (!kwCell->keywords)
      view_.raise(ir::DiagCode::UnsupportedConstruct, in.index,
                  {"**-unpacking of a value other than a dict display with constant string keys "
                   "(f(**{'k': v}))"});
    kwNames = kwCell->keywords->names;
    kwValues = kwCell->keywords->values;
  }

  // The positional arguments: a display's items, a constant tuple's elements, or one value
  // unpacked whole (f(*t)).
  Display args;
  if (Display *d = displayOf(argsCell)) {
    args = *d;
  } else if (const ir::ConstValue *k = constantOf(argsCell);
             k && k->kind == ir::ConstValue::Kind::Tuple) {
    InstrIndex saved = cur_;
    cur_ = *argsCell->constFrom;
    for (const ir::ConstValue &e : k->elems) {
      args.items.push_back(emit<ir::ConstInstr>(e));
      args.spread.push_back(false);
    }
    cur_ = saved;
  } else {
    args.items.push_back(value(argsCell));
    args.spread.push_back(true);
  }

  if (std::find(args.spread.begin(), args.spread.end(), true) == args.spread.end()) {
    // Nothing to unpack: an ordinary call (an exception to raise or an operator included).
    std::vector<Cell *> cells;
    for (ir::Instr *v : args.items)
      cells.push_back(valueCell(v));
    for (ir::Instr *v : kwValues)
      cells.push_back(valueCell(v));
    emitCall(pair, cells, std::move(kwNames));
    return;
  }
  auto [callee, self] = calleeOf(pair);
  std::vector<ir::Instr *> operands{value(callee)};
  if (self) {
    args.items.insert(args.items.begin(), value(self));
    args.spread.insert(args.spread.begin(), false);
  }
  // One tuple of every positional argument: `f(*t)` passes t itself.
  if (args.items.size() == 1)
    operands.push_back(args.items[0]);
  else
    operands.push_back(emit<ir::BuildTupleInstr>(args.items, args.spread, false));
  operands.insert(operands.end(), kwValues.begin(), kwValues.end());
  auto *call = emit<ir::CallInstr>(std::move(operands), std::move(kwNames));
  call->starArgs = true;
  pushValue(call);
}

} // namespace ptxjit::frontend
