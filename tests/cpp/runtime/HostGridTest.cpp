// The host grid executor: every simulated thread runs exactly once with the right context.
#include "runtime/HostGrid.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace ptxjit::runtime;

namespace {

// What a test kernel records, reached through args[0].
struct Recorder {
  Dim3 grid, block;
  std::unique_ptr<std::atomic<int>[]> runs;       // per global thread
  std::unique_ptr<std::atomic<int>[]> blockSeq;   // per block: threads started so far
  std::unique_ptr<std::atomic<int>[]> orderError; // per global thread: 1 if out of x-fastest order
  std::atomic<int> badCtx{0};
  std::atomic<int> badArgs{0};
  void *expectedArg1 = nullptr;
  size_t blocks, threadsPerBlock;

  Recorder(Dim3 g, Dim3 b) : grid(g), block(b) {
    blocks = size_t(g.x) * g.y * g.z;
    threadsPerBlock = size_t(b.x) * b.y * b.z;
    runs.reset(new std::atomic<int>[blocks * threadsPerBlock]());
    blockSeq.reset(new std::atomic<int>[blocks]());
    orderError.reset(new std::atomic<int>[blocks * threadsPerBlock]());
  }
};

void recordingKernel(void **args, const HostThreadCtx *ctx) {
  auto *r = static_cast<Recorder *>(args[0]);
  if (args[1] != r->expectedArg1)
    r->badArgs.fetch_add(1);
  const Dim3 &g = r->grid, &b = r->block;
  bool ok = ctx->ntid[0] == b.x && ctx->ntid[1] == b.y && ctx->ntid[2] == b.z &&
            ctx->nctaid[0] == g.x && ctx->nctaid[1] == g.y && ctx->nctaid[2] == g.z &&
            ctx->tid[0] < b.x && ctx->tid[1] < b.y && ctx->tid[2] < b.z && ctx->ctaid[0] < g.x &&
            ctx->ctaid[1] < g.y && ctx->ctaid[2] < g.z;
  if (!ok) {
    r->badCtx.fetch_add(1);
    return;
  }
  size_t blockId = ctx->ctaid[0] + size_t(g.x) * (ctx->ctaid[1] + size_t(g.y) * ctx->ctaid[2]);
  size_t threadId = ctx->tid[0] + size_t(b.x) * (ctx->tid[1] + size_t(b.y) * ctx->tid[2]);
  size_t global = blockId * r->threadsPerBlock + threadId;
  r->runs[global].fetch_add(1);
  // Threads of a block run sequentially in x-fastest order: the n-th one started is thread n.
  int seq = r->blockSeq[blockId].fetch_add(1);
  if (size_t(seq) != threadId)
    r->orderError[global].store(1);
}

// Launches recordingKernel over grid x block and checks every thread ran once, in order.
void runAndCheck(Dim3 grid, Dim3 block) {
  Recorder r(grid, block);
  int marker = 0;
  r.expectedArg1 = &marker;
  void *args[2] = {&r, &marker};
  launchHost(recordingKernel, grid, block, args);
  EXPECT_EQ(r.badCtx.load(), 0);
  EXPECT_EQ(r.badArgs.load(), 0);
  size_t total = r.blocks * r.threadsPerBlock, wrongRuns = 0, outOfOrder = 0;
  for (size_t i = 0; i < total; ++i) {
    wrongRuns += r.runs[i].load() != 1;
    outOfOrder += r.orderError[i].load();
  }
  EXPECT_EQ(wrongRuns, 0u) << "threads not run exactly once";
  EXPECT_EQ(outOfOrder, 0u) << "threads of a block not in x-fastest order";
  for (size_t blk = 0; blk < r.blocks; ++blk)
    ASSERT_EQ(size_t(r.blockSeq[blk].load()), r.threadsPerBlock) << "block " << blk;
}

void countingKernel(void **args, const HostThreadCtx *) {
  static_cast<std::atomic<long> *>(args[0])->fetch_add(1, std::memory_order_relaxed);
}

} // namespace

TEST(HostThreadCtxLayout, MatchesTheKernelAbi) {
  EXPECT_EQ(offsetof(HostThreadCtx, tid), 0u);
  EXPECT_EQ(offsetof(HostThreadCtx, ntid), 12u);
  EXPECT_EQ(offsetof(HostThreadCtx, ctaid), 24u);
  EXPECT_EQ(offsetof(HostThreadCtx, nctaid), 36u);
  EXPECT_EQ(offsetof(HostThreadCtx, exitJump), 80u);
  EXPECT_EQ(sizeof(HostThreadCtx), 88u);
}

TEST(LaunchHost, SingleThread) { runAndCheck({1}, {1}); }

TEST(LaunchHost, OneBlockManyThreads) {
  runAndCheck({1}, {1024});
  runAndCheck({1}, {8, 4, 2});
}

TEST(LaunchHost, ThreeDimensionalGridAndBlock) { runAndCheck({3, 2, 2}, {4, 3, 2}); }

TEST(LaunchHost, ManyBlocksSpreadOverThePool) {
  runAndCheck({1000}, {64});
  runAndCheck({7, 300, 3}, {2, 1, 3});
  runAndCheck({5000}, {1});
}

TEST(LaunchHost, LargeGridCountsEveryThread) {
  std::atomic<long> count{0};
  void *args[1] = {&count};
  launchHost(countingKernel, {65536, 2, 3}, {1, 2, 2}, args);
  EXPECT_EQ(count.load(), 65536L * 2 * 3 * 4);
}

TEST(LaunchHost, ParallelismIsAtLeastOne) {
  unsigned p = hostParallelism();
  EXPECT_GE(p, 1u);
  EXPECT_EQ(p, hostParallelism());
}

namespace {
std::mutex gIdsMutex;
std::set<std::thread::id> gIds;
void idKernel(void **, const HostThreadCtx *ctx) {
  if (ctx->tid[0] == 0) {
    std::lock_guard<std::mutex> lock(gIdsMutex);
    gIds.insert(std::this_thread::get_id());
  }
  // Some work, so several workers get a chance to take blocks.
  volatile unsigned sink = 0;
  for (unsigned i = 0; i < 200; ++i)
    sink = sink + i;
}
} // namespace

TEST(LaunchHost, WorkerThreadsAreReusedAcrossLaunches) {
  {
    std::lock_guard<std::mutex> lock(gIdsMutex);
    gIds.clear();
  }
  for (int i = 0; i < 20; ++i)
    launchHost(idKernel, {256}, {32}, nullptr);
  std::lock_guard<std::mutex> lock(gIdsMutex);
  EXPECT_GE(gIds.size(), 1u);
  // Only the pool's workers and this thread ever run blocks: no thread per launch.
  EXPECT_LE(gIds.size(), size_t(hostParallelism()));
}

TEST(LaunchHost, ConcurrentLaunchesFromSeveralThreads) {
  constexpr int kThreads = 4, kLaunches = 30;
  std::atomic<long> counts[kThreads];
  for (auto &c : counts)
    c = 0;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        void *args[1] = {&counts[t]};
        for (int i = 0; i < kLaunches; ++i)
          launchHost(countingKernel, {unsigned(17 + t), 3}, {unsigned(5 + t)}, args);
      } catch (...) {
        failures.fetch_add(1);
      }
    });
  for (auto &th : threads)
    th.join();
  EXPECT_EQ(failures.load(), 0);
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(counts[t].load(), long(kLaunches) * (17 + t) * 3 * (5 + t)) << t;
}

namespace {
struct Nested {
  std::atomic<long> outer{0};
  std::atomic<long> inner{0};
};
void innerKernel(void **args, const HostThreadCtx *) {
  static_cast<Nested *>(args[0])->inner.fetch_add(1);
}
void outerKernel(void **args, const HostThreadCtx *ctx) {
  auto *n = static_cast<Nested *>(args[0]);
  n->outer.fetch_add(1);
  if (ctx->tid[0] == 0)
    launchHost(innerKernel, {3}, {2}, args); // runs inline: must not deadlock
}
} // namespace

TEST(LaunchHost, LaunchFromInsideAKernelRunsInline) {
  Nested n;
  void *args[1] = {&n};
  launchHost(outerKernel, {16}, {4}, args);
  EXPECT_EQ(n.outer.load(), 16 * 4);
  EXPECT_EQ(n.inner.load(), 16 * 3 * 2);
}

namespace {
void throwingKernel(void **args, const HostThreadCtx *ctx) {
  static_cast<std::atomic<long> *>(args[0])->fetch_add(1);
  if (ctx->ctaid[0] == 5 && ctx->tid[0] == 1)
    throw std::runtime_error("kernel failure in block 5");
}
} // namespace

TEST(LaunchHost, ExceptionFromTheKernelPropagatesAndThePoolSurvives) {
  std::atomic<long> count{0};
  void *args[1] = {&count};
  try {
    launchHost(throwingKernel, {64}, {4}, args);
    FAIL() << "no exception";
  } catch (const std::runtime_error &e) {
    EXPECT_STREQ(e.what(), "kernel failure in block 5");
  }
  EXPECT_GE(count.load(), 2);
  EXPECT_LE(count.load(), 64 * 4);
  // The pool still works afterwards.
  runAndCheck({50}, {8});
}

TEST(LaunchHost, InvalidConfigurationsThrowWithoutRunningAnything) {
  std::atomic<long> count{0};
  void *args[1] = {&count};
  EXPECT_THROW(launchHost(countingKernel, {0}, {1}, args), std::invalid_argument);
  EXPECT_THROW(launchHost(countingKernel, {1}, {0}, args), std::invalid_argument);
  EXPECT_THROW(launchHost(countingKernel, {1}, {1025}, args), std::invalid_argument);
  EXPECT_THROW(launchHost(countingKernel, {1}, {512, 4}, args), std::invalid_argument);
  EXPECT_THROW(launchHost(countingKernel, {1}, {1, 1, 65}, args), std::invalid_argument);
  EXPECT_THROW(launchHost(countingKernel, {1, 65536}, {1}, args), std::invalid_argument);
  EXPECT_THROW(launchHost(countingKernel, {1, 1, 65536}, {1}, args), std::invalid_argument);
  EXPECT_THROW(launchHost(countingKernel, {2147483648u}, {1}, args), std::invalid_argument);
  EXPECT_THROW(launchHost(nullptr, {1}, {1}, args), std::invalid_argument);
  EXPECT_EQ(count.load(), 0);
  try {
    launchHost(countingKernel, {1}, {2048}, args);
    FAIL() << "no exception";
  } catch (const std::invalid_argument &e) {
    EXPECT_NE(std::string(e.what()).find("invalid launch configuration: block (2048, 1, 1)"),
              std::string::npos)
        << e.what();
  }
}
