// Dead-branch pruning per specialization (PruneBranches.h).
#include "ir/PruneBranches.h"

#include "ir/Types.h"
#include "ir/typing/MathBuiltins.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_set>
#include <utility>

namespace ptxjit::ir {

namespace {

/// What a value is known to be before typing: None or not None, and, for a constant, its
/// truth value.
struct Known {
  bool isNone = false;
  std::optional<bool> truth; ///< set for constants whose truth Python defines simply
  bool array = false;        ///< an array: `==` compares elementwise, so it is not folded
};

std::optional<Known> knownConstant(const ConstValue &c) {
  Known k;
  switch (c.kind) {
  case ConstValue::Kind::None:
    k.isNone = true;
    k.truth = false;
    return k;
  case ConstValue::Kind::Bool:
    k.truth = c.b;
    return k;
  case ConstValue::Kind::Int:
    k.truth = c.i != 0;
    return k;
  case ConstValue::Kind::Float:
    k.truth = c.f != 0.0;
    return k;
  case ConstValue::Kind::Complex:
    k.truth = c.c != std::complex<double>(0.0, 0.0);
    return k;
  case ConstValue::Kind::String:
  case ConstValue::Kind::Bytes:
  case ConstValue::Kind::Tuple:
    return k; // not None; truth left to typing
  case ConstValue::Kind::Ellipsis:
    k.truth = true;
    return k;
  case ConstValue::Kind::Unsupported:
    return std::nullopt;
  }
  return std::nullopt;
}

class Pruner {
public:
  Pruner(Function &fn, const std::vector<const Type *> &argTypes) : fn_(fn), argTypes_(argTypes) {}

  /// What `i` is known to be, or nullopt.
  std::optional<Known> known(const Instr *i) const {
    if (auto *c = dyn_cast<ConstInstr>(i))
      return knownConstant(c->value);
    if (auto *g = dyn_cast<GlobalInstr>(i)) {
      if (g->value.kind == GlobalValue::Kind::Constant && g->value.dtype.empty())
        return knownConstant(g->value.constant); // a Python constant (not a NumPy scalar)
      return std::nullopt;
    }
    auto *ld = dyn_cast<LoadLocalInstr>(i);
    if (!ld)
      return std::nullopt;
    // The one assignment that reaches this read (a path with none would raise
    // UnboundLocalError): a parameter's entry store of its Arg (or of the default constant
    // that replaced the Arg of an omitted parameter), or of a constant.
    const Instr *only = reachingValue(ld);
    if (!only)
      return std::nullopt;
    if (isa<ConstInstr>(only) || isa<GlobalInstr>(only))
      return known(only);
    const Type *t = parameterType(only);
    if (!t)
      return std::nullopt;
    Known k;
    k.isNone = t->kind() == TypeKind::None;
    k.array = t->kind() == TypeKind::Array;
    return k;
  }

  /// The truth of condition `i` when it is known before typing.
  std::optional<bool> condition(const Instr *i, int depth = 0) const {
    if (!i || depth > 8)
      return std::nullopt;
    if (auto *t = dyn_cast<TruthInstr>(i))
      return condition(t->operand(0), depth + 1);
    if (auto *u = dyn_cast<UnaryOpInstr>(i); u && u->unop == UnaryOpKind::Not) {
      std::optional<bool> v = condition(u->operand(0), depth + 1);
      return v ? std::optional<bool>(!*v) : std::nullopt;
    }
    if (auto *c = dyn_cast<CompareInstr>(i)) {
      bool identity = c->cmp == CmpOp::Is || c->cmp == CmpOp::IsNot;
      bool equality = c->cmp == CmpOp::Eq || c->cmp == CmpOp::Ne;
      if (!identity && !equality)
        return std::nullopt;
      // Only comparisons with a None constant are decided: that side first, so that `a == b`
      // of two locals searches no assignments.
      const Instr *noneSide = c->operand(1), *other = c->operand(0);
      if (isa<LoadLocalInstr>(noneSide))
        std::swap(noneSide, other);
      std::optional<Known> none = isa<LoadLocalInstr>(noneSide) ? std::nullopt : known(noneSide);
      if (!none || !none->isNone)
        return std::nullopt;
      std::optional<Known> value = known(other);
      if (!value || (equality && value->array))
        return std::nullopt;
      bool positive = c->cmp == CmpOp::Is || c->cmp == CmpOp::Eq; // None is None; None == None
      return positive ? value->isNone : !value->isNone;
    }
    if (auto *call = dyn_cast<CallInstr>(i))
      return isInstanceCall(call);
    if (std::optional<Known> k = known(i); k && k->truth && !isa<LoadLocalInstr>(i))
      return k->truth;
    return std::nullopt;
  }

  /// `isinstance(p, C)` with `p` a parameter read (the one assignment reaching it is the
  /// parameter's) and `C` a class or a tuple of classes written as globals (`int`, `np.float32`,
  /// `(int, float)`): decided as typing decides it (isInstanceOf), so that the path the
  /// parameter's type does not take is never typed (Numba prunes it too).
  std::optional<bool> isInstanceCall(const CallInstr *call) const {
    auto *g = dyn_cast<GlobalInstr>(call->callee());
    if (!g || g->value.kind != GlobalValue::Kind::Symbol ||
        g->value.path != "builtins.isinstance" || call->numArgs() != 2 || !call->kwNames.empty() ||
        call->starArgs)
      return std::nullopt;
    auto *ld = dyn_cast<LoadLocalInstr>(call->arg(0));
    const Type *value = ld ? parameterType(reachingValue(ld)) : nullptr;
    const Type *cls = value ? classType(call->arg(1), 0) : nullptr;
    if (!cls)
      return std::nullopt;
    std::string why;
    return isInstanceOf(value, cls, why); // nullopt: typing reports it
  }

  /// The type of the parameter whose Arg `only` is (the one assignment reaching a read), or
  /// null when `only` is not a parameter's Arg with a known type.
  const Type *parameterType(const Instr *only) const {
    auto *arg = only ? dyn_cast<ArgInstr>(only) : nullptr;
    if (!arg || arg->index < 0 || static_cast<size_t>(arg->index) >= argTypes_.size())
      return nullptr;
    return argTypes_[static_cast<size_t>(arg->index)];
  }

  /// The type typing gives the class argument `i` of isinstance when it is a global symbol, an
  /// attribute of one (`np.float32`) or a tuple of those; null for anything else.
  static const Type *classType(const Instr *i, int depth) {
    if (depth > 8)
      return nullptr;
    if (auto *g = dyn_cast<GlobalInstr>(i))
      return g->value.kind == GlobalValue::Kind::Symbol ? types::symbol(g->value.path) : nullptr;
    if (auto *a = dyn_cast<GetAttrInstr>(i)) {
      const Type *t = classType(a->operand(0), depth + 1);
      auto *base = t ? dyn_cast<SymbolType>(t) : nullptr;
      return base ? types::symbol(base->path() + "." + a->attr) : nullptr;
    }
    if (auto *t = dyn_cast<BuildTupleInstr>(i);
        t && !t->isList && std::find(t->spread.begin(), t->spread.end(), true) == t->spread.end()) {
      std::vector<const Type *> elems;
      for (const Instr *e : t->operands()) {
        elems.push_back(classType(e, depth + 1));
        if (!elems.back())
          return nullptr;
      }
      return types::tuple(elems);
    }
    return nullptr;
  }

  int run() {
    int folded = 0;
    for (auto &b : fn_.blocks) {
      auto *br = b->terminator() ? dyn_cast<BranchInstr>(b->terminator()) : nullptr;
      if (!br)
        continue;
      std::optional<bool> c = condition(br->operand(0));
      if (!c)
        continue;
      Instr *cond = br->operand(0);
      auto jump = std::make_unique<JumpInstr>(*c ? br->ifTrue : br->ifFalse);
      jump->loc = br->loc;
      jump->parent = b.get();
      jump->id = br->id;
      b->instrs.back() = std::move(jump);
      eraseIfDead(*b, cond);
      ++folded;
    }
    if (folded)
      removeUnreachable();
    return folded;
  }

  /// run() until no branch folds: a removed path may leave one assignment reaching a read.
  int runToFixpoint() {
    int total = 0;
    for (int n = run(); n; n = run())
      total += n;
    return total;
  }

private:
  /// Erases `i` from `b` when nothing uses it and it only computes a value (the condition of a
  /// folded branch: it would still be typed, and `y != None` with y a float64 does not type),
  /// then its operands the same way.
  void eraseIfDead(Block &b, Instr *i) {
    switch (i->op()) {
    case Opcode::Truth:
    case Opcode::Compare:
    case Opcode::UnaryOp:
    case Opcode::Const:
    case Opcode::Global:
    case Opcode::LoadLocal:
      break;
    default:
      return;
    }
    if (i->parent != &b)
      return;
    for (auto &blk : fn_.blocks)
      for (auto &user : blk->instrs)
        for (const Instr *o : user->operands())
          if (o == i)
            return;
    std::vector<Instr *> operands = i->operands();
    for (auto it = b.instrs.begin(); it != b.instrs.end(); ++it)
      if (it->get() == i) {
        b.instrs.erase(it);
        break;
      }
    for (Instr *o : operands)
      eraseIfDead(b, o);
  }

  /// The value stored by the only StoreLocal that reaches `ld` (reaching definitions over the
  /// blocks), or null when several (or none) do.
  const Instr *reachingValue(const LoadLocalInstr *ld) const {
    const Block *home = ld->parent;
    // A store earlier in the load's own block is the one.
    bool after = false;
    for (auto it = home->instrs.rbegin(); it != home->instrs.rend(); ++it) {
      if (it->get() == ld) {
        after = true;
        continue;
      }
      if (auto *st = dyn_cast<StoreLocalInstr>(it->get()); after && st && st->var == ld->var)
        return st->operand(0);
    }
    // Else the stores that reach the block's entry: the last store of each block, flowing
    // along the edges until nothing changes.
    std::map<const Block *, std::vector<const Block *>> preds;
    for (auto &b : fn_.blocks)
      for (Block *s : b->successors())
        preds[s].push_back(b.get());
    std::map<const Block *, const Instr *> lastStore;
    for (auto &b : fn_.blocks)
      for (auto &ip : b->instrs)
        if (auto *st = dyn_cast<StoreLocalInstr>(ip.get()); st && st->var == ld->var)
          lastStore[b.get()] = st;
    std::map<const Block *, std::set<const Instr *>> in, out;
    bool changed = true;
    while (changed) {
      changed = false;
      for (auto &b : fn_.blocks) {
        std::set<const Instr *> reach;
        for (const Block *p : preds[b.get()])
          reach.insert(out[p].begin(), out[p].end());
        std::set<const Instr *> o = reach;
        if (auto it = lastStore.find(b.get()); it != lastStore.end())
          o = {it->second};
        if (reach != in[b.get()] || o != out[b.get()]) {
          in[b.get()] = std::move(reach);
          out[b.get()] = std::move(o);
          changed = true;
        }
      }
    }
    const std::set<const Instr *> &r = in[home];
    return r.size() == 1 ? (*r.begin())->operand(0) : nullptr;
  }

  void removeUnreachable() {
    std::unordered_set<const Block *> seen = reachableBlocks(fn_);
    // Values do not cross from an unreachable block into a reachable one (a reachable block is
    // never dominated by an unreachable one), so whole blocks go.
    std::vector<std::unique_ptr<Block>> kept;
    for (auto &b : fn_.blocks)
      if (seen.count(b.get()))
        kept.push_back(std::move(b));
    fn_.blocks = std::move(kept);
    for (size_t k = 0; k < fn_.blocks.size(); ++k)
      fn_.blocks[k]->id = static_cast<int>(k);
  }

  Function &fn_;
  const std::vector<const Type *> &argTypes_;
};

} // namespace

int pruneConstantBranches(Function &fn, const std::vector<const Type *> &argTypes) {
  if (fn.blocks.empty())
    return 0;
  return Pruner(fn, argTypes).runToFixpoint();
}

} // namespace ptxjit::ir
