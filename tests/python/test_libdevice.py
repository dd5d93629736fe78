"""ptxjit.cuda.libdevice: NVIDIA's libdevice functions by name in kernels (Numba's
cuda.libdevice), on both backends: scalar, UniTuple and Tuple results, argument conversion, and
clear errors."""
import math

import numpy as np
import pytest

from ptxjit import cuda, errors, types
from ptxjit.cuda import libdevice


def use_sincos(s, c, x):
    i = cuda.grid(1)
    if i < len(x):
        sr, cr = libdevice.sincos(x[i])
        s[i] = sr
        c[i] = cr


def use_frexp(frac, exp, x):
    i = cuda.grid(1)
    if i < len(x):
        fracr, expr = libdevice.frexp(x[i])
        frac[i] = fracr
        exp[i] = expr


def use_sad(r, x, y, z):
    i = cuda.grid(1)
    if i < len(x):
        r[i] = libdevice.sad(x[i], y[i], z[i])


def test_unituple_result(backend):
    arr = np.arange(100, dtype=np.float64)
    s, c = np.zeros_like(arr), np.zeros_like(arr)
    cuda.jit(use_sincos)[4, 32](s, c, arr)
    np.testing.assert_allclose(np.sin(arr), s)
    np.testing.assert_allclose(np.cos(arr), c)


def test_tuple_result(backend):
    arr = np.linspace(1.0, 10.0, 100)
    frac, exp = np.zeros_like(arr), np.zeros(100, np.int32)
    cuda.jit(use_frexp)[4, 32](frac, exp, arr)
    f, e = np.frexp(arr)
    np.testing.assert_array_equal(f, frac)
    np.testing.assert_array_equal(e, exp)


def test_scalar_result_converts_arguments(backend):
    x, y, z = np.arange(0, 200, 2), np.arange(50, 150), np.arange(15, 115)  # int64 → int32
    r = np.zeros_like(x)
    cuda.jit(use_sad)[4, 32](r, x, y, z)
    np.testing.assert_array_equal(np.abs(x - y) + z, r)


def families(out, f, d, i):
    out[0] = libdevice.fadd_rd(f[0], f[1])
    out[1] = libdevice.fadd_ru(f[0], f[1])
    out[2] = libdevice.float2int_rn(f[2])
    out[3] = libdevice.float2int_rz(f[3])
    out[4] = libdevice.float2half_rn(f[4])
    out[5] = libdevice.brev(i[0])
    out[6] = libdevice.clz(i[1])
    out[7] = libdevice.popc(i[2])
    out[8] = libdevice.rsqrt(d[0])
    out[9] = libdevice.double2int_rn(d[1])
    s, c = libdevice.fast_sincosf(f[5])
    out[10] = s * s + c * c
    out[11] = libdevice.isnand(d[2])


def test_function_families(backend):
    out = np.zeros(12, np.float64)
    f = np.array([1.0, 1e-8, 2.5, -1.7, 1.0, 0.5], np.float32)
    d = np.array([4.0, 1e20, np.nan])
    i = np.array([1, 0, -1], np.int32)
    cuda.jit(families)[1, 1](out, f, d, i)
    assert out[0] < out[1] and out[0] == 1.0  # rounding down vs up
    assert out[2:4].tolist() == [2.0, -1.0]
    assert out[4] == 0x3C00  # float16 bits of 1.0
    assert out[5] == -2**31 and out[6] == 32 and out[7] == 32
    assert out[8] == 0.5 and out[9] == 2**31 - 1  # saturated
    assert abs(out[10] - 1.0) < 1e-6 and out[11] != 0


def test_signatures_and_listing():
    assert libdevice.sincos.signature == "sincos(float64) -> UniTuple(float64 x 2)"
    assert libdevice.frexpf.signature == "frexpf(float32) -> Tuple(float32, int32)"
    assert "sinf" in dir(libdevice) and len([n for n in dir(libdevice) if not n[0] == "_"]) > 300
    import ptxjit.cuda.libdevice as again
    from ptxjit.cuda.libdevice import sinf

    assert again is libdevice and sinf is libdevice.sinf
    with pytest.raises(AttributeError, match="no attribute 'sine'"):
        libdevice.sine
    with pytest.raises(RuntimeError, match="only be used inside a kernel"):
        libdevice.sinf(1.0)


def wrong_count(r, x):
    r[0] = libdevice.sinf(x[0], x[1])


def wrong_type(r, x):
    r[0] = libdevice.sinf(x[0])


def keywords(r, x):
    r[0] = libdevice.sinf(x=x[0])


def test_errors_name_the_function_and_types(cpu):
    sig = (types.float32[::1], types.float32[::1])
    with pytest.raises(errors.TypingError, match=r"libdevice.sinf cannot be called with "
                                                 r"\(float32, float32\): it takes 1"):
        cuda.compile_ptx(wrong_count, sig)
    with pytest.raises(errors.TypingError, match=r"complex64\): argument 1 must be a real"):
        cuda.compile_ptx(wrong_type, (types.float32[::1], types.complex64[::1]))
    with pytest.raises(errors.TypingError, match="positional arguments only"):
        cuda.compile_ptx(keywords, sig)


def test_every_function_compiles_to_ptx(cpu, needs_libdevice):
    # Each function, called with its own parameter types, stores its results (Numba's
    # TestLibdeviceCompilation, in one test).
    T = {"float32": types.float32, "float64": types.float64, "int16": types.int16,
         "int32": types.int32, "int64": types.int64}
    count = 0
    for name in dir(libdevice):
        fn = getattr(libdevice, name)
        if not isinstance(fn, libdevice.LibdeviceFunction):
            continue
        args_text, ret_text = fn.signature[len(name) + 1:].split(") -> ")
        ins = [T[a] for a in args_text.split(", ") if a]
        nouts = ret_text.count(",") + 1 if ret_text.startswith("Tuple") else (
            int(ret_text.split(" x ")[1][:-1]) if ret_text.startswith("UniTuple") else 1)
        src = (f"def k(out, {', '.join('a%d' % k for k in range(len(ins)))}):\n"
               f"    r = libdevice.{name}({', '.join('a%d' % k for k in range(len(ins)))})\n" +
               ("    out[0] = r\n" if nouts == 1 else
                "".join(f"    out[{k}] = r[{k}]\n" for k in range(nouts))))
        ns = {"libdevice": libdevice}
        exec(src, ns)
        ptx, _ = cuda.compile_ptx(ns["k"], (types.float64[::1], *ins))
        assert "ld.param" in ptx and "st.global" in ptx, name
        count += 1
    assert count == 317


def test_precise_square_roots_unless_fastmath(needs_libdevice):
    """libdevice asks __nvvm_reflect("__CUDA_PREC_SQRT"): precise square roots (sqrt.rn), as
    NVVM gives numba-cuda, except with fastmath (LLVM's NVVMReflect alone would answer 0)."""
    import math

    def hyp(a, b):
        return math.hypot(a, b)

    def sq(a):
        return libdevice.sqrtf(a)

    for f, sig in [(hyp, (types.float32, types.float32)), (sq, (types.float32,))]:
        ptx = cuda.compile_ptx(f, sig, device=True)[0]
        assert "sqrt.rn.f32" in ptx and "sqrt.approx" not in ptx, ptx
        fast = cuda.compile_ptx(f, sig, device=True, fastmath=True)[0]
        assert "sqrt.approx" in fast, fast


def test_fastmath_tanh_is_approximate(needs_libdevice):
    import math

    def th(x):
        return math.tanh(x)

    fast = cuda.compile_ptx(th, (types.float32,), device=True, fastmath=True)[0]
    prec = cuda.compile_ptx(th, (types.float32,), device=True)[0]
    assert "tanh.approx.f32" in fast and "tanh.approx" not in prec
