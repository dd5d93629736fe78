"""The package surface: lazy import, Numba-style type objects, errors, intrinsic stand-ins."""
import subprocess
import sys

import pytest

import ptxjit
from ptxjit import cuda, errors, types
from ptxjit import (boolean, complex64, complex128, float32, float64, int8, int16, int32, int64,
                    uint8, uint16, uint32, uint64, void)


def test_import_is_lazy(subprocess_env):
    code = ("import sys, ptxjit\n"
            "from ptxjit import cuda, float32\n"
            "assert 'ptxjit._core' not in sys.modules, 'extension loaded at import'\n"
            "assert 'numpy' not in sys.modules, 'NumPy imported by import ptxjit'\n"
            "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], env=subprocess_env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


def test_numba_type_names_are_exported():
    names = ["void", "boolean", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
             "uint64", "float32", "float64", "complex64", "complex128"]
    for n in names:
        assert getattr(ptxjit, n) is getattr(types, n)
    assert str(boolean) == "bool"
    assert [str(t) for t in (int8, int16, int32, int64, uint8, uint16, uint32, uint64)] == [
        "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
    assert str(complex64) == "complex64" and str(complex128) == "complex128"
    assert str(void) == "none"


def test_array_types():
    assert str(float32[:]) == "array(float32, 1d, A)"
    assert str(float32[::1]) == "array(float32, 1d, C)"
    assert str(float32[:, :]) == "array(float32, 2d, A)"
    assert str(float32[:, ::1]) == "array(float32, 2d, C)"
    assert str(float32[::1, :]) == "array(float32, 2d, F)"
    assert str(float64[:, :, ::1]) == "array(float64, 3d, C)"
    assert float32[::1] == types.Array(float32, 1, "C")
    assert hash(float32[::1]) == hash(types.Array(float32, 1, "C"))
    assert float32[::1] != float32[:]
    assert float32[:, ::1]._sig_text == "float32[:, ::1]"
    assert float32[::1, :]._sig_text == "float32[::1, :]"
    with pytest.raises(TypeError):
        float32[1:2]
    with pytest.raises(TypeError):
        float32[:, ::1, :]
    with pytest.raises(TypeError):
        float32[::2]


def test_signatures():
    sig = void(float32, float32[:])
    assert isinstance(sig, types.Signature)
    assert sig.return_type == void and sig.args == (float32, float32[:])
    assert sig._sig_text == "void(float32, float32[:])"
    assert repr(sig) == "(float32, array(float32, 1d, A)) -> none"
    assert types.signature_text((float32[:], int64)) == "(float32[:], int64)"
    assert types.signature_text("void(int32)") == "void(int32)"
    with pytest.raises(TypeError):
        types.signature_text(float32)
    with pytest.raises(TypeError):
        types.signature_text(3)


def test_scalar_type_called_with_a_value_converts_like_numpy():
    import numpy as np

    v = float32(2.5)
    assert type(v) is np.float32 and v == 2.5
    assert type(int16(7)) is np.int16


def test_from_description_round_trip():
    for t in (float32, boolean, complex128, float32[::1], int64[:, :], float64[::1, :]):
        if isinstance(t, types.Array):
            desc = ("array", t.dtype.name, t.ndim, t.layout, t.readonly)
        else:
            desc = ("scalar", t.name)
        assert types.from_description(desc) == t
    tup = types.from_description(("tuple", [("scalar", "int64"), ("scalar", "int64")]))
    assert str(tup) == "UniTuple(int64 x 2)"
    tup2 = types.from_description(("tuple", [("scalar", "int64"), ("scalar", "float32")]))
    assert str(tup2) == "Tuple(int64, float32)"
    assert types.from_description(("none",)) == void


def test_error_hierarchy():
    assert issubclass(errors.TypingError, TypeError)
    assert issubclass(errors.TypingError, errors.CompileError)
    assert issubclass(errors.UnsupportedError, errors.CompileError)
    assert issubclass(errors.CompileError, errors.PtxjitError)
    assert issubclass(errors.CudaDriverError, errors.PtxjitError)
    assert issubclass(errors.CudaSupportError, errors.PtxjitError)
    assert issubclass(errors.PtxjitWarning, Warning)
    e = errors.TypingError("msg", "f.py", 3, 5)
    assert (e.filename, e.lineno, e.col, str(e)) == ("f.py", 3, 5, "msg")
    assert errors.CudaDriverError("x", code=2).code == 2


def test_intrinsics_fail_from_python():
    with pytest.raises(RuntimeError, match="cuda.grid"):
        cuda.grid(1)
    with pytest.raises(RuntimeError, match="cuda.gridsize"):
        cuda.gridsize(1)
    with pytest.raises(RuntimeError, match="threadIdx"):
        cuda.threadIdx.x
    with pytest.raises(RuntimeError, match="blockDim"):
        cuda.blockDim.y
    with pytest.raises(RuntimeError, match="syncthreads"):
        cuda.syncthreads()
    assert cuda.grid._ptxjit_symbol == "cuda.grid"
    assert cuda.threadIdx._ptxjit_symbol == "cuda.threadIdx"
    assert cuda.gridDim._ptxjit_symbol == "cuda.gridDim"
    assert cuda.atomic.add._ptxjit_symbol == "cuda.atomic.add"
    assert float32._ptxjit_symbol == "numpy.float32"


def test_jit_decorator_forms(cpu):
    def f(x):
        x[0] = 1

    for deco in (cuda.jit, cuda.jit(), cuda.jit(device=False), cuda.jit(debug=True, opt=False),
                 cuda.jit(lineinfo=True, cache=True, fastmath=True, inline=True)):
        k = deco(f)
        assert k.py_func is f
        assert k.__name__ == "f" and k.__wrapped__ is f
        assert k.signatures == []
    dev = cuda.jit(device="true")(f)
    assert dev.device
    assert cuda.jit(device=0)(f).device is False
    with pytest.raises(TypeError, match="unexpected keyword"):
        cuda.jit(nonsense=1)
    with pytest.raises(TypeError):
        cuda.jit(42)
    with pytest.raises(TypeError):
        cuda.jit("void()")(3)


def test_the_package_modules_import_each_other_without_cycles():
    """Every relative import between ptxjit's modules (at the top or inside functions) points
    one way: cuda -> ufunc -> _loader, no module importing back."""
    import ast
    import pathlib

    pkg = pathlib.Path(__file__).resolve().parents[2] / "python" / "ptxjit"
    graph = {}
    for path in pkg.glob("*.py"):
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    deps.add(node.module.split(".")[0])
                else:
                    deps.update(a.name for a in node.names)
        graph[path.stem] = deps & {p.stem for p in pkg.glob("*.py")}

    def reaches(start, target, seen=()):
        return any(d == target or (d not in seen and reaches(d, target, seen + (d,)))
                   for d in graph.get(start, ()))

    cycles = [m for m in graph if m != "__init__" and reaches(m, m)]
    assert cycles == [], graph
    assert "cuda" not in graph["ufunc"] and "_loader" in graph["ufunc"]
