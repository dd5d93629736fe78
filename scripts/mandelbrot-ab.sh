#!/usr/bin/env bash
# The Mandelbrot kernel of this build against nvcc's, in one process (bench/cuda/mandelbrot_ab.cu),
# on the GPU machine after ./setup.sh:
#   bash .gpu/device-run bash scripts/mandelbrot-ab.sh [MORE_MODULE ENTRY LAYOUT ...]
# nvcc's kernel runs both as its cubin (what the CUDA C++ binary of bench/run.py runs) and as
# its PTX through the driver's JIT (as ptxjit's is loaded). Output in $OUT (or ./gpu-out).
set -euo pipefail
out=${OUT:-gpu-out}
dir=${BUILD_DIR:-build-gpu}/mandelbrot-ab
mkdir -p "$out" "$dir"
nvcc=/usr/local/cuda/bin/nvcc
"$nvcc" -O3 -arch=sm_90 -std=c++17 --ptx bench/cuda/mandelbrot.cu -o "$dir/nvcc.ptx"
/usr/local/cuda/bin/ptxas -arch=sm_90 -O3 "$dir/nvcc.ptx" -o "$dir/nvcc.cubin"
"$nvcc" -O3 -arch=sm_90 -std=c++17 bench/cuda/mandelbrot_ab.cu -o "$dir/mandelbrot_ab" -lcuda
PTXJIT_TARGET=cuda .venv/bin/python - "$dir/ptxjit.ptx" <<'PY'
import sys
sys.path.insert(0, "bench")
import workloads as w
from ptxjit import cuda
kernel = w.build(w.MANDELBROT, cuda, "mandel_kernel")
ptx, _ = cuda.compile_ptx(kernel.py_func, w.MANDELBROT_SIG, cc=(9, 0))
open(sys.argv[1], "w").write(ptx)
PY
nv=$(grep -o '\.entry [A-Za-z0-9_]*' "$dir/nvcc.ptx" | head -1 | cut -d' ' -f2)
pj=$(grep -o '\.entry [A-Za-z0-9_]*' "$dir/ptxjit.ptx" | head -1 | cut -d' ' -f2)
cp "$dir/ptxjit.ptx" "$out/mandelbrot-ptxjit.ptx"
"$dir/mandelbrot_ab" "$dir/nvcc.cubin" "$nv" nv "$dir/nvcc.ptx" "$nv" nv \
  "$dir/ptxjit.ptx" "$pj" pj "$@" | tee "$out/mandelbrot-ab.txt"
