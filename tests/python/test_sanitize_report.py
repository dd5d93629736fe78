"""scripts/sanitize_report.py: compute-sanitizer's errors sorted into the device's, the API
errors tests provoke on purpose, other libraries' and unexpected ones (docs/reliability.md)."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "sanitize_report.py")

LOG = """\
========= COMPUTE-SANITIZER
tests/python/test_device_arrays.py::test_streams[cuda] PASSED [ 10%]
tests/python/test_device_arrays.py::test_impossible_sizes_raise_instead_of_crashing[cuda] \
========= Program hit CUDA_ERROR_OUT_OF_MEMORY (error 2) due to "out of memory" on CUDA API call \
to cuMemAllocAsync.
=========     Saved host backtrace up to driver entry point at error
=========         Host Frame:  [0x48aacc] in _core.cpython-312-x86_64-linux-gnu.so
PASSED [ 20%]
tests/python/test_random.py::test_same_streams_as_numba_cuda_on_gpu \
========= Program hit CUDA_ERROR_INVALID_VALUE (error 1) due to "invalid argument" on CUDA API \
call to cuGetProcAddress_v2.
=========         Host Frame:  [0xd4c8] in cydriver.cpython-312-x86_64-linux-gnu.so
PASSED [ 30%]
tests/python/test_kernels.py::test_saxpy[cuda] \
========= Program hit CUDA_ERROR_OUT_OF_MEMORY (error 2) due to "out of memory" on CUDA API call \
to cuMemAllocAsync.
=========         Host Frame:  [0x48aacc] in _core.cpython-312-x86_64-linux-gnu.so
========= Invalid __global__ read of size 4 bytes
=========     at _ptxjit_k_0+0x70
PASSED [ 40%]
========= ERROR SUMMARY: 4 errors
"""


def run(tmp_path, text):
    log = tmp_path / "memcheck.log"
    log.write_text(text)
    p = subprocess.run([sys.executable, SCRIPT, str(log)], capture_output=True, text=True)
    return p.returncode, p.stdout


def test_errors_are_sorted_by_kind_and_test(tmp_path):
    rc, out = run(tmp_path, LOG)
    first = out.splitlines()[0]
    assert first == "device=1 expected=1 foreign=1 unexpected=1 tool-total=4", out
    assert rc == 1
    # the same CUresult is expected only in the test that provokes it
    assert "unexpected: CUDA_ERROR_OUT_OF_MEMORY from cuMemAllocAsync" in out
    assert "tests/python/test_kernels.py::test_saxpy[cuda]" in out
    assert "foreign: CUDA_ERROR_INVALID_VALUE from cuGetProcAddress_v2 (cydriver" in out
    assert "device: Invalid __global__ read of size 4 bytes in tests/python/test_kernels.py" in out


def test_expected_and_foreign_errors_alone_are_clean(tmp_path):
    clean = LOG[:LOG.index("tests/python/test_kernels.py")] + "========= ERROR SUMMARY: 2 errors\n"
    rc, out = run(tmp_path, clean)
    assert rc == 0, out
    assert out.splitlines()[0] == "device=0 expected=1 foreign=1 unexpected=0 tool-total=2"
