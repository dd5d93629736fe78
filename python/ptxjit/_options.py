"""Decorator options shared by ``cuda.jit`` and the ufunc decorators (``vectorize``,
``guvectorize``), read once here."""

# numba's FastMathOptions flags (LLVM's fast-math flag names, and "fast" for all of them)
FASTMATH_FLAGS = frozenset({"fast", "nnan", "ninf", "nsz", "arcp", "contract", "afn", "reassoc"})


def fastmath(value):
    """``fastmath=`` as a bool: read for truth, or numba's set of LLVM flag names, whose names
    are checked (ValueError, as numba's) and which turns fastmath on when not empty. ptxjit's
    fastmath is one switch, as numba-cuda's NVVM options are; compatibility.md says so."""
    if isinstance(value, (set, frozenset, list, tuple, dict)):
        unknown = sorted(str(f) for f in value if f not in FASTMATH_FLAGS)
        if unknown:
            raise ValueError(f"Unrecognized fastmath flags: {', '.join(unknown)} (numba's are "
                             f"{', '.join(sorted(FASTMATH_FLAGS))})")
        return len(value) > 0
    return bool(value)
