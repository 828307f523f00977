"""Calls of transforms inside code that is being transformed.

``grad(lambda x: np.vdot(grad(f)(x), v))`` differentiates code that calls
``grad(f)``; ``grad(lambda p: jvp(f, p, t)[1])`` code that calls ``jvp``.
Such a call (a *site*) stands for the code the inner transform generates,
and that code depends on the kinds of the call's arguments (scalar or
array, dtype, pytree structure).  The frontend leaves sites in place
(``Inliner.site``); when the enclosing transform is specialised on concrete
arguments, ``expand``:

1. finds the kinds at each site by running the function once (the
   *probe*: the function's own code with every site wrapped to record its
   arguments), as JAX finds shapes by tracing;
2. replaces each site by the inner transform's IR for those arguments,
   inlined like a user function, so the enclosing transform differentiates
   generated code with no special path (reverse over reverse is reverse
   mode applied to the code reverse mode wrote).

Contract: ``expand(func, freevars, arguments, lower)`` returns
``(func, freevars)`` with no site left (an expansion that itself holds sites,
e.g. a ``custom_jvp``'s transposed rule in generated gradient code, is
expanded in a further round, with a new probe).  A site the probe did not reach
becomes a call that raises a clear error if it is ever reached (never a
wrong derivative); a site reached with arguments of different kinds is an
``UnsupportedSyntaxError``.  Callables take part through two hooks:
one hook, ``obj.__s2s_ir__(args, kwargs) -> (ir.Function, freevars)`` (
IR that depends on the arguments) and ``obj.__s2s_ir__() -> (ir.Function, freevars)``
(fixed IR, e.g. a ``vjp`` closure; inlined directly by the inliner); the protocol
is ``core/protocol.py``'s.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Dict, List

from s2s_runtime import build

from ..errors import UnsupportedSyntaxError, unsupported
from ..ir import nodes as ir
from ..ir.kinds import kind_of
from .inline import map_blocks, inline_calls


def is_site(s) -> bool:
    if not (isinstance(s, ir.Assign) and isinstance(s.value, ir.Call)):
        return False
    fn = s.value.fn
    hook = None if isinstance(fn, type) else getattr(fn, "__s2s_ir__", None)
    return hook is not None and hook() is None  # IR that depends on the arguments' kinds


def has_sites(func: ir.Function, keep=None) -> bool:
    """Whether ``func`` calls a transform whose IR depends on the arguments' kinds (other
    than those whose callable ``keep(fn)`` says stay calls)."""
    return any(is_site(s) and not (keep and keep(s.value.fn)) for s in ir.walk(func.body))


class _Recorder:
    """Called in place of each site by the probe: records the first arguments seen."""

    def __init__(self):
        self.seen: Dict[int, tuple] = {}
        self.mixed = set()

    def __call__(self, key, fn, *args, **kwargs):
        kinds = (tuple(map(kind_of, args)), tuple((k, kind_of(v)) for k, v in kwargs.items()))
        hit = self.seen.get(key)
        if hit is None:
            self.seen[key] = (args, kwargs, kinds)
        elif hit[2] != kinds:
            self.mixed.add(key)
        return fn(*args, **kwargs)


def _rewrite(body, f) -> tuple:
    out = []
    for s in body:
        s = map_blocks(s, lambda b: _rewrite(b, f))
        out.append(f(s))
    return tuple(out)


def _probe(func: ir.Function, keys: Dict[str, int], arguments: Dict) -> _Recorder:
    from ..emit.load import load
    from ..emit.python import emit_function

    recorder = _Recorder()

    def wrap(s):
        if is_site(s):
            c = s.value
            args = (ir.Const(keys[s.target.name]), ir.Const(c.fn)) + c.args
            return replace(s, value=ir.Call(recorder, args, c.kwargs))
        return s

    probe = replace(func, name=f"probe_{func.name}", body=_rewrite(func.body, wrap))
    run = load(emit_function(probe), probe.name)
    run(**arguments)
    return recorder


def _describe(fn) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


def expand(func: ir.Function, freevars: Dict, arguments: Dict, lower, keep=None):
    """``(func, freevars)`` with every site replaced by its IR for the kinds the
    probe saw; ``arguments`` maps every parameter of ``func`` (free variables
    included) to its value for this specialisation.  Sites whose callable
    ``keep(fn)`` accepts stay calls (the batching transform maps a ``vmap`` site
    as a whole, ``core/vmap.py``)."""
    sites = [s for s in ir.walk(func.body) if is_site(s)]
    keys = {s.target.name: i for i, s in enumerate(sites)}
    recorder = _probe(func, keys, arguments)

    def site_values(s):
        if s.target.name not in keys or keep and keep(s.value.fn):
            return None  # a site inside an expansion (the next round's), or one kept
        key = keys[s.target.name]
        if key in recorder.mixed:
            raise unsupported(f"a call of {_describe(s.value.fn)} reached with arguments of "
                              "different kinds (shape rank, dtype or structure)", s.loc)
        hit = recorder.seen.get(key)
        if hit is None:
            return unreached_site(s)
        args, kwargs, _ = hit
        _check_functions_fixed(s.value, args, kwargs, s.loc)
        try:
            return s.value.fn.__s2s_ir__(tuple(args), dict(kwargs))
        except UnsupportedSyntaxError as exc:
            if exc.loc is None:
                raise unsupported(exc.message, s.loc) from None
            raise

    func, freevars = inline_calls(func, freevars, lower, site_values)
    if has_sites(func, keep):  # the expansions call transforms (custom_jvp's transpose)
        arguments = {**{n: fv.load() for n, fv in freevars.items()}, **arguments}
        return expand(func, freevars, arguments, lower, keep)
    return func, freevars


def _check_functions_fixed(call: ir.Call, args, kwargs, loc) -> None:
    """A function passed to a site (``jvp(f, ...)``) is part of the code the site stands
    for, so it must be the same at every call: a program constant, not a value chosen at
    run time (the probe saw one choice only)."""
    atoms = list(call.args) + [a for _, a in call.kwargs]
    values = list(args) + [kwargs[k] for k, _ in call.kwargs if k in kwargs]
    for atom, v in zip(atoms, values):
        if callable(v) and not isinstance(v, type) and not isinstance(atom, ir.Const) \
                and not hasattr(v, "shape"):
            raise unsupported(f"{_describe(call.fn)} of a function chosen at run time inside "
                              "transformed code", loc,
                              "pass a function s2s can see by name")


def unreached_site(s) -> List:
    """The statement that replaces a site the probe did not reach."""
    error = UnsupportedSyntaxError(
        f"this call of {_describe(s.value.fn)} was not reached when s2s ran the function "
        "to find the kinds of its arguments, so no code was generated for it; "
        "call the transform with arguments that reach it", s.loc)
    return [ir.Assign(s.target, ir.Call(build.raise_error, (ir.Const(error),)), s.loc)]


class IRCallable:
    """A callable known to s2s by its IR alone (``__s2s_ir__``): inlined where it is
    called in transformed code; called at run time (by a probe, or a transform's look
    at its output), its IR runs as Python, its free variables read then (IR straight
    from the frontend, a local function lifted, given ``lower`` -- the frontend, see
    ``inline_calls`` -- has the functions it calls inlined first)."""

    def __init__(self, func: ir.Function, freevars: Dict, lower=None):
        from .inline_bodies import ir_signature
        self.func, self.freevars, self._lower = func, freevars, lower
        self.__name__ = self.__qualname__ = func.name
        self.__signature__ = ir_signature(func, exclude=set(freevars))
        self._python = None

    def __s2s_ir__(self, args=None, kwargs=None):
        return self.func, self.freevars

    def __call__(self, *args, **kwargs):
        if self._python is None:
            from ..emit.load import load
            from ..emit.python import emit_function
            func, freevars = self.func, self.freevars
            if self._lower is not None:
                func, freevars = inline_calls(func, dict(freevars), self._lower)
            self._python = load(emit_function(func), func.name), freevars
        run, freevars = self._python
        free = {name: fv.load() for name, fv in freevars.items()}
        return run(*args, **kwargs, **free)
