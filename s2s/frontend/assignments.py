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
            elts = [e.value for e in target.elements]
            if any(isinstance(e, cst.StarredElement) for e in target.elements):
                raise unsupported("starred assignment target", loc)
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
        elif isinstance(target, cst.Subscript):
            base = self.atom(target.value)
            index = self.index(target.slice)
            self.emit(ir.ExprStmt(ir.Call(operator.setitem, (base, index, src)), loc))
        elif isinstance(target, cst.Attribute):
            base = self.atom(target.value)
            self.emit(ir.ExprStmt(ir.Call(setattr, (base, ir.Const(target.attr.value), src)), loc))
        else:
            raise unsupported(f"assignment to {type(target).__name__}", loc)

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
