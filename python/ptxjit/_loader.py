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
if hasattr(_os, "register_at_fork"):
    _os.register_at_fork(before=_load_lock.acquire, after_in_parent=_load_lock.release,
                         after_in_child=_load_lock.release)


def lib():
    """The C++ extension, imported (with LLVM) on first use."""
    if _lib_module is None:
        with _load_lock:
            _load()
    return _lib_module


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
    disp = lib().Dispatcher(func, options, sigs or [])
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
