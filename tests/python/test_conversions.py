"""The compiler's one table of numeric conversions (ir/Conversions.h) against NumPy, and the
choices kernels and ufuncs make from it."""
import itertools

import numpy as np
import pytest

from ptxjit import _core, cuda, vectorize

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]

# The grades at or below which each NumPy casting level allows a cast.
ALLOWED = {
    "no": {"exact"},
    "safe": {"exact", "promote", "safe"},
    "same_kind": {"exact", "promote", "safe", "same_kind"},
    "unsafe": {"exact", "promote", "safe", "same_kind", "unsafe"},
}


@pytest.mark.parametrize("casting", ["no", "safe", "same_kind", "unsafe"])
def test_every_pair_matches_numpy_can_cast(casting):
    for a, b in itertools.product(DTYPES, DTYPES):
        numpy_grade, _ = _core._conversion(a, b)
        assert (numpy_grade in ALLOWED[casting]) == np.can_cast(a, b, casting), (a, b, casting)


def test_numba_grades_differ_from_numpy_only_where_documented():
    for a, b in itertools.product(DTYPES, DTYPES):
        numpy_grade, numba_grade = _core._conversion(a, b)
        if a.startswith("complex") and not b.startswith("complex"):
            assert numba_grade == "none"
        elif (a, b) in (("uint16", "float32"), ("uint16", "complex64"), ("uint8", "float16")):
            assert (numpy_grade, numba_grade) == ("safe", "unsafe")
        elif numpy_grade == "same_kind":
            assert numba_grade == "unsafe"
        else:
            assert numba_grade == numpy_grade, (a, b)


def test_unknown_type_names_are_refused():
    with pytest.raises(ValueError, match="unknown scalar type 'float17'"):
        _core._conversion("float32", "float17")


def test_kernels_and_ufuncs_choose_float64_for_a_wide_integer(backend):
    """(int32) and (float64) signatures: an int64 converts safely to float64 only, for a kernel
    as for a ufunc (the value 2**40 would become 0 as int32)."""

    @cuda.jit(["void(int32, float64[:])", "void(float64, float64[:])"])
    def k(v, out):
        out[0] = v

    out = np.zeros(1)
    k[1, 1](np.int64(2**40), out)
    assert out[0] == 2.0**40
    k[1, 1](np.uint64(2**40), out)
    assert out[0] == 2.0**40

    @vectorize(["int32(int32)", "float64(float64)"], target="cuda")
    def ident(v):
        return v

    r = ident(np.array([2**40], dtype=np.int64))
    assert r.dtype == np.float64 and r[0] == 2.0**40


def test_ufunc_output_array_takes_part_in_loop_selection(backend):
    """NumPy skips a loop whose output cannot be cast to `out` (same_kind) and takes the next."""

    @vectorize(["float32(float32, float32)", "float64(float64, float64)", "int64(int64, int64)"],
               target="cuda")
    def add(a, b):
        return a + b

    a = np.arange(5, dtype=np.int64)
    out = np.zeros(5, dtype=np.int64)
    r = add(a, a, out=out)
    assert r is out
    assert (out == 2 * a).all()
    assert add(a, a).dtype == np.float64  # without out: the first loop taking the inputs
    f = np.zeros(5, dtype=np.float32)
    add(a, a, out=f)  # float64 → float32 is same_kind: the float64 loop stays
    assert (f == 2 * a).all()
    with pytest.raises(TypeError, match=r"ufunc 'add' output \(dtype float64\) could not be "
                                        r"coerced to provided output parameter \(dtype int32\)"):
        add(a.astype(np.float64), a.astype(np.float64), out=np.zeros(5, dtype=np.int32))


DATETIMES = ["M8[Y]", "M8[M]", "M8[W]", "M8[D]", "M8[h]", "M8[s]", "M8[ns]", "M8",
             "m8[Y]", "m8[M]", "m8[W]", "m8[D]", "m8[h]", "m8[s]", "m8[ns]", "m8"]


def _none_where_numpy_casts(a, b):
    """The datetime casts the table refuses although NumPy makes them (docs/language.md):
    between datetime64 and timedelta64, complex into either, and into a coarser unit a count
    cannot be divided into exactly (days into months or years, a timedelta of years or months
    into days)."""
    da, db = np.dtype(a), np.dtype(b)
    if {da.kind, db.kind} == {"M", "m"} or (da.kind == "c" and db.kind in "Mm"):
        return True
    if da.kind == db.kind and da.kind in "Mm":
        ua, ub = np.datetime_data(da)[0], np.datetime_data(db)[0]
        calendar = ("Y", "M")
        return (ub in calendar and ua not in calendar) or (da.kind == "m" and ua in calendar
                                                           and ub not in calendar)
    return False


@pytest.mark.parametrize("casting", ["no", "safe", "same_kind", "unsafe"])
def test_datetime_pairs_match_numpy_can_cast(casting):
    for a, b in itertools.product(DATETIMES + DTYPES, DATETIMES):
        for x, y in ((a, b), (b, a)):
            numpy_grade, numba_grade = _core._conversion(np.dtype(x).name, np.dtype(y).name)
            if numpy_grade == "none":
                assert _none_where_numpy_casts(x, y), (x, y)
                continue
            assert (numpy_grade in ALLOWED[casting]) == np.can_cast(x, y, casting), (x, y)
            # numba converts only into a unit of the same kind that holds every value exactly
            assert numba_grade in ("exact", "safe", "none"), (x, y, numba_grade)
