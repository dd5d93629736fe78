"""Eager signatures, dispatch between them, and inspection (signatures, LLVM IR, PTX,
compile_ptx), which needs no GPU."""
import re

import numpy as np
import pytest

from ptxjit import cuda, errors, float32, float64, int32, int64, types, void


def body(a, x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = x[i] * a


def test_string_signature_compiles_eagerly(backend):
    k = cuda.jit("void(float32, float32[:])")(body)
    assert [tuple(map(str, s)) for s in k.signatures] == [("float32", "array(float32, 1d, A)")]
    x = np.ones(8, np.float32)
    k[1, 8](2.0, x)  # a Python float converts to float32
    assert (x == 2).all()
    k[1, 8](np.float64(3.0), x)  # float64 → float32 (unsafe, allowed for eager signatures)
    assert (x == 6).all()
    k[1, 8](2, x[::2])  # an A-layout view and a Python int
    assert x.tolist() == [12, 6] * 4
    assert len(k.signatures) == 1


def test_one_signature_given_alone_reads_arrays_of_another_dtype(backend):
    # numba-cuda launches the one definition of a kernel given a signature alone (its
    # "specialized" kernel) whatever the arguments: an array of another dtype with the same
    # item size is read as the signature's dtype. A list of signatures selects strictly.
    def bump(a):
        a[cuda.grid(1)] += 1

    alone = cuda.jit("void(uint32[:])")(bump)
    a = np.array([1, -1, 7], np.int32)
    alone[1, 3](a)
    assert a.tolist() == [2, 0, 8]
    two_d = cuda.jit("void(int32[:, :])")(bump2d)
    b = np.arange(6, dtype=np.uint32).reshape(2, 3)
    two_d[1, 1](b)
    assert b[0, 0] == 1
    spec = cuda.jit(bump).specialize(np.zeros(1, np.float32))
    c = np.zeros(2, np.int32)  # float32 bits: 1 + 0.0
    spec[1, 2](c)
    assert c.view(np.float32).tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="No matching definition"):
        alone[1, 3](np.zeros(3, np.int64))  # another item size
    with pytest.raises(TypeError, match="No matching definition"):
        alone[1, 3](np.zeros((3, 1), np.int32))  # another ndim
    listed = cuda.jit(["void(uint32[:])"])(bump)
    with pytest.raises(TypeError, match="No matching definition"):
        listed[1, 3](np.zeros(3, np.int32))


def bump2d(a):
    a[0, 0] += 1


def test_type_object_signatures(backend):
    k1 = cuda.jit(void(float32, float32[::1]))(body)
    k2 = cuda.jit((float64, float64[:]))(body)
    assert str(k1.signatures[0][1]) == "array(float32, 1d, C)"
    assert [str(t) for t in k2.signatures[0]] == ["float64", "array(float64, 1d, A)"]
    x = np.ones(4)
    k2[1, 4](4, x)
    assert (x == 4).all()
    with pytest.raises(TypeError, match="No matching definition"):
        k1[1, 4](1.0, np.ones(8, np.float32)[::2])  # A layout cannot go to a C parameter


def test_several_signatures_pick_the_best(backend):
    k = cuda.jit(["void(float64, float64[:])", "void(float32, float32[:])",
                  "void(int32, int32[:])"])(body)
    assert len(k.signatures) == 3
    x32 = np.ones(4, np.float32)
    k[1, 4](np.float32(3), x32)
    assert (x32 == 3).all()
    xi = np.full(4, 2, np.int32)
    k[1, 4](np.int32(5), xi)
    assert (xi == 10).all()
    with pytest.raises(TypeError, match="No matching definition for argument type"):
        k[1, 4](1.0, np.ones(4, np.int64))
    with pytest.raises(TypeError, match="No matching definition"):
        k[1, 4](1j, np.ones(4))


def test_bad_signatures():
    with pytest.raises(errors.TypingError, match="invalid signature"):
        cuda.jit("void(flaot32)")(body)
    with pytest.raises(errors.TypingError):
        cuda.jit("void(float32[:]")(body)
    with pytest.raises(errors.TypingError, match="must return void"):
        cuda.jit("float32(float32, float32[:])")(body)


def test_eager_compile_errors_are_raised_at_decoration(cpu):
    def bad(x):
        x[0] = x  # storing an array into an element

    with pytest.raises(errors.TypingError) as info:
        cuda.jit("void(float32[:])")(bad)
    assert info.value.lineno == bad.__code__.co_firstlineno + 1


def test_inspect_llvm_names_the_values_a_compile_leaves_unnamed(backend):
    # Compiles drop LLVM's value names (a faster compile); inspect_llvm lowers the kernel again
    # with them, parameters named after the Python arguments, and keeps that text.
    k = cuda.jit("void(float32, float32[::1])")(body)
    sig = k.signatures[0]
    llvm = k.inspect_llvm(sig)
    assert re.search(r"define void @\w+\(float %a, ptr [^,]*%x_data, i64 %x_shape0", llvm), llvm
    assert k.inspect_llvm(sig) == llvm
    assert ".entry" in k.inspect_ptx(sig)


def test_inspect_llvm_and_ptx(backend):
    k = cuda.jit("void(float32, float32[::1])")(body)
    sig = k.signatures[0]
    llvm = k.inspect_llvm(sig)
    ptx = k.inspect_ptx(sig)
    assert "nvptx64-nvidia-cuda" in llvm
    assert re.search(r"^\.version \d+\.\d+", ptx, re.M)
    assert re.search(r"^\.target sm_\d+", ptx, re.M)
    assert re.search(r"\.entry\s+\w+", ptx)
    assert k.inspect_ptx() == {sig: ptx}
    assert k.inspect_llvm() == {sig: llvm}
    assert k.inspect_ptx((float32, float32[::1])) == ptx
    assert k.inspect_ptx("void(float32, float32[::1])") == ptx
    # an unseen signature of a lazy kernel is compiled for inspection
    lazy = cuda.jit(body)
    text = lazy.inspect_ptx((float64, float64[:]))
    assert ".entry" in text
    assert [tuple(map(str, s)) for s in lazy.signatures] == [("float64", "array(float64, 1d, A)")]


def test_inspect_ptx_without_gpu_targets_sm90(cpu):
    if cuda.is_available():
        pytest.skip("on a GPU the device's compute capability is used")
    k = cuda.jit("void(float32, float32[:])")(body)
    assert ".target sm_90" in k.inspect_ptx(k.signatures[0])


def test_compile_ptx():
    def axpy(r, a, x, y):
        i = cuda.grid(1)
        if i < r.size:
            r[i] = a * x[i] + y[i]

    ptx, resty = cuda.compile_ptx(axpy, (float32[:], float32, float32[:], float32[:]))
    assert resty == void
    assert ".target sm_90" in ptx and ".entry" in ptx
    ptx80, _ = cuda.compile_ptx(axpy, "void(float32[:], float32, float32[:], float32[:])",
                                cc=(8, 0))
    assert ".target sm_80" in ptx80

    def add(x, y):
        return x + y

    ptx, resty = cuda.compile_ptx(add, (int32, int64), device=True)
    assert resty == int64
    assert ".func" in ptx and ".entry" not in ptx
    ptx, resty = cuda.compile_ptx(add, "float32(float32, float32)", device=True, fastmath=True)
    assert resty == float32
    with pytest.raises(errors.TypingError):
        cuda.compile_ptx(add, (float32[:], int32), device=True)
    with pytest.raises(ValueError):
        cuda.compile_ptx(add, (int32, int32), device=True, cc=(9,))


def test_signatures_of_tuple_and_readonly_arguments(cpu):
    @cuda.jit
    def k(t, x, out):
        out[0] = t[0] + x[0]

    x = np.ones(2)
    x.setflags(write=False)
    k[1, 1]((1, 2), x, np.zeros(1))
    sig = k.signatures[0]
    assert str(sig[0]) == "UniTuple(int64 x 2)"
    assert isinstance(sig[1], types.Array) and sig[1].readonly
    assert "readonly" in str(sig[1])
    assert k.inspect_llvm(sig) == k.inspect_llvm()[sig]


def test_device_functions_are_not_kernels(cpu):
    @cuda.jit(device=True)
    def dev(x):
        return x + 1

    with pytest.raises(TypeError, match="device function"):
        dev(1)
    with pytest.raises(TypeError, match="device function"):
        dev[1, 1]
    assert dev.inspect_ptx() == {}  # nothing compiled yet; see test_dispatcher_api.py


def test_device_function_with_signature_is_type_checked_eagerly(cpu):
    @cuda.jit("float32(float32)", device=True)
    def dev(x):
        return x * 2

    assert [tuple(map(str, s)) for s in dev.signatures] == [("float32",)]
    with pytest.raises(errors.TypingError):
        @cuda.jit("float32(float32[:])", device=True)
        def bad(x):
            return x + x.shape


def test_python_scalars_pick_signatures_as_numba(cpu):
    """numba-cuda's dispatcher types a Python int as int64 and a float as float64: with
    (float32, float32) and (float64, float64), Python numbers pick float64."""

    @cuda.jit(["void(float64[::1], float32, float32)", "void(float64[::1], float64, float64)"])
    def add(r, x, y):
        r[0] = x + y

    r = np.zeros(1)
    add[1, 1](r, np.float32(1), np.float32(2**-25))
    assert r[0] == 1.0  # float32 arithmetic
    add[1, 1](r, 1, 2**-25)
    assert r[0] == 1.0000000298023224  # float64

    @cuda.jit(["void(float64[::1], int32)", "void(float64[::1], float64)"])
    def show(r, v):
        r[0] = v / 2

    show[1, 1](r, 2**40)
    assert r[0] == 2.0**39  # float64: int64 -> int32 would be unsafe (and wrap)
    assert [str(s[1]) for s in show.signatures] == ["int32", "float64"]


def test_ambiguous_signatures_are_refused_as_numba(cpu):
    @cuda.jit(["(float64[::1], float32, float64)", "(float64[::1], float64, float32)",
               "(float64[::1], int64, int64)"])
    def add(r, x, y):
        r[0] = x + y

    with pytest.raises(TypeError, match=r"Ambiguous overloading for kernel 'add' "
                                        r"\(array\(float64, 1d, C\), float64, float64\):\n"
                                        r"\(.*float32, float64\) -> none\n"
                                        r"\(.*float64, float32\) -> none$") as e:
        add[1, 1](np.zeros(1), 1.0, 2.0)
    assert "int64" not in str(e.value)
    r = np.zeros(1)
    add[1, 1](r, np.float32(1.5), 2.0)  # exact: no tie
    assert r[0] == 3.5


def test_fewest_unsafe_conversions_win(cpu):
    @cuda.jit(["(float64[::1], float32, float32)", "(float64[::1], int64, float64)"])
    def add(r, x, y):
        r[0] = x + y

    r = np.zeros(1)
    add[1, 1](r, 2.5, 0.25)  # (int64, float64): one unsafe conversion, not two
    assert r[0] == 2.25
