"""The snapshot of a Python function that the compiler sees (ptxjit._core.snapshot)."""
import builtins
import cmath
import math
import sys

import numpy as np
import pytest

from ptxjit import _core, cuda, errors, float32
from ptxjit.cuda import grid as imported_grid

INT_CONST = 7
BIG_UINT = 2**64 - 1
TOO_BIG = 2**70
FLOAT_CONST = 2.5
COMPLEX_CONST = 1 - 2j
TUPLE_CONST = (1, 2.5, (True, 3j))
MIXED_TUPLE = (1, "a")
NP_SCALAR = np.float32(1.5)
NP_BOOL = np.bool_(True)
STRING = "text"
NOTHING = None
OBJ = object()


def plain_helper(x):
    return x


@cuda.jit(device=True)
def dev_helper(x):
    return x


@cuda.jit
def kernel_helper(x):
    pass


def sample(x):
    a = (INT_CONST, BIG_UINT, TOO_BIG, FLOAT_CONST, COMPLEX_CONST, TUPLE_CONST, MIXED_TUPLE)
    b = (NP_SCALAR, NP_BOOL, STRING, NOTHING, OBJ, np, math, cmath, cuda, imported_grid)
    c = (math.sin, cmath.exp, np.float32, np.sin, float32, range, len, abs, plain_helper)
    d = (dev_helper, kernel_helper, undefined_name, sys, min)  # noqa: F821
    return a, b, c, d


def test_code_object_fields():
    s = _core.snapshot(sample)
    code = sample.__code__
    assert s["version"] == "%d.%d" % sys.version_info[:2]
    assert s["name"] == "sample" and s["qualname"] == "sample"
    assert s["filename"] == code.co_filename
    assert s["first_line"] == code.co_firstlineno
    assert s["flags"] == code.co_flags
    assert s["arg_count"] == 1
    assert s["code"] == code.co_code
    assert s["names"] == list(code.co_names)
    assert s["varnames"] == list(code.co_varnames)
    assert s["exception_table"] == code.co_exceptiontable
    assert s["positions"] == python_positions(code)
    assert len(s["positions"]) == len(code.co_code) // 2


def wide_and_tall(a, b):
    total = 0
    # Columns past 127 and expressions over several lines take the table's long form; the
    # loop's jump back is a negative line step.
    for i in range(3):
        total += (a + b) * (a - b) + (a * b) - (b * a) + (a + a) * (b + b) - (a - a) * (b - b) + (a * a) - (b * b) + (a * i) - (b * i) + i * (a + b)  # noqa: E501
        total += (a
                  + b
                  * i)
    return total


def python_positions(code):
    return [tuple(0 if v is None and k < 2 else -1 if v is None else v for k, v in enumerate(p))
            for p in code.co_positions()]


def test_positions_are_what_co_positions_gives():
    # The bindings decode co_linetable in C++; the long form (columns past 127, expressions over
    # several lines) and negative line steps must come out as co_positions() has them.
    code = wide_and_tall.__code__
    forms = {(b >> 3) & 15 for b in code.co_linetable if b & 0x80}
    assert 14 in forms
    assert _core.snapshot(wide_and_tall)["positions"] == python_positions(code)
    assert any(p[2] > 127 for p in python_positions(code))


def test_globals_resolve_to_plain_values():
    g = _core.snapshot(sample)["globals"]
    assert g["INT_CONST"] == ("constant", 7, "")
    assert g["BIG_UINT"] == ("constant", 2**64 - 1, "")
    assert g["TOO_BIG"] == ("unsupported", "int")
    assert g["FLOAT_CONST"] == ("constant", 2.5, "")
    assert g["COMPLEX_CONST"] == ("constant", 1 - 2j, "")
    assert g["TUPLE_CONST"] == ("constant", (1, 2.5, (True, 3j)), "")
    assert g["MIXED_TUPLE"] == ("constant", (1, "a"), "")
    assert g["NP_SCALAR"] == ("constant", 1.5, "float32")
    assert g["NP_BOOL"] == ("constant", True, "bool")
    assert g["STRING"] == ("constant", "text", "")
    assert g["NOTHING"] == ("constant", None, "")
    assert g["OBJ"] == ("unsupported", "object")
    assert g["np"] == ("symbol", "numpy")
    assert g["math"] == ("symbol", "math")
    assert g["cmath"] == ("symbol", "cmath")
    assert g["cuda"] == ("symbol", "cuda")
    assert g["imported_grid"] == ("symbol", "cuda.grid")
    assert g["float32"] == ("symbol", "numpy.float32")
    assert g["range"] == ("symbol", "builtins.range")
    assert g["len"] == ("symbol", "builtins.len")
    assert g["abs"] == ("symbol", "builtins.abs")
    assert g["min"] == ("symbol", "builtins.min")
    assert g["plain_helper"] == ("py_function", "plain_helper")
    assert g["dev_helper"] == ("device_function", dev_helper.function_id, "dev_helper")
    assert g["kernel_helper"] == ("kernel", kernel_helper.function_id, "kernel_helper")
    assert g["undefined_name"] == ("missing",)
    # a module kernels do not know by name: its attributes the code names are globals of their
    # own ("sys.<attr>"), the module a symbol the frontend reads them through
    assert g["sys"] == ("symbol", "module:sys")
    # attribute names are in co_names too; they resolve to whatever globals have that name
    assert g["sin"] == ("missing",)


def test_numpy_and_math_callables():
    def f():
        return math.sin, cmath.exp, np.float32, np.sin, np.int64, np.bool_

    from math import sin as s1
    from numpy import add as ufunc_add

    def h():
        return s1, ufunc_add

    assert _core.snapshot(f)["globals"]["np"] == ("symbol", "numpy")
    g = _core.snapshot(h)["globals"]
    # imported under another name: resolved by what the object is
    assert g == {}  # closure variables, not globals
    c = _core.snapshot(h)["closure"]
    assert c["s1"] == ("symbol", "math.sin")
    assert c["ufunc_add"] == ("symbol", "numpy.add")


def test_closure_cells():
    k = 3
    arr_type = np.float64
    obj = object()
    later = None

    def f(x):
        return x * k, arr_type, obj, later

    s = _core.snapshot(f)
    assert s["freevars"] == ["arr_type", "k", "later", "obj"]
    assert s["closure"]["k"] == ("constant", 3, "")
    assert s["closure"]["arr_type"] == ("symbol", "numpy.float64")
    assert s["closure"]["obj"] == ("unsupported", "object")
    assert s["closure"]["later"] == ("constant", None, "")
    assert s["locals_plus_names"][: len(f.__code__.co_varnames)] == list(f.__code__.co_varnames)
    assert set(s["locals_plus_names"]) >= set(s["freevars"])


def test_empty_closure_cell_is_missing():
    def outer():
        def inner():
            return late

        cell_snapshot = _core.snapshot(inner)
        late = 1
        return cell_snapshot

    assert outer()["closure"]["late"] == ("missing",)


def test_constants_and_defaults():
    def f(x, y=2, z=(1.5, None)):
        def nested():
            pass

        return x + 10**30 + 1.25 + 3j + len("abc"), b"raw", nested

    s = _core.snapshot(f)
    consts = s["consts"]
    assert ("unsupported", "code nested") in consts  # a code object keeps its co_name
    assert b"raw" in consts  # bytes constants are kept (stored into S<n> string elements)
    assert ("unsupported", "int") in consts
    assert 1.25 in consts and 3j in consts and "abc" in consts
    assert s["defaults"] == [2, (1.5, None)]


def test_only_python_functions():
    with pytest.raises(errors.UnsupportedError, match="only Python functions"):
        _core.snapshot(len)
    with pytest.raises(errors.UnsupportedError):
        _core.snapshot(dev_helper)


def test_builtins_come_from_the_functions_builtins():
    ns = {"__builtins__": {"range": builtins.range}}
    exec("def f(n):\n    return range(n), len\n", ns)
    g = _core.snapshot(ns["f"])["globals"]
    assert g["range"] == ("symbol", "builtins.range")
    assert g["len"] == ("missing",)
