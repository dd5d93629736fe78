"""``ptxjit.cuda``: Numba's ``numba.cuda`` API, compiled by ptxjit.

Replace ``from numba import cuda`` with ``from ptxjit import cuda``. Kernels, launches, device
arrays and streams are implemented in the C++ extension ``ptxjit._core``; this module only
normalizes arguments. The extension (and with it LLVM and the CUDA driver) is loaded on first
use, not at import.
"""

import contextlib as _contextlib
import operator as _operator
import os as _os
import re as _re
import types as _pytypes

from . import errors as _errors
from . import types as _types

from . import ufunc as _ufunc
from ._options import fastmath as _fastmath
from . import libdevice  # noqa: F401  (Numba's cuda.libdevice; `import ptxjit.cuda.libdevice`)
import sys as _sys

_sys.modules.setdefault(__name__ + ".libdevice", libdevice)
from . import devicearray  # noqa: E402  (numba-cuda's cuda.devicearray helpers)
from .devicearray import as_cuda_array, from_cuda_array_interface, from_dlpack, is_cuda_array  # noqa: E402,E501

from . import _driver  # noqa: E402  (numba-cuda's cudadrv.driver classes)

# numba-cuda's `cuda.cudadrv.devicearray` and `cuda.cudadrv.driver` paths.
cudadrv = _pytypes.ModuleType(__name__ + ".cudadrv",
                              "numba-cuda's cudadrv path: devicearray, driver")
cudadrv.devicearray = devicearray
cudadrv.driver = _driver
_sys.modules.setdefault(__name__ + ".cudadrv", cudadrv)
_sys.modules.setdefault(__name__ + ".cudadrv.devicearray", devicearray)
_sys.modules.setdefault(__name__ + ".cudadrv.driver", _driver)
_sys.modules.setdefault(__name__ + ".devicearray", devicearray)
from ._loader import lib as _lib
from ._loader import make_dispatcher as _make_dispatcher

types = _types  # numba.cuda.types: `cuda.types.float16(x)`, also in kernels


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------

# Options of Numba's cuda.jit with no effect in numba-cuda itself on CUDA (nopython, nogil and
# the wrapper switches are CPU-target options it accepts and ignores); accepted the same way.
_NUMBA_NO_EFFECT_OPTIONS = {"nopython", "nogil", "no_cpython_wrapper", "no_cfunc_wrapper"}


def _config_value(name, env, default):
    """numba-cuda's configuration value `name`: numba's run-time config when the program has
    imported it (ptxjit never imports numba; a half-ported program or its tests may set it),
    else the environment variable numba reads it from, else `default`."""
    for mod in ("numba.cuda.core.config", "numba.core.config"):
        config = _sys.modules.get(mod)
        if config is not None and hasattr(config, name):
            value = getattr(config, name)
            return int(value) if isinstance(value, int) else value
    return _os.environ.get(env, default).strip()


def _kernel_options(device=False, inline=False, forceinline=False, fastmath=False, cache=False,
                    debug=False, lineinfo=False, opt=True, max_registers=None,
                    launch_bounds=None, lto=None, shared_memory_carveout=None, boundscheck=None,
                    link=None, warn_stacklevel=3, **kws):
    """Checks and normalizes cuda.jit's options (also compile_ptx's) into the dict the
    extension reads (bindings' functionOptionsFrom); warns as numba-cuda does."""
    import warnings

    unknown = set(kws) - _NUMBA_NO_EFFECT_OPTIONS
    if unknown:
        raise TypeError(f"cuda.jit() got unexpected keyword argument(s): "
                        f"{', '.join(sorted(unknown))}")
    if debug is None:  # numba-cuda's defaults: its config (NUMBA_CUDA_DEBUGINFO, NUMBA_OPT)
        debug = _config_value("CUDA_DEBUGINFO_DEFAULT", "NUMBA_CUDA_DEBUGINFO", "0") not in \
            (0, False, "0", "")
    if opt is None:
        opt = _config_value("OPT", "NUMBA_OPT", "3") not in (0, "0")
    if debug and opt:
        warnings.warn(_errors.NumbaInvalidConfigWarning(
            "debug=True with opt=True is not supported by CUDA. This may result in a crash - set "
            "debug=False or opt=False."), stacklevel=warn_stacklevel)
    if debug and lineinfo:
        warnings.warn(_errors.NumbaInvalidConfigWarning(
            "debug and lineinfo are mutually exclusive. Use debug to get full debug info (this "
            "disables some optimizations), or lineinfo for line info only with code generation "
            "unaffected."), stacklevel=warn_stacklevel)
    options = {
        "link": _link_items(link),
        "device": bool(device),
        "inline": _inline_always(inline),
        "forceinline": bool(forceinline),
        "fastmath": _fastmath(fastmath),
        "cache": bool(cache),
        "debug": bool(debug),
        "lineinfo": bool(lineinfo),
        "opt": bool(opt),
        # None: checked on the CPU backend, and on CUDA with debug=True (docs/reliability.md)
        "boundscheck": None if boundscheck is None else bool(boundscheck),
    }
    if max_registers is not None:
        if isinstance(max_registers, bool) or not isinstance(max_registers, int) or \
                not 1 <= max_registers <= 255:
            raise ValueError(f"max_registers must be an int from 1 to 255, not {max_registers!r}")
        options["max_registers"] = max_registers
    if launch_bounds is not None:
        options["launch_bounds"] = _launch_bounds(launch_bounds)
    if shared_memory_carveout is not None:
        options["shared_memory_carveout"] = _carveout(shared_memory_carveout)
    return options


def _inline_always(inline):
    """True when cuda.jit's ``inline=`` asks for a device function to be inlined into every
    caller: "always" or a true bool ("never" and False leave it to the optimizer)."""
    if isinstance(inline, (bool, int)):
        return bool(inline)
    if inline in ("always", "never"):
        return inline == "always"
    if callable(inline):
        raise NotImplementedError(
            "inline= given a cost-model function: it decides on Numba's IR, which ptxjit does "
            "not build; use inline='always' (inlined into every caller) or 'never' (the "
            "optimizer decides)")
    raise ValueError(f"inline= must be 'always', 'never' or a bool, not {inline!r}")


def _launch_bounds(lb):
    """(max threads per block, min blocks per SM, max cluster rank), 0 for absent ones."""
    bounds = (lb,) if isinstance(lb, int) else tuple(lb) if isinstance(lb, (tuple, list)) else None
    if bounds is None or not all(isinstance(b, int) and not isinstance(b, bool) for b in bounds):
        raise TypeError(f"launch_bounds must be an int or a tuple of 1 to 3 ints, not {lb!r}")
    if not 1 <= len(bounds) <= 3:
        raise ValueError(f"Got {len(bounds)} launch bounds: {bounds}. A maximum of three are "
                         f"supported: (max_threads_per_block, min_blocks_per_sm, "
                         f"max_blocks_per_cluster)")
    if any(b < 0 for b in bounds) or bounds[0] < 1 or bounds[0] > 1024:
        raise ValueError(f"invalid launch_bounds {bounds}: the thread count must be 1 to 1024 "
                         f"and the others non-negative")
    return tuple(bounds) + (0,) * (3 - len(bounds))


def _carveout(carveout):
    """The carveout as the driver takes it: percent of L1/shared memory, -1 for the default."""
    named = {"default": -1, "maxl1": 0, "maxshared": 100}
    if isinstance(carveout, str):
        if carveout.lower() not in named:
            raise ValueError(f"Invalid carveout value: {carveout}. Must be -1 to 100 or one of "
                             f"{list(named)}")
        return named[carveout.lower()]
    if isinstance(carveout, int) and not isinstance(carveout, bool):
        if not -1 <= carveout <= 100:
            raise ValueError("Carveout must be between -1 and 100")
        return carveout
    raise TypeError(f"Invalid carveout type: {type(carveout).__name__}; expected an int from -1 "
                    f"to 100 or one of {list(named)}")


def jit(func_or_sig=None, device=False, inline=False, forceinline=False, fastmath=False,
        cache=False, debug=None, lineinfo=False, opt=None, link=None, max_registers=None,
        launch_bounds=None, lto=None, shared_memory_carveout=None, extensions=None, **kws):
    """Compile a Python function into a CUDA kernel (or a device function with device=True).

    Usable as ``@cuda.jit``, ``@cuda.jit(device=True)``, ``@cuda.jit("void(float32[:])")``,
    ``@cuda.jit(void(float32[:]))``, ``@cuda.jit((float32[:], int64))`` or with a list of
    signatures. Flags are read for truth, as Numba does. Options (docs/api.md): fastmath, opt,
    cache, debug, lineinfo, max_registers, launch_bounds, shared_memory_carveout; inline="always"
    and forceinline=True inline a device function into every caller (otherwise LLVM decides);
    lto is accepted (ptxjit always compiles a kernel with its device functions in one module).
    """
    options = _kernel_options(device=device, inline=inline, forceinline=forceinline,
                              fastmath=fastmath, cache=cache, debug=debug, lineinfo=lineinfo,
                              opt=opt, link=link, max_registers=max_registers,
                              launch_bounds=launch_bounds, lto=lto,
                              shared_memory_carveout=shared_memory_carveout, **kws)

    extensions = list(extensions or ())

    def make(func, sigs):
        disp = _make_dispatcher(func, sigs, options)
        disp.extensions.extend(extensions)  # Numba's argument extensions (api.md)
        return disp

    if isinstance(func_or_sig, _pytypes.FunctionType):
        return make(func_or_sig, None)
    if func_or_sig is None:
        sigs = None
    elif callable(func_or_sig) and not isinstance(func_or_sig, (_types.Type, _types.Signature)):
        raise TypeError(f"cuda.jit() expects a Python function or a signature, got "
                        f"{type(func_or_sig).__name__}")
    else:
        sigs = _signature_texts(func_or_sig)
        if not isinstance(func_or_sig, list):
            # One signature given alone: numba-cuda's "specialized" kernel, which launches it
            # with arrays of another dtype of the same item size (docs/api.md).
            options["specialized"] = True

    def decorator(func):
        if not isinstance(func, _pytypes.FunctionType):
            raise TypeError(f"cuda.jit can only compile Python functions, not "
                            f"{type(func).__name__}")
        return make(func, sigs)

    return decorator


def _signature_texts(sig):
    if isinstance(sig, list):
        if not sig:
            raise TypeError("cuda.jit() was given an empty list of signatures")
        return [_types.signature_text(s) for s in sig]
    return [_types.signature_text(sig)]


def compile(pyfunc, sig, debug=None, lineinfo=False, device=True, fastmath=False, cc=None,
            opt=None, abi="c", abi_info=None, output="ptx", forceinline=False,
            launch_bounds=None, max_registers=None, lto=False):
    """Numba's ``cuda.compile``: ``pyfunc`` compiled for ``sig`` without a GPU; returns
    ``(code, return_type)``. ``output`` must be "ptx" (ptxjit emits PTX; no LTO-IR). Device
    functions are emitted with the C convention whichever ``abi`` is named (docs/compatibility.md)."""
    if output != "ptx":
        raise NotImplementedError(f"Unsupported output type: {output} (ptxjit emits PTX: "
                                  f"output='ptx')")
    if lto:
        raise NotImplementedError("lto=True (LTO-IR output) is not supported by ptxjit")
    if forceinline:  # numba-cuda's rule: forced inlining is a mark in LTO-IR only
        raise ValueError("Can only designate forced inlining in LTO-IR")
    return compile_ptx(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device,
                       fastmath=fastmath, cc=cc, opt=opt, abi=abi, abi_info=abi_info,
                       forceinline=forceinline, launch_bounds=launch_bounds,
                       max_registers=max_registers)


def compile_all(pyfunc, sig, debug=None, lineinfo=False, device=True, fastmath=False, cc=None,
                opt=None, abi="c", abi_info=None, output="ltoir", forceinline=False,
                launch_bounds=None):
    """Numba's ``cuda.compile_all``: ``compile``, returning ``([code, ...], return_type)``. The
    list holds one PTX module, the function with every Python device function it calls; the
    files of foreign functions it calls (``declare_device(..., link=...)``) are not added:
    ptxjit links them when a kernel that calls them is loaded (compatibility.md). ``output``
    must be "ptx" (numba-cuda's default, "ltoir", raises NotImplementedError as in
    ``compile``)."""
    if output not in ("ptx", "ltoir"):
        raise NotImplementedError(f"Unsupported output type: {output}")
    if forceinline and output != "ltoir":
        raise ValueError("Can only designate forced inlining in LTO-IR")
    code, resty = compile(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device,
                          fastmath=fastmath, cc=cc, opt=opt, abi=abi, abi_info=abi_info,
                          output=output, launch_bounds=launch_bounds)
    return [code], resty


def _abi_name(abi_info, device):
    """The device function's emitted name from numba-cuda's abi_info={"abi_name": ...}, or ""
    (ptxjit's name for it)."""
    if not abi_info:
        return ""
    if not isinstance(abi_info, dict) or set(abi_info) - {"abi_name"}:
        raise ValueError(f"abi_info must be a dict whose only key is 'abi_name', not {abi_info!r}")
    if not device:
        raise ValueError("abi_info names device functions; a kernel's name is ptxjit's")
    name = abi_info["abi_name"]
    # PTX identifiers: a letter then letters, digits, _ and $; or _, $ or % then at least one.
    if not isinstance(name, str) or not _re.fullmatch(r"[A-Za-z][\w$]*|[_$%][\w$]+", name,
                                                       _re.ASCII):
        raise ValueError(f"abi_name {name!r} is not a valid PTX identifier")
    return name


def _default_cc():
    """The compute capability compiles target when none is given: numba-cuda's
    NUMBA_CUDA_DEFAULT_PTX_CC ("major.minor") when set, else ptxjit's 9.0 (Hopper). Only the
    environment variable is read, not numba's run-time config: its built-in default (5.0) is
    below what current toolkits support, and numba-cuda raises it to theirs."""
    text = _os.environ.get("NUMBA_CUDA_DEFAULT_PTX_CC", "").strip()
    if not text:
        return 9, 0
    m = _re.fullmatch(r"(\d+)\.(\d+)", text)
    if not m:
        raise ValueError(f"NUMBA_CUDA_DEFAULT_PTX_CC={text!r}: a compute capability must be "
                         f'given as "major.minor", e.g. "8.0"')
    return int(m.group(1)), int(m.group(2))


def _target_cc(cc):
    """(major, minor, arch_specific) of a compile target: numba-cuda's (major, minor) or
    (major, minor, "a") for an architecture-specific target such as sm_90a."""
    if cc is None:
        cc = _default_cc()
    cc = tuple(cc)
    try:
        if len(cc) not in (2, 3):
            raise TypeError
        cc = (_operator.index(cc[0]), _operator.index(cc[1])) + cc[2:]
    except TypeError:
        raise ValueError(f"cc must be (major, minor) or (major, minor, 'a'), not {cc!r}") from None
    if len(cc) == 2:
        return cc[0], cc[1], False
    if cc[2] != "a":
        raise ValueError(f"cc {cc!r}: ptxjit's LLVM 19 knows arch-specific targets ('a') only, "
                         f"not {cc[2]!r}")
    if cc[:2] != (9, 0):
        raise ValueError(f"cc {cc!r}: LLVM 19, which ptxjit uses, has no target "
                         f"sm_{cc[0]}{cc[1]}a (its only arch-specific target is sm_90a)")
    return 9, 0, True


def compile_ptx(pyfunc, sig, debug=None, lineinfo=False, device=False, fastmath=False, cc=None,
                opt=None, abi="numba", abi_info=None, forceinline=False, launch_bounds=None,
                max_registers=None):
    """Compile ``pyfunc`` for ``sig`` to PTX without a GPU; returns ``(ptx, return_type)``."""
    if abi not in ("numba", "c"):
        raise NotImplementedError(f"Unsupported ABI: {abi}")
    if abi == "c" and not device:
        raise NotImplementedError("The C ABI is not supported for kernels")
    symbol = _abi_name(abi_info, device)
    major, minor, arch_specific = _target_cc(cc)
    if launch_bounds is not None and device:
        raise ValueError("launch_bounds apply to kernels, not device functions")
    options = _kernel_options(device=device, forceinline=forceinline, fastmath=fastmath,
                              debug=debug, lineinfo=lineinfo, opt=opt, max_registers=max_registers,
                              launch_bounds=launch_bounds)
    ptx, ret = _lib().compile_ptx(pyfunc, _types.signature_text(sig), bool(device), options,
                                  major, minor, arch_specific, symbol)
    return ptx, _types.from_description(ret)


def compile_for_current_device(pyfunc, sig, debug=None, lineinfo=False, device=True,
                               fastmath=False, opt=None, abi="c", abi_info=None, output="ptx",
                               forceinline=False, launch_bounds=None, max_registers=None,
                               lto=False):
    """``compile`` for the compute capability of the current GPU."""
    return compile(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device,
                   fastmath=fastmath, cc=get_current_device().compute_capability, opt=opt,
                   abi=abi, abi_info=abi_info, output=output, forceinline=forceinline,
                   launch_bounds=launch_bounds, max_registers=max_registers, lto=lto)


def compile_ptx_for_current_device(pyfunc, sig, debug=None, lineinfo=False, device=False,
                                   fastmath=False, opt=None, abi="numba", abi_info=None,
                                   forceinline=False, launch_bounds=None, max_registers=None):
    """compile_ptx for the compute capability of the current GPU."""
    return compile_ptx(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device,
                       fastmath=fastmath, cc=get_current_device().compute_capability, opt=opt,
                       abi=abi, abi_info=abi_info, forceinline=forceinline,
                       launch_bounds=launch_bounds, max_registers=max_registers)


class LinkableCode:
    """External code given by value to ``link=`` (numba-cuda's classes): ``data`` (bytes, or
    str for source text) and an optional ``name`` shown in errors."""

    kind = None
    default_name = "<unnamed>"

    def __init__(self, data, name=None, setup_callback=None, teardown_callback=None,
                 nrt=False):
        if setup_callback is not None or teardown_callback is not None or nrt:
            raise NotImplementedError("setup/teardown callbacks and nrt of linkable code are not "
                                      "supported by ptxjit")
        if not isinstance(data, (bytes, bytearray, memoryview, str)):
            raise TypeError(f"{type(self).__name__} data must be bytes or str, not "
                            f"{type(data).__name__}")
        self.data = data
        self._name = name

    @property
    def name(self):
        return self._name or self.default_name


class PTXSource(LinkableCode):
    """PTX text to link."""
    kind, default_name = "ptx", "<unnamed-ptx>"


class CUSource(LinkableCode):
    """CUDA C++ source, compiled to relocatable PTX by NVRTC when the kernel is loaded."""
    kind, default_name = "cu", "<unnamed-cu>"


class Cubin(LinkableCode):
    kind, default_name = "cubin", "<unnamed-cubin>"


class Fatbin(LinkableCode):
    kind, default_name = "fatbin", "<unnamed-fatbin>"


class Object(LinkableCode):
    kind, default_name = "object", "<unnamed-object>"


class Archive(LinkableCode):
    kind, default_name = "library", "<unnamed-archive>"


_LINK_SUFFIXES = {".ptx": "ptx", ".cu": "cu", ".cubin": "cubin", ".fatbin": "fatbin",
                  ".o": "object", ".a": "library"}


def _link_items(link):
    """``link=`` as the extension reads it: (kind, name, bytes) per item; files are read now, so a
    missing one is reported where it is named."""
    if link is None:
        return []
    if isinstance(link, (str, bytes, _os.PathLike, LinkableCode)):
        link = [link]
    items = []
    for item in link:
        if isinstance(item, LinkableCode):
            data = item.data.encode() if isinstance(item.data, str) else bytes(item.data)
            items.append((item.kind, item.name, data))
            continue
        if not isinstance(item, (str, _os.PathLike)):
            raise TypeError(f"link= takes file paths and cuda.PTXSource/CUSource/... objects, "
                            f"not {type(item).__name__}")
        path = _os.fspath(item)
        suffix = _os.path.splitext(path)[1].lower()
        if suffix == ".ltoir":
            raise NotImplementedError(f"cannot link {path}: ptxjit does not link LTO-IR")
        if suffix not in _LINK_SUFFIXES:
            raise ValueError(f"cannot link {path}: unknown kind of file (ptxjit links "
                             f"{', '.join(sorted(_LINK_SUFFIXES))})")
        with open(path, "rb") as f:
            items.append((_LINK_SUFFIXES[suffix], path, f.read()))
    return items


def _signature_object(text):
    """The Signature of signature string ``text`` as the compiler reads it (``"int32(float32[:])"``,
    ``"(int32, int32) -> int32"``, ``"void(int32*)"``); TypeError when it cannot."""
    try:
        ret, args = _lib()._signature_types(text)
    except Exception as e:
        raise TypeError(f"cannot read the signature {text!r}: {e}") from None
    return _types.Signature(None if ret is None else _types.from_description(ret),
                            [_types.from_description(a) for a in args])


class ExternFunction:
    """A foreign device function declared with ``cuda.declare_device``; kernels call it.
    ``sig`` is its Signature (``sig.args``, ``sig.return_type``)."""

    __slots__ = ("name", "sig", "abi", "link", "use_cooperative", "_ptxjit_extern")
    _next_id = 0

    def __init__(self, name, text, abi, link, use_cooperative=False):
        self.name, self.abi, self.link = name, abi, link
        self.sig = _signature_object(text)
        self.use_cooperative = bool(use_cooperative)
        ExternFunction._next_id += 1
        self._ptxjit_extern = (ExternFunction._next_id, name, text, abi == "c", link,
                               self.use_cooperative)

    def __repr__(self):
        return f"<external device function {self.name} {self.sig}>"

    def __call__(self, *args):
        raise _errors.UnsupportedError(f"external device function '{self.name}' can only be "
                                       f"called from kernels and device functions")


def declare_device(name, sig, link=None, use_cooperative=False, abi="numba"):
    """Declares foreign device function ``name`` (CUDA C++ or PTX, linked from ``link``) with
    Numba signature ``sig`` so that kernels can call it, as numba-cuda's: Numba's ABI
    (``extern "C" __device__ int name(ret *out, args...)``) or ``abi="c"`` (``ret name(args...)``).
    ``use_cooperative=True``: the code synchronizes the grid (cooperative groups), so kernels
    that call it are launched cooperatively (docs/cooperation.md#grid-synchronization).
    """
    if abi not in ("numba", "c"):
        raise NotImplementedError(f"Unsupported ABI: {abi}")
    if not isinstance(name, str) or not _re.fullmatch(r"[A-Za-z_$][\w$]*", name, _re.ASCII):
        raise ValueError(f"declare_device: {name!r} is not a valid device function name")
    text = _types.signature_text(sig)
    if text.lstrip().startswith("(") and "->" not in text:  # argument types only
        raise TypeError("Return type must be provided for device declarations")
    return ExternFunction(name, text, abi, _link_items(link), use_cooperative)


# ---------------------------------------------------------------------------------------------
# Memory and streams
# ---------------------------------------------------------------------------------------------

def _as_host_array(obj):
    import numpy as np

    if isinstance(obj, np.ndarray):
        return obj
    return np.asarray(obj)


def to_device(obj, stream=0, copy=True, to=None):
    """A device array holding a copy of ``obj`` (or ``to``, filled from ``obj``)."""
    if to is not None:
        if copy:
            to.copy_to_device(obj, stream=stream)
        return to
    if isinstance(obj, _lib(start_cuda=True).DeviceNDArray):
        return obj
    import numpy as np

    if isinstance(obj, np.void) and obj.dtype.names is not None:
        return _lib().to_device(obj, stream, bool(copy))  # a device record (numba's DeviceRecord)
    return _lib().to_device(_as_host_array(obj), stream, bool(copy))


def _normalize_shape(shape):
    if isinstance(shape, int) or hasattr(shape, "__index__"):
        shape = (shape,)
    shape = tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"negative dimensions are not allowed: {shape}")
    return shape


def device_array(shape, dtype=None, strides=None, order="C", stream=0):
    """An uninitialized device array (NumPy's ``empty``)."""
    import numpy as np

    shape = _normalize_shape(shape)
    dtype = _np_dtype(dtype)
    if order not in ("C", "F", "A", "K"):
        raise ValueError(f"order must be 'C' or 'F', not {order!r}")
    if strides is None:
        strides = _contiguous_strides(shape, dtype.itemsize, order == "F")
    else:
        strides = _normalize_shape(strides) if not isinstance(strides, int) else (strides,)
        if len(strides) != len(shape):
            raise ValueError("strides must have one entry per dimension")
    return _lib(start_cuda=True).device_array(shape, strides, dtype, stream)


def _np_dtype(dtype):
    """The NumPy dtype of an array factory's ``dtype=``: None (float64), anything NumPy reads,
    or a type object (ptxjit's, or Numba's, mapped by ``types.as_type``)."""
    import numpy as np

    if dtype is None:
        return np.dtype(np.float64)
    try:
        return np.dtype(dtype)
    except TypeError:
        try:
            t = _types.as_type(dtype)
        except TypeError:
            raise TypeError(f"dtype {dtype!r} is neither a NumPy dtype nor a type") from None
        if not hasattr(t, "dtype"):
            raise TypeError(f"dtype {dtype!r} has no NumPy dtype") from None
        return np.dtype(t.dtype)


def _contiguous_strides(shape, itemsize, fortran):
    strides = [0] * len(shape)
    acc = itemsize
    dims = range(len(shape)) if fortran else reversed(range(len(shape)))
    for d in dims:
        strides[d] = acc
        acc *= max(shape[d], 1)
    return tuple(strides)


def _order_like(ary):
    flags = ary.flags
    return "F" if flags["F_CONTIGUOUS"] and not flags["C_CONTIGUOUS"] else "C"


def _strides_like(ary):
    """Strides of a new contiguous array like ``ary`` (None: the default ones of its order).
    A non-contiguous ``ary`` keeps the order of its axes in memory (NumPy's empty_like, as
    numba-cuda's device_array_like)."""
    flags = ary.flags
    if flags["C_CONTIGUOUS"] or flags["F_CONTIGUOUS"] or ary.ndim <= 1:
        return None
    order = sorted(range(ary.ndim), key=lambda k: ary.strides[k])
    strides = [0] * ary.ndim
    stride = ary.dtype.itemsize
    for k in order:
        strides[k] = stride
        stride *= ary.shape[k]
    return tuple(strides)


def device_array_like(ary, stream=0):
    """An uninitialized device array with the shape and dtype of ``ary``, contiguous with its
    axes in the order ``ary`` has them in memory."""
    return device_array(ary.shape, dtype=ary.dtype, strides=_strides_like(ary),
                        order=_order_like(ary), stream=stream)


def _host_array(kind, shape, dtype, strides, order, **flags):
    """A NumPy array on pinned, mapped or managed memory (plain host memory on the CPU
    backend), which the array keeps alive."""
    import numpy as np

    shape = _normalize_shape(shape)
    dtype = _np_dtype(dtype)
    if order not in ("C", "F"):
        raise ValueError(f"order must be 'C' or 'F', not {order!r}")
    if strides is None:
        strides = _contiguous_strides(shape, dtype.itemsize, order == "F")
    else:
        strides = (int(strides),) if isinstance(strides, int) else tuple(int(s) for s in strides)
        if len(strides) != len(shape) or any(s < 0 for s in strides):
            raise ValueError("strides must have one non-negative entry per dimension")
    nbytes = 0 if 0 in shape else dtype.itemsize + sum((n - 1) * st
                                                       for n, st in zip(shape, strides))
    buf = _lib(start_cuda=True).host_memory(kind, nbytes, **flags)
    return np.ndarray(shape, dtype=dtype, buffer=buf if nbytes else None, strides=strides)


def pinned_array(shape, dtype=None, strides=None, order="C"):
    """A host array in page-locked memory: copies between it and the device on a stream run
    asynchronously. (Plain host memory on the CPU backend.)"""
    return _host_array("pinned", shape, dtype, strides, order)


def pinned_array_like(ary):
    """``pinned_array`` with the shape and dtype of ``ary`` (its axis order, as
    ``device_array_like``)."""
    return pinned_array(ary.shape, dtype=ary.dtype, strides=_strides_like(ary),
                        order=_order_like(ary))


def _device_visible(cls, kind, shape, dtype, strides, order, stream, **flags):
    arr = _host_array(kind, shape, dtype, strides, order, **flags).view(cls)
    arr.stream = stream
    return arr


def mapped_array(shape, dtype=None, strides=None, order="C", stream=0, portable=False,
                 wc=False):
    """A host array in mapped (page-locked, device-addressable) memory: kernels read and write
    it in place, through ``__cuda_array_interface__``. ``portable``: pinned for every context;
    ``wc``: write-combined (fast for the device to read, slow for the host to read)."""
    return _device_visible(_hostarrays().MappedNDArray, "mapped", shape, dtype, strides, order,
                           stream, portable=bool(portable), wc=bool(wc))


def mapped_array_like(ary, stream=0, portable=False, wc=False):
    """``mapped_array`` with the shape and dtype of ``ary``."""
    return mapped_array(ary.shape, dtype=ary.dtype, strides=_strides_like(ary),
                        order=_order_like(ary), stream=stream, portable=portable, wc=wc)


def managed_array(shape, dtype=None, strides=None, order="C", stream=0, attach_global=True):
    """A host array in managed (unified) memory, migrated between host and device on demand;
    kernels use it in place. ``attach_global=False`` attaches it to the host
    (CU_MEM_ATTACH_HOST)."""
    return _device_visible(_hostarrays().ManagedNDArray, "managed", shape, dtype, strides, order,
                           stream, attach_host=not attach_global)


def _hostarrays():
    from . import _hostarrays as module

    return module


def __getattr__(name):
    # Classes of the extension, looked up lazily so that importing ptxjit stays cheap.
    if name in ("DeviceNDArray", "Stream", "Event", "Dispatcher", "LaunchConfig"):
        return getattr(_lib(), name)
    raise AttributeError(f"module 'ptxjit.cuda' has no attribute {name!r}")


class pinned:
    """``with cuda.pinned(*arrays):`` page-locks the memory of existing host arrays
    (``cuMemHostRegister``) for the block, so that copies from and to them on a stream run
    asynchronously. (Nothing to do on the CPU backend.)"""

    def __init__(self, *arrays):
        self.arrays = arrays
        self._registered = []

    def __enter__(self):
        import numpy as np

        lib = _lib()
        try:
            for ary in self.arrays:
                if not isinstance(ary, np.ndarray):
                    raise TypeError(f"cuda.pinned() takes NumPy arrays, not {type(ary).__name__}")
                if ary.size == 0:
                    continue
                lo = sum((n - 1) * st for n, st in zip(ary.shape, ary.strides) if st < 0)
                hi = sum((n - 1) * st for n, st in zip(ary.shape, ary.strides) if st > 0)
                address = ary.__array_interface__["data"][0] + lo
                lib.register_host(address, hi - lo + ary.itemsize)
                self._registered.append(address)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        lib = _lib()
        while self._registered:
            lib.unregister_host(self._registered.pop())
        return False


def _transpose_kernel(a, b=None):
    """numba-cuda's ``cuda.kernels.transpose.transpose``: the transpose of 2-d array ``a`` (a
    device array, or a host array, copied to the device first) stored in ``b`` (a device array
    of the transposed shape, or a host array, filled from the device), or in a new device array
    when ``b`` is None; returns ``b``. The copy is made on the device, on ``a``'s stream (the
    device-side assignment of device arrays: any dtype, bool and records included)."""
    import numpy as np

    lib = _lib()
    if not isinstance(a, lib.DeviceNDArray):
        a = as_cuda_array(a) if is_cuda_array(a) else to_device(np.asarray(a))
    if a.ndim != 2:
        raise ValueError(f"transpose() takes a 2-d array, not one of {a.ndim} dimensions")
    stream = a.stream
    rows, cols = a.shape
    if b is None:
        b = device_array((cols, rows), dtype=a.dtype, stream=stream)
    if tuple(b.shape) != (cols, rows):
        raise ValueError(f"transpose(): the output has shape {tuple(b.shape)}, not the "
                         f"transposed {(cols, rows)}")
    if np.dtype(b.dtype) != a.dtype:
        raise TypeError(f"transpose(): the output has dtype {b.dtype}, not {a.dtype}")
    view = a._as_strided((cols, rows), (a.strides[1], a.strides[0]))
    on_device = isinstance(b, lib.DeviceNDArray) or is_cuda_array(b)
    out = (b if isinstance(b, lib.DeviceNDArray) else as_cuda_array(b)) if on_device else \
        device_array((cols, rows), dtype=a.dtype, stream=stream)
    if out.size:
        out.setitem(Ellipsis, view, stream)
    if not on_device:
        out.copy_to_host(b, stream=stream)
        if stream != 0:
            stream.synchronize()
    return b


# numba-cuda's `cuda.kernels.transpose` module: `from ...cuda.kernels.transpose import transpose`.
kernels = _pytypes.ModuleType(__name__ + ".kernels", "numba-cuda's cuda.kernels path: transpose")
kernels.transpose = _pytypes.ModuleType(__name__ + ".kernels.transpose",
                                        "numba-cuda's transpose(a, b=None)")
kernels.transpose.transpose = _transpose_kernel
_sys.modules.setdefault(kernels.__name__, kernels)
_sys.modules.setdefault(kernels.transpose.__name__, kernels.transpose)


@_contextlib.contextmanager
def mapped(*arylist, **kws):
    """numba-cuda's ``with cuda.mapped(*arrays, stream=0) as d:``: page-locks existing host
    arrays and maps them for the device for the block (``cuMemHostRegister`` with
    ``CU_MEMHOSTREGISTER_DEVICEMAP``), yielding device arrays over the same memory (the array
    for one, a list for several): kernels read and write the host arrays in place. On exit the
    device's work is waited for and the memory unmapped; the device arrays must not be used
    afterwards. On the CPU backend the device arrays view the host memory itself."""
    import numpy as np

    unknown = sorted(set(kws) - {"stream"})
    if unknown:
        raise TypeError(f"mapped() got an unexpected keyword argument {unknown[0]!r} "
                        "(it takes only stream=)")
    stream = kws.get("stream", 0)
    lib = _lib()
    registered = []
    devarys = []
    try:
        for ary in arylist:
            if not isinstance(ary, np.ndarray):
                raise TypeError(f"cuda.mapped() takes NumPy arrays, not {type(ary).__name__}")
            data = ary.__array_interface__["data"][0]
            lo = sum((n - 1) * st for n, st in zip(ary.shape, ary.strides) if st < 0)
            hi = sum((n - 1) * st for n, st in zip(ary.shape, ary.strides) if st > 0)
            nbytes = hi - lo + ary.itemsize if ary.size else 0
            device_base = lib.register_host(data + lo, nbytes, mapped=True) if nbytes else 0
            if nbytes and lib.current_target() == "cuda":
                registered.append(data + lo)
            devarys.append(lib._wrap_memory(device_base - lo if nbytes else 0, ary.shape,
                                            ary.strides, ary.dtype, ary, stream,
                                            host_memory=True))
        yield devarys[0] if len(devarys) == 1 else devarys
    finally:
        if registered:
            synchronize()  # kernels using the memory finish before it is unmapped
        while registered:
            lib.unregister_host(registered.pop())


class _TransferHint:
    """A host array passed to a kernel with a transfer direction (Numba's cuda.In/Out/InOut)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"cuda.{type(self).__name__}({self.value!r})"


class In(_TransferHint):
    """``cuda.In(ary)``: the kernel only reads ``ary``: copied to the device, not back."""

    _ptxjit_transfer = "In"


class Out(_TransferHint):
    """``cuda.Out(ary)``: the kernel only writes ``ary``: not copied to the device (its device
    copy starts uninitialized), copied back after the launch."""

    _ptxjit_transfer = "Out"


class InOut(_TransferHint):
    """``cuda.InOut(ary)``: copied to the device and back (what a bare host array gets)."""

    _ptxjit_transfer = "InOut"


def stream():
    """A new CUDA stream."""
    return _lib(start_cuda=True).Stream()


def default_stream():
    """The default stream."""
    return _lib(start_cuda=True).default_stream()


legacy_default_stream = default_stream


def per_thread_default_stream():
    """The calling thread's default stream (its handle is CU_STREAM_PER_THREAD)."""
    return _lib().per_thread_default_stream()


def external_stream(ptr):
    """A stream object for the CUDA stream handle ``ptr`` made by another library (not
    destroyed by ptxjit)."""
    return _lib().external_stream(int(ptr))


def graph(stream):
    """Captures into a CUDA graph the work submitted to ``stream`` (a ``cuda.stream()``) inside
    a ``with`` block; ``g.replay(stream=None)`` runs all of it again with one launch (a ptxjit
    addition; see docs/api.md, "CUDA graphs"):

        with cuda.graph(s) as g:
            kernel[grid, block, s](a, b)
        g.replay()
        g.kernels[0].rebind(a, c)   # other arguments for the replays that follow
        g.replay()
    """
    return _lib().Graph(stream)


def event(timing=True):
    """A new CUDA event (``record``, ``synchronize``, ``wait``, ``query``, ``elapsed_time``);
    ``timing=False`` makes a cheaper one that cannot be timed."""
    return _lib(start_cuda=True).event(bool(timing))


def event_elapsed_time(evtstart, evtend):
    """Milliseconds between two recorded events."""
    return _lib().event_elapsed_time(evtstart, evtend)


def synchronize():
    """Waits for all work on the current device."""
    _lib(start_cuda=True).synchronize()


def is_available():
    """True when a CUDA driver and GPU can be used."""
    return _lib(start_cuda=True).is_available()


def is_supported_version():
    """numba-cuda's ``cuda.is_supported_version()``: True when the CUDA driver loads with every
    entry point ptxjit needs (CUDA 11.2 or newer), whatever the backend in use; False without
    one."""
    try:
        _lib()._driver_version()
    except _errors.CudaSupportError:
        return False
    return True


def _version_module(name, doc, get):
    module = _pytypes.ModuleType(f"{__name__}.{name}", doc)
    module.get_version = get
    return module


def _driver_version():
    """The CUDA version of the driver as (major, minor) (cuDriverGetVersion); CudaSupportError
    without a usable driver."""
    return tuple(_lib()._driver_version())


def _runtime_version():
    """ptxjit does not use the CUDA runtime library: the version (major, minor) of the CUDA
    toolkit it uses at run time, its NVRTC's (which compiles CUDA C++ given to ``link=``);
    RuntimeError naming the places looked in when none is found."""
    return tuple(_lib()._nvrtc_version())


driver = _version_module("driver", "The CUDA driver: get_version() -> (major, minor).",
                         _driver_version)
runtime = _version_module("runtime", "The CUDA toolkit ptxjit uses: get_version() -> (major, "
                          "minor) of its NVRTC (ptxjit has no CUDA runtime library).",
                          _runtime_version)


@_contextlib.contextmanager
def defer_cleanup():
    """numba-cuda's ``cuda.defer_cleanup()``: inside the block (blocks nest, across threads),
    the memory of device arrays that are dropped is kept, and given back when the outermost
    block ends, so that no memory returns to the pool in the middle of the work."""
    lib = _lib()
    lib._defer_cleanup(True)
    try:
        yield
    finally:
        lib._defer_cleanup(False)


def is_float16_supported():
    """numba-cuda's ``cuda.is_float16_supported()``: float16 is always supported (True)."""
    return True


def is_bfloat16_supported():
    """numba-cuda's ``cuda.is_bfloat16_supported()``: whether the current device has bfloat16
    arithmetic (compute capability 8.0+). The CPU backend reports its stand-in device's
    compute capability (9.0): True."""
    return get_current_device().supports_bfloat16


def current_target():
    """The backend kernels run on: 'cuda' or 'cpu' (a ptxjit addition; see PTXJIT_TARGET)."""
    return _lib().current_target()


from ._devices import (  # noqa: E402  (devices and contexts: docs/api.md#devices-and-contexts)
    gpus, select_device, get_current_device, current_context, list_devices, close)


def detect():
    """Prints the CUDA devices found; returns True when there is one."""
    lib = _lib()
    if not lib.is_available():
        print(f"ptxjit: no CUDA device ({lib.unavailable_reason()})")
        return False
    n = lib._device_count()
    print(f"Found {n} CUDA device{'s' if n != 1 else ''}")
    for i in range(n):
        info = lib._device_summary(i)  # without opening the device
        cc = info["compute_capability"]
        print(f"id {i} {info['name']} [SUPPORTED] compute capability {cc[0]}.{cc[1]}")
    return True


# ---------------------------------------------------------------------------------------------
# Intrinsics: stand-ins that kernels compile and Python cannot call
# ---------------------------------------------------------------------------------------------

def _device_only(name):
    return RuntimeError(f"cuda.{name} can only be used inside a kernel or device function "
                        f"compiled with @cuda.jit")


class _Intrinsic:
    """A function usable only in kernels (``cuda.grid``, ``cuda.syncthreads``, ...)."""

    __slots__ = ("_ptxjit_symbol", "__name__")

    def __init__(self, path):
        self._ptxjit_symbol = "cuda." + path
        self.__name__ = path

    def __call__(self, *args, **kwargs):
        raise _device_only(self.__name__)

    def __repr__(self):
        return f"<ptxjit intrinsic cuda.{self.__name__}>"


class _Dim3Intrinsic:
    """``cuda.threadIdx`` and friends: ``.x``, ``.y``, ``.z`` inside kernels."""

    __slots__ = ("_ptxjit_symbol", "__name__")

    def __init__(self, path):
        self._ptxjit_symbol = "cuda." + path
        self.__name__ = path

    def _fail(self):
        raise _device_only(self.__name__)

    x = property(lambda self: self._fail())
    y = property(lambda self: self._fail())
    z = property(lambda self: self._fail())

    def __repr__(self):
        return f"<ptxjit intrinsic cuda.{self.__name__}>"


class _Namespace:
    """``cuda.shared``, ``cuda.local``, ``cuda.const``, ``cuda.atomic``: groups of intrinsics."""

    __slots__ = ("_ptxjit_symbol", "__name__", "__dict__")

    def __init__(self, path, members):
        self._ptxjit_symbol = "cuda." + path
        self.__name__ = path
        for m in members:
            setattr(self, m, _Intrinsic(f"{path}.{m}"))

    def __repr__(self):
        return f"<ptxjit intrinsics cuda.{self.__name__}>"


grid = _Intrinsic("grid")
gridsize = _Intrinsic("gridsize")
threadIdx = _Dim3Intrinsic("threadIdx")
blockIdx = _Dim3Intrinsic("blockIdx")
blockDim = _Dim3Intrinsic("blockDim")
gridDim = _Dim3Intrinsic("gridDim")
syncthreads = _Intrinsic("syncthreads")
syncthreads_count = _Intrinsic("syncthreads_count")
syncthreads_and = _Intrinsic("syncthreads_and")
syncthreads_or = _Intrinsic("syncthreads_or")
syncwarp = _Intrinsic("syncwarp")
threadfence = _Intrinsic("threadfence")
threadfence_block = _Intrinsic("threadfence_block")
threadfence_system = _Intrinsic("threadfence_system")
laneid = _Intrinsic("laneid")
warpsize = _Intrinsic("warpsize")
# Warp functions and integer/float intrinsics (docs/cooperation.md).
shfl_sync = _Intrinsic("shfl_sync")
shfl_up_sync = _Intrinsic("shfl_up_sync")
shfl_down_sync = _Intrinsic("shfl_down_sync")
shfl_xor_sync = _Intrinsic("shfl_xor_sync")
all_sync = _Intrinsic("all_sync")
any_sync = _Intrinsic("any_sync")
eq_sync = _Intrinsic("eq_sync")
ballot_sync = _Intrinsic("ballot_sync")
match_any_sync = _Intrinsic("match_any_sync")
match_all_sync = _Intrinsic("match_all_sync")
activemask = _Intrinsic("activemask")
lanemask_lt = _Intrinsic("lanemask_lt")
popc = _Intrinsic("popc")
brev = _Intrinsic("brev")
clz = _Intrinsic("clz")
ffs = _Intrinsic("ffs")
fma = _Intrinsic("fma")
cbrt = _Intrinsic("cbrt")
selp = _Intrinsic("selp")
nanosleep = _Intrinsic("nanosleep")
# Loads and stores of global memory with a PTX cache operator (numba-cuda's cache hints,
# docs/cooperation.md#cache-hints): ld.global.ca, ... / st.global.cg, ...
ldca = _Intrinsic("ldca")
ldcg = _Intrinsic("ldcg")
ldcs = _Intrinsic("ldcs")
ldlu = _Intrinsic("ldlu")
ldcv = _Intrinsic("ldcv")
stcg = _Intrinsic("stcg")
stcs = _Intrinsic("stcs")
stwb = _Intrinsic("stwb")
stwt = _Intrinsic("stwt")
shared = _Namespace("shared", ["array"])
# Cooperative groups (numba-cuda's cuda.cg): cuda.cg.this_grid().sync() synchronizes the grid.
cg = _Namespace("cg", ["this_grid"])
local = _Namespace("local", ["array"])
const = _Namespace("const", ["array_like"])
atomic = _Namespace("atomic", ["add", "sub", "max", "min", "nanmax", "nanmin", "and_", "or_",
                               "xor", "inc", "dec", "exch", "compare_and_swap", "cas"])
# numba-cuda's cuda.bf16 and cuda.fp16: bfloat16 and float16 intrinsics (docs/language.md#bfloat16,
# #float16). Also importable as modules: `from ptxjit.cuda.bf16 import hadd, bfloat16`.
from . import _lowfloat  # noqa: E402

bf16, fp16 = _lowfloat.build(__name__, _Intrinsic, _types.bfloat16, _types.float16)


def _lazy_submodule(name, source):
    """Module ``ptxjit.cuda.<name>`` made from ``ptxjit/<source>.py``, registered so that ``import
    ptxjit.cuda.<name>`` finds it, and executed at its first attribute access (its device
    functions need the extension, which ``import ptxjit`` does not load)."""
    import importlib.util

    path = _os.path.join(_os.path.dirname(__file__), source + ".py")
    spec = importlib.util.spec_from_file_location(__name__ + "." + name, path)
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    _sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return _sys.modules[spec.name]


# numba's carray/farray (numba.carray, numba.cuda.np.numpy_support.carray): in kernels, the array
# view of a raw pointer's memory (docs/language.md#raw-pointers); ptxjit.carray / ptxjit.farray.
class _PointerArray(_Intrinsic):
    __slots__ = ()

    def __init__(self, name):
        self._ptxjit_symbol = "numpy_support." + name
        self.__name__ = name

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"ptxjit.{self.__name__} can only be used inside a kernel or device "
                           f"function compiled with @cuda.jit")

    def __repr__(self):
        return f"<ptxjit intrinsic {self.__name__}>"


_carray = _PointerArray("carray")
_farray = _PointerArray("farray")


def literal_unroll(container):
    """numba's ``literal_unroll`` (``numba.cuda.literal_unroll``): in a kernel, ``for x in
    literal_unroll(tup)`` unrolls the loop, so that each element of a tuple whose elements differ
    in type (arrays of different ndims, numbers and arrays, ...) gets its own copy of the body
    (docs/language.md#loops-over-tuples). In Python, and applied to anything but a tuple, it
    returns its argument."""
    return container


literal_unroll._ptxjit_symbol = "cuda.literal_unroll"

# numba.cuda's type names (cuda.float32, ...): ptxjit's type objects.
from .types import (  # noqa: E402,F401
    void, boolean, bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16,
    float32, float64, complex64, complex128, bfloat16)

# CUDA's vector types (numba-cuda's cuda.float32x4, cuda.int2, ...; docs/language.md#vector-types).
from ._vector_types import *  # noqa: E402,F401,F403
from ._vector_types import __all__ as _vector_type_names  # noqa: E402

# numba-cuda's cuda.random (xoroshiro128+): `cuda.random.create_xoroshiro128p_states(...)`,
# `from ptxjit.cuda.random import xoroshiro128p_uniform_float32`.
random = _lazy_submodule("random", "_random")

__all__ = [
    "jit", "compile", "compile_all", "compile_for_current_device", "compile_ptx", "compile_ptx_for_current_device", "to_device", "device_array",
    "device_array_like", "pinned_array", "pinned_array_like", "mapped_array",
    "mapped_array_like", "managed_array", "pinned", "mapped", "stream", "default_stream", "synchronize",
    "is_available", "current_target", "is_cuda_array", "as_cuda_array",
    "from_cuda_array_interface", "from_dlpack", "external_stream", "per_thread_default_stream",
    "legacy_default_stream", "event", "event_elapsed_time", "graph",
    "get_current_device", "detect", "gpus", "select_device", "current_context", "list_devices",
    "is_supported_version", "driver", "runtime", "defer_cleanup",
    "close", "grid", "gridsize",
    "threadIdx", "blockIdx", "blockDim", "gridDim", "syncthreads", "shared", "local", "const",
    "atomic", "cg",
    # cooperating threads (docs/cooperation.md)
    "syncthreads_count", "syncthreads_and", "syncthreads_or", "syncwarp", "threadfence",
    "threadfence_block", "threadfence_system", "laneid", "warpsize", "shfl_sync",
    "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync", "all_sync", "any_sync", "eq_sync",
    "ballot_sync", "match_any_sync", "match_all_sync", "activemask", "lanemask_lt", "popc",
    "brev", "clz", "ffs", "fma", "cbrt", "selp", "nanosleep", "libdevice", "fp16", "bf16",
    "bfloat16", "is_bfloat16_supported", "is_float16_supported", "random", "In",
    "Out", "InOut", "literal_unroll", "ldca", "ldcg", "ldcs", "ldlu", "ldcv", "stcg", "stcs",
    "stwb", "stwt",
] + _vector_type_names


# ---------------------------------------------------------------------------------------------
# Ufuncs (docs/ufuncs.md): cuda.vectorize / cuda.guvectorize default to target='cuda'
# ---------------------------------------------------------------------------------------------

def vectorize(ftylist_or_function=(), target="cuda", **kws):
    """``ptxjit.vectorize`` with target 'cuda' by default."""
    return _ufunc.vectorize(ftylist_or_function, target=target, **kws)


def guvectorize(ftylist, signature=None, target="cuda", **kws):
    """``ptxjit.guvectorize`` with target 'cuda' by default."""
    return _ufunc.guvectorize(ftylist, signature, target=target, **kws)


def reduce(functor):
    """Numba's ``cuda.reduce``: ``sum_reduce = cuda.reduce(lambda a, b: a + b)``, then
    ``sum_reduce(ary, size=None, res=None, init=0, stream=0)``."""
    return _ufunc.reduce(functor)


Reduce = _ufunc.Reduce  # numba-cuda's class behind cuda.reduce: cuda.Reduce(lambda a, b: a + b)

__all__ += ["vectorize", "guvectorize", "reduce", "Reduce"]
