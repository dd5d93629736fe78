"""``ptxjit.cuda.libdevice``: NVIDIA's libdevice math library, called by name from kernels, as
Numba's ``numba.cuda.libdevice``.

    from ptxjit.cuda import libdevice

    @cuda.jit
    def k(out, x):
        i = cuda.grid(1)
        s, c = libdevice.sincos(x[i])        # output parameters come back as a tuple
        out[i] = libdevice.fma(s, c, 1.0)

Each function is ``__nv_<name>`` of libdevice with Numba's signature (``libdevice.sinf.signature``
shows it); arguments are converted to the parameter types. On the CPU backend the same calls run
host versions of the functions (docs/language.md). The functions exist only inside kernels; the
list comes from the compiler (``ir/typing/Libdevice.def``), loaded on first use.
"""

_functions = None


def _table():
    global _functions
    if _functions is None:
        from ._loader import lib

        _functions = dict(lib().libdevice_functions())
    return _functions


class LibdeviceFunction:
    """A libdevice function: usable only in kernels and device functions."""

    __slots__ = ("_ptxjit_symbol", "__name__", "signature")

    def __init__(self, name, signature):
        self._ptxjit_symbol = "cuda.libdevice." + name
        self.__name__ = name
        self.signature = signature

    @property
    def __doc__(self):
        return f"libdevice's __nv_{self.__name__}: {self.signature}"

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"libdevice.{self.__name__} can only be used inside a kernel or "
                           f"device function compiled with @cuda.jit")

    def __repr__(self):
        return f"<ptxjit libdevice function {self.signature}>"


def __getattr__(name):
    table = _table()
    if name in table:
        fn = LibdeviceFunction(name, table[name])
        globals()[name] = fn
        return fn
    raise AttributeError(f"module 'ptxjit.cuda.libdevice' has no attribute {name!r} "
                         f"(libdevice has no __nv_{name} in Numba's list)")


def __dir__():
    return sorted(set(globals()) | set(_table()))
