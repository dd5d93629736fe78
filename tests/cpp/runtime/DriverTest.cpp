// The driver loader and error reporting. Most of these run on a machine without a driver; the
// ones that need the opposite skip themselves.
#include "runtime/Driver.h"
#include "runtime/Device.h"
#include "runtime/Launch.h"
#include "runtime/Memory.h"
#include "runtime/Module.h"
#include "runtime/Stream.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

using namespace ptxjit::runtime;

namespace {

bool contains(const std::string &haystack, const std::string &needle) {
  return haystack.find(needle) != std::string::npos;
}

// Runs in a death-test child (a fresh process): loads the driver from `library`, prints the
// reason it is unavailable to stderr, exits 0 when unavailable and 1 when available.
[[noreturn]] void probeDriverFrom(const char *library) {
  setenv("PTXJIT_LIBCUDA", library, 1);
  std::string why;
  bool ok = driverAvailable(&why);
  std::fprintf(stderr, "why=[%s]\n", why.c_str());
  std::fflush(stderr);
  std::exit(ok ? 1 : 0);
}

class DriverDeathTest : public ::testing::Test {
protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

} // namespace

TEST(NoDriver, DriverAvailableIsFalseWithAReason) {
  if (driverAvailable())
    GTEST_SKIP() << "a CUDA driver is available here";
  std::string why;
  EXPECT_FALSE(driverAvailable(&why));
  ASSERT_FALSE(why.empty());
  const char *env = std::getenv("PTXJIT_LIBCUDA");
  EXPECT_TRUE(contains(why, env && *env ? env : "libcuda.so.1")) << why;
  // The outcome is computed once and remembered.
  std::string again;
  EXPECT_FALSE(driverAvailable(&again));
  EXPECT_EQ(why, again);
  EXPECT_FALSE(driverAvailable(nullptr));
}

TEST(NoDriver, DriverThrowsDriverUnavailableWithTheReason) {
  std::string why;
  if (driverAvailable(&why))
    GTEST_SKIP() << "a CUDA driver is available here";
  try {
    driver();
    FAIL() << "driver() did not throw";
  } catch (const DriverUnavailable &e) {
    std::string msg = e.what();
    EXPECT_EQ(msg, "CUDA driver unavailable: " + why);
    const char *env = std::getenv("PTXJIT_LIBCUDA");
    if (!env || !*env) { // the default library is simply absent on a machine without a driver
      EXPECT_TRUE(contains(msg, "libcuda.so.1 could not be loaded (")) << msg;
    }
  }
  EXPECT_THROW(driver(), std::runtime_error); // DriverUnavailable is a runtime_error
  EXPECT_THROW(driverVersion(), DriverUnavailable);
  EXPECT_FALSE(driverShuttingDown());
}

TEST(NoDriver, EveryDriverBoundCallThrowsDriverUnavailable) {
  if (driverAvailable())
    GTEST_SKIP() << "a CUDA driver is available here";
  EXPECT_THROW(Device::current(), DriverUnavailable);
  EXPECT_FALSE(Device::Cleanup(0));
  EXPECT_THROW(Device::count(), DriverUnavailable);
  EXPECT_THROW(Device::select(1), DriverUnavailable);
  EXPECT_EQ(Device::currentOrdinal(), 0);
  EXPECT_THROW(synchronize(), DriverUnavailable);
  EXPECT_THROW(memoryInfo(), DriverUnavailable);
  EXPECT_THROW(allocateDevice(64), DriverUnavailable);
  EXPECT_THROW(allocateDevice(0), DriverUnavailable);
  int x = 0;
  EXPECT_THROW(copyHostToDevice(0, &x, sizeof x), DriverUnavailable);
  EXPECT_THROW(copyDeviceToHost(&x, 0, sizeof x), DriverUnavailable);
  EXPECT_THROW(copyDeviceToDevice(0, 0, 4), DriverUnavailable);
  EXPECT_THROW(fillDevice(0, 0, 4), DriverUnavailable);
  EXPECT_THROW(Module::loadPTX(".version 7.0\n"), DriverUnavailable);
  EXPECT_THROW(Stream::create(), DriverUnavailable);
  EXPECT_THROW(Stream::create(false), DriverUnavailable);
  EXPECT_THROW(poolDeviceAllocator(), DriverUnavailable);
  EXPECT_THROW(deviceLaunchLimits(), DriverUnavailable);
  // The default stream object exists without a driver; using it needs one.
  const std::shared_ptr<Stream> &def = Stream::defaultStream();
  ASSERT_TRUE(def);
  EXPECT_TRUE(def->isDefault());
  EXPECT_EQ(def->handle(), nullptr);
  EXPECT_THROW(def->synchronize(), DriverUnavailable);
  EXPECT_THROW(def->query(), DriverUnavailable);
  // A non-null (fake) function passes the argument check and then needs the driver.
  auto fake = reinterpret_cast<CUfunction>(uintptr_t(0x1000));
  EXPECT_THROW(launchKernel(fake, {1}, {1}, 0, nullptr, nullptr), DriverUnavailable);
  EXPECT_THROW(functionAttributes(fake), DriverUnavailable);
  EXPECT_THROW(maxPotentialBlockSize(fake), DriverUnavailable);
}

TEST(CudaErrorTest, FormatsNameCodeAndText) {
  CudaError e(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc");
  EXPECT_STREQ(e.what(), "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory");
  EXPECT_EQ(e.code(), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(e.call(), "cuMemAlloc");
  const std::runtime_error &base = e;
  EXPECT_STREQ(base.what(), e.what());
}

TEST(CudaErrorTest, AppendsTheDetailOnANewLine) {
  CudaError e(CUDA_ERROR_INVALID_VALUE, "cuLaunchKernel", "grid (0, 1, 1)");
  EXPECT_STREQ(e.what(), "cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE (1): invalid argument\n"
                         "grid (0, 1, 1)");
  EXPECT_EQ(e.code(), CUDA_ERROR_INVALID_VALUE);
}

TEST(CudaErrorTest, UnknownCodesStillGetAName) {
  CudaError e(static_cast<CUresult>(12345), "cuFoo");
  EXPECT_STREQ(e.what(), "cuFoo failed: CUDA_ERROR_UNRECOGNIZED_12345 (12345)");
  EXPECT_EQ(errorName(static_cast<CUresult>(12345)), "CUDA_ERROR_UNRECOGNIZED_12345");
  EXPECT_EQ(errorString(static_cast<CUresult>(12345)), "");
}

TEST(CudaErrorTest, BuiltInTableNamesEveryCommonCode) {
  struct Case {
    CUresult code;
    const char *name;
  } cases[] = {
      {CUDA_SUCCESS, "CUDA_SUCCESS"},
      {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED"},
      {CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED"},
      {CUDA_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY"},
      {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE"},
      {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX"},
      {CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
      {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND"},
      {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS"},
      {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
      {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED"},
      {CUDA_ERROR_MISALIGNED_ADDRESS, "CUDA_ERROR_MISALIGNED_ADDRESS"},
      {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN"},
  };
  for (const Case &c : cases) {
    EXPECT_EQ(errorName(c.code), c.name);
    EXPECT_FALSE(errorString(c.code).empty()) << c.name;
  }
  if (!driverAvailable()) { // built-in texts (a driver may word some differently)
    EXPECT_EQ(errorString(CUDA_ERROR_INVALID_PTX), "a PTX JIT compilation failed");
    EXPECT_EQ(errorString(CUDA_ERROR_ILLEGAL_ADDRESS), "an illegal memory access was encountered");
    // A code with a name but no built-in text: "NAME (code)" only.
    CudaError e(CUDA_ERROR_TOO_MANY_PEERS, "cuCtxEnablePeerAccess");
    EXPECT_STREQ(e.what(), "cuCtxEnablePeerAccess failed: CUDA_ERROR_TOO_MANY_PEERS (711)");
  }
}

TEST(CudaErrorTest, CheckThrowsOnlyOnFailure) {
  EXPECT_NO_THROW(check(CUDA_SUCCESS, "cuCtxSynchronize"));
  try {
    check(CUDA_ERROR_INVALID_HANDLE, "cuStreamSynchronize");
    FAIL() << "check did not throw";
  } catch (const CudaError &e) {
    EXPECT_EQ(e.code(), CUDA_ERROR_INVALID_HANDLE);
    EXPECT_EQ(e.call(), "cuStreamSynchronize");
    EXPECT_EQ(std::string(e.what()).rfind(
                  "cuStreamSynchronize failed: CUDA_ERROR_INVALID_HANDLE (400)", 0),
              0u)
        << e.what();
  }
  EXPECT_THROW(throwCudaError(CUDA_ERROR_NOT_READY, "cuStreamQuery"), CudaError);
}

// In a fresh process, each probe loads a different library through PTXJIT_LIBCUDA.
TEST_F(DriverDeathTest, MissingLibraryReportsTheDlopenError) {
  EXPECT_EXIT(probeDriverFrom("/nonexistent/dir/libcuda.so.1"), ::testing::ExitedWithCode(0),
              "the CUDA driver library /nonexistent/dir/libcuda.so.1 could not be loaded "
              "\\(.*No such file");
}

TEST_F(DriverDeathTest, LibraryWithoutTheEntryPointsIsRejected) {
  EXPECT_EXIT(probeDriverFrom("libm.so.6"), ::testing::ExitedWithCode(0),
              "libm.so.6 lacks the entry points cuInit, cuDriverGetVersion, .*cuStreamQuery");
}

// The toolkit's stub libcuda exports every driver symbol and fails cuInit: this proves that all
// of the table's versioned names resolve against CUDA 13, and the cuInit failure path.
TEST_F(DriverDeathTest, StubLibraryResolvesEveryEntryPointAndFailsCuInit) {
  const char *stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (!std::filesystem::exists(stub))
    GTEST_SKIP() << stub << " not present";
  EXPECT_EXIT(probeDriverFrom(stub), ::testing::ExitedWithCode(0),
              "why=\\[cuInit failed: CUDA_ERROR_STUB_LIBRARY \\(34\\): CUDA driver is a stub "
              "library \\(driver library /usr/local/cuda/lib64/stubs/libcuda.so\\)\\]");
}
