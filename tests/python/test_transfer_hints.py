"""cuda.In / cuda.Out / cuda.InOut (which copies a launch makes of a host array) and Numba's
argument extensions (kernel.extensions), on both backends."""
import numpy as np
import pytest

from ptxjit import cuda


def set_to_three(arr):
    arr[0] = 3


def copy_first(dst, src):
    dst[0] = src[0] + 1


def test_in_inout_and_default(backend):
    k = cuda.jit(set_to_three)
    a = np.zeros(1, np.int64)
    k[1, 1](cuda.In(a))
    assert a[0] == 0  # not copied back (on the CPU the kernel works on a copy)
    k[1, 1](cuda.InOut(a))
    assert a[0] == 3
    b = np.zeros(1, np.int64)
    k[1, 1](b)
    assert b[0] == 3


def test_out_is_copied_back_and_in_is_read(backend):
    k = cuda.jit(copy_first)
    src = np.array([41], np.int64)
    dst = np.zeros(1, np.int64)
    k[1, 1](cuda.Out(dst), cuda.In(src))
    assert dst[0] == 42 and src[0] == 41


def test_in_of_a_strided_view_leaves_it_alone(backend):
    k = cuda.jit(set_to_three)
    base = np.zeros(8, np.int64)
    k[1, 1](cuda.In(base[::-2]))
    assert not base.any()
    k[1, 1](cuda.InOut(base[::-2]))
    assert base[7] == 3 and base[:7].sum() == 0


def test_hints_around_device_arrays_and_bad_values(cpu):
    k = cuda.jit(set_to_three)
    d = cuda.to_device(np.zeros(1, np.int64))
    k[1, 1](cuda.In(d))  # nothing to copy: the kernel writes the device array
    assert d.copy_to_host()[0] == 3
    with pytest.raises(TypeError, match=r"cuda.In\(...\) takes an array, not int"):
        k[1, 1](cuda.In(5))
    assert repr(cuda.Out(5)) == "cuda.Out(5)"


class DefaultIn:
    """Numba's extension protocol: rewrites every argument before the launch."""

    def __init__(self):
        self.seen = []

    def prepare_args(self, ty, val, stream=None, retr=None):
        self.seen.append(str(ty))
        retr.append(lambda: self.seen.append("after"))
        return ty, val if isinstance(val, (cuda.In, cuda.Out, cuda.InOut)) else cuda.In(val)


def test_extensions_rewrite_arguments(backend):
    k = cuda.jit(set_to_three)
    assert k.extensions == []
    ext = DefaultIn()
    k.extensions.append(ext)
    a = np.zeros(1, np.int64)
    k[1, 1](a)
    assert a[0] == 0  # the extension made it cuda.In(a)
    assert ext.seen == ["array(int64, 1d, C)", "after"]
    k.extensions.clear()
    k[1, 1](a)
    assert a[0] == 3
    k2 = cuda.jit(extensions=[DefaultIn()])(set_to_three)  # the decorator option
    b = np.zeros(1, np.int64)
    k2[1, 1](b)
    assert b[0] == 0 and len(k2.extensions) == 1
