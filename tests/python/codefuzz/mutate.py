"""Mutations of code objects for fuzzing ptxjit's bytecode frontend (see __init__.py).

`mutate(code, rng)` returns a mutated copy of a code object and a description of what changed.
It understands the bytecode of the running interpreter (3.11, 3.12, 3.13: instruction units,
inline caches, EXTENDED_ARG prefixes, relative jumps) so that most mutations are near misses of
valid code rather than noise: an operand one past the end of a table, a jump into an inline
cache or past the end, an EXTENDED_ARG chain in front of any instruction, a constant of a type a
kernel cannot hold, a stack size too small. Needs only the standard library.
"""
import dis
import math
import sys
import types

EXTENDED_ARG = dis.opmap["EXTENDED_ARG"]
CACHE = dis.opmap.get("CACHE", 0)
NOP = dis.opmap["NOP"]
JREL = set(dis.hasjrel)
_BACKWARD = {dis.opmap[n] for n in ("JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT") if n in dis.opmap}
REAL_OPS = sorted(v for k, v in dis.opmap.items() if v < 256 and not k.startswith("INSTRUMENTED_"))

CO_VARARGS, CO_VARKEYWORDS, CO_GENERATOR, CO_COROUTINE = 0x04, 0x08, 0x20, 0x80
FLAG_BITS = (0x01, 0x02, CO_VARARGS, CO_VARKEYWORDS, 0x10, CO_GENERATOR, 0x40, CO_COROUTINE,
             0x100, 0x200)


def _caches(op):
    """How many inline cache units follow instruction `op` in co_code."""
    table = dis._inline_cache_entries
    if isinstance(table, dict):  # 3.13: by name
        return table.get(dis.opname[op], 0) if op < len(dis.opname) else 0
    return table[op] if op < len(table) else 0


def _max_caches(op):
    """The cache units CPython may skip after `op`, as it is or as its unspecialized form
    (CPython walks co_code both ways)."""
    return max(_caches(op), _caches(dis._deoptop(op)))


# Opcodes CPython itself cannot take in co_code: the instrumentation opcodes of 3.12+ and
# ENTER_EXECUTOR (3.13) index tables that a plain code object does not have.
FORBIDDEN = frozenset(op for op, name in enumerate(dis._all_opname)
                      if name.startswith("INSTRUMENTED_") or name == "ENTER_EXECUTOR")


def sanitized(co_code):
    """`co_code` made safe for CPython's own code constructor, which does not validate bytecode:
    CACHE units are appended where an instruction's caches would run past the end (reading
    co_code, or quickening it, would write past the buffer and corrupt the interpreter's heap),
    and FORBIDDEN opcodes become NOP. Every unit is taken as a possible instruction start.
    Without this the crashes would be CPython's, not the compiler's under test."""
    b = bytearray(co_code)
    for u in range(0, len(b), 2):
        if b[u] in FORBIDDEN:
            b[u] = NOP
    n = len(b) // 2
    need = max((u + 1 + _max_caches(b[2 * u]) for u in range(n)), default=0)
    return bytes(b) + bytes(2 * (need - n)) if need > n else bytes(b)


class Instr:
    """One instruction of co_code: its first unit (EXTENDED_ARG prefixes are instructions of
    their own here) and the number of cache units after it."""

    __slots__ = ("unit", "op", "arg", "ncache")

    def __init__(self, unit, op, arg, ncache):
        self.unit, self.op, self.arg, self.ncache = unit, op, arg, ncache


def instructions(co_code):
    """The instructions of `co_code` (an even-length bytes), caches skipped as CPython skips
    them: after each instruction the number of units its opcode caches."""
    out = []
    u = 0
    n = len(co_code) // 2
    while u < n:
        op, arg = co_code[2 * u], co_code[2 * u + 1]
        nc = _caches(op)
        out.append(Instr(u, op, arg, nc))
        u += 1 + nc
    return out


def _effective_arg(code, ins, k):
    """Instruction k's operand with its EXTENDED_ARG prefixes."""
    arg = ins[k].arg
    shift = 8
    j = k - 1
    while j >= 0 and ins[j].op == EXTENDED_ARG and ins[j].unit == ins[j + 1].unit - 1:
        arg |= ins[j].arg << shift
        shift += 8
        j -= 1
    return arg


def _set(code, unit, op=None, arg=None):
    b = bytearray(code)
    if op is not None:
        b[2 * unit] = op & 0xFF
    if arg is not None:
        b[2 * unit + 1] = arg & 0xFF
    return bytes(b)


def _jump_target_unit(ins, k, arg):
    """The unit a relative jump of instruction k with operand `arg` lands on (3.11+: relative
    to the unit after the instruction's caches; backward jumps subtract)."""
    after = ins[k].unit + 1 + ins[k].ncache
    return after - arg if ins[k].op in _BACKWARD else after + arg


def _arg_for_target(ins, k, target):
    after = ins[k].unit + 1 + ins[k].ncache
    return after - target if ins[k].op in _BACKWARD else target - after


def _with_arg(co_code, ins, k, value):
    """co_code with instruction k's operand set to `value` (any size: the low byte in the
    instruction, the rest in EXTENDED_ARG units written over the units before it, as many as
    the value needs; the instructions overwritten are lost)."""
    unit = ins[k].unit
    b = bytearray(co_code)
    b[2 * unit + 1] = value & 0xFF
    value >>= 8
    u = unit - 1
    while value and u >= 0:
        b[2 * u] = EXTENDED_ARG
        b[2 * u + 1] = value & 0xFF
        value >>= 8
        u -= 1
    return bytes(b)


INTERESTING_ARGS = (0, 1, 2, 3, 7, 8, 15, 16, 127, 128, 255)
INTERESTING_BIG = (256, 257, 65535, 65536, 2**24, 2**31 - 1, 2**31, 2**32 - 1)


class Skip(Exception):
    """The mutation does not apply to this code object (try another)."""


# ---- mutations of co_code ----

def m_byte(code, rng):
    cc = code.co_code
    if not cc:
        raise Skip
    i = rng.randrange(len(cc))
    v = rng.randrange(256)
    return dict(co_code=cc[:i] + bytes([v]) + cc[i + 1:]), f"byte {i} = {v}"


def m_opcode(code, rng):
    cc = code.co_code
    ins = instructions(cc)
    if not ins:
        raise Skip
    k = rng.randrange(len(ins))
    op = rng.choice(REAL_OPS) if rng.random() < 0.85 else rng.randrange(256)
    return (dict(co_code=_set(cc, ins[k].unit, op=op)),
            f"opcode at unit {ins[k].unit}: {_name(ins[k].op)} -> {_name(op)}")


def m_oparg(code, rng):
    cc = code.co_code
    ins = [i for i in instructions(cc) if i.op >= dis.HAVE_ARGUMENT or rng.random() < 0.1]
    if not ins:
        raise Skip
    x = rng.choice(ins)
    r = rng.random()
    if r < 0.5:
        v = rng.choice(INTERESTING_ARGS)
    elif r < 0.8:
        v = (x.arg + rng.choice((1, -1, 2, -2))) & 0xFF
    else:
        v = rng.randrange(256)
    return dict(co_code=_set(cc, x.unit, arg=v)), f"oparg of {_name(x.op)} at unit {x.unit} = {v}"


def m_big_oparg(code, rng):
    """An operand made large with EXTENDED_ARG prefixes written over the preceding units (a
    table index or jump far out of range, or an oparg > 32 bits)."""
    cc = code.co_code
    ins = instructions(cc)
    cands = [k for k, i in enumerate(ins) if i.op >= dis.HAVE_ARGUMENT and i.unit > 0]
    if not cands:
        raise Skip
    k = rng.choice(cands)
    r = rng.random()
    if r < 0.6:
        v = rng.choice(INTERESTING_BIG)
    elif r < 0.8:
        v = _effective_arg(cc, ins, k) + rng.choice((256, 1 << 16, 1 << 24))
    else:
        v = rng.randrange(1 << rng.choice((16, 32, 40)))
    return (dict(co_code=_with_arg(cc, ins, k, v)),
            f"operand of {_name(ins[k].op)} at unit {ins[k].unit} = {v} (EXTENDED_ARG)")


def m_extended_chain(code, rng):
    """EXTENDED_ARG units inserted in front of an instruction, or a dangling one: the code
    grows, and jumps across the insertion are fixed up or not (both are interesting)."""
    cc = code.co_code
    ins = instructions(cc)
    if not ins:
        raise Skip
    k = rng.randrange(len(ins) + 1)
    unit = ins[k].unit if k < len(ins) else len(cc) // 2
    n = rng.choice((1, 1, 2, 3, 4, 5, 8))
    chain = b"".join(bytes([EXTENDED_ARG, rng.choice((0, 0, 1, 255))]) for _ in range(n))
    new = cc[:2 * unit] + chain + cc[2 * unit:]
    fix = rng.random() < 0.6
    if fix:
        new = _fix_jumps(new, unit, n)
    return dict(co_code=new), (f"{n} EXTENDED_ARG before unit {unit}"
                               f"{' (jumps fixed)' if fix else ''}")


def _fix_jumps(cc, at, n):
    """After inserting n units at unit `at`, relative jumps that cross it are lengthened
    (their operands only: when one no longer fits in a byte it is left wrong)."""
    ins = instructions(cc)
    b = bytearray(cc)
    for k, x in enumerate(ins):
        if x.op not in JREL or (at <= x.unit < at + n):
            continue
        arg = _effective_arg(cc, ins, k)
        orig_unit = x.unit if x.unit < at else x.unit - n
        after = orig_unit + 1 + x.ncache
        target = after - arg if x.op in _BACKWARD else after + arg
        crosses = (orig_unit < at <= target) if x.op not in _BACKWARD else (target < at <= orig_unit)
        if crosses:
            b[2 * x.unit + 1] = (arg + n) & 0xFF
    return bytes(b)


def m_jump(code, rng):
    cc = code.co_code
    ins = instructions(cc)
    jumps = [k for k, i in enumerate(ins) if i.op in JREL]
    if not jumps:
        raise Skip
    k = rng.choice(jumps)
    n = len(cc) // 2
    r = rng.random()
    if r < 0.35:
        target = rng.choice(ins).unit  # another instruction
        what = "an instruction"
    elif r < 0.5:
        caches = [i.unit + 1 for i in ins if i.ncache]
        if not caches:
            raise Skip
        target = rng.choice(caches)
        what = "an inline cache"
    elif r < 0.65:
        target = n + rng.choice((0, 1, 2, 100))
        what = "past the end"
    elif r < 0.75:
        target = ins[k].unit
        what = "itself"
    elif r < 0.85:
        target = _jump_target_unit(ins, k, _effective_arg(cc, ins, k)) + rng.choice((-1, 1))
        what = "next to its target"
    else:
        target = 0
        what = "the start"
    v = _arg_for_target(ins, k, target)
    if v < 0:  # the other direction: flip a forward jump into a backward one when possible
        back = sorted(_BACKWARD)
        if ins[k].op in _BACKWARD or not back:
            v = -v
        else:
            cc = _set(cc, ins[k].unit, op=back[0])
            ins = instructions(cc)
            v = _arg_for_target(ins, k, target)
            what += " (made backward)"
            if v < 0:
                v = -v
    return (dict(co_code=_with_arg(cc, ins, k, v)),
            f"jump {_name(ins[k].op)} at unit {ins[k].unit} -> {what} (unit {target})")


def m_swap(code, rng):
    cc = code.co_code
    ins = instructions(cc)
    if len(ins) < 2:
        raise Skip
    a, b = rng.sample(range(len(ins)), 2)
    x, y = ins[a], ins[b]
    ba = cc[2 * x.unit:2 * (x.unit + 1 + x.ncache)]
    bb = cc[2 * y.unit:2 * (y.unit + 1 + y.ncache)]
    if len(ba) != len(bb):
        # Keep the length: swap only the instruction units, not their caches.
        ba, bb = cc[2 * x.unit:2 * x.unit + 2], cc[2 * y.unit:2 * y.unit + 2]
    out = bytearray(cc)
    out[2 * x.unit:2 * x.unit + len(ba)] = bb
    out[2 * y.unit:2 * y.unit + len(bb)] = ba
    return dict(co_code=bytes(out)), f"swapped units {x.unit} and {y.unit}"


def m_delete(code, rng):
    """An instruction replaced by NOPs (its caches too), or cut out of the code."""
    cc = code.co_code
    ins = instructions(cc)
    if not ins:
        raise Skip
    x = rng.choice(ins)
    lo, hi = 2 * x.unit, 2 * (x.unit + 1 + x.ncache)
    if rng.random() < 0.6:
        return (dict(co_code=cc[:lo] + bytes([NOP, 0]) * (x.ncache + 1) + cc[hi:]),
                f"{_name(x.op)} at unit {x.unit} -> NOP")
    return dict(co_code=cc[:lo] + cc[hi:]), f"{_name(x.op)} at unit {x.unit} removed"


def m_duplicate(code, rng):
    """An instruction (with its caches) inserted again after itself or copied over another."""
    cc = code.co_code
    ins = instructions(cc)
    if not ins:
        raise Skip
    x = rng.choice(ins)
    piece = cc[2 * x.unit:2 * (x.unit + 1 + x.ncache)]
    if rng.random() < 0.5:
        at = 2 * (x.unit + 1 + x.ncache)
        return dict(co_code=cc[:at] + piece + cc[at:]), f"{_name(x.op)} at unit {x.unit} doubled"
    y = rng.choice(ins)
    out = bytearray(cc)
    out[2 * y.unit:2 * y.unit + 2] = piece[:2]
    return (dict(co_code=bytes(out)),
            f"{_name(x.op)} copied over {_name(y.op)} at unit {y.unit}")


def m_truncate(code, rng):
    cc = code.co_code
    ins = instructions(cc)
    if len(ins) < 2:
        raise Skip
    x = rng.choice(ins[1:])
    return dict(co_code=cc[:2 * x.unit]), f"cut at unit {x.unit}"


# ---- mutations of the tables ----

def _deep_tuple(n):
    t = (1,)
    for _ in range(n):
        t = (t,)
    return t


def _interesting_constants():
    return [None, True, False, 0, -1, 1, 2**31, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1,
            2**64 - 1, 2**64, 10**40, -(10**40), 0.0, -0.0, 1.5, math.inf, -math.inf,
            math.nan, 1e308, 5e-324, 1j, complex(math.inf, math.nan), "", "x", "\udcff", b"",
            b"bytes", (), (1, 2.5), ((1,), (2, (3,))), (1, "a", None), _deep_tuple(200),
            tuple(range(300)), frozenset({1}), Ellipsis, (lambda: 0).__code__, slice(1, 2),
            type(None), 3 + 4j]


def m_const(code, rng):
    consts = list(code.co_consts)
    r = rng.random()
    if r < 0.55 and consts:
        i = rng.randrange(len(consts))
        v = rng.choice(_interesting_constants())
        consts[i] = v
        what = f"co_consts[{i}] = {_short(v)}"
    elif r < 0.7 and consts:
        consts.pop()
        what = "last constant removed"
    elif r < 0.8:
        rng.shuffle(consts)
        what = "constants shuffled"
    elif r < 0.9:
        consts.append(rng.choice(_interesting_constants()))
        what = "a constant appended"
    else:
        consts = []
        what = "no constants"
    return dict(co_consts=tuple(consts)), what


NAME_POOL = ("math", "cmath", "cuda", "np", "numpy", "range", "len", "min", "max", "abs", "int",
             "float", "complex", "bool", "print", "round", "divmod", "pow", "isinstance",
             "undefined_name", "", "__builtins__", "__name__", "True", "None", "grid", "shape",
             "size", "threadIdx", "x", "real", "imag", "conjugate", "atomic", "add",
             "syncthreads", "shared", "array", "float32", "int32", "sqrt", "sin", "\udcff",
             "a" * 1000)


def m_names(code, rng):
    names = list(code.co_names)
    r = rng.random()
    if r < 0.6 and names:
        i = rng.randrange(len(names))
        names[i] = rng.choice(NAME_POOL + tuple(names))
        what = f"co_names[{i}] = {names[i][:20]!r}"
    elif r < 0.75 and names:
        names.pop()
        what = "last name removed"
    elif r < 0.9:
        rng.shuffle(names)
        what = "names shuffled"
    else:
        names = []
        what = "no names"
    return dict(co_names=tuple(names)), what


def m_varnames(code, rng):
    names = list(code.co_varnames)
    if not names:
        raise Skip
    r = rng.random()
    if r < 0.5:
        i = rng.randrange(len(names))
        names[i] = rng.choice(names + ["", "out", "x", "i", "\udcff"])
        what = f"co_varnames[{i}] = {names[i]!r}"
    else:
        rng.shuffle(names)
        what = "local names shuffled"
    return dict(co_varnames=tuple(names)), what


def m_stacksize(code, rng):
    v = rng.choice((0, 1, 2, max(code.co_stacksize - 1, 0), code.co_stacksize + 1, 1000,
                    10**6, 2**31 - 1))
    return dict(co_stacksize=v), f"co_stacksize = {v}"


def m_counts(code, rng):
    n = len(code.co_varnames)
    r = rng.random()
    if r < 0.4:
        v = rng.randrange(n + 1)
        return dict(co_argcount=v, co_posonlyargcount=min(code.co_posonlyargcount, v),
                    co_kwonlyargcount=min(code.co_kwonlyargcount, n - v)), f"co_argcount = {v}"
    if r < 0.7:
        v = rng.randrange(code.co_argcount + 1)
        return dict(co_posonlyargcount=v), f"co_posonlyargcount = {v}"
    v = rng.randrange(n - code.co_argcount + 1)
    return dict(co_kwonlyargcount=v), f"co_kwonlyargcount = {v}"


def m_flags(code, rng):
    bit = rng.choice(FLAG_BITS)
    return dict(co_flags=code.co_flags ^ bit), f"co_flags ^= {bit:#x}"


def m_exceptiontable(code, rng):
    t = code.co_exceptiontable
    r = rng.random()
    if r < 0.3 and t:
        i = rng.randrange(len(t))
        t = t[:i] + bytes([rng.randrange(256)]) + t[i + 1:]
        what = f"exception table byte {i} changed"
    elif r < 0.5 and t:
        t = t[:rng.randrange(len(t))]
        what = "exception table cut"
    else:
        n = len(code.co_code) // 2
        # One entry: start, length, target, depth/lasti, each a varint (the high bit of the
        # first byte marks the entry's start).
        vals = [rng.randrange(n + 2), rng.randrange(1, n + 2), rng.randrange(n + 4),
                rng.randrange(8)]
        what = f"exception table entry {vals}"
        t = b"".join(_varint_bytes(v, j == 0) for j, v in enumerate(vals))
    return dict(co_exceptiontable=t), what


def _varint_bytes(v, first):
    chunks = []
    while True:
        chunks.append(v & 63)
        v >>= 6
        if not v:
            break
    chunks.reverse()
    out = bytearray()
    for j, c in enumerate(chunks):
        b = c | (64 if j < len(chunks) - 1 else 0)
        if j == 0 and first:
            b |= 128
        out.append(b)
    return bytes(out)


def m_linetable(code, rng):
    t = code.co_linetable
    r = rng.random()
    if r < 0.4 and t:
        i = rng.randrange(len(t))
        t = t[:i] + bytes([rng.randrange(256)]) + t[i + 1:]
        what = f"line table byte {i} changed"
    elif r < 0.7 and t:
        t = t[:rng.randrange(len(t))]
        what = "line table cut"
    else:
        t = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 16)))
        what = "line table random"
    return dict(co_linetable=t), what


def m_meta(code, rng):
    r = rng.random()
    if r < 0.4:
        v = rng.choice((0, -5, 1, 10**9, 2**31 - 1))
        return dict(co_firstlineno=v), f"co_firstlineno = {v}"
    if r < 0.7:
        v = rng.choice(("", "<string>", "/nonexistent/x.py", "\udcff.py", "a" * 5000))
        return dict(co_filename=v), f"co_filename = {v[:20]!r}"
    v = rng.choice(("", "<lambda>", "<listcomp>", "<genexpr>", "\udcff", "k" * 300))
    return dict(co_name=v, co_qualname=v), f"co_name = {v[:20]!r}"


def m_freevars(code, rng):
    """Free or cell variables added or removed (the closure is made to match: see closure)."""
    r = rng.random()
    if r < 0.5:
        names = code.co_freevars + (rng.choice(("factor", "x", "k", "q")),)
        return dict(co_freevars=names), f"free variable {names[-1]!r} added"
    if r < 0.7 and code.co_freevars:
        return dict(co_freevars=code.co_freevars[:-1]), "last free variable removed"
    names = code.co_cellvars + (rng.choice(("x", "c", "q")),)
    return dict(co_cellvars=names), f"cell variable {names[-1]!r} added"


CODE_MUTATIONS = (m_byte, m_opcode, m_oparg, m_oparg, m_big_oparg, m_extended_chain, m_jump,
                  m_jump, m_swap, m_delete, m_duplicate, m_truncate)
TABLE_MUTATIONS = (m_const, m_const, m_names, m_varnames, m_stacksize, m_counts, m_flags,
                   m_exceptiontable, m_linetable, m_meta, m_freevars)


def mutate(code, rng, count=None):
    """A copy of `code` with 1 to 3 mutations (or `count`), and their descriptions. Raises Skip
    when no mutation applied (CPython's code constructor refused every attempt)."""
    done = []
    count = count or rng.choice((1, 1, 1, 2, 2, 3))
    for _ in range(count * 8):
        if len(done) == count:
            break
        fn = rng.choice(CODE_MUTATIONS) if rng.random() < 0.65 else rng.choice(TABLE_MUTATIONS)
        try:
            changes, what = fn(code, rng)
            if "co_code" in changes:
                changes["co_code"] = sanitized(changes["co_code"])
            code = code.replace(**changes)
        except Skip:
            continue
        except (ValueError, TypeError, OverflowError, SystemError):
            continue  # the code constructor's own checks refused it: not our input
        done.append(f"{fn.__name__[2:]}: {what}")
    if not done:
        raise Skip
    return code, done


def closure_for(code, original_closure, rng):
    """A closure with one cell per free variable of `code`: the original cells first, then
    cells of arbitrary values."""
    cells = list(original_closure or ())[:len(code.co_freevars)]
    while len(cells) < len(code.co_freevars):
        cells.append(types.CellType(rng.choice((1, 2.5, None, "s", (1, 2), 10**30))))
    return tuple(cells) if cells else None


def _name(op):
    return dis.opname[op] if op < len(dis.opname) and not dis.opname[op].startswith("<") \
        else f"<{op}>"


def _short(v):
    s = repr(v)
    return s if len(s) <= 40 else s[:37] + "..."


VERSION = f"{sys.version_info[0]}.{sys.version_info[1]}"
