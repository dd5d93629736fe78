"""Host arrays the device can address (``cuda.mapped_array``, ``cuda.managed_array``): NumPy
arrays on mapped or managed memory (bindings/HostMemory.cpp) that also offer
``__cuda_array_interface__``, so kernels use them in place instead of copying them."""

import ctypes

import numpy as np


class _DeviceVisibleArray(np.ndarray):
    """A NumPy array whose memory the device can address; views keep that ability, new arrays
    computed from it (``a + 1``) are ordinary memory and lose it."""

    def __array_finalize__(self, obj):
        self.stream = getattr(obj, "stream", 0)

    def _device_address(self):
        """The device address of the first element, or None when this array's memory is not
        the device-visible block (e.g. a result computed from one)."""
        from ._loader import lib

        buf = _base_buffer(self)
        if buf is None or lib().current_target() != "cuda":
            return None
        data = self.__array_interface__["data"][0]
        lo = sum((n - 1) * st for n, st in zip(self.shape, self.strides) if st < 0)
        hi = sum((n - 1) * st for n, st in zip(self.shape, self.strides) if st > 0)
        offset = data - buf.host_pointer
        if self.size and (offset + lo < 0 or offset + hi + self.itemsize > len(buf)):
            return None
        return buf.device_pointer + offset

    @property
    def device_ctypes_pointer(self):
        address = self._device_address()
        if address is None:
            raise AttributeError("this array is not in device-visible memory")
        return ctypes.c_void_p(address if self.size else 0)

    @property
    def __cuda_array_interface__(self):
        address = self._device_address()
        if address is None:
            raise AttributeError("__cuda_array_interface__: this array is not in device-visible "
                                 "memory (or the CPU backend is in use)")
        contiguous = True
        expect = self.itemsize
        for n, st in zip(reversed(self.shape), reversed(self.strides)):
            if n > 1 and st != 0:
                contiguous = contiguous and st == expect
                expect *= n
        stream = self.stream
        return {"shape": self.shape, "strides": None if contiguous else self.strides,
                "data": (address if self.size else 0, False), "typestr": self.dtype.str,
                "stream": int(stream) if stream not in (0, None) else None, "version": 3}


def _base_buffer(ary):
    """The HostBuffer at the root of ``ary``'s chain of bases, if any."""
    from ._loader import lib

    base = ary
    while isinstance(base, np.ndarray):
        base = base.base
    return base if isinstance(base, lib().HostBuffer) else None


class MappedNDArray(_DeviceVisibleArray):
    """A host array in mapped (page-locked, device-addressable) memory."""


class ManagedNDArray(_DeviceVisibleArray):
    """A host array in managed (unified) memory."""
