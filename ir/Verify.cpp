// The IR verifier: one structural pass over blocks and terminators, dominators of the block
// CFG (ir/Dominators.h), then the per-instruction checks of operands, variables and, for typed
// IR, types.
#include "ir/Verify.h"

#include "ir/Dominators.h"
#include "ir/typing/Typing.h"

#include <cstdlib>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace ptxjit::ir {
namespace {

std::string instrName(const Instr *i) {
  return "%" + std::to_string(i->id) + " (" + opcodeName(i->op()) + ")";
}

std::string typeName(const Type *t) { return t ? t->str() : "no type"; }

/// True when a returned value of type `t` may be returned from a function whose (unified)
/// return type is `r`: typing unifies every returned type into `r`, so each one promotes to
/// it (numbers), differs only by layout A or read-only (arrays), fits element-wise (tuples),
/// or is `r` once weak literal types take their defaults.
bool fitsReturnType(const Type *t, const Type *r) {
  if (t == r)
    return true;
  if (t->isScalarNumber() && r->isScalarNumber())
    return promote(t, r) == r;
  if (auto *a = dyn_cast<ArrayType>(t)) {
    auto *b = dyn_cast<ArrayType>(r);
    return b && a->dtype() == b->dtype() && a->ndim() == b->ndim() &&
           (a->layout() == b->layout() || b->layout() == Layout::A) &&
           (!a->readonly() || b->readonly());
  }
  if (auto *a = dyn_cast<TupleType>(t)) {
    auto *b = dyn_cast<TupleType>(r);
    if (!b || a->size() != b->size())
      return false;
    for (size_t k = 0; k < a->size(); ++k)
      if (!fitsReturnType(a->elements()[k], b->elements()[k]))
        return false;
    return true;
  }
  return concretize(t) == r;
}

class Verifier {
public:
  explicit Verifier(const Function &fn) : fn_(fn) {}

  void run() {
    if (fn_.blocks.empty())
      fail(nullptr, nullptr, "has no blocks");
    checkParameters();
    checkBlocks();
    dom_.emplace(fn_); // checkBlocks made sure every jump stays in the function
    for (size_t b = 0; b < fn_.blocks.size(); ++b) {
      const Block *block = fn_.blocks[b].get();
      for (size_t k = 0; k < block->instrs.size(); ++k)
        checkInstr(block, k, block->instrs[k].get());
    }
  }

private:
  [[noreturn]] void fail(const Block *b, const Instr *i, const std::string &what) const {
    std::string msg = "verify: function " + fn_.name;
    if (b)
      msg += ", bb" + std::to_string(b->id);
    if (i)
      msg += ", " + instrName(i);
    msg += ": " + what;
    raiseDiag(DiagCode::Internal, fn_.filename, i ? i->loc : SourceLoc{}, {msg});
  }

  bool typed() const { return fn_.returnType != nullptr; }

  void checkParameters() {
    if (fn_.vars.size() < fn_.argNames.size())
      fail(nullptr, nullptr,
           "has " + std::to_string(fn_.argNames.size()) + " parameters but only " +
               std::to_string(fn_.vars.size()) + " variables (parameters are the first ones)");
    for (size_t k = 0; k < fn_.argNames.size(); ++k)
      if (fn_.vars[k].printedName() != fn_.argNames[k])
        fail(nullptr, nullptr,
             "variable " + std::to_string(k) + " is '" + fn_.vars[k].printedName() +
                 "', not parameter '" + fn_.argNames[k] + "'");
    if (!typed())
      return;
    if (fn_.argTypes.size() != fn_.argNames.size())
      fail(nullptr, nullptr,
           "is typed but has " + std::to_string(fn_.argTypes.size()) + " argument types for " +
               std::to_string(fn_.argNames.size()) + " parameters");
    for (size_t k = 0; k < fn_.argTypes.size(); ++k)
      if (!fn_.argTypes[k])
        fail(nullptr, nullptr, "is typed but parameter '" + fn_.argNames[k] + "' has no type");
    if (fn_.kind == FunctionKind::Kernel && fn_.returnType->kind() != TypeKind::Void)
      fail(nullptr, nullptr,
           "is a kernel with return type " + fn_.returnType->str() + ", not void");
  }

  /// Blocks and their terminators; indexes blocks and instructions for the later checks.
  void checkBlocks() {
    std::unordered_map<int, const Block *> blockIds;
    std::unordered_map<int, const Instr *> instrIds;
    for (size_t b = 0; b < fn_.blocks.size(); ++b) {
      const Block *block = fn_.blocks[b].get();
      if (!block)
        fail(nullptr, nullptr, "block " + std::to_string(b) + " is null");
      if (block->parent != &fn_)
        fail(block, nullptr, "the block's parent is not this function");
      if (auto [it, fresh] = blockIds.emplace(block->id, block); !fresh)
        fail(block, nullptr, "two blocks have id bb" + std::to_string(block->id));
      blockIndex_[block] = b;
      if (block->instrs.empty())
        fail(block, nullptr, "the block is empty (it must end in a terminator)");
      for (size_t k = 0; k < block->instrs.size(); ++k) {
        const Instr *i = block->instrs[k].get();
        if (!i)
          fail(block, nullptr, "instruction " + std::to_string(k) + " is null");
        if (i->parent != block)
          fail(block, i, "the instruction's parent is not this block");
        if (i->id < 0)
          fail(block, i, "the instruction has no id");
        if (auto [it, fresh] = instrIds.emplace(i->id, i); !fresh)
          fail(block, i,
               "id %" + std::to_string(i->id) + " is also the id of " + instrName(it->second) +
                   (it->second->parent ? " in bb" + std::to_string(it->second->parent->id) : ""));
        position_[i] = {b, k};
        bool last = k + 1 == block->instrs.size();
        if (i->isTerminator() && !last)
          fail(block, i, "a terminator in the middle of the block");
        if (!i->isTerminator() && last)
          fail(block, i, "the block does not end in a terminator (Jump, Branch or Return)");
      }
    }
    // Targets, once every block of the function is known.
    for (const auto &bp : fn_.blocks) {
      const Instr *t = bp->instrs.back().get();
      std::vector<const Block *> targets;
      if (auto *j = dyn_cast<JumpInstr>(t))
        targets = {j->target};
      else if (auto *br = dyn_cast<BranchInstr>(t))
        targets = {br->ifTrue, br->ifFalse};
      for (const Block *target : targets) {
        if (!target)
          fail(bp.get(), t, "a branch target is null");
        if (!blockIndex_.count(target)) {
          std::string owner = target->parent && target->parent != &fn_
                                  ? " of function " + target->parent->name
                                  : " that is not in this function";
          fail(bp.get(), t, "jumps to block bb" + std::to_string(target->id) + owner);
        }
      }
    }
  }

  void checkOperand(const Block *block, size_t pos, const Instr *i, size_t k) {
    const Instr *o = i->operand(k);
    if (!o)
      fail(block, i, "operand " + std::to_string(k) + " is null");
    auto it = position_.find(o);
    if (it == position_.end()) {
      const Function *owner = o->parent ? o->parent->parent : nullptr;
      fail(block, i,
           "operand %" + std::to_string(o->id) +
               (owner && owner != &fn_ ? " belongs to function " + owner->name
                                       : " is not an instruction of this function"));
    }
    if (!producesValue(o->op()))
      fail(block, i, "operand " + instrName(o) + " produces no value");
    auto [defBlock, defPos] = it->second;
    size_t useBlock = blockIndex_.at(block);
    if (defBlock == useBlock) {
      if (defPos >= pos)
        fail(block, i,
             "operand %" + std::to_string(o->id) + " is used before its definition in the block");
      return;
    }
    if (dom_->reachable(block) && !dom_->dominates(fn_.blocks[defBlock].get(), block))
      fail(block, i,
           "operand %" + std::to_string(o->id) + " is defined in bb" +
               std::to_string(fn_.blocks[defBlock]->id) + ", which does not dominate this use");
  }

  void checkInstr(const Block *block, size_t pos, const Instr *i) {
    for (size_t k = 0; k < i->numOperands(); ++k)
      checkOperand(block, pos, i, k);
    const size_t nvars = fn_.vars.size();
    auto checkVar = [&](int var) {
      if (var < 0 || static_cast<size_t>(var) >= nvars)
        fail(block, i,
             "variable index " + std::to_string(var) + " is out of range (" +
                 std::to_string(nvars) + " variables)");
    };
    switch (i->op()) {
    case Opcode::Arg: {
      int index = cast<ArgInstr>(i)->index;
      if (index < 0 || static_cast<size_t>(index) >= fn_.argNames.size())
        fail(block, i,
             "argument index " + std::to_string(index) + " is out of range (" +
                 std::to_string(fn_.argNames.size()) + " parameters)");
      break;
    }
    case Opcode::LoadLocal:
      checkVar(cast<LoadLocalInstr>(i)->var);
      break;
    case Opcode::StoreLocal:
      checkVar(cast<StoreLocalInstr>(i)->var);
      break;
    case Opcode::Call: {
      auto *c = cast<CallInstr>(i);
      if (c->numOperands() == 0)
        fail(block, i, "the call has no callee");
      if (c->kwNames.size() > c->numArgs())
        fail(block, i,
             std::to_string(c->kwNames.size()) + " keyword names for " +
                 std::to_string(c->numArgs()) + " arguments");
      if (c->starArgs && c->kwNames.size() >= c->numArgs())
        fail(block, i, "a call with *args has no argument tuple");
      break;
    }
    case Opcode::BuildTuple:
      if (cast<BuildTupleInstr>(i)->spread.size() > i->numOperands())
        fail(block, i,
             std::to_string(cast<BuildTupleInstr>(i)->spread.size()) + " spread flags for " +
                 std::to_string(i->numOperands()) + " operands");
      break;
    case Opcode::BuildSlice:
      if (i->numOperands() < 2 || i->numOperands() > 3)
        fail(block, i, "a slice has 2 or 3 parts, not " + std::to_string(i->numOperands()));
      break;
    case Opcode::TupleGet:
      if (cast<TupleGetInstr>(i)->index < 0)
        fail(block, i, "negative tuple index " + std::to_string(cast<TupleGetInstr>(i)->index));
      break;
    default:
      break;
    }
    if (typed())
      checkTypes(block, i);
  }

  void checkTypes(const Block *block, const Instr *i) {
    // Typing unpacks every `*` operand and lets no list display through.
    if (auto *c = dyn_cast<CallInstr>(i); c && c->starArgs)
      fail(block, i, "a call with *args is left after typing");
    if (auto *t = dyn_cast<BuildTupleInstr>(i); t && (t->hasSpread() || t->isList))
      fail(block, i,
           t->isList ? "a list display is left after typing" : "a *-operand is left after typing");
    if (producesValue(i->op())) {
      if (!i->type)
        fail(block, i, "the instruction has no type after typing");
    } else if (i->type && i->type->kind() != TypeKind::Void) {
      fail(block, i, "an instruction without a value has type " + i->type->str());
    }
    switch (i->op()) {
    case Opcode::Arg: {
      const Type *want = fn_.argTypes[cast<ArgInstr>(i)->index];
      if (i->type != want)
        fail(block, i, "has type " + i->type->str() + " but the parameter is " + want->str());
      break;
    }
    case Opcode::LoadLocal: {
      const Variable &v = fn_.vars[cast<LoadLocalInstr>(i)->var];
      if (v.type && i->type != v.type)
        fail(block, i,
             "has type " + i->type->str() + " but variable '" + v.printedName() + "' is " +
                 v.type->str());
      break;
    }
    case Opcode::StoreLocal: {
      const Variable &v = fn_.vars[cast<StoreLocalInstr>(i)->var];
      if (!v.type)
        fail(block, i, "stores to variable '" + v.printedName() + "', which has no type");
      break;
    }
    case Opcode::Branch: {
      const Instr *cond = i->operand(0);
      if (cond->type != types::boolean())
        fail(block, i,
             "the condition %" + std::to_string(cond->id) + " is " + typeName(cond->type) +
                 ", not bool");
      break;
    }
    case Opcode::Return:
      checkReturn(block, cast<ReturnInstr>(i));
      break;
    default:
      break;
    }
  }

  void checkReturn(const Block *block, const ReturnInstr *r) {
    const Type *ret = fn_.returnType;
    const Instr *v = r->value();
    const Type *t = v ? v->type : nullptr;
    if (v && !t)
      return; // the value's own check reports its missing type
    bool returnsNone = !v || t->kind() == TypeKind::None || t->kind() == TypeKind::Void;
    if (!v) {
      if (ret->kind() != TypeKind::Void)
        fail(block, r, "returns nothing from a function that returns " + ret->str());
      return;
    }
    if (ret->kind() == TypeKind::Void) {
      if (!returnsNone)
        fail(block, r,
             "returns %" + std::to_string(v->id) + " of type " + t->str() +
                 " from a function that returns void");
      return;
    }
    if (returnsNone)
      fail(block, r, "returns " + t->str() + " from a function that returns " + ret->str());
    bool declaredCast = fn_.returnTypeDeclared && t->isScalarNumber() && ret->isScalarNumber();
    if (!declaredCast && !fitsReturnType(t, ret))
      fail(block, r,
           "returns %" + std::to_string(v->id) + " of type " + t->str() +
               ", which does not fit the return type " + ret->str());
  }

  const Function &fn_;
  std::unordered_map<const Block *, size_t> blockIndex_;
  /// Each instruction's (block index, position in the block).
  std::unordered_map<const Instr *, std::pair<size_t, size_t>> position_;
  std::optional<BlockDominators> dom_;
};

} // namespace

void verify(const Function &fn) { Verifier(fn).run(); }

void verifyInDebug(const Function &fn) {
#ifndef NDEBUG
  verify(fn);
#else
  // Read at every call (cheap next to compiling) so that tests and users can switch it on
  // for one compile without restarting the process.
  const char *e = std::getenv("PTXJIT_VERIFY_IR");
  if (e && std::string(e) == "1")
    verify(fn);
#endif
}

} // namespace ptxjit::ir
