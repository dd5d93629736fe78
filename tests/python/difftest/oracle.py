"""The reference semantics of generated programs: CPython's, with ptxjit's documented divergences
(docs/language.md, Arithmetic; docs/reliability.md) as rules.

The generator renders each program twice from one tree: as kernel code, and as reference code in
which every operation whose meaning ptxjit defines differently from CPython is a call to a
function here. The reference code runs on CPython (its ints, floats, complex numbers, `math` and
`cmath`); these functions only encode the rules:

- int64 arithmetic wraps around (`wrap`);
- `//` and `%` by zero give 0, `INT_MIN // -1` wraps (NumPy's values);
- shifts by a negative count or one of 64 or more shift everything out (NumPy's left_shift and
  right_shift);
- `**` of ints wraps; a negative exponent gives 0 unless the base is ±1; a float to an int
  literal power up to 16 is computed by binary exponentiation (`fpowk`), not C's pow;
- float -> int conversions (`int`, `math.floor`/`ceil`/`trunc`, `round`) truncate or round, give 0
  for NaN and saturate to the int64 limits;
- a comparison of an int64 with a float64 converts the int to float64 first (NumPy's promotion);
- where Python raises for a float operation (`x / 0.0`, `math.log(-1)`, `math.exp(1000)`,
  `0.0 ** -1`) the kernel computes IEEE's or the C library's value: nan or ±inf;
- operations the documentation gives no value for raise `Undefined`, and the program is not
  compared (counted as skipped): complex division by zero, float `//` and `%` by zero, a cmath
  function that overflows, `math.copysign` from a NaN (a NaN's sign bit is not specified).
"""
import math

I64_MIN = -(2**63)
I64_MAX = 2**63 - 1


class Undefined(Exception):
    """The program reaches an operation whose result ptxjit does not document: not compared."""


def wrap(v):
    """An exact Python int reduced to int64, two's complement."""
    v &= 0xFFFFFFFFFFFFFFFF
    return v - (1 << 64) if v >= (1 << 63) else v


def iadd(a, b):
    return wrap(a + b)


def isub(a, b):
    return wrap(a - b)


def imul(a, b):
    return wrap(a * b)


def ifloordiv(a, b):
    return 0 if b == 0 else wrap(a // b)


def imod(a, b):
    return 0 if b == 0 else wrap(a % b)


def ishl(a, n):
    return 0 if n < 0 or n >= 64 else wrap(a << n)


def ishr(a, n):
    if n < 0 or n >= 64:
        return -1 if a < 0 else 0
    return a >> n


def ineg(a):
    return wrap(-a)


def iabs(a):
    return wrap(abs(a))


def ipow(a, e):
    if e < 0:
        if a == 1:
            return 1
        if a == -1:
            return 1 if e % 2 == 0 else -1
        return 0
    return wrap(pow(a, e, 1 << 64))


def saturate(x):
    """A float truncated to int64 as ptxjit converts it: NaN -> 0, beyond the range -> a limit."""
    if math.isnan(x):
        return 0
    if x >= 9223372036854775807.0:
        return I64_MAX
    if x <= -9223372036854775808.0:
        return I64_MIN
    return int(x)


def ifloor(x):
    return saturate(math.floor(x)) if math.isfinite(x) else saturate(x)


def iceil(x):
    return saturate(math.ceil(x)) if math.isfinite(x) else saturate(x)


def iround(x):
    if not math.isfinite(x):
        return saturate(x)
    r = round(x)
    return max(I64_MIN, min(I64_MAX, r))


def cmp_if(op, i, x):
    """int64 `op` float64: the int converted to float64 first."""
    return _CMP[op](float(i), x)


def cmp_fi(op, x, i):
    return _CMP[op](x, float(i))


_CMP = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}


def fdiv(a, b):
    a = float(a)
    b = float(b)
    if b == 0.0:
        if a == 0.0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def ffloordiv(a, b):
    if b == 0.0:
        raise Undefined("float // 0")
    return a // b


def fmod(a, b):
    if b == 0.0:
        raise Undefined("float % 0")
    return a % b


def fpow(a, b):
    """C's pow, which the kernel calls, where Python raises or goes complex."""
    a = float(a)
    b = float(b)
    odd = b.is_integer() and abs(b) < 2**53 and int(b) % 2 == 1
    if a == 0.0 and b < 0.0:  # C: ±inf (the sign of a for odd integral b); Python raises
        return math.copysign(math.inf, a) if odd else math.inf
    if a < 0.0 and math.isfinite(a) and math.isfinite(b) and not b.is_integer():
        return math.nan  # C's domain error; Python gives a complex number
    try:
        return math.pow(a, b)
    except OverflowError:
        return -math.inf if (a < 0 and odd) else math.inf


def fpowk(x, k):
    """float64 ** k for an int literal k in [-16, 16], as ptxjit computes it (docs/language.md,
    Arithmetic): binary exponentiation (square and multiply), the reciprocal for a negative k.
    Other int exponents use C's pow(x, float(n)) on the CPU backend, as CPython does."""
    x = float(x)
    e = -k if k < 0 else k
    r = 1.0
    while e:
        if e & 1:
            r *= x
        e >>= 1
        if e:
            x *= x
    return fdiv(1.0, r) if k < 0 else r


def fmin(a, b):
    """min(a, b) of two floats in a kernel (docs/language.md, min and max): numba-cuda's fmin,
    PTX's min.f64: a NaN operand gives the other one, and -0.0 is less than +0.0."""
    if math.isnan(a) or math.isnan(b):
        return b if math.isnan(a) else a
    if a == b:  # equal zeros: the negative one
        return a if math.copysign(1.0, a) < 0 else b
    return b if b < a else a


def fmax(a, b):
    """max(a, b) of two floats in a kernel: numba-cuda's fmax, PTX's max.f64 (as fmin)."""
    if math.isnan(a) or math.isnan(b):
        return b if math.isnan(a) else a
    if a == b:  # equal zeros: the positive one
        return a if math.copysign(1.0, a) > 0 else b
    return b if b > a else a


def m(name, *args):
    """math.<name>(*args), with nan/±inf where CPython raises (the C library's values)."""
    if name == "copysign" and math.isnan(args[1]):
        # The sign bit of a NaN is not specified (x86's invalid operations give -nan, CPython's
        # math.nan is +nan): copying it is not compared.
        raise Undefined("copysign from a NaN")
    if name in _C_LIBM:
        return _c_libm(name)(*map(float, args))
    try:
        return getattr(math, name)(*args)
    except (ValueError, OverflowError):
        import numpy as np

        with np.errstate(all="ignore"):
            return float(getattr(np, _NP.get(name, name))(*[np.float64(a) for a in args]))


# CPython computes these itself, not with the C library a kernel calls on the CPU backend
# (docs/language.md: "on the CPU backend they are the C math library's"): math.hypot is
# CPython's own correctly rounded algorithm, the C library's may differ in the last bit.
_C_LIBM = ("hypot",)


def _c_libm(name):
    import ctypes
    import ctypes.util

    global _LIBM
    if _LIBM is None:
        _LIBM = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
    fn = getattr(_LIBM, name)
    fn.restype = ctypes.c_double
    fn.argtypes = [ctypes.c_double, ctypes.c_double]
    return fn


_LIBM = None

_NP = {"atan2": "arctan2", "asin": "arcsin", "acos": "arccos", "atan": "arctan", "pow": "power"}


def c(name, *args):
    """cmath.<name>(*args); where CPython raises the value is not documented."""
    import cmath

    try:
        return getattr(cmath, name)(*args)
    except (ValueError, OverflowError) as e:
        raise Undefined(f"cmath.{name}: {e}")


def cabs(z):
    """abs of a complex number: C's hypot, inf where CPython raises OverflowError. The special
    values first: CPython 3.11's abs(complex) reads a stale errno for NaN parts, so that after an
    overflow elsewhere abs(complex(nan, 1.0)) raises OverflowError."""
    if math.isinf(z.real) or math.isinf(z.imag):
        return math.inf
    if math.isnan(z.real) or math.isnan(z.imag):
        return math.nan
    try:
        return abs(z)
    except OverflowError:
        return math.inf


def cmul(a, b):
    try:
        return a * b
    except OverflowError as e:
        raise Undefined(str(e))
