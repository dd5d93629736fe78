"""Kernels end to end: launches with host and device arrays, grids of 1-3 dimensions, and the
Python semantics of the kernel language, on the CPU backend and (where present) on CUDA."""
import numpy as np
import pytest

from ptxjit import cuda, errors, float32


# --------------------------------------------------------------------------------------------
# The example
# --------------------------------------------------------------------------------------------

@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


def test_saxpy_host_arrays(backend):
    n = 100_000
    rng = np.random.default_rng(0)
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    out = np.zeros_like(x)
    saxpy[(n + 255) // 256, 256](np.float32(2.0), x, y, out)
    np.testing.assert_allclose(out, np.float32(2.0) * x + y, rtol=1e-6)


def test_saxpy_device_arrays(backend):
    n = 10_000
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, dtype=np.float32)
    d_x, d_y = cuda.to_device(x), cuda.to_device(y)
    d_out = cuda.device_array_like(x)
    saxpy[(n + 255) // 256, 256](2.0, d_x, d_y, d_out)
    result = d_out.copy_to_host()
    assert result.dtype == np.float32
    np.testing.assert_allclose(result, 2.0 * x + y)


def test_saxpy_partial_last_block_leaves_rest_untouched(backend):
    x = np.ones(10, dtype=np.float64)
    out = np.full(12, -1.0)
    saxpy[1, 32](3.0, x, x, out)
    assert (out[:10] == 4.0).all()
    assert (out[10:] == -1.0).all()


def test_configured_kernel_can_be_reused(backend):
    x = np.arange(64, dtype=np.float32)
    out = np.zeros_like(x)
    cfg = saxpy[2, 32]
    for k in range(3):
        cfg(np.float32(k), x, x, out)
        np.testing.assert_allclose(out, k * x + x)
    assert cfg.griddim == (2, 1, 1) and cfg.blockdim == (32, 1, 1)


# --------------------------------------------------------------------------------------------
# Grids
# --------------------------------------------------------------------------------------------

@cuda.jit
def fill_2d(out):
    i, j = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = i * 1000 + j


@cuda.jit
def fill_3d(out):
    i, j, k = cuda.grid(3)
    if i < out.shape[0] and j < out.shape[1] and k < out.shape[2]:
        out[i, j, k] = i * 10000 + j * 100 + k


@cuda.jit
def grid_stride(x, out):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, x.size, stride):
        out[i] = x[i] * 2


@cuda.jit
def indices(tid, bid, bdim, gdim):
    i = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    if i < tid.size:
        tid[i] = cuda.threadIdx.x
        bid[i] = cuda.blockIdx.x
        bdim[i] = cuda.blockDim.x
        gdim[i] = cuda.gridDim.x


@cuda.jit
def indices_yz(out):
    x = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    y = cuda.threadIdx.y + cuda.blockIdx.y * cuda.blockDim.y
    z = cuda.threadIdx.z + cuda.blockIdx.z * cuda.blockDim.z
    if x < out.shape[2] and y < out.shape[1] and z < out.shape[0]:
        out[z, y, x] = cuda.gridDim.z * 100 + cuda.blockDim.y * 10 + cuda.gridDim.y


@cuda.jit
def gridsize_2d(out):
    w, h = cuda.gridsize(2)
    out[0] = w
    out[1] = h


def test_2d_grid(backend):
    out = np.zeros((37, 45), dtype=np.int64)
    fill_2d[(3, 4), (16, 16)](out)
    i, j = np.indices(out.shape)
    np.testing.assert_array_equal(out, i * 1000 + j)


def test_2d_grid_fortran_and_strided(backend):
    out = np.zeros((20, 30), dtype=np.float64, order="F")
    fill_2d[(2, 2), (16, 16)](out)
    i, j = np.indices(out.shape)
    np.testing.assert_array_equal(out, i * 1000 + j)
    big = np.zeros((40, 30))
    view = big[::2, 1:]
    fill_2d[(2, 2), (16, 16)](view)
    i, j = np.indices(view.shape)
    np.testing.assert_array_equal(view, i * 1000 + j)
    assert (big[1::2] == 0).all() and (big[:, 0] == 0).all()


def test_3d_grid(backend):
    out = np.zeros((5, 6, 7), dtype=np.int32)
    fill_3d[(2, 2, 2), (4, 4, 4)](out)
    i, j, k = np.indices(out.shape)
    np.testing.assert_array_equal(out, i * 10000 + j * 100 + k)


def test_grid_stride_loop(backend):
    x = np.arange(10_000, dtype=np.float64)
    out = np.zeros_like(x)
    grid_stride[4, 64](x, out)
    np.testing.assert_array_equal(out, 2 * x)


def test_thread_and_block_indices(backend):
    n = 96
    arrays = [np.full(n, -1, dtype=np.int32) for _ in range(4)]
    indices[3, 32](*arrays)
    tid, bid, bdim, gdim = arrays
    np.testing.assert_array_equal(tid, np.arange(n) % 32)
    np.testing.assert_array_equal(bid, np.arange(n) // 32)
    assert (bdim == 32).all() and (gdim == 3).all()


@cuda.jit
def index_products(out):
    b = cuda.blockDim.x
    out[0] = b * b * b * b  # 256**4 = 2**32: wraps in int32, not in Numba's int64
    out[1] = cuda.threadIdx.x - cuda.blockDim.x  # negative, not a uint32 wrap-around
    out[2] = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x


def test_thread_index_arithmetic_is_int64(backend):
    out = np.zeros(3, dtype=np.int64)
    index_products[1, 256](out)
    assert out[0] == 256 ** 4
    assert -256 <= out[1] < 0  # whichever thread wrote last
    assert 0 <= out[2] < 256


def test_thread_indices_y_z(backend):
    out = np.zeros((4, 6, 8), dtype=np.int64)
    indices_yz[(2, 3, 2), (4, 2, 2)](out)
    assert (out == 2 * 100 + 2 * 10 + 3).all()


def test_gridsize_2d(backend):
    out = np.zeros(2, dtype=np.int64)
    gridsize_2d[(3, 5), (4, 2)](out)
    assert out.tolist() == [12, 10]


def test_forall(backend):
    x = np.arange(1000, dtype=np.float64)
    out = np.zeros_like(x)
    grid_stride.forall(x.size)(x, out)
    np.testing.assert_array_equal(out, 2 * x)


# --------------------------------------------------------------------------------------------
# Operators and Python semantics
# --------------------------------------------------------------------------------------------

@cuda.jit
def int_ops(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        y = b[i]
        out[i, 0] = x + y
        out[i, 1] = x - y
        out[i, 2] = x * y
        out[i, 3] = x // y
        out[i, 4] = x % y
        out[i, 5] = x & y
        out[i, 6] = x | y
        out[i, 7] = x ^ y
        out[i, 8] = -x
        out[i, 9] = ~x
        out[i, 10] = x << 2
        out[i, 11] = x >> 1


def test_integer_operators_follow_python(backend):
    a = np.array([7, -7, 7, -7, 0, 13, -1], dtype=np.int64)
    b = np.array([2, 2, -2, -2, 3, 5, 7], dtype=np.int64)
    out = np.zeros((a.size, 12), dtype=np.int64)
    int_ops[1, 32](a, b, out)
    for i, (x, y) in enumerate(zip(a.tolist(), b.tolist())):
        assert out[i].tolist() == [x + y, x - y, x * y, x // y, x % y, x & y, x | y, x ^ y, -x,
                                   ~x, x << 2, x >> 1], (x, y)


@cuda.jit
def float_ops(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        y = b[i]
        out[i, 0] = x / y
        out[i, 1] = x // y
        out[i, 2] = x % y
        out[i, 3] = x ** y
        out[i, 4] = -x
        out[i, 5] = abs(x)


def test_float_operators_follow_python(backend):
    a = np.array([7.5, -7.5, 7.5, -7.5, 2.0], dtype=np.float64)
    b = np.array([2.0, 2.0, -2.0, -2.0, 0.5], dtype=np.float64)
    out = np.zeros((a.size, 6))
    float_ops[1, 32](a, b, out)
    for i, (x, y) in enumerate(zip(a.tolist(), b.tolist())):
        expected = [x / y, x // y, x % y, x ** y, -x, abs(x)]
        np.testing.assert_allclose(out[i], expected, rtol=1e-12, err_msg=str((x, y)))


@cuda.jit
def true_div_ints(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] / b[i]


def test_true_division_of_ints_gives_float64(backend):
    a = np.array([7, -7, 1], dtype=np.int32)
    b = np.array([2, 2, 3], dtype=np.int32)
    out = np.zeros(3)
    true_div_ints[1, 8](a, b, out)
    np.testing.assert_allclose(out, [3.5, -3.5, 1 / 3], rtol=1e-15)
    sig = true_div_ints.signatures[0]
    assert "sdiv" not in true_div_ints.inspect_llvm(sig)


@cuda.jit
def int_pow(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] ** b[i]


def test_integer_power(backend):
    a = np.array([2, 3, -2, 1, -1, 5, 2], dtype=np.int64)
    b = np.array([10, 3, 3, -3, -3, 0, -1], dtype=np.int64)
    out = np.zeros(a.size, dtype=np.int64)
    int_pow[1, 8](a, b, out)
    expected = [1024, 27, -8, 1, -1, 1, 0]
    assert out.tolist() == expected


@cuda.jit
def wraparound(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] + a[i]


def test_integer_wraparound(backend):
    a = np.array([100, 127, -128], dtype=np.int8)
    out = np.zeros(3, dtype=np.int8)
    wraparound[1, 4](a, out)
    assert out.tolist() == [-56, -2, 0]
    big = np.array([2**62, 2**63 - 1], dtype=np.int64)
    out64 = np.zeros(2, dtype=np.int64)
    wraparound[1, 4](big, out64)
    assert out64.tolist() == [-(2**63), -2]


@cuda.jit
def compares(x, n, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i, 0] = 0 <= v < n
        out[i, 1] = v < 0 or v >= n
        out[i, 2] = v > 1 and v < 4
        out[i, 3] = not v
        out[i, 4] = 1 if v == 2 else (2 if v != 3 else 3)
        out[i, 5] = v == 3


def test_chained_compare_and_or_conditional(backend):
    x = np.array([-1, 0, 1, 2, 3, 4, 5], dtype=np.int64)
    out = np.zeros((x.size, 6), dtype=np.int64)
    compares[1, 8](x, 4, out)
    for i, v in enumerate(x.tolist()):
        expected = [0 <= v < 4, v < 0 or v >= 4, v > 1 and v < 4, not v,
                    1 if v == 2 else (2 if v != 3 else 3), v == 3]
        assert out[i].tolist() == [int(e) for e in expected], v


@cuda.jit
def loops(n, out):
    # while with break and continue
    i = 0
    total = 0
    while True:
        i += 1
        if i > n:
            break
        if i % 3 == 0:
            continue
        total += i
    out[0] = total
    # range with a negative step
    acc = 0
    for k in range(n, 0, -2):
        acc = acc * 10 + k
    out[1] = acc
    # nested loops, an empty range
    cnt = 0
    for a in range(4):
        for b in range(a):
            cnt += 1
    for z in range(5, 5):
        cnt += 100
    out[2] = cnt


def test_loops_break_continue_negative_step(backend):
    out = np.zeros(3, dtype=np.int64)
    loops[1, 1](7, out)
    total = sum(i for i in range(1, 8) if i % 3)
    acc = 0
    for k in range(7, 0, -2):
        acc = acc * 10 + k
    assert out.tolist() == [total, acc, 6]


@cuda.jit
def negative_index(x, out):
    out[0] = x[-1]
    out[1] = x[-x.size]
    out[2] = x[len(x) - 2]


def test_negative_indices_wrap(backend):
    x = np.array([10.0, 20.0, 30.0, 40.0])
    out = np.zeros(3)
    negative_index[1, 1](x, out)
    assert out.tolist() == [40.0, 10.0, 30.0]


@cuda.jit
def inplace(a, v):
    i = cuda.grid(1)
    if i < a.size:
        a[i] += v
        a[i] *= 2


def test_augmented_item_assignment(backend):
    a = np.arange(5, dtype=np.float32)
    inplace[1, 8](a, np.float32(1.5))
    np.testing.assert_allclose(a, (np.arange(5) + 1.5) * 2)


@cuda.jit
def attrs(a, out):
    out[0] = a.shape[0]
    out[1] = a.shape[1]
    out[2] = a.size
    out[3] = a.ndim
    out[4] = len(a)


def test_array_attributes(backend):
    a = np.zeros((3, 5), dtype=np.float32)
    out = np.zeros(5, dtype=np.int64)
    attrs[1, 1](a, out)
    assert out.tolist() == [3, 5, 15, 2, 3]


@cuda.jit
def builtins_kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i, 0] = min(v, 1.5)
        out[i, 1] = max(v, -0.5, 0.25)
        out[i, 2] = abs(v)
        out[i, 3] = int(v)
        out[i, 4] = float(int(v) + 1)
        out[i, 5] = bool(v)


def test_builtins(backend):
    x = np.array([-2.75, 0.0, 0.5, 3.25])
    out = np.zeros((x.size, 6))
    builtins_kernel[1, 8](x, out)
    for i, v in enumerate(x.tolist()):
        assert out[i].tolist() == [min(v, 1.5), max(v, -0.5, 0.25), abs(v), int(v),
                                   float(int(v) + 1), float(bool(v))], v


SCALE = 2.5
OFFSETS = (1, 2, 3)


@cuda.jit
def uses_globals(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * SCALE + OFFSETS[2]


def test_module_globals_are_frozen_constants(backend):
    x = np.arange(4, dtype=np.float64)
    out = np.zeros(4)
    uses_globals[1, 4](x, out)
    np.testing.assert_allclose(out, x * 2.5 + 3)


def test_closure_variables(backend):
    factor = 3

    @cuda.jit
    def scaled(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i] * factor

    x = np.arange(4, dtype=np.int64)
    out = np.zeros(4, dtype=np.int64)
    scaled[1, 4](x, out)
    assert out.tolist() == [0, 3, 6, 9]


@cuda.jit
def tuples(t, out):
    a, b = t
    p = (a, b * 2)
    q, r = p
    out[0] = q + r + p[1] + t[0]


def test_tuple_arguments_and_unpacking(backend):
    out = np.zeros(1, dtype=np.int64)
    tuples[1, 1]((3, 4), out)
    assert out[0] == 3 + 8 + 8 + 3


@cuda.jit(device=True)
def clamp(v, lo, hi):
    if v < lo:
        return lo
    if v > hi:
        return hi
    return v


@cuda.jit
def uses_device_function(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = clamp(x[i], 0.0, 1.0)


def test_device_function_call(backend):
    x = np.array([-1.0, 0.25, 2.0], dtype=np.float64)
    out = np.zeros(3)
    uses_device_function[1, 4](x, out)
    assert out.tolist() == [0.0, 0.25, 1.0]


@cuda.jit
def dtypes_kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] + 1


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                                   np.uint32, np.uint64, np.float32, np.float64, np.complex64,
                                   np.complex128])
def test_element_types(backend, dtype):
    x = np.arange(6).astype(dtype)
    out = np.zeros_like(x)
    dtypes_kernel[1, 8](x, out)
    np.testing.assert_array_equal(out, x + 1)


@cuda.jit
def scalar_kinds(b, i, f, c, out, outc):
    out[0] = b
    out[1] = i
    out[2] = f
    outc[0] = c


def test_python_scalar_arguments(backend):
    out = np.zeros(3)
    outc = np.zeros(1, dtype=np.complex128)
    scalar_kinds[1, 1](True, 7, 2.5, 1.5 - 2j, out, outc)
    assert out.tolist() == [1.0, 7.0, 2.5] and outc[0] == 1.5 - 2j
    scalar_kinds[1, 1](np.bool_(False), np.int16(-3), np.float32(0.5), np.complex64(3j), out, outc)
    assert out.tolist() == [0.0, -3.0, 0.5] and outc[0] == 3j
    kinds = [tuple(str(t) for t in sig[:4]) for sig in scalar_kinds.signatures]
    assert kinds == [("bool", "int64", "float64", "complex128"),
                     ("bool", "int16", "float32", "complex64")]


@cuda.jit
def mixed_params(b, i8, f64, i16, c64, u8, pair, grid2, w, i32, out, outc):
    # Parameters of every size and alignment, so that a packed layout that differs from the
    # kernel's would misplace some value.
    out[0] = b
    out[1] = i8
    out[2] = f64
    out[3] = i16
    out[4] = u8
    out[5] = pair[0]
    out[6] = pair[1]
    out[7] = grid2[1, 2]
    out[8] = w
    out[9] = i32
    out[10] = grid2.shape[0] * 100 + grid2.shape[1]
    outc[0] = c64


def test_parameters_of_every_size_and_alignment(backend):
    grid2 = np.arange(24, dtype=np.float32).reshape(4, 6)[::2, 1::2]  # strided view, (2, 3)
    expect = [1, -5, 2.25, -300, 200, 7, 0.5, grid2[1, 2], 0.75, 123456, 203]
    for to_device in (False, True):  # host arrays (staged around the launch), device arrays
        out = np.zeros(11)
        outc = np.zeros(1, np.complex128)
        args = [out, outc]
        if to_device:
            args = [cuda.to_device(a) for a in args]
        mixed_params[1, 1](True, np.int8(-5), 2.25, np.int16(-300), np.complex64(1 - 2j),
                           np.uint8(200), (np.int8(7), np.float32(0.5)), grid2, 0.75,
                           np.int32(123456), *args)
        if to_device:
            out, outc = args[0].copy_to_host(), args[1].copy_to_host()
        assert out.tolist() == expect
        assert outc[0] == 1 - 2j
    if backend == "cuda":
        # The driver confirms the layout, so launches pass the parameters as one buffer.
        (sig,) = mixed_params.signatures
        assert mixed_params._launch_params(sig) == "buffer"


@cuda.jit
def affine_kernel(x, a, n, flag, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] * a + n
        if flag:
            out[i] = -out[i]


class FloatSubclass(float):
    pass


def test_repeated_launches_read_every_argument(backend):
    # A launch whose arguments have the kinds and types of the launch before packs them without
    # the general reading (kernel._direct_launches counts those); the values must still be read
    # afresh each time, and any other argument must take the general path.
    x = np.arange(8, dtype=np.float64)
    out = cuda.device_array(8)
    calls = [  # (x, a, n, flag, taken directly)
        (cuda.to_device(x), 2.0, 3, True, False),  # compiles
        (cuda.to_device(x + 1), -1.5, -7, False, True),  # same kinds, new values and arrays
        (cuda.to_device(x * 2), 0.25, 2**40, True, True),
        (x + 5, 4.0, 1, False, False),  # a host array: same type, staged by the general path
        (cuda.to_device(x), FloatSubclass(3.0), 1, False, False),  # a float subclass
        (cuda.to_device(x), 1.0, 2**63, False, False),  # beyond int64: uint64, a new signature
        (cuda.to_device(x), 1.0, 5, True, False),  # back to the first signature: looked up
        (cuda.to_device(x), 1.0, 5, np.True_, False),  # a NumPy bool: the same type, read apart
        (cuda.to_device(x - 3), 0.5, 6, True, True),
    ]
    for k, (xa, a, n, flag, direct) in enumerate(calls):
        before = affine_kernel._direct_launches
        affine_kernel[1, 8](xa, a, n, flag, out)
        assert affine_kernel._direct_launches == before + int(direct), k
        host = xa if isinstance(xa, np.ndarray) else xa.copy_to_host()
        expect = host * float(a) + float(n)
        np.testing.assert_array_equal(out.copy_to_host(), -expect if flag else expect, str(k))
    assert len(affine_kernel.signatures) == 2


def test_repeated_launches_pack_a_python_floats_float32_copy(backend):
    # A Python float is weak (NEP 50): a float32 kernel computes with its float32 copy, which
    # the direct path writes beside the double on every launch.
    @cuda.jit
    def scale32(x, a, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i] * a

    host = np.arange(4, dtype=np.float32)
    x, out = cuda.to_device(host), cuda.device_array(4, np.float32)
    for a in (1.5, -2.25, 1e-3, 1e30):
        scale32[1, 4](x, a, out)
        assert out.copy_to_host().dtype == np.float32
        np.testing.assert_array_equal(out.copy_to_host(), host * np.float32(a), str(a))
    assert scale32._direct_launches == 3


@cuda.jit
def scaled_view_kernel(a, x, out):
    i, j, k = cuda.grid(3)
    if i < x.shape[0] and j < x.shape[1] and k < x.shape[2]:
        out[i, j, k] = a * x[i, j, k]


def test_repeated_launches_pack_every_dimension_of_a_strided_view(backend):
    # From the second launch with the same kinds the direct path writes each array's address,
    # then its shape and its strides dimension by dimension, and a Python float as its double
    # and float32 copy: views of one type (layout A) with other shapes, strides and offsets
    # must each be read afresh.
    base = np.arange(6 * 7 * 8, dtype=np.float32).reshape(6, 7, 8)
    d = cuda.to_device(base)
    views = [(slice(None, None, 2), slice(None), slice(None, None, 3)),
             (slice(1, None, 3), slice(None, None, 2), slice(None)),
             (slice(None, None, -1), slice(2, 5), slice(1, None, 2)),
             (slice(5, 6), slice(None, None, 3), slice(None, None, -2))]
    for k, (view, a) in enumerate(zip(views, (2.0, -0.5, 1e-3, 3.25))):
        x = d[view]
        want = base[view] * np.float32(a)
        out = cuda.device_array(want.shape, np.float32)
        before = scaled_view_kernel._direct_launches
        scaled_view_kernel[(1, 1, 1), want.shape](a, x, out)
        assert scaled_view_kernel._direct_launches == before + int(k > 0), k
        np.testing.assert_array_equal(out.copy_to_host(), want, str(k))


def test_repeated_forall_launches_size_their_grid_on_the_direct_path(backend):
    # forall(n) picks its block and grid at each launch, the direct path's launches too.
    x = np.arange(1000, dtype=np.float64)
    for k, n in enumerate((1000, 37, 1000)):
        d, out = cuda.to_device(x[:n]), cuda.device_array(n)
        before = grid_stride._direct_launches
        grid_stride.forall(n)(d, out)
        if k > 0:  # the first may follow other tests' launches of grid_stride
            assert grid_stride._direct_launches == before + 1, k
        np.testing.assert_array_equal(out.copy_to_host(), 2 * x[:n], str(k))


def test_launches_beyond_the_direct_paths_room_take_the_general_path(backend):
    # The direct path packs into a buffer of 1 KiB, room for 127 parameter slots: a kernel of 48
    # arrays (3 slots each) is packed by the general path on every launch, its values read
    # afresh.
    names = [f"a{i}" for i in range(48)]
    src = (f"def wide({', '.join(names)}):\n    if cuda.grid(1) == 0:\n"
           f"        a0[0] = a1[0] + {names[-1]}[0]\n")
    ns = {"cuda": cuda}
    exec(compile(src, "<wide>", "exec"), ns)
    wide = cuda.jit(ns["wide"])
    for v in (1.0, 2.5):
        arrays = [cuda.to_device(np.full(2, v + i)) for i in range(48)]
        wide[1, 1](*arrays)
        assert arrays[0].copy_to_host()[0] == (v + 1) + (v + 47)
    assert wide._direct_launches == 0


@cuda.jit
def fill_all(out, v):
    for i in range(out.size):
        out[i] = v + i


def test_a_new_array_where_a_freed_one_was_is_read_afresh(backend):
    # A launch given the objects of the launch before sends the words packed for them. A device
    # array freed and a new one made at its address (CPython reuses the memory at once) is
    # another array, of another size here: its launch must read it.
    seen, reused = set(), False
    for n in range(2, 40):
        out = cuda.device_array(n)
        reused = reused or id(out) in seen
        seen.add(id(out))
        before = fill_all._direct_launches
        fill_all[1, 1](out, 0.5)
        if n > 2:
            assert fill_all._direct_launches == before + 1, n
        np.testing.assert_array_equal(out.copy_to_host(), 0.5 + np.arange(n), str(n))
        del out
    assert reused  # else the test shows nothing


def test_relaunching_on_the_same_objects_sees_their_new_contents_and_new_scalars(backend):
    # The same arrays again (their contents changed in between), then new scalars and arrays
    # in turn, then the first ones again: each launch uses what it was given.
    a, b = cuda.device_array(3), cuda.device_array(5)
    for out, v in ((a, 1.0), (a, 1.0), (b, 1.0), (b, 2.0), (a, 2.0), (a, 3.5), (b, 3.5)):
        out.copy_to_device(np.full(out.size, -1.0))
        fill_all[1, 1](out, v)
        np.testing.assert_array_equal(out.copy_to_host(), v + np.arange(out.size))


def test_a_launch_keeps_no_reference_to_its_device_arrays(backend):
    # The direct path remembers the last arguments without keeping the arrays alive: freeing
    # them frees their memory then, as in Numba.
    import sys

    out = cuda.device_array(4)
    refs = sys.getrefcount(out)
    fill_all[1, 1](out, 1.0)
    fill_all[1, 1](out, 1.0)
    fill_all[1, 1](out, 2.0)
    assert sys.getrefcount(out) == refs


@cuda.jit
def axpb(out, a, b, s, n):
    for i in range(out.size):
        out[i] = a[i] * s + b[i] + n


def test_random_relaunches_match_numpy(backend):
    # Launches drawn at random from a few arrays, floats and ints, half of them with the arrays
    # of the launch before in the same places, some arrays made anew where a freed one was
    # (CPython reuses its memory at once), some host arrays (the general path): whichever
    # objects repeat, each launch computes from the arguments it was given.
    rng = np.random.default_rng(7)
    sizes = (3, 5, 8)
    pools = {n: [cuda.to_device(rng.random(n)) for _ in range(3)] for n in sizes}
    floats = [0.5, -1.25, 3.0]
    before, launches, n, order, reused = axpb._direct_launches, 0, 3, [0, 1, 2], 0
    for step in range(400):
        if rng.random() < 0.5:  # else the same arrays in the same places as the last launch
            n, order = sizes[rng.integers(len(sizes))], list(rng.permutation(3))
        pool = pools[n]
        if rng.random() < 0.2:  # a new array in place of one (the pool held it alone)
            k = int(rng.integers(3))
            old = id(pool[k])
            pool[k] = None
            # CPython gives the freed object's memory to the next object of its size, unless a
            # short-lived one took it first: a few tries (held meanwhile) find it again.
            tries = []
            for _ in range(8):
                tries.append(cuda.device_array(n))
                if id(tries[-1]) == old:
                    break
            pool[k] = tries.pop()
            tries = None
            pool[k].copy_to_device(rng.random(n))
            reused += id(pool[k]) == old
        out, a, b = (pool[k] for k in order)
        if rng.random() < 0.1:  # a host array: read by the general path
            b = b.copy_to_host()
        s = floats[rng.integers(len(floats))] if rng.random() < 0.7 else float(rng.random())
        m = int(rng.integers(-2, 3))
        expect = a.copy_to_host() * s + (b if isinstance(b, np.ndarray) else b.copy_to_host()) + m
        axpb[1, 1](out, a, b, s, m)
        launches += 1
        # (CUDA contracts a[i] * s + b[i] into one fma: a rounding apart, not a stale value)
        np.testing.assert_allclose(out.copy_to_host(), expect, rtol=1e-13, atol=1e-13,
                                   err_msg=str(step))
        out = a = b = None  # the pools' arrays are held by the pools alone
    # The direct path was exercised, and new arrays took freed ones' places.
    assert axpb._direct_launches - before > launches // 2
    assert reused > 5, reused


@cuda.jit
def fill_each(out, v):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = v + i


def test_threads_launching_one_kernel_on_their_own_arrays(backend):
    # The packed words are the dispatcher's; a host launch (which releases the interpreter)
    # runs on its own copy of them, so another thread's launch cannot change its arguments.
    import threading

    errors_seen = []

    def work(k):
        try:
            n = 4096 + k
            out = cuda.device_array(n)
            for r in range(40):
                fill_each[(n + 63) // 64, 64](out, float(k * 100 + r))
                got = out.copy_to_host()
                if not np.array_equal(got, k * 100 + r + np.arange(n)):
                    errors_seen.append((k, r))
        except Exception as e:  # reported below
            errors_seen.append(repr(e))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors_seen == []


@cuda.jit(["void(float64[:], float64, int32, float32, float64, float16)"])
def converting_kernel(out, a, n, b, flag, h):
    out[0] = a
    out[1] = n
    out[2] = b
    out[3] = flag
    out[4] = h


def test_repeated_launches_convert_to_the_eager_parameter_types(backend):
    # Python ints given for float64, int32 and float32 parameters, a bool for a float64 and a
    # float for a float16: from the second launch with the same kinds the direct path writes
    # them, each converted as the general path converts (NumPy's casts).
    out = cuda.device_array(5)
    calls = [(3, 7, 2, True, 0.5), (-4, 2**31 - 1, 1, False, 0.1),
             (2**53 + 1, -5, 2**40, True, 65504.0)]
    for k, args in enumerate(calls):
        before = converting_kernel._direct_launches
        converting_kernel[1, 1](out, *args)
        assert converting_kernel._direct_launches == before + int(k > 0), k
        a, n, b, flag, h = args
        expect = [float(a), float(np.int32(n)), float(np.float32(b)), float(flag),
                  float(np.float16(h))]
        assert out.copy_to_host().tolist() == expect, k


@cuda.jit
def copy_kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i]


def test_readonly_input_arrays(backend):
    x = np.arange(5.0)
    x.setflags(write=False)
    out = np.zeros(5)
    copy_kernel[1, 8](x, out)
    assert out.tolist() == x.tolist()
    assert "readonly" in str(copy_kernel.signatures[-1][0])


def test_negative_stride_host_array(backend):
    x = np.arange(8.0)[::-1]
    out = np.zeros(8)
    copy_kernel[1, 8](x, out)
    assert out.tolist() == list(range(7, -1, -1))


def test_empty_arrays(backend):
    x = np.zeros(0)
    out = np.zeros(0)
    copy_kernel[1, 1](x, out)


def test_nep50_weak_literals_keep_float32(backend):
    @cuda.jit
    def times_two(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i] * 2.0 + 1

    x = np.arange(4, dtype=np.float32)
    out = np.zeros(4, dtype=np.float32)
    times_two[1, 4](x, out)
    np.testing.assert_allclose(out, x * 2 + 1)
    llvm = times_two.inspect_llvm(times_two.signatures[0])
    assert "fmul float" in llvm or "fmul fast float" in llvm or "fmul contract float" in llvm
    assert "fpext" not in llvm and "double" not in llvm


def test_weak_literals_stay_weak_across_conditional_expressions(backend):
    """A literal pushed before a conditional expression (`7 + (a if c else b)`) is on the stack
    at the join: it went through a variable there and took int64, so that int8 arithmetic did
    not wrap and `5 << (u if c else v)` with uint64s was a TypingError (found by differential
    testing, issue 19)."""
    @cuda.jit
    def k(a, u, c, out, out_u):
        out[0] = 100 + (a[0] if c[0] else a[1])
        out[1] = 3 * (a[1] if c[0] else a[0]) - 1
        out_u[0] = 5 << (u[0] if c[0] else u[1])
        out_u[1] = 7 if c[0] else 9

    a = np.array([100, 27], np.int8)
    u = np.array([2, 3], np.uint64)
    out = np.zeros(2, np.int64)
    out_u = np.zeros(2, np.uint64)
    k[1, 1](a, u, np.array([True]), out, out_u)
    assert list(out) == [np.int8(100 + 100 - 256), np.int8(3 * 27 - 1)]  # int8, wrapped
    assert list(out_u) == [20, 7]
    k[1, 1](a, u, np.array([False]), out, out_u)
    assert list(out) == [127, 3 * 100 - 1 - 256]
    assert list(out_u) == [40, 9]


def test_int_literals_a_narrow_type_cannot_hold_are_int64(backend):
    """`i8 + 1000` took int8 for the literal (NEP 50) and wrapped it to -24, silently; NumPy 2
    raises there and Numba computes in int64, as ptxjit does now (docs/language.md). A literal
    the type holds still adopts it; with uint64 a negative literal still wraps (a mask)."""
    @cuda.jit
    def k(a, u8, u64, out, out_u64):
        out[0] = a[0] + 1000  # int64: 1100
        out[1] = a[0] & 0xFF  # int64: 156 for -100 (Numba's value), not -100
        out[2] = u8[0] * -1  # int64: -200
        out[3] = a[0] + 27  # int8 still: wraps to -127 for 102
        x = a[1]
        x += 300  # the variable unifies to int64
        out[4] = x
        out_u64[0] = u64[0] & -16  # uint64: the mask

    a = np.array([-100, 102], np.int8)
    a2 = np.array([102, 100], np.int8)
    out = np.zeros(5, np.int64)
    out_u64 = np.zeros(1, np.uint64)
    k[1, 1](a, np.array([200], np.uint8), np.array([2**64 - 1], np.uint64), out, out_u64)
    assert list(out[:3]) == [900, 156, -200] and out[4] == 402
    assert out_u64[0] == 2**64 - 16
    k[1, 1](a2, np.array([200], np.uint8), np.array([2**64 - 1], np.uint64), out, out_u64)
    assert out[3] == -127 and out[0] == 1102
    assert str(k.signatures[0][3]) == "array(int64, 1d, C)"


def test_compile_ptx_weak_literal_return_type():
    def f(x):
        return x * 2.0

    _, resty = cuda.compile_ptx(f, (float32,), device=True)
    assert resty == float32


def test_specialization_per_argument_types(backend):
    @cuda.jit
    def add(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i] + x[i]

    add[1, 4](np.ones(4, np.float32), np.zeros(4, np.float32))
    add[1, 4](np.ones(4, np.float64), np.zeros(4, np.float64))
    add[1, 4](np.ones(4, np.float32), np.zeros(4, np.float32))
    add[1, 4](np.ones((4, 2), np.float32)[:, 0], np.zeros(4, np.float32))
    sigs = [tuple(str(t) for t in s) for s in add.signatures]
    assert sigs == [("array(float32, 1d, C)", "array(float32, 1d, C)"),
                    ("array(float64, 1d, C)", "array(float64, 1d, C)"),
                    ("array(float32, 1d, A)", "array(float32, 1d, C)")]


def test_launch_with_stream_and_sharedmem(backend):
    s = cuda.stream()
    x = np.arange(32, dtype=np.float32)
    out = np.zeros_like(x)
    saxpy[1, 32, s, 0](np.float32(1), x, x, out)
    s.synchronize()
    np.testing.assert_allclose(out, 2 * x)
    d_out = cuda.device_array_like(x)
    saxpy[1, 32, s](np.float32(3), cuda.to_device(x, stream=s), cuda.to_device(x, stream=s),
                    d_out)
    s.synchronize()
    np.testing.assert_allclose(d_out.copy_to_host(stream=s), 4 * x)



# --------------------------------------------------------------------------------------------
# Typing rules, read from compile_ptx's return type (no GPU needed)
# --------------------------------------------------------------------------------------------

def _add(a, b):
    return a + b


def _mul_half(a):
    return a * 0.5


def _plus_one(a):
    return a + 1


def _times_two(a):
    return a * 2.0


def _and(a, b):
    return a & b


def _div(a, b):
    return a / b


@pytest.mark.parametrize("func, args, expected", [
    (_add, "int32, int64", "int64"),
    (_add, "int64, uint64", "float64"),
    (_add, "float32, int32", "float64"),
    (_add, "float32, float32", "float32"),
    (_add, "bool, bool", "int64"),
    (_add, "complex64, float32", "complex64"),
    (_plus_one, "int32", "int32"),
    (_plus_one, "uint8", "uint8"),
    (_plus_one, "float32", "float32"),
    (_mul_half, "int32", "float64"),
    (_mul_half, "float32", "float32"),
    (_times_two, "float32", "float32"),
    (_and, "bool, bool", "bool"),
    (_div, "int32, int32", "float64"),
    (_div, "float32, float32", "float32"),
])
def test_result_types(func, args, expected):
    _, resty = cuda.compile_ptx(func, f"({args})", device=True)
    assert str(resty) == expected


@cuda.jit
def div_by_zero(a, out):
    out[0] = a[0] // a[1]
    out[1] = a[0] % a[1]


def test_integer_division_by_zero_gives_zero(backend):
    out = np.full(2, 99, dtype=np.int64)
    div_by_zero[1, 1](np.array([7, 0], dtype=np.int64), out)
    assert out.tolist() == [0, 0]


@cuda.jit(device=True)
def clamp_default(v, lo=0.0, hi=1.0):
    return min(max(v, lo), hi)


@cuda.jit
def uses_defaults(x, scale=2.0):
    x[0] = clamp_default(x[0])
    x[1] = clamp_default(x[1], -1.0)
    x[2] = clamp_default(x[2], 0.25, 0.5)
    x[3] = x[3] * scale


def test_default_arguments(backend):
    x = np.array([2.0, -5.0, 0.1, 1.5])
    uses_defaults[1, 1](x)
    assert x.tolist() == [1.0, -1.0, 0.25, 3.0]
    uses_defaults[1, 1](x, 10.0)
    assert x[3] == 30.0
    with pytest.raises(TypeError, match="from 1 to 2 positional arguments but 3 were given"):
        uses_defaults[1, 1](x, 1.0, 2.0)


def test_is_between_bools_compares_the_values(backend):
    # `pred is True` (numba-cuda's test_ssa); other scalars keep `is` an error
    @cuda.jit
    def k(pred, out):
        if pred is True:
            out[0] = 1
        if pred is not False:
            out[1] = 1
        out[2] = pred is pred

    for pred, expected in ((True, [1, 1, 1]), (False, [0, 0, 1])):
        out = np.zeros(3, dtype=np.int64)
        k[1, 1](pred, out)
        assert out.tolist() == expected

    @cuda.jit
    def ints(x, out):
        out[0] = x is 1  # noqa: F632

    with pytest.raises(errors.UnsupportedError, match="'is' between int64 and"):
        ints[1, 1](1, np.zeros(1, dtype=np.int64))
