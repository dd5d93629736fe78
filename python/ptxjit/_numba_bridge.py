"""Half-ported programs: numba-cuda objects met among a kernel's globals, mapped onto ptxjit's.

A program whose author changed ``from numba import cuda`` but kept, say,
``from numba.cuda.random import xoroshiro128p_uniform_float32`` hands ptxjit numba-cuda's
function. Two rules give such objects a meaning (bindings/Snapshot.cpp asks, with the GIL held,
only for objects of numba's modules that it does not otherwise know):

1. An object that a numba-cuda module exports under a public name which ptxjit's corresponding
   module also exports is ptxjit's object of that name (``numba.cuda.random.X`` is
   ``ptxjit.cuda.random.X``, ``numba.cuda.bf16.hadd`` is ``ptxjit.cuda.bf16.hadd``,
   ``numba.cuda.misc.special.literal_unroll`` is ``ptxjit.literal_unroll``). The match is by
   identity against the numba module's own attributes, so a re-exported or renamed object is
   found wherever the program took it from.
2. Any other numba dispatcher (``@numba.njit``, numba-cuda's ``@cuda.jit``) is compiled by
   ptxjit, as a device function, from its Python function (``py_func``): numba-cuda likewise
   compiles ``@njit`` functions that kernels call.

numba is never imported here: only modules the program has already imported are read.
"""

import importlib
import sys
import threading

# numba-cuda's modules and the ptxjit module that offers the same public names, in order of
# preference (an object exported by several numba modules takes the first match).
_MODULES = (
    ("numba.cuda.random", "ptxjit.cuda.random"),
    ("numba.cuda.bf16", "ptxjit.cuda.bf16"),
    ("numba.cuda._internal.cuda_bf16", "ptxjit.cuda.bf16"),
    ("numba.cuda.fp16", "ptxjit.cuda.fp16"),
    ("numba.cuda.libdevice", "ptxjit.libdevice"),
    ("numba.cuda.misc.special", "ptxjit"),
    ("numba.misc.special", "ptxjit"),
    ("numba.cuda", "ptxjit.cuda"),
    ("numba", "ptxjit"),
)

_lock = threading.Lock()
# numba module name -> (id of its __dict__, its length, {id(object): public name}); rebuilt
# when the module gains attributes (lazy submodules, late definitions).
_reverse = {}
# id(numba dispatcher) -> (the dispatcher, ptxjit's device function for its py_func). The
# dispatcher is held so that its id is never reused for another object.
_compiled = {}


def _names_by_identity(modname):
    mod = sys.modules.get(modname)
    if mod is None:
        return {}
    d = getattr(mod, "__dict__", {})
    key = (id(d), len(d))
    cached = _reverse.get(modname)
    if cached is not None and cached[0] == key:
        return cached[1]
    table = {}
    for name, value in list(d.items()):
        # Public names, and the CUDA-style intrinsics such as fp16's `__float2half_rn`;
        # not dunders or single-underscore privates.
        public = not name.startswith("_") or (name.startswith("__") and not name.endswith("__"))
        if public and not isinstance(value, (int, float, str, bool)):
            table.setdefault(id(value), name)
    _reverse[modname] = (key, table)
    return table


def _ptxjit_module(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _by_name(obj):
    for numba_mod, ptx_mod in _MODULES:
        name = _names_by_identity(numba_mod).get(id(obj))
        if name is None:
            continue
        target = _ptxjit_module(ptx_mod)
        if target is not None and hasattr(target, name):
            return getattr(target, name)
    return None


def _is_numba_dispatcher(obj):
    mod = getattr(type(obj), "__module__", "") or ""
    return (mod.startswith(("numba.", "numba_cuda.")) and callable(getattr(obj, "py_func", None))
            and type(obj).__name__.endswith("Dispatcher"))


def equivalent(obj):
    """ptxjit's object standing for numba-cuda's ``obj`` (rules 1 and 2 above), or None when
    ptxjit has none (the kernel then reports the global as unsupported, naming its type)."""
    with _lock:
        found = _by_name(obj)
        if found is not None:
            return found
        if not _is_numba_dispatcher(obj):
            return None
        entry = _compiled.get(id(obj))
        if entry is not None:
            return entry[1]
    from . import cuda  # the package is initialized by the time a kernel is compiled

    device_fn = cuda.jit(device=True)(obj.py_func)
    with _lock:
        entry = _compiled.setdefault(id(obj), (obj, device_fn))
    return entry[1]
