// Type inference driver: unification of variables (through ir::promote, ir/Conversions.h) and
// the fixpoint over all blocks. The rules for each instruction live in the other Typing*.cpp
// files (see TypingInternal.h).
#include "ir/LoopUnroll.h"
#include "ir/NamedTuples.h"
#include "ir/SplitVariables.h"
#include "ir/typing/TypingInternal.h"

namespace ptxjit::ir {

namespace typing_detail {

const Type *unifyTypes(const Type *a, const Type *b) {
  if (!a)
    return b;
  if (!b || a == b)
    return a;
  if (isDatetimeLike(a) || isDatetimeLike(b))
    return unifyDatetimes(a, b);
  // An IntEnum member next to another number (or another class's member) is its int value.
  if (a->kind() == TypeKind::EnumMember || b->kind() == TypeKind::EnumMember) {
    const Type *x = intEnumAsInt(a), *y = intEnumAsInt(b);
    if (x == a && y == b)
      return nullptr;
    return unifyTypes(x, y);
  }
  if (a->isScalarNumber() && b->isScalarNumber())
    return promote(a, b);
  if (auto *x = dyn_cast<ArrayType>(a)) {
    auto *y = dyn_cast<ArrayType>(b);
    if (!y || x->dtype() != y->dtype() || x->ndim() != y->ndim())
      return nullptr;
    Layout l = x->layout() == y->layout() ? x->layout() : Layout::A;
    return types::array(x->dtype(), x->ndim(), l, x->readonly() || y->readonly());
  }
  if (auto *x = dyn_cast<RecordType>(a)) { // a read-only and a writable record: read-only
    auto *y = dyn_cast<RecordType>(b);
    if (!y || x->writable() != y->writable())
      return nullptr;
    return types::readonlyRecord(x);
  }
  if (auto *x = dyn_cast<TupleType>(a)) {
    auto *y = dyn_cast<TupleType>(b);
    if (!y || x->size() != y->size())
      return nullptr;
    std::vector<const Type *> elems;
    for (size_t k = 0; k < x->size(); ++k) {
      const Type *e = unifyTypes(x->elements()[k], y->elements()[k]);
      if (!e)
        return nullptr;
      elems.push_back(e);
    }
    // Named tuples (ir/NamedTuples.h) keep their names when both sides have the same ones.
    const NamedTupleNames *nx = namedTupleNames(x), *ny = namedTupleNames(y);
    if (nx && ny && nx->className == ny->className && nx->fields == ny->fields)
      return types::namedTuple(nx->className, nx->fields, elems);
    return types::tuple(elems);
  }
  return nullptr;
}

std::string typeListStr(const std::vector<const Type *> &ts) {
  std::string s;
  for (size_t k = 0; k < ts.size(); ++k) {
    if (k)
      s += ", ";
    s += ts[k] ? ts[k]->str() : "?";
  }
  return s;
}

bool isIntLike(const Type *t) {
  return t->kind() == TypeKind::Int || t->kind() == TypeKind::WeakInt;
}
bool isIntOrBool(const Type *t) { return isIntLike(t) || t->kind() == TypeKind::Bool; }
bool isComplexLike(const Type *t) {
  return t->kind() == TypeKind::Complex || t->kind() == TypeKind::WeakComplex;
}
bool isRealNumber(const Type *t) { return t->isScalarNumber() && !isComplexLike(t); }

Typer::Typer(Function &fn, const std::vector<const Type *> &argTypes, CallResolver *resolver)
    : fn_(fn), argTypes_(argTypes), resolver_(resolver) {}

void Typer::fail(DiagCode code, const Instr *at, std::initializer_list<std::string> args,
                 const std::string &hint) {
  throw CompileError(code, formatDiag(code, args) + hint, fn_.filename,
                     at ? at->loc : SourceLoc{fn_.firstLine, 0, 0, 0});
}

void Typer::run() {
  SourceLoc fnLoc{fn_.firstLine, 0, 0, 0};
  if (argTypes_.size() != fn_.argNames.size())
    raiseDiag(DiagCode::ArgumentCount, fn_.filename, fnLoc,
              {fn_.name, std::to_string(fn_.argNames.size()), std::to_string(argTypes_.size())});
  for (const Type *t : argTypes_)
    if (!t)
      raiseDiag(DiagCode::Internal, fn_.filename, fnLoc, {"null argument type for " + fn_.name});
  if (fn_.blocks.empty())
    raiseDiag(DiagCode::Internal, fn_.filename, fnLoc, {"function " + fn_.name + " has no blocks"});
  if (fn_.vars.size() < fn_.argNames.size())
    raiseDiag(DiagCode::Internal, fn_.filename, fnLoc,
              {"function " + fn_.name + " lacks variables for its parameters"});

  // Start from scratch even if `fn` was typed before (stale types would leak into pass 1).
  for (auto &b : fn_.blocks)
    for (auto &ip : b->instrs) {
      ip->type = nullptr;
      ip->builtin = BuiltinId::None;
      if (auto *c = dyn_cast<CallInstr>(ip.get()))
        c->calleeFunction = nullptr;
    }
  // An int constant a caller passed (Numba's IntegerLiteral, types::intLiteral) is a weak int
  // variable, as the literal is in the caller (NEP 50: `n % 8` with a uint64 stays uint64); its
  // value stays in fn.argTypes for constantIntsType (cuda.shared.array(n, ...)).
  std::vector<const Type *> params(argTypes_.size());
  for (size_t k = 0; k < argTypes_.size(); ++k)
    params[k] = replaceIntLiterals(argTypes_[k], types::weakInt());
  varTypes_.assign(fn_.vars.size(), nullptr);
  for (size_t k = 0; k < params.size(); ++k)
    varTypes_[k] = params[k];
  fn_.argTypes = argTypes_;
  // The provisional return type recursive calls get (see inferTypes): none before a pass, unless
  // the caller declared it.
  if (!fn_.returnTypeDeclared)
    fn_.returnType = nullptr;

  // Phase 0 lets literals stay weak while variables unify; then the variables still weak take
  // their default types and phase 1 retypes everything (widening again where a concrete
  // variable now meets another), so every use sees the final variable types.
  const int limit = 64 + 4 * static_cast<int>(fn_.vars.size());
  for (int phase = 0; phase < 2; ++phase) {
    int iter = 0;
    do {
      if (++iter > limit) {
        if (usedProvisional_) // the return type feeds back into itself through recursion
          raiseDiag(DiagCode::RecursiveReturn, fn_.filename, fnLoc,
                    {"the return type of '" + fn_.name + "' keeps changing through its " +
                     "recursive calls (last " +
                     (fn_.returnType ? fn_.returnType->str() : std::string("unknown")) + ")"});
        raiseDiag(DiagCode::Internal, fn_.filename, fnLoc,
                  {"type inference of " + fn_.name + " did not converge"});
      }
      changed_ = false;
      pass();
    } while (changed_);
    for (size_t k = 0; k < varTypes_.size(); ++k) {
      // A weak parameter (a Python float/complex launch argument) that no assignment widened
      // stays weak, so it combines with float32 values as a Python scalar does (NEP 50).
      if (k < params.size() && varTypes_[k] == params[k] &&
          (params[k]->isWeak() || hasIntLiteral(argTypes_[k])))
        continue;
      varTypes_[k] = concretize(varTypes_[k]);
    }
  }
  finalCheck();

  for (size_t k = 0; k < fn_.vars.size(); ++k) {
    fn_.vars[k].isArgument = k < fn_.argNames.size();
    fn_.vars[k].type = varTypes_[k] ? varTypes_[k] : types::void_();
  }
  fn_.argTypes = argTypes_;
  if (fn_.kind == FunctionKind::Kernel || !returnType_)
    fn_.returnType = types::void_();
  else
    fn_.returnType = concretize(returnType_);
}

bool Typer::pass() {
  returnType_ = nullptr;
  sawBareReturn_ = false;
  pendingCalls_.clear();
  for (auto &b : fn_.blocks) {
    // By index: unpacking `*t` inserts instructions before the current one.
    for (size_t k = 0; k < b->instrs.size(); ++k) {
      Instr *i = b->instrs[k].get();
      if (unpackStars(i))
        while (b->instrs[k].get() != i) // past the TupleGets inserted (typed already)
          ++k;
      const Type *t = typeInstr(i);
      if (t != i->type) {
        i->type = t;
        changed_ = true;
      }
    }
  }
  // The provisional return type for recursive calls: what this pass returned (the returns that
  // depend on a call still waiting for it are not typed yet: numba's partial inference). When
  // it changed and a call used it (or waits for it), the calls are typed again.
  if (!fn_.returnTypeDeclared && fn_.kind != FunctionKind::Kernel) {
    const Type *provisional = returnType_   ? concretize(returnType_)
                              : sawBareReturn_ ? types::void_()
                                               : nullptr;
    if (provisional != fn_.returnType) {
      fn_.returnType = provisional;
      if (usedProvisional_ || !pendingCalls_.empty())
        changed_ = true;
    }
  }
  return changed_;
}

void Typer::failReturnUnify(const Instr *at, const std::string &a, const std::string &b) {
  if (usedProvisional_)
    fail(DiagCode::RecursiveReturn, at,
         {"'" + fn_.name + "' returns " + a + " and " + b +
          ", which do not unify, once its recursive calls return the type its other returns "
          "give"});
  fail(DiagCode::CannotUnify, at, {"return value of " + fn_.name, a, b});
}

bool Typer::unpackStars(Instr *i) {
  auto *call = dyn_cast<CallInstr>(i);
  auto *tuple = dyn_cast<BuildTupleInstr>(i);
  if (!(call && call->starArgs) && !(tuple && tuple->hasSpread()))
    return false;
  // Last to first, so that the operand indexes still to visit stay valid.
  bool inserted = false;
  for (size_t k = i->numOperands(); k-- > 0;) {
    bool star = call ? k == 1 : tuple->isSpread(k);
    if (!star)
      continue;
    Instr *t = i->operand(k);
    if (!t->type)
      return inserted; // not typed yet: a later iteration unpacks it
    auto *tt = dyn_cast<TupleType>(t->type);
    if (!tt)
      fail(DiagCode::StarUnpack, t,
           {"a value of type " + t->type->str(),
            call ? "a call's arguments (f(*args))" : "a tuple or list display ((a, *t))"});
    std::vector<Instr *> elems;
    for (size_t e = 0; e < tt->size(); ++e) {
      auto get = std::make_unique<TupleGetInstr>(t, static_cast<int>(e));
      get->loc = t->loc;
      Instr *g = i->parent->insertBefore(i, std::move(get));
      g->type = typeTupleGet(cast<TupleGetInstr>(g));
      elems.push_back(g);
    }
    i->spliceOperand(k, elems);
    if (tuple) {
      auto at = tuple->spread.erase(tuple->spread.begin() + static_cast<std::ptrdiff_t>(k));
      tuple->spread.insert(at, elems.size(), false);
    }
    inserted = true;
  }
  if (call)
    call->starArgs = false;
  else if (!tuple->hasSpread())
    tuple->spread.clear();
  changed_ = true;
  return true;
}

void Typer::finalCheck() {
  // A recursive call still waiting for a return type: no return gives one without recursing.
  if (!pendingCalls_.empty())
    fail(DiagCode::RunawayRecursion, pendingCalls_.front(), {fn_.name});
  for (auto &b : fn_.blocks) {
    for (auto &ip : b->instrs) {
      Instr *i = ip.get();
      if (auto *ld = dyn_cast<LoadLocalInstr>(i); ld && !varTypes_[ld->var])
        fail(DiagCode::UnboundLocal, i, {fn_.vars[ld->var].name});
      if (!i->type)
        fail(DiagCode::Internal, i,
             {"instruction %" + std::to_string(i->id) + " (" + opcodeName(i->op()) + ") of " +
              fn_.name + " could not be typed"});
    }
  }
}

const Type *Typer::typeInstr(Instr *i) {
  for (Instr *o : i->operands()) {
    if (!o)
      fail(DiagCode::Internal, i, {std::string("missing operand of ") + opcodeName(i->op())});
    if (!o->type)
      return nullptr; // not typed yet: a later iteration of the fixpoint will get it
  }
  switch (i->op()) {
  case Opcode::Const:
    return typeConst(cast<ConstInstr>(i));
  case Opcode::Global:
    return typeGlobal(cast<GlobalInstr>(i));
  case Opcode::Arg: {
    int idx = cast<ArgInstr>(i)->index;
    if (idx < 0 || static_cast<size_t>(idx) >= argTypes_.size())
      fail(DiagCode::Internal, i, {"argument index " + std::to_string(idx) + " out of range"});
    return argTypes_[idx];
  }
  case Opcode::LoadLocal: {
    int v = cast<LoadLocalInstr>(i)->var;
    if (v < 0 || static_cast<size_t>(v) >= varTypes_.size())
      fail(DiagCode::Internal, i, {"variable index " + std::to_string(v) + " out of range"});
    return varTypes_[v];
  }
  case Opcode::StoreLocal:
    return typeStore(cast<StoreLocalInstr>(i));
  case Opcode::BinOp:
    return typeBinOp(cast<BinOpInstr>(i));
  case Opcode::UnaryOp:
    return typeUnaryOp(cast<UnaryOpInstr>(i));
  case Opcode::Compare:
    return typeCompare(cast<CompareInstr>(i));
  case Opcode::Truth:
    return typeTruth(i, i->operand(0)->type);
  case Opcode::GetAttr:
    return typeGetAttr(cast<GetAttrInstr>(i));
  case Opcode::GetItem:
    return typeGetItem(cast<GetItemInstr>(i));
  case Opcode::SetItem:
    return typeSetItem(cast<SetItemInstr>(i));
  case Opcode::SetAttr:
    return typeSetAttr(cast<SetAttrInstr>(i));
  case Opcode::Call:
    if (cast<CallInstr>(i)->starArgs)
      return nullptr; // waits for unpackStars
    return typeCall(cast<CallInstr>(i));
  case Opcode::BuildTuple: {
    if (cast<BuildTupleInstr>(i)->hasSpread())
      return nullptr; // waits for unpackStars
    if (cast<BuildTupleInstr>(i)->isList)
      return typeListDisplay(cast<BuildTupleInstr>(i));
    std::vector<const Type *> elems;
    for (Instr *o : i->operands())
      elems.push_back(concretize(o->type));
    return types::tuple(elems);
  }
  case Opcode::TupleGet:
    return typeTupleGet(cast<TupleGetInstr>(i));
  case Opcode::BuildSlice:
    return typeBuildSlice(cast<BuildSliceInstr>(i));
  case Opcode::GetIter:
    return typeGetIter(cast<GetIterInstr>(i));
  case Opcode::IterValid:
  case Opcode::IterNext:
    return typeIterOp(i);
  case Opcode::Jump:
    return types::void_();
  case Opcode::Branch:
    return typeBranch(cast<BranchInstr>(i));
  case Opcode::Return:
    return typeReturn(cast<ReturnInstr>(i));
  case Opcode::Raise: // what is raised was checked by the frontend: constants only
    return types::void_();
  }
  fail(DiagCode::Internal, i, {"unknown opcode"});
}

} // namespace typing_detail

void inferTypes(Function &fn, const std::vector<const Type *> &argTypes, CallResolver *resolver) {
  // A for loop over a tuple that must be unrolled is found while typing (its length and the
  // types of its elements are known then): unroll it and type the function again, until no
  // such loop is left. Each restart removes one loop; the copies it makes may hold more.
  size_t unrolled = 0;
  for (;;) {
    // Each web of a local its own variable (SplitVariables.h), again after each unrolling: the
    // copies of a loop's body assign their own webs.
    splitVariables(fn);
    try {
      typing_detail::Typer(fn, argTypes, resolver).run();
      return;
    } catch (const typing_detail::UnrollRequest &r) {
      unrollTupleLoop(fn, r.getIter, r.count);
      if (++unrolled > kMaxUnrolledLoops)
        raiseDiag(DiagCode::UnsupportedConstruct, fn.filename, r.getIter->loc,
                  {"unrolling more than " + std::to_string(kMaxUnrolledLoops) +
                   " loops over tuples in one function"});
    }
  }
}

} // namespace ptxjit::ir
