"""The bench's bare C++ peers, built with the host's C++ compiler: the separate-process launcher
(bare_launch.cpp), the same loop as a shared library timed inside ptxjit's process
(bare_launch_lib.cpp, through ctypes: BareLauncher) and CUDA's own start-up (bare_startup.cpp).

They load the driver with dlopen, so they build where no driver is installed; the library they
load is $PTXJIT_BENCH_LIBCUDA, else $PTXJIT_LIBCUDA, else libcuda.so.1 (bare_driver.h).
"""
import ctypes
import os
import shutil
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))

# name -> (source, output file, shared library?)
TARGETS = {
    "bare": ("bare_launch.cpp", "bare_launch", False),
    "bare_lib": ("bare_launch_lib.cpp", "libbare_launch.so", True),
    "bare_startup": ("bare_startup.cpp", "bare_startup", False),
}


def compile_command(cxx, name, out_dir, cuda_home):
    """The compiler command line that builds TARGETS[name] into out_dir."""
    src, out, shared = TARGETS[name]
    cmd = [cxx, "-O2", "-std=c++17", f"-I{cuda_home}/include"]
    if shared:
        cmd += ["-shared", "-fPIC"]
    return cmd + [os.path.join(HERE, src), "-ldl", "-o", os.path.join(out_dir, out)]


def compile_if_stale(cmd, out, sources):
    """Runs the compiler command `cmd`, which writes `out`, unless `out` is newer than every
    file of `sources`. Returns None if `out` is up to date or was built, else the compiler's
    stderr (stripped)."""
    if os.path.exists(out) and os.path.getmtime(out) > max(map(os.path.getmtime, sources)):
        return None
    r = subprocess.run(cmd, capture_output=True, text=True)
    return None if r.returncode == 0 else r.stderr.strip()


def build_bare(build_dir, cuda_home=None):
    """Builds every TARGETS entry into build_dir (skipping those newer than their sources);
    returns ({name: path}, {name: why missing})."""
    cuda_home = cuda_home or os.environ.get("CUDA_HOME", "/usr/local/cuda")
    os.makedirs(build_dir, exist_ok=True)
    cxx = shutil.which("g++") or shutil.which("c++")
    built, missing = {}, {}
    for name, (src, out, _) in TARGETS.items():
        if not cxx:
            missing[name] = "no C++ compiler (g++ or c++)"
            continue
        path = os.path.join(build_dir, out)
        err = compile_if_stale(compile_command(cxx, name, build_dir, cuda_home), path,
                               [os.path.join(HERE, f) for f in (src, "bare_driver.h")])
        if err is None:
            built[name] = path
        else:
            missing[name] = f"{os.path.basename(cxx)} failed on {src}: " + err[-300:]
    return built, missing


class BareLauncher:
    """bare_launch_lib.cpp through ctypes: a bare cuLaunchKernel loop in this process's primary
    context (the one ptxjit uses). Errors are raised as RuntimeError with the driver's text."""

    def __init__(self, path):
        lib = ctypes.CDLL(path)
        lib.bare_open.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                  ctypes.c_int]
        lib.bare_open.restype = ctypes.c_void_p
        lib.bare_launch_us.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.bare_launch_us.restype = ctypes.c_double
        lib.bare_launch_buffer_us.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.bare_launch_buffer_us.restype = ctypes.c_double
        lib.bare_same_context.argtypes = [ctypes.c_void_p]
        lib.bare_same_context.restype = ctypes.c_int
        lib.bare_param_count.argtypes = [ctypes.c_void_p]
        lib.bare_param_count.restype = ctypes.c_int
        lib.bare_close.argtypes = [ctypes.c_void_p]
        lib.bare_close.restype = None
        lib.bare_last_error.argtypes = []
        lib.bare_last_error.restype = ctypes.c_char_p
        self._lib = lib

    def _error(self, what):
        return RuntimeError(f"{what}: {self._lib.bare_last_error().decode(errors='replace')}")

    def open(self, ptx, entry, layout, block):
        """A handle for launches of `entry` of the PTX text on grid 1 x block, arguments made
        from `layout` (e.g. "f64,a1,a1,a1"); the primary context is made current here."""
        h = self._lib.bare_open(ptx.encode(), entry.encode(), layout.encode(), int(block))
        if not h:
            raise self._error("bare launcher")
        return h

    def loop_us(self, handle, iters):
        """Microseconds per launch of one loop of `iters` launches + cuCtxSynchronize."""
        us = self._lib.bare_launch_us(handle, int(iters))
        if us < 0:
            raise self._error("bare launch loop")
        return us

    def loop_buffer_us(self, handle, iters):
        """The same loop with the arguments as one packed buffer (CU_LAUNCH_PARAM_BUFFER_POINTER,
        how ptxjit passes them when the driver confirms the layout) instead of kernelParams."""
        us = self._lib.bare_launch_buffer_us(handle, int(iters))
        if us < 0:
            raise self._error("bare launch loop (buffer)")
        return us

    def same_context(self, handle):
        """Whether the primary context was already current when `handle` was opened."""
        return bool(self._lib.bare_same_context(handle))

    def param_count(self, handle):
        return self._lib.bare_param_count(handle)

    def close(self, handle):
        self._lib.bare_close(handle)
