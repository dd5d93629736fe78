// Versions of locals (SplitVariables.h): reaching definitions, found sparsely per variable from
// the loads back through the blocks where it is live, joined with a union-find.
#include "ir/SplitVariables.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

namespace ptxjit::ir {

namespace {

/// Disjoint sets of nodes (stores, and "the stores that reach this block's entry" per block
/// where a variable is live).
class UnionFind {
public:
  int make() {
    parent_.push_back(static_cast<int>(parent_.size()));
    return parent_.back();
  }
  int find(int n) {
    while (parent_[static_cast<size_t>(n)] != n) {
      parent_[static_cast<size_t>(n)] =
          parent_[static_cast<size_t>(parent_[static_cast<size_t>(n)])];
      n = parent_[static_cast<size_t>(n)];
    }
    return n;
  }
  void unite(int a, int b) { parent_[static_cast<size_t>(find(a))] = find(b); }

private:
  std::vector<int> parent_;
};

/// What one variable's splitting needs.
struct VarUses {
  std::vector<StoreLocalInstr *> stores; ///< in block order, then instruction order
  std::vector<LoadLocalInstr *> loads;
  /// Blocks that read the variable before any store to it in the block (each once).
  std::vector<size_t> exposedIn;
  /// Block -> the node of the stores reaching its entry, for the blocks where it is live-in.
  std::unordered_map<size_t, int> liveIn;
  int entryNode = -1; ///< a parameter's value at the function's entry, when it matters
};

} // namespace

void splitVariables(Function &fn) {
  const size_t nvars = fn.vars.size();
  const size_t nblocks = fn.blocks.size();
  const size_t nparams = std::min(fn.argNames.size(), nvars);
  if (nvars == 0 || nblocks == 0)
    return;
  std::unordered_map<const Block *, size_t> indexOf;
  for (size_t b = 0; b < nblocks; ++b)
    indexOf[fn.blocks[b].get()] = b;
  std::vector<std::vector<size_t>> preds(nblocks);
  for (size_t b = 0; b < nblocks; ++b)
    for (Block *s : fn.blocks[b]->successors())
      if (auto it = indexOf.find(s); it != indexOf.end())
        preds[it->second].push_back(b);

  // ---- One scan: stores, loads, and what each block leaves in each variable it assigns. ----
  UnionFind sets;
  std::vector<VarUses> uses(nvars);
  // The node of each store, and of each load (a store of its block, or its block's live-in).
  std::unordered_map<const Instr *, int> nodeOf;
  std::vector<std::unordered_map<int, int>> lastStore(nblocks); // var -> the block's last store
  auto valid = [&](int v) { return v >= 0 && static_cast<size_t>(v) < nvars; };
  for (size_t b = 0; b < nblocks; ++b) {
    std::unordered_map<int, int> &current = lastStore[b];
    for (auto &ip : fn.blocks[b]->instrs) {
      if (auto *ld = dyn_cast<LoadLocalInstr>(ip.get()); ld && valid(ld->var)) {
        VarUses &u = uses[static_cast<size_t>(ld->var)];
        u.loads.push_back(ld);
        if (auto it = current.find(ld->var); it != current.end())
          nodeOf[ld] = it->second;
        else if (u.exposedIn.empty() || u.exposedIn.back() != b)
          u.exposedIn.push_back(b);
      } else if (auto *st = dyn_cast<StoreLocalInstr>(ip.get()); st && valid(st->var)) {
        int n = sets.make();
        nodeOf[st] = n;
        current[st->var] = n;
        uses[static_cast<size_t>(st->var)].stores.push_back(st);
      }
    }
  }

  // ---- Per variable: where it is live-in (backwards from the exposed loads, stopping at the
  // blocks that assign it), and the joins there: the stores reaching a block's entry are those
  // its predecessors leave. ----
  for (size_t v = 0; v < nvars; ++v) {
    VarUses &u = uses[v];
    std::vector<size_t> work;
    for (size_t b : u.exposedIn)
      if (u.liveIn.emplace(b, -1).second)
        work.push_back(b);
    while (!work.empty()) {
      size_t b = work.back();
      work.pop_back();
      for (size_t p : preds[b])
        if (!lastStore[p].count(static_cast<int>(v)) && u.liveIn.emplace(p, -1).second)
          work.push_back(p);
    }
    for (auto &entry : u.liveIn)
      entry.second = sets.make();
    for (const auto &[b, node] : u.liveIn) {
      if (b == 0 && v < nparams) { // a parameter holds its argument from the entry on
        if (u.entryNode < 0)
          u.entryNode = sets.make();
        sets.unite(node, u.entryNode);
      }
      for (size_t p : preds[b]) {
        auto it = lastStore[p].find(static_cast<int>(v));
        sets.unite(node, it != lastStore[p].end() ? it->second : u.liveIn.at(p));
      }
    }
    for (LoadLocalInstr *ld : u.loads)
      if (!nodeOf.count(ld))
        nodeOf[ld] = u.liveIn.at(indexOf.at(ld->parent));
    // The frontend's parameters start with an entry store of their Arg: the argument's web.
    if (v < nparams)
      for (StoreLocalInstr *st : u.stores)
        if (auto *a = dyn_cast<ArgInstr>(st->operand(0));
            a && static_cast<size_t>(a->index) == v && st->parent == fn.entry()) {
          if (u.entryNode < 0)
            u.entryNode = sets.make();
          sets.unite(nodeOf.at(st), u.entryNode);
        }
  }

  // ---- Each web other than the kept one becomes a new version. ----
  std::unordered_map<std::string, int> nextVersion;
  for (const Variable &var : fn.vars)
    nextVersion[var.name] = std::max(nextVersion[var.name], var.version + 1);
  for (size_t v = 0; v < nvars; ++v) {
    VarUses &u = uses[v];
    int kept = u.entryNode >= 0    ? sets.find(u.entryNode)
               : !u.stores.empty() ? sets.find(nodeOf.at(u.stores.front()))
                                   : -1;
    if (kept < 0)
      continue; // never assigned: one variable, whose loads typing reports
    std::unordered_map<int, int> varOf{{kept, static_cast<int>(v)}};
    const std::string name = fn.vars[v].name; // a copy: new versions grow fn.vars
    for (StoreLocalInstr *st : u.stores) {
      int root = sets.find(nodeOf.at(st));
      auto [it, isNew] = varOf.emplace(root, static_cast<int>(fn.vars.size()));
      if (isNew)
        fn.vars.push_back(Variable{name, nullptr, false, nextVersion[name]++});
      st->var = it->second;
    }
    for (LoadLocalInstr *ld : u.loads) {
      auto it = varOf.find(sets.find(nodeOf.at(ld)));
      ld->var = it != varOf.end() ? it->second : static_cast<int>(v);
    }
  }
}

} // namespace ptxjit::ir
