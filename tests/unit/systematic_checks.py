"""Machinery of the systematic rule tests (``test_systematic.py``; autograd's
``test_systematic`` is the model).

A *case* is a numpy expression in the arguments ``x, y, z`` (``"np.sum(x,
axis=1)"``) and a description of each argument (shape and domain).  The
expressions of all cases are written as functions into one generated module
(s2s reads source), so a case is one line of the table.  Each case is checked
against independent oracles, in float64:

* ``check_jvp``: ``s2s.jvp`` against the central finite difference
  ``(f(x + eps v) - f(x - eps v)) / (2 eps)`` along a random direction ``v``
  (complex ``v`` for complex arguments: the R-linear differential);
* ``check_vjp``: the dot-product test ``<u, J v> = <J^T u, v>`` with ``J v``
  from the finite difference and ``J^T u`` from ``s2s.vjp``; the pairing is
  ``<a, b> = Re(sum(a * b))`` (JAX's convention: no conjugation);
* ``check_second``: the JVP and the VJP of ``s2s.grad(h)``, ``h = sum(w * f)``
  (forward over reverse and reverse over reverse: Hessian-vector products)
  against the finite difference of that gradient (whose correctness the first
  two checks establish): second derivatives through generated code.
"""
from __future__ import annotations

import atexit
import importlib.util
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from typing import Callable, Dict, Tuple

import numpy as np

import s2s
from tests.grad.oracles import flatten

EPS = 1e-6


@dataclass(frozen=True)
class Arg:
    """One argument: its shape and its domain (``DOMAINS``)."""
    shape: Tuple[int, ...] = ()
    domain: str = "n"


@dataclass
class Case:
    """``expr`` in ``x, y, z``; ``args`` their descriptions.

    ``cplx``: also checked with complex128 arguments; ``second``: also
    second derivatives; ``tol``: relative tolerance of the comparisons.
    """
    expr: str
    args: Tuple[Arg, ...]
    cplx: bool = False
    second: bool = True
    tol: float = 1e-5
    slow: bool = False
    #: finite-difference step (larger for functions that are linear in low precision)
    eps: float = EPS
    name: str = field(default="")

    def __post_init__(self):
        shapes = ",".join("x".join(map(str, a.shape)) or "s" for a in self.args)
        self.name = self.name or f"{self.expr}[{shapes}]"


def _distinct(rng, shape):
    """Values at least 0.2 apart (no ties, no near-ties: max, sort, median)."""
    n = int(np.prod(shape))
    return (rng.permutation(n) * 0.3 - 0.15 * n + rng.uniform(-0.05, 0.05, n)).reshape(shape)


def _with_nans(values):
    """``values`` with NaN at every fifth entry from the second (never a whole slice of
    a (2, 3, 4) array): for the NaN-ignoring reductions."""
    v = np.array(values, dtype=float)
    v.reshape(-1)[1::5] = np.nan
    return v


def _with_zeros(values, every=5):
    """``values`` with exact zeros at every ``every``-th entry from the third."""
    v = np.array(values, dtype=float)
    v.reshape(-1)[2::every] = 0.0
    return v


DOMAINS: Dict[str, Callable] = {
    "n": lambda rng, s: rng.standard_normal(s),
    "u": lambda rng, s: rng.uniform(-0.8, 0.8, s),              # |x| < 1: arcsin, arctanh
    "p": lambda rng, s: rng.uniform(0.5, 2.0, s),               # positive: log, sqrt
    "g": lambda rng, s: rng.uniform(1.2, 3.0, s),               # > 1: arccosh
    "z": lambda rng, s: rng.choice([-1.0, 1.0], s) * rng.uniform(0.5, 2.0, s),  # away from 0
    "d": _distinct,
    "s": lambda rng, s: rng.uniform(-0.45, 0.45, s) + rng.integers(-3, 4, s),  # mod: far from jumps
    "O": lambda rng, s: np.zeros(s),                                       # exactly 0
    "t": lambda rng, s: _with_zeros(rng.uniform(-5e-4, 5e-4, s), 3),    # tiny, and 0: sinc
    "0": lambda rng, s: _with_zeros(rng.standard_normal(s)),            # one zero in a slice
    "00": lambda rng, s: _with_zeros(rng.standard_normal(s), 2),        # several zeros
    "N": lambda rng, s: _with_nans(rng.standard_normal(s)),
    "D": lambda rng, s: _with_nans(_distinct(rng, s)),
    "Z": lambda rng, s: _with_nans(rng.choice([-1.0, 1.0], s) * rng.uniform(0.5, 2.0, s)),
}


def draw(arg: Arg, rng, cplx=False):
    v = np.asarray(DOMAINS[arg.domain](rng, arg.shape), dtype=float)
    if cplx:
        scale = 0.3 if arg.domain in ("u", "p", "g") else 1.0
        v = v + 1j * scale * rng.uniform(-1, 1, arg.shape)
    return v[()] if arg.shape == () else v


def direction(x, rng):
    v = rng.standard_normal(np.shape(x))
    if np.iscomplexobj(x):
        v = v + 1j * rng.standard_normal(np.shape(x))
    return v[()] if np.shape(x) == () else v


# --- the generated module ----------------------------------------------------------------
_PARAMS = "xyzwv"
_MODULES: Dict[Tuple[str, ...], object] = {}
_DIR = tempfile.mkdtemp(prefix="s2s_systematic_")
atexit.register(shutil.rmtree, _DIR, True)


def module_for(exprs) -> object:
    """A module with ``f_i(x, ...) = exprs[i]`` and ``h_i(x, ..., w) = sum(Re(w * f_i))``."""
    key = tuple(exprs)
    mod = _MODULES.get(key)
    if mod is not None:
        return mod
    lines = ["import math", "import operator", "import numpy as np", "import s2s_runtime as rt",
             "try:", "    import scipy.special as sp", "except ImportError:", "    sp = None", ""]
    for i, (expr, nargs) in enumerate(exprs):
        ps = ", ".join(_PARAMS[:nargs])
        lines += [f"def f_{i}({ps}):", f"    return {expr}", "",
                  f"def h_{i}({ps}, cot):", f"    return np.sum(np.real(cot * f_{i}({ps})))", ""]
    path = os.path.join(_DIR, f"systematic_fns_{len(_MODULES)}.py")
    with open(path, "w") as fh:
        fh.write("\n".join(lines))
    spec = importlib.util.spec_from_file_location(f"systematic_fns_{len(_MODULES)}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    _MODULES[key] = mod
    return mod


# --- pytree arithmetic ------------------------------------------------------------------
def leaves(tree):
    return [np.asarray(v) for v in flatten(tree)[0]]


def pairing(a, b) -> float:
    """``Re(sum(a * b))`` over matching leaves (JAX's real pairing, no conjugation)."""
    return float(sum(np.real(np.sum(x * y)) for x, y in zip(leaves(a), leaves(b))))


def fd(f, args, vs, eps=EPS):
    plus = f(*[a + eps * v for a, v in zip(args, vs)])
    minus = f(*[a - eps * v for a, v in zip(args, vs)])
    lp, lm = leaves(plus), leaves(minus)
    return [(p - m) / (2 * eps) for p, m in zip(lp, lm)]


def assert_close(actual, expected, tol, what):
    for i, (a, e) in enumerate(zip(leaves(actual), leaves(expected))):
        scale = max(1.0, float(np.nanmax(np.abs(e))) if np.size(e) and not np.all(np.isnan(e))
                    else 1.0)
        np.testing.assert_allclose(a, e, rtol=tol, atol=tol * scale, err_msg=f"{what} leaf {i}",
                                   equal_nan=True)


def assert_real_close(a, b, tol, what):
    scale = max(1.0, abs(a), abs(b))
    assert abs(a - b) <= tol * scale, f"{what}: {a!r} != {b!r}"


# --- the checks -------------------------------------------------------------------------
def inputs(case: Case, seed: int, cplx=False):
    rng = np.random.default_rng(seed)
    args = [draw(a, rng, cplx) for a in case.args]
    vs = [direction(a, rng) for a in args]
    return rng, args, vs


def check_first_order(f, case: Case, seed=0, cplx=False):
    """JVP against FD, and VJP by the dot-product test against the same FD."""
    rng, args, vs = inputs(case, seed, cplx)
    expected = fd(f, args, vs, case.eps)
    value, tangent = s2s.jvp(f, tuple(args), tuple(vs))
    assert_close(value, f(*args), 1e-12, "primal value")
    assert len(leaves(tangent)) == len(expected), "tangent structure"
    assert_close(tangent, expected, case.tol, "jvp vs finite differences")
    value, pullback = s2s.vjp(f, *args)
    out_leaves, rebuild = flatten(value)
    us = [direction(np.asarray(o), rng) for o in out_leaves]
    cts = pullback(rebuild(us))
    for c, a in zip(cts, args):
        assert np.shape(c) == np.shape(a), f"cotangent shape {np.shape(c)} != {np.shape(a)}"
        if not np.iscomplexobj(a):
            assert not np.iscomplexobj(c), "complex cotangent of a real argument"
    lhs = pairing(us, expected)
    rhs = pairing(cts, vs)
    assert_real_close(rhs, lhs, case.tol, "vjp dot-product test <J^T u, v> vs <u, J v>")


def check_second(f, h, case: Case, seed=0, cplx=False):
    """``jvp(grad(h))`` (a Hessian-vector product of ``h = sum(Re(w * f))``) against the
    finite difference of ``grad(h)`` (which ``check_first_order`` validates).

    Complex arguments: ``grad(h)`` is the gradient for the real pairing (JAX's
    conjugate convention); its derivative is still symmetric for that pairing, so
    the same two comparisons hold."""
    rng, args, vs = inputs(case, seed + 1, cplx)
    w = direction(np.asarray(f(*args)), rng)
    gh = s2s.grad(h, argnums=tuple(range(len(args))))
    expected = fd(lambda *a: gh(*a, w), args, vs)
    tol = max(case.tol, 1e-4)
    _, hv = s2s.jvp(gh, tuple(args) + (w,), tuple(vs) + (np.zeros_like(w),))
    assert_close(hv, expected, tol, "jvp(grad) vs finite differences of grad")
    # reverse over reverse: the Hessian is symmetric, so the VJP of grad(h) with the
    # cotangent v is H v too (this runs the VJP templates of the helpers' rules)
    _, pullback = s2s.vjp(gh, *args, w)
    cts = pullback(tuple(vs))
    assert_close(cts[:len(args)], expected, tol, "vjp(grad) vs finite differences of grad")
