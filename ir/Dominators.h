// Dominators of a function's block graph, and the variables whose every read sees the value of
// one assignment that dominates it (which the lowering keeps as values instead of memory).
#pragma once

#include "ir/IR.h"

#include <cstddef>
#include <unordered_map>
#include <vector>

namespace ptxjit::ir {

/// The dominator tree of `fn`'s blocks from its entry (blocks[0]), by Cooper, Harvey and
/// Kennedy's iterative algorithm over the reverse post-order. Blocks the entry does not reach
/// are not in the tree. Immutable once built; the function must not change while it is used.
class BlockDominators {
public:
  /// Computes the tree. Throws std::invalid_argument, naming the block, when a jump or branch
  /// of `fn` targets a null block or a block of another function (ir::verify reports the same
  /// as a diagnostic), or when `fn` has no blocks.
  explicit BlockDominators(const Function &fn);

  /// The reachable blocks in reverse post-order: every block after its dominators, the entry
  /// first.
  const std::vector<const Block *> &reversePostOrder() const { return order_; }

  /// True when the entry reaches `b` (false for a block of another function).
  bool reachable(const Block *b) const;

  /// True when every path from the entry to `b` passes through `a` (a block dominates itself).
  /// False when either is unreachable.
  bool dominates(const Block *a, const Block *b) const;

private:
  static constexpr size_t kNone = static_cast<size_t>(-1);
  size_t indexOf(const Block *b) const;

  std::vector<const Block *> order_;                ///< reverse post-order
  std::unordered_map<const Block *, size_t> index_; ///< position in order_
  std::vector<size_t> idom_;                        ///< per position: the idom's position
};

/// Per variable of `fn`: true when every LoadLocal of it reads the value of one definition
/// that dominates the load, so that the variable can be that value instead of a memory slot.
/// A parameter qualifies when it is never assigned anything but its own argument (the
/// frontend's `StoreLocal p, Arg p` at the entry writes the value the parameter starts with);
/// any other variable when it has exactly one StoreLocal, whose block dominates every block that
/// loads it and precedes the loads of its own block. Only reachable blocks count; a variable
/// never stored (read before assignment) does not qualify.
std::vector<bool> singleValueVariables(const Function &fn, const BlockDominators &dom);

} // namespace ptxjit::ir
