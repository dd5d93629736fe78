// runtime/CudaApi.h against the CUDA toolkit's cuda.h: the same entry-point types, enumerator
// values and macro expansions, so that ptxjit built without a toolkit calls the driver exactly
// as one built with cuda.h would. Built only when cuda.h is found at configure time.
#include "tests/cpp/cudaapi/Facts.h"

#include <gtest/gtest.h>

using namespace ptxjit::testing;

TEST(CudaApi, MatchesTheToolkitsCudaH) {
  std::map<std::string, std::string> ours = ourCudaApiFacts(), theirs = toolkitCudaApiFacts();
  ASSERT_GT(ours.size(), 150u);
  ASSERT_EQ(ours.size(), theirs.size());
  for (const auto &[name, fact] : ours)
    EXPECT_EQ(fact, theirs.at(name)) << name;
}
