"""Basic slicing in kernels and device functions: views with Python's slice semantics
(negative and out-of-range bounds, negative steps, empty results, None parts, any int type),
views of views, assignment to whole views (scalars, arrays, broadcasting, dtype conversion,
overlap), and the compile errors, on both backends against NumPy."""
import itertools

import numpy as np
import pytest

from ptxjit import cuda, errors

BOUNDS = [-12, -10, -3, -1, 0, 1, 4, 9, 10, 11, 100]
STEPS = [1, 2, 3, 11, -1, -2, -4, -11]


def first_line(func):
    return func.__code__.co_firstlineno


# --------------------------------------------------------------------------------------------
# 1-d slices against Python's semantics
# --------------------------------------------------------------------------------------------

@cuda.jit
def slice_all(a, out, start, stop, step):
    v = a[start:stop:step]
    out[0] = len(v)
    for i in range(v.size):
        out[i + 1] = v[i]


@cuda.jit
def slice_start(a, out, start):
    v = a[start:]
    out[0] = v.shape[0]
    for i in range(len(v)):
        out[i + 1] = v[i]


@cuda.jit
def slice_stop(a, out, stop):
    v = a[:stop]
    out[0] = v.size
    j = 1
    for x in v:
        out[j] = x
        j += 1


@cuda.jit
def slice_step(a, out, step):
    v = a[::step]
    out[0] = v.size
    for i in range(v.size):
        out[i + 1] = v[i]


@cuda.jit
def slice_start_step(a, out, start, step):
    v = a[start::step]
    out[0] = v.size
    for i in range(v.size):
        out[i + 1] = v[i]


@cuda.jit
def slice_stop_step(a, out, stop, step):
    v = a[:stop:step]
    out[0] = v.size
    for i in range(v.size):
        out[i + 1] = v[i]


@cuda.jit
def slice_whole(a, out):
    v = a[:]
    w = a[::]
    out[0] = v.size
    for i in range(v.size):
        out[i + 1] = v[i] + w[i]


def run(kernel, a, *params):
    out = np.full(a.size + 1, -1.0)
    kernel[1, 1](a, out, *params)
    n = int(out[0])
    assert np.all(out[1 + n:] == -1.0), "wrote past the view"
    return out[1:1 + n]


def test_start_stop_step(backend):
    a = np.arange(10.0) * 1.5
    for start, stop, step in itertools.product(BOUNDS, BOUNDS, STEPS):
        np.testing.assert_array_equal(run(slice_all, a, start, stop, step), a[start:stop:step],
                                      err_msg=f"a[{start}:{stop}:{step}]")


def test_none_parts(backend):
    a = np.arange(10.0) + 0.25
    for b in BOUNDS:
        np.testing.assert_array_equal(run(slice_start, a, b), a[b:], err_msg=f"a[{b}:]")
        np.testing.assert_array_equal(run(slice_stop, a, b), a[:b], err_msg=f"a[:{b}]")
    for step in STEPS:
        np.testing.assert_array_equal(run(slice_step, a, step), a[::step])
        for b in BOUNDS:
            np.testing.assert_array_equal(run(slice_start_step, a, b, step), a[b::step],
                                          err_msg=f"a[{b}::{step}]")
            np.testing.assert_array_equal(run(slice_stop_step, a, b, step), a[:b:step],
                                          err_msg=f"a[:{b}:{step}]")
    np.testing.assert_array_equal(run(slice_whole, a), 2 * a)


def test_empty_arrays_and_views(backend):
    empty = np.zeros(0)
    for start, stop, step in [(0, 0, 1), (-1, 5, 1), (3, -3, -1), (0, 10, 3)]:
        assert run(slice_all, empty, start, stop, step).size == 0
    a = np.arange(5.0)
    assert run(slice_all, a, 3, 1, 1).size == 0
    assert run(slice_all, a, 1, 3, -1).size == 0
    assert run(slice_start, a, 5).size == 0


def test_runtime_step_zero_gives_an_empty_view(backend):
    # Python raises ValueError; a kernel cannot, so a run-time step of 0 selects nothing.
    a = np.arange(6.0)
    assert run(slice_all, a, 0, 6, 0).size == 0
    assert run(slice_step, a, 0).size == 0
    assert run(slice_start_step, a, -2, 0).size == 0


@pytest.mark.parametrize("cast", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                                  np.uint32, np.uint64])
def test_bounds_of_any_int_type(backend, cast):
    a = np.arange(20.0)
    for start, stop, step in [(2, 15, 3), (0, 100, 1), (19, 3, 2), (5, 5, 1)]:
        np.testing.assert_array_equal(run(slice_all, a, cast(start), cast(stop), cast(step)),
                                      a[start:stop:step])
    if np.issubdtype(cast, np.signedinteger):
        for start, stop, step in [(-3, -15, -2), (-100, -1, 4), (15, -100, -5)]:
            np.testing.assert_array_equal(
                run(slice_all, a, cast(start), cast(stop), cast(step)), a[start:stop:step])


def test_huge_unsigned_bounds_clamp(backend):
    a = np.arange(7.0)
    huge = np.uint64(2**64 - 3)  # above int64's range: past the end, not negative
    np.testing.assert_array_equal(run(slice_all, a, np.uint64(2), huge, np.uint64(1)), a[2:])
    np.testing.assert_array_equal(run(slice_stop, a, huge), a)
    lo, hi = np.int64(-2**63), np.int64(2**63 - 1)
    for start, stop, step in [(lo, hi, lo), (hi, lo, lo), (lo, hi, hi), (hi, lo, np.int64(-1))]:
        np.testing.assert_array_equal(run(slice_all, a, start, stop, step),
                                      a[int(start):int(stop):int(step)])


def test_constant_slices(backend):
    @cuda.jit
    def k(a, out):
        out[0] = a[1:3][0] + a[::2][1] + a[1:][0] + a[-3:][0] + a[:-1][-1] + a[::-1][0]
        out[1] = len(a[2:-2]) + len(a[::3]) * 10 + len(a[100:]) * 100 + len(a[-100:2]) * 1000
        out[2] = a[8:2:-3][1] + a[-1:-100:-4][2]

    a = np.arange(10.0) ** 2
    out = np.zeros(3)
    k[1, 1](a, out)
    assert out[0] == a[1:3][0] + a[::2][1] + a[1:][0] + a[-3:][0] + a[:-1][-1] + a[::-1][0]
    assert out[1] == len(a[2:-2]) + len(a[::3]) * 10 + len(a[100:]) * 100 + len(a[-100:2]) * 1000
    assert out[2] == a[8:2:-3][1] + a[-1:-100:-4][2]


# --------------------------------------------------------------------------------------------
# N-d views: integers and slices mixed, fewer indices than dimensions
# --------------------------------------------------------------------------------------------

@cuda.jit(device=True)
def copy_1d(v, out):
    for i in range(v.shape[0]):
        out[i] = v[i]
    return v.size


@cuda.jit(device=True)
def copy_2d(v, out):
    for i in range(v.shape[0]):
        for j in range(v.shape[1]):
            out[i, j] = v[i, j]
    return v.ndim


def test_2d_views(backend):
    @cuda.jit
    def k(img, o1, o2, n, i, j):
        n[0] = copy_1d(img[:, j], o1[0])
        n[1] = copy_1d(img[1:3, 2], o1[1])
        n[2] = copy_1d(img[i, 1:], o1[2])
        n[3] = copy_1d(img[-1, ::-2], o1[3])
        n[4] = copy_1d(img[::-1, -1], o1[4])
        n[5] = copy_2d(img[1:, ::2], o2[0])
        n[6] = copy_2d(img[::-1], o2[1])
        n[7] = copy_2d(img[:, i:j], o2[2])
        n[8] = copy_2d(img[-2:, :j], o2[3])

    img = np.arange(30.0).reshape(5, 6)
    for layout in (np.ascontiguousarray, np.asfortranarray, lambda x: np.arange(60.0).reshape(
            5, 12)[:, ::2] * 0 + x):
        src = layout(img)
        o1 = np.full((5, 6), -1.0)
        o2 = np.full((4, 5, 6), -1.0)
        n = np.zeros(9, dtype=np.int64)
        i, j = 2, -2
        k[1, 1](src, o1, o2, n, i, j)
        views1 = [img[:, j], img[1:3, 2], img[i, 1:], img[-1, ::-2], img[::-1, -1]]
        for r, v in enumerate(views1):
            assert n[r] == v.size
            np.testing.assert_array_equal(o1[r, :v.size], v)
        views2 = [img[1:, ::2], img[::-1], img[:, i:j], img[-2:, :j]]
        for r, v in enumerate(views2):
            assert n[5 + r] == 2
            np.testing.assert_array_equal(o2[r, :v.shape[0], :v.shape[1]], v)


def test_3d_views_and_views_of_views(backend):
    @cuda.jit
    def k(vol, out, shapes, i):
        views = (vol[i, 1:], vol[:, :, -1], vol[1:, ::2, i], vol[::-1][1:][0], vol[1:][:, 1][1])
        a = views[0]
        for p in range(a.shape[0]):
            for q in range(a.shape[1]):
                out[0, p, q] = a[p, q]
        shapes[0, 0] = a.shape[0]
        shapes[0, 1] = a.shape[1]
        b = views[1]
        for p in range(b.shape[0]):
            for q in range(b.shape[1]):
                out[1, p, q] = b[p, q]
        shapes[1, 0] = b.shape[0]
        shapes[1, 1] = b.shape[1]
        c = views[2]
        for p in range(c.shape[0]):
            for q in range(c.shape[1]):
                out[2, p, q] = c[p, q]
        shapes[2, 0] = c.shape[0]
        shapes[2, 1] = c.shape[1]
        d = views[3]
        for p in range(d.shape[0]):
            for q in range(d.shape[1]):
                out[3, p, q] = d[p, q]
        shapes[3, 0] = d.shape[0]
        shapes[3, 1] = d.shape[1]
        e = views[4]
        for p in range(e.size):
            out[4, 0, p] = e[p]
        shapes[4, 0] = e.size
        shapes[4, 1] = e.ndim

    vol = np.arange(4 * 5 * 6.0).reshape(4, 5, 6)
    out = np.full((5, 5, 6), -1.0)
    shapes = np.zeros((5, 2), dtype=np.int64)
    i = 1
    k[1, 1](vol, out, shapes, i)
    refs = [vol[i, 1:], vol[:, :, -1], vol[1:, ::2, i], vol[::-1][1:][0]]
    for r, v in enumerate(refs):
        assert tuple(shapes[r]) == v.shape
        np.testing.assert_array_equal(out[r, :v.shape[0], :v.shape[1]], v)
    e = vol[1:][:, 1][1]
    assert tuple(shapes[4]) == (e.size, 1)
    np.testing.assert_array_equal(out[4, 0, :e.size], e)


def test_device_function_slices_its_argument_and_returns_a_view(backend):
    @cuda.jit(device=True)
    def middle(v):
        return v[1:-1]

    @cuda.jit(device=True)
    def total(v):
        s = 0.0
        for x in v:
            s += x
        return s

    @cuda.jit
    def k(a, out):
        i = cuda.grid(1)
        if i < a.shape[0]:
            out[i] = total(middle(a[i])) + total(a[i, ::-2])

    a = np.random.default_rng(1).random((40, 7))
    out = np.zeros(40)
    k[2, 32](a, out)
    np.testing.assert_allclose(out, a[:, 1:-1].sum(axis=1) + a[:, ::-2].sum(axis=1))


def test_views_of_readonly_arrays_can_be_read(backend):
    @cuda.jit
    def k(x, out):
        v = x[1:]
        out[0] = v[0] + v[-1] + len(v)

    x = np.arange(5.0)
    x.setflags(write=False)
    out = np.zeros(1)
    k[1, 1](x, out)
    assert out[0] == 1.0 + 4.0 + 4


def test_a_view_variable_unifies_layouts(backend):
    @cuda.jit
    def k(a, out, flag):
        v = a[1:]
        if flag:
            v = a[::2]
        out[0] = v.size
        out[1] = v[1]

    a = np.arange(10.0)
    out = np.zeros(2)
    k[1, 1](a, out, False)
    assert list(out) == [9, 2]
    k[1, 1](a, out, True)
    assert list(out) == [5, 2]


# --------------------------------------------------------------------------------------------
# Assignment to whole views
# --------------------------------------------------------------------------------------------

def test_scalar_into_views(backend):
    @cuda.jit
    def k(a, img, vol, i, j, x):
        a[i:j] = 0.5
        a[::3] = x
        row = img[1]
        row[:] = -1
        img[3] = 7
        img[:, -1] = i
        img[1:, ::2][::2] = 9
        vol[1] = 2.0
        vol[:, 0, 1:] = 3

    for layout in (np.ascontiguousarray, np.asfortranarray):
        a = np.arange(12.0)
        img = layout(np.arange(30.0).reshape(5, 6))
        vol = layout(np.zeros((3, 4, 5), dtype=np.float32))
        ra, rimg, rvol = a.copy(), img.copy(), vol.copy()
        i, j, x = -8, 100, 4.25
        k[1, 1](a, img, vol, i, j, x)
        ra[i:j] = 0.5
        ra[::3] = x
        rimg[1][:] = -1
        rimg[3] = 7
        rimg[:, -1] = i
        rimg[1:, ::2][::2] = 9
        rvol[1] = 2.0
        rvol[:, 0, 1:] = 3
        np.testing.assert_array_equal(a, ra)
        np.testing.assert_array_equal(img, rimg)
        np.testing.assert_array_equal(vol, rvol)


def test_assignment_with_runtime_bounds(backend):
    @cuda.jit
    def k(a, start, stop, step, v):
        a[start:stop:step] = v

    for start, stop, step in itertools.product([-12, -3, 0, 2, 11], [-11, -1, 4, 100],
                                               [1, 3, -1, -2]):
        a = np.zeros(10)
        k[1, 1](a, start, stop, step, 1.0)
        ref = np.zeros(10)
        ref[start:stop:step] = 1.0
        np.testing.assert_array_equal(a, ref, err_msg=f"a[{start}:{stop}:{step}] = 1")
    a = np.zeros(10)
    k[1, 1](a, 0, 10, 0, 1.0)  # a run-time step of 0 selects nothing
    assert not a.any()


def test_array_into_views(backend):
    @cuda.jit
    def k(a, b, img, src, col):
        a[1:] = b[:-1]
        a[:2] = b[::-1][:2]
        img[1:3, :] = src
        img[0] = b[:6]
        img[3:, 1:4] = col
        img[:, 5] = b[3:8]

    a = np.zeros(8)
    b = np.arange(8.0) + 10
    img = np.zeros((5, 6))
    src = np.arange(12.0).reshape(2, 6) + 100
    col = np.array([[1.0], [2.0]])  # size-1 dimension broadcast
    ra, rimg = a.copy(), img.copy()
    k[1, 1](a, b, img, src, col)
    ra[1:] = b[:-1]
    ra[:2] = b[::-1][:2]
    rimg[1:3, :] = src
    rimg[0] = b[:6]
    rimg[3:, 1:4] = col
    rimg[:, 5] = b[3:8]
    np.testing.assert_array_equal(a, ra)
    np.testing.assert_array_equal(img, rimg)


def test_broadcasting_missing_and_size_one_dimensions(backend):
    @cuda.jit
    def k(img, vol, row, one, plane):
        img[:] = row
        vol[:, 1:3] = one
        vol[0] = plane

    img = np.zeros((4, 3))
    vol = np.zeros((2, 4, 3), dtype=np.int32)
    row = np.array([1.0, 2.0, 3.0])
    one = np.array([[7.5]])
    plane = np.arange(12.0).reshape(4, 3)
    rimg, rvol = img.copy(), vol.copy()
    k[1, 1](img, vol, row, one, plane)
    rimg[:] = row
    rvol[:, 1:3] = one
    rvol[0] = plane
    np.testing.assert_array_equal(img, rimg)
    np.testing.assert_array_equal(vol, rvol)


def test_overlapping_shifted_copies(backend):
    @cuda.jit
    def right(a):
        a[1:] = a[:-1]

    @cuda.jit
    def left(a):
        a[:-1] = a[1:]

    @cuda.jit
    def rows_down(img):
        img[1:] = img[:-1]

    @cuda.jit
    def cols_right(img):
        img[:, 2:] = img[:, :-2]

    for kernel, make in [(right, lambda: np.arange(9.0)), (left, lambda: np.arange(9.0)),
                         (rows_down, lambda: np.arange(20.0).reshape(4, 5)),
                         (cols_right, lambda: np.arange(20.0).reshape(4, 5))]:
        got = make()
        kernel[1, 1](got)
        ref = make()
        kernel.py_func(ref)
        np.testing.assert_array_equal(got, ref, err_msg=kernel.py_func.__name__)


def test_dtype_conversion_on_assignment(backend):
    @cuda.jit
    def k(i32, u8, f32, flags, c, x, n, f64):
        i32[:2] = x
        i32[2:] = f64[2:4]
        u8[:] = n
        f32[::2] = n
        f32[1::2] = True
        flags[:] = x
        flags[2:] = 0
        c[1:] = x

    i32 = np.zeros(4, dtype=np.int32)
    u8 = np.zeros(3, dtype=np.uint8)
    f32 = np.zeros(5, dtype=np.float32)
    flags = np.zeros(4, dtype=np.bool_)
    c = np.zeros(3, dtype=np.complex64)
    x, n = -2.75, 300
    f64 = np.array([0, 0, 3.9, -3.9])
    k[1, 1](i32, u8, f32, flags, c, x, n, f64)
    np.testing.assert_array_equal(i32, [-2, -2, 3, -3])
    np.testing.assert_array_equal(u8, np.array([n] * 3).astype(np.uint8))
    np.testing.assert_array_equal(f32, [300, 1, 300, 1, 300])
    np.testing.assert_array_equal(flags, [True, True, False, False])
    np.testing.assert_array_equal(c, [0, x, x])


def test_shape_mismatch_copies_the_overlap(backend):
    # NumPy raises ValueError; a kernel copies the part both shapes share.
    @cuda.jit
    def k(a, b, img, src):
        a[0:5] = b
        img[:, :] = src

    a = np.zeros(6)
    b = np.array([1.0, 2.0, 3.0])
    img = np.zeros((3, 3))
    src = np.arange(8.0).reshape(2, 4) + 1
    k[1, 1](a, b, img, src)
    np.testing.assert_array_equal(a, [1, 2, 3, 0, 0, 0])
    np.testing.assert_array_equal(img, [[1, 2, 3], [5, 6, 7], [0, 0, 0]])


def test_assignment_in_a_device_function_on_many_threads(backend):
    @cuda.jit(device=True)
    def clear_row(row, v):
        row[:] = v

    @cuda.jit
    def k(img):
        y = cuda.grid(1)
        if y < img.shape[0]:
            clear_row(img[y], y)
            img[y, ::3] = -y

    img = np.ones((70, 9))
    k[3, 32](img)
    ref = np.repeat(np.arange(70.0)[:, None], 9, axis=1)
    ref[:, ::3] = -ref[:, ::3]
    np.testing.assert_array_equal(img, ref)


def test_device_arrays_are_sliced_in_place(backend):
    @cuda.jit
    def k(d):
        d[2:5] = d[:3]
        d[::-4] = 0

    h = np.arange(10.0)
    d = cuda.to_device(h)
    k[1, 1](d)
    ref = h.copy()
    ref[2:5] = ref[:3].copy()
    ref[::-4] = 0
    np.testing.assert_array_equal(d.copy_to_host(), ref)


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------

def compile_error(kernel, *args, cls=errors.TypingError):
    with pytest.raises(cls) as info:
        kernel[1, 1](*args)
    return info.value


def k_scalar_slice(a, out):
    x = a[0]
    out[0] = x[1:2]


def k_too_many(a, out):
    out[0] = a[1, 2:3][0]


def k_step_zero(a, out):
    out[0] = a[::0][0]


def k_float_bound(a, out):
    out[0] = a[1.5:][0]


def k_2d_into_1d(a, out):
    out[:] = a


def k_complex_into_float(a, out):
    out[1:] = 1j


def k_write_readonly_view(a, out):
    v = a[1:]
    v[0] = 1.0


@pytest.mark.parametrize("func, a, words", [
    (k_scalar_slice, np.zeros(3), ["cannot index float64 with slice<a:b>"]),
    (k_too_many, np.zeros(3), ["too many indices", "array(float64, 1d, C)"]),
    (k_step_zero, np.zeros(3), ["slice step cannot be zero"]),
    (k_float_bound, np.zeros(3), ["slice indices must be integers or None", "float"]),
    (k_2d_into_1d, np.zeros((2, 2)), ["array(float64, 2d, C)"]),
    (k_complex_into_float, np.zeros(3), ["Literal[complex]"]),
])
def test_compile_errors(cpu, func, a, words):
    err = compile_error(cuda.jit(func), a, np.zeros(3))
    assert isinstance(err, TypeError)
    assert err.filename == __file__
    assert err.lineno == first_line(func) + (2 if func is k_scalar_slice else 1)
    for w in words:
        assert w in str(err), str(err)


def test_writing_a_view_of_a_readonly_array(cpu):
    a = np.zeros(3)
    a.setflags(write=False)
    err = compile_error(cuda.jit(k_write_readonly_view), a, np.zeros(3))
    assert "read-only" in str(err) and "readonly array(float64, 1d, C)" in str(err)
    assert err.lineno == first_line(k_write_readonly_view) + 2


def test_slices_in_ptx(cpu):
    def k(a, img, out, i):
        out[:] = a[i::2]
        img[i] = 0
        img[:, 1:] = img[:, :-1]

    ptx, _ = cuda.compile_ptx(k, "void(float32[:], float64[:, ::1], float32[:], int32)")
    assert ".visible .entry" in ptx
