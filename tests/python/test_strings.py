"""Fixed-length strings in kernels, NumPy's `S<n>` and `U<n>` (numba's CharSeq and
UnicodeCharSeq): arrays of them (host and device) and record fields of them take string
constants (bytes into S, str into U, cut to the length or padded with zeros as NumPy assigns),
elements copy into elements of the same type and compare with == / != against elements and
constants of their kind; everything else is refused with a message naming it."""
import re

import numpy as np
import pytest

from ptxjit import cuda, types
from ptxjit.errors import TypingError, UnsupportedError


def assert_compiles_to_ptx(*kernels):
    """Every specialization the test ran also compiles for CUDA (checked without a GPU too)."""
    for k in kernels:
        assert k.signatures
        for sig in k.signatures:
            assert ".visible .entry" in k.inspect_ptx(sig)


# ---- numba-cuda's test_const_string (TestConstString), ported ----


def test_assign_const_unicode_string(backend):
    @cuda.jit
    def str_assign(arr):
        i = cuda.grid(1)
        if i < len(arr):
            arr[i] = "XYZ"

    arr = np.zeros(9, dtype="<U12")
    str_assign[1, 8](arr)
    expected = np.zeros_like(arr)
    expected[:-1] = "XYZ"
    np.testing.assert_equal(arr, expected)
    assert_compiles_to_ptx(str_assign)


def test_assign_const_byte_string(backend):
    @cuda.jit
    def bytes_assign(arr):
        i = cuda.grid(1)
        if i < len(arr):
            arr[i] = b"XYZ"

    arr = np.zeros(9, dtype="S12")
    bytes_assign[1, 8](arr)
    expected = np.zeros_like(arr)
    expected[:-1] = b"XYZ"
    np.testing.assert_equal(arr, expected)
    assert_compiles_to_ptx(bytes_assign)


def test_assign_const_string_in_record(backend):
    @cuda.jit
    def f(a):
        a[0]["x"] = 1
        a[0]["y"] = "ABC"
        a[1]["x"] = 2
        a[1]["y"] = "XYZ"

    dt = np.dtype([("x", np.int32), ("y", np.dtype("<U12"))])
    a = np.zeros(2, dt)
    f[1, 1](a)
    np.testing.assert_array_equal(np.asarray([(1, "ABC"), (2, "XYZ")], dtype=dt), a)
    assert_compiles_to_ptx(f)


def test_assign_const_bytes_in_record(backend):
    @cuda.jit
    def f(a):
        a[0]["x"] = 1
        a[0]["y"] = b"ABC"
        a[1]["x"] = 2
        a[1]["y"] = b"XYZ"

    dt = np.dtype([("x", np.float32), ("y", np.dtype("S12"))])
    a = np.zeros(2, dt)
    f[1, 1](a)
    np.testing.assert_array_equal(np.asarray([(1, b"ABC"), (2, b"XYZ")], dtype=dt), a)


# ---- stores: truncation, zero fill, code points, bytes ----


def test_shorter_constant_zero_fills(backend):
    @cuda.jit
    def f(u, s):
        u[1] = "XY"
        s[1] = b"XY"

    u = np.array(["ABCDEFGH"] * 3, dtype="U8")
    s = np.array([b"ABCDEFGH"] * 3, dtype="S8")
    f[1, 1](u, s)
    assert list(u) == ["ABCDEFGH", "XY", "ABCDEFGH"]
    assert list(s) == [b"ABCDEFGH", b"XY", b"ABCDEFGH"]
    # The rest of the element is zeros, not the old characters.
    assert list(u.view(np.uint32).reshape(3, 8)[1]) == [ord("X"), ord("Y")] + [0] * 6
    assert list(s.view(np.uint8).reshape(3, 8)[1]) == [ord("X"), ord("Y")] + [0] * 6


def test_longer_constant_is_truncated(backend):
    @cuda.jit
    def f(u, s):
        u[0] = "abcdefgh"
        s[0] = b"abcdefgh"

    u = np.zeros(2, dtype="U3")
    s = np.zeros(2, dtype="S3")
    f[1, 1](u, s)
    expect_u, expect_s = np.zeros_like(u), np.zeros_like(s)
    expect_u[0], expect_s[0] = "abcdefgh", b"abcdefgh"  # NumPy truncates the same way
    np.testing.assert_equal(u, expect_u)
    np.testing.assert_equal(s, expect_s)
    assert u[0] == "abc" and s[0] == b"abc" and u[1] == "" and s[1] == b""


def test_code_points_and_raw_bytes(backend):
    @cuda.jit
    def f(u, s):
        u[0] = "h\u00e9\u2713\U0001f600"
        s[0] = b"\xff\x00a\x80"

    u = np.zeros(1, dtype="U6")
    s = np.zeros(1, dtype="S6")
    f[1, 1](u, s)
    assert u[0] == "h\u00e9\u2713\U0001f600"
    assert list(u.view(np.uint32)) == [0x68, 0xE9, 0x2713, 0x1F600, 0, 0]
    assert bytes(s.view(np.uint8)) == b"\xff\x00a\x80\x00\x00"


def test_constant_through_a_local_and_a_global(backend):
    GREETING = b"hi"

    @cuda.jit
    def f(u, s):
        t = "local"
        u[0] = t
        s[0] = GREETING

    u = np.zeros(1, dtype="U8")
    s = np.zeros(1, dtype="S8")
    f[1, 1](u, s)
    assert u[0] == "local" and s[0] == b"hi"


def test_two_dimensional_and_views(backend):
    @cuda.jit
    def f(a):
        i, j = cuda.grid(2)
        if i < a.shape[0] and j < a.shape[1]:
            a[i, j] = "ij"

    @cuda.jit
    def g(a):
        v = a[1:, ::2]
        v[0, 0] = "view"

    a = np.zeros((3, 4), dtype="U5", order="F")
    f[(1, 1), (3, 4)](a)
    g[1, 1](a)
    expect = np.full((3, 4), "ij", dtype="U5")
    expect[1, 0] = "view"
    np.testing.assert_equal(a, expect)


def test_device_arrays(backend):
    @cuda.jit
    def f(u, s):
        i = cuda.grid(1)
        if i < u.size:
            u[i] = "dev"
            s[i] = b"device"

    host_s = np.array([b"old", b"older", b"oldest"], dtype="S8")
    d_u = cuda.device_array(3, dtype="U4")
    d_s = cuda.to_device(host_s)
    f[1, 3](d_u, d_s)
    assert list(d_u.copy_to_host()) == ["dev"] * 3
    assert list(d_s.copy_to_host()) == [b"device"] * 3
    assert d_s.dtype == np.dtype("S8") and d_u.dtype == np.dtype("<U4")


def test_record_fields_by_attribute_and_field_views(backend):
    dt = np.dtype([("n", np.int16), ("name", "U5"), ("tag", "S3")], align=True)

    @cuda.jit
    def f(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i].name = "rec"
            a[i].tag = b"abcd"  # cut to 3 bytes
            a[i].n = i

    @cuda.jit
    def g(a):
        names = a["name"]  # the field across the records: an array of U5
        names[2] = "third"

    a = np.zeros(3, dtype=dt)
    f[1, 3](a)
    g[1, 1](a)
    assert list(a["name"]) == ["rec", "rec", "third"]
    assert list(a["tag"]) == [b"abc"] * 3
    assert list(a["n"]) == [0, 1, 2]
    assert types.from_dtype(dt).typeof("name") == types.UnicodeCharSeq(5)


# ---- reads: copies and comparisons ----


def test_copy_elements_of_one_type(backend):
    dt = np.dtype([("x", np.int32), ("y", "U4")])

    @cuda.jit
    def f(dst, src, recs):
        i = cuda.grid(1)
        if i < dst.size:
            dst[i] = src[src.size - 1 - i]
            recs[i].y = src[i]
            if i == 0:
                recs[1]["y"] = recs[0]["y"]

    src = np.array(["a", "bb", "ccc", "dddd"], dtype="U4")
    dst = np.zeros(4, dtype="U4")
    recs = np.zeros(4, dtype=dt)
    f[1, 4](dst, src, recs)
    assert list(dst) == ["dddd", "ccc", "bb", "a"]
    assert list(recs["y"])[0] == "a" and list(recs["y"])[2:] == ["ccc", "dddd"]


def test_compare_with_constants_and_elements(backend):
    @cuda.jit
    def f(u, s, out):
        i = cuda.grid(1)
        if i < u.size:
            out[i, 0] = u[i] == "ab"
            out[i, 1] = u[i] != "ab"
            out[i, 2] = s[i] == b"ab"
            out[i, 3] = "ab" == u[i]
            out[i, 4] = u[i] == u[0]
            out[i, 5] = u[i] == "ab\x00"  # a constant ending in NUL equals no element
            out[i, 6] = u[i] == "abcdef"  # longer than the element

    u = np.array(["ab", "abc", "", "a"], dtype="U4")
    s = np.array([b"ab", b"abc", b"", b"a"], dtype="S2")  # b"abc" is stored as b"ab"
    out = np.zeros((4, 7), dtype=np.bool_)
    f[1, 4](u, s, out)
    assert out[:, 0].tolist() == [True, False, False, False]
    assert out[:, 1].tolist() == [False, True, True, True]
    assert out[:, 2].tolist() == [True, True, False, False]
    assert out[:, 3].tolist() == out[:, 0].tolist()
    assert out[:, 4].tolist() == [True, False, False, False]
    assert not out[:, 5].any() and not out[:, 6].any()
    assert_compiles_to_ptx(f)


def test_compare_elements_of_different_lengths(backend):
    @cuda.jit
    def f(a, b, out):
        i = cuda.grid(1)
        if i < a.size:
            out[i] = a[i] == b[i]

    a = np.array([b"ab", b"ab", b"abc", b""], dtype="S3")
    b = np.array([b"ab", b"abcde", b"abc", b""], dtype="S6")
    out = np.zeros(4, dtype=np.bool_)
    f[1, 4](a, b, out)
    assert out.tolist() == [a[k] == b[k] for k in range(4)] == [True, False, True, True]


@cuda.jit(device=True)
def _first_or_second(a, b, first):
    return a if first else b


def test_elements_as_values_iteration_and_device_functions(backend):
    @cuda.jit
    def f(a, out):
        count = 0
        for s in a:  # iterating an array of strings yields its elements
            if s == b"x":
                count += 1
        out[0] = count
        a[2] = _first_or_second(a[0], a[1], out[0] == 2)  # through a device function
        pair = (a[0], a[1])
        a[3] = pair[1]

    a = np.array([b"x", b"yy", b"", b"x"], dtype="S3")
    out = np.zeros(1, dtype=np.int64)
    f[1, 1](a, out)
    assert out[0] == 2
    assert list(a) == [b"x", b"yy", b"x", b"yy"]


# ---- types and signatures ----


def test_type_objects():
    assert str(types.CharSeq(12)) == "[char x 12]"
    assert str(types.UnicodeCharSeq(12)) == "[unichr x 12]"
    assert types.from_dtype("S12") == types.CharSeq(12)
    assert types.from_dtype("<U12") == types.UnicodeCharSeq(12)
    assert types.CharSeq(3) != types.UnicodeCharSeq(3)
    assert types.UnicodeCharSeq(4).dtype == np.dtype("<U4")
    assert str(types.CharSeq(12)[::1]) == "array([char x 12], 1d, C)"
    with pytest.raises(ValueError):
        types.CharSeq(0)


def test_explicit_signature_and_reported_signatures(backend):
    @cuda.jit(types.void(types.UnicodeCharSeq(3)[::1], types.CharSeq(2)[:]))
    def f(u, s):
        u[0] = "sig"
        s[0] = b"ok"

    u = np.zeros(2, dtype="U3")
    s = np.zeros(2, dtype="S2")
    f[1, 1](u, s)
    assert u[0] == "sig" and s[0] == b"ok"

    @cuda.jit
    def g(a):
        a[0] = b"x"

    g[1, 1](np.zeros(1, dtype="S5"))
    assert g.signatures == [(types.Array(types.CharSeq(5), 1, "C"),)]


# ---- refused constructs ----


def _compile_error(kernel, *args, error=TypingError):
    with pytest.raises(error) as e:
        kernel[1, 1](*args)
    return str(e.value)


def test_str_into_bytes_and_bytes_into_str_are_refused(backend):
    @cuda.jit
    def str_into_s(a):
        a[0] = "XYZ"

    @cuda.jit
    def bytes_into_u(a):
        a[0] = b"XYZ"

    msg = _compile_error(str_into_s, np.zeros(1, dtype="S4"))
    assert "cannot store unicode_type into array([char x 4], 1d, C)[Literal[int]]: a str; " \
           "[char x 4] elements (NumPy's S4) take bytes constants such as b'abc'" in msg
    assert "test_strings.py" in msg and "a[0] = \"XYZ\"" in msg
    msg = _compile_error(bytes_into_u, np.zeros(1, dtype="U4"))
    assert "[unichr x 4]" in msg and "take str constants" in msg

    dt = np.dtype([("y", "S4")])

    @cuda.jit
    def str_into_field(r):
        r[0].y = "XYZ"

    assert "take bytes constants" in _compile_error(str_into_field, np.zeros(1, dtype=dt))
    # The process goes on: a correct kernel still compiles and runs.
    test_assign_const_byte_string(backend)


def test_non_constant_strings_and_other_values_are_refused(backend):
    @cuda.jit
    def chosen(a, flag):
        s = "yes" if flag else "no"
        a[0] = s

    @cuda.jit
    def number(a):
        a[0] = 1

    @cuda.jit
    def other_length(a, b):
        a[0] = b[0]

    @cuda.jit
    def into_view(a):
        a[1:] = b"x"

    assert "not a compile-time constant" in _compile_error(chosen, np.zeros(1, dtype="U4"), 1)
    assert "cannot store" in _compile_error(number, np.zeros(1, dtype="U4"))
    msg = _compile_error(other_length, np.zeros(1, dtype="S4"), np.zeros(1, dtype="S5"))
    assert "another string type" in msg
    assert "assigning to a view of an array of [char x 4]" in _compile_error(
        into_view, np.zeros(3, dtype="S4"), error=UnsupportedError)


def test_mixed_kind_and_ordered_comparisons_are_refused(backend):
    @cuda.jit
    def mixed(a, out):
        out[0] = a[0] == "x"

    @cuda.jit
    def ordered(a, out):
        out[0] = a[0] < b"x"

    out = np.zeros(1, dtype=np.bool_)
    msg = _compile_error(mixed, np.zeros(1, dtype="S4"), out)
    assert "S elements compare with bytes, U elements with str" in msg
    msg = _compile_error(ordered, np.zeros(1, dtype="S4"), out)
    assert "compare only with == and !=" in msg


def test_other_operations_on_strings_are_refused(backend):
    @cuda.jit
    def length(a, out):
        out[0] = len(a[0])

    @cuda.jit
    def add(a, out):
        out[0] = a[0] + 1

    @cuda.jit
    def truth(a, out):
        if a[0]:
            out[0] = 1

    @cuda.jit
    def reduce(a, out):
        out[0] = a.sum()

    @cuda.jit
    def show(a, out):
        print(a[0])

    a = np.zeros(2, dtype="S4")
    out = np.zeros(1, dtype=np.int64)
    assert "len cannot be called with ([char x 4])" in _compile_error(length, a, out)
    assert "operator + is not defined for [char x 4]" in _compile_error(add, a, out)
    assert "[char x 4] has no truth value" in _compile_error(truth, a, out)
    assert "an array of strings cannot be reduced" in _compile_error(reduce, a, out)
    assert "print() of a value of type [char x 4]" in _compile_error(
        show, a, out, error=UnsupportedError)
    from ptxjit import vectorize

    @vectorize(["float32(float32)"], target="cuda")
    def neg(x):
        return -x

    with pytest.raises(TypeError, match="not records or strings"):  # the bindings' TypeError
        neg(cuda.to_device(a))


GLOBAL_NAMES = np.array(["a", "b"], dtype="U2")


def test_str_constant_through_a_device_function(backend):
    @cuda.jit(device=True)
    def put(a, s):
        a[0] = s  # s is Literal[str]: a constant in each specialization

    @cuda.jit
    def f(a):
        put(a, "dev")

    a = np.zeros(1, dtype="U4")
    f[1, 1](a)
    assert a[0] == "dev"


def test_unsupported_string_dtypes_are_refused(backend):
    @cuda.jit
    def f(a):
        a[0] = "x"

    @cuda.jit
    def local(a):
        tmp = cuda.local.array(2, a.dtype)
        tmp[0] = "x"

    @cuda.jit
    def constant(a):
        a[0] = GLOBAL_NAMES[0]

    class Interface:  # a __cuda_array_interface__ producer of |S4 elements
        __cuda_array_interface__ = {"shape": (2,), "typestr": "|S4", "data": (0, False),
                                    "version": 3, "strides": None}

    a = np.zeros(2, dtype="U4")
    assert "local.array" in _compile_error(local, a)
    with pytest.raises((TypingError, UnsupportedError), match="GLOBAL_NAMES"):
        constant[1, 1](a)
    with pytest.raises(TypeError, match=re.escape("typestr |S4 is not supported")):
        f[1, 1](Interface())

    with pytest.raises(TypeError, match="big-endian"):
        f[1, 1](np.zeros(1, dtype=">U4"))
    with pytest.raises(TypeError, match="array of strings"):
        f[1, 1](np.zeros(1, dtype=[("y", "S2", 3)]))


CACHED_PROGRAM = '''
import json
import numpy as np
from ptxjit import cuda

dt = np.dtype([("x", np.int32), ("y", "U3")])


@cuda.jit(cache=True)
def k(a, s, r):
    a[0] = "XYZW"
    s[1] = b"hi"
    r[0].y = "ab"
    if a[0] == "XYZ":
        r[1].x = 7


a, s, r = np.zeros(2, "U3"), np.zeros(2, "S5"), np.zeros(2, dt)
k[1, 1](a, s, r)
print(json.dumps({"a": a.tolist(), "s": [x.decode() for x in s], "y": r["y"].tolist(),
                  "x": r["x"].tolist(), "hits": sum(k.stats.cache_hits.values())}))
'''


def test_string_kernels_load_from_the_disk_cache(cached_runs):
    runs = cached_runs(CACHED_PROGRAM)
    assert [r["hits"] for r in runs] == [0, 1]  # the string types' spellings read back
    for r in runs:
        assert r["a"] == ["XYZ", ""] and r["s"] == ["", "hi"]
        assert r["y"] == ["ab", ""] and r["x"] == [0, 7]
