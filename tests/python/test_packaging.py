"""Packaging (docs/installing.md): the version is written once, and CMake's install rules give
an importable package outside the source tree (what `pip install .` installs through
scikit-build-core). scripts/check_wheel.sh checks pip itself where scikit-build-core exists."""

import os
import re
import subprocess
import sys
import tomllib

import pytest

import ptxjit

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, os.environ.get("BUILD_DIR", "build"))
# scikit-build-core's regex metadata provider's default pattern.
SKBUILD_VERSION_RE = r'(?i)^(__version__|VERSION)(?: ?\: ?str)? *= *([\'"])v?(?P<value>.+?)\2'


def test_version_is_written_once():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        meta = tomllib.load(f)
    assert meta["project"]["dynamic"] == ["version"]
    assert "version" not in meta["project"]
    provider = meta["tool"]["scikit-build"]["metadata"]["version"]
    assert provider["provider"] == "scikit_build_core.metadata.regex"
    with open(os.path.join(ROOT, provider["input"]), encoding="utf-8") as f:
        found = re.search(SKBUILD_VERSION_RE, f.read(), re.MULTILINE)
    assert found and found.group("value") == ptxjit.__version__
    # CMake's project(VERSION) (the disk cache's key) reads the same line.
    cache = os.path.join(BUILD, "CMakeCache.txt")
    if os.path.exists(cache):
        with open(cache, encoding="utf-8") as f:
            m = re.search(r"^CMAKE_PROJECT_VERSION:STATIC=(.*)$", f.read(), re.MULTILINE)
        assert m and m.group(1) == ptxjit.__version__
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        assert not re.search(r"project\(ptxjit VERSION [0-9]", f.read())


def test_build_requirements_declared():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        meta = tomllib.load(f)
    requires = " ".join(meta["build-system"]["requires"])
    for name in ("scikit-build-core", "pybind11", "numpy"):
        assert name in requires
    assert meta["build-system"]["build-backend"] == "scikit_build_core.build"
    assert any(d.startswith("numpy") for d in meta["project"]["dependencies"])


@pytest.mark.skipif(not os.path.exists(os.path.join(BUILD, "CMakeCache.txt")),
                    reason="no CMake build directory (BUILD_DIR)")
def test_cmake_install_gives_an_importable_package(tmp_path):
    prefix = tmp_path / "prefix"
    proc = subprocess.run(["cmake", "--install", BUILD, "--prefix", str(prefix)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    site = prefix / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    installed = sorted(os.listdir(site / "ptxjit"))
    assert "__init__.py" in installed and "cuda.py" in installed
    assert [n for n in installed if n.startswith("_core") and n.endswith(".so")]
    assert "__pycache__" not in installed
    env = {k: v for k, v in os.environ.items() if not k.startswith("PTXJIT_")}
    env.update(PYTHONPATH=str(site), PTXJIT_TARGET="cpu")
    code = (
        "import os, sys, numpy as np, ptxjit\n"
        "from ptxjit import cuda\n"
        "assert os.path.realpath(ptxjit.__file__).startswith(os.path.realpath(sys.argv[1]))\n"
        "@cuda.jit\n"
        "def saxpy(a, x, y, out):\n"
        "    i = cuda.grid(1)\n"
        "    if i < x.size:\n"
        "        out[i] = a * x[i] + y[i]\n"
        "x = np.arange(100, dtype=np.float32); out = np.empty_like(x)\n"
        "saxpy[1, 128](np.float32(2), x, x, out)\n"
        "assert (out == 3 * x).all()\n"
        "print(ptxjit.__version__, cuda.current_target())\n")
    proc = subprocess.run([sys.executable, "-c", code, str(site)], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [ptxjit.__version__, "cpu"]
