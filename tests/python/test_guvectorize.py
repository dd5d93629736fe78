"""@guvectorize end to end against NumPy."""
import warnings

import numpy as np
import pytest

from ptxjit import cuda, errors, float64, guvectorize, int32, int64, void


def make_dot(target="cuda"):
    # int64 first: int64 inputs would cast safely to the float64 loop (NumPy's first match).
    @guvectorize(["void(int64[:], int64[:], int64[:])",
                  "void(float64[:], float64[:], float64[:])"], "(n),(n)->()", target=target)
    def dot(a, b, out):
        s = 0
        for i in range(a.shape[0]):
            s += a[i] * b[i]
        out[0] = s

    return dot


def test_inner_product_with_loop_broadcasting(backend):
    dot = make_dot()
    rng = np.random.default_rng(0)
    a, b = rng.random((4, 3, 5)), rng.random((3, 5))
    np.testing.assert_allclose(dot(a, b), np.einsum("...n,...n->...", a, b))
    assert dot(np.arange(4), np.arange(4)) == 14
    r = dot(np.arange(6).reshape(2, 3), np.arange(3))
    assert r.dtype == np.int64
    np.testing.assert_array_equal(r, np.arange(6).reshape(2, 3) @ np.arange(3))
    np.testing.assert_allclose(dot(np.asfortranarray(a[0]), b[:, ::-1]),
                               np.einsum("...n,...n->...", a[0], b[:, ::-1]))
    assert dot.signature == "(n),(n)->()" and dot.nin == 2 and dot.nout == 1


def test_matmul_with_out_and_device_arrays(backend):
    @guvectorize([void(float64[:, :], float64[:, :], float64[:, :])], "(m,n),(n,p)->(m,p)",
                 target="cuda")
    def matmul(a, b, c):
        for i in range(a.shape[0]):
            for j in range(b.shape[1]):
                s = 0.0
                for k in range(a.shape[1]):
                    s += a[i, k] * b[k, j]
                c[i, j] = s

    rng = np.random.default_rng(1)
    a, b = rng.random((5, 3, 4)), rng.random((4, 2))
    np.testing.assert_allclose(matmul(a, b), a @ b)
    out = np.zeros((5, 3, 2))
    assert matmul(a, b, out=out) is out
    np.testing.assert_allclose(out, a @ b)
    out2 = np.zeros((5, 3, 2))
    matmul(a, b, out2)
    np.testing.assert_allclose(out2, a @ b)
    d = matmul(cuda.to_device(a), cuda.to_device(b))
    assert isinstance(d, cuda.DeviceNDArray)
    np.testing.assert_allclose(d.copy_to_host(), a @ b)
    # int inputs are cast to the float64 loop on the host.
    np.testing.assert_allclose(matmul(np.ones((2, 2), np.int32), np.eye(2)), np.ones((2, 2)))


def test_core_dimensions_of_unit_and_other_strides(backend):
    # Loops over operands whose innermost core stride is the item size take it as a constant
    # (codegen/UfuncKernels.h, LoopOperand::unitCoreStride); every other stride is read at run
    # time. Calls alternating between the two must each get their own loop.
    @guvectorize(["void(float32[:], float32[:], float32[:])"], "(n),(n)->()", target="cuda")
    def sqdist(x, y, out):
        d = np.float32(0)
        for k in range(x.shape[0]):
            t = x[k] - y[k]
            d += t * t
        out[0] = d

    @guvectorize(["void(float64[:, :], float64[:])"], "(m,n)->(m)", target="cuda")
    def rowmax(a, out):
        for i in range(a.shape[0]):
            m = a[i, 0]
            for j in range(1, a.shape[1]):
                m = max(m, a[i, j])
            out[i] = m

    rng = np.random.default_rng(7)
    big = rng.random((6, 40), dtype=np.float32)
    ref = lambda x, y: ((x.astype(np.float64) - y) ** 2).sum(-1)  # noqa: E731
    for x, y in [(big[:, :16], big[:, 16:32]),        # unit core strides, rows 160 bytes apart
                 (big[:, ::2], big[:, 1::2]),         # core stride 8
                 (np.asfortranarray(big), big[::-1]),  # core stride 24; unit
                 (big.T[:6], big.T[6:12]),            # core stride 160
                 (big[:, :1], big[:, 5:6])]:          # one element per row
        np.testing.assert_allclose(sqdist(x, y), ref(x, y), rtol=1e-5)
        dx, dy = cuda.to_device(np.ascontiguousarray(x)), cuda.to_device(y)
        np.testing.assert_allclose(sqdist(dx, dy).copy_to_host(), ref(x, y), rtol=1e-5)
    cube = rng.random((3, 4, 10))
    for a in [cube, cube[:, :, ::3], cube[:, :, 2:7], cube.transpose(0, 2, 1)]:
        np.testing.assert_array_equal(rowmax(a), a.max(-1))


def core_alignment(address, row_stride, itemsize=8):
    """The alignment a loop asserts for rows at `address` + multiples of `row_stride`
    (codegen/UfuncKernels.h, LoopOperand::coreAlign): a power of two up to 16 above the item
    size, or None."""
    bits = address | row_stride | 16
    low = bits & -bits
    return low if low > itemsize else None


def test_rows_at_16_bytes_get_a_loop_of_their_own(backend):
    # Rows of float64 that all start at multiples of 16 bytes get a loop that tells LLVM so (its
    # loads along the row then combine into vector loads on CUDA); rows at other addresses get
    # one without. Calls alternating between them must each get their own loop.
    dot = make_dot()
    host = np.random.default_rng(3).random((8, 36))  # rows of 288 bytes
    dev = cuda.to_device(host)
    expected = set()
    for start in [0, 1, 0, 1]:  # rows at +0 and +8 bytes
        x = dev[:, start:start + 32]
        expected.add(core_alignment(x.device_ctypes_pointer.value, x.strides[0]))
        ref = (host[:, start:start + 32] ** 2).sum(1)
        np.testing.assert_allclose(dot(x, x).copy_to_host(), ref)
    assert expected == {16, None}  # the pool's allocations start at 256-byte boundaries
    assert len(dot._kernel_texts()) == 2  # a loop per alignment, each reused


def test_rows_at_16_bytes_are_read_with_vector_loads_on_the_fake_driver(fake_cuda_env,
                                                                        run_python):
    # The PTX of the two loops above (the fake driver compiles and launches nothing real):
    # two-element loads of float64 for rows at 16 bytes, single ones otherwise.
    import inspect
    import textwrap

    out = run_python("import ctypes, os\nimport numpy as np\n"
                     "from ptxjit import cuda, guvectorize\n" +
                     textwrap.dedent(inspect.getsource(make_dot)) + """
ctypes.CDLL(os.environ["PTXJIT_LIBCUDA"]).fakeCudaAcceptAnyPtx(1)
dot = make_dot()
dev = cuda.to_device(np.ones((8, 36)))
for start in (0, 1):
    x = dev[:, start:start + 32]
    dot(x, x)
    print(x.device_ctypes_pointer.value % 16, end=" ")
for _, _, ptx in dot._kernel_texts():
    print(ptx.count("ld.global.v2.f64"), end=" ")
""", fake_cuda_env)
    offsets, loads = [int(f) for f in out.split()[:2]], sorted(int(f) for f in out.split()[2:])
    assert offsets == [0, 8]
    assert len(loads) == 2 and loads[0] == 0 < loads[1], loads


def test_vector_loaded_rows_cap_the_loops_grid_on_the_fake_driver(fake_cuda_env, run_python):
    # A loop whose threads read rows with vector loads keeps at most kL1LiveRowBytes (128 KiB)
    # of their lines in use per SM (ufunc/Loops.h), a line (128 bytes) per operand of longer
    # rows: rows of 32 float64 (256 bytes) in two operands take 256 bytes a thread, so two
    # blocks of 256 per SM, four on the fake's two SMs; rows of 8 (64 bytes) twice as many. Rows
    # the loop reads one element at a time keep the grid the occupancy gives (16 blocks of 256
    # for 4096 rows).
    import inspect
    import textwrap

    out = run_python("""
import ctypes, os
fake = ctypes.CDLL(os.environ["PTXJIT_LIBCUDA"])
fake.fakeCudaAcceptAnyPtx(1)
fake.fakeCudaSetMultiprocessorCount(2)
import numpy as np
from ptxjit import cuda, guvectorize
""" + textwrap.dedent(inspect.getsource(make_dot)) + """
dot = make_dot()
dev = cuda.to_device(np.ones((4096, 36)))
for start, width in ((0, 32), (1, 32), (0, 32), (0, 8)):
    x = dev[:, start:start + width]
    dot(x, x)
    print(fake.fakeCudaLastLaunchGrid(), end=" ")
""", fake_cuda_env)
    assert [int(f) for f in out.split()] == [4, 16, 4, 8]


def test_scalar_core_argument_and_two_outputs(backend):
    @guvectorize([(float64[:], float64, float64[:], float64[:])], "(n),()->(n),()",
                 target="cuda")
    def scale_sum(x, k, y, total):
        t = 0.0
        for i in range(x.shape[0]):
            y[i] = x[i] * k
            t += y[i]
        total[0] = t

    x = np.arange(12.0).reshape(3, 4)
    y, total = scale_sum(x, 2.0)
    np.testing.assert_array_equal(y, x * 2)
    np.testing.assert_array_equal(total, (x * 2).sum(axis=1))
    y2, t2 = scale_sum(x, np.array([1.0, 2.0, 3.0])[:, None][:, 0])
    np.testing.assert_array_equal(y2, x * np.array([[1.0], [2.0], [3.0]]))


def test_lazy_gufunc(backend):
    @guvectorize("(n)->(n)", target="cuda")
    def cumsum(x, out):
        acc = x[0] - x[0]
        for i in range(x.shape[0]):
            acc += x[i]
            out[i] = acc

    x = np.arange(10, dtype=np.int32).reshape(2, 5)
    r = cumsum(x)
    assert r.dtype == np.int32
    np.testing.assert_array_equal(r, np.cumsum(x, axis=1))
    np.testing.assert_allclose(cumsum(np.linspace(0, 1, 6)), np.cumsum(np.linspace(0, 1, 6)))


@pytest.mark.parametrize("target", ["cpu", "parallel"])
def test_cpu_targets(target):
    dot = make_dot(target)
    a = np.random.default_rng(2).random((20000, 3))
    np.testing.assert_allclose(dot(a, a), (a * a).sum(axis=1))


def test_errors(backend):
    dot = make_dot()
    with pytest.raises(ValueError, match="mismatch in its core dimension 0"):
        dot(np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match="does not have enough dimensions"):
        make_dot()(np.float64(1.0), np.zeros(3))
    with pytest.raises(ValueError, match="could not be broadcast"):
        dot(np.zeros((2, 3)), np.zeros((4, 3)))
    with pytest.raises(TypeError, match="no loop"):
        dot(np.zeros(3, np.complex128), np.zeros(3))
    for bad in ["(n)", "(n),(n)->", "(n,)->()", "n->()"]:
        with pytest.raises(ValueError, match="not a valid gufunc signature"):
            guvectorize(["void(float64[:], float64[:])"], bad)(lambda a, b: None)
    with pytest.raises(TypeError, match="gives it 1 core dimension"):
        guvectorize(["void(float64[:,:], float64[:])"], "(n)->()")(lambda a, b: None)
    with pytest.raises(TypeError, match="must be an array"):
        guvectorize(["void(float64[:], float64)"], "(n)->()")(lambda a, b: None)

    @guvectorize("(n)->(m)", target="cuda")
    def unbound(x, out):
        out[0] = x[0]

    with pytest.raises(ValueError, match="no input binds"):
        unbound(np.zeros(3))
    out = np.zeros(2)
    unbound(np.ones(3), out=out)
    assert out[0] == 1.0


# ---- numba-cuda's API, with its errors (its test_gufunc.py and test_gufunc_scalar.py) ---------


def test_a_signature_with_a_return_type_is_refused():
    with pytest.raises(TypeError) as e:
        @guvectorize([int32(int32[:], int32[:])], "(m)->(m)", target="cuda")
        def f(x, y):
            pass
    msg = str(e.value)
    assert "guvectorized functions cannot return values" in msg
    assert "specifies int32 return type" in msg
    with pytest.raises(TypeError, match="specifies float64 return type"):
        guvectorize(["float64(float64[:], float64[:])"], "(m)->(m)")(lambda x, y: None)
    for sig in ["void(float64[:], float64[:])", "none(float64[:], float64[:])",
                (float64[:], float64[:])]:
        guvectorize([sig], "(m)->(m)")(lambda x, y: None)


def _one_out(x, y, z):
    pass


def _two_outs(x, y, z, w):
    pass


@pytest.mark.parametrize("func, nout", [(_one_out, 1), (_two_outs, 2)])
def test_positional_argument_counts(backend, func, nout):
    layout = "(m),(m)->" + ",".join(["(m)"] * nout)
    f = guvectorize([(int32[:],) * (2 + nout)], layout, target="cuda")(func)
    arr = np.arange(5, dtype=np.int32)
    for n in (1, 3 + nout):
        with pytest.raises(TypeError) as e:
            f(*[arr] * n)
        msg = str(e.value)
        assert msg.startswith(f"gufunc '{func.__name__}': ")
        assert "gufunc accepts 2 positional arguments" in msg
        assert f"or {2 + nout} positional arguments" in msg
        assert f"Got {n} positional argument{'s' if n > 1 else ''}." in msg
    f(arr, arr)  # inputs alone, or inputs and outputs
    f(arr, arr, *[np.zeros(5, np.int32)] * nout)


def test_out_given_twice():
    @guvectorize([void(float64[:], float64[:])], "(x)->(x)", target="cuda")
    def foo(inp, out):
        pass

    inp = out = np.zeros(10)
    with pytest.raises(ValueError) as e:
        foo(inp, out, out=out)
    assert str(e.value) == "cannot specify argument 'out' as both positional and keyword"


def _noop2(a, b):
    pass


def test_numba_cudas_target_options():
    sig = [void(float64[:], float64[:])]
    guvectorize(sig, "(x)->(x)", target="cuda", nopython=True)(_noop2)
    with pytest.raises(TypeError) as e:
        guvectorize(sig, "(x)->(x)", target="cuda", nopython=False)(_noop2)
    assert str(e.value) == "nopython flag must be True"
    with pytest.raises(TypeError) as e:
        guvectorize(sig, "(x)->(x)", target="cuda", what1=True, ever2=False)(_noop2)
    head = "The following target options are not supported:"
    msg = str(e.value)
    assert msg.startswith(head)
    assert {i.strip("'\" ") for i in msg[len(head):].strip().split(",")} == {"what1", "ever2"}
    with pytest.raises(TypeError, match="^writable_args are not supported$"):
        cuda.guvectorize(sig, "(x)->(x)", writable_args=(0,))
    with pytest.raises(TypeError, match="not supported: 'nogil'"):
        cuda.guvectorize(sig, "(x)->(x)", nogil=True)
    # The host targets take Numba's CPU options (KeyError for others, as Numba).
    guvectorize(sig, "(x)->(x)", target="cpu", nopython=True, nogil=True, writable_args=(0,))
    with pytest.raises(KeyError, match="Unrecognized options"):
        guvectorize(sig, "(x)->(x)", target="parallel", what1=True)
    with pytest.raises(TypeError, match="writable_args must be a tuple"):
        guvectorize(sig, "(x)->(x)", target="cpu", writable_args=0)


def test_calling_a_gufunc_from_a_kernel_is_numbas_typing_error(cpu):
    @guvectorize([void(int32[:], int32[:])], "(n)->(n)", target="cuda")
    def gufunc_copy(A, b):
        for i in range(A.shape[0]):
            b[i] = A[i]

    @cuda.jit
    def cuda_jit(A, b):
        return gufunc_copy(A, b)

    A = np.arange(32).astype("int32")
    with pytest.raises(errors.TypingError, match="Untyped global name 'gufunc_copy'.*") as e:
        cuda_jit[1, 1](A, np.zeros_like(A))
    assert "a value of type Ufunc cannot be used in kernels" in str(e.value)
    assert isinstance(e.value, TypeError)


def test_old_style_scalar_as_array(backend):
    # numba-cuda issue 2579: a one-element array for a `()` input adds no loop dimension.
    @guvectorize(["void(int32[:], int32[:], int32[:])"], "(n),()->(n)", target="cuda")
    def gufunc(x, y, res):
        for i in range(x.shape[0]):
            res[i] = x[i] + y[0]

    a = np.array([1, 2, 3, 4], dtype=np.int32)
    b = np.array([2], dtype=np.int32)
    res = np.zeros(4, dtype=np.int32)
    gufunc(a, b, out=res)
    np.testing.assert_array_equal(res, a + 2)
    r = gufunc(a, b)
    assert r.shape == (4,)  # numba-cuda's shape (NumPy would give (1, 4))
    np.testing.assert_array_equal(r, a + 2)
    res2 = np.zeros((1, 4), dtype=np.int32)  # NumPy's loop shape is accepted too
    gufunc(a, b, res2)
    np.testing.assert_array_equal(res2, [a + 2])
    a2 = np.array([1, 2, 3, 4] * 2, dtype=np.int32).reshape(2, 4)
    b2 = np.array([2, 10], dtype=np.int32)
    res = np.zeros((2, 4), dtype=np.int32)
    gufunc(a2, b2, res)
    np.testing.assert_array_equal(res, a2 + b2[:, None])
    with pytest.raises(ValueError, match="loop dimensions"):
        gufunc(a, b, out=np.zeros((2, 4), dtype=np.int32))

    # Without another array input, a one-element array keeps NumPy's loop dimension.
    @guvectorize(["void(int32, int32, int32[:])"], "(),()->()", target="cuda")
    def add(x, y, out):
        out[0] = x + y

    assert add(b, 3).shape == (1,) and add(3, b).shape == (1,)
    assert add(np.arange(3, dtype=np.int32), b).shape == (3,)


def test_scalar_inputs_are_cast_as_numba_cuda_casts_them(backend):
    @guvectorize(["void(int32, int32[:], int32[:])"], "(),(t)->(t)", target="cuda")
    def foo(a, b, out):
        for i in range(b.size):
            out[i] = a * b[i]

    b = np.arange(10).astype(np.int32)
    out = foo(np.int64(2), b)  # int64 does not cast safely to int32: numba-cuda narrows it
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, 2 * b)
    np.testing.assert_array_equal(foo(np.array([3, 4], np.int64)[:, None][:, 0],
                                      np.ones((2, 10), np.int32)), [[3] * 10, [4] * 10])
    da = cuda.to_device(np.array(np.int64(2)))
    with pytest.raises(TypeError, match=r"does not support \.astype\(\)"):
        foo(da, b)
    # Narrowing stays within a kind: a float or complex input is not cast to int32.
    for bad in (2.5, np.float64(2.0), np.complex128(2)):
        with pytest.raises(TypeError, match="no loop matching .* narrowing within a kind"):
            foo(bad, b)

    @guvectorize(["void(float32[:], float32[:])"], "(n)->(n)", target="cuda")
    def copy32(x, out):
        for i in range(x.shape[0]):
            out[i] = x[i]

    x = np.array([0.1, 1e300, -2.5])
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(copy32(x), x.astype(np.float32))
    with pytest.raises(TypeError, match="no loop"):
        copy32(x.astype(np.complex128))


def test_python_scalar_input_of_a_scalar_output_gufunc(backend):
    # numba-cuda issue 2812
    @guvectorize(["void(int32, int32[:])"], "()->()", target="cuda")
    def twice(inp, out):
        out[0] = inp * 2

    assert twice(10) == 20
    arg = np.arange(10).astype(np.int32)
    r = twice(arg)
    assert r.dtype == np.int32
    np.testing.assert_array_equal(r, arg * 2)
    with pytest.raises(OverflowError, match="out of bounds for int32"):
        twice(2**40)


def test_small_gufunc_launches_do_not_warn_on_the_cpu_backend(cpu):
    @guvectorize(["void(float32[:], float32[:], float32[:])"], "(n),(n)->(n)", target="cuda")
    def mul(a, b, dist):
        for i in range(a.shape[0]):
            dist[i] = a[i] * b[i]

    a = np.random.rand(1024).astype("float32")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(mul(a, a), a * a)


@pytest.mark.gpu
def test_small_gufunc_launches_warn_of_low_occupancy(cuda_target):
    @guvectorize(["void(float32[:], float32[:], float32[:])"], "(n),(n)->(n)", target="cuda")
    def mul(a, b, dist):
        for i in range(a.shape[0]):
            dist[i] = a[i] * b[i]

    a = np.random.rand(1024 * 32).astype("float32")
    dist = np.zeros_like(a)
    with pytest.warns(errors.NumbaPerformanceWarning, match="Grid size .+ low occupancy"):
        mul(a, a, dist)  # one loop iteration: one block
    np.testing.assert_array_equal(dist, a * a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mul(a, a, dist)  # once per ufunc
        big = np.random.rand(524288, 2).astype("float32")
        mul2 = guvectorize(["void(float32[:], float32[:], float32[:])"], "(n),(n)->(n)",
                           target="cuda")(mul.py_func)
        mul2(big, big, np.zeros_like(big))  # enough blocks: no warning
