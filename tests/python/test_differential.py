"""Differential testing against CPython, a bounded sample (issue 19, item 4).

Random kernels and device functions (tests/python/difftest) run on ptxjit and on CPython with
ptxjit's documented divergences as the reference's rules (difftest/oracle.py); every output must
agree. The long campaign is scripts/difftest.py (docs/reliability.md). The seeds are fixed, so a
failure here is reproducible with `scripts/difftest.py --show SEED`.
"""
import math
import re

import pytest

from difftest import oracle
from difftest.generate import generate
from difftest.run import check, compare, ulp_distance

SEEDS = range(20261125, 20261125 + 90)


def test_oracle_rules_are_the_documented_values():
    assert oracle.ifloordiv(7, 0) == 0 and oracle.imod(7, 0) == 0
    assert oracle.ifloordiv(-(2**63), -1) == -(2**63) and oracle.imod(-(2**63), -1) == 0
    assert oracle.ifloordiv(-7, 2) == -4 and oracle.imod(-7, 2) == 1
    assert oracle.ishl(1, 64) == 0 and oracle.ishl(1, -1) == 0 and oracle.ishl(1, 63) == -(2**63)
    assert oracle.ishr(-5, 64) == -1 and oracle.ishr(5, 200) == 0 and oracle.ishr(-5, 1) == -3
    assert oracle.iadd(2**63 - 1, 1) == -(2**63) and oracle.iabs(-(2**63)) == -(2**63)
    assert oracle.ipow(2, -1) == 0 and oracle.ipow(-1, -3) == -1 and oracle.ipow(3, 41) == \
        oracle.wrap(3**41)
    assert oracle.saturate(math.nan) == 0 and oracle.saturate(math.inf) == 2**63 - 1
    assert oracle.saturate(-1e300) == -(2**63) and oracle.saturate(-2.9) == -2
    assert oracle.iround(2.5) == 2 and oracle.iround(-math.inf) == -(2**63)
    assert oracle.cmp_if("==", 2**53 + 1, 2.0**53)  # the int converted to float64 first
    assert oracle.fdiv(1, 0) == math.inf and oracle.fdiv(-1.0, 0.0) == -math.inf
    assert math.isnan(oracle.fdiv(0.0, 0.0))
    assert oracle.fpow(0.0, -1.0) == math.inf and oracle.fpow(-0.0, -3.0) == -math.inf
    assert math.isnan(oracle.fpow(-8.0, 1 / 3)) and oracle.fpow(-10.0, 401.0) == -math.inf
    assert math.isnan(oracle.m("log", -1.0)) and oracle.m("exp", 1000.0) == math.inf
    # np.floor keeps a zero's sign (campaign run 7, seed 870703: the oracle's floor lost it).
    assert math.copysign(1.0, oracle.t_math("floor", "float64", "float64", -0.0)) == -1.0
    assert oracle.t_math("floor", "float64", "float64", -0.5) == -1.0
    with pytest.raises(oracle.Undefined):
        oracle.fmod(1.0, 0.0)


def test_comparison_counts_ulps_and_treats_nans_and_zeros_as_equal():
    assert ulp_distance(1.0, math.nextafter(1.0, 2.0)) == 1
    assert ulp_distance(0.0, -0.0) == 0 and ulp_distance(math.nan, math.nan) == 0
    assert ulp_distance(-math.ulp(0.0), math.ulp(0.0)) == 2
    e = (1, 1.0, True, 1j)
    assert compare(e, e, 0)[0] == "ok"
    assert compare(e, (1, math.nextafter(1.0, 2.0), True, 1j), 0)[0] == "mismatch"
    assert compare(e, (1, math.nextafter(1.0, 2.0), True, 1j), 2) == ("close", "1 ulp")
    assert compare(e, (2, 1.0, True, 1j), 8)[0] == "mismatch"
    assert compare(e, (1, 1.0, False, 1j), 8)[0] == "mismatch"
    assert compare(e, (1, 1.0, True, complex(0, math.nan)), 8)[0] == "mismatch"


def test_contraction_accounts_only_for_non_finite_floats_of_programs_with_an_fma(monkeypatch):
    # The H200 campaign's one mismatch (seed 9012014): y = 4.5e15 * (x1 + x1); y += 2 / 0 is
    # -inf + inf = NaN rounded separately, and inf as one fma.rn (the product stays finite
    # inside it). With CUDA's tolerance (ulps) such a difference counts as contraction's.
    from difftest import run
    from ptxjit import _core

    p = generate(9012014, False)  # an even seed of --family mixed is a classic program
    e = run.reference(p)
    g = (e[0], math.inf, e[2], e[3])
    assert compare(e, g, 8)[0] == "mismatch"
    monkeypatch.setattr(_core, "current_target", lambda: "cpu")
    assert not run._contraction_explains(p, e, g)  # the CPU backend contracts nothing
    monkeypatch.setattr(_core, "current_target", lambda: "cuda")  # PTX needs no GPU
    assert run._contraction_explains(p, e, g)
    assert not run._contraction_explains(p, e, (e[0] + 1,) + g[1:])  # ints must agree
    finite = (e[0], 2.0, e[2], e[3])
    assert not run._contraction_explains(p, finite, (e[0], 2.5, e[2], e[3]))


def test_programs_without_the_math_library_call_none(cpu):
    allowed = {"inf", "nan", "pi", "e", "isnan", "isinf", "isfinite", "floor", "ceil", "trunc"}
    for seed in SEEDS:
        program = generate(seed, libm=False)
        called = set(re.findall(r"\bc?math\.(\w+)", program.kernel_source))
        assert called <= allowed and not program.uses_libm, (seed, called - allowed)
    # and they agree with CPython too (the programs the GPU run compares)
    _, bad = _sample("cpu-nolibm", SEEDS[:40])
    assert not bad, "\n\n".join(bad[:3])


def test_programs_are_reproducible_from_their_seed():
    a, b = generate(12345), generate(12345)
    assert a.kernel_source == b.kernel_source and a.reference_source == b.reference_source
    assert (a.ints, a.floats, a.bools, a.complexes) == (b.ints, b.floats, b.bools, b.complexes)
    assert generate(12346).kernel_source != a.kernel_source


def test_generated_programs_cover_the_language():
    text = "".join(generate(s).kernel_source for s in SEEDS)
    for construct in ("@cuda.jit(device=True)", "for j", "while w", "break", "continue",
                      "return (a, y, p, w)", "    return\n", " // ", " % ", " << ", " >> ",
                      " ** ", "min(", "max(", "abs(", "math.floor(", "round(", "int(",
                      "cmath.", "math.", "complex(", ".conjugate()", " if ", " and ", "not ",
                      "t = (", "= t", "math.isnan(", "9223372036854775807"):
        assert construct in text, construct


def _sample(backend, seeds=SEEDS):
    # On CUDA the math functions are libdevice's, not the C library CPython calls: programs that
    # use them can differ in the last bits, and an int computed from such a float can differ by
    # more, so the device run uses programs without them. CUDA also contracts a * b + c into
    # one fma.rn (docs/language.md, Arithmetic): floats may differ by a few ULP there.
    bad = []
    compared = 0
    for seed in seeds:
        program = generate(seed, libm=backend == "cpu")
        assert backend != "cuda" or not program.uses_libm
        outcome = check(program, 0 if backend.startswith("cpu") else 8)
        if outcome.status in ("ok", "skipped"):
            compared += outcome.status == "ok"
            continue
        bad.append(f"seed {seed}: {outcome.status}: {outcome.detail}\n{program.kernel_source}")
    return compared, bad


def test_random_programs_agree_with_cpython(backend):
    compared, bad = _sample(backend)
    assert not bad, "\n\n".join(bad[:3])
    assert compared >= 70


# ---- typed programs: NumPy's scalar types, NEP 50 literals, float32, fastmath (typed.py) ----

TYPED_SEEDS = range(20261127, 20261127 + 80)


def test_typed_oracle_rules_are_the_documented_values():
    R = oracle
    assert R.t_bin("+", "int8", "int8", "lit", 100, 100) == -56  # the literal is int8: wraps
    assert R.t_bin("+", "int16", "int8", "uint8", 100, 200) == 300  # int8 + uint8 -> int16
    assert R.t_bin("-", "uint8", "uint8", "lit", 3, 5) == 254
    assert R.t_bin("*", "float64", "int64", "uint64", 2**62, 2**63) == 2.0**125
    assert R.t_bin("/", "float64", "int8", "int8", 1, 3) == 1 / 3
    assert R.t_bin("<<", "int8", "int8", "lit", 1, 7) == -128
    assert R.t_bin("<<", "int8", "int8", "lit", 1, 8) == 0  # the count is the type's width
    assert R.t_bin(">>", "int16", "int16", "int16", -5, 16) == -1
    assert R.t_bin("//", "int8", "int8", "lit", -128, -1) == -128
    assert R.t_bin("%", "uint32", "uint32", "uint32", 7, 0) == 0
    assert R.t_bin("**", "int8", "int8", "lit", 3, 5) == R.t_wrap("int8", 243)
    # float32 rounds at each step; a float literal is rounded to float32 first
    assert R.t_bin("+", "float32", "float32", "flit", 1.0, 1e-8) == 1.0
    assert R.t_bin("*", "float32", "float32", "flit", 1.0, 0.1) == R.f32(0.1) != 0.1
    assert R.t_bin("*", "float32", "float32", "flit", 2.0, 1e39) == math.inf
    assert R.t_bin("+", "float32", "float32", "lit", 0.0, 16777217) == 16777216.0
    assert R.t_bin("**", "float32", "float32", "lit", R.f32(1.1), 3) == \
        R.f32(R.f32(R.f32(1.1) * R.f32(1.1)) * R.f32(1.1))
    # conversions: wrap from ints, saturate from floats, round to nearest into float32
    assert R.t_conv("int8", "int64", 300) == 44 and R.t_conv("uint8", "int64", -1) == 255
    assert R.t_conv("uint8", "float64", -3.0) == 0 and R.t_conv("int8", "float32", 1e10) == 127
    assert R.t_conv("uint64", "float64", math.nan) == 0
    assert R.t_conv("float32", "int64", 2**24 + 1) == 2.0**24
    assert R.t_conv("float32", "int64", 2**24 + 3) == 2.0**24 + 4  # ties to even
    assert R.t_conv("float32", "uint64", 2**64 - 1) == 2.0**64
    assert R.t_conv("float32", "int64", 2**53 + 2**29 + 1) == 2.0**53 + 2**30  # not via float64
    assert R.t_conv("bool", "float64", math.nan) is True
    # comparisons: ints exactly, with a float through the promoted float type
    assert R.t_cmp("<", "int64", "uint64", -1, 2**63) and not R.t_cmp("==", "int64", "uint64",
                                                                        -1, 2**64 - 1)
    assert R.t_cmp("==", "float32", "lit", R.f32(0.1), 0) is False
    assert R.t_cmp("==", "float32", "int64", 16777216.0, 16777217) is False  # float64
    assert R.t_cmp("==", "float32", "int16", 3.0, 3)
    assert R.t_minmax("min", "float64", ("int64", "uint64"), (-1, 2**64 - 1)) == -1.0
    assert R.t_math("sqrt", "float32", "float32", 2.0) == R.f32(math.sqrt(2.0))
    assert R.t_toint("int", "uint64", 2**64 - 5) == -5 and R.t_toint("round", "float32", 2.5) == 2
    with pytest.raises(oracle.Undefined):
        R.t_bin("//", "float32", "float32", "float32", 1.0, 0.0)


def test_typed_programs_cover_the_types():
    from difftest.typed import generate_typed

    progs = [generate_typed(s) for s in TYPED_SEEDS]
    text = "".join(p.kernel_source for p in progs)
    for construct in ("np.int8(", "np.uint64(", "np.float32(", "np.bool_(", "np.int16(",
                      "np.uint32(", "fastmath=True", "math.", " << ", " >> ", " // ", " % ",
                      " ** ", " / ", "min(", "max(", "abs(", " if ", "for j", "return (",
                      "int(", "@cuda.jit(device=True"):
        assert construct in text, construct
    types = {t for p in progs for t in p.types}
    assert types == {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                     "uint64", "float32", "float64"}
    a, b = generate_typed(777), generate_typed(777)
    assert (a.kernel_source, a.reference_source, a.inputs) == \
        (b.kernel_source, b.reference_source, b.inputs)


def test_typed_programs_agree_with_cpython(backend):
    from difftest.typed import generate_typed

    bad = []
    counts = {}
    for seed in TYPED_SEEDS:
        program = generate_typed(seed, libm=backend == "cpu")
        outcome = check(program, 0 if backend == "cpu" else 8)
        counts[outcome.status] = counts.get(outcome.status, 0) + 1
        if outcome.status not in ("ok", "skipped", "unchecked"):
            bad.append(f"seed {seed}: {outcome.status}: {outcome.detail}\n"
                       f"{program.kernel_source}")
    assert not bad, "\n\n".join(bad[:3])
    assert counts.get("ok", 0) >= 55 and counts.get("unchecked", 0) >= 3, counts
