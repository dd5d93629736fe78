"""Views of an array's memory in kernels, as numba-cuda gives them: `a.reshape(...)`,
`a.view(dtype)`, `a.real` / `a.imag` of complex arrays."""
import numpy as np
import pytest

from ptxjit import cuda, types
from ptxjit.errors import TypingError


def assert_compiles_to_ptx(*kernels):
    for k in kernels:
        assert k.signatures
        for sig in k.signatures:
            assert ".visible .entry" in k.inspect_ptx(sig)


# ---- reshape ----

@cuda.jit
def reshape1(arr, shape, got):
    y = arr.reshape(shape)
    for i in range(y.shape[0]):
        got[i] = y[i]


@cuda.jit
def reshape2(arr, shape, got):
    y = arr.reshape(shape)
    for i in range(y.shape[0]):
        for j in range(y.shape[1]):
            got[i, j] = y[i, j]


@cuda.jit
def reshape3(arr, shape, got):
    y = arr.reshape(shape)
    for i in range(y.shape[0]):
        for j in range(y.shape[1]):
            for k in range(y.shape[2]):
                got[i, j, k] = y[i, j, k]


KERNELS = {1: reshape1, 2: reshape2, 3: reshape3}


@pytest.mark.parametrize("arr,shape", [
    (np.arange(24), (24,)), (np.arange(24), (4, 6)), (np.arange(24), (8, 1, 3)),
    (np.arange(24).reshape(1, 8, 1, 1, 3, 1), (8, 3)),
    (np.arange(25.0).reshape(5, 5), -1), (np.arange(25.0).reshape(5, 5), (-1, 5)),
    (np.arange(25.0).reshape(5, 5), (5, -1, 5)), (np.arange(25.0).reshape(5, 5), (5, 5, -1)),
    (np.array([]), 0), (np.array([]), (1, 0, 2)), (np.array([]), (-1, 3)),
])
def test_reshape_runtime_shapes(backend, arr, shape):
    expected = arr.reshape(shape)
    got = np.full(expected.shape, -7, dtype=arr.dtype)
    KERNELS[expected.ndim][1, 1](arr, shape, got)
    np.testing.assert_array_equal(got, expected)


def test_reshape_varargs_writes_through(backend):
    @cuda.jit
    def k(a, out):
        m = a.reshape(2, 3)  # varargs, a view: writes reach `a`
        m[1, 2] = 100
        out[0] = m.shape[0] * 10 + m.shape[1]
        out[1] = a.reshape(3, -1).shape[1]

    a = np.arange(6.0)
    out = np.zeros(2, np.int64)
    k[1, 1](a, out)
    assert a[5] == 100 and list(out) == [23, 2]


@pytest.mark.parametrize("shape", [(4, 4), (-1, -1), (5, -1), (0, -1)])
def test_reshape_size_mismatch_gives_empty_view(backend, shape):
    # NumPy raises ValueError; a kernel cannot: the view has no elements.
    @cuda.jit
    def k(a, shape, out):
        y = a.reshape(shape)
        out[0] = y.size
        out[1] = y.shape[0]
        out[2] = y.shape[1]

    out = np.full(3, -1, np.int64)
    k[1, 1](np.arange(6.0), shape, out)
    assert list(out) == [0, 0, 0]


def test_reshape_errors(cpu):
    @cuda.jit
    def strided(a, out):
        out[0] = a[::2].reshape(2)[0]

    with pytest.raises(TypingError, match=r"a.reshape\(\) does not support array\(float64, 1d, "
                                          r"A\); it supports C-contiguous arrays"):
        strided[1, 1](np.arange(4.0), np.zeros(1))

    @cuda.jit
    def floats(a, out):
        out[0] = a.reshape(2.0)[0]

    with pytest.raises(TypingError, match=r"reshape cannot be called with \(Literal\[float\]; "
                                          r"it takes a shape"):
        floats[1, 1](np.arange(4.0), np.zeros(1))

    @cuda.jit
    def fortran(a, out):
        out[0] = a.reshape(4)[0]

    with pytest.raises(TypingError, match=r"C-contiguous"):
        fortran[1, 1](np.asfortranarray(np.ones((2, 2))), np.zeros(1))

    @cuda.jit
    def zero_d(a, out):
        out[0] = a.reshape(())[()]

    with pytest.raises(TypingError, match=r"does not support a 0-d result"):
        zero_d[1, 1](np.ones(1), np.zeros(1))


# ---- view(dtype) ----

@cuda.jit
def view_int32(byte_arr, start, stop, output):
    output[0] = byte_arr[start:stop].view(np.int32)[0]


def test_view_reinterprets_bytes(backend):
    byte_arr = np.arange(256, dtype=np.uint8)
    for start in range(0, 256, 4):
        output = np.zeros(1, dtype=np.int32)
        view_int32[1, 1](byte_arr, start, start + 4, output)
        assert output[0] == byte_arr[start:start + 4].view(np.int32)[0]


def test_view_forms_and_shapes(backend):
    @cuda.jit
    def k(f, m, out, shapes):
        u = f.view(np.uint32)          # same itemsize: the same shape
        out[0] = u[1]
        b = m.view("uint8")            # 2-d C array: the last dimension grows
        shapes[0] = b.shape[0]
        shapes[1] = b.shape[1]
        b[1, 4] = 1                    # writes through: m[1, 1]'s low byte
        h = m.view(types.int16)        # a ptxjit type object
        shapes[2] = h.shape[1]
        s = f[::2].view(np.uint16)     # strided last dimension: NumPy refuses; empty here
        shapes[3] = s.size
        c = f[:1].view(np.uint64)      # 4 bytes do not hold a uint64: empty
        shapes[4] = c.size

    f = np.array([1.0, 2.0, 3.0], np.float32)
    m = np.zeros((2, 3), np.int32)
    out = np.zeros(1, np.uint32)
    shapes = np.zeros(5, np.int64)
    k[1, 1](f, m, out, shapes)
    assert out[0] == f.view(np.uint32)[1]
    assert list(shapes) == [2, 12, 6, 0, 0]
    assert m[1, 1] == 1


def test_view_errors(cpu):
    @cuda.jit
    def runtime_dtype(a, out):
        out[0] = a.view(a[0])[0]

    with pytest.raises(TypingError, match=r"view\(\): the dtype must be a compile-time constant"):
        runtime_dtype[1, 1](np.zeros(2), np.zeros(1))

    @cuda.jit
    def fortran(a, out):
        out[0] = a.view(np.int32)[0, 0]

    with pytest.raises(TypingError, match=r"does not support int32 \(another itemsize\) of "
                                          r"array\(float64, 2d, F\)"):
        fortran[1, 1](np.asfortranarray(np.ones((2, 2))), np.zeros(1))


# ---- .real / .imag of complex arrays ----

@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_real_imag_views(backend, dtype):
    @cuda.jit
    def k(z, re, im):
        i = cuda.grid(1)
        if i < z.size:
            re[i] = z.real[i]
            im[i] = z.imag[i]

    @cuda.jit
    def w(z):
        z.imag[1] = 9.5             # views write into the array
        cuda.atomic.add(z.real, 2, 1.0)

    z = (np.arange(4) + 1j * (np.arange(4) + 10)).astype(dtype)
    orig = z.copy()
    re = np.zeros(4, z.real.dtype)
    im = np.zeros(4, z.real.dtype)
    k[1, 32](z, re, im)
    np.testing.assert_array_equal(re, orig.real)
    np.testing.assert_array_equal(im, orig.imag)
    w[1, 1](z)
    assert z[1] == orig[1].real + 9.5j and z[2] == orig[2] + 1
    assert z[0] == orig[0] and z[3] == orig[3]
    assert_compiles_to_ptx(k, w)


def test_atomics_on_complex_components(backend):
    # numba-cuda's TestAtomicOnComplexComponents
    @cuda.jit
    def atomic_add_one_j(values):
        i = cuda.grid(1)
        cuda.atomic.add(values.imag, i, 1)

    arr = np.arange(10) + np.arange(10) * 1j
    ref = arr + 1j
    atomic_add_one_j[1, 10](arr)
    np.testing.assert_array_equal(arr, ref)
    assert_compiles_to_ptx(atomic_add_one_j)


def test_real_of_2d_and_readonly(backend):
    z = (np.arange(6) * (1 + 2j)).reshape(2, 3)

    @cuda.jit
    def k(z, out):
        for i in range(2):
            for j in range(3):
                out[i, j] = z.imag[i, j] - z.real[i, j]

    out = np.zeros((2, 3))
    k[1, 1](z, out)
    np.testing.assert_array_equal(out, z.imag - z.real)

    @cuda.jit
    def write(z):
        z.real[0] = 1.0

    ro = np.zeros(2, np.complex128)
    ro.flags.writeable = False
    with pytest.raises(TypingError, match="read-only"):
        write[1, 1](ro)


def test_views_compile_to_ptx(cpu):
    # The module's kernels, specialized by the tests above (or here), also compile for CUDA.
    reshape2[1, 1](np.arange(6), (2, 3), np.zeros((2, 3), np.int64))
    view_int32[1, 1](np.arange(8, dtype=np.uint8), 0, 4, np.zeros(1, np.int32))
    assert_compiles_to_ptx(reshape1, reshape2, reshape3, view_int32)
    ptx = view_int32.inspect_ptx(view_int32.signatures[0])
    assert "ld.global.u32" in ptx or "ld.u32" in ptx


# ---- copy: a new local array, for arrays whose shape is known at compile time ----

FROZEN = np.array([1, 2, 3, 4, 5, 6])[::-1]  # strided on the host: frozen in C order


def test_copy_of_a_global_array_is_a_writable_local_array():
    @cuda.jit
    def k(out):
        q = FROZEN.copy()
        q[0] = 100  # the copy is writable (the frozen global is not)
        r = FROZEN.copy()  # a second copy is another array
        for i in range(len(out)):
            out[i] = q[i] + r[i]

    out = np.zeros(6)
    k[1, 1](out)
    expected = 2.0 * FROZEN
    expected[0] = 100 + FROZEN[0]
    np.testing.assert_array_equal(out, expected)


def test_copy_of_a_closure_array_keeps_shape_and_dtype():
    val = np.arange(12, dtype=np.float32).reshape(3, 4).T  # Fortran-ordered on the host

    @cuda.jit
    def k(out):
        q = val.copy()
        for i in range(q.shape[0]):
            for j in range(q.shape[1]):
                out[i, j] = q[i, j] * 2
        out[0, 0] = q.size + q.ndim * 100  # a 2-d array of 12 elements

    out = np.zeros((4, 3), dtype=np.float32)
    k[1, 1](out)
    expected = val * 2
    expected[0, 0] = 212
    np.testing.assert_array_equal(out, expected)
    assert k.signatures


def test_copy_of_local_shared_and_const_arrays():
    @cuda.jit
    def k(out):
        a = cuda.local.array(4, np.int32)
        for i in range(4):
            a[i] = i + 1
        b = a.copy()
        a[0] = 99  # the copy does not alias the local array
        s = cuda.shared.array((2, 2), np.int32)
        s[0, 0], s[0, 1], s[1, 0], s[1, 1] = 10, 20, 30, 40
        t = s.copy()
        c = cuda.const.array_like(FROZEN).copy()
        d = b.copy()  # a copy of a copy
        for i in range(4):
            out[i] = a[i] + b[i] + d[i] + t[i // 2, i % 2] + c[i]

    out = np.zeros(4, dtype=np.int64)
    k[1, 1](out)
    b = np.arange(1, 5)
    a = b.copy()
    a[0] = 99
    np.testing.assert_array_equal(out, a + 2 * b + np.array([10, 20, 30, 40]) + FROZEN[:4])


def test_copy_of_an_array_of_run_time_shape_is_refused():
    @cuda.jit
    def k(a, out):
        q = a.copy()
        out[0] = q[0]

    with pytest.raises(TypingError) as e:
        k[1, 1](np.zeros(3), np.zeros(3))
    msg = str(e.value)
    assert "a.copy() does not support an array whose shape is a run-time value" in msg
    assert "array(float64, 1d, C)" in msg and "cuda.local.array" in msg
    assert "test_array_methods.py:" in msg and "q = a.copy()" in msg


def test_copy_with_arguments_is_refused():
    @cuda.jit
    def k(out):
        q = FROZEN.copy("F")
        out[0] = q[0]

    with pytest.raises(TypingError, match=r"copy.*it takes no arguments"):
        k[1, 1](np.zeros(3))


def _fill_kernel(a, b, v):
    a.fill(v)
    loc = cuda.local.array((2, 3), types.float32)
    loc.fill(1.5)
    b[0] = loc[1, 2] + loc.sum()
    b[1:].fill(-1)  # a view


def test_fill_sets_every_element(backend):
    a = np.zeros((3, 4), np.int16)
    b = np.zeros(3)
    cuda.jit(_fill_kernel)[1, 1](a, b, 2.9)  # converted as a[...] = 2.9 stores it: 2
    assert (a == 2).all() and b.tolist() == [10.5, -1.0, -1.0]
    c = np.zeros(4, np.complex64)
    cuda.jit(lambda c: c.fill(1 + 2j))[1, 1](c)
    assert (c == 1 + 2j).all()
    f = np.zeros((4, 6))[:, ::2]  # strided
    cuda.jit(lambda f: f.fill(True))[1, 1](f)
    assert (f == 1).all()


def test_fill_errors(cpu):
    with pytest.raises(TypingError, match=r"fill cannot be called with \(Literal\[complex\]"):
        cuda.jit(lambda a: a.fill(1j))[1, 1](np.zeros(3))
    with pytest.raises(TypingError, match="it takes one value"):
        cuda.jit(lambda a: a.fill(1, 2))[1, 1](np.zeros(3))
    with pytest.raises(TypingError, match="fill cannot be called with \\(array"):
        cuda.jit(lambda a: a.fill(a))[1, 1](np.zeros(3))
    ro = np.zeros(3)
    ro.flags.writeable = False
    with pytest.raises(TypingError, match="read-only array.*a.fill writes"):
        cuda.jit(lambda a: a.fill(1))[1, 1](ro)
    rec = np.zeros(2, np.dtype([("x", np.int32)]))
    with pytest.raises(TypingError, match=r"a.fill\(\) does not support an array of"):
        cuda.jit(lambda a: a.fill(1))[1, 1](rec)


def test_fill_in_ptx():
    ptx, _ = cuda.compile_ptx(_fill_kernel, "void(float32[:, ::1], float64[::1], float32)")
    assert ".entry" in ptx and "st.global.f32" in ptx


def _transpose_kernel(a, out, v):
    t = a.T
    for i in range(t.shape[0]):
        for j in range(t.shape[1]):
            for k in range(t.shape[2]):
                out[i, j, k] = t[i, j, k]
    a.T[1, 0, 0] = -5  # a view: writes through
    v[0] = v.T[1] + v.T.size  # 1-d: the same array


def test_transpose_view(backend):
    a = np.arange(24.0).reshape(2, 3, 4)
    expected = a.T.copy()
    out = np.zeros((4, 3, 2))
    v = np.arange(3.0)
    k = cuda.jit(_transpose_kernel)
    k[1, 1](a, out, v)
    assert (out == expected).all() and a[0, 0, 1] == -5 and v[0] == 4.0
    if backend == "cpu":
        typemap = k.overloads[k.signatures[0]]._type_annotation.typemap
        assert typemap["t"] == types.Array(types.float64, 3, "F")  # C's transpose is F
    ro = np.zeros((2, 2))
    ro.flags.writeable = False
    with pytest.raises(TypingError, match="read-only"):
        cuda.jit(_write_transposed)[1, 1](ro)


def _write_transposed(a):
    t = a.T
    t[0, 1] = 1.0


def _permute_kernel(a, out, out2, same, flat):
    t = a.transpose(2, 0, 1)
    u = np.transpose(a, (1, -1, 0))  # a negative axis counts from the end
    for i in range(t.shape[0]):
        for j in range(t.shape[1]):
            for k in range(t.shape[2]):
                out[i, j, k] = t[i, j, k]
    for i in range(u.shape[0]):
        for j in range(u.shape[1]):
            for k in range(u.shape[2]):
                out2[i, j, k] = u[i, j, k]
    same[0] = a.transpose()[3, 2, 1] - a.T[3, 2, 1] + np.transpose(a)[3, 2, 1]
    same[1] = a.transpose((0, 1, 2))[1, 2, 3]
    f = a.ravel()
    for i in range(f.size):
        flat[i] = f[i]
    a.transpose(1, 2, 0)[0, 0, 1] = -5.0  # a view: writes through


def test_transpose_with_axes_and_ravel(backend):
    a = np.arange(24.0).reshape(2, 3, 4)
    orig = a.copy()
    out, out2 = np.zeros((4, 2, 3)), np.zeros((3, 4, 2))
    same, flat = np.zeros(2), np.zeros(24)
    k = cuda.jit(_permute_kernel)
    k[1, 1](a, out, out2, same, flat)
    assert (out == orig.transpose(2, 0, 1)).all()
    assert (out2 == np.transpose(orig, (1, -1, 0))).all()
    assert same.tolist() == [orig[1, 2, 3], orig[1, 2, 3]]
    assert (flat == orig.ravel()).all()
    assert a[1, 0, 0] == -5.0
    if backend == "cpu":
        typemap = k.overloads[k.signatures[0]]._type_annotation.typemap
        assert typemap["t"] == types.Array(types.float64, 3, "A")  # neither C nor F
        assert typemap["f"] == types.Array(types.float64, 1, "C")


def test_transpose_and_ravel_errors(cpu):
    a = np.zeros((2, 3, 4))
    with pytest.raises(TypingError, match=r"axes \(0, 1\) are not a permutation of the array's 3"):
        cuda.jit(lambda a: a.transpose(0, 1))[1, 1](a)
    with pytest.raises(TypingError, match=r"axes \(0, 0, 1\) are not a permutation"):
        cuda.jit(lambda a: a.transpose((0, 0, 1)))[1, 1](a)
    with pytest.raises(TypingError, match="numpy.transpose .*axes .0, 1, 5. are not"):
        cuda.jit(lambda a: np.transpose(a, (0, 1, 5)))[1, 1](a)
    with pytest.raises(TypingError, match="the axes must be compile-time constant ints"):
        cuda.jit(lambda a, n: a.transpose(n, 0, 1))[1, 1](a, 1)
    with pytest.raises(TypingError, match=r"a.ravel\(\) does not support .*its ravel would be a"):
        cuda.jit(lambda a: a[:, ::2].ravel())[1, 1](a)
    with pytest.raises(TypingError, match="it takes no arguments"):
        cuda.jit(lambda a: a.ravel("F"))[1, 1](a)


def test_transpose_in_ptx():
    ptx, _ = cuda.compile_ptx(_permute_kernel, "void(float64[:, :, ::1], float64[:, :, ::1], "
                                               "float64[:, :, ::1], float64[::1], float64[::1])")
    assert ".entry" in ptx and "st.global.f64" in ptx
