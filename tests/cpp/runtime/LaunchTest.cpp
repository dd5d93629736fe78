// Launch configuration checks (shared by the GPU and host launches).
#include "runtime/Launch.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

using namespace ptxjit::runtime;

namespace {

// The message of the std::invalid_argument validateLaunch throws ("" if it does not throw).
std::string rejection(Dim3 grid, Dim3 block, const LaunchLimits &limits = LaunchLimits{}) {
  try {
    validateLaunch(grid, block, limits);
  } catch (const std::invalid_argument &e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

} // namespace

TEST(ValidateLaunch, DefaultLimitsAreTheGpuOnes) {
  LaunchLimits l;
  EXPECT_EQ(l.maxThreadsPerBlock, 1024u);
  EXPECT_EQ(l.maxBlockDim[0], 1024u);
  EXPECT_EQ(l.maxBlockDim[1], 1024u);
  EXPECT_EQ(l.maxBlockDim[2], 64u);
  EXPECT_EQ(l.maxGridDim[0], 2147483647u);
  EXPECT_EQ(l.maxGridDim[1], 65535u);
  EXPECT_EQ(l.maxGridDim[2], 65535u);
}

TEST(ValidateLaunch, AcceptsValidConfigurationsUpToTheLimits) {
  LaunchLimits l;
  EXPECT_EQ(rejection({1}, {1}), "");
  EXPECT_EQ(rejection({2147483647u, 65535u, 65535u}, {1024}), "");
  EXPECT_EQ(rejection({1}, {1, 1024}), "");
  EXPECT_EQ(rejection({1}, {1, 1, 64}), "");
  EXPECT_EQ(rejection({7, 3}, {32, 32}), "");
  EXPECT_EQ(rejection({1, 1, 5}, {16, 8, 8}), "");
  EXPECT_NO_THROW(validateLaunch({1}, {1024}, l));
}

TEST(ValidateLaunch, RejectsZeroDimensionsNamingTheAxis) {
  std::string m = rejection({0}, {1});
  EXPECT_TRUE(contains(m, "invalid launch configuration: grid (0, 1, 1): dimension x is 0")) << m;
  m = rejection({4, 0, 1}, {1});
  EXPECT_TRUE(contains(m, "grid (4, 0, 1): dimension y is 0")) << m;
  m = rejection({1, 1, 0}, {1});
  EXPECT_TRUE(contains(m, "dimension z is 0")) << m;
  m = rejection({1}, {0, 2, 2});
  EXPECT_TRUE(contains(m, "block (0, 2, 2): dimension x is 0")) << m;
  m = rejection({1}, {2, 0, 2});
  EXPECT_TRUE(contains(m, "block (2, 0, 2): dimension y is 0")) << m;
  m = rejection({1}, {2, 2, 0});
  EXPECT_TRUE(contains(m, "block (2, 2, 0): dimension z is 0")) << m;
}

TEST(ValidateLaunch, RejectsOversizedBlocks) {
  std::string m = rejection({1}, {1025});
  EXPECT_TRUE(contains(m, "block (1025, 1, 1): dimension x is 1025; at most 1024 is allowed")) << m;
  m = rejection({1}, {1, 1025});
  EXPECT_TRUE(contains(m, "dimension y is 1025; at most 1024")) << m;
  m = rejection({1}, {1, 1, 65});
  EXPECT_TRUE(contains(m, "block (1, 1, 65): dimension z is 65; at most 64 is allowed")) << m;
  m = rejection({1}, {1024, 2});
  EXPECT_TRUE(contains(m, "block (1024, 2, 1) has 2048 threads; at most 1024 threads per block"))
      << m;
  m = rejection({1}, {64, 64, 64}); // product overflows nothing: computed in 64 bits
  EXPECT_TRUE(contains(m, "has 262144 threads")) << m;
  m = rejection({1}, {1024, 1024, 64});
  EXPECT_TRUE(contains(m, "has 67108864 threads")) << m;
}

TEST(ValidateLaunch, RejectsOversizedGrids) {
  std::string m = rejection({2147483648u}, {1});
  EXPECT_TRUE(contains(m, "grid (2147483648, 1, 1): dimension x is 2147483648; at most "
                          "2147483647 is allowed"))
      << m;
  m = rejection({1, 65536}, {1});
  EXPECT_TRUE(contains(m, "dimension y is 65536; at most 65535")) << m;
  m = rejection({1, 1, 65536}, {1});
  EXPECT_TRUE(contains(m, "dimension z is 65536; at most 65535")) << m;
  m = rejection({0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu}, {1});
  EXPECT_TRUE(contains(m, "dimension x is 4294967295")) << m;
}

TEST(ValidateLaunch, UsesTheGivenLimits) {
  LaunchLimits small;
  small.maxThreadsPerBlock = 256;
  small.maxBlockDim = {256, 128, 4};
  small.maxGridDim = {100, 10, 1};
  EXPECT_EQ(rejection({100, 10, 1}, {256}, small), "");
  EXPECT_EQ(rejection({1}, {16, 16}, small), "");
  EXPECT_TRUE(contains(rejection({1}, {16, 32}, small), "512 threads; at most 256"));
  EXPECT_TRUE(contains(rejection({1}, {1, 1, 5}, small), "at most 4 is allowed"));
  EXPECT_TRUE(contains(rejection({101}, {1}, small), "at most 100 is allowed"));
  EXPECT_TRUE(contains(rejection({1, 1, 2}, {1}, small), "dimension z is 2; at most 1"));
}

TEST(LaunchKernel, NullFunctionIsRejectedBeforeTheDriver) {
  try {
    launchKernel(nullptr, {1}, {1}, 0, nullptr, nullptr);
    FAIL() << "no exception";
  } catch (const std::invalid_argument &e) {
    EXPECT_TRUE(contains(e.what(), "null")) << e.what();
  }
  EXPECT_THROW(functionAttributes(nullptr), std::invalid_argument);
  EXPECT_THROW(maxPotentialBlockSize(nullptr), std::invalid_argument);
}

TEST(LaunchKernel, NullFunctionIsRejectedByTheBufferLaunchAndTheLayoutCheck) {
  uint64_t buf = 0;
  EXPECT_THROW(launchKernelBuffer(nullptr, {1}, {1}, 0, nullptr, &buf, 8), std::invalid_argument);
  EXPECT_THROW(launchKernelBuffer(nullptr, {1}, {1}, 0, nullptr, nullptr, 0),
               std::invalid_argument);
  EXPECT_THROW(functionParamLayoutIs(nullptr, {}), std::invalid_argument);
}

namespace {

// A cuFuncGetParamInfo stand-in answering from `params` (CUDA_ERROR_INVALID_VALUE past the end),
// counting the calls.
struct FakeParamInfo {
  std::vector<ParamExtent> params;
  int calls = 0;
  CUresult operator()(size_t i, size_t *offset, size_t *size) {
    ++calls;
    if (i >= params.size())
      return CUDA_ERROR_INVALID_VALUE;
    *offset = params[i].offset;
    *size = params[i].size;
    return CUDA_SUCCESS;
  }
};

bool matches(const std::vector<ParamExtent> &expected, FakeParamInfo &driver) {
  return paramLayoutMatches(expected, std::ref(driver));
}

} // namespace

TEST(ParamLayout, MatchesOnlyTheSameExtentsAndCount) {
  // A Python float (f64 + its f32 copy), a bool, then a 1-d array (data, shape, stride).
  std::vector<ParamExtent> plan = {{0, 8}, {8, 4}, {12, 1}, {16, 8}, {24, 8}, {32, 8}};
  FakeParamInfo same{plan};
  EXPECT_TRUE(matches(plan, same));
  EXPECT_EQ(same.calls, 6); // every parameter, never one past the end (a driver error)

  FakeParamInfo offsetDiffers{plan};
  offsetDiffers.params[2].offset = 16;
  EXPECT_FALSE(matches(plan, offsetDiffers));
  FakeParamInfo sizeDiffers{plan};
  sizeDiffers.params[2].size = 4;
  EXPECT_FALSE(matches(plan, sizeDiffers));
  FakeParamInfo fewerInTheKernel{plan};
  fewerInTheKernel.params.pop_back();
  EXPECT_FALSE(matches(plan, fewerInTheKernel));
}

TEST(ParamLayout, NoParametersAndFailingQueries) {
  FakeParamInfo none{};
  EXPECT_TRUE(matches({}, none));
  EXPECT_EQ(none.calls, 0);
  // A driver error, or a query that throws, is a mismatch (launches fall back to pointers).
  EXPECT_FALSE(paramLayoutMatches(
      {{0, 8}}, [](size_t, size_t *, size_t *) { return CUDA_ERROR_NOT_SUPPORTED; }));
  EXPECT_FALSE(paramLayoutMatches({{0, 8}}, [](size_t, size_t *, size_t *) -> CUresult {
    throw std::runtime_error("query failed");
  }));
}
