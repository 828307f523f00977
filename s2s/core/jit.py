"""The compiled function ``s2s.jit`` returns (``Jitted``; ``api/compiling.py``): a function
(or a generated derivative) compiled to native code.

``jit(f)`` returns a ``Jitted`` callable that specialises on the types of its
arguments (keyed cheaply: ``_arg_key``; Python numbers and arrays then take a
direct builtin entry, ``backend/llvm/driver/fastcall.py``) (``backend.llvm.typing.types.value_type``: float64/float32/int64/bool/
complex128 scalars, numpy arrays of those dtypes of any ndim and layout,
tuples of them), compiles the IR s2s makes of ``f`` for each new signature
(``backend.llvm``) and keeps it in memory.  ``f`` may be a plain function, a
transform (``grad(f)``, ``value_and_grad(f)``: the generated derivative code
is compiled), a function that calls transforms (``jvp``/``grad`` inside it are
expanded) or a generated function (a ``vjp`` pullback, whose residuals, tapes
included, become arguments); a ``jacfwd``/``jacrev``/``hessian`` function becomes one
Jacobian kernel (``core/jit_jacobian.py``, through its ``_s2s_jit_ir`` hook).  Code outside the
compiled subset raises ``UnsupportedSyntaxError`` naming the construct and
the line; it never falls back to Python.
"""
from __future__ import annotations

import inspect

import numpy as np

from s2s_runtime.tree import tree_map

from . import pipeline
from .custom_primal import front_without_custom_calls, has_custom_calls, primal_calls_inlined
from .reverse import ReverseTransform
from .specialise import signature_of
from .protocol import fixed_ir, ir_hook
from ..errors import MisalignedArrayError, UnsupportedSyntaxError
from ..ir.kinds import kind_of
from .travel import travelling
from .varargs import Adapter, adapter
from ..passes.partials import Partial, readable
from .vmap_jit import per_example_forms
from ..backend.llvm.typing.statics import is_static


_FAST_TYPES = (float, int, bool, np.float64, np.ndarray)
_PLAIN = (float, int, bool, complex)


def _arg_key(x):
    """What a specialisation depends on, cheaply: the type of a Python number, the dtype
    and ndim of an array (dtype objects hash fast; ``dtype.str`` builds a string), the
    value of a compile-time constant (``backend/llvm/typing/statics.py``), else ``kind_of``."""
    t = type(x)
    if t is np.ndarray:
        return (x.dtype, x.ndim)
    if t in _PLAIN:
        return t
    if is_static(x):  # None, a str, a tuple of them: compiled as constants, per value
        return ("static", x)
    return kind_of(x)


def _primitive_with_defaults(fn) -> bool:
    """Whether ``fn`` is a primitive (a transform's one-call function) with optional
    parameters and a signature ``inspect`` reads (numpy's functions and ufuncs), or
    ``vmap`` of one, or ``vmap`` of any function with optional parameters
    (``jit(vmap(f))``: the defaults a call leaves out are not mapped)."""
    from .vmap import Vmapped
    mapped = isinstance(fn, Vmapped)
    while isinstance(fn, Vmapped):
        fn = fn.fn
    if pipeline.primitive_signature(fn) is None and not mapped:
        return False
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    return any(p.default is not p.empty for p in sig.parameters.values())


class Jitted:
    def __init__(self, fn, boundscheck=True, cache=False):
        if not callable(fn):
            raise TypeError(f"jit expects a callable, got {type(fn).__name__}")
        if isinstance(fn, Jitted):  # jit(jit(f)) is jit(f)
            fn = fn.fn
        self.fn = fn
        self.boundscheck = bool(boundscheck)
        self.cache = cache
        self.specs = {}
        #: argument types -> (builtin, fail) for signatures of Python numbers (fastcall.py)
        self.fast = {}
        jit_sig = getattr(fn, "_s2s_jit_signature", None)  # jit(vmap(f)): core/vmap_jit.py
        # a primitive (jit(np.sin)): the parameters its rule has (numpy's out=, where=...
        # are not compiled), as grad(np.sin) takes them
        self.sig = fn.sig if isinstance(fn, ReverseTransform) else \
            jit_sig() if jit_sig is not None else \
            pipeline.primitive_signature(fn) or signature_of(fn)
        self.param_names = [n for n, p in self.sig.parameters.items()
                            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        #: for a function with *args/**kwargs, or a primitive with optional parameters
        #: (``jit(np.sum)``: what a call leaves out keeps numpy's default, a constant),
        #: (arguments passed, keywords) -> the jit of its adapter for that call shape
        #: (``varargs.py``); None for named parameters
        self.shapes = {} if len(self.param_names) != len(self.sig.parameters) or \
            _primitive_with_defaults(fn) else None
        self.nargs = len(self.param_names)
        self.__name__ = getattr(fn, "__name__", "jitted")
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn
        #: what grad, jvp, vjp... of this object transform (``api.transformed_target``)
        self._s2s_transform_target = fn

    def __s2s_ir__(self, args=None, kwargs=None):
        """The IR of the function it compiles (``core/protocol.py``): met by another
        transform in the code it transforms, ``jit(f)`` is ``f``."""
        if self.shapes is not None:  # *args/**kwargs: the adapter of the call's shape
            return None if args is None else \
                adapter(self.fn, len(args), tuple(kwargs or ())).__s2s_ir__()
        hook = ir_hook(self.fn)
        if hook is not None:
            return hook(args, kwargs)
        return pipeline.lowered(self.fn) if args is None else None

    def _bind(self, args, kwargs):
        bound = self.sig.bind(*args, **kwargs)
        bound.apply_defaults()
        return tuple(bound.arguments[n] for n in self.param_names)

    def __reduce__(self):
        """``jit(fn, boundscheck, cache)``, never its compiled code: a receiving process
        compiles once per signature or loads the object code (``cache=True``) from
        ``$S2S_CACHE_DIR`` (``core/travel.py``)."""
        return travelling(self, Jitted, (self.fn, self.boundscheck, self.cache))

    def __call__(self, *args, **kwargs):
        if self.shapes is not None:  # *args/**kwargs: one compiled function per call shape
            shape = (len(args), tuple(sorted(kwargs)))
            inner = self.shapes.get(shape)
            if inner is None:
                inner = self.shapes[shape] = Jitted(adapter(self.fn, *shape),
                                                    self.boundscheck, self.cache)
            return inner(*args, **kwargs)
        try:
            if not kwargs:
                hit = self.fast.get(tuple(map(type, args)))
                if hit is not None:
                    out = hit[0](*args)
                    if type(out) is tuple:  # the status words of an error
                        hit[1](out)
                    if out is not NotImplemented:  # arrays of another dtype or ndim
                        return out
            bound = self._bind(args, kwargs) if kwargs or len(args) != self.nargs else args
            key = tuple(map(_arg_key, bound))
            spec = self.specs.get(key)
            if spec is None or spec.has_free and not spec.free_current():
                with pipeline.COMPILE_LOCK:  # threads compile one signature at a time
                    spec = self.specs.get(key)
                    if spec is None or spec.has_free and not spec.free_current():
                        spec = self.specs[key] = self._specialise(bound)
            if spec.fast is not None and all(type(a) in _FAST_TYPES for a in bound):
                self.fast[tuple(map(type, bound))] = (spec.fast, spec.caller.fail)
            return spec.call(bound)
        except MisalignedArrayError:
            return self._call_aligned(args, kwargs)

    def _call_aligned(self, args, kwargs):
        """The call with an aligned copy of each array argument that is not aligned (as
        arrays unpickled from a buffer at any offset are: Dask hands workers such
        arrays); what the function writes into a copy is copied back into the caller's
        array, and a read-only array's copy is read-only."""
        copies = []

        def aligned(x):
            if type(x) is np.ndarray and not x.flags.aligned:
                c = x.copy(order="K")
                c.flags.writeable = x.flags.writeable
                copies.append((x, c))
                return c
            return x

        args, kwargs = tree_map(aligned, (args, kwargs))
        if not copies:  # a free variable is misaligned: say so
            raise MisalignedArrayError(
                "jit: an array that the function reads as a free variable is not aligned "
                "for its dtype (numpy's ALIGNED flag is off); pass it as an argument, or "
                "bind an aligned copy (x.copy())")
        out = self(*args, **kwargs)
        for x, c in copies:
            if x.flags.writeable:
                np.copyto(x, c)
        return out

    # -- compiling --------------------------------------------------------------
    def source_ir(self, args):
        """``(ir_function, free values)``: the IR compiled for these arguments, and the
        values of its keyword-only free-variable parameters (in order)."""
        fn = self.fn
        kernel = fn._s2s_jit_ir(args) if hasattr(fn, "_s2s_jit_ir") else None
        if kernel is None and hasattr(fn, "_s2s_jit_ir"):  # no kernel for these kinds
            fn = adapter(fn, len(args), ())  # one call of it, read as code
        elif kernel is not None:  # jit(vmap(f)): the batched program; a Jacobian kernel
            func, load_free = kernel
            if not has_custom_calls(func):
                return func, load_free
            # custom functions batched with their rules (core/custom_batched.py): their code
            names = [p.var.name for p in func.params]
            values = dict(zip(names, list(args) + list(load_free())))
            inlined, more = primal_calls_inlined(func, {}, arguments=values)
            added = [p.var.name for p in inlined.params[len(names):]]
            return inlined, lambda: load_free() + [more[n].load() for n in added]
        if isinstance(fn, ReverseTransform):
            gen, free = fn.generated(list(args))
            func, fv = gen.__s2s_ir__()
            values = {**dict(free), **dict(zip([p.var.name for p in func.params], args))}
            func, more = primal_calls_inlined(func, fv, arguments=values)  # custom rules' code
            return func, _free_loader(func, {**free, **_loaded(more, fv)}, fn)
        # an adapter (*args, varargs.py) is one call of the user's function: read as code
        fixed = None if isinstance(fn, (Adapter, Partial)) else fixed_ir(fn)
        if fixed is not None:  # a closure (a pullback, a jvp_fun): its companions expanded too
            values = dict(zip([p.var.name for p in fixed[0].params if not p.kwonly], args))
            func, freevars = primal_calls_inlined(*fixed, arguments=values)
            return func, freevar_loader(func, freevars, self.param_names)
        front = pipeline.front(fn)
        names = self.param_names if fn is self.fn else \
            [p.var.name for p in front.func.params if not p.kwonly]  # (the adapter's)
        arguments = dict(zip(names, args))
        arguments.update({n: fv.load() for n, fv in front.freevars.items()})
        front = front_without_custom_calls(pipeline.expanded(front, arguments), arguments)
        func = indexed_loops(front.func, names)
        from ..backend.llvm.passes.type_versions import versioned
        func = versioned(func)  # d['new key'] = v: a new variable per dict type
        return func, freevar_loader(func, front.freevars, names)

    def compiled_ir(self, args):
        """``(ir_function, free values)`` as the LLVM backend compiles them for these
        arguments: ``source_ir`` in its ``compiled_forms`` (what ``s2s dump --mode llvm``
        and the tape-size report read)."""
        func, load_free = self.source_ir(args)
        return compiled_forms(func), load_free

    def _specialise(self, args):
        from ..backend.llvm.driver.compile import compile_signature
        func, load_free = self.compiled_ir(args)
        return compile_signature(func, args, load_free,
                                 boundscheck=self.boundscheck, describe=self.describe,
                                 cache=bool(self.cache))


    def describe(self):
        """``(name and signature, the signatures compiled so far)`` for error messages."""
        sigs = self.signatures()
        return (f"{self.__name__}{self.sig}",
                "; compiled for: " + ", ".join(f"({s})" for s in sigs) if sigs else "")

    def signatures(self):
        return [s.signature for s in self.specs.values()]


class StaticJitted:
    """``jit(fn, static_argnums=..., static_argnames=...)``: per tuple of static values,
    the ``Jitted`` of ``functools.partial(fn, **those values)`` (``passes/partials.py``:
    a value the partial holds is a constant of the code, so a branch on it is taken
    when compiling), called with the other arguments by name."""

    def __init__(self, fn, static_argnums, static_argnames, boundscheck=True, cache=False):
        if not callable(fn):
            raise TypeError(f"jit expects a callable, got {type(fn).__name__}")
        self.fn, self.boundscheck, self.cache = fn, bool(boundscheck), cache
        self.sig = signature_of(fn)
        params = list(self.sig.parameters.values())
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                      p.POSITIONAL_OR_KEYWORD)]
        nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
        names = (static_argnames,) if isinstance(static_argnames, str) \
            else tuple(static_argnames)
        static = []
        for k in nums:
            if type(k) is not int or not -len(positional) <= k < len(positional):
                raise ValueError(f"jit: static_argnums {static_argnums!r} of "
                                 f"{getattr(fn, '__name__', 'f')}{self.sig}, which has "
                                 f"{len(positional)} positional parameters")
            static.append(positional[k].name)
        for name in names:
            p = self.sig.parameters.get(name)
            if p is None or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise ValueError(f"jit: static_argnames names {name!r}, not a parameter of "
                                 f"{getattr(fn, '__name__', 'f')}{self.sig}")
            static.append(name)
        if any(self.sig.parameters[n].kind is inspect.Parameter.POSITIONAL_ONLY
               for n in static):
            raise UnsupportedSyntaxError("jit: a static argument that is positional-only")
        self.static = tuple(dict.fromkeys(static))
        self.jitted = {}  # the static values -> the Jitted of the partial
        self.__name__ = getattr(fn, "__name__", "jitted")
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn
        self._s2s_transform_target = fn  # grad(jit(f, static_argnums=1)) is grad(f)

    def __s2s_ir__(self, args=None, kwargs=None):
        """Met by another transform in the code it transforms, it is ``fn`` (as ``jit(f)``
        is ``f``)."""
        hook = ir_hook(self.fn)
        if hook is not None:
            return hook(args, kwargs)
        return pipeline.lowered(self.fn) if args is None else None

    def __call__(self, *args, **kwargs):
        import functools
        bound = self.sig.bind(*args, **kwargs)
        bound.apply_defaults()
        values = tuple((n, bound.arguments[n]) for n in self.static if n in bound.arguments)
        try:
            inner = self.jitted.get(values)
        except TypeError:
            bad = [n for n, v in values if not _hashable(v)]
            raise ValueError(f"jit: the static argument(s) {', '.join(map(repr, bad))} of "
                             f"{self.__name__} must be hashable (one compiled function per "
                             "value)") from None
        if inner is None:
            inner = self.jitted[values] = Jitted(readable(functools.partial(
                self.fn, **dict(values))), self.boundscheck, self.cache)
        rest = {n: v for n, v in bound.arguments.items() if n not in self.static}
        return inner(**rest)


def _hashable(v) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True


def compiled_forms(func):
    """``func`` as the LLVM backend types and lowers it: vmap's calls once per example as
    loops (``passes/per_example_loops.py``), run-time helpers without a
    lowering read as their code, loops over literal containers resolved, tapes in the
    forms the backend keeps native (forward-over-reverse pushes, batched loops'
    per-example tapes kept or rewound whole) and batched code's per-example reductions
    (``jit(grad(vmap(f)))``) in their compiled forms.  Whatever types a function before
    it is compiled (a Jacobian kernel's result type) reads this form too."""
    from ..backend.llvm.driver.compile import lowers
    from ..backend.llvm.passes.literal_containers import containers_resolved
    from ..backend.llvm.passes.tape_pushes import masked_tapes, plain_pushes
    from ..backend.llvm.ops.host_calls import compiled_natively
    from ..passes.per_example_loops import per_example_loops
    func = pipeline.helper_code(per_example_loops(func, compiled_natively), lowers, "jit")
    func = containers_resolved(func)
    func = plain_pushes(func)
    func = masked_tapes(func)
    return per_example_forms(func)


def indexed_loops(func, params):
    """``func`` with its loops over arrays, tuples, ``zip``/``enumerate``/``reversed``
    turned into loops over ranges that index (the passes reverse mode uses)."""
    from dataclasses import replace

    from ..ir import nodes as ir
    from ..ir.names import NameGen
    from ..passes.argument_loops import argument_loops
    from ..passes.loop_ranges import range_loops

    names = NameGen(ir.all_names(func))
    temps = set(func.temps)
    body = range_loops(argument_loops(list(func.body), names, set(params)), names, temps,
                       set(params))
    return replace(func, body=tuple(body), temps=frozenset(temps))


def freevar_loader(func, freevars, param_names):
    """The values of ``func``'s parameters after the user's (its free variables)."""
    names = [p.var.name for p in func.params]
    if names[:len(param_names)] != list(param_names):
        raise UnsupportedSyntaxError(
            f"jit: the parameters of {func.name} ({', '.join(names)}) do not start with "
            f"the function's own ({', '.join(param_names)})", func.loc)
    loaders = [freevars[n].load for n in names[len(param_names):]]
    return lambda: [load() for load in loaders]


def _loaded(freevars, known) -> dict:
    """The values of the free variables that inlining custom rules added."""
    return {n: fv.load() for n, fv in freevars.items() if n not in known}


def _free_loader(func, free, transform):
    """Free values of a transform's generated function, read afresh at each call (those
    that expanding calls of transforms added are fixed when compiled)."""
    names = [p.var.name for p in func.params][len(transform.param_names):]
    fixed = dict(free)

    def load():
        current = transform.free_values() if transform._front is not None else {}
        return [current.get(n, fixed[n]) for n in names]

    return load


_ = inspect
