// The control-flow graph of a BytecodeView: basic blocks split at jump targets and after
// terminators and conditional jumps, with successor and predecessor edges.
#pragma once

#include "frontend/Bytecode.h"

#include <optional>
#include <vector>

namespace ptxjit::frontend {

/// A maximal straight-line run of instructions [begin, end).
struct CfgBlock {
  int id = -1;      ///< index in Cfg::blocks(); blocks are in bytecode order
  InstrIndex begin; ///< first instruction
  InstrIndex end;   ///< one past the last instruction
  /// Where control goes when the last instruction does not jump: the next block (none after
  /// an unconditional jump, a return or a raise).
  std::optional<int> fallthrough;
  /// The block a jumping last instruction reaches (Instruction::target).
  std::optional<int> jump;
  std::vector<int> preds; ///< predecessor block ids, each once, in increasing order
  bool reachable = false; ///< reachable from the entry block (block 0)

  InstrIndex last() const { return InstrIndex(end.value - 1); }
  /// The distinct successor ids: fallthrough first, then jump.
  std::vector<int> successors() const;
};

class Cfg {
public:
  /// Builds the graph. Throws CompileError (Internal) when control could run off the end of
  /// the code or the code is empty.
  explicit Cfg(const BytecodeView &view);

  const BytecodeView &view() const { return *view_; }
  const std::vector<CfgBlock> &blocks() const { return blocks_; }
  const CfgBlock &block(int id) const { return blocks_.at(static_cast<size_t>(id)); }
  /// The block containing instruction `i`.
  const CfgBlock &blockOf(InstrIndex i) const;
  /// The reachable blocks in reverse postorder from the entry: every block but the entry
  /// comes after at least one of its predecessors (its parent in the depth-first tree).
  const std::vector<int> &reversePostOrder() const { return rpo_; }

private:
  const BytecodeView *view_;
  std::vector<CfgBlock> blocks_;
  std::vector<int> blockOfInstr_;
  std::vector<int> rpo_;
};

} // namespace ptxjit::frontend
