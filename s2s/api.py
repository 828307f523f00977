"""The public transforms: ``grad`` and ``value_and_grad`` (JAX's semantics).

A transformed function is specialised on the *kinds* of its arguments and
free variables (``ir.kinds``) and caches the generated function per kind:
a second call with the same kinds only computes the key and calls the
generated code.
"""
from __future__ import annotations

import functools
import inspect
import weakref

import numpy as np
from collections import OrderedDict
from typing import Sequence, Tuple, Union

from s2s_runtime.tree import tree_flatten, tree_leaves

from . import pipeline
from .ad.reverse import ParamInfo
from .api_complex import integer_input_error
from .api_varargs import adapter, has_var_params
from .core.protocol import fixed_ir, has_ir
from .errors import SourceUnavailableError, UnsupportedSyntaxError
from .ir import nodes as ir
from .ir.kinds import is_complex_leaf, is_inexact_leaf, is_real_scalar, kind_of
from .travel import travelling


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


def _scalar_items(v) -> frozenset:
    """Keys (dict) or indices (tuple, list) of ``v``'s direct children that are real scalars."""
    if type(v) is dict:
        return frozenset(k for k, x in v.items() if is_real_scalar(x))
    if isinstance(v, (tuple, list)):
        return frozenset(i for i, x in enumerate(v) if is_real_scalar(x))
    return frozenset()


def _dict_paths(v, prefix=()) -> frozenset:
    """The key paths of the entries of a plain dict, nested plain dicts included."""
    if type(v) is not dict:
        return frozenset()
    out = set()
    for k, x in v.items():
        out.add(prefix + (k,))
        out |= _dict_paths(x, prefix + (k,))
    return frozenset(out)


def _signature(fn):
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
    if not (inspect.isfunction(fun) or isinstance(fun, _Specialising)
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
    travels by value (cloudpickle) takes none of them along (``travel.py``)."""

    def __reduce__(self):
        return TransformCache, ()


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

    def front_for(self, arguments: dict):
        """The front with its calls of transforms expanded for these arguments
        (every parameter, free variables included, by name); cached per kinds."""
        front = self.front
        if not front.sites and not front.values:
            return front
        key = ("front",) + tuple((n, kind_of(v)) for n, v in arguments.items())
        hit = self.cache.get(key)
        if hit is None:
            with pipeline.COMPILE_LOCK:
                hit = self.cache.get(key)
                if hit is None:
                    hit = self.cache[key] = pipeline.expanded(front, arguments)
        return hit

    def extra_freevars(self, front) -> dict:
        """Free variables that expanding calls of transforms added to the front."""
        return {n: fv for n, fv in front.freevars.items() if n not in self.front.freevars}


def _trailing_defaults(positional) -> list:
    """The default values of the positional parameters after the last one without a
    default (in order)."""
    out = []
    for p in reversed(positional):
        if p.default is p.empty:
            break
        out.append(p.default)
    return out[::-1]


class _ReverseTransform(_Specialising):
    """``grad``/``value_and_grad``/``vjp`` of one function, specialised per argument kinds."""

    def __init__(self, fn, argnums, has_aux, holomorphic, returns):
        if not callable(fn):
            raise TypeError(f"{returns} expects a callable, got {type(fn).__name__}")
        self.fn = fn
        self.sig = pipeline.primitive_signature(fn) or _signature(fn)
        if self.sig is not None and not hasattr(fn, "__code__") \
                and not isinstance(fn, _Specialising) and not has_ir(fn) \
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
        self._tail_defaults = _trailing_defaults(positional) if not self.kwonly_names else []
        #: ``*args``/``**kwargs``: transformed per call shape (``api_varargs.py``)
        self.varargs = has_var_params(self.sig) and fixed_ir(fn) is None or \
            depends_on_kinds(fn)
        if self.varargs:
            self.argnums, self.single = argnums, isinstance(argnums, int)
        else:
            self.argnums, self.single = _normalise_argnums(argnums, len(positional),
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

    def __reduce__(self):  # the transform, its function and its configuration (travel.py)
        argnums = self.argnums if self.varargs or not self.single else self.argnums[0]
        return travelling(self, _reverse_transform, (self.fn, argnums, self.has_aux,
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
        ``*args`` or ``**kwargs``; see ``api_varargs.py``)."""
        return _reverse_transform(adapter(self.fn, len(args), kwargs), self.argnums,
                                  self.has_aux, self.holomorphic, self.returns)

    def generated(self, values):
        """``(gen, free)``: the generated function for these values' kinds (compiled once,
        cached) and the free-variable values to pass it as keywords."""
        if isinstance(self.fn, _Specialising):
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
        if isinstance(self.fn, _Specialising):
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
                                   is_real_scalar(v), type(v) is dict, _scalar_items(v),
                                   type(v) is np.ndarray and v.ndim == 1 and v.dtype.kind in "fiu",
                                   isinstance(v, (tuple, list)) and len(_scalar_items(v)) == len(v),
                                   _dict_paths(v))
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
        if isinstance(self.fn, _Specialising):
            func, free = self._composed(values).site_ir(self._with_inner_free(values))
            return func, {**self.fn.gen_freevars(values), **free}
        front = self.front_for(self._arguments(values, self.free_values()))
        return self.specialised(values, front), dict(front.freevars)

    def gen_freevars(self, values) -> dict:
        """The free variables read by the keyword-only parameters of ``generated``."""
        if isinstance(self.fn, _Specialising):
            outer = self._composed(values)
            return {**self.fn.gen_freevars(values),
                    **outer.gen_freevars(self._with_inner_free(values))}
        return dict(self.front_for(self._arguments(values, self.free_values())).freevars)


def grad(fun=None, argnums: Union[int, Sequence[int]] = 0, has_aux: bool = False,
         holomorphic: bool = False):
    """Gradient of a scalar-valued ``fun`` with respect to ``argnums`` (JAX's ``grad``).

    Usable as ``grad(f)``, ``grad(f, argnums=(0, 1))`` or as a decorator
    ``@grad`` / ``@grad(argnums=1)``.
    """
    if fun is None:
        return lambda f: grad(f, argnums, has_aux, holomorphic)
    return _reverse_transform(fun, argnums, has_aux, holomorphic, "grad")


def depends_on_kinds(fun) -> bool:
    """A transformed function whose IR depends on its arguments' kinds (``__s2s_ir__``)
    that is not a ``grad``-like transform: another transform reads it through a one-call
    adapter (``api_varargs.adapter``), whose call is expanded when specialised."""
    return has_ir(fun) and not isinstance(fun, _ReverseTransform) and fixed_ir(fun) is None


def transformed_target(fun):
    """What a transform of ``fun`` transforms: for a compiled function (``s2s.jit``), the
    Python function it compiles (so ``grad(jit(f))`` is ``grad(f)``, run in Python;
    ``jit(grad(f))`` compiles the gradient); otherwise ``fun`` itself."""
    return getattr(fun, "_s2s_transform_target", fun)


def _reverse_transform(fun, argnums, has_aux, holomorphic, returns):
    """The transform, shared by every call with the same arguments (and its cache)."""
    check_callable(fun, returns)
    fun = transformed_target(fun)
    nums = argnums = check_argnums(argnums, returns)
    return memo(fun, (returns, nums, bool(has_aux), bool(holomorphic)),
                lambda: _ReverseTransform(fun, argnums, has_aux, holomorphic, returns))


grad._s2s_static_factory = True  # grad(f) with constant arguments is made while lowering


def value_and_grad(fun=None, argnums: Union[int, Sequence[int]] = 0, has_aux: bool = False,
                   holomorphic: bool = False):
    """``(fun(*args), grad(fun)(*args))`` in one pass (JAX's ``value_and_grad``)."""
    if fun is None:
        return lambda f: value_and_grad(f, argnums, has_aux, holomorphic)
    return _reverse_transform(fun, argnums, has_aux, holomorphic, "value_and_grad")


value_and_grad._s2s_static_factory = True
