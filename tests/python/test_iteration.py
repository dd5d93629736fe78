"""`for` loops over enumerate() and zip() of ranges, arrays, views and rows, nested, with
break/continue, in kernels and device functions, on both backends against Python."""
import numpy as np
import pytest

from ptxjit import cuda, errors


def first_line(func):
    return func.__code__.co_firstlineno


def test_enumerate_arrays_ranges_and_start(backend):
    @cuda.jit
    def k(x, out, n, s):
        for i, v in enumerate(x):
            out[0, i] = v * 10 + i
        for i, r in enumerate(range(n, 0, -2)):
            out[1, i] = i * 100 + r
        for i, v in enumerate(x, 3):
            out[2, i - 3] = i
        for i, v in enumerate(x[::-1], start=s):
            out[3, i - s] = i + v
        for i, v in enumerate(x, -2):
            out[4, i + 2] = i

    x = np.arange(6.0) + 0.5
    out = np.zeros((5, 6))
    n, s = 11, np.int32(-7)
    k[1, 1](x, out, n, s)
    ref = np.zeros((5, 6))
    for i, v in enumerate(x):
        ref[0, i] = v * 10 + i
    for i, r in enumerate(range(n, 0, -2)):
        ref[1, i] = i * 100 + r
    for i, v in enumerate(x, 3):
        ref[2, i - 3] = i
    for i, v in enumerate(x[::-1], start=int(s)):
        ref[3, i - s] = i + v
    for i, v in enumerate(x, -2):
        ref[4, i + 2] = i
    np.testing.assert_array_equal(out, ref)


def test_zip_stops_at_the_shortest(backend):
    @cuda.jit
    def k(x, y, out, n):
        c = 0
        for a, b in zip(x, y):
            out[0, c] = a * b
            c += 1
        out[1, 0] = c
        c = 0
        for a, b, r in zip(y, x[1:], range(n)):
            out[2, c] = a + b + r
            c += 1
        out[1, 1] = c
        c = 0
        for r, a in zip(range(100), x[::-2]):
            out[3, c] = r - a
            c += 1
        out[1, 2] = c

    x = np.arange(7.0)
    y = np.array([2.0, 3.0, 4.0, 5.0, 6.0])
    for n in (3, 10):
        out = np.zeros((4, 7))
        k[1, 1](x, y, out, n)
        ref = np.zeros((4, 7))
        pairs = list(zip(x, y))
        ref[0, :len(pairs)] = [a * b for a, b in pairs]
        trip = list(zip(y, x[1:], range(n)))
        ref[2, :len(trip)] = [a + b + r for a, b, r in trip]
        back = list(zip(range(100), x[::-2]))
        ref[3, :len(back)] = [r - a for r, a in back]
        ref[1, :3] = [len(pairs), len(trip), len(back)]
        np.testing.assert_array_equal(out, ref)


def test_zip_of_rows_and_enumerate_of_zip(backend):
    @cuda.jit
    def k(a, b, out):
        for i, (ra, rb) in enumerate(zip(a, b)):
            for j, (p, q) in enumerate(zip(ra, rb)):
                out[i, j] = p * q + i - j
        s = 0.0
        for (i, p), q in zip(enumerate(a[0]), b[1]):
            s += i * p + q
        out[0, 0] = s
        t = 0.0
        for p, q in zip(a[1], a[2, ::-1]):
            t += p - q
        out[0, 1] = t

    a = np.arange(12.0).reshape(3, 4)
    b = np.arange(12.0).reshape(3, 4)[:, ::-1] * 2  # a strided view
    out = np.zeros((3, 4))
    k[1, 1](a, b, out)
    ref = np.zeros((3, 4))
    for i, (ra, rb) in enumerate(zip(a, b)):
        for j, (p, q) in enumerate(zip(ra, rb)):
            ref[i, j] = p * q + i - j
    ref[0, 0] = sum(i * p + q for (i, p), q in zip(enumerate(a[0]), b[1]))
    ref[0, 1] = sum(p - q for p, q in zip(a[1], a[2, ::-1]))
    np.testing.assert_array_equal(out, ref)


def test_break_continue_and_nested_loops(backend):
    @cuda.jit
    def k(x, y, out):
        total = 0
        for i, v in enumerate(x):
            if v < 0:
                continue
            if i > 6:
                break
            for j, (p, q) in enumerate(zip(x, y)):
                if j == i:
                    break
                if p == q:
                    continue
                total += p * q + j
        out[0] = total

    def py(x, y, out):
        total = 0
        for i, v in enumerate(x):
            if v < 0:
                continue
            if i > 6:
                break
            for j, (p, q) in enumerate(zip(x, y)):
                if j == i:
                    break
                if p == q:
                    continue
                total += p * q + j
        out[0] = total

    rng = np.random.default_rng(3)
    x = rng.integers(-3, 5, size=12).astype(np.int32)
    y = rng.integers(-3, 5, size=9).astype(np.int64)
    out, ref = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    k[1, 1](x, y, out)
    py(x, y, ref)
    assert out[0] == ref[0]


def test_an_iterator_in_a_variable_is_consumed_once(backend):
    @cuda.jit
    def k(x, out):
        z = zip(x, x[1:])
        c = 0
        for a, b in z:
            c += 1
            if c == 2:
                break
        for a, b in z:  # continues where the first loop stopped
            out[c] = a + b
            c += 1
        for a, b in z:  # exhausted
            c += 100
        out[0] = c
        e = enumerate(x)
        for i, v in e:
            break
        for i, v in e:
            out[10] += i

    x = np.arange(6.0)
    out = np.zeros(11)
    k[1, 1](x, out)
    ref = np.zeros(11)
    z = zip(x, x[1:])
    c = 0
    for a, b in z:
        c += 1
        if c == 2:
            break
    for a, b in z:
        ref[c] = a + b
        c += 1
    ref[0] = c
    ref[10] = sum(range(1, 6))
    np.testing.assert_array_equal(out, ref)


def test_element_types_and_empty_iterables(backend):
    @cuda.jit
    def k(flags, z, img, out):
        for i, f in enumerate(flags):
            if f:
                out[0] += i
        for i, v in enumerate(z):
            out[1] += v.imag * i
        for i, row in enumerate(img):
            out[2] += row[i] * row.size
        for a, b in zip(flags[5:], z):
            out[3] += 1
        for t in zip():
            out[3] += 100
        for i, r in enumerate(range(0)):
            out[3] += 1000

    flags = np.array([True, False, True, True])
    z = np.array([1 + 2j, 3 - 1j, 0.5j], dtype=np.complex64)
    img = np.arange(9.0).reshape(3, 3)
    out = np.zeros(4)
    k[1, 1](flags, z, img, out)
    assert out[0] == 0 + 2 + 3
    assert out[1] == sum(v.imag * i for i, v in enumerate(z))
    assert out[2] == sum(img[i, i] * 3 for i in range(3))
    assert out[3] == 0


def test_device_functions_and_many_threads(backend):
    @cuda.jit(device=True)
    def weighted(row, w):
        s = 0.0
        for i, (v, c) in enumerate(zip(row, w)):
            s += v * c * (i + 1)
        return s

    @cuda.jit
    def k(m, w, out):
        t = cuda.grid(1)
        if t < m.shape[0]:
            out[t] = weighted(m[t], w)

    rng = np.random.default_rng(5)
    m = rng.random((100, 8)).astype(np.float32)
    w = rng.random(6).astype(np.float32)
    out = np.zeros(100, dtype=np.float32)
    k[4, 32](m, w, out)
    ref = (m[:, :6] * w * np.arange(1, 7, dtype=np.float32)).sum(axis=1)
    np.testing.assert_allclose(out, ref, rtol=1e-5)


def k_enumerate_float(x, out):
    for i, v in enumerate(1.5):
        out[i] = v


def k_zip_strict(x, out):
    for a, b in zip(x, out, strict=True):
        out[0] = a


def k_enumerate_float_start(x, out):
    for i, v in enumerate(x, 0.5):
        out[0] = v


def k_zip_scalar(x, out):
    for a, b in zip(x, x[0]):
        out[0] = a


@pytest.mark.parametrize("func, words", [
    (k_enumerate_float, ["not iterable", "Literal[float]"]),
    (k_zip_strict, ["zip", "strict"]),
    (k_enumerate_float_start, ["enumerate", "start must be an integer"]),
    (k_zip_scalar, ["float64 is not iterable"]),
])
def test_errors(cpu, func, words):
    with pytest.raises(errors.TypingError) as info:
        cuda.jit(func)[1, 1](np.zeros(3), np.zeros(3))
    err = info.value
    assert err.filename == __file__
    assert err.lineno == first_line(func) + 1
    for w in words:
        assert w in str(err), str(err)


def test_enumerate_and_zip_in_ptx(cpu):
    def k(x, y, out):
        for i, (a, b) in enumerate(zip(x, y)):
            out[i] = a * b + i

    ptx, _ = cuda.compile_ptx(k, "void(float32[:], float32[::1], float32[:])")
    assert ".visible .entry" in ptx
