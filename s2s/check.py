"""Checking s2s's derivatives of a function against independent oracles (``s2s check``).

Contract: ``check(fn, args, argnums, mode)`` returns a ``Report``: one ``Row`` per
checked quantity with the largest absolute and relative error and whether it is
within tolerance.  The oracles never use s2s's derivatives:

* ``grad``: the gradient of a real scalar function against central differences
  in float64, entry by entry for every float (and complex: ``d/dRe - i d/dIm``,
  JAX's convention) leaf of each differentiated argument; leaves with more than
  ``max_entries`` entries are checked along ``directions`` random directions
  (``<grad, v>`` against the difference quotient along ``v``).
* ``jvp``: the tangent of the output (any pytree) along a random tangent of the
  differentiated arguments against the central difference quotient, and the
  dot-product test against ``vjp``: ``<u, J v> = <J^T u, v>`` for a random
  output cotangent ``u`` (real values only; skipped, and said so, with complex ones).
* ``jit``: ``s2s.jit(s2s.grad(f))`` against central differences, and
  ``s2s.jit(f)`` against ``f`` run by Python.

Errors are ``max |a - e|`` and that divided by ``max(|e|, tiny)``; a row passes when
``max |a - e| <= atol + rtol * max |e|``.  The step of the central difference at a
value ``x`` is ``h = step * max(1, |x|)`` (``step`` ~ cube root of the float64
epsilon: truncation and rounding errors of ~1e-10 relative).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Sequence

import numpy as np

from s2s_runtime.tree import tree_flatten, tree_leaves, tree_unflatten

from . import api
from .errors import S2SError

STEP = 6e-6


@dataclass
class Row:
    what: str          # "x", "params", "jvp", "dot product", "value"
    shape: str
    abs_err: float
    rel_err: float
    ok: bool
    how: str = ""      # "entrywise", "3 directions", "skipped: ..."


@dataclass
class Report:
    mode: str
    rows: List[Row] = field(default_factory=list)
    rtol: float = 1e-5
    atol: float = 1e-8

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.rows)

    def table(self) -> str:
        head = ("checked", "shape", "max abs err", "max rel err", "", "oracle")
        body = [(r.what, r.shape, f"{r.abs_err:.2e}", f"{r.rel_err:.2e}",
                 "ok" if r.ok else "FAIL", r.how) for r in self.rows]
        widths = [max(len(line[k]) for line in [head] + body) for k in range(len(head))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip()
                 for line in [head] + body]
        verdict = "OK" if self.ok else "MISMATCH"
        lines.append(f"{verdict}: rtol={self.rtol:g}, atol={self.atol:g}")
        return "\n".join(lines) + "\n"


def _inexact(leaf) -> bool:
    return np.asarray(leaf).dtype.kind in "fc"


def _as_float64(leaf):
    a = np.asarray(leaf)
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


def _like(leaf, value):
    """``value`` (float64/complex128) in the container kind of ``leaf`` (number or array)."""
    if isinstance(leaf, np.ndarray):
        return np.asarray(value)
    if isinstance(leaf, (complex, np.complexfloating)):
        return complex(value)
    return float(value)


def _compare(what, actual, expected, rtol, atol, how="", shape=None) -> Row:
    a = np.concatenate([np.ravel(np.asarray(x, dtype=complex)) for x in actual] or [np.zeros(0)])
    e = np.concatenate([np.ravel(np.asarray(x, dtype=complex)) for x in expected] or [np.zeros(0)])
    if a.shape != e.shape:
        return Row(what, shape or "", float("inf"), float("inf"), False,
                   f"{a.size} values where {e.size} were expected")
    err = float(np.max(np.abs(a - e))) if a.size else 0.0
    scale = float(np.max(np.abs(e))) if e.size else 0.0
    ok = bool(np.all(np.isfinite(a))) and err <= atol + rtol * scale
    return Row(what, shape or "", err, err / max(scale, np.finfo(float).tiny), ok, how)


def _describe_shape(tree) -> str:
    leaves = tree_leaves(tree)
    if not isinstance(tree, (list, tuple, dict)) and len(leaves) == 1:
        shape = np.shape(leaves[0])
        return "scalar" if shape == () else str(shape)
    return f"{len(leaves)} leaves"


def _scalar(value, name) -> float:
    v = np.asarray(value) if isinstance(value, (int, float, np.ndarray, np.generic)) else None
    if v is None or v.shape != () or v.dtype.kind not in "fiub":
        got = f"{v.dtype}{list(v.shape)}" if v is not None else type(value).__name__
        raise TypeError(f"--mode grad and jit need {name} to return a real number, got "
                        f"{got} (--mode jvp checks any output)")
    return float(v)


def _with_leaf(args, argnum, leaves, treedef, k, value):
    new = list(leaves)
    new[k] = value
    out = list(args)
    out[argnum] = tree_unflatten(treedef, new)
    return out


def _fd_gradient(f, args, argnum, max_entries, directions, rng):
    """The central-difference gradient of scalar ``f`` in ``args[argnum]``, leaf by leaf:
    ``(expected, measured_index)`` where a large leaf gives ``("dirs", [(v, dq)])``."""
    leaves, treedef = tree_flatten(args[argnum])
    out = []
    for k, leaf in enumerate(leaves):
        if not _inexact(leaf):
            out.append(None)
            continue
        base = _as_float64(leaf)
        complex_leaf = base.dtype.kind == "c"

        def quotient(v):
            h = STEP * max(1.0, float(np.max(np.abs(base))) if base.size else 1.0)
            plus = _with_leaf(args, argnum, leaves, treedef, k, _like(leaf, base + h * v))
            minus = _with_leaf(args, argnum, leaves, treedef, k, _like(leaf, base - h * v))
            return (_scalar(f(*plus), "FUNC") - _scalar(f(*minus), "FUNC")) / (2 * h)

        if base.size <= max_entries:
            g = np.zeros(base.shape, dtype=base.dtype)
            for idx in np.ndindex(*base.shape):
                e = np.zeros(base.shape)
                e[idx] = 1.0
                g[idx] = quotient(e)
                if complex_leaf:  # JAX's convention for C -> R: d/dRe - i d/dIm
                    g[idx] -= 1j * quotient(1j * e)
            out.append(("entries", g))
        else:
            pairs = []
            for _ in range(directions):
                v = rng.standard_normal(base.shape)
                if complex_leaf:
                    v = v + 1j * rng.standard_normal(base.shape)
                pairs.append((v, quotient(v)))
            out.append(("directions", pairs))
    return out


def _grad_rows(f, grads, args, argnums, names, rtol, atol, max_entries, directions, rng):
    rows = []
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    grads = (grads,) if single else tuple(grads)
    for a, g in zip(nums, grads):
        expected = _fd_gradient(f, args, a, max_entries, directions, rng)
        g_leaves = tree_leaves(g)
        actual, wanted, hows = [], [], set()
        if len(g_leaves) != len(expected):
            rows.append(Row(names[a], _describe_shape(args[a]), float("inf"), float("inf"),
                            False, "the gradient's structure differs from the argument's"))
            continue
        for gl, ex in zip(g_leaves, expected):
            if ex is None:
                continue
            if ex[0] == "entries":
                actual.append(gl)
                wanted.append(ex[1])
                hows.add("entrywise")
            else:
                for v, dq in ex[1]:  # <g, v> in the real inner product: Re(sum(conj(g) v))
                    actual.append(np.real(np.sum(np.conj(np.asarray(gl)) * v)))
                    wanted.append(dq)
                hows.add(f"{directions} random directions")
        how = "central differences, " + " and ".join(sorted(hows)) if hows else \
            "no float leaves (zero gradient)"
        rows.append(_compare(names[a], actual, wanted, rtol, atol, how,
                             _describe_shape(args[a])))
    return rows


def _random_like(leaf, rng):
    a = np.asarray(leaf)
    v = rng.standard_normal(a.shape)
    if a.dtype.kind == "c":
        v = v + 1j * rng.standard_normal(a.shape)
    return _like(leaf, v)


def _jvp_rows(fn, args, argnums, rtol, atol, rng):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    tangents = []
    for k, a in enumerate(args):
        leaves, treedef = tree_flatten(a)
        tangents.append(tree_unflatten(treedef, [
            (_random_like(leaf, rng) if k in nums else _like(leaf, np.zeros(np.shape(leaf))))
            if _inexact(leaf) else np.zeros_like(leaf) for leaf in leaves]))
    out, tangent = api.jvp(fn, tuple(args), tuple(tangents))
    scale = max([1.0] + [float(np.max(np.abs(_as_float64(leaf)))) for k in nums
                         for leaf in tree_leaves(args[k]) if _inexact(leaf)
                         and np.size(leaf)])
    h = STEP * scale

    def shifted(sign):
        moved = []
        for k, (a, t) in enumerate(zip(args, tangents)):
            if k not in nums:
                moved.append(a)
                continue
            leaves, treedef = tree_flatten(a)
            t_leaves = tree_leaves(t)
            moved.append(tree_unflatten(treedef, [
                _like(leaf, _as_float64(leaf) + sign * h * np.asarray(tl)) if _inexact(leaf)
                else leaf for leaf, tl in zip(leaves, t_leaves)]))
        return [_as_float64(leaf) for leaf in tree_leaves(fn(*moved))]

    quotient = [(p - m) / (2 * h) for p, m in zip(shifted(1.0), shifted(-1.0))]
    rows = [_compare("jvp", tree_leaves(tangent), quotient, rtol, atol,
                     "central difference along a random tangent", _describe_shape(out))]
    out_leaves = tree_leaves(out)
    complex_values = any(np.asarray(x).dtype.kind == "c"
                         for x in out_leaves + tree_leaves(tangents))
    if complex_values:
        rows.append(Row("dot product", _describe_shape(out), 0.0, 0.0, True,
                        "skipped: complex values"))
        return rows
    u_leaves = [_random_like(x, rng) if _inexact(x) else np.zeros(np.shape(x))
                for x in out_leaves]
    _, pullback = api.vjp(fn, *args)
    u = tree_unflatten(tree_flatten(out)[1], u_leaves)
    cotangents = pullback(u)
    lhs = sum(float(np.sum(np.asarray(ul) * np.asarray(tl)))
              for ul, tl in zip(u_leaves, tree_leaves(tangent)) if _inexact(tl))
    rhs = 0.0
    for k in nums:
        for cl, tl in zip(tree_leaves(cotangents[k]), tree_leaves(tangents[k])):
            if _inexact(tl):
                rhs += float(np.sum(np.asarray(cl) * np.asarray(tl)))
    rows.append(_compare("dot product", [lhs], [rhs], rtol, atol,
                         "<u, J v> (jvp) = <J^T u, v> (vjp)", "scalar"))
    return rows


def check(fn, args: Sequence, argnums=0, mode="grad", names=None, rtol=1e-5, atol=1e-8,
          max_entries=200, directions=3, seed=0) -> Report:
    """Check the derivatives of ``fn`` at ``args`` (see the module doc); ``names``: one
    label per argument (the parameter names)."""
    args = list(args)
    names = list(names) if names is not None else [f"arg {k}" for k in range(len(args))]
    rng = np.random.default_rng(seed)
    report = Report(mode, rtol=rtol, atol=atol)
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for k in nums:
        if not -len(args) <= k < len(args):
            raise ValueError(f"argnums {k} is out of range for {len(args)} argument(s)")
    if mode == "jvp":
        report.rows += _jvp_rows(fn, args, argnums, rtol, atol, rng)
        return report
    name = getattr(fn, "__name__", "the function")
    try:  # s2s first: it names unsupported code with its line
        gradient = api.grad(fn, argnums=argnums)
        grads = (api.jit(gradient) if mode == "jit" else gradient)(*args)
    except S2SError:
        raise
    except Exception:
        _scalar(fn(*args), name)  # a clearer message when the output is not a number
        raise
    value = _scalar(fn(*args), name)
    if mode == "jit":
        report.rows.append(_compare("value", [api.jit(fn)(*args)], [value], rtol, atol,
                                    "s2s.jit(f) against f in Python", "scalar"))
    report.rows += _grad_rows(fn, grads, args, argnums, names, rtol, atol, max_entries,
                              directions, rng)
    return report
