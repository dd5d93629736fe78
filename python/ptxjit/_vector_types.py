"""numba-cuda's CUDA vector types, usable in kernels (docs/language.md#vector-types).

``cuda.float32x4``, ``cuda.int16x2``, ... (one per base type int8 .. uint64, float32, float64 and
component count 1 .. 4) and CUDA C's names for them (``cuda.float4``, ``cuda.short2``,
``cuda.uchar4``, ...; an alias is the same object). In a kernel, calling one builds a vector from
scalars and smaller vectors of the same base type; its components read as ``.x``, ``.y``, ``.z``
and ``.w``. They have no value on the host: calling one there raises.
"""

import numpy as _np

_BASES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32",
          "float64")
_COMPONENTS = ("x", "y", "z", "w")

# CUDA C's base names and the NumPy type of the same C type on this platform (numba-cuda's
# table: long and ulong follow NumPy's int_ and uint).
_C_NAMES = (
    ("char", _np.byte), ("short", _np.short), ("int", _np.intc), ("long", _np.int_),
    ("longlong", _np.longlong), ("uchar", _np.ubyte), ("ushort", _np.ushort),
    ("uint", _np.uintc), ("ulong", _np.uint), ("ulonglong", _np.ulonglong),
    ("float", _np.single), ("double", _np.double),
)


class VectorType:
    """A CUDA vector type: ``count`` components of ``base`` (a NumPy type name), constructed in
    kernels only."""

    __slots__ = ("_ptxjit_symbol", "__name__", "base", "count", "aliases")

    def __init__(self, base, count):
        self.__name__ = f"{base}x{count}"
        self._ptxjit_symbol = "cuda." + self.__name__
        self.base = base
        self.count = count
        self.aliases = []  # CUDA C's names for it (numba-cuda's stub attribute)

    @property
    def num_elements(self):
        return self.count

    @property
    def attr_names(self):
        return _COMPONENTS[:self.count]

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"cuda.{self.__name__} can only be used inside a kernel or device "
                           f"function compiled with @cuda.jit")

    def __repr__(self):
        return f"<ptxjit vector type cuda.{self.__name__}>"


def _make():
    table = {}
    for base in _BASES:
        for count in range(1, 5):
            v = VectorType(base, count)
            table[v.__name__] = v
    aliases = {}
    for cname, nptype in _C_NAMES:
        base = _np.dtype(nptype).name
        for count in range(1, 5):
            v = table[f"{base}x{count}"]
            v.aliases.append(f"{cname}{count}")
            aliases[f"{cname}{count}"] = v
    return table, aliases


vector_types, _aliases = _make()
globals().update(vector_types)
globals().update(_aliases)
__all__ = list(vector_types) + list(_aliases)
