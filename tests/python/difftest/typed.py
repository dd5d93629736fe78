"""Random programs over NumPy's scalar types: bool, int8-int64, uint8-uint64, float32 and
float64, with NEP 50's weak literals, and some compiled with fastmath (see generate.py for the
programs over Python's own types).

Every variable has one type for the whole program (ptxjit unifies the types of a variable's
assignments: the generator only ever assigns a value of exactly that type, converting with
`np.<type>(...)` where needed). The generator is the type checker: it computes each
expression's type by the rules of docs/language.md (NumPy's promotion, weak literals, `/` of
ints is float64, math functions keep float32, comparisons give bool, ...) and renders the
reference as calls of oracle.py's typed rules with the types written out
(`R.t_bin('+', 'int8', 'int8', 'lit', a, 5)`), so a wrong result type in ptxjit shows as a wrong
value (an int8 sum that did not wrap, a float32 product rounded as float64).

`generate_typed(seed)` returns a `TypedProgram`: each variable is read from a one-element input
array of its dtype and written at the end to a one-element output array of its dtype, in a
kernel or through a device function that takes and returns them.
"""
import math
import random
from dataclasses import dataclass, field

INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
FLOATS = ("float32", "float64")
NUMERIC = INTS + FLOATS
TYPES = ("bool",) + NUMERIC

BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64, "uint8": 8, "uint16": 16,
        "uint32": 32, "uint64": 64, "float32": 32, "float64": 64, "bool": 1}


def signed(t):
    return t.startswith("int")


def int_range(t):
    b = BITS[t]
    return (-(1 << (b - 1)), (1 << (b - 1)) - 1) if signed(t) else (0, (1 << b) - 1)


def promote(a, b):
    """NumPy's result type of two (non-literal) scalar types."""
    if a == b:
        return a
    if a == "bool":
        return b
    if b == "bool":
        return a
    if a in FLOATS or b in FLOATS:
        if a in FLOATS and b in FLOATS:
            return "float64"
        f, i = (a, b) if a in FLOATS else (b, a)
        if f == "float64":
            return "float64"
        return "float32" if BITS[i] <= 16 else "float64"
    if signed(a) == signed(b):
        return a if BITS[a] >= BITS[b] else b
    s, u = (a, b) if signed(a) else (b, a)
    if BITS[s] > BITS[u]:
        return s
    return {8: "int16", 16: "int32", 32: "int64", 64: "float64"}[BITS[u]]


def with_literal(t, lit_kind):
    """The type of `t op literal` (NEP 50: the literal takes t's type; a float literal with an
    int or bool makes float64; an int literal with bool makes int64)."""
    if lit_kind == "float":
        return t if t in FLOATS else "float64"
    return "int64" if t == "bool" else t


INT_LITS = (0, 1, 2, 3, 5, 7, 10, 31, 100, 127, 255, 1000, 65535, 2**31 - 1, 2**32 - 1,
            2**53 + 1, 2**63 - 1)
FLOAT_LITS = (0.0, 0.5, 1.0, 1.5, 2.0, 0.1, 3.25, 1e-3, 1e10, 3.4e38, 1e39, 1e-40, 1e300,
              16777217.0, 123.456)

FLOAT_INPUTS = (0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -3.75, 0.1, 1e-3, 100.0, 16777216.0,
                16777217.0, 3.4e38, -3.4e38, 1.4e-45, 1e-310, 1e300, math.inf, -math.inf,
                math.nan, 1e10, -123.456)

MATH2_32 = ("atan2", "hypot", "pow", "copysign", "fmod")


@dataclass
class TypedProgram:
    seed: int
    mode: str  # "device" or "kernel"
    fastmath: bool
    types: list  # the variables' types, v0..vN
    inputs: list  # the variables' initial values (Python ints, floats, bools)
    kernel_source: str
    reference_source: str
    uses_libm: bool = False
    float_ops: bool = False  # computes with floats (fastmath programs are compared without)
    notes: list = field(default_factory=list)


class _TGen:
    def __init__(self, seed, libm):
        self.rng = random.Random(seed)
        self.libm = libm
        self.vars = []  # (name, type)
        self.loop_vars = []
        self.counter = 0
        self.uses_libm = False
        self.float_ops = False

    # ---- helpers ----

    def vars_of(self, t):
        return [n for n, vt in self.vars if vt == t] + (
            list(self.loop_vars) if t == "int64" else [])

    def lit(self, t):
        """A weak literal whose value t can hold (rendered, value, kind)."""
        r = self.rng
        if t in FLOATS:
            if r.random() < 0.5:
                v = r.choice(FLOAT_LITS) * r.choice((1, -1))
                return _flit(v), "float"
            v = r.choice(INT_LITS)
            if r.random() < 0.5:
                v = -v
            return _ilit(v), "int"
        lo, hi = int_range(t) if t != "bool" else (0, 1)
        if t == "uint64" and r.random() < 0.1:
            lo = -(2**63)  # a negative literal with uint64 wraps (`u & -16` is a mask)
        cands = [v for v in INT_LITS + tuple(-x for x in INT_LITS) if lo <= v <= hi]
        if r.random() < 0.15:
            cands = [lo, hi]
        return _ilit(r.choice(cands)), "int"

    def big_lit(self, narrow):
        """An int literal the narrow int type cannot hold (it is int64 then)."""
        lo, hi = int_range(narrow)
        cands = [v for v in INT_LITS + tuple(-x for x in INT_LITS) if not lo <= v <= hi]
        return _ilit(self.rng.choice(cands))

    # ---- expressions: (kernel text, reference text) of exactly type t ----

    def expr(self, t, d=0):
        r = self.rng
        if t in FLOATS:  # any float value: fastmath may change comparisons and isnan too
            self.float_ops = True
        if d >= 3 or r.random() < 0.2:
            return self.leaf(t)
        if t == "bool":
            return self.bexpr(d)
        kinds = ["bin", "bin", "bin", "unary", "cast", "minmax", "cond"]
        if t in FLOATS:
            kinds += ["div", "math"] if self.libm else ["div"]
        if t == "int64":
            kinds += ["int"]
        k = r.choice(kinds)
        if k == "bin":
            return self.binop(t, d)
        if k == "div":
            return self.divide(t, d)
        if k == "unary":
            a = self.expr(t, d + 1)
            ops = ["-", "abs"] + (["~"] if t in INTS else [])
            op = r.choice(ops)
            if t in FLOATS:
                self.float_ops = True
            if op == "abs":
                return f"abs({a[0]})", f"R.t_abs('{t}', {a[1]})"
            return f"({op}{a[0]})", f"R.t_unary('{op}', '{t}', {a[1]})"
        if k == "cast":
            s = r.choice(TYPES)
            a = self.expr(s, d + 1)
            return f"np.{_np(t)}({a[0]})", f"R.t_conv('{t}', '{s}', {a[1]})"
        if k == "minmax":
            return self.minmax(t, d)
        if k == "cond":
            c = self.expr("bool", d + 1)
            a, b = self.expr(t, d + 1), self.expr(t, d + 1)
            return f"({a[0]} if {c[0]} else {b[0]})", f"({a[1]} if {c[1]} else {b[1]})"
        if k == "int":
            s = r.choice(("float32", "float64", "int8", "uint16", "int32", "bool"))
            a = self.expr(s, d + 1)
            fn = r.choice(("int", "math.floor", "math.ceil", "round") if s in FLOATS
                          else ("int",))
            return f"{fn}({a[0]})", f"R.t_toint('{fn}', '{s}', {a[1]})"
        return self.mathcall(t, d)

    def leaf(self, t):
        r = self.rng
        names = self.vars_of(t)
        if names and r.random() < 0.85:
            v = r.choice(names)
            return v, v
        if t == "bool":
            v = r.choice(("True", "False"))
            return v, v
        # A constant of the type, written as a cast: a bare literal would be weak (or folded by
        # CPython's compiler with its neighbours into another literal), so bare literals appear
        # only where the generator means a weak literal, next to an operand that is not one.
        s, kind = self.lit(t)
        src = "'int64'" if kind == "int" else "'float64'"
        return f"np.{_np(t)}({s})", f"R.t_conv('{t}', {src}, {s})"

    def operand_types(self, t):
        """Pairs (a, b) of operand types whose promotion is t; 'lit' for a weak literal."""
        out = []
        for a in TYPES:
            for b in TYPES:
                if promote(a, b) == t and not (a == "bool" and b == "bool"):
                    out.append((a, b))
        if t != "bool":
            out += [(t, "lit"), ("lit", t)] * 4
        if t in FLOATS:
            out += [(i, "flit") for i in INTS + ("bool",) if t == "float64"]
        return out

    def binop(self, t, d):
        r = self.rng
        if t in INTS:
            op = r.choice(["+", "-", "*", "//", "%", "<<", ">>", "&", "|", "^", "**", "+", "*"])
        else:
            op = r.choice(["+", "-", "*", "//", "%", "**", "+", "*", "-"])
            self.float_ops = True
        pairs = self.operand_types(t)
        if op in ("<<", ">>", "&", "|", "^"):
            pairs = [p for p in pairs if all(x in INTS + ("lit",) for x in p)]
        if op == "**":
            return self.power(t, d)
        if t == "int64" and r.random() < 0.15:
            # a literal that a narrower operand's type cannot hold: int64 (docs/language.md)
            n = r.choice([x for x in INTS if BITS[x] < 64])
            x, s = self.expr(n, d + 1), self.big_lit(n)
            if r.random() < 0.5:
                return self._render_bin(op, t, n, "lit", x, (s, s))
            return self._render_bin(op, t, "lit", n, (s, s), x)
        a_t, b_t = r.choice(pairs)
        if a_t == "flit" or b_t == "flit":
            a_t, b_t = (a_t, b_t) if b_t == "flit" else (b_t, a_t)
            a = self.expr(a_t, d + 1)
            s, _ = self.lit_float()
            b, b_ref, b_type = s, s, "flit"
        elif b_t == "lit" or a_t == "lit":
            other = a_t if b_t == "lit" else b_t
            x = self.expr(other, d + 1)
            s, kind = self.lit(t)
            lt = "lit" if kind == "int" else "flit"
            if b_t == "lit":
                a, b, b_ref, b_type = x, s, s, lt
                a_t = other
            else:
                return self._render_bin(op, t, lt, other, (s, s), x)
        else:
            a, bb = self.expr(a_t, d + 1), self.expr(b_t, d + 1)
            return self._render_bin(op, t, a_t, b_t, a, bb)
        return self._render_bin(op, t, a_t, b_type, a, (b, b_ref))

    def lit_float(self):
        v = self.rng.choice(FLOAT_LITS) * self.rng.choice((1, -1))
        return _flit(v), "float"

    def _render_bin(self, op, t, a_t, b_t, a, b):
        return (f"({a[0]} {op} {b[0]})",
                f"R.t_bin('{op}', '{t}', '{a_t}', '{b_t}', {a[1]}, {b[1]})")

    def power(self, t, d):
        r = self.rng
        a = self.expr(t, d + 1)
        if t in INTS:
            # an int literal exponent, or a variable of the same type
            if r.random() < 0.6:
                e = r.choice((0, 1, 2, 3, 5, 7))
                return self._render_bin("**", t, t, "lit", a, (str(e), str(e)))
            return self._render_bin("**", t, t, t, a, self.expr(t, d + 1))
        if r.random() < 0.5:
            e = r.choice((0, 1, 2, 3, -1, -2, 4, 16, -16))
            es = f"({e})" if e < 0 else str(e)
            return self._render_bin("**", t, t, "lit", a, (es, es))
        if not self.libm:
            return self._render_bin("*", t, t, t, a, self.expr(t, d + 1))
        self.uses_libm = True
        return self._render_bin("**", t, t, t, a, self.expr(t, d + 1))

    def divide(self, t, d):
        r = self.rng
        self.float_ops = True
        if t == "float64" and r.random() < 0.4:
            a_t, b_t = r.choice(INTS), r.choice(INTS)
        else:
            pairs = [p for p in self.operand_types(t) if "flit" not in p]
            a_t, b_t = r.choice(pairs)
            if t == "float64" and "lit" in (a_t, b_t):
                other = a_t if b_t == "lit" else b_t
                if other not in FLOATS:
                    a_t, b_t = "float64", "float64"
        if b_t == "lit":
            x = self.expr(a_t, d + 1)
            s, kind = self.lit(t)
            return self._render_bin("/", t, a_t, "lit" if kind == "int" else "flit", x, (s, s))
        if a_t == "lit":
            x = self.expr(b_t, d + 1)
            s, kind = self.lit(t)
            return self._render_bin("/", t, "lit" if kind == "int" else "flit", b_t, (s, s), x)
        return self._render_bin("/", t, a_t, b_t, self.expr(a_t, d + 1), self.expr(b_t, d + 1))

    def minmax(self, t, d):
        r = self.rng
        fn = r.choice(("min", "max"))
        a_t, b_t = r.choice([p for p in self.operand_types(t) if "lit" not in p and
                             "flit" not in p] or [(t, t)])
        if t in FLOATS:
            self.float_ops = True
        args = [(a_t, self.expr(a_t, d + 1)), (b_t, self.expr(b_t, d + 1))]
        if r.random() < 0.3:
            args.append((t, self.expr(t, d + 1)))
        ktxt = ", ".join(x[1][0] for x in args)
        types = ", ".join(f"'{x[0]}'" for x in args)
        vals = ", ".join(x[1][1] for x in args)
        return f"{fn}({ktxt})", f"R.t_minmax('{fn}', '{t}', ({types}), ({vals},))"

    def mathcall(self, t, d):
        r = self.rng
        self.uses_libm = True
        self.float_ops = True
        if r.random() < 0.7:
            fn = r.choice(("sqrt", "sin", "cos", "exp", "log", "fabs", "tanh", "atan", "log1p",
                           "expm1", "cbrt", "floor_f"))
            s = t if (t == "float32" or fn == "floor_f" or r.random() < 0.6) else \
                r.choice(("int32", "uint8", "int64", "bool"))
            a = self.expr(s, d + 1)
            if fn == "floor_f":  # NumPy's floor keeps the float type
                return f"np.floor({a[0]})", f"R.t_math('floor', '{t}', '{s}', {a[1]})"
            return f"math.{fn}({a[0]})", f"R.t_math('{fn}', '{t}', '{s}', {a[1]})"
        fn = r.choice(MATH2_32)
        a, b = self.expr(t, d + 1), self.expr(t, d + 1)
        return (f"math.{fn}({a[0]}, {b[0]})",
                f"R.t_math2('{fn}', '{t}', {a[1]}, {b[1]})")

    def bexpr(self, d):
        r = self.rng
        k = r.randrange(7)
        if k == 6:
            s = r.choice(NUMERIC)
            a = self.expr(s, d + 1)
            return f"np.bool_({a[0]})", f"R.t_conv('bool', '{s}', {a[1]})"
        if k <= 2:
            a_t = r.choice(NUMERIC + ("bool",))
            b_t = r.choice(NUMERIC)
            op = r.choice(("<", "<=", ">", ">=", "==", "!="))
            a = self.expr(a_t, d + 1)
            if r.random() < 0.3 and a_t != "bool":
                s, kind = self.lit(a_t)
                return (f"({a[0]} {op} {s})",
                        f"R.t_cmp('{op}', '{a_t}', '{'lit' if kind == 'int' else 'flit'}', "
                        f"{a[1]}, {s})")
            b = self.expr(b_t, d + 1)
            return (f"({a[0]} {op} {b[0]})", f"R.t_cmp('{op}', '{a_t}', '{b_t}', {a[1]}, {b[1]})")
        if k == 3:
            a, b = self.expr("bool", d + 1), self.expr("bool", d + 1)
            op = r.choice(("and", "or", "&", "|", "^"))
            if op in ("and", "or"):
                return f"({a[0]} {op} {b[0]})", f"({a[1]} {op} {b[1]})"
            return f"({a[0]} {op} {b[0]})", f"R.t_bin('{op}', 'bool', 'bool', 'bool', {a[1]}, {b[1]})"
        if k == 4:
            a = self.expr("bool", d + 1)
            return f"(not {a[0]})", f"(not {a[1]})"
        s = r.choice(FLOATS)
        fn = r.choice(("isnan", "isinf", "isfinite"))
        a = self.expr(s, d + 1)
        return f"math.{fn}({a[0]})", f"math.{fn}({a[1]})"

    # ---- statements: lists of (kernel line, reference line) ----

    def assign(self):
        r = self.rng
        name, t = r.choice(self.vars)
        if t != "bool" and r.random() < 0.3:
            # augmented assignment: the result must keep the variable's type
            ops = ["+", "-", "*"] + (["//", "%", "<<", ">>", "&", "|", "^"] if t in INTS
                                     else ["/"])
            op = r.choice(ops)
            if t in FLOATS:
                self.float_ops = True
            cands = [b for b in TYPES if promote(t, b) == t and
                     not (op in ("<<", ">>", "&", "|", "^") and b not in INTS)]
            if r.random() < 0.4 or not cands:
                s, kind = self.lit(t)
                bt, e = ("lit" if kind == "int" else "flit"), (s, s)
            else:
                bt = r.choice(cands)
                e = self.expr(bt, 1)
            if op == "/" and t == "float64" and bt in INTS + ("lit", "bool"):
                pass  # / gives float64: fine for a float64 variable
            return [(f"{name} {op}= {e[0]}",
                     f"{name} = R.t_bin('{op}', '{t}', '{t}', '{bt}', {name}, {e[1]})")]
        e = self.expr(t)
        return [(f"{name} = {e[0]}", f"{name} = {e[1]}")]

    def block(self, depth, n):
        out = []
        for _ in range(n):
            out.extend(self.stmt(depth))
        return out or [("pass", "pass")]

    def stmt(self, depth):
        r = self.rng
        x = r.random()
        if depth >= 2 or x < 0.5:
            return self.assign()
        if x < 0.65:
            c = self.expr("bool", 1)
            lines = [(f"if {c[0]}:", f"if {c[1]}:")] + _indent(self.block(depth + 1,
                                                                          r.randint(1, 3)))
            if r.random() < 0.5:
                lines += [("else:", "else:")] + _indent(self.block(depth + 1, r.randint(1, 2)))
            return lines
        if x < 0.8:
            self.counter += 1
            j = f"j{self.counter}"
            rng_args = r.choice(["4", "0", "3", "2, 9, 3", "5, -2, -2"])
            self.loop_vars.append(j)
            body = self.block(depth + 1, r.randint(1, 3))
            if r.random() < 0.4:
                c = self.expr("bool", 2)
                word = r.choice(["break", "continue"])
                body += [(f"if {c[0]}:", f"if {c[1]}:"), (f"    {word}", f"    {word}")]
            self.loop_vars.remove(j)
            return [(f"for {j} in range({rng_args}):", f"for {j} in range({rng_args}):")] + \
                _indent(body)
        if x < 0.9:
            c = self.expr("bool", 1)
            return [(f"if {c[0]}:", f"if {c[1]}:"), ("    @RETURN", "    @RETURN")]
        return self.assign()


def _indent(lines):
    return [("    " + k, "    " + rr) for k, rr in lines]


def _ilit(v):
    return f"({v})" if v < 0 else str(v)


def _flit(v):
    if math.isinf(v):
        raise ValueError(v)
    return f"({v!r})" if math.copysign(1.0, v) < 0 else repr(v)


def _np(t):
    return "bool_" if t == "bool" else t


def _input(rng, t):
    if t == "bool":
        return rng.random() < 0.5
    if t in FLOATS:
        v = rng.choice(FLOAT_INPUTS) if rng.random() < 0.7 else round(rng.uniform(-50, 50), 2)
        if t == "float32":
            from .oracle import f32

            v = f32(v)
        return v
    lo, hi = int_range(t)
    r = rng.random()
    if r < 0.3:
        return rng.choice((lo, hi, 0, 1, lo + 1, hi - 1))
    if r < 0.6:
        return max(lo, min(hi, rng.choice((-1, 2, 3, 7, -7, 100, -100, 1000))))
    return rng.randint(lo, hi)


def generate_typed(seed, libm=True, fastmath=None):
    """The typed program of `seed` (see the module docstring). libm=False: no math-library
    calls (for CUDA, whose libdevice is not the C library). fastmath: None lets the seed choose
    (one program in eight)."""
    g = _TGen(seed, libm)
    r = g.rng
    mode = "device" if r.random() < 0.5 else "kernel"
    if fastmath is None:
        fastmath = r.random() < 0.125
    n = r.randint(3, 6)
    types = [r.choice(TYPES) for _ in range(n)]
    if not any(t in FLOATS for t in types) and r.random() < 0.7:
        types[r.randrange(n)] = r.choice(FLOATS)
    if "bool" not in types:
        types.append("bool")
    g.vars = [(f"v{i}", t) for i, t in enumerate(types)]
    inputs = [_input(r, t) for t in types]
    body = g.block(0, r.randint(2, 7))

    names = [v for v, _ in g.vars]
    result = "(" + ", ".join(names) + ",)"
    ref = ["def f(" + ", ".join(names) + "):"]
    for _, rr in body:
        ref.append("    " + rr.replace("@RETURN", f"return {result}"))
    ref.append(f"    return {result}")

    params = ", ".join(f"a{i}" for i in range(len(types)))
    outs = ", ".join(f"o{i}" for i in range(len(types)))
    store = "; ".join(f"o{i}[0] = v{i}" for i in range(len(types)))
    opts = "fastmath=True" if fastmath else ""
    k = ["import math", "import numpy as np", "from ptxjit import cuda", ""]
    if mode == "device":
        k += [f"@cuda.jit(device=True{', ' + opts if opts else ''})",
              "def f(" + ", ".join(names) + "):"]
        for kk, _ in body:
            k.append("    " + kk.replace("@RETURN", f"return {result}"))
        k.append(f"    return {result}")
        k += ["", "", f"@cuda.jit({opts})", f"def kern({params}, {outs}):",
              "    " + ", ".join(names) + " = f(" + ", ".join(f"a{i}[0]" for i in
                                                        range(len(types))) + ")",
              f"    {store}"]
    else:
        k += [f"@cuda.jit({opts})", f"def kern({params}, {outs}):"]
        k += [f"    v{i} = a{i}[0]" for i in range(len(types))]
        for kk, _ in body:
            if "@RETURN" in kk:
                ind = kk[: len(kk) - len(kk.lstrip())]
                k += ["    " + ind + store, "    " + ind + "return"]
            else:
                k.append("    " + kk)
        k.append(f"    {store}")
    return TypedProgram(seed, mode, fastmath, types, inputs, "\n".join(k) + "\n",
                        "\n".join(ref) + "\n", g.uses_libm, g.float_ops)
