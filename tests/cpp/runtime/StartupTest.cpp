// The CUDA start-up path: Device::openInBackground (the device and its primary context opened on
// a background thread while the caller compiles), deviceComputeCapability (no context needed),
// the memory pool's warm-up (usePoolAllocatorAfterWarmUp) and the PTXJIT_TRACE_STARTUP trace. The
// driver state is per process, so each scenario runs in a death-test child against the fake driver
// of tests/cpp/fakecuda (PTXJIT_LIBCUDA), or without a driver.
#include "runtime/Device.h"
#include "runtime/Driver.h"
#include "runtime/Graph.h"
#include "runtime/Memory.h"
#include "runtime/Stream.h"

#include "tests/cpp/fakecuda/Scenario.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

using namespace ptxjit::runtime;
using namespace ptxjit::testing;

namespace {

// The fake driver's control functions (the library the runtime loaded).
struct FakeControl {
  void (*hold)(int) = nullptr;
  void (*setResult)(int) = nullptr;
  int (*calls)() = nullptr;
  int (*waiting)() = nullptr;
};

FakeControl loadFakeDriver() {
  useFakeDriver();
  FakeControl c;
  c.hold = fake<void (*)(int)>("fakeCudaHoldContext");
  c.setResult = fake<void (*)(int)>("fakeCudaSetContextResult");
  c.calls = fake<int (*)()>("fakeCudaContextCalls");
  c.waiting = fake<int (*)()>("fakeCudaContextWaiting");
  return c;
}

// The fake driver's memory controls.
struct FakeMemory {
  void (*setPools)(int) = nullptr;
  void (*holdPool)(int) = nullptr;
  int (*poolWaiting)() = nullptr;
  void (*failNext)(int) = nullptr;
  int (*calls)(int) = nullptr; // 0 cuMemAlloc, 1 cuMemFree, 2 cuMemAllocAsync, 3 cuMemFreeAsync
};

// Loads the fake driver with memory pools reported.
FakeMemory loadFakeDriverWithPools() {
  loadFakeDriver();
  FakeMemory m;
  m.setPools = fake<void (*)(int)>("fakeCudaSetMemoryPools");
  m.holdPool = fake<void (*)(int)>("fakeCudaHoldPoolAllocation");
  m.poolWaiting = fake<int (*)()>("fakeCudaPoolAllocationWaiting");
  m.failNext = fake<void (*)(int)>("fakeCudaFailNextPoolAllocations");
  m.calls = fake<int (*)(int)>("fakeCudaMemoryCalls");
  m.setPools(1);
  return m;
}

// Waits (up to 20 s) until the fake's cuMemAllocAsync is blocked in its hold.
void awaitBlockedInPoolAllocation(const FakeMemory &m) {
  for (int i = 0; i < 2000 && !m.poolWaiting(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  SCENARIO_CHECK(m.poolWaiting());
}

std::string allocatorName() { return deviceAllocator()->name(); }

// What bindings/Target.cpp runs once the device is open.
std::atomic<int> gWarmUpStarted{-1};
void warmUpHook() { gWarmUpStarted = usePoolAllocatorAfterWarmUp() ? 1 : 0; }

// An allocator a user installs (cuMemAlloc underneath, a name of its own).
class NamedAllocator final : public DeviceAllocator {
public:
  CUdeviceptr allocate(size_t bytes, CUstream stream) override {
    return plainDeviceAllocator()->allocate(bytes, stream);
  }
  void deallocate(CUdeviceptr ptr, size_t bytes, CUstream stream) noexcept override {
    plainDeviceAllocator()->deallocate(ptr, bytes, stream);
  }
  const char *name() const noexcept override { return "user allocator"; }
};

// Waits (up to 20 s) until the fake's cuDevicePrimaryCtxRetain is blocked in its hold.
void awaitBlockedInContext(const FakeControl &c) {
  for (int i = 0; i < 2000 && !c.waiting(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  SCENARIO_CHECK(c.waiting());
}

std::atomic<int> gHookRuns{0};
std::thread::id gHookThread;
std::string gHookDeviceName;

void recordingHook() {
  gHookThread = std::this_thread::get_id();
  gHookDeviceName = Device::current().name(); // the device being opened, without waiting
  ++gHookRuns;
  std::fprintf(stderr, "hook ran\n");
}

[[noreturn]] void backgroundOpeningScenario() {
  setenv("PTXJIT_TRACE_STARTUP", "1", 1);
  FakeControl fake = loadFakeDriver();
  fake.hold(1);
  Device::openInBackground(recordingHook);
  // The context is being created on another thread: this one is free to compile meanwhile.
  awaitBlockedInContext(fake);
  SCENARIO_CHECK(gHookRuns == 0);
  // The compute capability needs no context, so it does not wait for the opening.
  ComputeCapability cc = deviceComputeCapability();
  SCENARIO_CHECK(cc.major == 9 && cc.minor == 0);
  // Released from another thread, normally while this one already waits in current() (the
  // outcome is the same when the release comes first).
  std::thread releaser([fake] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    fake.hold(0);
  });
  const Device &dev = Device::current(); // waits for the opening and its hook
  releaser.join();
  SCENARIO_CHECK(gHookRuns == 1);
  SCENARIO_CHECK(gHookThread != std::this_thread::get_id());
  SCENARIO_CHECK(gHookDeviceName == "Fake GPU");
  SCENARIO_CHECK(dev.name() == "Fake GPU" && dev.computeCapability() == 90);
  SCENARIO_CHECK(&Device::current() == &dev);
  SCENARIO_CHECK(fake.calls() == 1);
  // Once open, a second start runs the hook here and opens nothing.
  Device::openInBackground(recordingHook);
  SCENARIO_CHECK(gHookRuns == 2 && gHookThread == std::this_thread::get_id());
  SCENARIO_CHECK(fake.calls() == 1);
  std::exit(0);
}

[[noreturn]] void failedOpeningScenario() {
  FakeControl fake = loadFakeDriver();
  const std::string expected =
      "cuDevicePrimaryCtxRetain failed: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory";
  fake.setResult(2); // CUDA_ERROR_OUT_OF_MEMORY
  Device::openInBackground(recordingHook);
  // The background thread's error is rethrown, with its type and message, by the wait.
  try {
    Device::current();
    SCENARIO_CHECK(!"Device::current() did not throw");
  } catch (const CudaError &e) {
    SCENARIO_CHECK(e.what() == expected);
    SCENARIO_CHECK(e.code() == CUDA_ERROR_OUT_OF_MEMORY);
  }
  SCENARIO_CHECK(gHookRuns == 0);
  SCENARIO_CHECK(fake.calls() == 1);
  // A later call tries again (here, synchronously) and fails the same way.
  try {
    Device::current();
    SCENARIO_CHECK(!"Device::current() did not throw");
  } catch (const CudaError &e) {
    SCENARIO_CHECK(e.what() == expected);
  }
  SCENARIO_CHECK(fake.calls() == 2);
  SCENARIO_CHECK(!Device::Cleanup(0));
  SCENARIO_CHECK(fake.calls() == 3);
  // And succeeds once the driver does.
  fake.setResult(0);
  SCENARIO_CHECK(Device::current().name() == "Fake GPU");
  SCENARIO_CHECK(fake.calls() == 4);
  std::exit(0);
}

[[noreturn]] void exitDuringOpeningScenario() {
  FakeControl fake = loadFakeDriver();
  fake.hold(1);
  Device::openInBackground(recordingHook);
  awaitBlockedInContext(fake);
  // Releases the driver a little after exit() has begun; the exit must wait for the opening.
  std::thread([fake] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    fake.hold(0);
  }).detach();
  std::fprintf(stderr, "exiting\n");
  std::exit(0);
}

[[noreturn]] void unusableDriverScenario(const char *library) {
  setenv("PTXJIT_LIBCUDA", library, 1);
  SCENARIO_CHECK(!driverAvailable());
  Device::openInBackground(recordingHook); // nothing to start
  SCENARIO_CHECK(gHookRuns == 0);
  std::string fromDriver;
  try {
    driver();
  } catch (const DriverUnavailable &e) {
    fromDriver = e.what();
  }
  SCENARIO_CHECK(!fromDriver.empty());
  try {
    Device::current();
    SCENARIO_CHECK(!"Device::current() did not throw");
  } catch (const DriverUnavailable &e) {
    SCENARIO_CHECK(e.what() == fromDriver);
  }
  try {
    deviceComputeCapability();
    SCENARIO_CHECK(!"deviceComputeCapability() did not throw");
  } catch (const DriverUnavailable &e) {
    SCENARIO_CHECK(e.what() == fromDriver);
  }
  std::fprintf(stderr, "unavailable: %s\n", fromDriver.c_str());
  std::exit(0);
}

[[noreturn]] void poolWarmUpScenario() {
  setenv("PTXJIT_TRACE_STARTUP", "1", 1);
  FakeMemory mem = loadFakeDriverWithPools();
  mem.holdPool(1);
  Device::openInBackground(warmUpHook);
  Device::current(); // the opening does not wait for the pool's first allocation
  SCENARIO_CHECK(gWarmUpStarted == 1);
  awaitBlockedInPoolAllocation(mem);
  // Meanwhile allocations come from cuMemAlloc.
  SCENARIO_CHECK(allocatorName() == "cuMemAlloc");
  std::shared_ptr<Allocation> early = allocateDevice(64);
  SCENARIO_CHECK(mem.calls(0) == 1 && mem.calls(2) == 1);
  mem.holdPool(0);
  joinPoolWarmUp();
  // The pool serves what follows (the warm-up's small block is kept for reuse).
  SCENARIO_CHECK(allocatorName() == "cuMemAllocAsync");
  std::shared_ptr<Allocation> later = allocateDevice(64);
  SCENARIO_CHECK(mem.calls(0) == 1 && mem.calls(2) == 2);
  // Each allocation goes back to the allocator that made it.
  early.reset();
  SCENARIO_CHECK(mem.calls(1) == 1);
  later.reset();
  SCENARIO_CHECK(mem.calls(1) == 1);
  // Called again with the pool in use: nothing to warm up.
  SCENARIO_CHECK(usePoolAllocatorAfterWarmUp());
  joinPoolWarmUp();
  SCENARIO_CHECK(mem.calls(2) == 2);
  std::exit(0);
}

// The pool's set-up (cuDeviceGetDefaultMemPool, the release threshold) runs on the warm-up
// thread: a caller waiting for the background opening is not kept waiting by it. If it were
// (the set-up made by the opener before publishing the device), Device::current() would return
// only when the watchdog below releases the driver, and the check of `released` fails.
[[noreturn]] void poolSetUpOffTheOpeningScenario() {
  FakeMemory mem = loadFakeDriverWithPools();
  auto holdSetUp = fake<void (*)(int)>("fakeCudaHoldPoolSetUp");
  auto setUpWaiting = fake<int (*)()>("fakeCudaPoolSetUpWaiting");
  holdSetUp(1);
  std::atomic<bool> returned{false}, released{false};
  std::thread watchdog([&] {
    for (int i = 0; i < 500 && !returned; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!returned) {
      released = true;
      holdSetUp(0);
    }
  });
  Device::openInBackground(warmUpHook);
  Device::current();
  returned = true;
  watchdog.join();
  SCENARIO_CHECK(!released);
  SCENARIO_CHECK(gWarmUpStarted == 1);
  for (int i = 0; i < 2000 && !setUpWaiting(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  SCENARIO_CHECK(setUpWaiting());
  // Meanwhile allocations come from cuMemAlloc; then the pool serves.
  SCENARIO_CHECK(allocatorName() == "cuMemAlloc");
  std::shared_ptr<Allocation> early = allocateDevice(64);
  SCENARIO_CHECK(mem.calls(0) == 1 && mem.calls(2) == 0);
  holdSetUp(0);
  joinPoolWarmUp();
  SCENARIO_CHECK(allocatorName() == "cuMemAllocAsync");
  SCENARIO_CHECK(mem.calls(2) == 1);
  std::exit(0);
}

// Captures under way while the pool's warm-up runs are not broken by it: neither one of ptxjit's
// (Graph::beginCapture) nor one another library began through the driver, in global mode. Work on
// the legacy default stream (in the real driver and the fake) breaks the capture of every blocking
// stream; the warm-up allocates and frees on a non-blocking stream of its own. With its work on
// the legacy stream, its allocation fails (the warm-up keeps cuMemAlloc) and both captures end
// invalidated.
[[noreturn]] void captureDuringPoolWarmUpScenario() {
  FakeMemory mem = loadFakeDriverWithPools();
  mem.holdPool(1);
  Device::openInBackground(warmUpHook);
  Device::current();
  awaitBlockedInPoolAllocation(mem);
  auto ours = Stream::create(/*nonBlocking=*/false); // synchronizes with the legacy stream
  auto theirs = Stream::create(/*nonBlocking=*/false);
  Graph::beginCapture(ours->handle()); // does not wait for the warm-up
  const DriverApi &d = driver();
  SCENARIO_CHECK(d.cuStreamBeginCapture_v2(theirs->handle(), CU_STREAM_CAPTURE_MODE_GLOBAL) ==
                 CUDA_SUCCESS);
  mem.holdPool(0);
  joinPoolWarmUp();
  SCENARIO_CHECK(allocatorName() == "cuMemAllocAsync"); // the warm-up succeeded
  unsigned char buf[4] = {}, other[4] = {};
  fillDevice(reinterpret_cast<CUdeviceptr>(buf), 5, 4, ours->handle());
  std::shared_ptr<Graph> g = Graph::endCapture(ours->handle());
  g->launch(ours->handle());
  SCENARIO_CHECK(buf[0] == 5 && buf[3] == 5);
  SCENARIO_CHECK(d.cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(other), 7, 4, theirs->handle()) ==
                 CUDA_SUCCESS);
  CUgraph raw = nullptr;
  SCENARIO_CHECK(d.cuStreamEndCapture(theirs->handle(), &raw) == CUDA_SUCCESS && raw);
  d.cuGraphDestroy(raw);
  std::exit(0);
}

[[noreturn]] void failedPoolWarmUpScenario() {
  FakeMemory mem = loadFakeDriverWithPools();
  mem.failNext(1); // the warm-up's allocation: CUDA_ERROR_OUT_OF_MEMORY
  Device::openInBackground(warmUpHook);
  Device::current();
  joinPoolWarmUp();
  SCENARIO_CHECK(gWarmUpStarted == 1);
  SCENARIO_CHECK(mem.calls(2) == 1 && mem.calls(3) == 0);
  // The failure is not reported: cuMemAlloc stays.
  SCENARIO_CHECK(allocatorName() == "cuMemAlloc");
  std::shared_ptr<Allocation> a = allocateDevice(64);
  SCENARIO_CHECK(mem.calls(0) == 1 && mem.calls(2) == 1);
  std::exit(0);
}

[[noreturn]] void replacedDuringWarmUpScenario() {
  FakeMemory mem = loadFakeDriverWithPools();
  mem.holdPool(1);
  Device::openInBackground(warmUpHook);
  Device::current();
  awaitBlockedInPoolAllocation(mem);
  setDeviceAllocator(std::make_shared<NamedAllocator>());
  mem.holdPool(0);
  joinPoolWarmUp();
  // The allocator chosen while the pool warmed up stays.
  SCENARIO_CHECK(mem.calls(2) == 1);
  SCENARIO_CHECK(allocatorName() == "user allocator");
  std::exit(0);
}

[[noreturn]] void noPoolsScenario() {
  FakeMemory mem = loadFakeDriverWithPools();
  mem.setPools(0);
  Device::openInBackground(warmUpHook);
  Device::current();
  SCENARIO_CHECK(gWarmUpStarted == 0);
  SCENARIO_CHECK(allocatorName() == "cuMemAlloc");
  std::shared_ptr<Allocation> a = allocateDevice(64);
  SCENARIO_CHECK(mem.calls(0) == 1 && mem.calls(2) == 0);
  std::exit(0);
}

[[noreturn]] void exitDuringPoolWarmUpScenario() {
  setenv("PTXJIT_TRACE_STARTUP", "1", 1); // the warm-up's line is written when it ends
  FakeMemory mem = loadFakeDriverWithPools();
  mem.holdPool(1);
  Device::openInBackground(warmUpHook);
  Device::current();
  awaitBlockedInPoolAllocation(mem);
  // Releases the driver a little after exit() has begun; the exit must wait for the warm-up.
  std::thread([mem] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    mem.holdPool(0);
  }).detach();
  std::fprintf(stderr, "exiting\n");
  std::exit(0);
}

// The pool allocator keeps small freed blocks and reuses them only for allocations whose first
// use is work on the legacy default stream right away.
[[noreturn]] void poolBlockCacheScenario() {
  FakeMemory mem = loadFakeDriverWithPools();
  Device::current();
  setDeviceAllocator(poolDeviceAllocator());
  int stream = 0;
  CUstream other = reinterpret_cast<CUstream>(&stream); // any stream but the legacy one
  auto allocs = [&] { return mem.calls(2); };
  auto frees = [&] { return mem.calls(3); };

  std::shared_ptr<Allocation> a = allocateDevice(1000, nullptr, FirstUse::OnStreamNow);
  CUdeviceptr first = a->devicePtr();
  SCENARIO_CHECK(allocs() == 1);
  a.reset(); // kept: no cuMemFreeAsync
  SCENARIO_CHECK(frees() == 0);
  // The same size class (sizes rounded up to 512 bytes), first used on the legacy stream now.
  std::shared_ptr<Allocation> b = allocateDevice(600, nullptr, FirstUse::OnStreamNow);
  SCENARIO_CHECK(allocs() == 1 && b->devicePtr() == first);
  b.reset();
  // Not reused: a use not promised, or another stream.
  std::shared_ptr<Allocation> c = allocateDevice(1000);
  std::shared_ptr<Allocation> d = allocateDevice(1000, other, FirstUse::OnStreamNow);
  SCENARIO_CHECK(allocs() == 3);
  SCENARIO_CHECK(c->devicePtr() != first && d->devicePtr() != first);
  c.reset();
  d.reset();
  SCENARIO_CHECK(frees() == 0);
  // Blocks over 1 MiB go back to the driver.
  std::shared_ptr<Allocation> big = allocateDevice((1 << 20) + 1, nullptr, FirstUse::OnStreamNow);
  big.reset();
  SCENARIO_CHECK(allocs() == 4 && frees() == 1);
  // At most 64 MiB are kept: of 64 freed blocks of 1 MiB, the last one goes back (3 KiB kept).
  std::vector<std::shared_ptr<Allocation>> many;
  for (int i = 0; i < 64; ++i)
    many.push_back(allocateDevice(1 << 20));
  many.clear();
  SCENARIO_CHECK(allocs() == 68 && frees() == 2);
  // Out of memory: every kept block is given back and the allocation retried.
  mem.failNext(1);
  std::shared_ptr<Allocation> e = allocateDevice(5000, nullptr, FirstUse::OnStreamNow);
  SCENARIO_CHECK(allocs() == 70 && frees() == 2 + 63 + 3);
  e.reset();
  // When the retry fails too, the error is the driver's.
  mem.failNext(2);
  try {
    allocateDevice(9000, nullptr, FirstUse::OnStreamNow);
    SCENARIO_CHECK(!"allocateDevice did not throw");
  } catch (const CudaError &err) {
    SCENARIO_CHECK(err.code() == CUDA_ERROR_OUT_OF_MEMORY);
  }
  SCENARIO_CHECK(allocs() == 72 && frees() == 69);
  std::exit(0);
}

// deviceSetIdentity() is read without cuInit (the fake driver counts its calls) and is the same
// text once the driver is loaded, so that a record written after CUDA started is found before it.
[[noreturn]] void identityScenario() {
  setenv("PTXJIT_LIBCUDA", PTXJIT_FAKE_LIBCUDA, 1);
  setenv("CUDA_VISIBLE_DEVICES", "0,1", 1);
  unsetenv("CUDA_DEVICE_ORDER");
  const DeviceSetIdentity &id = deviceSetIdentity();
  SCENARIO_CHECK(!driverLoadAttempted());
  SCENARIO_CHECK(fake<int (*)()>("fakeCudaInitCalls")() == 0);
  SCENARIO_CHECK(id.driverVersion == 13000);
  std::string text = id.text;
  SCENARIO_CHECK(
      text.rfind(std::string("driver library: ") + PTXJIT_FAKE_LIBCUDA + "\nCUDA version: 13000\n",
                 0) == 0);
  SCENARIO_CHECK(text.find("\nCUDA_VISIBLE_DEVICES=0,1\nCUDA_DEVICE_ORDER unset\n") !=
                 std::string::npos);
  SCENARIO_CHECK(driverAvailable() && driverLoadAttempted());
  SCENARIO_CHECK(&deviceSetIdentity() == &id && id.text == text);
  std::exit(0);
}

[[noreturn]] void identityWithoutDriverScenario() {
  setenv("PTXJIT_LIBCUDA", "/nonexistent/dir/libcuda.so.1", 1);
  SCENARIO_CHECK(deviceSetIdentity().driverVersion == 0 && deviceSetIdentity().text.empty());
  SCENARIO_CHECK(!driverLoadAttempted());
  std::exit(0);
}

class StartupDeathTest : public ::testing::Test {
protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

} // namespace

TEST_F(StartupDeathTest, DeviceOpensOnABackgroundThreadAndIsWaitedFor) {
  // The trace shows the context created on the background thread.
  EXPECT_EXIT(backgroundOpeningScenario(), ::testing::ExitedWithCode(0),
              "\\[bg\\] cuDevicePrimaryCtxRetain: [0-9.]+ ms\n");
}

TEST_F(StartupDeathTest, BackgroundErrorIsRethrownByTheWaitAndRetriedLater) {
  EXPECT_EXIT(failedOpeningScenario(), ::testing::ExitedWithCode(0), "");
}

TEST_F(StartupDeathTest, ExitWaitsForAnOpeningUnderWay) {
  // The hook runs after the driver is released, which happens only after exit() has begun.
  EXPECT_EXIT(exitDuringOpeningScenario(), ::testing::ExitedWithCode(0), "exiting\nhook ran\n");
}

TEST_F(StartupDeathTest, MissingDriverStartsNothingAndReportsDriverUnavailable) {
  EXPECT_EXIT(unusableDriverScenario("/nonexistent/dir/libcuda.so.1"), ::testing::ExitedWithCode(0),
              "unavailable: CUDA driver unavailable: .*could not");
}

TEST_F(StartupDeathTest, FailingCuInitStartsNothingAndReportsDriverUnavailable) {
  const char *stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (!std::filesystem::exists(stub))
    GTEST_SKIP() << stub << " not present";
  EXPECT_EXIT(unusableDriverScenario(stub), ::testing::ExitedWithCode(0),
              "unavailable: CUDA driver unavailable: cuInit failed: CUDA_ERROR_STUB_LIBRARY");
}

TEST_F(StartupDeathTest, DeviceSetIdentityIsReadWithoutCuInit) {
  EXPECT_EXIT(identityScenario(), ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(identityWithoutDriverScenario(), ::testing::ExitedWithCode(0), "");
}

TEST_F(StartupDeathTest, PoolWarmsUpOnItsOwnThreadWhileCuMemAllocServes) {
  EXPECT_EXIT(poolWarmUpScenario(), ::testing::ExitedWithCode(0),
              "\\[bg\\] warming up the memory pool \\(its first allocation\\): [0-9.]+ ms\n");
}

TEST_F(StartupDeathTest, ThePoolIsSetUpAfterTheDeviceIsPublished) {
  EXPECT_EXIT(poolSetUpOffTheOpeningScenario(), ::testing::ExitedWithCode(0), "");
}

TEST_F(StartupDeathTest, CapturesUnderWaySurviveThePoolWarmUp) {
  EXPECT_EXIT(captureDuringPoolWarmUpScenario(), ::testing::ExitedWithCode(0), "");
}

TEST_F(StartupDeathTest, FailedPoolWarmUpKeepsCuMemAlloc) {
  EXPECT_EXIT(failedPoolWarmUpScenario(), ::testing::ExitedWithCode(0), "");
}

TEST_F(StartupDeathTest, AllocatorReplacedDuringPoolWarmUpStays) {
  EXPECT_EXIT(replacedDuringWarmUpScenario(), ::testing::ExitedWithCode(0), "");
}

TEST_F(StartupDeathTest, WithoutMemoryPoolsNothingWarmsUp) {
  EXPECT_EXIT(noPoolsScenario(), ::testing::ExitedWithCode(0), "");
}

TEST_F(StartupDeathTest, ExitWaitsForAPoolWarmUpUnderWay) {
  // The warm-up ends after the driver is released, only after exit() has begun.
  EXPECT_EXIT(exitDuringPoolWarmUpScenario(), ::testing::ExitedWithCode(0),
              "exiting\n.*warming up the memory pool \\(its first allocation\\)");
}

TEST_F(StartupDeathTest, PoolKeepsSmallBlocksForUseOnTheLegacyStreamNow) {
  EXPECT_EXIT(poolBlockCacheScenario(), ::testing::ExitedWithCode(0), "");
}
