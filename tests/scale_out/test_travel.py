"""Transformed functions pickle and run in another process (a spawned one, as Dask's
workers are) with the results of this one: module-level functions by standard pickle
(by reference), lambdas and closures by cloudpickle (by value, with their source)."""
from __future__ import annotations

import multiprocessing
import os
import pickle
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import s2s

import receiver
import travel_fns as T

cloudpickle = pytest.importorskip("cloudpickle")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


@pytest.fixture(scope="module")
def other():
    """One spawned process, kept for the module (its caches persist between tests)."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield pool


def remote(pool, fn, *args, dumps=pickle.dumps):
    return pool.submit(receiver.call, dumps(fn), args).result(timeout=300)


def fd_grad(f, x, h=1e-6):
    """Central finite differences in float64."""
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = h
        g.flat[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


x3 = np.array([0.3, -0.7, 1.1])
rng = np.random.default_rng(0)
X = rng.standard_normal((40, 3))
y = (rng.random(40) < 0.5).astype(float)


def _leaves(v):
    return s2s.tree_util.tree_leaves(v)


def assert_same(got, want):
    a, b = _leaves(got), _leaves(want)
    assert len(a) == len(b)
    for u, v in zip(a, b):
        np.testing.assert_allclose(u, v, rtol=1e-13, atol=1e-13)


MODULE_LEVEL = {
    "grad": (lambda: s2s.grad(T.poly), (x3,)),
    "value_and_grad argnums": (lambda: s2s.value_and_grad(T.loss, argnums=(0, 1)), (x3, X, y)),
    "jit": (lambda: s2s.jit(T.poly), (x3,)),
    "jit(value_and_grad)": (lambda: s2s.jit(s2s.value_and_grad(T.loss)), (x3, X, y)),
    "grad(grad)": (lambda: s2s.grad(s2s.grad(T.rk4_decay), argnums=1), (0.7, 1.3, 8)),
    "vmap": (lambda: s2s.vmap(T.vec, in_axes=(0, None)), (X, x3)),
    "vmap(grad)": (lambda: s2s.vmap(s2s.grad(T.poly)), (X,)),
    "jacrev": (lambda: s2s.jacrev(T.vec, argnums=(0, 1)), (x3, x3)),
    "jacfwd": (lambda: s2s.jacfwd(T.vec), (x3, x3)),
    "hessian": (lambda: s2s.hessian(T.poly), (x3,)),
    "jit(hessian)": (lambda: s2s.jit(s2s.hessian(T.smooth)), (x3,)),
    "checkpoint": (lambda: s2s.grad(s2s.checkpoint(T.poly)), (x3,)),
    "vjp pullback": (lambda: s2s.vjp(T.vec, x3, x3)[1], (np.ones(3),)),
    "linearize": (lambda: s2s.linearize(T.vec, x3, x3)[1], (x3, -x3)),
    "decorated jit": (lambda: T.jitted_poly, (x3,)),
    "decorated grad": (lambda: T.grad_poly, (x3,)),
    "custom_vjp": (lambda: T.softclip, (x3,)),
    "grad of custom_vjp": (lambda: s2s.grad(T.with_softclip), (x3,)),
}


@pytest.mark.parametrize("name", sorted(MODULE_LEVEL))
def test_module_level_transforms_travel_by_standard_pickle(other, name):
    make, args = MODULE_LEVEL[name]
    fn = make()
    want = fn(*args)
    blob = pickle.dumps(fn)
    assert b"s2s_generated" not in blob and b"ctypes" not in blob  # no generated code
    got, facts = remote(other, fn, *args)
    assert facts["pid"] != os.getpid()
    assert_same(got, want)


def test_results_there_match_an_oracle(other):
    got, _ = remote(other, s2s.jit(s2s.grad(T.poly)), x3)
    np.testing.assert_allclose(got, fd_grad(T.poly, x3), rtol=1e-7, atol=1e-8)
    got, _ = remote(other, s2s.grad(T.with_softclip), x3)
    np.testing.assert_allclose(got, np.tanh(x3) + x3 * (1 - np.tanh(x3) ** 2), rtol=1e-12)
    got, _ = remote(other, s2s.grad(T.rk4_decay), 0.7, 1.3, 8)
    np.testing.assert_allclose(got, (T.rk4_decay(0.7 + 1e-6, 1.3, 8) -
                                     T.rk4_decay(0.7 - 1e-6, 1.3, 8)) / 2e-6, rtol=1e-7)


def _closure(scale):
    def scaled(x):
        return np.sum(np.sin(x) * scale) + T.poly(x)
    return scaled


BY_VALUE = {
    "grad(lambda)": (lambda: s2s.grad(lambda x: np.sum(np.cos(x) * x)), (x3,)),
    "jit(value_and_grad(closure))": (lambda: s2s.jit(s2s.value_and_grad(
        _closure(np.array([1.0, 2.0, 3.0])))), (x3,)),
    "jvp inside a jitted lambda": (lambda: s2s.jit(
        lambda x, t: s2s.jvp(T.poly, (x,), (t,))[1]), (x3, x3[::-1].copy())),
    "grad of grad inside a lambda": (lambda: s2s.grad(
        lambda x: np.sum(s2s.grad(T.poly)(x) * x)), (x3,)),
    "vmap(jit(grad(lambda)))": (lambda: s2s.vmap(s2s.jit(s2s.grad(
        lambda x: np.sum(x ** 3)))), (X,)),
    "jacrev(closure)": (lambda: s2s.jacrev(_closure(2.0)), (x3,)),
    "vjp pullback of a lambda": (lambda: s2s.vjp(lambda a: np.tanh(a) * 2.0, x3)[1],
                                 (np.ones(3),)),
}


@pytest.mark.parametrize("name", sorted(BY_VALUE))
def test_lambdas_and_closures_travel_by_cloudpickle(other, name):
    make, args = BY_VALUE[name]
    fn = make()
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        _plain_pickle_fails(fn)
    want = fn(*args)
    got, _ = remote(other, fn, *args, dumps=cloudpickle.dumps)
    assert_same(got, want)


def _plain_pickle_fails(fn):
    """Without cloudpickle in the picture a lambda cannot be pickled by value."""
    import s2s.core.travel as travel
    saved = travel._recording_pickler
    travel._recording_pickler = lambda: None
    try:
        pickle.dumps(fn)
    finally:
        travel._recording_pickler = saved


def test_closure_gradient_there_matches_finite_differences(other):
    f = _closure(np.array([1.0, -2.0, 0.5]))
    got, _ = remote(other, s2s.jit(s2s.grad(f)), x3, dumps=cloudpickle.dumps)
    np.testing.assert_allclose(got, fd_grad(f, x3), rtol=1e-7, atol=1e-8)


def _scaled(scale):
    return lambda x: np.sum(np.sin(x) * scale)


def test_a_jitted_function_compiles_once_per_signature_there(other):
    fn = s2s.jit(s2s.value_and_grad(_scaled(np.array([1.0, 2.0, 3.0]))))
    blob = cloudpickle.dumps(fn)
    seen = [other.submit(receiver.call, blob, (x3 * k,)).result(timeout=300)[1]
            for k in (1.0, 2.0, 3.0)]
    assert len({s["id"] for s in seen}) == 1  # every copy of the payload: one object
    assert [s["specs"] for s in seen] == [1, 1, 1]  # compiled once, for one signature
    _, facts = other.submit(receiver.call, blob, (X[:2],)).result(timeout=300)
    assert facts["id"] == seen[0]["id"] and facts["specs"] == 2  # a second signature


def test_changed_captured_values_are_never_stale(other):
    scale = np.array([1.0, 2.0, 3.0])
    fn = s2s.jit(_closure(scale))
    first, f1 = remote(other, fn, x3, dumps=cloudpickle.dumps)
    scale[:] = [-4.0, 0.5, 9.0]  # the same function object, other captured values
    second, f2 = remote(other, fn, x3, dumps=cloudpickle.dumps)
    assert f1["id"] != f2["id"]
    np.testing.assert_allclose(first, np.sum(np.sin(x3) * [1, 2, 3]) + T.poly(x3))
    np.testing.assert_allclose(second, np.sum(np.sin(x3) * scale) + T.poly(x3))


def _raised(fn, *args):
    try:
        fn(*args)
    except Exception as exc:  # noqa: BLE001
        return exc
    raise AssertionError("no error")


def test_errors_there_are_the_errors_here(other):
    cases = [
        (s2s.grad(T.loss), (np.array([1, 2, 3]), X, y)),          # integer input
        (s2s.grad(lambda x: np.sum(x * not_defined_anywhere)), (x3,)),  # noqa: F821
        (s2s.jit(T.bad_loop), (np.ones(2),)),                       # index out of range
    ]
    for fn, args in cases:
        here = _raised(fn, *args)
        with pytest.raises(type(here)) as there:
            remote(other, fn, *args, dumps=cloudpickle.dumps)
        assert type(there.value) is type(here) and str(there.value) == str(here)
        if isinstance(here, s2s.S2SError):
            assert there.value.loc == here.loc and "test_travel.py" in str(here)


_DISK_SCRIPT = """
import pickle, sys
from s2s.backend.llvm.driver import disk_cache
stored = []
real = disk_cache.store
disk_cache.store = lambda k, c: stored.append(k) or real(k, c)
fn = pickle.loads(sys.stdin.buffer.read())
import numpy as np
print(repr(float(fn(np.array([0.3, -0.7, 1.1]))[0])), len(stored))
"""


def test_processes_share_the_disk_cache(tmp_path):
    fn = s2s.jit(s2s.value_and_grad(_closure(np.array([1.0, 2.0, 3.0]))), cache=True)
    blob = cloudpickle.dumps(fn)
    env = dict(os.environ, S2S_CACHE_DIR=str(tmp_path),
               PYTHONPATH=os.pathsep.join([str(HERE), str(ROOT)]))
    runs = [subprocess.run([sys.executable, "-c", _DISK_SCRIPT], input=blob, env=env,
                           capture_output=True, timeout=300) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr.decode()[-3000:]
    (v1, n1), (v2, n2) = (r.stdout.decode().split() for r in runs)
    assert float(v1) == float(v2) == pytest.approx(float(fn(x3)[0]), rel=1e-14)
    assert int(n1) >= 1 and int(n2) == 0  # the second process compiled nothing
    assert list(tmp_path.rglob("*.o"))


def test_a_user_function_transformed_here_still_pickles():
    # memo keeps the transforms of f on f itself; they travel as nothing
    f = _closure(1.5)
    s2s.grad(f)(x3)
    g = cloudpickle.loads(cloudpickle.dumps(f))
    assert g(x3) == f(x3) and not g.__dict__.get("_s2s_transforms")


def test_same_process_round_trip_gives_a_working_transform():
    fn = s2s.jit(s2s.grad(T.poly))
    fn(x3)
    back = pickle.loads(pickle.dumps(fn))
    assert back is not fn and not back.specs
    np.testing.assert_allclose(back(x3), fn(x3), rtol=1e-14)


def _local_custom():
    """A custom_jvp made in a function (pickled by value) whose rule calls it: the
    payload meets the custom function again inside its own rule (a cycle)."""
    @s2s.custom_jvp
    def logcosh(x):
        return np.log(np.cosh(x))

    @logcosh.defjvp
    def logcosh_jvp(primals, tangents):
        (x,), (dx,) = primals, tangents
        return logcosh(x), np.tanh(x) * dx

    return logcosh


def test_a_custom_rule_that_calls_its_function_travels_by_value(other):
    logcosh = _local_custom()
    fn = s2s.jit(s2s.grad(lambda x: np.sum(logcosh(x) * x)))
    got, _ = remote(other, fn, x3, dumps=cloudpickle.dumps)
    np.testing.assert_allclose(got, np.log(np.cosh(x3)) + x3 * np.tanh(x3), rtol=1e-12)
    got, _ = remote(other, logcosh, x3, dumps=cloudpickle.dumps)
    np.testing.assert_allclose(got, np.log(np.cosh(x3)), rtol=1e-14)
    back = cloudpickle.loads(cloudpickle.dumps(logcosh))
    rule = back._rules[1][0]  # its closure holds the function again, not a placeholder
    assert any(c.cell_contents is back for c in rule.__closure__)
