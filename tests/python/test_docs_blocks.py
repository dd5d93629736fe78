"""Documentation that runs: every fenced Python block of README.md and docs/*.md is executed as
written, each in a fresh interpreter, so that the examples stay true.

Convention for the blocks (the words after ```python on the fence line):

    ```python            a complete program: runs on the CPU backend (and on CUDA with a GPU)
    ```python gpu        a complete program that needs a GPU (CUDA C++ linking, the driver):
                         runs only on the CUDA backend, skipped on the CPU
    ```python fragment   an excerpt meant to be read, not run (a call's shape, `args...`):
                         never run

GitHub and other Markdown renderers highlight by the first word, so the marker is invisible to
readers. Any other word after `python` is an error here, so that a typo does not silently skip a
block. Each block runs in a temporary directory with its own disk cache, with a timeout.
"""
import glob
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MARKERS = {"", "gpu", "fragment"}
TIMEOUT_S = 300

FENCE = re.compile(r"^```python(?P<info>[^\n`]*)\n(?P<body>.*?)^```\s*$", re.M | re.S)


def doc_files():
    return [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))


def python_blocks():
    """(file relative to the root, line of the fence, marker, code) for every ```python block."""
    blocks = []
    for path in doc_files():
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for m in FENCE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            blocks.append((os.path.relpath(path, ROOT), line, m.group("info").strip(),
                           m.group("body")))
    return blocks


BLOCKS = python_blocks()


def block_id(block):
    return f"{block[0]}:{block[1]}"


def test_blocks_are_found_and_marked_with_known_words():
    assert len(BLOCKS) >= 10, [block_id(b) for b in BLOCKS]
    unknown = [(block_id(b), b[2]) for b in BLOCKS if b[2] not in MARKERS]
    assert not unknown, f"unknown markers (use one of {sorted(MARKERS)}): {unknown}"
    # Most blocks must run: fragments are the exception, not the way out.
    fragments = [b for b in BLOCKS if b[2] == "fragment"]
    assert len(fragments) * 4 <= len(BLOCKS), [block_id(b) for b in fragments]


def test_every_fence_is_seen():
    # A fence the pattern does not match (```Python, ``` python, an unclosed block) would be
    # skipped silently: count the opening fences independently.
    for path in doc_files():
        with open(path, encoding="utf-8") as f:
            text = f.read()
        opening = len(re.findall(r"^```[ \t]*python", text, re.M | re.I))
        found = sum(1 for b in BLOCKS if b[0] == os.path.relpath(path, ROOT))
        assert opening == found, f"{path}: {opening} python fences, {found} parsed"


@pytest.mark.parametrize("block", BLOCKS, ids=[block_id(b) for b in BLOCKS])
def test_block_runs(block, backend, tmp_path, subprocess_env):
    where, line, marker, code = block
    if marker == "fragment":
        pytest.skip("a fragment: not meant to run")
    if marker == "gpu" and backend != "cuda":
        pytest.skip("needs a GPU (```python gpu)")
    script = tmp_path / "block.py"
    # Line numbers in tracebacks point into the document.
    script.write_text("\n" * line + code, encoding="utf-8")
    env = dict(subprocess_env, PTXJIT_TARGET=backend,
               PTXJIT_CACHE_DIR=str(tmp_path / "cache"))
    try:
        out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                             env=env, cwd=tmp_path, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{where}:{line}: the block ran longer than {TIMEOUT_S} s")
    assert out.returncode == 0, (f"{where}:{line}: the block failed on {backend}\n"
                                 f"--- stdout\n{out.stdout[-3000:]}\n--- stderr\n{out.stderr[-3000:]}")
