"""Reverse mode: the adjoint of an IR function.

Contract: accepts an IR function that went through ``inline_calls``,
``single_exit`` and ``to_ssa`` — so its only ``Return`` is the last
statement and no value is overwritten outside loops — and whose active
statements are straight-line code and ``if`` statements.  Loops, ``try``
and in-place writes are allowed only where nothing differentiated flows
through them; otherwise a ``UnsupportedSyntaxError`` names the construct.

Produces one function (``build``) with the same parameters, whose body is
the primal statements, the seed of the output cotangent, the adjoint
statements in reverse order and a return of the gradients:

* activity: a variable gets an adjoint only if it depends on a
  differentiated parameter and the output depends on it;
* each primitive's VJP templates (``rules``) are inlined per active
  argument (``call_adjoints.py``); contributions accumulate into ``x_bar``
  (first one assigns, later ones add);
* ``if`` statements get an adjoint ``if`` on the same (recorded) test, with
  adjoints that only one branch creates zero-initialised in the other;
* symbolic zeros: an adjoint nobody contributed to is never materialised,
  except as ``zeros_like`` for a returned gradient.
"""
from __future__ import annotations

import operator
from collections import Counter
from dataclasses import dataclass, replace
from typing import Dict, List, Sequence, Set

import s2s_runtime as rt
from s2s_runtime import build

from ..errors import unsupported
from ..ir import nodes as ir
from ..ir.names import NameGen
from ..rules import lookup
from .common import (check_no_opaque_mutation, display_items, expr_active, is_in,
                     tuple_displays)
from . import custom_rules
from .analysis import backward_needed, defined_before, may_be_none
from .call_adjoints import STRUCT, CallAdjoints
from .dict_reads import EntryAdjoints
from .prepare import BodyPreparation
from .references import scalar_references
from .scalars import scalar_tuples
from .loops import LoopAdjoints
from .tries import TryAdjoints


@dataclass(frozen=True)
class ParamInfo:
    """What reverse mode needs to know of a parameter's kind."""

    differentiable: bool  # has at least one float/complex leaf
    leaf: bool  # a single number or array (not a container)
    real_scalar: bool = False  # a Python float or a real numpy scalar
    is_dict: bool = False  # a plain dict (its gradient is written as a dict literal)
    #: keys (dict) or indices (tuple/list) of the direct children that are real scalars
    scalar_items: frozenset = frozenset()
    #: a 1-D array of real numbers (its items are real scalars)
    real_vector: bool = False
    #: a tuple or list whose items are all real scalars
    all_items_scalar: bool = False
    #: a plain dict: the key paths of its entries, nested dicts included
    dict_paths: frozenset = frozenset()


class Reverse(BodyPreparation, EntryAdjoints, LoopAdjoints, TryAdjoints, CallAdjoints):
    def __init__(self, fn: ir.Function, wrt: Sequence[str], info: Dict[str, ParamInfo],
                 has_aux=False, holomorphic=False):
        self.fn = fn
        self.wrt = list(wrt)
        self.info = info
        self.has_aux = has_aux
        self.holomorphic = holomorphic
        self.names = NameGen(ir.all_names(fn))
        self.temps = set(fn.temps)
        self.bar: Dict[str, ir.Var] = {}
        self.numeric: Set[str] = {p for p, i in info.items() if i.leaf}
        #: names some assignment gives a container, or a value of no known kind: never
        #: ``numeric``, their adjoints add with ``rt.add``
        self.containers: Set[str] = set()
        #: variables certainly holding real scalars (their adjoints are real scalars too)
        self.scalars: Set[str] = {p for p, i in info.items() if i.real_scalar}

    # -- activity ---------------------------------------------------------------
    def forward_activity(self, stmts, active: Set[str]) -> None:
        for s in stmts:
            check_no_opaque_mutation(s, active)
            # (in-place operators carrying derivatives are index writes by now: index_writes.py)
            if isinstance(s, ir.Assign):
                if expr_active(s.value, active):
                    active.add(s.target.name)
                if isinstance(s.value, ir.Call):
                    rule = lookup(s.value.fn)
                    if rule is None or rule.container_result or s.value.fn in STRUCT or (
                            s.value.fn in (rt.batch_lift, rt.batch_view)
                            and is_in(s.value.args[0], self.containers)):
                        # (a name also assigned a container, acc = rt.list_append(acc, v)
                        # in a loop, is no number whatever its first value was)
                        self.containers.add(s.target.name)
                    if rule is not None and not rule.container_result and s.value.fn not in STRUCT:
                        # an item, or zeros, of a container is no number
                        if s.value.fn not in (operator.getitem, rt.zeros_like) \
                                or is_in(s.value.args[0], self.numeric):
                            self.numeric.add(s.target.name)
                elif isinstance(s.value, ir.Var) and s.value.name in self.numeric:
                    self.numeric.add(s.target.name)
                if isinstance(s.value, ir.Var) and s.value.name in self.containers:
                    self.containers.add(s.target.name)
            elif isinstance(s, ir.Unpack):
                items = display_items(self.displays, s.value, len(s.targets))
                if items is not None:  # i, row = (k, y[k]): each target as its item
                    active.update(t.name for t, a in zip(s.targets, items) if is_in(a, active))
                elif is_in(s.value, active):
                    active.update(t.name for t in s.targets)
                if is_in(s.value, self.numeric):
                    self.numeric.update(t.name for t in s.targets)
            elif isinstance(s, ir.ExprStmt):
                v = s.value
                if isinstance(v, ir.Call) and v.fn in (operator.setitem, setattr) and any(
                        is_in(a, active) for a in v.args):
                    what = "in-place assignment" if v.fn is operator.setitem else "attribute assignment"
                    raise unsupported(f"{what} of a differentiated value", s.loc,
                                      "in-place writes in reverse mode come with the control-flow work")
            elif isinstance(s, ir.If):
                self.forward_activity(s.body, active)
                self.forward_activity(s.orelse, active)
            elif isinstance(s, (ir.For, ir.While, ir.Try)):
                inner = list(ir.sub_blocks_flat(s))
                while True:  # loop-carried dependences: to a fixed point
                    before = (len(active), len(self.scalars), len(self.numeric))
                    if isinstance(s, ir.For) and is_in(s.iter, active):
                        active.add(s.target.name)
                    self.forward_activity(inner, active)
                    if (len(active), len(self.scalars), len(self.numeric)) == before:
                        break
                if isinstance(s, ir.Try):
                    self.check_try(s, active)
                else:
                    self.check_loop(s, active)

    # -- adjoint --------------------------------------------------------------------
    def bar_of(self, name: str) -> ir.Var:
        if name not in self.bar:
            new = self.names.fresh(f"{name}_bar")
            if name in self.temps:
                self.temps.add(new)
            self.bar[name] = ir.Var(new)
        return self.bar[name]

    def accumulate(self, x: ir.Atom, c: ir.Atom, have: Set[str], out: List, loc) -> None:
        if not isinstance(x, ir.Var) or x.name not in self.relevant:
            return
        if x.name not in have and isinstance(c, ir.Var) and x.name in self.aliasable[-1] \
                and x.name not in self.bar:
            # a temporary read once, in this block, gets exactly this one contribution:
            # its adjoint is ``c`` itself, no copy needed
            self.bar[x.name] = c
            self.template_results.pop(c.name, None)  # now an adjoint: may be read again
            have.add(x.name)
            return
        b = self.bar_of(x.name)
        if x.name not in have:
            last = out[-1] if out else None
            if isinstance(last, ir.Assign) and last.target == c and c.name in self.temps \
                    and self.template_results.get(c.name):
                out[-1] = replace(last, target=b)  # name the rule's result x_bar directly
                del self.template_results[c.name]
            else:
                out.append(ir.Assign(b, c, loc))
            have.add(x.name)
        else:
            last = out[-1] if out else None
            if isinstance(last, ir.Assign) and last.target == c and isinstance(last.value, ir.Call) \
                    and last.value.fn is rt.getitem_vjp and self.template_results.get(c.name) \
                    and not last.value.kwargs:
                # the adjoint of a read x[i] added to x_bar: add it at i, without the zeros
                del self.template_results[c.name]
                out[-1] = ir.Assign(b, ir.Call(rt.add_at, (b,) + last.value.args), loc)
                return
            numeric = x.name in self.numeric and x.name not in self.maybe_none \
                and x.name not in self.containers
            op = operator.add if numeric else rt.add  # None (a zero) adds with rt.add
            out.append(ir.Assign(b, ir.Call(op, (b, c)), loc))

    def temp(self) -> ir.Var:
        name = self.names.temp()
        self.temps.add(name)
        return ir.Var(name)

    def adjoint_block(self, stmts, have: Set[str]) -> List:
        out: List = []
        self.aliasable.append({s.target.name for s in stmts if isinstance(s, ir.Assign)
                               and s.target.name in self.fn.temps
                               and self.use_counts.get(s.target.name) == 1})
        carried = set().union(*self.loop_stack)
        for s in reversed(stmts):
            loc = replace(s.loc, derived=True)
            if isinstance(s, ir.Assign):
                name = s.target.name
                if name in self.entry_dicts:  # its entries' adjoints, as a dict literal
                    self._assemble_entries(name, have, out, loc)
                if name in have and name in self.relevant:
                    g = None
                    # consumed here; what reads it earlier adds anew (a name a loop body
                    # assigns twice too: its adjoint is renewed before a temporary whose
                    # adjoint it stands for is read, e.g. the swap a, b = b, a)
                    if name in carried or (self.loop_stack and self.def_counts[name] > 1):
                        g = self.temp()
                        out.append(ir.Assign(g, self.bar_of(name), loc))
                        if name in self.scalars:  # the adjoint of a real scalar is one
                            self.scalars.add(g.name)
                        have.discard(name)
                    self.adjoint_assign(s, have, out, loc, g)
                # consumed: what reads the name earlier (a loop's previous iteration, code
                # before a loop that reassigns it) reads the value it had before
                have.discard(name)
            elif isinstance(s, ir.Unpack):
                self.adjoint_unpack(s, have, out, loc)
                have -= {t.name for t in s.targets}
            elif isinstance(s, ir.If):
                self.adjoint_if(s, have, out, loc)
            elif isinstance(s, (ir.For, ir.While)):
                self.adjoint_loop(s, have, out, loc)
            elif isinstance(s, ir.Try):
                self.adjoint_try(s, have, out, loc)
            if self.loop_stack and isinstance(s, (ir.Assign, ir.Unpack)):
                out += self.pops([s])
        self.aliasable.pop()
        return out

    def _kept(self, v, body, loc):
        """``v``, or a copy made at the end of the primal if the adjoint pops ``v``."""
        if not isinstance(v, ir.Var) or v.name not in self.recorded:
            return v
        kept = self.temp()
        body.append(ir.Assign(kept, v, loc))
        return kept

    def adjoint_unpack(self, s: ir.Unpack, have, out, loc) -> None:
        if not any(t.name in have for t in s.targets) or not is_in(s.value, self.relevant):
            return
        if all(t.name in self.scalars for t in s.targets) and s.value.name in self.scalar_tuples:
            # a, b = (x, y) of real scalars: the cotangent is the tuple of theirs (0.0 for none)
            cts = tuple(self.bar[t.name] if t.name in have else ir.Const(0.0) for t in s.targets)
            self.accumulate(s.value, self._pack(cts, out, loc), have, out, loc)
            return
        cts = tuple(self.bar[t.name] if t.name in have else ir.Const(None) for t in s.targets)
        packed = self._pack(cts, out, loc)
        t = self.temp()
        out.append(ir.Assign(t, ir.Call(rt.unpack_vjp, (packed, s.value)), loc))
        self.accumulate(s.value, t, have, out, loc)

    def _pack(self, cts, out, loc) -> ir.Var:
        t = self.temp()
        out.append(ir.Assign(t, ir.Call(build.make_tuple, cts), loc))
        return t

    def adjoint_if(self, s: ir.If, have, out, loc) -> None:
        # names only this ``if`` assigns (SSA versions): their adjoints end inside it; a name
        # also assigned elsewhere (a loop variable the tape restores) is merged like others
        inner_defs = Counter(v.name for x in ir.walk(ir.sub_blocks_flat(s)) for v in ir.stmt_defs(x))
        inner = {n for n, c in inner_defs.items() if c == self.def_counts[n]}
        have_b, have_o = set(have), set(have)
        body = self.adjoint_block(s.body, have_b)
        orelse = self.adjoint_block(s.orelse, have_o)
        # inside a loop an adjoint consumed in one branch is renewed in the other, also
        # for a name only this if assigns (its value lives on in the next iteration)
        keep = (have_b | have_o) - (inner - set().union(*self.loop_stack))
        for name in sorted((have_b ^ have_o) & keep):
            side = orelse if name in have_b else body
            side.append(ir.Assign(self.bar_of(name), ir.Call(rt.zeros_like, (ir.Var(name),)), loc))
        # after the if: what either branch left (both started from ``have``), so a name
        # both branches consumed (assigned in each, a multi-version name) is gone
        have.clear()
        have |= keep
        if body or orelse:
            out.append(ir.If(s.test, tuple(body), tuple(orelse), loc))

    # -- driver -----------------------------------------------------------------------
    def build(self, returns: str, name: str, single: bool) -> ir.Function:
        """The gradient function.

        ``returns``: "grad" -> gradients (plus aux with has_aux);
        "value_and_grad" -> (value, gradients) / ((value, aux), gradients);
        "vjp" -> like "value_and_grad", but the output's cotangent is a new
        last positional parameter ``ct`` (any output structure) instead of 1.
        ``single``: argnums was an int (return one gradient, not a tuple).
        """
        body = list(self.fn.body)
        ret = body.pop()
        if not isinstance(ret, ir.Return) or any(isinstance(x, ir.Return) for x in ir.walk(body)):
            raise unsupported("'return' inside a loop or try", ret.loc if hasattr(ret, "loc") else None,
                              "comes with the control-flow work")
        loc = replace(ret.loc, derived=True)
        value = ret.value
        aux = None
        if self.has_aux:
            pair = _defining_tuple(body, ret.value)
            if pair is not None and len(pair) == 2:  # return out, aux
                value, aux = pair
            else:
                value, aux = self.temp(), self.temp()
                body.append(ir.Unpack((value, aux), ret.value, ret.loc))
        body = custom_rules.expand_vjp_calls(body, self.names, self.temps)
        body = self.prepare_body(body)
        self.loop_stack: List[Set[str]] = []
        self.while_counts: Dict[int, ir.Var] = {}
        self.loops_with_adjoint: Set[int] = set()
        self.loop_items: Dict[int, ir.Var] = {}
        self.unassigned: Set[str] = set()  # set to None first: may be read before assigned
        self.tape = ir.Var(self.names.fresh("tape"))
        self.ctrl = ir.Var(self.names.fresh("ctrl"))
        self.tapes = (self.tape, self.ctrl)
        self._defined_before = defined_before(body, {p.var.name for p in self.fn.params})
        active = {p for p in self.wrt if self.info[p].differentiable}
        self.scalar_tuples = scalar_tuples(body, self.scalars)
        self.displays = tuple_displays(body)
        self.forward_activity(body, active)
        self.maybe_none = may_be_none(body)
        self.numeric |= self.scalars
        self.active_vars = active
        needed = {value.name} if isinstance(value, ir.Var) else set()
        backward_needed(body, needed, active)
        self.relevant = active & needed
        self.use_counts = ir.use_counts(body)
        self.returned = {v.name for v in (value, aux) if isinstance(v, ir.Var)}
        self.def_counts = Counter(v.name for x in ir.walk(body) for v in ir.stmt_defs(x))
        self.aliasable: List[Set[str]] = [set()]
        self.template_results: Dict[str, bool] = {}
        self.entries: Dict[str, list] = {}
        have: Set[str] = set()
        adjoint: List = []
        seed_kw = (("holomorphic", ir.Const(True)),) if self.holomorphic else ()
        params = self.fn.params
        if returns == "vjp":
            ct = ir.Var(self.names.fresh("ct"))
            # callers pass every positional argument: no defaults before ct
            positional = tuple(replace(p, default=None) for p in params if not p.kwonly)
            params = positional + (ir.Param(ct),) + tuple(p for p in params if p.kwonly)
            if isinstance(value, ir.Var) and value.name in self.relevant:
                self.bar[value.name] = ct
                have.add(value.name)
        elif isinstance(value, ir.Var) and value.name in self.relevant:
            seed = ir.Call(rt.grad_seed, (value,), seed_kw)
            adjoint.append(ir.Assign(self.bar_of(value.name), seed, loc))
            self.temps.discard(self.bar_of(value.name).name)  # the seed keeps its own line
            have.add(value.name)
        else:  # output does not depend on the inputs: still check it like JAX
            adjoint.append(ir.ExprStmt(ir.Call(rt.grad_seed, (value,), seed_kw), loc))
        adjoint += self.adjoint_block(body, have)
        adjoint = scalar_references(adjoint, self.scalars - {p.var.name for p in params})
        body, adjoint = self.finish_tape(body, adjoint)
        # the adjoint pops loop variables back to their first values: keep the output's
        value, aux = (self._kept(v, body, loc) for v in (value, aux))
        grads = []
        for p in self.wrt:
            self._assemble_entries(p, have, adjoint, replace(self.fn.loc, derived=True))
            if p in have:
                g = self.bar[p]
                if not self.info[p].leaf:
                    t = self.temp()
                    adjoint.append(ir.Assign(t, ir.Call(rt.densify, (g, ir.Var(p))), loc))
                    g = t
            else:
                g = self.temp()
                adjoint.append(ir.Assign(g, ir.Call(rt.zeros_like, (ir.Var(p),)), loc))
            grads.append(g)
        result = grads[0] if single else self._pack(tuple(grads), adjoint, loc)
        # what split() needs: where the primal ends, the gradients, the value (and aux)
        self.primal, self.adjoint, self.grads = list(body), list(adjoint), result
        self.value, self.aux, self.params, self.ret_loc = value, aux, params, ret.loc
        if returns in ("value_and_grad", "vjp"):
            val = value if aux is None else self._pack((value, aux), adjoint, loc)
            result = self._pack((val, result), adjoint, loc)
        elif aux is not None:
            result = self._pack((result, aux), adjoint, loc)
        adjoint.append(ir.Return(result, ret.loc))
        return replace(self.fn, name=name, params=params, body=tuple(body + adjoint),
                       docstring=None, temps=frozenset(self.temps))


def scalar_item_of(v, info) -> bool:
    """``p[k]`` of a parameter whose item ``k`` is a real scalar."""
    return (isinstance(v, ir.Call) and v.fn is operator.getitem
            and isinstance(v.args[0], ir.Var) and v.args[0].name in info
            and isinstance(v.args[1], ir.Const)
            and _hashable_in(v.args[1].value, info[v.args[0].name].scalar_items))


def _hashable_in(key, items) -> bool:
    try:
        return key in items
    except TypeError:
        return False


def _defining_tuple(stmts, atom):
    """The items of ``atom`` if a top-level ``atom = (a, b, ...)`` defines it."""
    if not isinstance(atom, ir.Var):
        return None
    for s in stmts:
        if isinstance(s, ir.Assign) and s.target == atom and isinstance(s.value, ir.Call) \
                and s.value.fn is build.make_tuple:
            return s.value.args
    return None
