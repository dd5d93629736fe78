#!/usr/bin/env bash
# libFuzzer over the frontend and typing (issue 19, item 3; fuzz/FuzzFrontend.cpp):
#   scripts/fuzz.sh smoke     # build, seed corpus, 90 s of fuzzing (CI-sized, under 2 minutes
#                             # once built); exits 0 with a message when no fuzzing toolchain
#   scripts/fuzz.sh long      # FUZZ_SECONDS (default 3600) with FUZZ_JOBS workers (default 1)
#   scripts/fuzz.sh run ARGS  # fuzz_frontend with your own libFuzzer arguments
#
# Builds in $FUZZ_BUILD_DIR (default build-fuzz) with -DPTXJIT_FUZZ=ON and clang ($FUZZ_CXX, or
# the newest clang++-NN that links -fsanitize=fuzzer): every object there carries
# AddressSanitizer, UndefinedBehaviorSanitizer and libFuzzer's coverage. The seed corpus is
# every bytecode fixture of the test suite for each Python version (fuzz_frontend_corpus); the
# working corpus grows in $FUZZ_BUILD_DIR/fuzz-corpus. Findings (crashes, aborts on an internal
# compiler error or an escaped exception, sanitizer reports, timeouts, out-of-memory) are saved
# as $FUZZ_BUILD_DIR/fuzz-artifacts/<kind>-<sha1>; replay one with
#   $FUZZ_BUILD_DIR/fuzz/fuzz_frontend <artifact>
# The last lines give the executions and the findings; the exit status is 1 when any was found.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
mode=${1:-smoke}
shift || true
build=${FUZZ_BUILD_DIR:-build-fuzz}
jobs=${NINJA_JOBS:-2}

find_cxx() {
  local probe
  probe=$(mktemp -d)
  printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char *, unsigned long) { return 0; }\n' \
    > "$probe/p.cpp"
  for cxx in ${FUZZ_CXX:-} clang++-19 clang++-18 clang++-17 clang++-16 clang++-15 clang++-14 clang++; do
    command -v "$cxx" > /dev/null || continue
    if "$cxx" -fsanitize=fuzzer,address,undefined "$probe/p.cpp" -o "$probe/p" 2> /dev/null; then
      rm -rf "$probe"
      echo "$cxx"
      return 0
    fi
  done
  rm -rf "$probe"
  return 1
}

if ! cxx=$(find_cxx); then
  echo "fuzz.sh: no clang with libFuzzer (-fsanitize=fuzzer) here: skipped." \
    "On Debian: apt-get install clang (its libclang-rt / compiler-rt provides libFuzzer)."
  [ "$mode" = smoke ] && exit 0
  exit 1
fi
cc=${cxx/clang++/clang}

if [ ! -f "$build/CMakeCache.txt" ]; then
  extra=()
  [ -f /usr/lib/llvm-19/lib/cmake/llvm/LLVMConfig.cmake ] && [ -z "${LLVM_DIR:-}" ] &&
    extra+=(-DLLVM_DIR=/usr/lib/llvm-19/lib/cmake/llvm)
  CC=$cc CXX=$cxx cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DPTXJIT_FUZZ=ON -DPTXJIT_BUILD_TESTS=OFF "${extra[@]}" > "$build.configure.log" 2>&1 ||
    { cat "$build.configure.log"; exit 1; }
fi
ninja -C "$build" -j "$jobs" fuzz_frontend fuzz_frontend_corpus | tail -n 3 || exit 1

fuzzer="$build/fuzz/fuzz_frontend"
seeds="$build/fuzz-seeds"
corpus="$build/fuzz-corpus"
artifacts="$build/fuzz-artifacts"
mkdir -p "$corpus" "$artifacts"
rm -rf "$seeds"
"$build/fuzz/fuzz_frontend_corpus" "$seeds" || exit 1

# Leaks are not findings here: the type interner and the opcode tables live for the process.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
common=(-timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1
        "-artifact_prefix=$artifacts/")
log="$build/fuzz-$mode.log"
case "$mode" in
smoke)
  "$fuzzer" "${common[@]}" -max_total_time="${FUZZ_SECONDS:-90}" "$corpus" "$seeds" 2>&1 |
    tee "$log" | grep -E '^(#[0-9]+[[:space:]]+(INITED|DONE)|stat::|==[0-9]+==[[:space:]]*ERROR|fuzz_frontend:|SUMMARY)' ;;
long)
  n=${FUZZ_JOBS:-1}
  if [ "$n" -gt 1 ]; then
    "$fuzzer" "${common[@]}" -max_total_time="${FUZZ_SECONDS:-3600}" -jobs="$n" -workers="$n" \
      "$corpus" "$seeds" > "$log" 2>&1
    cat fuzz-*.log >> "$log" 2> /dev/null && rm -f fuzz-[0-9]*.log
  else
    "$fuzzer" "${common[@]}" -max_total_time="${FUZZ_SECONDS:-3600}" "$corpus" "$seeds" \
      > "$log" 2>&1
  fi
  grep -E '^(#[0-9]+[[:space:]]+(INITED|DONE)|stat::)' "$log" | tail -n 8 ;;
run)
  "$fuzzer" "$@"
  exit $? ;;
*)
  echo "usage: scripts/fuzz.sh [smoke|long|run ARGS...]" >&2
  exit 2 ;;
esac

execs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{s += $2} END {print s + 0}')
findings=$(find "$artifacts" -type f | wc -l)
echo "fuzz.sh $mode: $execs executions, $findings findings in $artifacts, corpus $(find "$corpus" -type f | wc -l) files"
[ "$findings" -eq 0 ]
