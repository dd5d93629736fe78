"""Fuzzing ptxjit's bytecode frontend with mutated code objects (issue 19, item 3).

`mutate.py` mutates code objects of the running interpreter (co_code, its operands, jump
targets and EXTENDED_ARG chains, co_consts, co_names, local names, stack size, argument counts,
flags, the exception and line tables); `kernels.py` is the corpus of kernels it mutates;
`run.py` compiles and launches one mutated kernel and classifies the outcome. Nothing a
malformed code object does may crash or hang the process or give an internal compiler error:
it is an UnsupportedError naming what is malformed (or a TypingError, when the mutation made a
valid program that does not type). tests/python/test_codefuzz.py runs a bounded sample;
scripts/codefuzz.py runs the long campaign in subprocesses.
"""
