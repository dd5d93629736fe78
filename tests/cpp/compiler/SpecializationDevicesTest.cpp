// A compiled kernel (compiler::Specialization) loads once per device it runs on: against the
// fake driver of tests/cpp/fakecuda set to expose two devices, cudaFunction() on each device
// loads that device's module once, and launchCuda() runs on the calling thread's current
// device. The driver state is per process, so the scenario runs in a death-test child.
#include "compiler/Compiler.h"
#include "runtime/Device.h"
#include "runtime/Driver.h"

#include "tests/cpp/fakecuda/Scenario.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <thread>

using namespace ptxjit;
using namespace ptxjit::testing;

namespace {

int loads(int device) { return fake<int (*)(int)>("fakeCudaModuleLoads")(device); }
int launches(int device) { return fake<int (*)(int)>("fakeCudaLaunches")(device); }

[[noreturn]] void perDeviceScenario() {
  useFakeDriver();
  fake<void (*)(int)>("fakeCudaSetDeviceCount")(2);

  compiler::Specialization spec;
  spec.functionName = "k";
  spec.options.backend = codegen::Backend::CUDA;
  spec.ptx = "// fake-ok\n.entry k()\n";
  spec.symbol = "k";
  char buf[8] = {};
  void *params[1] = {};

  SCENARIO_CHECK(!spec.loaded());
  CUfunction f0 = spec.cudaFunction();
  SCENARIO_CHECK(spec.loaded() && loads(0) == 1 && loads(1) == 0);
  spec.launchCuda({}, {}, 0, nullptr, buf, params);
  SCENARIO_CHECK(launches(0) == 1);

  // Device 1: not loaded there yet; the first use loads a module of its own, once.
  runtime::Device::select(1);
  SCENARIO_CHECK(!spec.loaded());
  spec.launchCuda({}, {}, 0, nullptr, buf, params);
  CUfunction f1 = spec.cudaFunction();
  SCENARIO_CHECK(f1 != f0 && spec.loaded() && loads(1) == 1 && launches(1) == 1);
  SCENARIO_CHECK(spec.cudaFunction(0) == f0 && loads(0) == 1);
  SCENARIO_CHECK(runtime::Device::currentOrdinal() == 1);

  // Loading for a device other than the current one leaves the thread's device alone.
  compiler::Specialization other;
  other.functionName = "k";
  other.options.backend = codegen::Backend::CUDA;
  other.ptx = spec.ptx;
  other.symbol = "k";
  other.cudaFunction(0);
  SCENARIO_CHECK(loads(0) == 2 && runtime::Device::currentOrdinal() == 1);

  // Another thread launches on its own current device (0) with device 0's function.
  std::thread([&] { spec.launchCuda({}, {}, 0, nullptr, buf, params); }).join();
  SCENARIO_CHECK(launches(0) == 2 && launches(1) == 1 && loads(0) == 2);
  std::exit(0);
}

TEST(SpecializationDevicesDeathTest, LoadsOncePerDeviceAndLaunchesOnTheCurrentOne) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(perDeviceScenario(), ::testing::ExitedWithCode(0), "");
}

} // namespace
