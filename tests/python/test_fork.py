"""fork() safety: a process forked after CUDA started refuses CUDA at once with numba-cuda's
"CUDA initialized before forking" (never hangs, also while the device is still being opened in
the background), and a child forked while another thread compiles finds the compiler free.
The CUDA cases run against the fake driver of tests/cpp/fakecuda (PTXJIT_LIBCUDA), so they need
no GPU; each scenario runs in a fresh interpreter with a timeout, so a hang fails the test."""
import pytest

# numba-cuda's test_multiprocessing.test_fork, with the device opening (started by the first
# compile) still under way or finished when the pool forks its worker.
FORK_POOL = """
    import concurrent.futures, ctypes, multiprocessing as mp, os, sys, time, warnings
    import numpy as np
    from ptxjit import cuda
    from ptxjit.errors import CudaDriverError

    warnings.simplefilter("ignore", DeprecationWarning)  # fork() of a multi-threaded process
    fake = ctypes.CDLL(os.environ["PTXJIT_LIBCUDA"])
    hold = {hold}
    if hold:
        fake.fakeCudaHoldContext(1)
    def noop():
        pass

    cuda.jit("void()")(noop)  # the first compile: the device opens on a background thread
    if hold:
        while not fake.fakeCudaContextWaiting():
            time.sleep(0.01)
    with concurrent.futures.ProcessPoolExecutor(mp_context=mp.get_context("fork")) as exe:
        future = exe.submit(cuda.to_device, np.arange(1))
        error = future.exception(timeout=60)
    if hold:
        fake.fakeCudaHoldContext(0)
    assert isinstance(error, CudaDriverError), repr(error)
    assert str(error).startswith("CUDA initialized before forking"), str(error)
    # The parent is unaffected.
    assert (cuda.to_device(np.arange(3)).copy_to_host() == np.arange(3)).all()
    print("refused")
"""


@pytest.mark.parametrize("hold", [False, True], ids=["opened", "opening"])
def test_a_pool_worker_forked_after_cuda_started_refuses_it(fake_cuda_env, run_python, hold):
    out = run_python(FORK_POOL.format(hold=hold), fake_cuda_env)
    assert "refused" in out


def test_a_forked_child_that_exits_normally_does_not_wait_for_the_parents_threads(
        fake_cuda_env, run_python):
    # os.fork() while the device is being opened on a background thread; the child returns
    # through the interpreter's normal exit (atexit handlers, static destructors).
    script = """
        import ctypes, os, sys, time, warnings
        import numpy as np
        from ptxjit import cuda
        from ptxjit.errors import CudaDriverError

        warnings.simplefilter("ignore", DeprecationWarning)
        fake = ctypes.CDLL(os.environ["PTXJIT_LIBCUDA"])
        fake.fakeCudaHoldContext(1)

        def noop():
            pass

        cuda.jit("void()")(noop)  # the first compile: the device opens on a background thread
        while not fake.fakeCudaContextWaiting():
            time.sleep(0.01)
        pid = os.fork()
        if pid == 0:
            import signal
            signal.alarm(60)
            try:
                cuda.device_array(4)
                code = 2
            except CudaDriverError as e:
                code = 0 if "CUDA initialized before forking" in str(e) else 3
            sys.exit(code)  # a normal exit: atexit handlers run
        fake.fakeCudaHoldContext(0)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
        print("child exited")
    """
    out = run_python(script, fake_cuda_env)
    assert "child exited" in out


def test_children_forked_while_another_thread_compiles_can_compile(subprocess_env, run_python):
    # The CPU backend works in a forked child: the compile lock (and the type tables) that the
    # compiling thread holds are taken around fork(), so the children find them free.
    script = """
        import os, threading, warnings
        import numpy as np
        from ptxjit import cuda

        warnings.simplefilter("ignore", DeprecationWarning)
        done = threading.Event()

        def compile_many():
            for n in range(40):
                ns = {"cuda": cuda}
                exec(f"def k(a):\\n    i = cuda.grid(1)\\n    if i < a.size:\\n"
                     f"        a[i] = a[i] * {n} + {n}\\n", ns)
                a = np.ones(8)
                cuda.jit(ns["k"])[1, 8](a)
                assert (a == 2 * n).all()
                if done.is_set():
                    return

        worker = threading.Thread(target=compile_many)
        worker.start()
        pids = []
        for _ in range(6):
            pid = os.fork()
            if pid == 0:
                import signal
                signal.alarm(60)

                @cuda.jit
                def child_kernel(a):
                    a[0] = 42

                a = np.zeros(1)
                child_kernel[1, 1](a)
                os._exit(0 if a[0] == 42 else 3)
            pids.append(pid)
        done.set()
        worker.join()
        for pid in pids:
            _, status = os.waitpid(pid, 0)
            assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
        print("children compiled")
    """
    env = dict(subprocess_env)
    env["PTXJIT_TARGET"] = "cpu"
    out = run_python(script, env, timeout=300)
    assert "children compiled" in out
