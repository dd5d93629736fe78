// Host-side initialization of xoroshiro128+ generator states, as numba-cuda's
// numba.cuda.random initializes them (cuda.random.create_xoroshiro128p_states): the same
// algorithm, so the same seed gives the same states and the same streams of numbers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ptxjit::runtime {

/// One generator's state: the layout of numba-cuda's xoroshiro128p_dtype
/// (`[("s0", uint64), ("s1", uint64)]`, 16 bytes).
struct Xoroshiro128pState {
  uint64_t s0;
  uint64_t s1;
};
static_assert(sizeof(Xoroshiro128pState) == 16, "numba-cuda's xoroshiro128p_dtype is 16 bytes");

/// SplitMix64 of `seed`, both words of the state set to it (numba-cuda's
/// init_xoroshiro128p_state), so that small seeds do not start a predictable sequence.
Xoroshiro128pState xoroshiro128pSeed(uint64_t seed);

/// Advances `s` by one step and returns the step's output, s0 + s1 (xoroshiro128+).
uint64_t xoroshiro128pNext(Xoroshiro128pState &s);

/// Advances `s` by 2**64 steps (xoroshiro128+'s jump polynomial).
void xoroshiro128pJump(Xoroshiro128pState &s);

/// Fills `states[0..n)` as numba-cuda's init_xoroshiro128p_states_cpu does: state 0 is the
/// seeded state jumped `subsequenceStart` times, and each next state is the one before jumped
/// once, so the generators run 2**64 steps apart on one sequence.
void initXoroshiro128pStates(Xoroshiro128pState *states, size_t n, uint64_t seed,
                             uint64_t subsequenceStart);

} // namespace ptxjit::runtime
