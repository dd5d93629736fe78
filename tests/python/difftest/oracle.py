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


# ---- typed programs (typed.py): NumPy's scalar types, NEP 50 literals, float32 ----
#
# Values are Python bools, ints (within their type's range) and floats (a float32 value is a
# Python float that float32 holds exactly). Every operation names its result type `t` and its
# operand types: a type name, 'lit' (a weak int literal) or 'flit' (a weak float literal). The
# rules, beyond those above, each per docs/language.md:
# - the operands are converted to the result type, then combined in it (NumPy's promotion;
#   NEP 50: a literal takes the other operand's type, a float literal with an int makes
#   float64); ints wrap to their width, float32 arithmetic rounds to float32 at each step;
# - shifts shift everything out at counts of at least the result type's width;
# - conversions: int -> narrower int wraps, float -> int saturates (NaN -> 0), int -> float
#   rounds to nearest, anything -> bool is `!= 0`;
# - comparisons of ints (of any signedness) are exact; with a float, both are converted to
#   the promoted float type first;
# - float32 math functions are the C library's float routines (sinf, powf, ...).

_T_INTS = {"int8": (8, True), "int16": (16, True), "int32": (32, True), "int64": (64, True),
           "uint8": (8, False), "uint16": (16, False), "uint32": (32, False),
           "uint64": (64, False)}


def t_wrap(t, v):
    """The int v reduced to int type t (two's complement)."""
    bits, sig = _T_INTS[t]
    v &= (1 << bits) - 1
    return v - (1 << bits) if sig and v >= (1 << (bits - 1)) else v


def f32(x):
    """A float64 rounded to float32 (to nearest even; ±inf beyond the range)."""
    import numpy as np

    with np.errstate(all="ignore"):
        return float(np.float32(x))


def f32_from_int(v):
    """An int rounded to float32 in one step (not through float64, which could round twice)."""
    if v == 0:
        return 0.0
    sign = -1.0 if v < 0 else 1.0
    a = abs(v)
    n = a.bit_length()
    if n <= 24:
        return sign * float(a)
    shift = n - 24
    m, rest = a >> shift, a & ((1 << shift) - 1)
    half = 1 << (shift - 1)
    if rest > half or (rest == half and m & 1):
        m += 1
    return f32(sign * math.ldexp(float(m), shift))  # exact in float64; inf beyond float32


def _kind(t, v):
    if t in ("lit", "int64") and not isinstance(v, float):
        return "int"
    if t in ("flit", "float64", "float32") or isinstance(v, float):
        return "float"
    return "int"


def t_conv(t, s, v):
    """The value v of type s (or literal kind 'lit'/'flit') converted to type t."""
    if isinstance(v, bool):
        v = int(v)
    if t == "bool":
        return v != 0  # NaN != 0
    if t in _T_INTS:
        if isinstance(v, float):
            if math.isnan(v):
                return 0
            bits, sig = _T_INTS[t]
            lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if sig else (0, (1 << bits) - 1)
            if v >= hi:
                return hi
            if v <= lo:
                return lo
            return int(v)
        return t_wrap(t, v)
    if t == "float64":
        return float(v)
    if isinstance(v, int):
        return f32_from_int(v)
    return f32(v)


def _f32_op(op, a, b):
    import numpy as np

    with np.errstate(all="ignore"):
        x, y = np.float32(a), np.float32(b)
        if op == "+":
            return float(x + y)
        if op == "-":
            return float(x - y)
        if op == "*":
            return float(x * y)
        if op == "/":
            return float(x / y)
        if op == "//":
            return float(np.floor_divide(x, y))
        if op == "%":
            return float(np.remainder(x, y))
    raise AssertionError(op)


def _fpowk32(x, k):
    """float32 ** k for an int literal k in [-16, 16]: binary exponentiation in float32."""
    e = -k if k < 0 else k
    r = 1.0
    while e:
        if e & 1:
            r = f32(r * x)
        e >>= 1
        if e:
            x = f32(x * x)
    return _f32_op("/", 1.0, r) if k < 0 else r


def t_bin(op, t, a_t, b_t, a, b):
    """a op b with result type t (see the rules above)."""
    if t == "bool":  # & | ^ of bools
        return {"&": a and b, "|": a or b, "^": a != b}[op] if op in "&|^" else None
    if op == "**" and b_t == "lit" and t in ("float32", "float64") and -16 <= b <= 16:
        x = t_conv(t, a_t, a)
        return _fpowk32(x, b) if t == "float32" else fpowk(x, b)
    x, y = t_conv(t, a_t, a), t_conv(t, b_t, b)
    if t in _T_INTS:
        bits, sig = _T_INTS[t]
        if op in ("+", "-", "*", "&", "|", "^"):
            return t_wrap(t, {"+": x + y, "-": x - y, "*": x * y, "&": x & y, "|": x | y,
                              "^": x ^ y}[op])
        if op == "//":
            return 0 if y == 0 else t_wrap(t, x // y)
        if op == "%":
            return 0 if y == 0 else t_wrap(t, x % y)
        if op == "<<":
            return 0 if y < 0 or y >= bits else t_wrap(t, x << y)
        if op == ">>":
            if y < 0 or y >= bits:
                return -1 if x < 0 else 0
            return x >> y
        if op == "**":
            if y < 0:
                return 1 if x == 1 else ((1 if y % 2 == 0 else -1) if x == -1 else 0)
            return t_wrap(t, pow(x, y, 1 << bits))
        raise AssertionError(op)
    if t == "float64":
        if op == "/":
            return fdiv(x, y)
        if op == "//":
            return ffloordiv(x, y)
        if op == "%":
            return fmod(x, y)
        if op == "**":
            return fpow(x, y)
        return {"+": x + y, "-": x - y, "*": x * y}[op]
    if op in ("//", "%") and y == 0.0:
        raise Undefined(f"float32 {op} 0")
    if op == "**":
        return _libm32("powf", x, y)
    return _f32_op(op, x, y)


def t_unary(op, t, a):
    if t in _T_INTS:
        return t_wrap(t, -a if op == "-" else ~a)
    return -a


def t_abs(t, a):
    return t_wrap(t, abs(a)) if t in _T_INTS else abs(a)


def t_minmax(fn, t, types, vals):
    """min/max as docs/language.md#min-and-max says: ints by their exact order (Python's); two
    floats (float32, float64, float literals) by numba-cuda's fmin/fmax (a NaN gives the other
    operand) in t; any other mix (an int with a float, three or more operands) by Python's rule
    on the values converted to t: the first of equal values wins, and a candidate replaces the
    current pick only when strictly smaller (min) or greater (max), so a NaN first is kept."""
    if all(s in _T_INTS or s == "bool" for s in types):
        pick = min(vals) if fn == "min" else max(vals)
        for s, v in zip(types, vals):
            if v == pick:
                return t_conv(t, s, v)
    conv = [t_conv(t, s, v) for s, v in zip(types, vals)]
    if len(conv) == 2 and all(s in ("float32", "float64", "flit") for s in types):
        return fmin(conv[0], conv[1]) if fn == "min" else fmax(conv[0], conv[1])
    r = conv[0]
    for v in conv[1:]:
        if (v < r) if fn == "min" else (v > r):
            r = v
    return r


def _promote_cmp(a_t, b_t):
    from .typed import FLOATS, promote, with_literal

    if b_t in ("lit", "flit"):
        return with_literal(a_t, "int" if b_t == "lit" else "float")
    if a_t in FLOATS or b_t in FLOATS:
        return promote(a_t, b_t)
    return None


def t_cmp(op, a_t, b_t, a, b):
    """a op b: exact for ints of any signedness (and bools); with a float, both converted to
    the promoted float type (a literal takes the other operand's type)."""
    c = _promote_cmp(a_t, b_t)
    if c is None or c not in ("float32", "float64"):
        x, y = int(a), int(b)
    else:
        x, y = t_conv(c, a_t, a), t_conv(c, b_t, b)
    return _CMP[op](x, y)


_MATH32 = {"sqrt": "sqrtf", "sin": "sinf", "cos": "cosf", "exp": "expf", "log": "logf",
           "fabs": "fabsf", "tanh": "tanhf", "atan": "atanf", "log1p": "log1pf",
           "expm1": "expm1f", "cbrt": "cbrtf", "atan2": "atan2f", "hypot": "hypotf",
           "pow": "powf", "copysign": "copysignf", "fmod": "fmodf"}


def _libm32(name, *args):
    import ctypes

    fn = _c_libm_any(name, ctypes.c_float, len(args))
    return f32(fn(*args))


_LIBM_FNS = {}


def _c_libm_any(name, ctype, nargs):
    import ctypes
    import ctypes.util

    global _LIBM
    key = (name, ctype, nargs)
    if key not in _LIBM_FNS:
        if _LIBM is None:
            _LIBM = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
        fn = getattr(_LIBM, name)
        fn.restype = ctype
        fn.argtypes = [ctype] * nargs
        _LIBM_FNS[key] = fn
    return _LIBM_FNS[key]


def t_math(fn, t, s, a):
    """math.<fn>(a) (or np.floor for 'floor') of an `s` value, giving type t: the float32
    routine for a float32 argument, else float64's."""
    x = t_conv(t, s, a)
    if fn == "floor":  # np.floor keeps the sign of a zero: np.floor(-0.0) is -0.0
        return math.copysign(float(math.floor(x)), x) if math.isfinite(x) else x
    if t == "float32":
        return _libm32(_MATH32[fn], x)
    return m(fn, x)


def t_math2(fn, t, a, b):
    if fn == "copysign" and math.isnan(b):
        raise Undefined("copysign from a NaN")
    if t == "float32":
        return _libm32(_MATH32[fn], a, b)
    return m(fn, a, b)


def t_toint(fn, s, v):
    """int(v), math.floor/ceil(v), round(v): int64 (floats saturate, NaN -> 0)."""
    if s in ("float32", "float64"):
        return {"int": saturate, "math.floor": ifloor, "math.ceil": iceil,
                "round": iround}[fn](v)
    return t_wrap("int64", int(v))
