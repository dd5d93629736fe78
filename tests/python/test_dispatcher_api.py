"""Numba's dispatcher API on kernels: overloads, specialize/specializations, compile, the kernel
attributes (get_regs_per_thread and friends), inspect_asm and inspect_sass."""
import math
import re
import numpy as np
import pytest

from ptxjit import cuda, errors, float32, float64, int32, int64, types, void


def pi_sin(x, n):
    i = cuda.grid(1)
    if i < n:
        x[i] = 3.14 * math.sin(x[i])


def smem(x):
    s = cuda.shared.array(100, float32)
    i = cuda.threadIdx.x
    s[i] = x[i]
    cuda.syncthreads()
    x[i] = s[99 - i]


def lmem(x):
    tmp = cuda.local.array(64, int64)
    for k in range(64):
        tmp[k] = x[k % x.size] * k
    x[0] = tmp[x[1] % 64]


def test_overloads_follow_the_compiled_signatures(backend, needs_libdevice):
    k = cuda.jit(pi_sin)
    assert k.overloads == {}
    k[1, 4](np.zeros(4, np.float32), 4)
    k[1, 4](np.zeros(4, np.float64), 4)
    assert set(k.overloads) == {(float32[::1], int64), (float64[::1], int64)}
    ov = k.overloads[(float32[::1], int64)]
    assert ov.signature == void(float32[::1], int64)
    assert ov.py_func is pi_sin
    assert ".entry" in ov.inspect_asm() and "define" in ov.inspect_llvm()
    with pytest.raises(TypeError, match=r"compiled for compute capability \(9, 0\) \(the oldest "
                                        r"of the visible devices\).*cc=\(8, 0\)"):
        ov.inspect_asm(cc=(8, 0))


def test_type_annotation_maps_each_local_to_its_type(backend):
    # Numba's overloads[sig]._type_annotation.typemap: the Python locals (not the compiler's
    # own temporaries), typed for that signature.
    @cuda.jit(void(int32[::1], float64))
    def k(x, v):
        loc = cuda.local.array(4, dtype=np.int16)
        total = v * 2
        for j in range(4):
            loc[j] = j
        x[0] = loc[3] + int32(total)

    typemap = k.overloads[(int32[::1], float64)]._type_annotation.typemap
    assert typemap["x"] == int32[::1] and typemap["v"] == float64
    assert typemap["loc"].dtype == types.int16 and typemap["loc"].ndim == 1
    assert typemap["total"] == float64 and typemap["j"] == int64
    assert not [name for name in typemap if name.startswith("$")]
    x = np.zeros(1, np.int32)
    k[1, 1](x, 1.5)
    assert x[0] == 6


def test_specialize_makes_one_kernel_per_type_tuple(backend):
    k = cuda.jit(pi_sin)
    assert not k.specialized and len(k.specializations) == 0
    k32 = k.specialize(float32[::1], int64)
    assert k32.specialized and k32.signatures == [(float32[::1], int64)]
    assert k.specialize(float32[::1], int64) is k32
    # values are typed as a launch types them
    kv = k.specialize(np.zeros(3, np.float64), 3)
    assert kv.signatures == [(float64[::1], int64)]
    assert len(k.specializations) == 2 and k.signatures == []
    x = np.ones(4, np.float32)
    k32[1, 4](x, 4)
    np.testing.assert_allclose(x, 3.14 * np.sin(np.float32(1)), rtol=1e-6)
    with pytest.raises(RuntimeError, match="already specialized"):
        k32.specialize(float64[::1], int64)
    with pytest.raises(RuntimeError, match="already specialized"):
        cuda.jit("void(float32[::1], int64)")(pi_sin).specialize(float32[::1], int64)
    with pytest.raises(errors.TypingError, match="cannot determine"):
        k.specialize("text")


def test_specialize_keeps_the_options(cpu):
    k = cuda.jit(fastmath=True)(pi_sin)
    assert k.specialize(float32[::1], int64).targetoptions["fastmath"] is True


def test_compile_adds_a_signature(backend):
    k = cuda.jit(pi_sin)
    ov = k.compile(void(float64[::1], int64))
    assert k.signatures == [(float64[::1], int64)]
    assert ov.argument_types == (float64[::1], int64)
    assert k.compile("void(float32[:], int32)").argument_types == (float32[:], int32)
    assert len(k.overloads) == 2
    with pytest.raises(errors.TypingError):
        k.compile(void(types.complex128, int64))  # sin of an array element is fine; this is not
    d = cuda.jit(device=True)(lambda a: a + 1)
    d.compile((int32,))
    assert d.signatures == [(int32,)]


def test_inspect_asm_is_ptx(cpu, needs_libdevice):
    k = cuda.jit("void(float32[::1], int64)")(pi_sin)
    asm = k.inspect_asm()
    assert list(asm) == [(float32[::1], int64)] and ".entry" in asm[(float32[::1], int64)]
    assert k.inspect_asm(void(float32[::1], int64)) == asm[(float32[::1], int64)]
    assert k.inspect_asm((float32[::1], int64)) == asm[(float32[::1], int64)]


def test_inspect_asm_of_a_compiled_kernel_takes_its_own_compute_capability(cpu, needs_libdevice):
    k = cuda.jit("void(float32[::1], int64)")(pi_sin)
    ov = k.overloads[(float32[::1], int64)]
    ptx = ov.inspect_asm()
    major, minor = (int(c) for c in re.search(r"\.target sm_(\d+)(\d)", ptx).groups())
    assert ov.inspect_asm((major, minor)) == ptx  # numba's inspect_asm(current cc)
    with pytest.raises(TypeError, match=r"compute capability \(\d+, \d\).*cuda.compile_ptx"):
        ov.inspect_asm((major - 1, 0))
    with pytest.raises(TypeError, match="cc must be a"):
        ov.inspect_asm("sm_90")


def test_configure_is_the_launch_configuration(backend):
    k = cuda.jit(smem)
    x = np.arange(100, dtype=np.float32)
    k.configure(1, 100)(x)
    assert x[0] == 99 and x[99] == 0
    k.configure((1,), (100,), 0, 0)(x)
    assert x[0] == 0
    # older numba's name of the same mapping
    assert list(k.definitions) == list(k.overloads) == [(float32[::1],)]


def test_inspect_types_prints_the_typed_code_of_each_signature(cpu):
    import io

    k = cuda.jit(pi_sin)
    k[1, 4](np.zeros(4, np.float32), 4)
    k[1, 4](np.zeros(4), 4)
    out = io.StringIO()
    k.inspect_types(file=out)
    text = out.getvalue()
    assert "pi_sin (array(float32, 1d, C), int64)" in text
    assert "pi_sin (array(float64, 1d, C), int64)" in text
    assert "#         x[i] = 3.14 * math.sin(x[i])" in text  # the source above its code
    assert re.search(r"GetItem %\d+\[%\d+\] : float32", text)
    out = io.StringIO()
    k.inspect_types(file=out, signature=(float64[::1], int64))
    assert "float32" not in out.getvalue() and "pi_sin (array(float64, 1d, C), int64)" in \
        out.getvalue()
    with pytest.raises(NotImplementedError, match="pretty=True"):
        k.inspect_types(pretty=True)
    with pytest.raises(ValueError, match="style"):
        k.inspect_types(style="monokai")


def _have_sass_tools():
    from ptxjit import _dispatcher

    return _dispatcher._toolkit_tool("ptxas") and (
        _dispatcher._toolkit_tool("cuobjdump") or _dispatcher._toolkit_tool("nvdisasm"))


def test_device_functions_have_no_sass_of_their_own(cpu):
    d = cuda.jit(device=True)(lambda a: a)
    with pytest.raises(RuntimeError, match="Cannot inspect SASS of a device function"):
        d.inspect_sass((int32,))


@pytest.mark.skipif(not _have_sass_tools(), reason="no CUDA toolkit with cuobjdump/nvdisasm")
def test_inspect_sass(cpu):
    k = cuda.jit("void(float32[::1], int64)")(pi_sin)
    sass = k.inspect_sass(void(float32[::1], int64))
    assert "Function" in sass and ("EXIT" in sass or "RET" in sass)
    assert list(k.inspect_sass()) == [(float32[::1], int64)]


def test_inspect_sass_without_the_toolkit_says_what_it_needs(cpu, monkeypatch, needs_libdevice):
    from ptxjit import _dispatcher

    monkeypatch.setattr(_dispatcher, "_toolkit_tool", lambda name: None)
    k = cuda.jit("void(float32[::1], int64)")(pi_sin)
    with pytest.raises(RuntimeError, match="needs the CUDA toolkit's ptxas"):
        k.inspect_sass()
    with pytest.raises(RuntimeError, match="inspect_sass_cfg needs the CUDA toolkit's ptxas and "
                                           "nvdisasm"):
        k.inspect_sass_cfg()
    with pytest.raises(RuntimeError, match="inspect_sass_cfg needs"):
        k.overloads[(float32[::1], int64)].inspect_sass_cfg()


def _have_cfg_tools():
    from ptxjit import _dispatcher

    return _dispatcher._toolkit_tool("ptxas") and _dispatcher._toolkit_tool("nvdisasm")


@pytest.mark.skipif(not _have_cfg_tools(), reason="needs the CUDA toolkit's ptxas and nvdisasm")
def test_inspect_sass_cfg_is_dot(cpu):
    k = cuda.jit("void(float32[::1], int64)")(pi_sin)
    cfg = k.inspect_sass_cfg(void(float32[::1], int64))
    assert cfg.lstrip().startswith("digraph") and "->" in cfg
    assert list(k.inspect_sass_cfg()) == [(float32[::1], int64)]


def test_kernel_attributes_need_the_cuda_backend(cpu):
    k = cuda.jit("void(float32[::1], int64)")(pi_sin)
    with pytest.raises(errors.UnsupportedError, match="CPU backend"):
        k.get_regs_per_thread()
    d = cuda.jit(device=True)(lambda a: a)
    with pytest.raises(errors.UnsupportedError, match="device function"):
        d.get_regs_per_thread((int32,))


@pytest.mark.gpu
def test_kernel_attributes_on_the_gpu(cuda_target):
    k = cuda.jit(pi_sin)
    k[1, 4](np.zeros(4, np.float32), 4)
    k[1, 4](np.zeros(4, np.float64), 4)
    sig32, sig64 = void(float32[::1], int64), void(float64[::1], int64)
    r32, r64 = k.get_regs_per_thread(sig32), k.get_regs_per_thread(sig64)
    assert isinstance(r32, int) and r32 > 0 and r64 > 0
    assert k.get_regs_per_thread() == {sig32.args: r32, sig64.args: r64}
    assert k.overloads[sig32.args].regs_per_thread == r32
    assert k.get_max_threads_per_block(sig32) > 0
    assert k.get_const_mem_size(sig32) >= 0
    ks = cuda.jit("void(float32[::1])")(smem)
    assert ks.get_shared_mem_per_block() == 400  # a specialized kernel: a single value
    kl = cuda.jit("void(int64[::1])")(lmem)
    assert kl.get_local_mem_per_thread() >= 64 * 8


def test_device_functions_show_their_own_code(cpu):
    @cuda.jit(device=True)
    def twice(a):
        return a * 2

    ptx = twice.inspect_asm((float32,))
    assert ".func" in ptx and ".entry" not in ptx
    assert "define" in twice.inspect_llvm((int32,))
    assert set(twice.inspect_ptx()) == {(float32,), (int32,)}
    assert twice.signatures == [(float32,), (int32,)]


def _add(a, b):
    return a + b


def test_compile_for_the_current_device(cpu):
    cc = cuda.get_current_device().compute_capability
    ptx, resty = cuda.compile_ptx_for_current_device(_add, "(int32, int32)", device=True)
    assert resty == int32 and f".target sm_{cc[0]}{cc[1]}" in ptx and ".func" in ptx
    code, resty = cuda.compile_for_current_device(_add, "(float64, float64)")
    assert resty == float64 and f".target sm_{cc[0]}{cc[1]}" in code
    with pytest.raises(NotImplementedError, match="ltoir"):
        cuda.compile_for_current_device(_add, "(float64, float64)", output="ltoir")
