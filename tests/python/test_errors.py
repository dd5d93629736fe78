"""Every error the user can meet: where it is raised, its class and its message."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from ptxjit import cuda, errors


def first_line(func):
    return func.__code__.co_firstlineno


def compile_error(kernel, *args, cls=errors.CompileError):
    with pytest.raises(cls) as info:
        kernel[1, 1](*args)
    return info.value


# --------------------------------------------------------------------------------------------
# UnsupportedError: file:line:col, the source line and a caret
# --------------------------------------------------------------------------------------------

def k_try(x):
    try:
        x[0] = 1
    except Exception:
        x[0] = 2


def k_with(x):
    with open("f"):
        x[0] = 1


def k_generator(x):
    yield x[0]


def k_comprehension(x):
    x[0] = sum([v for v in range(3)])


def k_lambda(x):
    f = lambda v: v + 1  # noqa: E731
    x[0] = f(1)


def k_plain_call(x):
    x[0] = helper(1)


def helper(v):
    return v


@pytest.mark.parametrize("func, line_offset, words", [
    (k_try, 1, "try"),
    (k_with, 1, "with"),
    (k_generator, 0, "generator"),
    # 3.11 compiles a comprehension to a nested function (named by its code object); 3.12+
    # inlines it
    (k_comprehension, 1, "list comprehension"),
    (k_lambda, 1, "lambda"),
    (k_plain_call, 1, "cuda.jit(device=True)"),
])
def test_unsupported_constructs(cpu, func, line_offset, words):
    kernel = cuda.jit(func)
    err = compile_error(kernel, np.zeros(2), cls=errors.UnsupportedError)
    msg = str(err)
    assert err.filename == __file__
    assert isinstance(err.lineno, int)
    assert first_line(func) <= err.lineno <= first_line(func) + line_offset + 1
    header, *rest = msg.splitlines()
    assert header.startswith(f"{__file__}:{err.lineno}:")
    assert words in msg, msg
    if rest:  # the source line and a caret under the construct
        assert len(rest) == 2, msg
        assert rest[1].strip().startswith("^")


def test_message_shows_the_source_line(cpu):
    def k(x):
        x[0] = undefined_thing  # noqa: F821

    err = compile_error(cuda.jit(k), np.zeros(1), cls=errors.UndefinedNameError)
    lines = str(err).splitlines()
    assert "undefined_thing" in lines[0]
    assert lines[1].strip() == "x[0] = undefined_thing  # noqa: F821"
    caret = lines[2]
    assert caret.strip() == "^" + "~" * (len("undefined_thing") - 1)
    assert lines[1].index("undefined_thing") == caret.index("^")
    assert err.lineno == first_line(k) + 1


# --------------------------------------------------------------------------------------------
# Undefined and misspelt names: numba-cuda's TypingError, also a NameError, with a suggestion
# --------------------------------------------------------------------------------------------

def test_undefined_name_is_a_typing_error_and_a_name_error(cpu):
    def k(x):
        value = 2.0
        x[0] = valeu  # noqa: F821

    err = compile_error(cuda.jit(k), np.zeros(1), cls=errors.UndefinedNameError)
    assert isinstance(err, errors.TypingError) and isinstance(err, NameError)
    assert isinstance(err, TypeError) and isinstance(err, errors.CompileError)
    first = str(err).splitlines()[0]
    assert first.endswith("NameError: name 'valeu' is not defined; did you mean 'value'?"), first
    assert err.lineno == first_line(k) + 2
    assert err.code == "UndefinedName"


def test_misspelt_globals_and_builtins_get_the_closest_defined_name(cpu):
    def misspelt_module(x):
        x[0] = mth.sqrt(2.0)  # noqa: F821

    def misspelt_builtin(x):
        for i in rnage(2):  # noqa: F821
            x[i] = i

    def nothing_close(x):
        x[0] = qqqqqq  # noqa: F821

    ns = {"math": __import__("math")}
    for func, hint in ((misspelt_module, "; did you mean 'math'?"),
                       (misspelt_builtin, "; did you mean 'range'?"),
                       (nothing_close, "is not defined")):
        src = textwrap.dedent(__import__("inspect").getsource(func))
        exec(compile(src, f"<{func.__name__}>", "exec"), ns)
        err = compile_error(cuda.jit(ns[func.__name__]), np.zeros(2), cls=errors.UndefinedNameError)
        assert str(err).splitlines()[0].endswith(hint), str(err)


def test_unknown_cuda_attribute_suggests_the_closest(cpu):
    def k(x):
        i = cuda.grdi(1)
        x[i] = 1.0

    err = compile_error(cuda.jit(k), np.zeros(2), cls=errors.UnsupportedError)
    assert str(err).splitlines()[0].endswith(
        "call to cuda.grdi is not supported; did you mean 'cuda.grid'?"), str(err)

    def k2(x):
        x[0] = cuda.threadidx.x

    err = compile_error(cuda.jit(k2), np.zeros(2), cls=errors.UnsupportedError)
    assert "did you mean 'cuda.threadIdx'?" in str(err).splitlines()[0], str(err)


# --------------------------------------------------------------------------------------------
# An error in a device function names the call that led there
# --------------------------------------------------------------------------------------------

@cuda.jit(device=True)
def dev_add_shape(a, b):
    return a + b.shape


@cuda.jit(device=True)
def dev_middle(a, b):
    return dev_add_shape(a, b) * 2


def test_typing_error_in_a_device_function_names_the_call_site(cpu):
    def k(out, x):
        out[0] = dev_add_shape(x[0], x)

    err = compile_error(cuda.jit(k), np.zeros(1), np.zeros(2), cls=errors.TypingError)
    lines = str(err).splitlines()
    callee_line = first_line(dev_add_shape.py_func) + 2
    call_line = first_line(k) + 1
    # The error where it is (in the device function), then where it was called from.
    assert lines[0].startswith(f"{__file__}:{callee_line}:"), lines
    assert "operator + is not defined for float64 and UniTuple(int64 x 1)" in lines[0]
    assert lines[1].strip() == "return a + b.shape"
    assert lines[3].startswith(f"in device function 'dev_add_shape', called from 'k' at "
                               f"{__file__}:{call_line}:"), lines
    assert lines[4].strip() == "out[0] = dev_add_shape(x[0], x)"
    caret = lines[5]
    assert caret.strip() == "^" + "~" * (len("dev_add_shape(x[0], x)") - 1)
    assert lines[4].index("dev_add_shape") == caret.index("^")
    assert err.lineno == callee_line  # .filename/.lineno stay the error's own place


def test_nested_device_functions_list_every_call_innermost_first(cpu):
    def k(out, x):
        out[0] = dev_middle(x[0], x)

    err = compile_error(cuda.jit(k), np.zeros(1), np.zeros(2), cls=errors.TypingError)
    calls = [line for line in str(err).splitlines() if line.startswith("in device function")]
    # file:line:column, the column (1-based) where the call expression starts
    col_middle = "    return dev_add_shape(a, b) * 2".index("dev_add_shape") + 1
    col_k = "        out[0] = dev_middle(x[0], x)".index("dev_middle") + 1
    assert calls == [
        f"in device function 'dev_add_shape', called from 'dev_middle' at "
        f"{__file__}:{first_line(dev_middle.py_func) + 2}:{col_middle}:",
        f"in device function 'dev_middle', called from 'k' at "
        f"{__file__}:{first_line(k) + 1}:{col_k}:",
    ], str(err)


def test_undefined_name_in_a_device_function_as_numba_cuda_reports_it(cpu):
    # numba-cuda's test_errors.test_typing_error: floor is deliberately not imported.
    src = textwrap.dedent("""
        from ptxjit import cuda

        @cuda.jit(device=True)
        def dev_func(x):
            return floor(x)

        @cuda.jit
        def kernel_func():
            dev_func(1.5)
        """)
    ns = {}
    exec(compile(src, __file__ + "-numba-case", "exec"), ns)
    with pytest.raises(errors.TypingError) as info:
        ns["kernel_func"][1, 1]()
    text = str(info.value)
    assert "NameError: name 'floor' is not defined" in text
    assert "in device function 'dev_func', called from 'kernel_func'" in text
    assert isinstance(info.value, NameError)


def test_wrong_argument_count_is_reported_at_the_call_only(cpu):
    def k(out):
        out[0] = dev_add_shape(1.0)

    err = compile_error(cuda.jit(k), np.zeros(1), cls=errors.TypingError)
    assert "in device function" not in str(err), str(err)
    assert err.lineno == first_line(k) + 1


# --------------------------------------------------------------------------------------------
# TypingError names the types
# --------------------------------------------------------------------------------------------

def test_typing_error_names_types(cpu):
    def k(x, out):
        out[0] = x + x.shape

    err = compile_error(cuda.jit(k), np.zeros(2), np.zeros(1), cls=errors.TypingError)
    assert isinstance(err, TypeError)
    assert "array(float64, 1d, C)" in str(err)
    assert err.lineno == first_line(k) + 1


def test_writing_a_readonly_array(cpu):
    def k(x):
        x[0] = 1.0

    x = np.zeros(2)
    x.setflags(write=False)
    err = compile_error(cuda.jit(k), x, cls=errors.TypingError)
    assert "read-only" in str(err) or "readonly" in str(err)


def test_kernel_returning_a_value(cpu):
    def k(x):
        return x[0]

    err = compile_error(cuda.jit(k), np.zeros(2), cls=errors.TypingError)
    assert "return" in str(err)


def test_calling_a_kernel_from_a_kernel_with_wrong_arguments(cpu):
    # A kernel called from device code is a device function (Numba's rule): its errors are.
    @cuda.jit
    def inner(x):
        x[0] = 1

    def outer(x):
        inner(x, 2)

    err = compile_error(cuda.jit(outer), np.zeros(2), cls=errors.TypingError)
    assert "inner() takes 1 arguments but 2 were given" in str(err)


def test_runaway_recursive_device_function(cpu):
    # Recursion is typed from the returns that do not recurse (tests/python/test_recursion.py);
    # with none, the error names the function and points at the recursive call.
    @cuda.jit(device=True)
    def rec(n):
        return rec(n - 1) + 1

    src = "def k(x):\n    x[0] = rec(3)\n"
    ns = {"rec": rec}
    exec(compile(src, "<recursion>", "exec"), ns)
    globals()["rec"] = rec  # rec resolves itself as a global
    try:
        err = compile_error(cuda.jit(ns["k"]), np.zeros(1, dtype=np.int64),
                            cls=errors.TypingError)
        assert "cannot type infer runaway recursion" in str(err) and "'rec'" in str(err)
        assert "return rec(n - 1) + 1" in str(err)
    finally:
        del globals()["rec"]


# --------------------------------------------------------------------------------------------
# Launch errors: TypeError for arguments, ValueError for configurations
# --------------------------------------------------------------------------------------------

@cuda.jit
def two_args(x, y):
    x[0] = y


def test_wrong_argument_count(cpu):
    with pytest.raises(TypeError, match=r"two_args\(\) takes 2 positional arguments but 1 was"):
        two_args[1, 1](np.zeros(1))
    with pytest.raises(TypeError, match="but 3 were given"):
        two_args[1, 1](np.zeros(1), 1, 2)


@pytest.mark.parametrize("value, type_name", [
    ("text", "str"), ([1, 2], "list"), (None, "NoneType"), (object(), "object"),
    (2**70, "int"), (np.zeros(2, dtype="M8[2s]"), "ndarray"),
    (np.zeros(2, dtype=">f8"), "ndarray"), ({1: 2}, "dict"),
])
def test_unsupported_argument_types(cpu, value, type_name):
    with pytest.raises(TypeError) as info:
        two_args[1, 1](np.zeros(1), value)
    msg = str(info.value)
    assert "argument 'y'" in msg and type_name in msg, msg


@pytest.mark.parametrize("config", [
    (0, 1), (1, 0), (-1, 32), (1, 2048), ((1, 2, 3, 4), 1), (1, (1, 1, 1, 1)), (1, ()),
    (1, (2048, 1)), (1, (1, 1, 65)), ((1, 2**20), 1),
])
def test_bad_launch_configuration(cpu, config):
    with pytest.raises(ValueError):
        two_args[config](np.zeros(1), 1.0)


def test_bad_launch_configuration_types(cpu):
    with pytest.raises(TypeError):
        two_args[1.5, 1]
    with pytest.raises(TypeError):
        two_args["1", 1]
    with pytest.raises(ValueError):
        two_args[1]
    with pytest.raises(ValueError):
        two_args[1, 1, 0, 0, 0]
    with pytest.raises(ValueError):
        two_args[1, 1, 0, -5]


def test_calling_a_kernel_without_configuration(cpu):
    with pytest.raises(ValueError, match="launch configuration was not specified"):
        two_args(np.zeros(1), 1.0)


def test_errors_do_not_poison_later_launches(cpu):
    with pytest.raises(TypeError):
        two_args[1, 1](np.zeros(1), "bad")
    x = np.zeros(1)
    two_args[1, 1](x, 5.0)
    assert x[0] == 5.0


# --------------------------------------------------------------------------------------------
# Targets
# --------------------------------------------------------------------------------------------

def run_python(code, env, extra_env=None):
    env = dict(env)
    env.pop("PTXJIT_TARGET", None)
    env.update(extra_env or {})
    return subprocess.run([sys.executable, "-c", code], env=env,
                          capture_output=True, text=True, timeout=120)


KERNEL_PROGRAM = textwrap.dedent("""
    import numpy as np
    from ptxjit import cuda
    @cuda.jit
    def k(x):
        x[0] = 42
    x = np.zeros(1)
    k[1, 1](x)
    print("result", x[0])
""")


@pytest.mark.skipif(cuda.is_available(), reason="checks the behaviour without a CUDA driver")
def test_cuda_target_without_driver_is_a_clear_error(subprocess_env):
    r = run_python(KERNEL_PROGRAM, subprocess_env, {"PTXJIT_TARGET": "cuda"})
    assert r.returncode != 0
    assert "CudaSupportError" in r.stderr
    assert "PTXJIT_TARGET=cuda" in r.stderr and "libcuda" in r.stderr


@pytest.mark.skipif(cuda.is_available(), reason="checks the behaviour without a CUDA driver")
def test_default_target_falls_back_to_cpu_with_one_warning(subprocess_env):
    r = run_python(KERNEL_PROGRAM + "\nk[1, 1](x)\nprint(cuda.is_available())\n",
                   subprocess_env)
    assert r.returncode == 0, r.stderr
    assert "result 42.0" in r.stdout
    assert r.stderr.count("PtxjitWarning") == 1, r.stderr
    assert "CPU backend" in r.stderr


def test_cpu_target_is_silent(subprocess_env):
    r = run_python(KERNEL_PROGRAM, subprocess_env, {"PTXJIT_TARGET": "cpu"})
    assert r.returncode == 0, r.stderr
    assert "result 42.0" in r.stdout
    assert "Warning" not in r.stderr


def test_bad_target_value(subprocess_env):
    r = run_python(KERNEL_PROGRAM, subprocess_env, {"PTXJIT_TARGET": "tpu"})
    assert r.returncode != 0
    assert "ValueError" in r.stderr and "PTXJIT_TARGET" in r.stderr


@pytest.mark.gpu
def test_cuda_target_with_a_gpu(subprocess_env):
    r = run_python(KERNEL_PROGRAM + "\nfrom ptxjit import _core\nprint(_core.current_target())\n",
                   subprocess_env, {"PTXJIT_TARGET": "cuda"})
    assert r.returncode == 0, r.stderr
    assert "result 42.0" in r.stdout and "cuda" in r.stdout


DUMP_PROGRAM = '''
import numpy as np
from ptxjit import cuda, vectorize

@cuda.jit(device=True)
def twice(v):
    return v * 2.0

@cuda.jit
def k(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = twice(x[i])

k[1, 4](np.arange(4.0))

@vectorize(["float32(float32)"], target="cuda")
def inc(v):
    return v + 1

inc(np.arange(3, dtype=np.float32))
cuda.compile_ptx(k.py_func, "void(float32[:])")
'''


def test_ptxjit_dump_prints_every_stage(tmp_path, subprocess_env):
    """PTXJIT_DUMP=ir,typed,llvm,ptx prints each stage of every compile to stderr, headed by the
    function and its signature; unknown stage names are reported."""
    import subprocess
    import sys

    script = tmp_path / "dumped.py"
    script.write_text(DUMP_PROGRAM)
    env = dict(subprocess_env, PTXJIT_TARGET="cpu", PTXJIT_DUMP="ir,typed,llvm,ptx,nonsense")
    r = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    err = r.stderr
    assert "PTXJIT_DUMP: unknown stage(s) 'nonsense' ignored" in err
    assert "==== ptxjit ir: k(array(float64, 1d, C)) ====\nfunction k(x) kernel" in err
    assert "==== ptxjit typed: twice(float64) ====\nfunction twice(v: float64) device" in err
    # (the CPU backend checks array indexing by default: docs/reliability.md)
    assert "==== ptxjit llvm: k(array(float64, 1d, C)) [host O3 boundscheck] ====" in err
    assert "==== ptxjit llvm: inc(float32) loop elementwise flat value" in err
    assert "==== ptxjit ptx: k(array(float32, 1d, A)) compile_ptx [cuda sm_90" in err
    assert ".entry " in err
    quiet = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                           timeout=120, env=dict(subprocess_env, PTXJIT_TARGET="cpu"))
    assert quiet.returncode == 0 and "==== ptxjit" not in quiet.stderr
