"""enum.Enum and enum.IntEnum in kernels (numba's EnumMember / IntEnumMember): members as
globals, arguments and results of device functions, compared by class and value; IntEnum
members as ints."""
from enum import Enum, IntEnum, IntFlag

import numpy as np
import pytest

from ptxjit import cuda, errors, int16, int32, vectorize


class Color(Enum):
    red = 1
    green = 2
    blue = 3


class Shake(Enum):
    vanilla = 7
    mint = 3  # Color.blue's value


class Planet(Enum):
    MERCURY = (3.303e23, 2.4397e6)
    EARTH = (5.976e24, 6.37814e6)


class Shape(IntEnum):
    circle = 2
    square = 500


class RequestError(IntEnum):
    dummy = 2
    not_found = 404
    internal_error = 500


class WithAliases(IntEnum):
    one = 1
    two = 2
    too = 2  # an alias of two
    negone = -1


class Mixed(Enum):
    a = 1
    b = 2.5


class Perm(IntFlag):
    r = 4
    w = 2


FAVOURITE = Color.green  # a member as a module global


def compare(a, b, out):
    out[0] = a == b
    out[1] = a != b
    out[2] = a is b
    out[3] = a is not b


PAIRS = [
    (Color.red, Color.red),
    (Color.red, Color.green),
    (Color.blue, Shake.mint),  # same value, different classes
    (Planet.EARTH, Planet.EARTH),
    (Planet.MERCURY, Planet.EARTH),
    (Shape.circle, WithAliases.two),  # IntEnums of the same value: equal, not identical
    (WithAliases.two, WithAliases.too),  # an alias is the same member
    (Shape.square, RequestError.internal_error),
]


@pytest.mark.parametrize("a, b", PAIRS, ids=[f"{a!r}-{b!r}" for a, b in PAIRS])
def test_members_as_arguments_compare_as_python(backend, a, b):
    k = cuda.jit(compare)
    got = np.zeros(4, dtype=np.bool_)
    expected = got.copy()
    k[1, 1](a, b, got)
    compare(a, b, expected)
    np.testing.assert_array_equal(got, expected)


def test_members_of_classes_read_as_globals(backend):
    @cuda.jit
    def k(out, ints, floats):
        out[0] = Color.red == Color.green
        out[1] = Color["red"] == Color["red"]
        out[2] = FAVOURITE == Color.green
        out[3] = FAVOURITE is Color.green
        out[4] = WithAliases["too"] is WithAliases.two
        out[5] = Color.red is None
        ints[0] = Color.blue.value
        ints[1] = FAVOURITE.value
        ints[2] = WithAliases.negone
        floats[0] = Planet.EARTH.value[1]

    out = np.zeros(6, dtype=np.bool_)
    ints = np.zeros(3, dtype=np.int64)
    floats = np.zeros(1)
    k[1, 1](out, ints, floats)
    assert list(out) == [False, True, True, True, True, False]
    assert list(ints) == [3, 2, -1] and floats[0] == 6.37814e6


def test_int_enums_are_ints(backend):
    @cuda.jit
    def k(x, out):
        if x > RequestError.internal_error:
            out[0] = x - RequestError.not_found
        else:
            out[0] = x + Shape.circle
        out[1] = int16(RequestError.internal_error) + int32(Shape.square)
        out[2] = -Shape.circle * 3
        out[3] = int(RequestError.dummy) // 2
        out[4] = RequestError.not_found < 405
        out[5] = max(Shape.circle, 1)

    for x in (300, 450, 550):
        out = np.zeros(6, dtype=np.int32)
        k[1, 1](x, out)
        first = x - 404 if x > 500 else x + 2
        assert list(out) == [first, 1000, -6, 1, 1, 2]


@cuda.jit(device=True)
def pick(pred):
    return Color.red if pred else Color.green


@cuda.jit(device=True)
def same(a, b):
    return a is b


def test_members_returned_from_and_passed_to_device_functions(backend):
    @cuda.jit
    def k(pred, member, out):
        out[0] = pick(pred) == Color.red
        out[1] = pick(not pred) == Color.green
        out[2] = same(member, Color.blue)
        out[3] = same(member, pick(pred))

    out = np.zeros(4, dtype=np.bool_)
    k[1, 1](True, Color.blue, out)
    assert list(out) == [True, True, True, False]


def test_vectorize_returns_int_enum_values(backend):
    def f(x):
        if x != RequestError.not_found:
            return RequestError["internal_error"]
        else:
            return RequestError.dummy

    target = "cpu" if backend == "cpu" else "cuda"
    u = vectorize("int64(int64)", target=target)(f)
    arr = np.array([2, 404, 500, 404], dtype=np.int64)
    np.testing.assert_array_equal(u(arr), [f(x) for x in arr])


def test_signatures_name_the_enum_types(cpu):
    k = cuda.jit(compare)
    k[1, 1](Color.red, Shape.circle, np.zeros(4, dtype=np.bool_))
    (sig,) = k.signatures
    assert str(sig[0]) == "Enum<int64>(Color)" and str(sig[1]) == "IntEnum<int64>(Shape)"


def test_errors(cpu):
    @cuda.jit
    def missing_attr(out):
        out[0] = Color.redd == Color.red

    with pytest.raises(errors.UnsupportedError, match="did you mean 'red'"):
        missing_attr[1, 1](np.zeros(1, dtype=np.bool_))

    @cuda.jit
    def missing_item(out):
        out[0] = Color["purple"] == Color.red

    with pytest.raises(errors.TypingError, match="'purple' \\(no member has this name\\)"):
        missing_item[1, 1](np.zeros(1, dtype=np.bool_))

    @cuda.jit
    def ordered(out):
        out[0] = Color.red < Color.green

    with pytest.raises(errors.TypingError, match=r"operator < is not defined for "
                                                 r"Enum<int64>\(Color\)"):
        ordered[1, 1](np.zeros(1, dtype=np.bool_))

    @cuda.jit
    def arithmetic(out):
        out[0] = Color.red + 1

    with pytest.raises(errors.TypingError, match=r"operator \+ is not defined"):
        arithmetic[1, 1](np.zeros(1))

    @cuda.jit
    def name(out):
        out[0] = Color.red.name == "red"

    with pytest.raises(errors.UnsupportedError, match="attribute 'name'"):
        name[1, 1](np.zeros(1, dtype=np.bool_))

    @cuda.jit
    def mixed(out):
        out[0] = Mixed.a.value

    with pytest.raises(errors.UnsupportedError, match="values of different types"):
        mixed[1, 1](np.zeros(1))

    with pytest.raises(TypeError, match="values of different types"):
        cuda.jit(compare)[1, 1](Mixed.a, Mixed.b, np.zeros(4, dtype=np.bool_))


def test_int_flags_are_plain_enums_with_int_values(cpu):
    # numba types only IntEnum subclasses as ints; an IntFlag member is an enum member whose
    # value is an int.
    @cuda.jit
    def k(out):
        out[0] = Perm.r.value | Perm.w.value
        out[1] = Perm.r == Perm.r

    out = np.zeros(2, dtype=np.int64)
    k[1, 1](out)
    assert list(out) == [6, 1]
