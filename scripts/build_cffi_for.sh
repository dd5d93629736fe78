#!/usr/bin/env bash
# Builds cffi for another interpreter's ABI into a folder for PYTHONPATH, for the compat harness
# on the GPU machine: its Python (3.12) has no cffi and no PyPI, so numba-cuda's test files that
# import cffi at the top (test_cooperative_groups, test_device_func, test_inspect) error at
# collection under numba-cuda and ptxjit alike. With this folder on PYTHONPATH both sides
# collect and run them (docs/compatibility.md, "The harness's environment").
#
# usage: scripts/build_cffi_for.sh CFFI_SRC PYTHON OUT
#   CFFI_SRC  a cffi source tree (github.com/python-cffi/cffi: src/c/_cffi_backend.c, src/cffi)
#   PYTHON    an interpreter of the target's minor version whose headers are installed here
#             (e.g. pyenv's 3.12: the GPU machine runs 3.12)
#   OUT       the folder to fill: _cffi_backend.<abi>.so, cffi/, and pycparser/ and ply/ (pure
#             Python, from Debian's python3-pycparser and python3-ply)
# The extension links libffi.so.8 (Debian's libffi-dev here; the GPU machine's CPython has it).
set -euo pipefail
src=$1 py=$2 out=$3
inc=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
suffix=$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
mkdir -p "$out"
gcc -shared -fPIC -O2 -w -I"$inc" -I"$src/src/c" "$src/src/c/_cffi_backend.c" -l:libffi.so.8 \
  -o "$out/_cffi_backend$suffix"
rm -rf "$out/cffi" "$out/pycparser" "$out/ply"
cp -r "$src/src/cffi" "$out/"
for pkg in pycparser ply; do
  cp -r "/usr/lib/python3/dist-packages/$pkg" "$out/"
done
PYTHONPATH="$out" "$py" -c 'import cffi, array; cffi.FFI().from_buffer(array.array("d", [1.0]))'
echo "cffi $(PYTHONPATH="$out" "$py" -c 'import cffi; print(cffi.__version__)') for $("$py" -V) in $out"
