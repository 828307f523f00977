"""Fusing chains of elementwise statements into one call, lowered as one loop.

``t1 = a * b; t2 = np.exp(c); y = t1 + t2`` allocates and loops three times when each
statement is lowered alone; the adjoint and tangent code that reverse and forward mode
write is made of such chains (``dt = dx * y + x * dy``).  Contract:
``fuse_elementwise(func, types)`` returns ``func`` (typed by ``types``) with each chain
of statements ``t = fn(...)`` replaced by one statement ``y = tree(*leaves)``
(``ops/fused.ElementwiseTree``), or ``func`` itself when nothing fuses.

A statement joins the call that reads it when:

* it assigns an array computed by a callable that maps elements
  (``calls.maps_elements``: arithmetic, comparisons, numpy's math functions ...) or by
  ``rt.broadcast_like``, positional operands only, numbers or arrays, and the
  callable's type rule on the operands' element types gives the result's element type;
* its target is not a parameter, and is read by a later statement of the same block
  that joins the same way (or the statement is the chain's last): the one read of a
  name assigned once in the function, or, for a name assigned again (an adjoint
  ``x_bar``), the next mention of it, after which it is assigned again before anything
  else reads it (``_dead_after_reader``);
* every statement between it and that reader is itself a statement that joins a chain.

Reads of a name as a *shape operand* (an operand its callable's record lists in
``shape_operands``: ``unbroadcast(g, t)``'s ``t``, reverse mode's references to the
primal values) do not count as its reader: a name assigned once whose value is read by
one chain statement, or by none, gets ``t = shape(*leaves)`` where it was assigned
(``fused.ElementwiseShape``: the shape its chain computes, checked as its statements
checked it, with no elements computed), and its value is computed only inside its
reader's loop, or never.

A node whose shape is known to be one operand's, every other array operand known to
broadcast to it (``symbolic_shapes.py``: the others' sizes are among its), gets that
operand's position (``Node.shape_from``): its lowering checks no broadcast.  An
``unbroadcast`` gets it only where its operand has its target's shape, so it needs no
summing path.  One left alone in its chain, or a ``broadcast_like``, whose operand is
known to have the result's shape and dtype is a copy of the name.

In a function with at least ``RUNS_FROM`` fused loops at its top level, consecutive
top-level statements whose arrays all have one known shape are marked as a run
(``ElementwiseTree.run_shape``), which ``lower/fused_runs.py`` lowers as one loop.

A chain may end in ``np.sum``/``np.prod`` of its array, whole or along a constant
``axis=``: the reduction then adds the elements as they are computed, and the array is
never made.

Those statements are pure, so computing a joined statement where its reader is computed
reads the same values: the statements in between write no leaf (a joined statement
assigns a name read only later; a statement computed where it stands first emits the
chains that read the name it assigns), and a name read before its assignment in a loop
body is never joined (its one reader comes later).  Any other statement first emits the
chains not yet read, in their order.  Error checks stay those of each statement
(``fused.py``).
"""
from __future__ import annotations

import bisect

from collections import Counter
from dataclasses import replace

import numbers
import operator

import numpy as np

import s2s_runtime as rt

from ....ir import nodes as ir
from ....rules.registry import shape_operands
from ..ops.calls import maps_elements, type_call
from ..ops.fused import ElementwiseShape, ElementwiseTree, Node
from ..typing import types as T
from .symbolic_shapes import symbolic_shapes


def fuse_elementwise(func, types):
    defs = Counter(v.name for s in ir.walk(func.body) for v in ir.stmt_defs(s))
    fusion = _Fusion(types, defs, ir.use_counts(func.body), _shape_reads(func.body),
                     {p.var.name for p in func.params},
                     may_catch=any(isinstance(s, ir.Try) for s in ir.walk(func.body)),
                     shapes=symbolic_shapes(func, types))
    body = fusion.block(func.body)
    if sum(isinstance(getattr(s, "value", None), ir.Call)
           and isinstance(s.value.fn, ElementwiseTree) for s in body) >= RUNS_FROM:
        body = fusion.runs(body)
    return replace(func, body=body) if fusion.changed else func


#: the number of fused loops at a function's top level from which runs of them are marked
#: to be lowered as one loop each (``_Fusion.runs``).  One loop computing a long chain of
#: dependent statements per element runs slower than a loop per statement (each element's
#: chain is latency-bound: 1.6x for a chain of 20 products and sums, 2.7x with a ``tanh``
#: in every fourth statement, 10^5 elements), so only a function long enough for LLVM's
#: time per loop to dominate (hundreds of statements) gets them
RUNS_FROM = 128


class _Chain:
    """The statements joined so far into one value: its nodes and leaves (atoms)."""

    def __init__(self, stmt):
        self.stmt = stmt
        self.nodes = []
        self.shapes = []  # each node's symbolic shape (``symbolic_shapes.py``) or None
        self.leaves = []
        self.var_leaves = {}  # name -> position in ``leaves`` of each variable leaf

    def add(self, node, shape):
        self.nodes.append(node)
        self.shapes.append(shape)

    def leaf(self, atom):
        if isinstance(atom, ir.Var):
            k = self.var_leaves.get(atom.name)
            if k is None:
                k = self.var_leaves[atom.name] = len(self.leaves)
                self.leaves.append(atom)
            return k
        for k, a in enumerate(self.leaves):
            if type(a) is type(atom) and a == atom:
                return k
        self.leaves.append(atom)
        return len(self.leaves) - 1

    def join(self, other):
        """``other``'s nodes and leaves appended; the operand that reads its value."""
        leaf_at = [self.leaf(a) for a in other.leaves]
        first = len(self.nodes)
        for node in other.nodes:
            operands = tuple(("leaf", leaf_at[i]) if kind == "leaf" else ("node", first + i)
                             for kind, i in node.operands)
            self.nodes.append(replace(node, operands=operands))
        self.shapes.extend(other.shapes)
        return ("node", len(self.nodes) - 1)

    def statement(self):
        """The chain as one statement (the statement itself when nothing joined it)."""
        s = self.stmt
        if len(self.nodes) == 1:
            return s
        inplace = next((k for k, a in enumerate(self.leaves)
                        if isinstance(a, ir.Var) and a.name == s.target.name), None)
        tree = ElementwiseTree(_unbroadcasts_merged(self.nodes, self.shapes), inplace)
        return replace(s, value=ir.Call(tree, tuple(self.leaves)))


def _unbroadcasts_merged(nodes, shapes):
    """``nodes`` with the terms ``unbroadcast(u, x)``, ``unbroadcast(v, x)``, ... of one sum
    (a tree of ``+`` nodes) that may sum over broadcast axes (no ``shape_from``) made one
    term ``unbroadcast(u + v + ..., x)`` where ``u``, ``v``, ... are known to have one
    shape (``shapes``: each node's symbolic shape): the sum over broadcast axes is linear
    (and so is taking the real part), so an adjoint accumulated from many broadcast reads
    of ``x`` is summed into ``x``'s shape once.
    The sum's other terms are added after it, in their order.  Nodes no other node reads
    any more are dropped (the last node is the value)."""
    def in_sum(k):
        return nodes[k].fn is operator.add and \
            all(kind == "node" for kind, _ in nodes[k].operands)

    def key(k):  # (x, the shape of u) of a term unbroadcast(u, x) that sums, else None
        node = nodes[k]
        if node.fn is rt.unbroadcast and node.shape_from is None and \
                node.operands[0][0] == "node" and shapes[node.operands[0][1]] is not None:
            return (node.operands[1], shapes[node.operands[0][1]])
        return None

    parent = {i: k for k, n in enumerate(nodes) for kind, i in n.operands if kind == "node"}
    terms_of = {}  # the root of a sum that has two terms of one key -> its terms, in order
    for k in range(len(nodes)):
        if not in_sum(k) or k in parent and in_sum(parent[k]):
            continue
        terms, todo = [], [k]
        while todo:
            j = todo.pop()
            if j == k or in_sum(j):
                todo.extend(i for _, i in reversed(nodes[j].operands))
            else:
                terms.append(j)
        keys = [key(t) for t in terms if key(t) is not None]
        if len(keys) > len(set(keys)):
            terms_of[k] = terms
    inside = {j for k in terms_of for j in range(k) if in_sum(j) and _under(parent, j, k)}
    out, at = [], {}

    def emit(node):
        out.append(node)
        return ("node", len(out) - 1)

    for k, node in enumerate(nodes):
        if k in inside:
            continue
        if k not in terms_of:
            at[k] = emit(replace(node, operands=tuple(
                ("node", at[i]) if kind == "node" else (kind, i)
                for kind, i in node.operands)))[1]
            continue
        terms, groups = terms_of[k], {}
        for t in terms:
            if key(t) is not None:
                groups.setdefault(key(t), []).append(t)
        new_terms, done = [], set()
        for t in terms:
            group = groups.get(key(t)) if key(t) is not None else None
            if group is None or len(group) == 1:
                new_terms.append(("node", at[t]))
            elif key(t) not in done:
                done.add(key(t))
                total = ("node", at[nodes[group[0]].operands[0][1]])
                for other in group[1:]:
                    u = ("node", at[nodes[other].operands[0][1]])
                    total = emit(Node(operator.add, (total, u), node.loc, shape_from=0))
                new_terms.append(emit(replace(nodes[t], operands=(total, nodes[t].operands[1]))))
        total = new_terms[0]
        for term in new_terms[1:]:
            total = emit(replace(node, operands=(total, term), shape_from=None))
        at[k] = total[1]
    return _live(out)


def _under(parent, j, root) -> bool:
    """Whether node ``j`` is in the subtree of node ``root`` (following ``parent``)."""
    while j in parent:
        j = parent[j]
        if j == root:
            return True
    return False


def _live(nodes):
    """The nodes the last one reads, directly or not, renumbered (order kept)."""
    live = {len(nodes) - 1}
    for k in range(len(nodes) - 1, -1, -1):
        if k in live:
            live.update(i for kind, i in nodes[k].operands if kind == "node")
    at = {k: j for j, k in enumerate(sorted(live))}
    return tuple(replace(nodes[k], operands=tuple(
        ("node", at[i]) if kind == "node" else (kind, i) for kind, i in nodes[k].operands))
        for k in sorted(live))


class _Fusion:
    def __init__(self, types, defs, uses, shape_reads, params, may_catch, shapes):
        self.types, self.defs, self.uses, self.params = types, defs, uses, params
        self.shapes = shapes  # symbolic_shapes.py's
        self.shape_reads = shape_reads  # name -> its reads as a shape operand
        self.may_catch = may_catch  # a try in the function: a handler might read anything
        self.changed = False

    def block(self, stmts):
        stmts = list(stmts)
        joins = [self._joins(s) for s in stmts]
        reduces = [not joins[j] and self._reduces(s) for j, s in enumerate(stmts)]
        occurs = {}  # name -> the indices of the statements that read or assign it
        for j, s in enumerate(stmts):
            for name in _names(s):
                occurs.setdefault(name, []).append(j)

        def reader(name, k):
            """The next statement after ``k`` that mentions ``name``, where that is a
            chain's statement reading its value as an operand, else -1."""
            at = occurs[name]
            i = bisect.bisect_right(at, k)  # (``at`` ascends)
            if i < len(at) and (joins[at[i]] or reduces[at[i]]) and \
                    name in _value_reads(stmts[at[i]].value):
                return at[i]
            return -1

        out, pending = [], {}  # pending: name -> _Chain, in statement order

        def flush(keep=()):
            for name in [n for n in pending if n not in keep]:
                out.append(self._emit(pending.pop(name)))

        for k, s in enumerate(stmts):
            if reduces[k] and s.value.args[0].name in pending:  # a chain's last node
                arg = s.value.args[0].name
                flush(keep={arg})
                chain = _Chain(s)
                chain.add(Node(s.value.fn, (chain.join(pending.pop(arg)),), s.loc,
                               tuple((k, a.value) for k, a in s.value.kwargs)),
                          self.shapes.get(s.target.name))
                out.append(self._emit(chain))
                continue
            if not joins[k]:
                flush()
                blocks = ir.sub_blocks(s)
                if blocks:
                    s = ir.with_blocks(s, [tuple(self.block(b)) for b in blocks])
                out.append(s)
                continue
            chain = _Chain(s)
            operands = []
            for a in s.value.args:
                if isinstance(a, ir.Var) and a.name in pending:
                    operands.append(chain.join(pending.pop(a.name)))
                else:
                    operands.append(("leaf", chain.leaf(a)))
            chain.add(Node(s.value.fn, tuple(operands), s.loc, shape_from=self._shape_from(s)),
                      self.shapes.get(s.target.name))
            name = s.target.name
            single = self.defs[name] == 1 and name not in self.params
            shape_reads = self.shape_reads.get(name, 0) if single else 0
            if shape_reads and self.uses.get(name, 0) == shape_reads:  # only its shape
                out.append(self._shape_stand_in(chain))
                continue
            later = reader(name, k)
            if later > k and name not in self.params and (
                    single and self.uses.get(name, 0) - shape_reads == 1
                    or not shape_reads and self._dead_after_reader(stmts, occurs[name], k, later)):
                if shape_reads:  # its shape here, its value where its reader is
                    out.append(self._shape_stand_in(chain))
                pending[name] = chain  # (no pending chain reads it: its one reader is later)
            else:  # computed here: the chains that read the name it assigns first
                flush(keep={n for n, c in pending.items()
                            if not any(isinstance(a, ir.Var) and a.name == name
                                       for a in c.leaves)})
                out.append(self._emit(chain))
        flush()
        return tuple(out)

    def _dead_after_reader(self, stmts, occurs, k, j) -> bool:
        """Whether the value ``stmts[k]`` assigns (a name assigned elsewhere too) is read
        only by ``stmts[j]``, once: no statement in between mentions the name, and it is
        assigned again by ``stmts[j]`` or by the next statement after it that mentions
        it, which does not read it, with no ``break``/``continue``/``return``/``raise``
        on the way (nor a ``try`` in the function: a handler might read it)."""
        if self.may_catch:
            return False
        name = stmts[k].target.name
        at = occurs.index(k)
        if occurs[at + 1:at + 2] != [j] or \
                sum(isinstance(a, ir.Var) and a.name == name for a in stmts[j].value.args) != 1:
            return False
        if stmts[j].target.name == name:
            kill = j
        else:
            kill = occurs[at + 2] if len(occurs) > at + 2 else None
            if kill is None or not (isinstance(stmts[kill], ir.Assign)
                                    and stmts[kill].target.name == name
                                    and name not in _reads(stmts[kill])):
                return False
        return not any(isinstance(x, _LEAVES) for x in ir.walk(stmts[k + 1:kill + 1]))

    def _reduces(self, s) -> bool:
        """``total = np.sum(a)`` / ``np.prod(a)`` of an array ``a`` (a name), of all of
        it or along a constant ``axis=`` (``keepdims=`` a constant flag, ``where=True``): a statement
        that may end a chain (``fused.ElementwiseTree.reduces``)."""
        if not (isinstance(s, ir.Assign) and isinstance(s.value, ir.Call)) \
                or s.value.fn not in (np.sum, np.prod) or len(s.value.args) != 1 \
                or not isinstance(s.value.args[0], ir.Var):
            return False
        keywords = dict(s.value.kwargs)
        if set(keywords) - {"axis", "keepdims", "where"} or \
                not all(isinstance(a, ir.Const) for a in keywords.values()) or \
                keywords.get("where", ir.Const(True)).value is not True:
            return False
        axis = keywords.get("axis", ir.Const(None)).value
        keepdims = keywords.get("keepdims", ir.Const(False)).value
        if not (axis is None or type(axis) is int or
                type(axis) is tuple and all(type(k) is int for k in axis)) or \
                type(keepdims) is not bool or axis is None and keepdims:
            return False
        t = self.types.get(s.value.args[0].name)
        if not isinstance(t, T.Array) or t.dtype == "c16":
            return False
        dtype = "i8" if t.dtype in ("b1", "i8") else t.dtype
        result = self.types.get(s.target.name)
        if axis is None:
            return result == T.Scalar(dtype)
        return isinstance(result, T.Array) and result.dtype == dtype

    def _shape_stand_in(self, chain):
        """``t = shape(*leaves)`` for the chain computing ``t`` (``fused.ElementwiseShape``):
        ``t``'s other reads read only its type and shape."""
        self.changed = True
        tree = ElementwiseShape(ElementwiseTree(tuple(chain.nodes)))
        return replace(chain.stmt, value=ir.Call(tree, tuple(chain.leaves)))

    def _emit(self, chain):
        s = chain.statement()
        if s is chain.stmt and s.value.fn in (rt.unbroadcast, rt.broadcast_like) and \
                isinstance(s.value.args[0], ir.Var) and \
                self.shapes.get(s.value.args[0].name) is not None and \
                self.shapes.get(s.value.args[0].name) == self.shapes.get(s.target.name) and \
                self.types.get(s.value.args[0].name) == self.types.get(s.target.name):
            s = replace(s, value=s.value.args[0])  # the identity: a copy of the name
        self.changed |= s is not chain.stmt
        return s

    def runs(self, stmts):
        """``stmts`` (the function's top level, fused) with each statement of a run of two
        or more statements whose arrays all have one known shape, with copies of array
        names between them, marked with that shape (``run_shape`` of its tree; a lone
        chain statement made a tree of one node; a shape stand-in's tree marked too):
        ``lower/fused_runs.py`` lowers such a run as one loop."""
        stmts = list(stmts)
        shapes = [self._uniform_shape(s) for s in stmts]
        members = [k for k, shape in enumerate(shapes) if shape not in (None, _COPY)]
        for before, k, after in zip([None] + members, members, members[1:] + [None]):
            if not any(j is not None and shapes[j] == shapes[k] and
                       all(shapes[i] is _COPY for i in range(min(j, k) + 1, max(j, k)))
                       for j in (before, after)):
                continue
            s, shape = stmts[k], shapes[k]
            fn = s.value.fn
            if isinstance(fn, ElementwiseShape):
                fn = replace(fn, tree=replace(fn.tree, run_shape=shape))
            elif isinstance(fn, ElementwiseTree):
                fn = replace(fn, run_shape=shape)
            else:  # one statement: a tree of one node
                fn = ElementwiseTree((Node(fn, tuple(("leaf", i) for i in range(
                    len(s.value.args))), s.loc, shape_from=self._shape_from(s)),), None, shape)
            stmts[k] = replace(s, value=ir.Call(fn, s.value.args))
            self.changed = True
        return tuple(stmts)

    def _uniform_shape(self, s):
        """The symbolic shape of every array ``s`` makes, where ``s`` is a fused statement
        (or one that could have joined a chain, or a shape stand-in) whose nodes' shapes
        are all known (``Node.shape_from``), and no reduction; ``_COPY`` for a copy of an
        array name; else None."""
        if isinstance(s, ir.Assign) and isinstance(s.value, ir.Var) and \
                isinstance(self.types.get(s.target.name), T.Array):
            return _COPY
        if not (isinstance(s, ir.Assign) and isinstance(s.value, ir.Call)):
            return None
        tree = s.value.fn
        if isinstance(tree, ElementwiseShape):
            tree = tree.tree
        if isinstance(tree, ElementwiseTree):
            if tree.reduces or any(n.shape_from is None for n in tree.nodes):
                return None
        elif not self._joins(s) or self._shape_from(s) is None:
            return None
        return self.shapes.get(s.target.name)

    def _shape_from(self, s):
        """The position of an operand of ``s`` (a chain's statement) known to have the
        shape of the array it assigns, every other array operand known to broadcast to
        it (``symbolic_shapes.py``: its sizes, right-aligned, among those of the same
        dimension); for ``unbroadcast(g, x)``, ``x``'s where ``g`` has its shape too.
        None where not known."""
        shape = self.shapes.get(s.target.name)
        if shape is None:
            return None
        operands = [self.shapes.get(a.name) if isinstance(a, ir.Var) and
                    isinstance(self.types.get(a.name), T.Array) else ()
                    for a in s.value.args]
        if s.value.fn is rt.unbroadcast:
            return 1 if operands[0] == operands[1] == shape else None
        if any(o is None or not _broadcasts_to(o, shape) for o in operands):
            return None
        return next((k for k, o in enumerate(operands) if o == shape and o != ()), None)

    def _joins(self, s) -> bool:
        """Whether ``s`` is a statement a chain may hold (see the module's docstring)."""
        if not (isinstance(s, ir.Assign) and isinstance(s.value, ir.Call)) or s.value.kwargs:
            return False
        fn = s.value.fn
        if fn not in (rt.broadcast_like, rt.unbroadcast) and not maps_elements(fn):
            return False
        result = self.types.get(s.target.name)
        if not isinstance(result, T.Array):
            return False
        operands = []
        for a in s.value.args:
            if isinstance(a, ir.Const):
                if not isinstance(a.value, numbers.Number):
                    return False
                t = T.value_type(a.value)
            else:
                t = self.types.get(a.name)
            if type(t) not in (T.Scalar, T.Array):
                return False
            operands.append((a, t))
        if fn is rt.broadcast_like:
            return len(operands) == 2 and isinstance(operands[1][1], T.Array)
        if fn is rt.unbroadcast:  # of an array to one of its rank
            return len(operands) == 2 and all(isinstance(t, T.Array) for _, t in operands) \
                and operands[0][1].ndim == operands[1][1].ndim == result.ndim
        try:  # what the callable computes of one element of each operand
            elem = type_call(fn, [(a, t.elem if isinstance(t, T.Array) else t)
                                  for a, t in operands], {}, s.loc)
        except Exception:
            return False
        return elem == result.elem


def _broadcasts_to(shape, target) -> bool:
    """Whether an array of symbolic ``shape`` broadcasts to one of symbolic ``target``
    that is known to exist (each of its dimensions' sizes is among the target's)."""
    return len(shape) <= len(target) and \
        all(d <= t for d, t in zip(reversed(shape), reversed(target)))


#: ``_uniform_shape`` of a copy of an array name (a run may hold it)
_COPY = object()

#: statements that leave a block before its end
_LEAVES = (ir.Break, ir.Continue, ir.Return, ir.Raise)


def _shape_reads(stmts) -> Counter:
    """How often each name is read as a shape operand (``shape_operands`` of the
    callable's record) in ``stmts``, nested blocks included."""
    out = Counter()
    for s in ir.walk(stmts):
        v = getattr(s, "value", None)
        if isinstance(s, (ir.Assign, ir.ExprStmt)) and isinstance(v, ir.Call):
            for k in shape_operands(v.fn):
                if k < len(v.args) and isinstance(v.args[k], ir.Var):
                    out[v.args[k].name] += 1
    return out


def _value_reads(call):
    """The names ``call`` reads as operands other than shape operands."""
    shape = shape_operands(call.fn)
    return {a.name for k, a in enumerate(call.args) if isinstance(a, ir.Var) and k not in shape}


def _reads(s):
    return {a.name for x in ir.walk([s]) for a in ir.stmt_uses(x) if isinstance(a, ir.Var)}


def _names(s):
    """The names ``s`` reads or assigns, nested blocks included."""
    return _reads(s) | {v.name for x in ir.walk([s]) for v in ir.stmt_defs(x)}
