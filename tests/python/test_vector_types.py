"""CUDA vector types (numba-cuda's cuda.float32x4, cuda.int2, ...; docs/language.md#vector-types):
construction from scalars and from smaller vectors of the same base type, the components .x .y
.z .w, passing to and returning from device functions, CUDA C's alias names, and the errors."""
import numpy as np
import pytest

from ptxjit import cuda, errors

BASES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32",
         "float64"]


def test_every_type_exists_with_its_aliases():
    for base in BASES:
        for n in range(1, 5):
            v = getattr(cuda, f"{base}x{n}")
            assert v.__name__ == f"{base}x{n}" and v.num_elements == n
            for alias in v.aliases:
                assert getattr(cuda, alias) is v
    assert cuda.float4 is cuda.float32x4 and cuda.double2 is cuda.float64x2
    assert cuda.uchar4 is cuda.uint8x4 and cuda.short2 is cuda.int16x2
    assert cuda.int3 is cuda.int32x3 and cuda.char1 is cuda.int8x1
    assert cuda.long2 is getattr(cuda, f"{np.dtype(np.int_).name}x2")
    assert cuda.longlong4 is cuda.int64x4 and cuda.ulonglong1 is cuda.uint64x1
    with pytest.raises(RuntimeError, match="only be used inside a kernel"):
        cuda.float32x2(1.0, 2.0)


@pytest.mark.parametrize("base", BASES)
def test_construction_and_components(backend, base):
    ctor = [getattr(cuda, f"{base}x{n}") for n in range(1, 5)]
    v1, v2, v3, v4 = ctor
    dt = np.dtype(base)

    @cuda.jit
    def k(out):
        a = v1(1)
        b = v2(2, 3)
        c = v3(a, b)         # 1 2 3
        d = v4(b, b)         # 2 3 2 3
        e = v4(4, c)         # 4 1 2 3
        f = v3(v2(a, a), 5)  # 1 1 5
        g = v4(d)            # 2 3 2 3
        out[0] = a.x
        out[1] = b.x + b.y
        out[2] = c.x * 100 + c.y * 10 + c.z
        out[3] = d.w
        out[4] = e.x
        out[5] = e.w
        out[6] = f.z
        out[7] = g.y

    out = np.zeros(8, dt)
    k[1, 1](out)
    assert out.tolist() == [1, 5, 123, 3, 4, 3, 5, 3]


def test_scalars_convert_to_the_base_type(backend):
    @cuda.jit
    def k(out, x, n):
        v = cuda.short2(10, n)      # int64 -> int16 wraps, as a cast does
        w = cuda.float2(x, 2)       # float64 -> float32
        u = cuda.uchar3(True, 7, x)  # a bool, an int literal, a float truncated
        out[0] = v.x
        out[1] = v.y
        out[2] = w.x
        out[3] = u.x
        out[4] = u.y
        out[5] = u.z

    out = np.zeros(6)
    k[1, 1](out, 2.75, 70000)
    assert out.tolist() == [10, 70000 - 65536, 2.75, 1, 7, 2]


def test_vectors_pass_to_and_return_from_device_functions(backend):
    @cuda.jit(device=True)
    def add(a, b):
        return cuda.float3(a.x + b.x, a.y + b.y, a.z + b.z)

    @cuda.jit(device=True)
    def dot(a, b):
        return a.x * b.x + a.y * b.y + a.z * b.z

    @cuda.jit
    def k(xs, out):
        i = cuda.grid(1)
        if i < out.size:
            p = cuda.float3(xs[i, 0], xs[i, 1], xs[i, 2])
            q = add(p, cuda.float3(1, 1, 1))
            out[i] = dot(q, q)

    xs = np.arange(12, dtype=np.float32).reshape(4, 3)
    out = np.zeros(4, np.float32)
    k[1, 32](xs, out)
    np.testing.assert_allclose(out, ((xs + 1) ** 2).sum(axis=1))


def test_tuples_of_vectors_and_unified_branches(backend):
    @cuda.jit
    def k(out, flag):
        if flag:
            v = cuda.int2(1, 2)
        else:
            v = cuda.int2(3, 4)
        t = (v, cuda.int2(v), cuda.int2(5, 6))
        for j in range(3):
            out[2 * j] = t[j].x
            out[2 * j + 1] = t[j].y

    out = np.zeros(6, np.int32)
    k[1, 1](out, True)
    assert out.tolist() == [1, 2, 1, 2, 5, 6]
    k[1, 1](out, False)
    assert out.tolist() == [3, 4, 3, 4, 5, 6]


def test_construction_errors(cpu):
    def too_few(out):
        v = cuda.float32x3(1.0, 2.0)
        out[0] = v.x

    def too_many(out):
        v = cuda.float32x2(cuda.float32x2(1.0, 2.0), 3.0)
        out[0] = v.x

    def other_base(out):
        v = cuda.float32x2(cuda.int32x2(1, 2))
        out[0] = v.x

    def complex_component(out):
        v = cuda.float32x2(1j, 2.0)
        out[0] = v.x

    def no_such_component(out):
        v = cuda.float32x2(1.0, 2.0)
        out[0] = v.z

    cases = [
        (too_few, r"cuda.float32x3 cannot be called with .*expected 3 components in all, got 2"),
        (too_many, r"expected 2 components in all, got 3"),
        (other_base, r"argument 1 is a vector of int32, not of float32"),
        (complex_component, r"the arguments must be numbers or float32 vectors"),
        (no_such_component, r"attribute 'z' of float32x2\(float32 x 2\) is not supported"),
    ]
    for fn, msg in cases:
        with pytest.raises(errors.CompileError, match=msg):
            cuda.jit(fn)[1, 1](np.zeros(1, np.float32))
