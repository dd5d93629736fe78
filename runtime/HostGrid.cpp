#include "runtime/HostGrid.h"

#include "runtime/HostBlock.h"
#include "runtime/Workers.h"

#include <algorithm>
#include <atomic>
#include <csetjmp>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace ptxjit::runtime {
namespace {

// One launch: blocks are handed out in chunks through an atomic counter.
struct Job {
  HostKernelEntry entry;
  Dim3 grid, block;
  void **args;
  HostLaunchOptions opts;
  uint64_t totalBlocks;
  uint64_t chunk;
  std::atomic<uint64_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex errorMutex;
  std::exception_ptr error;
};

// True while this thread runs blocks of a launch (nested launches then run inline).
thread_local bool tlsRunningBlocks = false;

// Per OS thread: the block's shared memory and the fiber scheduler, reused across blocks and
// launches.
struct WorkerState {
  char *shared = nullptr;
  size_t sharedCapacity = 0;
  std::unique_ptr<HostBlockRunner> runner;

  ~WorkerState() { ::operator delete(shared, std::align_val_t(kHostSharedAlign)); }

  char *sharedMemory(size_t bytes) {
    if (bytes > sharedCapacity) {
      ::operator delete(shared, std::align_val_t(kHostSharedAlign));
      shared = nullptr;
      sharedCapacity = 0;
      shared = static_cast<char *>(::operator new(bytes, std::align_val_t(kHostSharedAlign)));
      sharedCapacity = bytes;
    }
    return shared;
  }
};

thread_local WorkerState tlsWorker;

size_t alignUp(size_t n, size_t a) { return (n + a - 1) / a * a; }

// The context of `job`'s threads that every block shares (block and grid sizes, the block's
// shared memory in `ws`, sized for the job); `sharedBytes` receives that memory's size.
HostThreadCtx jobContext(const Job &job, WorkerState &ws, size_t &sharedBytes) {
  HostThreadCtx ctx{};
  ctx.ntid[0] = job.block.x, ctx.ntid[1] = job.block.y, ctx.ntid[2] = job.block.z;
  ctx.nctaid[0] = job.grid.x, ctx.nctaid[1] = job.grid.y, ctx.nctaid[2] = job.grid.z;
  const size_t staticBytes = alignUp(job.opts.staticSharedBytes, 16);
  sharedBytes = staticBytes + alignUp(job.opts.dynamicSharedBytes, 16);
  if (sharedBytes) {
    char *mem = ws.sharedMemory(sharedBytes);
    ctx.shared = job.opts.staticSharedBytes ? mem : nullptr;
    ctx.dynShared = mem + staticBytes;
  }
  ctx.dynSharedBytes = static_cast<uint32_t>(job.opts.dynamicSharedBytes);
  return ctx;
}

// Block `b` (x fastest) of `job`'s grid in ctx.ctaid.
void setBlockIndex(HostThreadCtx &ctx, const Job &job, uint64_t b) {
  const uint64_t rest = b / job.grid.x;
  ctx.ctaid[0] = static_cast<uint32_t>(b % job.grid.x);
  ctx.ctaid[1] = static_cast<uint32_t>(rest % job.grid.y);
  ctx.ctaid[2] = static_cast<uint32_t>(rest / job.grid.y);
}

void runBlocks(Job &job) noexcept {
  bool wasRunning = tlsRunningBlocks;
  tlsRunningBlocks = true;
  // A nested launch (from inside a kernel) must not reuse this thread's shared memory or
  // scheduler, which the outer block still uses.
  WorkerState nestedState;
  WorkerState &ws = wasRunning ? nestedState : tlsWorker;
  try {
    size_t sharedBytes = 0;
    HostThreadCtx ctx = jobContext(job, ws, sharedBytes);
    if (job.opts.cooperative && !ws.runner)
      ws.runner = std::make_unique<HostBlockRunner>();
    const unsigned bx = job.block.x, by = job.block.y, bz = job.block.z;
    while (!job.failed.load(std::memory_order_relaxed)) {
      uint64_t begin = job.next.fetch_add(job.chunk, std::memory_order_relaxed);
      if (begin >= job.totalBlocks)
        break;
      uint64_t end = std::min(begin + job.chunk, job.totalBlocks);
      for (uint64_t b = begin; b < end; ++b) {
        setBlockIndex(ctx, job, b);
        if (sharedBytes)
          std::memset(ws.shared, 0xff, sharedBytes);
        if (job.opts.cooperative) {
          ws.runner->run(job.entry, job.args, ctx, job.opts.extraStackBytes);
          continue;
        }
        uint32_t rank = 0;
        for (unsigned z = 0; z < bz; ++z) {
          ctx.tid[2] = z;
          for (unsigned y = 0; y < by; ++y) {
            ctx.tid[1] = y;
            for (unsigned x = 0; x < bx; ++x) {
              ctx.tid[0] = x;
              ctx.linearTid = rank++;
              if (job.opts.threadsMayExit)
                runHostThread(job.entry, job.args, &ctx);
              else
                job.entry(job.args, &ctx);
            }
          }
        }
      }
    }
  } catch (...) {
    std::lock_guard<std::mutex> lock(job.errorMutex);
    if (!job.error)
      job.error = std::current_exception();
    job.failed.store(true, std::memory_order_relaxed);
  }
  tlsRunningBlocks = wasRunning;
}

// A launch with opts.gridSync: every block at once, each on an OS thread of its own (the caller
// runs the last) with a scheduler of its own, meeting at `barrier` on grid.sync().
void runAllBlocksAtOnce(Job &job) {
  const uint64_t n = job.totalBlocks;
  HostGridBarrier barrier(n);
  auto runBlock = [&](uint64_t b) noexcept {
    HostThreadCtx index{};
    setBlockIndex(index, job, b);
    const std::string name = "block (" + std::to_string(index.ctaid[0]) + ", " +
                             std::to_string(index.ctaid[1]) + ", " +
                             std::to_string(index.ctaid[2]) + ")";
    bool wasRunning = tlsRunningBlocks;
    tlsRunningBlocks = true;
    try {
      WorkerState ws; // this block's shared memory and scheduler
      size_t sharedBytes = 0;
      HostThreadCtx ctx = jobContext(job, ws, sharedBytes);
      setBlockIndex(ctx, job, b);
      if (sharedBytes)
        std::memset(ws.shared, 0xff, sharedBytes);
      ws.runner = std::make_unique<HostBlockRunner>();
      ws.runner->setGridBarrier(&barrier);
      ws.runner->run(job.entry, job.args, ctx, job.opts.extraStackBytes);
      barrier.blockEnded(name);
    } catch (...) {
      // Recorded before the others are woken, so the launch reports this cause, not their
      // report of being abandoned because of it.
      std::exception_ptr error = std::current_exception();
      std::string why = name + " failed";
      try {
        std::rethrow_exception(error);
      } catch (const std::exception &e) {
        why += std::string(": ") + e.what();
      } catch (...) {
      }
      {
        std::lock_guard<std::mutex> lock(job.errorMutex);
        if (!job.error)
          job.error = error;
      }
      barrier.abandon(why);
    }
    tlsRunningBlocks = wasRunning;
  };
  std::vector<std::thread> threads;
  threads.reserve(n - 1);
  for (uint64_t b = 0; b + 1 < n; ++b) {
    try {
      threads.emplace_back(runBlock, b);
    } catch (const std::system_error &e) {
      barrier.abandon(std::string("could not start a thread for every block: ") + e.what());
      break;
    }
  }
  if (threads.size() == n - 1)
    runBlock(n - 1);
  for (std::thread &t : threads)
    t.join();
  if (job.error)
    std::rethrow_exception(job.error);
  if (std::string why = barrier.why(); !why.empty()) // no block failed: threads did not start
    throw HostSyncError(why);
}

} // namespace

int hostMaxCooperativeBlocks(int threadsPerBlock) {
  if (threadsPerBlock < 1)
    throw std::invalid_argument("max_cooperative_grid_blocks: a block needs at least one thread");
  return std::max(1, std::min(256, 8192 / threadsPerBlock));
}

bool runHostThread(HostKernelEntry entry, void **args, HostThreadCtx *ctx) {
  std::jmp_buf exitJump;
  ctx->exitJump = &exitJump;
  if (setjmp(exitJump) == 0) {
    entry(args, ctx);
    ctx->exitJump = nullptr;
    return false;
  }
  ctx->exitJump = nullptr;
  return true;
}

void launchHost(HostKernelEntry entry, Dim3 grid, Dim3 block, void **args,
                const HostLaunchOptions &opts) {
  if (!entry)
    throw std::invalid_argument("launchHost: the kernel entry point is null");
  static const LaunchLimits kLimits{};
  validateLaunch(grid, block, kLimits);
  if (opts.staticSharedBytes > kHostMaxSharedBytes ||
      opts.dynamicSharedBytes > kHostMaxSharedBytes - opts.staticSharedBytes)
    throw std::invalid_argument(
        "invalid launch configuration: " + std::to_string(opts.staticSharedBytes) +
        " bytes of static and " + std::to_string(opts.dynamicSharedBytes) +
        " bytes of dynamic shared memory per block; the CPU backend allows at most " +
        std::to_string(kHostMaxSharedBytes) + " in all");

  Job job;
  job.entry = entry;
  job.grid = grid;
  job.block = block;
  job.args = args;
  job.opts = opts;
  job.totalBlocks = uint64_t(grid.x) * grid.y * grid.z;
  job.chunk = 1;

  if (opts.gridSync) {
    const uint64_t threads = uint64_t(block.x) * block.y * block.z;
    const int most = hostMaxCooperativeBlocks(static_cast<int>(threads));
    if (job.totalBlocks > static_cast<uint64_t>(most))
      throw std::invalid_argument(
          "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE: a kernel that synchronizes its grid "
          "(cuda.cg) runs every block at once; " +
          std::to_string(job.totalBlocks) + " blocks of " + std::to_string(threads) +
          " threads asked, the CPU backend runs at most " + std::to_string(most) +
          " (max_cooperative_grid_blocks)");
    runAllBlocksAtOnce(job);
    return;
  }
  if (job.totalBlocks == 1 || tlsRunningBlocks) {
    runBlocks(job);
  } else {
    Workers &w = Workers::get();
    unsigned helpers = static_cast<unsigned>(std::min<uint64_t>(w.count(), job.totalBlocks - 1));
    if (helpers == 0) {
      runBlocks(job);
    } else {
      // About 8 chunks per participant: balances load without contending on the counter.
      job.chunk = std::max<uint64_t>(1, job.totalBlocks / (uint64_t(helpers + 1) * 8));
      w.run(helpers + 1, [&job](unsigned) { runBlocks(job); });
    }
  }
  if (job.error)
    std::rethrow_exception(job.error);
}

unsigned hostParallelism() { return Workers::get().count() + 1; }

} // namespace ptxjit::runtime
