// xoroshiro128+ and SplitMix64 (Blackman and Vigna, http://xoroshiro.di.unimi.it/), with the
// constants and the shift and rotation amounts numba-cuda's random.py uses.
#include "runtime/Xoroshiro.h"

namespace ptxjit::runtime {

namespace {

uint64_t rotl(uint64_t x, unsigned k) { return (x << k) | (x >> (64 - k)); }

} // namespace

Xoroshiro128pState xoroshiro128pSeed(uint64_t seed) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z = z ^ (z >> 31);
  return {z, z};
}

uint64_t xoroshiro128pNext(Xoroshiro128pState &s) {
  uint64_t s0 = s.s0, s1 = s.s1;
  uint64_t result = s0 + s1;
  s1 ^= s0;
  s.s0 = rotl(s0, 55) ^ s1 ^ (s1 << 14);
  s.s1 = rotl(s1, 36);
  return result;
}

void xoroshiro128pJump(Xoroshiro128pState &s) {
  static constexpr uint64_t kJump[2] = {0xBEAC0467EBA5FACBull, 0xD86B048B86AA9922ull};
  uint64_t s0 = 0, s1 = 0;
  for (uint64_t word : kJump)
    for (unsigned b = 0; b < 64; ++b) {
      if (word & (uint64_t{1} << b)) {
        s0 ^= s.s0;
        s1 ^= s.s1;
      }
      xoroshiro128pNext(s);
    }
  s.s0 = s0;
  s.s1 = s1;
}

void initXoroshiro128pStates(Xoroshiro128pState *states, size_t n, uint64_t seed,
                             uint64_t subsequenceStart) {
  if (n == 0)
    return;
  states[0] = xoroshiro128pSeed(seed);
  for (uint64_t k = 0; k < subsequenceStart; ++k)
    xoroshiro128pJump(states[0]);
  for (size_t i = 1; i < n; ++i) {
    states[i] = states[i - 1];
    xoroshiro128pJump(states[i]);
  }
}

} // namespace ptxjit::runtime
