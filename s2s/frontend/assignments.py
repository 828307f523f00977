"""libcst -> IR: assignment statements (a mixin of ``lower.Lowerer``).

Contract, for a target ``t`` and a value ``v`` (``loc``: the statement's place):

* ``name = v``: ``Assign``; ``a, (b, c) = v``: ``Unpack`` into fresh temporaries for
  nested targets, then their own unpacking; ``a, b = b, a`` (as many items on both
  sides): every right-hand item read first, then bound (a swap reads the old values);
* ``x[i] = v``: ``operator.setitem(x, i, v)``; ``obj.a = v``: ``setattr(obj, "a", v)``;
* ``name op= v``: ``name = name.__iop__(v)`` (in place for arrays, ``ad/inplace.py``);
  ``x[i] op= v``: read, ``op``, write back; ``obj.a op= v``: ``obj.a.__iop__(v)`` set
  back.

A starred target, or a target of another kind, raises ``UnsupportedSyntaxError``
quoting the line.  The host provides ``emit``, ``atom``, ``value``, ``index`` and
``temp`` (``lower.Lowerer``).
"""
from __future__ import annotations

import operator

import libcst as cst

from ..errors import unsupported
from ..ir import nodes as ir
from . import desugar


class AssignmentLowering:
    """Lowering of ``=`` and ``op=`` statements to IR."""

    def assign_to(self, target, value_node, loc) -> None:
        if isinstance(target, cst.Name):
            self.emit(ir.Assign(ir.Var(target.value), self.value(value_node), loc))
        elif isinstance(target, (cst.Tuple, cst.List)) and isinstance(
                value_node, (cst.Tuple, cst.List)) and _same_length(target, value_node):
            self.parallel_assign(target, value_node, loc)
        else:
            self.assign_atom(target, self.atom(value_node), loc)

    def parallel_assign(self, target, value_node, loc) -> None:
        """``a, b = b, a``: evaluate every right-hand item, then bind."""
        targets = [e.value for e in target.elements]
        bound = _target_names(target)
        values = []
        for e in value_node.elements:
            v = self.atom(e.value)
            if isinstance(v, ir.Var) and v.name in bound:
                t = self.temp()
                self.emit(ir.Assign(t, v, loc))
                v = t
            values.append(v)
        for t, v in zip(targets, values):
            self.assign_atom(t, v, loc)

    def assign_atom(self, target, src: ir.Atom, loc) -> None:
        if isinstance(target, cst.Name):
            self.emit(ir.Assign(ir.Var(target.value), src, loc))
        elif isinstance(target, (cst.Tuple, cst.List)):
            starred = [i for i, e in enumerate(target.elements)
                       if isinstance(e, cst.StarredElement)]
            if starred:
                self.starred_unpack(target.elements, starred[0], src, loc)
            else:
                self.unpack_into([e.value for e in target.elements], src, loc)
        elif isinstance(target, cst.Subscript):
            base = self.atom(target.value)
            index = self.index(target.slice)
            self.emit(ir.ExprStmt(ir.Call(operator.setitem, (base, index, src)), loc))
        elif isinstance(target, cst.Attribute):
            base = self.atom(target.value)
            self.emit(ir.ExprStmt(ir.Call(setattr, (base, ir.Const(target.attr.value), src)), loc))
        else:
            raise unsupported(f"assignment to {type(target).__name__}", loc)

    def unpack_into(self, elts, src: ir.Atom, loc) -> None:
        """``a, (b, c) = src``: exactly ``len(elts)`` items (Python's ValueError otherwise)."""
        vars_ = []
        nested = []
        for e in elts:
            if isinstance(e, cst.Name):
                vars_.append(ir.Var(e.value))
            else:
                t = self.temp()
                vars_.append(t)
                nested.append((e, t))
        self.emit(ir.Unpack(tuple(vars_), src, loc))
        for e, t in nested:
            self.assign_atom(e, t, loc)

    def starred_unpack(self, elements, star: int, src: ir.Atom, loc) -> None:
        """``a, *m, b = src`` as ``a, = src[:1]``, ``b, = src[max(n - 1, 1):]`` and
        ``m = list(src[1:n - 1])`` (``n = len(src)``): the items as Python binds them, and
        Python's ValueError from an unpacking when ``src`` has too few."""
        head = [e.value for e in elements[:star]]
        tail = [e.value for e in elements[star + 1:]]

        def part(start, stop):
            if isinstance(start, ir.Const) and isinstance(stop, ir.Const):
                index = ir.Const(slice(start.value, stop.value))
            else:
                index = self.temp()
                self.emit(ir.Assign(index, ir.Call(slice, (start, stop, ir.Const(None))), loc))
            t = self.temp()
            self.emit(ir.Assign(t, ir.Call(operator.getitem, (src, index)), loc))
            return t

        if head:
            self.unpack_into(head, part(ir.Const(None), ir.Const(len(head))), loc)
        stop = ir.Const(None)
        if tail:
            n = self.temp()
            self.emit(ir.Assign(n, ir.Call(len, (src,)), loc))
            stop = self.temp()
            self.emit(ir.Assign(stop, ir.Call(operator.sub, (n, ir.Const(len(tail)))), loc))
            start = self.temp()
            self.emit(ir.Assign(start, ir.Call(max, (stop, ir.Const(len(head)))), loc))
            self.unpack_into(tail, part(start, ir.Const(None)), loc)
        middle = self.temp()
        self.emit(ir.Assign(middle, ir.Call(list, (part(ir.Const(len(head)), stop),)), loc))
        self.assign_atom(elements[star].value, middle, loc)

    def aug_assign(self, node, loc) -> None:
        op = desugar.AUG_OPS[type(node.operator)]
        target = node.target
        if isinstance(target, cst.Name):
            # x += v is x = x.__iadd__(v): in place for arrays (see ad/inplace.py)
            inplace = desugar.INPLACE_OPS[type(node.operator)]
            v = self.atom(node.value)
            self.emit(ir.Assign(ir.Var(target.value), ir.Call(inplace, (ir.Var(target.value), v)),
                                loc))
        elif isinstance(target, cst.Subscript):
            base = self.atom(target.value)
            index = self.index(target.slice)
            v = self.atom(node.value)
            old = self.temp()
            self.emit(ir.Assign(old, ir.Call(operator.getitem, (base, index)), loc))
            new = self.temp()
            self.emit(ir.Assign(new, ir.Call(op, (old, v)), loc))
            self.emit(ir.ExprStmt(ir.Call(operator.setitem, (base, index, new)), loc))
        elif isinstance(target, cst.Attribute):
            # obj.a += v is obj.a = obj.a.__iadd__(v), as for a name
            base = self.atom(target.value)
            name = ir.Const(target.attr.value)
            v = self.atom(node.value)
            old, new = self.temp(), self.temp()
            self.emit(ir.Assign(old, ir.Call(getattr, (base, name)), loc))
            inplace = desugar.INPLACE_OPS[type(node.operator)]
            self.emit(ir.Assign(new, ir.Call(inplace, (old, v)), loc))
            self.emit(ir.ExprStmt(ir.Call(setattr, (base, name, new)), loc))
        else:
            raise unsupported(f"augmented assignment to {type(target).__name__}", loc)


def _target_names(target) -> set:
    """Every name an assignment target binds, nested tuples included."""
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(_target_names(e.value) for e in target.elements))
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return set()


def _same_length(a, b) -> bool:
    return (len(a.elements) == len(b.elements)
            and not any(isinstance(e, cst.StarredElement) for e in (*a.elements, *b.elements)))
