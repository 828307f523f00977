"""``functools.partial`` objects read as the call they stand for.

A partial ``p`` of a callable ``p.func`` holding the positional values ``p.args`` and
the keyword values ``p.keywords`` is, to every transform, the function

    def f_partial(<the parameters of p.func left free>):
        return p.func(*p.args, <those parameters>, **p.keywords)

whether it is passed to a transform (``grad(partial(loss, x=X, y=Y))``,
``jit(partial(f, n=3))``, ``vmap(partial(f, w))``) or called in transformed code
(``step = partial(update, lr=0.1)`` as a global).  (A partial made in the transformed
code itself, ``g = partial(f, y=y)``, is bound by the inliner to the call it stands for:
``callables.bind_partial``.)  A value the partial holds is a
constant of that IR when it is a program constant (None, a bool, a number, a string,
a callable, a tuple of those): a branch on it is taken when transforming, as on a
global; any other value (an array, a dict of arrays) is a free variable of fixed value
(``FreeVar.constant``), read at run time, so a partial of a large data array carries
no copy of it in the generated code.

Contract: ``is_partial(fn)``; ``readable(fn)``: a partial as a ``Partial``, the object a
transform takes (its name, signature and IR: the same object for the same partial
while it lives), any other ``fn`` itself; ``partial_signature(p)``: the signature calls bind with,
``inspect.signature(p)`` without the keywords ``p`` holds (s2s reads them as the
values held: a call that passes one again raises ``TypeError``, as binding an unknown
keyword does; a primitive's optional parameters left free are left out, keeping their
defaults); ``partial_ir(p)``: ``(ir.Function, freevars)`` as ``__s2s_ir__``
gives it (``core/protocol.py``), made once per partial object (a partial's function
and values are read-only attributes).
A partial of a function with ``*args`` or ``**kwargs`` left free is refused, naming it.
"""
from __future__ import annotations

import functools
import inspect
import weakref

from ..errors import UnsupportedSyntaxError
from ..frontend.scope import FreeVar
from ..ir import nodes as ir
from ..ir.names import NameGen
from .local_callables import is_user_function

_P = inspect.Parameter
_IR = weakref.WeakKeyDictionary()
_READABLE = weakref.WeakKeyDictionary()


def is_partial(fn) -> bool:
    return isinstance(fn, functools.partial)


def has_hook(fn) -> bool:
    """A transformed function (``core/protocol.py``'s hook, tested by name here)."""
    return not isinstance(fn, type) and getattr(fn, "__s2s_ir__", None) is not None


def _name_of(p) -> str:
    return getattr(p.func, "__name__", None) or type(p.func).__name__


def partial_signature(p) -> inspect.Signature:
    try:
        sig = inspect.signature(p)
    except (TypeError, ValueError):
        raise TypeError(f"s2s cannot transform {p!r}: its function has no Python signature "
                        "and no derivative rule") from None
    params = [q for q in sig.parameters.values() if q.name not in p.keywords]
    if not (is_user_function(p.func) or has_hook(p.func)):
        # a primitive (partial(np.sum, axis=0)): its optional parameters keep numpy's
        # defaults, as a call that leaves them out does
        params = [q for q in params if q.default is q.empty]
    if any(q.kind in (_P.VAR_POSITIONAL, _P.VAR_KEYWORD) for q in params):
        raise UnsupportedSyntaxError(
            f"functools.partial of {_name_of(p)}, which takes *args or **kwargs: s2s reads a "
            "partial whose parameters left are named (write a function that calls it)")
    return sig.replace(parameters=params)


def _program_constant(value) -> bool:
    """A value the IR holds as a constant (not an array or a container of arrays)."""
    if value is None or type(value) in (bool, int, float, complex, str):
        return True
    if type(value) is tuple:
        return all(map(_program_constant, value))
    return callable(value) and not hasattr(value, "__array__")


def partial_ir(p):
    hit = _IR.get(p)
    if hit is not None:
        return hit
    sig = partial_signature(p)
    names = NameGen(set(sig.parameters) | set(p.keywords))
    freevars = {}

    def held(value, hint):
        if _program_constant(value):
            return ir.Const(value)
        name = names.fresh(hint)
        freevars[name] = FreeVar.constant(name, value)
        return ir.Var(name)

    args = [held(v, f"held_{k}") for k, v in enumerate(p.args)]
    kwargs = [(k, held(v, k)) for k, v in p.keywords.items()]
    params = []
    for q in sig.parameters.values():
        if q.kind is _P.KEYWORD_ONLY:
            kwargs.append((q.name, ir.Var(q.name)))
        else:
            args.append(ir.Var(q.name))
        default = ir.Const(q.default) if q.default is not q.empty and \
            _program_constant(q.default) else None  # (a call in code binds it)
        params.append(ir.Param(ir.Var(q.name), default, q.kind is _P.KEYWORD_ONLY))
    params += [ir.Param(ir.Var(name), kwonly=True) for name in freevars]
    result = ir.Var(names.fresh("t"))
    name = "".join(ch if ch.isalnum() else "_" for ch in _name_of(p)) + "_partial"
    func = ir.Function(name, tuple(params),
                       (ir.Assign(result, ir.Call(p.func, tuple(args), tuple(kwargs))),
                        ir.Return(result)), temps=frozenset({result.name}))
    out = (func, freevars)
    try:
        _IR[p] = out
    except TypeError:  # not weakly referable (a subclass with __slots__): made again
        pass
    return out


class Partial:
    """A partial object as a function the transforms read (``readable``): its name, the
    signature calls bind with, its IR (``__s2s_ir__``); calling it calls the partial."""

    def __init__(self, p):
        self.partial = p
        self.__name__ = self.__qualname__ = _name_of(p)
        self.__doc__ = getattr(p.func, "__doc__", None)
        self.__signature__ = partial_signature(p)
        self.__wrapped__ = p

    def __s2s_ir__(self, args=None, kwargs=None):
        return partial_ir(self.partial)

    def __call__(self, *args, **kwargs):
        return self.partial(*args, **kwargs)

    def __repr__(self):
        return repr(self.partial)


def readable(fn):
    if not is_partial(fn):
        return fn
    hit = _READABLE.get(fn)
    if hit is None:
        hit = Partial(fn)
        try:
            _READABLE[fn] = hit
        except TypeError:  # not weakly referable: made again
            pass
    return hit
