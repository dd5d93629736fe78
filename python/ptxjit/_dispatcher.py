"""Numba's dispatcher API on ptxjit's kernel object (``ptxjit._core.Dispatcher``): ``overloads``,
``specialize``/``specializations``, ``compile``, the kernel attributes (``get_regs_per_thread``
and friends) and ``inspect_asm``/``inspect_sass``. Everything on the launch path stays in C++;
these are the inspection and compilation calls around it, written here once and installed on the
class when the extension is loaded (``_loader.lib``).

Signatures are keyed as Numba keys them: by the tuple of argument types (``sig.args``), with
ptxjit's type objects, which compare equal to Numba's (``types.as_type``).
"""

import operator as _operator
import re

from . import types as _types

_ATTRIBUTES = ("regs_per_thread", "const_mem_size", "shared_mem_per_block",
               "local_mem_per_thread", "max_threads_per_block")


class CompiledKernel:
    """One compiled signature of a kernel (Numba's ``_Kernel``, the values of
    ``dispatcher.overloads``): its types, code and CUDA attributes."""

    __slots__ = ("_dispatcher", "argument_types")

    def __init__(self, dispatcher, argument_types):
        self._dispatcher = dispatcher
        self.argument_types = tuple(argument_types)

    @property
    def signature(self):
        return _types.void(*self.argument_types)

    @property
    def py_func(self):
        return self._dispatcher.py_func

    def inspect_llvm(self):
        """The LLVM IR of the CUDA compile of this signature."""
        return self._dispatcher.inspect_llvm(self.argument_types)

    def inspect_asm(self, cc=None):
        """The PTX of this signature (Numba's "asm" of a CUDA kernel is PTX)."""
        return _check_cc(cc, self._dispatcher.inspect_ptx(self.argument_types))

    def inspect_lto_ptx(self, cc=None):
        """The PTX of this signature: ptxjit compiles a kernel and the device functions it calls
        as one LLVM module, so its PTX is already what link-time optimization gives."""
        return self.inspect_asm(cc)

    def inspect_sass(self):
        """The SASS of this signature (toolkit's ptxas and cuobjdump/nvdisasm)."""
        return _sass(self._dispatcher.inspect_ptx(self.argument_types))

    def inspect_sass_cfg(self):
        """The control-flow graph of this signature's SASS in DOT (ptxas, nvdisasm -cfg)."""
        return _sass(self._dispatcher.inspect_ptx(self.argument_types), cfg=True)

    @property
    def _type_annotation(self):
        """The types typing gave this signature's Python locals, as Numba's type annotation
        holds them: ``typemap`` maps each local's name to its type object (a local that holds
        values of different types in different parts of the function has one entry per version,
        as numba's SSA names them: ``x``, ``x.1``, ...)."""
        return TypeAnnotation(self._dispatcher, self.argument_types)

    def _attribute(self, name):
        return self._dispatcher._attributes(self.argument_types)[name]

    @property
    def cooperative(self):
        """True when the kernel synchronizes its grid (``cuda.cg.this_grid()``, or a foreign
        function declared with ``use_cooperative=True``): it is launched cooperatively, every
        block resident at once."""
        return self._dispatcher._cooperative(self.argument_types)

    def max_cooperative_grid_blocks(self, blockdim, dynsmemsize=0):
        """The most blocks of ``blockdim`` threads (an int or a tuple of up to three) a
        cooperative launch of this kernel may have on the current device, with ``dynsmemsize``
        bytes of dynamic shared memory per block (numba-cuda's)."""
        if isinstance(blockdim, tuple):
            if not 1 <= len(blockdim) <= 3:
                raise ValueError(f"blockdim must have 1 to 3 dimensions, got {blockdim!r}")
            threads = 1
            for d in blockdim:
                threads *= _operator.index(d)
        else:
            threads = _operator.index(blockdim)
        return self._dispatcher._max_cooperative_grid_blocks(self.argument_types, threads,
                                                             _operator.index(dynsmemsize))

    regs_per_thread = property(lambda self: self._attribute("regs_per_thread"))
    const_mem_size = property(lambda self: self._attribute("const_mem_size"))
    shared_mem_per_block = property(lambda self: self._attribute("shared_mem_per_block"))
    local_mem_per_thread = property(lambda self: self._attribute("local_mem_per_thread"))
    max_threads_per_block = property(lambda self: self._attribute("max_threads_per_block"))

    def __repr__(self):
        return f"<compiled kernel {self._dispatcher.__name__}{self.signature!r}>"


class TypeAnnotation:
    """The typing of one compiled signature (Numba's ``TypeAnnotation``, which programs reach as
    ``overloads[sig]._type_annotation``): ``typemap``, each Python local's type."""

    __slots__ = ("typemap",)

    def __init__(self, dispatcher, argument_types):
        self.typemap = {name: _types.from_description(desc)
                        for name, desc in dispatcher._local_types(argument_types).items()}

    def __repr__(self):
        return f"<TypeAnnotation {self.typemap!r}>"


def _ptx_target(ptx):
    """The architecture of `ptx`'s .target line ("sm_90", "sm_90a"), or None."""
    m = re.search(r"^\.target\s+(sm_\w+)", ptx, re.M)
    return m.group(1) if m else None


def _check_cc(cc, ptx):
    """`ptx` when `cc` is None or the (major, minor) it was compiled for, as its .target line
    says; a TypeError naming both otherwise."""
    if cc is None:
        return ptx
    m = re.fullmatch(r"sm_(\d+)(\d)a?", _ptx_target(ptx) or "")
    target = (int(m.group(1)), int(m.group(2))) if m else None
    try:
        asked = tuple(_operator.index(c) for c in cc)
    except TypeError:
        raise TypeError(f"inspect_asm: cc must be a (major, minor) tuple, got {cc!r}") from None
    if asked == target:
        return ptx
    raise TypeError(f"inspect_asm(cc={cc!r}): this kernel is compiled for compute capability "
                    f"{target} (the oldest of the visible devices); use "
                    f"cuda.compile_ptx(func, sig, cc={cc!r}) for another one")


# ---- methods and properties installed on ptxjit._core.Dispatcher ------------------------------

def _overloads(self):
    """``{argument types: CompiledKernel}`` for every signature compiled so far."""
    return {sig: CompiledKernel(self, sig) for sig in self.signatures}


def _configure(self, griddim, blockdim, stream=0, sharedmem=0):
    """``kernel[griddim, blockdim, stream, sharedmem]`` (Numba's ``configure``)."""
    return self[griddim, blockdim, stream, sharedmem]


def _specializations(self):
    """``{argument types: kernel}`` of the kernels made by ``specialize``."""
    return self.__dict__.setdefault("_ptxjit_specializations", {})


def _specialized(self):
    """True for kernels compiled for given signatures only (eager, or made by specialize)."""
    return bool(self.__dict__.get("_ptxjit_eager", False))


def _specialize(self, *args):
    """A kernel compiled for the types of ``args`` (type objects or values) only, made once per
    type tuple. A kernel that already has signatures cannot be specialized (RuntimeError)."""
    if _specialized(self):
        raise RuntimeError("Dispatcher already specialized")
    argtypes = tuple(_types.as_type(a) if _is_type(a) else _typeof(a) for a in args)
    cache = _specializations(self)
    if argtypes not in cache:
        options = dict(self.__dict__.get("_ptxjit_options", {}), specialized=True)
        spec = _make_dispatcher(self.py_func, [_types.signature_text(argtypes)], options)
        spec.extensions.extend(self.extensions)
        cache[argtypes] = spec
    return cache[argtypes]


def _is_type(a):
    return isinstance(a, _types.Type) or _types._is_numba_type(a)


def _typeof(value):
    return _types.from_description(_core.typeof(value))


def _compile(self, sig):
    """Compiles ``sig`` for the backend in use; returns its CompiledKernel."""
    return CompiledKernel(self, self._compile(sig))


def _per_signature(name):
    def get(self, signature=None):
        if signature is not None:  # a Signature, a tuple of types or a string, as the C++ takes
            return self._attributes(signature)[name]
        if _specialized(self) and len(self.signatures) == 1:
            return self._attributes(self.signatures[0])[name]
        return {sig: self._attributes(sig)[name] for sig in self.signatures}

    get.__name__ = "get_" + name
    get.__doc__ = (f"The kernel's {name.replace('_', ' ')} (the CUDA driver's attribute) for "
                   f"`signature`; without one, a dict over the compiled signatures (a single "
                   f"value for a kernel compiled for given signatures).")
    return get


def _inspect_sass(self, signature=None, cfg=False):
    """SASS, through the CUDA toolkit's ptxas and cuobjdump (or nvdisasm)."""
    if self.device:  # compiled into its callers: no binary of its own (numba-cuda's message)
        raise RuntimeError(f"Cannot inspect SASS of a device function "
                           f"('{self.py_func.__name__}' is compiled into the kernels that call "
                           f"it)")
    if signature is not None:
        return _sass(self.inspect_ptx(signature), cfg)
    return {sig: _sass(ptx, cfg) for sig, ptx in self.inspect_ptx().items()}


def _inspect_sass_cfg(self, signature=None):
    """The control-flow graph of the SASS in DOT, through ptxas and nvdisasm -cfg."""
    return _inspect_sass(self, signature, cfg=True)


_LINE = re.compile(r"^(.*?)\s*; line (\d+)$")


def _inspect_types(self, file=None, signature=None, pretty=False, style="default"):
    """Prints the typed IR of each compiled signature (or of `signature`), the Python source
    line above the instructions it became (Numba's ``inspect_types``; the IR is ptxjit's, one
    instruction per line with its type after " : "). Writes to `file` (``sys.stdout`` when
    None)."""
    import linecache
    import sys

    if pretty:
        raise NotImplementedError("inspect_types(pretty=True) is not supported: ptxjit prints "
                                  "its typed IR as text (pretty=False)")
    if style != "default":
        raise ValueError(f"inspect_types: style={style!r} applies to pretty=True, which ptxjit "
                         f"does not support")
    out = sys.stdout if file is None else file
    code = self.py_func.__code__
    for sig in self.signatures if signature is None else [signature]:
        sig, text = self._typed_ir(sig)
        print(f"{self.py_func.__name__} ({', '.join(str(t) for t in sig)})", file=out)
        print("-" * 80, file=out)
        print(f"# File: {code.co_filename}", file=out)
        shown = None
        for line in text.splitlines():
            m = _LINE.match(line)
            if m:
                line, number = m.group(1), int(m.group(2))
                if number != shown:
                    shown = number
                    source = linecache.getline(code.co_filename, number).rstrip()
                    print(f"# --- LINE {number} ---", file=out)
                    if source:
                        print(f"# {source}", file=out)
            print(line, file=out)
        print("=" * 80, file=out)


def _toolkit_tool(name):
    import os
    import shutil

    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root:
            path = os.path.join(root, "bin", name)
            if os.access(path, os.X_OK):
                return path
    return shutil.which(name)


def _sass(ptx, cfg=False):
    """The SASS of `ptx` (assembled by the toolkit's ptxas), or with `cfg` its control-flow
    graph in DOT (nvdisasm -cfg, as numba-cuda's inspect_sass_cfg)."""
    import os
    import subprocess
    import tempfile

    what = "inspect_sass_cfg" if cfg else "inspect_sass"
    ptxas, cuobjdump, nvdisasm = (_toolkit_tool(n) for n in ("ptxas", "cuobjdump", "nvdisasm"))
    if cfg:
        dump_cmd = [nvdisasm, "-cfg"] if nvdisasm else None
    else:
        dump_cmd = [cuobjdump, "-sass"] if cuobjdump else [nvdisasm] if nvdisasm else None
    if ptxas is None or dump_cmd is None:
        raise RuntimeError(f"{what} needs the CUDA toolkit's ptxas and "
                           f"{'nvdisasm' if cfg else 'cuobjdump or nvdisasm'} (looked in "
                           f"$CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin and PATH)")
    target = _ptx_target(ptx)
    if target is None:
        raise RuntimeError(f"{what}: the PTX has no .target line")
    with tempfile.TemporaryDirectory(prefix="ptxjit-sass-") as tmp:
        src, cubin = os.path.join(tmp, "k.ptx"), os.path.join(tmp, "k.cubin")
        with open(src, "w") as f:
            f.write(ptx)
        for cmd in ([ptxas, f"-arch={target}", src, "-o", cubin],
                    dump_cmd + [cubin]):
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError(f"{what}: {os.path.basename(cmd[0])} failed "
                                   f"(exit {r.returncode}): {r.stderr.strip()}")
        return r.stdout


def prepare_args(extensions, args, stream):
    """A launch's arguments after the kernel's extensions (Numba's protocol: each extension's
    ``prepare_args(ty, val, stream=, retr=)`` returns ``(ty, val)`` for every argument, in the
    order given, and may append callbacks to ``retr``), and the callbacks to run after the
    launch. ``ty`` is the argument's type as a launch types it (None when it has none)."""
    retr = []
    out = []
    for val in args:
        try:
            ty = _typeof(val)
        except Exception:
            ty = None
        for ext in extensions:
            ty, val = ext.prepare_args(ty, val, stream=stream, retr=retr)
        out.append(val)
    return tuple(out), retr


_core = None  # the extension module, and _loader.make_dispatcher: given by install()
_make_dispatcher = None


def install(core, make_dispatcher):
    """Adds Numba's dispatcher API to ``core.Dispatcher``; `make_dispatcher` builds the kernels
    of ``specialize`` (passed in, so that this module imports nothing of the loader's)."""
    global _core, _make_dispatcher
    _core, _make_dispatcher = core, make_dispatcher
    cls = core.Dispatcher
    cls.overloads = property(_overloads)
    # older Numba's name of the same mapping (AutoJitCUDAKernel.definitions)
    cls.definitions = property(_overloads)
    cls.configure = _configure
    cls.specializations = property(_specializations)
    cls.specialized = property(_specialized)
    cls.specialize = _specialize
    cls.compile = _compile
    cls.inspect_asm = cls.inspect_ptx  # Numba's "asm" of a CUDA kernel is its PTX
    # Numba's link-time-optimized PTX: ptxjit's PTX is one module with every device function
    # the kernel calls, optimized together, so it is the same text.
    cls.inspect_lto_ptx = cls.inspect_ptx
    cls.inspect_sass = _inspect_sass
    cls.inspect_sass_cfg = _inspect_sass_cfg
    cls.inspect_types = _inspect_types
    for name in _ATTRIBUTES:
        setattr(cls, "get_" + name, _per_signature(name))
