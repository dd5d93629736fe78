// The host backend's block scheduler: the threads of one block run as cooperatively scheduled
// fibers (one stack each; a hand-written context switch on x86-64, ucontext elsewhere) that
// switch only at barriers (cuda.syncthreads and its reductions) and warp collectives (shuffles,
// votes, matches, syncwarp). So shared memory, barriers and shuffles mean on the CPU what they
// mean on the GPU, and a barrier that some threads never reach is reported instead of hanging.
//
// Scheduling: fibers run in rank order (linearTid); each runs until it blocks at a barrier or a
// warp collective, or returns. A barrier releases when every thread of the block waits at one;
// a warp collective completes when every lane named by its mask (and present in the block) waits
// at a warp collective with the same mask; cuda.activemask() waits until no lane of its warp can
// run and returns the lanes waiting at the same call site. A thread that returns while others wait
// at a barrier (or is named by a waiting collective's mask), lanes of one group at different
// collectives, or a state where nothing can run, abort the block with HostSyncError.
//
// JIT-compiled kernels reach the scheduler through the extern "C" helpers below (the host JIT
// resolves them by address: see hostIntrinsicSymbols()).
#pragma once

#include "runtime/HostGrid.h"

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ptxjit::runtime {

// The threads of a block did not meet at a barrier or warp collective (the message names the
// block, the thread and the operation).
class HostSyncError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// Warp collectives, as the helpers pass them (`mode` selects the variant).
enum class WarpOp : int32_t { Sync = 0, Shfl = 1, Vote = 2, Match = 3, Active = 4 };
enum class ShflMode : int32_t { Idx = 0, Up = 1, Down = 2, Xor = 3 };
enum class VoteMode : int32_t { All = 0, Any = 1, Eq = 2, Ballot = 3 };
enum class MatchMode : int32_t { Any = 0, All = 1 };
// syncthreads variants: plain, and the reductions syncthreads_count/and/or; Grid: cuda.cg's
// grid.sync() (a block barrier whose release waits for every block of the launch).
enum class BarrierOp : int32_t { Sync = 0, Count = 1, And = 2, Or = 3, Grid = 4 };

// The grid-wide barrier of a launch whose blocks all run at once (HostLaunchOptions::gridSync):
// each block arrives once all its threads wait at grid.sync(). Thread-safe.
class HostGridBarrier {
public:
  explicit HostGridBarrier(uint64_t blocks) : blocks_(blocks) {}

  // A block arrives; returns when every block has, true then, or false when the launch was
  // abandoned meanwhile (why() says why).
  bool arriveAndWait();
  // Every thread of block `block` returned: when the other blocks all wait at grid.sync(), the
  // launch is abandoned (they would wait forever).
  void blockEnded(const std::string &block);
  // Abandons the launch (a block failed): every waiting block wakes with false.
  void abandon(const std::string &why);
  // The first reason the launch was abandoned; empty while it was not.
  std::string why() const;

private:
  void abandonLocked(const std::string &why);
  std::string endedMessage() const; // with mutex_ held

  mutable std::mutex mutex_;
  std::condition_variable released_;
  const uint64_t blocks_;
  uint64_t arrived_ = 0, ended_ = 0, generation_ = 0;
  std::string why_, firstEnded_;
};

// Runs blocks of a cooperative kernel. One runner per OS thread (not thread-safe); it keeps its
// fiber stacks between blocks. Not copyable.
class HostBlockRunner {
public:
  HostBlockRunner();
  ~HostBlockRunner();
  HostBlockRunner(const HostBlockRunner &) = delete;
  HostBlockRunner &operator=(const HostBlockRunner &) = delete;

  // Runs every thread of the block described by `base` (ntid, ctaid, nctaid, shared, dynShared
  // and dynSharedBytes are used; tid, linearTid and block are set per fiber) to completion.
  // Each fiber gets a stack of the default size plus `extraStackBytes`. Throws HostSyncError
  // (see the file comment), rethrows an exception thrown by `entry` (the block is abandoned),
  // std::bad_alloc / std::system_error when stacks cannot be mapped.
  void run(HostKernelEntry entry, void **args, const HostThreadCtx &base, size_t extraStackBytes);

  // The grid barrier of the launch whose block this runner runs (null: no grid.sync()).
  void setGridBarrier(HostGridBarrier *grid) { grid_ = grid; }

  // ---- called by the helpers, from inside a fiber of this runner ----
  // syncthreads (op Sync) or a reduction over `pred` (Count: threads with pred != 0; And/Or: 1
  // or 0). Returns the reduction's result (0 for Sync).
  int32_t barrier(uint32_t rank, BarrierOp op, int32_t pred);
  // A warp collective of lane rank % 32 with `mask`; `value` and `operand` depend on the op
  // (see HostBlock.cpp). Returns the lane's result; `*predOut` (if not null) receives the
  // match_all predicate.
  uint64_t warpCollective(uint32_t rank, WarpOp op, int32_t mode, uint32_t mask, uint64_t value,
                          uint32_t operand, int32_t *predOut);
  // cuda.activemask() at call site `site`: waits until no lane of the caller's warp can run
  // without waiting (each has returned or waits at a barrier or warp function), then returns
  // the lanes that wait at this same call site, i.e. the lanes that reached it together: the
  // CPU's model of the lanes the GPU would have converged there.
  uint32_t activeMask(uint32_t rank, uint32_t site);

  struct Fiber;

private:
  [[noreturn]] void failFromFiber(uint32_t rank, std::string message);
  void yieldToScheduler(uint32_t rank);
  void finished(uint32_t rank, bool raised);
  /// The last expected thread reached the barrier (or the others exited): computes the
  /// result and makes every waiting thread ready. `rank` names the thread in errors.
  int32_t releaseBarrier(uint32_t rank, BarrierOp op);
  void tryCompleteWarp(uint32_t rank);
  void tryResolveActive(uint32_t rank);
  std::string threadName(uint32_t rank) const;
  std::string blockName() const;
  void ensureStacks(size_t count, size_t stackBytes);
  static void trampoline();

  std::vector<Fiber> fibers_;
  void *mainCtx_ = nullptr; // ucontext_t of the scheduler
  char *stacks_ = nullptr;  // one mapping: [guard page][stack] per fiber
  size_t stackCount_ = 0, stackStride_ = 0, mappedBytes_ = 0;
  HostKernelEntry entry_ = nullptr;
  void **args_ = nullptr;
  uint32_t threads_ = 0, running_ = 0, live_ = 0, atBarrier_ = 0, done_ = 0;
  // Threads that ended by a raise (runHostThread returned true): they count as arrived at
  // the block's later barriers, as exited threads on the GPU.
  uint32_t exited_ = 0;
  std::string error_;
  std::exception_ptr exception_;
  HostThreadCtx base_{};
  HostGridBarrier *grid_ = nullptr;
};

// The helpers JIT-compiled host kernels call, by name, with their addresses; the compiler
// registers them with the host JIT.
std::vector<std::pair<const char *, void *>> hostIntrinsicSymbols();

} // namespace ptxjit::runtime

extern "C" {
// cuda.syncthreads().
void ptxjit_host_syncthreads(const ptxjit::runtime::HostThreadCtx *ctx);
// syncthreads_count/and/or: op is a BarrierOp.
int32_t ptxjit_host_syncthreads_reduce(const ptxjit::runtime::HostThreadCtx *ctx, int32_t op,
                                       int32_t pred);
// cuda.cg.this_grid().sync().
void ptxjit_host_grid_sync(const ptxjit::runtime::HostThreadCtx *ctx);
// cuda.syncwarp(mask).
void ptxjit_host_syncwarp(const ptxjit::runtime::HostThreadCtx *ctx, uint32_t mask);
// shfl_*_sync: mode is a ShflMode; value holds the bits (32-bit values zero-extended).
uint64_t ptxjit_host_shfl(const ptxjit::runtime::HostThreadCtx *ctx, uint32_t mask, int32_t mode,
                          uint64_t value, uint32_t operand);
// all/any/eq/ballot_sync: mode is a VoteMode; returns the bool (0/1) or the ballot.
uint32_t ptxjit_host_vote(const ptxjit::runtime::HostThreadCtx *ctx, uint32_t mask, int32_t mode,
                          int32_t pred);
// match_any/all_sync: mode is a MatchMode; *pred receives match_all's predicate.
uint32_t ptxjit_host_match(const ptxjit::runtime::HostThreadCtx *ctx, uint32_t mask, int32_t mode,
                           uint64_t value, int32_t *pred);
// cuda.activemask() at call site `site` (a number unique to the call in its module).
uint32_t ptxjit_host_activemask(const ptxjit::runtime::HostThreadCtx *ctx, uint32_t site);
// A raise: ends the calling thread (back to runHostThread, which must be running it).
[[noreturn]] void ptxjit_host_exit_thread(const ptxjit::runtime::HostThreadCtx *ctx);
}
