"""numpy.datetime64 and numpy.timedelta64 in kernels (numba's NPDatetime / NPTimedelta): arrays
and scalars of every unit as arguments, device arrays, arithmetic and comparisons with numba's
unit rules and NaT semantics, ufunc signatures, and the errors for what numba refuses too."""
import numpy as np
import pytest

from ptxjit import cuda, errors, guvectorize, types, vectorize

NAT_D = np.datetime64("NaT", "D")
NAT_TD = np.timedelta64("NaT", "D")


def dates(n=40, unit="D", start="2004-12-25"):
    return np.arange(np.datetime64(start, unit), np.datetime64(start, unit) + n)


def test_datetime_arrays_subtract_to_timedelta(backend):
    @cuda.jit
    def k(start, end, delta):
        for i in range(cuda.grid(1), delta.size, cuda.gridsize(1)):
            delta[i] = end[i] - start[i]

    a = dates()
    b = a + np.random.default_rng(1).integers(-500, 500, a.size)
    b[3] = NAT_D
    delta = np.zeros(a.size, dtype="timedelta64[D]")
    k[1, 32](a, b, delta)
    np.testing.assert_array_equal(delta, b - a)
    assert np.isnat(delta[3])


def test_scalar_arguments_and_comparisons(backend):
    @cuda.jit
    def k(ds, target, delta, eq, lt, shifted):
        i = cuda.grid(1)
        if i < ds.size:
            eq[i] = ds[i] == target
            lt[i] = ds[i] < target
            shifted[i] = ds[i] - delta

    ds = dates(10)
    target, delta = ds[5], np.timedelta64(3, "D")
    eq = np.zeros(10, dtype=np.bool_)
    lt = np.zeros(10, dtype=np.bool_)
    shifted = np.zeros(10, dtype="datetime64[D]")
    k[1, 32](ds, target, delta, eq, lt, shifted)
    np.testing.assert_array_equal(eq, ds == target)
    np.testing.assert_array_equal(lt, ds < target)
    np.testing.assert_array_equal(shifted, ds - delta)


@pytest.mark.parametrize("unit", ["Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns"])
def test_every_unit_passes_and_combines_with_seconds(backend, unit):
    # datetime[unit] + timedelta[s]: numba's result unit (the finer one), years and months
    # through the calendar.
    @cuda.jit
    def k(d, td, out):
        i = cuda.grid(1)
        if i < d.size:
            out[i] = d[i] + td

    d = np.array(["1969-03-01", "2000-02-29", "2024-12-31", "1900-01-01", "NaT"],
                 dtype=f"datetime64[{unit}]")
    td = np.timedelta64(90061, "s")
    expected = d + td
    out = np.zeros(d.size, dtype=expected.dtype)
    k[1, 8](d, td, out)
    np.testing.assert_array_equal(out, expected)


def test_mixed_units_follow_numpy(backend):
    @cuda.jit
    def k(days, secs, months, diff, later, cmp):
        diff[0] = days[0] - secs[0]  # datetime[D] - datetime[s]: timedelta[s]
        later[0] = months[0] + (days[1] - days[0])  # datetime[M] + timedelta[D]: datetime[D]
        cmp[0] = months[0] < days[0]  # compared in days
        cmp[1] = days[0] == secs[1]

    days = np.array(["2020-03-01", "2020-04-15"], dtype="datetime64[D]")
    secs = np.array(["2020-02-28T12:00:00", "2020-03-01T00:00:00"], dtype="datetime64[s]")
    months = np.array(["2020-02"], dtype="datetime64[M]")
    diff = np.zeros(1, dtype="timedelta64[s]")
    later = np.zeros(1, dtype="datetime64[D]")
    cmp = np.zeros(2, dtype=np.bool_)
    k[1, 1](days, secs, months, diff, later, cmp)
    assert diff[0] == days[0] - secs[0]
    assert later[0] == months[0] + (days[1] - days[0])
    assert list(cmp) == [months[0] < days[0], days[0] == secs[1]]


def test_timedelta_arithmetic(backend):
    @cuda.jit
    def k(a, b, n, f, tds, ratio, quot, ints):
        tds[0] = a[0] + b[0]
        tds[1] = a[0] - b[0]
        tds[2] = a[0] * n
        tds[3] = n * a[0]
        tds[4] = a[0] * f
        tds[5] = a[0] // n
        tds[6] = a[0] / n
        tds[7] = a[0] % b[0]
        tds[8] = -a[0]
        tds[9] = abs(b[0])
        tds[10] = a[0] / 0  # NaT, as numba gives it
        ratio[0] = a[0] / b[0]
        quot[0] = a[0] // b[0]
        ints[0] = a[0] // b[1]  # by zero: 0

    a = np.array([np.timedelta64(-7, "h")])
    b = np.array([np.timedelta64(-120, "m"), np.timedelta64(0, "m")])
    n, f = 3, 2.5
    tds = np.zeros(11, dtype="timedelta64[m]")
    ratio = np.zeros(1)
    quot = np.zeros(1, dtype=np.int64)
    ints = np.ones(1, dtype=np.int64)
    k[1, 1](a, b, n, f, tds, ratio, quot, ints)
    with np.errstate(all="ignore"):
        expected = [a[0] + b[0], a[0] - b[0], a[0] * n, n * a[0], a[0] * f, a[0] // n,
                    a[0] / n, a[0] % b[0], -a[0], abs(b[0])]
    np.testing.assert_array_equal(tds[:10], np.array(expected).astype("timedelta64[m]"))
    assert np.isnat(tds[10])
    assert ratio[0] == a[0] / b[0] and quot[0] == a[0] // b[0] and ints[0] == 0


def test_nat_semantics(backend):
    @cuda.jit
    def k(d, td, out_d, out_td, flags):
        out_d[0] = d[0] + td[1]  # NaT datetime
        out_d[1] = d[1] + td[0]  # NaT timedelta
        out_td[0] = d[0] - d[1]
        out_td[1] = td[0] * 2
        flags[0] = d[0] == d[0]
        flags[1] = d[0] != d[0]
        flags[2] = d[0] < d[1]
        flags[3] = d[0] >= d[1]
        flags[4] = td[0] == td[0]
        flags[5] = td[0] != td[1]

    d = np.array(["NaT", "2001-01-01"], dtype="datetime64[D]")
    td = np.array(["NaT", 4], dtype="timedelta64[D]")
    out_d = np.zeros(2, dtype="datetime64[D]")
    out_td = np.zeros(2, dtype="timedelta64[D]")
    flags = np.zeros(6, dtype=np.bool_)
    k[1, 1](d, td, out_d, out_td, flags)
    assert np.isnat(out_d).all() and np.isnat(out_td).all()
    assert list(flags) == [False, True, False, False, False, True]


def test_device_arrays_and_views(backend):
    a = dates(12)
    d = cuda.to_device(a)
    assert d.dtype == a.dtype
    np.testing.assert_array_equal(d.copy_to_host(), a)
    v = d.view(np.int64)
    np.testing.assert_array_equal(v.copy_to_host(), a.view(np.int64))
    assert v.gpu_data == d.gpu_data
    td = cuda.device_array(12, dtype="timedelta64[s]")

    @cuda.jit
    def k(dd, out, raw):
        i = cuda.grid(1)
        if i < dd.size:
            out[i] = dd[i] - dd[0]
            raw[i] = dd.view(np.int64)[i]

    raw = np.zeros(12, dtype=np.int64)
    k[1, 32](d, td, raw)
    np.testing.assert_array_equal(td.copy_to_host(), (a - a[0]).astype("timedelta64[s]"))
    np.testing.assert_array_equal(raw, a.view(np.int64))


@pytest.mark.gpu
def test_cuda_array_interface_producers(cuda_target):
    # A foreign array (CuPy's, say) of a datetime dtype: its typestr is "<M8[D]".
    class Foreign:
        def __init__(self, arr):
            self.arr = arr
            self.__cuda_array_interface__ = arr.__cuda_array_interface__

    @cuda.jit
    def assign(out, arr):
        for i in range(arr.shape[0]):
            out[i] = arr[i]

    a = dates(20)
    src, dst = cuda.to_device(a), cuda.device_array(a.size, dtype=a.dtype)
    assert src.__cuda_array_interface__["typestr"] == "<M8[D]"
    assign[1, 1](Foreign(dst), Foreign(src))
    np.testing.assert_array_equal(dst.copy_to_host(), a)
    assert cuda.as_cuda_array(Foreign(src)).dtype == a.dtype


def test_vectorize_and_guvectorize(backend):
    target = "cpu" if backend == "cpu" else "cuda"

    @vectorize(["timedelta64[D](datetime64[D], datetime64[D])"], target=target)
    def diff_str(start, end):
        return end - start

    dt = types.NPDatetime("D")

    @vectorize([(dt, dt)], target=target)  # numba infers the return type
    def diff_types(start, end):
        return end - start

    @guvectorize([(dt, dt, types.NPTimedelta("D")[:])], "(),()->()", target=target)
    def diff_gu(start, end, out):
        out[0] = end - start

    a = dates(30)
    b = a + np.arange(30) * 3
    for fn in (diff_str, diff_types, diff_gu):
        got = fn(a, b)
        assert got.dtype == np.dtype("timedelta64[D]")
        np.testing.assert_array_equal(got, b - a)


def test_type_objects():
    dt, td = types.NPDatetime("D"), types.NPTimedelta("s")
    assert str(dt) == "datetime64[D]" and str(td) == "timedelta64[s]"
    assert dt.unit == "D" and str(types.NPDatetime("")) == "datetime64"
    assert types.from_dtype(np.dtype("datetime64[D]")) == dt
    assert types.from_dtype(np.dtype("m8[s]")) == td
    assert str(dt[:]) == "array(datetime64[D], 1d, A)"
    assert dt.dtype == np.dtype("datetime64[D]")
    assert dt("2001-02-03") == np.datetime64("2001-02-03", "D")
    with pytest.raises(ValueError, match="no unit 'x'"):
        types.NPTimedelta("x")
    with pytest.raises(TypeError, match="multiples of a unit"):
        types.from_dtype(np.dtype("datetime64[2D]"))


def test_numba_type_objects_are_mapped():
    class NPDatetime:  # what numba's from_dtype gives, as far as ptxjit looks at it
        def __init__(self, unit):
            self.unit = unit
            self.name = f"datetime64[{unit}]"

    NPDatetime.__module__ = "numba.core.types.scalars"
    assert types.as_type(NPDatetime("h")) == types.NPDatetime("h")


def test_signatures_show_the_units(cpu):
    @cuda.jit
    def k(d, td, out):
        out[0] = d[0] + td

    k[1, 1](dates(2), np.timedelta64(1, "h"), np.zeros(1, dtype="datetime64[h]"))
    (sig,) = k.signatures
    assert str(sig[0]) == "array(datetime64[D], 1d, C)" and str(sig[1]) == "timedelta64[h]"


def test_errors(cpu):
    @cuda.jit
    def add_dates(a, out):
        out[0] = a[0] + a[1]

    with pytest.raises(errors.TypingError, match=r"operator \+ is not defined for "
                                                 r"datetime64\[D\] and datetime64\[D\]"):
        add_dates[1, 1](dates(2), np.zeros(1, dtype="datetime64[D]"))

    @cuda.jit
    def months_plus_days(a, b, out):
        out[0] = a[0] + b[0]

    with pytest.raises(errors.TypingError, match=r"timedelta64\[M\] and timedelta64\[D\]"):
        months_plus_days[1, 1](np.zeros(1, "m8[M]"), np.zeros(1, "m8[D]"), np.zeros(1, "m8[D]"))

    @cuda.jit
    def store_mismatch(a, out):
        out[0] = a[0]

    with pytest.raises(errors.TypingError, match="cannot store"):
        store_mismatch[1, 1](np.zeros(1, "m8[D]"), np.zeros(1, "M8[D]"))
    with pytest.raises(errors.TypingError, match="cannot store"):
        store_mismatch[1, 1](np.zeros(1, "m8[s]"), np.zeros(1, "m8[D]"))  # finer into coarser
    with pytest.raises(TypeError, match="multiples of a unit|datetime64\\[2D\\]"):
        store_mismatch[1, 1](np.zeros(1, "M8[2D]"), np.zeros(1, "M8[2D]"))


def test_local_array_of_a_datetime_dtype_string(backend):
    @cuda.jit
    def k(a, out):
        tmp = cuda.local.array(2, "M8[D]")
        tmp[0] = a[0]
        tmp[1] = a[1]
        out[0] = tmp[1] - tmp[0]

    a = np.array(["2020-01-01", "2020-01-11"], dtype="M8[D]")
    out = np.zeros(1, "m8[D]")
    k[1, 1](a, out)
    assert out[0] == np.timedelta64(10, "D")


def _isnat(d, t, o):
    o[0] = np.isnat(d[0])
    o[1] = np.isnat(d[1])
    o[2] = np.isnat(t[0])
    o[3] = np.isnat(t[1] - t[0])  # NaT propagates


def test_isnat(backend):
    d = np.array(["NaT", "2020-01-01"], "M8[D]")
    t = np.array([3, "NaT"], "m8[s]")
    o = np.zeros(4, np.bool_)
    cuda.jit(_isnat)[1, 1](d, t, o)
    assert o.tolist() == [np.isnat(d[0]), np.isnat(d[1]), np.isnat(t[0]), np.isnat(t[1] - t[0])]
    assert o.tolist() == [True, False, False, True]


def test_isnat_of_a_number_is_a_typing_error(cpu):
    from ptxjit.errors import TypingError

    with pytest.raises(TypingError, match=r"numpy.isnat cannot be called with \(float64\)"):
        cuda.jit(_isnat)[1, 1](np.zeros(2), np.zeros(2), np.zeros(4, np.bool_))
