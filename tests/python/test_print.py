"""print() in kernels and device functions, as Numba's CUDA target prints: items separated by a
space and ended by a newline, signed ints as %lld, unsigned as %llu, floats as %f, bools as
True/False, complex as (%f%+fj), strings as written. CPU: printf + fflush, so the output comes in
order with Python's; CUDA: vprintf, printed by the driver at the next synchronization."""
import contextlib
import ctypes
import warnings

import numpy as np
import pytest

from ptxjit import cuda, errors

GREETING = "module-level 100%"


@contextlib.contextmanager
def warnings_as_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def _run(backend, capfd, launch):
    """The text a launch prints (CUDA prints at synchronization, through C stdio)."""
    capfd.readouterr()
    launch()
    if backend == "cuda":
        cuda.synchronize()
    ctypes.CDLL(None).fflush(None)
    return capfd.readouterr().out


def test_numbers_strings_and_mixes(backend, capfd):
    @cuda.jit
    def k(i8, u8, i64, u64, f32, f64, b, z):
        print("ints:", i8[0], u8[0], i64[0], u64[0])
        print("floats:", f32[0], f64[0], 1.5, 2)
        print(b[0], not b[0], z[0], None)
        print("100% sure", "%d %s %%")

    args = (np.array([-5], np.int8), np.array([200], np.uint8),
            np.array([-2**63], np.int64), np.array([2**64 - 1], np.uint64),
            np.array([1.25], np.float32), np.array([-2.5e20]), np.array([True]),
            np.array([1.5 - 2j]))
    out = _run(backend, capfd, lambda: k[1, 1](*args))
    assert out == ("ints: -5 200 -9223372036854775808 18446744073709551615\n"
                   "floats: %f %f 1.500000 2\n" % (1.25, -2.5e20) +
                   "True False (1.500000-2.000000j) None\n"
                   "100% sure %d %s %%\n")


def test_special_floats(backend, capfd):
    @cuda.jit
    def k(x):
        print(x[0], x[1], x[2])

    out = _run(backend, capfd, lambda: k[1, 1](np.array([np.inf, -np.inf, 0.0])))
    assert out == "inf -inf 0.000000\n"


def test_sep_end_empty_print_and_tuples(backend, capfd):
    @cuda.jit
    def k(x):
        print(1, x[0], "a", sep=", ", end="|\n")
        print()
        print("no newline", end="")
        print(" then one", sep="")
        print((1, x[0]), (), (x[0],), ("s", (2, None)))
        print(end=None, sep=None)

    out = _run(backend, capfd, lambda: k[1, 1](np.array([7], np.int32)))
    assert out == "1, 7, a|\n\nno newline then one\n(1, 7) () (7,) (s, (2, None))\n\n"


def test_order_with_python_output(backend, capfd):
    @cuda.jit
    def k(x):
        print("kernel", x[0])

    def launch():
        print("before", flush=True)
        k[1, 1](np.array([3]))
        if backend == "cuda":  # the driver prints at synchronization, through C stdio
            cuda.synchronize()
            ctypes.CDLL(None).fflush(None)
        print("after", flush=True)  # on the CPU the kernel has flushed its output itself

    assert _run(backend, capfd, launch) == "before\nkernel 3\nafter\n"


@cuda.jit(device=True)
def _report(i, v):
    print("thread", i, "value", v)
    return v * 2


def test_print_in_device_function_from_many_threads(backend, capfd):
    @cuda.jit
    def k(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = _report(i, x[i])
            print(GREETING, i)

    x = np.arange(40, dtype=np.float32) / 4
    out = np.zeros_like(x)
    text = _run(backend, capfd, lambda: k[2, 32](x, out))
    lines = text.splitlines()
    # Each print is one call: lines from different threads never mix.
    assert sorted(lines) == sorted([f"thread {i} value {float(v):f}" for i, v in enumerate(x)] +
                                   [f"module-level 100% {i}" for i in range(40)])
    assert np.array_equal(out, x * 2)


def test_dim3_values_print_as_triples(backend, capfd):
    @cuda.jit
    def k():
        print(cuda.threadIdx, cuda.blockIdx)
        t = cuda.blockDim
        print(t, cuda.gridDim, sep="|")

    text = _run(backend, capfd, lambda: k[(2, 1, 1), (1, 2, 1)]())
    lines = sorted(text.splitlines())
    assert lines[:4] == ["(0, 0, 0) (0, 0, 0)", "(0, 0, 0) (1, 0, 0)", "(0, 1, 0) (0, 0, 0)",
                         "(0, 1, 0) (1, 0, 0)"]
    assert lines[4:] == ["(1, 2, 1)|(2, 1, 1)"] * 4


def test_more_than_32_values_print_the_format_and_warn(backend, capfd):
    # CUDA's printf formats at most 32 values: numba-cuda prints the format string instead and
    # warns when the kernel is compiled.
    @cuda.jit
    def k(r, z):
        print(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12],
              r[13], r[14], r[15], r[16], r[17], r[18], r[19], r[20], r[21], r[22], r[23], r[24],
              r[25], r[26], r[27], r[28], r[29], r[30], r[31], r[32], "100%")
        print(r[0], z[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11],
              r[12], r[13], r[14], r[15], r[16], r[17], r[18], r[19], r[20], r[21], r[22], r[23],
              r[24], r[25], r[26], r[27], r[28], r[29], r[30])  # 32 values: printed
        print(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12],
              r[13], r[14], r[15], r[16], r[17], r[18], r[19], r[20], r[21], r[22], r[23], r[24],
              r[25], r[26], r[27], r[28], r[29], r[30], sep=",", end=";\n")  # keywords

    # Device arrays: the second launch runs with warnings as errors, and host arrays warn of
    # their copies on the GPU.
    r, z = cuda.to_device(np.arange(33)), cuda.to_device(np.array([1.5]))
    with pytest.warns(errors.NumbaWarning, match="CUDA print\\(\\) cannot print more than 32 "
                                                 "items. The raw format string will be emitted"):
        out = _run(backend, capfd, lambda: k[1, 1](r, z))
    lines = out.splitlines()
    assert lines[0] == " ".join(["%lld"] * 33) + " 100%%"
    assert lines[1] == "0 1.500000 " + " ".join(str(i) for i in range(1, 31))
    assert lines[2] == ",".join(str(i) for i in range(31)) + ";"
    with warnings_as_errors():  # compiled once: launching again does not warn
        _run(backend, capfd, lambda: k[1, 1](r, z))


def k_print_array(x):
    print(x)


def k_print_file(x):
    print(x[0], file=None)


def k_print_string_variable(x):
    s = "text"
    print(s, x[0])


def k_print_sep_not_constant(x):
    print(x[0], sep=x[0])


@pytest.mark.parametrize("func, words", [
    (k_print_array, "print() of a value of type array(float64, 1d, C) is not supported"),
    (k_print_file, "print() with the keyword argument 'file' is not supported"),
    (k_print_string_variable, "print() of a string that is not a constant written in the call"),
    (k_print_sep_not_constant, "print(sep=...) with a value that is not a string constant"),
])
def test_unsupported_print(cpu, func, words):
    with pytest.raises(errors.UnsupportedError) as info:
        cuda.jit(func)[1, 1](np.zeros(2))
    err = info.value
    assert words in str(err), str(err)
    assert err.filename == __file__
    assert err.lineno == func.__code__.co_firstlineno + (2 if func is k_print_string_variable
                                                         else 1)


def test_ptx_uses_vprintf():
    def k(x, n):
        print("x =", x[0], "n =", n, True)

    from ptxjit import float32, int64
    ptx, _ = cuda.compile_ptx(k, (float32[:], int64))
    assert "vprintf" in ptx
    # The format is one string: "x = %f n = %lld %s\n" (bytes in the PTX; the trailing NUL is
    # implied by the array's size).
    fmt = "x = %f n = %lld %s\n".encode()
    assert "[%d] = {%s}" % (len(fmt) + 1, ", ".join(str(b) for b in fmt)) in ptx
