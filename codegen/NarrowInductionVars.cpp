// 32-bit counters for innermost loops on NVPTX (see NarrowInductionVars.h).
//
// Why the bounds are what they are. Let the loop count upward (Step >= 1) and continue while
// X < Bound (or <=), the exit test running once per iteration in a block that dominates the
// latch, so a new P is only made after a passed test:
//   X = P:    P <= max(Start, Bound + Step), and Next = P + Step <= Bound + 2 * Step;
//   X = Next: P <= max(Start, Bound),        and Next <= max(Start, Bound) + Step;
// and P >= Start, Next >= Start + Step (no i64 wrap-around happens below these bounds). With
// Start, Bound in [-2^30, 2^30 - 1] and Step in [1, 2^29] every value is in
// [-2^30, 2^31 - 1]: the i32 loop computes exactly the i64 loop's values, so `add nsw` holds
// and a signed (or equality) compare of the truncated values equals the i64 compare. Counting
// downward is the mirror image (down to -2^31). For eq/ne (Step = +1 or -1) the loop must
// start on Bound's near side (Start <= Bound for X = P, Start < Bound for X = Next, counting
// up), else the i64 loop would run through the whole i64 range; that is one more condition.
#include "codegen/NarrowInductionVars.h"

#include <llvm/ADT/SetVector.h>
#include <llvm/Analysis/AssumptionCache.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/ConstantRange.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Metadata.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/LoopSimplify.h>
#include <llvm/Transforms/Utils/LoopUtils.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <optional>

namespace ptxjit::codegen::detail {
namespace {

using namespace llvm;

constexpr int64_t kValueMin = -(int64_t(1) << 30);    // Start and Bound: [-2^30, 2^30 - 1]
constexpr int64_t kValueMax = (int64_t(1) << 30) - 1; //
constexpr int64_t kStepMax = int64_t(1) << 29;        // Step: [1, 2^29] or [-2^29, -1]
/// At most this many loops are transformed per function (each transformation removes a
/// candidate, so this only bounds pathological inputs).
constexpr unsigned kMaxTransformations = 64;

/// A condition the guard checks at run time: `value` in [lo, hi] (only the sides flagged), or
/// `lhs pred rhs`.
struct RuntimeCondition {
  Value *value = nullptr;
  int64_t lo = 0, hi = 0;
  bool checkLo = false, checkHi = false;
  CmpInst::Predicate pred = CmpInst::BAD_ICMP_PREDICATE;
  Value *lhs = nullptr, *rhs = nullptr;
};

/// A loop whose i64 counter `phi` can be narrowed once `runtime` holds (in place when empty).
struct Candidate {
  Loop *loop = nullptr;
  PHINode *phi = nullptr;
  BinaryOperator *next = nullptr;
  ICmpInst *cmp = nullptr;
  Value *start = nullptr, *step = nullptr, *bound = nullptr;
  SmallVector<RuntimeCondition, 4> runtime;
};

bool isMarked(const Loop &l) {
  SmallVector<BasicBlock *, 4> latches;
  l.getLoopLatches(latches);
  for (BasicBlock *b : latches)
    if (b->getTerminator()->getMetadata(kNarrowIVMarker))
      return true;
  return false;
}

void mark(BasicBlock *latch, const char *what) {
  LLVMContext &ctx = latch->getContext();
  latch->getTerminator()->setMetadata(kNarrowIVMarker,
                                      MDNode::get(ctx, {MDString::get(ctx, what)}));
}

bool isSmall(const Loop &l) {
  unsigned n = 0;
  for (BasicBlock *b : l.blocks())
    n += b->size();
  return n <= kNarrowIVMaxLoopInstructions;
}

bool hasWideHeaderPhi(const Loop &l) {
  for (PHINode &p : l.getHeader()->phis())
    if (p.getType()->isIntegerTy(64))
      return true;
  return false;
}

/// Whether the loop's blocks may be duplicated behind a guard that need not be uniform across
/// the threads of a warp: not with convergent operations (barriers, warp shuffles and votes
/// must not be split between two copies), non-duplicable calls or tokens.
bool canDuplicate(const Loop &l) {
  for (BasicBlock *b : l.blocks())
    for (Instruction &i : *b) {
      if (i.getType()->isTokenTy())
        return false;
      if (auto *cb = dyn_cast<CallBase>(&i); cb && (cb->isConvergent() || cb->cannotDuplicate()))
        return false;
    }
  return true;
}

/// Worth a look: innermost, small, not made by this pass, with an i64 header PHI.
bool mayBeCandidate(const Loop &l) {
  return l.isInnermost() && !isMarked(l) && isSmall(l) && hasWideHeaderPhi(l);
}

class Analyzer {
public:
  Analyzer(DominatorTree &dt, ScalarEvolution &se, AssumptionCache &ac)
      : dt_(dt), se_(se), ac_(ac) {}

  std::optional<Candidate> analyze(Loop *l) {
    if (!mayBeCandidate(*l) || !l->isLoopSimplifyForm())
      return std::nullopt;
    BasicBlock *preheader = l->getLoopPreheader(), *latch = l->getLoopLatch();
    SmallVector<BasicBlock *, 4> exiting;
    l->getExitingBlocks(exiting);
    for (PHINode &phi : l->getHeader()->phis()) {
      if (!phi.getType()->isIntegerTy(64))
        continue;
      auto *next = dyn_cast<BinaryOperator>(phi.getIncomingValueForBlock(latch));
      if (!next || next->getOpcode() != Instruction::Add || !l->contains(next))
        continue;
      Value *step = next->getOperand(0) == &phi   ? next->getOperand(1)
                    : next->getOperand(1) == &phi ? next->getOperand(0)
                                                  : nullptr;
      if (!step || step == &phi || !l->isLoopInvariant(step))
        continue;
      for (BasicBlock *b : exiting)
        if (std::optional<Candidate> c = matchExit(l, phi, next, step, b, latch, preheader))
          return c;
    }
    return std::nullopt;
  }

private:
  std::optional<Candidate> matchExit(Loop *l, PHINode &phi, BinaryOperator *next, Value *step,
                                     BasicBlock *exitingBlock, BasicBlock *latch,
                                     BasicBlock *preheader) {
    // The test must run in every iteration that goes on to the latch.
    if (!dt_.dominates(exitingBlock, latch))
      return std::nullopt;
    auto *br = dyn_cast<BranchInst>(exitingBlock->getTerminator());
    if (!br || !br->isConditional())
      return std::nullopt;
    auto *cmp = dyn_cast<ICmpInst>(br->getCondition());
    if (!cmp)
      return std::nullopt;
    bool exitOnTrue = !l->contains(br->getSuccessor(0));
    if (exitOnTrue == !l->contains(br->getSuccessor(1)))
      return std::nullopt; // both successors leave, or both stay
    Value *x = cmp->getOperand(0), *bound = cmp->getOperand(1);
    CmpInst::Predicate pred = cmp->getPredicate();
    if (bound == &phi || bound == next) {
      std::swap(x, bound);
      pred = CmpInst::getSwappedPredicate(pred);
    }
    if ((x != &phi && x != next) || bound == &phi || bound == next || !l->isLoopInvariant(bound))
      return std::nullopt;
    bool onNext = x == next;
    // The predicate under which the loop goes on, as `X cont Bound`.
    CmpInst::Predicate cont = exitOnTrue ? CmpInst::getInversePredicate(pred) : pred;
    int dir = 0; // +1 counting up, -1 counting down
    switch (cont) {
    case CmpInst::ICMP_SLT:
    case CmpInst::ICMP_SLE:
      dir = 1;
      break;
    case CmpInst::ICMP_SGT:
    case CmpInst::ICMP_SGE:
      dir = -1;
      break;
    case CmpInst::ICMP_NE: {
      // Exits exactly on reaching Bound: only a step of +-1 cannot jump over it.
      auto *c = dyn_cast<ConstantInt>(step);
      if (!c || !(c->isOne() || c->isMinusOne()))
        return std::nullopt;
      dir = c->isOne() ? 1 : -1;
      break;
    }
    default:
      return std::nullopt; // unsigned compares, or going on only while X == Bound
    }
    Candidate c;
    c.loop = l;
    c.phi = &phi;
    c.next = next;
    c.cmp = cmp;
    c.start = phi.getIncomingValueForBlock(preheader);
    c.step = step;
    c.bound = bound;
    // Step's sign must be proven (a step that may be 0 or point away from Bound is rejected);
    // its magnitude may be checked at run time.
    bool ok = dir > 0 ? requireRange(c, step, 1, kStepMax, /*loMustBeProven=*/true,
                                     /*hiMustBeProven=*/false)
                      : requireRange(c, step, -kStepMax, -1, false, true);
    ok = ok && requireRange(c, c.start, kValueMin, kValueMax, false, false) &&
         requireRange(c, bound, kValueMin, kValueMax, false, false);
    if (ok && cont == CmpInst::ICMP_NE) {
      CmpInst::Predicate order = dir > 0 ? (onNext ? CmpInst::ICMP_SLT : CmpInst::ICMP_SLE)
                                         : (onNext ? CmpInst::ICMP_SGT : CmpInst::ICMP_SGE);
      ok = requireOrder(c, order, c.start, bound);
    }
    if (!ok || (!c.runtime.empty() && !canDuplicate(*l)))
      return std::nullopt;
    return c;
  }

  /// What is known of v's signed range on entry to the loop.
  ConstantRange signedRange(Loop *l, Value *v) {
    ConstantRange r = se_.getSignedRange(se_.getSCEV(v));
    ConstantRange vt = computeConstantRange(v, /*ForSigned=*/true, /*UseInstrInfo=*/true, &ac_,
                                            l->getLoopPreheader()->getTerminator(), &dt_);
    return r.intersectWith(vt, ConstantRange::Signed);
  }

  bool entryGuarded(Loop *l, CmpInst::Predicate pred, Value *lhs, const SCEV *rhs) {
    return se_.isLoopEntryGuardedByCond(l, pred, se_.getSCEV(lhs), rhs);
  }

  /// Records that v must lie in [lo, hi]: false when that is known never to hold, or when a
  /// side flagged must-be-proven is not proven; unproven sides go to c.runtime.
  bool requireRange(Candidate &c, Value *v, int64_t lo, int64_t hi, bool loMustBeProven,
                    bool hiMustBeProven) {
    ConstantRange r = signedRange(c.loop, v);
    APInt apLo(64, lo, /*isSigned=*/true), apHi(64, hi, /*isSigned=*/true);
    if (r.getSignedMax().slt(apLo) || r.getSignedMin().sgt(apHi))
      return false;
    bool needLo = r.getSignedMin().slt(apLo) &&
                  !entryGuarded(c.loop, CmpInst::ICMP_SGE, v, se_.getConstant(apLo));
    bool needHi = r.getSignedMax().sgt(apHi) &&
                  !entryGuarded(c.loop, CmpInst::ICMP_SLE, v, se_.getConstant(apHi));
    if ((needLo && loMustBeProven) || (needHi && hiMustBeProven))
      return false;
    if (needLo || needHi) {
      RuntimeCondition rc;
      rc.value = v;
      rc.lo = lo;
      rc.hi = hi;
      rc.checkLo = needLo;
      rc.checkHi = needHi;
      c.runtime.push_back(rc);
    }
    return true;
  }

  /// Records that `lhs pred rhs` must hold: false when it is known not to.
  bool requireOrder(Candidate &c, CmpInst::Predicate pred, Value *lhs, Value *rhs) {
    const SCEV *a = se_.getSCEV(lhs), *b = se_.getSCEV(rhs);
    if (se_.isKnownPredicate(pred, a, b) || se_.isLoopEntryGuardedByCond(c.loop, pred, a, b))
      return true;
    if (se_.isKnownPredicate(CmpInst::getInversePredicate(pred), a, b))
      return false;
    RuntimeCondition rc;
    rc.pred = pred;
    rc.lhs = lhs;
    rc.rhs = rhs;
    c.runtime.push_back(rc);
    return true;
  }

  DominatorTree &dt_;
  ScalarEvolution &se_;
  AssumptionCache &ac_;
};

/// The guard's condition (`niv.guard`), built at `b`'s insertion point.
Value *emitGuard(IRBuilder<> &b, ArrayRef<RuntimeCondition> conditions) {
  SmallVector<Value *, 4> oks;
  for (const RuntimeCondition &rc : conditions) {
    if (!rc.value) {
      oks.push_back(b.CreateICmp(rc.pred, rc.lhs, rc.rhs, "niv.order"));
      continue;
    }
    Type *t = rc.value->getType();
    if (rc.checkLo && rc.checkHi) {
      // lo <= v <= hi as one unsigned compare: (v - lo) <=u (hi - lo).
      Value *offset = b.CreateSub(rc.value, ConstantInt::get(t, rc.lo, true), "niv.offset");
      oks.push_back(b.CreateICmpULE(offset, ConstantInt::get(t, rc.hi - rc.lo), "niv.inrange"));
    } else if (rc.checkLo) {
      oks.push_back(b.CreateICmpSGE(rc.value, ConstantInt::get(t, rc.lo, true), "niv.inrange"));
    } else {
      oks.push_back(b.CreateICmpSLE(rc.value, ConstantInt::get(t, rc.hi, true), "niv.inrange"));
    }
  }
  Value *all = oks.front();
  for (size_t k = 1; k < oks.size(); ++k)
    all = b.CreateAnd(all, oks[k], k + 1 == oks.size() ? "niv.guard" : "niv.both");
  return all;
}

/// Rewrites the PHIs outside loop `l` that take P or Next from a block of the loop (the LCSSA
/// PHIs of its exits; `wideNarrow` pairs P with P32 and Next with Next32) so that the i32 value
/// leaves the loop and is sign-extended after it:
///   %v.i32 = phi i32 [P32 or Next32 on those edges], [0 elsewhere]
///   %v     = phi i64 [0 on those edges], [the old value elsewhere]
///   %v.value = add i64 %v, (sext i32 %v.i32 to i64)
/// Why not just a sext on the exit edge: NVPTX's LoopStrengthReduce (llc pipeline) follows the
/// counter through casts outside the loop and, seeing an i64 use of it, replaces the i32
/// counter by an i64 one serving both (NVPTX reports i64 -> i32 truncation as free), undoing
/// the narrowing. It stops at PHIs outside the loop, and a PHI whose incoming values differ
/// survives InstCombine and GVN (behind a guard, the wide copy's exit edges supply the zeros).
void extendAfterLoop(Loop *l, ArrayRef<std::pair<Instruction *, Instruction *>> wideNarrow) {
  SmallSetVector<PHINode *, 8> phis;
  for (auto [wide, narrow] : wideNarrow)
    for (User *u : wide->users())
      if (auto *pn = dyn_cast<PHINode>(u); pn && !l->contains(pn))
        phis.insert(pn);
  for (PHINode *pn : phis) {
    BasicBlock *exit = pn->getParent();
    unsigned n = pn->getNumIncomingValues();
    auto *i32 = Type::getInt32Ty(pn->getContext());
    std::string name = pn->getName().str();
    PHINode *v32 = PHINode::Create(i32, n, name + ".i32", exit->begin());
    bool any = false;
    for (unsigned i = 0; i < n; ++i) {
      BasicBlock *b = pn->getIncomingBlock(i);
      Value *narrow = nullptr;
      if (l->contains(b))
        for (auto [w, nw] : wideNarrow)
          if (pn->getIncomingValue(i) == w)
            narrow = nw;
      v32->addIncoming(narrow ? narrow : ConstantInt::get(i32, 0), b);
      if (narrow) {
        pn->setIncomingValue(i, ConstantInt::get(pn->getType(), 0));
        any = true;
      }
    }
    if (!any) { // P reaches this PHI from outside the loop: left to the sext in the loop
      v32->eraseFromParent();
      continue;
    }
    IRBuilder<> b(exit, exit->getFirstInsertionPt());
    Value *ext = b.CreateSExt(v32, pn->getType(), name + ".sext");
    Value *sum = b.CreateAdd(pn, ext, name + ".value");
    pn->replaceUsesWithIf(sum, [&](Use &u) { return u.getUser() != sum; });
  }
}

/// Rewrites c's loop to count in i32 (c.loop must have a preheader and one latch, and should
/// be in LCSSA form: uses after the loop then get the i32 value, sign-extended after the loop).
void narrowInPlace(Candidate &c) {
  Loop *l = c.loop;
  BasicBlock *preheader = l->getLoopPreheader(), *latch = l->getLoopLatch();
  BasicBlock *header = l->getHeader();
  Type *i32 = Type::getInt32Ty(header->getContext());
  Type *i64 = c.phi->getType();
  std::string name = c.phi->getName().str();

  IRBuilder<> pb(preheader->getTerminator());
  Value *start32 = pb.CreateTrunc(c.start, i32, name + ".start32");
  Value *step32 = pb.CreateTrunc(c.step, i32, name + ".step32");
  Value *bound32 = pb.CreateTrunc(c.bound, i32, name + ".bound32");

  PHINode *p32 = PHINode::Create(i32, 2, name + ".i32", c.phi->getIterator());
  std::string nextName = c.next->hasName() ? c.next->getName().str() : name + ".next";
  auto *next32 = BinaryOperator::Create(Instruction::Add, p32, step32, nextName + ".i32",
                                        c.next->getIterator());
  next32->setHasNoSignedWrap(true);
  p32->addIncoming(start32, preheader);
  p32->addIncoming(next32, latch);

  auto narrowOperand = [&](Value *v) -> Value * {
    return v == c.phi ? p32 : v == c.next ? static_cast<Value *>(next32) : bound32;
  };
  auto *cmp32 =
      new ICmpInst(c.cmp->getIterator(), c.cmp->getPredicate(), narrowOperand(c.cmp->getOperand(0)),
                   narrowOperand(c.cmp->getOperand(1)), c.cmp->getName() + ".i32");
  c.cmp->replaceAllUsesWith(cmp32);
  c.cmp->eraseFromParent();

  extendAfterLoop(l, {{c.phi, p32}, {c.next, next32}});
  // Every other use (the latch PHI entry of P aside) sees the same value, sign-extended.
  c.phi->removeIncomingValue(latch, /*DeletePHIIfEmpty=*/false);
  if (!c.next->use_empty())
    c.next->replaceAllUsesWith(
        new SExtInst(next32, i64, nextName + ".sext", std::next(next32->getIterator())));
  c.next->eraseFromParent();
  if (!c.phi->use_empty())
    c.phi->replaceAllUsesWith(
        new SExtInst(p32, i64, name + ".sext", header->getFirstInsertionPt()));
  c.phi->eraseFromParent();
  // The loop terminates (the counter moves by |Step| >= 1 toward Bound without wrapping, the
  // exit test runs in every iteration). LLVM does not assume it of a loop whose step is a
  // run-time value (a grid-stride loop's `cuda.gridsize(1)` may be 0 as far as it knows), and
  // without it ScalarEvolution cannot count such a loop's iterations, which runtime unrolling
  // needs (GpuUnroll.h).
  l->setLoopMustProgress();
}

/// Versions c's loop (simplified, LCSSA form) on the guard: the original loop, to be narrowed,
/// runs when c.runtime holds, a copy marked "wide" otherwise. Keeps li valid for the original
/// loop (c.loop's preheader becomes a new block behind the guard); dt is stale after (the exits
/// gain predecessors) and is rebuilt by the caller.
void version(Candidate &c, DominatorTree &dt, LoopInfo &li) {
  Loop *l = c.loop;
  BasicBlock *guardBlock = l->getLoopPreheader(), *header = l->getHeader();
  BasicBlock *latch = l->getLoopLatch();
  SmallVector<BasicBlock *, 4> exits;
  l->getUniqueExitBlocks(exits);

  BasicBlock *narrowPreheader = SplitBlock(guardBlock, guardBlock->getTerminator(), &dt, &li,
                                           nullptr, header->getName() + ".narrow.ph");
  // Lay the copy out after the original loop's blocks.
  BasicBlock *last = header;
  for (BasicBlock &b : *header->getParent())
    if (l->contains(&b))
      last = &b;
  BasicBlock *before = last->getNextNode() ? last->getNextNode() : narrowPreheader;
  ValueToValueMapTy vmap;
  SmallVector<BasicBlock *, 16> cloned;
  Loop *wide = cloneLoopWithPreheader(before, guardBlock, l, vmap, ".wide", &li, &dt, cloned);
  remapInstructionsInBlocks(cloned, vmap);
  BasicBlock *widePreheader = wide->getLoopPreheader();

  // The exits are dedicated: every incoming block of their PHIs is in the loop.
  for (BasicBlock *exit : exits)
    for (PHINode &pn : exit->phis()) {
      unsigned n = pn.getNumIncomingValues();
      for (unsigned i = 0; i < n; ++i) {
        BasicBlock *from = pn.getIncomingBlock(i);
        if (!l->contains(from))
          continue;
        Value *v = pn.getIncomingValue(i);
        Value *mapped = vmap.lookup(v);
        pn.addIncoming(mapped ? mapped : v, cast<BasicBlock>(vmap[from]));
      }
    }

  Instruction *oldBranch = guardBlock->getTerminator();
  IRBuilder<> b(oldBranch);
  Value *guard = emitGuard(b, c.runtime);
  b.CreateCondBr(guard, narrowPreheader, widePreheader);
  oldBranch->eraseFromParent();

  mark(cast<BasicBlock>(vmap[latch]), "wide");
  mark(latch, "narrowed");
}

} // namespace

bool isNarrowIVWideCopy(const Loop &l) {
  const BasicBlock *latch = l.getLoopLatch();
  const MDNode *md = latch ? latch->getTerminator()->getMetadata(kNarrowIVMarker) : nullptr;
  const auto *what = md && md->getNumOperands() ? dyn_cast<MDString>(md->getOperand(0)) : nullptr;
  return what && what->getString() == "wide";
}

bool narrowInductionVariables(Function &f, FunctionAnalysisManager &fam) {
  if (f.isDeclaration())
    return false;
  bool changed = false;
  for (unsigned round = 0; round < kMaxTransformations; ++round) {
    // The analyses come from `fam`: what an earlier pass left there is reused, and what this
    // round computes is left to the passes after it (the unroll count's and the loop rotation's
    // ScalarEvolution) unless a transformation follows.
    LoopInfo &li = fam.getResult<LoopAnalysis>(f);
    if (llvm::none_of(li.getLoopsInPreorder(), [](Loop *l) { return mayBeCandidate(*l); }))
      break; // no ScalarEvolution for a function without a candidate
    DominatorTree &dt = fam.getResult<DominatorTreeAnalysis>(f);
    AssumptionCache &ac = fam.getResult<AssumptionAnalysis>(f);
    ScalarEvolution &se = fam.getResult<ScalarEvolutionAnalysis>(f);
    // As LoopSimplifyPass: the dominator tree, loop info and ScalarEvolution stay valid.
    for (Loop *l : li.getLoopsInPreorder())
      if (mayBeCandidate(*l) && !l->isLoopSimplifyForm())
        changed |= simplifyLoop(l, &dt, &li, &se, &ac, nullptr, /*PreserveLCSSA=*/false);
    Analyzer analyzer(dt, se, ac);
    std::optional<Candidate> c;
    for (Loop *l : li.getLoopsInPreorder())
      if ((c = analyzer.analyze(l)))
        break;
    if (!c)
      break;
    formLCSSARecursively(*c->loop, dt, &li, nullptr);
    if (!c->runtime.empty())
      version(*c, dt, li);
    narrowInPlace(*c);
    changed = true;
    // The transformation keeps no analysis up to date (dt is stale after version): the next
    // round computes them afresh.
    fam.invalidate(f, PreservedAnalyses::none());
  }
  return changed;
}

PreservedAnalyses NarrowInductionVarsPass::run(Function &f, FunctionAnalysisManager &fam) {
  if (!narrowInductionVariables(f, fam))
    return PreservedAnalyses::all();
  // Everything cached for `f` was computed after the last transformation, or kept valid by
  // simplifyLoop since: the analyses the rounds use are those of `f` as it is now.
  PreservedAnalyses pa;
  pa.preserve<DominatorTreeAnalysis>();
  pa.preserve<LoopAnalysis>();
  pa.preserve<AssumptionAnalysis>();
  pa.preserve<ScalarEvolutionAnalysis>();
  return pa;
}

bool markWideCopiesNoUnroll(LoopInfo &li) {
  bool changed = false;
  for (Loop *l : li.getLoopsInPreorder())
    if (isNarrowIVWideCopy(*l) && hasUnrollTransformation(l) == TM_Unspecified) {
      l->setLoopAlreadyUnrolled();
      changed = true;
    }
  return changed;
}

PreservedAnalyses MarkWideCopiesNoUnrollPass::run(Function &f, FunctionAnalysisManager &fam) {
  if (!markWideCopiesNoUnroll(fam.getResult<LoopAnalysis>(f)))
    return PreservedAnalyses::all();
  // Only loop metadata changed.
  PreservedAnalyses pa;
  pa.preserveSet<CFGAnalyses>();
  return pa;
}

} // namespace ptxjit::codegen::detail
