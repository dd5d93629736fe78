// Events, pinned/mapped/managed host memory, host registration, external streams and wrapped
// memory against the fake driver of tests/cpp/fakecuda (PTXJIT_LIBCUDA): the calls the runtime
// makes and the CUresult each failure names. The driver state is per process, so each scenario
// runs in a death-test child.
#include "runtime/Driver.h"
#include "runtime/Event.h"
#include "runtime/HostMemory.h"
#include "runtime/Memory.h"
#include "runtime/Module.h"
#include "runtime/Stream.h"

#include "tests/cpp/fakecuda/Scenario.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace ptxjit::runtime;
using namespace ptxjit::testing;

namespace {

[[noreturn]] void eventScenario() {
  useFakeDriver();
  auto start = Event::create(true);
  auto stop = Event::create(true);
  auto untimed = Event::create(false);
  SCENARIO_CHECK(start->timing() && !untimed->timing());
  SCENARIO_CHECK(failure([&] { Event::elapsedMs(*start, *stop); }) ==
                 "CUDA_ERROR_INVALID_HANDLE from cuEventElapsedTime"); // never recorded
  start->record(nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  stop->record(nullptr);
  stop->synchronize();
  SCENARIO_CHECK(stop->query());
  float ms = Event::elapsedMs(*start, *stop);
  SCENARIO_CHECK(ms >= 4.0f && ms < 1000.0f);
  untimed->record(nullptr);
  untimed->wait(nullptr);
  SCENARIO_CHECK(failure([&] { Event::elapsedMs(*untimed, *stop); }) ==
                 "CUDA_ERROR_INVALID_HANDLE from cuEventElapsedTime");
  std::exit(0);
}

[[noreturn]] void hostMemoryScenario() {
  useFakeDriver();
  auto pinned = HostMemory::allocate(HostMemory::Kind::Pinned, 64);
  SCENARIO_CHECK(pinned->hostPtr() && pinned->devicePtr() == 0 && pinned->size() == 64);
  std::memset(pinned->hostPtr(), 7, 64);
  auto mapped = HostMemory::allocate(HostMemory::Kind::Mapped, 32, true, true);
  SCENARIO_CHECK(mapped->devicePtr() == reinterpret_cast<CUdeviceptr>(mapped->hostPtr()));
  auto managed = HostMemory::allocate(HostMemory::Kind::Managed, 16);
  SCENARIO_CHECK(managed->devicePtr() == reinterpret_cast<CUdeviceptr>(managed->hostPtr()));
  auto empty = HostMemory::allocate(HostMemory::Kind::Pinned, 0);
  SCENARIO_CHECK(!empty->hostPtr());

  std::vector<char> buf(100);
  registerHost(buf.data(), buf.size());
  SCENARIO_CHECK(failure([&] { registerHost(buf.data(), buf.size()); }) ==
                 "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED from cuMemHostRegister");
  unregisterHost(buf.data());
  SCENARIO_CHECK(failure([&] { unregisterHost(buf.data()); }) ==
                 "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED from cuMemHostUnregister");
  registerHost(buf.data(), 0); // nothing to do
  std::exit(0);
}

[[noreturn]] void externalScenario() {
  useFakeDriver();
  {
    auto s = Stream::external(reinterpret_cast<CUstream>(0x1234));
    SCENARIO_CHECK(s->isExternal() && !s->isDefault() &&
                   s->handle() == reinterpret_cast<CUstream>(0x1234));
  } // not destroyed: the handle is someone else's
  SCENARIO_CHECK(!Stream::defaultStream()->isExternal());
  std::vector<char> owner(64, 3);
  {
    auto a = wrapMemory(reinterpret_cast<uint64_t>(owner.data()), owner.size(), false);
    SCENARIO_CHECK(!a->owned() && a->size() == 64);
    char byte = 0;
    a->download(&byte, 1, 10);
    SCENARIO_CHECK(byte == 3);
  } // never freed: `owner` is still ours
  owner[0] = 1;
  std::exit(0);
}

class FakeDriverDeathTest : public ::testing::Test {
protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

// The driver JIT's error log reaches the CudaError of a module load and of the linker.
[[noreturn]] void moduleLogScenario() {
  useFakeDriver();
  auto message = [](auto &&f) -> std::string {
    try {
      f();
    } catch (const CudaError &e) {
      return e.what();
    }
    return "";
  };
  std::string load = message([] { Module::loadPTX(".version 8.0\n"); });
  SCENARIO_CHECK(load.find("CUDA_ERROR_INVALID_PTX") != std::string::npos);
  SCENARIO_CHECK(load.find("JIT error log:\nfake: module rejected") != std::string::npos);
  std::string code = "extern \"C\" __device__ int f() { return 0; }";
  std::string link = message([&] {
    Module::loadLinked(".version 8.0\n", {{Module::LinkInput::Kind::Ptx, "f.ptx", &code}});
  });
  SCENARIO_CHECK(link.find("cuLinkAddData (kernel.ptx)") != std::string::npos);
  SCENARIO_CHECK(link.find("linker error log:\nfake: link input rejected") != std::string::npos);
  std::_Exit(0);
}

} // namespace

TEST_F(FakeDriverDeathTest, JitLogsReachModuleAndLinkerErrors) {
  EXPECT_EXIT(moduleLogScenario(), ::testing::ExitedWithCode(0), "");
}

TEST_F(FakeDriverDeathTest, EventsRecordWaitAndTime) {
  EXPECT_EXIT(eventScenario(), ::testing::ExitedWithCode(0), "");
}

TEST_F(FakeDriverDeathTest, PinnedMappedManagedAndRegisteredHostMemory) {
  EXPECT_EXIT(hostMemoryScenario(), ::testing::ExitedWithCode(0), "");
}

TEST_F(FakeDriverDeathTest, ExternalStreamsAndWrappedMemoryAreNotOwned) {
  EXPECT_EXIT(externalScenario(), ::testing::ExitedWithCode(0), "");
}
