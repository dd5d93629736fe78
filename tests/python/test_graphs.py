"""cuda.graph(stream): stream capture into a CUDA graph and its replay (docs/api.md, "CUDA
graphs"). The capture itself is the driver's: its logic is tested against the fake driver in
tests/cpp/runtime/GraphTest.cpp; here the Python object's rules on the CPU backend, and real
captures of kernels and ufuncs on the GPU."""
import numpy as np
import pytest

from ptxjit import cuda, errors


def test_cpu_backend_refuses_graphs(cpu):
    with pytest.raises(errors.CudaSupportError, match="CUDA graphs need the CUDA backend"):
        cuda.graph(cuda.stream())


@cuda.jit
def axpb(x, a, b):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = a * x[i] + b


@cuda.jit
def add_into(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] += x[i]


@pytest.mark.gpu
def test_captured_launches_replay(cuda_target):
    s = cuda.stream()
    host = np.arange(1000, dtype=np.float32)
    x, acc = cuda.to_device(host), cuda.to_device(np.zeros(1000, np.float32))
    axpb[4, 256, s](x, np.float32(1), np.float32(0))  # compiled before the capture
    s.synchronize()
    g = cuda.graph(s)
    assert not g.ready
    with pytest.raises(RuntimeError, match="not been captured yet"):
        g.replay()
    with g:
        axpb[4, 256, s](x, np.float32(2), np.float32(1))
        add_into[4, 256, s](acc, x)
    s.synchronize()
    assert g.ready and g.node_count == 2
    np.testing.assert_array_equal(x.copy_to_host(), host)  # captured, not run
    np.testing.assert_array_equal(acc.copy_to_host(), 0)
    want_x, want_acc = host.copy(), np.zeros(1000, np.float32)
    for _ in range(3):
        g.replay()
        want_x = 2 * want_x + 1
        want_acc += want_x
    s.synchronize()
    np.testing.assert_array_equal(x.copy_to_host(), want_x)
    np.testing.assert_array_equal(acc.copy_to_host(), want_acc)
    g.replay(cuda.default_stream())  # any stream
    cuda.synchronize()
    np.testing.assert_array_equal(x.copy_to_host(), 2 * want_x + 1)
    with pytest.raises(RuntimeError, match="captures once"):
        with g:
            pass


@pytest.mark.gpu
def test_first_call_compiles_inside_the_capture_and_ufuncs_are_captured(cuda_target):
    @cuda.jit
    def scale(x, f):
        i = cuda.grid(1)
        if i < x.size:
            x[i] *= f

    @cuda.vectorize(["float32(float32, float32)"])
    def vadd(a, b):
        return a + b

    s = cuda.stream()
    a = cuda.to_device(np.ones(300, np.float32))
    b = cuda.to_device(np.full(300, 2, np.float32))
    out = cuda.device_array(300, np.float32)
    with cuda.graph(s) as g:
        scale[2, 256, s](a, np.float32(3))
        vadd(a, b, out=out, stream=s)
    g.replay()
    s.synchronize()
    np.testing.assert_array_equal(out.copy_to_host(), 5)
    g.replay()
    s.synchronize()
    np.testing.assert_array_equal(out.copy_to_host(), 11)


@pytest.mark.gpu
def test_errors_inside_the_block_discard_the_capture(cuda_target):
    s = cuda.stream()
    x = cuda.to_device(np.zeros(10, np.float32))
    g = cuda.graph(s)
    with pytest.raises(ZeroDivisionError):
        with g:
            axpb[1, 32, s](x, np.float32(1), np.float32(1))
            1 / 0
    assert not g.ready
    with pytest.raises(RuntimeError, match="capture failed"):
        g.replay()
    axpb[1, 32, s](x, np.float32(1), np.float32(1))  # the stream works as before
    s.synchronize()
    np.testing.assert_array_equal(x.copy_to_host(), 1)


@pytest.mark.gpu
def test_the_default_stream_cannot_be_captured(cuda_target):
    with pytest.raises(TypeError, match="legacy default stream cannot be captured"):
        cuda.graph(cuda.default_stream())
    with pytest.raises(TypeError, match="legacy default stream"):
        cuda.graph(0)


@pytest.mark.gpu
def test_captured_launches_take_new_arguments_for_later_replays(cuda_target):
    s = cuda.stream()
    host = np.arange(512, dtype=np.float32)
    x, y = cuda.to_device(host), cuda.to_device(np.zeros(512, np.float32))
    acc = cuda.to_device(np.zeros(512, np.float32))

    @cuda.vectorize(["float32(float32, float32)"])
    def vmul(a, b):
        return a * b

    prod = cuda.device_array(512, np.float32)
    with cuda.graph(s) as g:
        axpb[2, 256, s](x, np.float32(2), np.float32(1))
        vmul(x, x, out=prod, stream=s)  # a ufunc call: in the graph, not among g.kernels
        add_into[2, 256, s](acc, x)
    s.synchronize()
    assert len(g.kernels) == 2
    k0, k1 = g.kernels
    assert k0.kernel is axpb and k1.kernel is add_into
    assert k0.griddim == (2, 1, 1) and k0.blockdim == (256, 1, 1) and k0.sharedmem == 0
    assert "axpb" in repr(k0) and "float32" in repr(k0)

    want_x, want_acc = host.copy(), np.zeros(512, np.float32)
    g.replay()
    want_x = 2 * want_x + 1
    want_acc += want_x
    k0.rebind(x, np.float32(0.5), np.float32(-1))  # new scalars from the next replay on
    g.replay()
    want_x = 0.5 * want_x - 1
    want_acc += want_x
    k1.rebind(acc, y)  # another device array of the same type
    g.replay()
    want_x = 0.5 * want_x - 1
    s.synchronize()
    np.testing.assert_allclose(x.copy_to_host(), want_x, rtol=1e-6)
    np.testing.assert_allclose(acc.copy_to_host(), want_acc, rtol=1e-6)
    np.testing.assert_allclose(prod.copy_to_host(), want_x * want_x, rtol=1e-6)

    # Values of other types would need other code: refused, naming both.
    with pytest.raises(TypeError, match=r"captured for \(array\(float32, 1d, C\), float32, "
                                        r"float32\)"):
        k0.rebind(x, 2.0, 1.0)
    with pytest.raises(TypeError, match="host array"):
        k1.rebind(acc, np.zeros(512, np.float32))
    with pytest.raises(TypeError, match="takes 3 positional arguments but 2 were given"):
        k0.rebind(x, np.float32(1))
    g.replay()  # still the last good arguments
    s.synchronize()
    np.testing.assert_allclose(x.copy_to_host(), 0.5 * want_x - 1, rtol=1e-6)


@pytest.mark.gpu
def test_a_weak_python_float_captured_is_rebound_with_a_python_float(cuda_target):
    @cuda.jit
    def fill(x, v):
        i = cuda.grid(1)
        if i < x.size:
            x[i] = v

    s = cuda.stream()
    x = cuda.device_array(64, np.float64)
    with cuda.graph(s) as g:
        fill[1, 64, s](x, 1.5)
    g.kernels[0].rebind(x, 2.5)
    g.replay()
    s.synchronize()
    np.testing.assert_array_equal(x.copy_to_host(), 2.5)


def test_captured_launches_are_listed_and_rebound_on_the_fake_driver(fake_cuda_env, run_python):
    # The bindings' side without a GPU: the fake driver (tests/cpp/fakecuda) records kernel
    # launches on a captured stream as graph nodes and keeps what cuGraphExecKernelNodeSetParams
    # sets; its kernels do nothing, so values are checked on the GPU (the tests above).
    out = run_python("""
        import ctypes, os
        import numpy as np
        fake = ctypes.CDLL(os.environ["PTXJIT_LIBCUDA"])
        fake.fakeCudaAcceptAnyPtx(1)
        from ptxjit import cuda

        @cuda.jit
        def axpb(x, a, b):
            i = cuda.grid(1)
            if i < x.size:
                x[i] = a * x[i] + b

        @cuda.jit
        def double(x):
            i = cuda.grid(1)
            if i < x.size:
                x[i] *= 2

        s = cuda.stream()
        x, y = cuda.device_array(64, np.float32), cuda.device_array(64, np.float32)
        axpb[1, 64, s](x, np.float32(1), np.float32(0))  # before the capture: not listed
        with cuda.graph(s) as g:
            axpb[(2, 1), 32, s](x, np.float32(2), np.float32(1))
            double[1, (64, 1, 1), s](x)
        axpb[1, 64, s](x, np.float32(1), np.float32(0))  # after it: not listed either
        assert g.node_count == 2
        k0, k1 = g.kernels
        assert k0.kernel is axpb and k1.kernel is double
        assert k0.griddim == (2, 1, 1) and k0.blockdim == (32, 1, 1) and k1.blockdim == (64, 1, 1)
        assert repr(k0) == "<ptxjit GraphKernel 0: 'axpb' (array(float32, 1d, C), float32, float32)>", repr(k0)
        k1.rebind(y)
        assert fake.fakeCudaLastKernelNodeIndex() == 1
        k0.rebind(y, np.float32(3), np.float32(4))
        assert fake.fakeCudaLastKernelNodeIndex() == 0 and fake.fakeCudaLastKernelNodeForm() != 0
        for args, message in [((x, 2.0, 1.0), "captured for (array(float32, 1d, C), float32, float32)"),
                              ((np.zeros(64, np.float32), np.float32(1), np.float32(1)), "host array"),
                              ((x,), "takes 3 positional arguments but 1 was given")]:
            try:
                k0.rebind(*args)
            except TypeError as e:
                assert message in str(e), str(e)
            else:
                raise AssertionError(f"rebind{args!r} did not raise")
        g.replay()
        s.synchronize()

        # A capture that failed has kernels but no graph to set them on.
        failed = cuda.graph(s)
        try:
            with failed:
                axpb[1, 64, s](x, np.float32(1), np.float32(0))
                raise KeyError("inside")
        except KeyError:
            pass
        try:
            failed.kernels[0].rebind(x, np.float32(1), np.float32(0))
        except RuntimeError as e:
            assert "capture failed" in str(e)
        else:
            raise AssertionError("rebind on a failed capture did not raise")
        print("ok")
    """, fake_cuda_env)
    assert out.strip().endswith("ok")


def test_a_checked_kernel_is_refused_inside_a_capture_on_the_fake_driver(fake_cuda_env, run_python):
    # A kernel compiled with boundscheck=True (or debug=True) waits for each launch and reads its
    # report, which a capture cannot record: refused (the launch the capture recorded is
    # discarded with it) and the stream left free for the next one.
    out = run_python("""
        import ctypes, os
        import numpy as np
        fake = ctypes.CDLL(os.environ["PTXJIT_LIBCUDA"])
        fake.fakeCudaAcceptAnyPtx(1)
        from ptxjit import cuda

        @cuda.jit(boundscheck=True)
        def bump(x):
            i = cuda.grid(1)
            if i < x.size:
                x[i] += 1

        s = cuda.stream()
        x = cuda.device_array(64, np.float32)
        g = cuda.graph(s)
        try:
            with g:
                bump[1, 64, s](x)
            raise AssertionError("a checked kernel was captured")
        except ValueError as e:
            msg = str(e)
        assert "kernel 'bump' cannot be launched on a stream being captured" in msg, msg
        assert "boundscheck=True" in msg, msg
        assert not g.ready
        # The stream was left uncaptured: an unchecked kernel captures on it.
        plain = cuda.jit(bump.py_func)
        with cuda.graph(s) as g2:
            plain[1, 64, s](x)
        assert g2.ready and g2.node_count == 1
        print("ok")
    """, fake_cuda_env)
    assert out.strip().endswith("ok")
