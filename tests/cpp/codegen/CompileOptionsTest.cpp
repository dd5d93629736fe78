#include "codegen/CompileOptions.h"

#include <gtest/gtest.h>

#include <unordered_set>

using namespace ptxjit::codegen;

namespace {

TEST(CompileOptions, Str) {
  CompileOptions o;
  EXPECT_EQ(o.str(), "cuda sm_90 ptx80 O3");
  o.backend = Backend::Host;
  o.fastmath = true;
  EXPECT_EQ(o.str(), "host O3 fastmath");
  CompileOptions c;
  c.ccMajor = 8;
  c.ccMinor = 6;
  c.ptxVersion = 78;
  c.optLevel = 0;
  EXPECT_EQ(c.str(), "cuda sm_86 ptx78 O0");
}

TEST(CompileOptions, HashDistinguishesEveryField) {
  std::vector<CompileOptions> all;
  CompileOptions base;
  all.push_back(base);
  auto with = [&](auto mutate) {
    CompileOptions o = base;
    mutate(o);
    all.push_back(o);
  };
  with([](CompileOptions &o) { o.backend = Backend::Host; });
  with([](CompileOptions &o) { o.ccMajor = 8; });
  with([](CompileOptions &o) { o.ccMinor = 9; });
  with([](CompileOptions &o) { o.ptxVersion = 78; });
  with([](CompileOptions &o) { o.fastmath = true; });
  with([](CompileOptions &o) { o.optLevel = 2; });
  std::unordered_set<size_t> hashes;
  for (auto &o : all)
    hashes.insert(o.hash());
  EXPECT_EQ(hashes.size(), all.size());
  // Equal options hash equally and work as unordered keys.
  CompileOptions copy = base;
  EXPECT_EQ(copy.hash(), base.hash());
  std::unordered_set<CompileOptions> set(all.begin(), all.end());
  set.insert(copy);
  EXPECT_EQ(set.size(), all.size());
}

TEST(ChoosePtxVersion, UnknownDriverGivesNewestLlvmVersion) {
  EXPECT_EQ(choosePtxVersion(9, 0, 0), 85);
  EXPECT_EQ(choosePtxVersion(7, 5, 0), 85);
}

TEST(ChoosePtxVersion, LimitedByDriver) {
  EXPECT_EQ(choosePtxVersion(9, 0, 12000), 80);
  EXPECT_EQ(choosePtxVersion(9, 0, 12020), 82);
  EXPECT_EQ(choosePtxVersion(9, 0, 12040), 84);
  EXPECT_EQ(choosePtxVersion(8, 6, 11040), 74);
  EXPECT_EQ(choosePtxVersion(7, 0, 10020), 65);
  // A newer driver than LLVM 19 knows: LLVM's newest.
  EXPECT_EQ(choosePtxVersion(9, 0, 12080), 85);
  EXPECT_EQ(choosePtxVersion(9, 0, 13000), 85);
}

TEST(ChoosePtxVersion, NeverBelowTheMinimumForTheArchitecture) {
  // sm_90 needs PTX 7.8 even if the reported driver looks older.
  EXPECT_EQ(choosePtxVersion(9, 0, 11040), 78);
  EXPECT_EQ(choosePtxVersion(8, 0, 10020), 70);
  // Architectures newer than LLVM 19 knows are compiled for sm_90: newest LLVM PTX.
  EXPECT_EQ(choosePtxVersion(10, 0, 0), 85);
  EXPECT_EQ(choosePtxVersion(12, 0, 12080), 85);
}

} // namespace
