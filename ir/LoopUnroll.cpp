// Unrolling of for loops over tuples (LoopUnroll.h).
#include "ir/LoopUnroll.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace ptxjit::ir {

namespace {

/// A copy of `i` with the same op, fields and location, its operands mapped through `values`
/// (operands defined outside the copied blocks stay) and its targets through `blocks`.
std::unique_ptr<Instr> cloneInstr(const Instr &i,
                                  const std::unordered_map<const Instr *, Instr *> &values,
                                  const std::unordered_map<const Block *, Block *> &blocks) {
  auto v = [&](size_t k) {
    Instr *o = i.operand(k);
    auto it = values.find(o);
    return it == values.end() ? o : it->second;
  };
  auto all = [&]() {
    std::vector<Instr *> out;
    for (size_t k = 0; k < i.numOperands(); ++k)
      out.push_back(v(k));
    return out;
  };
  auto b = [&](Block *t) {
    auto it = blocks.find(t);
    return it == blocks.end() ? t : it->second;
  };
  std::unique_ptr<Instr> c;
  switch (i.op()) {
  case Opcode::Const:
    c = std::make_unique<ConstInstr>(cast<ConstInstr>(&i)->value);
    break;
  case Opcode::Global: {
    auto *g = cast<GlobalInstr>(&i);
    c = std::make_unique<GlobalInstr>(g->name, g->value);
    break;
  }
  case Opcode::Arg:
    c = std::make_unique<ArgInstr>(cast<ArgInstr>(&i)->index);
    break;
  case Opcode::LoadLocal:
    c = std::make_unique<LoadLocalInstr>(cast<LoadLocalInstr>(&i)->var);
    break;
  case Opcode::StoreLocal:
    c = std::make_unique<StoreLocalInstr>(cast<StoreLocalInstr>(&i)->var, v(0));
    break;
  case Opcode::BinOp: {
    auto *o = cast<BinOpInstr>(&i);
    c = std::make_unique<BinOpInstr>(o->binop, v(0), v(1), o->inplace);
    break;
  }
  case Opcode::UnaryOp:
    c = std::make_unique<UnaryOpInstr>(cast<UnaryOpInstr>(&i)->unop, v(0));
    break;
  case Opcode::Compare:
    c = std::make_unique<CompareInstr>(cast<CompareInstr>(&i)->cmp, v(0), v(1));
    break;
  case Opcode::Truth:
    c = std::make_unique<TruthInstr>(v(0));
    break;
  case Opcode::GetAttr:
    c = std::make_unique<GetAttrInstr>(v(0), cast<GetAttrInstr>(&i)->attr);
    break;
  case Opcode::GetItem:
    c = std::make_unique<GetItemInstr>(v(0), v(1));
    break;
  case Opcode::SetItem:
    c = std::make_unique<SetItemInstr>(v(0), v(1), v(2));
    break;
  case Opcode::SetAttr:
    c = std::make_unique<SetAttrInstr>(v(0), cast<SetAttrInstr>(&i)->attr, v(1));
    break;
  case Opcode::Call:
    c = std::make_unique<CallInstr>(all(), cast<CallInstr>(&i)->kwNames);
    break;
  case Opcode::BuildTuple:
    c = std::make_unique<BuildTupleInstr>(all());
    break;
  case Opcode::TupleGet:
    c = std::make_unique<TupleGetInstr>(v(0), cast<TupleGetInstr>(&i)->index);
    break;
  case Opcode::BuildSlice:
    c = std::make_unique<BuildSliceInstr>(all());
    break;
  case Opcode::GetIter:
    c = std::make_unique<GetIterInstr>(v(0));
    break;
  case Opcode::IterValid:
    c = std::make_unique<IterValidInstr>(v(0));
    break;
  case Opcode::IterNext:
    c = std::make_unique<IterNextInstr>(v(0));
    break;
  case Opcode::Jump:
    c = std::make_unique<JumpInstr>(b(cast<JumpInstr>(&i)->target));
    break;
  case Opcode::Branch: {
    auto *br = cast<BranchInstr>(&i);
    c = std::make_unique<BranchInstr>(v(0), b(br->ifTrue), b(br->ifFalse));
    break;
  }
  case Opcode::Return:
    c = std::make_unique<ReturnInstr>(i.numOperands() ? v(0) : nullptr);
    break;
  case Opcode::Raise:
    c = std::make_unique<RaiseInstr>(cast<RaiseInstr>(&i)->exception);
    break;
  }
  c->loc = i.loc;
  return c;
}

/// Points every jump of `from` to `old` at `target` instead.
void retarget(Block *from, Block *old, Block *target) {
  Instr *t = from->terminator();
  if (auto *j = dyn_cast<JumpInstr>(t)) {
    if (j->target == old)
      j->target = target;
  } else if (auto *br = dyn_cast<BranchInstr>(t)) {
    if (br->ifTrue == old)
      br->ifTrue = target;
    if (br->ifFalse == old)
      br->ifFalse = target;
  }
}

} // namespace

void unrollTupleLoop(Function &fn, GetIterInstr *getIter, size_t count) {
  auto unsupported = [&](const std::string &what) {
    raiseDiag(DiagCode::UnsupportedConstruct, fn.filename, getIter->loc,
              {"this for loop over a tuple (" + what + ")"});
  };
  // ---- The loop's shape: pre-block P (GetIter stored into V, jump to H), header H (IterValid
  // of V, branch to the body entry E or the exit X), E starting with IterNext of V. ----
  Block *pre = getIter->parent;
  StoreLocalInstr *store = nullptr;
  for (auto &ip : pre->instrs) {
    for (Instr *o : ip->operands())
      if (o == getIter) {
        auto *s = dyn_cast<StoreLocalInstr>(ip.get());
        if (!s || store)
          unsupported("its iterator is used other than by the loop");
        store = s;
      }
  }
  auto *preJump = dyn_cast<JumpInstr>(pre->terminator());
  if (!store || !preJump)
    unsupported("its iterator is not kept for the loop");
  const int iterVar = store->var;
  Block *header = preJump->target;
  auto *headerBranch = dyn_cast<BranchInstr>(header->terminator());
  auto *valid = headerBranch ? dyn_cast<IterValidInstr>(headerBranch->operand(0)) : nullptr;
  auto *validLoad = valid ? dyn_cast<LoadLocalInstr>(valid->operand(0)) : nullptr;
  if (!validLoad || validLoad->var != iterVar)
    unsupported("no loop header");
  for (auto &ip : header->instrs)
    if (ip.get() != validLoad && ip.get() != valid && ip.get() != headerBranch)
      unsupported("a loop header doing more than the iterator test");
  Block *entryBlock = headerBranch->ifTrue;
  Block *exitBlock = headerBranch->ifFalse;

  // ---- Reachability and predecessors (reachable blocks only). ----
  std::unordered_set<const Block *> reachable = reachableBlocks(fn);
  std::unordered_map<const Block *, std::vector<Block *>> preds;
  for (auto &bp : fn.blocks)
    if (reachable.count(bp.get()))
      for (Block *s : bp->successors())
        preds[s].push_back(bp.get());

  // ---- The body: blocks reached from E without passing H, and only from within. ----
  std::unordered_set<const Block *> body;
  {
    std::vector<Block *> work{entryBlock};
    while (!work.empty()) {
      Block *b = work.back();
      work.pop_back();
      if (b == header || !body.insert(b).second)
        continue;
      for (Block *s : b->successors())
        work.push_back(s);
    }
    // Keep the blocks all of whose predecessors are in the body (E's only one is H): the
    // code after a `break` is reached from the loop's exit too, and is not copied.
    for (bool changed = true; changed;) {
      changed = false;
      for (auto it = body.begin(); it != body.end();) {
        const Block *b = *it;
        bool inside = b == entryBlock;
        if (!inside) {
          inside = true;
          for (Block *p : preds[b])
            inside = inside && body.count(p);
        }
        if (!inside) {
          it = body.erase(it);
          changed = true;
        } else {
          ++it;
        }
      }
    }
  }
  if (preds[entryBlock].size() != 1)
    unsupported("its body is entered from elsewhere");
  std::vector<Block *> bodyOrder; // in function order
  size_t lastBodyIndex = 0;
  for (size_t k = 0; k < fn.blocks.size(); ++k)
    if (body.count(fn.blocks[k].get())) {
      bodyOrder.push_back(fn.blocks[k].get());
      lastBodyIndex = k;
    }
  if (fn.blocks.size() + bodyOrder.size() * (count > 0 ? count - 1 : 0) > kMaxBlocksAfterUnroll)
    unsupported("unrolling it would make more than " + std::to_string(kMaxBlocksAfterUnroll) +
                " blocks");

  // The IterNext starting the body.
  IterNextInstr *next = nullptr;
  for (auto &ip : entryBlock->instrs)
    if (auto *n = dyn_cast<IterNextInstr>(ip.get())) {
      auto *l = dyn_cast<LoadLocalInstr>(n->operand(0));
      if (l && l->var == iterVar)
        next = n;
      break;
    }
  if (!next)
    unsupported("its body does not start with the next value");

  // ---- The tuple replaces the iterator in its variable. ----
  for (auto &ip : pre->instrs)
    if (ip.get() == store)
      store->setOperand(0, getIter->operand(0));
  pre->instrs.erase(
      std::find_if(pre->instrs.begin(), pre->instrs.end(),
                   [&](const std::unique_ptr<Instr> &p) { return p.get() == getIter; }));

  // ---- The copies: 1..count-1 cloned from the body, then the body itself becomes copy 0. ----
  std::vector<Block *> entries(count, nullptr);
  std::vector<std::unique_ptr<Block>> made;
  std::vector<std::unordered_map<const Block *, Block *>> blockMaps(count);
  for (size_t k = 1; k < count; ++k) {
    auto &bmap = blockMaps[k];
    for (Block *b : bodyOrder) {
      auto nb = std::make_unique<Block>();
      nb->parent = &fn;
      bmap[b] = nb.get();
      made.push_back(std::move(nb));
    }
    entries[k] = bmap[entryBlock];
    std::unordered_map<const Instr *, Instr *> vmap;
    for (Block *b : bodyOrder) {
      Block *nb = bmap[b];
      for (auto &ip : b->instrs) {
        std::unique_ptr<Instr> c;
        if (ip.get() == next) // element k of the tuple where the loop took the next value
          c = std::make_unique<TupleGetInstr>(
              vmap.count(next->operand(0)) ? vmap.at(next->operand(0)) : next->operand(0),
              static_cast<int>(k));
        else
          c = cloneInstr(*ip, vmap, bmap);
        c->loc = ip->loc;
        vmap[ip.get()] = nb->append(std::move(c));
      }
    }
  }
  // Copy 0 in place: its IterNext becomes element 0.
  if (count > 0) {
    entries[0] = entryBlock;
    for (auto &ip : entryBlock->instrs)
      if (ip.get() == next) {
        auto get = std::make_unique<TupleGetInstr>(next->operand(0), 0);
        get->loc = next->loc;
        get->parent = entryBlock;
        get->id = fn.nextValueId();
        Instr *g = get.get();
        for (Block *b : bodyOrder)
          for (auto &user : b->instrs)
            for (size_t o = 0; o < user->numOperands(); ++o)
              if (user->operand(o) == next)
                user->setOperand(o, g);
        ip = std::move(get); // destroys the IterNext
        break;
      }
  }
  // Back edges (the end of the body, `continue`) go on to the next copy, the last to the exit.
  for (size_t k = 0; k < count; ++k) {
    Block *onward = k + 1 < count ? entries[k + 1] : exitBlock;
    for (Block *b : bodyOrder) {
      Block *c = k == 0 ? b : blockMaps[k][b];
      retarget(c, header, onward);
    }
  }
  // The header only passes on to the first copy (or the exit for an empty tuple).
  header->instrs.clear();
  header->append(std::make_unique<JumpInstr>(count > 0 ? entries[0] : exitBlock))->loc =
      getIter->loc;
  // An empty tuple: the body is gone.
  if (count == 0)
    fn.blocks.erase(
        std::remove_if(fn.blocks.begin(), fn.blocks.end(),
                       [&](const std::unique_ptr<Block> &b) { return body.count(b.get()); }),
        fn.blocks.end());
  else
    fn.blocks.insert(fn.blocks.begin() + static_cast<std::ptrdiff_t>(lastBodyIndex) + 1,
                     std::make_move_iterator(made.begin()), std::make_move_iterator(made.end()));
  for (size_t k = 0; k < fn.blocks.size(); ++k)
    fn.blocks[k]->id = static_cast<int>(k);
}

} // namespace ptxjit::ir
