"""numba-cuda's CUDA vector types, usable in kernels (docs/language.md#vector-types).

``cuda.float32x4``, ``cuda.int16x2``, ... (one per base type int8 .. uint64, float32, float64 and
component count 1 .. 4) and CUDA C's names for them (``cuda.float4``, ``cuda.short2``,
``cuda.uchar4``, ...; an alias is the same object). In a kernel, calling one builds a vector from
scalars and smaller vectors of the same base type; its components read as ``.x``, ``.y``, ``.z``
and ``.w``. They have no value on the host: calling one there raises.
"""

import ctypes as _ct

_BASES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32",
          "float64")
_COMPONENTS = ("x", "y", "z", "w")

# CUDA C's base names and the C type each names on this platform: the base type is the integer
# of the C type's size and signedness (numba-cuda's table, where long and ulong follow NumPy's
# int_ and uint, gives the same on the platforms CUDA supports). ctypes, not NumPy, so that
# `import ptxjit` does not import NumPy.
_C_NAMES = (
    ("char", _ct.c_byte, True), ("short", _ct.c_short, True), ("int", _ct.c_int, True),
    ("long", _ct.c_long, True), ("longlong", _ct.c_longlong, True),
    ("uchar", _ct.c_ubyte, False), ("ushort", _ct.c_ushort, False), ("uint", _ct.c_uint, False),
    ("ulong", _ct.c_ulong, False), ("ulonglong", _ct.c_ulonglong, False),
    ("float", _ct.c_float, None), ("double", _ct.c_double, None),
)


def _base_name(ctype, signed):
    """The base type name (`int32`, `float64`, ...) of a ctypes scalar type."""
    bits = 8 * _ct.sizeof(ctype)
    if signed is None:
        return f"float{bits}"
    return f"{'int' if signed else 'uint'}{bits}"


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
    for cname, ctype, signed in _C_NAMES:
        base = _base_name(ctype, signed)
        for count in range(1, 5):
            v = table[f"{base}x{count}"]
            v.aliases.append(f"{cname}{count}")
            aliases[f"{cname}{count}"] = v
    return table, aliases


vector_types, _aliases = _make()
globals().update(vector_types)
globals().update(_aliases)
__all__ = list(vector_types) + list(_aliases)
