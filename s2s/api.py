"""The public transforms: ``grad`` and ``value_and_grad`` (JAX's semantics).

A transformed function is specialised on the *kinds* of its arguments and
free variables (``ir.kinds``) and caches the generated function per kind:
a second call with the same kinds only computes the key and calls the
generated code.
"""
from __future__ import annotations

import functools
import weakref
import inspect
from typing import Sequence, Tuple, Union

from s2s_runtime.tree import tree_flatten, tree_leaves

from . import pipeline
from .ad.reverse import ParamInfo
from .errors import SourceUnavailableError
from .ir.kinds import is_complex_leaf, is_inexact_leaf, is_real_scalar, kind_of


def _normalise_argnums(argnums, nparams, fname) -> Tuple[Tuple[int, ...], bool]:
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


def _scalar_items(v) -> frozenset:
    """Keys (dict) or indices (tuple, list) of ``v``'s direct children that are real scalars."""
    if type(v) is dict:
        return frozenset(k for k, x in v.items() if is_real_scalar(x))
    if isinstance(v, (tuple, list)):
        return frozenset(i for i, x in enumerate(v) if is_real_scalar(x))
    return frozenset()


def _signature(fn):
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        raise TypeError(f"s2s cannot transform {fn!r}: it has no Python signature and "
                        "no derivative rule") from None


class _Specialising:
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
            front = self._front = pipeline.front(self.fn)
            self.cache.clear()
        return front


class _ReverseTransform(_Specialising):
    """``grad``/``value_and_grad``/``vjp`` of one function, specialised per argument kinds."""

    def __init__(self, fn, argnums, has_aux, holomorphic, returns):
        if not callable(fn):
            raise TypeError(f"{returns} expects a callable, got {type(fn).__name__}")
        self.fn = fn
        self.sig = pipeline.primitive_signature(fn) or _signature(fn)
        if self.sig is not None and not hasattr(fn, "__code__") \
                and not isinstance(fn, _Specialising) \
                and pipeline.primitive_signature(fn) is None:
            raise SourceUnavailableError(
                f"cannot transform {getattr(fn, '__name__', fn)!r}: it is not a Python function "
                "(no source to read) and has no derivative rule")
        params = [p for p in self.sig.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        self.param_names = [p.name for p in params]
        positional = [p for p in params if p.kind != p.KEYWORD_ONLY]
        self.n_positional = len(positional)
        self.kwonly_names = [p.name for p in params if p.kind == p.KEYWORD_ONLY]
        self.argnums, self.single = _normalise_argnums(argnums, len(positional), fn.__name__)
        self.has_aux = has_aux
        self.holomorphic = holomorphic
        self.returns = returns
        self.cache = {}
        self._outer = weakref.WeakKeyDictionary()  # inner generated fn -> this transform of it
        try:
            # name and docstring only: merging fn.__dict__ would clobber this object's state
            # when fn is itself a transform (grad(grad(f)))
            functools.update_wrapper(self, fn, updated=())
        except AttributeError:
            pass

    def _bind(self, args, kwargs):
        if not kwargs and len(args) == len(self.param_names):
            return list(args)
        bound = self.sig.bind(*args, **kwargs)
        bound.apply_defaults()
        return [bound.arguments[n] for n in self.param_names]

    def __call__(self, *args, **kwargs):
        return self.run(self._bind(args, kwargs))

    def generated(self, values):
        """``(gen, free)``: the generated function for these values' kinds (compiled once,
        cached) and the free-variable values to pass it as keywords."""
        if isinstance(self.fn, _Specialising):
            return self._composed(values).generated(self._with_inner_free(values))
        front = self.front
        free = {name: fv.load() for name, fv in front.freevars.items()}
        key = tuple(map(kind_of, values)) + tuple(map(kind_of, free.values()))
        gen = self.cache.get(key)
        if gen is None:
            gen = self._specialise(values)
            self.cache[key] = gen
        return gen, free

    def _composed(self, values):
        """The same transform of the generated code of the inner transform ``self.fn``
        (so ``grad(grad(f))`` differentiates the code ``grad(f)`` generated)."""
        inner_gen, _ = self.fn.generated(values)
        outer = self._outer.get(inner_gen)
        if outer is None:
            outer = self._outer[inner_gen] = type(self)(
                inner_gen, self.argnums if not self.single else self.argnums[0],
                self.has_aux, self.holomorphic, self.returns)
        return outer

    def _with_inner_free(self, values):
        """``values`` plus the inner generated function's keyword-only free variables."""
        _, free = self.fn.generated(values)
        return list(values) + list(free.values())

    def run(self, values, extra=()):
        """Call the generated function on bound ``values`` (plus ``extra`` positional
        arguments after the primal ones, e.g. the cotangent of ``vjp``)."""
        if isinstance(self.fn, _Specialising):
            return self._composed(values).run(self._with_inner_free(values), extra)
        gen, free = self.generated(values)
        if self.kwonly_names:
            free.update(zip(self.kwonly_names, values[self.n_positional:]))
            values = values[:self.n_positional]
        return gen(*values, *extra, **free)

    def _param_info(self, values):
        info = {}
        for name, v in zip(self.param_names, values):
            leaves, tree = tree_flatten(v)
            info[name] = ParamInfo(any(map(is_inexact_leaf, leaves)),
                                   len(leaves) == 1 and leaves[0] is v,
                                   is_real_scalar(v), type(v) is dict, _scalar_items(v))
        for i in self.argnums:
            name, v = self.param_names[i], values[i]
            leaves = tree_leaves(v)
            if leaves and not info[name].differentiable and self.returns != "vjp":
                raise TypeError(
                    f"{self.returns} requires real- or complex-valued inputs (float or "
                    f"complex leaves), but argument {i} ({name!r}) of {self.fn.__name__} "
                    f"has only integer/boolean leaves; pass floats, e.g. 3.0 instead of 3")
            if self.holomorphic and not all(map(is_complex_leaf, leaves)):
                raise TypeError(f"{self.returns} with holomorphic=True requires complex "
                                f"inputs, but argument {i} ({name!r}) is not complex")
        return info

    def split_for(self, values):
        """``(fwd, bwd, free)``: the compiled vjp halves for these values' kinds and the
        free-variable values to pass ``fwd`` (see ``ad.reverse.split``)."""
        front = self.front
        free = {name: fv.load() for name, fv in front.freevars.items()}
        key = ("split",) + tuple(map(kind_of, values)) + tuple(map(kind_of, free.values()))
        pair = self.cache.get(key)
        if pair is None:
            info = self._param_info(values)
            wrt = [self.param_names[i] for i in self.argnums]
            fwd_ir, bwd_ir = pipeline.reverse_split(front, wrt, info, has_aux=self.has_aux,
                                                    single=self.single)
            pair = (pipeline.compile_function(fwd_ir)[0], pipeline.compile_function(bwd_ir)[0])
            self.cache[key] = pair
        return pair[0], pair[1], free

    def specialised(self, values):
        """The IR of the gradient function for these argument values' kinds."""
        info = self._param_info(values)
        wrt = [self.param_names[i] for i in self.argnums]
        return pipeline.reverse(self.front, wrt, info, has_aux=self.has_aux,
                                holomorphic=self.holomorphic, returns=self.returns,
                                single=self.single)

    def _specialise(self, values):
        func = self.specialised(values)
        gen, _ = pipeline.compile_function(func)
        return gen


def grad(fun=None, argnums: Union[int, Sequence[int]] = 0, has_aux: bool = False,
         holomorphic: bool = False):
    """Gradient of a scalar-valued ``fun`` with respect to ``argnums`` (JAX's ``grad``).

    Usable as ``grad(f)``, ``grad(f, argnums=(0, 1))`` or as a decorator
    ``@grad`` / ``@grad(argnums=1)``.
    """
    if fun is None:
        return lambda f: grad(f, argnums, has_aux, holomorphic)
    return _ReverseTransform(fun, argnums, has_aux, holomorphic, "grad")


def value_and_grad(fun=None, argnums: Union[int, Sequence[int]] = 0, has_aux: bool = False,
                   holomorphic: bool = False):
    """``(fun(*args), grad(fun)(*args))`` in one pass (JAX's ``value_and_grad``)."""
    if fun is None:
        return lambda f: value_and_grad(f, argnums, has_aux, holomorphic)
    return _ReverseTransform(fun, argnums, has_aux, holomorphic, "value_and_grad")
