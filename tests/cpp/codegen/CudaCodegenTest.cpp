// Lowering of the cooperating-threads builtins (codegen/LowerCuda.cpp): the PTX instructions
// for shared memory, barriers, warp functions and atomics (checked by ptxas), and the host
// module's calls of the runtime helpers and its launch facts.
#include "TestUtil.h"
#include "TypedIR.h"

#include "codegen/Codegen.h"
#include "codegen/ModuleImpl.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include <llvm/IR/Function.h>
#include <llvm/Target/TargetMachine.h>

namespace ptxjit::codegen::test {
namespace {

/// def k(out: float32[::1], u: uint32[::1]):
///     s = cuda.shared.array(32, numpy.float32); l = cuda.local.array(4, numpy.float32)
///     t = cuda.threadIdx.x
///     s[t] = out[t]; cuda.syncthreads(); out[t] = s[31 - t]
///     cuda.atomic.add(out, 0, 1.0); cuda.atomic.add(s, 1, 1.0); cuda.atomic.inc(u, 0, 9)
///     out[t] = cuda.shfl_down_sync(0xffffffff, out[t], 1) + cuda.ballot_sync(-1, t > 3)
std::unique_ptr<Function> makeCooperative() {
  const ArrayType *f32 = arr(types::float32()), *u32 = arr(types::uint32());
  TypedBuilder b("coop", {"out", "u"}, {f32, u32});
  auto cudaSym = [&](const std::string &path) { return b.sym("cuda." + path); };
  Instr *s = b.call(cudaSym("shared.array"), {b.cint(32), b.sym("numpy.float32")}, f32,
                    BuiltinId::CudaSharedArray);
  Instr *l = b.call(cudaSym("local.array"), {b.cint(4), b.sym("numpy.float32")}, f32,
                    BuiltinId::CudaLocalArray);
  Instr *t = b.threadAttr("threadIdx", "x");
  b.setItem(s, t, b.item(b.arg(0), t, types::float32()));
  b.setItem(l, b.cint(0), b.cfloat(1.0));
  b.call(cudaSym("syncthreads"), {}, types::void_(), BuiltinId::CudaSyncthreads);
  Instr *rev = b.bin(BinaryOp::Sub, b.cint(31), t, types::int32());
  b.setItem(b.arg(0), t, b.item(s, rev, types::float32()));
  b.call(cudaSym("atomic.add"), {b.arg(0), b.cint(0), b.cfloat(1.0)}, types::float32(),
         BuiltinId::CudaAtomicAdd);
  b.call(cudaSym("atomic.add"), {s, b.cint(1), b.item(l, b.cint(0), types::float32())},
         types::float32(), BuiltinId::CudaAtomicAdd);
  b.call(cudaSym("atomic.inc"), {b.arg(1), b.cint(0), b.cint(9)}, types::uint32(),
         BuiltinId::CudaAtomicInc);
  Instr *mask = b.cint(0xffffffffLL);
  Instr *sh =
      b.call(cudaSym("shfl_down_sync"), {mask, b.item(b.arg(0), t, types::float32()), b.cint(1)},
             types::float32(), BuiltinId::CudaShflDownSync);
  Instr *ballot = b.call(cudaSym("ballot_sync"), {b.cint(-1), b.cmp(CmpOp::Gt, t, b.cint(3))},
                         types::int32(), BuiltinId::CudaBallotSync);
  b.setItem(b.arg(0), t, b.bin(BinaryOp::Add, sh, ballot, types::float64()));
  b.ret();
  return std::move(b.fn);
}

TEST(CudaCodegen, PtxInstructions) {
  auto fn = makeCooperative();
  CompileOptions o;
  LoweredModule m = lowerKernel(*fn, o, "coop");
  std::string ptx = emitPTX(m, o);
  for (const char *needle : {".shared .align 16 .b8", "st.shared.f32", "ld.shared.f32", "bar.sync",
                             "atom.global.add.f32", "atom.shared.add.f32", "atom.inc.u32",
                             "shfl.sync.down.b32", "vote.sync.ballot.b32"})
    EXPECT_NE(ptx.find(needle), std::string::npos) << needle << "\n" << ptx;
  // Nothing of the host's scheduler leaks into PTX.
  EXPECT_EQ(ptx.find("ptxjit_host_"), std::string::npos);
  if (havePtxas())
    EXPECT_TRUE(ptxasAccepts(ptx));
}

TEST(CudaCodegen, StaticSharedMemoryLimit) {
  const ArrayType *f32 = arr(types::float32());
  TypedBuilder b("big", {"out"}, {f32});
  b.call(b.sym("cuda.shared.array"), {b.cint(20000), b.sym("numpy.float32")}, f32,
         BuiltinId::CudaSharedArray);
  b.ret();
  CompileOptions o;
  try {
    lowerKernel(*b.fn, o, "big");
    FAIL() << "no error";
  } catch (const ir::CompileError &e) {
    EXPECT_EQ(e.code(), DiagCode::UnsupportedConstruct);
    EXPECT_NE(e.message().find("80000 bytes of static shared memory"), std::string::npos)
        << e.message();
  }
}

std::atomic<int> gSyncCalls{0};
extern "C" void fakeSyncthreads(const void *) { gSyncCalls.fetch_add(1); }
extern "C" uint64_t fakeShfl(const void *, uint32_t, int32_t, uint64_t v, uint32_t) { return v; }
extern "C" uint32_t fakeVote(const void *, uint32_t, int32_t, int32_t p) { return p; }

TEST(CudaCodegen, HostModuleCallsTheRuntimeAndRecordsLaunchFacts) {
  auto fn = makeCooperative();
  CompileOptions o;
  o.backend = Backend::Host;
  LoweredModule m = lowerKernel(*fn, o, "coop_host");
  std::string ir = m.llvmIR();
  for (const char *needle :
       {"@ptxjit_host_syncthreads(", "@ptxjit_host_shfl(", "@ptxjit_host_vote(", "atomicrmw fadd",
        "@coop_host__launch", "[i64 128, i64 1, i64 16, i64 0]"})
    EXPECT_NE(ir.find(needle), std::string::npos) << needle << "\n" << ir;
  // The host JIT resolves the helpers by the addresses it was given.
  defineHostSymbols({{"ptxjit_host_syncthreads", reinterpret_cast<void *>(&fakeSyncthreads)},
                     {"ptxjit_host_shfl", reinterpret_cast<void *>(&fakeShfl)},
                     {"ptxjit_host_vote", reinterpret_cast<void *>(&fakeVote)}});
  void *entry = addToHostJIT(std::move(m), o);
  HostLaunchInfo info = hostLaunchInfo(entry);
  EXPECT_EQ(info.staticSharedBytes, 128u);
  EXPECT_TRUE(info.cooperative);
  EXPECT_EQ(info.localBytes, 16u);
  // Kernels without cooperating-threads features carry no facts.
  EXPECT_FALSE(hostLaunchInfo(nullptr).cooperative);
}


/// def k(a, b, x, out):  out[i] = a * x[i] + (a + b)   with a, b Python floats (weak) and
/// float32 arrays: `a * x[i]` is float32, `a + b` is a double rounded once.
std::unique_ptr<Function> makeWeakFloatKernel() {
  const ArrayType *f32 = arr(types::float32());
  TypedBuilder b("weak", {"a", "b", "x", "out"},
                 {types::weakFloat(), types::weakFloat(), f32, f32});
  Instr *i = b.grid(1);
  Instr *ax = b.bin(BinaryOp::Mul, b.arg(0), b.item(b.arg(2), i, types::float32()),
                    types::float32());
  Instr *ab = b.bin(BinaryOp::Add, b.arg(0), b.arg(1), types::float64());
  b.setItem(b.arg(3), i, b.bin(BinaryOp::Add, ax, ab, types::float32()));
  b.ret();
  return std::move(b.fn);
}

TEST(CudaCodegen, PythonFloatArgumentsHaveFloat32Copies) {
  auto fn = makeWeakFloatKernel();
  CompileOptions o;
  LoweredModule m = lowerKernel(*fn, o, "weak");
  std::string ir = m.llvmIR();
  // a (double), its float32 copy, b, its copy, then the arrays.
  EXPECT_NE(ir.find("double %a, float %a_f32, double %b, float %b_f32, ptr %x_data"),
            std::string::npos)
      << ir;
  std::string ptx = emitPTX(m, o);
  EXPECT_NE(ptx.find(".param .f32 weak_param_1"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find(".param .f32 weak_param_3"), std::string::npos) << ptx;
  // `a * x[i]` uses the copy; only the double sum `a + b` is rounded in the kernel.
  size_t first = ptx.find("cvt.rn.f32.f64");
  EXPECT_NE(first, std::string::npos) << ptx;
  EXPECT_EQ(ptx.find("cvt.rn.f32.f64", first + 1), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("ld.param.f32"), std::string::npos) << ptx;
  if (havePtxas())
    EXPECT_TRUE(ptxasAccepts(ptx));
}

// startPtxPipelines hands the building of emitPTX's pass pipelines to a TaskRunner (the
// compiler's background thread), once per compile. A runner that builds them at once (both
// ready when emitPTX wants them), one that builds them later on a thread of its own (emitPTX
// builds the optimization pipeline itself and waits for code generation's), and no runner, all
// give the same PTX; pipelines started for other options are refused, and pipelines never used
// are built and freed by their task alone.
namespace runners {
std::atomic<int> calls{0};
std::mutex mutex;
std::vector<std::thread> threads; // joined by the test

void atOnce(std::function<void()> task) noexcept {
  ++calls;
  task();
}

void onAThread(std::function<void()> task) noexcept {
  ++calls;
  std::lock_guard<std::mutex> lock(mutex);
  threads.emplace_back([task = std::move(task)] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20)); // after emitPTX began to wait
    task();
  });
}
} // namespace runners

TEST(CudaCodegen, PipelinesStartedAheadGiveTheSamePtx) {
  CompileOptions o;
  std::vector<std::unique_ptr<Function>> kernels;
  kernels.push_back(makeWeakFloatKernel());
  kernels.push_back(makeCooperative());
  for (const auto &fn : kernels) {
    // Each module keeps a target machine (its code generation's) until it is destroyed.
    const std::string expected = [&] {
      LoweredModule plain = lowerKernel(*fn, o, "k");
      return emitPTX(plain, o);
    }();
    for (TaskRunner runner : {&runners::atOnce, &runners::onAThread}) {
      const int before = runners::calls;
      LoweredModule m = lowerKernel(*fn, o, "k");
      EXPECT_EQ(emitPTX(m, o, startPtxPipelines(o, runner)), expected);
      EXPECT_EQ(runners::calls, before + 1);
    }
  }
  CompileOptions fast = o;
  fast.fastmath = true;
  LoweredModule m = lowerKernel(*kernels[0], o, "k");
  try {
    emitPTX(m, o, startPtxPipelines(fast, &runners::atOnce));
    ADD_FAILURE() << "pipelines for other options were used";
  } catch (const ir::CompileError &e) {
    EXPECT_EQ(e.code(), DiagCode::Internal);
    EXPECT_NE(e.message().find("other options"), std::string::npos) << e.message();
  }
  startPtxPipelines(o, &runners::onAThread).reset(); // abandoned before its task runs
  std::lock_guard<std::mutex> lock(runners::mutex);
  EXPECT_EQ(runners::threads.size(), 3u);
  for (std::thread &t : runners::threads)
    t.join();
}

// Compiles drop value names unless the IR text is read (ValueNames): the PTX is the same either
// way, and without names the module's values are numbered while its globals keep theirs.
TEST(CudaCodegen, DroppedValueNamesLeaveThePtxAsItIs) {
  CompileOptions o;
  std::vector<std::unique_ptr<Function>> kernels;
  kernels.push_back(makeWeakFloatKernel());
  kernels.push_back(makeCooperative());
  for (const auto &fn : kernels) {
    LoweredModule named = lowerKernel(*fn, o, "k", ValueNames::Keep);
    LoweredModule unnamed = lowerKernel(*fn, o, "k", ValueNames::Drop);
    std::string namedPtx = emitPTX(named, o), unnamedPtx = emitPTX(unnamed, o);
    EXPECT_EQ(namedPtx, unnamedPtx);
    std::string namedIr = named.llvmIR(), unnamedIr = unnamed.llvmIR();
    EXPECT_NE(namedIr.find("%out_data"), std::string::npos) << namedIr;
    EXPECT_EQ(unnamedIr.find("%out_data"), std::string::npos) << unnamedIr;
    EXPECT_NE(unnamedIr.find("define void @k("), std::string::npos) << unnamedIr;
  }
}

TEST(CudaCodegen, HostKernelSkipsTheFloat32Copies) {
  auto fn = makeWeakFloatKernel();
  CompileOptions o;
  o.backend = Backend::Host;
  LoweredModule m = lowerKernel(*fn, o, "weak_host");
  std::string ir = m.llvmIR();
  // args[1] and args[3] are the float32 copies: the host entry reads 0, 2, 4, ...
  EXPECT_NE(ir.find("%a_ptr"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("%a_f32"), std::string::npos) << ir;
  EXPECT_NE(ir.find("ptr %args, i64 2\n"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("ptr %args, i64 1\n"), std::string::npos) << ir; // a_f32 is never read
  EXPECT_EQ(ir.find("ptr %args, i64 3\n"), std::string::npos) << ir; // nor b_f32
}

// ptxas 13.0 drops a negation fused into a three-input minimum (docs/reliability.md): integer
// negations leave emitPTX as not + add; other lines, and 64-bit and float negations, stay.
TEST(CudaCodegen, IntegerNegationsAreSpelledAsNotAndAdd) {
  std::string ptx = "\tneg.s32 \t%r5, %r4;\n"
                    "\t@%p1 neg.s16 \t%rs3, %rs1;\n"
                    "\tneg.s64 \t%rd2, %rd1;\n"
                    "\tneg.f32 \t%f2, %f1;\n"
                    "\tmin.s32 \t%r7, %r2, %r5;\n"
                    "\t// neg.s32 in a comment";
  detail::spellIntegerNegations(ptx);
  EXPECT_EQ(ptx, "\tnot.b32 \t%r5, %r4;\n"
                 "\tadd.s32 \t%r5, %r5, 1;\n"
                 "\t@%p1 not.b16 \t%rs3, %rs1;\n"
                 "\t@%p1 add.s16 \t%rs3, %rs3, 1;\n"
                 "\tneg.s64 \t%rd2, %rd1;\n"
                 "\tneg.f32 \t%f2, %f1;\n"
                 "\tmin.s32 \t%r7, %r2, %r5;\n"
                 "\t// neg.s32 in a comment");
  std::string none = "\tadd.s32 \t%r1, %r2, %r3;\n";
  detail::spellIntegerNegations(none);
  EXPECT_EQ(none, "\tadd.s32 \t%r1, %r2, %r3;\n");
}

// A local function called from one place in another is marked for inlining, so that the
// optimizer inlines it before simplifying it (a device function called once); one called twice
// is left to the inliner's judgment, and nothing is marked at O0. The kernel's body is no
// function of its own but at O0 or with debug information: it is lowered into the entry
// (spliceKernelBody). The PTX is the same either way for such a kernel.
TEST(CudaCodegen, FunctionsCalledOnceAreInlinedBeforeTheyAreSimplified) {
  auto f64 = types::float64();
  TypedBuilder once("once", {"v"}, {f64}, FunctionKind::Device, f64);
  once.ret(once.bin(BinaryOp::Mul, once.load("v"), once.cfloat(3.0), f64));
  TypedBuilder twice("twice", {"v"}, {f64}, FunctionKind::Device, f64);
  twice.ret(twice.bin(BinaryOp::Add, twice.load("v"), twice.cfloat(1.0), f64));
  TypedBuilder k("k", {"out"}, {arr(f64)});
  Instr *a = k.callDevice(twice.fn.get(), {k.item(k.load("out"), k.cint(1), f64)});
  Instr *b = k.callDevice(twice.fn.get(), {k.callDevice(once.fn.get(), {a})});
  k.setItem(k.load("out"), k.cint(0), b);
  k.ret();
  auto marked = [&](int optLevel) {
    CompileOptions o;
    o.optLevel = optLevel;
    LoweredModule m = lowerKernel(*k.fn, o, "k");
    std::map<std::string, bool> r;
    for (llvm::Function &f : *m.impl()->module)
      if (!f.isDeclaration())
        r[f.getName().str()] = f.hasFnAttribute(llvm::Attribute::AlwaysInline);
    return r;
  };
  using Marks = std::map<std::string, bool>;
  EXPECT_EQ(marked(3),
            (Marks{{"k", false}, {"ptxjit_dev_once", true}, {"ptxjit_dev_twice", false}}));
  EXPECT_EQ(marked(0), (Marks{{"k", false},
                              {"ptxjit_kernel_k", false},
                              {"ptxjit_dev_once", false},
                              {"ptxjit_dev_twice", false}}));
  CompileOptions o;
  LoweredModule m = lowerKernel(*k.fn, o, "k");
  std::string ptx = emitPTX(m, o);
  EXPECT_EQ(ptx.find(".func"), std::string::npos) << ptx; // everything inlined into the entry
}

// The kernel's lowered body moves into the entry in place of the call to it: the body's allocas
// first, then the parameters' unpacking, then the body, its returns joined in one last block as
// the inliner joins them. Each field the body reads from an array view is then the entry's
// parameter it was packed from, and the views themselves are gone. With debug information
// (whose scopes the inliner rewrites) and at O0 the body stays a function of its own, which the
// optimizer inlines (the PTX has the entry alone), and its array parameter stays in memory
// (Lowering.cpp says why).
TEST(CudaCodegen, TheKernelBodyIsLoweredIntoTheEntry) {
  auto f64 = types::float64();
  // def k(out, x): v = 0.0
  //                if x > 0.0: v = x; out[0] = v; return
  //                out[1] = v + x
  TypedBuilder k("k", {"out", "x"}, {arr(f64), f64});
  k.declare("v", f64);
  k.store("v", k.cfloat(0.0));
  Block *early = k.newBlock(), *late = k.newBlock();
  k.branch(k.cmp(CmpOp::Gt, k.load("x"), k.cfloat(0.0)), early, late);
  k.at(early);
  k.store("v", k.load("x"));
  k.setItem(k.load("out"), k.cint(0), k.load("v"));
  k.ret();
  k.at(late);
  k.setItem(k.load("out"), k.cint(1), k.bin(BinaryOp::Add, k.load("v"), k.load("x"), f64));
  k.ret();
  auto functions = [](const LoweredModule &m) {
    std::vector<std::string> r;
    for (const llvm::Function &f : *m.impl()->module)
      if (!f.isDeclaration())
        r.push_back(f.getName().str());
    return r;
  };
  auto count = [](const llvm::Function &f, auto isKind) {
    int n = 0;
    for (const llvm::BasicBlock &bb : f)
      for (const llvm::Instruction &i : bb)
        n += isKind(i);
    return n;
  };
  auto isAggregateInstr = [](const llvm::Instruction &i) {
    return llvm::isa<llvm::InsertValueInst>(i) || llvm::isa<llvm::ExtractValueInst>(i);
  };
  auto isAggregateAlloca = [](const llvm::Instruction &i) {
    auto *a = llvm::dyn_cast<llvm::AllocaInst>(&i);
    return a && a->getAllocatedType()->isAggregateType();
  };
  CompileOptions o;
  LoweredModule m = lowerKernel(*k.fn, o, "k", ValueNames::Keep);
  EXPECT_EQ(functions(m), std::vector<std::string>{"k"});
  const llvm::Function &entry = *m.impl()->module->getFunction("k");
  const llvm::BasicBlock &first = entry.getEntryBlock();
  EXPECT_TRUE(llvm::isa<llvm::AllocaInst>(first.front())) << m.llvmIR(); // v's
  EXPECT_EQ(count(entry, isAggregateInstr), 0) << m.llvmIR();
  EXPECT_EQ(count(entry, isAggregateAlloca), 0) << m.llvmIR();
  int rets = 0;
  for (const llvm::BasicBlock &bb : entry)
    rets += llvm::isa<llvm::ReturnInst>(bb.getTerminator());
  EXPECT_EQ(rets, 1) << m.llvmIR();
  EXPECT_TRUE(llvm::isa<llvm::ReturnInst>(entry.back().getTerminator())) << m.llvmIR();
  EXPECT_EQ(entry.back().size(), 1u) << m.llvmIR();
  std::string ptx = emitPTX(m, o);
  EXPECT_EQ(ptx.find(".func"), std::string::npos) << ptx;
  if (havePtxas())
    EXPECT_TRUE(ptxasAccepts(ptx));

  CompileOptions unoptimized;
  unoptimized.optLevel = 0;
  LoweredModule atO0 = lowerKernel(*k.fn, unoptimized, "k");
  EXPECT_EQ(functions(atO0), (std::vector<std::string>{"ptxjit_kernel_k", "k"}));
  EXPECT_EQ(count(*atO0.impl()->module->getFunction("ptxjit_kernel_k"), isAggregateAlloca), 1)
      << atO0.llvmIR();
  CompileOptions lines;
  lines.debugInfo = CompileOptions::DebugInfo::LineInfo;
  LoweredModule withLines = lowerKernel(*k.fn, lines, "k");
  EXPECT_EQ(functions(withLines), (std::vector<std::string>{"ptxjit_kernel_k", "k"}));
  EXPECT_EQ(count(*withLines.impl()->module->getFunction("ptxjit_kernel_k"), isAggregateAlloca), 1)
      << withLines.llvmIR();
  std::string linesPtx = emitPTX(withLines, lines);
  EXPECT_EQ(linesPtx.find(".func"), std::string::npos) << linesPtx; // inlined by the optimizer
}

// The optimization pipeline skips the module passes that can change nothing in a module:
// CGProfile always (no profile data), CalledValuePropagation unless some call is indirect (an
// inline asm call does not count: it has no callees to record).
TEST(CudaCodegen, ModulePassesThatChangeNothingAreNamed) {
  llvm::LLVMContext ctx;
  auto direct = parseTestIR(R"(
declare void @f()
define void @k() {
  call void @f()
  call void asm sideeffect "membar.gl;", ""()
  ret void
}
)",
                            ctx, "direct");
  auto indirect = parseTestIR(R"(
declare void @f()
declare void @g()
define void @k(i1 %c) {
  %callee = select i1 %c, ptr @f, ptr @g
  call void %callee()
  ret void
}
)",
                              ctx, "indirect");
  ASSERT_TRUE(direct && indirect);
  using Names = std::vector<llvm::StringRef>;
  EXPECT_EQ(detail::passesThatChangeNothing(*direct),
            (Names{"CGProfilePass", "CalledValuePropagationPass"}));
  EXPECT_EQ(detail::passesThatChangeNothing(*indirect), (Names{"CGProfilePass"}));
}

// The process keeps its NVPTX target machines: a lease takes an idle one of the same target
// options (the same options give back the same machine, other options another; two leases held
// together, as a compile holds them, two machines), and a module's PTX does not depend on what
// the machines compiled before it (compiles interleaved with other options, and from another
// thread).
TEST(CudaCodegen, TargetMachinesAreKeptForLaterCompilesWithoutCarryingState) {
  CompileOptions o, fast = o, old = o;
  fast.fastmath = true;
  old.ccMajor = 7;
  old.ccMinor = 5;
  const llvm::TargetMachine *first = nullptr;
  {
    detail::NvptxTargetMachineLease a(o);
    first = &*a;
    detail::NvptxTargetMachineLease b(o), f(fast), s75(old);
    EXPECT_NE(&*a, &*b);
    EXPECT_NE(&*a, &*f);
    EXPECT_NE(&*a, &*s75);
    EXPECT_EQ(s75->getTargetCPU(), "sm_75");
    EXPECT_EQ(a->getTargetCPU(), "sm_90");
  }
  {
    detail::NvptxTargetMachineLease again(o), other(o);
    EXPECT_TRUE(&*again == first || &*other == first) << "the idle machine was not reused";
  }
  auto ptxOf = [](const CompileOptions &opts) {
    auto fn = makeCooperative();
    LoweredModule m = lowerKernel(*fn, opts, "coop");
    return emitPTX(m, opts);
  };
  std::string firstPtx = ptxOf(o), firstOld = ptxOf(old);
  ptxOf(fast);
  EXPECT_EQ(ptxOf(o), firstPtx);
  EXPECT_EQ(ptxOf(old), firstOld);
  std::string there;
  std::thread([&] { there = ptxOf(o); }).join();
  EXPECT_EQ(there, firstPtx);
}

// Compiles from several threads at once: each holds machines no other compile uses meanwhile,
// and each module gets the PTX it gets alone.
TEST(CudaCodegen, ConcurrentCompilesGiveTheirOwnPtx) {
  CompileOptions o, fast = o;
  fast.fastmath = true;
  auto ptxOf = [](const CompileOptions &opts) {
    auto fn = makeCooperative();
    LoweredModule m = lowerKernel(*fn, opts, "coop");
    return emitPTX(m, opts);
  };
  const std::string alone = ptxOf(o), aloneFast = ptxOf(fast);
  std::vector<std::string> got(8);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < got.size(); ++t)
    threads.emplace_back([&, t] {
      for (int k = 0; k < 5; ++k)
        got[t] = ptxOf(t % 2 ? fast : o);
    });
  for (std::thread &t : threads)
    t.join();
  for (size_t t = 0; t < got.size(); ++t)
    EXPECT_EQ(got[t], t % 2 ? aloneFast : alone) << "thread " << t;
}

} // namespace
} // namespace ptxjit::codegen::test
