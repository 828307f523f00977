"""The reverse-mode transformed function: what ``grad``, ``value_and_grad`` and ``vjp``
return (``ReverseTransform``, one per function and configuration: ``reverse_transform``).

It is specialised on the *kinds* of its arguments and free variables (``ir.kinds``,
``core/specialise.py``) and caches the generated function per kind: a second call with
the same kinds only computes the key and calls the generated code.  The public functions
are in ``api/gradients.py``.
"""
from __future__ import annotations

import functools
import weakref
from dataclasses import replace

import numpy as np

from s2s_runtime.tree import tree_flatten, tree_leaves

from . import pipeline
from ..ad.reverse import ParamInfo
from .dtype_checks import integer_input_error
from .varargs import adapter, has_var_params
from ..passes.partials import readable
from .protocol import fixed_ir, has_ir
from ..errors import SourceUnavailableError, UnsupportedSyntaxError
from ..ir.kinds import is_complex_leaf, is_inexact_leaf, is_real_scalar, kind_of
from .travel import travelling
from .specialise import (dict_paths, normalise_argnums, scalar_items, signature_of,
                         Specialising, trailing_defaults, check_argnums, check_callable, memo,
                         raise_if_not_a_pair)


class ReverseTransform(Specialising):
    """``grad``/``value_and_grad``/``vjp`` of one function, specialised per argument kinds."""

    def __init__(self, fn, argnums, has_aux, holomorphic, returns):
        if not callable(fn):
            raise TypeError(f"{returns} expects a callable, got {type(fn).__name__}")
        self.fn = fn
        self.sig = pipeline.primitive_signature(fn) or signature_of(fn)
        if self.sig is not None and not hasattr(fn, "__code__") \
                and not isinstance(fn, Specialising) and not has_ir(fn) \
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
        #: the defaults of the trailing positional parameters, for ``_bind``'s fast path
        self._tail_defaults = trailing_defaults(positional) if not self.kwonly_names else []
        #: ``*args``/``**kwargs``: transformed per call shape (``core/varargs.py``)
        self.varargs = has_var_params(self.sig) and fixed_ir(fn) is None or \
            depends_on_kinds(fn)
        if self.varargs:
            self.argnums, self.single = argnums, isinstance(argnums, int)
        else:
            self.argnums, self.single = normalise_argnums(argnums, len(positional),
                                                           fn.__name__)
        self.has_aux = has_aux
        self.holomorphic = holomorphic
        self.returns = returns
        self.config = (returns, self.argnums, self.single, has_aux, holomorphic)
        self.cache = {}
        self._outer = weakref.WeakKeyDictionary()  # inner generated fn -> this transform of it
        try:
            # name and docstring only: merging fn.__dict__ would clobber this object's state
            # when fn is itself a transform (grad(grad(f)))
            functools.update_wrapper(self, fn, updated=())
        except AttributeError:
            pass
        self.__signature__ = self.sig  # fn's (a primitive's: its rule's, not its ufunc's)

    def __reduce__(self):  # the transform, its function and its configuration (core/travel.py)
        argnums = self.argnums if self.varargs or not self.single else self.argnums[0]
        return travelling(self, reverse_transform, (self.fn, argnums, self.has_aux,
                                                     self.holomorphic, self.returns))

    def _bind(self, args, kwargs):
        if not kwargs:
            n = len(args)
            if n == len(self.param_names):
                return list(args)
            missing = len(self.param_names) - n
            if 0 < missing <= len(self._tail_defaults):  # trailing parameters left at default
                return list(args) + self._tail_defaults[len(self._tail_defaults) - missing:]
        bound = self.sig.bind(*args, **kwargs)
        bound.apply_defaults()
        return [bound.arguments[n] for n in self.param_names]

    def __call__(self, *args, **kwargs):
        if self.varargs:
            return self.for_shape(args, kwargs)(*args, **kwargs)
        return self.run(self._bind(args, kwargs))

    def for_shape(self, args, kwargs):
        """This transform of ``fn``'s adapter for the shape of this call (``fn`` has
        ``*args`` or ``**kwargs``; see ``core/varargs.py``)."""
        return reverse_transform(adapter(self.fn, len(args), kwargs), self.argnums,
                                  self.has_aux, self.holomorphic, self.returns)

    def generated(self, values):
        """``(gen, free)``: the generated function for these values' kinds (compiled once,
        cached) and the free-variable values to pass it as keywords."""
        if isinstance(self.fn, Specialising):
            return self._composed(values).generated(self._with_inner_free(values))
        free = self.free_values()
        key = tuple(map(kind_of, values)) + tuple(map(kind_of, free.values()))
        hit = self.cache.get(key)
        if hit is None:
            hit = self.cache[key] = self.shared(key, lambda: self._specialise(values, free))
        gen, extra = hit
        if extra:
            free.update((name, fv.load()) for name, fv in extra.items())
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
        if isinstance(self.fn, Specialising):
            return self._composed(values).run(self._with_inner_free(values), extra)
        gen, free = self.generated(values)
        if self.kwonly_names:
            free.update(zip(self.kwonly_names, values[self.n_positional:]))
            values = values[:self.n_positional]
        try:
            return gen(*values, *extra, **free)
        except Exception as exc:  # the user's file:line as a note (pipeline.note_user_line)
            pipeline.note_user_line(exc)
            if self.has_aux:
                raise_if_not_a_pair(exc, self.returns, self.fn)
            raise

    def _param_info(self, values):
        info = {}
        for name, v in zip(self.param_names, values):
            leaves, tree = tree_flatten(v)
            info[name] = ParamInfo(any(map(is_inexact_leaf, leaves)),
                                   len(leaves) == 1 and leaves[0] is v,
                                   is_real_scalar(v), type(v) is dict, scalar_items(v),
                                   type(v) is np.ndarray and v.ndim == 1 and v.dtype.kind in "fiu",
                                   isinstance(v, (tuple, list)) and len(scalar_items(v)) == len(v),
                                   dict_paths(v))
        for i in self.argnums:
            name, v = self.param_names[i], values[i]
            leaves = tree_leaves(v)
            opaque = [x for x in leaves if kind_of(x)[0] in ("object", "static", "method")]
            if opaque and self.returns != "vjp":  # vjp: no cotangent for it (jacrev needs it)
                what = getattr(opaque[0], "__name__", None) if callable(opaque[0]) else None
                what = f"the function {what}" if what else \
                    f"a {type(opaque[0]).__name__} object"
                raise TypeError(
                    f"{self.returns}: argument {i} ({name!r}) of {self.fn.__name__} is or holds "
                    f"{what}; s2s differentiates numbers, arrays and tuples, lists, dicts "
                    "and namedtuples of them, and reads the attributes of other objects as "
                    "constants: leave it out of argnums and pass what to differentiate as "
                    "an argument of its own")
            if leaves and not info[name].differentiable and self.returns != "vjp":
                raise integer_input_error(self.returns, np.result_type(leaves[0]), i, name,
                                          self.fn.__name__, real_only=False)
            if self.holomorphic and not all(map(is_complex_leaf, leaves)):
                raise TypeError(f"{self.returns} with holomorphic=True requires complex "
                                f"inputs, but argument {i} ({name!r}) is not complex")
        return info

    def split_ir(self, values):
        """``(fwd_ir, bwd_ir, freevars)``: the vjp halves for these values' kinds (see
        ``ad.split``) and the free variables ``fwd_ir`` reads."""
        front = self.front_for(self._arguments(values, self.free_values()))
        info = self._param_info(values)
        wrt = [self.param_names[i] for i in self.argnums]
        fwd_ir, bwd_ir = pipeline.reverse_split(front, wrt, info, has_aux=self.has_aux,
                                                single=self.single)
        return fwd_ir, bwd_ir, front.freevars

    def _arguments(self, values, free) -> dict:
        arguments = dict(zip(self.param_names, values))
        arguments.update(free)
        return arguments

    def specialised(self, values, front=None):
        """The IR of the gradient function for these argument values' kinds."""
        if front is None:
            front = self.front_for(self._arguments(values, self.free_values()))
        info = self._param_info(values)
        wrt = [self.param_names[i] for i in self.argnums]
        return pipeline.reverse(front, wrt, info, has_aux=self.has_aux,
                                holomorphic=self.holomorphic, returns=self.returns,
                                single=self.single)

    def _specialise(self, values, free):
        """``(generated function, free variables added by expanding transform calls)``."""
        front = self.front_for(self._arguments(values, free))
        gen, _ = pipeline.compile_function(self.specialised(values, front))
        return gen, self.extra_freevars(front)

    # -- as a call inside code that is itself transformed (passes/sites.py) -------
    def __s2s_ir__(self, args=None, kwargs=None):
        if args is None:  # the IR depends on the arguments' kinds
            return None
        if self.varargs:
            return self.for_shape(args, kwargs).__s2s_ir__(args, kwargs)
        if self.returns == "vjp":
            raise UnsupportedSyntaxError("a call of a vjp transform inside transformed code")
        return self.site_ir(self._bind(args, kwargs))

    def site_ir(self, values):
        """``(ir, freevars)``: the generated function for these values as IR, and the
        free variables its free-variable parameters read."""
        if isinstance(self.fn, Specialising):
            func, free = self._composed(values).site_ir(self._with_inner_free(values))
            return func, {**self.fn.gen_freevars(values), **free}
        front = self.front_for(self._arguments(values, self.free_values()))
        return self.specialised(values, front), dict(front.freevars)

    def gen_freevars(self, values) -> dict:
        """The free variables read by the keyword-only parameters of ``generated``."""
        if isinstance(self.fn, Specialising):
            outer = self._composed(values)
            return {**self.fn.gen_freevars(values),
                    **outer.gen_freevars(self._with_inner_free(values))}
        return dict(self.front_for(self._arguments(values, self.free_values())).freevars)


def depends_on_kinds(fun) -> bool:
    """A transformed function whose IR depends on its arguments' kinds (``__s2s_ir__``)
    that is not a ``grad``-like transform: another transform reads it through a one-call
    adapter (``core.varargs.adapter``), whose call is expanded when specialised."""
    return has_ir(fun) and not isinstance(fun, ReverseTransform) and fixed_ir(fun) is None


def transformed_target(fun):
    """What a transform of ``fun`` transforms: for a compiled function (``s2s.jit``), the
    Python function it compiles (so ``grad(jit(f))`` is ``grad(f)``, run in Python;
    ``jit(grad(f))`` compiles the gradient); a ``functools.partial`` as the function it
    stands for (``passes/partials.readable``); otherwise ``fun`` itself."""
    return readable(getattr(fun, "_s2s_transform_target", fun))


def reverse_transform(fun, argnums, has_aux, holomorphic, returns):
    """The transform, shared by every call with the same arguments (and its cache)."""
    check_callable(fun, returns)
    fun = transformed_target(fun)
    nums = argnums = check_argnums(argnums, returns)
    return memo(fun, (returns, nums, bool(has_aux), bool(holomorphic)),
                lambda: ReverseTransform(fun, argnums, has_aux, holomorphic, returns))


def cotangents_only(vjp_code):
    """``vjp_code`` (generated ``(*primals, ct) -> (value, cotangents)``, ``mode='vjp'``)
    as generated code of the same signature returning only the cotangents: its IR with
    ``return (value, cts)`` made ``return cts`` and dead code removed, so a transform of
    it (``hessian``'s forward mode, a checkpoint's recomputed pullback) neither
    transforms the value output nor what only it needs (a checkpointed call's primal,
    a ``custom_vjp`` call of the primal).  Memoised per ``vjp_code``."""
    hit = _COTANGENTS.get(vjp_code)
    if hit is not None:
        return hit
    from ..passes.dce import dce
    from ..passes.single_exit import single_exit
    from s2s_runtime import build
    func, _ = fixed_ir(vjp_code)
    func = single_exit(func)
    body = list(func.body)
    ret = body[-1]
    pair = next((s for s in body if getattr(getattr(s, "target", None), "name", None) ==
                 getattr(ret.value, "name", None)), None)
    if pair is None or not (getattr(pair.value, "fn", None) is build.make_tuple
                            and len(pair.value.args) == 2):
        raise UnsupportedSyntaxError("s2s internal error: an unexpected vjp code", func.loc)
    body[-1] = type(ret)(pair.value.args[1], ret.loc)
    out = dce(replace(func, name=f"{func.name}_cotangents", body=tuple(body)))
    fn = pipeline.compile_function(out)[0]
    _COTANGENTS[vjp_code] = fn
    return fn


_COTANGENTS = weakref.WeakKeyDictionary()  # vjp code -> its cotangents-only code
