"""Several devices in one process, from Python, on the fake CUDA driver (tests/cpp/fakecuda)
exposing two: what tests/python/test_devices.py's `multigpu` tests check on real GPUs, run
here without any. Each scenario runs in a child interpreter (a process loads one driver) that
sets the fake's device count through ctypes before ptxjit opens the driver: both dlopen the
same file, so they share one copy of the fake's state.

The fake driver loads no real PTX, so kernels do not run here: the cross-device check is the
one a launch makes while reading its arguments, before compiling anything.
"""
import pytest

PRELUDE = """
import ctypes, os, threading
import numpy as np
fake = ctypes.CDLL(os.environ["PTXJIT_LIBCUDA"])
fake.fakeCudaSetDeviceCount(2)
from ptxjit import cuda
from ptxjit.errors import CudaDriverError
"""


# The kernel and the ufunc the scenarios launch (a scenario names them where it wants them defined:
# the ufunc, with its signature, compiles where it is defined).
KERNEL = """
@cuda.jit
def add_one(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] += 1
"""
KERNELS = KERNEL + """
@cuda.vectorize(["float32(float32)"])
def twice(x):
    return 2 * x
"""


@pytest.fixture
def run_two(fake_cuda_env, run_python):
    """Runs a scenario (after PRELUDE; a line `{KERNEL}` or `{KERNELS}` in it stands for KERNEL
    or KERNELS) on the fake driver with two devices; asserts that it printed "ok"."""
    def run(body):
        import textwrap

        body = textwrap.dedent(body).replace("{KERNELS}", KERNELS).replace("{KERNEL}", KERNEL)
        out = run_python(PRELUDE + body + "\nprint('ok')\n", fake_cuda_env)
        assert out.split()[-1] == "ok", out

    return run


def test_two_devices_are_listed_and_selected_per_thread(run_two):
    run_two("""
        assert len(cuda.gpus) == 2
        assert [d.id for d in cuda.gpus] == [0, 1] and [d.id for d in cuda.list_devices()] == [0, 1]
        assert cuda.gpus[1].name == "Fake GPU 1" and cuda.gpus[-1].id == 1
        assert cuda.get_current_device().id == 0
        try:
            cuda.select_device(2)
        except IndexError as e:
            assert "no device 2: 2 CUDA devices are visible" in str(e), e
        else:
            raise AssertionError("device 2 selected")

        # select_device is the calling thread's: another thread stays on device 0.
        assert cuda.select_device(1).id == 1
        assert cuda.get_current_device().id == 1 and cuda.gpus.current.id == 1
        seen = []
        t = threading.Thread(target=lambda: seen.append(cuda.get_current_device().id))
        t.start(); t.join()
        assert seen == [0]
        cuda.select_device(0)

        # `with cuda.gpus[1]:` for a block (nested blocks restore their device), while a
        # thread inside its own block on device 0 sees 0.
        entered, release = threading.Event(), threading.Event()
        other = []
        def worker():
            with cuda.gpus[0]:
                entered.set()
                release.wait(30)
                other.append(cuda.get_current_device().id)
        with cuda.gpus[1]:
            assert cuda.get_current_device().id == 1
            t = threading.Thread(target=worker)
            t.start()
            entered.wait(30)
            with cuda.gpus[0]:
                assert cuda.get_current_device().id == 0
            assert cuda.get_current_device().id == 1
            release.set(); t.join()
        assert other == [0]
        assert cuda.get_current_device().id == 0

        # current_context(devnum) selects the device and gives its context.
        ctx = cuda.current_context(1)
        assert ctx.device.id == 1 and cuda.get_current_device().id == 1
        assert ctx == cuda.current_context() and ctx != cuda.current_context(0)
        assert cuda.get_current_device().id == 0
    """)


def test_arrays_remember_their_device_and_free_there(run_two):
    run_two("""
        host = np.arange(16, dtype=np.float32)
        with cuda.gpus[1]:
            d1 = cuda.to_device(host)
            e1 = cuda.device_array(8)
        d0 = cuda.to_device(host)
        assert d1.__dlpack_device__() == (2, 1) and e1.__dlpack_device__() == (2, 1)
        assert d0.__dlpack_device__() == (2, 0)
        assert d1[2:].__dlpack_device__() == (2, 1)  # views too
        # Read back from device 0: the copy runs in device 1's context.
        np.testing.assert_array_equal(d1.copy_to_host(), host)
        # Freed in device 1's context although device 0 is current.
        del d1, e1
        assert fake.fakeCudaForeignFrees() == 0
    """)


def test_an_array_of_another_device_is_refused_at_launch(run_two):
    run_two("""
        {KERNEL}

        with cuda.gpus[1]:
            d1 = cuda.to_device(np.arange(4, dtype=np.float32))
        try:
            add_one[1, 4](d1)
        except ValueError as e:
            msg = str(e)
        else:
            raise AssertionError("a device-1 array was accepted by a launch on device 0")
        assert ("argument 1 is a device array in the memory of device 1, but this thread's "
                "current device is 0") in msg, msg
        assert "with cuda.gpus[1]:" in msg and "enable_peer_access(1)" in msg, msg
        assert fake.fakeCudaLaunches(0) == 0 and fake.fakeCudaLaunches(1) == 0

        # Without peer access between the two devices, enabling it is refused...
        assert not cuda.current_context().can_access_peer(1)
        try:
            cuda.current_context().enable_peer_access(1)
        except CudaDriverError as e:
            assert "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED" in str(e), e
        else:
            raise AssertionError("peer access enabled between devices that lack it")
        # ...with it, the argument passes the check: the launch goes on to load the kernel,
        # which the fake driver refuses (it loads no real PTX).
        fake.fakeCudaSetPeerAccess(1)
        assert cuda.current_context().can_access_peer(1)
        cuda.current_context().enable_peer_access(1)
        assert fake.fakeCudaPeerEnables() == 1
        try:
            add_one[1, 4](d1)
        except ValueError as e:
            raise AssertionError(f"refused despite peer access: {e}")
        except CudaDriverError as e:
            assert "fake: module rejected" in str(e), e
        else:
            raise AssertionError("the fake driver loaded a kernel")
    """)


def test_an_array_of_another_device_is_refused_after_a_relaunch_from_that_device(run_two):
    # A launch on device 0 remembers its arrays; one from device 1 that gets as far as its
    # device-1 array and then stops at a device-0 one must not leave that device-1 array
    # counted as checked when device 0 launches with the same objects again.
    run_two("""
        @cuda.jit
        def add_two(a, b):
            i = cuda.grid(1)
            if i < a.size:
                a[i] += b[i]

        a0, b0 = cuda.to_device(np.zeros(4)), cuda.to_device(np.ones(4))
        for _ in range(2):  # the second launch packs (a0, b0) on the direct path
            try:
                add_two[1, 4](a0, b0)
            except CudaDriverError as e:  # the fake loads no real PTX
                assert "fake: module rejected" in str(e), e
        def refused(args, why):
            try:
                add_two[1, 4](*args)
            except ValueError as e:
                assert why in str(e), e
            else:
                raise AssertionError(f"launched although {why}")

        with cuda.gpus[1]:
            a1 = cuda.to_device(np.zeros(4))
            refused((a1, b0), "argument 2 is a device array in the memory of device 0")
        refused((a1, b0), "argument 1 is a device array in the memory of device 1")
    """)


def test_copy_to_device_between_devices_staged_then_peer(run_two):
    run_two("""
        host = np.arange(1000, dtype=np.float32)
        src = cuda.to_device(host)                      # device 0
        with cuda.gpus[1]:
            dst = cuda.device_array_like(host)
        peer, htod, dtoh = (fake.fakeCudaCopyCalls(k) for k in range(3))

        # No peer access: staged through the host (device 0 -> host -> device 1).
        dst.copy_to_device(src)
        assert fake.fakeCudaCopyCalls(0) == peer
        assert fake.fakeCudaCopyCalls(1) == htod + 1 and fake.fakeCudaCopyCalls(2) == dtoh + 1
        np.testing.assert_array_equal(dst.copy_to_host(), host)
        assert fake.fakeCudaPeerEnables() == 0

        # With peer access possible: one cuMemcpyPeer, after enabling access from the
        # destination's device to the source's (once).
        fake.fakeCudaSetPeerAccess(1)
        src2 = cuda.to_device(host * 2)
        htod, dtoh = fake.fakeCudaCopyCalls(1), fake.fakeCudaCopyCalls(2)
        dst.copy_to_device(src2)
        assert fake.fakeCudaCopyCalls(0) == peer + 1
        assert fake.fakeCudaCopyCalls(1) == htod and fake.fakeCudaCopyCalls(2) == dtoh
        assert fake.fakeCudaPeerEnables() == 1
        np.testing.assert_array_equal(dst.copy_to_host(), host * 2)
        # The other way, under device 1: device 1's array into device 0's.
        with cuda.gpus[1]:
            src.copy_to_device(dst)
        assert fake.fakeCudaCopyCalls(0) == peer + 2
        np.testing.assert_array_equal(src.copy_to_host(), host * 2)
        assert cuda.get_current_device().id == 0
    """)


def test_cuda_array_interface_imports_get_their_memorys_device(run_two):
    # The interface does not name a device: ptxjit asks the driver (cuPointerGetAttribute), so
    # device 1's memory imported while device 0 is current is device 1's (runtime/Memory.h,
    # deviceOfPointer). Memory that names no one device is the current device's.
    run_two("""
        class Foreign:  # a producer that is not a ptxjit array (CuPy, PyTorch, ...)
            def __init__(self, iface, keep):
                self.__cuda_array_interface__ = iface
                self.keep = keep

        {KERNELS}

        host = np.arange(8, dtype=np.float32)
        with cuda.gpus[1]:
            d1 = cuda.to_device(host)
        t1 = Foreign(d1[2:].__cuda_array_interface__, d1)  # a view: inside the allocation
        imported = cuda.as_cuda_array(t1)
        assert cuda.get_current_device().id == 0
        assert imported.__dlpack_device__() == (2, 1)
        np.testing.assert_array_equal(imported.copy_to_host(), host[2:])
        # So the cross-device check sees it, at a launch and in a ufunc.
        for call in (lambda: add_one[1, 8](imported), lambda: twice(t1)):
            try:
                call()
            except ValueError as e:
                assert "in the memory of device 1, but this thread's current device is 0" in str(e)
            else:
                raise AssertionError("device 1's memory used on device 0")
        # On device 1 it passes the check; the launch goes on to load the kernel, which the
        # fake driver refuses.
        with cuda.gpus[1]:
            try:
                add_one[1, 8](imported)
            except CudaDriverError as e:
                assert "fake: module rejected" in str(e), e
            else:
                raise AssertionError("the fake driver loaded a kernel")
        assert cuda.as_cuda_array(
            Foreign(cuda.to_device(host).__cuda_array_interface__, None)
        ).__dlpack_device__() == (2, 0)

        # Memory the driver knows no device for: the current device's.
        plain = np.arange(4.0)  # not CUDA memory at all (the fake's device memory is host memory)
        iface = dict(plain.__array_interface__, version=3, stream=None)
        with cuda.gpus[1]:
            assert cuda.as_cuda_array(Foreign(iface, plain)).__dlpack_device__() == (2, 1)
        assert cuda.as_cuda_array(Foreign(iface, plain)).__dlpack_device__() == (2, 0)
        with cuda.gpus[1]:
            managed = cuda.managed_array(4, dtype=np.float64)   # reachable from every device
            mapped = cuda.mapped_array(4, dtype=np.float64)     # host memory
        for arr in (managed, mapped):
            assert cuda.as_cuda_array(arr).__dlpack_device__() == (2, 0)
        # Mapping host memory for a block (cuda.mapped) asks nothing: it is host memory.
        before = fake.fakeCudaPointerQueries()
        with cuda.gpus[1]:
            with cuda.mapped(np.arange(3.0)) as m:
                assert m.__dlpack_device__() == (2, 1)
        assert fake.fakeCudaPointerQueries() == before
    """)


def test_a_process_whose_first_act_selects_device_1_never_opens_device_0(run_two):
    # Deciding the backend opens nothing; the first compile or allocation opens the calling
    # thread's device (a torchrun or MPI rank on GPU 1 holds no context on GPU 0).
    run_two("""
        assert cuda.is_available() and cuda.current_target() == "cuda"
        assert fake.fakeCudaContextRetains(0) == 0
        cuda.select_device(1)
        d = cuda.to_device(np.arange(4.0))

        @cuda.jit("void(float64[:])")  # compiled now: the compile starts the device's opening
        def set_first(a):
            a[0] = 1.0

        cuda.synchronize()
        assert d.copy_to_host().tolist() == [0.0, 1.0, 2.0, 3.0]
        assert fake.fakeCudaContextRetains(1) == 1 and fake.fakeCudaContextRetains(0) == 0
        with cuda.gpus[0]:  # device 0 opens when it is used
            cuda.to_device(np.zeros(2))
        assert fake.fakeCudaContextRetains(0) == 1
    """)


def test_a_launch_on_a_stream_of_another_device_is_refused(run_two):
    run_two("""
        {KERNELS}

        with cuda.gpus[1]:
            s1 = cuda.stream()
        d0 = cuda.to_device(np.arange(4, dtype=np.float32))
        for call in (lambda: add_one[1, 4, s1](d0), lambda: twice(d0, stream=s1)):
            try:
                call()
            except ValueError as e:
                msg = str(e)
            else:
                raise AssertionError("a stream of device 1 was used by a launch on device 0")
            assert ("the stream was created on device 1, but this thread's current device is 0"
                    in msg), msg
            assert "with cuda.gpus[1]:" in msg and "with cuda.gpus[0]:" in msg, msg
        assert fake.fakeCudaLaunches(0) == 0 and fake.fakeCudaLaunches(1) == 0
        # The default stream belongs to whichever device is current; so does an external one.
        try:
            add_one[1, 4, 0](d0)
        except CudaDriverError as e:  # past the check: the fake driver loads no real PTX
            assert "fake: module rejected" in str(e), e
    """)


def test_kernels_are_compiled_for_the_oldest_visible_device(run_two):
    # PTX for the oldest device's compute capability loads on every newer one (the driver
    # compiles it for the device), so one compiled kernel serves all of them.
    run_two("""
        fake.fakeCudaSetComputeCapability(1, 8, 0)

        @cuda.jit("void(float32[:])")
        def scale(a):
            a[0] *= 2

        ptx = scale.inspect_asm(scale.signatures[0])
        assert ".target sm_80" in ptx, ptx[:400]
        assert cuda.gpus[0].compute_capability == (9, 0)
        assert cuda.gpus[1].compute_capability == (8, 0)
    """)


def test_a_captured_launch_is_rebound_on_its_graphs_device(run_two):
    # A graph replays on the device that captured it: rebind reads its arguments as a launch
    # there would and sets that device's function, whichever device the thread has current.
    run_two("""
        {KERNEL}
        fake.fakeCudaAcceptAnyPtx(1)

        s = cuda.stream()
        a0 = cuda.to_device(np.zeros(4, np.float32))
        b0 = cuda.to_device(np.zeros(4, np.float32))
        with cuda.graph(s) as g:
            add_one[1, 4, s](a0)
        k = g.kernels[0]
        with cuda.gpus[1]:
            d1 = cuda.to_device(np.zeros(4, np.float32))
            add_one[1, 4](d1)  # device 1 has its own module and function now
            k.rebind(b0)  # device 0's array, device 0's function: accepted by the driver
            assert fake.fakeCudaLastKernelNodeIndex() == 0
            assert cuda.get_current_device().id == 1
            try:
                k.rebind(d1)
            except ValueError as e:
                msg = str(e)
            else:
                raise AssertionError("device 1's array bound to a graph of device 0")
            assert "a launch on device 0 (where the graph replays)" in msg, msg
            assert "in the memory of device 1" in msg, msg
            assert cuda.get_current_device().id == 1
        assert cuda.get_current_device().id == 0
        g.replay()
        s.synchronize()
    """)
