"""Records (NumPy structured dtypes) in kernels, with numba-cuda's semantics: arrays of records
as arguments (host and device), field reads and writes (r.x, r['x'], r[0]), nested records and
array fields, record scalars passed by reference, records in local and shared arrays, constant
record arrays, signatures with ptxjit.types.Record / from_dtype, and the errors."""
import numpy as np
import pytest

import ptxjit
from ptxjit import cuda, types
from ptxjit.errors import TypingError

recordtype = np.dtype(
    [("a", np.float64), ("b", np.int32), ("c", np.complex64), ("d", (np.uint8, 5))], align=True)
recordwitharray = np.dtype([("g", np.int32), ("h", np.float32, 2)], align=True)
recordwith2darray = np.dtype([("i", np.int32), ("j", np.float32, (3, 2))])
packed = np.dtype([("a", np.float64), ("b", np.int32), ("c", np.int8)])
nested = np.dtype([("x", np.float32), ("inner", [("p", np.int16), ("q", np.float64)])],
                  align=True)


def assert_compiles_to_ptx(*kernels):
    """Every specialization the test ran (on either backend) also compiles for CUDA: CUDA code
    generation is checked on machines without a GPU too."""
    for k in kernels:
        assert k.signatures
        for sig in k.signatures:
            assert ".visible .entry" in k.inspect_ptx(sig)


def sample():
    a = np.zeros(3, dtype=recordtype)
    for i in range(3):
        x = i + 1
        a[i]["a"] = x / 2
        a[i]["b"] = x
        a[i]["c"] = x * 1j
        a[i]["d"] = np.arange(5) + x
    return a


@pytest.mark.parametrize("field,value", [("a", 3.1415), ("b", 123), ("c", 43j), ("b", 7.9)])
def test_set_field_of_array_element(backend, field, value):
    def set_a(ary, i, v):
        ary[i].a = v

    def set_b(ary, i, v):
        ary[i].b = v

    def set_c(ary, i, v):
        ary[i].c = v

    set_attr = cuda.jit({"a": set_a, "b": set_b, "c": set_c}[field])
    for i in range(3):
        got = sample()
        expect = got.copy()
        set_attr[1, 1](got, i, value)
        expect[i][field] = value
        assert np.all(got == expect)


def test_read_fields_by_attribute_name_and_position(backend):
    @cuda.jit
    def read(ary, out_a, out_b, out_c):
        i = cuda.grid(1)
        if i < ary.size:
            out_a[i] = ary[i].a
            out_b[i] = ary[i]["b"]
            out_c[i] = ary[i][2]  # the third field, c

    a = sample()
    out_a, out_b, out_c = np.zeros(3), np.zeros(3, np.int64), np.zeros(3, np.complex128)
    read[1, 3](a, out_a, out_b, out_c)
    np.testing.assert_equal(out_a, a["a"])
    np.testing.assert_equal(out_b, a["b"])
    np.testing.assert_equal(out_c, a["c"])


def test_whole_record_assignment(backend):
    @cuda.jit
    def set_record(ary, i, j):
        ary[i] = ary[j]

    for i, j in [(0, 1), (1, 2), (0, 2)]:
        got, expect = sample(), sample()
        expect[i] = expect[j]
        set_record[1, 1](got, i, j)
        assert got[i] == got[j]
        assert np.all(got == expect)


def test_recarray_and_field_name_indexing(backend):
    @cuda.jit
    def kernel(r):
        i = cuda.grid(1)
        if i < r.size:
            r[i]["a"] = r[i].b * 2.0

    a = np.recarray(4, dtype=recordtype)
    a.a = 0
    a.b = np.arange(4)
    kernel[1, 4](a)
    np.testing.assert_equal(a.a, np.arange(4) * 2.0)


def test_nested_array_fields(backend):
    @cuda.jit
    def write(r):
        r.i = 3
        r.j[0, 0] = 5.0
        r.j[0, 1] = 6.0
        r.j[1, 0] = 7.0
        r.j[1, 1] = 8.0
        r.j[2, 0] = 9.0
        r.j[2, 1] = 10.0

    @cuda.jit
    def read(r, out):
        for y in range(3):
            for x in range(2):
                out[y, x] = r.j[y, x]
        out[0, 0] += r["j"].shape[0] * 100 + r.j.size

    rec = np.zeros(1, dtype=recordwith2darray)[0]
    write[1, 1](rec)
    assert rec["i"] == 3
    np.testing.assert_equal(rec["j"], np.arange(5, 11, dtype=np.float32).reshape(3, 2))
    out = np.zeros((3, 2), np.float32)
    read[1, 1](rec, out)
    expect = rec["j"].copy()
    expect[0, 0] += 306
    np.testing.assert_equal(out, expect)
    assert_compiles_to_ptx(write, read)


def test_record_scalar_written_back_and_read(backend):
    @cuda.jit
    def kernel(r, v, out):
        out[0] = r.a
        r.a = v
        r.b = 7
        r.c = v * 1j

    a = sample()
    rec = a[1]
    out = np.zeros(1)
    kernel[1, 1](rec, 2.5, out)
    assert out[0] == 1.0
    assert a[1]["a"] == 2.5 and a[1]["b"] == 7 and a[1]["c"] == 2.5j
    assert a[0]["a"] == 0.5  # the other records are untouched
    copy = sample()[2].copy()
    kernel[1, 1](copy, 4.0, out)
    assert copy["a"] == 4.0 and out[0] == 1.5
    assert_compiles_to_ptx(kernel)


def test_assign_arrays_to_nested_array_fields(backend):
    d1 = np.dtype([("array1", np.int16, (3,))], align=True)
    d2 = np.dtype([("array2", np.int16, (3, 2))], align=True)

    @cuda.jit
    def assign1(dest, src):
        dest["array1"] = src

    @cuda.jit
    def assign2(dest, src):
        dest["array2"] = src

    @cuda.jit
    def fill(dest, v):
        dest.array2 = v

    got = np.zeros(2, dtype=d1)
    assign1[1, 1](got[0], (np.arange(3) + 1).astype(np.int16))
    np.testing.assert_equal(got["array1"], [[1, 2, 3], [0, 0, 0]])
    got2 = np.zeros(2, dtype=d2)
    src = (np.arange(6) + 1).astype(np.int16).reshape(3, 2)
    assign2[1, 1](got2[1], src)
    np.testing.assert_equal(got2["array2"][1], src)
    np.testing.assert_equal(got2["array2"][0], 0)
    fill[1, 1](got2[0], 9)
    np.testing.assert_equal(got2["array2"][0], 9)
    assert_compiles_to_ptx(assign1, assign2, fill)


def test_copy_between_records_of_different_dtypes(backend):
    src_dtype = np.dtype([("user", np.float64), ("array", np.int16, (3,))], align=True)
    dest_dtype = np.dtype([("user1", np.float64), ("array1", np.int16, (3,))], align=True)

    @cuda.jit
    def copy(index, src, dest):
        dest["user1"] = src[index]["user"]
        dest["array1"] = src[index]["array"]

    source = np.zeros(2, dtype=src_dtype)
    got = np.zeros(2, dtype=dest_dtype)
    source[0] = (1.2, [1, 2, 3])
    copy[1, 1](0, source, got[0])
    assert got[0]["user1"] == 1.2
    np.testing.assert_equal(got[0]["array1"], [1, 2, 3])


def test_nested_records(backend):
    @cuda.jit
    def kernel(a, out):
        i = cuda.grid(1)
        if i < a.size:
            inner = a[i].inner
            out[i] = inner.q + a[i]["inner"]["p"] + a[i].x
            inner.p = i + 100
            a[i].inner.q = -1.0

    a = np.zeros(3, dtype=nested)
    a["x"] = [1, 2, 3]
    a["inner"]["p"] = [10, 20, 30]
    a["inner"]["q"] = [0.5, 0.25, 0.125]
    out = np.zeros(3)
    kernel[1, 3](a, out)
    np.testing.assert_equal(out, [11.5, 22.25, 33.125])
    np.testing.assert_equal(a["inner"]["p"], [100, 101, 102])
    np.testing.assert_equal(a["inner"]["q"], -1.0)
    assert_compiles_to_ptx(kernel)


def test_records_through_device_functions(backend):
    @cuda.jit(device=True)
    def first(r):
        return r[0]

    @cuda.jit(device=True)
    def element(arr, i):
        return arr[i]

    @cuda.jit(device=True)
    def bump(r, v):
        r.b += v

    @cuda.jit
    def kernel(arr, res, firsts):
        res[0] = element(arr, 2)
        firsts[0] = first(arr[1])
        bump(arr[0], 5)

    arr = sample()
    res = np.zeros(1, dtype=recordtype)
    firsts = np.zeros(1)
    kernel[1, 1](arr, res, firsts)
    assert res[0] == sample()[2]
    assert firsts[0] == 1.0
    assert arr[0]["b"] == 6
    assert_compiles_to_ptx(kernel)


def test_packed_record_fields(backend):
    @cuda.jit
    def kernel(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i].a = a[i].b + a[i].c * 0.5
            a[i].c = -a[i].c

    a = np.zeros(5, dtype=packed)  # itemsize 13: the float64 of odd elements is unaligned
    a["b"] = np.arange(5)
    a["c"] = np.arange(5) * 2
    kernel[1, 5](a)
    np.testing.assert_equal(a["a"], np.arange(5) * 2.0)
    np.testing.assert_equal(a["c"], -np.arange(5) * 2)
    assert_compiles_to_ptx(kernel)


def test_device_arrays_of_records(backend):
    @cuda.jit
    def kernel(a):
        i = cuda.grid(1)
        if i < a.shape[0]:
            a[i].b = i * 3
            a[i].d[1] = i

    h = sample()
    d = cuda.to_device(h)
    kernel[1, 3](d)
    got = d.copy_to_host()
    assert got.dtype == recordtype
    np.testing.assert_equal(got["b"], [0, 3, 6])
    np.testing.assert_equal(got["d"][:, 1], [0, 1, 2])
    np.testing.assert_equal(got["a"], h["a"])
    e = cuda.device_array(3, dtype=recordtype)
    kernel[1, 3](e)
    np.testing.assert_equal(e.copy_to_host()["b"], [0, 3, 6])
    f = cuda.device_array_like(h)
    assert f.dtype == recordtype and f.shape == (3,)


def test_field_views_of_record_arrays(backend):
    @cuda.jit
    def kernel(a, out, d):
        xs = a.a
        ds = a["d"]
        for i in range(xs.shape[0]):
            out[i] = xs[i]
            d[i] = ds[i, 4]
        a.b[1] = 42

    a = sample()
    out, d = np.zeros(3), np.zeros(3, np.uint8)
    kernel[1, 1](a, out, d)
    np.testing.assert_equal(out, a["a"])
    np.testing.assert_equal(d, a["d"][:, 4])
    assert a[1]["b"] == 42
    assert_compiles_to_ptx(kernel)


def test_local_and_shared_arrays_of_records(backend):
    rec = ptxjit.from_dtype(recordwitharray)

    @cuda.jit
    def kernel(out):
        loc = cuda.local.array(2, recordwitharray)
        sh = cuda.shared.array(4, rec)
        t = cuda.threadIdx.x
        sh[t].g = t
        sh[t].h[0] = t * 0.5
        loc[0].g = 10 + t
        loc[1] = sh[t]
        cuda.syncthreads()
        out[t] = sh[3 - t].g + sh[3 - t].h[0] + loc[0].g + loc[1].g

    out = np.zeros(4)
    kernel[1, 4](out)
    t = np.arange(4)
    np.testing.assert_equal(out, (3 - t) * 1.5 + 10 + 2 * t)
    assert_compiles_to_ptx(kernel)


CONST_RECORD = np.array([(1.0, 2), (3.0, 4)], dtype=[("x", float), ("y", int)])
CONST_RECORD_EMPTY = np.array([], dtype=[("x", float), ("y", int)])
CONST_RECORD_ALIGN = np.array(
    [(1, 2, 3, 0xDEADBEEF, 8), (4, 5, 6, 0xBEEFDEAD, 10)],
    dtype=np.dtype([("a", np.uint8), ("b", np.uint8), ("x", np.uint8), ("y", np.uint32),
                    ("z", np.uint8)], align=True))


def test_constant_record_arrays(backend):
    @cuda.jit
    def kernel(A, B, n, Y):
        C = cuda.const.array_like(CONST_RECORD)
        E = cuda.const.array_like(CONST_RECORD_EMPTY)
        Z = cuda.const.array_like(CONST_RECORD_ALIGN)
        i = cuda.grid(1)
        A[i] = C[i]["x"]
        B[i] = C[i]["y"]
        n[i] = len(E)
        Y[i] = Z[i].y + Z[i]["z"]

    A, B, n, Y = np.zeros(2), np.zeros(2, np.int64), np.ones(2, np.int64), np.zeros(2, np.int64)
    kernel[2, 1](A, B, n, Y)
    np.testing.assert_equal(A, CONST_RECORD["x"])
    np.testing.assert_equal(B, CONST_RECORD["y"])
    np.testing.assert_equal(n, 0)
    np.testing.assert_equal(Y, CONST_RECORD_ALIGN["y"].astype(np.int64) + CONST_RECORD_ALIGN["z"])
    assert_compiles_to_ptx(kernel)


def test_atomics_on_nested_array_fields(backend):
    d = np.dtype([("n", np.int32), ("counts", np.int32, (4,))], align=True)

    @cuda.jit
    def kernel(r):
        cuda.atomic.add(r.counts, cuda.threadIdx.x % 4, 1)
        cuda.atomic.max(r.counts, 0, 0)

    r = np.zeros(1, dtype=d)
    kernel[1, 32](r[0])
    np.testing.assert_equal(r[0]["counts"], 8)

    @cuda.jit
    def on_array(a):
        cuda.atomic.add(a[0].counts, 1, 2)

    a = np.zeros(2, dtype=d)
    on_array[1, 16](a)
    assert a[0]["counts"][1] == 32
    assert_compiles_to_ptx(kernel, on_array)


def test_signatures_with_record_types(backend):
    rec = ptxjit.from_dtype(np.dtype([("a", "int32"), ("b", "float64")], align=True))
    assert isinstance(rec, types.Record)
    assert rec.name == "Record(a[type=int32;offset=0],b[type=float64;offset=8];16;True)"

    @cuda.jit((rec[:],))
    def foo(a):
        i = cuda.grid(1)
        a[i].a = a[i].b

    a = np.recarray(3, dtype=rec.dtype)
    a.a = 0
    a.b = (np.arange(3) + 1) * 123
    foo[1, 3](a)
    assert np.all(a.a == a.b)
    assert foo.signatures == [(rec[:],)]

    @cuda.jit(types.void(rec, types.float64))
    def setb(r, v):
        r.b = v

    setb[1, 1](a[2], 0.25)
    assert a[2].b == 0.25
    # The signature text parses back (Numba's spelling).
    @cuda.jit("void(" + rec.name + "[::1])")
    def setc(a):
        a[0].a = 9

    setc[1, 1](a)
    assert a[0].a == 9


def test_record_type_objects():
    r = types.Record([("x", {"type": types.float32, "offset": 4}),
                      ("y", {"type": types.int32, "offset": 0})], 8, False)
    assert r.name == "Record(y[type=int32;offset=0],x[type=float32;offset=4];8;False)"
    assert r.offset("x") == 4 and r.typeof("y") == types.int32 and len(r) == 2
    assert r.dtype == np.dtype({"names": ["y", "x"], "formats": ["i4", "f4"],
                                "offsets": [0, 4], "itemsize": 8})
    assert ptxjit.from_dtype(r.dtype) == r
    assert ptxjit.from_dtype(np.float32) is types.float32
    n = ptxjit.from_dtype(recordwith2darray).typeof("j")
    assert isinstance(n, types.NestedArray) and n.shape == (3, 2) and n.dtype == types.float32
    with pytest.raises(TypeError):
        ptxjit.from_dtype(np.dtype("O"))


def test_unaligned_field_is_refused_as_numba_does(cpu):
    rec = ptxjit.from_dtype(np.dtype([("a", "int32"), ("b", "float64")]))
    with pytest.raises(TypingError, match="type float64 is not aligned"):
        @cuda.jit((rec[:],))
        def foo(a):
            i = cuda.grid(1)
            a[i].a = a[i].b


def test_errors(cpu):
    @cuda.jit
    def missing(a):
        a[0].nope = 1

    with pytest.raises(TypingError, match=r"has no field 'nope'") as e:
        missing[1, 1](sample())
    assert "test_records.py" in str(e.value)

    @cuda.jit
    def bad_index(a, k):
        a[0][k] = 1

    with pytest.raises(TypingError, match="constant name or position"):
        bad_index[1, 1](sample(), 1)

    @cuda.jit
    def wrong_record(a, b):
        a[0] = b[0]

    with pytest.raises(TypingError, match="cannot store"):
        wrong_record[1, 1](sample(), np.zeros(1, dtype=packed))

    @cuda.jit
    def not_a_record(a):
        a.x = 1

    with pytest.raises(Exception, match="only the fields of records"):
        not_a_record[1, 1](np.zeros(2))

    @cuda.jit
    def objects(a):
        a[0] = 1

    with pytest.raises(TypeError, match="not supported"):
        objects[1, 1](np.zeros(2, dtype=[("s", "O")]))

    @cuda.jit
    def arith(a, out):
        out[0] = a[0] + 1

    with pytest.raises(TypingError):
        arith[1, 1](sample(), np.zeros(1))


def test_ufuncs_refuse_record_arrays(cpu):
    from ptxjit import vectorize

    @vectorize(["float64(float64)"], target="cuda")
    def twice(x):
        return 2 * x

    with pytest.raises(TypeError, match="record"):
        twice(sample())


def test_ptx_of_record_kernels(cpu):
    rec = ptxjit.from_dtype(packed)

    @cuda.jit((rec[::1], types.float64[::1]))
    def kernel(a, out):
        i = cuda.grid(1)
        out[i] = a[i].a
        a[i].b = 3

    ptx = cuda.compile_ptx(kernel.py_func, (rec[::1], types.float64[::1]))[0]
    assert ".visible .entry" in ptx
    # itemsize 13 guarantees only byte alignment of a packed float64: no 8-byte loads of it.
    assert "ld.global.f64" not in ptx and "ld.f64" not in ptx


def test_transfer_hints_with_record_arrays(backend):
    d = np.dtype([("b", np.int32)], align=True)

    @cuda.jit
    def set_record_to_three(rec):
        rec[0]["b"] = 3

    host = np.zeros(1, dtype=d)
    set_record_to_three[1, 1](cuda.In(host))
    if backend == "cuda":
        assert host[0]["b"] == 0
    set_record_to_three[1, 1](cuda.InOut(host))
    assert host[0]["b"] == 3
    host = np.zeros(1, dtype=d)
    set_record_to_three[1, 1](host)
    assert host[0]["b"] == 3


def _fake_numba_record_types():
    """Classes with the names, module and public attributes of numba's Record, NestedArray,
    Array and scalar types (numba is not installed in CI; ptxjit reads only these)."""
    import collections
    import types as pytypes

    mod = pytypes.ModuleType("numba.core.types.fake_records")
    field = collections.namedtuple("_RecordField", "type,offset,alignment,title")

    def make(name, init):
        cls = type(name, (), {"__init__": init, "__module__": mod.__name__,
                              "__repr__": lambda self: self.name})
        setattr(mod, name, cls)
        return cls

    def scalar_init(self, name):
        self.name = name

    def nested_init(self, dtype, shape):
        self.dtype, self.shape, self.ndim, self.layout = dtype, shape, len(shape), "C"
        self.name = f"nestedarray({dtype.name}, {shape})"

    def record_init(self, fields, size, aligned):
        self.fields = {n: field(t, o, None, None) for n, t, o in fields}
        self.size, self.aligned = size, aligned
        self.name = "Record(...)"

    def array_init(self, dtype, ndim, layout):
        self.dtype, self.ndim, self.layout, self.mutable = dtype, ndim, layout, True
        self.name = f"array({dtype.name}, {ndim}d, {layout})"

    make("Float", scalar_init)
    make("Integer", scalar_init)
    make("NestedArray", nested_init)
    make("Record", record_init)
    make("Array", array_init)
    return mod


def test_numba_record_types_map_by_structure(cpu):
    nb = _fake_numba_record_types()
    rec = nb.Record([("i", nb.Integer("int32"), 0),
                     ("j", nb.NestedArray(nb.Float("float32"), (3, 2)), 4)], 28, False)
    mapped = types.as_type(rec)
    assert mapped == ptxjit.from_dtype(recordwith2darray)
    assert types.as_type(nb.Array(rec, 1, "C")) == mapped[::1]

    @cuda.jit((nb.Array(rec, 1, "A"),))
    def kernel(a):
        a[0].j[2, 1] = a[0].i

    a = np.zeros(2, dtype=recordwith2darray)
    a[0]["i"] = 5
    kernel[1, 1](a)
    assert a[0]["j"][2, 1] == 5


def test_numba_record_as_a_shared_array_dtype(backend):
    nb = _fake_numba_record_types()
    dt = nb.Record([("i", nb.Integer("int32"), 0),
                    ("j", nb.NestedArray(nb.Float("float32"), (3, 2)), 4)], 28, False)
    nthreads = 16

    @cuda.jit
    def chunk_copy(x, y):
        sm = cuda.shared.array(nthreads, dtype=dt)
        tx = cuda.threadIdx.x
        i = cuda.blockIdx.x * cuda.blockDim.x + tx
        if i < len(x):
            sm[tx] = x[i]
        cuda.syncthreads()
        if tx == 0:
            for j in range(nthreads):
                y[cuda.blockDim.x * cuda.blockIdx.x + j] = sm[j]

    arr = np.recarray(64, dtype=recordwith2darray)
    for x in range(len(arr)):
        arr[x].i = x
        arr[x].j = np.arange(6, dtype=np.float32).reshape(3, 2) * x
    d_result = cuda.device_array_like(arr)
    chunk_copy[4, nthreads](arr, d_result)
    np.testing.assert_array_equal(arr, d_result.copy_to_host())


def test_zero_dimensional_record_arrays(backend):
    @cuda.jit
    def record_return(r, ary, i):
        r[()] = ary[i]

    arr = sample()
    r = np.zeros((), dtype=recordtype)
    record_return[1, 1](r, arr, 1)
    assert r[()] == arr[1]


def test_structured_dtypes_distinguish_specializations(backend):
    f16x2 = np.dtype([("x", np.float16), ("y", np.float16)])
    f16x2_aligned = np.dtype([("x", np.float16), ("y", np.float16)], align=True)

    @cuda.jit
    def f(inp, out):
        out[0] = inp[0].x + inp[0].y

    out = cuda.to_device(np.zeros(1, np.float64))
    a = np.ones(1, dtype=f16x2)
    f[1, 1](cuda.to_device(a), out)
    f[1, 1](cuda.to_device(a.astype(f16x2_aligned)), out)
    assert len(f.signatures) == 2 and f.signatures[0] != f.signatures[1]
    assert out.copy_to_host()[0] == 2.0


def test_records_of_read_only_arrays_cannot_be_written(cpu):
    @cuda.jit
    def write_field(a, out):
        r = a[0]
        out[0] = r.a + a[1]["b"] + r.d[0]  # reads are fine
        r.b = 1

    ro = sample()
    ro.flags.writeable = False
    with pytest.raises(TypingError, match="read-only"):
        write_field[1, 1](ro, np.zeros(1))

    @cuda.jit
    def read_only(a, out):
        r = a[0]
        out[0] = r.a + a[1]["b"] + r.d[0]

    out = np.zeros(1)
    read_only[1, 1](ro, out)
    assert out[0] == 0.5 + 2 + 1

    @cuda.jit
    def write_nested(a):
        a[0].d[1] = 3

    with pytest.raises(TypingError, match="read-only"):
        write_nested[1, 1](ro)

    @cuda.jit
    def write_const(out):
        C = cuda.const.array_like(CONST_RECORD)
        C[0].x = out[0]

    with pytest.raises(TypingError, match="read-only"):
        write_const[1, 1](np.zeros(1))

    @cuda.jit
    def copy_from_const(out):
        C = cuda.const.array_like(CONST_RECORD)
        out[1] = C[0]

    dst = np.zeros(2, dtype=CONST_RECORD.dtype)
    copy_from_const[1, 1](dst)
    assert dst[1] == CONST_RECORD[0]


def test_device_records(backend):
    @cuda.jit
    def kernel(r, out):
        out[0] = r.a
        r.b = 11

    rec = sample()[1]
    d = cuda.to_device(rec)
    out = cuda.to_device(np.zeros(1))
    kernel[1, 1](d, out)
    back = d.copy_to_host()
    assert isinstance(back, np.void)
    assert back["b"] == 11 and back["a"] == rec["a"]
    assert out.copy_to_host()[0] == 1.0
    assert rec["b"] == 2  # the host record is not touched
    assert kernel.signatures[0][0] == ptxjit.from_dtype(recordtype)
    assert_compiles_to_ptx(kernel)
