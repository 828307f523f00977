"""Type inference over an IR function for the LLVM backend.

Contract: ``infer(func, param_types) -> (types, return_type)`` gives every
variable of ``func`` one backend type (``types.py``): the ``join`` of the types
of every value assigned to it (a fixpoint over loops), and the join of the
types of every returned value.  Call result types come from the op registry
(``calls.type_call``).  A value the backend cannot type (a string, a Python
object, an unsupported call) raises ``UnsupportedSyntaxError`` naming the
construct and the user's line.
"""
from __future__ import annotations

from ....errors import UnsupportedSyntaxError
from ....ir import nodes as ir
from . import types as T


def const_type(value, loc=None):
    """The type of a constant operand."""
    if value is None:
        return T.NONE
    if type(value) is slice:
        return T.Slice(tuple(v is not None for v in (value.start, value.stop, value.step)))
    if type(value) is tuple:
        return T.Tuple(tuple(const_type(v, loc) for v in value))
    if type(value) is range:
        return T.Range()
    t = T.value_type(value)
    if isinstance(t, T.Array):
        raise UnsupportedSyntaxError(
            f"jit: the array constant {_short(value)} in the code; pass it as an argument", loc)
    return T.Static(value) if t is None else t


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


class Inference:
    def __init__(self, func: ir.Function, param_types: dict):
        self.func = func
        self.types = dict(param_types)
        self.returns = None
        self.changed = True
        from ..lower.stacks import find_stacks
        self.stacks = find_stacks(func)
        for name in self.stacks:
            self.types.setdefault(name, T.Stack(False))

    def atom(self, a, loc):
        if isinstance(a, ir.Const):
            return const_type(a.value, loc)
        t = self.types.get(a.name)
        return t

    def assign(self, name, t, loc):
        if t is None:
            return
        old = self.types.get(name)
        new = T.join(old, t)
        if new is None:
            raise UnsupportedSyntaxError(
                f"jit: the variable {name!r} holds values of types {old} and {t}; a compiled "
                "variable has one type (numbers of one kind, or arrays of one dtype and ndim)",
                loc)
        if new != old:
            self.types[name] = new
            self.changed = True

    def expr(self, value, loc):
        if isinstance(value, ir.Call):
            from ..ops.calls import type_call
            args = [(a, self.atom(a, loc)) for a in value.args]
            kwargs = {k: (a, self.atom(a, loc)) for k, a in value.kwargs}
            if any(t is None for _, t in args) or any(t is None for _, t in kwargs.values()):
                return None  # an operand not typed yet (first pass over a loop)
            return type_call(value.fn, args, kwargs, loc)
        return self.atom(value, loc)

    def block(self, stmts):
        for s in stmts:
            self.stmt(s)

    def stmt(self, s):
        loc = getattr(s, "loc", None)
        if isinstance(s, ir.Assign):
            if s.target.name in self.stacks:
                return  # a push or a reset (stacks.py)
            self.assign(s.target.name, self.expr(s.value, loc), loc)
        elif isinstance(s, ir.ExprStmt):
            self.expr(s.value, loc)
        elif isinstance(s, ir.Unpack):
            if isinstance(s.value, ir.Var) and s.value.name in self.stacks:
                return  # a pop: the target keeps the type of what it was assigned
            t = self.atom(s.value, loc)
            if t is None:
                return
            if not isinstance(t, T.Tuple) or len(t.items) != len(s.targets):
                n = len(t.items) if isinstance(t, T.Tuple) else None
                raise UnsupportedSyntaxError(
                    f"jit: unpacking {len(s.targets)} names from a {t}"
                    + ("" if n is None else f" of {n} items"), loc)
            for v, it in zip(s.targets, t.items):
                self.assign(v.name, it, loc)
        elif isinstance(s, ir.For):
            t = self.atom(s.iter, loc)
            if isinstance(t, T.Range):
                self.assign(s.target.name, T.INT, loc)
            elif isinstance(t, T.Array) and t.ndim >= 1:
                self.assign(s.target.name, t.elem if t.ndim == 1 else T.Array(t.dtype, t.ndim - 1),
                            loc)
            elif t is not None:
                raise UnsupportedSyntaxError(
                    f"jit: a for loop over a {t} (loops run over range(...) or an array)", loc)
            self.block(s.body)
            self.block(s.orelse)
        elif isinstance(s, ir.While):
            self.block(s.test_body)
            self.block(s.body)
            self.block(s.orelse)
        elif isinstance(s, ir.If):
            self.block(s.body)
            self.block(s.orelse)
        elif isinstance(s, ir.Return):
            t = self.atom(s.value, loc)
            if t is not None:
                new = T.join(self.returns, t)
                if new is None:
                    raise UnsupportedSyntaxError(
                        f"jit: the function returns values of types {self.returns} and {t}", loc)
                if new != self.returns:
                    self.returns, self.changed = new, True
        elif isinstance(s, ir.Try):
            if s.finalbody:
                raise UnsupportedSyntaxError("jit: try ... finally", loc)
            self.block(s.body)
            for h in s.handlers:
                if h.name is not None:
                    raise UnsupportedSyntaxError(
                        f"jit: 'except ... as {h.name.name}' (the exception object is a Python "
                        "object)", loc)
                self.block(h.body)
            self.block(s.orelse)
        elif isinstance(s, (ir.Break, ir.Continue, ir.Raise, ir.Assert)):
            pass
        else:
            raise UnsupportedSyntaxError(f"jit: the statement {type(s).__name__}", loc)


def infer(func: ir.Function, param_types: dict):
    inf = Inference(func, param_types)
    for _ in range(50):
        if not inf.changed:
            break
        inf.changed = False
        inf.block(func.body)
    return inf.types, (inf.returns if inf.returns is not None else T.NONE)
