"""Numba's exception and warning classes in ptxjit.errors, raised and warned where numba-cuda
does: launch configurations (messages in Numba's words), the low-occupancy and implicit-copy
performance warnings (CUDA backend), forall's task count."""
import warnings

import numpy as np
import pytest

from ptxjit import cuda, errors


def noop(x):
    pass


def test_numba_class_names():
    assert issubclass(errors.NumbaPerformanceWarning, errors.NumbaWarning)
    assert issubclass(errors.NumbaInvalidConfigWarning, UserWarning)
    assert issubclass(errors.NumbaDeprecationWarning, DeprecationWarning)
    assert issubclass(errors.NumbaTypeError, TypeError)
    assert issubclass(errors.NumbaTypeError, errors.TypingError)
    assert issubclass(errors.NumbaValueError, ValueError)
    assert issubclass(errors.NumbaNotImplementedError, NotImplementedError)
    assert errors.NumbaError is errors.PtxjitError
    for name in errors.__all__:
        assert hasattr(errors, name)


def test_launch_configuration_errors_in_numbas_words(cpu):
    k = cuda.jit(noop)
    with pytest.raises(ValueError, match=r"griddim must be a sequence of 1, 2 or 3 integers, "
                                         r"got \[1, 2, 3, 4\]"):
        k[(1, 2, 3, 4), (5, 6)]
    with pytest.raises(ValueError, match=r"blockdim must be a sequence of 1, 2 or 3 integers, "
                                         r"got \[3, 4, 5, 6\]"):
        k[(1, 2), (3, 4, 5, 6)]
    with pytest.raises(TypeError, match=r"griddim must be a sequence of integers, got \[2.0\]"):
        k[2.0, 3]
    with pytest.raises(TypeError, match=r"blockdim must be a sequence of integers, got \[1, 'a'\]"):
        k[1, (1, "a")]
    with pytest.raises(ValueError, match="Can't create ForAll with negative task count"):
        k.forall(-1)


def test_no_performance_warnings_on_the_cpu_backend(cpu):
    k = cuda.jit(noop)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        k[1, 1](np.zeros(4))  # a small grid and a host array: nothing to warn about on the CPU


@pytest.mark.gpu
def test_low_occupancy_warns_once_per_kernel(cuda_target):
    k = cuda.jit(noop)
    with pytest.warns(errors.NumbaPerformanceWarning, match="Grid size 1 will likely result in "
                                                            "GPU under-utilization"):
        k[1, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        k[1, 1]  # once per kernel
        cuda.jit(noop)[256, 256]  # 256 blocks: no warning


@pytest.mark.gpu
def test_host_arrays_warn_of_the_copy(cuda_target):
    k = cuda.jit(noop)
    with pytest.warns(errors.NumbaPerformanceWarning,
                      match="Host array used in CUDA kernel will incur copy overhead"):
        k[256, 1](np.zeros(4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        k[256, 1](cuda.to_device(np.zeros(4)))  # a device array: no copy, no warning


@pytest.mark.gpu
def test_performance_warnings_can_be_turned_into_errors(cuda_target):
    k = cuda.jit(noop)
    with warnings.catch_warnings():
        warnings.simplefilter("error", errors.NumbaPerformanceWarning)
        with pytest.raises(errors.NumbaPerformanceWarning):
            k[256, 1](np.zeros(4))
        with pytest.raises(errors.NumbaPerformanceWarning):
            k[1, 1]


@pytest.mark.gpu
def test_numbas_config_silences_the_performance_warnings(cuda_target, monkeypatch):
    """A program that imported numba-cuda's config and set CUDA_LOW_OCCUPANCY_WARNINGS or
    CUDA_WARN_ON_IMPLICIT_COPY to 0 (numba's way, as its CUDATestCase does) gets no warning;
    ptxjit reads the setting (never importing numba) when a warning is due."""
    import types as pytypes
    import sys

    config = pytypes.ModuleType("numba.cuda.core.config")
    config.CUDA_LOW_OCCUPANCY_WARNINGS = 0
    config.CUDA_WARN_ON_IMPLICIT_COPY = 0
    monkeypatch.setitem(sys.modules, "numba.cuda.core.config", config)
    k = cuda.jit(noop)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        k[1, 1](np.zeros(4))
    config.CUDA_LOW_OCCUPANCY_WARNINGS = 1  # read again at the next launch due a warning
    with pytest.warns(errors.NumbaPerformanceWarning, match="low occupancy"):
        k[1, 1]
    config.CUDA_WARN_ON_IMPLICIT_COPY = 1
    with pytest.warns(errors.NumbaPerformanceWarning, match="copy overhead"):
        k[256, 1](np.zeros(4))
