"""``np.einsum`` and its derivative helpers compiled as loop nests.

``np.einsum(subscripts, *operands)`` with constant string subscripts (explicit or
implicit output, ellipsis, repeated indices, numpy's broadcasting of size-1 axes;
``runtime/einsum_ops.parse`` reads them): every distinct index is a loop, the result
starts at zero, and each combination of indices adds the product of the operands'
elements at its place in the result.  One mechanism gives every case numpy's values:
an index summed over is a loop the result does not see, a repeated index of an
operand reads its diagonal, a repeated index of the result writes one (the rest zero).

The derivative helpers of ``runtime/einsum_ops.py`` (``k`` and ``j`` constants):

* ``einsum_jvp(t, subscripts, k, a...)``: the einsum with operand ``k`` := ``t``;
* ``einsum_vjp(g, subscripts, k, a...)``: the contraction of ``g`` (in the output's
  indices) with the other operands, laid out in operand ``k``'s indices and shape: an
  index only ``a_k`` has broadcasts, a size-1 axis of ``a_k`` sums, a repeated index
  fills its diagonal; real for a real ``a_k``, of its float dtype;
* ``einsum_vjp2``/``einsum_jvp2(., subscripts, k, j, v, a...)``: those with operand
  ``j`` := ``v`` (zeros when ``j == k``).

The loops are the plain definition, the result's last index innermost (independent
iterations, which LLVM vectorises); no blocking into matrix products: a contraction
the size of a large matrix product is faster written with ``@``.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir as ll

import s2s_runtime as rt
from s2s_runtime.einsum_ops import parse

from ..values import arrays as A
from ..values import scalars as S
from ..typing import types as T
from .calls import register

ZERO = ll.Constant(T.I64, 0)
ONE = ll.Constant(T.I64, 1)
_BROADCAST = "operands could not be broadcast together with remapped shapes"


def _ndim(t):
    return t.ndim if isinstance(t, T.Array) else 0


def _operand(t) -> bool:
    return isinstance(t, T.Array) and t.dtype != "b1" or \
        isinstance(t, T.Scalar) and t.dtype != "b1"


def _elem(t):
    return t.elem if isinstance(t, T.Array) else t


def _layout(subscripts, types):
    """``(inputs, output)`` for operands of these types (numpy's ValueError for
    subscripts that do not fit them); None when the call is not one the jit compiles."""
    if not (isinstance(subscripts, T.Static) and isinstance(subscripts.value, str)) or \
            not types or not all(map(_operand, types)):
        return None
    ins, out = parse(subscripts.value, [(1,) * _ndim(t) for t in types])
    for i, (sub, t) in enumerate(zip(ins, types)):
        if len(sub) != _ndim(t) or not sub.isalpha():
            raise ValueError(f"einstein sum subscripts string {subscripts.value!r} does not "
                             f"fit operand {i} (of {_ndim(t)} dimensions)")
    if not set(out) <= set("".join(ins)) or len(set(out)) != len(out):
        raise ValueError(f"einstein sum subscripts string {subscripts.value!r}: an output "
                         "index that no operand has, or one given twice")
    return ins, out


def _computed(types):
    return T.promote(*map(_elem, types))


def _result(elem, ndim):
    return elem if ndim == 0 else T.Array(elem.dtype, ndim)


def _like(ct: T.Scalar, x):
    """The element type of the cotangent of ``x`` (``einsum_ops._fit``): real for a real
    ``x``, of ``x``'s float dtype."""
    xe = _elem(x)
    if xe.dtype in ("f4", "f8", "c16"):
        return T.Scalar(xe.dtype)
    return T.Scalar("f8") if ct.dtype == "c16" else ct


def contract(L, subs, operands, target, target_dims, elem):
    """``sum over every index not in target of prod(operands)`` as an array of shape
    ``target_dims`` (i64 values, one per letter of ``target``; a scalar for no letters)
    and element type ``elem``.  ``operands``: ``(value, type)`` pairs, ``subs`` their
    index letters.  Each letter runs over the largest of its axes (the result's
    included), every axis being that size or 1 (numpy's ValueError otherwise); a size-1
    axis is read (or, in the result, summed into) at index 0."""
    b = L.b
    unique = list(dict.fromkeys(target))
    summed = [c for c in dict.fromkeys("".join(subs)) if c not in unique]
    # the last result index innermost: its iterations are independent (they vectorise)
    letters = unique[:-1] + summed + unique[-1:]
    dims = {c: [] for c in letters}
    for sub, (v, t) in zip(subs, operands):
        for d, c in enumerate(sub):
            dims[c].append(A.shape_of(L, v, d))
    for c, n in zip(target, target_dims):
        dims[c].append(n)
    size = {}
    for c in letters:
        top = dims[c][0]
        for n in dims[c][1:]:
            top = b.select(b.icmp_signed(">", n, top), n, top)
        for n in dims[c]:
            L.check(b.and_(b.icmp_signed("!=", n, top), b.icmp_signed("!=", n, ONE)),
                    ValueError, _BROADCAST)
        size[c] = top

    def steps(sub, strides, shape):
        """Per letter, the stride the loop of that letter moves by (0 along size 1)."""
        out = {}
        for c, s, n in zip(sub, strides, shape):
            step = b.select(b.icmp_signed("==", n, ONE), ZERO, s)
            out[c] = b.add(out[c], step) if c in out else step
        return out

    reads = []
    for sub, (v, t) in zip(subs, operands):
        if isinstance(t, T.Scalar):
            reads.append((None, v, t, {}))
        else:
            reads.append((b.extract_value(v, 0), v, t,
                          steps(sub, A.strides_list(L, v, t), A.shape_list(L, v, t))))
    scalar_out = not target
    if scalar_out:
        slot = L.entry_alloca(elem.llvm())
        b.store(L.const(0, elem), slot)
        out = None
    else:
        rtype = T.Array(elem.dtype, len(target))
        out = A.allocate(L, rtype, list(target_dims), zeroed=True)
        out_data = b.extract_value(out, 0)
        out_steps = steps(target, A.strides_list(L, out, rtype), list(target_dims))
    computed = T.promote(elem, *(_elem(t) for t in (op[1] for op in operands)))

    def at(data, step, idx, e):
        offset = ZERO
        for c, s in step.items():
            offset = b.add(offset, b.mul(idx[c], s))
        return b.bitcast(b.gep(data, [offset]), T.memory_llvm(e).as_pointer())

    def body(index):
        idx = dict(zip(letters, index))
        prod = None
        for data, v, t, step in reads:
            x = v if data is None else A.load(L, at(data, step, idx, t.elem), t.elem)
            x = S.convert(L, x, _elem(t), computed)
            prod = x if prod is None else S.binary(L, "mul", prod, x, computed)
        prod = S.convert(L, prod, computed, elem)
        ptr = slot if scalar_out else at(out_data, out_steps, idx, elem)
        b.store(S.binary(L, "add", b.load(ptr), prod, elem), ptr)

    A.loop_nest(L, [size[c] for c in letters], body)
    return b.load(slot) if scalar_out else out


class Einsum:
    """``np.einsum(subscripts, *operands)`` (``optimize=`` is accepted and ignored)."""

    def type(self, fn, types, kw, loc):
        if set(kw) - {"optimize"}:
            return None
        layout = _layout(types[0], types[1:]) if types else None
        if layout is None:
            return None
        return _result(_computed(types[1:]), len(layout[1]))

    def lower(self, L, fn, vals, kw, rtype):
        ins, out = _layout(vals[0][1], [t for _, t in vals[1:]])
        dims = _output_dims(L, ins, vals[1:], out)
        return contract(L, ins, vals[1:], out, dims, _elem(rtype))


def _output_dims(L, ins, operands, out):
    """The size of each output letter: the largest of its operand axes."""
    b = L.b
    dims = []
    for c in out:
        top = None
        for sub, (v, t) in zip(ins, operands):
            for d, x in enumerate(sub):
                if x == c:
                    n = A.shape_of(L, v, d)
                    top = n if top is None else b.select(b.icmp_signed(">", n, top), n, top)
        dims.append(top)
    return dims


class EinsumHelper:
    """``einsum_jvp``/``einsum_vjp`` and their second-order forms (module docstring)."""

    wants_atoms = True

    def __init__(self, vjp, second):
        self.vjp, self.second = vjp, second

    def _parts(self, types, atoms):
        """``(seed type, subscripts, k, j, v type, operand types)`` or None."""
        lead = 5 if self.second else 3
        if len(types) < lead + 1:
            return None
        k = getattr(atoms[2], "value", None)
        j = getattr(atoms[3], "value", None) if self.second else None
        ops = [t for t in types[lead:] if not isinstance(t, T.NoneType)]
        if type(k) is not int or not 0 <= k < len(ops) or \
                self.second and (type(j) is not int or not 0 <= j < len(ops)):
            return None
        return types[0], types[1], k, j, types[4] if self.second else None, ops

    def _replaced(self, parts):
        seed, subscripts, k, j, v, ops = parts
        ops = list(ops)
        if j is not None and j != k:
            ops[j] = v
        return ops

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        parts = None if kw else self._parts(types, atoms)
        if parts is None:
            return None
        seed, subscripts, k, j, v, ops = parts
        ops = self._replaced(parts)
        if self.vjp:
            layout = _layout(subscripts, ops)
            if layout is None or not _operand(seed):
                return None
            elem = _like(_computed([seed] + ops[:k] + ops[k + 1:]), ops[k])
            return _result(elem, _ndim(ops[k]))
        ops[k] = seed
        layout = _layout(subscripts, ops)
        return None if layout is None else _result(_computed(ops), len(layout[1]))

    def lower(self, L, fn, vals, kw, rtype):
        types = [t for _, t in vals]
        seed, subscripts, k, j, _, ops = self._parts(types, L.call_atoms[0])
        lead = 5 if self.second else 3
        operands = [x for x in vals[lead:] if not isinstance(x[1], T.NoneType)]
        if j is not None and j != k:
            operands[j] = vals[4]
        if self.second and j == k:  # the second derivative in one operand: zero
            return _zeros(L, operands[k], rtype) if self.vjp else \
                _zeros_result(L, subscripts, operands, rtype)
        ins, out = _layout(subscripts, [t for _, t in operands])
        if self.vjp:
            subs = list(ins)
            subs[k] = out
            others = list(operands)
            x, xt = others[k]
            others[k] = vals[0]
            dims = [] if isinstance(xt, T.Scalar) else A.shape_list(L, x, xt)
            return contract(L, subs, others, ins[k], dims, _elem(rtype))
        operands[k] = vals[0]
        return contract(L, ins, operands, out, _output_dims(L, ins, operands, out),
                        _elem(rtype))


def _zeros(L, like, rtype):
    v, t = like
    if isinstance(rtype, T.Scalar):
        return L.const(0, rtype)
    return A.allocate(L, rtype, A.shape_list(L, v, t), zeroed=True)


def _zeros_result(L, subscripts, operands, rtype):
    if isinstance(rtype, T.Scalar):
        return L.const(0, rtype)
    ins, out = _layout(subscripts, [t for _, t in operands])
    return A.allocate(L, rtype, _output_dims(L, ins, operands, out), zeroed=True)


register(Einsum(), np.einsum)
register(EinsumHelper(False, False), rt.einsum_jvp)
register(EinsumHelper(True, False), rt.einsum_vjp)
register(EinsumHelper(False, True), rt.einsum_jvp2)
register(EinsumHelper(True, True), rt.einsum_vjp2)
