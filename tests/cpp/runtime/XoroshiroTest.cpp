// xoroshiro128+ state initialization (numba-cuda's cuda.random): SplitMix64's published first
// output, one step computed by hand, and the jump checked against 2**64 steps computed
// independently, as the 2**64-th power of the generator's GF(2) transition matrix.
#include "runtime/Xoroshiro.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

using namespace ptxjit::runtime;

namespace {

bool same(const Xoroshiro128pState &a, const Xoroshiro128pState &b) {
  return a.s0 == b.s0 && a.s1 == b.s1;
}

/// A linear map of states over GF(2), by the images of the 128 unit states.
using LinearMap = std::array<Xoroshiro128pState, 128>;

Xoroshiro128pState unit(int bit) {
  Xoroshiro128pState s{0, 0};
  (bit < 64 ? s.s0 : s.s1) = uint64_t{1} << (bit % 64);
  return s;
}

Xoroshiro128pState applyMap(const LinearMap &m, const Xoroshiro128pState &s) {
  Xoroshiro128pState r{0, 0};
  for (int bit = 0; bit < 128; ++bit)
    if ((bit < 64 ? s.s0 : s.s1) >> (bit % 64) & 1) {
      r.s0 ^= m[bit].s0;
      r.s1 ^= m[bit].s1;
    }
  return r;
}

} // namespace

TEST(Xoroshiro, SeedIsSplitMix64) {
  // SplitMix64's first output for seed 0 (the reference splitmix64.c).
  Xoroshiro128pState s = xoroshiro128pSeed(0);
  EXPECT_EQ(s.s0, 0xE220A8397B1DCDAFull);
  EXPECT_EQ(s.s1, s.s0);
}

TEST(Xoroshiro, NextStep) {
  Xoroshiro128pState s{1, 2};
  EXPECT_EQ(xoroshiro128pNext(s), 3u);
  // s1 ^= s0 -> 3; s0 = rotl(1, 55) ^ 3 ^ (3 << 14); s1 = rotl(3, 36).
  EXPECT_EQ(s.s0, (uint64_t{1} << 55) ^ 3u ^ (uint64_t{3} << 14));
  EXPECT_EQ(s.s1, uint64_t{3} << 36);
}

TEST(Xoroshiro, JumpIsTwoToThe64Steps) {
  LinearMap step;
  for (int bit = 0; bit < 128; ++bit) {
    step[bit] = unit(bit);
    xoroshiro128pNext(step[bit]);
  }
  LinearMap power = step; // step**(2**k), squared 64 times
  for (int k = 0; k < 64; ++k) {
    LinearMap squared;
    for (int bit = 0; bit < 128; ++bit)
      squared[bit] = applyMap(power, power[bit]);
    power = squared;
  }
  for (uint64_t seed : {0ull, 1ull, 12345ull, ~0ull}) {
    Xoroshiro128pState s = xoroshiro128pSeed(seed);
    Xoroshiro128pState expected = applyMap(power, s);
    xoroshiro128pJump(s);
    EXPECT_TRUE(same(s, expected)) << "seed " << seed;
  }
}

TEST(Xoroshiro, StatesAreSuccessiveJumps) {
  std::vector<Xoroshiro128pState> a(5), b(3);
  initXoroshiro128pStates(a.data(), a.size(), 42, 0);
  Xoroshiro128pState s = xoroshiro128pSeed(42);
  for (const Xoroshiro128pState &got : a) {
    EXPECT_TRUE(same(got, s));
    xoroshiro128pJump(s);
  }
  // subsequenceStart = 2 starts two jumps further along the same sequence.
  initXoroshiro128pStates(b.data(), b.size(), 42, 2);
  for (size_t i = 0; i < b.size(); ++i)
    EXPECT_TRUE(same(b[i], a[i + 2])) << i;
  initXoroshiro128pStates(nullptr, 0, 42, 7); // no states: nothing is written
}
