"""``ptxjit.cuda.random``: numba-cuda's xoroshiro128+ random number generator.

The same state layout (``xoroshiro128p_dtype``), the same initialization and the same device
functions as numba-cuda's ``numba.cuda.random``, so a seed gives the same states and the same
streams of numbers (the normal variates go through ``math.log``/``cos``/``sqrt``, whose last
bits on the CPU backend may differ from libdevice's). The states are initialized on the host,
in C++ (``runtime/Xoroshiro.h``), as numba-cuda initializes them on the host, then copied to
the device. The device functions are ptxjit device functions: call them from kernels.

This module is loaded on first use (``cuda.random`` or ``import ptxjit.cuda.random``).
"""

import math
import operator

import numpy as np

# Absolute imports: this file is the module ptxjit.cuda.random (ptxjit/cuda.py loads it).
from ptxjit import cuda
from ptxjit.types import float32, float64, from_dtype, int64, uint32, uint64

__all__ = [
    "xoroshiro128p_dtype", "xoroshiro128p_type", "init_xoroshiro128p_state",
    "init_xoroshiro128p_states", "init_xoroshiro128p_states_cpu", "create_xoroshiro128p_states",
    "xoroshiro128p_next", "xoroshiro128p_jump", "xoroshiro128p_uniform_float32", "xoroshiro128p_uniform_float64",
    "xoroshiro128p_normal_float32", "xoroshiro128p_normal_float64",
]

# The algorithms are Blackman and Vigna's xoroshiro128+ and SplitMix64
# (http://xoroshiro.di.unimi.it/), with the constants, shifts and rotations of numba-cuda's
# random.py. The casts keep every operation in uint64 (NumPy would turn uint64 with a signed
# int into float64).

xoroshiro128p_dtype = np.dtype([("s0", np.uint64), ("s1", np.uint64)], align=True)
xoroshiro128p_type = from_dtype(xoroshiro128p_dtype)

_JUMP0 = np.uint64(0xBEAC0467EBA5FACB)
_JUMP1 = np.uint64(0xD86B048B86AA9922)
TWO_PI_FLOAT32 = np.float32(2 * math.pi)
TWO_PI_FLOAT64 = np.float64(2 * math.pi)


@cuda.jit(device=True)
def init_xoroshiro128p_state(states, index, seed):
    """Sets ``states[index]`` from a 64-bit seed through SplitMix64 (so that small seeds do
    not start a predictable sequence)."""
    index = int64(index)
    seed = uint64(seed)
    z = seed + uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> uint32(30))) * uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> uint32(27))) * uint64(0x94D049BB133111EB)
    z = z ^ (z >> uint32(31))
    states[index]["s0"] = z
    states[index]["s1"] = z


@cuda.jit(device=True)
def rotl(x, k):
    """Left rotate x by k bits."""
    x = uint64(x)
    k = uint32(k)
    return (x << k) | (x >> uint32(64 - k))


@cuda.jit(device=True)
def xoroshiro128p_next(states, index):
    """Returns the next random uint64 and advances the generator in ``states[index]``."""
    index = int64(index)
    s0 = states[index]["s0"]
    s1 = states[index]["s1"]
    result = s0 + s1
    s1 ^= s0
    states[index]["s0"] = uint64(rotl(s0, uint32(55))) ^ s1 ^ (s1 << uint32(14))
    states[index]["s1"] = uint64(rotl(s1, uint32(36)))
    return result


@cuda.jit(device=True)
def _jump_word(states, index, word, s0, s1):
    # One word of the jump polynomial: the xor of the states selected by its bits.
    for b in range(64):
        if word & (uint64(1) << uint32(b)):
            s0 ^= states[index]["s0"]
            s1 ^= states[index]["s1"]
        xoroshiro128p_next(states, index)
    return s0, s1


@cuda.jit(device=True)
def xoroshiro128p_jump(states, index):
    """Advances the generator in ``states[index]`` by 2**64 steps."""
    index = int64(index)
    s0, s1 = _jump_word(states, index, _JUMP0, uint64(0), uint64(0))
    s0, s1 = _jump_word(states, index, _JUMP1, s0, s1)
    states[index]["s0"] = s0
    states[index]["s1"] = s1


@cuda.jit(device=True)
def uint64_to_unit_float64(x):
    """Converts a uint64 to a float64 in [0.0, 1.0) (its top 53 bits)."""
    x = uint64(x)
    return (x >> uint32(11)) * (float64(1) / (uint64(1) << uint32(53)))


@cuda.jit(device=True)
def uint64_to_unit_float32(x):
    """Converts a uint64 to a float32 in [0.0, 1.0] (the float64 value rounded, as numba-cuda
    does: values just below 1 round to 1.0)."""
    x = uint64(x)
    return float32(uint64_to_unit_float64(x))


@cuda.jit(device=True)
def xoroshiro128p_uniform_float32(states, index):
    """Returns a float32 uniformly distributed in [0.0, 1.0) and advances ``states[index]``."""
    index = int64(index)
    return uint64_to_unit_float32(xoroshiro128p_next(states, index))


@cuda.jit(device=True)
def xoroshiro128p_uniform_float64(states, index):
    """Returns a float64 uniformly distributed in [0.0, 1.0) and advances ``states[index]``."""
    index = int64(index)
    return uint64_to_unit_float64(xoroshiro128p_next(states, index))


@cuda.jit(device=True)
def xoroshiro128p_normal_float32(states, index):
    """Returns a float32 drawn from the normal distribution (mean 0, sigma 1) by the
    Box-Muller transform; advances ``states[index]`` by two steps."""
    index = int64(index)
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    return math.sqrt(-float32(2.0) * math.log(u1)) * math.cos(TWO_PI_FLOAT32 * u2)


@cuda.jit(device=True)
def xoroshiro128p_normal_float64(states, index):
    """Returns a float64 drawn from the normal distribution (mean 0, sigma 1) by the
    Box-Muller transform; advances ``states[index]`` by two steps. As numba-cuda's, it draws
    its two uniform variates in float32 (so the streams are numba-cuda's)."""
    index = int64(index)
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    return math.sqrt(-float64(2.0) * math.log(u1)) * math.cos(TWO_PI_FLOAT64 * u2)


def _uint64(value, what):
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an integer, not {type(value).__name__}") from None
    return v


def init_xoroshiro128p_states_cpu(states, seed, subsequence_start):
    """Fills host array ``states`` (1-d, C-contiguous, of ``xoroshiro128p_dtype``) as
    ``init_xoroshiro128p_states`` fills a device array (numba-cuda's host function of this
    name)."""
    from ptxjit._loader import lib

    if not isinstance(states, np.ndarray) or states.dtype != xoroshiro128p_dtype or \
            states.ndim != 1 or not states.flags.c_contiguous or not states.flags.writeable:
        raise TypeError("states must be a writeable C-contiguous 1-d NumPy array of "
                        "xoroshiro128p_dtype")
    seed = _uint64(seed, "seed") % (1 << 64)
    start = _uint64(subsequence_start, "subsequence_start")
    if start < 0 or start >= 1 << 64:
        raise ValueError(f"subsequence_start must be in [0, 2**64), got {start}")
    lib().init_xoroshiro128p_states(states, seed, start)


def init_xoroshiro128p_states(states, seed, subsequence_start=0, stream=0):
    """Initializes the generator states of device array ``states`` (1-d, of
    ``xoroshiro128p_dtype``) for parallel generators: ``states[i]`` starts ``i`` jumps of
    2**64 steps after the seeded state (``subsequence_start`` jumps more), so the generators
    are independent as long as none draws more than 2**64 numbers. The states are computed on
    the host and copied on ``stream``. ``seed`` is taken modulo 2**64, as numba-cuda's
    ``uint64(seed)``."""
    if getattr(states, "dtype", None) != xoroshiro128p_dtype or getattr(states, "ndim", 0) != 1:
        raise TypeError("states must be a 1-d device array of xoroshiro128p_dtype, got "
                        f"{type(states).__name__}")
    host = np.empty(shape=states.shape, dtype=xoroshiro128p_dtype)
    init_xoroshiro128p_states_cpu(host, seed, subsequence_start)
    states.copy_to_device(host, stream=stream)


def create_xoroshiro128p_states(n, seed, subsequence_start=0, stream=0):
    """A new device array of ``n`` generator states initialized by
    ``init_xoroshiro128p_states(states, seed, subsequence_start, stream)``."""
    states = cuda.device_array(n, dtype=xoroshiro128p_dtype, stream=stream)
    init_xoroshiro128p_states(states, seed, subsequence_start, stream)
    return states
