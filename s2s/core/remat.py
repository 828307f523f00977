"""Checkpointed callables at run time: what generated code calls (see ``api/checkpointing.py``).

A ``Remat`` wraps a function ``f`` s2s can transform.  Called, it runs ``f``
(nothing recorded).  The transforms never look inside it; they call two
companions instead, each itself a ``Remat`` (so a derivative of a derivative
takes the same path):

* ``r.pullback(*args, ct)`` -> one cotangent per positional argument of
  ``f`` (None for static arguments): the vjp of ``f`` at ``args``, built and
  cached per argument kinds like ``s2s.vjp``; it runs ``f`` again *with* its
  tape and then its adjoint.  This is the recomputation: the reverse sweep
  of the caller stores only ``args``.
* ``r.pushforward(*args, *tangents)`` -> ``(out, out_tangent)``: the jvp of
  ``f`` (forward mode has nothing to store).

``resolve(args)`` gives the function (and keyword-only free values) a
``Remat`` stands for at these arguments: ``f`` itself, or, for a pullback or
pushforward, the IR of ``f``'s generated vjp or jvp for the kinds of
``args`` (an ``IRCallable``), which the next transform differentiates.
"""
from __future__ import annotations

import inspect
import operator
from typing import Dict, Tuple

import s2s_runtime as rt
from s2s_runtime import build

from ..ir import nodes as ir
from ..ir.kinds import kind_of
from ..passes.inline import ir_signature
from ..passes.sites import IRCallable
from ..rules.registry import defopaque
from .travel import travelling
from .reverse import cotangents_only


def has_none(ct) -> bool:
    if ct is None:
        return True
    if isinstance(ct, (tuple, list)):
        return any(map(has_none, ct))
    if isinstance(ct, dict):
        return any(map(has_none, ct.values()))
    return False


def kinds_of(values) -> tuple:
    return tuple(map(kind_of, values))


def ir_callable(func: ir.Function) -> IRCallable:
    """``func`` as a callable the transforms inline (its signature is ``func``'s)."""
    c = IRCallable(func, {})
    c.__signature__ = ir_signature(func)
    return c


def _rule_signature(fun):
    """``(_g, _ans, *fun's parameters)``: what lets ``grad(checkpoint(f))`` take the
    checkpointed function directly (``pipeline.primitive_signature``); None if
    ``fun`` has no plain Python signature."""
    if not inspect.isfunction(fun):
        return None
    sig = inspect.signature(fun)
    roles = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY)
             for n in ("_g", "_ans")]
    return sig.replace(parameters=roles + list(sig.parameters.values()))


class Remat:
    """``f`` under ``checkpoint``: see the module docstring."""

    _s2s_remat = True

    def __init__(self, fun, static_argnums=(), name=None):
        self.fun = fun
        self.static_argnums = frozenset(static_argnums)
        base = name or getattr(fun, "__name__", "f")
        self.__name__ = self.__qualname__ = "".join(
            ch if ch.isalnum() else "_" for ch in f"checkpoint_{base}")
        self.__doc__ = getattr(fun, "__doc__", None)
        self._pullback = self._pushforward = None
        self._checked = False
        self._fixed = {}  # number of arguments -> (vjp transform, argnums), see vjp_transform
        # pure to every pass; the transforms differentiate it (ad/remat.py)
        defopaque(self, signature=_rule_signature(fun))

    def __reduce__(self):  # its function and static arguments (core/travel.py)
        return travelling(self, Remat, (self.fun, tuple(sorted(self.static_argnums))))

    def __repr__(self) -> str:
        return f"<s2s.checkpoint of {getattr(self.fun, '__qualname__', self.fun)!r}>"

    def __call__(self, *args, **kwargs):
        return self.fun(*args, **kwargs)

    def resolve(self, args) -> Tuple[object, Dict]:
        """``(callable, keyword-only values)`` this stands for at ``args``."""
        return self.fun, {}

    def check_replayable(self) -> None:
        """Raise if running the function again could differ from its first run
        (``passes/replay.py``); checked once, when reverse mode first meets a call."""
        if self._checked or not inspect.isfunction(self.fun):
            return
        from . import pipeline
        from ..passes.replay import check_replayable

        check_replayable(pipeline.front(self.fun).func.body, set(),
                         f"the checkpointed function {self.fun.__name__}")
        self._checked = True

    def signature(self) -> inspect.Signature:
        return inspect.signature(self.fun)

    def argnums(self, n: int) -> tuple:
        return tuple(i for i in range(n) if i not in self.static_argnums)

    # -- the companions ------------------------------------------------------------
    @property
    def pullback(self) -> "RematPullback":
        if self._pullback is None:
            self._pullback = RematPullback(self)
        return self._pullback

    @property
    def pushforward(self) -> "RematPushforward":
        if self._pushforward is None:
            self._pushforward = RematPushforward(self)
        return self._pushforward

    # -- run time ------------------------------------------------------------------
    def vjp_transform(self, args):
        """``(transform, values)``: the vjp of what this stands for at ``args`` (all
        non-static positional arguments differentiated) and the values to run it on."""
        from .reverse import reverse_transform

        fixed = self._fixed.get(len(args))  # the function is the same at any kinds
        if fixed is not None:
            return fixed[0], list(args), fixed[1]
        fun, kw = self.resolve(args)
        nums = self.argnums(len(args))
        t = reverse_transform(fun, nums, False, False, "vjp") if nums else None
        if type(self) is Remat or isinstance(self, FixedFunction):
            self._fixed[len(args)] = (t, nums)
        return t, list(args) + list(kw.values()), nums

    def vjp_call(self, args, ct) -> tuple:
        """One cotangent per argument (None for the static ones)."""
        args = tuple(args)
        t, values, nums = self.vjp_transform(args)
        if not nums:
            return (None,) * len(args)
        if has_none(ct):  # a part of the output nobody used: its cotangent is zero
            ct = rt.densify(ct, self(*args))
        _, grads = t.run(values, extra=(ct,))
        out = [None] * len(args)
        for i, g in zip(nums, grads):
            out[i] = g
        return tuple(out)

    def jvp_call(self, args, tangents):
        from .forward import forward_of, zero_tangent

        fun, kw = self.resolve(args)
        tangents = [zero_tangent(a) if i in self.static_argnums else t
                    for i, (a, t) in enumerate(zip(args, tangents))]
        return forward_of(fun, False)(tuple(args), tuple(tangents), kwonly=kw or None)


class FixedFunction:
    """Marks a ``Remat`` subclass whose ``resolve`` gives the same function at any kinds."""


class RematPullback(Remat):
    """``(*args, ct) -> cotangents`` of a ``Remat``'s function (the recomputation)."""

    def __init__(self, base: Remat):
        super().__init__(None, base.static_argnums, f"{base.__name__[11:]}_vjp")
        self.base = base
        self._by_kinds = {}

    def __repr__(self) -> str:
        return f"<pullback of {self.base!r}>"

    def __call__(self, *args):
        return self.base.vjp_call(args[:-1], args[-1])

    def signature(self):
        raise TypeError("called positionally only")

    def resolve(self, args):
        primal = tuple(args[:-1])
        key = kinds_of(primal)
        hit = self._by_kinds.get(key)
        if hit is None:
            hit = self._by_kinds[key] = self._ir_for(primal)
        fun, free_names = hit
        t, values, _ = self.base.vjp_transform(primal)
        _, free = t.generated(values)
        return fun, {n: free[n] for n in free_names}

    def _ir_for(self, primal):
        """IR ``pb(*args, ct, *, free...)``: the generated vjp of the base at these kinds,
        its cotangents only (``reverse.cotangents_only``: the value is not recomputed),
        one per argument, None for static ones."""
        t, values, nums = self.base.vjp_transform(primal)
        gen, free = t.generated(values)
        n = len(primal)
        params = [ir.Var(f"a{i}") for i in range(n)] + [ir.Var("ct")]
        kw = [ir.Var(name) for name in free]
        body = [ir.Assign(ir.Var("g"), ir.Call(cotangents_only(gen), tuple(params),
                                                 tuple((v.name, v) for v in kw)))]
        items = []
        for i in range(n):
            if i in nums:
                c = ir.Var(f"c{i}")
                body.append(ir.Assign(c, ir.Call(operator.getitem,
                                                 (ir.Var("g"), ir.Const(nums.index(i))))))
                items.append(c)
            else:
                items.append(ir.Const(None))
        body.append(ir.Assign(ir.Var("out"), ir.Call(build.make_tuple, tuple(items))))
        body.append(ir.Return(ir.Var("out")))
        fparams = tuple(ir.Param(p) for p in params) + tuple(ir.Param(v, None, True) for v in kw)
        func = ir.Function(self.__name__, fparams, tuple(body))
        return ir_callable(func), tuple(free)


class RematPushforward(Remat):
    """``(*args, *tangents) -> (out, out_tangent)`` of a ``Remat``'s function."""

    def __init__(self, base: Remat):
        super().__init__(None, base.static_argnums, f"{base.__name__[11:]}_jvp")
        self.base = base
        self._by_kinds = {}

    def __repr__(self) -> str:
        return f"<pushforward of {self.base!r}>"

    def __call__(self, *args):
        n = len(args) // 2
        return self.base.jvp_call(args[:n], args[n:])

    def signature(self):
        raise TypeError("called positionally only")

    def argnums(self, n: int) -> tuple:
        half = n // 2
        return tuple(i for i in range(n) if i % half not in self.static_argnums) if half \
            else ()

    def resolve(self, args):
        from .forward import forward_of

        n = len(args) // 2
        primal = tuple(args[:n])
        fun, kw = self.base.resolve(primal)
        transform = forward_of(fun, False)
        values, kwv = transform._bind(primal, kw or None)
        carries = transform._carries(values, n)
        key = (kinds_of(primal), tuple(carries))
        hit = self._by_kinds.get(key)
        gen, free = transform.generated(values, carries, kwv)
        if hit is None:
            hit = self._by_kinds[key] = self._ir_for(gen, n, carries, list(free) + list(kwv))
        return hit, {**free, **kwv}

    def _ir_for(self, gen, n, carries, kw_names):
        """IR ``jf(*args, *tangents, *, free...)`` calling the jvp of the base at these
        kinds with the tangents of the arguments that carry them (densified)."""
        args = [ir.Var(f"a{i}") for i in range(n)]
        tans = [ir.Var(f"t{i}") for i in range(n)]
        body, dots = [], []
        for i in range(n):
            if carries[i]:
                d = ir.Var(f"d{i}")
                body.append(ir.Assign(d, ir.Call(rt.densify, (tans[i], args[i]))))
                dots.append(d)
        kw = [ir.Var(name) for name in kw_names]
        body.append(ir.Assign(ir.Var("r"), ir.Call(gen, tuple(args + dots),
                                                    tuple((v.name, v) for v in kw))))
        body.append(ir.Return(ir.Var("r")))
        params = tuple(ir.Param(p) for p in args + tans) + tuple(ir.Param(v, None, True)
                                                                 for v in kw)
        return ir_callable(ir.Function(self.__name__, params, tuple(body)))
