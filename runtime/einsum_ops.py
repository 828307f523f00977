"""Derivatives of ``np.einsum`` (string subscripts, explicit or implicit output,
ellipsis, repeated indices, broadcasting).

``E(a_0, ..., a_{n-1}) = einsum(subscripts, a_0, ...)`` is multilinear.  With
``F = <g, E(a)>`` (the real pairing, no conjugation: JAX's convention):

* ``einsum_jvp(t, subscripts, k, a...) = E(a; a_k := t)``, the tangent from ``a_k``;
* ``einsum_vjp(g, subscripts, k, a...) = dF/da_k``: the contraction of ``g`` with
  the other operands, written back in ``a_k``'s subscripts (a repeated index of
  ``a_k`` puts it on that diagonal, an index only ``a_k`` has broadcasts it,
  a size-1 broadcast axis of ``a_k`` sums);
* ``einsum_vjp2(g, subscripts, k, j, v, a...) = dF/da_k`` with ``a_j := v`` (0 if
  ``j == k``) and ``einsum_jvp2(t, subscripts, k, j, v, a...) = E(a; a_k := t, a_j
  := v)`` (0 if ``j == k``): the second derivatives (``s2s/rules/contractions.py``).

Operands are positional ``a0 ... a4`` (at most five; ``None`` for absent ones).
"""
from __future__ import annotations

import string

import numpy as np

from .blas_contract import contract
from .vjps import _fit

MAX_OPERANDS = 5


def _operands(ops):
    return [a for a in ops if a is not None]


def parse(subscripts, shapes):
    """``(inputs, output)``: the subscripts with every ellipsis replaced by letters and
    the implicit output made explicit (indices seen once, in alphabetical order,
    after the ellipsis axes)."""
    if not isinstance(subscripts, str):
        raise NotImplementedError("s2s: np.einsum is differentiated only in its "
                                  "subscripts-string form, einsum('ij,jk->ik', a, b)")
    s = subscripts.replace(" ", "")
    lhs, arrow, rhs = s.partition("->")
    ins = lhs.split(",")
    if len(ins) != len(shapes):
        raise ValueError(f"einsum: {len(ins)} operand subscripts, {len(shapes)} operands")
    used = set(c for c in s if c.isalpha())
    free = [c for c in string.ascii_letters if c not in used]
    n_ell = max([len(sh) - len(sub.replace("...", "")) for sub, sh in zip(ins, shapes)
                 if "..." in sub] or [0])
    ell = "".join(free[:n_ell])
    out_ins = []
    for sub, sh in zip(ins, shapes):
        if "..." in sub:
            k = len(sh) - len(sub.replace("...", ""))
            sub = sub.replace("...", ell[n_ell - k:] if k else "")
        out_ins.append(sub)
    if arrow:
        out = rhs.replace("...", ell)
    else:
        counts = {}
        for c in lhs:
            if c.isalpha():
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1))
    return out_ins, out


def _contract(subs, arrays, target, target_shape, dtype_like):
    """``sum over the other indices of prod(arrays)``, laid out as ``target`` (see the
    module docstring for repeated, missing and size-1 indices)."""
    unique = "".join(dict.fromkeys(target))
    have = set("".join(subs))
    present = "".join(c for c in unique if c in have)
    spec = ",".join(subs) + "->" + present
    r = contract(spec, *arrays) if len(arrays) == 2 else np.einsum(spec, *arrays)
    sizes = {c: n for c, n in zip(target, target_shape)}
    r = np.reshape(r, [r.shape[present.index(c)] if c in present else 1 for c in unique])
    axes = tuple(i for i, c in enumerate(unique) if sizes[c] == 1 and r.shape[i] != 1)
    if axes:
        r = np.sum(r, axis=axes, keepdims=True)
    r = np.broadcast_to(r, [sizes[c] for c in unique])
    if len(unique) == len(target):
        out = np.array(r)
    else:
        out = np.zeros(target_shape, dtype=r.dtype)
        np.einsum(target + "->" + unique, out)[...] = r
    return _fit(out, dtype_like)


def _layout(subscripts, ops):
    arrays = _operands(ops)
    ins, out = parse(subscripts, [np.shape(a) for a in arrays])
    return arrays, ins, out


def einsum_jvp(t, subscripts, k, a0, a1=None, a2=None, a3=None, a4=None):
    """``E(a; a_k := t)``."""
    arrays = _operands((a0, a1, a2, a3, a4))
    arrays[k] = t
    if len(arrays) == 2 and isinstance(subscripts, str):  # one BLAS product
        ins, out = parse(subscripts, [np.shape(a) for a in arrays])
        return contract(",".join(ins) + "->" + out, *arrays)
    return np.einsum(subscripts, *arrays)


def einsum_vjp(g, subscripts, k, a0, a1=None, a2=None, a3=None, a4=None):
    """``dF/da_k`` for ``F = <g, E(a)>``: the cotangent of operand ``k``."""
    arrays, ins, out = _layout(subscripts, (a0, a1, a2, a3, a4))
    subs = list(ins)
    others = list(arrays)
    subs[k], others[k] = out, np.asarray(g)
    return _contract(subs, others, ins[k], np.shape(arrays[k]), arrays[k])


def einsum_vjp2(g, subscripts, k, j, v, a0, a1=None, a2=None, a3=None, a4=None):
    """``einsum_vjp`` of operand ``k`` with operand ``j`` replaced by ``v`` (0 if j == k)."""
    ops = [a0, a1, a2, a3, a4]
    if j == k:
        return _fit(np.zeros(np.shape(ops[k])), ops[k])
    ops[j] = v
    return einsum_vjp(g, subscripts, k, *ops)


def einsum_jvp2(t, subscripts, k, j, v, a0, a1=None, a2=None, a3=None, a4=None):
    """``E(a; a_k := t, a_j := v)`` (0 if j == k)."""
    ops = [a0, a1, a2, a3, a4]
    if j == k:
        return np.zeros_like(np.einsum(subscripts, *_operands(ops)))
    ops[j] = v
    return einsum_jvp(t, subscripts, k, *ops)


def contraction_axis(axes, axis):
    """The axis of ``np.vecdot(x1, x2, axis=...)``; ``axes=`` is not differentiated."""
    if axes is not None and axes is not np._NoValue:
        raise NotImplementedError("s2s: no derivative of np.vecdot with axes=; use axis=")
    return -1 if axis is np._NoValue else axis
