"""Running one mutated code object through ptxjit and classifying what happened.

`run_seed(seed, phase, launch)` picks a corpus kernel (or one of its device functions) and a
mutation by the seed, builds a function from the mutated code object, compiles it for the
arguments the unmutated kernel takes and (with launch=True) launches it on the current backend. `phase(name)` is called when it
enters "compile" and "launch", so that the campaign can tell a compiler that hangs from a
kernel whose mutated loop never ends. The result is an `Outcome`:

- "ok": compiled and ran;
- "clean": a clean compile error: UnsupportedError or TypingError (UndefinedNameError), the
  answer to a malformed or unsupported code object; `detail` is its first line;
- "runtime": the launch raised an error a kernel may raise (IndexError from the bounds check,
  an exception raised in the kernel);
- "refused": CPython refused to make the function (a closure of the wrong size and the like):
  not ptxjit's input;
- "internal": an internal compiler error (a CompileError that is neither of the above);
- "error": any other exception out of ptxjit (SystemError, RuntimeError, UnicodeError, ...).

"internal" and "error" are findings; so are a crash or a hang in "compile" (scripts/codefuzz.py
sees those). A hang in "launch" is not: a mutated jump can make a loop that never ends.
"""
import random
import sys
import types
from dataclasses import dataclass

from ptxjit import cuda, errors
from ptxjit._dispatcher import _typeof  # the argument types a launch would compile for

from . import mutate
from .kernels import corpus

FINDINGS = ("internal", "error")
RUNTIME_ERRORS = (IndexError, ZeroDivisionError, ValueError, AssertionError, ArithmeticError)


@dataclass
class Outcome:
    status: str
    detail: str = ""
    case: str = ""
    target: str = ""
    mutations: tuple = ()


def _classify(e, launching):
    first = str(e).splitlines()[0] if str(e) else ""
    if isinstance(e, (errors.UnsupportedError, errors.TypingError)):
        return "clean", f"{type(e).__name__}: {first}"
    if isinstance(e, errors.CompileError):
        return "internal", f"{type(e).__name__}: {e}"
    if launching and isinstance(e, RUNTIME_ERRORS):
        return "runtime", f"{type(e).__name__}: {first}"
    return "error", f"{type(e).__name__}: {e}"


def build(seed):
    """The corpus case, the name of the mutated function, the kernel dispatcher built with the
    mutated code object, and the mutations (or raises mutate.Skip)."""
    rng = random.Random(seed)
    cases = corpus()
    case = cases[rng.randrange(len(cases))]
    target = "kernel"
    if case.devices and rng.random() < 0.4:
        target = rng.choice(sorted(case.devices))
    original = case.func if target == "kernel" else case.devices[target]
    code, what = mutate.mutate(original.__code__, rng)
    glb = dict(case.func.__globals__)
    for name, f in case.devices.items():
        fn = f
        if name == target:
            fn = _function(f, code, glb, rng)
        glb[name] = cuda.jit(device=True)(fn)
    kcode = code if target == "kernel" else case.func.__code__
    kfunc = _function(case.func, kcode, glb, rng)
    return case, target, kfunc, tuple(what)


def _function(original, code, glb, rng):
    closure = mutate.closure_for(code, original.__closure__, rng)
    return types.FunctionType(code, glb, original.__name__, original.__defaults__, closure)


def run_seed(seed, phase=lambda name: None, launch=True):
    try:
        case, target, kfunc, what = build(seed)
    except mutate.Skip:
        return Outcome("refused", "no mutation applies")
    except (ValueError, TypeError) as e:  # FunctionType's own checks (closure size, defaults)
        return Outcome("refused", f"{type(e).__name__}: {e}")
    out = Outcome("ok", case=case.name, target=target, mutations=what)
    args = case.args()
    launching = False
    try:
        phase("compile")
        kernel = cuda.jit(kfunc)
        kernel.compile(tuple(_typeof(a) for a in args))
        if not launch:
            return out
        phase("launch")
        launching = True
        kernel[case.griddim, case.blockdim](*args)
    except Exception as e:  # noqa: BLE001 - every exception is an outcome to classify
        out.status, out.detail = _classify(e, launching)
    return out


def main_check(seed):
    """Runs one seed in this process and prints its outcome (scripts/codefuzz.py --show)."""
    o = run_seed(seed, lambda name: print(f"-- {name}", file=sys.stderr, flush=True))
    return o
