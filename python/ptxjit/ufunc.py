"""``@vectorize``, ``@guvectorize`` and ``cuda.reduce``: NumPy-style ufuncs compiled by ptxjit.

The decorated function is compiled as a device function (``cuda.jit(device=True)``) and called
from a generated loop kernel; calls, broadcasting, type resolution, output allocation and the
launch happen in C++ (``ptxjit._core.Ufunc``). See docs/ufuncs.md.
"""

import types as _pytypes
import warnings as _warnings

from . import _serialize
from . import types as _types
from ._options import fastmath as _fastmath
from ._loader import lib as _lib
from ._loader import make_dispatcher as _make_dispatcher

_TARGETS = ("cuda", "cpu", "parallel")
# Numba's target options for the host targets ('cpu', 'parallel') that ptxjit honours: every
# ufunc is compiled in nopython mode (so nopython must be true and forceobj false), its loops
# never need the GIL (nogil: NumPy-array calls release it while the loop runs) and gufunc inputs
# are passed in place (writable_args: writes reach the caller's array unless it was cast).
_HOST_OPTIONS = {"nopython", "forceobj", "nogil"}


def _signature_texts(sigs):
    if sigs is None:
        return []
    if isinstance(sigs, (str, _types.Type, _types.Signature)):
        sigs = [sigs]
    elif isinstance(sigs, tuple) and sigs and all(isinstance(s, _types.Type) for s in sigs):
        sigs = [sigs]  # one argument tuple
    return [_types.signature_text(s) for s in sigs]


def _check_options(kind, target, kws):
    """Numba's target options (``kws``), with its errors and warnings: numba-cuda's for target
    'cuda', Numba's CPU ones for 'cpu' and 'parallel'."""
    if target not in _TARGETS:
        raise ValueError(f"unsupported {kind} target {target!r}; ptxjit supports "
                         f"{', '.join(repr(t) for t in _TARGETS)}")
    if target == "cuda":
        if kind == "vectorize":  # numba-cuda's DeviceVectorize
            for opt in kws:
                if opt != "nopython":
                    raise KeyError("Unrecognized options. cuda vectorize target does not "
                                   f"support option: '{opt}'")
                # Any value, as numba-cuda: its CUDA ufuncs are always nopython code.
                _warnings.warn("nopython kwarg for cuda target is redundant", RuntimeWarning,
                               stacklevel=3)
            return
        # numba-cuda's DeviceGUFuncVectorize
        kws = dict(kws)
        if kws.pop("writable_args", ()):
            raise TypeError("writable_args are not supported")
        if not kws.pop("nopython", True):
            raise TypeError("nopython flag must be True")
        if kws:
            raise TypeError("The following target options are not supported: "
                            + ", ".join(repr(k) for k in kws))
        return
    known = _HOST_OPTIONS | ({"writable_args"} if kind == "guvectorize" else set())
    unknown = set(kws) - known
    if unknown:  # Numba's CPU target options
        raise KeyError(f"Unrecognized options: {unknown}. Known options are "
                       f"{', '.join(sorted(known))}")
    if not kws.get("nopython", True):
        raise TypeError("nopython flag must be True")
    if kws.get("forceobj", False):
        raise TypeError("forceobj=True (object mode) is not supported: ptxjit compiles every "
                        "ufunc in nopython mode")
    writable = kws.get("writable_args", ())
    if not isinstance(writable, (tuple, list)) or not all(
            isinstance(a, (int, str)) for a in writable):
        raise TypeError(f"writable_args must be a tuple of argument indices or names, not "
                        f"{writable!r}")


def _identity_value(identity):
    # Numba's "reorderable" means: no identity, but reductions may reorder.
    if identity is None or identity == "reorderable":
        return None
    return identity


def _reduce_ufunc(u):
    """A ufunc pickles as its function and the arguments of the decorator that made it (by
    reference when reachable by its module and name); see _serialize.py."""
    import pickle

    ref = _serialize.global_ref(u)
    if ref is not None:
        return (_serialize._lookup, ref)
    made = u.__dict__.get("_ptxjit_made")
    if made is None:
        raise pickle.PicklingError(f"cannot pickle ufunc {u.__name__!r}: it was not made by "
                                   f"ptxjit's vectorize or guvectorize")
    fn, self_names, self_cells = _serialize.function_parts(u.py_func, u)
    return (_rebuild_ufunc, (fn, self_names, self_cells, made))


def _rebuild_ufunc(func, self_names, self_cells, made):
    u = _make_ufunc(func, *made)
    _serialize.bind_self(func, u, self_names, self_cells)
    return u


_reduce_installed = False


def _make_ufunc(func, sigs, target, identity, layout, fastmath, cache=False):
    global _reduce_installed
    if not _reduce_installed:
        _lib().Ufunc.__reduce__ = _reduce_ufunc
        _reduce_installed = True
    if not isinstance(func, _pytypes.FunctionType):
        raise TypeError(f"ufuncs are made from Python functions, not {type(func).__name__}")
    # cache=True: the device function's loop kernels go through the disk cache, as kernels do.
    device_fn = _make_dispatcher(func, None, {"device": True, "fastmath": fastmath,
                                              "cache": cache})
    nin = func.__code__.co_argcount
    u = _lib().Ufunc(device_fn, func.__name__, sigs, target, layout,
                     _identity_value(identity), nin)
    for attr in ("__name__", "__qualname__", "__module__", "__doc__"):
        try:
            setattr(u, attr, getattr(func, attr))
        except AttributeError:
            pass
    u.__wrapped__ = func
    u.py_func = func
    # What pickling remakes it from (_serialize.py).
    u._ptxjit_made = (list(sigs), target, identity, layout, fastmath, cache)
    return u


def vectorize(ftylist_or_function=(), target="cpu", identity=None, fastmath=False, cache=False,
              **kws):
    """Makes a NumPy-style ufunc from a scalar function.

    ``@vectorize`` (lazy: a loop is compiled for each new combination of input types) or
    ``@vectorize(signatures, target='cuda'|'cpu'|'parallel', identity=None)`` with signatures
    as strings (``'float32(float32, float32)'``) or type objects. ``ptxjit.vectorize`` defaults
    to target 'cpu' as Numba's does; ``ptxjit.cuda.vectorize`` defaults to 'cuda'. With
    ``cache=True`` the loop kernels are kept in the disk cache, as ``cuda.jit(cache=True)``
    keeps kernels.
    """
    _check_options("vectorize", target, kws)
    if isinstance(ftylist_or_function, _pytypes.FunctionType):
        return _make_ufunc(ftylist_or_function, [], target, identity, None, _fastmath(fastmath),
                           bool(cache))
    sigs = _signature_texts(ftylist_or_function)

    def decorator(func):
        return _make_ufunc(func, sigs, target, identity, None, _fastmath(fastmath), bool(cache))

    return decorator


def guvectorize(ftylist, signature=None, target="cpu", identity=None, fastmath=False, cache=False,
                **kws):
    """Makes a generalized ufunc: ``@guvectorize(signatures, '(n),(n)->()', target=...)``.

    The function takes its inputs and outputs as arrays (or scalars, for inputs without core
    dimensions) and writes its results into the outputs. ``@guvectorize('(n)->(n)')`` with the
    layout alone compiles lazily for each new combination of input types. ``cache=True`` as for
    ``vectorize``.
    """
    _check_options("guvectorize", target, kws)
    if signature is None:
        if isinstance(ftylist, str) and "->" in ftylist:
            layout, sigs = ftylist, []
        else:
            raise TypeError("guvectorize() needs a layout such as '(n),(n)->()'")
    else:
        if not isinstance(signature, str):
            raise TypeError(f"the guvectorize layout must be a string such as '(n)->()', not "
                            f"{type(signature).__name__}")
        layout, sigs = signature, _signature_texts(ftylist)

    def decorator(func):
        return _make_ufunc(func, sigs, target, identity, layout, _fastmath(fastmath), bool(cache))

    return decorator


class Reduce:
    """``cuda.reduce(fn)``: a reduction kernel for an associative and commutative binary
    function, called as ``r(ary, size=None, res=None, init=0, stream=0)`` (Numba's API)."""

    def __init__(self, functor):
        if not isinstance(functor, _pytypes.FunctionType):
            raise TypeError(f"cuda.reduce needs a Python function, not "
                            f"{type(functor).__name__}")
        if functor.__code__.co_argcount != 2:
            raise TypeError(f"cuda.reduce needs a function of two arguments, "
                            f"'{functor.__name__}' takes {functor.__code__.co_argcount}")
        self._functor = functor
        self._ufunc = _make_ufunc(functor, [], "cuda", None, None, False)
        self.__name__ = functor.__name__
        self.__doc__ = functor.__doc__

    def __reduce__(self):
        """Pickles as its binary function (by value when needed; see _serialize.py)."""
        fn, self_names, self_cells = _serialize.function_parts(self._functor, self)
        return (_rebuild_reduce, (fn, self_names, self_cells))

    def __call__(self, arr, size=None, res=None, init=0, stream=0):
        import numpy as np

        dtype = np.dtype(arr.dtype)
        n = arr.size if size is None else min(int(size), arr.size)
        if n == 0:
            value = dtype.type(init)
        else:
            partial = self._ufunc.reduce(arr, axis=None, stream=stream,
                                         _size=-1 if size is None else int(size))
            value = dtype.type(self._functor(partial, dtype.type(init)))
        if res is not None:
            _lib()._store_first(res, value)
            return None
        return value


def _rebuild_reduce(func, self_names, self_cells):
    r = Reduce(func)
    _serialize.bind_self(func, r, self_names, self_cells)
    return r


def reduce(functor):
    """``cuda.reduce``: usable as ``@cuda.reduce`` or ``cuda.reduce(lambda a, b: a + b)``."""
    return Reduce(functor)


__all__ = ["vectorize", "guvectorize", "Reduce", "reduce"]
