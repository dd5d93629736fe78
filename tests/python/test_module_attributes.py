"""Attributes of the program's own modules in kernels: `import helpers` ... `helpers.f(x)`.

Each `module.name` a kernel reads is snapshotted as if the kernel had imported the name itself
(a device function, a constant, an array, a nested module's attribute)."""
import types

import numpy as np
import pytest

from ptxjit import cuda, errors


def make_modules():
    helpers = types.ModuleType("helpers")
    helpers.SCALE = 3.0
    helpers.TABLE = np.array([1.0, 2.0, 4.0])
    helpers.twice = cuda.jit(device=True)(lambda x: 2 * x)
    helpers.plain = lambda x: x + 1
    pkg = types.ModuleType("pkg")
    pkg.sub = types.ModuleType("pkg.sub")
    pkg.sub.neg = cuda.jit(device=True)(lambda x: -x)
    return helpers, pkg


helpers, pkg = make_modules()


@cuda.jit
def uses_module_attributes(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = helpers.twice(i) * helpers.SCALE + helpers.TABLE[i % 3] + pkg.sub.neg(1)


def test_module_attributes_are_read_as_globals(backend):
    out = np.zeros(6)
    uses_module_attributes[1, 8](out)
    i = np.arange(6)
    np.testing.assert_equal(out, 2 * i * 3.0 + np.array([1.0, 2.0, 4.0])[i % 3] - 1)


def test_a_module_in_a_closure(backend):
    h = helpers

    @cuda.jit
    def kernel(out):
        out[0] = h.twice(5) + h.SCALE

    out = np.zeros(1)
    kernel[1, 1](out)
    assert out[0] == 13.0


def test_module_attribute_errors_are_located(cpu):
    cases = [("helpers.nothere", errors.TypingError,
              "AttributeError: module 'helpers' has no attribute 'nothere'"),
             ("helpers.plain(1)", errors.UnsupportedError, "is a plain Python function"),
             ("helpers", errors.TypingError, "cannot store")]
    for source, cls, message in cases:
        ns = {"helpers": helpers, "cuda": cuda}
        exec(f"def bad(out):\n    out[0] = {source}\n", ns)
        with pytest.raises(cls, match=message):
            cuda.jit(ns["bad"])[1, 1](np.zeros(1))
