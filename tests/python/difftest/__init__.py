"""Differential testing of ptxjit against CPython (issue 19, item 4).

`generate.py` writes random kernels and device functions; `oracle.py` holds the reference
semantics (CPython, with ptxjit's documented divergences as rules); `run.py` compiles and runs
one program on a backend and compares. tests/python/test_differential.py runs a bounded sample;
scripts/difftest.py runs the long campaign in subprocesses.
"""
