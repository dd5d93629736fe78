"""Pickling of ptxjit's compiled objects: kernels and device functions (``cuda.jit``),
configured launches (``kernel[grid, block]``), ufuncs (``vectorize``/``guvectorize``) and
``cuda.reduce`` objects.

A compiled object pickles as what made it, never as code: its Python function and its options
(signatures, ``device``, ``fastmath``, ...). Unpickling makes the object again in the receiving
process, which compiles on first use there (or loads the kernel from the disk cache with
``cache=True``). The function itself pickles by reference (module and qualified name) when the
decorated object is reachable by that name, as for any module-level ``@cuda.jit``; otherwise
(a function defined inside another, a lambda) by value: its code object (``marshal``, so the
receiving interpreter must be the same Python version), the globals it names, its defaults and
its closure. Globals that are modules travel as their names; functions that are not reachable
by name travel by value in turn.
"""

import builtins as _builtins
import importlib as _importlib
import marshal as _marshal
import pickle as _pickle
import sys as _sys
import types as _pytypes


def _lookup(module, qualname):
    obj = _importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def global_ref(obj):
    """``(module, qualname)`` when importing ``module`` and following ``qualname`` gives ``obj``
    itself (what pickling by reference needs), else None."""
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<locals>" in qualname:
        return None
    if module not in _sys.modules:
        return None
    try:
        found = _sys.modules[module]
        for part in qualname.split("."):
            found = getattr(found, part)
    except AttributeError:
        return None
    return (module, qualname) if found is obj else None


class _ModuleRef:
    """A module among a function's globals: pickles as its name, unpickles by importing it."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __reduce__(self):
        return (_importlib.import_module, (self.name,))


class _EmptyCell:
    """An empty closure cell (a variable not yet bound when the function was pickled)."""

    def __reduce__(self):
        return (_EmptyCell, ())


def _names_of(code):
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, _pytypes.CodeType):
            names |= _names_of(const)
    return names


def _wrap(value, selves):
    """``value`` as it travels: modules by name, functions unreachable by name by value."""
    if isinstance(value, _pytypes.ModuleType):
        return _ModuleRef(value.__name__)
    if isinstance(value, _pytypes.FunctionType) and global_ref(value) is None:
        return FunctionValue(value, selves)
    return value


class FunctionValue:
    """A Python function pickled by value (see the module's docstring). ``selves`` are objects
    standing for the function itself (its kernel): globals and closure cells holding one of them
    are left out and named in ``self_names``/``self_cells`` so that the receiver binds them to
    the object it rebuilds (pickling them would recurse)."""

    __slots__ = ("func", "selves")

    def __init__(self, func, selves=()):
        self.func = func
        self.selves = tuple(selves) + (func,)

    def _is_self(self, value):
        return any(value is s for s in self.selves)

    def parts(self):
        f = self.func
        g = f.__globals__
        globs, self_names = {}, []
        for name in sorted(_names_of(f.__code__)):
            if name not in g:
                continue  # a builtin, or an attribute name
            value = g[name]
            if self._is_self(value):
                self_names.append(name)
            else:
                globs[name] = _wrap(value, self.selves)
        cells, self_cells = [], []
        for k, cell in enumerate(f.__closure__ or ()):
            try:
                value = cell.cell_contents
            except ValueError:
                cells.append(_EmptyCell())
                continue
            if self._is_self(value):
                self_cells.append(k)
                cells.append(_EmptyCell())
            else:
                cells.append(_wrap(value, self.selves))
        defaults = tuple(_wrap(v, self.selves) for v in f.__defaults__ or ()) or None
        kwdefaults = ({k: _wrap(v, self.selves) for k, v in f.__kwdefaults__.items()}
                      if f.__kwdefaults__ else None)
        state = (_marshal.dumps(f.__code__), f.__module__, f.__name__, f.__qualname__, globs,
                 defaults, kwdefaults, tuple(cells) if f.__closure__ is not None else None,
                 f.__doc__)
        return state, tuple(self_names), tuple(self_cells)

    def __reduce__(self):
        state, self_names, self_cells = self.parts()
        return (_rebuild_function, (state, self_names, self_cells))


def _rebuild_function(state, self_names=(), self_cells=()):
    code, module, name, qualname, globs, defaults, kwdefaults, cells, doc = state
    g = {"__builtins__": _builtins, "__name__": module}
    g.update(globs)
    closure = None
    if cells is not None:
        closure = tuple(_pytypes.CellType() if isinstance(c, _EmptyCell) else _pytypes.CellType(c)
                        for c in cells)
    f = _pytypes.FunctionType(_marshal.loads(code), g, name, defaults, closure)
    f.__qualname__ = qualname
    f.__module__ = module
    f.__kwdefaults__ = kwdefaults
    f.__doc__ = doc
    for n in self_names:  # a function calling itself by its global name
        g[n] = f
    for k in self_cells:
        closure[k].cell_contents = f
    return f


def bind_self(func, obj, self_names, self_cells):
    """Points the names and cells that stood for the pickled object at ``obj``, the object
    rebuilt around ``func`` (a recursive device function calls its kernel object)."""
    for n in self_names:
        func.__globals__[n] = obj
    for k in self_cells:
        func.__closure__[k].cell_contents = obj


def function_parts(func, obj):
    """What pickles ``func``, the function of the compiled object ``obj``: ``(func or its
    FunctionValue, self_names, self_cells)``."""
    if global_ref(func) is not None:
        return func, (), ()
    value = FunctionValue(func, (obj,))
    _state, self_names, self_cells = value.parts()
    return value, self_names, self_cells


# ---- kernels and device functions -------------------------------------------------------------

_rebuild_dispatcher = None  # _loader.rebuild_dispatcher, given by install()


def reduce_dispatcher(disp):
    """``Dispatcher.__reduce__``: by reference when reachable by name, else its function and
    options (rebuilt by ``_loader.rebuild_dispatcher``)."""
    ref = global_ref(disp)
    if ref is not None:
        return (_lookup, ref)
    func = disp.py_func
    fn, self_names, self_cells = function_parts(func, disp)
    options = dict(disp.__dict__.get("_ptxjit_options", {}))
    sigs = list(disp.__dict__.get("_ptxjit_sigs", ()))
    extensions = list(getattr(disp, "extensions", ()))
    return (_rebuild_dispatcher, (fn, self_names, self_cells, sigs, options, extensions))


def reduce_launch_config(cfg):
    """``kernel[grid, block, stream, sharedmem]`` pickles as its kernel and configuration."""
    if cfg.pre_launch_callbacks:
        raise _pickle.PicklingError(
            "Cannot pickle configured launches with pre-launch callbacks")
    stream = cfg.stream
    if stream not in (0, None):
        raise _pickle.PicklingError(
            "Cannot pickle a configured launch on a stream: streams belong to one process; "
            "configure the launch again with a stream of the receiving process")
    return (_rebuild_launch_config,
            (cfg.dispatcher, tuple(cfg.griddim), tuple(cfg.blockdim), cfg.sharedmem))


def _rebuild_launch_config(disp, griddim, blockdim, sharedmem):
    return disp[griddim, blockdim, 0, sharedmem]


def install(core, rebuild_dispatcher):
    """Adds ``__reduce__`` to the extension's kernel and launch-configuration types; kernels
    unpickle through ``rebuild_dispatcher`` (passed in, so that this module imports nothing of
    the loader's; ufunc.py installs the ufuncs' own)."""
    global _rebuild_dispatcher
    _rebuild_dispatcher = rebuild_dispatcher
    core.Dispatcher.__reduce__ = reduce_dispatcher
    core.LaunchConfig.__reduce__ = reduce_launch_config
