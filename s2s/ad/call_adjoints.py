"""Reverse mode: the adjoint of one assignment ``x = value`` (a mixin of ``reverse.Reverse``).

Contract: ``adjoint_assign(s, have, out, loc, g)`` appends to ``out`` the statements
that pass ``g`` (default: ``x_bar``), the cotangent of ``s.target``, on to the
relevant operands of ``s.value``, through ``accumulate``:

* ``x = y``: ``y_bar += g``;
* a tuple, list or dict display: each relevant item gets ``g[k]``;
* ``params['w']`` of a dict parameter, outside loops and branches: the entry's
  adjoint is collected by key (the gradient becomes a dict literal, ``dict_reads.py``);
* a ``custom_vjp``/``custom_jvp`` function: the user's rule (``custom_rules.py``); a
  checkpointed call: recomputed in the adjoint (``core/remat.py``);
* any other call ``f(args)``: the VJP template of ``f``'s rule for each relevant
  argument, instantiated with ``(g, x, *args)`` (``rules.templates.instantiate``); a
  non-differentiable rule contributes nothing.

A call without a rule and without source (``NoRuleError``), of a value whose code
s2s cannot see, or with arguments its rule's signature rejects raises an s2s error
naming the callable and the user's line.
"""
from __future__ import annotations

import operator
from typing import Set

from s2s_runtime import build

from ..errors import NoRuleError, S2SError
from ..ir import nodes as ir
from ..rules import lookup
from ..rules.templates import instantiate, operands_shaped_like_result
from .common import describe, is_in, no_rule_message
from . import custom_rules
from .remat import is_remat_call, remat_adjoint

#: the displays whose adjoint takes the cotangent apart item by item
STRUCT = (build.make_tuple, build.make_list, build.make_dict)


class CallAdjoints:
    """Needs the host's ``fn``, ``bar_of``, ``accumulate``, ``temp``, ``relevant``, ``numeric``,
    ``scalars``, ``bar``, ``names``, ``temps``, ``entries``, ``aliasable``,
    ``template_results`` and ``_dict_entry`` (``reverse.Reverse``)."""

    def adjoint_assign(self, s: ir.Assign, have, out, loc, g=None) -> None:
        g = g if g is not None else self.bar_of(s.target.name)
        v = s.value
        if isinstance(v, ir.Var):
            self.accumulate(v, g, have, out, loc)
            return
        if not isinstance(v, ir.Call):
            return
        if v.fn is operator.getitem and self._dict_entry(v) and len(self.aliasable) <= 2:
            # params['w'] of a dict parameter, outside loops and branches: collect the
            # entry's adjoint by key; the gradient is assembled as a dict literal at the end
            self.entries.setdefault(v.args[0].name, []).append((v.args[1], g))
            return
        if v.fn in STRUCT:
            items = v.args if v.fn is not build.make_dict else v.args[1::2]
            keys = range(len(items)) if v.fn is not build.make_dict else v.args[0::2]
            for key, a in zip(keys, items):
                if is_in(a, self.relevant):
                    t = self.temp()
                    k = key if isinstance(key, (ir.Var, ir.Const)) else ir.Const(key)
                    out.append(ir.Assign(t, ir.Call(operator.getitem, (g, k)), loc))
                    self.accumulate(a, t, have, out, loc)
            return
        if custom_rules.is_custom(v.fn):  # custom_jvp / custom_vjp: the user's rule
            return custom_rules.adjoint(self, s, g, have, out, loc)
        if is_remat_call(v):  # a checkpointed function: recomputed in the adjoint
            return remat_adjoint(self, s, g, have, out, loc)
        rule = lookup(v.fn)
        if v.fn is build.call_method:
            name = v.args[1].value if isinstance(v.args[1], ir.Const) else "?"
            obj = v.args[0].name if isinstance(v.args[0], ir.Var) else "?"
            if obj in self.fn.temps or obj == "?":
                call, who = "a call of a value computed in the function", "that value"
            else:
                call = f"the call {obj}(...)" if name == "__call__" else f"{obj}.{name}(...)"
                who = repr(obj)
            raise NoRuleError(
                f"cannot differentiate {call}: {who} is a value whose code s2s cannot "
                "see; s2s sees into functions it can reach by name and into objects the "
                "function creates itself", s.loc)
        if rule is None:
            raise NoRuleError(no_rule_message(v.fn), s.loc)
        if rule.nondiff:
            return
        try:
            bound = rule.signature.bind(g, s.target, *v.args, **dict(v.kwargs))
        except TypeError as exc:
            raise S2SError(f"cannot differentiate this call of {describe(v.fn)}: {exc}",
                           s.loc) from None
        bound.apply_defaults()
        bindings = {k: (a if isinstance(a, (ir.Var, ir.Const)) else ir.Const(a))
                    for k, a in bound.arguments.items()}
        zero = rule.zero_params()
        for i, pname in enumerate(rule.param_names()):
            a = bindings[pname]
            if not is_in(a, self.relevant) or pname in zero:
                continue
            template = rule.vjps[i] if i < len(rule.vjps) else None
            if template is None:
                raise NoRuleError(f"{describe(v.fn)} is not differentiable with respect to "
                                  f"its argument {pname!r}", s.loc)
            stmts, c = instantiate(template, bindings, self.names, loc, self._scalar_names(),
                                   operands_shaped_like_result(v, self.numeric))
            if isinstance(c, ir.Var) and stmts and stmts[-1].target == c:
                self.template_results[c.name] = True
            for x in stmts:
                self.temps.add(x.target.name) if isinstance(x, ir.Assign) else None
            out += stmts
            self.accumulate(a, c, have, out, loc)

    def _scalar_names(self) -> Set[str]:
        return self.scalars | {self.bar[n].name for n in self.scalars if n in self.bar}
