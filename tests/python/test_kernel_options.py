"""cuda.jit / compile_ptx options with their effect in the PTX: launch_bounds (.maxntid,
.minnctapersm, .maxclusterrank), max_registers (.maxnreg), lineinfo (.file/.loc), debug (DWARF
line tables), shared_memory_carveout; Numba's warnings and errors for bad combinations."""
import math
import re
import warnings

import numpy as np
import pytest

from ptxjit import cuda, errors, float32, int32, types, vectorize, void

SIG = (float32[::1], float32[::1])


def axpy(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = 2.0 * x[i] + 1.0


@cuda.jit(device=True)
def callee(x):
    return x * 3.0


def caller(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = callee(x[i])


def test_launch_bounds_and_register_limit_in_the_ptx():
    ptx, _ = cuda.compile_ptx(axpy, SIG, launch_bounds=128)
    assert re.search(r"\.maxntid\s+128, 1, 1", ptx)
    ptx, _ = cuda.compile_ptx(axpy, SIG, launch_bounds=(256, 2))
    assert re.search(r"\.maxntid\s+256, 1, 1", ptx) and re.search(r"\.minnctapersm\s+2", ptx)
    ptx, _ = cuda.compile_ptx(axpy, SIG, launch_bounds=(256, 2, 4))
    assert re.search(r"\.maxclusterrank\s+4", ptx)
    ptx, _ = cuda.compile_ptx(axpy, SIG, max_registers=32)
    assert re.search(r"\.maxnreg\s+32", ptx)
    plain, _ = cuda.compile_ptx(axpy, SIG)
    assert ".maxntid" not in plain and ".maxnreg" not in plain
    k = cuda.jit(SIG, launch_bounds=(64,), max_registers=40)(axpy)
    ptx = k.inspect_ptx(SIG)
    assert re.search(r"\.maxntid\s+64, 1, 1", ptx) and re.search(r"\.maxnreg\s+40", ptx)


def test_bad_launch_bounds_and_limits():
    with pytest.raises(ValueError, match="A maximum of three are supported"):
        cuda.jit(launch_bounds=(1, 2, 3, 4))
    with pytest.raises(TypeError, match="launch_bounds must be an int or a tuple"):
        cuda.jit(launch_bounds=1.5)
    with pytest.raises(ValueError, match="thread count must be 1 to 1024"):
        cuda.jit(launch_bounds=2048)
    with pytest.raises(ValueError, match="max_registers must be an int from 1 to 255"):
        cuda.jit(max_registers=0)
    with pytest.raises(ValueError, match="launch_bounds apply to kernels"):
        cuda.compile_ptx(callee, (float32,), device=True, launch_bounds=32)


def test_lineinfo_puts_python_lines_in_the_ptx():
    ptx, _ = cuda.compile_ptx(caller, SIG, lineinfo=True)
    files = re.findall(r'\.file\s+(\d+)\s+"([^"]*)"', ptx)
    assert any(name.endswith("test_kernel_options.py") for _, name in files), ptx[:2000]
    lines = {int(m) for m in re.findall(r"\.loc\s+\d+\s+(\d+)\s+\d+", ptx)}
    first = caller.__code__.co_firstlineno
    assert first + 3 in lines  # out[i] = callee(x[i])
    # the inlined device function's return (its first line is the decorator's)
    assert callee.py_func.__code__.co_firstlineno + 2 in lines
    assert ".debug_info" not in ptx  # directives only
    plain, _ = cuda.compile_ptx(caller, SIG)
    assert ".loc" not in plain and ".file" not in plain
    k = cuda.jit(SIG, lineinfo=True)(caller)
    assert "emissionKind: DebugDirectivesOnly" in k.inspect_llvm(SIG)


def test_debug_emits_dwarf_line_tables_and_warns_with_opt():
    with pytest.warns(errors.NumbaInvalidConfigWarning, match="debug=True with opt=True"):
        cuda.jit(debug=True)(axpy)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ptx, _ = cuda.compile_ptx(axpy, SIG, debug=True, opt=False)
    assert re.search(r"\.section\s+\.debug_info", ptx)
    assert re.search(r'\.file.*test_kernel_options.py"', ptx)
    with pytest.warns(errors.NumbaInvalidConfigWarning, match="mutually exclusive"):
        cuda.jit(debug=True, lineinfo=True, opt=False)(axpy)


def test_lines_do_not_change_results(backend):
    x = np.arange(8, dtype=np.float32)
    out = np.zeros_like(x)
    cuda.jit(lineinfo=True)(caller)[1, 8](out, x)
    np.testing.assert_array_equal(out, x * 3)


def test_carveout_values():
    for good in (-1, 0, 50, 100, "default", "MaxL1", "maxshared"):
        cuda.jit(shared_memory_carveout=good)(axpy)
    with pytest.raises(ValueError, match="Carveout must be between -1 and 100"):
        cuda.jit(shared_memory_carveout=101)
    with pytest.raises(ValueError, match="Invalid carveout value: big"):
        cuda.jit(shared_memory_carveout="big")
    with pytest.raises(TypeError, match="Invalid carveout type"):
        cuda.jit(shared_memory_carveout=1.5)


def test_rejected_options_say_why():
    # boundscheck= is accepted (numba-cuda refuses True): docs/reliability.md
    cuda.jit(boundscheck=True)(axpy)
    cuda.jit(boundscheck=False)(axpy)
    with pytest.raises(FileNotFoundError, match="a.ptx"):  # link= reads its files (test_link.py)
        cuda.jit(link=["a.ptx"])
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        cuda.jit(maxregisters=3)
    with pytest.raises(NotImplementedError, match="Unsupported output type: ltoir"):
        cuda.compile(axpy, SIG, output="ltoir")
    with pytest.raises(NotImplementedError, match="Unsupported ABI"):
        cuda.compile_ptx(axpy, SIG, abi="fortran")


def test_compile_is_compile_ptx_for_device_functions():
    ptx, ret = cuda.compile(callee, (float32,))
    assert ret == float32 and ".func" in ptx and ".entry" not in ptx
    ptx, ret = cuda.compile(axpy, SIG, device=False, abi="numba")
    assert ".entry" in ptx
    with pytest.raises(NotImplementedError, match="The C ABI is not supported for kernels"):
        cuda.compile(axpy, SIG, device=False)


def test_compile_all_returns_the_one_ptx_module():
    codes, ret = cuda.compile_all(callee, (float32,), output="ptx")
    assert ret == float32 and len(codes) == 1 and ".func" in codes[0]
    assert codes[0] == cuda.compile(callee, (float32,))[0]
    codes, ret = cuda.compile_all(axpy, SIG, device=False, abi="numba", output="ptx")
    assert ".entry" in codes[0] and ret == types.none
    with pytest.raises(NotImplementedError, match="Unsupported output type: ltoir"):
        cuda.compile_all(callee, (float32,))  # numba-cuda's default output
    with pytest.raises(NotImplementedError, match="Unsupported output type: cubin"):
        cuda.compile_all(callee, (float32,), output="cubin")
    with pytest.raises(ValueError, match="Can only designate forced inlining in LTO-IR"):
        cuda.compile_all(callee, (float32,), output="ptx", forceinline=True)
    with pytest.raises(ValueError, match="Can only designate forced inlining in LTO-IR"):
        cuda.compile(callee, (float32,), forceinline=True)


@pytest.mark.gpu
def test_launch_bounds_are_enforced_by_the_driver(cuda_target):
    k = cuda.jit(SIG, launch_bounds=64)(axpy)
    x = cuda.to_device(np.ones(256, np.float32))
    out = cuda.device_array(256, np.float32)
    k[4, 64](out, x)
    assert (out.copy_to_host() == 3).all()
    with pytest.raises(errors.CudaDriverError):
        k[1, 256](out, x)
        cuda.synchronize()


@pytest.mark.gpu
def test_register_limit_and_carveout_on_the_gpu(cuda_target):
    k = cuda.jit(SIG, max_registers=16, shared_memory_carveout="MaxShared")(axpy)
    assert k.get_regs_per_thread() <= 16
    x = cuda.to_device(np.ones(32, np.float32))
    out = cuda.device_array(32, np.float32)
    k[1, 32](out, x)
    assert (out.copy_to_host() == 3).all()


def fma_candidate(a, b, c):
    return a * b + c


def test_opt_false_keeps_multiply_and_add_separate():
    sig = (types.float64, types.float64, types.float64)
    assert "fma.rn.f64" in cuda.compile_ptx(fma_candidate, sig, device=True)[0]
    ptx, _ = cuda.compile_ptx(fma_candidate, sig, device=True, opt=False)
    assert "fma.rn.f64" not in ptx and re.search(r"mul(\.rn)?\.f64", ptx)


def test_arch_specific_target():
    ptx, _ = cuda.compile_ptx(axpy, SIG, cc=(9, 0, "a"))
    assert ".target sm_90a" in ptx
    assert ".target sm_90\n" in cuda.compile_ptx(axpy, SIG, cc=(9, 0))[0]
    for bad, words in [((10, 0, "a"), "sm_100a"), ((9, 0, "f"), "'f'"), ((9,), "(major, minor)"),
                       (("9", 0), "(major, minor)")]:
        with pytest.raises(ValueError, match=re.escape(words)):
            cuda.compile_ptx(axpy, SIG, cc=bad)


def test_abi_name_names_the_device_function():
    ptx, _ = cuda.compile_ptx(lambda x: x, int32(int32), device=True, abi="c",
                              abi_info={"abi_name": "_Z4funcii"})
    assert re.search(r"\.visible\s+\.func\s+\(\.param\s+\.b32\s+\w+\)\s+_Z4funcii\(", ptx)
    for info, words in [({"abi_name": "<lambda>"}, "not a valid PTX identifier"),
                        ({"name": "f"}, "only key is 'abi_name'")]:
        with pytest.raises(ValueError, match=words):
            cuda.compile_ptx(lambda x: x, int32(int32), device=True, abi="c", abi_info=info)
    with pytest.raises(ValueError, match="names device functions"):
        cuda.compile_ptx(axpy, SIG, abi_info={"abi_name": "k"})


def test_debug_and_opt_defaults_follow_numbas_environment(monkeypatch):
    monkeypatch.setenv("NUMBA_OPT", "0")
    ptx, _ = cuda.compile_ptx(fma_candidate, (types.float64,) * 3, device=True)
    assert "fma.rn.f64" not in ptx  # opt defaults to off
    monkeypatch.setenv("NUMBA_CUDA_DEBUGINFO", "1")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cuda.jit(axpy)  # debug on and opt off: nothing to warn of
    monkeypatch.setenv("NUMBA_OPT", "3")
    with pytest.warns(errors.NumbaInvalidConfigWarning, match="not supported by CUDA"):
        cuda.jit(axpy)  # debug on by default, with opt: numba-cuda's warning


def test_debug_and_opt_defaults_follow_numbas_runtime_config(monkeypatch):
    import sys
    import types as pytypes
    config = pytypes.SimpleNamespace(CUDA_DEBUGINFO_DEFAULT=1, OPT=2)
    monkeypatch.setitem(sys.modules, "numba.cuda.core.config", config)
    with pytest.warns(errors.NumbaInvalidConfigWarning, match="not supported by CUDA"):
        cuda.jit(axpy)
    config.OPT = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cuda.jit(axpy)
        cuda.jit(debug=False, opt=True)(axpy)  # explicit values win


def test_shared_array_keeps_its_declared_size_and_print_strings_are_constant():
    def smem(ary):
        sm = cuda.shared.array(10, dtype=ary.dtype)
        for j in range(10):
            sm[j] = j
        for j in range(10):
            ary[j] = sm[j]

    ptx, _ = cuda.compile_ptx(smem, (float32[::1],))
    assert re.search(r"\.shared \.align \d+ \.b8 \w+\[40\]", ptx)

    def say(x):
        print(x)

    ptx, _ = cuda.compile_ptx(say, (types.int64,))
    assert re.search(r"\.const \.align \d+ \.b8 \w+\[\d+\]", ptx)


def test_grid_needs_a_literal_dimension_count():
    def k(x):
        cuda.grid(x)

    with pytest.raises(errors.TypingError, match="RequireLiteralValue"):
        cuda.jit("void(int32)")(k)


def _sqrt_div(x, o):
    o[0] = math.sqrt(x[0]) / x[1]


def test_fastmath_takes_numbas_flag_sets(cpu):
    sig = "void(float32[:], float32[:])"

    def ptx(**kw):  # without the entry's name, which numbers each compile
        return re.sub(r"_sqrt_div\w*", "", cuda.compile_ptx(_sqrt_div, sig, **kw)[0])

    fast = ptx(fastmath=True)
    assert "div.approx.ftz.f32" in fast
    for flags in ({"arcp", "contract"}, {"fast"}, frozenset({"nsz"})):  # on: ptxjit's fastmath
        assert ptx(fastmath=flags) == fast
    assert ptx(fastmath=set()) == ptx()
    assert cuda.jit(fastmath={"afn"})(_sqrt_div).targetoptions["fastmath"] is True
    with pytest.raises(ValueError, match="Unrecognized fastmath flags: bogus"):
        cuda.jit(fastmath={"nnan", "bogus"})(_sqrt_div)
    with pytest.raises(ValueError, match="Unrecognized fastmath flags: x"):
        vectorize(["float32(float32)"], fastmath={"x"})(abs)
    o = np.zeros(1, np.float32)
    cuda.jit(fastmath={"arcp"})(_sqrt_div)[1, 1](np.array([4.0, 2.0], np.float32), o)
    assert abs(o[0] - 1.0) < 1e-6
