"""Random programs for differential testing: a device function (or a kernel body) over int64,
float64, bool and complex128 values, tuples, loops, branches, early returns, math and cmath.

`generate(seed)` returns a `Program`: the kernel source (ptxjit), the reference source (CPython,
with the rules of oracle.py as calls `R.<rule>(...)`) and the inputs. Both are rendered from one
random tree at once: every expression generator returns a pair (kernel text, reference text).
The same seed gives the same program on every machine (random.Random(seed), no global state).
"""
import math
import random
from dataclasses import dataclass, field

INT_ARGS = ("i0", "i1", "i2")
FLOAT_ARGS = ("x0", "x1")

INT_LITERALS = (0, 1, -1, 2, -2, 3, 5, -7, 10, 31, 32, 63, 64, 65, -64, 100, 255, 2**31 - 1,
                -(2**31), 2**32, 2**53 + 1, 2**62, 2**63 - 1, -(2**63), -(2**63) + 1)
FLOAT_LITERALS = (0.0, -0.0, 0.5, -1.5, 1.0, 2.0, 3.0, 0.1, -2.5, 1e-300, 1e300, -1e300,
                  1e16, 4.5e15, 9.3e18, -9.3e18, 2.0**63, 123.456)
FLOAT_SPECIAL = ("math.inf", "(-math.inf)", "math.nan", "math.pi", "math.e")
INT_INPUTS = INT_LITERALS + (4, -3, 1000, -1000, 2**40 + 7, -(2**47))
FLOAT_INPUTS = (0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.5, 3.0, 1e-310, 1e300, -1e300, 7.25, 1e19,
                -1e19, 2.0**53, math.inf, -math.inf, math.nan, 0.1, -123.75)

MATH1 = ("sin", "cos", "tan", "exp", "log", "sqrt", "atan", "tanh", "fabs", "expm1", "log1p",
         "asin", "acos", "sinh", "cosh", "log2", "log10", "cbrt", "erf", "exp2")
MATH2 = ("atan2", "hypot", "copysign", "pow", "fmod")
CMATH1 = ("exp", "sqrt", "log", "sin", "cos")


@dataclass
class Program:
    seed: int
    mode: str  # "device" (a device function called by a kernel) or "kernel" (the body inline)
    kernel_source: str
    reference_source: str
    ints: list
    floats: list
    bools: list
    complexes: list
    uses_libm: bool = False  # calls the math library (math, cmath, float **, complex abs)
    notes: list = field(default_factory=list)


def _lit_int(v):
    s = f"({v})" if v < 0 else str(v)
    return (s, s)


def _lit_float(v):
    if math.isinf(v) or math.isnan(v):
        raise ValueError(v)
    s = f"({v!r})" if math.copysign(1.0, v) < 0 else repr(v)
    return (s, s)


def _folds(text):
    """Whether CPython's compiler folds the expression `text` into one constant."""
    code = compile(text, "<fold>", "eval")
    return not code.co_names and len(code.co_code) <= 6 and len(code.co_consts) >= 1 and \
        not code.co_varnames


def _constant_int(text):
    """The value of an int expression CPython folds into one constant, else None."""
    if not _folds(text):
        return None
    v = eval(compile(text, "<fold>", "eval"))  # a folded constant: nothing runs
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _folds_outside_int64(text):
    """Whether CPython's compiler folds the int expression `text` into a constant that is not an
    int64 (`2**62 * 4`, `2 ** -1`): the kernel would see that constant, not the operation, so the
    generator avoids such expressions (a constant beyond int64 is rejected, as documented)."""
    code = compile(text, "<fold>", "eval")
    if code.co_names:
        return False
    consts = [c for c in code.co_consts if c is not None]
    return any(not isinstance(c, int) or isinstance(c, bool) or not -(2**63) <= c < 2**63
               for c in consts)


class _Gen:
    def __init__(self, seed, libm):
        self.rng = random.Random(seed)
        self.libm = libm
        self.ivars = list(INT_ARGS) + ["a", "b"]
        self.fvars = list(FLOAT_ARGS) + ["y", "z"]
        self.bvars = ["b0", "p"]
        self.cvars = ["c0", "w"]
        self.loop_vars = []
        self.counter = 0
        self.uses_libm = False
        self.depth_loops = 0

    # ---- expressions: each returns (kernel text, reference text) ----

    def ivar(self):
        v = self.rng.choice(self.ivars)
        return (v, v)

    def iexpr(self, d=0):
        r = self.rng
        if d >= 3 or r.random() < 0.25:
            choice = r.random()
            if choice < 0.55:
                v = r.choice(self.ivars + self.loop_vars)
                return (v, v)
            if choice < 0.9:
                return _lit_int(r.choice(INT_LITERALS))
            return _lit_int(r.randint(-1000, 1000))
        kind = r.randrange(14)
        if kind <= 3:
            op = r.choice(["+", "-", "*", "//", "%", "<<", ">>", "&", "|", "^", "**"])
            a = self.iexpr(d + 1)
            if op == "**":
                e = r.choice([0, 1, 2, 3, 5, -1, -2])
                b = (str(e), str(e))
            else:
                b = self.iexpr(d + 1)
            rule = {"+": "iadd", "-": "isub", "*": "imul", "//": "ifloordiv", "%": "imod",
                    "<<": "ishl", ">>": "ishr", "**": "ipow"}.get(op)
            if _folds_outside_int64(f"({a[0]} {op} {b[0]})"):
                a = self.ivar()
            k = f"({a[0]} {op} {b[0]})"
            ref = f"R.{rule}({a[1]}, {b[1]})" if rule else f"({a[1]} {op} {b[1]})"
            return (k, ref)
        if kind == 4:
            a = self.iexpr(d + 1)
            if _folds_outside_int64(f"(-{a[0]})"):
                a = self.ivar()
            op = r.choice(["-", "~", "abs"])
            if op == "-":
                return (f"(-{a[0]})", f"R.ineg({a[1]})")
            if op == "~":
                return (f"(~{a[0]})", f"(~{a[1]})")
            return (f"abs({a[0]})", f"R.iabs({a[1]})")
        if kind == 5:
            fn = r.choice(["min", "max"])
            args = [self.iexpr(d + 1) for _ in range(r.choice([2, 2, 3]))]
            return (f"{fn}({', '.join(a[0] for a in args)})",
                    f"{fn}({', '.join(a[1] for a in args)})")
        if kind == 6:
            x = self.fexpr(d + 1)
            fn = r.choice(["int", "math.floor", "math.ceil", "math.trunc", "round"])
            rule = {"int": "saturate", "math.floor": "ifloor", "math.ceil": "iceil",
                    "math.trunc": "saturate", "round": "iround"}[fn]
            return (f"{fn}({x[0]})", f"R.{rule}({x[1]})")
        if kind == 7:
            c = self.bexpr(d + 1)
            a, b = self.iexpr(d + 1), self.iexpr(d + 1)
            return (f"({a[0]} if {c[0]} else {b[0]})", f"({a[1]} if {c[1]} else {b[1]})")
        if kind == 8:
            c = self.bexpr(d + 1)
            return (f"int({c[0]})", f"int({c[1]})")
        if kind == 9:
            # a tuple built and indexed, or a divmod
            a, b = self.iexpr(d + 1), self.iexpr(d + 1)
            if r.random() < 0.5:
                i = r.randrange(2)
                return (f"({a[0]}, {b[0]})[{i}]", f"({a[1]}, {b[1]})[{i}]")
            v = r.choice(self.ivars)
            return (v, v)
        # binary ops are the most interesting: more weight
        op = r.choice(["+", "-", "*", "//", "%"])
        a, b = self.iexpr(d + 1), self.iexpr(d + 1)
        if _folds_outside_int64(f"({a[0]} {op} {b[0]})"):
            a = self.ivar()
        rule = {"+": "iadd", "-": "isub", "*": "imul", "//": "ifloordiv", "%": "imod"}[op]
        return (f"({a[0]} {op} {b[0]})", f"R.{rule}({a[1]}, {b[1]})")

    def fexpr(self, d=0):
        r = self.rng
        if d >= 3 or r.random() < 0.25:
            choice = r.random()
            if choice < 0.55:
                v = r.choice(self.fvars)
                return (v, v)
            if choice < 0.9:
                return _lit_float(r.choice(FLOAT_LITERALS))
            if choice < 0.95:
                s = r.choice(FLOAT_SPECIAL)
                return (s, s)
            return _lit_float(round(r.uniform(-100, 100), 3))
        kind = r.randrange(12)
        if kind in (5, 6) and not self.libm:
            kind = 7
        if kind <= 3:
            op = r.choice(["+", "-", "*", "/", "/", "**", "//", "%"])
            a = self.fexpr(d + 1)
            int_exponent = r.random() >= 0.8
            b = self.iexpr(d + 1) if int_exponent else self.fexpr(d + 1)
            if r.random() < 0.15:
                a, b = self.iexpr(d + 1), self.fexpr(d + 1)
                int_exponent = False
            rule = {"/": "fdiv", "**": "fpow", "//": "ffloordiv", "%": "fmod"}.get(op)
            if op == "**" and _folds(f"({a[0]} ** {b[0]})"):
                # CPython's compiler would fold it with Python's pow, whose result may be complex
                # ((-1) ** 0.5): a variable base keeps it an operation of the kernel.
                a = ("x0", "x0")
            elif op in ("/", "//", "%") and _folds(f"({a[0]} {op} {b[0]})"):
                rule = None  # folded by CPython (it never folds a division by zero)
            if op == "**":
                k = _constant_int(b[0]) if int_exponent else None
                if k is not None and -16 <= k <= 16:
                    rule = "fpowk"  # a literal exponent: binary exponentiation, unrolled
                elif self.libm:
                    self.uses_libm = True  # pow (the host) or libdevice's powi (CUDA)
                else:
                    op = "*"
            if op in "+-*" or rule is None:
                return (f"({a[0]} {op} {b[0]})", f"({a[1]} {op} {b[1]})")
            return (f"({a[0]} {op} {b[0]})", f"R.{rule}({a[1]}, {b[1]})")
        if kind == 4:
            a, b = self.iexpr(d + 1), self.iexpr(d + 1)
            if _folds(f"({a[0]} / {b[0]})"):
                # CPython's compiler divides two int constants exactly (correctly rounded), not
                # as float64 / float64: the kernel sees that constant.
                return (f"({a[0]} / {b[0]})", f"({a[1]} / {b[1]})")
            return (f"({a[0]} / {b[0]})", f"R.fdiv({a[1]}, {b[1]})")
        if kind == 5:
            self.uses_libm = True
            fn = r.choice(MATH1)
            a = self.fexpr(d + 1)
            return (f"math.{fn}({a[0]})", f"R.m('{fn}', {a[1]})")
        if kind == 6:
            self.uses_libm = True
            fn = r.choice(MATH2)
            a, b = self.fexpr(d + 1), self.fexpr(d + 1)
            return (f"math.{fn}({a[0]}, {b[0]})", f"R.m('{fn}', {a[1]}, {b[1]})")
        if kind == 7:
            a = self.iexpr(d + 1)
            return (f"float({a[0]})", f"float({a[1]})")
        if kind == 8:
            fn = r.choice(["min", "max"])
            a, b = self.fexpr(d + 1), self.fexpr(d + 1)
            return (f"{fn}({a[0]}, {b[0]})", f"R.f{fn}({a[1]}, {b[1]})")
        if kind == 9:
            c = self.bexpr(d + 1)
            a, b = self.fexpr(d + 1), self.fexpr(d + 1)
            return (f"({a[0]} if {c[0]} else {b[0]})", f"({a[1]} if {c[1]} else {b[1]})")
        if kind == 10:
            z = self.cexpr(d + 1)
            what = r.choice([".real", ".imag", "abs" if self.libm else ".real"])
            if what == "abs":
                self.uses_libm = True  # hypot
                return (f"abs({z[0]})", f"R.cabs({z[1]})")
            return (f"({z[0]}){what}", f"({z[1]}){what}")
        a = self.fexpr(d + 1)
        op = r.choice(["-", "abs"])
        if op == "-":
            return (f"(-{a[0]})", f"(-{a[1]})")
        return (f"abs({a[0]})", f"abs({a[1]})")

    def bexpr(self, d=0):
        r = self.rng
        if d >= 3 or r.random() < 0.2:
            if r.random() < 0.8:
                v = r.choice(self.bvars)
                return (v, v)
            v = r.choice(["True", "False"])
            return (v, v)
        kind = r.randrange(8)
        op = r.choice(["<", "<=", ">", ">=", "==", "!="])
        if kind <= 2:
            a, b = self.iexpr(d + 1), self.iexpr(d + 1)
            return (f"({a[0]} {op} {b[0]})", f"({a[1]} {op} {b[1]})")
        if kind == 3:
            a, b = self.fexpr(d + 1), self.fexpr(d + 1)
            return (f"({a[0]} {op} {b[0]})", f"({a[1]} {op} {b[1]})")
        if kind == 4:
            a, b = self.iexpr(d + 1), self.fexpr(d + 1)
            if r.random() < 0.5:
                return (f"({a[0]} {op} {b[0]})", f"R.cmp_if('{op}', {a[1]}, {b[1]})")
            return (f"({b[0]} {op} {a[0]})", f"R.cmp_fi('{op}', {b[1]}, {a[1]})")
        if kind == 5:
            a, b = self.bexpr(d + 1), self.bexpr(d + 1)
            op = r.choice(["and", "or"])
            return (f"({a[0]} {op} {b[0]})", f"({a[1]} {op} {b[1]})")
        if kind == 6:
            a = self.bexpr(d + 1)
            return (f"(not {a[0]})", f"(not {a[1]})")
        fn = r.choice(["isnan", "isinf", "isfinite"])
        a = self.fexpr(d + 1)
        return (f"math.{fn}({a[0]})", f"math.{fn}({a[1]})")

    def cexpr(self, d=0):
        r = self.rng
        if d >= 2 or r.random() < 0.3:
            if r.random() < 0.6:
                v = r.choice(self.cvars)
                return (v, v)
            v = r.choice(["1j", "(0.5+2j)", "(-1-1j)", "0j", "(3+0j)"])
            return (v, v)
        kind = r.randrange(6)
        if kind == 3 and not self.libm:
            kind = 4
        if kind <= 1:
            op = r.choice(["+", "-", "*"])
            a = self.cexpr(d + 1)
            b = self.cexpr(d + 1) if r.random() < 0.7 else self.fexpr(d + 1)
            if op == "*":
                return (f"({a[0]} * {b[0]})", f"R.cmul({a[1]}, {b[1]})")
            return (f"({a[0]} {op} {b[0]})", f"({a[1]} {op} {b[1]})")
        if kind == 2:
            a, b = self.fexpr(d + 1), self.fexpr(d + 1)
            return (f"complex({a[0]}, {b[0]})", f"complex({a[1]}, {b[1]})")
        if kind == 3:
            self.uses_libm = True
            fn = r.choice(CMATH1)
            a = self.cexpr(d + 1)
            return (f"cmath.{fn}({a[0]})", f"R.c('{fn}', {a[1]})")
        if kind == 4:
            a = self.cexpr(d + 1)
            return (f"({a[0]}).conjugate()", f"({a[1]}).conjugate()")
        a = self.cexpr(d + 1)
        return (f"(-{a[0]})", f"(-{a[1]})")

    # ---- statements: lists of (indent, kernel line, reference line) ----

    def assign(self):
        r = self.rng
        t = r.choice("iiiiffffbc")
        if t == "i":
            v = r.choice(self.ivars)
            if r.random() < 0.3:
                op = r.choice(["+", "-", "*", "//", "%", "<<", ">>", "&", "|", "^"])
                e = self.iexpr(1)
                rule = {"+": "iadd", "-": "isub", "*": "imul", "//": "ifloordiv", "%": "imod",
                        "<<": "ishl", ">>": "ishr"}.get(op)
                ref = f"{v} = R.{rule}({v}, {e[1]})" if rule else f"{v} = {v} {op} ({e[1]})"
                return [(f"{v} {op}= {e[0]}", ref)]
            e = self.iexpr()
        elif t == "f":
            v = r.choice(self.fvars)
            if r.random() < 0.3:
                op = r.choice(["+", "-", "*", "/"])
                e = self.fexpr(1)
                if op == "/":
                    return [(f"{v} /= {e[0]}", f"{v} = R.fdiv({v}, {e[1]})")]
                return [(f"{v} {op}= {e[0]}", f"{v} = {v} {op} ({e[1]})")]
            e = self.fexpr()
        elif t == "b":
            v = r.choice(self.bvars)
            e = self.bexpr()
        else:
            v = r.choice(self.cvars)
            e = self.cexpr()
        return [(f"{v} = {e[0]}", f"{v} = {e[1]}")]

    def block(self, depth, n):
        out = []
        for _ in range(n):
            out.extend(self.stmt(depth))
        return out or [("pass", "pass")]

    def stmt(self, depth):
        r = self.rng
        x = r.random()
        if depth >= 2 or x < 0.45:
            return self.assign()
        if x < 0.6:
            c = self.bexpr(1)
            body = self.block(depth + 1, r.randint(1, 3))
            lines = [(f"if {c[0]}:", f"if {c[1]}:")] + [("    " + k, "    " + rr) for k, rr in body]
            if r.random() < 0.5:
                other = self.block(depth + 1, r.randint(1, 2))
                lines.append(("else:", "else:"))
                lines += [("    " + k, "    " + rr) for k, rr in other]
            return lines
        if x < 0.72:
            self.counter += 1
            j = f"j{self.counter}"
            rng_args = r.choice(["4", "0", "1", "7", "2, 9, 3", "5, -2, -2", "-3, 3"])
            self.loop_vars.append(j)
            self.depth_loops += 1
            body = self.block(depth + 1, r.randint(1, 3))
            body += self.loop_exit()
            self.depth_loops -= 1
            self.loop_vars.remove(j)
            return [(f"for {j} in range({rng_args}):", f"for {j} in range({rng_args}):")] + [
                ("    " + k, "    " + rr) for k, rr in body]
        if x < 0.8:
            self.counter += 1
            w = f"w{self.counter}"
            bound = r.randint(0, 6)
            c = self.bexpr(2)
            self.loop_vars.append(w)
            self.depth_loops += 1
            body = [(f"{w} += 1", f"{w} += 1")] + self.block(depth + 1, r.randint(1, 2))
            body += self.loop_exit()
            self.depth_loops -= 1
            self.loop_vars.remove(w)
            return [(f"{w} = 0", f"{w} = 0"),
                    (f"while {w} < {bound} and {c[0]}:", f"while {w} < {bound} and {c[1]}:")] + [
                ("    " + k, "    " + rr) for k, rr in body]
        if x < 0.88:
            c = self.bexpr(1)
            return [(f"if {c[0]}:", f"if {c[1]}:"), ("    @RETURN", "    @RETURN")]
        # tuple packing, swapping and unpacking
        a, b = r.sample(self.ivars, 2)
        if r.random() < 0.5:
            return [(f"{a}, {b} = {b}, {a}", f"{a}, {b} = {b}, {a}")]
        e1, e2 = self.iexpr(1), self.fexpr(1)
        f = r.choice(self.fvars)
        return [(f"t = ({e1[0]}, {e2[0]})", f"t = ({e1[1]}, {e2[1]})"),
                (f"{a}, {f} = t", f"{a}, {f} = t")]

    def loop_exit(self):
        r = self.rng
        if r.random() < 0.4:
            c = self.bexpr(2)
            word = r.choice(["break", "continue"])
            return [(f"if {c[0]}:", f"if {c[1]}:"), (f"    {word}", f"    {word}")]
        return []


RESULT = "(a, y, p, w)"


def generate(seed, libm=True):
    """The program of `seed`: a device function or a kernel body, and its inputs. With
    libm=False the program calls no math library function (math, cmath, pow, hypot): for
    backends whose math library is not the C library CPython calls (libdevice on CUDA)."""
    g = _Gen(seed, libm)
    r = g.rng
    mode = "device" if r.random() < 0.6 else "kernel"
    inits = []
    full = (g.ivars, g.fvars, g.bvars, g.cvars)
    g.ivars, g.fvars, g.bvars, g.cvars = list(INT_ARGS), list(FLOAT_ARGS), ["b0"], ["c0"]
    for v in ("a", "b"):
        e = g.iexpr(1)
        inits.append((f"{v} = {e[0]}", f"{v} = {e[1]}"))
    for v in ("y", "z"):
        e = g.fexpr(1)
        inits.append((f"{v} = {e[0]}", f"{v} = {e[1]}"))
    e = g.bexpr(1)
    inits.append((f"p = {e[0]}", f"p = {e[1]}"))
    e = g.cexpr(1)
    inits.append((f"w = {e[0]}", f"w = {e[1]}"))
    g.ivars, g.fvars, g.bvars, g.cvars = full
    body = inits + g.block(0, r.randint(2, 7))

    params = "i0, i1, i2, x0, x1, b0, c0"
    ref_lines = [f"def f({params}):"]
    for _, rr in body:
        ref_lines.append("    " + rr.replace("@RETURN", f"return {RESULT}"))
    ref_lines.append(f"    return {RESULT}")

    store = "oi[0] = a; of[0] = y; ob[0] = p; oc[0] = w"
    k_lines = ["import math", "import cmath", "from ptxjit import cuda", ""]
    if mode == "device":
        k_lines += ["@cuda.jit(device=True)", f"def f({params}):"]
        for k, _ in body:
            k_lines.append("    " + k.replace("@RETURN", f"return {RESULT}"))
        k_lines.append(f"    return {RESULT}")
        k_lines += ["", "", "@cuda.jit", "def kern(ia, fa, ba, ca, oi, of, ob, oc):",
                    "    a, y, p, w = f(ia[0], ia[1], ia[2], fa[0], fa[1], ba[0], ca[0])",
                    f"    {store}"]
    else:
        k_lines += ["@cuda.jit", "def kern(ia, fa, ba, ca, oi, of, ob, oc):",
                    "    i0 = ia[0]; i1 = ia[1]; i2 = ia[2]; x0 = fa[0]; x1 = fa[1]",
                    "    b0 = ba[0]; c0 = ca[0]"]
        for k, _ in body:
            if "@RETURN" in k:
                ind = k[: len(k) - len(k.lstrip())]
                k_lines.append("    " + ind + store)
                k_lines.append("    " + ind + "return")
            else:
                k_lines.append("    " + k)
        k_lines.append(f"    {store}")

    ints = [r.choice(INT_INPUTS) if r.random() < 0.8 else r.randint(-10**6, 10**6)
            for _ in range(3)]
    floats = [r.choice(FLOAT_INPUTS) if r.random() < 0.7 else round(r.uniform(-50, 50), 2)
              for _ in range(2)]
    bools = [r.random() < 0.5]
    complexes = [complex(r.choice((0.0, 1.0, -2.5, 0.5, 3.0)), r.choice((0.0, 1.0, -1.0, 2.0)))]
    return Program(seed, mode, "\n".join(k_lines) + "\n", "\n".join(ref_lines) + "\n", ints,
                   floats, bools, complexes, g.uses_libm)


FAMILIES = ("classic", "typed", "mixed")


def program(seed, libm=True, family="mixed"):
    """The program of `seed` in a family: "classic" (generate: Python's int, float, bool and
    complex), "typed" (typed.generate_typed: NumPy's scalar types, NEP 50 literals, float32,
    fastmath), or "mixed" (odd seeds typed, even seeds classic)."""
    if family == "typed" or (family == "mixed" and seed % 2):
        from .typed import generate_typed

        return generate_typed(seed, libm)
    return generate(seed, libm)
