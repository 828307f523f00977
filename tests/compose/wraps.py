"""Composable building blocks of the composition matrix.

A ``Case`` is a test function ``R^a -> R^b`` (an array or a number in; an array, a
number or a 1-tuple of one out) with two implementations: ``fn``, what s2s made
of it, and ``oracle(x, h)``, plain numpy built from the untransformed primal by
central finite differences with step ``h`` at every level (``step`` picks ``h``
from the derivative order, so nested differences stay accurate).  A *wrap* maps
a case to another: the transform applied to ``fn`` and the same derivative taken
of ``oracle`` by finite differences, never by s2s.  ``chain(base, names)``
applies wraps innermost first, so any composition of any corpus function is one
line: ``chain(base_case("loop_sum"), ["hessian", "vmap", "jit"])`` is
``jit(vmap(hessian(loop_sum)))``.

``WRAPS`` maps each name to its wrap: ``grad``, ``jvp`` (inside code:
``lambda x: jvp(f, (x,), (v,))[1]``), ``vjp`` (inside code:
``lambda x: vjp(f, x)[1](u)[0]``), ``pullback`` (the ``vjp_fun`` at the case's
point, a function of the cotangent), ``linearize`` (the ``jvp_fun``, a function of
the tangent), ``jacfwd``, ``jacrev``, ``hessian``, ``vmap`` (over a batch of two
points), ``jit``, ``custom_jvp`` and ``custom_vjp`` (a custom function whose
primal is the case and whose rule is s2s's ``jvp``/``vjp`` of it), ``checkpoint``.
``grad`` and ``hessian`` of a function that is not real-scalar take it in code
with fixed weights, ``lambda x: np.sum(w * f(x))``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

import s2s

#: the finite-difference step for an oracle of each total derivative order
_STEPS = {0: 1e-5, 1: 1e-5, 2: 1e-4, 3: 1e-3, 4: 3e-3, 5: 6e-3}


def step(order: int) -> float:
    return _STEPS[min(order, 5)]


def tolerance(order: int) -> float:
    """How close ``fn`` and the oracle must be, relative to the oracle's size."""
    return {0: 1e-9, 1: 1e-6, 2: 1e-5, 3: 2e-4, 4: 3e-3}.get(order, 1e-2)


@dataclass
class Case:
    name: str
    fn: Callable
    oracle: Callable  # (x, h) -> expected output, numpy only
    x: object  # the point it is checked at: an array or a float
    order: int = 0  # derivative order of the oracle (finite-difference levels)
    tuple1: bool = False  # fn returns a 1-tuple (a vjp pullback's cotangents)

    def expected(self):
        return self.oracle(self.x, step(self.order))

    def out_example(self):
        if not hasattr(self, "_out"):
            self._out = self.oracle(self.x, step(self.order))
        return self._out


def _un(v, tuple1):
    return v[0] if tuple1 else v


def _pk(v, tuple1):
    return (v,) if tuple1 else v


def _like(x, rng, scale=1.0):
    """A random value shaped like ``x`` (a float for a float)."""
    if isinstance(x, (float, np.floating)) or np.ndim(x) == 0:
        return float(rng.uniform(0.5, 1.0) * scale)
    return rng.uniform(-1.0, 1.0, np.shape(x)) * scale


def _shift(x, d):
    if isinstance(x, (float, np.floating)) and not isinstance(x, np.ndarray):
        return float(x + d)
    return np.asarray(x, dtype=float) + d


def fd_jacobian(g, x, h, tuple1=False):
    """Central differences of ``g`` at ``x``: layout ``out.shape + x.shape``."""
    shape = np.shape(x)
    size = int(np.prod(shape))
    cols = []
    for k in range(size):
        e = np.zeros(size)
        e[k] = h
        e = e.reshape(shape) if shape else float(e[0])
        hi = np.asarray(_un(g(_shift(x, e)), tuple1), dtype=float)
        lo = np.asarray(_un(g(_shift(x, -e if shape else -e)), tuple1), dtype=float)
        cols.append((hi - lo) / (2 * h))
    jac = np.stack(cols, axis=-1)
    return _pk(jac.reshape(np.shape(cols[0]) + shape), tuple1)


def fd_hessian(g, x, h):
    """Second differences of the real-scalar ``g``: layout ``x.shape + x.shape``."""
    shape = np.shape(x)
    size = int(np.prod(shape))
    out = np.zeros((size, size))

    def at(i, si, j, sj):
        d = np.zeros(size)
        d[i] += si * h
        d[j] += sj * h
        return float(g(_shift(x, d.reshape(shape) if shape else float(d[0]))))

    for i in range(size):
        for j in range(size):
            out[i, j] = (at(i, 1, j, 1) - at(i, 1, j, -1) - at(i, -1, j, 1)
                         + at(i, -1, j, -1)) / (4 * h * h)
    return out.reshape(shape + shape)


def _scalar_out(case) -> bool:
    out = case.out_example()
    return not case.tuple1 and np.ndim(out) == 0 and not np.iscomplexobj(out)


def _weights(case, rng):
    return _like(_un(case.out_example(), case.tuple1), rng)


def _scalarised(case, rng):
    """``(f, oracle)`` of ``x -> sum(w * case(x))`` (in code, for s2s)."""
    w = _weights(case, rng)
    f, o, t1 = case.fn, case.oracle, case.tuple1
    if t1:
        def fs(x):
            return np.sum(w * f(x)[0])
    else:
        def fs(x):
            return np.sum(w * f(x))
    return fs, (lambda x, h: float(np.sum(w * np.asarray(_un(o(x, h), t1)))))


def _named(case, what, fn, oracle, x=None, d=1, tuple1=None):
    return Case(f"{what}({case.name})", fn, oracle, case.x if x is None else x,
                case.order + d, case.tuple1 if tuple1 is None else tuple1)


# -- the wraps ------------------------------------------------------------------------

def w_grad(case, rng):
    if _scalar_out(case):
        f, o = case.fn, case.oracle
    else:
        f, o = _scalarised(case, rng)
    return _named(case, "grad", s2s.grad(f), lambda x, h: fd_jacobian(lambda y: o(y, h), x, h),
                  tuple1=False)


def w_jvp(case, rng):
    v = _like(case.x, rng)
    f, o, t1 = case.fn, case.oracle, case.tuple1

    def fn(x):
        return s2s.jvp(f, (x,), (v,))[1]

    def oracle(x, h):
        hi = np.asarray(_un(o(_shift(x, h * v), h), t1))
        lo = np.asarray(_un(o(_shift(x, -h * v), h), t1))
        return _pk((hi - lo) / (2 * h), t1)
    return _named(case, "jvp", fn, oracle)


def w_vjp(case, rng):
    u = _weights(case, rng)
    f, o, t1 = case.fn, case.oracle, case.tuple1
    ct = (u,) if t1 else u

    def fn(x):
        return s2s.vjp(f, x)[1](ct)[0]

    def oracle(x, h):
        return fd_jacobian(lambda y: float(np.sum(u * np.asarray(_un(o(y, h), t1)))), x, h)
    return _named(case, "vjp", fn, oracle, tuple1=False)


def _jacobian_at_point(case):
    """``h -> J(case.x)`` by finite differences (cached per step)."""
    cache = {}

    def jac(h):
        if h not in cache:
            cache[h] = np.asarray(_un(fd_jacobian(lambda y: case.oracle(y, h), case.x, h,
                                                  case.tuple1), case.tuple1))
        return cache[h]
    return jac


def w_pullback(case, rng):
    x0, t1 = case.x, case.tuple1
    pb = s2s.vjp(case.fn, x0)[1]
    jac = _jacobian_at_point(case)
    nx = np.ndim(x0)
    c0 = _weights(case, rng)
    if t1:
        def fn(c):
            return pb((c,))
    else:
        fn = pb

    def oracle(c, h):
        j = jac(h)  # out.shape + x.shape
        return (np.tensordot(np.asarray(c), j, axes=np.ndim(j) - nx),)
    return _named(case, "pullback", fn, oracle, x=c0, tuple1=True)


def w_linearize(case, rng):
    x0, t1 = case.x, case.tuple1
    jvp_fun = s2s.linearize(case.fn, x0)[1]
    jac = _jacobian_at_point(case)
    nx = np.ndim(x0)

    def oracle(t, h):
        j = jac(h)
        return _pk(np.tensordot(j, np.asarray(t), axes=nx), t1)
    return _named(case, "linearize", jvp_fun, oracle, x=_like(x0, rng))


def _jac_wrap(transform):
    def wrap(case, rng):
        o, t1 = case.oracle, case.tuple1
        return _named(case, transform.__name__, transform(case.fn),
                      lambda x, h: fd_jacobian(lambda y: o(y, h), x, h, t1))
    return wrap


def w_hessian(case, rng):
    if _scalar_out(case):
        f, o = case.fn, case.oracle
    else:
        f, o = _scalarised(case, rng)
    return _named(case, "hessian", s2s.hessian(f),
                  lambda x, h: fd_hessian(lambda y: o(y, h), x, h), d=2, tuple1=False)


def w_vmap(case, rng):
    x, o, t1 = case.x, case.oracle, case.tuple1
    batch = np.stack([np.asarray(x, dtype=float), _shift(x, 0.05 * _like(x, rng))])

    def oracle(xs, h):
        outs = [np.asarray(_un(o(xs[k] if np.ndim(xs[k]) else float(xs[k]), h), t1))
                for k in range(xs.shape[0])]
        return _pk(np.stack(outs), t1)
    return _named(case, "vmap", s2s.vmap(case.fn), oracle, x=batch, d=0)


def w_jit(case, rng):
    return _named(case, "jit", s2s.jit(case.fn), case.oracle, d=0)


def w_checkpoint(case, rng):
    return _named(case, "checkpoint", s2s.checkpoint(case.fn), case.oracle, d=0)


def w_custom_jvp(case, rng):
    f = case.fn

    def primal(x):
        return f(x)

    wrapped = s2s.custom_jvp(primal)

    def rule(primals, tangents):
        return f(primals[0]), s2s.jvp(f, primals, tangents)[1]

    wrapped.defjvp(rule)
    return _named(case, "custom_jvp", wrapped, case.oracle, d=0)


def w_custom_vjp(case, rng):
    f = case.fn

    def primal(x):
        return f(x)

    wrapped = s2s.custom_vjp(primal)

    def fwd(x):
        return f(x), x

    def bwd(x, g):
        return (s2s.vjp(f, x)[1](g)[0],)

    wrapped.defvjp(fwd, bwd)
    return _named(case, "custom_vjp", wrapped, case.oracle, d=0)


WRAPS = {
    "grad": w_grad, "jvp": w_jvp, "vjp": w_vjp, "pullback": w_pullback,
    "linearize": w_linearize, "jacfwd": _jac_wrap(s2s.jacfwd), "jacrev": _jac_wrap(s2s.jacrev),
    "hessian": w_hessian, "vmap": w_vmap, "jit": w_jit, "custom_jvp": w_custom_jvp,
    "custom_vjp": w_custom_vjp, "checkpoint": w_checkpoint,
}


def base_case(name):
    from .corpus import CORPUS
    f, x = CORPUS[name]
    return Case(name, f, lambda y, h: f(y), x)


def chain(case, names, seed=0):
    """``case`` wrapped by ``names``, innermost first."""
    rng = np.random.default_rng(seed)
    for n in names:
        case = WRAPS[n](case, rng)
    return case


def check(case):
    """``case.fn`` at its point agrees with the oracle (relative to the oracle's size)."""
    got = case.fn(case.x)
    want = case.expected()
    if case.tuple1:
        assert isinstance(got, tuple) and len(got) == 1, f"{case.name}: expected a 1-tuple"
        got, want = got[0], want[0]
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert got.shape == want.shape, f"{case.name}: shape {got.shape}, expected {want.shape}"
    err = float(np.max(np.abs(got - want))) if got.size else 0.0
    scale = 1.0 + (float(np.max(np.abs(want))) if want.size else 0.0)
    assert err <= tolerance(case.order) * scale, \
        f"{case.name}: max error {err:.3g} (tolerance {tolerance(case.order) * scale:.3g})"
