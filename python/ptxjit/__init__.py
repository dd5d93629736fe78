"""ptxjit: Numba's CUDA dialect compiled by a JIT written in C++.

    from ptxjit import cuda          # instead of: from numba import cuda

Importing ptxjit is cheap: the compiler (LLVM) and the CUDA driver are loaded on first use.
"""

import os as _os

# Development builds kept beside each other write the _core extension into their own
# directory (cmake -DPTXJIT_CORE_DIR=...); PTXJIT_CORE_DIR points the package at one of them.
if _os.environ.get("PTXJIT_CORE_DIR"):
    __path__.insert(0, _os.environ["PTXJIT_CORE_DIR"])

from . import errors
from . import types
from . import cuda
from .ufunc import vectorize, guvectorize  # noqa: F401
from .cuda import _carray as carray, _farray as farray  # noqa: F401  (numba.carray/farray)
from .cuda import literal_unroll  # noqa: F401  (numba.literal_unroll)
from .types import (  # noqa: F401  (Numba's type names, importable from the package)
    void, none, boolean, bool_, b1,
    int8, int16, int32, int64, uint8, uint16, uint32, uint64,
    i1, i2, i4, i8, u1, u2, u4, u8, intp, uintp, intc, uintc, byte,
    char, uchar, short, ushort, int_, uint, long_, ulong, longlong, ulonglong,
    float16, float32, float64, f2, f4, f8, half, float_, double,
    complex64, complex128, c8, c16, from_dtype,
)

__version__ = "0.1.0"

__all__ = [
    "cuda", "errors", "types", "vectorize", "guvectorize", "carray", "farray", "literal_unroll",
    "void", "none", "boolean", "bool_", "b1",
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "intp", "uintp", "intc", "uintc", "byte",
    "char", "uchar", "short", "ushort", "int_", "uint", "long_", "ulong", "longlong", "ulonglong",
    "float16", "float32", "float64", "f2", "f4", "f8", "half", "float_", "double",
    "complex64", "complex128", "c8", "c16", "from_dtype",
]
