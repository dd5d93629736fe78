"""Type objects and signatures written the ways Numba users write them: numba's spellings in
strings (``(int32, int32) -> int32``, ``Tuple((int32, float64))``, ``UniTuple(int32, 2)``),
numba's class names in ``ptxjit.types``, and numba's own type objects (a half-ported program's
``from numba import types``), mapped by structure. numba is not installed in CI, so its objects
are imitated by classes defined in a module named like numba's: ptxjit recognizes them by their
module and reads only their public attributes, as it would read numba's."""
import sys
import types as pytypes

import numpy as np
import pytest

from ptxjit import cuda, types


def _fake_numba_types():
    """Classes with the names, modules and public attributes of numba's type classes."""
    mod = pytypes.ModuleType("numba.core.types.fake")

    def make(name, init):
        cls = type(name, (), {"__init__": init, "__module__": "numba.core.types.fake",
                              "__repr__": lambda self: self.name})
        setattr(mod, name, cls)
        return cls

    def scalar_init(self, name):
        self.name = name

    def array_init(self, dtype, ndim, layout, readonly=False):
        self.dtype, self.ndim, self.layout, self.mutable = dtype, ndim, layout, not readonly
        self.name = f"array({dtype.name}, {ndim}d, {layout})"

    def unituple_init(self, dtype, count):
        self.dtype, self.count = dtype, count
        self.name = f"UniTuple({dtype.name} x {count})"

    def tuple_init(self, tys):
        self.types = tuple(tys)
        self.name = f"Tuple({', '.join(t.name for t in tys)})"

    def literal_init(self, value):
        self.literal_value, self.literal_type = value, mod.Integer("int64")
        self.name = f"Literal[int]({value})"

    def sig_init(self, return_type, args):
        self.return_type, self.args = return_type, tuple(args)

    for n in ("Integer", "Float", "Boolean", "NoneType"):
        make(n, scalar_init)
    make("Array", array_init)
    make("UniTuple", unituple_init)
    make("Tuple", tuple_init)
    make("IntegerLiteral", literal_init)
    make("Signature", sig_init)
    make("Dummy", scalar_init)
    return mod


nb = _fake_numba_types()
nb_float32, nb_int32, nb_float64 = nb.Float("float32"), nb.Integer("int32"), nb.Float("float64")


def add(a, b):
    return a + b


def scale(out, x, a):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * a


def test_signature_strings_in_numbas_spellings():
    ptx, ret = cuda.compile_ptx(add, "(int32, int32) -> int32", device=True)
    assert ret == types.int32 and ".func" in ptx
    _, ret = cuda.compile_ptx(add, "(float64, float64) -> float64", device=True)
    assert ret == types.float64
    with pytest.raises(TypeError, match="names its return type once"):
        cuda.compile_ptx(add, "int32(int32, int32) -> int32", device=True)
    with pytest.raises(TypeError, match=r"expected '->'"):
        cuda.compile_ptx(add, "(int32, int32) - int32", device=True)


def first(t):
    return t[0] + t[1]


def test_tuple_types_in_signatures(cpu):
    _, ret = cuda.compile_ptx(first, "(UniTuple(int32, 2),)", device=True)
    assert ret == types.int64 or ret == types.int32
    _, ret = cuda.compile_ptx(first, "(Tuple((int32, float64)),)", device=True)
    assert ret == types.float64
    _, ret = cuda.compile_ptx(first, (types.Tuple((types.int32, types.float64)),), device=True)
    assert ret == types.float64
    _, ret = cuda.compile_ptx(first, (types.UniTuple(types.float32, 2),), device=True)
    assert ret == types.float32
    with pytest.raises(TypeError, match="count"):
        cuda.compile_ptx(first, "(UniTuple(int32, x),)", device=True)
    with pytest.raises(TypeError, match="array element"):
        cuda.compile_ptx(first, "(UniTuple(int32, 2)[:],)", device=True)


def test_numba_class_names():
    assert isinstance(types.int32, types.Integer) and isinstance(types.int32, types.Number)
    assert isinstance(types.float64, types.Float) and not isinstance(types.float64, types.Integer)
    assert isinstance(types.complex64, types.Complex)
    assert isinstance(types.boolean, types.Boolean)
    assert types.longlong is types.int64 and types.ulonglong is types.uint64
    assert types.Array(types.float32, 2, "C") == types.float32[:, ::1]
    assert types.Array("float64", 1, "A") == types.float64[:]
    with pytest.raises(TypeError, match="unknown array element type"):
        types.Array("float99", 1, "C")
    with pytest.raises(ValueError, match="layout"):
        types.Array(types.float32, 1, "X")


def test_numba_public_attributes_of_type_objects():
    # What programs read off numba's type objects: widths, signedness, ranges, the float of a
    # complex type (a signature built from it included), array properties.
    assert types.complex64.underlying_float is types.float32
    assert types.complex128.underlying_float is types.float64
    sig = types.complex64.underlying_float(types.complex64)
    assert sig.return_type is types.float32 and sig.args == (types.complex64,)
    assert (types.int16.bitwidth, types.int16.signed, types.uint16.signed) == (16, True, False)
    assert (types.complex128.bitwidth, types.float16.bitwidth) == (128, 16)
    assert (types.int8.minval, types.int8.maxval) == (-128, 127)
    assert (types.uint64.minval, types.uint64.maxval) == (0, 2**64 - 1)
    assert types.Integer.from_bitwidth(32) is types.int32
    assert types.Integer.from_bitwidth(8, signed=False) is types.uint8
    assert types.int8 < types.int64 and types.float64 > types.float32
    assert types.complex64 <= types.complex64
    with pytest.raises(TypeError):
        types.int32 < types.float32  # different classes are not ordered (as in numba)
    a = types.float32[:, ::1]
    assert (a.dtype, a.ndim, a.layout, a.mutable, a.aligned) == (types.float32, 2, "C", True, True)
    assert a.is_c_contig and a.is_contig and not a.is_f_contig
    assert types.float32[::1].is_f_contig and not types.float32[:].is_contig
    assert not types.Array(types.int32, 1, "A", readonly=True).mutable
    assert types.float32.is_precise() and a.key == (types.float32, 2, "C", True, True)


def test_numba_type_objects_map_by_structure():
    assert types.as_type(nb_float32) is types.float32
    assert types.as_type(nb.Boolean("bool")) is types.boolean
    assert types.as_type(nb.NoneType("none")) is types.none
    arr = types.as_type(nb.Array(nb_float32, 2, "C"))
    assert arr == types.float32[:, ::1]
    ro = types.as_type(nb.Array(nb_int32, 1, "A", readonly=True))
    assert ro.readonly and ro.dtype is types.int32
    assert types.as_type(nb.UniTuple(nb_int32, 3)) == types.UniTuple(types.int32, 3)
    assert types.as_type(nb.Tuple([nb_int32, nb_float64])) == types.Tuple(
        (types.int32, types.float64))
    assert types.as_type(nb.IntegerLiteral(3)) is types.int64
    with pytest.raises(TypeError, match="no ptxjit equivalent"):
        types.as_type(nb.Dummy("pyobject"))
    with pytest.raises(TypeError, match="expected a type"):
        types.as_type(3)


def test_isinstance_and_equality_with_numba_objects():
    assert isinstance(nb.UniTuple(nb_int32, 2), types.UniTuple)
    assert isinstance(nb.Tuple([nb_int32, nb_float64]), types.Tuple)
    assert isinstance(nb.Tuple([nb_int32, nb_float64]), types.BaseTuple)
    assert not isinstance(nb.Tuple([nb_int32, nb_float64]), types.Array)
    assert isinstance(nb.Array(nb_float32, 1, "C"), types.Array)
    assert isinstance(nb_float32, types.Float) and not isinstance(nb_float32, types.Integer)
    assert not isinstance(nb.Dummy("pyobject"), types.Type)
    assert types.float32 == nb_float32 and types.float32 != nb_float64
    assert types.float32[::1] == nb.Array(nb_float32, 1, "C")


def test_numba_objects_in_signatures(cpu):
    sig = (nb.Array(nb_float32, 1, "C"), nb.Array(nb_float32, 1, "C"), nb_float32)
    k = cuda.jit(sig)(scale)
    assert [str(t) for t in k.signatures[0]] == [
        "array(float32, 1d, C)", "array(float32, 1d, C)", "float32"]
    x = np.arange(4, dtype=np.float32)
    out = np.zeros_like(x)
    k[1, 4](out, x, 3.0)
    assert out.tolist() == [0, 3, 6, 9]
    # numba's typing Signature (return_type, args), and numba types in ptxjit's call sugar
    k2 = cuda.jit(nb.Signature(nb.NoneType("none"), sig))(scale)
    assert len(k2.signatures) == 1
    k3 = cuda.jit(types.void(*sig))(scale)
    assert len(k3.signatures) == 1
    ptx, ret = cuda.compile_ptx(add, nb.Signature(nb_int32, (nb_int32, nb_int32)), device=True)
    assert ret == types.int32
    _, ret = cuda.compile_ptx(add, (nb_float64, nb_float64), device=True)
    assert ret is types.float64


def test_numba_objects_that_do_not_map_are_named(cpu):
    with pytest.raises(TypeError, match="pyobject"):
        cuda.jit((nb.Dummy("pyobject"),))(scale)
    with pytest.raises(TypeError, match=r"Numba type pyobject \(Dummy\) has no ptxjit"):
        types.void(nb.Dummy("pyobject"))


def test_ptxjit_never_imports_numba():
    # In a fresh process: mapping numba's objects reads their attributes, never imports numba.
    import os
    import subprocess

    here = os.path.dirname(os.path.abspath(__file__))
    code = ("import sys, test_numba_types as t; "
            "t.cuda.compile_ptx(t.add, (t.nb_float64, t.nb_float64), device=True); "
            "isinstance(t.nb_float32, t.types.Float); "
            "sys.exit(1 if 'numba' in sys.modules else 0)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([here, os.path.join(here, "..", "..",
                                                                          "python")]))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


NB_F32 = nb_float32


def local_sum(out):
    tmp = cuda.local.array(4, NB_F32)
    for k in range(4):
        tmp[k] = NB_F32(k) + NB_F32(0.25)
    out[0] = tmp[0] + tmp[1] + tmp[2] + tmp[3]


def test_numba_scalar_types_as_kernel_globals(cpu):
    out = np.zeros(1, np.float32)
    cuda.jit(local_sum)[1, 1](out)
    assert out[0] == 7.0


def test_type_module_attributes_cast_in_kernels(backend):
    @cuda.jit
    def k(out, a, b):
        out[0] = types.uint8(a[0] == b[0])
        out[1] = cuda.types.float16(1.5) * 2
        out[2] = types.int8(300)  # wraps to 44, as in Numba

    out = np.zeros(3, np.float64)
    k[1, 1](out, np.array([3]), np.array([3]))
    assert out[0] == 1 and out[1] == 3.0 and out[2] == 44

    def bad(out):
        out[0] = types.Array(1)

    with pytest.raises(Exception, match="attribute 'Array' of module types is not supported"):
        cuda.jit(bad)[1, 1](out)


def test_array_factories_take_numba_and_ptxjit_type_objects(cpu):
    # numba-cuda's device_array(4, dtype=numba.float32): the dtype of the type object
    for dtype in (nb_float32, types.float32, np.float32, "float32"):
        assert cuda.device_array(4, dtype=dtype).dtype == np.float32
        assert cuda.pinned_array(4, dtype=dtype).dtype == np.float32
    assert cuda.device_array(2).dtype == np.float64
    with pytest.raises(TypeError, match="neither a NumPy dtype nor a type"):
        cuda.device_array(2, dtype=object())


def test_numbas_c_names_of_scalar_types(cpu):
    import ptxjit

    pairs = {"char": "int8", "uchar": "uint8", "short": "int16", "ushort": "uint16",
             "int_": "int64", "uint": "uint64", "long_": "int64", "ulong": "uint64",
             "longlong": "int64", "ulonglong": "uint64"}
    for alias, name in pairs.items():
        assert getattr(types, alias) == getattr(types, name), alias
        assert getattr(ptxjit, alias) is getattr(types, alias), alias
    k = cuda.jit("void(short[:], char[:], ulong)")(scale)
    assert k.signatures == [(types.int16[:], types.int8[:], types.uint64)]
    out = np.zeros(3, np.int16)
    k[1, 4](out, np.arange(3, dtype=np.int8), 2)
    assert out.tolist() == [0, 2, 4]


def test_array_type_sugar_of_more_than_three_dimensions():
    t = types.float32[:, :, :, ::1]
    assert t == types.Array(types.float32, 4, "C")
    assert types.int8[:, :, :, :, :].ndim == 5
    with pytest.raises(TypeError, match="takes 1 to 32 slices"):
        types.float32[5]


def test_signature_strings_with_numbas_array_constructor(cpu):
    k = cuda.jit("void(Array(int16, 1, 'C'), Array(int8, 1, 'A', readonly=True), int64)")(scale)
    assert k.signatures == [(types.int16[::1], types.Array(types.int8, 1, "A", readonly=True),
                             types.int64)]
    k2 = cuda.jit("void(array(int16, 1d, C), array(int8, 1d, A), int64)")(scale)  # as printed
    assert k2.signatures[0][:2] == (types.int16[::1], types.int8[:])
    from ptxjit import errors

    with pytest.raises(errors.TypingError, match="quoted layout"):
        cuda.jit("void(Array(int16, 1, C), int8[:], int64)")(scale)


def test_literal_types():
    t = types.literal(7)
    assert isinstance(t, types.Literal) and isinstance(t, types.IntegerLiteral)
    assert t.literal_value == 7 and t.literal_type == types.int64
    assert types.literal(2**64 - 1).literal_type == types.uint64
    with pytest.raises(TypeError, match="literal types of ints only"):
        types.literal(1.5)


def test_named_tuple_types_from_numbas_constructors():
    from collections import namedtuple

    Point = namedtuple("Point", "x y")
    t = types.NamedTuple((types.int32, types.float64), Point)
    assert t.fields == ("x", "y") and str(t) == "Point(int32, float64)"
    u = types.NamedUniTuple(types.int32, 2, Point)
    assert u.fields == ("x", "y") and str(u) == "Point(int32 x 2)"
    assert types.NamedTuple((types.int32, types.int32), Point).count == 2  # uniform: a UniTuple
    assert types.NamedTuple((types.int8,), ("a",), "A").fields == ("a",)  # ptxjit's form
    with pytest.raises(TypeError, match="namedtuple class"):
        types.NamedTuple((types.int8,), "a")
