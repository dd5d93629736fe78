"""Sorts the errors of one compute-sanitizer log (scripts/sanitize_gpu.sh) into kinds.

    python3 scripts/sanitize_report.py LOG        # prints one line: kind=count ...; exit 1 if bad

compute-sanitizer counts two different things as errors: what the tool found on the device
(memcheck's invalid accesses, a stack overflow, racecheck's hazards, synccheck's divergent
barriers) and every CUDA API call that returned an error ("Program hit CUDA_ERROR_... on CUDA API
call to ..."). The second kind includes the calls ptxjit's own tests make to check that a driver
failure becomes a clean Python error, and calls made by other libraries the tests import
(cuda-python's `cydriver`, loaded with numba-cuda, looks up driver entry points that this driver
lacks). This script tells them apart:

  device      the tool's own findings: always bad
  expected    an API error a test provokes on purpose (EXPECTED below: the test and the CUresult)
  foreign     an API error whose first host frame is in another library than ptxjit's _core
  unexpected  any other API error: bad

The test an error belongs to is the last pytest node id printed before it (pytest -v output).
"""
import re
import sys

# (pytest node id prefix, CUresult) of the tests that make a driver call fail on purpose.
EXPECTED = [
    # cuda.device_array(10**15): MemoryError, not a crash
    ("tests/python/test_device_arrays.py::test_impossible_sizes_raise_instead_of_crashing",
     "CUDA_ERROR_OUT_OF_MEMORY"),
    # a block larger than launch_bounds allows: the driver refuses the launch
    ("tests/python/test_kernel_options.py::test_launch_bounds_are_enforced_by_the_driver",
     "CUDA_ERROR_INVALID_VALUE"),
    # event_elapsed_time of an event without timing, and of one never recorded
    ("tests/python/test_device_array_views.py::test_events_time_work", "CUDA_ERROR_INVALID_HANDLE"),
    # a cooperative grid larger than the GPU holds at once: ValueError naming the CUresult
    ("tests/python/test_cooperative_groups.py::test_a_grid_too_large_for_a_cooperative_launch",
     "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"),
]

NODE = re.compile(r"^(tests/\S+::\S+)")
API = re.compile(r"Program hit (CUDA_ERROR_\w+) .* on CUDA API call to (\w+)")
HOST_FRAME = re.compile(r"^=========\s+Host Frame:.* in (\S+)$")
DEVICE = re.compile(r"^========= (Invalid |Stack overflow|Out-of-range|Misaligned|Address |"
                    r"Barrier error|Race reported|Error: |Hazard|Warning: .*hazard)")
SUMMARY = re.compile(r"^========= (?:RACECHECK|ERROR) SUMMARY: (\d+) (hazard|error)")


def classify(lines):
    counts = {"device": 0, "expected": 0, "foreign": 0, "unexpected": 0}
    details = []
    node = "(before any test)"
    pending = None  # an API error waiting for its first host frame
    for line in lines:
        m = NODE.match(line)
        if m:
            node = m.group(1)
        body = line[line.index("========="):] if "=========" in line else ""
        api = API.search(body)
        if api:
            pending = (node, api.group(1), api.group(2))
            continue
        if pending:
            frame = HOST_FRAME.match(body)
            if frame:
                test, result, call = pending
                pending = None
                if "_core" not in frame.group(1):
                    kind = "foreign"
                elif any(test.startswith(t) and result == r for t, r in EXPECTED):
                    kind = "expected"
                else:
                    kind = "unexpected"
                counts[kind] += 1
                details.append(f"{kind}: {result} from {call} ({frame.group(1)}) in {test}")
            continue
        if DEVICE.match(body):
            counts["device"] += 1
            details.append(f"device: {body[10:].strip()} in {node}")
    if pending:  # no host frame printed: count it against ptxjit
        counts["unexpected"] += 1
        details.append(f"unexpected: {pending[1]} from {pending[2]} in {pending[0]}")
    return counts, details


def main(argv):
    if len(argv) != 2:
        print(__doc__.splitlines()[2].strip(), file=sys.stderr)
        return 2
    with open(argv[1], errors="replace") as f:
        lines = f.read().splitlines()
    counts, details = classify(lines)
    # The tool's own totals, to show nothing was left uncounted (printing stops at the limit).
    total = sum(int(m.group(1)) for m in map(SUMMARY.match, lines) if m)
    print(" ".join(f"{k}={v}" for k, v in counts.items()) + f" tool-total={total}")
    for d in dict.fromkeys(details):
        print("  " + d)
    return 1 if counts["device"] or counts["unexpected"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
