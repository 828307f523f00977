"""Chains of elementwise operations lowered as one loop: the callable of the calls that
``passes/elementwise_fusion.py`` makes of them.

Contract: ``ElementwiseTree(nodes, inplace)`` is the callable of an IR call
``tree(*leaves)`` that computes what the statements it replaced computed.  Node ``k`` of
``nodes`` is ``Node(fn, operands, loc)``: ``fn(*operands)`` where each operand is
``("leaf", i)`` (the call's ``i``-th argument) or ``("node", j)`` (an earlier node's
value); the last node is the result, an array, or (``reduces``) the ``np.sum``/``np.prod`` of
the array the node before it makes (of all of it, a number, or along ``axis=``, with
``keepdims=``: the node's ``keywords``): its elements are then added (multiplied) in C
order into their places as they are computed, as the reduction of the stored array adds
them (``numerics/axis.accumulate_axis``), and that array is never made.  Every ``fn`` maps elements
(``calls.maps_elements``: its lowering on arrays is its lowering on numbers mapped over
the broadcast shape) or is ``rt.broadcast_like(x, like)`` (``x`` in ``like``'s shape) or
``rt.unbroadcast(g, x)`` (``g`` summed to ``x``'s shape: the identity where the shapes
agree, the real part for a real ``x``).

Typed node by node with each callable's own type rule.  Lowered as one loop: first the
shape of every node, in order, with the error each statement raised for operands that do
not broadcast, at its own line (none for a node whose shape is known to be an operand's
that the others broadcast to: ``Node.shape_from``); then one allocation of the result
and one loop over its shape whose body computes each node's element with the callable's
lowering on numbers (the element types of its operands) from the leaves' elements.  Each
node's element is converted to its own dtype, as storing it in its array did.  Where an
``unbroadcast`` node's operand does not have ``x``'s shape (a sum over broadcast axes,
checked at run time where ``shape_from`` does not rule it out), the call is computed in
stages instead: each ``unbroadcast`` by its lowering on arrays, of an operand made by one
loop over the nodes before it, and the rest by one last loop.

``inplace`` is the position of a leaf that the statement assigns the result to
(``a = a * b + c``) or None: where that leaf is an array of the result's type held by
nobody else (``inplace.unshared``) and already of the result's shape, the loop writes
into it (each element is read before it is written, and no other leaf can be a view of
it), as ``inplace.inplace_add`` does for ``a = a + b``.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional, Tuple

import numpy as np
from llvmlite import ir as ll

import s2s_runtime as rt

from ....ir import nodes as ir
from ..values import arrays as A
from ..values import scalars as S
from ..numerics.axis import accumulate_axis, reduction_axis
from ..typing import types as T
from ..lower.outline import call_outlined, may_outline


@dataclass(frozen=True)
class Node:
    fn: object
    operands: Tuple[Tuple[str, int], ...]
    loc: object = ir.NO_LOC
    keywords: Tuple[Tuple[str, object], ...] = ()  # constants (a reduction's axis=)
    #: the position of an operand known to have the node's shape, every other array
    #: operand known to broadcast to it (``symbolic_shapes.py``): nothing to check; for
    #: an ``unbroadcast``, its operand has its target's shape (the identity).  None: not
    #: known
    shape_from: Optional[int] = None

    def keyword_atoms(self):
        return {k: ir.Const(v) for k, v in self.keywords}


@dataclass(frozen=True, eq=False)
class ElementwiseTree:
    nodes: Tuple[Node, ...]
    inplace: Optional[int] = None
    #: the symbolic shape (``symbolic_shapes.py``) of every node and array leaf, where the
    #: fusion pass made the statement one of a run of such statements of one shape, lowered
    #: as one loop (``lower/fused_runs.py``); None otherwise
    run_shape: Optional[tuple] = None

    __name__ = "fused_elementwise"

    def __repr__(self):
        from .calls import name_of
        return "fused_elementwise(" + ", ".join(name_of(n.fn) for n in self.nodes) + ")"

    # -- the handler of its own calls (calls._lookup) ------------------------------------
    def type(self, fn, types, kw, loc):
        return self.node_types(types)[-1]

    def node_types(self, leaf_types):
        """The type of every node, given the leaves' types."""
        from .calls import type_call
        out = []
        for node in self.nodes:
            operands = [(_OPERAND, leaf_types[i] if kind == "leaf" else out[i])
                        for kind, i in node.operands]
            keywords = {k: (a, T.value_type(a.value)) for k, a in node.keyword_atoms().items()}
            out.append(type_call(node.fn, operands, keywords, node.loc))
        return out

    def lower(self, L, fn, vals, kw, rtype):
        if may_outline(L):  # a function of its own: see lower/outline.py
            return call_outlined(L, "fused", vals, rtype,
                                 lambda O, params: self._lower_here(O, params, rtype))
        return self._lower_here(L, vals, rtype)

    def _lower_here(self, L, vals, rtype):
        b = L.b
        types = self.node_types([t for _, t in vals])
        shapes, exact = self.node_shapes(L, vals, types)
        if not exact:
            return self._fused(L, vals, types, shapes[-1], rtype)
        every = exact[0]
        for e in exact[1:]:
            every = b.and_(every, e)
        slot = L.entry_alloca(rtype.llvm())
        with b.if_else(every, likely=True) as (fused, stepwise):
            with fused:
                b.store(self._fused(L, vals, types, shapes[-1], rtype), slot)
            with stepwise:  # a sum over broadcast axes: in stages
                b.store(self._stepwise(L, vals, types, shapes), slot)
        return b.load(slot)

    def node_shapes(self, L, vals, types):
        """``(shapes, exact)``: the shape of every node (i64 values), checked as each
        statement checked its operands, at its own line; and for each ``unbroadcast``
        node an i1, true where its operand has its target's shape already."""
        b = L.b
        loc = L.loc
        shapes, exact = [], []
        for node, t in zip(self.nodes, types):
            L.loc = node.loc
            operands = [self._operand_shape(L, vals, shapes, op) for op in node.operands]
            if node is self.nodes[-1] and self.reduces:  # over the array before it
                shapes.append(operands[0])
            elif node.shape_from is not None:
                shapes.append(operands[node.shape_from])
            elif node.fn is rt.broadcast_like:
                shapes.append(_broadcast_into(L, operands[0], operands[1]))
            elif node.fn is rt.unbroadcast:  # the identity where the shapes agree
                exact.append(b.not_(A.differs(L, operands[0], operands[1])))
                shapes.append(operands[1])
            else:
                shapes.append(A.broadcast_shape(L, [s for s in operands if s is not None],
                                                t.ndim))
        L.loc = loc
        return shapes, exact

    def _element_values(self, L, nodes, types, items):
        """``(value, element type)`` of every node of ``nodes`` at one index, from the
        leaves' elements ``items`` (the callables' lowerings on numbers)."""
        from .calls import TABLE
        b = L.b
        loc = L.loc
        values = []
        for node, t in zip(nodes, types):
            L.loc = node.loc
            operands = [items[i] if kind == "leaf" else values[i] for kind, i in node.operands]
            if node.fn in (rt.broadcast_like, rt.unbroadcast):
                (x, xt), _ = operands
                if xt.dtype == "c16" and t.dtype != "c16":  # (a real cotangent)
                    x, xt = b.extract_value(x, 0), T.Scalar("f8")
                value = S.convert(L, x, xt, t.elem)
            else:
                L.call_atoms = ([_OPERAND] * len(operands), {})
                value = TABLE[node.fn].lower(L, node.fn, operands, {}, t.elem)
            values.append((value, t.elem))
        L.loc = loc
        return values

    def lower_outputs(self, L, vals, outputs):
        """The arrays of nodes ``outputs`` (indices), computed by one loop over their
        shape: where every node's shape is known (``shape_from``: nothing to check, no
        summing path) and the outputs share theirs (a run, ``lower/fused_runs.py``).  Not
        a reduction; no leaf is written."""
        b = L.b
        types = self.node_types([t for _, t in vals])
        shapes, exact = self.node_shapes(L, vals, types)
        assert not exact and not self.reduces
        assert all(n.shape_from is not None for n in self.nodes)
        shape = shapes[outputs[0]]
        arrays = [A.allocate(L, types[k], shape) for k in outputs]
        targets = [(b.extract_value(a, 0), A.strides_list(L, a, types[k]), types[k].elem)
                   for a, k in zip(arrays, outputs)]

        def write(idx, values, _):
            for (data, strides, elem), k in zip(targets, outputs):
                value, vt = values[k]
                A.store(L, S.convert(L, value, vt, elem),
                        A.element_ptr(L, data, strides, idx, elem), elem)

        A.visit_elements(L, lambda items: (self._element_values(L, self.nodes, types, items),
                                           None), vals, shape, write)
        return arrays

    def _fused(self, L, vals, types, shape, rtype):
        """One loop over ``shape`` computing every node's element (see the docstring)."""
        from ..lower.inplace import unshared
        b = L.b

        reduces = self.reduces
        nodes = self.nodes[:-1] if reduces else self.nodes

        def compute(items):
            return self._element_values(L, nodes, types, items)[-1]

        if reduces and isinstance(rtype, T.Array):  # along axes: into their places
            last = self.nodes[-1]
            axis, keepdims = reduction_axis(last.fn, [_OPERAND], last.keyword_atoms(),
                                            len(shape), last.loc)
            return accumulate_axis(
                L, shape, lambda visit: A.visit_elements(L, compute, vals, shape, visit),
                axis, keepdims, "prod" if reduces == "mul" else "sum", rtype)
        if reduces:  # in C order, as the reduction of the array would add them
            acc = L.entry_alloca(rtype.llvm())
            b.store(L.const(0 if reduces == "add" else 1, rtype), acc)
            visit = lambda idx, v, vt: b.store(S.binary(  # noqa: E731
                L, reduces, b.load(acc), S.convert(L, v, vt, rtype), rtype), acc)
            A.visit_elements(L, compute, vals, shape, visit)
            return b.load(acc)
        if self._reusable(vals, rtype):  # the assigned leaf's array, where nobody sees it
            target = vals[self.inplace][0]
            ok = b.and_(unshared(L, target),
                        b.not_(A.differs(L, A.shape_list(L, target, rtype), shape)))
            slot = L.entry_alloca(rtype.llvm())
            with b.if_else(ok) as (reuse, fresh):
                with reuse:
                    b.store(target, slot)
                with fresh:
                    b.store(A.allocate(L, rtype, shape), slot)
            result = b.load(slot)
        else:
            result = A.allocate(L, rtype, shape)
        A.map_into(L, compute, vals, result, rtype, shape)  # (the shapes are checked above)
        return result

    def _stepwise(self, L, vals, types, shapes):
        """The call computed in stages where an ``unbroadcast`` sums over broadcast axes:
        each ``unbroadcast`` by its lowering on arrays, of its operand made by one loop
        (the nodes it reads that no stage made yet, fused), and the result by one last
        loop over the nodes after them.  ``shapes``: ``node_shapes``' (checked)."""
        from .calls import TABLE
        made = {}  # node index -> (array, type): the nodes made so far
        loc = L.loc
        for j, node in enumerate(self.nodes):
            if node.fn is not rt.unbroadcast:
                continue
            L.loc = node.loc
            g = self._stage(L, vals, types, shapes, made, node.operands[0][1]) \
                if node.operands[0][0] == "node" else vals[node.operands[0][1]]
            kind, i = node.operands[1]
            x = vals[i] if kind == "leaf" else made.get(i) or \
                (zeros_of_shape(L, types[i], shapes[i]), types[i])
            L.call_atoms = ([_OPERAND] * 2, {})
            made[j] = (TABLE[rt.unbroadcast].lower(L, rt.unbroadcast, [g, x], {}, types[j]),
                       types[j])
        L.loc = loc
        return self._stage(L, vals, types, shapes, made, len(self.nodes) - 1)[0]

    def _stage(self, L, vals, types, shapes, made, root):
        """``(value, type)`` of node ``root``: made before, or computed now by one loop
        over the nodes it reads that no stage made (the made ones and the call's leaves
        are the loop's leaves)."""
        if root in made:
            return made[root]
        wanted, todo = set(), [root]
        while todo:
            k = todo.pop()
            if k in wanted or k in made:
                continue
            wanted.add(k)
            todo.extend(i for kind, i in self.nodes[k].operands if kind == "node")
        leaves, leaf_at, node_at, nodes = [], {}, {}, []

        def leaf(key, value):
            if key not in leaf_at:
                leaf_at[key] = len(leaves)
                leaves.append(value)
            return ("leaf", leaf_at[key])

        for k in sorted(wanted):
            operands = tuple(
                leaf(("leaf", i), vals[i]) if kind == "leaf" else
                leaf(("node", i), made[i]) if i in made else ("node", node_at[i])
                for kind, i in self.nodes[k].operands)
            node_at[k] = len(nodes)
            nodes.append(replace(self.nodes[k], operands=operands))
        stage = ElementwiseTree(tuple(nodes))
        sub_types = [types[k] for k in sorted(wanted)]
        made[root] = (stage._fused(L, leaves, sub_types, shapes[root], types[root]),
                      types[root])
        return made[root]

    @property
    def reduces(self):
        """``"add"``/``"mul"`` where the last node is ``np.sum``/``np.prod`` of the array
        the node before makes (not made: its elements are added as computed), else None."""
        return _REDUCTIONS.get(self.nodes[-1].fn)

    def _reusable(self, vals, rtype) -> bool:
        return self.inplace is not None and vals[self.inplace][1] == rtype and \
            rtype.dtype in ("f4", "f8", "c16", "i8", "b1")

    @staticmethod
    def _operand_shape(L, vals, shapes, operand):
        kind, i = operand
        if kind == "node":
            return shapes[i]
        v, t = vals[i]
        return A.shape_list(L, v, t) if isinstance(t, T.Array) else None


@dataclass(frozen=True, eq=False)
class ElementwiseShape:
    """The callable of ``t = shape(*leaves)``: an array of the type and shape ``tree`` of
    the same leaves computes, every element zero, without computing the elements (a
    stand-in for a value read only for its type and shape: an operand in a position its
    callable's record lists in ``shape_operands``).  The shapes are checked as ``tree``
    checks them (the errors its statements raised, at their lines).  The elements are
    one zero read with strides 0, owned by nobody (no block: never freed, copied where
    returned)."""
    tree: ElementwiseTree

    __name__ = "fused_shape"

    def __repr__(self):
        return "shape_of_" + repr(self.tree)

    def type(self, fn, types, kw, loc):
        return self.tree.type(fn, types, kw, loc)

    def lower(self, L, fn, vals, kw, rtype):
        types = self.tree.node_types([t for _, t in vals])
        shapes, _ = self.tree.node_shapes(L, vals, types)
        return zeros_of_shape(L, rtype, shapes[-1])


#: reductions a chain may end in (whole-array, no keywords), and how they combine
_REDUCTIONS = {np.sum: "add", np.prod: "mul"}

#: the operand atom the callables' type rules and lowerings see (never a constant: the
#: constants of the fused statements are leaves)
_OPERAND = ir.Var("fused.operand")


def zeros_of_shape(L, t: T.Array, shape):
    """An array of type ``t`` and ``shape`` (i64 values) whose elements are one zero read
    with strides 0, owned by nobody (32 zero bytes on the stack: one element of any
    dtype)."""
    zero = L.b.bitcast(L.refcount_dummy(), T.PTR)
    return A.make(L, t, zero, ll.Constant(T.PTR, None), shape, [A.ZERO] * t.ndim)


def _broadcast_into(L, x, like):
    """``like``'s shape, checking that ``x``'s broadcasts to it (``rt.broadcast_like``)."""
    if like is None:
        return x if x is not None else []
    if x is None:
        return like
    target = A.broadcast_shape(L, [like, x], len(like))
    L.check(A.differs(L, target, like), ValueError,
            "could not broadcast the value into the target (its first dimension: {0})",
            (like[0] if like else A.ONE,))
    return like
