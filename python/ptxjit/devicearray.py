"""numba-cuda's ``numba.cuda.cudadrv.devicearray`` helpers, for code that reaches them as
``cuda.cudadrv.devicearray.<name>`` or ``cuda.devicearray.<name>``: ``DeviceNDArray``,
``auto_device``, ``from_array_like``, ``is_cuda_ndarray``, ``array_core``,
``sentry_contiguous``. The device array itself lives in the extension
(bindings/DeviceArray.cpp)."""

errmsg_contiguous_buffer = (
    "Array contains non-contiguous buffer and cannot be transferred as a single memory region. "
    "Please ensure contiguous buffer with numpy .ascontiguousarray()")


def __getattr__(name):
    if name == "DeviceNDArray":
        from ._loader import lib

        return lib().DeviceNDArray
    raise AttributeError(f"module 'ptxjit.devicearray' has no attribute {name!r}")


def is_cuda_ndarray(obj):
    """True for a ptxjit device array."""
    from ._loader import lib

    return isinstance(obj, lib().DeviceNDArray)


def array_core(ary):
    """The array without its broadcast (stride 0) axes: the memory a copy must move."""
    if not ary.strides or not ary.size:
        return ary
    return ary[tuple(0 if stride == 0 else slice(None) for stride in ary.strides)]


def sentry_contiguous(ary):
    """Raises ValueError unless ``ary`` (less its broadcast axes) is C- or F-contiguous."""
    core = array_core(ary)
    if not core.flags["C_CONTIGUOUS"] and not core.flags["F_CONTIGUOUS"]:
        raise ValueError(errmsg_contiguous_buffer)


def from_array_like(ary, stream=0):
    """An uninitialized device array with ``ary``'s shape, strides and dtype."""
    from . import cuda

    return cuda.device_array(ary.shape, dtype=ary.dtype, strides=ary.strides, stream=stream)


def auto_device(obj, stream=0, copy=True):
    """``(device array, True)`` holding a copy of host data ``obj`` (a contiguous array, or
    anything ``np.asarray`` takes); ``(obj, False)`` for a device array and a zero-copy view
    for a ``__cuda_array_interface__`` producer. Non-contiguous host arrays raise ValueError."""
    import numpy as np

    from . import cuda

    if is_cuda_ndarray(obj):
        return obj, False
    if not isinstance(obj, np.ndarray) and hasattr(obj, "__cuda_array_interface__"):
        return cuda.as_cuda_array(obj), False
    obj = np.asarray(obj)
    sentry_contiguous(obj)
    dev = from_array_like(obj, stream=stream)
    if copy:
        dev.copy_to_device(obj, stream=stream)
    return dev, True
