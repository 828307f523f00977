"""Issue 19, group 5: compilation and every cache (the transforms' specialisations, the
frontend's source and IR caches, the JIT engine, the disk cache) are safe under threads.
Eight or more threads first-call fresh functions (``jit``, ``grad``, ``jit(grad)``,
``jvp``, ``vmap``) with different signatures at the same moment, several times over;
every result must equal the one computed serially (and the gradients central finite
differences).  The slow variant repeats more and starts fresh processes, where the
threads also race to create the JIT engine (once a ``_DeadPointer`` from LLVM)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import s2s

ARGS = [(1.5, 2.0), (np.float32(1.5), np.float32(2.0)), (np.ones(3), 2.0),
        (np.linspace(0.1, 1.0, 4).reshape(2, 2), 0.5), (np.ones(3, np.float32), np.float32(2.0)),
        (np.arange(4.0), np.arange(4.0)), (1.5, np.ones(2)), (np.ones((2, 3)), np.ones(3)),
        (0.25, -1.0)]


def make_kernel(scale):
    """A fresh function object per call (its IR is shared, its transforms are new)."""
    def kernel(x, y):
        s = 0.0
        for i in range(3):
            s = s + np.sum(np.sin(x) * y) * (i + scale)
        return s
    return kernel


TRANSFORMS = {
    "jit": lambda f: s2s.jit(f),
    "jit_disk_cache": lambda f: s2s.jit(f, cache=True),
    "grad": lambda f: s2s.grad(f, argnums=1),
    "jit_grad": lambda f: s2s.jit(s2s.grad(f, argnums=1)),
    "jvp": lambda f: (lambda x, y: s2s.jvp(f, (x, y), (x * 0 + 1, y * 0 + 1))[1]),
    "vmap": lambda f: (lambda x, y: s2s.vmap(f, in_axes=(None, 0))(x, np.stack([y, y]))),
}


def _together(fn, args):
    """``fn(*a)`` for every ``a`` in ``args``, each in its own thread, released at once."""
    out, errors = [None] * len(args), []
    barrier = threading.Barrier(len(args))

    def work(i):
        try:
            barrier.wait()
            out[i] = fn(*args[i])
        except BaseException as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(args))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return out


def _check_runs(names, repeats):
    for run in range(repeats):
        for name in names:
            serial = [TRANSFORMS[name](make_kernel(1.0 + run))(*a) for a in ARGS]
            threaded = _together(TRANSFORMS[name](make_kernel(1.0 + run)), ARGS)
            for a, s, t in zip(ARGS, serial, threaded):
                np.testing.assert_array_equal(np.asarray(t), np.asarray(s),
                                              err_msg=f"{name} run {run} at {a}")


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_threads_compile_fresh_functions_like_serial_code(name):
    _check_runs([name], repeats=2)


def test_threaded_gradients_match_finite_differences():
    g = _together(s2s.grad(make_kernel(7.0), argnums=1), [(np.ones(3), 2.0), (0.5, 1.5)])
    f = make_kernel(7.0)
    for (x, y), value in zip([(np.ones(3), 2.0), (0.5, 1.5)], g):
        fd = (f(x, y + 1e-6) - f(x, y - 1e-6)) / 2e-6
        assert value == pytest.approx(fd, rel=1e-6)


@pytest.mark.slow
def test_threads_heavy_repeated_runs():
    _check_runs(sorted(TRANSFORMS), repeats=6)


_FRESH = textwrap.dedent('''
    import sys
    sys.path.insert(0, {root!r})
    from tests.errors.test_threads import _check_runs
    _check_runs(["jit", "jit_grad"], repeats=1)
    print("ok")
''')


@pytest.mark.slow
@pytest.mark.parametrize("attempt", range(4))
def test_threads_race_to_create_the_jit_engine_in_fresh_processes(attempt, tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, S2S_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-c", _FRESH.format(root=root)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-3000:]


def _hammer(fn, args, check, calls=30):
    """Eight threads call ``fn(*args[i])`` ``calls`` times each, with the interpreter
    switching threads as often as it can; ``check(i, outcome)`` is each call's verdict."""
    bad = []
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        def work(i):
            for _ in range(calls):
                try:
                    outcome = fn(*args[i])
                except Exception as exc:  # noqa: BLE001 (judged by check)
                    outcome = exc
                if not check(i, outcome):
                    bad.append((i, outcome))
        threads = [threading.Thread(target=work, args=(i,)) for i in range(len(args))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(switch)
    return bad


@pytest.mark.parametrize("kind", ["scalar", "array"])
def test_threads_calling_one_compiled_signature_read_their_own_results(kind):
    """A signature's context block holds the result until it is read: another thread's
    call in between must not replace it (it did: a call returned another's value, and
    two threads freed one array's block)."""
    if kind == "scalar":
        f = s2s.jit(make_kernel(1.0))
        args = [(0.25 * k, 2.0 - k) for k in range(8)]
    else:
        f = s2s.jit(lambda x, y: np.sin(x) * y)
        args = [(np.full(3, 0.25 * k), 2.0 - k) for k in range(8)]
    expected = [np.asarray(f(*a)) for a in args]
    for a, e in zip(args, expected):
        np.testing.assert_allclose(e, np.asarray(np.sin(a[0]) * a[1] * (6.0 if kind == "scalar"
                                                                         else 1.0)))
    # the first calls filled the fast entry's table; odd threads take the general path
    general = next(iter(f.specs.values())).call
    bad = _hammer(lambda k, *a: general(a) if k % 2 else f(*a), [(k, *a) for k, a in
                                                                   enumerate(args)],
                  lambda i, out: np.array_equal(np.asarray(out), expected[i]))
    assert not bad, bad[:3]


def test_threads_raising_from_one_compiled_signature_raise_their_own_errors():
    """Errors of concurrent calls: each names its own index (the fast entry hands back
    its status words instead of leaving them in the shared context block)."""
    f = s2s.jit(lambda x, i: x[i])
    x = np.arange(5.0)
    assert f(x, 2) == 2.0
    bad = _hammer(f, [(x, 10 + k) for k in range(8)],
                  lambda i, out: isinstance(out, IndexError) and f"index {10 + i} " in str(out))
    assert not bad, bad[:3]


def test_threads_printing_from_compiled_code_keep_their_results(capsys):
    """A kernel that prints hands the GIL to Python in mid-call: it has no fast entry and
    its calls take turns."""
    f = s2s.jit(lambda x, y: (print(x), x * y)[1])
    args = [(0.5 * k, 3.0) for k in range(8)]
    bad = _hammer(f, args, lambda i, out: out == args[i][0] * 3.0, calls=10)
    assert not bad, bad[:3]
    assert len(capsys.readouterr().out.splitlines()) == 80
