"""Runs of fused statements of one shape lowered as one loop (jit).

The fusion pass (``passes/elementwise_fusion.py``) makes each chain of elementwise
statements one loop, but a chain ends wherever a value is read twice, so straight-line
array code (and the tangent and adjoint code derived from it) is still a loop, an
allocation and an outlined function per few statements: hundreds of loops for a function
of a hundred lines, each optimised and compiled by LLVM on its own.  Where the pass found
consecutive statements whose arrays all have one symbolic shape
(``ElementwiseTree.run_shape``, from ``symbolic_shapes.py``), nothing is broadcast and
nothing needs checking, and every element of every statement depends only on the
elements at the same index of what it reads, so the run is computed by one loop over that
shape, statement after statement at each index.

Contract: ``run_length(L, stmts, k)`` is the length of the run starting at ``stmts[k]``
that ``lower_run`` may lower (0 or 1: none).  ``lower_run(L, run, dying)`` assigns what
the statements of ``run`` assigned, in order: each name read by a statement of the run is
its value before the run, or the element the run computed for it where a statement before
it in the run assigned it.  An array is made only for the last value of each name the run
assigns, and not for a temporary of the block whose last read is in the run (``dying``:
the names whose last read in the block is in the run).  The leaves are read before
anything is assigned; no array the run reads is written.  Errors are those of the
statements' callables on numbers, at their lines; a run stops at the first (the
statements before it may have computed only a part of their elements, but the kernel
leaves through its error exit and nothing is assigned).
"""
from __future__ import annotations

from dataclasses import replace

from ....ir import nodes as ir
from ..ops.fused import ElementwiseShape, ElementwiseTree, zeros_of_shape
from ..values import arrays as A
from ..typing import types as T
from .outline import call_outlined, may_outline


#: the most statements (not counting copies) one run holds: a loop computing hundreds of
#: values, each stored, is one function whose register allocation and optimisation grow
#: faster than its length; runs of at most this many keep compile time linear
MAX_MEMBERS = 64


def _run_shape(s):
    """The ``run_shape`` of a statement's tree (a shape stand-in's too), or None."""
    fn = s.value.fn if isinstance(s, ir.Assign) and isinstance(s.value, ir.Call) else None
    if isinstance(fn, ElementwiseShape):
        fn = fn.tree
    return fn.run_shape if isinstance(fn, ElementwiseTree) else None


def _is_copy(L, s) -> bool:
    return isinstance(s, ir.Assign) and isinstance(s.value, ir.Var) and \
        isinstance(L.types.get(s.target.name), T.Array)


def run_length(L, stmts, k) -> int:
    """How many statements from ``stmts[k]`` on are one run (outside every loop and
    ``try``: a run's allocations are not pooled, and a handler could see its names):
    statements of one ``run_shape``, with copies of array names between them."""
    shape = _run_shape(stmts[k])
    if shape is None or L.loops or L.handlers:
        return 0
    end, j, members = k + 1, k + 1, 1
    while j < len(stmts) and members < MAX_MEMBERS and \
            (_is_copy(L, stmts[j]) or _run_shape(stmts[j]) == shape):
        j += 1
        if _run_shape(stmts[j - 1]) == shape:
            end, members = j, members + 1
    return end - k


def lower_run(L, run, dying):
    """Lower the statements ``run`` (see the module's docstring): their trees joined into
    one, each read of a name the run assigned before it made a read of that node; one
    loop computing the arrays kept; then each name assigned its last value, in order (a
    shape stand-in's: zeros of the run's shape read with strides 0, ``fused.py``)."""
    leaves = []
    nodes = []
    value_of = {}  # name -> its value in the run: ("node", k) or ("leaf", k)
    shape_only = set()  # names assigned a shape stand-in's value

    def leaf(atom):
        for k, a in enumerate(leaves):
            if type(a) is type(atom) and a == atom:
                return ("leaf", k)
        leaves.append(atom)
        return ("leaf", len(leaves) - 1)

    def operand(atom):
        if isinstance(atom, ir.Var) and atom.name in value_of:
            return value_of[atom.name]
        return leaf(atom)

    for s in run:
        name = s.target.name
        shape_only.discard(name)
        if isinstance(s.value, ir.Var):  # a copy: the same value
            value_of[name] = operand(s.value)
            if s.value.name in shape_only:
                shape_only.add(name)
            continue
        tree = s.value.fn
        if isinstance(tree, ElementwiseShape):  # (its value is read only for its shape)
            tree = tree.tree
            shape_only.add(name)
        operands = [operand(a) for a in s.value.args]
        first = len(nodes)
        for node in tree.nodes:
            nodes.append(replace(node, operands=tuple(
                operands[i] if kind == "leaf" else ("node", first + i)
                for kind, i in node.operands)))
        value_of[name] = ("node", len(nodes) - 1)
    kept = [name for name in dict.fromkeys(s.target.name for s in run) if name not in dying]
    outputs = sorted({value_of[n][1] for n in kept
                      if value_of[n][0] == "node" and n not in shape_only})
    tree = ElementwiseTree(tuple(nodes))
    vals = [L.atom(a) for a in leaves]
    types = tree.node_types([t for _, t in vals])
    if not outputs:  # every value made is read in the run, or only for its shape: one
        outputs = [len(nodes) - 1]  # computed anyway (the errors its statements raise)
    if may_outline(L):  # a function of its own (outline.py), returning the arrays
        arrays = call_outlined(L, "run", vals, T.Tuple(tuple(types[k] for k in outputs)),
                               lambda O, params: tree.lower_outputs(O, params, outputs),
                               items=True)
    else:
        arrays = tree.lower_outputs(L, vals, outputs)
    array_of = dict(zip(outputs, arrays))
    shape = A.shape_list(L, arrays[0], types[outputs[0]])
    for name in kept:
        kind, k = value_of[name]
        t = L.types[name]
        if name in shape_only:
            value = zeros_of_shape(L, t, shape)
        elif kind == "leaf":
            value, t = vals[k]
        else:
            value, t = array_of[k], types[k]
        L.store(name, value, t)
