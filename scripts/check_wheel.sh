#!/usr/bin/env bash
# Checks the pip path end to end, offline, where scikit-build-core, pybind11, numpy, cmake and
# ninja are installed for $PYTHON (the GPU machine has them; see docs/installing.md):
#   1. pip install --no-build-isolation .   into a fresh virtual environment;
#   2. ptxjit.__version__ == importlib.metadata.version("ptxjit"); examples/saxpy.py runs;
#   3. pip wheel --no-build-isolation .     then that wheel installed into another fresh one,
#      where saxpy runs again (on the GPU when there is one, else on the CPU backend).
# Run from the project root: bash scripts/check_wheel.sh   (logs under $OUT or ./wheel-out)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=${OUT:-wheel-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
py=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
say() { printf '\n== %s\n' "$*"; }

# A fresh environment that sees $py's packages (the build requirements, NumPy). When $py is
# itself a virtual environment, --system-site-packages reaches only its base interpreter, so
# its own site-packages are added with a .pth file (as ./setup.sh does for .venv). It gets no
# pip of its own: $py's pip works on it through --python (pip 22.3 or newer).
fresh_venv() {
  "$py" -m venv --system-site-packages --without-pip "$1"
  local site
  site=$("$1/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  "$py" - "$site/parent-site.pth" <<'PY'
import sys, sysconfig
paths = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
open(sys.argv[1], "w").write("".join("import site; site.addsitedir(%r)\n" % p for p in paths))
PY
}

# Imports ptxjit from outside the source tree (so python/ptxjit cannot be picked up), checks the
# versions agree and that the package is the installed one, then runs saxpy.
check_env() {
  local venv=$1
  (cd "$work" && "$venv/bin/python" - "$venv" <<'PY'
import importlib.metadata, os, sys
import numpy, ptxjit
from ptxjit import cuda
meta = importlib.metadata.version("ptxjit")
print(f"ptxjit {ptxjit.__version__} (metadata {meta}) from {os.path.dirname(ptxjit.__file__)}")
print(f"python {sys.version.split()[0]}, numpy {numpy.__version__}, "
      f"backend {'cuda' if cuda.is_available() else 'cpu'}")
assert ptxjit.__version__ == meta, (ptxjit.__version__, meta)
assert os.path.realpath(ptxjit.__file__).startswith(os.path.realpath(sys.argv[1])), ptxjit.__file__
PY
  )
  (cd "$work" && "$venv/bin/python" "$root/examples/saxpy.py")
}

say "versions"
"$py" -c 'import sys; print("python", sys.version.split()[0])'
"$py" -m pip --version
for m in scikit_build_core pybind11 numpy; do
  "$py" -c "import $m; print('$m', $m.__version__)"
done
cmake --version | head -n 1

say "1. pip install --no-build-isolation . (log: $out/pip-install.log)"
fresh_venv "$work/installed"
"$py" -m pip --python "$work/installed/bin/python" install --no-build-isolation --no-index -v . \
  > "$out/pip-install.log" 2>&1 || { tail -n 40 "$out/pip-install.log"; exit 1; }
check_env "$work/installed" 2>&1 | tee "$out/installed.log"

say "2. pip wheel --no-build-isolation . (log: $out/pip-wheel.log)"
"$py" -m pip wheel --no-build-isolation --no-index --no-deps -w "$work/dist" -v . \
  > "$out/pip-wheel.log" 2>&1 || { tail -n 40 "$out/pip-wheel.log"; exit 1; }
wheel=$(ls "$work"/dist/ptxjit-*.whl)
echo "$(basename "$wheel"): $(du -h "$wheel" | cut -f1)"
"$py" -m zipfile -l "$wheel" | tee "$out/wheel-contents.txt" | grep -E '_core|METADATA|__init__'
cp "$wheel" "$out/"

say "3. the wheel in a fresh virtual environment"
fresh_venv "$work/wheel"
"$py" -m pip --python "$work/wheel/bin/python" install --no-index "$wheel" \
  > "$out/pip-install-wheel.log" 2>&1 ||
  { tail -n 40 "$out/pip-install-wheel.log"; exit 1; }
check_env "$work/wheel" 2>&1 | tee "$out/wheel.log"
say "all checks passed"
