#include "runtime/HostBlock.h"

#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <system_error>

namespace ptxjit::runtime {
namespace {

enum class State : uint8_t { Ready, Barrier, Warp, Done };

const char *barrierName(BarrierOp op) {
  switch (op) {
  case BarrierOp::Sync:
    return "cuda.syncthreads()";
  case BarrierOp::Count:
    return "cuda.syncthreads_count()";
  case BarrierOp::And:
    return "cuda.syncthreads_and()";
  case BarrierOp::Or:
    return "cuda.syncthreads_or()";
  case BarrierOp::Grid:
    return "cuda.cg grid.sync()";
  }
  return "a barrier";
}

std::string warpOpName(WarpOp op, int32_t mode) {
  switch (op) {
  case WarpOp::Sync:
    return "cuda.syncwarp()";
  case WarpOp::Shfl: {
    static const char *names[] = {"cuda.shfl_sync()", "cuda.shfl_up_sync()",
                                  "cuda.shfl_down_sync()", "cuda.shfl_xor_sync()"};
    return mode >= 0 && mode < 4 ? names[mode] : "a warp shuffle";
  }
  case WarpOp::Vote: {
    static const char *names[] = {"cuda.all_sync()", "cuda.any_sync()", "cuda.eq_sync()",
                                  "cuda.ballot_sync()"};
    return mode >= 0 && mode < 4 ? names[mode] : "a warp vote";
  }
  case WarpOp::Match:
    return mode == 0 ? "cuda.match_any_sync()" : "cuda.match_all_sync()";
  case WarpOp::Active:
    return "cuda.activemask()";
  }
  return "a warp collective";
}

std::string hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// The runner whose fibers run on this OS thread (fibers never migrate between threads).
thread_local HostBlockRunner *tlsRunner = nullptr;

// ---- Context switching ----
//
// x86-64: a hand-written switch that saves only what the SysV ABI says a call preserves (rbx,
// rbp, r12-r15, the stack pointer, MXCSR and the x87 control word): about 20 instructions, no
// system call. Elsewhere: ucontext (swapcontext also saves the signal mask, a system call per
// switch).
#if defined(__x86_64__) && defined(__linux__)

extern "C" void ptxjit_fiber_switch(void **saveSp, void *nextSp);
asm(R"(
  .text
  .globl ptxjit_fiber_switch
  .hidden ptxjit_fiber_switch
  .type ptxjit_fiber_switch,@function
  .p2align 4
ptxjit_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size ptxjit_fiber_switch,.-ptxjit_fiber_switch
)");

struct Context {
  void *sp = nullptr;
};

// Prepares `c` to start `fn` (which never returns) on the stack [base, base + size).
void initContext(Context &c, char *base, size_t size, void (*fn)()) {
  auto top = reinterpret_cast<uintptr_t>(base + size) & ~uintptr_t(15);
  auto *sp = reinterpret_cast<uint64_t *>(top);
  *--sp = 0;                              // fn's return address (fn never returns)
  *--sp = reinterpret_cast<uint64_t>(fn); // where the first switch's `ret` goes
  for (int k = 0; k < 6; ++k)
    *--sp = 0; // rbp, rbx, r12-r15
  uint32_t mxcsr;
  uint16_t fpucw;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(fpucw));
  --sp;
  std::memcpy(sp, &mxcsr, 4); // the caller's floating-point modes
  std::memcpy(reinterpret_cast<char *>(sp) + 4, &fpucw, 2);
  c.sp = sp;
}

void switchContext(Context &from, Context &to) { ptxjit_fiber_switch(&from.sp, to.sp); }

#else

struct Context {
  ucontext_t uc;
};

void initContext(Context &c, char *base, size_t size, void (*fn)()) {
  getcontext(&c.uc);
  c.uc.uc_stack.ss_sp = base;
  c.uc.uc_stack.ss_size = size;
  c.uc.uc_link = nullptr;
  makecontext(&c.uc, fn, 0);
}

void switchContext(Context &from, Context &to) { swapcontext(&from.uc, &to.uc); }

#endif

constexpr size_t kDefaultStackBytes = size_t(256) << 10;

size_t pageSize() {
  static const size_t p = [] {
    long v = sysconf(_SC_PAGESIZE);
    return v > 0 ? size_t(v) : size_t(4096);
  }();
  return p;
}

} // namespace

struct HostBlockRunner::Fiber {
  Context uc;
  HostThreadCtx ctx;
  State state = State::Ready;
  // Barrier: the op and predicate it waits with, and the reduction's result.
  BarrierOp barrierOp = BarrierOp::Sync;
  int32_t pred = 0;
  int32_t result = 0;
  // Warp collective: the request and the result.
  WarpOp warpOp = WarpOp::Sync;
  int32_t mode = 0;
  uint32_t mask = 0;
  uint64_t value = 0;
  uint32_t operand = 0;
  uint64_t warpResult = 0;
  int32_t warpPred = 0;
};

HostBlockRunner::HostBlockRunner() : mainCtx_(new Context) {}

HostBlockRunner::~HostBlockRunner() {
  if (stacks_)
    munmap(stacks_, mappedBytes_);
  delete static_cast<Context *>(mainCtx_);
}

void HostBlockRunner::ensureStacks(size_t count, size_t stackBytes) {
  const size_t page = pageSize();
  size_t stride = (stackBytes + page - 1) / page * page + page; // + one guard page
  if (stacks_ && count <= stackCount_ && stride <= stackStride_)
    return;
  if (stacks_) {
    munmap(stacks_, mappedBytes_);
    stacks_ = nullptr;
  }
  stride = std::max(stride, stackStride_);
  count = std::max(count, stackCount_);
  size_t bytes = stride * count;
  void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    throw std::system_error(errno, std::generic_category(),
                            "cannot map " + std::to_string(bytes) + " bytes of fiber stacks");
  stacks_ = static_cast<char *>(p);
  mappedBytes_ = bytes;
  stackCount_ = count;
  stackStride_ = stride;
  // A guard page below each stack turns an overflow into a fault instead of corrupting the
  // neighbouring fiber.
  for (size_t k = 0; k < count; ++k)
    mprotect(stacks_ + k * stride, page, PROT_NONE);
}

std::string HostBlockRunner::blockName() const {
  return "block (" + std::to_string(base_.ctaid[0]) + ", " + std::to_string(base_.ctaid[1]) + ", " +
         std::to_string(base_.ctaid[2]) + ")";
}

std::string HostBlockRunner::threadName(uint32_t rank) const {
  const HostThreadCtx &c = fibers_[rank].ctx;
  return "thread (" + std::to_string(c.tid[0]) + ", " + std::to_string(c.tid[1]) + ", " +
         std::to_string(c.tid[2]) + ")";
}

void HostBlockRunner::trampoline() {
  HostBlockRunner *r = tlsRunner;
  uint32_t rank = r->running_;
  bool raised = false;
  try {
    raised = runHostThread(r->entry_, r->args_, &r->fibers_[rank].ctx);
  } catch (...) {
    if (!r->exception_)
      r->exception_ = std::current_exception();
  }
  r->finished(rank, raised);
  // Never resumed: the scheduler sees the fiber Done.
  switchContext(r->fibers_[rank].uc, *static_cast<Context *>(r->mainCtx_));
  std::abort();
}

void HostBlockRunner::run(HostKernelEntry entry, void **args, const HostThreadCtx &base,
                          size_t extraStackBytes) {
  base_ = base;
  const uint32_t n = base.ntid[0] * base.ntid[1] * base.ntid[2];
  ensureStacks(n, kDefaultStackBytes + extraStackBytes);
  if (fibers_.size() < n)
    fibers_.resize(n);
  entry_ = entry;
  args_ = args;
  threads_ = n;
  live_ = n;
  atBarrier_ = 0;
  done_ = 0;
  exited_ = 0;
  error_.clear();
  exception_ = nullptr;
  uint32_t rank = 0;
  for (uint32_t z = 0; z < base.ntid[2]; ++z)
    for (uint32_t y = 0; y < base.ntid[1]; ++y)
      for (uint32_t x = 0; x < base.ntid[0]; ++x, ++rank) {
        Fiber &f = fibers_[rank];
        f.ctx = base;
        f.ctx.tid[0] = x, f.ctx.tid[1] = y, f.ctx.tid[2] = z;
        f.ctx.linearTid = rank;
        f.ctx.block = this;
        f.state = State::Ready;
        initContext(f.uc, stacks_ + size_t(rank) * stackStride_ + pageSize(),
                    stackStride_ - pageSize(), &HostBlockRunner::trampoline);
      }

  HostBlockRunner *outer = tlsRunner;
  tlsRunner = this;
  auto *main = static_cast<Context *>(mainCtx_);
  while (live_ > 0 && error_.empty() && !exception_) {
    bool ran = false;
    for (uint32_t t = 0; t < n && error_.empty() && !exception_; ++t) {
      if (fibers_[t].state != State::Ready)
        continue;
      running_ = t;
      ran = true;
      switchContext(*main, fibers_[t].uc);
    }
    if (!ran && live_ > 0 && error_.empty() && !exception_) {
      // Every live thread waits, and no barrier or warp collective can complete.
      uint32_t warp = 0;
      uint32_t firstWarp = n;
      for (uint32_t t = 0; t < n; ++t)
        if (fibers_[t].state == State::Warp) {
          ++warp;
          firstWarp = std::min(firstWarp, t);
        }
      error_ = "deadlock in " + blockName() + ": " + std::to_string(atBarrier_) +
               " thread(s) wait at a barrier and " + std::to_string(warp) + " at a warp collective";
      if (firstWarp < n) {
        const Fiber &f = fibers_[firstWarp];
        error_ += " (" + threadName(firstWarp) + " waits at " + warpOpName(f.warpOp, f.mode) +
                  " with mask " + hex(f.mask) + ")";
      }
      error_ += "; the threads of a block must reach the same barriers and the lanes named by a "
                "warp function's mask must all call it";
    }
  }
  tlsRunner = outer;
  if (exception_)
    std::rethrow_exception(exception_);
  if (!error_.empty())
    throw HostSyncError(error_);
}

void HostBlockRunner::yieldToScheduler(uint32_t rank) {
  switchContext(fibers_[rank].uc, *static_cast<Context *>(mainCtx_));
}

void HostBlockRunner::failFromFiber(uint32_t rank, std::string message) {
  if (error_.empty())
    error_ = std::move(message);
  fibers_[rank].state = State::Done; // abandoned: never resumed
  switchContext(fibers_[rank].uc, *static_cast<Context *>(mainCtx_));
  std::abort();
}

void HostBlockRunner::finished(uint32_t rank, bool raised) {
  Fiber &f = fibers_[rank];
  f.state = State::Done;
  --live_;
  ++done_;
  if (!error_.empty())
    return;
  if (raised) {
    // Ended by a raise: the others need not wait for it at a barrier.
    ++exited_;
    if (atBarrier_ > 0 && atBarrier_ == threads_ - exited_) {
      for (uint32_t t = 0; t < threads_; ++t)
        if (fibers_[t].state == State::Barrier) {
          releaseBarrier(rank, fibers_[t].barrierOp);
          break;
        }
    }
    tryResolveActive(rank);
    return;
  }
  if (atBarrier_ > 0) {
    BarrierOp op = BarrierOp::Sync;
    for (uint32_t t = 0; t < threads_; ++t)
      if (fibers_[t].state == State::Barrier) {
        op = fibers_[t].barrierOp;
        break;
      }
    error_ = std::string(barrierName(op)) + " was not reached by every thread of " + blockName() +
             ": " + threadName(rank) + " returned while " + std::to_string(atBarrier_) + " of " +
             std::to_string(threads_) + " threads wait at the barrier";
    return;
  }
  uint32_t lane = rank % 32, warpBase = rank - lane;
  for (uint32_t t = warpBase; t < std::min(threads_, warpBase + 32); ++t) {
    const Fiber &g = fibers_[t];
    if (g.state == State::Warp && g.warpOp != WarpOp::Active && (g.mask >> lane & 1u)) {
      error_ = warpOpName(g.warpOp, g.mode) + " with mask " + hex(g.mask) + " in " + blockName() +
               ": lane " + std::to_string(lane) + " (" + threadName(rank) +
               ") returned without calling it";
      return;
    }
  }
  tryResolveActive(rank);
}

int32_t HostBlockRunner::barrier(uint32_t rank, BarrierOp op, int32_t pred) {
  Fiber &f = fibers_[rank];
  if (done_ > exited_) {
    uint32_t gone = 0;
    while (gone < threads_ && fibers_[gone].state != State::Done)
      ++gone;
    failFromFiber(rank, std::string(barrierName(op)) + " was not reached by every thread of " +
                            blockName() + ": " + std::to_string(done_ - exited_) + " of " +
                            std::to_string(threads_) + " threads (the first " + threadName(gone) +
                            ") returned before it");
  }
  f.state = State::Barrier;
  f.barrierOp = op;
  f.pred = pred;
  if (++atBarrier_ < threads_ - exited_) {
    tryResolveActive(rank);
    yieldToScheduler(rank);
    return f.result;
  }
  return releaseBarrier(rank, op); // the last thread arrives
}

int32_t HostBlockRunner::releaseBarrier(uint32_t rank, BarrierOp op) {
  int32_t count = 0;
  for (uint32_t t = 0; t < threads_; ++t) {
    const Fiber &g = fibers_[t];
    if (g.state == State::Done) // ended by a raise
      continue;
    if (g.barrierOp != op)
      failFromFiber(rank, "threads of " + blockName() + " met at different barriers: " +
                              threadName(t) + " at " + barrierName(g.barrierOp) + ", " +
                              threadName(rank) + " at " + barrierName(op));
    count += g.pred != 0;
  }
  int32_t result = 0;
  switch (op) {
  case BarrierOp::Sync:
    break;
  case BarrierOp::Count:
    result = count;
    break;
  case BarrierOp::And:
    result = count == int32_t(threads_ - exited_);
    break;
  case BarrierOp::Or:
    result = count != 0;
    break;
  case BarrierOp::Grid:
    // Every thread of the block is here: the block arrives at the grid barrier, and this OS
    // thread (the whole block) waits until every block of the launch has.
    if (!grid_)
      break; // a block run alone (a hand-written caller): the grid is this block
    if (!grid_->arriveAndWait())
      failFromFiber(rank, std::string(barrierName(op)) + " in " + blockName() +
                              " abandoned: " + grid_->why());
    break;
  }
  for (uint32_t t = 0; t < threads_; ++t) {
    if (fibers_[t].state == State::Done)
      continue;
    fibers_[t].result = result;
    fibers_[t].state = State::Ready;
  }
  atBarrier_ = 0;
  return result;
}

uint32_t HostBlockRunner::activeMask(uint32_t rank, uint32_t site) {
  Fiber &f = fibers_[rank];
  f.state = State::Warp;
  f.warpOp = WarpOp::Active;
  f.mode = 0;
  f.operand = site;
  tryResolveActive(rank);
  if (f.state == State::Warp)
    yieldToScheduler(rank);
  return static_cast<uint32_t>(f.warpResult);
}

void HostBlockRunner::tryResolveActive(uint32_t rank) {
  uint32_t warpBase = rank - rank % 32;
  uint32_t end = std::min(threads_, warpBase + 32);
  bool waiting = false;
  for (uint32_t t = warpBase; t < end; ++t) {
    const Fiber &g = fibers_[t];
    if (g.state == State::Ready)
      return; // a lane can still run: it may reach the same activemask
    waiting = waiting || (g.state == State::Warp && g.warpOp == WarpOp::Active);
  }
  if (!waiting)
    return;
  for (uint32_t t = warpBase; t < end; ++t) {
    Fiber &g = fibers_[t];
    if (g.state != State::Warp || g.warpOp != WarpOp::Active)
      continue;
    uint32_t mask = 0;
    for (uint32_t k = warpBase; k < end; ++k) {
      const Fiber &h = fibers_[k];
      if (h.state == State::Warp && h.warpOp == WarpOp::Active && h.operand == g.operand)
        mask |= 1u << (k - warpBase);
    }
    g.warpResult = mask;
    g.mode = 1; // resolved (the state changes below, after every mask is computed)
  }
  for (uint32_t t = warpBase; t < end; ++t) {
    Fiber &g = fibers_[t];
    if (g.state == State::Warp && g.warpOp == WarpOp::Active && g.mode == 1)
      g.state = State::Ready;
  }
}

uint64_t HostBlockRunner::warpCollective(uint32_t rank, WarpOp op, int32_t mode, uint32_t mask,
                                         uint64_t value, uint32_t operand, int32_t *predOut) {
  Fiber &f = fibers_[rank];
  uint32_t lane = rank % 32, warpBase = rank - lane;
  uint32_t lanes = std::min<uint32_t>(32, threads_ - warpBase);
  uint32_t present = lanes == 32 ? ~0u : (1u << lanes) - 1u;
  // The caller always takes part; lanes beyond the block's last thread do not exist.
  mask = (mask | (1u << lane)) & present;
  for (uint32_t l = 0; l < lanes; ++l)
    if ((mask >> l & 1u) && fibers_[warpBase + l].state == State::Done)
      failFromFiber(rank, warpOpName(op, mode) + " with mask " + hex(mask) + " in " + blockName() +
                              ": lane " + std::to_string(l) + " (" + threadName(warpBase + l) +
                              ") returned without calling it");
  f.state = State::Warp;
  f.warpOp = op;
  f.mode = mode;
  f.mask = mask;
  f.value = value;
  f.operand = operand;
  tryCompleteWarp(rank);
  if (f.state == State::Warp) {
    tryResolveActive(rank);
    yieldToScheduler(rank);
  }
  if (predOut)
    *predOut = f.warpPred;
  return f.warpResult;
}

void HostBlockRunner::tryCompleteWarp(uint32_t rank) {
  Fiber &f = fibers_[rank];
  uint32_t lane = rank % 32, warpBase = rank - lane;
  const uint32_t mask = f.mask;
  for (uint32_t l = 0; l < 32; ++l) {
    if (!(mask >> l & 1u))
      continue;
    const Fiber &g = fibers_[warpBase + l];
    if (g.state != State::Warp || g.warpOp == WarpOp::Active)
      return; // a lane of the group has not arrived yet
  }
  for (uint32_t l = 0; l < 32; ++l) {
    if (!(mask >> l & 1u))
      continue;
    const Fiber &g = fibers_[warpBase + l];
    if (g.warpOp != f.warpOp || g.mode != f.mode || g.mask != mask)
      failFromFiber(rank, "lanes of a warp in " + blockName() +
                              " reached different warp functions: lane " + std::to_string(l) +
                              " (" + threadName(warpBase + l) + ") at " +
                              warpOpName(g.warpOp, g.mode) + " with mask " + hex(g.mask) +
                              ", lane " + std::to_string(lane) + " at " +
                              warpOpName(f.warpOp, f.mode) + " with mask " + hex(mask));
  }
  auto member = [&](int64_t l) { return l >= 0 && l < 32 && (mask >> l & 1u); };
  uint32_t ballot = 0;
  bool all = true, any = false;
  for (uint32_t l = 0; l < 32; ++l) {
    if (!member(l))
      continue;
    bool p = fibers_[warpBase + l].value != 0;
    ballot |= uint32_t(p) << l;
    all = all && p;
    any = any || p;
  }
  bool allSame = true;
  for (uint32_t l = 0; l < 32; ++l)
    if (member(l) && fibers_[warpBase + l].value != f.value)
      allSame = false;
  for (uint32_t l = 0; l < 32; ++l) {
    if (!member(l))
      continue;
    Fiber &g = fibers_[warpBase + l];
    g.warpPred = 0;
    switch (f.warpOp) {
    case WarpOp::Sync:
      g.warpResult = 0;
      break;
    case WarpOp::Shfl: {
      // PTX shfl.sync with a 32-lane segment: idx reads lane b % 32; up, down and xor read lane
      // l - b, l + b, l ^ b when it is inside the warp. A source outside the warp or outside the
      // mask gives the lane its own value.
      int64_t src = -1;
      switch (static_cast<ShflMode>(g.mode)) {
      case ShflMode::Idx:
        src = g.operand & 31u;
        break;
      case ShflMode::Up:
        src = int64_t(l) - int64_t(g.operand);
        break;
      case ShflMode::Down:
        src = int64_t(l) + int64_t(g.operand);
        break;
      case ShflMode::Xor:
        src = int64_t(l ^ g.operand);
        break;
      }
      g.warpResult = member(src) ? fibers_[warpBase + src].value : g.value;
      break;
    }
    case WarpOp::Vote:
      switch (static_cast<VoteMode>(g.mode)) {
      case VoteMode::All:
        g.warpResult = all;
        break;
      case VoteMode::Any:
        g.warpResult = any;
        break;
      case VoteMode::Eq:
        g.warpResult = all || !any;
        break;
      case VoteMode::Ballot:
        g.warpResult = ballot;
        break;
      }
      break;
    case WarpOp::Match:
      if (static_cast<MatchMode>(g.mode) == MatchMode::Any) {
        uint32_t same = 0;
        for (uint32_t k = 0; k < 32; ++k)
          if (member(k) && fibers_[warpBase + k].value == g.value)
            same |= 1u << k;
        g.warpResult = same;
      } else {
        g.warpResult = allSame ? mask : 0;
        g.warpPred = allSame;
      }
      break;
    }
    g.state = State::Ready;
  }
}

bool HostGridBarrier::arriveAndWait() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!why_.empty())
    return false;
  const uint64_t generation = generation_;
  if (++arrived_ + ended_ == blocks_) {
    if (ended_ != 0) {
      abandonLocked(endedMessage());
      return false;
    }
    arrived_ = 0;
    ++generation_;
    released_.notify_all();
    return true;
  }
  released_.wait(lock, [&] { return generation_ != generation || !why_.empty(); });
  return generation_ != generation;
}

void HostGridBarrier::blockEnded(const std::string &block) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (ended_++ == 0)
    firstEnded_ = block;
  if (arrived_ != 0 && arrived_ + ended_ == blocks_)
    abandonLocked(endedMessage());
}

std::string HostGridBarrier::endedMessage() const {
  return firstEnded_ + " ended without reaching it (" + std::to_string(ended_) + " of " +
         std::to_string(blocks_) + " blocks did) while " + std::to_string(arrived_) + " wait at it";
}

void HostGridBarrier::abandon(const std::string &why) {
  std::lock_guard<std::mutex> lock(mutex_);
  abandonLocked(why);
}

void HostGridBarrier::abandonLocked(const std::string &why) {
  if (why_.empty())
    why_ = why.empty() ? "the launch failed" : why;
  released_.notify_all();
}

std::string HostGridBarrier::why() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return why_;
}

std::vector<std::pair<const char *, void *>> hostIntrinsicSymbols() {
  return {
      {"ptxjit_host_syncthreads", reinterpret_cast<void *>(&ptxjit_host_syncthreads)},
      {"ptxjit_host_grid_sync", reinterpret_cast<void *>(&ptxjit_host_grid_sync)},
      {"ptxjit_host_syncthreads_reduce", reinterpret_cast<void *>(&ptxjit_host_syncthreads_reduce)},
      {"ptxjit_host_syncwarp", reinterpret_cast<void *>(&ptxjit_host_syncwarp)},
      {"ptxjit_host_shfl", reinterpret_cast<void *>(&ptxjit_host_shfl)},
      {"ptxjit_host_vote", reinterpret_cast<void *>(&ptxjit_host_vote)},
      {"ptxjit_host_match", reinterpret_cast<void *>(&ptxjit_host_match)},
      {"ptxjit_host_activemask", reinterpret_cast<void *>(&ptxjit_host_activemask)},
      {"ptxjit_host_exit_thread", reinterpret_cast<void *>(&ptxjit_host_exit_thread)},
  };
}

} // namespace ptxjit::runtime

// ---- The helpers (C ABI) ----
//
// A kernel that uses none of these runs without a scheduler (ctx->block is null). The compiler
// marks every kernel that calls them as cooperative, so a null scheduler here means a block of
// one thread run by a hand-written caller: every collective then completes at once.

using ptxjit::runtime::BarrierOp;
using ptxjit::runtime::HostThreadCtx;
using ptxjit::runtime::WarpOp;

extern "C" void ptxjit_host_syncthreads(const HostThreadCtx *ctx) {
  if (ctx->block)
    ctx->block->barrier(ctx->linearTid, BarrierOp::Sync, 0);
}

extern "C" int32_t ptxjit_host_syncthreads_reduce(const HostThreadCtx *ctx, int32_t op,
                                                  int32_t pred) {
  if (ctx->block)
    return ctx->block->barrier(ctx->linearTid, static_cast<BarrierOp>(op), pred);
  return static_cast<BarrierOp>(op) == BarrierOp::Sync ? 0 : int32_t(pred != 0);
}

extern "C" void ptxjit_host_grid_sync(const HostThreadCtx *ctx) {
  if (ctx->block)
    ctx->block->barrier(ctx->linearTid, BarrierOp::Grid, 0);
}

extern "C" void ptxjit_host_syncwarp(const HostThreadCtx *ctx, uint32_t mask) {
  if (ctx->block)
    ctx->block->warpCollective(ctx->linearTid, WarpOp::Sync, 0, mask, 0, 0, nullptr);
}

extern "C" uint64_t ptxjit_host_shfl(const HostThreadCtx *ctx, uint32_t mask, int32_t mode,
                                     uint64_t value, uint32_t operand) {
  if (ctx->block)
    return ctx->block->warpCollective(ctx->linearTid, WarpOp::Shfl, mode, mask, value, operand,
                                      nullptr);
  return value;
}

extern "C" uint32_t ptxjit_host_vote(const HostThreadCtx *ctx, uint32_t mask, int32_t mode,
                                     int32_t pred) {
  if (ctx->block)
    return static_cast<uint32_t>(ctx->block->warpCollective(ctx->linearTid, WarpOp::Vote, mode,
                                                            mask, uint64_t(pred != 0), 0, nullptr));
  bool p = pred != 0;
  switch (static_cast<ptxjit::runtime::VoteMode>(mode)) {
  case ptxjit::runtime::VoteMode::Eq:
    return 1;
  case ptxjit::runtime::VoteMode::Ballot:
    return p ? 1u << (ctx->linearTid % 32) : 0u;
  default:
    return p;
  }
}

extern "C" uint32_t ptxjit_host_match(const HostThreadCtx *ctx, uint32_t mask, int32_t mode,
                                      uint64_t value, int32_t *pred) {
  if (ctx->block)
    return static_cast<uint32_t>(
        ctx->block->warpCollective(ctx->linearTid, WarpOp::Match, mode, mask, value, 0, pred));
  if (pred)
    *pred = 1;
  return 1u << (ctx->linearTid % 32);
}

extern "C" uint32_t ptxjit_host_activemask(const HostThreadCtx *ctx, uint32_t site) {
  if (ctx->block)
    return ctx->block->activeMask(ctx->linearTid, site);
  // Threads run one after another: every lane of the warp that exists counts as active.
  uint32_t threads = ctx->ntid[0] * ctx->ntid[1] * ctx->ntid[2];
  uint32_t warpBase = ctx->linearTid - ctx->linearTid % 32;
  uint32_t lanes = std::min<uint32_t>(32, threads - warpBase);
  return lanes == 32 ? ~0u : (1u << lanes) - 1u;
}

extern "C" void ptxjit_host_exit_thread(const HostThreadCtx *ctx) {
  // Only JIT-compiled frames (no destructors) lie between here and runHostThread's setjmp.
  if (!ctx->exitJump)
    std::abort(); // a kernel marked as never raising raised: a compiler bug
  std::longjmp(*static_cast<std::jmp_buf *>(ctx->exitJump), 1);
}
