"""Interoperation of device arrays with other libraries and the host: DLPack both ways,
cuda.mapped, Device.uuid, numba-cuda's cudadrv.driver classes and kernels.transpose, the
consumer side of the CUDA array interface (ufuncs, stream synchronization), and the release of
memory after work on non-blocking streams. CUDA-backend cases without a GPU run in a child
interpreter on the fake driver (tests/cpp/fakecuda)."""
import ctypes
import pickle

import numpy as np
import pytest

from ptxjit import cuda, vectorize
from ptxjit.errors import CudaDriverError, TypingError


class DLPackOnly:
    """A producer that offers DLPack only (as JAX arrays do): no __cuda_array_interface__."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, **kw):
        return self._array.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


class ForeignArray:
    """numba-cuda's testing.ForeignArray: a device array seen only through its interface."""

    def __init__(self, arr):
        self._arr = arr
        self.__cuda_array_interface__ = arr.__cuda_array_interface__


# ---- DLPack on the CPU backend (its device arrays are host memory: kDLCPU) ----------------------

def test_cpu_device_arrays_export_host_memory_through_dlpack(cpu):
    h = np.arange(12, dtype=np.float32).reshape(3, 4)
    d = cuda.to_device(h)
    assert d.__dlpack_device__() == (1, 0)
    back = np.from_dlpack(d)  # NumPy's consumer: no copy
    np.testing.assert_array_equal(back, h)
    view = np.from_dlpack(d[:, 1::2])  # strides in elements, the first element's address
    np.testing.assert_array_equal(view, h[:, 1::2])
    d[0, 0] = 42  # the same memory
    assert back[0, 0] == 42


def test_cpu_dlpack_capsules_and_options(cpu):
    d = cuda.to_device(np.arange(4.0))
    legacy = d.__dlpack__()
    assert "dltensor" in repr(legacy) and "versioned" not in repr(legacy)
    assert "dltensor_versioned" in repr(d.__dlpack__(max_version=(1, 0)))
    copied = np.from_dlpack(DLPackOnlyWithCopy(d))
    d[0] = 99
    assert copied[0] == 0  # a copy of its own
    with pytest.raises(BufferError, match="stream must be None"):
        d.__dlpack__(stream=1)
    with pytest.raises(BufferError, match="another device"):
        d.__dlpack__(dl_device=(2, 0))
    rec = cuda.to_device(np.zeros(2, dtype=[("a", "f8"), ("b", "i4")]))
    with pytest.raises(BufferError, match="no structured types"):
        rec.__dlpack__()


class DLPackOnlyWithCopy(DLPackOnly):
    def __dlpack__(self, **kw):
        kw["copy"] = True
        return self._array.__dlpack__(**kw)


def test_dlpack_producers_are_imported_without_a_copy_on_the_cpu_backend(cpu):
    h = np.arange(10, dtype=np.int64)
    d = cuda.from_dlpack(h)  # host memory is what the CPU backend's arrays are
    assert isinstance(d, cuda.DeviceNDArray) and d.shape == (10,)
    d[3] = -1
    assert h[3] == -1
    e = cuda.as_cuda_array(DLPackOnly(h))  # as_cuda_array takes DLPack producers too
    np.testing.assert_array_equal(e.copy_to_host(), h)

    @cuda.jit
    def double(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] *= 2

    double[1, 16](DLPackOnly(h))  # a kernel argument, used in place
    np.testing.assert_array_equal(h, np.array([0, 2, 4, -2, 8, 10, 12, 14, 16, 18]))


class VersionedProducer:
    """A DLPack 1.0 producer of a NumPy array's memory made with ctypes: it can flag its tensor
    read-only, and counts the calls of its deleter."""

    class _Device(ctypes.Structure):
        _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]

    class _DataType(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]

    class _Tensor(ctypes.Structure):
        pass

    _Tensor._fields_ = [("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int32),
                        ("dtype", _DataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                        ("strides", ctypes.POINTER(ctypes.c_int64)),
                        ("byte_offset", ctypes.c_uint64)]
    _Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

    class _Version(ctypes.Structure):
        _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]

    class _Managed(ctypes.Structure):
        pass

    _Managed._fields_ = [("version", _Version), ("manager_ctx", ctypes.c_void_p),
                         ("deleter", _Deleter), ("flags", ctypes.c_uint64), ("dl_tensor", _Tensor)]

    def __init__(self, array, readonly, code=None):
        self.array = array
        self.deletions = 0
        self.readonly = readonly
        self.code = code  # DLPack's type code when not the array's own (4: bfloat16 bits)

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, stream=None, max_version=None, **kw):
        assert max_version is not None and max_version[0] >= 1
        a = self.array
        self._shape = (ctypes.c_int64 * a.ndim)(*a.shape)
        self._strides = (ctypes.c_int64 * a.ndim)(*(st // a.itemsize for st in a.strides))

        def deleter(_):
            self.deletions += 1

        self._deleter = self._Deleter(deleter)
        kind = self.code if self.code is not None else {"f": 2, "i": 0, "u": 1}[a.dtype.kind]
        tensor = self._Tensor(a.ctypes.data, self._Device(1, 0), a.ndim,
                              self._DataType(kind, a.itemsize * 8, 1), self._shape,
                              self._strides, 0)
        self._managed = self._Managed(self._Version(1, 0), None, self._deleter,
                                      1 if self.readonly else 0, tensor)
        self._name = b"dltensor_versioned"
        new = ctypes.pythonapi.PyCapsule_New
        new.restype = ctypes.py_object
        new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self._managed), self._name, None)


def test_read_only_dlpack_imports_cannot_be_written(cpu):
    h = np.arange(4.0)
    producer = VersionedProducer(h, readonly=True)
    d = cuda.from_dlpack(producer)
    np.testing.assert_array_equal(d.copy_to_host(), h)
    with pytest.raises(ValueError, match="read-only"):
        d[0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        d.copy_to_device(np.ones(4))

    @cuda.jit
    def write(a):
        a[0] = 1.0

    @cuda.jit
    def read(a, out):
        out[0] = a[1]

    with pytest.raises(TypingError, match="cannot write to read-only array"):
        write[1, 1](d)
    out = np.zeros(1)
    read[1, 1](d, out)
    assert out[0] == 1.0
    view = d[1:]
    assert producer.deletions == 0  # the views hold the tensor
    del d, view
    import gc

    gc.collect()
    assert producer.deletions == 1  # released once, with the last view


def test_writable_dlpack_imports_are_used_in_place(cpu):
    h = np.arange(6, dtype=np.int32).reshape(2, 3)
    producer = VersionedProducer(h, readonly=False)
    d = cuda.from_dlpack(producer)
    assert d.shape == (2, 3) and d.strides == (12, 4)
    d[1, 2] = -5
    assert h[1, 2] == -5


def test_gpu_dlpack_producers_are_refused_on_the_cpu_backend(cpu):
    class OnGpu:
        def __dlpack__(self, **kw):
            raise AssertionError("not to be asked for its tensor")

        def __dlpack_device__(self):
            return (2, 0)

    with pytest.raises(TypeError, match="CPU backend"):
        cuda.from_dlpack(OnGpu())


# ---- cuda.mapped, kernels.transpose, the driver module ------------------------------------------

def test_mapped_host_arrays_are_used_in_place(backend):
    a = np.zeros(8, dtype=np.float32)
    b = np.arange(8, dtype=np.float32)

    @cuda.jit
    def add(x, y):
        i = cuda.grid(1)
        if i < x.size:
            x[i] += y[i] + 1

    with cuda.mapped(a, b) as (da, db):
        assert isinstance(da, cuda.DeviceNDArray) and da.shape == a.shape
        add[1, 8](da, db)
        cuda.synchronize()
    np.testing.assert_array_equal(a, b + 1)
    with cuda.mapped(a[::2]) as view:  # one array: the device array itself; strides kept
        assert view.shape == (4,) and view.strides == (8,)
        np.testing.assert_array_equal(view.copy_to_host(), a[::2])
    with pytest.raises(TypeError, match="NumPy arrays"):
        with cuda.mapped([1, 2]):
            pass
    with pytest.raises(TypeError, match="stream="):
        with cuda.mapped(a, flags=1):
            pass


@pytest.mark.parametrize("dtype", [np.bool_, np.float64,
                                   np.dtype([("i", np.int32), ("j", np.float32, (3, 2))])],
                         ids=["bool", "float64", "record"])
def test_kernels_transpose(backend, dtype):
    from ptxjit.cuda.kernels.transpose import transpose

    rows, cols = 15, 14
    if dtype == np.bool_:
        h = np.random.default_rng(0).integers(0, 2, size=(rows, cols)).astype(np.bool_)
    else:
        h = np.zeros((rows, cols), dtype=dtype)
        if h.dtype.names:
            h["i"] = np.arange(rows * cols).reshape(rows, cols)
            h["j"] = np.arange(rows * cols * 6, dtype=np.float32).reshape(rows, cols, 3, 2)
        else:
            h[:] = np.arange(rows * cols).reshape(rows, cols)
    d = cuda.to_device(h)
    out = cuda.device_array_like(h.T)
    assert transpose(d, out) is out
    np.testing.assert_array_equal(out.copy_to_host(), h.T)
    np.testing.assert_array_equal(transpose(d).copy_to_host(), h.T)
    np.testing.assert_array_equal(d.T.copy_to_host(), h.T)


def test_numba_driver_module_names_ptxjits_classes(cpu):
    from ptxjit.cuda.cudadrv import driver

    assert cuda.cudadrv.driver is driver
    assert isinstance(cuda.stream(), driver.Stream)
    assert isinstance(cuda.event(), driver.Event)
    assert isinstance(cuda.get_current_device(), driver.Device)
    assert isinstance(cuda.current_context(), driver.Context)
    assert driver.CudaAPIError is CudaDriverError
    with pytest.raises(AttributeError, match="driver internals are not offered"):
        driver.MemoryPointer


def test_the_host_has_no_uuid(cpu):
    with pytest.raises(AttributeError, match="no GPU UUID"):
        cuda.get_current_device().uuid


def test_device_arrays_still_pickle_as_host_copies(backend):
    d = cuda.to_device(np.arange(3))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(d)).copy_to_host(), np.arange(3))


# ---- The CUDA backend on the fake driver ------------------------------------------------------

def test_uuid_dlpack_mapped_and_cai_sync_on_the_fake_driver(fake_cuda_env, run_python):
    script = """
        import ctypes, os
        from unittest.mock import patch
        import numpy as np
        from ptxjit import cuda

        class ForeignArray:
            def __init__(self, arr):
                self._arr = arr
                self.__cuda_array_interface__ = arr.__cuda_array_interface__

        class DLPackOnly:
            def __init__(self, a):
                self.a = a
            def __dlpack__(self, **kw):
                return self.a.__dlpack__(**kw)
            def __dlpack_device__(self):
                return self.a.__dlpack_device__()

        dev = cuda.get_current_device()
        assert dev.uuid == "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f", dev.uuid

        # DLPack on CUDA: the device is (kDLCUDA, 0), imports view the same memory.
        h = np.arange(6, dtype=np.float64)
        d = cuda.to_device(h)
        assert d.__dlpack_device__() == (2, 0)
        try:
            d.__dlpack__(stream=0)
        except ValueError as exc:
            assert "ambiguous" in str(exc)
        else:
            raise AssertionError("stream=0 accepted")
        e = cuda.from_dlpack(DLPackOnly(d))
        assert e.device_ctypes_pointer.value == d.device_ctypes_pointer.value
        np.testing.assert_array_equal(e.copy_to_host(), h)
        try:
            cuda.from_dlpack(h)  # NumPy's memory is host memory
        except TypeError as exc:
            assert "cuda.to_device" in str(exc)
        else:
            raise AssertionError("host memory taken for device memory")

        # The consumer of a producer with a stream waits for it through Stream.synchronize
        # (numba-cuda's test_consume_sync, no_sync and sync_disabled).
        Stream = cuda.cudadrv.driver.Stream
        s = cuda.stream()
        with patch.object(Stream, "synchronize", return_value=None) as sync:
            cuda.as_cuda_array(ForeignArray(cuda.device_array(10, stream=s)))
        sync.assert_called_once_with()
        with patch.object(Stream, "synchronize", return_value=None) as sync:
            cuda.as_cuda_array(ForeignArray(cuda.device_array(10)))
        sync.assert_not_called()
        with patch.object(Stream, "synchronize", return_value=None) as sync:
            cuda.as_cuda_array(ForeignArray(cuda.device_array(10, stream=s)), sync=False)
        sync.assert_not_called()

        # cuda.mapped: the fake maps host memory at its own address; unmapped on exit.
        a = np.arange(4, dtype=np.int32)
        with cuda.mapped(a) as m:
            assert m.device_ctypes_pointer.value == a.ctypes.data
            np.testing.assert_array_equal(m.copy_to_host(), a)
        with cuda.pinned(a):  # registering again works: the mapping was undone
            pass

        # Memory used by work on a non-blocking stream is freed after the legacy default stream
        # joined that stream (runtime/Stream.h).
        fake = ctypes.CDLL(os.environ["PTXJIT_LIBCUDA"])
        fake.fakeCudaOrderStep.restype = ctypes.c_long
        raw = ctypes.c_void_p()
        assert fake.cuStreamCreate(ctypes.byref(raw), 1) == 0  # CU_STREAM_NON_BLOCKING
        ext = cuda.external_stream(raw.value)
        big = cuda.device_array(1 << 20, dtype=np.float64)
        big.copy_to_device(np.ones(1 << 20), stream=ext)
        assert fake.fakeCudaOrderCount() == 1
        del big
        assert fake.fakeCudaOrderStep(0) < fake.fakeCudaOrderStep(1)
        blocking = cuda.stream()
        small = cuda.device_array(4)
        small.copy_to_device(np.ones(4), stream=blocking)
        assert fake.fakeCudaOrderCount() == 1  # blocking streams need no join
        print("ok")
    """
    assert "ok" in run_python(script, fake_cuda_env)


def test_cai_sync_can_be_turned_off_by_numbas_config_on_the_fake_driver(fake_cuda_env,
                                                                        run_python):
    # numba-cuda's test_consume_sync_disabled: a half-ported program sets numba's config.
    script = """
        import sys, types
        from unittest.mock import patch
        from ptxjit import cuda

        config = types.ModuleType("numba.cuda.core.config")
        config.CUDA_ARRAY_INTERFACE_SYNC = False
        sys.modules["numba.cuda.core.config"] = config

        class ForeignArray:
            def __init__(self, arr):
                self.__cuda_array_interface__ = arr.__cuda_array_interface__

        s = cuda.stream()
        with patch.object(cuda.cudadrv.driver.Stream, "synchronize", return_value=None) as sync:
            cuda.as_cuda_array(ForeignArray(cuda.device_array(10, stream=s)))
        sync.assert_not_called()
        print("ok")
    """
    assert "ok" in run_python(script, fake_cuda_env)


# ---- The GPU ------------------------------------------------------------------------------------

@pytest.mark.gpu
def test_ufuncs_take_and_return_foreign_arrays_as_device_arrays(cuda_target):
    @vectorize(["f8(f8, f8)"], target="cuda")
    def vadd(a, b):
        return a + b

    h = np.random.random(10)
    out = vadd(ForeignArray(cuda.to_device(h)), 6)
    assert isinstance(out, cuda.DeviceNDArray)
    np.testing.assert_array_equal(out.copy_to_host(), h + 6)
    target = cuda.device_array(h.shape)
    returned = vadd(h, 6, out=ForeignArray(target))
    assert isinstance(returned, cuda.DeviceNDArray)
    assert returned.device_ctypes_pointer.value == target.device_ctypes_pointer.value
    np.testing.assert_array_equal(target.copy_to_host(), h + 6)


@pytest.mark.gpu
def test_launches_with_foreign_arrays_synchronize_their_streams(cuda_target):
    from unittest.mock import call, patch

    @cuda.jit
    def f(x, y):
        pass

    s1, s2 = cuda.stream(), cuda.stream()
    a = ForeignArray(cuda.device_array(10, stream=s1))
    b = ForeignArray(cuda.device_array(10, stream=s2))
    with patch.object(cuda.cudadrv.driver.Stream, "synchronize", return_value=None) as sync:
        f[1, 1](a, b)
    sync.assert_has_calls([call(), call()])
    with patch.object(cuda.cudadrv.driver.Stream, "synchronize", return_value=None) as sync:
        f[1, 1](ForeignArray(cuda.device_array(10)), ForeignArray(cuda.device_array(10)))
    sync.assert_not_called()


@pytest.mark.gpu
def test_dlpack_round_trips_with_gpu_libraries(cuda_target):
    torch = pytest.importorskip("torch")
    t = torch.arange(12, dtype=torch.float32, device="cuda").reshape(3, 4)
    d = cuda.from_dlpack(t)
    assert d.__cuda_array_interface__["data"][0] == t.data_ptr()
    back = torch.from_dlpack(d[:, ::2])
    assert torch.equal(back, t[:, ::2])

    @cuda.jit
    def inc(a):
        i, j = cuda.grid(2)
        if i < a.shape[0] and j < a.shape[1]:
            a[i, j] += 1

    inc[(1, 1), (4, 4)](DLPackOnly(t))
    torch.cuda.synchronize()
    assert torch.equal(t.cpu(), torch.arange(12, dtype=torch.float32).reshape(3, 4) + 1)


@pytest.mark.gpu
def test_uuid_matches_the_driver(cuda_target):
    u = cuda.get_current_device().uuid
    assert u.startswith("GPU-") and len(u) == 40 and u.count("-") == 5


@pytest.mark.gpu
def test_mapped_on_the_gpu(cuda_target):
    a = np.zeros(1024, dtype=np.float32)

    @cuda.jit
    def fill(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] = i

    with cuda.mapped(a) as d:
        fill[4, 256](d)
    np.testing.assert_array_equal(a, np.arange(1024, dtype=np.float32))


def _widen(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i]


def test_dlpack_bfloat16_tensors_need_ml_dtypes_and_keep_their_bits(cpu):
    # DLPack's bfloat16 (type code 4, PyTorch's torch.bfloat16) becomes an array of
    # ml_dtypes.bfloat16, NumPy's host type for it; without ml_dtypes the import says so.
    bits = np.array([0x3F80, 0x4040, 0xBF00], np.uint16)  # 1.0, 3.0, -0.5
    producer = VersionedProducer(bits, readonly=False, code=4)
    try:
        import ml_dtypes
    except ImportError:
        with pytest.raises(BufferError, match="bfloat16 tensors .type code 4. need ml_dtypes"):
            cuda.from_dlpack(producer)
        return
    d = cuda.from_dlpack(producer)
    assert d.dtype == np.dtype(ml_dtypes.bfloat16) and d.shape == (3,)
    out = np.zeros(3, np.float32)
    cuda.jit(_widen)[1, 32](d, out)
    assert out.tolist() == [1.0, 3.0, -0.5]


def test_dlpack_bfloat16_round_trip(backend):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    h = np.array([1.0, 3.0, -0.5, 256.0], ml_dtypes.bfloat16)
    d = cuda.to_device(h)
    e = cuda.from_dlpack(DLPackOnly(d))  # d's own __dlpack__: type code 4
    assert e.dtype == d.dtype and e.shape == d.shape
    out = np.zeros(4, np.float32)
    cuda.jit(_widen)[1, 32](e, out)
    assert out.tolist() == [1.0, 3.0, -0.5, 256.0]


@pytest.mark.gpu
def test_pytorch_bfloat16_tensors_through_dlpack(cuda_target):
    torch = pytest.importorskip("torch")
    pytest.importorskip("ml_dtypes")
    t = torch.tensor([1.0, 3.0, -0.5, 256.0], dtype=torch.bfloat16, device="cuda")
    out = np.zeros(4, np.float32)
    for arg in (t, DLPackOnly(t)):  # PyTorch's __cuda_array_interface__ refuses bfloat16
        out[:] = 0
        cuda.jit(_widen)[1, 32](arg, out)  # a kernel argument, as numba-cuda takes it
        assert out.tolist() == [1.0, 3.0, -0.5, 256.0]
    d = cuda.from_dlpack(t)
    assert d.__cuda_array_interface__["data"][0] == t.data_ptr()
    back = torch.from_dlpack(d)  # and back: DLPack's bfloat16
    assert back.dtype == torch.bfloat16 and torch.equal(back, t)


class _OpaqueInterfaceAndDLPack(VersionedProducer):
    """As PyTorch's bfloat16 tensors: __cuda_array_interface__ with the opaque typestr "<V2",
    and DLPack naming bfloat16 (type code 4)."""

    def __init__(self, bits):
        super().__init__(bits, readonly=False, code=4)
        self.__cuda_array_interface__ = {"shape": bits.shape, "typestr": "<V2", "version": 3,
                                         "data": (bits.ctypes.data, False), "strides": None}


def test_an_opaque_interface_typestr_falls_back_to_dlpack(cpu):
    bits = np.array([0x3F80, 0x4040, 0xBF00], np.uint16)  # 1.0, 3.0, -0.5
    out = np.zeros(3, np.float32)
    try:
        import ml_dtypes  # noqa: F401
    except ImportError:
        # the DLPack import was tried: it needs ml_dtypes for bfloat16
        with pytest.raises(TypeError, match="DLPack tensor could not be imported.*ml_dtypes"):
            cuda.jit(_widen)[1, 32](_OpaqueInterfaceAndDLPack(bits), out)
        with pytest.raises(BufferError, match="ml_dtypes"):
            cuda.as_cuda_array(_OpaqueInterfaceAndDLPack(bits))
        return
    cuda.jit(_widen)[1, 32](_OpaqueInterfaceAndDLPack(bits), out)
    assert out.tolist() == [1.0, 3.0, -0.5]
    assert cuda.as_cuda_array(_OpaqueInterfaceAndDLPack(bits)).dtype.name == "bfloat16"


@pytest.mark.gpu
def test_cupy_bfloat16_arrays_name_their_type_with_their_dtype(cuda_target):
    # CuPy's bfloat16 arrays: typestr "<V2" and an ml_dtypes.bfloat16 dtype of their own
    cp = pytest.importorskip("cupy")
    ml_dtypes = pytest.importorskip("ml_dtypes")
    a = cp.asarray(np.array([1.0, 3.0, -0.5], ml_dtypes.bfloat16))
    d = cuda.as_cuda_array(a)
    assert d.dtype == np.dtype(ml_dtypes.bfloat16)
    assert d.__cuda_array_interface__["data"][0] == a.data.ptr
    out = np.zeros(3, np.float32)
    for arg in (a, d):
        out[:] = 0
        cuda.jit(_widen)[1, 32](arg, out)
        assert out.tolist() == [1.0, 3.0, -0.5]
