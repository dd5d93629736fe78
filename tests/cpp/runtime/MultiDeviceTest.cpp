// Several devices in one process, against the fake driver of tests/cpp/fakecuda (PTXJIT_LIBCUDA)
// set to expose two: each thread's current device, allocations that remember their device and
// are freed in its context, the device of memory another library allocated (asked of the
// driver), peer copies (direct with peer access, staged through the host without), and modules
// loaded per device whose kernels launch only there. The driver state is per process, so each
// scenario runs in a death-test child.
#include "runtime/Device.h"
#include "runtime/Driver.h"
#include "runtime/HostMemory.h"
#include "runtime/Launch.h"
#include "runtime/Memory.h"
#include "runtime/Module.h"

#include "tests/cpp/fakecuda/Scenario.h"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace ptxjit::runtime;
using namespace ptxjit::testing;

namespace {

int fakeCount(const char *name, int arg) { return fake<int (*)(int)>(name)(arg); }
int fakeCount(const char *name) { return fake<int (*)()>(name)(); }

// The fake driver, exposing `devices` devices.
void useFakeDevices(int devices) {
  useFakeDriver();
  fake<void (*)(int)>("fakeCudaSetDeviceCount")(devices);
}

CUcontext driverCurrentContext() {
  CUcontext ctx = nullptr;
  SCENARIO_CHECK(driver().cuCtxGetCurrent(&ctx) == CUDA_SUCCESS);
  return ctx;
}

[[noreturn]] void selectionScenario() {
  useFakeDevices(2);
  SCENARIO_CHECK(Device::count() == 2);
  SCENARIO_CHECK(Device::currentOrdinal() == 0);
  const Device &zero = Device::current();
  SCENARIO_CHECK(zero.ordinal() == 0 && zero.name() == "Fake GPU");
  // Described without opening: no primary context is retained for it.
  int retained = fakeCount("fakeCudaContextCalls");
  DeviceSummary s = describeDevice(1);
  SCENARIO_CHECK(s.name == "Fake GPU 1" && s.major == 9 && s.minor == 0);
  SCENARIO_CHECK(fakeCount("fakeCudaContextCalls") == retained);
  SCENARIO_CHECK(failure([] { describeDevice(5); }).find("no CUDA device 5") != std::string::npos);
  const Device &one = Device::select(1);
  SCENARIO_CHECK(fakeCount("fakeCudaContextCalls") == retained + 1);
  SCENARIO_CHECK(one.ordinal() == 1 && one.name() == "Fake GPU 1");
  SCENARIO_CHECK(&Device::current() == &one && Device::currentOrdinal() == 1);
  SCENARIO_CHECK(one.context() != zero.context() && driverCurrentContext() == one.context());
  // A bad ordinal names the devices there are and leaves the selection alone.
  std::string bad = failure([] { Device::select(2); });
  SCENARIO_CHECK(bad.find("no CUDA device 2: 2 devices are visible") != std::string::npos);
  SCENARIO_CHECK(failure([] { Device::select(-1); }).find("out_of_range") == 0);
  SCENARIO_CHECK(Device::currentOrdinal() == 1);
  // The selection is the thread's: another thread starts on device 0.
  int other = -1;
  CUcontext otherCtx = nullptr;
  std::thread([&] {
    other = Device::current().ordinal();
    otherCtx = driverCurrentContext();
  }).join();
  SCENARIO_CHECK(other == 0 && otherCtx == zero.context());
  // get() opens without selecting; the limits are the device's own.
  SCENARIO_CHECK(&Device::get(0) == &zero && Device::currentOrdinal() == 1);
  SCENARIO_CHECK(deviceLaunchLimits().maxThreadsPerBlock == one.maxThreadsPerBlock());
  Device::select(0);
  SCENARIO_CHECK(driverCurrentContext() == zero.context());
  std::exit(0);
}

// Device::Selection: another device for a scope, the thread's own again when it ends, however it
// ends (restore(), the destructor, an exception), and nothing switched for the thread's own.
[[noreturn]] void scopedSelectionScenario() {
  useFakeDevices(2);
  const Device &zero = Device::current();
  const Device &one = Device::get(1);
  {
    Device::Selection on(1);
    SCENARIO_CHECK(on.switched() && Device::currentOrdinal() == 1);
    SCENARIO_CHECK(driverCurrentContext() == one.context());
    on.restore();
    SCENARIO_CHECK(!on.switched() && Device::currentOrdinal() == 0);
    SCENARIO_CHECK(driverCurrentContext() == zero.context());
  } // restored already: the destructor leaves device 0 alone
  SCENARIO_CHECK(Device::currentOrdinal() == 0);
  bool thrown = false;
  try {
    Device::Selection on(1);
    SCENARIO_CHECK(Device::currentOrdinal() == 1);
    throw std::runtime_error("work on device 1 failed");
  } catch (const std::runtime_error &) {
    thrown = true;
  }
  SCENARIO_CHECK(thrown);
  SCENARIO_CHECK(Device::currentOrdinal() == 0 && driverCurrentContext() == zero.context());
  {
    Device::Selection on(0); // the thread's own device: nothing to switch
    SCENARIO_CHECK(!on.switched() && Device::currentOrdinal() == 0);
  }
  // A bad ordinal throws from the constructor, the thread's device unchanged.
  Device::select(1);
  SCENARIO_CHECK(failure([] { Device::Selection on(7); }).find("no CUDA device 7") !=
                 std::string::npos);
  SCENARIO_CHECK(Device::currentOrdinal() == 1 && driverCurrentContext() == one.context());
  {
    Device::Selection on(0);
    SCENARIO_CHECK(on.switched() && driverCurrentContext() == zero.context());
  }
  SCENARIO_CHECK(Device::currentOrdinal() == 1 && driverCurrentContext() == one.context());
  std::exit(0);
}

// PTXJIT_STACK_SIZE sets the per-thread stack of every device's context as it opens
// (cuCtxSetLimit with that context current; the thread's context is left as it was).
size_t stackSizeOf(const Device &dev) {
  CUcontext previous = driverCurrentContext();
  SCENARIO_CHECK(driver().cuCtxSetCurrent(dev.context()) == CUDA_SUCCESS);
  size_t v = 0;
  SCENARIO_CHECK(driver().cuCtxGetLimit(&v, CU_LIMIT_STACK_SIZE) == CUDA_SUCCESS);
  SCENARIO_CHECK(driver().cuCtxSetCurrent(previous) == CUDA_SUCCESS);
  return v;
}

[[noreturn]] void stackSizeScenario() {
  setenv("PTXJIT_STACK_SIZE", "8192", 1);
  useFakeDevices(2);
  const Device &zero = Device::current();
  SCENARIO_CHECK(driverCurrentContext() == zero.context());
  SCENARIO_CHECK(stackSizeOf(zero) == 8192);
  const Device &one = Device::get(1); // opened without being selected
  SCENARIO_CHECK(driverCurrentContext() == zero.context());
  SCENARIO_CHECK(stackSizeOf(one) == 8192);
  std::exit(0);
}

// A malformed setting fails the opening before any context is retained; one the driver refuses
// fails it with a CudaError naming the call, releasing the context it retained; a later
// opening with a good setting succeeds.
[[noreturn]] void badStackSizeScenario() {
  setenv("PTXJIT_STACK_SIZE", "1M", 1);
  useFakeDevices(1);
  int retained = fakeCount("fakeCudaContextCalls");
  std::string why;
  try {
    Device::current();
  } catch (const std::invalid_argument &e) {
    why = e.what();
  }
  SCENARIO_CHECK(why.find("PTXJIT_STACK_SIZE=1M is not a stack size") == 0);
  SCENARIO_CHECK(fakeCount("fakeCudaContextCalls") == retained);
  setenv("PTXJIT_STACK_SIZE", "1048576", 1); // beyond the fake driver's 512 KiB
  SCENARIO_CHECK(failure([] { Device::current(); }) ==
                 "CUDA_ERROR_INVALID_VALUE from cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 1048576)");
  SCENARIO_CHECK(fakeCount("fakeCudaContextCalls") == retained + 1);
  SCENARIO_CHECK(fakeCount("fakeCudaContextReleases") == 1);
  SCENARIO_CHECK(driverCurrentContext() == nullptr);
  setenv("PTXJIT_STACK_SIZE", "2048", 1);
  SCENARIO_CHECK(stackSizeOf(Device::current()) == 2048);
  std::exit(0);
}

[[noreturn]] void allocationScenario() {
  useFakeDevices(2);
  Device::select(1);
  std::shared_ptr<Allocation> a = allocateDevice(64);
  SCENARIO_CHECK(a->device() == 1);
  Device::select(0);
  std::shared_ptr<Allocation> b = allocateDevice(64);
  SCENARIO_CHECK(b->device() == 0);
  SCENARIO_CHECK(allocateDevice(0)->device() == 0);
  // Freed in its own device's context even though device 0 is current now; the thread's context
  // is device 0's again right after the free (another library sees no switch).
  SCENARIO_CHECK(driverCurrentContext() == Device::get(0).context());
  a.reset();
  SCENARIO_CHECK(driverCurrentContext() == Device::get(0).context());
  b.reset();
  SCENARIO_CHECK(fakeCount("fakeCudaForeignFrees") == 0);
  SCENARIO_CHECK(fakeCount("fakeCudaMemoryCalls", 1) == 2);
  SCENARIO_CHECK(Device::currentOrdinal() == 0);
  // A free on a thread with no context leaves it with none.
  std::shared_ptr<Allocation> c = allocateDevice(16);
  CUcontext seen = reinterpret_cast<CUcontext>(&c); // anything but null
  std::thread([&] {
    c.reset();
    seen = driverCurrentContext();
  }).join();
  SCENARIO_CHECK(seen == nullptr && fakeCount("fakeCudaForeignFrees") == 0);
  std::exit(0);
}

[[noreturn]] void poolScenario() {
  useFakeDevices(2);
  fake<void (*)(int)>("fakeCudaSetMemoryPools")(1);
  std::shared_ptr<DeviceAllocator> pool0 = poolDeviceAllocator();
  setDeviceAllocator(pool0);
  Device::select(1);
  std::shared_ptr<DeviceAllocator> pool1 = poolDeviceAllocator();
  SCENARIO_CHECK(pool1 != pool0);                          // one pool per device
  std::shared_ptr<Allocation> a = allocateDevice(4 << 20); // beyond the small-block cache
  SCENARIO_CHECK(a->device() == 1 && fakeCount("fakeCudaMemoryCalls", 2) == 1);
  Device::select(0);
  a.reset(); // freed by device 1's pool, in device 1's context
  SCENARIO_CHECK(fakeCount("fakeCudaMemoryCalls", 3) == 1);
  SCENARIO_CHECK(deviceAllocator() == pool0);
  std::exit(0);
}

// What bindings/Target.cpp runs once the device is open (the pool's warm-up).
void warmUpHook() { SCENARIO_CHECK(usePoolAllocatorAfterWarmUp()); }

// A thread whose first act selects device 1: the start-up (openInBackground and its hook) opens
// and warms up that device, never device 0; device 0, used later, allocates from its own pool
// (not from the first device's, whose freed blocks are device 1's memory).
[[noreturn]] void firstDeviceScenario() {
  useFakeDevices(2);
  fake<void (*)(int)>("fakeCudaSetMemoryPools")(1);
  Device::select(1);
  Device::openInBackground(warmUpHook);
  joinPoolWarmUp();
  SCENARIO_CHECK(fakeCount("fakeCudaContextRetains", 0) == 0);
  SCENARIO_CHECK(fakeCount("fakeCudaContextRetains", 1) == 1);
  SCENARIO_CHECK(deviceAllocator()->poolDevice() == 1);
  std::shared_ptr<Allocation> a = allocateDevice(1024, nullptr, FirstUse::OnStreamNow);
  CUdeviceptr first = a->devicePtr();
  a.reset(); // kept by device 1's pool for reuse
  SCENARIO_CHECK(allocateDevice(1024, nullptr, FirstUse::OnStreamNow)->devicePtr() == first);
  Device::select(0);
  std::shared_ptr<Allocation> b = allocateDevice(1024, nullptr, FirstUse::OnStreamNow);
  SCENARIO_CHECK(b->device() == 0 && b->devicePtr() != first);
  SCENARIO_CHECK(fakeCount("fakeCudaContextRetains", 0) == 1);
  std::exit(0);
}

// Kernels are compiled for the oldest visible device: PTX for it loads on the newer ones.
[[noreturn]] void oldestComputeCapabilityScenario() {
  useFakeDevices(3);
  fake<void (*)(int, int, int)>("fakeCudaSetComputeCapability")(1, 8, 0);
  fake<void (*)(int, int, int)>("fakeCudaSetComputeCapability")(2, 8, 6);
  ComputeCapability cc = deviceComputeCapability();
  SCENARIO_CHECK(cc.major == 8 && cc.minor == 0);
  SCENARIO_CHECK(fakeCount("fakeCudaContextCalls") == 0); // read without opening any device
  std::exit(0);
}

// Copies 256 bytes from device 0's memory to device 1's and checks them.
void copyAcross() {
  Device::select(0);
  std::shared_ptr<Allocation> src = allocateDevice(256);
  std::vector<unsigned char> data(256);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<unsigned char>(i * 7);
  src->upload(data.data(), data.size());
  Device::select(1);
  std::shared_ptr<Allocation> dst = allocateDevice(256);
  Device::select(0);
  copyAllocation(*dst, 0, *src, 0, 256);
  std::vector<unsigned char> back(256);
  dst->download(back.data(), back.size());
  SCENARIO_CHECK(back == data);
  SCENARIO_CHECK(Device::currentOrdinal() == 0);
  SCENARIO_CHECK(driverCurrentContext() == Device::get(0).context());
}

[[noreturn]] void stagedCopyScenario() {
  useFakeDevices(2);
  SCENARIO_CHECK(!peerCopyIsDirect(1, 0));
  int htod = fakeCount("fakeCudaCopyCalls", 1), dtoh = fakeCount("fakeCudaCopyCalls", 2);
  copyAcross();
  SCENARIO_CHECK(fakeCount("fakeCudaCopyCalls", 0) == 0); // no peer copy
  // upload + staging's upload; staging's download + download
  SCENARIO_CHECK(fakeCount("fakeCudaCopyCalls", 1) == htod + 2);
  SCENARIO_CHECK(fakeCount("fakeCudaCopyCalls", 2) == dtoh + 2);
  SCENARIO_CHECK(failure([] { Device::get(0).enablePeerAccess(1); }) ==
                 "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED from cuCtxEnablePeerAccess");
  SCENARIO_CHECK(!Device::get(0).peerAccessEnabled(1) && Device::get(0).peerAccessEnabled(0));
  std::exit(0);
}

[[noreturn]] void peerCopyScenario() {
  useFakeDevices(2);
  fake<void (*)(int)>("fakeCudaSetPeerAccess")(1);
  SCENARIO_CHECK(Device::get(0).canAccessPeer(1) && !Device::get(0).canAccessPeer(0));
  SCENARIO_CHECK(peerCopyIsDirect(1, 0));
  copyAcross();
  SCENARIO_CHECK(fakeCount("fakeCudaCopyCalls", 0) == 1);
  SCENARIO_CHECK(fakeCount("fakeCudaPeerEnables") == 1);
  SCENARIO_CHECK(Device::get(1).peerAccessEnabled(0)); // the destination reaches the source
  copyAcross();                                        // enabled once only
  SCENARIO_CHECK(fakeCount("fakeCudaCopyCalls", 0) == 2);
  SCENARIO_CHECK(fakeCount("fakeCudaPeerEnables") == 1);
  SCENARIO_CHECK(failure([] { Device::get(1).enablePeerAccess(1); }).find("out_of_range") == 0);
  std::exit(0);
}

[[noreturn]] void moduleScenario() {
  useFakeDevices(2);
  const std::string ptx = "// fake-ok\n.entry k()\n";
  std::shared_ptr<Module> m0 = Module::loadPTX(ptx);
  Device::select(1);
  std::shared_ptr<Module> m1 = Module::loadPTX(ptx);
  SCENARIO_CHECK(m0->device() == 0 && m1->device() == 1);
  SCENARIO_CHECK(fakeCount("fakeCudaModuleLoads", 0) == 1);
  SCENARIO_CHECK(fakeCount("fakeCudaModuleLoads", 1) == 1);
  CUfunction f0 = m0->function("k"), f1 = m1->function("k");
  launchKernel(f1, {}, {}, 0, nullptr, nullptr);
  SCENARIO_CHECK(fakeCount("fakeCudaLaunches", 1) == 1);
  // A kernel of device 0's module does not launch on device 1: the driver refuses it.
  SCENARIO_CHECK(failure([&] { launchKernel(f0, {}, {}, 0, nullptr, nullptr); }) ==
                 "CUDA_ERROR_INVALID_HANDLE from cuLaunchKernel");
  Device::select(0);
  launchKernel(f0, {}, {}, 0, nullptr, nullptr);
  SCENARIO_CHECK(fakeCount("fakeCudaLaunches", 0) == 1);
  std::exit(0);
}

// Memory someone else allocated (what __cuda_array_interface__ imports wrap) is its own
// device's, whatever device is current; memory that names no device is left to the caller.
[[noreturn]] void pointerDeviceScenario() {
  useFakeDevices(2);
  Device::select(1);
  std::shared_ptr<Allocation> one = allocateDevice(256);
  Device::select(0);
  std::shared_ptr<Allocation> zero = allocateDevice(256);
  CUdeviceptr p = one->devicePtr();
  SCENARIO_CHECK(deviceOfPointer(p) == 1 && deviceOfPointer(p + 100) == 1);
  SCENARIO_CHECK(deviceOfPointer(zero->devicePtr()) == 0);
  SCENARIO_CHECK(Device::currentOrdinal() == 0); // asking selects nothing
  // What the binding does with an import: the driver's device, not the current one.
  SCENARIO_CHECK(wrapMemory(p + 16, 64, true, deviceOfPointer(p + 16))->device() == 1);
  SCENARIO_CHECK(wrapMemory(p + 16, 64, true)->device() == 0);
  // Unknown memory (CUDA_ERROR_INVALID_VALUE), pinned host and managed memory: no one device.
  // Device memory takes three queries (type, managed, ordinal), managed memory two, the others
  // one.
  std::vector<char> plain(64);
  Device::select(1);
  auto pinned = HostMemory::allocate(HostMemory::Kind::Pinned, 64);
  auto managed = HostMemory::allocate(HostMemory::Kind::Managed, 64);
  Device::select(0);
  int queries = fakeCount("fakeCudaPointerQueries");
  SCENARIO_CHECK(deviceOfPointer(reinterpret_cast<CUdeviceptr>(plain.data())) == -1);
  SCENARIO_CHECK(fakeCount("fakeCudaPointerQueries") == queries + 1);
  SCENARIO_CHECK(deviceOfPointer(reinterpret_cast<CUdeviceptr>(pinned->hostPtr())) == -1);
  SCENARIO_CHECK(fakeCount("fakeCudaPointerQueries") == queries + 2);
  SCENARIO_CHECK(deviceOfPointer(managed->devicePtr()) == -1);
  SCENARIO_CHECK(fakeCount("fakeCudaPointerQueries") == queries + 4);
  SCENARIO_CHECK(deviceOfPointer(p) == 1);
  SCENARIO_CHECK(fakeCount("fakeCudaPointerQueries") == queries + 7);
  // Freed memory is unknown again.
  one.reset();
  SCENARIO_CHECK(deviceOfPointer(p) == -1);
  std::exit(0);
}

[[noreturn]] void forkScenario() {
  useFakeDevices(1);
  Device::current();
  pid_t child = fork();
  SCENARIO_CHECK(child >= 0);
  if (child == 0) {
    // The child refuses CUDA with the reason, through every entry to the driver.
    bool refused = false;
    try {
      allocateDevice(64);
    } catch (const ForkedAfterInit &e) {
      refused = std::string(e.what()).rfind("CUDA initialized before forking", 0) == 0;
    }
    bool unavailable = !driverAvailable();
    bool noCleanup = !Device::Cleanup(0);
    std::_Exit(refused && unavailable && noCleanup ? 0 : 1);
  }
  int status = 0;
  SCENARIO_CHECK(waitpid(child, &status, 0) == child);
  SCENARIO_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  SCENARIO_CHECK(driverAvailable() && allocateDevice(64)->device() == 0); // the parent is fine
  std::exit(0);
}

class MultiDeviceDeathTest : public ::testing::Test {
protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(MultiDeviceDeathTest, EachThreadSelectsItsDevice) {
  EXPECT_EXIT(selectionScenario(), ::testing::ExitedWithCode(0), "");
}

TEST_F(MultiDeviceDeathTest, ASelectionForAScopeGivesTheThreadItsDeviceBack) {
  EXPECT_EXIT(scopedSelectionScenario(), ::testing::ExitedWithCode(0), "");
}

TEST_F(MultiDeviceDeathTest, AllocationsRememberTheirDeviceAndFreeThere) {
  EXPECT_EXIT(allocationScenario(), ::testing::ExitedWithCode(0), "");
}

TEST_F(MultiDeviceDeathTest, StackSizeSettingAppliesToEveryDevice) {
  EXPECT_EXIT(stackSizeScenario(), ::testing::ExitedWithCode(0), "");
}

TEST_F(MultiDeviceDeathTest, BadStackSizeSettingFailsTheOpeningCleanly) {
  EXPECT_EXIT(badStackSizeScenario(), ::testing::ExitedWithCode(0), "");
}

TEST_F(MultiDeviceDeathTest, EachDeviceAllocatesFromItsOwnPool) {
  EXPECT_EXIT(poolScenario(), ::testing::ExitedWithCode(0), "");
}

TEST_F(MultiDeviceDeathTest, CopiesBetweenDevicesStageThroughTheHostWithoutPeerAccess) {
  EXPECT_EXIT(stagedCopyScenario(), ::testing::ExitedWithCode(0), "");
}

TEST_F(MultiDeviceDeathTest, CopiesBetweenDevicesUsePeerAccessWhenPossible) {
  EXPECT_EXIT(peerCopyScenario(), ::testing::ExitedWithCode(0), "");
}

TEST_F(MultiDeviceDeathTest, ForeignMemoryIsItsOwnDevicesWhateverDeviceIsCurrent) {
  EXPECT_EXIT(pointerDeviceScenario(), ::testing::ExitedWithCode(0), "");
}

TEST_F(MultiDeviceDeathTest, TheFirstDeviceUsedIsTheOnlyOneOpenedAndKeepsItsPoolToItself) {
  EXPECT_EXIT(firstDeviceScenario(), ::testing::ExitedWithCode(0), "");
}

TEST_F(MultiDeviceDeathTest, KernelsTargetTheOldestVisibleDevice) {
  EXPECT_EXIT(oldestComputeCapabilityScenario(), ::testing::ExitedWithCode(0), "");
}

TEST_F(MultiDeviceDeathTest, AChildForkedAfterInitRefusesCuda) {
  EXPECT_EXIT(forkScenario(), ::testing::ExitedWithCode(0), "");
}

TEST_F(MultiDeviceDeathTest, ModulesLoadPerDeviceAndLaunchOnlyThere) {
  EXPECT_EXIT(moduleScenario(), ::testing::ExitedWithCode(0), "");
}

} // namespace
