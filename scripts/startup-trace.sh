#!/usr/bin/env bash
# Prints ptxjit's start-up split on the GPU machine (run after ./setup.sh): a fresh interpreter
# runs bench/run.py's first-compile script (import ptxjit and NumPy, compile saxpy eagerly,
# launch it once) with PTXJIT_TRACE_STARTUP=1, which traces each phase on stderr; the script's
# last line is its figures (import_ms; compile_ms; first_launch_ms; total_ms, the compile and
# first launch without the import).
set -euo pipefail
cd "$(dirname "$0")/.."
script=$(.venv/bin/python -c 'import sys; sys.path.insert(0, "bench"); import run
print(run.first_compile_script("ptxjit"))')
PTXJIT_TARGET=cuda PTXJIT_TRACE_STARTUP=1 .venv/bin/python -c "$script"
