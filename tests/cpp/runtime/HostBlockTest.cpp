// The host block scheduler (runtime/HostBlock.h) through launchHost: fibers that meet at
// barriers and warp collectives, per-block shared memory, and the errors for barriers or
// collectives that not every thread reaches.
#include "runtime/HostBlock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

using namespace ptxjit::runtime;

namespace {

HostLaunchOptions cooperative(size_t staticShared = 0, size_t dynamicShared = 0) {
  HostLaunchOptions o;
  o.cooperative = true;
  o.staticSharedBytes = staticShared;
  o.dynamicSharedBytes = dynamicShared;
  return o;
}

uint32_t threadsOf(const HostThreadCtx *c) { return c->ntid[0] * c->ntid[1] * c->ntid[2]; }

// Each thread writes its rank and block into shared memory, waits at the barrier, and reads its
// neighbour's entry: right only when the barrier orders all writes before all reads.
void rotateKernel(void **args, const HostThreadCtx *c) {
  auto *out = static_cast<int64_t *>(args[0]);
  auto *s = reinterpret_cast<int64_t *>(c->shared);
  uint32_t n = threadsOf(c), t = c->linearTid;
  s[t] = t + 1000 * c->ctaid[0];
  ptxjit_host_syncthreads(c);
  out[c->ctaid[0] * n + t] = s[(t + 1) % n];
  ptxjit_host_syncthreads(c);
  s[t] = -1; // the next block must not see this block's values
}

} // namespace

TEST(HostThreadCtxLayout, SharedMemoryAndSchedulerFields) {
  EXPECT_EQ(offsetof(HostThreadCtx, shared), 48u);
  EXPECT_EQ(offsetof(HostThreadCtx, dynShared), 56u);
  EXPECT_EQ(offsetof(HostThreadCtx, block), 64u);
  EXPECT_EQ(offsetof(HostThreadCtx, dynSharedBytes), 72u);
  EXPECT_EQ(offsetof(HostThreadCtx, linearTid), 76u);
}

TEST(HostBlock, BarrierOrdersSharedMemoryAccesses) {
  for (unsigned threads : {1u, 7u, 64u, 1024u}) {
    const unsigned blocks = 40;
    std::vector<int64_t> out(blocks * threads, -7);
    void *args[1] = {out.data()};
    launchHost(rotateKernel, {blocks}, {threads}, args, cooperative(threads * 8));
    for (unsigned b = 0; b < blocks; ++b)
      for (unsigned t = 0; t < threads; ++t)
        ASSERT_EQ(out[b * threads + t], int64_t((t + 1) % threads + 1000 * b))
            << "block " << b << " thread " << t << " of " << threads;
  }
}

TEST(HostBlock, MultiDimensionalBlocksUseRankOrder) {
  std::vector<int64_t> out(3 * 4 * 5 * 2);
  void *args[1] = {out.data()};
  launchHost(rotateKernel, {2}, {3, 4, 5}, args, cooperative(60 * 8));
  for (size_t k = 0; k < out.size(); ++k)
    ASSERT_EQ(out[k], int64_t((k % 60 + 1) % 60 + 1000 * (k / 60)));
}

namespace {
void reduceKernel(void **args, const HostThreadCtx *c) {
  auto *out = static_cast<int32_t *>(args[0]);
  uint32_t t = c->linearTid, n = threadsOf(c);
  out[0 * n + t] = ptxjit_host_syncthreads_reduce(c, int32_t(BarrierOp::Count), t % 3 == 0);
  out[1 * n + t] = ptxjit_host_syncthreads_reduce(c, int32_t(BarrierOp::And), t < 1000);
  out[2 * n + t] = ptxjit_host_syncthreads_reduce(c, int32_t(BarrierOp::And), t != 5);
  out[3 * n + t] = ptxjit_host_syncthreads_reduce(c, int32_t(BarrierOp::Or), t == 9);
  out[4 * n + t] = ptxjit_host_syncthreads_reduce(c, int32_t(BarrierOp::Or), 0);
}
} // namespace

TEST(HostBlock, BarrierReductions) {
  const uint32_t n = 50;
  std::vector<int32_t> out(5 * n, -1);
  void *args[1] = {out.data()};
  launchHost(reduceKernel, {1}, {n}, args, cooperative());
  int32_t expected[5] = {17, 1, 0, 1, 0};
  for (int r = 0; r < 5; ++r)
    for (uint32_t t = 0; t < n; ++t)
      ASSERT_EQ(out[r * n + t], expected[r]) << "reduction " << r << " thread " << t;
}

namespace {
void earlyReturnKernel(void **args, const HostThreadCtx *c) {
  if (c->tid[0] == 3)
    return;
  ptxjit_host_syncthreads(c);
  static_cast<std::atomic<int> *>(args[0])->fetch_add(1);
}

void returnAfterOthersWaitKernel(void **args, const HostThreadCtx *c) {
  // The last thread returns while every other one already waits.
  if (c->linearTid == threadsOf(c) - 1)
    return;
  ptxjit_host_syncthreads(c);
}

void mixedBarrierKernel(void **, const HostThreadCtx *c) {
  if (c->linearTid < 4)
    ptxjit_host_syncthreads(c);
  else
    ptxjit_host_syncthreads_reduce(c, int32_t(BarrierOp::Count), 1);
}
} // namespace

TEST(HostBlock, BarrierNotReachedByEveryThreadIsAnError) {
  std::atomic<int> passed{0};
  void *args[1] = {&passed};
  try {
    launchHost(earlyReturnKernel, {1}, {8}, args, cooperative());
    FAIL() << "no error";
  } catch (const HostSyncError &e) {
    EXPECT_EQ(std::string(e.what()),
              "cuda.syncthreads() was not reached by every thread of block (0, 0, 0): thread "
              "(3, 0, 0) returned while 3 of 8 threads wait at the barrier");
  }
  EXPECT_EQ(passed.load(), 0); // nobody got past the barrier
  try {
    launchHost(returnAfterOthersWaitKernel, {2}, {4, 2}, nullptr, cooperative());
    FAIL() << "no error";
  } catch (const HostSyncError &e) {
    EXPECT_NE(std::string(e.what()).find("thread (3, 1, 0) returned while 7 of 8 threads wait"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(launchHost(mixedBarrierKernel, {1}, {8}, nullptr, cooperative()), HostSyncError);
  // The pool and the runners work afterwards.
  std::vector<int64_t> out(64 * 4);
  void *a2[1] = {out.data()};
  launchHost(rotateKernel, {4}, {64}, a2, cooperative(64 * 8));
  EXPECT_EQ(out[0], 1);
}

namespace {
// Shuffles of every mode, of a 64-bit value, over blocks with a partial last warp.
void shuffleKernel(void **args, const HostThreadCtx *c) {
  auto *out = static_cast<uint64_t *>(args[0]);
  uint32_t n = threadsOf(c), t = c->linearTid;
  uint64_t v = (uint64_t(t) << 33) | t;
  for (int mode = 0; mode < 4; ++mode) {
    uint32_t operand = mode == 0 ? 3 : mode == 3 ? 1 : 2;
    out[mode * n + t] = ptxjit_host_shfl(c, 0xffffffffu, mode, v, operand);
  }
}
} // namespace

TEST(HostBlock, Shuffles) {
  const uint32_t n = 48; // warp 1 has lanes 0..15 only
  std::vector<uint64_t> out(4 * n);
  void *args[1] = {out.data()};
  launchHost(shuffleKernel, {1}, {n}, args, cooperative());
  auto val = [](uint32_t t) { return (uint64_t(t) << 33) | t; };
  for (uint32_t t = 0; t < n; ++t) {
    uint32_t lane = t % 32, base = t - lane, lanes = t < 32 ? 32 : 16;
    auto inWarp = [&](int64_t l) { return l >= 0 && l < int64_t(lanes); };
    EXPECT_EQ(out[0 * n + t], val(base + 3)) << t;
    EXPECT_EQ(out[1 * n + t], inWarp(int64_t(lane) - 2) ? val(t - 2) : val(t)) << t;
    EXPECT_EQ(out[2 * n + t], inWarp(lane + 2) ? val(t + 2) : val(t)) << t;
    EXPECT_EQ(out[3 * n + t], inWarp(lane ^ 1) ? val(t ^ 1) : val(t)) << t;
  }
}

namespace {
void voteMatchKernel(void **args, const HostThreadCtx *c) {
  auto *out = static_cast<uint32_t *>(args[0]);
  uint32_t t = c->linearTid;
  int32_t p = t % 4 == 1;
  out[0 * 64 + t] = ptxjit_host_vote(c, 0xffffffffu, 0, 1);
  out[1 * 64 + t] = ptxjit_host_vote(c, 0xffffffffu, 1, p);
  out[2 * 64 + t] = ptxjit_host_vote(c, 0xffffffffu, 2, p);
  out[3 * 64 + t] = ptxjit_host_vote(c, 0xffffffffu, 3, p);
  int32_t pred = -1;
  out[4 * 64 + t] = ptxjit_host_match(c, 0xffffffffu, 0, t % 2, &pred);
  out[5 * 64 + t] = ptxjit_host_match(c, 0xffffffffu, 1, t / 32, &pred);
  out[6 * 64 + t] = uint32_t(pred);
  ptxjit_host_syncwarp(c, 0xffffffffu);
  out[7 * 64 + t] = ptxjit_host_activemask(c, 0);
}
} // namespace

TEST(HostBlock, VotesMatchesAndMasks) {
  std::vector<uint32_t> out(8 * 64);
  void *args[1] = {out.data()};
  launchHost(voteMatchKernel, {1}, {64}, args, cooperative());
  for (uint32_t t = 0; t < 64; ++t) {
    EXPECT_EQ(out[0 * 64 + t], 1u);
    EXPECT_EQ(out[1 * 64 + t], 1u);
    EXPECT_EQ(out[2 * 64 + t], 0u);
    EXPECT_EQ(out[3 * 64 + t], 0x22222222u);
    EXPECT_EQ(out[4 * 64 + t], t % 2 ? 0xaaaaaaaau : 0x55555555u);
    EXPECT_EQ(out[5 * 64 + t], 0xffffffffu);
    EXPECT_EQ(out[6 * 64 + t], 1u);
    EXPECT_EQ(out[7 * 64 + t], 0xffffffffu);
  }
}

namespace {
void partialMaskKernel(void **args, const HostThreadCtx *c) {
  auto *out = static_cast<uint64_t *>(args[0]);
  uint32_t t = c->linearTid;
  if (t % 32 >= 16)
    return; // the upper half of each warp takes no part
  out[t] = ptxjit_host_shfl(c, 0x0000ffffu, 3, t, 8);
  out[64 + t] = ptxjit_host_activemask(c, 1);
}

// Lanes reach activemask in two branches: each call site sees the lanes that reached it.
void divergentActiveKernel(void **args, const HostThreadCtx *c) {
  auto *out = static_cast<uint32_t *>(args[0]);
  uint32_t t = c->linearTid;
  if (t % 3 == 0)
    out[t] = ptxjit_host_activemask(c, 7);
  else if (t % 3 == 1)
    out[t] = ptxjit_host_activemask(c, 8);
}

void missingLaneKernel(void **, const HostThreadCtx *c) {
  if (c->linearTid == 7)
    return;
  ptxjit_host_shfl(c, 0xffffffffu, 0, 1, 0);
}

void deadlockKernel(void **, const HostThreadCtx *c) {
  if (c->linearTid == 0)
    ptxjit_host_syncthreads(c);
  else
    ptxjit_host_syncwarp(c, 0xffffffffu);
}

void differentCollectivesKernel(void **, const HostThreadCtx *c) {
  if (c->linearTid % 2)
    ptxjit_host_syncwarp(c, 0xffffffffu);
  else
    ptxjit_host_vote(c, 0xffffffffu, 0, 1);
}
} // namespace

TEST(HostBlock, PartialMasksAndCollectiveErrors) {
  std::vector<uint64_t> out(128, 0);
  void *args[1] = {out.data()};
  launchHost(partialMaskKernel, {1}, {64}, args, cooperative());
  for (uint32_t t = 0; t < 64; ++t)
    if (t % 32 < 16) {
      EXPECT_EQ(out[t], uint64_t(t ^ 8));
      EXPECT_EQ(out[64 + t], 0xffffu); // lanes 16..31 returned
    }
  std::vector<uint32_t> act(40, 0);
  void *actArgs[1] = {act.data()};
  launchHost(divergentActiveKernel, {1}, {40}, actArgs, cooperative());
  for (uint32_t t = 0; t < 40; ++t) {
    uint32_t base = t - t % 32, lanes = t < 32 ? 32 : 8, expected = 0;
    for (uint32_t l = 0; l < lanes; ++l)
      if ((base + l) % 3 == t % 3)
        expected |= 1u << l;
    EXPECT_EQ(act[t], t % 3 == 2 ? 0u : expected) << t;
  }
  try {
    launchHost(missingLaneKernel, {1}, {32}, nullptr, cooperative());
    FAIL() << "no error";
  } catch (const HostSyncError &e) {
    EXPECT_EQ(std::string(e.what()),
              "cuda.shfl_sync() with mask 0xffffffff in block (0, 0, 0): lane 7 (thread (7, 0, "
              "0)) returned without calling it");
  }
  try {
    launchHost(deadlockKernel, {1}, {32}, nullptr, cooperative());
    FAIL() << "no error";
  } catch (const HostSyncError &e) {
    EXPECT_NE(std::string(e.what()).find("deadlock in block (0, 0, 0): 1 thread(s) wait at a "
                                         "barrier and 31 at a warp collective"),
              std::string::npos)
        << e.what();
  }
  try {
    launchHost(differentCollectivesKernel, {1}, {32}, nullptr, cooperative());
    FAIL() << "no error";
  } catch (const HostSyncError &e) {
    EXPECT_NE(std::string(e.what()).find("reached different warp functions"), std::string::npos)
        << e.what();
  }
}

namespace {
void sharedLayoutKernel(void **args, const HostThreadCtx *c) {
  auto *out = static_cast<uint64_t *>(args[0]);
  if (c->linearTid != 0)
    return;
  unsigned char first = static_cast<unsigned char>(c->shared[0]);
  unsigned char dyn = static_cast<unsigned char>(c->dynShared[c->dynSharedBytes - 1]);
  uint32_t b = c->ctaid[0];
  out[4 * b + 0] = reinterpret_cast<uintptr_t>(c->shared) % 16;
  out[4 * b + 1] = uint64_t(c->dynShared - c->shared);
  out[4 * b + 2] = c->dynSharedBytes;
  out[4 * b + 3] = first == 0xff && dyn == 0xff; // every block starts from the fill pattern
  std::memset(c->shared, 0, 20);
  std::memset(c->dynShared, 0, c->dynSharedBytes);
}
} // namespace

TEST(HostBlock, SharedMemoryLayoutAndFill) {
  for (bool coop : {false, true}) {
    std::vector<uint64_t> out(4 * 30);
    void *args[1] = {out.data()};
    HostLaunchOptions o = cooperative(20, 100);
    o.cooperative = coop;
    launchHost(sharedLayoutKernel, {30}, {2}, args, o);
    for (int b = 0; b < 30; ++b) {
      EXPECT_EQ(out[4 * b + 0], 0u);
      EXPECT_EQ(out[4 * b + 1], 32u); // static bytes rounded up to 16
      EXPECT_EQ(out[4 * b + 2], 100u);
      EXPECT_EQ(out[4 * b + 3], 1u) << "block " << b;
    }
  }
  EXPECT_THROW(
      launchHost(sharedLayoutKernel, {1}, {1}, nullptr, cooperative(0, kHostMaxSharedBytes + 1)),
      std::invalid_argument);
}

namespace {
void throwingFiberKernel(void **, const HostThreadCtx *c) {
  ptxjit_host_syncthreads(c);
  if (c->linearTid == 2 && c->ctaid[0] == 1)
    throw std::runtime_error("thrown in a fiber");
}

void deepStackKernel(void **args, const HostThreadCtx *c) {
  // Uses most of a 1 MiB stack extension, then meets the others at a barrier.
  volatile char big[900 * 1024];
  big[0] = char(c->linearTid);
  big[sizeof(big) - 1] = big[0];
  ptxjit_host_syncthreads(c);
  static_cast<std::atomic<int> *>(args[0])->fetch_add(big[sizeof(big) - 1] == char(c->linearTid));
}
} // namespace

TEST(HostBlock, ExceptionsAndLargeStacks) {
  try {
    launchHost(throwingFiberKernel, {3}, {4}, nullptr, cooperative());
    FAIL() << "no exception";
  } catch (const std::runtime_error &e) {
    EXPECT_STREQ(e.what(), "thrown in a fiber");
  }
  std::atomic<int> ok{0};
  void *args[1] = {&ok};
  HostLaunchOptions o = cooperative();
  o.extraStackBytes = 1 << 20;
  launchHost(deepStackKernel, {2}, {8}, args, o);
  EXPECT_EQ(ok.load(), 16);
}

// ---- Grid synchronization (HostLaunchOptions::gridSync, cuda.cg) ----

namespace {

HostLaunchOptions gridSync() {
  HostLaunchOptions o = cooperative();
  o.gridSync = true;
  return o;
}

// Each thread writes its global index, waits for the whole grid, then reads the element the
// thread at the mirrored position wrote (in another block): right only when every block's
// writes come before every block's reads.
void mirrorKernel(void **args, const HostThreadCtx *c) {
  auto *a = static_cast<int64_t *>(args[0]);
  auto *out = static_cast<int64_t *>(args[1]);
  const int64_t n = int64_t(c->nctaid[0]) * c->ntid[0];
  const int64_t i = int64_t(c->ctaid[0]) * c->ntid[0] + c->tid[0];
  for (int round = 0; round < 3; ++round) { // the barrier is reusable
    a[i] = i + 1000 * round;
    ptxjit_host_grid_sync(c);
    out[i] = a[n - 1 - i];
    ptxjit_host_grid_sync(c);
  }
}

// Block 1 returns at once; the others wait at the grid barrier.
void blockSkipsKernel(void **, const HostThreadCtx *c) {
  if (c->ctaid[0] == 1)
    return;
  ptxjit_host_grid_sync(c);
}

} // namespace

TEST(HostGridSync, EveryBlockMeetsAtTheGridBarrier) {
  for (unsigned blocks : {1u, 3u, 16u}) {
    const unsigned threads = 32;
    std::vector<int64_t> a(blocks * threads, -1), out(blocks * threads, -1);
    void *args[2] = {a.data(), out.data()};
    launchHost(mirrorKernel, {blocks}, {threads}, args, gridSync());
    const int64_t n = blocks * threads;
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(out[i], n - 1 - i + 2000) << "element " << i << " of " << n;
  }
}

TEST(HostGridSync, MostBlocksAndTooLargeGrids) {
  EXPECT_EQ(hostMaxCooperativeBlocks(32), 256);
  EXPECT_EQ(hostMaxCooperativeBlocks(256), 32);
  EXPECT_EQ(hostMaxCooperativeBlocks(1024), 8);
  EXPECT_EQ(hostMaxCooperativeBlocks(8193), 1);
  EXPECT_THROW(hostMaxCooperativeBlocks(0), std::invalid_argument);
  try {
    launchHost(blockSkipsKernel, {33}, {256}, nullptr, gridSync());
    FAIL() << "no error";
  } catch (const std::invalid_argument &e) {
    EXPECT_NE(std::string(e.what()).find("CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"),
              std::string::npos)
        << e.what();
  }
}

TEST(HostGridSync, ABlockThatEndsWithoutSyncingIsAnErrorNotAHang) {
  try {
    launchHost(blockSkipsKernel, {4}, {8}, nullptr, gridSync());
    FAIL() << "no error";
  } catch (const HostSyncError &e) {
    EXPECT_NE(std::string(e.what()).find("block (1, 0, 0) ended without reaching it (1 of 4 "
                                         "blocks did) while 3 wait at it"),
              std::string::npos)
        << e.what();
  }
  // A thread that returns while its block waits at grid.sync() is the block's error.
  std::atomic<int> passed{0};
  void *counter[1] = {&passed};
  EXPECT_THROW(launchHost(earlyReturnKernel, {2}, {8}, counter, gridSync()), HostSyncError);
  EXPECT_EQ(passed.load(), 0);
  std::vector<int64_t> a(64), out(64);
  void *args[2] = {a.data(), out.data()};
  launchHost(mirrorKernel, {2}, {32}, args, gridSync()); // later launches work
  EXPECT_EQ(out[0], 63 + 2000);
}
