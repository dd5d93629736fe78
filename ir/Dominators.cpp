#include "ir/Dominators.h"

#include "ir/Casting.h"

#include <stdexcept>
#include <string>
#include <unordered_set>

namespace ptxjit::ir {

BlockDominators::BlockDominators(const Function &fn) {
  if (fn.blocks.empty())
    throw std::invalid_argument("function " + fn.name + " has no blocks");
  // Post-order by an iterative depth-first walk (functions may be large), successors in order.
  struct Frame {
    const Block *block;
    std::vector<Block *> succs;
    size_t next = 0;
  };
  std::vector<const Block *> post;
  std::unordered_set<const Block *> seen{fn.entry()};
  std::vector<Frame> stack{{fn.entry(), fn.entry()->successors()}};
  while (!stack.empty()) {
    Frame &f = stack.back();
    if (f.next == f.succs.size()) {
      post.push_back(f.block);
      stack.pop_back();
      continue;
    }
    const Block *s = f.succs[f.next++];
    if (!s || s->parent != &fn)
      throw std::invalid_argument("block bb" + std::to_string(f.block->id) + " of function " +
                                  fn.name + " jumps to " +
                                  (s ? "a block of another function" : "a null block"));
    if (seen.insert(s).second)
      stack.push_back({s, s->successors()});
  }
  order_.assign(post.rbegin(), post.rend());
  for (size_t k = 0; k < order_.size(); ++k)
    index_.emplace(order_[k], k);

  std::vector<std::vector<size_t>> preds(order_.size());
  for (size_t k = 0; k < order_.size(); ++k)
    for (const Block *s : order_[k]->successors())
      preds[index_.at(s)].push_back(k);
  // Positions are reverse post-order numbers, so the intersection walks up by comparing them.
  idom_.assign(order_.size(), kNone);
  idom_[0] = 0;
  auto intersect = [&](size_t a, size_t b) {
    while (a != b) {
      while (a > b)
        a = idom_[a];
      while (b > a)
        b = idom_[b];
    }
    return a;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t k = 1; k < order_.size(); ++k) {
      size_t idom = kNone;
      for (size_t p : preds[k])
        if (idom_[p] != kNone)
          idom = idom == kNone ? p : intersect(p, idom);
      if (idom != idom_[k]) {
        idom_[k] = idom;
        changed = true;
      }
    }
  }
}

size_t BlockDominators::indexOf(const Block *b) const {
  auto it = index_.find(b);
  return it == index_.end() ? kNone : it->second;
}

bool BlockDominators::reachable(const Block *b) const { return indexOf(b) != kNone; }

bool BlockDominators::dominates(const Block *a, const Block *b) const {
  size_t ia = indexOf(a), ib = indexOf(b);
  if (ia == kNone || ib == kNone)
    return false;
  // A dominator precedes what it dominates in reverse post-order: walk b's idoms up to a's place.
  while (ib > ia)
    ib = idom_[ib];
  return ib == ia;
}

std::vector<bool> singleValueVariables(const Function &fn, const BlockDominators &dom) {
  const size_t n = fn.vars.size();
  struct Use {
    const Block *block;
    size_t pos;
  };
  std::vector<std::vector<Use>> stores(n), loads(n);
  std::vector<bool> ownArgumentOnly(n, true); // parameters: every store writes its own Arg
  for (const Block *b : dom.reversePostOrder())
    for (size_t k = 0; k < b->instrs.size(); ++k) {
      const Instr *i = b->instrs[k].get();
      if (const auto *ld = dyn_cast<LoadLocalInstr>(i)) {
        if (ld->var >= 0 && static_cast<size_t>(ld->var) < n)
          loads[ld->var].push_back({b, k});
      } else if (const auto *st = dyn_cast<StoreLocalInstr>(i)) {
        if (st->var < 0 || static_cast<size_t>(st->var) >= n)
          continue;
        stores[st->var].push_back({b, k});
        const auto *arg = dyn_cast<ArgInstr>(st->operand(0));
        if (!arg || arg->index != st->var)
          ownArgumentOnly[st->var] = false;
      }
    }
  std::vector<bool> single(n, false);
  for (size_t v = 0; v < n; ++v) {
    if (fn.vars[v].isArgument) {
      single[v] = ownArgumentOnly[v];
      continue;
    }
    if (stores[v].size() != 1)
      continue;
    const Use def = stores[v].front();
    bool ok = true;
    for (const Use &u : loads[v])
      ok = ok && (u.block == def.block ? u.pos > def.pos : dom.dominates(def.block, u.block));
    single[v] = ok;
  }
  return single;
}

} // namespace ptxjit::ir
