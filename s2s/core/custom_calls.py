"""The calls generated code makes to the user's rules (see ``core/custom.py``).

Each is a callable that runs at run time (the user's function, then the
check of what it returned) and carries the same thing as IR (``__s2s_ir__``),
so a transform of generated code inlines and differentiates the user's
rule like any other code:

* ``VJPFwdCall``  ``<g_fwd>(*args) -> (out, residuals)``;
* ``VJPOutCall``  ``<g_out>(pair, *args) -> pair[0]``: the primal output,
  naming the arguments it depends on, so reverse mode sees which adjoints
  the rule feeds (``ad/custom_rules.py``);
* ``VJPBwdCall``  ``<g_bwd>(pair, ct, *args) -> one cotangent per
  differentiable argument`` (``bwd(*nondiff, pair[1], ct)``);
* ``JVPRuleCall`` ``<f_jvp>(*args, *tangents) -> (out, tangent_out)``
  (``jvp(*nondiff, diff_args, tangents)``);
* ``JVPTranspose`` ``<f_transpose>(*args, ct)``: the transposed JVP rule
  (``core/custom_transpose.py``).
"""
from __future__ import annotations

import operator

from s2s_runtime import build, check_bwd_output, check_fwd_output, check_jvp_output

from ..ir import nodes as ir
from ..ir.names import NameGen


class _RuleCall:
    """A call of a user rule with its IR; ``_build(names, params, body)`` gives the
    result atom of the IR body it appends to ``body``."""

    _s2s_custom = ""
    suffix = ""

    def __init__(self, owner, rule):
        self.owner, self.rule = owner, rule
        rule_name = getattr(rule, "__name__", None)
        base = rule_name if rule_name and rule_name.isidentifier() and rule_name != "<lambda>" \
            else f"{owner.name}_{self.suffix}"
        self.__name__ = self.__qualname__ = base
        self.__module__ = getattr(owner.fun, "__module__", None)
        self.label = f"{self.describe_rule()} {base!r} of {owner.describe()}"
        self._ir = None

    def describe_rule(self) -> str:
        return "rule"

    def param_names(self):
        return [p for p in self.owner.sig.parameters]

    def __s2s_ir__(self, args=None, kwargs=None):
        if self._ir is None:
            names = NameGen()
            params = [ir.Param(ir.Var(names.fresh(n))) for n in self.param_names()]
            body = []
            loc = ir.Loc(*_loc_tuple(self.rule))
            result = self._build(names, [p.var for p in params], body, loc)
            body.append(ir.Return(result, loc))
            temps = frozenset(v.name for s in body for v in ir.stmt_defs(s))
            self._ir = (ir.Function(self.__name__, tuple(params), tuple(body), loc,
                                    temps=temps), {})
        return self._ir

    def __repr__(self):
        return f"<{self.label}>"


def _loc_tuple(fn):
    from .custom import loc_of

    loc = loc_of(fn)
    return loc.file, loc.line, loc.col, loc.text


def _assign(body, names, value, loc, base="t") -> ir.Var:
    v = ir.Var(names.fresh(base))
    body.append(ir.Assign(v, value, loc))
    return v


class VJPFwdCall(_RuleCall):
    _s2s_custom = "vjp_fwd"
    suffix = "fwd"

    def __init__(self, owner):
        super().__init__(owner, owner.fwd)

    def describe_rule(self):
        return "custom_vjp forward function"

    def __call__(self, *args):
        return check_fwd_output(self.rule(*args), self.label)

    def _build(self, names, params, body, loc):
        r = _assign(body, names, ir.Call(self.rule, tuple(params)), loc)
        return _assign(body, names, ir.Call(check_fwd_output, (r, ir.Const(self.label))), loc)


class VJPOutCall(_RuleCall):
    _s2s_custom = "vjp_out"
    suffix = "out"

    def __init__(self, owner):
        super().__init__(owner, owner.fun)
        self.__name__ = self.__qualname__ = f"{owner.name}_out"

    def param_names(self):
        return ["pair"] + list(self.owner.sig.parameters)

    def __call__(self, pair, *args):
        return pair[0]

    def _build(self, names, params, body, loc):
        return _assign(body, names, ir.Call(operator.getitem, (params[0], ir.Const(0))), loc)


class VJPBwdCall(_RuleCall):
    _s2s_custom = "vjp_bwd"
    suffix = "bwd"

    def __init__(self, owner):
        super().__init__(owner, owner.bwd)

    def describe_rule(self):
        return "custom_vjp backward function"

    def param_names(self):
        return ["pair", "ct"] + list(self.owner.sig.parameters)

    def __call__(self, pair, ct, *args):
        nondiff = [args[i] for i in self.owner.nondiff_argnums]
        diff = tuple(args[i] for i in self.owner.diff_argnums)
        return check_bwd_output(self.rule(*nondiff, pair[1], ct), diff, self.label)

    def _build(self, names, params, body, loc):
        pair, ct, args = params[0], params[1], params[2:]
        nondiff = [args[i] for i in self.owner.nondiff_argnums]
        diff = tuple(args[i] for i in self.owner.diff_argnums)
        res = _assign(body, names, ir.Call(operator.getitem, (pair, ir.Const(1))), loc)
        c = _assign(body, names, ir.Call(self.rule, tuple(nondiff) + (res, ct)), loc)
        d = _assign(body, names, ir.Call(build.make_tuple, diff), loc)
        return _assign(body, names, ir.Call(check_bwd_output, (c, d, ir.Const(self.label))),
                       loc)


class JVPRuleCall(_RuleCall):
    _s2s_custom = "jvp_rule"
    suffix = "jvp"

    def __init__(self, owner):
        super().__init__(owner, owner.jvp)

    def describe_rule(self):
        return "custom_jvp rule"

    def param_names(self):
        names = list(self.owner.sig.parameters)
        return names + [f"d{names[i]}" for i in self.owner.diff_argnums]

    def __call__(self, *args):
        n = self.owner.n
        primals, tangents = args[:n], args[n:]
        nondiff = [primals[i] for i in self.owner.nondiff_argnums]
        diff = tuple(primals[i] for i in self.owner.diff_argnums)
        return check_jvp_output(self.rule(*nondiff, diff, tuple(tangents)), self.label)

    def _build(self, names, params, body, loc):
        n = self.owner.n
        primals, tangents = params[:n], params[n:]
        nondiff = [primals[i] for i in self.owner.nondiff_argnums]
        diff = tuple(primals[i] for i in self.owner.diff_argnums)
        p = _assign(body, names, ir.Call(build.make_tuple, diff), loc)
        t = _assign(body, names, ir.Call(build.make_tuple, tuple(tangents)), loc)
        r = _assign(body, names, ir.Call(self.rule, tuple(nondiff) + (p, t)), loc)
        return _assign(body, names, ir.Call(check_jvp_output, (r, ir.Const(self.label))), loc)


class JVPTranspose:
    """``<f_transpose>(*args, ct)``: the cotangents of the differentiable arguments,
    the user's JVP rule transposed (``custom_transpose.transpose_ir``).  Runs the
    code generated for the arguments' kinds; in transformed code it is a call site
    expanded to that code (``__s2s_ir__`` for the arguments' kinds)."""

    _s2s_custom = "jvp_transpose"

    def __init__(self, owner):
        self.owner = owner
        self.__name__ = self.__qualname__ = f"{owner.name}_transpose"
        self.__module__ = getattr(owner.fun, "__module__", None)
        self.cache = {}

    def __call__(self, *args):
        from .custom_transpose import compiled_transpose

        fn, free = compiled_transpose(self, args[:-1])
        return fn(*args, **free)

    def __s2s_ir__(self, args=None, kwargs=None):
        if args is None:  # the IR depends on the arguments' kinds
            return None
        from .custom_transpose import transpose_ir

        return transpose_ir(self, args[:-1])

    def __repr__(self):
        return f"<transposed JVP rule of {self.owner.describe()}>"
