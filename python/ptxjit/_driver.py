"""numba-cuda's ``numba.cuda.cudadrv.driver`` as far as programs name it: the classes of the
objects ``cuda.stream()``, ``cuda.event()``, ``cuda.gpus[i]`` and ``cuda.current_context()``
return (``Stream``, ``Event``, ``Device``, ``Context``) and the driver errors, for ``isinstance`` checks and for code that reaches them as ``cuda.cudadrv.driver.X``.
ptxjit calls the CUDA driver itself (no driver object): numba's ``driver``, ``MemoryPointer`` and
the other internals are not offered.

A consumer of the CUDA array interface (``cuda.as_cuda_array``, a kernel launch or a ufunc given
a foreign array that names a stream) waits for the producer's stream by calling
``Stream.synchronize`` on a stream object for it, as numba-cuda does; so the method of this class
is what runs.
"""
from ._loader import lib as _lib
from .errors import CudaDriverError as CudaAPIError  # noqa: F401  (numba's name)
from .errors import CudaSupportError  # noqa: F401

_CLASSES = ("Stream", "Event")


def __getattr__(name):
    if name in _CLASSES:
        return getattr(_lib(), name)
    if name in ("Device", "Context"):
        from . import _devices

        return getattr(_devices, name)
    raise AttributeError(f"module 'ptxjit.cuda.cudadrv.driver' has no attribute {name!r} "
                         "(ptxjit offers its Stream, Event, Device and Context classes and "
                         "errors here; numba's driver internals are not offered)")


def __dir__():
    return sorted(set(globals()) | set(_CLASSES) | {"Device", "Context"})
