"""Raw pointers: numba's ``types.CPointer(dtype)`` and ``types.voidptr`` in signatures, a kernel
taking integers as addresses (numba-cuda's test_dispatcher_cpointer_arguments), ``p[i]`` loads
and stores, pointers passed to device functions, the PTX, ``types.IntegerLiteral``, numba's own
type objects, and the errors. On the CPU backend the addresses are host addresses
(``a.ctypes.data``)."""
import re
import sys
import types as pytypes

import numpy as np
import pytest

from ptxjit import carray, cuda, errors, farray, types
from ptxjit.types import float32, int32, int64, uint32, void


def _line_of(func, text):
    """The line number of the first source line of `func` containing `text`."""
    import inspect

    lines, start = inspect.getsourcelines(func)
    for k, line in enumerate(lines):
        if text in line:
            return start + k
    raise AssertionError(f"{text!r} not in {func.__name__}")


# --------------------------------------------------------------------------------------------
# Type objects and signature text
# --------------------------------------------------------------------------------------------


def test_cpointer_prints_and_compares_as_numba():
    p = types.CPointer(types.int32)
    assert str(p) == repr(p) == "int32*"
    assert isinstance(p, types.CPointer) and not isinstance(p, types.Scalar)
    assert p.dtype is types.int32
    assert p == types.CPointer(int32) == types.CPointer("int32")
    assert hash(p) == hash(types.CPointer(int32))
    assert p != types.CPointer(types.float32) and p != types.int32 and p != types.voidptr
    assert str(types.CPointer(types.float64)) == "float64*"
    with pytest.raises(TypeError, match="scalar element type"):
        types.CPointer(types.float32[:])


def test_voidptr_and_integer_literal():
    assert str(types.voidptr) == "void*"
    assert isinstance(types.voidptr, types.RawPointer)
    assert not isinstance(types.voidptr, types.CPointer)
    lit = types.IntegerLiteral(5)
    assert lit.literal_value == 5 and lit.literal_type is types.int64
    assert str(lit) == "Literal[int](5)"
    assert isinstance(lit, types.Integer) and lit != types.int64
    assert types.IntegerLiteral(2**63).literal_type is types.uint64
    with pytest.raises(TypeError):
        types.IntegerLiteral(1.5)


def test_signature_text_of_pointers():
    ptr = types.CPointer(types.int32)
    sig = void(ptr, int32, ptr, ptr, uint32)
    assert types.signature_text(sig) == "void(int32*, int32, int32*, int32*, uint32)"
    assert repr(sig) == "(int32*, int32, int32*, int32*, uint32) -> none"
    assert types.signature_text((ptr, int64)) == "(int32*, int64)"
    assert types.signature_text((types.voidptr,)) == "(void*)"
    # an IntegerLiteral stands for its type: kernels are not specialized on values
    assert types.signature_text((types.IntegerLiteral(7),)) == "(int64)"


@pytest.mark.parametrize("text, expected", [
    ("void(int32*, int64)", [types.CPointer(int32), int64]),
    ("(float64*, void*)", [types.CPointer(types.float64), types.voidptr]),
    ("void(CPointer(uint8), voidptr)", [types.CPointer(types.uint8), types.voidptr]),
    ("(f4*,) -> none", [types.CPointer(float32)]),
])
def test_pointer_signature_strings_parse(cpu, text, expected):
    def one(p):
        pass

    def two(p, q):
        pass

    kernel = cuda.jit(text)(one if len(expected) == 1 else two)
    assert list(kernel.signatures[0]) == expected


@pytest.mark.parametrize("text, words", [
    ("void(int32**)", "pointers to pointers"),
    ("void(int32*[:])", "array element"),
    ("void(CPointer(float32[:]))", "')' closing CPointer"),
])
def test_bad_pointer_signature_strings(cpu, text, words):
    with pytest.raises(errors.TypingError, match=re.escape(words)):
        cuda.jit(text)(lambda p: None)


# --------------------------------------------------------------------------------------------
# numba-cuda's test_dispatcher_cpointer_arguments, on host addresses
# --------------------------------------------------------------------------------------------


def test_dispatcher_cpointer_arguments(cpu):
    ptr = types.CPointer(types.int32)
    sig = void(ptr, int32, ptr, ptr, uint32)

    @cuda.jit(sig)
    def axpy(r, a, x, y, n):
        i = cuda.grid(1)
        if i < n:
            r[i] = a * x[i] + y[i]

    N = 16
    a = 5
    hx = np.arange(10, dtype=np.int32)
    hy = np.arange(10, dtype=np.int32) * 2
    hr = np.zeros_like(hx)
    axpy[1, 32](hr.ctypes.data, a, hx.ctypes.data, hy.ctypes.data, N // 2 + 2)
    np.testing.assert_array_equal(hr, a * hx + hy)
    # NumPy integers are addresses too; a second launch takes the direct path
    hr2 = np.zeros_like(hx)
    axpy[1, 32](np.uint64(hr2.ctypes.data), np.int32(2), np.int64(hx.ctypes.data),
                hy.ctypes.data, np.uint32(10))
    np.testing.assert_array_equal(hr2, 2 * hx + hy)
    hr3 = np.zeros_like(hx)
    axpy[1, 32](hr3.ctypes.data, 3, hx.ctypes.data, hy.ctypes.data, 10)
    np.testing.assert_array_equal(hr3, 3 * hx + hy)


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, np.int64, np.float32,
                                   np.float64, np.complex64, np.bool_])
def test_loads_and_stores_of_each_dtype(cpu, dtype):
    p = types.CPointer(types._SCALARS[np.dtype(dtype).name])

    @cuda.jit(void(p, p, int64))
    def copy_reversed(src, dst, n):
        i = cuda.grid(1)
        if i < n:
            dst[n - 1 - i] = src[i]

    src = (np.arange(1, 9) % 3).astype(dtype)
    dst = np.zeros_like(src)
    copy_reversed[1, 8](src.ctypes.data, dst.ctypes.data, 8)
    np.testing.assert_array_equal(dst, src[::-1])


def test_stores_convert_as_array_stores(cpu):
    @cuda.jit(void(types.CPointer(types.int16), types.CPointer(types.float32), float32))
    def k(pi, pf, v):
        pi[0] = v          # float -> int16 truncates, as a16[0] = v does
        pi[1] = 70000      # a literal wraps as in an int16 array
        pf[0] = pi[0] * 2  # int16 * weak int -> int16, then to float32
        pf[1] = 1.5

    a16 = np.zeros(2, np.int16)
    f32 = np.zeros(2, np.float32)
    k[1, 1](a16.ctypes.data, f32.ctypes.data, np.float32(-7.75))
    ref = np.zeros(2, np.int16)
    ref[0] = np.float32(-7.75).astype(np.int16)
    ref[1] = np.int64(70000).astype(np.int16)
    np.testing.assert_array_equal(a16, ref)
    np.testing.assert_array_equal(f32, [ref[0] * 2, 1.5])


def test_negative_index_is_the_element_before(cpu):
    @cuda.jit(void(types.CPointer(types.float64)))
    def k(p):
        p[-1] = p[0] + 1.0

    a = np.array([10.0, 20.0, 30.0])
    k[1, 1](a[1:].ctypes.data)
    np.testing.assert_array_equal(a, [21.0, 20.0, 30.0])


# --------------------------------------------------------------------------------------------
# Device functions
# --------------------------------------------------------------------------------------------


@cuda.jit(device=True)
def _lazy_load(p, i):
    return p[i]


@cuda.jit(float32(types.CPointer(float32), int64), device=True)
def _declared_load(p, i):
    return p[i]


@cuda.jit(device=True)
def _lazy_store(p, i, v):
    p[i] = v


@cuda.jit(int64(types.voidptr), device=True)
def _takes_voidptr(p):
    return 1


def test_pointers_passed_to_device_functions(cpu):
    fp = types.CPointer(float32)

    @cuda.jit(void(fp, fp, int64))
    def k(src, dst, n):
        i = cuda.grid(1)
        if i < n:
            _lazy_store(dst, i, _lazy_load(src, i) + _declared_load(src, i) + _takes_voidptr(src))

    src = np.arange(6, dtype=np.float32)
    dst = np.zeros_like(src)
    k[1, 8](src.ctypes.data, dst.ctypes.data, 6)
    np.testing.assert_array_equal(dst, 2 * src + 1)


def test_voidptr_parameter_passes_through(cpu):
    @cuda.jit(void(types.voidptr, types.CPointer(int64)))
    def k(v, out):
        out[0] = _takes_voidptr(v) + 41

    out = np.zeros(1, np.int64)
    k[1, 1](12345, out.ctypes.data)
    assert out[0] == 42


# --------------------------------------------------------------------------------------------
# PTX
# --------------------------------------------------------------------------------------------


def test_ptx_loads_and_stores_through_the_parameter():
    def axpy(r, a, x, n):
        i = cuda.grid(1)
        if i < n:
            r[i] = a * x[i]

    ptr = types.CPointer(types.int32)
    ptx, resty = cuda.compile_ptx(axpy, (ptr, int32, ptr, uint32))
    assert resty == void
    params = re.findall(r"\.param \.(\w+) (\w+)", ptx)
    assert [p[0] for p in params] == ["u64", "u32", "u64", "u32"], params
    assert re.search(r"ld\.param\.u64\s+%rd\d+, \[" + params[0][1] + r"\]", ptx), ptx
    assert re.search(r"ld(\.global)?(\.nc)?\.u32", ptx), ptx
    assert re.search(r"st(\.global)?\.u32", ptx), ptx


# --------------------------------------------------------------------------------------------
# numba's own type objects (numba is not installed: imitated by module name, as
# test_numba_types.py does)
# --------------------------------------------------------------------------------------------


def _fake_numba():
    mod = pytypes.ModuleType("numba.core.types.fakeptr")

    def make(name, init):
        cls = type(name, (), {"__init__": init, "__module__": "numba.core.types.fakeptr",
                              "__repr__": lambda self: self.name})
        setattr(mod, name, cls)
        return cls

    def scalar_init(self, name):
        self.name = name

    def cpointer_init(self, dtype, addrspace=None):
        self.dtype, self.addrspace = dtype, addrspace
        self.name = f"{dtype.name}*" if addrspace is None else f"{dtype.name} addrspace(1)*"

    def literal_init(self, value):
        self.literal_value, self.literal_type = value, mod.Integer("int64")
        self.name = f"Literal[int]({value})"

    make("Integer", scalar_init)
    make("RawPointer", scalar_init)
    make("CPointer", cpointer_init)
    make("IntegerLiteral", literal_init)
    return mod


def test_numba_pointer_objects_map():
    nb = _fake_numba()
    nb_int32 = nb.Integer("int32")
    p = nb.CPointer(nb_int32)
    assert types.as_type(p) == types.CPointer(int32)
    assert types.CPointer(int32) == p and isinstance(p, types.CPointer)
    assert types.as_type(nb.RawPointer("void*")) is types.voidptr
    assert types.as_type(nb.IntegerLiteral(5)) is types.int64
    assert types.signature_text((p, nb.RawPointer("void*"), nb.IntegerLiteral(3))) == \
        "(int32*, void*, int64)"
    assert types.CPointer(nb_int32) == types.CPointer(int32)
    with pytest.raises(TypeError, match="address space"):
        types.as_type(nb.CPointer(nb_int32, addrspace=1))


def test_numba_pointer_signature_launches(cpu):
    nb = _fake_numba()
    p = nb.CPointer(nb.Integer("int64"))

    @cuda.jit((p, nb.IntegerLiteral(0)))
    def k(out, v):
        out[0] = v + 1

    out = np.zeros(1, np.int64)
    k[1, 1](out.ctypes.data, 41)
    assert out[0] == 42


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


def test_non_integer_argument_names_the_argument(cpu):
    @cuda.jit(void(types.CPointer(float32), int64))
    def k(dst, n):
        dst[0] = n

    a = np.zeros(1, np.float32)
    with pytest.raises(TypeError, match=r"argument 'dst' of type float64 cannot be passed as "
                                        r"float32\* \(a pointer parameter takes an integer"):
        k[1, 1](1.5, 1)
    with pytest.raises(TypeError, match=r"argument 'dst' of type array\(float32, 1d, C\)"):
        k[1, 1](a, 1)  # an array is not its address
    with pytest.raises(TypeError, match=r"argument 'dst' of type int32"):
        k[1, 1](np.int32(5), 1)  # too narrow to hold an address


def _typing_error(sig, func):
    with pytest.raises(errors.TypingError) as info:
        kernel = cuda.jit(sig)(func)
        kernel[1, 1](*([0] * func.__code__.co_argcount))
    return info.value


def test_indexing_a_voidptr_is_a_typing_error(cpu):
    def k(p):
        p[0] = 1

    err = _typing_error(void(types.voidptr), k)
    assert "cannot index void*" in str(err) and "CPointer(dtype)" in str(err)
    assert err.filename == __file__ and err.lineno == _line_of(k, "p[0] = 1")
    assert "p[0] = 1" in str(err).splitlines()[1]


def test_float_index_is_a_typing_error(cpu):
    def k(p, x):
        p[0] = p[x]

    err = _typing_error(void(types.CPointer(int32), types.float64), k)
    assert "cannot index int32* with float64" in str(err)
    assert err.lineno == _line_of(k, "p[x]")


def test_pointer_arithmetic_is_a_typing_error(cpu):
    def k(p):
        q = p + 1
        q[0] = 1

    err = _typing_error(void(types.CPointer(int32)), k)
    assert "pointer arithmetic is not supported" in str(err) and "int32*" in str(err)
    assert err.lineno == _line_of(k, "p + 1")


def test_storing_complex_into_a_real_pointer_is_a_typing_error(cpu):
    def k(p):
        p[0] = 1j

    err = _typing_error(void(types.CPointer(types.float64)), k)
    assert "cannot store" in str(err) and "float64*" in str(err)


def test_a_lazy_kernel_never_sees_a_pointer(cpu):
    # Without a signature an int argument is an int64, which cannot be indexed.
    @cuda.jit
    def k(p):
        p[0] = 1

    with pytest.raises(errors.TypingError, match=r"cannot store Literal\[int\] into int64"):
        k[1, 1](np.zeros(1).ctypes.data)


# ---- carray / farray: an array over a raw pointer's memory (numba's numpy_support) ----

@pytest.mark.parametrize("make", [carray, farray])
def test_carray_farray_of_pointer(backend, make):
    @cuda.jit(types.void(types.CPointer(types.float32)))
    def add(a_ptr):
        a = make(a_ptr, (1,), dtype=cuda.float32)
        a[0] += 1.2

    a = cuda.to_device(np.array([0.0], dtype=np.float32))
    add[1, 1](int(a.gpu_data.device_pointer))
    cuda.synchronize()
    assert a.copy_to_host()[0] == np.float32(1.2)


def test_carray_farray_shapes_and_layouts(backend):
    @cuda.jit(types.void(types.CPointer(types.int32), types.int64, types.int64,
                         types.int64[:, :], types.int64[:, :]))
    def k(p, n, m, c_out, f_out):
        c = carray(p, (n, m))          # run-time shape, dtype from the pointer
        f = farray(p, (n, m), np.int32)
        for i in range(n):
            for j in range(m):
                c_out[i, j] = c[i, j]
                f_out[i, j] = f[i, j]

    data = cuda.to_device(np.arange(6, dtype=np.int32))
    c_out = np.zeros((2, 3), np.int64)
    f_out = np.zeros((2, 3), np.int64)
    k[1, 1](data.gpu_data.device_pointer, 2, 3, c_out, f_out)
    np.testing.assert_array_equal(c_out, np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(f_out, np.arange(6).reshape(2, 3, order="F"))
    assert ".visible .entry" in k.inspect_ptx(k.signatures[0])


def test_carray_errors(cpu):
    with pytest.raises(errors.TypingError, match=r"carray cannot be called with .*dtype equal to the "
                                          r"pointer's \(float32\), not float64"):
        @cuda.jit(types.void(types.CPointer(types.float32)))
        def mismatch(p):
            a = carray(p, 1, np.float64)
            a[0] = 1

    with pytest.raises(errors.TypingError, match=r"farray cannot be called with .*a dtype for a void"):
        @cuda.jit(types.void(types.voidptr))
        def void(p):
            a = farray(p, 1)
            a[0] = 1

    with pytest.raises(RuntimeError, match="inside a kernel"):
        carray(0, 1)


def test_gpu_data_device_pointer(backend):
    d = cuda.to_device(np.arange(4.0))
    g = d.gpu_data
    assert int(g.device_pointer) == d.device_ctypes_pointer.value != 0
    assert g.device_ctypes_pointer.value == d.device_ctypes_pointer.value
    assert g.size == 32 and g.owner is d
