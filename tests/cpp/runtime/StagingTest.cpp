// Host arrays staged through the pinned ring (runtime/Staging.h, runtime/PinnedRing.h): large
// arrays travel in waves through a device's pinned memory once its background set-up is done; the
// first large staging, a staging while another holds the ring, small arrays and pinned ones take
// the driver's path. The plain copies (copyHostToDevice, copyDeviceToHost: cuda.to_device,
// copy_to_host) take the ring for one copy, by the same rules, and not on a captured stream.
// Against the fake driver, whose device memory is host memory and which counts the copies from and
// to pinned memory (tests/cpp/fakecuda).
#include "runtime/Staging.h"
#include "runtime/Device.h"
#include "runtime/Driver.h"
#include "runtime/Graph.h"
#include "runtime/Memory.h"
#include "runtime/Stream.h"

#include "tests/cpp/fakecuda/Scenario.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

using namespace ptxjit::runtime;
using namespace ptxjit::testing;

namespace {

// Bytes that are not a whole number of chunks or waves: several waves and a short last one.
constexpr size_t kBig = (size_t(19) << 20) + 12345;

std::vector<unsigned char> pattern(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<unsigned char>((i * 131u + seed * 7u + (i >> 20)) & 0xff);
  return v;
}

// Waits for the current device's ring to be set up (its background job), up to five seconds.
bool ringReadyWithinFiveSeconds() {
  for (int i = 0; i < 500 && !pinnedStagingReady(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return pinnedStagingReady();
}

// Stages `host` (in and back) on `staging`, then plays the kernel: the device copy (host memory
// in the fake driver) gets `changed`.
void roundTrip(HostStaging &staging, std::vector<unsigned char> &host,
               const std::vector<unsigned char> &changed) {
  int64_t shape = static_cast<int64_t>(host.size()), stride = 1;
  uint64_t dev = staging.stage(reinterpret_cast<uint64_t>(host.data()), 1, &shape, &stride, 1,
                               /*copyIn=*/true, /*copyBack=*/true);
  SCENARIO_CHECK(std::memcmp(reinterpret_cast<void *>(dev), host.data(), host.size()) == 0);
  std::memcpy(reinterpret_cast<void *>(dev), changed.data(), changed.size());
}

[[noreturn]] void ringScenario() {
  useFakeDriver();
  auto pinned = fake<int (*)(int)>("fakeCudaPinnedAsyncCopies");
  Device::current();
  SCENARIO_CHECK(!pinnedStagingReady());

  // The first large staging takes the driver's path and starts the ring's set-up.
  std::vector<unsigned char> a = pattern(kBig, 1), changedA = pattern(kBig, 2);
  {
    HostStaging staging(nullptr);
    roundTrip(staging, a, changedA);
    staging.finish();
  }
  SCENARIO_CHECK(a == changedA);
  SCENARIO_CHECK(pinned(0) == 0 && pinned(1) == 0);
  SCENARIO_CHECK(ringReadyWithinFiveSeconds());

  // Then large arrays go through it, in and back, on a stream or the legacy one; a small one
  // beside them still takes the driver's path.
  for (CUstream stream : {static_cast<CUstream>(nullptr), CU_STREAM_PER_THREAD}) {
    std::vector<unsigned char> b = pattern(kBig, 3), changedB = pattern(kBig, 4);
    std::vector<unsigned char> c = pattern(4096, 5), changedC = pattern(4096, 6);
    int in = pinned(0), back = pinned(1);
    HostStaging staging(stream);
    roundTrip(staging, b, changedB);
    roundTrip(staging, c, changedC);
    SCENARIO_CHECK(pinned(0) > in);
    staging.finish();
    SCENARIO_CHECK(pinned(1) > back);
    SCENARIO_CHECK(b == changedB);
    SCENARIO_CHECK(c == changedC);
  }

  // An output only (nothing copied in) comes back through the ring too.
  {
    std::vector<unsigned char> out(kBig, 0), changed = pattern(kBig, 7);
    int in = pinned(0), back = pinned(1);
    int64_t shape = static_cast<int64_t>(out.size()), stride = 1;
    HostStaging staging(nullptr);
    uint64_t dev = staging.stage(reinterpret_cast<uint64_t>(out.data()), 1, &shape, &stride, 1,
                                 /*copyIn=*/false, /*copyBack=*/true);
    std::memcpy(reinterpret_cast<void *>(dev), changed.data(), changed.size());
    staging.finish();
    SCENARIO_CHECK(pinned(0) == in && pinned(1) > back);
    SCENARIO_CHECK(out == changed);
  }

  // While one call holds the ring, another takes the driver's path; a call that ends without
  // finish() (an error path) gives the ring back.
  {
    std::vector<unsigned char> d = pattern(kBig, 8), changedD = pattern(kBig, 9);
    std::vector<unsigned char> e = pattern(kBig, 10), changedE = pattern(kBig, 11);
    auto holder = std::make_unique<HostStaging>(nullptr);
    roundTrip(*holder, d, changedD);
    int in = pinned(0), back = pinned(1);
    {
      HostStaging other(nullptr);
      roundTrip(other, e, changedE);
      other.finish();
    }
    SCENARIO_CHECK(pinned(0) == in && pinned(1) == back);
    SCENARIO_CHECK(e == changedE);
    holder.reset(); // without finish(): d is not copied back
    SCENARIO_CHECK(d == pattern(kBig, 8));
    std::vector<unsigned char> f = pattern(kBig, 12), changedF = pattern(kBig, 13);
    HostStaging again(nullptr);
    roundTrip(again, f, changedF);
    again.finish();
    SCENARIO_CHECK(pinned(0) > in && pinned(1) > back);
    SCENARIO_CHECK(f == changedF);
  }

  // Pinned memory of the caller's (cuda.pinned_array) needs no ring: the driver copies it at
  // full speed (on the legacy stream, with its synchronous copies).
  {
    auto hostAlloc = fake<int (*)(void **, size_t, unsigned)>("cuMemHostAlloc");
    auto copies = fake<int (*)(int)>("fakeCudaCopyCalls");
    void *p = nullptr;
    SCENARIO_CHECK(hostAlloc(&p, kBig, 0) == 0);
    auto *h = static_cast<unsigned char *>(p);
    std::vector<unsigned char> init = pattern(kBig, 15), changed = pattern(kBig, 16);
    std::memcpy(h, init.data(), kBig);
    int in = pinned(0), back = pinned(1), syncIn = copies(1);
    int64_t shape = static_cast<int64_t>(kBig), stride = 1;
    HostStaging staging(nullptr);
    uint64_t dev = staging.stage(reinterpret_cast<uint64_t>(h), 1, &shape, &stride, 1,
                                 /*copyIn=*/true, /*copyBack=*/true);
    SCENARIO_CHECK(std::memcmp(reinterpret_cast<void *>(dev), init.data(), kBig) == 0);
    std::memcpy(reinterpret_cast<void *>(dev), changed.data(), kBig);
    staging.finish();
    SCENARIO_CHECK(copies(1) == syncIn + 1);
    SCENARIO_CHECK(pinned(0) == in && pinned(1) == back);
    SCENARIO_CHECK(std::memcmp(h, changed.data(), kBig) == 0);
  }

  // A view with a negative stride: its extent lies below the data pointer.
  {
    std::vector<unsigned char> g = pattern(kBig, 14);
    const std::vector<unsigned char> before = g;
    int64_t shape = static_cast<int64_t>(g.size()), stride = -1;
    HostStaging staging(nullptr);
    uint64_t dev = staging.stage(reinterpret_cast<uint64_t>(g.data() + g.size() - 1), 1, &shape,
                                 &stride, 1, /*copyIn=*/true, /*copyBack=*/true);
    SCENARIO_CHECK(*reinterpret_cast<unsigned char *>(dev) == before.back());
    *reinterpret_cast<unsigned char *>(dev - (g.size() - 1)) = 0xAB; // element g.size() - 1
    staging.finish();
    SCENARIO_CHECK(g[0] == 0xAB);
    SCENARIO_CHECK(std::memcmp(g.data() + 1, before.data() + 1, g.size() - 1) == 0);
  }
  std::exit(0);
}

// The plain copies of a large pageable range: through the ring once it is ready, for one copy
// each (it is free again afterwards); the driver's path before, while this thread's staging holds
// the ring, and on a stream being captured into a graph (a graph must not replay the ring's bytes).
[[noreturn]] void copiesScenario() {
  useFakeDriver();
  auto pinned = fake<int (*)(int)>("fakeCudaPinnedAsyncCopies");
  Device::current();
  std::vector<unsigned char> device(kBig); // the fake's device memory is host memory
  const auto dev = reinterpret_cast<CUdeviceptr>(device.data());

  std::vector<unsigned char> a = pattern(kBig, 1);
  copyHostToDevice(dev, a.data(), kBig); // starts the ring's set-up; the driver copies
  SCENARIO_CHECK(device == a);
  SCENARIO_CHECK(pinned(0) == 0 && pinned(1) == 0);
  SCENARIO_CHECK(ringReadyWithinFiveSeconds());

  for (CUstream stream : {static_cast<CUstream>(nullptr), CU_STREAM_PER_THREAD}) {
    std::vector<unsigned char> b = pattern(kBig, 2), back(kBig, 0);
    int in = pinned(0), out = pinned(1);
    copyHostToDevice(dev, b.data(), kBig, stream);
    SCENARIO_CHECK(pinned(0) > in);
    SCENARIO_CHECK(device == b);
    std::memcpy(device.data(), pattern(kBig, 3).data(), kBig);
    copyDeviceToHost(back.data(), dev, kBig, stream);
    SCENARIO_CHECK(pinned(1) > out);
    SCENARIO_CHECK(back == pattern(kBig, 3));
  }

  // This thread's staging holds the ring: the copy takes the driver's path.
  {
    std::vector<unsigned char> c = pattern(kBig, 4), changedC = pattern(kBig, 5);
    std::vector<unsigned char> d = pattern(kBig, 6);
    HostStaging staging(nullptr);
    roundTrip(staging, c, changedC);
    int in = pinned(0);
    copyHostToDevice(dev, d.data(), kBig);
    SCENARIO_CHECK(pinned(0) == in);
    SCENARIO_CHECK(device == d);
    staging.finish();
    SCENARIO_CHECK(c == changedC);
  }

  // A captured stream: the driver's path (the fake copies at once rather than recording).
  {
    auto stream = Stream::create(/*nonBlocking=*/true);
    std::vector<unsigned char> e = pattern(kBig, 7);
    int in = pinned(0);
    Graph::beginCapture(stream->handle());
    copyHostToDevice(dev, e.data(), kBig, stream->handle());
    Graph::abandonCapture(stream->handle());
    SCENARIO_CHECK(pinned(0) == in);
    SCENARIO_CHECK(device == e);
    copyHostToDevice(dev, a.data(), kBig, stream->handle()); // not captured: the ring again
    SCENARIO_CHECK(pinned(0) > in);
    SCENARIO_CHECK(device == a);
  }
  std::exit(0);
}

class StagingDeathTest : public ::testing::Test {
protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(StagingDeathTest, LargeArraysTravelThroughThePinnedRingOnceItIsReady) {
  EXPECT_EXIT(ringScenario(), ::testing::ExitedWithCode(0), "");
}

TEST_F(StagingDeathTest, LargePlainCopiesTakeTheRingForOneCopy) {
  EXPECT_EXIT(copiesScenario(), ::testing::ExitedWithCode(0), "");
}

} // namespace
