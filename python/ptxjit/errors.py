"""Exceptions and warnings raised by ptxjit.

Compile-time errors carry ``filename`` and ``lineno`` attributes and a message of the form
``file:line:col: message`` followed by the offending source line and a caret.
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


class CudaSupportError(PtxjitError):
    """CUDA was asked for but no usable driver or GPU is present."""


class CudaDriverError(PtxjitError):
    """A CUDA driver call failed; ``code`` is the ``CUresult`` value."""

    def __init__(self, message="", code=None):
        super().__init__(message)
        self.code = code


class PtxjitWarning(UserWarning):
    """Warnings from ptxjit (for example, falling back to the CPU backend)."""


# Numba spellings, so that code written against numba.core.errors keeps working.
NumbaError = PtxjitError
LoweringError = CompileError
NumbaWarning = PtxjitWarning

__all__ = [
    "PtxjitError",
    "CompileError",
    "UnsupportedError",
    "TypingError",
    "CudaSupportError",
    "CudaDriverError",
    "PtxjitWarning",
]
