"""Custom functions under ``vmap``: their rules batched with them.

A call of a ``custom_jvp``/``custom_vjp`` function ``f`` on operands of which some
are batched (on axis 0, as every batched value of the batching transform) stays, in
the batched code, a call of a custom function of the same kind, ``batched_custom(f,
flags)``, so a derivative later taken of the batched code (``grad(vmap(f))``,
``jvp(vmap(f))``) uses the user's rule, batched, and never the derivative of the
primal code (JAX batches ``custom_jvp_call``/``custom_vjp_call`` the same way).  For
``in_axes`` = 0 where ``flags`` is true and None elsewhere:

* the primal is ``vmap(f.fun, in_axes)``;
* ``custom_jvp``: the rule is ``vmap(f.jvp, in_axes=(*nondiff axes, primal axes,
  primal axes))`` (a tangent is batched where its primal is), its value and tangent
  batched on axis 0;
* ``custom_vjp``: ``fwd`` is ``vmap(f.fwd, in_axes)`` (the value and the residuals
  batched on axis 0), ``bwd`` is ``vmap(f.bwd, in_axes=(*nondiff axes, 0, 0))`` with
  the cotangent of each argument that is not batched summed over the batch
  (``rt.unbroadcast``: the transpose of using one value for every example).

Each is made once per ``(f, flags, fallback)`` and kept on ``f`` (``memo``).
"""
from __future__ import annotations

import s2s_runtime as rt

from .custom import custom_jvp, custom_vjp, define_function
from .specialise import memo


def batched_custom(f, flags, fallback=None):
    """The custom function computing ``f`` on operands batched where ``flags`` says."""
    flags = tuple(bool(x) for x in flags)
    return memo(f, ("vmap custom", flags, fallback), lambda: _make(f, flags, fallback))


def _axes(flags):
    return tuple(0 if b else None for b in flags)


def _vmapped(fun, fallback, axes):
    from .vmap import vmap_of  # vmap.py batches custom calls with this module
    return vmap_of(fun, fallback, in_axes=axes)


def _make(f, flags, fallback):
    n = f.n
    if len(flags) != n:
        raise TypeError(f"{f.describe()} takes {n} positional argument(s), got {len(flags)}")
    axes = _axes(flags)
    names = [f"x{i}" for i in range(n)]
    args = ", ".join(names)
    base = f"{f.name}_vmap"
    primal = define_function(f"def {base}({args}):\n    return _primal({args})\n", base,
                             {"_primal": _vmapped(f.fun, fallback, axes)}, f.fun)
    out = type(f)(primal, f.nondiff_argnums)
    nondiff = [names[i] for i in f.nondiff_argnums]
    nondiff_axes = tuple(axes[i] for i in f.nondiff_argnums)
    diff_axes = tuple(axes[i] for i in f.diff_argnums)
    lead = "".join(f"{x}, " for x in nondiff)
    if isinstance(f, custom_jvp):
        # the rule on flat arguments (vmap in code takes an axis per argument)
        ps = [f"p{k}" for k in range(len(diff_axes))]
        ts = [f"t{k}" for k in range(len(diff_axes))]
        flat = ", ".join(nondiff + ps + ts)
        tup = lambda xs: "(" + "".join(x + ", " for x in xs) + ")"  # noqa: E731
        flat_rule = define_function(
            f"def {base}_jvp_flat({flat}):\n"
            f"    return _jvp({lead}{tup(ps)}, {tup(ts)})\n", f"{base}_jvp_flat",
            {"_jvp": f.jvp}, f.jvp)
        rule = define_function(
            f"def {base}_jvp({lead}primals, tangents):\n"
            f"    {''.join(p + ', ' for p in ps)}= primals\n"
            f"    {''.join(t + ', ' for t in ts)}= tangents\n"
            f"    return _rule({flat})\n", f"{base}_jvp",
            {"_rule": _vmapped(flat_rule, fallback, nondiff_axes + diff_axes + diff_axes)},
            f.jvp)
        out.defjvp(rule)
    elif isinstance(f, custom_vjp):
        fwd = _batched_fwd(f, names, axes, base, fallback)
        bwd = define_function(_batched_bwd_source(f, axes, base, lead), f"{base}_bwd",
                              {"_bwd": _vmapped(f.bwd, fallback, nondiff_axes + (0, 0)),
                               "_unbroadcast": rt.unbroadcast}, f.bwd)
        out.defvjp(fwd, bwd)
    return out


def _unbatched(f, axes):
    return [i for i in f.diff_argnums if axes[i] is None]


def _batched_fwd(f, names, axes, base, fallback):
    """``fwd`` batched; its residuals are ``(batched residuals, the unbatched
    differentiable arguments)``: ``bwd`` sums their cotangents back to their shapes."""
    args = ", ".join(names)
    kept = "".join(f"{names[i]}, " for i in _unbatched(f, axes))
    src = (f"def {base}_fwd({args}):\n"
           f"    out, res = _fwd({args})\n"
           f"    return out, (res, ({kept}))\n")
    return define_function(src, f"{base}_fwd", {"_fwd": _vmapped(f.fwd, fallback, axes)},
                           f.fwd)


def _batched_bwd_source(f, axes, base, lead):
    unbatched = _unbatched(f, axes)
    summed = []
    for k, i in enumerate(f.diff_argnums):
        if axes[i] == 0:
            summed.append(f"cts[{k}]")
        else:
            summed.append(f"_unbroadcast(cts[{k}], kept[{unbatched.index(i)}])")
    return (f"def {base}_bwd({lead}res, ct):\n"
            f"    inner, kept = res\n"
            f"    cts = _bwd({lead}inner, ct)\n"
            f"    return ({''.join(s + ', ' for s in summed)})\n")
