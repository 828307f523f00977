"""Specialisation on argument kinds, shared by every transform.

A transformed function (``Specialising``) is specialised on the *kinds* of its arguments and
free variables (``ir.kinds``) and caches the generated function per kind: a second call
with the same kinds only computes the key and calls the generated code.  ``memo`` keeps
one transform object per (function, configuration); the ``check_*`` functions are the
argument checks every public transform makes (JAX's errors).
"""
from __future__ import annotations

import inspect
import numpy as np
from collections import OrderedDict
from typing import Tuple
from . import pipeline
from .protocol import has_ir
from ..errors import UnsupportedSyntaxError
from ..ir import nodes as ir
from ..ir.kinds import is_real_scalar, kind_of


def normalise_argnums(argnums, nparams, fname) -> Tuple[Tuple[int, ...], bool]:
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    if not nums:
        raise ValueError("argnums must be an int or a non-empty tuple of ints")
    out = []
    for a in nums:
        if not isinstance(a, int) or isinstance(a, bool):
            raise TypeError(f"argnums must be ints, got {a!r}")
        if not -nparams <= a < nparams:
            raise ValueError(f"argnums {a} is out of range for {fname}, which takes "
                             f"{nparams} positional argument(s)")
        out.append(a % nparams)
    return tuple(out), single


def check_argnums(argnums, transform: str):
    """``argnums`` as an int or a tuple of ints, checked when the transform is made:
    JAX's forms (an int, or a non-empty tuple or list of ints; numpy integers too)."""
    what = ("argnums must be an int or a non-empty tuple of ints (the positions of the "
            "arguments to differentiate)")
    if isinstance(argnums, (int, np.integer)) and not isinstance(argnums, (bool, np.bool_)):
        return int(argnums)
    if not isinstance(argnums, (tuple, list)):
        raise TypeError(f"{transform}: {what}, got {argnums!r} of type "
                        f"{type(argnums).__name__}")
    if not argnums:
        raise ValueError(f"{transform}: {what}, got an empty {type(argnums).__name__}")
    for a in argnums:
        if not isinstance(a, (int, np.integer)) or isinstance(a, (bool, np.bool_)):
            raise TypeError(f"{transform}: {what}, got {argnums!r}, whose entry {a!r} is a "
                            f"{type(a).__name__}")
    return tuple(int(a) for a in argnums)


def check_callable(fun, transform: str) -> None:
    """The transform's first argument is a function (checked when the transform is made)."""
    if not callable(fun):
        raise TypeError(f"{transform} expects a callable (the function to transform), got "
                        f"{fun!r} of type {type(fun).__name__}")


def check_argnums_range(fun, nums, transform: str) -> None:
    """Every entry of ``nums`` names a positional parameter of ``fun`` (when its signature
    says how many there are: not with ``*args``)."""
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        return
    params = list(sig.parameters.values())
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return
    n = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
    for a in ((nums,) if isinstance(nums, int) else nums):
        if not -n <= a < n:
            raise ValueError(f"{transform}: argnums {a} is out of range for "
                             f"{getattr(fun, '__name__', 'the function')}, which takes {n} "
                             "positional argument(s)")


def raise_if_not_a_pair(exc, transform: str, fun) -> None:
    """With ``has_aux=True`` the function must return a pair ``(output, aux)``: the
    unpacking of its return value failing (located at the user's ``return`` line by
    ``pipeline.note_user_line``) is raised as a TypeError that says so."""
    loc = getattr(exc, "_s2s_user_loc", None)
    stmt = getattr(exc, "_s2s_user_stmt", None)
    if not (isinstance(exc, (TypeError, ValueError)) and "unpack" in str(exc)
            and isinstance(stmt, ir.Unpack) and len(stmt.targets) == 2 and loc is not None
            and ("return" in loc.text or "lambda" in loc.text)):
        return
    new = TypeError(f"{transform}(..., has_aux=True) requires "
                    f"{getattr(fun, '__name__', 'the function')} to return a pair "
                    f"(output, aux), e.g. `return loss, aux`; its return value is not a pair "
                    f"({exc})")
    for note in getattr(exc, "__notes__", ()):
        new.add_note(note) if hasattr(new, "add_note") else None
    if not hasattr(new, "add_note"):
        new.args = (f"{new.args[0]}\n{loc}\n    {loc.text.strip()}",)
    raise new from exc


def scalar_items(v) -> frozenset:
    """Keys (dict) or indices (tuple, list) of ``v``'s direct children that are real scalars."""
    if type(v) is dict:
        return frozenset(k for k, x in v.items() if is_real_scalar(x))
    if isinstance(v, (tuple, list)):
        return frozenset(i for i, x in enumerate(v) if is_real_scalar(x))
    return frozenset()


def dict_paths(v, prefix=()) -> frozenset:
    """The key paths of the entries of a plain dict, nested plain dicts included."""
    if type(v) is not dict:
        return frozenset()
    out = set()
    for k, x in v.items():
        out.add(prefix + (k,))
        out |= dict_paths(x, prefix + (k,))
    return frozenset(out)


def signature_of(fn):
    if inspect.ismethod(fn):  # the IR is its function's, with self: not this signature
        raise UnsupportedSyntaxError(
            f"transforming the bound method {fn.__qualname__} (its object's attributes are "
            "not arguments s2s can see); differentiate a function that takes what the method "
            "reads as arguments")
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        raise TypeError(f"s2s cannot transform {fn!r}: it has no Python signature and "
                        "no derivative rule") from None


#: generated code shared by transforms of functions with the same IR (closures made
#: afresh at every call, e.g. ``grad(lambda x: ...)`` inside a function; see
#: ``pipeline._front_of_sibling``): (id(ir), transform config, kinds) -> (ir, value)
_SHARED: "OrderedDict[tuple, tuple]" = OrderedDict()
_SHARED_MAX = 512


def memo(fun, key, make):
    """The transform ``make()`` of ``fun``, made once per ``key`` and kept on ``fun``
    itself (so it lives exactly as long as ``fun``); made afresh when ``fun`` has no
    attribute dictionary of its own (a builtin; a bound method, whose ``__dict__`` is
    its function's, shared by every instance)."""
    if not (inspect.isfunction(fun) or isinstance(fun, Specialising)
            or has_ir(fun)):
        return make()
    try:
        per_fun = fun.__dict__.setdefault("_s2s_transforms", TransformCache())
    except AttributeError:
        return make()
    hit = per_fun.get(key)
    if hit is None:
        with pipeline.COMPILE_LOCK:  # one transform per key, also when threads race
            hit = per_fun.get(key)
            if hit is None:
                hit = per_fun[key] = make()
    return hit


class TransformCache(dict):
    """The transforms ``memo`` keeps on a function: pickled empty, so a function that
    travels by value (cloudpickle) takes none of them along (``core/travel.py``)."""

    def __reduce__(self):
        return TransformCache, ()


class Specialising:
    """A transform of ``self.fn`` whose generated functions live in ``self.cache``,
    keyed by argument kinds; the frontend's IR is rebuilt (and the cache
    emptied) when a function or class the code refers to was rebound."""

    fn = None
    cache: dict
    _front = None

    @property
    def front(self):
        front = self._front
        if front is None or not front.current():
            with pipeline.COMPILE_LOCK:
                front = self._front
                if front is None or not front.current():
                    front = self._front = pipeline.front(self.fn)
                    self.cache.clear()
        return front

    config: tuple = ()

    def shared(self, key, make):
        """``make()``, or what it returned for another transform with this config of a
        function with the same IR and these kinds."""
        with pipeline.COMPILE_LOCK:
            func = self.front.func
            full = (id(func), self.config, key)
            hit = _SHARED.get(full)
            if hit is not None and hit[0] is func:
                _SHARED.move_to_end(full)
                return hit[1]
            value = make()
            _SHARED[full] = (func, value)
            if len(_SHARED) > _SHARED_MAX:
                _SHARED.popitem(last=False)
            return value

    def free_values(self) -> dict:
        """The current values of the front's free variables."""
        return {name: fv.load() for name, fv in self.front.freevars.items()}

    #: which calls of transforms ``front_for`` leaves as calls (``keep_sites`` of
    #: ``pipeline.expanded``): None, every one is expanded
    kept_sites = None

    def front_for(self, arguments: dict):
        """The front with its calls of transforms expanded for these arguments
        (every parameter, free variables included, by name; but those ``kept_sites``
        accepts); cached per kinds."""
        front = self.front
        if not front.sites and not front.values:
            return front
        key = ("front",) + tuple((n, kind_of(v)) for n, v in arguments.items())
        hit = self.cache.get(key)
        if hit is None:
            with pipeline.COMPILE_LOCK:
                hit = self.cache.get(key)
                if hit is None:
                    hit = self.cache[key] = pipeline.expanded(front, arguments,
                                                              self.kept_sites)
        return hit

    def extra_freevars(self, front) -> dict:
        """Free variables that expanding calls of transforms added to the front."""
        return {n: fv for n, fv in front.freevars.items() if n not in self.front.freevars}


def trailing_defaults(positional) -> list:
    """The default values of the positional parameters after the last one without a
    default (in order)."""
    out = []
    for p in reversed(positional):
        if p.default is p.empty:
            break
        out.append(p.default)
    return out[::-1]
