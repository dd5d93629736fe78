#!/usr/bin/env bash
# The GPU under NVIDIA's compute-sanitizer (issue 19, item 6), run on the GPU machine after
# ./setup.sh has built ptxjit there:
#   bash scripts/sanitize_gpu.sh                 # every tool, the default subsets below
#   TOOLS="memcheck" bash scripts/sanitize_gpu.sh
#   MEMCHECK_TESTS="tests/python" bash scripts/sanitize_gpu.sh   # the whole GPU suite
#   MEMCHECK_TESTS="tests/python" MEMCHECK_SHARDS=10 ...   # its files in 10 processes at once
#   memcheck runs with PTXJIT_STACK_SIZE=$MEMCHECK_STACK_SIZE (16384) unless PTXJIT_STACK_SIZE
#   is set: the tool's frames outgrow CUDA's default 1 KiB stack in recursive kernels
#
#   memcheck   the GPU-marked tests of $MEMCHECK_TESTS (default: a representative subset that
#              runs in a few minutes under the tool) and every example
#   racecheck  the tests and examples that use shared memory ($RACECHECK_TESTS, histogram,
#              matmul, reduction)
#   synccheck  the tests that synchronise threads, warps and grids (syncthreads, syncwarp, warp
#              votes and shuffles: $SYNCCHECK_TESTS) and the reduction example
#
# Each run's log is $OUT/sanitize-<tool>-<name>.log (OUT defaults to ./sanitize-out); the
# summary, one line per run with its error count, is $OUT/sanitize-summary.txt and is printed at
# the end. The exit status is 1 when any run reports an error or fails. Only pytest's gpu tests
# run (-m gpu, with PTXJIT_TARGET=cuda): the CPU backend's kernels are not the sanitizer's.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
out=${OUT:-sanitize-out}
mkdir -p "$out"
py=${PYTHON_BIN:-.venv/bin/python}
cs=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
tools=${TOOLS:-memcheck racecheck synccheck}
per_run=${PER_RUN_TIMEOUT:-900}
shards=${MEMCHECK_SHARDS:-1}
memcheck_stack=${MEMCHECK_STACK_SIZE:-16384}
MEMCHECK_TESTS=${MEMCHECK_TESTS:-tests/python/test_kernels.py tests/python/test_device_arrays.py
  tests/python/test_reliability.py tests/python/test_shared.py tests/python/test_atomics.py
  tests/python/test_warp.py tests/python/test_slices.py tests/python/test_records.py
  tests/python/test_math.py tests/python/test_complex.py tests/python/test_float16.py
  tests/python/test_ufuncs_in_kernels.py tests/python/test_differential.py}
RACECHECK_TESTS=${RACECHECK_TESTS:-tests/python/test_shared.py tests/python/test_atomics.py}
SYNCCHECK_TESTS=${SYNCCHECK_TESTS:-tests/python/test_shared.py tests/python/test_warp.py
  tests/python/test_cooperative_groups.py}
summary="$out/sanitize-summary.txt"
: > "$summary"
status=0
export PTXJIT_TARGET=cuda

if [ ! -x "$cs" ]; then
  echo "compute-sanitizer not found (set COMPUTE_SANITIZER)" | tee -a "$summary"
  exit 1
fi
"$cs" --version | head -n 3 > "$out/sanitize-version.txt"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> "$out/sanitize-version.txt" 2>&1

# run TOOL NAME COMMAND...: one program under one tool; its errors, sorted into kinds, and its
# racecheck hazards make the summary line.
run() {
  local tool=$1 name=$2
  shift 2
  local log="$out/sanitize-$tool-$name.log" start end rc
  start=$(date +%s)
  # memcheck's instrumented frames are larger: a recursion that fits CUDA's default 1 KiB stack
  # per thread without the tool overflows under it, so its runs get a larger stack.
  local stack=${PTXJIT_STACK_SIZE:-}
  [ "$tool" = memcheck ] && stack=${PTXJIT_STACK_SIZE:-$memcheck_stack}
  PTXJIT_STACK_SIZE=$stack timeout "$per_run" "$cs" --tool "$tool" --target-processes all \
    --print-limit 1000 "$@" > "$log" 2>&1
  rc=$?
  end=$(date +%s)
  local hazards
  hazards=$(grep -E '^========= RACECHECK SUMMARY: [0-9]+ hazard' "$log" |
            awk '{s += $4} END {print s + 0}')
  # The tool's errors sorted into the device's, the API errors tests provoke on purpose, other
  # libraries' and ptxjit's unexpected ones (scripts/sanitize_report.py): counts on the first
  # line of LOG.kinds, one line per error after it.
  local kinds
  python3 scripts/sanitize_report.py "$log" > "$log.kinds"
  kinds=$(head -n 1 "$log.kinds")
  local verdict=clean
  if [ "$rc" -eq 124 ]; then verdict="TIMEOUT after ${per_run}s"; status=1
  elif grep -qE '(device|unexpected)=[1-9]' <<< "$kinds" || [ "$hazards" -ne 0 ]; then
    verdict=ERRORS; status=1
  elif [ "$rc" -eq 5 ] && grep -q "deselected" "$log"; then verdict="clean (no GPU tests)"
  elif [ "$rc" -ne 0 ]; then verdict="FAILED (exit $rc)"; status=1
  fi
  printf '%-10s %-44s %s hazards=%s %5ss  %s\n' "$tool" "$name" "$kinds" "$hazards" \
    "$((end - start))" "$verdict" | tee -a "$summary"
}

pytest_run() {  # TOOL NAME FILES... (MARKS: the -m expression, "gpu" by default)
  local tool=$1 name=$2
  shift 2
  # shellcheck disable=SC2086
  # -v: the report attributes each error to the test printed before it
  run "$tool" "$name" "$py" -m pytest -v -p no:cacheprovider -m "${MARKS:-gpu}" -x "$@"
}

for tool in $tools; do
  case "$tool" in
  memcheck)
    if [ "$shards" -gt 1 ]; then
      # The test files (directories expanded) dealt round-robin into $shards groups run at
      # once (the whole suite under memcheck takes too long for one process); within a group
      # each file is its own pytest process under the tool, so that an error which spoils the
      # CUDA context (a kernel's fault) spoils only that file. One summary line per file.
      # shellcheck disable=SC2086
      mapfile -t files < <(for t in $MEMCHECK_TESTS; do
        if [ -d "$t" ]; then ls "$t"/test_*.py; else echo "$t"; fi; done)
      for ((k = 0; k < shards; k++)); do
        (for ((j = k; j < ${#files[@]}; j += shards)); do
           MARKS="gpu and not device_exclusive" \
             pytest_run memcheck "$(basename "${files[j]}" .py)" "${files[j]}"
         done) &
      done
      wait
      # Then, alone on the device, the tests that measure the whole device's memory.
      # shellcheck disable=SC2086
      MARKS="gpu and device_exclusive" pytest_run memcheck device-exclusive $MEMCHECK_TESTS
    else
      # shellcheck disable=SC2086
      pytest_run memcheck pytest-gpu-subset $MEMCHECK_TESTS
    fi
    for ex in saxpy mandelbrot haversine black_scholes reduction histogram "matmul 512"; do
      # shellcheck disable=SC2086  # "matmul 512" is the example and its argument
      set -- $ex
      run memcheck "example-$1" "$py" "examples/$1.py" "${@:2}"
    done
    ;;
  racecheck)
    # shellcheck disable=SC2086
    pytest_run racecheck pytest-shared $RACECHECK_TESTS
    for ex in reduction histogram "matmul 512"; do
      # shellcheck disable=SC2086
      set -- $ex
      run racecheck "example-$1" "$py" "examples/$1.py" "${@:2}"
    done
    ;;
  synccheck)
    # shellcheck disable=SC2086
    pytest_run synccheck pytest-sync $SYNCCHECK_TESTS
    run synccheck example-reduction "$py" examples/reduction.py
    ;;
  *)
    echo "unknown tool $tool" | tee -a "$summary"
    status=1
    ;;
  esac
done
echo
echo "== compute-sanitizer summary ($summary)"
cat "$summary"
# Shards run in subshells, whose verdicts reach only the summary: read them back from there.
if grep -qvE ' clean( \(no GPU tests\))?$' "$summary"; then status=1; fi
exit $status
