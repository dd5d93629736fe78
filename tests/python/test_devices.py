"""Devices and contexts: cuda.gpus, select_device, get_current_device, current_context, close.

On the CPU backend there is one device (the host); on a GPU machine every visible GPU. Tests
marked multigpu need two GPUs and are skipped (with the reason) on fewer; the fake-driver tests
cover device selection, arrays' devices, the cross-device check and peer or staged copies
without a GPU, from Python (tests/python/test_multi_device_fake.py) and in C++
(tests/cpp/runtime/MultiDeviceTest.cpp; per-device loading:
tests/cpp/compiler/SpecializationDevicesTest.cpp).
"""
import threading

import numpy as np
import pytest

from ptxjit import cuda, vectorize
from ptxjit import errors as cuda_errors


@cuda.jit
def add_scalar(arr, val):
    i = cuda.grid(1)
    if i < arr.size:
        arr[i] += val


@cuda.jit("void(float64[:], float64[:])")
def copy_plus_1(inp, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = inp[i] + 1


@vectorize(["float32(float32)"], target="cuda")
def twice(x):
    return x * 2


# ---- the CPU backend: one device ---------------------------------------------------------------

def test_one_host_device_on_the_cpu_backend(cpu):
    assert len(cuda.gpus) == 1
    (only,) = list(cuda.gpus)
    assert only.id == 0 and cuda.gpus[-1].id == 0
    assert [g.id for g in cuda.gpus[0:]] == [0]
    dev = cuda.get_current_device()
    assert dev.id == 0 and dev == cuda.gpus[0] and "CPU" in dev.name
    assert isinstance(dev.compute_capability, tuple) and len(dev.compute_capability) == 2
    assert dev.WARP_SIZE == 32 and dev.MAX_THREADS_PER_BLOCK == 1024
    with pytest.raises(AttributeError, match="NOT_AN_ATTRIBUTE"):
        dev.NOT_AN_ATTRIBUTE
    assert [d.id for d in cuda.list_devices()] == [0]


def test_bad_device_ids_are_refused_clearly(cpu):
    with pytest.raises(IndexError, match="no device 1: the CPU backend has one device"):
        cuda.gpus[1]
    with pytest.raises(IndexError, match="no device 3"):
        cuda.select_device(3)
    with pytest.raises(TypeError, match="integer id, not str"):
        cuda.select_device("0")
    assert cuda.get_current_device().id == 0


def test_kernels_and_ufuncs_run_under_a_device_context(cpu):
    a = np.arange(8, dtype=np.float64)
    b = np.zeros_like(a)
    with cuda.gpus[0] as gpu:
        assert gpu.id == 0 and cuda.get_current_device().id == 0
        copy_plus_1[1, 8](a, b)
        with cuda.gpus[0]:  # nests
            d = cuda.to_device(np.ones(4, dtype=np.float32))
            np.testing.assert_equal(twice(d).copy_to_host(), 2 * np.ones(4, np.float32))
    np.testing.assert_equal(b, a + 1)
    assert cuda.select_device(0).id == 0


def test_current_context(cpu):
    ctx = cuda.current_context()
    assert ctx.device.id == 0 and ctx == cuda.current_context(0)
    free, total = ctx.get_memory_info()
    assert 0 < free <= total
    assert ctx.get_memory_info().total == total
    assert ctx.can_access_peer(0) is False
    with pytest.raises(RuntimeError, match="peer access needs two CUDA devices"):
        ctx.enable_peer_access(0)
    ctx.synchronize()
    ctx.reset()


def test_threads_use_the_current_device_as_a_context_manager(cpu):
    # numba-cuda's test_multigpu.test_multithreaded on every backend.
    d = cuda.to_device(np.arange(10))
    results = [None] * 8

    def work(gpu, k):
        try:
            with gpu:
                results[k] = bool(np.all(d.copy_to_host() == np.arange(10)))
        except Exception as e:  # reported below
            results[k] = e

    threads = [threading.Thread(target=work, args=(cuda.gpus.current, k)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [True] * 8


def test_close_and_detect(cpu, capsys):
    cuda.close()
    assert cuda.get_current_device().id == 0
    found = cuda.detect()
    out = capsys.readouterr().out
    assert found == cuda.is_available()
    assert ("Found" in out) if found else ("no CUDA device" in out)


# ---- one GPU -----------------------------------------------------------------------------------

@pytest.mark.gpu
def test_gpus_list_the_visible_devices(cuda_target):
    from ptxjit import _core

    n = _core._device_count()
    assert len(cuda.gpus) == n >= 1
    assert [g.id for g in cuda.gpus] == list(range(n))
    dev = cuda.get_current_device()
    assert dev.id == 0 and dev.MULTIPROCESSOR_COUNT > 0 and dev.compute_capability >= (5, 0)
    free, total = cuda.current_context().get_memory_info()
    assert 0 < free <= total
    with pytest.raises(IndexError, match=f"no device {n}: {n} CUDA device"):
        cuda.gpus[n]


@pytest.mark.gpu
def test_a_gpu_context_runs_kernels_and_ufuncs(cuda_target):
    host = np.arange(10, dtype=np.float32)
    with cuda.gpus[0]:
        d = cuda.to_device(host)
        add_scalar[1, 10](d, 1)
        np.testing.assert_equal(twice(d).copy_to_host(), (host + 1) * 2)
    cuda.close()
    np.testing.assert_equal(d.copy_to_host(), host + 1)  # memory stays valid after close()


# ---- two or more GPUs --------------------------------------------------------------------------

@pytest.mark.multigpu
def test_multigpu_context(cuda_target):
    # numba-cuda's test_multigpu.test_multigpu_context.
    n = 32
    a0, b0 = np.arange(n, dtype=np.float64), np.zeros(n)
    a1, b1 = np.arange(n, dtype=np.float64), np.zeros(n)
    with cuda.gpus[0]:
        copy_plus_1[1, n](a0, b0)
        with cuda.gpus[1]:
            assert cuda.get_current_device().id == 1
            copy_plus_1[1, n](a1, b1)
        assert cuda.get_current_device().id == 0
    np.testing.assert_equal(b0, a0 + 1)
    np.testing.assert_equal(b1, a1 + 1)


@pytest.mark.multigpu
def test_arrays_stay_on_their_device(cuda_target):
    host = np.arange(10, dtype=np.float32)
    with cuda.gpus[0]:
        d0 = cuda.to_device(host)
    with cuda.gpus[1]:
        d1 = cuda.to_device(host)
        add_scalar[1, 10](d1, 2)
        np.testing.assert_equal(twice(d1).copy_to_host(), (host + 2) * 2)
        from ptxjit import _core

        if not _core._peer_access_enabled(1, 0):  # refused unless peer access is on
            with pytest.raises(ValueError, match="device array in the memory of device 0, "
                                                 "but this thread's current device is 1"):
                add_scalar[1, 10](d0, 1)
    with cuda.gpus[0]:
        add_scalar[1, 10](d0, 1)
        np.testing.assert_equal(d0.copy_to_host(), host + 1)
    np.testing.assert_equal(d1.copy_to_host(), host + 2)


@pytest.mark.multigpu
def test_peer_access_lets_a_device_use_another_devices_array(cuda_target):
    with cuda.gpus[1]:
        ctx = cuda.current_context()
        if not ctx.can_access_peer(0):
            pytest.skip("peer access between GPUs 0 and 1 is not possible here")
    host = np.arange(10, dtype=np.float32)
    with cuda.gpus[0]:
        d0 = cuda.to_device(host)
    with cuda.gpus[1]:
        cuda.current_context().enable_peer_access(0)
        add_scalar[1, 10](d0, 5)
        cuda.synchronize()
    np.testing.assert_equal(d0.copy_to_host(), host + 5)


@pytest.mark.multigpu
def test_copy_to_device_between_devices(cuda_target):
    # numba-cuda's test_with_context_peer_copy, with or without peer access (staged).
    host = np.arange(1000, dtype=np.float32)
    with cuda.gpus[0]:
        src = cuda.to_device(host)
    with cuda.gpus[1]:
        dst = cuda.to_device(np.zeros_like(host))
    with cuda.gpus[0]:
        dst.copy_to_device(src)
        np.testing.assert_equal(dst.copy_to_host(), host)
    with cuda.gpus[1]:
        back = cuda.device_array_like(host)
        back.copy_to_device(src)
        np.testing.assert_equal(back.copy_to_host(), host)


@pytest.mark.multigpu
def test_one_thread_per_device(cuda_target):
    n = len(cuda.gpus)
    out = [None] * n

    def work(i):
        with cuda.gpus[i]:
            d = cuda.to_device(np.full(64, i, dtype=np.float32))
            add_scalar[1, 64](d, 1.0)
            out[i] = (cuda.get_current_device().id, d.copy_to_host())

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, (dev, arr) in enumerate(out):
        assert dev == i
        np.testing.assert_equal(arr, np.full(64, i + 1, dtype=np.float32))


@pytest.mark.multigpu
def test_a_stream_serves_its_own_device(cuda_target):
    with cuda.gpus[1]:
        s1 = cuda.stream()
    host = np.arange(10, dtype=np.float32)
    d0 = cuda.to_device(host)
    with pytest.raises(ValueError, match="the stream was created on device 1, but this "
                                         "thread's current device is 0"):
        add_scalar[1, 10, s1](d0, 1)
    with pytest.raises(ValueError, match="the stream was created on device 1"):
        twice(d0, stream=s1)
    with cuda.gpus[1]:
        d1 = cuda.to_device(host)
        add_scalar[1, 10, s1](d1, 1)
        s1.synchronize()
        np.testing.assert_equal(d1.copy_to_host(), host + 1)
    np.testing.assert_equal(d0.copy_to_host(), host)


@pytest.mark.multigpu
def test_a_process_whose_first_act_selects_device_1_opens_no_context_on_device_0(
        cuda_target, subprocess_env, run_python):
    # A rank of a torchrun or MPI job on GPU 1 must not hold a context (hundreds of MiB) on GPU 0.
    script = """
        import ctypes
        import numpy as np
        from ptxjit import cuda

        cuda.select_device(1)

        @cuda.jit
        def inc(a):
            a[cuda.grid(1)] += 1

        d = cuda.to_device(np.arange(4.0))
        inc[1, 4](d)
        assert d.copy_to_host().tolist() == [1.0, 2.0, 3.0, 4.0]
        lib = ctypes.CDLL("libcuda.so.1")
        active = []
        for ordinal in range(2):
            dev, flags, on = ctypes.c_int(), ctypes.c_uint(), ctypes.c_int()
            assert lib.cuDeviceGet(ctypes.byref(dev), ordinal) == 0
            assert lib.cuDevicePrimaryCtxGetState(dev, ctypes.byref(flags), ctypes.byref(on)) == 0
            active.append(on.value)
        print("active", active)
    """
    env = dict(subprocess_env, PTXJIT_TARGET="cuda")
    assert run_python(script, env).strip().splitlines()[-1] == "active [0, 1]"


def test_versions_and_supported_driver(cpu, fake_cuda_env, run_python):
    # Without a driver (this machine in CI): not supported, and the driver's version is a
    # CudaSupportError naming why; with one (the fake driver reports CUDA 13.0): both given.
    if not cuda.is_available():
        assert not cuda.is_supported_version()
        with pytest.raises(cuda_errors.CudaSupportError, match="driver"):
            cuda.driver.get_version()
    out = run_python("""
        from ptxjit import cuda
        print(cuda.is_supported_version(), cuda.driver.get_version())
    """, fake_cuda_env)
    assert out.split() == ["True", "(13,", "0)"]
    try:
        version = cuda.runtime.get_version()  # the NVRTC ptxjit would use
    except RuntimeError as e:
        assert "nvrtc" in str(e).lower()
    else:
        assert isinstance(version, tuple) and len(version) == 2 and version >= (11, 0)


def test_defer_cleanup_keeps_memory_until_the_outermost_block_ends(backend):
    from ptxjit import _core

    base = _core._deferred_allocations()
    with cuda.defer_cleanup():
        a = cuda.to_device(np.arange(1000.0))
        del a
        with cuda.defer_cleanup():
            b = cuda.device_array(64)
            del b
        assert _core._deferred_allocations() == base + 2  # the inner block kept b too
        c = cuda.to_device(np.ones(8))
        np.testing.assert_equal(c.copy_to_host(), 1.0)  # allocating still works
    assert _core._deferred_allocations() == 0
    with pytest.raises(ValueError, match="inside"):
        with cuda.defer_cleanup():
            raise ValueError("inside")  # the block's exception passes, the deferral ends
    assert _core._deferred_allocations() == 0


def test_stack_size_setting_reaches_the_driver_or_fails_clearly(fake_cuda_env, run_python):
    # PTXJIT_STACK_SIZE is set in each context as it opens (cuCtxSetLimit); the fake driver
    # keeps it per context and refuses more than 512 KiB.
    script = """
        import ctypes, os
        from ptxjit import cuda
        try:
            cuda.device_array(4)
            lib = ctypes.CDLL(os.environ["PTXJIT_LIBCUDA"])
            v = ctypes.c_size_t(0)
            assert lib.cuCtxGetLimit(ctypes.byref(v), 0) == 0
            print("ok", v.value)
        except Exception as e:
            print(type(e).__name__, str(e).splitlines()[0])
    """
    results = {}
    for value in ("16384", "abc", "-5", "1048576"):
        env = dict(fake_cuda_env, PTXJIT_STACK_SIZE=value)
        results[value] = run_python(script, env).strip().splitlines()[-1]
    assert results["16384"] == "ok 16384"
    assert results["abc"].startswith("ValueError PTXJIT_STACK_SIZE=abc is not a stack size")
    assert results["-5"].startswith("ValueError PTXJIT_STACK_SIZE=-5 is not a stack size")
    assert results["1048576"] == ("CudaDriverError cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 1048576) "
                                  "failed: CUDA_ERROR_INVALID_VALUE (1): invalid argument")
    assert run_python(script, fake_cuda_env).strip().splitlines()[-1] == "ok 1024"
