"""Run-time helpers of batched products (``s2s.vmap``; see ``batching.py``).

Every product numpy offers (``dot``, ``matmul``, ``inner``, ``outer``, ``vdot``,
``tensordot``, two-operand ``einsum``) is a contraction of the examples' axes;
``batch_spec`` writes it as einsum subscripts with the batch as the letter
``z`` on the batched operands and the result, and ``batch_contract`` runs it as
one ``np.matmul`` on views of the operands (``blas_contract``: the batch merged
into the matrix rows where the memory allows, else matmul's stacked axis).  The VJP
of a contraction is a contraction
(``batch_contract_vjp``, ``batch_bilinear_vjp`` for the product VJP helpers of
generated derivative code).
"""
from __future__ import annotations

import numpy as np

from .batching import batch_size, per_example_ndim
from .blas_contract import contract

_LETTERS = "abcdefghijklmnopqrstuvwxy"  # 'z' is the batch letter


# -- contractions (dot, matmul, inner, outer, vdot, tensordot, einsum) ------------------
def _letters(k, start=0):
    return _LETTERS[start:start + k]


def batch_spec(kind, a, b, a_batched, b_batched, axes=None):
    """The einsum subscripts of a per-example contraction of ``a`` and ``b`` with the
    batch as the letter ``z`` on the batched operands and the result.

    ``kind``: ``dot`` (last axis of a with the second-to-last of b; scalars multiply),
    ``matmul`` (stacked matrices; 1-D operands are vectors), ``inner`` (last axes),
    ``outer`` (operands already flat), ``vdot`` (flat operands, summed),
    ``tensordot`` (``axes`` as numpy's), ``einsum`` (``axes`` is the user's subscripts).
    """
    ra, rb = per_example_ndim(a, a_batched), per_example_ndim(b, b_batched)
    if kind == "einsum":
        sa, sb, so = _einsum_parts(axes)
    elif kind in ("dot", "inner") and (ra == 0 or rb == 0):
        sa, sb = _letters(ra), _letters(rb, 12)
        so = sa + sb
    elif kind == "dot" or kind == "inner":
        sa = _letters(ra)
        sb = list(_letters(rb, 12))
        k = max(rb - 2, 0) if kind == "dot" else rb - 1
        sb[k] = sa[-1]
        sb = "".join(sb)
        so = sa[:-1] + sb.replace(sa[-1], "")
    elif kind == "matmul":  # stacked axes right-aligned, as numpy broadcasts them
        stack = "abcdefgh"[:max(ra, rb, 2) - 2]
        sa = (stack[len(stack) - (ra - 2):] + "ij") if ra >= 2 else "j"
        sb = (stack[len(stack) - (rb - 2):] + "jk") if rb >= 2 else "j"
        so = stack + ("i" if ra >= 2 else "") + ("k" if rb >= 2 else "")
    elif kind == "outer":
        sa, sb, so = "i", "j", "ij"
    elif kind == "vdot":
        sa, sb, so = "i", "i", ""
    elif kind == "tensordot":
        sa, sb, so = _tensordot_parts(ra, rb, axes)
    else:
        raise ValueError(f"unknown contraction {kind!r}")
    za, zb = ("z" if a_batched else ""), ("z" if b_batched else "")
    zo = "z" if (a_batched or b_batched) else ""
    return f"{za}{sa},{zb}{sb}->{zo}{so}"


def _tensordot_parts(ra, rb, axes):
    if isinstance(axes, (int, np.integer)):
        ka, kb = list(range(ra - axes, ra)), list(range(axes))
    else:
        ka, kb = axes
        ka = [ka] if isinstance(ka, (int, np.integer)) else list(ka)
        kb = [kb] if isinstance(kb, (int, np.integer)) else list(kb)
    ka, kb = [k % ra for k in ka], [k % rb for k in kb]
    sa = list(_letters(ra))
    sb = list(_letters(rb, 12))
    for i, j in zip(ka, kb):
        sb[j] = sa[i]
    so = "".join(c for i, c in enumerate(sa) if i not in ka) + \
        "".join(c for j, c in enumerate(sb) if j not in kb)
    return "".join(sa), "".join(sb), so


def _einsum_parts(subscripts):
    s = subscripts.replace(" ", "")
    if "->" in s:
        ins, out = s.split("->")
    else:
        ins = s
        letters = [c for c in ins if c.isalpha()]
        out = ("..." if "..." in ins else "") + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1))
    parts = ins.split(",")
    if len(parts) != 2:
        raise ValueError("vmap: einsum with other than two operands")
    if "z" in s:
        swap = next(c for c in "ZYXWV" if c not in s)
        parts = [p.replace("z", swap) for p in parts]
        out = out.replace("z", swap)
    return parts[0], parts[1], out


def batch_contract(spec, a, b):
    """``np.einsum(spec, a, b)``: a per-example contraction (``batch_spec``)."""
    return _einsum2(spec, a, b)


def _einsum2(spec, a, b):
    """``np.einsum(spec, a, b)`` as one matrix product (BLAS) on views of the operands,
    without numpy's per-call search for a contraction order (``blas_contract``)."""
    return contract(spec, a, b)


def _bilinear_to(subs, p, q, like):
    """``np.einsum(subs, p, q)`` where the output may name letters neither operand has (a
    letter of one operand of a product alone, summed there): the derivative is the same
    all along such a letter, so it is contracted to the other letters and broadcast along
    it to ``like``'s length on that axis (``like`` has the output's subscripts)."""
    ins, out = subs.split("->")
    have = set(ins) - {","}
    kept = "".join(c for c in out if c in have)
    r = _einsum2(f"{ins}->{kept}", p, q)
    if kept == out:
        return r
    r = np.expand_dims(r, tuple(k for k, c in enumerate(out) if c not in have))
    shape = [np.shape(like)[k] if c not in have else r.shape[k] for k, c in enumerate(out)]
    return np.broadcast_to(r, shape)


def batch_contract_vjp(spec, which, g, a, b):
    """Cotangent of operand ``which`` of ``batch_contract(spec, a, b)`` for the result's
    cotangent ``g``: ``g`` contracted with the other operand back to the operand's
    subscripts (the transpose of a bilinear form); the batch letter is summed away for
    an operand the same for every example, broadcast stacked axes are summed back."""
    subs, (_, p), (_, q), x = _vjp_operands(spec, which, g, a, b)
    return _fit(_bilinear_to(subs, p, q, x), x)


def batch_bilinear_vjp(kind, which, g, a, b, g_batched, a_batched, b_batched, axes=None):
    """The batched form of the VJP helpers of products (``dot_vjp``, ``inner_vjp``,
    ``tensordot_vjp``, ``matmul_vjp_lhs``/``_rhs``): the cotangent of factor ``which``.
    The result is batched when any operand is; a factor the same for every example whose
    cotangent does not depend on the batch is broadcast over it."""
    subs, lift = bilinear_vjp_subscripts(kind, which, a, b, g_batched, a_batched, b_batched,
                                         axes)
    batched = g_batched or a_batched or b_batched
    target_batched = a_batched if which == 0 else b_batched
    operands = (g, b) if which == 0 else (a, g)
    out = _einsum2(subs, *operands)
    target = a if which == 0 else b
    if lift:  # the cotangent is the same for every example: fit to one example's shape
        out = _fit(out, np.asarray(target)[0] if target_batched else target)
        n = next(np.shape(v)[0] for v, f in ((g, g_batched), (a, a_batched), (b, b_batched))
                 if f)  # the batch size, from a batched operand
        return np.broadcast_to(out, (n,) + np.shape(out))
    if batched and not target_batched:
        n = out.shape[0]
        return _fit(out, np.broadcast_to(np.asarray(target), (n,) + np.shape(target)))
    return _fit(out, target)


def bilinear_vjp_subscripts(kind, which, a, b, g_batched, a_batched, b_batched, axes=None):
    """``(subscripts, lift)`` of ``batch_bilinear_vjp``: the einsum of the cotangent with
    the other factor (in argument order: ``g, b`` for factor 0, ``a, g`` for factor 1)
    back to the factor's subscripts; ``lift``: the result is then broadcast over the
    batch.  Depends only on the ranks of ``a`` and ``b`` and on the flags."""
    spec = batch_spec(kind, a, b, a_batched, b_batched, axes)
    batched = g_batched or a_batched or b_batched
    target_batched = a_batched if which == 0 else b_batched
    ins, so = spec.split("->")
    sa, sb = ins.split(",")
    if batched and not target_batched:
        if which == 0:
            sa = "z" + sa
        else:
            sb = "z" + sb
    if not g_batched:  # the cotangent is the same for every example
        so = so.replace("z", "")
    elif "z" not in so:
        so = "z" + so
    elif not g_batched:
        so = so.replace("z", "")  # a cotangent the same for every example: no batch axis
    other_sub = sb if which == 0 else sa
    target_sub = sa if which == 0 else sb
    if "z" in target_sub and "z" not in so and "z" not in other_sub:
        target_sub = target_sub[1:]
        lift = True
    else:
        lift = False
    subs = f"{so},{other_sub}->{target_sub}" if which == 0 else f"{other_sub},{so}->{target_sub}"
    return subs, lift


def _fit(out, target):
    """``out`` summed over broadcast axes to ``target``'s shape, real if ``target`` is."""
    shape = np.shape(target)
    out = np.asarray(out)
    if out.shape != shape:
        extra = out.ndim - len(shape)
        if extra > 0:
            out = out.sum(axis=tuple(range(extra)))
        axes = tuple(i for i, s in enumerate(shape) if s == 1 and out.shape[i] != 1)
        if axes:
            out = out.sum(axis=axes, keepdims=True)
    if not np.iscomplexobj(target) and np.iscomplexobj(out):
        out = out.real
    return out if np.ndim(target) or type(target) is np.ndarray else out[()]


def _vjp_operands(spec, which, g, a, b):
    """``batch_contract_vjp(spec, which, g, a, b)`` as a bilinear einsum ``P,Q->R`` of two
    of its arguments: ``(subscripts, (name_P, P), (name_Q, Q), target)``."""
    ins, so = spec.split("->")
    sa, sb = ins.split(",")
    if which == 0:
        return f"{so},{sb}->{sa}", ("g", g), ("b", b), a
    return f"{sa},{so}->{sb}", ("a", a), ("g", g), b


def batch_contract_vjp_jvp(t, spec, which, g, a, b, wrt):
    """Tangent of ``batch_contract_vjp`` from argument ``wrt``'s tangent ``t`` (bilinear:
    ``t`` in that argument's place; zero for an argument it reads only for its shape)."""
    subs, (np_, p), (nq, q), target = _vjp_operands(spec, which, g, a, b)
    if wrt == np_:
        return _fit(_bilinear_to(subs, t, q, target), target)
    if wrt == nq:
        return _fit(_bilinear_to(subs, p, t, target), target)
    return np.zeros(np.shape(target))


def batch_contract_vjp_vjp(ct, spec, which, g, a, b, wrt):
    """Cotangent of argument ``wrt`` of ``batch_contract_vjp`` (the transpose of the
    bilinear form ``P,Q->R`` in that argument)."""
    subs, (np_, p), (nq, q), _ = _vjp_operands(spec, which, g, a, b)
    ins, r = subs.split("->")
    sp, sq = ins.split(",")
    if wrt == np_:
        return _fit(_einsum2(f"{r},{sq}->{sp}", ct, q), p)
    if wrt == nq:
        return _fit(_einsum2(f"{sp},{r}->{sq}", p, ct), q)
    return np.zeros(np.shape({"g": g, "a": a, "b": b}[wrt]))

