"""The shortcut of @vectorize calls on C-contiguous device arrays of one shape and scalars
(bindings/Ufunc.cpp fastElementwise): results against NumPy and against the general path while
the remembered call changes (dtypes, scalar kinds, ndim, streams), interleaved with calls that
take the general path, Python-int range checks, and concurrent callers."""
import threading

import numpy as np
import pytest

from ptxjit import cuda, vectorize


def make_lazy_add():
    @vectorize(target="cuda")
    def add(a, b):
        return a + b

    return add


def host(r):
    return r.copy_to_host() if hasattr(r, "copy_to_host") else np.asarray(r)


def test_results_match_general_path_as_the_fingerprint_changes(backend):
    add = make_lazy_add()
    cases = []
    for dtype in (np.float32, np.int32, np.float64, np.int64, np.complex64, np.uint8):
        x = ((np.arange(24) % 11) + 1).astype(dtype).reshape(2, 3, 4)
        y = (x * 2).astype(dtype)
        cases.append((x, y))
    # Each call alternates device (shortcut) and host (general path) inputs of the same types;
    # both must agree, in dtype and values, with NumPy's types for a fresh ufunc.
    for x, y in cases:
        dx, dy = cuda.to_device(x), cuda.to_device(y)
        for a, b, ha, hb in ((dx, dy, x, y), (dx, 3, x, 3), (2, dy, 2, y), (dx, dx, x, x),
                             (dx, True, x, True)):
            r = add(a, b)
            expected = add(ha, hb)
            assert hasattr(r, "copy_to_host")  # device inputs give a device array
            got = host(r)
            assert got.dtype == expected.dtype and got.shape == x.shape
            np.testing.assert_array_equal(got, expected)
            np.testing.assert_array_equal(got, np.add(ha, hb).astype(expected.dtype))


def test_scalars_are_converted_to_the_loop_type(backend):
    @vectorize(["float32(float32, float32)", "float64(float64, float64)"], target="cuda")
    def fma2(a, b):
        return a * 2 + b

    x = np.linspace(-3, 3, 1000).astype(np.float32)
    dx = cuda.to_device(x)
    for s in (2, 2.5, np.float32(1.25), -7):
        r = fma2(dx, s)
        assert r.dtype == np.float32 and r.shape == x.shape
        np.testing.assert_allclose(r.copy_to_host(), x * 2 + np.float32(s), rtol=1e-6)
    r = fma2(np.float64(0.5), dx)  # a NumPy float64 scalar is strong: the float64 loop
    assert r.dtype == np.float64
    np.testing.assert_allclose(r.copy_to_host(), 1.0 + x.astype(np.float64))


def test_ndim_and_shape_changes(backend):
    add = make_lazy_add()
    for shape in ((7,), (3, 5), (2, 1, 4), (1,), (), (4, 2, 2, 2)):
        x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
        dx = cuda.to_device(x)
        r = add(dx, dx)
        assert r.shape == shape
        np.testing.assert_array_equal(r.copy_to_host(), x + x)


def test_general_path_calls_in_between(backend):
    add = make_lazy_add()
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    dx = cuda.to_device(x)
    df = cuda.to_device(np.asfortranarray(x))
    drow = cuda.to_device(x[0])
    for _ in range(3):
        np.testing.assert_array_equal(add(dx, dx).copy_to_host(), x + x)
        np.testing.assert_array_equal(add(df, df).copy_to_host(), x + x)  # F order
        np.testing.assert_array_equal(add(dx, drow).copy_to_host(), x + x[0])  # broadcast
        out = cuda.device_array_like(dx)
        assert add(dx, 1.0, out=out) is out
        np.testing.assert_array_equal(out.copy_to_host(), x + 1)
        np.testing.assert_array_equal(add(x, x), x + x)  # host arrays


def test_stream_keyword(backend):
    add = make_lazy_add()
    x = np.arange(100, dtype=np.float32)
    dx = cuda.to_device(x)
    s = cuda.stream()
    r = add(dx, dx, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(r.copy_to_host(), x + x)
    r = add(dx, dx, stream=0)
    np.testing.assert_array_equal(r.copy_to_host(), x + x)


def test_python_int_out_of_range_raises(backend):
    @vectorize(["int8(int8, int8)"], target="cuda")
    def add8(a, b):
        return a + b

    d = cuda.to_device(np.arange(4, dtype=np.int8))
    np.testing.assert_array_equal(add8(d, 3).copy_to_host(), np.arange(4, dtype=np.int8) + 3)
    with pytest.raises(OverflowError, match="out of bounds for int8"):
        add8(d, 1000)
    np.testing.assert_array_equal(add8(d, -3).copy_to_host(), np.arange(4, dtype=np.int8) - 3)


def test_no_loop_raises_type_error(backend):
    @vectorize(["float32(float32, float32)"], target="cuda")
    def add32(a, b):
        return a + b

    d = cuda.to_device(np.arange(4, dtype=np.float64))
    with pytest.raises(TypeError, match="no loop matching"):
        add32(d, d)


def test_concurrent_callers_with_different_types(backend):
    add = make_lazy_add()
    arrays = [cuda.to_device(np.arange(500, dtype=dt)) for dt in (np.float32, np.int64)]
    expected = [2 * a.copy_to_host() for a in arrays]
    errors = []

    def work(i):
        for _ in range(100):
            a = arrays[i % 2]
            r = add(a, a).copy_to_host()
            if r.dtype != expected[i % 2].dtype or not np.array_equal(r, expected[i % 2]):
                errors.append(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_shortcut_shares_the_kernel_cache(backend):
    add = make_lazy_add()
    x = np.arange(64, dtype=np.float32)
    dx = cuda.to_device(x)
    np.testing.assert_array_equal(add(dx, dx).copy_to_host(), x + x)
    assert len(add._kernel_texts()) == 1
    # Host arrays of the same types take the general path and find the same flat kernel.
    np.testing.assert_array_equal(add(x, x), x + x)
    assert len(add._kernel_texts()) == 1
    # A scalar operand is another kernel (passed by value).
    np.testing.assert_array_equal(add(dx, 1.0).copy_to_host(), x + 1)
    assert len(add._kernel_texts()) == 2


def test_out_device_arrays(backend):
    add = make_lazy_add()
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    dx = cuda.to_device(x)
    out = cuda.device_array((3, 4), dtype=np.float32)
    for s in (0.0, 1.0, 2.0):  # the same output array, refilled
        assert add(dx, s, out=out) is out
        np.testing.assert_array_equal(out.copy_to_host(), x + np.float32(s))
    assert add(dx, dx, out) is out  # positional
    np.testing.assert_array_equal(out.copy_to_host(), x + x)
    assert add(dx, dx, out=(out,)) is out
    # In place.
    dy = cuda.to_device(x)
    add(dy, dy, out=dy)
    np.testing.assert_array_equal(dy.copy_to_host(), x + x)
    # Another dtype: a same_kind cast (general path) or NumPy's error.
    out64 = cuda.device_array((3, 4), dtype=np.float64)
    assert add(dx, dx, out=out64) is out64
    np.testing.assert_array_equal(out64.copy_to_host(), (x + x).astype(np.float64))
    outi = cuda.device_array((3, 4), dtype=np.int32)
    with pytest.raises(TypeError, match="same_kind"):
        add(dx, dx, out=outi)
    # Another shape: broadcasting into a larger output, or NumPy's error.
    big = cuda.device_array((2, 3, 4), dtype=np.float32)
    add(dx, dx, out=big)
    np.testing.assert_array_equal(big.copy_to_host(), np.broadcast_to(x + x, (2, 3, 4)))
    with pytest.raises(ValueError, match="non-broadcastable output"):
        add(dx, dx, out=cuda.device_array((4,), dtype=np.float32))


@pytest.mark.gpu
def test_outputs_in_reused_blocks_keep_their_results():
    # On the GPU a result of at most 1 MiB written on the default stream right away may get the
    # block of a dropped result without a driver call (the pool allocator's kept blocks,
    # runtime/Memory.h; tests/cpp/runtime/StartupTest.cpp checks which allocations do): results
    # alive at once never share a block, and each keeps its values, on the default stream and
    # on others.
    from ptxjit import _core

    _core.select_target("cuda")
    try:
        check_results_in_reused_blocks()
    finally:
        _core.select_target("cpu")


def check_results_in_reused_blocks():
    @vectorize(["float32(float32, float32)"], target="cuda")
    def add(a, b):
        return a + b

    xh = np.linspace(0, 1, 1000, dtype=np.float32)
    x = cuda.to_device(xh)
    s = cuda.stream()
    live = []
    for k in range(40):
        dropped = add(x, -1.0)  # noqa: F841  (its block returns at the next assignment)
        if k % 3 == 0:
            live.append((k, add(x, float(k), stream=s)))
        else:
            live.append((k, add(x, float(k))))
    s.synchronize()
    ptrs = {r.__cuda_array_interface__["data"][0] for _, r in live}
    assert len(ptrs) == len(live)
    for k, r in live:
        np.testing.assert_array_equal(r.copy_to_host(), xh + np.float32(k))
