"""Shared, local and constant memory and barriers (cuda.shared.array, cuda.local.array,
cuda.const.array_like, cuda.syncthreads and its reductions, fences) on both backends."""
import re

import numpy as np
import pytest

from ptxjit import cuda, errors, float32, float64, int32, int64, types, void

N = 64
SHAPE2 = (8, 4)
ROWS, COLS = 8, 4
TABLE = np.arange(10, dtype=np.float64) * 1.5
TABLE2 = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int32)


@cuda.jit
def rotate_kernel(out):
    # Thread t reads what thread t + 1 wrote: correct only if the barrier separates the writes
    # from the reads (without it the CPU backend reads the 0xff fill, the GPU races).
    s = cuda.shared.array(N, float32)
    t = cuda.threadIdx.x
    s[t] = t + 1000 * cuda.blockIdx.x
    cuda.syncthreads()
    out[cuda.blockIdx.x * N + t] = s[(t + 1) % N]


def test_barrier_orders_writes_before_reads(backend):
    out = np.zeros(8 * N, np.float32)
    rotate_kernel[8, N](out)
    b, t = np.divmod(np.arange(8 * N), N)
    np.testing.assert_array_equal(out, ((t + 1) % N + 1000 * b).astype(np.float32))


@cuda.jit
def reverse_kernel(x, out):
    # Several phases over one shared array: reverse, barrier, reverse again, barrier, shift.
    s = cuda.shared.array(shape=N, dtype=int64)
    t = cuda.threadIdx.x
    s[t] = x[t]
    cuda.syncthreads()
    v = s[N - 1 - t]
    cuda.syncthreads()
    s[t] = v * 2
    cuda.syncthreads()
    out[t] = s[(t + 5) % N]


def test_several_barriers_in_sequence(backend):
    x = np.arange(N, dtype=np.int64) * 3 + 1
    out = np.zeros(N, np.int64)
    reverse_kernel[1, N](x, out)
    np.testing.assert_array_equal(out, np.roll(x[::-1] * 2, -5))


def make_closure_kernel():
    rows, cols = 4, 8  # closure constants

    @cuda.jit
    def k(out):
        a = cuda.shared.array((rows, cols), dtype="float64")     # dtype as a string
        b = cuda.shared.array(SHAPE2, np.int32)                   # shape from a global tuple
        c = cuda.shared.array(shape=(ROWS, COLS), dtype=int32)    # keywords, global ints
        x, y = cuda.threadIdx.x, cuda.threadIdx.y
        a[y, x] = x + 10 * y
        b[x, y] = 2 * x + y
        c[x, y] = 1
        cuda.syncthreads()
        # Transposed reads: other threads' writes.
        out[y, x] = a[y, cols - 1 - x] + b[cols - 1 - x, y] + c[cols - 1 - x, rows - 1 - y]
    return k


def test_constant_shapes_from_globals_closures_and_keywords(backend):
    k = make_closure_kernel()
    out = np.zeros((4, 8), np.float64)
    k[1, (8, 4)](out)
    y, x = np.indices((4, 8))
    np.testing.assert_array_equal(out, (7 - x) + 10 * y + 2 * (7 - x) + y + 1)


def _indexed_shapes(out):
    # elements of a global tuple, as numba-cuda takes them (SHAPE2 is (8, 4))
    loc = cuda.local.array(SHAPE2[1], np.float32)
    sh = cuda.shared.array((SHAPE2[0], SHAPE2[-1]), np.int32)
    out[0] = loc.size
    out[1] = sh.shape[0] * 10 + sh.shape[1]


def test_shapes_from_elements_of_global_tuples(backend):
    out = np.zeros(2)
    cuda.jit(_indexed_shapes)[1, 1](out)
    assert out.tolist() == [SHAPE2[1], SHAPE2[0] * 10 + SHAPE2[-1]]


@cuda.jit
def block_private_kernel(out):
    # Every block has its own shared memory: each writes its index and reads it back.
    s = cuda.shared.array(1, int32)
    if cuda.threadIdx.x == 0:
        s[0] = cuda.blockIdx.x
    cuda.syncthreads()
    out[cuda.blockIdx.x, cuda.threadIdx.x] = s[0]


def test_each_block_has_its_own_shared_memory(backend):
    out = np.zeros((200, 16), np.int32)
    block_private_kernel[200, 16](out)
    np.testing.assert_array_equal(out, np.repeat(np.arange(200, dtype=np.int32)[:, None], 16, 1))


@cuda.jit
def dynamic_kernel(out, sizes):
    f = cuda.shared.array(0, float32)
    i = cuda.shared.array(0, int32)   # aliases f, as in Numba
    t = cuda.threadIdx.x
    f[t] = t * 0.5
    cuda.syncthreads()
    out[t] = i[(t + 1) % cuda.blockDim.x]
    if t == 0:
        sizes[0] = f.size
        sizes[1] = len(i)


def test_dynamic_shared_memory_aliases_and_is_sized_by_the_launch(backend):
    out = np.zeros(32, np.int32)
    sizes = np.zeros(2, np.int64)
    dynamic_kernel[1, 32, 0, 40 * 4](out, sizes)
    expected = (np.arange(32, dtype=np.float32) * 0.5).view(np.int32)
    np.testing.assert_array_equal(out, np.roll(expected, -1))
    np.testing.assert_array_equal(sizes, [40, 40])


@cuda.jit
def large_dynamic_kernel(out):
    d = cuda.shared.array(0, float32)
    t = cuda.threadIdx.x
    for i in range(t, d.size, cuda.blockDim.x):
        d[i] = i
    cuda.syncthreads()
    acc = float32(0)
    for i in range(t, d.size, cuda.blockDim.x):
        acc += d[d.size - 1 - i]
    out[t] = acc


def test_dynamic_shared_memory_beyond_48_kib(backend):
    # 64 KiB: on the GPU the launch opts the kernel in (cuFuncSetAttribute).
    n = 16 * 1024
    out = np.zeros(128, np.float32)
    large_dynamic_kernel[2, 128, 0, n * 4](out)
    t = np.arange(128)
    expected = [np.sum((n - 1 - np.arange(k, n, 128)).astype(np.float64)) for k in t]
    np.testing.assert_allclose(out, expected, rtol=1e-6)


@cuda.jit
def static_and_dynamic_kernel(out):
    s = cuda.shared.array(16, float64)
    d = cuda.shared.array(0, float64)
    t = cuda.threadIdx.x
    s[t] = t
    d[t] = 100 + t
    cuda.syncthreads()
    out[t] = s[15 - t] + d[15 - t]


def test_static_and_dynamic_shared_memory_are_distinct(backend):
    out = np.zeros(16)
    static_and_dynamic_kernel[3, 16, 0, 16 * 8](out)
    np.testing.assert_array_equal(out, 100 + 2 * (15 - np.arange(16)))


@cuda.jit
def two_d_block_kernel(out):
    s = cuda.shared.array((4, 8, 2), int32)
    x, y, z = cuda.threadIdx.x, cuda.threadIdx.y, cuda.threadIdx.z
    s[y, x, z] = x + 8 * y + 32 * z
    cuda.syncthreads()
    out[y, x, z] = s[3 - y, 7 - x, 1 - z]


def test_three_dimensional_blocks(backend):
    out = np.zeros((4, 8, 2), np.int32)
    two_d_block_kernel[2, (8, 4, 2)](out)
    y, x, z = np.indices((4, 8, 2))
    np.testing.assert_array_equal(out, (7 - x) + 8 * (3 - y) + 32 * (1 - z))


@cuda.jit
def reductions_kernel(out):
    t = cuda.threadIdx.x
    out[0, t] = cuda.syncthreads_count(t % 3 == 0)
    out[1, t] = cuda.syncthreads_and(t < 100)
    out[2, t] = cuda.syncthreads_and(t < 10)
    out[3, t] = cuda.syncthreads_or(t == 17)
    out[4, t] = cuda.syncthreads_or(t > 1000)


def test_syncthreads_reductions(backend):
    out = np.zeros((5, 40), np.int32)
    reductions_kernel[2, 40](out)
    np.testing.assert_array_equal(out[0], 14)
    np.testing.assert_array_equal(out[1:], np.array([1, 0, 1, 0])[:, None] * np.ones(40, int))


@cuda.jit(device=True)
def load_tile(src, base):
    tile = cuda.shared.array(32, float32)
    t = cuda.threadIdx.x
    tile[t] = src[base + t]
    cuda.syncthreads()
    return tile[31 - t]


@cuda.jit
def device_function_kernel(src, out):
    i = cuda.grid(1)
    out[i] = load_tile(src, cuda.blockIdx.x * 32)


def test_shared_array_and_barrier_in_a_device_function(backend):
    src = np.arange(128, dtype=np.float32)
    out = np.zeros(128, np.float32)
    device_function_kernel[4, 32](src, out)
    np.testing.assert_array_equal(out, src.reshape(4, 32)[:, ::-1].ravel())


@cuda.jit
def local_kernel(x, out):
    i = cuda.grid(1)
    n = 5
    buf = cuda.local.array(n, float64)    # size from a local assigned once
    m = cuda.local.array((2, 3), int64)
    for k in range(n):
        buf[k] = x[i] * k
    for r in range(2):
        for c in range(3):
            m[r, c] = r * 3 + c + i
    acc = 0.0
    for k in range(n):
        acc += buf[n - 1 - k] * (k + 1)
    out[i] = acc + m[1, 2]


def test_local_arrays_are_private_to_each_thread(backend):
    x = np.arange(64, dtype=np.float64)
    out = np.zeros(64)
    local_kernel[2, 32](x, out)
    k = np.arange(5)
    expected = np.array([np.sum(v * (4 - k) * (k + 1)) for v in x]) + 5 + np.arange(64)
    np.testing.assert_allclose(out, expected)


@cuda.jit
def const_kernel(out):
    c = cuda.const.array_like(TABLE)
    t2 = cuda.const.array_like(TABLE2)
    i = cuda.threadIdx.x
    out[i] = c[i] + t2[i % 2, i % 3] + TABLE[9 - i] + c.size


def test_constant_arrays(backend):
    out = np.zeros(10)
    const_kernel[1, 10](out)
    i = np.arange(10)
    np.testing.assert_allclose(out, TABLE + TABLE2[i % 2, i % 3] + TABLE[::-1] + 10)


@cuda.jit
def fence_kernel(out):
    t = cuda.threadIdx.x
    out[t] = t
    cuda.threadfence_block()
    cuda.threadfence()
    cuda.threadfence_system()
    out[t] += 1


def test_fences(backend):
    out = np.zeros(8, np.int64)
    fence_kernel[1, 8](out)
    np.testing.assert_array_equal(out, np.arange(1, 9))


def test_many_blocks_with_barriers_in_parallel(backend):
    # Blocks run on several host threads, each block's threads as fibers.
    out = np.zeros(1000 * N, np.float32)
    rotate_kernel[1000, N](out)
    b, t = np.divmod(np.arange(1000 * N), N)
    np.testing.assert_array_equal(out, ((t + 1) % N + 1000 * b).astype(np.float32))


# ---- the CPU backend's diagnostics ----

@cuda.jit
def early_return_kernel(out):
    if cuda.threadIdx.x == 5:
        return
    cuda.syncthreads()
    out[cuda.threadIdx.x] = 1


def test_barrier_not_reached_by_every_thread_is_an_error(cpu):
    out = np.zeros(32, np.int32)
    with pytest.raises(RuntimeError, match=r"cuda.syncthreads\(\) was not reached by every "
                                           r"thread of block \(0, 0, 0\).*thread \(5, 0, 0\)"):
        early_return_kernel[1, 32](out)
    # The runtime is usable afterwards.
    rotate_kernel[2, N](np.zeros(2 * N, np.float32))


@cuda.jit
def divergent_barrier_kernel(out):
    t = cuda.threadIdx.x
    if t < 16:
        cuda.syncthreads()
    out[t] = 1


def test_barrier_skipped_by_some_threads_is_an_error(cpu):
    with pytest.raises(RuntimeError, match="was not reached by every thread"):
        divergent_barrier_kernel[1, 32](np.zeros(32, np.int32))


@cuda.jit
def mixed_barriers_kernel(out):
    t = cuda.threadIdx.x
    if t < 16:
        out[t] = cuda.syncthreads_count(True)
    else:
        cuda.syncthreads()


def test_different_barriers_are_an_error(cpu):
    with pytest.raises(RuntimeError, match="met at different barriers"):
        mixed_barriers_kernel[1, 32](np.zeros(32, np.int32))


def test_kernels_without_barriers_still_see_shared_memory(backend):
    @cuda.jit
    def k(out):
        s = cuda.shared.array(4, int32)
        s[cuda.threadIdx.x] = cuda.threadIdx.x * 7
        out[cuda.threadIdx.x] = s[cuda.threadIdx.x]
    out = np.zeros(4, np.int32)
    k[1, 4](out)
    np.testing.assert_array_equal(out, np.arange(4) * 7)


# ---- compile-time errors ----

def test_non_constant_shape_is_an_error(cpu):
    @cuda.jit
    def k(out, n):
        s = cuda.shared.array(n, float32)
        out[0] = s[0]
    with pytest.raises(errors.TypingError, match=r"cuda.shared.array: the shape must be a "
                                                 r"compile-time constant") as e:
        k[1, 1](np.zeros(1, np.float32), 4)
    assert "test_shared.py" in str(e.value) and "cuda.shared.array(n, float32)" in str(e.value)


def test_non_constant_local_shape_is_an_error(cpu):
    @cuda.jit
    def k(out):
        s = cuda.local.array(out.size, float32)
        out[0] = s[0]
    with pytest.raises(errors.TypingError, match="cuda.local.array: the shape must be a "
                                                 "compile-time constant"):
        k[1, 1](np.zeros(1, np.float32))


def test_unsupported_dtype_is_an_error(cpu):
    @cuda.jit
    def k(out):
        s = cuda.shared.array(4, "float128")
        out[0] = s[0]
    with pytest.raises(errors.TypingError, match=r"NumPy dtype 'float128' is not supported \("
                                                 r"kernels support bool, int8"):
        k[1, 1](np.zeros(1, np.float32))


def test_dtypes_as_numpy_reads_them(backend):
    # Strings with a byte order, NumPy's own names ("float" is float64, "byte" int8) and
    # np.dtype(...) of a string or a type all name the element type.
    @cuda.jit
    def k(x, out):
        a = cuda.local.array(2, dtype=np.dtype("<i4"))
        b = cuda.shared.array(2, dtype="float")
        c = cuda.local.array(2, np.dtype(np.int8))
        d = cuda.local.array(2, "byte")
        a[0] = x[0]
        b[0] = 0.25
        c[0] = -3
        d[0] = 127
        out[0] = a[0] + b[0] + c[0] + d[0]

    out = np.zeros(1, np.float64)
    k[1, 1](np.array([7], np.int32), out)
    assert out[0] == 7 + 0.25 - 3 + 127
    typemap = next(iter(k.overloads.values()))._type_annotation.typemap
    assert [typemap[n].dtype for n in "abcd"] == [int32, float64, types.int8, types.int8]


def test_dtype_errors_name_the_dtype(cpu):
    def compile_with(dtype_expr):
        ns = {"cuda": cuda, "np": np}
        exec(f"def f(x):\n    l = cuda.local.array(10, dtype={dtype_expr})\n    x[0] = l[0]\n", ns)
        cuda.jit(void(int32[::1]))(ns["f"])

    # A string NumPy does not know: Numba's words (an error at the call, as Numba's typer).
    with pytest.raises(errors.TypingError, match=r"Invalid NumPy dtype specified: 'int33'"):
        compile_with("'int33'")
    with pytest.raises(errors.TypingError, match=r"Invalid NumPy dtype specified: 'int33'"):
        compile_with("np.dtype('int33')")
    # Dtypes NumPy has and kernels do not say so.
    for expr, shown in [("'U5'", "'U5'"), ("np.dtype('O')", r"dtype\('O'\)"), ("'>f4'", "'>f4'")]:
        with pytest.raises(errors.TypingError, match=rf"NumPy (dtype )?{shown} is not supported"):
            compile_with(expr)


def test_shape_errors_in_numbas_words(cpu):
    # Numba's "No implementation of function" message with the arguments spelled as its typer
    # spells them, the variable left untyped, then the reason.
    def compile_with(shape_expr, sig):
        ns = {"cuda": cuda, "float32": float32}
        exec(f"def f(x):\n    sa = cuda.shared.array(shape={shape_expr}, dtype=float32)\n"
             f"    x[0] = sa[0]\n", ns)
        with pytest.raises(errors.TypingError) as e:
            cuda.jit(sig)(ns["f"])
        return str(e.value)

    head = "No implementation of function Function(<function shared.array>) found for signature:"
    for shape, sig, spelled in [
            ("[5, 6]", void(float32[:]), "shape=list(int64)<iv=[5, 6]>"),
            ("x[0]", void(float32[:]), "shape=float32"),
            ("x[0]", void(int32[:]), "shape=int32"),
            ("(1, x[0])", void(int32[:]), "shape=Tuple(Literal[int](1), int32)"),
            ("(1, x)", void(float32[:]), "shape=Tuple(Literal[int](1), array(float32, 1d, A))")]:
        msg = compile_with(shape, sig)
        assert head in msg and f"\n \n >>> array({spelled}, dtype=class(float32))\n" in msg, msg
        assert "Cannot infer the type of variable 'sa': cuda.shared.array: the shape must be a " \
               "compile-time constant" in msg


def test_bad_shapes_are_errors(cpu):
    @cuda.jit
    def negative(out):
        s = cuda.shared.array(-3, float32)
        out[0] = s[0]

    @cuda.jit
    def dynamic_2d(out):
        s = cuda.shared.array((0, 4), float32)
        out[0] = s[0, 0]

    @cuda.jit
    def local_zero(out):
        s = cuda.local.array(0, float32)
        out[0] = s[0]
    for k, msg in [(negative, "negative dimension"), (dynamic_2d, "one-dimensional"),
                   (local_zero, "positive size")]:
        with pytest.raises(errors.TypingError, match=msg):
            k[1, 1](np.zeros(1, np.float32))


def test_too_much_static_shared_memory_is_an_error(cpu):
    @cuda.jit
    def k(out):
        s = cuda.shared.array(20000, float32)   # 80 KB
        out[0] = s[0]
    with pytest.raises(errors.UnsupportedError, match="80000 bytes of static shared memory"):
        k[1, 1](np.zeros(1, np.float32))


def test_const_array_like_needs_a_global_array(cpu):
    @cuda.jit
    def k(out):
        c = cuda.const.array_like(out)
        out[0] = c[0]
    with pytest.raises(errors.TypingError, match="cuda.const.array_like: the array must be a "
                                                 "compile-time constant"):
        k[1, 1](np.zeros(1, np.float32))


def test_constant_arrays_are_read_only(cpu):
    @cuda.jit
    def k(out):
        c = cuda.const.array_like(TABLE)
        c[0] = 1.0
    with pytest.raises(errors.TypingError, match="read-only"):
        k[1, 1](np.zeros(1))


CTABLE = (np.arange(5 * 5 * 5, dtype=np.complex64).reshape(5, 5, 5) + 1j) / 2j
CTABLE128 = CTABLE.astype(np.complex128).ravel()


def test_complex_elements_of_constant_arrays_load_as_one_vector():
    # An element of a constant array lies at a multiple of its size from the array's 16-byte
    # aligned start: a complex64 is one ld.const.v2.f32 (complex128: ld.const.v2.f64), as
    # numba-cuda's NVVM emits it, not two scalar loads.
    def k3(a):
        c = cuda.const.array_like(CTABLE)
        i, j, k = cuda.threadIdx.x, cuda.threadIdx.y, cuda.threadIdx.z
        a[i, j, k] = c[i, j, k]

    def k1(a):
        c = cuda.const.array_like(CTABLE128)
        a[cuda.threadIdx.x] = c[cuda.threadIdx.x]

    ptx, _ = cuda.compile_ptx(k3, (types.complex64[:, :, :],))
    assert re.search(r"ld\.const\.v2\.f32", ptx) and not re.search(r"ld\.const\.f32", ptx)
    ptx, _ = cuda.compile_ptx(k1, (types.complex128[::1],))
    assert re.search(r"ld\.const\.v2\.f64", ptx)


def test_ptx_of_shared_memory_and_barriers():
    def k(out, n):
        s = cuda.shared.array(32, float32)
        d = cuda.shared.array(0, float32)
        t = cuda.threadIdx.x
        s[t] = out[t]
        d[t] = out[t]
        cuda.syncthreads()
        out[t] = s[31 - t] + d[31 - t] + cuda.syncthreads_count(t > n)
        out[t] += cuda.syncthreads_and(t > n) + cuda.syncthreads_or(t > n)
        cuda.threadfence()
        cuda.threadfence_block()
        cuda.threadfence_system()
    ptx, _ = cuda.compile_ptx(k, (float32[::1], int32))
    text = re.sub(r"\s+", " ", ptx)
    for needle in [".shared .align 16 .b8", ".extern .shared .align 16 .b8", "st.shared.f32",
                   "ld.shared.f32", "bar.sync 0;", "bar.red.popc.u32", "bar.red.and.pred",
                   "bar.red.or.pred", "membar.gl", "membar.cta", "membar.sys"]:
        assert needle in text, needle


def test_dtype_of_an_argument_array(backend):
    """`a.dtype` in a kernel is the compile-time NumPy type, usable as a dtype (numba-cuda's
    cuda.shared.array(n, dtype=ary.dtype)): one specialization per dtype."""

    @cuda.jit
    def k(ary):
        sm = cuda.shared.array(8, dtype=ary.dtype)
        lm = cuda.local.array(8, ary.dtype)
        for j in range(8):
            sm[j] = j
            lm[j] = sm[j] * 2
        for j in range(8):
            ary[j] = lm[j]

    for dt in (np.float32, np.int16, np.float64):
        a = np.zeros(8, dt)
        k[1, 1](a)
        np.testing.assert_array_equal(a, np.arange(8) * 2)
    assert len(k.signatures) == 3
