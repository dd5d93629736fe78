"""Cooperative groups (numba-cuda's cuda.cg): grid synchronization and cooperative launches.

`cuda.cg.this_grid()` gives the grid group; its `sync()` waits for every thread of the grid.
Such kernels are launched cooperatively (every block resident at once): on CUDA through
cuLaunchCooperativeKernel, on the CPU backend with every block on an OS thread of its own.
"""
import textwrap

import numpy as np
import pytest

from ptxjit import cuda, errors, float32, int32, vectorize


@cuda.jit
def this_grid(a):
    cuda.cg.this_grid()
    a[0] = 1.0


@cuda.jit
def sync_group(a):
    g = cuda.cg.this_grid()
    g.sync()
    a[0] = 1.0


@cuda.jit
def no_sync(a):
    a[0] = cuda.grid(1)


def sequential_rows(m):
    # Row by row: each thread reads the element of the previous row that the "opposite" thread
    # (often in another block) wrote, which is only there after the grid synchronized.
    col = cuda.grid(1)
    g = cuda.cg.this_grid()
    for row in range(1, m.shape[0]):
        m[row, col] = m[row - 1, m.shape[1] - col - 1] + 1
        g.sync()


@cuda.jit(device=True)
def grid_barrier():
    cuda.cg.this_grid().sync()


@cuda.jit
def reversed_copy(a, out):
    i = cuda.grid(1)
    a[i] = i * 3
    grid_barrier()  # the synchronization in a device function
    out[i] = a[a.size - 1 - i]


def test_this_grid_makes_the_kernel_cooperative(backend):
    a = np.full(1, np.nan)
    this_grid[1, 1](a)
    assert a[0] == 1.0
    assert [o.cooperative for o in this_grid.overloads.values()] == [True]
    a[0] = np.nan
    sync_group[1, 1](a)
    assert a[0] == 1.0
    assert [o.cooperative for o in sync_group.overloads.values()] == [True]
    no_sync[1, 1](a)
    assert [o.cooperative for o in no_sync.overloads.values()] == [False]


def test_grid_sync_orders_the_rows_of_every_block(backend):
    shape = (48, 256)
    m = np.zeros(shape, dtype=np.int32)
    kernel = cuda.jit((int32[:, ::1],))(sequential_rows)
    assert kernel.overloads[(int32[:, ::1],)].cooperative
    kernel[shape[1] // 32, 32](m)
    np.testing.assert_equal(m, np.tile(np.arange(shape[0]), (shape[1], 1)).T)


def test_grid_sync_in_a_device_function(backend):
    a = np.zeros(96, dtype=np.int64)
    out = np.zeros_like(a)
    reversed_copy[6, 16](a, out)
    np.testing.assert_equal(out, np.arange(96)[::-1] * 3)
    assert [o.cooperative for o in reversed_copy.overloads.values()] == [True]


def test_max_cooperative_grid_blocks(backend):
    sig = (int32[:, ::1],)
    overload = cuda.jit(sig)(sequential_rows).overloads[sig]
    blocks = overload.max_cooperative_grid_blocks(256)
    assert blocks >= 1
    assert overload.max_cooperative_grid_blocks((16, 16)) == blocks
    assert overload.max_cooperative_grid_blocks((16, 4, 4)) == blocks
    if backend == "cpu":  # an OS thread per block, a fiber per thread: 256 blocks, 8192 threads
        assert (blocks, overload.max_cooperative_grid_blocks(32)) == (32, 256)
        assert overload.max_cooperative_grid_blocks(1024) == 8
    with pytest.raises(ValueError, match="threads"):
        overload.max_cooperative_grid_blocks(0)
    with pytest.raises(ValueError, match="dimensions"):
        overload.max_cooperative_grid_blocks((1, 2, 3, 4))


def test_a_grid_too_large_for_a_cooperative_launch_is_refused(backend):
    sig = (int32[:, ::1],)
    kernel = cuda.jit(sig)(sequential_rows)
    most = kernel.overloads[sig].max_cooperative_grid_blocks(32)
    m = np.zeros((2, (most + 1) * 32), dtype=np.int32)
    with pytest.raises(Exception, match="CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"):
        kernel[most + 1, 32](m)
    kernel[most, 32](m[:, : most * 32].copy())  # the largest grid runs


def test_blocks_and_threads_that_miss_the_grid_sync_are_reported(cpu):
    @cuda.jit
    def block_returns(a):
        if cuda.blockIdx.x == 1:
            return
        cuda.cg.this_grid().sync()
        a[0] = 1

    @cuda.jit
    def thread_returns(a):
        if cuda.threadIdx.x == 3:
            return
        cuda.cg.this_grid().sync()

    a = np.zeros(1, dtype=np.int32)
    # On a GPU both hang; the CPU backend names what happened.
    with pytest.raises(RuntimeError, match=r"block \(1, 0, 0\) ended without reaching it \(1 of 4 "
                                           r"blocks did\) while 3 wait"):
        block_returns[4, 8](a)
    with pytest.raises(RuntimeError, match=r"grid.sync\(\) was not reached by every thread of "
                                           r"block \(\d, 0, 0\): thread \(3, 0, 0\) returned"):
        thread_returns[4, 8](a)
    sync_group[4, 8](a)  # later launches are unaffected


def test_grid_group_misuse_is_a_located_error(cpu):
    @cuda.jit
    def sync_with_argument(a):
        cuda.cg.this_grid().sync(1)

    @cuda.jit
    def unknown_method(a):
        cuda.cg.this_grid().wait()

    a = np.zeros(1)
    with pytest.raises(errors.TypingError, match=r"cuda.cg.GridGroup.sync cannot be called with"):
        sync_with_argument[1, 1](a)
    with pytest.raises(errors.UnsupportedError, match=r"attribute 'wait' of cuda.cg.GridGroup"):
        unknown_method[1, 1](a)
    with pytest.raises(errors.UnsupportedError, match="grid synchronization in a ufunc body"):
        @vectorize(["float64(float64)"], target="cpu")
        def in_a_ufunc(x):
            cuda.cg.this_grid().sync()
            return x

        in_a_ufunc(np.ones(3))
    with pytest.raises(RuntimeError, match="only be used inside a kernel"):
        cuda.cg.this_grid()


def test_grid_sync_ptx():
    # What CUDA's grid_group::sync() does: the driver's grid workspace (%envreg1:%envreg2), one
    # arrival per block, release/acquire at GPU scope (sm_70+) or fences before.
    ptx, _ = cuda.compile_ptx(reversed_copy.py_func, "void(int64[::1], int64[::1])", cc=(9, 0))
    for text in ("%envreg1", "%envreg2", "atom.add.release.gpu.u32", "ld.acquire.gpu.u32"):
        assert text in ptx
    assert ptx.count("bar.sync") == 2
    old, _ = cuda.compile_ptx(reversed_copy.py_func, "void(int64[::1], int64[::1])", cc=(6, 0))
    assert "membar.gl" in old and "ld.volatile.u32" in old and ".release" not in old


def test_declared_cooperative_device_functions():
    times2 = cuda.declare_device("times2", "int32(int32)", use_cooperative=True)
    assert times2.use_cooperative
    assert times2.sig.args == (int32,) and times2.sig.return_type == int32
    plain = cuda.declare_device("f1", int32(float32[:]))
    assert not plain.use_cooperative
    assert plain.sig.args == (float32[:],)
    arrow = cuda.declare_device("f2", "(int32, int32) -> int32")
    assert arrow.sig.args == (int32, int32) and arrow.sig.return_type == int32


@pytest.mark.gpu
def test_a_kernel_calling_cooperative_foreign_code_is_launched_cooperatively(cuda_target):
    source = cuda.CUSource('''
        extern "C" __device__ int block_barrier(int *ret) {
            __syncthreads();
            *ret = 0;
            return 0;
        }''')
    barrier = cuda.declare_device("block_barrier", "int32()", link=[source],
                                  use_cooperative=True)

    @cuda.jit("void(int32[::1])")
    def kernel(a):
        barrier()
        a[cuda.grid(1)] = 1

    overload = kernel.overloads[(int32[::1],)]
    assert overload.cooperative
    blocks = min(overload.max_cooperative_grid_blocks(32), 64)
    a = np.zeros(blocks * 32, dtype=np.int32)
    kernel[blocks, 32](a)
    assert a.sum() == a.size


CACHED = textwrap.dedent('''
    import json
    import numpy as np
    from ptxjit import cuda

    @cuda.jit(cache=True)
    def cached(a, out):
        i = cuda.grid(1)
        a[i] = i
        cuda.cg.this_grid().sync()
        out[i] = a[a.size - 1 - i]

    a = np.zeros(64, dtype=np.int64)
    out = np.zeros_like(a)
    cached[4, 16](a, out)
    print(json.dumps({"out": out.tolist(),
                      "cooperative": [o.cooperative for o in cached.overloads.values()],
                      "hits": sum(cached.stats.cache_hits.values())}))
''')


def test_cooperative_kernels_from_the_disk_cache(cached_runs):
    results = cached_runs(CACHED)
    assert [r["hits"] for r in results] == [0, 1]
    for r in results:
        assert r["out"] == list(range(63, -1, -1))
        assert r["cooperative"] == [True]
