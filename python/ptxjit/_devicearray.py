"""Device-side copies behind ``DeviceNDArray`` (bindings/DeviceArray.cpp): element-wise
assignment (``d[idx] = value``, copies between layouts, dtypes and broadcasts), ``transpose``
and pickling. The kernels are compiled by ptxjit's own ``cuda.jit``, so they run on either
backend; numba-cuda does the same with its ``_assign_kernel`` and ``transpose``.
"""

import functools
import linecache

import numpy as np

_THREADS = 256


@functools.lru_cache(maxsize=None)
def _assign_kernel(ndim):
    """``lhs[i0, ..., i{ndim-1}] = rhs[...]`` for every element: one kernel per rank, since a
    kernel indexes with a fixed number of subscripts."""
    from . import cuda

    lines = ["def assign(lhs, rhs):", "    i = cuda.grid(1)",
             "    if i >= " + " * ".join(f"lhs.shape[{k}]" for k in range(ndim)) + ":",
             "        return"]
    for k in range(ndim - 1, 0, -1):
        lines += [f"    i{k} = i % lhs.shape[{k}]", f"    i = i // lhs.shape[{k}]"]
    lines.append("    i0 = i")
    idx = ", ".join(f"i{k}" for k in range(ndim))
    lines.append(f"    lhs[{idx}] = rhs[{idx}]")
    src = "\n".join(lines) + "\n"
    filename = f"<ptxjit device-array assignment, {ndim}-d>"
    # Kept in linecache so that compile errors can show the line.
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    namespace = {"cuda": cuda}
    exec(compile(src, filename, "exec"), namespace)
    return cuda.jit(namespace["assign"])


def _is_default(stream):
    return stream is None or (isinstance(stream, int) and stream == 0)


def _check_shapes(lhs_shape, rhs_shape):
    """numba-cuda's rules and messages for ``lhs[...] = rhs``."""
    if len(rhs_shape) > len(lhs_shape):
        raise ValueError(f"Can't assign {len(rhs_shape)}-D array to {len(lhs_shape)}-D self")
    padded = (1,) * (len(lhs_shape) - len(rhs_shape)) + tuple(rhs_shape)
    for i, (l, r) in enumerate(zip(lhs_shape, padded)):
        if r != 1 and l != r:
            raise ValueError(f"Can't copy sequence with size {r} to array axis {i} with "
                             f"dimension {l}")


def _broadcast(rhs, shape):
    """A view of device array ``rhs`` with ``shape`` (stride 0 along stretched axes)."""
    pad = len(shape) - rhs.ndim
    rshape = (1,) * pad + rhs.shape
    rstrides = (0,) * pad + rhs.strides
    strides = tuple(0 if rs == 1 and s != 1 else st for s, rs, st in zip(shape, rshape, rstrides))
    return rhs._as_strided(tuple(shape), strides)


def _overlap(a, b):
    (alo, ahi), (blo, bhi) = a._memory_span, b._memory_span
    return a.size and b.size and alo < bhi and blo < ahi


def _launch(lhs, rhs, stream):
    if lhs.ndim == 0:  # as 1-element arrays
        lhs = lhs._as_strided((1,), (lhs.dtype.itemsize,))
        rhs = rhs._as_strided((1,), (0,))
    n = lhs.size
    _assign_kernel(lhs.ndim)[(n + _THREADS - 1) // _THREADS, _THREADS, stream](lhs, rhs)


def assign(lhs, value, stream=0):
    """``lhs[...] = value`` for device array ``lhs``: ``value`` a scalar, a host array, a device
    array or any ``__cuda_array_interface__`` producer, broadcast to ``lhs``'s shape and
    converted to its dtype. Host values reach a contiguous ``lhs`` with one copy; everything
    else is copied by a kernel on ``stream`` (synchronized when it is the default stream, as
    numba-cuda does)."""
    from . import cuda

    device = cuda.DeviceNDArray
    if isinstance(value, device):
        rhs = value
    elif not isinstance(value, np.ndarray) and hasattr(value, "__cuda_array_interface__"):
        rhs = cuda.as_cuda_array(value)
    else:
        host = np.asarray(value)
        _check_shapes(lhs.shape, host.shape)
        if lhs.size == 0:
            return
        if lhs.is_c_contiguous() or lhs.is_f_contiguous():
            order = "C" if lhs.is_c_contiguous() else "F"
            full = np.array(np.broadcast_to(host.astype(lhs.dtype, copy=False), lhs.shape),
                            order=order)
            lhs.copy_to_device(full, stream=stream)
            return
        rhs = cuda.to_device(np.ascontiguousarray(host), stream=stream)
    _check_shapes(lhs.shape, rhs.shape)
    if lhs.size == 0:
        return
    rhs = _broadcast(rhs, lhs.shape)
    if _overlap(lhs, rhs):  # e.g. d[1:] = d[:-1]: read everything before writing
        tmp = cuda.device_array(lhs.shape, dtype=rhs.dtype, stream=stream)
        _launch(tmp, rhs, stream)
        rhs = tmp
    if (lhs.dtype == rhs.dtype and lhs.strides == rhs.strides and
            ((lhs.is_c_contiguous() and rhs.is_c_contiguous()) or
             (lhs.is_f_contiguous() and rhs.is_f_contiguous()))):
        lhs.copy_to_device(rhs, stream=stream)  # one device-to-device copy
    else:
        _launch(lhs, rhs, stream)
        if _is_default(stream):
            cuda.default_stream().synchronize()


def transpose(a, axes=None):
    """numba-cuda's ``DeviceNDArray.transpose``: a new C-contiguous array for 2-d arrays (the
    identity permutation returns ``a``), filled on the device."""
    from . import cuda

    if axes and tuple(axes) == tuple(range(a.ndim)):
        return a
    if a.ndim != 2:
        raise NotImplementedError("transposing a non-2D DeviceNDArray isn't supported")
    if axes is not None and set(axes) != set(range(a.ndim)):
        raise ValueError(f"invalid axes list {axes!r}")
    rows, cols = a.shape
    out = cuda.device_array((cols, rows), dtype=a.dtype, stream=a.stream)
    if out.size:
        assign(out, a._as_strided((cols, rows), (a.strides[1], a.strides[0])), a.stream)
    return out


def contiguous_copy(a):
    """A C-contiguous copy of device array ``a`` made on the device (on its stream):
    ``__dlpack__(copy=True)``."""
    from . import cuda

    out = cuda.device_array(a.shape, dtype=a.dtype, stream=a.stream)
    if out.size:
        assign(out, a, a.stream)
    return out


def host_copy(a):
    """The host array a device array pickles as (negatively strided views included)."""
    if any(st < 0 and n > 1 for st, n in zip(a.strides, a.shape)):
        from . import cuda

        tmp = cuda.device_array(a.shape, dtype=a.dtype)
        assign(tmp, a)
        return tmp.copy_to_host()
    return a.copy_to_host()


def _unpickle(host):
    """A pickled device array: its host copy, back on the current device."""
    from . import cuda

    return cuda.to_device(host)


def as_device_array(obj):
    """A zero-copy device array of a ``__cuda_array_interface__`` producer (copy sources)."""
    from . import cuda

    return cuda.as_cuda_array(obj)
