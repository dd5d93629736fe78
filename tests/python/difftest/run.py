"""Compiling, running and comparing one generated program (see generate.py and oracle.py).

`check(program, ulps)` runs the program's kernel on ptxjit's current backend and its reference
on CPython, and returns an `Outcome`: "ok", "close" (floats within `ulps` units in the last place,
the only difference), "mismatch", "rejected" (ptxjit raised an error while compiling: a typing
or unsupported-construct error, reported with its message), "skipped" (the reference reached an
operation ptxjit does not document, oracle.Undefined), "error" (anything else ptxjit raised) or
"oracle-error" (the reference raised: a rule missing in oracle.py), or "unchecked" (a fastmath
program of typed.py: run, not compared). A crash or a hang cannot be caught here:
scripts/difftest.py runs programs in subprocesses.
"""
import cmath
import linecache
import math
import struct
from dataclasses import dataclass

import numpy as np

from . import oracle

OUTPUTS = ("int", "float", "bool", "complex")


@dataclass
class Outcome:
    status: str
    detail: str = ""
    expected: tuple = None
    got: tuple = None


def reference(program):
    """The reference result (int, float, bool, complex) computed by CPython, or oracle.Undefined."""
    ns = {"R": oracle, "math": math, "cmath": cmath}
    exec(compile(program.reference_source, f"<difftest-ref {program.seed}>", "exec"), ns)
    a, y, p, w = ns["f"](*program.ints, *program.floats, *program.bools, *program.complexes)
    return (int(a), float(y), bool(p), complex(w))


def compile_kernel(program):
    """The kernel object of the program's source (registered in linecache so that errors can
    show the source line)."""
    name = f"<difftest {program.seed}>"
    src = program.kernel_source
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    ns = {"__name__": f"difftest_{program.seed}"}
    exec(compile(src, name, "exec"), ns)
    return ns["kern"]


def run_kernel(program):
    """The kernel's result (int, float, bool, complex) on ptxjit's current backend."""
    kern = compile_kernel(program)
    ia = np.array(program.ints, np.int64)
    fa = np.array(program.floats, np.float64)
    ba = np.array(program.bools, np.bool_)
    ca = np.array(program.complexes, np.complex128)
    oi = np.full(1, 0x5A5A, np.int64)
    of = np.full(1, -77.25, np.float64)
    ob = np.zeros(1, np.bool_)
    oc = np.full(1, -77.25 + 9j, np.complex128)
    kern[1, 1](ia, fa, ba, ca, oi, of, ob, oc)
    return (int(oi[0]), float(of[0]), bool(ob[0]), complex(oc[0]))


def _ordered(x):
    """A float64's bits as an int ordered like the floats (for distances in ULP)."""
    i = struct.unpack("<q", struct.pack("<d", x))[0]
    return i if i >= 0 else -(2**63) - i


def ulp_distance(a, b):
    """How many float64s lie between a and b (0 for equal values, ±0 and two NaNs included)."""
    if math.isnan(a) or math.isnan(b):
        return 0 if (math.isnan(a) and math.isnan(b)) else 2**64
    if a == b:
        return 0
    return abs(_ordered(a) - _ordered(b))


def _float_diff(e, g):
    return ulp_distance(e, g)


def compare(expected, got, ulps):
    """("ok" | "close" | "mismatch", detail)."""
    worst = 0
    bad = []
    for name, e, g in zip(OUTPUTS, expected, got):
        if name in ("int", "bool"):
            if e != g:
                bad.append(f"{name}: expected {e!r}, got {g!r}")
            continue
        parts = [(e, g)] if name == "float" else [(e.real, g.real), (e.imag, g.imag)]
        for pe, pg in parts:
            d = _float_diff(pe, pg)
            if d > ulps:
                bad.append(f"{name}: expected {e!r}, got {g!r} ({d} ulp)" if d < 2**63 else
                           f"{name}: expected {e!r}, got {g!r}")
                break
            worst = max(worst, d)
    if bad:
        return "mismatch", "; ".join(bad)
    return ("close", f"{worst} ulp") if worst else ("ok", "")


def typed_reference(program):
    """The reference values of a TypedProgram's variables (typed.py), by CPython and the rules."""
    ns = {"R": oracle, "math": math, "cmath": cmath}
    exec(compile(program.reference_source, f"<difftest-ref {program.seed}>", "exec"), ns)
    values = ns["f"](*program.inputs)
    return tuple(oracle.t_conv(t, t, v) for t, v in zip(program.types, values))


def run_typed_kernel(program):
    """The TypedProgram's variables as the kernel computed them on ptxjit's current backend."""
    kern = compile_kernel(program)
    ins = [np.array([v], t if t != "bool" else np.bool_)
           for t, v in zip(program.types, program.inputs)]
    outs = [np.full(1, 0x5A if t != "bool" else 1, t if t != "bool" else np.bool_)
            for t in program.types]
    kern[1, 1](*ins, *outs)
    return tuple(o[0].item() for o in outs)


def _typed_diff(t, e, g):
    if t in ("float32", "float64"):
        if t == "float32":
            return ulp_distance32(e, g)
        return ulp_distance(e, g)
    return 0 if e == g else 2**64


def _ordered32(x):
    i = struct.unpack("<i", struct.pack("<f", x))[0]
    return i if i >= 0 else -(2**31) - i


def ulp_distance32(a, b):
    """How many float32s lie between a and b (both float32 values)."""
    if math.isnan(a) or math.isnan(b):
        return 0 if (math.isnan(a) and math.isnan(b)) else 2**64
    if a == b:
        return 0
    return abs(_ordered32(a) - _ordered32(b))


def compare_typed(program, expected, got, ulps):
    worst = 0
    bad = []
    for i, (t, e, g) in enumerate(zip(program.types, expected, got)):
        d = _typed_diff(t, e, g)
        if d > ulps:
            bad.append(f"v{i} ({t}): expected {e!r}, got {g!r}" +
                       (f" ({d} ulp)" if t in ("float32", "float64") and d < 2**63 else ""))
        elif d:
            worst = max(worst, d)
    if bad:
        return "mismatch", "; ".join(bad)
    return ("close", f"{worst} ulp") if worst else ("ok", "")


def check_typed(program, ulps=0):
    """check() for a TypedProgram. A fastmath program with float arithmetic is run but not
    compared ("unchecked": LLVM's fast flags allow any result for NaN and infinite operands
    and reassociate); it must still compile and run."""
    compared = not (program.fastmath and program.float_ops)
    expected = None
    if compared:
        try:
            expected = typed_reference(program)
        except oracle.Undefined as e:
            return Outcome("skipped", str(e))
        except Exception as e:  # noqa: BLE001 - a rule missing in the oracle
            return Outcome("oracle-error", f"{type(e).__name__}: {e}")
    try:
        got = run_typed_kernel(program)
    except Exception as e:  # noqa: BLE001 - every failure is an outcome to report
        kind = "rejected" if _is_compile_error(e) else "error"
        return Outcome(kind, f"{type(e).__name__}: {e}", expected)
    if not compared:
        return Outcome("unchecked", "fastmath", None, got)
    status, detail = compare_typed(program, expected, got, ulps)
    return Outcome(status, detail, expected, got)


def check(program, ulps=0):
    """Runs `program` on ptxjit's current backend and on CPython and compares (see Outcome)."""
    if hasattr(program, "types"):
        return check_typed(program, ulps)
    try:
        expected = reference(program)
    except oracle.Undefined as e:
        return Outcome("skipped", str(e))
    except Exception as e:  # noqa: BLE001 - a rule missing in the oracle, not a ptxjit bug
        return Outcome("oracle-error", f"{type(e).__name__}: {e}")
    try:
        got = run_kernel(program)
    except Exception as e:  # noqa: BLE001 - every failure is an outcome to report
        kind = "rejected" if _is_compile_error(e) else "error"
        return Outcome(kind, f"{type(e).__name__}: {e}", expected)
    status, detail = compare(expected, got, ulps)
    if status == "mismatch" and ulps and _contraction_explains(program, expected, got):
        return Outcome("close", "fma contraction: " + detail, expected, got)
    return Outcome(status, detail, expected, got)


def _float_parts(values):
    for v in values:
        if isinstance(v, complex):
            yield v.real
            yield v.imag
        elif isinstance(v, float):
            yield v


def _contraction_explains(program, expected, got):
    """True when CUDA's contraction of a * b + c into one fma.rn (docs/language.md, Arithmetic;
    allowed for with `ulps`) can account for a difference beyond the ULP bound: the program's
    PTX has an fma, the ints and bools agree, and each differing float is infinite or NaN on
    one side (a product that overflows when rounded alone stays finite inside the fma, and
    inf - inf gives NaN where the fma's finite sum does not)."""
    if any(type(e) in (int, bool) and e != g for e, g in zip(expected, got)):
        return False
    for e, g in zip(_float_parts(expected), _float_parts(got)):
        if ulp_distance(e, g) and math.isfinite(e) and math.isfinite(g):
            return False
    from ptxjit import _core, cuda

    if _core.current_target() != "cuda":  # the CPU backend rounds a * b and + c separately
        return False
    arrays = ("int64[:]", "float64[:]", "boolean[:]", "complex128[:]")
    ptx, _ = cuda.compile_ptx(compile_kernel(program).py_func, f"void({', '.join(arrays * 2)})")
    return "fma.rn" in ptx


def _is_compile_error(e):
    from ptxjit.errors import CompileError

    return isinstance(e, CompileError)
