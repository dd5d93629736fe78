"""Device-array helpers of the host API: the CUDA array interface and DLPack consumers
(``cuda.as_cuda_array``, ``cuda.from_cuda_array_interface``, ``cuda.from_dlpack``,
``cuda.is_cuda_array``) and
numba-cuda's ``numba.cuda.cudadrv.devicearray`` helpers, for code that reaches them as
``cuda.cudadrv.devicearray.<name>`` or ``cuda.devicearray.<name>``: ``DeviceNDArray``,
``auto_device``, ``from_array_like``, ``is_cuda_ndarray``, ``array_core``,
``sentry_contiguous``. The device array itself lives in the extension
(bindings/DeviceArray.cpp)."""

from ._loader import lib as _lib

errmsg_contiguous_buffer = (
    "Array contains non-contiguous buffer and cannot be transferred as a single memory region. "
    "Please ensure contiguous buffer with numpy .ascontiguousarray()")


class MemoryPointer:
    """numba-cuda's MemoryPointer as far as users read it (``d.gpu_data``): the array's device
    address (``device_pointer``, ``device_ctypes_pointer``), the bytes it spans (``size``) and the
    array holding it alive (``owner``). Two are equal when they point at the same bytes (an
    array and its ``view(dtype)``), as numba-cuda's views share one MemoryPointer."""

    __slots__ = ("device_pointer", "size", "owner")

    def __init__(self, device_pointer, size, owner):
        self.device_pointer = device_pointer
        self.size = size
        self.owner = owner

    @property
    def device_ctypes_pointer(self):
        import ctypes

        return ctypes.c_void_p(self.device_pointer)

    def __eq__(self, other):
        if not isinstance(other, MemoryPointer):
            return NotImplemented
        return (self.device_pointer, self.size) == (other.device_pointer, other.size)

    def __hash__(self):
        return hash((self.device_pointer, self.size))

    def __repr__(self):
        return f"<MemoryPointer {self.device_pointer:#x} size={self.size}>"


def __getattr__(name):
    if name == "DeviceNDArray":
        return _lib().DeviceNDArray
    raise AttributeError(f"module 'ptxjit.devicearray' has no attribute {name!r}")


# ---- The CUDA array interface ----------------------------------------------------------------

def is_cuda_array(obj):
    """True when ``obj`` is a device array or exposes ``__cuda_array_interface__``."""
    return isinstance(obj, _lib().DeviceNDArray) or hasattr(obj, "__cuda_array_interface__")


def from_cuda_array_interface(desc, owner=None, sync=True):
    """A device array viewing the memory a ``__cuda_array_interface__`` dict describes (no
    copy); ``owner`` is kept alive with it. With ``sync``, the producer's stream (v3 "stream")
    is synchronized first, as the protocol asks of consumers; the array keeps that stream as an
    external stream."""
    import numpy as np

    version = desc.get("version", 0)
    if version >= 1 and desc.get("mask") is not None:
        raise NotImplementedError("Masked arrays are not supported")
    shape = tuple(int(s) for s in desc["shape"])
    dtype = _interface_dtype(desc, owner)
    strides = desc.get("strides")
    if strides is None:
        strides, acc = [0] * len(shape), dtype.itemsize
        for k in reversed(range(len(shape))):
            strides[k] = acc
            acc *= max(shape[k], 1)
    lib = _lib()
    stream_ptr = desc.get("stream")
    stream = None
    if stream_ptr is not None:
        stream = lib.external_stream(int(stream_ptr))
        if sync and lib.cuda_array_interface_sync():
            stream.synchronize()
    return lib._wrap_memory(int(desc["data"][0]), shape, tuple(int(s) for s in strides), dtype,
                            owner, stream)


def as_cuda_array(obj, sync=True):
    """A device array viewing ``obj``'s memory (no copy): a ptxjit device array, any
    ``__cuda_array_interface__`` producer (CuPy, PyTorch, numba-cuda), or else any DLPack
    producer in device memory (JAX, ...). With ``sync``, the producer's work is complete (CUDA
    array interface: its stream is synchronized) or ordered before ptxjit's default stream
    (DLPack) first."""
    lib = _lib()
    if isinstance(obj, lib.DeviceNDArray):
        if sync and obj.stream != 0:
            obj.stream.synchronize()
        return obj._as_strided(obj.shape, obj.strides)
    interface = getattr(obj, "__cuda_array_interface__", None)
    dlpack = hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__") and \
        not isinstance(obj, _numpy_ndarray())
    # Opaque bytes that the producer's dtype does not name either (PyTorch's bfloat16
    # tensors: "<V2") are taken through DLPack when it is offered too, which names the type.
    if interface is not None and not (dlpack and _interface_dtype(interface, obj).kind == "V"):
        return from_cuda_array_interface(interface, owner=obj, sync=sync)
    if dlpack:
        return lib._from_dlpack(obj, 0, bool(sync))
    raise TypeError("*obj* doesn't implement the cuda array interface.")


def from_dlpack(obj, stream=0):
    """A device array viewing the memory of DLPack producer ``obj`` (no copy; the array keeps
    the producer's tensor alive). ``stream`` (a ptxjit stream, or 0 for the default stream) is
    where the array will be used: the producer orders its pending work before it. On the CPU
    backend host memory is taken (NumPy arrays, CPU tensors), device memory is refused."""
    return _lib()._from_dlpack(obj, stream, True)


def _interface_dtype(desc, owner):
    """The element dtype a ``__cuda_array_interface__`` dict gives: its typestr's, except that
    opaque bytes ("<V2", NumPy's spelling of ml_dtypes.bfloat16) whose owner's own dtype is
    NumPy's bfloat16 (CuPy's arrays) are that dtype, as kernel arguments read them
    (bindings/ArgTypes.cpp). PyTorch's ``torch.bfloat16`` is not a NumPy dtype."""
    import numpy as np

    dtype = np.dtype(desc["typestr"])
    if dtype.kind == "V" and dtype.fields is None:
        own = getattr(owner, "dtype", None)
        if isinstance(own, np.dtype) and own.name == "bfloat16" and own.itemsize == dtype.itemsize:
            return own
    return dtype


def _numpy_ndarray():
    import numpy as np

    return np.ndarray


# ---- numba-cuda's devicearray helpers ------------------------------------------------------

def is_cuda_ndarray(obj):
    """True for a ptxjit device array."""
    return isinstance(obj, _lib().DeviceNDArray)


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
    import numpy as np

    return _lib().device_array(tuple(ary.shape), tuple(ary.strides), np.dtype(ary.dtype), stream)


def auto_device(obj, stream=0, copy=True):
    """``(device array, True)`` holding a copy of host data ``obj`` (a contiguous array, or
    anything ``np.asarray`` takes); ``(obj, False)`` for a device array and a zero-copy view
    for a ``__cuda_array_interface__`` producer. Non-contiguous host arrays raise ValueError."""
    import numpy as np

    if is_cuda_ndarray(obj):
        return obj, False
    if not isinstance(obj, np.ndarray) and hasattr(obj, "__cuda_array_interface__"):
        return as_cuda_array(obj), False
    obj = np.asarray(obj)
    sentry_contiguous(obj)
    dev = from_array_like(obj, stream=stream)
    if copy:
        dev.copy_to_device(obj, stream=stream)
    return dev, True
