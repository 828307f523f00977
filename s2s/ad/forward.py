"""Forward mode: the tangent (JVP) of an IR function.

Contract: accepts an IR function from ``pipeline.front`` (user calls
inlined, single exit) and the names of the parameters that carry tangents;
returns a function ``jvp_f(*params, *tangent_params) -> (out, out_tangent)``
(``((out, aux), out_tangent)`` with ``has_aux``) in which every statement
that computes a value depending on a tangent parameter is followed by the
statement computing its tangent ``dx``:

* activity: only variables that depend on a tangent parameter get a tangent
  (symbolic zeros); where such a variable receives a value that does not
  depend on one, its tangent is set to zeros;
* a primitive's JVP templates (``rules``) are inlined per active argument and
  the contributions summed;
* control flow is kept as it is: ``if``, ``for`` over ``range`` or over
  values that carry no tangent, ``while``, ``break``, ``continue``, ``try``;
  in-place writes ``y[i] = v`` get ``dy[i] = dv`` (tangent arrays alias
  like the primal arrays they follow);
* a statement that reads the variable it assigns (``x = x * y``) first puts
  its result in a temporary, so the tangent sees the old ``x``.

Rejected with an ``UnsupportedSyntaxError``: ``for`` over a value that carries
a tangent, calls without a JVP rule on values that carry a tangent.
"""
from __future__ import annotations

import inspect
import operator
from dataclasses import replace
from typing import Dict, List, Set

import numpy as np

import s2s_runtime as rt
from s2s_runtime import build

from ..errors import NoRuleError, S2SError, unsupported
from ..ir import nodes as ir
from ..ir.names import NameGen
from ..rules import lookup
from ..rules.templates import instantiate
from ..frontend.desugar import PLAIN_OF_INPLACE
from .common import (check_no_opaque_mutation, describe, display_items, expr_active, is_in,
                     tuple_displays)
from . import custom_rules
from .inplace import VIEW_OPS
from .remat import is_remat_call, remat_tangent
from ..passes.argument_loops import argument_loops
from ..passes.loop_ranges import range_loops

_STRUCT = (build.make_tuple, build.make_list, build.make_dict)
#: in-place operators whose tangent is updated in place too (``Forward.inplace``)
_TANGENT_INPLACE = (operator.add, operator.sub, operator.mul, operator.truediv)


class Forward:
    def __init__(self, fn: ir.Function, wrt: List[str], leaf: Dict[str, bool]):
        self.fn = fn
        self.wrt = list(wrt)
        self.leaf = leaf  # parameter -> is a single number/array (not a container)
        self.names = NameGen(ir.all_names(fn))
        self.temps = set(fn.temps)
        self.dot: Dict[str, ir.Var] = {}
        self.aliases: Dict[str, Set[str]] = {}  # may share memory (views, copies of names)
        self.mutated: Set[str] = set()
        #: temporaries that hold a tangent sum just computed and read nowhere else
        self.fresh_results: Set[str] = set()
        self._displays = None  # name -> items of the tuple display it is assigned once

    # -- activity (a fixpoint over loops) ------------------------------------------
    def _tuple_items(self, value, n):
        """The ``n`` items of the tuple display ``value`` is assigned once, else None (a
        target of ``a, b = value`` carries a tangent only where its item does)."""
        if self._displays is None:
            self._displays = tuple_displays(self.fn.body)
        return display_items(self._displays, value, n)

    def activity(self, stmts, active: Set[str]) -> None:
        for s in stmts:
            check_no_opaque_mutation(s, active)
            if isinstance(s, ir.Assign):
                if expr_active(s.value, active):
                    active.add(s.target.name)
                self._note_alias(s)
            elif isinstance(s, ir.Unpack):
                items = self._tuple_items(s.value, len(s.targets))
                if items is not None:  # a, b = (x, 2.0): each target as its item
                    active.update(t.name for t, a in zip(s.targets, items) if is_in(a, active))
                elif is_in(s.value, active):
                    active.update(t.name for t in s.targets)
                for t in s.targets:  # rows of an array are views of it
                    self._alias(t.name, s.value)
            elif isinstance(s, ir.ExprStmt):
                v = s.value
                if isinstance(v, ir.Call) and v.fn is operator.setitem and is_in(v.args[2], active) \
                        and isinstance(v.args[0], ir.Var):
                    # writing a tangent-carrying value into an array changes every array
                    # it may share memory with: they all carry tangents (views of views...)
                    active.update(self._aliases(v.args[0].name))
            elif isinstance(s, ir.For):
                if is_in(s.iter, active):
                    raise unsupported("'for' loop over a value that carries a tangent", s.loc,
                                      "loop over range(len(...)) and index instead")
                self._loop(ir.sub_blocks_flat(s), active)
            elif isinstance(s, (ir.While, ir.Try)):
                self._loop(ir.sub_blocks_flat(s), active)
            elif isinstance(s, ir.If):
                self.activity(s.body, active)
                self.activity(s.orelse, active)

    def _alias(self, name, source) -> None:
        if isinstance(source, ir.Var):
            self.aliases.setdefault(name, set()).add(source.name)
            self.aliases.setdefault(source.name, set()).add(name)

    def _note_alias(self, s: ir.Assign) -> None:
        """``t = y`` and ``t = view(y, ...)`` make ``t`` and ``y`` share memory."""
        v = s.value
        if isinstance(v, ir.Var):
            self._alias(s.target.name, v)
        elif isinstance(v, ir.Call) and (v.fn in VIEW_OPS or v.fn in PLAIN_OF_INPLACE) and v.args:
            self._alias(s.target.name, v.args[0])

    def _aliases(self, name) -> Set[str]:
        seen, todo = set(), [name]
        while todo:
            n = todo.pop()
            if n not in seen:
                seen.add(n)
                todo += self.aliases.get(n, ())
        return seen

    def _loop(self, inner, active) -> None:
        while True:
            before = len(active)
            self.activity(inner, active)
            if len(active) == before:
                return

    # -- tangents ---------------------------------------------------------------------
    def dot_of(self, name: str) -> ir.Var:
        if name not in self.dot:
            new = self.names.fresh(f"d{name}")
            if name in self.temps:
                self.temps.add(new)
            self.dot[name] = ir.Var(new)
        return self.dot[name]

    def temp(self) -> ir.Var:
        name = self.names.temp()
        self.temps.add(name)
        return ir.Var(name)

    def zeros(self, var: ir.Var, loc) -> ir.Assign:
        return ir.Assign(self.dot_of(var.name), ir.Call(rt.zeros_like, (var,)), loc)

    def block(self, stmts) -> List:
        out: List = []
        for s in stmts:
            loc = replace(s.loc, derived=True)
            if isinstance(s, ir.Assign):
                out += self.assign(s, loc)
            elif isinstance(s, ir.Unpack):
                out.append(s)
                if any(t.name in self.active for t in s.targets):
                    if is_in(s.value, self.active):
                        dts = tuple(self.dot_of(t.name) for t in s.targets)
                        out.append(ir.Unpack(dts, self.dot_of(s.value.name), loc))
                    else:
                        out += [self.zeros(t, loc) for t in s.targets if t.name in self.active]
            elif isinstance(s, ir.ExprStmt):
                out += self.expr_stmt(s, loc)
            elif isinstance(s, ir.If):
                out.append(replace(s, body=tuple(self.block(s.body)),
                                   orelse=tuple(self.block(s.orelse))))
            elif isinstance(s, ir.For):
                # a loop variable that carries a tangent elsewhere (a name another loop
                # reuses) takes values without one here: zero tangent
                head = [self.zeros(s.target, loc)] if s.target.name in self.active else []
                out.append(replace(s, body=tuple(head + self.block(s.body)),
                                   orelse=tuple(self.block(s.orelse))))
            elif isinstance(s, ir.While):
                out.append(replace(s, test_body=tuple(self.block(s.test_body)),
                                   body=tuple(self.block(s.body)), orelse=tuple(self.block(s.orelse))))
            elif isinstance(s, ir.Try):
                handlers = tuple(replace(h, body=tuple(self.block(h.body))) for h in s.handlers)
                out.append(replace(s, body=tuple(self.block(s.body)), handlers=handlers,
                                   orelse=tuple(self.block(s.orelse)),
                                   finalbody=tuple(self.block(s.finalbody))))
            else:
                out.append(s)
        return out

    def assign(self, s: ir.Assign, loc) -> List:
        name = s.target.name
        if name not in self.active:
            return [s]
        v = s.value
        if not expr_active(v, self.active):  # an active variable gets an inactive value
            return [s, self.zeros(s.target, loc)]
        if isinstance(v, ir.Var):
            return [s, ir.Assign(self.dot_of(name), self.dot_of(v.name), loc)]
        if isinstance(v, ir.Call) and v.fn in PLAIN_OF_INPLACE and len(v.args) == 2:
            if PLAIN_OF_INPLACE[v.fn] not in _TANGENT_INPLACE and isinstance(v.args[0], ir.Var) \
                    and self._aliases(v.args[0].name) <= {v.args[0].name, name} \
                    and v.args[0].name not in {p.var.name for p in self.fn.params}:
                # z **= 2 on a value made here that nothing shares: the same as z = z ** 2
                return self.assign(replace(s, value=replace(v, fn=PLAIN_OF_INPLACE[v.fn])), loc)
            return self.inplace(s, loc)
        # x = f(x, ...): compute into a temporary so the tangent sees the old x
        reads_self = any(is_in(a, {name}) for a in v.operands())
        target = self.temp() if reads_self else s.target
        out = [replace(s, target=target)]
        contribution = self.tangent_of_call(v, target, loc, out)
        if reads_self:
            out.append(ir.Assign(s.target, target, s.loc))
        last = out[-1]
        if name in self.mutated and not (v.fn in VIEW_OPS):
            out.append(ir.Assign(self.dot_of(name), ir.Call(rt.owned, (contribution,)), loc))
        elif isinstance(last, ir.Assign) and last.target == contribution \
                and contribution.name in self.fresh_results:
            out[-1] = replace(last, target=self.dot_of(name))  # name the sum dx directly
        else:
            out.append(ir.Assign(self.dot_of(name), contribution, loc))
        return out

    def inplace(self, s: ir.Assign, loc) -> List:
        """``a += b`` (and ``-=``, ``*=``, ``/=``, ``**=``): the tangent is updated in place
        too, so tangents share memory exactly like the arrays they follow (views see the
        update).

        d(a + b) = da + db;  d(a * b) = da * b + a * db;  d(a / b) = da / b - a db / b**2;
        d(a ** b) = b a**(b-1) da + a**b log(a) db,
        with the terms of the old ``a`` computed before the primal statement changes it.
        """
        v = s.value
        a, b = v.args
        plain = PLAIN_OF_INPLACE[v.fn]
        db = self.dot_of(b.name) if is_in(b, self.active) else None
        pre, post = [], []
        if is_in(a, self.active):
            da = self.dot_of(a.name)
        else:  # a carries no tangent yet: start from zeros
            da = self.temp()
            pre.append(ir.Assign(da, ir.Call(rt.zeros_like, (a,)), loc))
        if plain in (operator.add, operator.sub):
            if db is not None:
                post.append(ir.Assign(da, ir.Call(v.fn, (da, db)), loc))
        elif plain in (operator.mul, operator.truediv):
            c = None
            if db is not None:  # the a * db term, from the old a
                c = self.temp()
                pre.append(ir.Assign(c, ir.Call(operator.mul, (a, db)), loc))
                if plain is operator.truediv:
                    b2, c2 = self.temp(), self.temp()
                    pre += [ir.Assign(b2, ir.Call(operator.mul, (b, b)), loc),
                            ir.Assign(c2, ir.Call(operator.truediv, (c, b2)), loc)]
                    c = c2
            post.append(ir.Assign(da, ir.Call(v.fn, (da, b)), loc))
            if c is not None:
                step = operator.iadd if plain is operator.mul else operator.isub
                post.append(ir.Assign(da, ir.Call(step, (da, c)), loc))
        elif plain is operator.pow:  # the rules of ``**`` (rules/arith.py), old a before
            one, zero = ir.Const(1), ir.Const(0)
            e1, e0, e, p, f = (self.temp() for _ in range(5))
            pre += [ir.Assign(e1, ir.Call(operator.sub, (b, one)), loc),
                    ir.Assign(e0, ir.Call(operator.eq, (b, zero)), loc),
                    ir.Assign(e, ir.Call(operator.add, (e1, e0)), loc),
                    ir.Assign(p, ir.Call(rt.power, (a, e)), loc),
                    ir.Assign(f, ir.Call(operator.mul, (b, p)), loc)]
            post.append(ir.Assign(da, ir.Call(operator.imul, (da, f)), loc))
            if db is not None:  # + ans log(a) db (log taken as 0 where a == 0)
                z, w, lg, c = (self.temp() for _ in range(4))
                pre += [ir.Assign(z, ir.Call(operator.eq, (a, zero)), loc),
                        ir.Assign(w, ir.Call(np.where, (z, ir.Const(1.0), a)), loc),
                        ir.Assign(lg, ir.Call(np.log, (w,)), loc)]
                post += [ir.Assign(c, ir.Call(operator.mul, (a, lg)), loc),
                         ir.Assign(c, ir.Call(operator.imul, (c, db)), loc),
                         ir.Assign(da, ir.Call(operator.iadd, (da, c)), loc)]
        else:
            raise unsupported("augmented assignment with this operator on a value that "
                              "carries a tangent", s.loc, "write 'x = x op y'")
        out = pre + [s] + post
        if da != self.dot_of(s.target.name):
            out.append(ir.Assign(self.dot_of(s.target.name), da, loc))
        return out

    def tangent_of_call(self, v: ir.Call, ans: ir.Var, loc, out: List) -> ir.Atom:
        if v.fn in _STRUCT:
            items = v.args if v.fn is not build.make_dict else v.args[1::2]
            dots = []
            for a in items:
                if is_in(a, self.active):
                    dots.append(self.dot_of(a.name))
                else:
                    z = self.temp()
                    out.append(ir.Assign(z, ir.Call(rt.zeros_like, (a,)), loc))
                    dots.append(z)
            if v.fn is build.make_dict:
                dots = [x for pair in zip(v.args[0::2], dots) for x in pair]
            t = self.temp()
            out.append(ir.Assign(t, ir.Call(v.fn, tuple(dots)), loc))
            return t
        if custom_rules.is_custom(v.fn):  # custom_jvp: the user's rule (custom_vjp: error)
            return custom_rules.tangent(self, v, ans, loc, out)
        if is_remat_call(v):  # a checkpointed function: its jvp
            return remat_tangent(self, v, ans, loc, out)
        rule = lookup(v.fn)
        if v.fn is build.call_method or rule is None:
            raise NoRuleError(f"no derivative rule for {describe(v.fn)}, and no Python "
                              "source to differentiate through", loc)
        try:
            bound = rule.signature.bind(ans, ans, *v.args, **dict(v.kwargs))
        except TypeError as exc:
            raise S2SError(f"cannot differentiate this call of {describe(v.fn)}: {exc}",
                           loc) from None
        bound.apply_defaults()
        roles = list(rule.signature.parameters)[:2]  # (cotangent, result): not parameters
        bindings = {k: (a if isinstance(a, (ir.Var, ir.Const)) else ir.Const(a))
                    for k, a in bound.arguments.items() if k not in roles}
        total = None
        zero = rule.zero_params()
        for i, pname in enumerate(rule.param_names()):
            a = bindings[pname]
            if not is_in(a, self.active) or pname in zero:
                continue
            template = rule.jvps[i] if i < len(rule.jvps) else None
            if template is None:
                raise NoRuleError(f"no forward-mode (JVP) rule for {describe(v.fn)} with "
                                  f"respect to its argument {pname!r}", loc)
            tangent_name, ans_name = list(inspect.signature(template).parameters)[:2]
            binding = dict(bindings)
            binding[tangent_name], binding[ans_name] = self.dot_of(a.name), ans
            stmts, c = instantiate(template, binding, self.names, loc)
            for x in stmts:
                if isinstance(x, ir.Assign):
                    self.temps.add(x.target.name)
            out += stmts
            if total is None:
                total = c
                if stmts and isinstance(stmts[-1], ir.Assign) and stmts[-1].target == c:
                    self.fresh_results.add(c.name)
            else:
                t = self.temp()
                # tangents of a result that may be a container (a cotangent tuple in
                # generated code) add leaf by leaf, never with + (which concatenates)
                add = rt.add if rule.container_result else operator.add
                out.append(ir.Assign(t, ir.Call(add, (total, c)), loc))
                self.fresh_results.add(t.name)
                total = t
        return total

    def expr_stmt(self, s: ir.ExprStmt, loc) -> List:
        v = s.value
        if not (isinstance(v, ir.Call) and v.fn is operator.setitem):
            if isinstance(v, ir.Call) and v.fn is setattr and any(
                    is_in(a, self.active) for a in v.args):
                raise unsupported("attribute assignment of a value that carries a tangent", s.loc)
            return [s]
        base, index, value = v.args
        if not is_in(base, self.active):
            return [s]
        out = [s]
        if not (isinstance(base, ir.Var) and base.name in self.dot):
            out.append(self.zeros(base, loc))  # first tangent of this array: zeros
        dvalue = self.dot_of(value.name) if is_in(value, self.active) else ir.Const(0.0)
        out.append(ir.ExprStmt(ir.Call(operator.setitem, (self.dot_of(base.name), index, dvalue)),
                               loc))
        return out

    # -- driver -------------------------------------------------------------------------
    def build(self, name: str, has_aux=False) -> ir.Function:
        body = list(self.fn.body)
        ret = body.pop()
        if not isinstance(ret, ir.Return) or any(isinstance(x, ir.Return) for x in ir.walk(body)):
            raise unsupported("'return' inside a loop or try", getattr(ret, "loc", None),
                              "comes with the control-flow work")
        containers = {p for p, leaf in self.leaf.items() if not leaf}  # for v in xs: indexed
        body = range_loops(argument_loops(body, self.names, containers), self.names, self.temps,
                           {p for p, leaf in self.leaf.items() if leaf})
        self.active = set(self.wrt)
        self._loop(body, self.active)
        # arrays updated in place (and what shares memory with them): their tangents must
        # share memory exactly as they do, so a tangent computed by a template (which may
        # return another tangent unchanged) is copied once where the array is made
        mutated = set()
        for x in ir.walk(body):
            v = getattr(x, "value", None)
            if isinstance(v, ir.Call) and v.args and isinstance(v.args[0], ir.Var) and (
                    v.fn is operator.setitem or v.fn in PLAIN_OF_INPLACE):
                mutated |= self._aliases(v.args[0].name)
        self.mutated = mutated
        for p in self.wrt:
            self.dot_of(p)
        tangent_params = tuple(ir.Param(self.dot_of(p)) for p in self.wrt)
        out = self.block(body)
        loc = replace(ret.loc, derived=True)
        value = ret.value
        aux = None
        if has_aux:
            value, aux = self.temp(), self.temp()
            out.append(ir.Unpack((value, aux), ret.value, ret.loc))
            if is_in(ret.value, self.active):
                self.active.update((value.name, aux.name))
                out.append(ir.Unpack((self.dot_of(value.name), self.dot_of(aux.name)),
                                     self.dot_of(ret.value.name), loc))
        if is_in(value, self.active):
            dout = self.dot_of(value.name)
        else:
            dout = self.temp()
            out.append(ir.Assign(dout, ir.Call(rt.zeros_like, (value,)), loc))
        primal = value if aux is None else self._pack((value, aux), out, loc)
        out.append(ir.Return(self._pack((primal, dout), out, loc), ret.loc))
        # every positional argument is passed (defaults applied by the caller): no defaults,
        # so the tangent parameters may follow them
        positional = tuple(replace(p, default=None) for p in self.fn.params if not p.kwonly)
        kwonly = tuple(p for p in self.fn.params if p.kwonly)
        return replace(self.fn, name=name, params=positional + tangent_params + kwonly,
                       body=tuple(out), docstring=None, temps=frozenset(self.temps))

    def _pack(self, items, out, loc) -> ir.Var:
        t = self.temp()
        out.append(ir.Assign(t, ir.Call(build.make_tuple, tuple(items)), loc))
        return t


