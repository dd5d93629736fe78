"""The C++ extension ``ptxjit._core``, imported on first use, and the construction of the
objects that compile a Python function (the kernel object of ``cuda.jit``; ufuncs build theirs
on it). ``cuda`` and ``ufunc`` both import this module and neither imports the other's
internals, so the package has no import cycle.
"""
import os as _os
import threading as _threading

_lib_module = None
# Held while the extension is being imported. CPython keeps a module's import lock in a forked
# child as it was at fork(): a child forked while another thread imports ptxjit._core (which takes
# long: LLVM) would wait for that import for ever. So fork() waits for a load under way: the lock
# is taken before fork() and released after it in both processes (runtime/Fork.h does the same
# for the C++ locks). Reentrant: installing the Python-side methods may call lib() again.
_load_lock = _threading.RLock()


def _before_fork():
    # A cuInit under way on _start_cuda_init's thread finishes before fork(), so that the child
    # does not inherit a driver in the middle of its initialization.
    if _cuda_init_thread is not None:
        _cuda_init_thread.join()
    _load_lock.acquire()


if hasattr(_os, "register_at_fork"):
    _os.register_at_fork(before=_before_fork, after_in_parent=_load_lock.release,
                         after_in_child=_load_lock.release)


def lib(start_cuda=False):
    """The C++ extension, imported (with LLVM) on first use. ``start_cuda``: the caller chooses
    the backend right after (an eager compile, a device allocation, a stream): if this call
    imports the extension, CUDA's driver initialization starts first, on a thread of its own,
    so that it overlaps the import (``_start_cuda_init``)."""
    if _lib_module is None:
        with _load_lock:
            if start_cuda and _lib_module is None:
                _start_cuda_init()
            _load()
    return _lib_module


# The thread of _start_cuda_init, kept for fork() and for the tests.
_cuda_init_thread = None


def _start_cuda_init():
    """Starts ``cuInit`` of the driver the C++ side will open (``PTXJIT_LIBCUDA``, else
    libcuda.so.1, as runtime/Driver.cpp) on a thread, unless PTXJIT_TARGET (or
    NUMBA_ENABLE_CUDASIM) chooses the CPU backend (as bindings/Target.cpp decides). cuInit takes
    about 100 ms and importing ``_core`` (LLVM's relocations and initializers) tens of ms; the
    C++ side's own ``cuInit`` (runtime/Driver.cpp) then returns when this one is done, and
    reports any failure itself: this thread only starts the work and swallows its errors. It
    returns once the thread is about to call ``cuInit``, which ctypes makes with the interpreter
    released: importing an extension holds the interpreter lock, which would otherwise keep the
    thread from reaching the call until the import is over. Then, before the caller goes on to
    import ``_core``, ``cuInit`` gets a head start (_let_cuinit_begin). Not a daemon: an exit
    waits for it (the driver must not be torn down under a cuInit), and so does fork()
    (_before_fork)."""
    global _cuda_init_thread
    target = _os.environ.get("PTXJIT_TARGET", "").lower()
    if target in ("cpu", "host") or _cuda_init_thread is not None:
        return
    if target == "" and _os.environ.get("NUMBA_ENABLE_CUDASIM", "") not in ("", "0"):
        return
    path = _os.environ.get("PTXJIT_LIBCUDA") or "libcuda.so.1"
    calling = _threading.Event()
    found = []  # holds True once the driver's cuInit is about to be called

    def run():
        init = None
        try:
            import ctypes

            init = ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL).cuInit
            init.restype, init.argtypes = ctypes.c_int, [ctypes.c_uint]
            found.append(True)
        except Exception:
            init = None  # no driver: the C++ side says so when it chooses the backend
        finally:
            calling.set()  # whatever happened: the caller waits for this
        if init is not None:
            init(0)  # ctypes releases the interpreter for the call

    import time

    t0 = time.perf_counter()
    thread = _threading.Thread(target=run, name="ptxjit-cuInit")
    try:
        thread.start()
    except RuntimeError:  # no new thread (interpreter shutting down): the C++ side does it all
        return
    _cuda_init_thread = thread
    calling.wait()
    if found:
        _let_cuinit_begin()
    if _os.environ.get("PTXJIT_TRACE_STARTUP", "") not in ("", "0"):
        ms = (time.perf_counter() - t0) * 1e3
        startup_logger().info(f"ptxjit startup: [main] starting cuInit on a thread before "
                              f"importing ptxjit._core (dlopen of the CUDA driver, and cuInit's "
                              f"head start): {ms:.3f} ms")


def _let_cuinit_begin():
    """Holds the caller of _start_cuda_init back for at least a millisecond once the thread is
    about to call ``cuInit``, before it loads ``_core``. On the H200 (docs/performance.md,
    2026-12-02), loading LLVM at the very moment ``cuInit`` began made CUDA's start-up
    (``cuInit``, then the primary context: the path to the first launch) 10-20 ms slower, and any
    pause of 1 ms or more before the import (a sleep, or Python work) took that away. The pause
    does work the caller needs anyway, the import of the pure-Python ``_dispatcher`` that _load
    installs, and sleeps what is left of the millisecond. The import of ``_core`` and the compile
    after it finish long before CUDA's start-up does, so this costs the first launch nothing.
    (The tests replace this function to see when it runs.)"""
    import time

    deadline = time.perf_counter() + 1e-3
    from . import _dispatcher  # noqa: F401  (what _load needs next; it does not need _core)

    left = deadline - time.perf_counter()
    if left > 0:
        time.sleep(left)


def _load():
    global _lib_module
    if _lib_module is None:
        import time

        t0 = time.perf_counter()
        from . import _core

        if _os.environ.get("PTXJIT_TRACE_STARTUP", "") not in ("", "0"):
            ms = (time.perf_counter() - t0) * 1e3
            startup_logger().info(f"ptxjit startup: [main] importing ptxjit._core (LLVM): "
                                  f"{ms:.3f} ms")
        from . import _dispatcher

        _dispatcher.install(_core, make_dispatcher)
        from . import _serialize

        _serialize.install(_core, rebuild_dispatcher)
        _lib_module = _core


def startup_logger():
    """The logger of PTXJIT_TRACE_STARTUP's lines, "ptxjit.startup" (a child of the package's
    logger "ptxjit"), at INFO. When the program has configured no handler for it, one writing
    the bare lines to stderr is added, so that they interleave with the C++ side's lines
    (runtime/StartupTrace.h) as scripts/startup-trace.sh reads them."""
    import logging

    log = logging.getLogger("ptxjit.startup")
    log.setLevel(logging.INFO)
    if not log.hasHandlers():
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(message)s"))
        log.addHandler(handler)
    return log


def make_dispatcher(func, sigs, options):
    """The kernel (or device function) object of ``func`` for signature texts ``sigs`` (a list,
    empty for lazy compilation) and ``options`` (a dict of flags: device, fastmath, cache, ...;
    missing ones take their defaults), with the function's name and docstring."""
    # Signatures compile now, for the backend chosen now: CUDA's start-up may begin at once.
    disp = lib(start_cuda=bool(sigs)).Dispatcher(func, options, sigs or [])
    for attr in ("__name__", "__qualname__", "__module__", "__doc__"):
        try:
            setattr(disp, attr, getattr(func, attr))
        except AttributeError:
            pass
    disp.__wrapped__ = func
    # For the dispatcher API (_dispatcher.py): specialize() copies the options, and a kernel
    # given signatures is "specialized" (Numba's word) and cannot be specialized again.
    disp._ptxjit_options = dict(options)
    disp._ptxjit_eager = bool(sigs)
    disp._ptxjit_sigs = list(sigs or ())  # what pickling remakes it from (_serialize.py)
    return disp


def rebuild_dispatcher(func, self_names, self_cells, sigs, options, extensions):
    """An unpickled kernel (``_serialize.reduce_dispatcher``): made again from its function,
    signatures and options; names and cells of the function that stood for the kernel itself
    are bound to the new one."""
    from . import _serialize

    disp = make_dispatcher(func, sigs, options)
    if extensions:
        disp.extensions.extend(extensions)
    _serialize.bind_self(func, disp, self_names, self_cells)
    return disp
