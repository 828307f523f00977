"""Allocation in compiled code never crashes (issue 19, group 1).

Every case runs in a child process: before the fix these sizes segfaulted or
corrupted the heap, which would kill pytest itself.  The oracle is numpy: the
same allocation in numpy gives the exception class and message that compiled
code must raise (``MemoryError`` for memory the C library cannot give,
``ValueError: array is too big`` for a byte count past ``2**63 - 1``,
``ValueError: negative dimensions``); the error must also point at the user's
line (the note and the last traceback frame), and the process must go on
working afterwards (the kernel, called again with a small size, is right).

The sizes that must fail with ``MemoryError`` are past any machine's address
space (10**14 float64 = 728 TiB; x86-64 user space is 128 TiB), so the tests
hold whatever the memory and the overcommit setting of the machine.
"""
import json
import os
import subprocess
import sys
import textwrap

import pytest

KERNELS = '''\
import numpy as np


def zeros(n):
    a = np.zeros(n)
    return a.sum()


def empty(n):
    a = np.empty(n)
    return a.shape[0]


def ones_int(n):
    a = np.ones(n, dtype=np.int64)
    return a.sum()


def square(n):
    a = np.zeros((n, n))
    return a.shape[0]


def empty_middle(n):
    a = np.zeros((0, n, n))
    return a.shape[0]


def full(n):
    a = np.full(n, 2.5)
    return a.sum()


def eye(n):
    a = np.eye(n)
    return a.shape[0]


def linspace(n):
    a = np.linspace(0.0, 1.0, n)
    return a.shape[0]


def arange(stop):
    a = np.arange(0.0, stop, 1.0)
    return a.shape[0]


def in_loop(x, n):
    s = 0.0
    for k in range(3):
        a = np.zeros(n) + x
        s = s + a.sum() * x
    return s


def like(n):
    b = np.zeros(n)
    c = np.empty_like(b)
    return c.shape[0]
'''

RUNNER = '''\
import json, sys, traceback
import numpy as np
import s2s
sys.path.insert(0, sys.argv[1])
import kernels as K

name, mode, args = sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
small = json.loads(sys.argv[5])
fn = getattr(K, name)
if mode == "grad":
    fn = s2s.grad(fn, argnums=0)
f = s2s.jit(fn)
out = {}
try:
    f(*args)
    out["raised"] = None
except Exception as e:
    frames = traceback.extract_tb(e.__traceback__)
    out.update(raised=type(e).__name__, message=str(e), notes=getattr(e, "__notes__", []),
               last=[frames[-1].filename, frames[-1].lineno])
if mode == "primal":
    try:
        getattr(K, name)(*args)
        out["numpy"] = None
    except Exception as e:
        out["numpy"] = [type(e).__name__, str(e)]
# the process is not broken: the same kernel on a small size is right
out["again"] = float(f(*small))
out["want"] = float(fn(*small))
print("RESULT " + json.dumps(out))
'''


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    d = tmp_path_factory.mktemp("alloc")
    (d / "kernels.py").write_text(KERNELS)
    (d / "runner.py").write_text(RUNNER)
    return d


def _line_of(text):
    lines = KERNELS.splitlines()
    return next(k + 1 for k, line in enumerate(lines) if line.strip() == text)


def run_case(kernels, name, args, small, mode="primal"):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, str(kernels / "runner.py"), str(kernels), name, mode,
                           json.dumps(args), json.dumps(small)],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, \
        f"the process died (status {proc.returncode}): {proc.stderr[-2000:]}"
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT "))
    out = json.loads(line[len("RESULT "):])
    assert out["again"] == pytest.approx(out["want"])
    return out


def assert_located(out, kernels, text):
    """The error names the user's file and line: in its note and as the last frame."""
    path = str(kernels / "kernels.py")
    line = _line_of(text)
    assert f"{path}:{line}" in "\n".join(out["notes"])
    assert text in "\n".join(out["notes"])
    assert out["last"] == [path, line]


CASES = [  # (kernel, argument, small argument, the line that allocates)
    ("zeros", 10 ** 14, 7, "a = np.zeros(n)"),                    # MemoryError
    ("zeros", 10 ** 13, 7, "a = np.zeros(n)"),                    # MemoryError (72.8 TiB)
    ("empty", 10 ** 14, 7, "a = np.empty(n)"),
    ("ones_int", 10 ** 14, 7, "a = np.ones(n, dtype=np.int64)"),
    ("zeros", 2 ** 61 + 1, 7, "a = np.zeros(n)"),                 # the byte count wraps
    ("zeros", 2 ** 60, 7, "a = np.zeros(n)"),                     # 2**63 bytes: too big
    ("zeros", 2 ** 59, 7, "a = np.zeros(n)"),                     # 4 EiB: MemoryError
    ("zeros", -1, 7, "a = np.zeros(n)"),                          # negative dimensions
    ("square", 2 ** 32, 3, "a = np.zeros((n, n))"),               # n*n*8 wraps to 0
    ("square", 10 ** 8, 3, "a = np.zeros((n, n))"),               # 71 PiB
    ("empty_middle", 2 ** 62, 3, "a = np.zeros((0, n, n))"),      # numpy checks past a 0
    ("full", 10 ** 14, 4, "a = np.full(n, 2.5)"),
    ("full", 2 ** 62, 4, "a = np.full(n, 2.5)"),
    ("eye", 2 ** 32, 3, "a = np.eye(n)"),
    ("linspace", 10 ** 14, 5, "a = np.linspace(0.0, 1.0, n)"),
]


@pytest.mark.parametrize("name, n, small, text", CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_allocation_raises_numpys_error(kernels, name, n, small, text):
    out = run_case(kernels, name, [n], [small])
    assert out["numpy"] is not None, "numpy allocated it: not a failing size here"
    exc, message = out["numpy"]
    assert out["raised"] == exc
    assert out["message"].startswith(message)
    assert_located(out, kernels, text)


def test_arange_of_an_infinite_length(kernels):
    """np.arange(0.0, inf): numpy's ValueError, not a wrapped (empty) length."""
    out = run_case(kernels, "arange", [float("inf")], [4.0])
    assert out["raised"] == out["numpy"][0] == "ValueError"
    assert out["message"].startswith(out["numpy"][1])
    assert_located(out, kernels, "a = np.arange(0.0, stop, 1.0)")


def test_allocation_in_a_loop_and_in_compiled_derivatives(kernels):
    """Inside a loop, and in the gradient's forward sweep (jit(grad(f))): MemoryError at
    the user's line, and the process still works."""
    for mode in ("primal", "grad"):
        out = run_case(kernels, "in_loop", [1.5, 10 ** 14], [1.5, 4], mode=mode)
        assert out["raised"] == "MemoryError"
        assert "Unable to allocate" in out["message"]
        assert_located(out, kernels, "a = np.zeros(n) + x")


def test_like_of_a_failing_size_never_runs(kernels):
    out = run_case(kernels, "like", [2 ** 61 + 1], [5])
    assert out["raised"] == "ValueError" and "array is too big" in out["message"]
    assert_located(out, kernels, "b = np.zeros(n)")


def test_size_text_is_numpys():
    """The MemoryError message's size is worded as numpy's _ArrayMemoryError words it."""
    import numpy as np
    from s2s.backend.llvm.values.abi import size_text
    rng = np.random.default_rng(0)
    sizes = [0, 1, 1023, 1024, 10 ** 6, 2 ** 30 - 1, 4 * 10 ** 9 * 8, 10 ** 13 * 8, 2 ** 62]
    sizes += [int(x) for x in rng.integers(0, 2 ** 62, 50)]
    sizes += [int(2.0 ** x) for x in rng.uniform(0, 62, 50)]
    code = textwrap.dedent("""
        from numpy._core._exceptions import _ArrayMemoryError
        import sys, json
        print(json.dumps([_ArrayMemoryError._size_to_string(int(n)) for n in sys.argv[1:]]))
    """)
    proc = subprocess.run([sys.executable, "-c", code, *map(str, sizes)], capture_output=True,
                          text=True, timeout=60)
    if proc.returncode != 0:
        pytest.skip("numpy's private size wording is not available in this numpy")
    assert json.loads(proc.stdout) == [size_text(n) for n in sizes]
