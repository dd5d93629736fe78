// Lowering core: the module, the kernel/device entry wrappers with the flattened-parameter
// ABI, function bodies, locals (entry-block allocas) and control flow.
#include "codegen/Lowering.h"

#include "codegen/KernelEntry.h"

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <cctype>

namespace ptxjit::codegen {

using namespace ir;
using detail::FunctionLowerer;
using detail::ModuleLowerer;

// ---- LoweredModule ----

LoweredModule::LoweredModule(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LoweredModule::LoweredModule(LoweredModule &&) noexcept = default;
LoweredModule &LoweredModule::operator=(LoweredModule &&) noexcept = default;
LoweredModule::~LoweredModule() {
  if (impl_) {
    // The pass manager that generated code for the module goes before the module, and the
    // module refers to the context: destroy it before the context.
    impl_->finishedCodegen.reset();
    impl_->module.reset();
    impl_->ctx.reset();
  }
}

std::string LoweredModule::llvmIR() const {
  if (!impl_ || !impl_->module)
    return {};
  std::string s;
  llvm::raw_string_ostream os(s);
  impl_->module->print(os, nullptr);
  os.flush();
  return s;
}

const std::string &LoweredModule::entrySymbol() const {
  static const std::string empty;
  return impl_ ? impl_->entry : empty;
}

Backend LoweredModule::backend() const { return impl_ ? impl_->backend : Backend::CUDA; }

bool LoweredModule::linkedLibdevice() const { return impl_ && impl_->libdeviceLinked; }

const std::vector<ir::LinkItem> &LoweredModule::links() const {
  static const std::vector<ir::LinkItem> none;
  return impl_ ? impl_->links : none;
}

const std::vector<ir::RaiseSite> &LoweredModule::raiseSites() const {
  static const std::vector<ir::RaiseSite> none;
  return impl_ ? impl_->raiseSites : none;
}

bool LoweredModule::gridSync() const { return impl_ && impl_->gridSync; }

namespace detail {

[[noreturn]] void internalError(const std::string &message) {
  raiseDiag(DiagCode::Internal, "", SourceLoc{}, {message});
}

namespace {

std::string sanitize(const std::string &s) {
  std::string out;
  for (char c : s)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (out.empty())
    out = "fn";
  return out;
}

/// Function attributes every function we emit gets.
void applyFunctionAttributes(llvm::Function *f, const CompileOptions &opts) {
  f->setDoesNotThrow();
  if (opts.fastmath) {
    // No "no-infs"/"no-nans": NaN and infinities keep IEEE's rules under fastmath (see the
    // instruction flags in FunctionLowerer).
    f->addFnAttr("unsafe-fp-math", "true");
    f->addFnAttr("no-signed-zeros-fp-math", "true");
    f->addFnAttr("approx-func-fp-math", "true");
    if (opts.backend == Backend::CUDA)
      f->addFnAttr("denormal-fp-math-f32", "preserve-sign,preserve-sign");
  }
}

} // namespace

// ---- ModuleLowerer ----

ModuleLowerer::ModuleLowerer(llvm::Module &m, const CompileOptions &o)
    : ctx(m.getContext()), mod(m), opts(o),
      math(m, o.backend, o.fastmath, o.ccMajor * 10 + o.ccMinor) {}

bool ModuleLowerer::isCompileTimeOnly(const Type *t) {
  switch (t->kind()) {
  case TypeKind::Void:
  case TypeKind::None:
  case TypeKind::Symbol:
  case TypeKind::Function:
  case TypeKind::Extern:
  case TypeKind::String:
  case TypeKind::Bytes:
  case TypeKind::Ellipsis:
  case TypeKind::StrLiteral:
  case TypeKind::EnumClass: // names its members; members are their values
  case TypeKind::List: // never reaches lowering: typing rejects a list wherever it is used
    return true;
  default:
    return false;
  }
}

llvm::StructType *ModuleLowerer::arrayType(int ndim) { return arrayValueType(ctx, ndim); }

llvm::Type *ModuleLowerer::memType(const ScalarType *t) { return memoryType(ctx, t); }

llvm::Type *ModuleLowerer::memType(const Type *t) {
  if (const auto *r = dyn_cast<RecordType>(t))
    return llvm::ArrayType::get(llvm::Type::getInt8Ty(ctx), static_cast<uint64_t>(r->size()));
  if (const auto *cs = dyn_cast<CharSeqType>(t)) // its code units: [n x i8] or [n x i32]
    return llvm::ArrayType::get(llvm::Type::getIntNTy(ctx, 8u * unsigned(cs->unitBytes())),
                                static_cast<uint64_t>(cs->count()));
  return memoryType(ctx, cast<ScalarType>(t));
}

llvm::Type *ModuleLowerer::reprType(const Type *t, const Function &fn, SourceLoc loc) {
  switch (t->kind()) {
  case TypeKind::Void:
  case TypeKind::None:
  case TypeKind::Symbol:
  case TypeKind::Function:
  case TypeKind::Extern:
  case TypeKind::String:
  case TypeKind::Bytes:
  case TypeKind::Ellipsis:
  case TypeKind::StrLiteral:
  case TypeKind::EnumClass:
  case TypeKind::List:
    return emptyType();
  case TypeKind::Bool:
  case TypeKind::Int:
  case TypeKind::Float:
  case TypeKind::Complex:
  case TypeKind::Datetime:
  case TypeKind::Timedelta:
    return registerType(ctx, cast<ScalarType>(t));
  case TypeKind::EnumMember: // its value
    return reprType(cast<EnumMemberType>(t)->dtype(), fn, loc);
  case TypeKind::WeakInt:
  case TypeKind::WeakFloat:
  case TypeKind::WeakComplex:
    return reprType(cast<WeakType>(t)->defaultType(), fn, loc);
  case TypeKind::Array:
    return arrayType(cast<ArrayType>(t)->ndim());
  case TypeKind::Tuple: {
    std::vector<llvm::Type *> elems;
    for (const Type *e : cast<TupleType>(t)->elements())
      elems.push_back(reprType(e, fn, loc));
    return llvm::StructType::get(ctx, elems);
  }
  case TypeKind::Range: {
    auto *i64 = llvm::Type::getInt64Ty(ctx);
    return llvm::StructType::get(ctx, {i64, i64, i64});
  }
  case TypeKind::Iterator:
  case TypeKind::Pointer: // a raw address (CPointer, voidptr)
  case TypeKind::Record:  // the address of the record's bytes (see RecordType)
    return llvm::PointerType::getUnqual(ctx);
  case TypeKind::NestedArray: // only a field's type: reading the field gives an array view
    break;
  case TypeKind::CharSeq: // an element read: its code units (see CharSeqType)
    return memType(t);
  case TypeKind::Slice: { // {start, stop, step}: see the file comment of Lowering.h
    auto *i64 = llvm::Type::getInt64Ty(ctx);
    return llvm::StructType::get(ctx, {i64, i64, i64});
  }
  }
  raiseDiag(DiagCode::UnsupportedConstruct, fn.filename, loc, {"a value of type " + t->str()});
}

bool ModuleLowerer::isZeroSized(llvm::Type *t) {
  if (auto *st = llvm::dyn_cast<llvm::StructType>(t)) {
    for (llvm::Type *e : st->elements())
      if (!isZeroSized(e))
        return false;
    return true;
  }
  if (auto *at = llvm::dyn_cast<llvm::ArrayType>(t))
    return at->getNumElements() == 0 || isZeroSized(at->getElementType());
  return false;
}

llvm::Type *ModuleLowerer::bodyReturnType(const Function &fn) {
  if (!fn.returnType || fn.kind == FunctionKind::Kernel ||
      fn.returnType->kind() == TypeKind::Void || fn.returnType->kind() == TypeKind::None)
    return llvm::Type::getVoidTy(ctx);
  llvm::Type *t = reprType(fn.returnType, fn, SourceLoc{fn.firstLine, 0, 0, 0});
  return isZeroSized(t) ? llvm::Type::getVoidTy(ctx) : t;
}

bool ModuleLowerer::passesParam(const Function &fn, size_t k) {
  return k >= fn.argTypes.size() || !fn.argTypes[k] ||
         !isZeroSized(reprType(fn.argTypes[k], fn, SourceLoc{fn.firstLine, 0, 0, 0}));
}

std::vector<llvm::Value *> ModuleLowerer::bodyArgs(const Function &fn,
                                                   const std::vector<llvm::Value *> &args) {
  std::vector<llvm::Value *> out;
  for (size_t k = 0; k < args.size(); ++k)
    if (passesParam(fn, k))
      out.push_back(args[k]);
  return out;
}

std::string ModuleLowerer::uniqueName(const std::string &base) {
  std::string name = sanitize(base);
  std::string candidate = name;
  for (int n = 1; names_.count(candidate) || mod.getNamedValue(candidate); ++n)
    candidate = name + "_" + std::to_string(n);
  names_.insert(candidate);
  return candidate;
}

llvm::Function *ModuleLowerer::bodyFor(const Function &fn) {
  auto it = bodies_.find(&fn);
  if (it != bodies_.end())
    return it->second;
  SourceLoc loc{fn.firstLine, 0, 0, 0};
  if (fn.blocks.empty())
    raiseDiag(DiagCode::Internal, fn.filename, loc, {"function '" + fn.name + "' has no blocks"});
  if (fn.argTypes.size() != fn.argNames.size())
    raiseDiag(DiagCode::Internal, fn.filename, loc,
              {"function '" + fn.name + "' is not typed (argument types missing)"});
  std::vector<llvm::Type *> params;
  std::vector<size_t> passed; // the parameters of fn that are LLVM parameters (passesParam)
  for (size_t k = 0; k < fn.argTypes.size(); ++k) {
    if (!fn.argTypes[k])
      raiseDiag(DiagCode::Internal, fn.filename, loc, {"untyped argument of " + fn.name});
    if (!passesParam(fn, k))
      continue;
    params.push_back(reprType(fn.argTypes[k], fn, loc));
    passed.push_back(k);
  }
  if (isHost())
    params.push_back(llvm::PointerType::getUnqual(ctx));
  auto *fty = llvm::FunctionType::get(bodyReturnType(fn), params, false);
  std::string base =
      "ptxjit_" + (fn.kind == FunctionKind::Kernel ? std::string("kernel_") : std::string("dev_")) +
      fn.name;
  auto *f = llvm::Function::Create(fty, llvm::GlobalValue::InternalLinkage, uniqueName(base), mod);
  applyFunctionAttributes(f, opts);
  if (fn.kind == FunctionKind::Device && fn.alwaysInline)
    f->addFnAttr(llvm::Attribute::AlwaysInline);
  subprogramFor(fn, f);
  for (size_t i = 0; i < passed.size(); ++i)
    if (passed[i] < fn.argNames.size())
      f->getArg(i)->setName(sanitize(fn.argNames[passed[i]]));
  if (isHost()) {
    llvm::Argument *ctxArg = f->getArg(params.size() - 1);
    ctxArg->setName("ctx");
    ctxArg->addAttr(llvm::Attribute::NoAlias);
    ctxArg->addAttr(llvm::Attribute::NoCapture);
    ctxArg->addAttr(llvm::Attribute::ReadOnly);
  }
  bodies_.emplace(&fn, f);
  queue_.push_back(&fn);
  return f;
}

void ModuleLowerer::lowerQueued() {
  while (!queue_.empty()) {
    const Function *fn = queue_.front();
    queue_.pop_front();
    FunctionLowerer(*this, *fn, bodies_.at(fn)).run();
  }
}

bool ModuleLowerer::splicesKernelBodies() const {
  // Debug information names the body's scope, which only inlining rewrites (subprogramFor).
  return opts.optLevel >= 1 && !emitsDebugInfo();
}

bool ModuleLowerer::spliceKernelBody(llvm::Function *entry, const Function &kernel) {
  auto it = bodies_.find(&kernel);
  if (!splicesKernelBodies() || it == bodies_.end())
    return false;
  llvm::Function *body = it->second;
  if (entry->getSubprogram() || body->getSubprogram() || body->isDeclaration() ||
      !body->hasOneUse() || !body->getReturnType()->isVoidTy() || entry->size() != 1)
    return false;
  auto *call = llvm::dyn_cast<llvm::CallInst>(*body->user_begin());
  if (!call || call->getCalledFunction() != body || call->getFunction() != entry)
    return false;
  auto *ret = llvm::dyn_cast_or_null<llvm::ReturnInst>(call->getNextNode());
  if (!ret || ret->getReturnValue())
    return false;
  for (llvm::Argument &a : body->args()) {
    a.replaceAllUsesWith(call->getArgOperand(a.getArgNo()));
    a.setName(""); // the entry's values that move through the body keep their names
  }
  // A field read from an aggregate built in place (a parameter the entry packed from its own
  // parameters, a complex number made in the body) is the value put there: the body reads
  // the entry's parameters themselves, as SROA and InstCombine would have it after the first
  // passes of O3, which are left less to do (saxpy's O3 work fell by 15%). Read in the blocks
  // that use them, as extractvalues, the fields made SimplifyCFG keep two branches of bench's
  // Jacobi step where it folds them into one (docs/performance.md, nineteenth session).
  for (llvm::BasicBlock &bb : *body)
    for (llvm::Instruction &i : llvm::make_early_inc_range(bb))
      if (auto *ev = llvm::dyn_cast<llvm::ExtractValueInst>(&i))
        if (llvm::Value *v = llvm::FindInsertedValue(ev->getAggregateOperand(), ev->getIndices())) {
          ev->replaceAllUsesWith(v);
          ev->eraseFromParent();
        }
  // Laid out much as the inliner lays out an inlined body: the body's allocas, the unpacking,
  // the rest of the body, and where the body returns from several places, one block returning,
  // which the others branch to. (The inliner clones blocks in depth-first order and runs after
  // the pipeline's first passes, so some kernels' block order differs from what it gave.)
  std::vector<llvm::ReturnInst *> rets;
  for (llvm::BasicBlock &bb : *body)
    if (auto *r = llvm::dyn_cast<llvm::ReturnInst>(bb.getTerminator()))
      rets.push_back(r);
  if (rets.size() > 1) {
    auto *exit = llvm::BasicBlock::Create(ctx, body->getName() + ".exit", body);
    llvm::ReturnInst::Create(ctx, exit);
    for (llvm::ReturnInst *r : rets) {
      llvm::BranchInst::Create(exit, r);
      r->eraseFromParent();
    }
  }
  llvm::BasicBlock &unpack = entry->getEntryBlock();
  llvm::BasicBlock &first = body->getEntryBlock();
  auto at = first.begin();
  while (at != first.end() && llvm::isa<llvm::AllocaInst>(*at))
    ++at;
  first.splice(at, &unpack, unpack.begin(), call->getIterator());
  unpack.eraseFromParent(); // the call and the return
  entry->splice(entry->end(), body);
  bodies_.erase(it);
  body->eraseFromParent();
  // The entry's array views, tuples and records that nothing reads any more. (Only the entry's:
  // those left unread in the body's blocks stay for O3 to delete, since SimplifyCFG, which
  // runs before, weighs a block by its instructions; deleting them here changed how it
  // folded the bounds tests of bench's transpose.)
  for (llvm::Instruction &i : llvm::make_early_inc_range(llvm::reverse(entry->getEntryBlock())))
    if (llvm::isa<llvm::InsertValueInst>(i) && i.use_empty())
      i.eraseFromParent();
  return true;
}

void ModuleLowerer::inlineSingleCalls() {
  // At O0 nothing is inlined (the O0 pipeline runs the always-inliner, so leave it be).
  if (opts.optLevel < 1)
    return;
  // A local function with one caller is inlined by the optimizer anyway (LLVM's inliner adds a
  // 15,000 bonus for the last call to a local function), but late: the function simplification
  // pipeline runs first on the callee, then again on the caller that holds its body. Inlined
  // first, the body is simplified once, in place: the O3 pipeline's work on saxpy fell by 24%
  // and on Mandelbrot by 29% (instructions, callgrind), with the same PTX but for the basic
  // blocks' names in comments. A body past the bonus is now inlined as well.
  for (llvm::Function &f : mod) {
    if (f.isDeclaration() || !f.hasLocalLinkage() || !f.hasOneUse())
      continue;
    auto *call = llvm::dyn_cast<llvm::CallInst>(*f.user_begin());
    if (call && call->getCalledFunction() == &f && call->getFunction() != &f)
      f.addFnAttr(llvm::Attribute::AlwaysInline);
  }
}

llvm::Function *ModuleLowerer::intPowHelper(llvm::IntegerType *ty, bool isSigned) {
  std::string name =
      std::string(isSigned ? "ptxjit_ipow_i" : "ptxjit_upow_i") + std::to_string(ty->getBitWidth());
  if (llvm::Function *f = mod.getFunction(name))
    return f;
  auto *f = llvm::Function::Create(llvm::FunctionType::get(ty, {ty, ty}, false),
                                   llvm::GlobalValue::InternalLinkage, name, mod);
  applyFunctionAttributes(f, opts);
  f->setDoesNotAccessMemory();
  f->setWillReturn();
  llvm::Value *base = f->getArg(0), *exp = f->getArg(1);
  base->setName("base");
  exp->setName("exp");
  auto *entry = llvm::BasicBlock::Create(ctx, "entry", f);
  auto *negative = llvm::BasicBlock::Create(ctx, "negative", f);
  auto *loop = llvm::BasicBlock::Create(ctx, "loop", f);
  auto *body = llvm::BasicBlock::Create(ctx, "body", f);
  auto *done = llvm::BasicBlock::Create(ctx, "done", f);
  llvm::IRBuilder<> b(entry);
  auto *one = llvm::ConstantInt::get(ty, 1), *zero = llvm::ConstantInt::get(ty, 0);
  if (isSigned)
    b.CreateCondBr(b.CreateICmpSLT(exp, zero), negative, loop);
  else
    b.CreateBr(loop);
  // A negative exponent: 1 for base 1, ±1 for base -1 (by the exponent's parity), else 0.
  b.SetInsertPoint(negative);
  llvm::Value *odd = b.CreateTrunc(exp, b.getInt1Ty());
  llvm::Value *minusOneResult = b.CreateSelect(odd, llvm::ConstantInt::getSigned(ty, -1), one);
  llvm::Value *r =
      b.CreateSelect(b.CreateICmpEQ(base, one), one,
                     b.CreateSelect(b.CreateICmpEQ(base, llvm::ConstantInt::getSigned(ty, -1)),
                                    minusOneResult, zero));
  b.CreateRet(r);
  // Repeated squaring over the exponent's bits (wrapping multiplication).
  b.SetInsertPoint(loop);
  llvm::PHINode *acc = b.CreatePHI(ty, 2, "acc");
  llvm::PHINode *sq = b.CreatePHI(ty, 2, "sq");
  llvm::PHINode *e = b.CreatePHI(ty, 2, "e");
  b.CreateCondBr(b.CreateICmpEQ(e, zero), done, body);
  b.SetInsertPoint(body);
  llvm::Value *bit = b.CreateTrunc(e, b.getInt1Ty());
  llvm::Value *acc2 = b.CreateSelect(bit, b.CreateMul(acc, sq), acc);
  llvm::Value *sq2 = b.CreateMul(sq, sq);
  llvm::Value *e2 = b.CreateLShr(e, one);
  b.CreateBr(loop);
  acc->addIncoming(one, entry);
  acc->addIncoming(acc2, body);
  sq->addIncoming(base, entry);
  sq->addIncoming(sq2, body);
  e->addIncoming(exp, entry);
  e->addIncoming(e2, body);
  b.SetInsertPoint(done);
  b.CreateRet(acc);
  return f;
}

// ---- FunctionLowerer: core ----

FunctionLowerer::FunctionLowerer(ModuleLowerer &m, const Function &f, llvm::Function *body)
    : M(m), fn(f), F(body), B(m.ctx) {}

void FunctionLowerer::fail(SourceLoc at, DiagCode code,
                           std::initializer_list<std::string> args) const {
  raiseDiag(code, fn.filename, at, args);
}

void FunctionLowerer::internal(SourceLoc at, const std::string &what) const {
  raiseDiag(DiagCode::Internal, fn.filename, at, {what + " (in " + fn.name + ")"});
}

const Type *FunctionLowerer::typeOf(const Instr *i, SourceLoc at) const {
  if (!i)
    internal(at, "missing operand");
  if (!i->type)
    internal(i->loc, std::string("untyped ") + opcodeName(i->op()) + " instruction %" +
                         std::to_string(i->id));
  // An IntEnum member is its int value wherever a value is used as a number; comparisons,
  // which tell classes apart, read the instruction's own type (ir/Enums.h).
  return intEnumAsInt(i->type);
}

llvm::Value *FunctionLowerer::enumMemberValue(const EnumClassType *cls, const std::string &name,
                                              SourceLoc at) {
  const ConstValue *v = cls->member(name);
  if (!v)
    internal(at, cls->str() + " has no member '" + name + "'");
  return constant(*v, cls->dtype(), at);
}

llvm::Value *FunctionLowerer::valueOf(const Instr *v, SourceLoc at) {
  if (!v)
    internal(at, "missing operand");
  auto it = values.find(v);
  if (it == values.end())
    internal(at, "operand %" + std::to_string(v->id) + " used before it is defined");
  return it->second;
}

bool FunctionLowerer::heldAsValue(size_t var) const {
  return !slots[var] && slotTypes[var] && !ModuleLowerer::isCompileTimeOnly(slotTypes[var]);
}

llvm::AllocaInst *FunctionLowerer::entryAlloca(llvm::Type *ty, const llvm::Twine &name) {
  llvm::IRBuilder<> b(allocaBlock, allocaBlock->getFirstInsertionPt());
  return b.CreateAlloca(ty, nullptr, name);
}

void FunctionLowerer::run() {
  SourceLoc fnLoc{fn.firstLine, 0, 0, 0};
  allocaBlock = llvm::BasicBlock::Create(M.ctx, "entry", F);
  B.SetInsertPoint(allocaBlock);
  llvm::DISubprogram *sp = F->getSubprogram();
  // Python columns count from 0, DWARF's from 1.
  auto lineAt = [&](SourceLoc at) {
    if (sp && at.line > 0)
      B.SetCurrentDebugLocation(llvm::DILocation::get(M.ctx, at.line, at.col + 1, sp));
  };
  lineAt(fnLoc);
  if (M.opts.fastmath) {
    llvm::FastMathFlags fast = llvm::FastMathFlags::getFast();
    // A NaN or an infinity that `nnan`/`ninf` promise away is poison, and a branch on poison
    // is undefined behaviour: on the host it crashed the process (a fastmath comparison with
    // np.float32(-1e39)), on the GPU LLVM turned a kernel testing math.isnan of an infinite
    // quotient into an endless loop (difftest seed 9002077 hung the H200). Both backends keep
    // the other fast-math freedoms (reassociation, contraction, reciprocals, approximate
    // functions, no signed zeros); NaN and infinities keep IEEE's rules.
    fast.setNoNaNs(false);
    fast.setNoInfs(false);
    B.setFastMathFlags(fast);
  }
  for (size_t k = 0, j = 0; k < fn.argTypes.size(); ++k)
    args.push_back(M.passesParam(fn, k) ? static_cast<llvm::Value *>(F->getArg(j++))
                                        : llvm::PoisonValue::get(repr(fn.argTypes[k], fnLoc)));
  if (M.isHost())
    ctxArg = F->getArg(F->arg_size() - 1);

  // Blocks in reverse post-order from the entry (a block after its dominators); unreachable
  // blocks are dropped.
  std::optional<ir::BlockDominators> dom;
  try {
    dom.emplace(fn);
  } catch (const std::invalid_argument &e) {
    internal(fnLoc, e.what());
  }
  const std::vector<const Block *> &order = dom->reversePostOrder();

  // Locals: a variable whose every read sees one assignment that dominates it is that value
  // (the scalar parameters never reassigned, most single assignments, a loop's own variable);
  // any other variable with a run-time value gets an entry-block alloca. Values rather than
  // memory leave O3 less to do (SROA, InstCombine). Aggregate parameters (arrays, tuples,
  // records, complex numbers) are values only in a kernel body that spliceKernelBody moves
  // into its entry, which reads their fields from the entry's parameters. Elsewhere they stay
  // in memory: SROA splits them into their fields at the entry, and SimplifyCFG's branch
  // folding counts the instructions each condition's block needs; as values, their fields
  // were extracted in the blocks that use them, and bench's Jacobi step (`if x > 0 and y > 0
  // and y < a.shape[0] - 1 and x < a.shape[1] - 1:`) kept two branches where it had one, 0.6%
  // slower on the H200.
  singleValue = ir::singleValueVariables(fn, *dom);
  const bool spliced = fn.kind == FunctionKind::Kernel && M.splicesKernelBodies();
  slots.assign(fn.vars.size(), nullptr);
  slotTypes.assign(fn.vars.size(), nullptr);
  directValues.assign(fn.vars.size(), nullptr);
  for (size_t v = 0; v < fn.vars.size(); ++v) {
    const Type *t = fn.vars[v].type ? concretize(fn.vars[v].type) : nullptr;
    slotTypes[v] = t;
    if (!t || ModuleLowerer::isCompileTimeOnly(t))
      continue;
    llvm::Type *ty = repr(t, fnLoc);
    if (!singleValue[v] || (fn.vars[v].isArgument && ty->isAggregateType() && !spliced))
      slots[v] = B.CreateAlloca(ty, nullptr, fn.vars[v].printedName());
  }
  // Parameters start out in their variables (converted to the variable's unified type).
  for (size_t k = 0; k < fn.argTypes.size() && k < fn.vars.size(); ++k) {
    if (!fn.vars[k].isArgument || (!slots[k] && !heldAsValue(k)))
      continue;
    llvm::Value *v = convert(args[k], fn.argTypes[k], slotTypes[k], fnLoc);
    if (slots[k])
      B.CreateStore(v, slots[k]);
    else
      directValues[k] = v;
  }

  for (const Block *b : order)
    blocks[b] = llvm::BasicBlock::Create(M.ctx, "bb" + std::to_string(b->id), F);
  B.CreateBr(blocks.at(fn.entry()));

  for (const Block *b : order) {
    B.SetInsertPoint(blocks.at(b));
    if (!b->terminator())
      internal(b->instrs.empty() ? fnLoc : b->instrs.back()->loc,
               "block bb" + std::to_string(b->id) + " has no terminator");
    for (const auto &i : b->instrs) {
      if (i->isTerminator() && i.get() != b->terminator())
        internal(i->loc, "terminator in the middle of block bb" + std::to_string(b->id));
      lineAt(i->loc);
      lowerInstr(*i);
    }
  }
}

void FunctionLowerer::lowerReturn(const ReturnInstr &r) {
  llvm::Type *rt = F->getReturnType();
  const Instr *v = r.value();
  if (rt->isVoidTy()) {
    const bool zeroSized = fn.kind != FunctionKind::Kernel && fn.returnType &&
                           !ModuleLowerer::isCompileTimeOnly(fn.returnType); // an empty tuple
    if (v && !zeroSized && !ModuleLowerer::isCompileTimeOnly(typeOf(v, r.loc)))
      fail(r.loc, DiagCode::KernelReturnsValue, {typeOf(v, r.loc)->str()});
    B.CreateRetVoid();
    return;
  }
  if (!v)
    internal(r.loc, "return without a value from a function returning " + fn.returnType->str());
  B.CreateRet(convert(valueOf(v, r.loc), typeOf(v, r.loc), fn.returnType, r.loc));
}

llvm::Value *FunctionLowerer::globalValue(const GlobalValue &g, const std::string &name,
                                          const Type *t, SourceLoc at) {
  if (ModuleLowerer::isCompileTimeOnly(t))
    return placeholder();
  switch (g.kind) {
  case GlobalValue::Kind::Constant:
    return constant(g.constant, t, at);
  case GlobalValue::Kind::EnumMember: // its value
    return constant(g.constant, enumValueOf(t), at);
  case GlobalValue::Kind::Missing:
    fail(at, DiagCode::UndefinedName, {name});
  case GlobalValue::Kind::PyFunction:
    fail(at, DiagCode::UndecoratedFunction, {name});
  case GlobalValue::Kind::Kernel:
    fail(at, DiagCode::KernelCallFromDevice, {name});
  case GlobalValue::Kind::Unsupported:
    fail(at, DiagCode::UntypedGlobal, {name, g.path});
  case GlobalValue::Kind::Array: // frozen into constant memory (LowerCuda.cpp)
    return lowerGlobalArray(g, name, t, at);
  case GlobalValue::Kind::DeviceArray: // its memory, by address (LowerCuda.cpp)
    return lowerGlobalDeviceArray(g, name, t, at);
  case GlobalValue::Kind::Tuple: {
    auto *tt = dyn_cast<TupleType>(concretize(t));
    if (!tt || tt->size() != g.elems.size())
      internal(at, "global tuple '" + name + "' typed " + t->str());
    llvm::Value *v = llvm::PoisonValue::get(repr(tt, at));
    for (size_t k = 0; k < g.elems.size(); ++k)
      v = B.CreateInsertValue(v, globalValue(g.elems[k], name, tt->elements()[k], at), unsigned(k));
    return v;
  }
  default:
    internal(at, "global '" + name + "' typed " + t->str() + " has no run-time value");
  }
}

void FunctionLowerer::lowerInstr(const Instr &i) {
  SourceLoc at = i.loc;
  llvm::Value *result = nullptr;
  switch (i.op()) {
  case Opcode::Const:
    result = constant(cast<ConstInstr>(&i)->value, typeOf(&i, at), at);
    break;
  case Opcode::Global: {
    auto &g = *cast<GlobalInstr>(&i);
    result = globalValue(g.value, g.name, typeOf(&i, at), at);
    break;
  }
  case Opcode::Arg: {
    int idx = cast<ArgInstr>(&i)->index;
    if (idx < 0 || static_cast<size_t>(idx) >= args.size())
      internal(at, "argument index " + std::to_string(idx) + " out of range");
    result = convert(args[idx], fn.argTypes[idx], typeOf(&i, at), at);
    break;
  }
  case Opcode::LoadLocal: {
    int var = cast<LoadLocalInstr>(&i)->var;
    if (var < 0 || static_cast<size_t>(var) >= fn.vars.size())
      internal(at, "variable index " + std::to_string(var) + " out of range");
    const Type *t = typeOf(&i, at);
    if (heldAsValue(var)) {
      if (!directValues[var])
        internal(at, "variable '" + fn.vars[var].name + "' is read before its assignment");
      result = convert(directValues[var], slotTypes[var], t, at);
      break;
    }
    if (!slots[var]) {
      if (!ModuleLowerer::isCompileTimeOnly(concretize(t)))
        internal(at, "variable '" + fn.vars[var].name + "' has no type");
      result = placeholder();
      break;
    }
    llvm::Value *v = B.CreateLoad(slots[var]->getAllocatedType(), slots[var], fn.vars[var].name);
    result = convert(v, slotTypes[var], t, at);
    break;
  }
  case Opcode::StoreLocal: {
    int var = cast<StoreLocalInstr>(&i)->var;
    if (var < 0 || static_cast<size_t>(var) >= fn.vars.size())
      internal(at, "variable index " + std::to_string(var) + " out of range");
    const Instr *src = i.operand(0);
    llvm::Value *v = valueOf(src, at);
    // A parameter that is only ever assigned its own argument (the frontend's entry store)
    // already holds it, in its slot or as its value.
    if (fn.vars[var].isArgument && singleValue[var])
      break;
    if (heldAsValue(var)) {
      llvm::Value *value = convert(v, typeOf(src, at), slotTypes[var], at);
      if (auto *inst = llvm::dyn_cast<llvm::Instruction>(value); inst && !inst->hasName())
        inst->setName(fn.vars[var].printedName());
      directValues[var] = value;
      break;
    }
    if (!slots[var]) {
      if (!ModuleLowerer::isCompileTimeOnly(concretize(typeOf(src, at))))
        internal(at, "variable '" + fn.vars[var].name + "' has no type");
      break;
    }
    B.CreateStore(convert(v, typeOf(src, at), slotTypes[var], at), slots[var]);
    break;
  }
  case Opcode::BinOp:
    result = lowerBinOp(*cast<BinOpInstr>(&i));
    break;
  case Opcode::UnaryOp:
    result = lowerUnaryOp(*cast<UnaryOpInstr>(&i));
    break;
  case Opcode::Compare:
    result = lowerCompare(*cast<CompareInstr>(&i));
    break;
  case Opcode::Truth: {
    const Instr *src = i.operand(0);
    result =
        convert(truth(valueOf(src, at), typeOf(src, at), at), types::boolean(), typeOf(&i, at), at);
    break;
  }
  case Opcode::GetAttr:
    result = lowerGetAttr(*cast<GetAttrInstr>(&i));
    break;
  case Opcode::GetItem:
    result = lowerGetItem(*cast<GetItemInstr>(&i));
    break;
  case Opcode::SetItem:
    lowerSetItem(*cast<SetItemInstr>(&i));
    break;
  case Opcode::SetAttr:
    lowerSetAttr(*cast<SetAttrInstr>(&i));
    break;
  case Opcode::Call:
    result = lowerCall(*cast<CallInstr>(&i));
    break;
  case Opcode::BuildTuple:
    result = lowerBuildTuple(*cast<BuildTupleInstr>(&i));
    break;
  case Opcode::TupleGet:
    result = lowerTupleGet(*cast<TupleGetInstr>(&i));
    break;
  case Opcode::BuildSlice:
    result = lowerBuildSlice(*cast<BuildSliceInstr>(&i));
    break;
  case Opcode::GetIter:
    result = lowerGetIter(*cast<GetIterInstr>(&i));
    break;
  case Opcode::IterValid:
    result = lowerIterValid(*cast<IterValidInstr>(&i));
    break;
  case Opcode::IterNext:
    result = lowerIterNext(*cast<IterNextInstr>(&i));
    break;
  case Opcode::Jump: {
    auto *j = cast<JumpInstr>(&i);
    B.CreateBr(blocks.at(j->target));
    break;
  }
  case Opcode::Branch: {
    auto *br = cast<BranchInstr>(&i);
    const Instr *c = br->operand(0);
    llvm::Value *cond = truth(valueOf(c, at), typeOf(c, at), at);
    if (br->ifTrue == br->ifFalse)
      B.CreateBr(blocks.at(br->ifTrue));
    else
      B.CreateCondBr(cond, blocks.at(br->ifTrue), blocks.at(br->ifFalse));
    break;
  }
  case Opcode::Return:
    lowerReturn(*cast<ReturnInstr>(&i));
    break;
  case Opcode::Raise:
    raiseException(cast<RaiseInstr>(&i)->exception, at);
    break;
  }
  if (result)
    values[&i] = result;
}

// ---- Modules and entries ----

std::unique_ptr<LoweredModule::Impl> newModule(const CompileOptions &opts,
                                               const std::string &symbol, ValueNames names) {
  initializeTargets();
  auto impl = std::make_unique<LoweredModule::Impl>();
  impl->ctx = std::make_unique<llvm::LLVMContext>();
  // Globals (functions, the bounds record) keep their names either way.
  impl->ctx->setDiscardValueNames(names == ValueNames::Drop);
  impl->module = std::make_unique<llvm::Module>(symbol, *impl->ctx);
  impl->entry = symbol;
  impl->backend = opts.backend;
  if (opts.backend == Backend::CUDA) {
    impl->module->setTargetTriple(nvptxTriple());
    impl->module->setDataLayout(nvptxDataLayout());
  } else {
    impl->module->setTargetTriple(hostTriple());
    impl->module->setDataLayout(hostDataLayout());
  }
  return impl;
}

void verifyModule(llvm::Module &m, const Function &fn) {
  std::string err;
  llvm::raw_string_ostream os(err);
  if (llvm::verifyModule(m, &os)) {
    os.flush();
    raiseDiag(DiagCode::Internal, fn.filename, SourceLoc{fn.firstLine, 0, 0, 0},
              {"LLVM verifier rejected the lowered module of '" + fn.name + "': " + err});
  }
}

void checkSymbol(const std::string &symbol, const Function &fn) {
  bool ok = !symbol.empty() && !std::isdigit(static_cast<unsigned char>(symbol[0]));
  for (char c : symbol)
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$');
  if (!ok)
    raiseDiag(DiagCode::Internal, fn.filename, SourceLoc{fn.firstLine, 0, 0, 0},
              {"invalid entry symbol '" + symbol + "'"});
}

} // namespace detail

LoweredModule lowerKernel(const Function &kernel, const CompileOptions &opts,
                          const std::string &symbol, ValueNames names) {
  using namespace detail;
  checkSymbol(symbol, kernel);
  auto impl = newModule(opts, symbol, names);
  llvm::Module &mod = *impl->module;
  ModuleLowerer M(mod, opts);
  M.uniqueName(symbol); // reserve the entry's name
  llvm::Function *body = M.bodyFor(kernel);
  llvm::IRBuilder<> b(M.ctx);
  KernelEntry e = buildEntry(
      mod, b, opts.backend, EntryKind::Kernel, symbol, kernel.argTypes, kernel.argNames,
      buildPackingPlan(kernel.argTypes, kernel.filename, SourceLoc{kernel.firstLine, 0, 0, 0}));
  if (e.hostCtx)
    e.args.push_back(e.hostCtx);
  M.annotateKernel(e.function);
  if (llvm::DISubprogram *sp = M.subprogramFor(kernel, e.function))
    b.SetCurrentDebugLocation(llvm::DILocation::get(M.ctx, kernel.firstLine, 1, sp));
  b.CreateCall(body, M.bodyArgs(kernel, e.args));
  b.CreateRetVoid();
  M.lowerQueued();
  M.spliceKernelBody(e.function, kernel);
  M.inlineSingleCalls();
  M.finishCuda(symbol, kernel); // shared-memory limit; host launch facts (LowerCuda.cpp)
  M.finishDebugInfo();
  verifyModule(mod, kernel);
  impl->links = std::move(M.links);
  impl->raiseSites = std::move(M.raiseSites);
  impl->gridSync = M.cuda.gridSync;
  return LoweredModule(std::move(impl));
}

LoweredModule lowerDeviceFunction(const Function &fn, const CompileOptions &opts,
                                  const std::string &symbol, ValueNames names) {
  using namespace detail;
  checkSymbol(symbol, fn);
  auto impl = newModule(opts, symbol, names);
  llvm::Module &mod = *impl->module;
  ModuleLowerer M(mod, opts);
  M.uniqueName(symbol);
  llvm::Function *body = M.bodyFor(fn);
  llvm::IRBuilder<> b(M.ctx);
  KernelEntry e =
      buildEntry(mod, b, opts.backend, EntryKind::DeviceFunction, symbol, fn.argTypes, fn.argNames,
                 buildPackingPlan(fn.argTypes, fn.filename, SourceLoc{fn.firstLine, 0, 0, 0}),
                 body->getReturnType());
  if (e.hostCtx)
    e.args.push_back(e.hostCtx);
  if (llvm::DISubprogram *sp = M.subprogramFor(fn, e.function))
    b.SetCurrentDebugLocation(llvm::DILocation::get(M.ctx, fn.firstLine, 1, sp));
  llvm::CallInst *call = b.CreateCall(body, M.bodyArgs(fn, e.args));
  if (body->getReturnType()->isVoidTy())
    b.CreateRetVoid();
  else
    b.CreateRet(call);
  M.lowerQueued();
  M.inlineSingleCalls();
  M.finishDebugInfo();
  verifyModule(mod, fn);
  impl->links = std::move(M.links);
  impl->raiseSites = std::move(M.raiseSites);
  impl->gridSync = M.cuda.gridSync;
  return LoweredModule(std::move(impl));
}

} // namespace ptxjit::codegen
