#include "frontend/Cfg.h"

#include <algorithm>

namespace ptxjit::frontend {

std::vector<int> CfgBlock::successors() const {
  std::vector<int> out;
  if (fallthrough)
    out.push_back(*fallthrough);
  if (jump && (!fallthrough || *jump != *fallthrough))
    out.push_back(*jump);
  return out;
}

Cfg::Cfg(const BytecodeView &view) : view_(&view) {
  const int n = static_cast<int>(view.size());
  if (n == 0) {
    ir::SourceLoc l;
    l.line = view.snapshot().firstLine;
    ir::raiseDiag(ir::DiagCode::MalformedCode, view.snapshot().filename, l,
                  {"empty bytecode in " + view.snapshot().qualname});
  }

  // Leaders: the first instruction, every jump target, and every instruction after a jump or
  // a terminator.
  std::vector<bool> leader(static_cast<size_t>(n) + 1, false);
  leader[0] = true;
  for (const Instruction &in : view) {
    if (in.target)
      leader[static_cast<size_t>(in.target->value)] = true;
    if (in.target || pyOpIsTerminator(in.op))
      leader[static_cast<size_t>(in.index.value) + 1] = true;
  }

  blockOfInstr_.assign(static_cast<size_t>(n), -1);
  for (int i = 0; i < n; ++i) {
    if (leader[static_cast<size_t>(i)]) {
      CfgBlock b;
      b.id = static_cast<int>(blocks_.size());
      b.begin = InstrIndex(i);
      blocks_.push_back(b);
    }
    blockOfInstr_[static_cast<size_t>(i)] = blocks_.back().id;
    blocks_.back().end = InstrIndex(i + 1);
  }

  for (CfgBlock &b : blocks_) {
    const Instruction &last = view.at(b.last());
    if (last.target)
      b.jump = blockOfInstr_[static_cast<size_t>(last.target->value)];
    bool fallsThrough = !pyOpIsTerminator(last.op);
    if (fallsThrough) {
      if (b.end.value >= n)
        view.malformed(last.index, "control runs past the end of the bytecode");
      b.fallthrough = b.id + 1;
    }
  }
  for (const CfgBlock &b : blocks_)
    for (int s : b.successors())
      blocks_[static_cast<size_t>(s)].preds.push_back(b.id);
  for (CfgBlock &b : blocks_) {
    std::sort(b.preds.begin(), b.preds.end());
    b.preds.erase(std::unique(b.preds.begin(), b.preds.end()), b.preds.end());
  }

  // Depth-first search from the entry for reachability and reverse postorder (iterative, so
  // that huge functions cannot overflow the native stack).
  std::vector<int> post;
  std::vector<std::pair<int, size_t>> stack{{0, 0}};
  blocks_[0].reachable = true;
  while (!stack.empty()) {
    auto &[id, next] = stack.back();
    std::vector<int> succ = blocks_[static_cast<size_t>(id)].successors();
    if (next < succ.size()) {
      int s = succ[next++];
      if (!blocks_[static_cast<size_t>(s)].reachable) {
        blocks_[static_cast<size_t>(s)].reachable = true;
        stack.push_back({s, 0});
      }
    } else {
      post.push_back(id);
      stack.pop_back();
    }
  }
  rpo_.assign(post.rbegin(), post.rend());
}

const CfgBlock &Cfg::blockOf(InstrIndex i) const {
  return blocks_.at(static_cast<size_t>(blockOfInstr_.at(static_cast<size_t>(i.value))));
}

} // namespace ptxjit::frontend
