"""Transforms of functions with ``*args`` or ``**kwargs`` parameters.

JAX numbers the positional arguments of a call as they are passed, so
``grad(f, argnums=1)(a, b)`` for ``def f(*xs)`` differentiates with respect
to ``b``.  s2s does the same through an *adapter* per call shape: for ``n``
positional arguments and the keyword names ``kw``,

    def f(xs_0, xs_1, *, k):        # one parameter per argument passed
        return f(xs_0, xs_1, k=k)   # the user's function, inlined

as IR (``__s2s_ir__``, ``core/protocol.py``), which the transforms handle like any function whose
IR they know; the inliner binds ``*xs`` to the tuple ``(xs_0, xs_1)`` and
``**kw`` to a dict.  Keyword arguments are not differentiated (as in JAX).

Contract: ``adapter(fn, nargs, kwnames)`` returns the adapter of ``fn`` for
that call shape, the same object for the same shape while ``fn`` lives.
"""
from __future__ import annotations

import inspect
import weakref

from ..ir import nodes as ir
from ..ir.names import NameGen

_P = inspect.Parameter
_ADAPTERS = weakref.WeakKeyDictionary()
_LASTING = {}


def has_var_params(sig) -> bool:
    return sig is not None and any(p.kind in (_P.VAR_POSITIONAL, _P.VAR_KEYWORD)
                                   for p in sig.parameters.values())


_VAR_FLAGS = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS


def wants_adapter(fn) -> bool:
    """A plain Python function with ``*args`` or ``**kwargs`` (read from its code object's
    flags, unless a ``__signature__`` or ``__wrapped__`` decides its signature), or a
    transformed function whose IR depends on its arguments' kinds (``api.depends_on_kinds``):
    a transform reads either through the adapter of each call shape."""
    if not inspect.isfunction(fn):
        from .reverse import depends_on_kinds  # (the same layer)
        return depends_on_kinds(fn)  # a jacfwd, vmap... function: read by its call
    if "__signature__" not in fn.__dict__ and "__wrapped__" not in fn.__dict__:
        return bool(fn.__code__.co_flags & _VAR_FLAGS)
    return has_var_params(inspect.signature(fn))


def adapter(fn, nargs: int, kwnames) -> "Adapter":
    key = (nargs, tuple(sorted(kwnames)))
    try:
        per_fn = _ADAPTERS.setdefault(fn, {})
    except TypeError:  # a builtin or numpy function (no weak references): it lives on
        per_fn = _LASTING.setdefault(fn, {})
    hit = per_fn.get(key)
    if hit is None:
        hit = per_fn[key] = Adapter(fn, *key)
    return hit


class Adapter:
    """``fn`` called with ``nargs`` positional arguments and the keywords ``kwnames``
    (see the module docstring)."""

    def __init__(self, fn, nargs, kwnames):
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", "f")
        self.__qualname__ = getattr(fn, "__qualname__", self.__name__)
        self.__doc__ = getattr(fn, "__doc__", None)
        sig = inspect.signature(fn)
        names = NameGen(sig.parameters)
        positional, keywords = [], []  # (parameter name, name in the call)
        left = list(kwnames)
        taken = 0
        for p in sig.parameters.values():
            if p.kind in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD) and taken < nargs:
                positional.append(p.name)
                taken += 1
            elif p.kind is _P.VAR_POSITIONAL:
                while taken < nargs:
                    positional.append(names.fresh(f"{p.name}_{len(positional)}"))
                    taken += 1
            elif p.name in left and p.kind is not _P.VAR_KEYWORD:
                keywords.append(p.name)
                left.remove(p.name)
        keywords += left  # taken by **kwargs (or an error when fn is called)
        self.__signature__ = inspect.Signature(
            [_P(n, _P.POSITIONAL_ONLY) for n in positional]
            + [_P(n, _P.KEYWORD_ONLY) for n in keywords])
        params = tuple(ir.Param(ir.Var(n)) for n in positional) + \
            tuple(ir.Param(ir.Var(n), None, kwonly=True) for n in keywords)
        result = ir.Var("t1")
        call = ir.Call(fn, tuple(ir.Var(n) for n in positional),
                       tuple((n, ir.Var(n)) for n in keywords))
        name = "".join(ch if ch.isalnum() else "_" for ch in self.__name__) or "f"
        self._ir = ir.Function(name, params, (ir.Assign(result, call), ir.Return(result)),
                               temps=frozenset({"t1"}))

    def __s2s_ir__(self, args=None, kwargs=None):
        return self._ir, {}

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)
