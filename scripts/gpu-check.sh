#!/usr/bin/env bash
# The GPU machine's check, run through the device tool (see ../shared/gpu/README.md):
#   bash .gpu/device-run bash scripts/gpu-check.sh
# Builds with ./setup.sh (the example runs on the GPU), runs every pytest test (the GPU-marked
# ones included, with PTXJIT_TARGET=cuda so that a missing GPU fails loudly), then the
# benchmark suite (bench/run.py). Logs and results go to $OUT (or ./gpu-out).
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
export BUILD_DIR=${BUILD_DIR:-build-gpu}
status=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt" 2>&1
PTXJIT_TARGET=cuda ./setup.sh 2>&1 | tee "$out/setup.log" | tail -n 15 || status=1
PTXJIT_TARGET=cuda .venv/bin/python -m pytest -q -p no:cacheprovider tests/python -rs \
  2>&1 | tee "$out/pytest-gpu.log" | tail -n 25 || status=1
# The pictures the README and docs show, drawn on the GPU: compare them with docs/images/.
for ex in "mandelbrot -o $out/mandelbrot-cuda.png" "haversine 1000 --png $out/haversine-cuda.png" \
          black_scholes reduction histogram "matmul 2048"; do
  # shellcheck disable=SC2086  # "matmul 2048": the example and its arguments
  set -- $ex
  PTXJIT_TARGET=cuda .venv/bin/python "examples/$1.py" "${@:2}" 2>&1 | tee -a "$out/examples.log" || status=1
done
# The benchmark suite (bench/run.py): ptxjit beside numba-cuda, CuPy, PyTorch, CUDA C++ and a
# bare cuLaunchKernel, built into $BUILD_DIR/bench; a Markdown table in bench.log, JSON beside.
.venv/bin/python bench/run.py --build-dir "$BUILD_DIR" --json "$out/bench.json" \
  2>&1 | tee "$out/bench.log" || status=1
# The chart docs/performance.md embeds (copy it to docs/images/bench.svg to publish a run).
.venv/bin/python bench/plot.py "$out/bench.json" -o "$out/bench.svg" || status=1
exit $status
