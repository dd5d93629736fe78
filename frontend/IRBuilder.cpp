#include "frontend/IRBuilder.h"

#include <algorithm>
#include <set>

namespace ptxjit::frontend {

IRBuilder::IRBuilder(const BytecodeView &view, const Cfg &cfg, ir::FunctionKind kind)
    : view_(view), cfg_(cfg), fn_(std::make_unique<ir::Function>()) {
  const CodeSnapshot &s = view.snapshot();
  fn_->name = s.name;
  fn_->qualname = s.qualname;
  fn_->filename = s.filename;
  fn_->firstLine = s.firstLine;
  fn_->kind = kind;
}

std::unique_ptr<ir::Function> IRBuilder::build() {
  const CodeSnapshot &s = view_.snapshot();
  const size_t numParams = static_cast<size_t>(s.argCount + s.kwOnlyArgCount);
  if (numParams > s.varnames.size())
    malformed("more parameters than local variable names");
  // Parameters are the first variables, in order (var index == argument index).
  for (size_t k = 0; k < numParams; ++k) {
    fn_->argNames.push_back(s.varnames[k]);
    int v = fn_->varIndex(s.varnames[k]);
    if (v != static_cast<int>(k))
      malformed("duplicate parameter name '" + s.varnames[k] + "'");
    fn_->vars[k].isArgument = true;
  }

  // IR blocks in bytecode order. The entry block holds the argument stores; it is also the
  // first bytecode block unless something jumps back to that one.
  states_.resize(cfg_.blocks().size());
  ir::Block *entry = fn_->addBlock();
  const bool mergeEntry = cfg_.block(0).preds.empty();
  for (const CfgBlock &b : cfg_.blocks())
    if (b.reachable)
      states_[static_cast<size_t>(b.id)].irBlock =
          (b.id == 0 && mergeEntry) ? entry : fn_->addBlock();
  emitEntry();
  if (!mergeEntry) {
    auto jump = std::make_unique<ir::JumpInstr>(states_[0].irBlock);
    jump->loc = entryStaged_.empty() ? view_.loc(InstrIndex(0)) : entryStaged_.back()->loc;
    entryStaged_.push_back(std::move(jump));
  }

  states_[0].entryKnown = true;
  for (int id : cfg_.reversePostOrder())
    simulateBlock(id);
  finalize();
  return std::move(fn_);
}

void IRBuilder::emitEntry() {
  ir::SourceLoc loc;
  loc.line = loc.endLine = view_.snapshot().firstLine;
  for (size_t k = 0; k < fn_->argNames.size(); ++k) {
    auto arg = std::make_unique<ir::ArgInstr>(static_cast<int>(k));
    arg->loc = loc;
    auto store = std::make_unique<ir::StoreLocalInstr>(static_cast<int>(k), arg.get());
    store->loc = loc;
    entryStaged_.push_back(std::move(arg));
    entryStaged_.push_back(std::move(store));
  }
}

void IRBuilder::simulateBlock(int id) {
  const CfgBlock &b = cfg_.block(id);
  BlockState &st = states_[static_cast<size_t>(id)];
  if (!st.entryKnown)
    view_.internalError(b.begin, "block reached before any predecessor");
  block_ = id;
  cur_ = b.begin;
  stack_.clear();
  cells_.clear();
  terminated_ = false;
  pendingKwNames_.reset();
  st.simulated = true;
  for (int k = 0; k < st.depth; ++k) {
    if (st.nullSlots[static_cast<size_t>(k)]) {
      push(nullCell());
    } else if (const auto &from = st.constSlots[static_cast<size_t>(k)]) {
      Cell *c = newCell();
      c->constFrom = *from;
      push(c);
    } else {
      Cell *c = newCell();
      c->slot = k;
      c->partialList = st.listSlots[static_cast<size_t>(k)];
      push(c);
    }
  }
  if (st.forIterBody) {
    // The body of a for loop starts with the next value of the iterator below it.
    if (stack_.empty()) // CPython's FOR_ITER always has its iterator below: malformed input
      malformed("for-loop body without an iterator");
    ir::Instr *iter = value(stack_.back());
    pushValue(emit<ir::IterNextInstr>(iter));
  }
  for (int i = b.begin.value; i < b.end.value; ++i) {
    cur_ = InstrIndex(i);
    translate(view_.at(cur_));
    if (terminated_ && i + 1 < b.end.value)
      internal("instructions after a terminator");
  }
  if (!terminated_) {
    // The block ends because the next instruction is a jump target: fall through.
    if (!b.fallthrough)
      internal("block without a successor");
    finishBlock({Edge{*b.fallthrough, stack_, false}});
    emit<ir::JumpInstr>(irBlockOf(*b.fallthrough));
    terminated_ = true;
  }
}

void IRBuilder::setEntry(int succ, const Edge &e) {
  BlockState &st = states_[static_cast<size_t>(succ)];
  std::vector<bool> nulls, lists;
  std::vector<std::optional<InstrIndex>> consts;
  for (const Cell *c : e.stack) {
    nulls.push_back(c->isNull);
    consts.push_back(c->isNull || c->exception ? std::nullopt : c->constFrom);
    lists.push_back((c->display && !c->display->tuple) || c->partialList);
  }
  if (!st.entryKnown) {
    st.entryKnown = true;
    st.depth = static_cast<int>(e.stack.size());
    st.nullSlots = std::move(nulls);
    st.constSlots = std::move(consts);
    st.listSlots = std::move(lists);
    st.forIterBody = e.forIterBody;
    // CPython never jumps into a loop body past its FOR_ITER: a code object that does is
    // malformed (a jump target mutated or forged), not a compiler bug.
    if (e.forIterBody && cfg_.block(succ).preds.size() != 1)
      malformed("a for-loop body is also reached from elsewhere (offset " +
                std::to_string(view_.at(cfg_.block(succ).begin).offset.value) + ")");
    return;
  }
  if (st.depth != static_cast<int>(e.stack.size()))
    malformed("stack depth " + std::to_string(e.stack.size()) + " differs from " +
              std::to_string(st.depth) + " on another path into offset " +
              std::to_string(view_.at(cfg_.block(succ).begin).offset.value));
  if (st.nullSlots != nulls || st.listSlots != lists || st.forIterBody != e.forIterBody)
    malformed("paths into offset " + std::to_string(view_.at(cfg_.block(succ).begin).offset.value) +
              " disagree on the stack contents");
  for (size_t k = 0; k < consts.size(); ++k) {
    std::optional<InstrIndex> &c = st.constSlots[k];
    if (!c || c == consts[k])
      continue;
    // Another value on this path: the slot is a variable, unless the block was translated
    // already with the constant (a back edge; CPython never carries a constant around a
    // loop, where the value could differ).
    if (st.simulated)
      malformed("paths into offset " +
                std::to_string(view_.at(cfg_.block(succ).begin).offset.value) +
                " disagree on a constant on the stack");
    c.reset();
  }
}

void IRBuilder::finishBlock(const std::vector<Edge> &edges) {
  if (pendingKwNames_) // CPython puts KW_NAMES just before its CALL: malformed input
    malformed("KW_NAMES without a CALL in the same block");
  for (const Edge &e : edges)
    setEntry(e.succ, e);

  // For each slot, the distinct cells the successors need there. A cell that is the block's
  // own entry value of the same slot passes through: its variable is shared, nothing is
  // stored. Every other cell is stored once into the (shared) variable of those successors.
  struct Store {
    Cell *cell;
    int node;
  };
  std::vector<Store> stores;
  size_t maxDepth = 0;
  for (const Edge &e : edges)
    maxDepth = std::max(maxDepth, e.stack.size());
  for (size_t k = 0; k < maxDepth; ++k) {
    std::vector<std::pair<Cell *, int>> groups; // cell -> first node
    for (const Edge &e : edges) {
      if (k >= e.stack.size() || e.stack[k]->isNull)
        continue;
      Cell *c = e.stack[k];
      int n = node(e.succ, static_cast<int>(k));
      auto g = std::find_if(groups.begin(), groups.end(), [&](auto &p) { return p.first == c; });
      if (g != groups.end()) {
        unite(g->second, n);
        continue;
      }
      groups.push_back({c, n});
      if (c->slot == static_cast<int>(k)) {
        unite(node(block_, static_cast<int>(k)), n);
        blockPassThrough_[block_].push_back(n);
      } else {
        stores.push_back({c, n});
        blockStores_[block_].push_back(n);
      }
    }
  }
  // All values first (slot reads must see the variables before any store changes them).
  std::vector<ir::Instr *> values;
  for (const Store &s : stores)
    values.push_back(edgeValue(s.cell));
  for (size_t k = 0; k < stores.size(); ++k) {
    ir::StoreLocalInstr *st = emit<ir::StoreLocalInstr>(-1, values[k]);
    slotStores_.push_back({st, stores[k].node});
  }
}

void IRBuilder::finalize() {
  std::vector<std::pair<int, int>> keyOf(parent_.size());
  for (const auto &[key, n] : nodeIds_)
    keyOf[static_cast<size_t>(n)] = key;

  // Each block's stores must go to distinct variables, none of which may hold a value that
  // passes through the block unchanged (else a store would clobber it). Only contrived
  // bytecode could violate this; report it instead of miscompiling.
  for (const auto &[blk, nodes] : blockStores_) {
    std::vector<int> roots;
    for (int n : nodes)
      roots.push_back(find(n));
    std::vector<int> sorted = roots;
    std::sort(sorted.begin(), sorted.end());
    bool clash = std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end();
    for (int p : blockPassThrough_[blk])
      clash |= std::binary_search(sorted.begin(), sorted.end(), find(p));
    if (clash)
      view_.internalError(cfg_.block(blk).last(),
                          "stack values cross this block edge in an unsupported way");
  }

  // Stores into variables that no block reads are dropped: the successors of a slot that held
  // the same constant on every path start with that constant instead (setEntry).
  std::set<int> loadedRoots;
  for (const auto &[load, n] : slotLoads_)
    loadedRoots.insert(find(n));
  std::set<const ir::Instr *> deadStores;
  for (const auto &[store, n] : slotStores_)
    if (!loadedRoots.count(find(n)))
      deadStores.insert(store);
  if (!deadStores.empty()) {
    slotStores_.erase(std::remove_if(slotStores_.begin(), slotStores_.end(),
                                     [&](const auto &p) { return deadStores.count(p.first); }),
                      slotStores_.end());
    for (BlockState &st : states_)
      st.staged.erase(std::remove_if(st.staged.begin(), st.staged.end(),
                                     [&](const auto &i) { return deadStores.count(i.get()); }),
                      st.staged.end());
  }

  // Name the "$stack" variables in order of first use (block order, then slot).
  std::vector<int> used;
  for (const auto &[load, n] : slotLoads_)
    used.push_back(n);
  for (const auto &[store, n] : slotStores_)
    used.push_back(n);
  std::sort(used.begin(), used.end(), [&](int a, int b) {
    return keyOf[static_cast<size_t>(a)] < keyOf[static_cast<size_t>(b)];
  });
  std::map<int, int> varOfRoot;
  for (int n : used) {
    int r = find(n);
    if (!varOfRoot.count(r)) {
      int v = fn_->varIndex("$stack" + std::to_string(varOfRoot.size()));
      varOfRoot[r] = v;
    }
  }
  for (auto &[load, n] : slotLoads_)
    load->var = varOfRoot.at(find(n));
  for (auto &[store, n] : slotStores_)
    store->var = varOfRoot.at(find(n));

  // Hand the staged instructions to their blocks (this numbers the values in order).
  ir::Block *entry = fn_->entry();
  for (auto &i : entryStaged_)
    entry->append(std::move(i));
  for (const CfgBlock &b : cfg_.blocks()) {
    BlockState &st = states_[static_cast<size_t>(b.id)];
    if (!b.reachable)
      continue;
    for (auto &i : st.staged)
      st.irBlock->append(std::move(i));
  }
}

int IRBuilder::node(int block, int slot) {
  auto [it, inserted] = nodeIds_.insert({{block, slot}, static_cast<int>(parent_.size())});
  if (inserted)
    parent_.push_back(it->second);
  return it->second;
}

int IRBuilder::find(int n) {
  while (parent_[static_cast<size_t>(n)] != n) {
    parent_[static_cast<size_t>(n)] = parent_[static_cast<size_t>(parent_[static_cast<size_t>(n)])];
    n = parent_[static_cast<size_t>(n)];
  }
  return n;
}

void IRBuilder::unite(int a, int b) {
  a = find(a);
  b = find(b);
  if (a != b)
    parent_[static_cast<size_t>(std::max(a, b))] = std::min(a, b);
}

IRBuilder::Cell *IRBuilder::newCell() {
  cells_.emplace_back();
  return &cells_.back();
}

IRBuilder::Cell *IRBuilder::valueCell(ir::Instr *v) {
  Cell *c = newCell();
  c->value = v;
  return c;
}

IRBuilder::Cell *IRBuilder::nullCell() {
  Cell *c = newCell();
  c->isNull = true;
  return c;
}

IRBuilder::Cell *IRBuilder::pop() {
  if (stack_.empty())
    malformed("stack underflow");
  Cell *c = stack_.back();
  stack_.pop_back();
  return c;
}

IRBuilder::Cell *IRBuilder::peek(size_t depthFromTop) const {
  if (depthFromTop == 0 || depthFromTop > stack_.size())
    malformed("stack underflow");
  return stack_[stack_.size() - depthFromTop];
}

std::vector<IRBuilder::Cell *> IRBuilder::popN(size_t n) {
  if (n > stack_.size())
    malformed("stack underflow");
  std::vector<Cell *> out(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
  stack_.resize(stack_.size() - n);
  return out;
}

ir::Instr *IRBuilder::value(Cell *c) {
  if (c->value)
    return c->value;
  if (c->isNull)
    malformed("NULL used as a value");
  if (c->keywords) // a dict display used as a value (its keys made it look like keywords)
    view_.raise(ir::DiagCode::UnsupportedConstruct, c->keywords->at, {"dict literal"});
  if (c->display) {
    if (!c->display->tuple)
      view_.raise(ir::DiagCode::UnsupportedConstruct, c->display->at, {"list literal"});
    c->value = emitDisplay(*c->display, false);
    return c->value;
  }
  if (c->partialList)
    view_.raise(ir::DiagCode::UnsupportedConstruct, cur_, {"list literal"});
  if (c->exception)
    view_.raise(ir::DiagCode::UnsupportedConstruct, cur_,
                {"exception instance used as a value (exceptions can only be raised)"});
  if (c->constFrom) {
    // Emitted where first used, located at its LOAD_CONST.
    InstrIndex saved = cur_;
    cur_ = *c->constFrom;
    c->value = emit<ir::ConstInstr>(view_.constant(view_.at(*c->constFrom)));
    cur_ = saved;
    return c->value;
  }
  if (c->slot >= 0) {
    ir::LoadLocalInstr *load = emit<ir::LoadLocalInstr>(-1);
    slotLoads_.push_back({load, node(block_, c->slot)});
    c->value = load;
    return load;
  }
  internal("empty stack cell");
}

ir::Instr *IRBuilder::callArgValue(Cell *c) {
  if (!c->value && c->display && !c->display->tuple)
    c->value = emitDisplay(*c->display, true);
  return value(c);
}

ir::Instr *IRBuilder::edgeValue(Cell *c) {
  if (c->keywords) // only `f(**{...}, k=(a if c else b))` gets here: not worth supporting
    view_.raise(ir::DiagCode::UnsupportedConstruct, cur_,
                {"a conditional expression among keyword arguments after **-unpacking (assign "
                 "it to a variable first)"});
  if (!c->value && c->display)
    c->value = emitDisplay(*c->display, false); // the successor knows it is a list (listSlots)
  if (c->partialList && !c->value) {
    bool saved = c->partialList;
    c->partialList = false;
    ir::Instr *v = value(c);
    c->partialList = saved;
    return v;
  }
  return value(c);
}

IRBuilder::Display *IRBuilder::displayOf(Cell *c) {
  if (c->display)
    return c->display.get();
  if (!c->partialList)
    return nullptr;
  // The tuple of the items a predecessor collected, spread into a display continued here.
  c->partialList = false;
  ir::Instr *sofar = value(c);
  auto d = std::make_shared<Display>();
  d->items.push_back(sofar);
  d->spread.push_back(true);
  d->at = cur_;
  c->value = nullptr;
  c->slot = -1;
  c->display = std::move(d);
  return c->display.get();
}

ir::Instr *IRBuilder::emitDisplay(const Display &d, bool asList) {
  // Located at the BUILD_LIST, as a list literal's message must be.
  InstrIndex saved = cur_;
  cur_ = d.at;
  std::vector<bool> spread = d.spread;
  if (std::find(spread.begin(), spread.end(), true) == spread.end())
    spread.clear();
  ir::Instr *t = emit<ir::BuildTupleInstr>(d.items, std::move(spread), asList);
  cur_ = saved;
  return t;
}

const ir::ConstValue *IRBuilder::constantOf(const Cell *c) const {
  return c->constFrom ? &view_.constant(view_.at(*c->constFrom)) : nullptr;
}

ir::Instr *IRBuilder::truth(ir::Instr *v) {
  if (ir::isa<ir::TruthInstr>(v))
    return v;
  return emit<ir::TruthInstr>(v);
}

ir::Block *IRBuilder::irBlockOf(int cfgBlock) const {
  ir::Block *b = states_.at(static_cast<size_t>(cfgBlock)).irBlock;
  if (!b)
    internal("jump to an unreachable block");
  return b;
}

int IRBuilder::localVar(uint32_t slot) { return fn_->varIndex(view_.localName(slot)); }

void IRBuilder::unsupported(const Instruction &in) const {
  view_.raise(ir::DiagCode::UnsupportedOpcode, in.index, {pyOpName(in.op)});
}

void IRBuilder::internal(const std::string &what) const { view_.internalError(cur_, what); }

void IRBuilder::malformed(const std::string &what) const { view_.malformed(cur_, what); }

} // namespace ptxjit::frontend
