"""User-defined derivative rules: ``custom_jvp`` and ``custom_vjp`` (JAX's API and semantics).

::

    @s2s.custom_jvp
    def f(x, y): ...
    @f.defjvp
    def f_jvp(primals, tangents): ...          # -> (primal_out, tangent_out)

    @s2s.custom_vjp
    def g(x, y): ...
    def g_fwd(x, y): ...                      # -> (primal_out, residuals)
    def g_bwd(res, ct): ...                   # -> (x_ct, y_ct), None for a zero
    g.defvjp(g_fwd, g_bwd)

Calling ``f``/``g`` runs the primal function.  ``nondiff_argnums`` names
positional arguments that are not differentiated: a ``custom_jvp`` rule
takes them first (``rule(*nondiff, primals, tangents)``, primals and
tangents without them), so does a ``custom_vjp`` backward function
(``bwd(*nondiff, res, ct)``, one cotangent per other argument); the
forward function takes every argument in its place.

How the transforms use a rule (``ad/custom_rules.py``): the function is,
to the frontend, ``def f(x, y): return <f>(x, y)`` (``__s2s_ir__``), where
``<f>`` (``CustomCall``) is a call the transforms recognise:

* forward mode of a ``custom_jvp``: ``(y, dy) = <f_jvp>(x, y, dx, dy)``;
  of a ``custom_vjp``: a ``TypeError``, as in JAX;
* reverse mode of a ``custom_vjp``: the primal sweep runs ``<g_fwd>`` and
  keeps its residuals, the adjoint calls ``<g_bwd>(res_pair, ct)``;
  of a ``custom_jvp``: the adjoint calls ``<f_transpose>``, the user's rule
  differentiated in reverse with respect to its (linear) tangents
  (``core/custom_transpose.py``).

Each of ``<g_fwd>``, ``<g_out>``, ``<g_bwd>``, ``<f_jvp>`` is a small
callable that runs at run time and carries its IR (``__s2s_ir__``): a call of
the user's function plus a check of what it returned (``s2s_runtime.
custom_checks``).  A transform of generated code inlines that IR, so the
user's rules are differentiated like any other code (``grad(grad(g))``
differentiates ``g_fwd`` and ``g_bwd``), and nothing opaque is left for
``jit`` or ``vmap``.  ``<f_transpose>`` is a transform call site
(``__s2s_ir__`` given the arguments) whose IR depends on the argument kinds.  The generated
code names them after the user's rules, so ``s2s dump`` shows where each
rule is used.

Limits: parameters are positional (no ``*args``, keyword-only or
``symbolic_zeros``); what a rule returns is checked when it runs, not when
the code is generated, and a forward function's primal output is not
compared with the primal function's; a local ``lambda`` or nested ``def``
cannot be passed to a custom function from differentiated code (it does not
exist at run time there: pass a module-level function); a rule that calls
``s2s.vjp`` (the cookbook's ``fixed_point``) runs, but cannot be
differentiated again, since ``vjp`` calls inside transformed code are not
supported.
"""
from __future__ import annotations

import functools
import hashlib
import inspect
import linecache
from dataclasses import replace

from ..errors import CustomRuleError
from ..frontend.registered import register as register_source
from ..frontend.shipped import filename_of
from ..ir import nodes as ir
from .travel import travelling

_P = inspect.Parameter


def loc_of(fn) -> ir.Loc:
    """Where ``fn`` is defined (its ``def`` line, after any decorators), for the
    comments of generated code and for errors."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return ir.NO_LOC
    filename = filename_of(code)  # the sender's file, for a function that travelled
    line = first = code.co_firstlineno
    text = linecache.getline(filename, line).rstrip("\n")
    while text.lstrip().startswith("@") and line < first + 20:
        nxt = linecache.getline(filename, line + 1).rstrip("\n")
        if not nxt:
            break
        line, text = line + 1, nxt
    return ir.Loc(filename, line, len(text) - len(text.lstrip()), text)


def is_custom_function(fn) -> bool:
    """A ``custom_jvp`` or ``custom_vjp`` function."""
    return isinstance(fn, _Custom)


def _name(fn) -> str:
    name = getattr(fn, "__name__", None) or "f"
    name = "".join(ch if ch.isalnum() else "_" for ch in name).strip("_")
    return name or "f"


class _Custom:
    """What ``custom_jvp`` and ``custom_vjp`` share: the primal, its signature, the IR."""

    kind = ""

    def __init__(self, fun, nondiff_argnums=()):
        if not callable(fun):
            raise TypeError(f"{type(self).__name__} expects a callable, got {fun!r}")
        self.fun = fun
        functools.update_wrapper(self, fun, updated=())
        self.sig = inspect.signature(fun)
        for p in self.sig.parameters.values():
            if p.kind not in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD):
                raise CustomRuleError(
                    f"{type(self).__name__} function {_name(fun)}: parameter {p.name!r} is "
                    f"{p.kind.description}; s2s's custom rules take positional parameters "
                    "only (JAX resolves keywords to positions the same way)")
        self.n = len(self.sig.parameters)
        nums = (nondiff_argnums,) if isinstance(nondiff_argnums, int) else nondiff_argnums
        nums = tuple(sorted(set(int(i) % max(self.n, 1) if i < 0 else int(i) for i in nums)))
        for i in nums:
            if not 0 <= i < self.n:
                raise CustomRuleError(f"nondiff_argnums {i} out of range for "
                                      f"{_name(fun)} with {self.n} parameters")
        self.nondiff_argnums = nums
        self.diff_argnums = tuple(i for i in range(self.n) if i not in nums)
        self.name = _name(fun)
        self.call = CustomCall(self)
        self._ir = None

    def __call__(self, *args, **kwargs):
        return self.fun(*args, **kwargs)

    def __s2s_ir__(self, args=None, kwargs=None):
        """``def f(x, y): t1 = <f>(x, y); return t1`` (see the module docstring)."""
        if self._ir is None:
            params = []
            for p in self.sig.parameters.values():
                default = None if p.default is _P.empty else ir.Const(p.default)
                params.append(ir.Param(ir.Var(p.name), default))
            out = ir.Var(_fresh({p.var.name for p in params}, "out"))
            loc = loc_of(self.fun)
            body = (ir.Assign(out, ir.Call(self.call, tuple(p.var for p in params)), loc),
                    ir.Return(out, loc))
            self._ir = (ir.Function(self.name, tuple(params), body, loc,
                                    temps=frozenset({out.name})), {})
        return self._ir

    def describe(self) -> str:
        return f"{self.kind} function {self.name!r}"

    #: ``(method, rules)``: how the rule was set, for pickling (``restored``)
    _rules = None

    def __reduce__(self):  # its function and rules, not the code made of them (core/travel.py)
        return travelling(self, restored, (type(self), self.fun, self.nondiff_argnums,
                                           self._rules), fn=self.fun)

    def _check_first_rule(self, has_rule: bool) -> None:
        """A rule is set once: the code s2s generates (and caches) calls the rule it was
        generated with, so a replaced rule would be silently ignored there."""
        if has_rule:
            raise CustomRuleError(
                f"{self.describe()} already has a rule; s2s keeps the code it generated "
                "with that rule, so a rule cannot be replaced: decorate a new function")

    def __repr__(self):
        return f"<{self.describe()}>"


def _fresh(taken, base) -> str:
    name, i = base, 0
    while name in taken:
        i += 1
        name = f"{base}_{i}"
    return name


class custom_jvp(_Custom):
    """A function with a user-defined JVP rule (JAX's ``jax.custom_jvp``)."""

    kind = "custom_jvp"

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.jvp = None
        self.jvp_call = None

    def defjvps(self, *jvps):
        """One rule per differentiable argument, ``jvp_i(t_i, ans, *primals) -> its
        contribution`` (``None``: no derivative), summed (JAX's ``defjvps``).  Made into
        one ordinary ``defjvp`` rule, so it is transformed like any other code."""
        if len(jvps) != len(self.diff_argnums):
            raise CustomRuleError(f"defjvps of {self.describe()}: expected one rule per "
                                  f"differentiable argument ({len(self.diff_argnums)}), got "
                                  f"{len(jvps)}")
        if self.nondiff_argnums:
            raise CustomRuleError("defjvps with nondiff_argnums is not supported: use defjvp")
        names = [f"x{i}" for i in range(self.n)]
        dots = [f"t{i}" for i in range(self.n)]
        unpack = "".join(f"{n}, " for n in names)
        terms = [f"_jvp{i}({dots[i]}, ans, {', '.join(names)})"
                 for i, j in enumerate(jvps) if j is not None]
        tangent = " + ".join(terms) if terms else "_zeros(ans)"
        fname = f"{self.name}_jvps"
        src = (f"def {fname}(primals, tangents):\n"
               f"    {unpack} = primals\n"
               f"    {''.join(f'{d}, ' for d in dots)} = tangents\n"
               f"    ans = _fun({', '.join(names)})\n"
               f"    return ans, {tangent}\n")
        from s2s_runtime import zeros_like

        namespace = {"_fun": self, "_zeros": zeros_like,
                     **{f"_jvp{i}": j for i, j in enumerate(jvps) if j is not None}}
        out = self.defjvp(define_function(src, fname, namespace, self.fun))
        self._rules = ("defjvps", jvps)
        return out

    def defjvp(self, jvp, symbolic_zeros=False):
        """Set the rule ``jvp(*nondiff_args, primals, tangents) -> (primal_out,
        tangent_out)``; returns ``jvp`` (so it works as a decorator)."""
        if symbolic_zeros:
            raise CustomRuleError("custom_jvp.defjvp(symbolic_zeros=True) is not supported: "
                                  "s2s passes zeros for inputs without a tangent")
        from .custom_calls import JVPRuleCall, JVPTranspose

        self._check_first_rule(self.jvp is not None)
        self.jvp = jvp
        self._tangent_map = None  # made anew for this rule (core/custom_transpose.py)
        self.jvp_call = JVPRuleCall(self)
        self.transpose = JVPTranspose(self)
        self._rules = ("defjvp", (jvp,))
        return jvp


class custom_vjp(_Custom):
    """A function with a user-defined VJP (JAX's ``jax.custom_vjp``)."""

    kind = "custom_vjp"

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.fwd = self.bwd = None

    def defvjp(self, fwd, bwd, symbolic_zeros=False):
        """Set ``fwd(*args) -> (out, residuals)`` and ``bwd(*nondiff_args, residuals, ct)
        -> one cotangent per differentiable argument``."""
        if symbolic_zeros:
            raise CustomRuleError("custom_vjp.defvjp(symbolic_zeros=True) is not supported")
        from .custom_calls import VJPBwdCall, VJPFwdCall, VJPOutCall

        self._check_first_rule(self.fwd is not None)
        self.fwd, self.bwd = fwd, bwd
        self.fwd_call = VJPFwdCall(self)
        self.out_call = VJPOutCall(self)
        self.bwd_call = VJPBwdCall(self)
        self._rules = ("defvjp", (fwd, bwd))


def restored(cls, fun, nondiff_argnums, rules):
    """``cls(fun, nondiff_argnums)`` with its rule set as ``rules`` says (what a pickled
    custom function is made again from)."""
    out = cls(fun, nondiff_argnums)
    if rules is not None:
        method, args = rules
        getattr(out, method)(*args)
    return out


def define_function(src: str, fname: str, namespace: dict, like):
    """The function ``fname`` defined by the source ``src`` (kept in ``linecache`` so that
    the frontend reads it like user code), with ``namespace`` as its globals and the
    module of the function ``like``."""
    filename = f"<s2s {fname} {hashlib.sha1(src.encode()).hexdigest()[:12]}>"
    register_source(filename, src)
    namespace = dict(namespace, __name__=getattr(like, "__module__", None) or "__main__")
    exec(compile(src, filename, "exec"), namespace)
    return namespace[fname]


class CustomCall:
    """``<f>(*args)``: a call of a custom function as the transforms see it.  At run
    time it runs the primal function; the transforms replace it by the rules."""

    _s2s_custom = "call"

    def __init__(self, owner: _Custom):
        self.owner = owner
        self.__name__ = self.__qualname__ = owner.name
        self.__module__ = getattr(owner.fun, "__module__", None)

    def __call__(self, *args):
        return self.owner.fun(*args)

    @property
    def primal(self):
        """The function whose code computes this call's value: what a transform that
        does not differentiate (a compiler, a batching transform) inlines here."""
        return self.owner.fun

    def __repr__(self):
        return f"<call of {self.owner.describe()}>"


def with_primal_calls(func: ir.Function) -> ir.Function:
    """``func`` with every ``<f>(*args)`` (``CustomCall``) made a call of ``f``'s primal
    function, which the inliner (``passes/inline.py``) then inlines like any user
    function.  For transforms that run code without differentiating it (a compiler,
    a batching transform): the rules' own calls (``<g_fwd>``, ``<g_bwd>``,
    ``<f_jvp>``) carry their IR already and ``<f_transpose>`` is a transform call
    site, so after this pass and inlining nothing opaque is left."""
    def primal_call(s):
        v = getattr(s, "value", None)
        if isinstance(v, ir.Call) and isinstance(v.fn, CustomCall):
            return replace(s, value=replace(v, fn=v.fn.primal))
        return s

    return replace(func, body=ir.map_stmts(func.body, primal_call))


__all__ = ["custom_jvp", "custom_vjp", "CustomRuleError", "CustomCall", "with_primal_calls"]
