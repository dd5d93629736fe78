#!/usr/bin/env bash
# ptxjit set-up, one command each:
#   ./setup.sh          install what is missing, build, make .venv, run examples/saxpy.py
#   ./setup.sh test     the same set-up, then every test (GoogleTest through ctest, then pytest)
#
# Environment (all optional):
#   PYTHON       the interpreter to build for and to base .venv on (default: Debian's
#                /usr/bin/python3 when it has NumPy, else python3 on PATH)
#   BUILD_DIR    CMake build directory (default: build)
#   LLVM_DIR, pybind11_DIR, CMAKE_PREFIX_PATH  where CMake finds LLVM 19.1 and pybind11
#   PTXJIT_TARGET=cpu|cuda  forwarded to the example and the tests
set -euo pipefail
cd "$(dirname "$0")"
root=$(pwd)
mode=${1:-example}
case "$mode" in example|test) ;; *) echo "usage: ./setup.sh [test]" >&2; exit 2 ;; esac

say() { printf '\n== %s\n' "$*"; }

# ---- 1. Install what is missing (Debian/Ubuntu with apt, as root; elsewhere only checked) ----
pick_python() {
  if [ -n "${PYTHON:-}" ]; then echo "$PYTHON"; return; fi
  if [ -x /usr/bin/python3 ]; then echo /usr/bin/python3; return; fi
  command -v python3
}
need=()
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
command -v g++ >/dev/null || command -v c++ >/dev/null || need+=(g++)
if [ -z "${LLVM_DIR:-}" ] && [ ! -f /usr/lib/llvm-19/lib/cmake/llvm/LLVMConfig.cmake ]; then need+=(llvm-19-dev); fi
if [ -z "${pybind11_DIR:-}" ] && [ ! -d /usr/lib/cmake/pybind11 ] &&
   ! "$(pick_python)" -m pybind11 --cmakedir >/dev/null 2>&1; then need+=(pybind11-dev); fi
if [ -z "${PYTHON:-}" ]; then
  [ -x /usr/bin/python3 ] || need+=(python3)
  /usr/bin/python3 -c 'import numpy' 2>/dev/null || need+=(python3-numpy)
  /usr/bin/python3 -c 'import venv' 2>/dev/null || need+=(python3-venv)
  [ -f "/usr/include/python3.$(/usr/bin/python3 -c 'import sys; print(sys.version_info[1])' 2>/dev/null || echo 11)/Python.h" ] || need+=(python3-dev)
  if [ "$mode" = test ]; then
    /usr/bin/python3 -c 'import pytest' 2>/dev/null || need+=(python3-pytest)
    [ -d /usr/lib/x86_64-linux-gnu/cmake/GTest ] || [ -d /usr/lib/cmake/GTest ] ||
      [ -d /usr/lib/aarch64-linux-gnu/cmake/GTest ] || need+=(libgtest-dev)
  fi
fi
if [ ${#need[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    say "installing ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq "${need[@]}" >/dev/null 2>&1 ||
      { apt-get update -qq && apt-get install -y -qq "${need[@]}"; }
  else
    echo "warning: missing ${need[*]} and cannot apt-get install them here; trying anyway" >&2
  fi
fi
# Optional for the tests: cffi (ffi.from_buffer in kernels, tests/python/test_cffi.py, which is
# skipped without it).
if [ "$mode" = test ] && [ -z "${PYTHON:-}" ] && ! /usr/bin/python3 -c 'import cffi' 2>/dev/null &&
   command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-cffi >/dev/null 2>&1 ||
    say "python3-cffi could not be installed: tests/python/test_cffi.py will be skipped"
fi
PYTHON=$(pick_python)
export PYTHON

# ---- 2. Build ----
build=${BUILD_DIR:-build}
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
if [ ! -f "$build/CMakeCache.txt" ]; then
  say "configuring ($build, Python $PYTHON)"
  extra=()
  [ -f /usr/lib/llvm-19/lib/cmake/llvm/LLVMConfig.cmake ] && [ -z "${LLVM_DIR:-}" ] &&
    extra+=(-DLLVM_DIR=/usr/lib/llvm-19/lib/cmake/llvm)
  cmake -S . -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE="$PYTHON" "${extra[@]}"
fi
say "building"
cmake --build "$build" --parallel "${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"

# ---- 3. The virtual environment: sees the interpreter's packages (NumPy) and ptxjit ----
if [ ! -x .venv/bin/python ]; then
  say "creating .venv from $PYTHON"
  "$PYTHON" -m venv --system-site-packages --without-pip .venv
fi
site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
# When $PYTHON is itself a virtual environment (the GPU machine's is), --system-site-packages
# only reaches the base interpreter, so its own site-packages are added by a .pth file. They are
# added with site.addsitedir, not as plain paths, so that their own .pth files run too: numba-cuda
# installs `numba.cuda` through one, and without it `import numba.cuda` finds numba's old copy.
"$PYTHON" - "$site/ptxjit-dev.pth" "$root/python" <<'EOF'
import sys, sysconfig
lines, seen = [sys.argv[2]], set()
for key in ("purelib", "platlib"):
    p = sysconfig.get_paths()[key]
    if p not in seen:
        seen.add(p)
        lines.append("import site; site.addsitedir(%r)" % p)
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
EOF

# ---- 4. Run ----
if [ "$mode" = example ]; then
  say "running examples/saxpy.py"
  exec .venv/bin/python examples/saxpy.py
fi
status=0
if [ -f "$build/CTestTestfile.cmake" ]; then
  say "C++ tests (ctest)"
  ctest --test-dir "$build" --output-on-failure -j "$(nproc)" || status=1
else
  echo "GoogleTest not found at configure time: C++ tests not built" >&2
fi
say "Python tests (pytest)"
.venv/bin/python -m pytest -q -p no:cacheprovider tests/python || status=1
exit $status
