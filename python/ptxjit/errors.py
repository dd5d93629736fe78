"""Exceptions and warnings raised by ptxjit.

Compile-time errors carry ``filename`` and ``lineno`` attributes and a message of the form
``file:line:col: message`` followed by the offending source line and a caret. An error inside
a device function goes on with each call that led there, innermost first: ``in device function
'f', called from 'k' at file:line:col:`` with that call's source line and caret.
"""


class PtxjitError(Exception):
    """Base class of every ptxjit error."""


class CompileError(PtxjitError):
    """A kernel could not be compiled (also the base of the two classes below)."""

    def __init__(self, message="", filename=None, lineno=None, col=None):
        super().__init__(message)
        self.filename = filename
        self.lineno = lineno
        self.col = col


class UnsupportedError(CompileError):
    """Valid Python that the kernel language does not support."""


class TypingError(CompileError, TypeError):
    """Types that do not fit together (also a ``TypeError``)."""


class UndefinedNameError(TypingError, NameError):
    """A kernel or device function uses a name that is not defined (numba-cuda raises a
    ``TypingError`` reading "NameError: name 'x' is not defined"; this is both, and a
    ``NameError``). The message suggests the closest defined name when one is close."""


class CudaSupportError(PtxjitError):
    """CUDA was asked for but no usable driver or GPU is present."""


class CudaDriverError(PtxjitError):
    """A CUDA driver call failed; ``code`` is the ``CUresult`` value."""

    def __init__(self, message="", code=None):
        super().__init__(message)
        self.code = code


class PtxjitWarning(UserWarning):
    """Warnings from ptxjit (for example, falling back to the CPU backend)."""


# ---- Numba's names -------------------------------------------------------------------------
# So that `except` clauses and `pytest.warns` written against numba.core.errors (or
# numba.cuda.core.errors) keep working after `from numba... import X` becomes
# `from ptxjit.errors import X`.

NumbaError = PtxjitError
LoweringError = CompileError
NumbaWarning = PtxjitWarning


class NumbaPerformanceWarning(NumbaWarning):
    """Code that works but runs slowly: a grid too small to fill the GPU (fewer than 128
    blocks; once per kernel), host arrays copied to and from the device at a launch."""


class NumbaInvalidConfigWarning(NumbaWarning):
    """Options that do not work together (debug=True with opt=True)."""


class NumbaDeprecationWarning(NumbaWarning, DeprecationWarning):
    """A feature that will be removed."""


class NumbaPendingDeprecationWarning(NumbaWarning, PendingDeprecationWarning):
    """A feature that will be deprecated."""


class NumbaTypeError(TypingError):
    """Numba's TypeError (a TypingError in ptxjit: the compile-time type checks)."""


class NumbaValueError(CompileError, ValueError):
    """A compile-time value that is not allowed (also a ``ValueError``)."""


class NumbaNotImplementedError(UnsupportedError, NotImplementedError):
    """Numba's spelling of an unsupported feature (also a ``NotImplementedError``)."""


__all__ = [
    "PtxjitError",
    "CompileError",
    "UnsupportedError",
    "TypingError",
    "UndefinedNameError",
    "CudaSupportError",
    "CudaDriverError",
    "PtxjitWarning",
    "NumbaError",
    "LoweringError",
    "NumbaWarning",
    "NumbaPerformanceWarning",
    "NumbaInvalidConfigWarning",
    "NumbaDeprecationWarning",
    "NumbaPendingDeprecationWarning",
    "NumbaTypeError",
    "NumbaValueError",
    "NumbaNotImplementedError",
]
