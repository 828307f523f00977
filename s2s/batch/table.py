"""The batching-rule table, keyed by the same callables as the derivative rules.

A batching rule rewrites one call whose operands are partly batched (batch
on axis 0, see ``s2s_runtime.batching``) into IR computing the batched
result.  It is a Python function ``rule(site) -> ir.Expr``: ``site`` (a
``Site``) gives the call, which operands are batched, the batch-size
variable, and ``emit`` to add statements before the call; the returned
expression is assigned to the call's target.  Rules are registered by
family (``defbatch(rule, *primitives)``), so a new primitive of a known kind
(an elementwise ufunc, a reduction with ``axis=``) is one entry.

``unbatched_result``: the result is the same for every example even when an
operand is batched (``np.shape``, ``len``, ``x is None``); a function of the
call where that depends on a constant argument (``getattr(x, "shape")``).
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional

from ..ir import nodes as ir
from ..rules import lookup


@dataclass
class BatchRule:
    fn: Callable
    rule: Callable
    unbatched_result: object = False  # bool, or call -> bool


_TABLE: Dict[int, BatchRule] = {}
_KEEP: List = []


def defbatch(rule, *prims, unbatched_result=False):
    """Register ``rule`` as the batching rule of each primitive in ``prims``."""
    for p in prims:
        _TABLE[id(p)] = BatchRule(p, rule, unbatched_result)
        _KEEP.append(p)


def per_example(site):
    """The rule of a call that is correct example by example and has no cheaper form: the
    primitive called once per example (``rt.batch_loop``: batched operands sliced, results
    stacked) -- what ``vmap(..., fallback="loop")`` does for every call without a rule.  A
    batched keyword argument is refused (``BatchingError``), as by that fallback."""
    import s2s_runtime as rt
    call = _positional(site)
    batched_keywords = [k for k, a in call.kwargs if site.b(a)]
    if batched_keywords:  # rt.batch_loop slices the positional arguments only
        name = getattr(call.fn, "__name__", repr(call.fn))
        raise site.tr.error(f"{name} with a batched keyword argument "
                            f"({', '.join(batched_keywords)}=)", site.loc)
    flags = tuple(site.b(a) for a in call.args)
    return ir.Call(rt.batch_loop, (ir.Const(call.fn), ir.Const(flags), site.n) + call.args,
                   call.kwargs)


def _positional(site) -> ir.Call:
    """``site``'s call with its keyword arguments passed by position where the function's
    own signature allows it, the parameters skipped before them given their defaults
    (``np.bincount(x, weights=w)`` -> ``np.bincount(x, w)``); the call as it is
    otherwise (a keyword-only parameter, one the function takes through ``**kwargs``)."""
    call = site.call
    if not call.kwargs:
        return call
    try:
        params = list(inspect.signature(call.fn).parameters.values())
    except (TypeError, ValueError):
        return call
    given = dict(call.kwargs)
    names = [p.name for p in params]
    if not set(given) <= set(names[len(call.args):]):
        return call
    last = max(names.index(k) for k in given)
    args = list(call.args)
    for p in params[len(call.args):last + 1]:
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            return call
        if p.name in given:
            args.append(given[p.name])
        elif p.default is not p.empty:
            args.append(ir.Const(p.default))
        else:
            return call
    return ir.Call(call.fn, tuple(args))


def batch_table() -> List:
    """Every primitive with a batching rule (for ``s2s rules``)."""
    return [r.fn for r in _TABLE.values()]


def batch_rule(fn) -> Optional[BatchRule]:
    hit = _TABLE.get(id(fn))
    return hit if hit is not None and hit.fn is fn else None


class Site:
    """One call being batched: its operands, which are batched, and a place to emit the
    statements the rule needs before the call."""

    def __init__(self, transform, call: ir.Call, loc: ir.Loc):
        self.tr = transform
        self.call = call
        self.loc = loc
        self.out: List = []

    @property
    def fn(self):
        return self.call.fn

    @property
    def n(self) -> ir.Var:
        """The variable holding the batch size."""
        return self.tr.size_var()

    def b(self, atom) -> bool:
        """Whether ``atom`` is batched."""
        return isinstance(atom, ir.Var) and atom.name in self.tr.batched

    def flag(self, atom) -> ir.Const:
        return ir.Const(self.b(atom))

    def emit(self, expr) -> ir.Var:
        """A fresh temporary assigned ``expr`` before the call."""
        t = self.tr.temp()
        self.out.append(ir.Assign(t, expr, self.loc))
        if isinstance(expr, ir.Call) and any(self.b(a) for a in expr.operands()):
            self.tr.batched.add(t.name)
        return t

    def rt(self, helper, *args, batched=False) -> ir.Var:
        t = self.emit(ir.Call(helper, tuple(args)))
        if batched:
            self.tr.batched.add(t.name)
        else:
            self.tr.batched.discard(t.name)
        return t

    def check(self, helper, *args) -> None:
        """A call of ``helper`` before the call, kept for its effect (it raises where the
        batched call must not run, e.g. ``rt.batch_axis_in`` for an example without the
        axes the call reads) though its result is never read."""
        self.out.append(ir.ExprStmt(ir.Call(helper, tuple(args)), self.loc))

    # -- arguments by name (the derivative rule's signature mirrors the primitive's) --
    def params(self) -> List[str]:
        rule = lookup(self.fn)
        if rule is not None and rule.signature is not None:
            return list(rule.signature.parameters)[2:]
        try:
            return list(inspect.signature(self.fn).parameters)
        except (TypeError, ValueError):
            return []

    def arg(self, name, default=None):
        """The atom passed for parameter ``name`` (``default`` when not passed)."""
        kw = dict(self.call.kwargs)
        if name in kw:
            return kw[name]
        names = self.params()
        if name in names and names.index(name) < len(self.call.args):
            return self.call.args[names.index(name)]
        return default

    def with_arg(self, call: ir.Call, name, atom) -> ir.Call:
        """``call`` with parameter ``name`` set to ``atom`` (positionally if it was)."""
        kw = dict(call.kwargs)
        names = self.params()
        if name not in kw and name in names and names.index(name) < len(call.args):
            args = list(call.args)
            args[names.index(name)] = atom
            return ir.Call(call.fn, tuple(args), call.kwargs)
        kw[name] = atom
        return ir.Call(call.fn, call.args, tuple(kw.items()))
