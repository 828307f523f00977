"""The batched function ``vmap`` returns (JAX's semantics; ``Vmapped``; ``api/batching.py``):
the batching transform (``s2s/batch/``), specialised per argument kinds and which
arguments are batched, cached like ``grad``.

``vmap(f, in_axes=0, out_axes=0)(*args)``: ``in_axes`` is an int, None, or a
tuple with one entry per positional argument, each an int, None or a pytree
prefix of that argument (dicts, tuples, lists); negative axes count from the
end.  The mapped axes are moved to the front, the batched code runs once, and
the result's batch axis is moved to ``out_axes`` (same forms, a prefix of the
output).  An argument whose leaves are mapped only in part has its unmapped
leaves broadcast over the batch.  ``fallback="loop"`` lets a call without a
batching rule run once per example, and a function whose control flow cannot
be batched run once per example; by default both are errors that name the
primitive or construct and the line.

As in JAX, ``in_axes`` covers the positional arguments and every argument passed
by keyword (bound to a positional parameter or keyword-only) is mapped on its
axis 0 (a keyword argument the same for every example: close over it in a
lambda, or pass it positionally with ``None`` in ``in_axes``).  ``axis_size``
gives the batch size when no argument is mapped; a part of the result the same
for every example may take ``out_axes`` None.  ``vmap(np.sum)`` and other
functions with derivative rules are mapped as the call they are.
``vmap(vjp_fun)`` batches the adjoint code ``vjp`` generated (cached per kinds,
shared by every ``vjp_fun`` of that code) with the residuals unbatched;
``vmap(grad(f))`` batches the code ``grad`` generated, also where the trip
counts of ``f``'s loops differ per example (``batch/lanes.py``).
A ``vmap`` that the function itself calls stays a call until the batching
transform meets it, then becomes ``vmap`` of that ``vmap`` (``in_axes`` 0 where its
operands are batched): both batches merged into one (``core/vmap_nested.py``).
Functions are specialised on the kinds of the arguments and on which are
batched, and cached like the other transforms.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np


import s2s_runtime as rt
from s2s_runtime.tree import tree_flatten, tree_structure, tree_unflatten

from . import pipeline
from .custom_batched import batched_custom
from .custom_primal import front_without_custom_calls
from .reverse import ReverseTransform
from .specialise import signature_of, Specialising, memo
from .varargs import Adapter, adapter, wants_adapter
from .jit import Jitted
from .pullbacks import VJPFunction
from .vmap_jit import jit_ir, jit_signature, vmap_of_jitted
from ..batch.out_axes import leaf_axes as _leaf_axes, place_out
from ..batch.table import batch_rule
from ..batch.transform import Batch, BatchingError
from ..batch import rules as _rules  # noqa: F401  (batching and helper rules registered)
from ..errors import UnsupportedSyntaxError
from ..ir.kinds import kind_of
from ..passes.dce import dce
from ..passes.out_args import scatter_adds_as_writes
from ..passes.sites import has_sites
from .travel import travelling


class Vmapped(Specialising):
    """``vmap(fun, in_axes, out_axes)``: ``fun`` over a batch, specialised per kinds."""

    #: keyword arguments mapped on axis 0 (JAX's rule); False for the vmaps s2s makes of
    #: generated code (``vmap_of``), whose keyword arguments are free values
    map_keywords = True

    #: a vmap called in the function stays a call until the batching transform maps it
    #: as a whole (``_mapped_whole``)
    kept_sites = staticmethod(lambda fn: isinstance(fn, Vmapped))

    def __init__(self, fun, in_axes=0, out_axes=0, fallback=None, axis_size=None):
        if not callable(fun):
            raise TypeError(f"vmap expects a callable, got {type(fun).__name__}")
        if fallback not in (None, "loop"):
            raise ValueError("vmap fallback must be None or 'loop'")
        if axis_size is not None and (not isinstance(axis_size, (int, np.integer)) or
                                      isinstance(axis_size, bool) or axis_size < 0):
            raise TypeError(f"vmap axis_size must be a non-negative int, got {axis_size!r}")
        self.fn, self.in_axes, self.out_axes, self.fallback = fun, in_axes, out_axes, fallback
        self.axis_size = None if axis_size is None else int(axis_size)
        self.config = ("vmap", fallback)
        self.cache = {}
        self.__name__ = f"vmap_{getattr(fun, '__name__', 'f')}"
        self.__wrapped__ = fun

    def __reduce__(self):  # the transform, its function and its configuration (core/travel.py)
        return travelling(self, Vmapped, (self.fn, self.in_axes, self.out_axes, self.fallback,
                                          self.axis_size),
                          state={"map_keywords": self.map_keywords} if not self.map_keywords
                          else None)

    # -- arguments -----------------------------------------------------------------
    def _arg_axes(self, args):
        in_axes = self.in_axes
        if isinstance(in_axes, list):
            in_axes = tuple(in_axes)
        if not isinstance(in_axes, tuple):
            return [in_axes] * len(args)
        if len(in_axes) != len(args):
            raise ValueError(f"vmap in_axes must be an int, None, or a tuple of entries "
                             f"corresponding to the positional arguments passed to the "
                             f"function, but got len(in_axes)={len(in_axes)}, "
                             f"len(args)={len(args)}")
        return list(in_axes)

    def prepare(self, args, axes=None, labels=None):
        """``(moved_args, batched_flags, size)``: every mapped axis moved to the front
        (``axes``: one entry per argument, by default from ``in_axes``; ``labels``: how
        errors name the arguments, by default ``argument i``)."""
        moved, flags, sizes = [], [], []
        label = (lambda i: labels[i]) if labels else (lambda i: f"argument {i}")
        for i, (a, ax) in enumerate(zip(args, axes or self._arg_axes(args))):
            if ax is None:  # the common fast cases: unmapped, or an array on axis 0
                moved.append((None, a, [False]))
                continue
            if ax == 0 and type(a) is np.ndarray and a.ndim:
                sizes.append((i, a.shape[0], 0, a.shape))
                moved.append((None, a, [True]))
                continue
            leaves, tree = tree_flatten(a)
            axes = _leaf_axes(ax, a, f"in_axes entry {i}")
            new = []
            for leaf, k in zip(leaves, axes):
                if k is None:
                    new.append(leaf)
                    continue
                nd = np.ndim(leaf)
                if not -nd <= k < nd:
                    raise ValueError(f"vmap was requested to map its argument along axis "
                                     f"{k}, which implies that its rank should be at least "
                                     f"{max(k + 1, -k)}, but is only {nd} (its shape is "
                                     f"{np.shape(leaf)}) ({label(i)})")
                k %= nd
                sizes.append((i, np.shape(leaf)[k], k, np.shape(leaf)))
                new.append(np.moveaxis(np.asarray(leaf), k, 0) if k else np.asarray(leaf))
            mapped = [k is not None for k in axes]
            moved.append((tree, new, mapped))
        if not sizes and self.axis_size is None:
            raise ValueError("vmap must have at least one non-None value in in_axes "
                             "(or be given axis_size)")
        n = sizes[0][1] if sizes else self.axis_size
        if self.axis_size is not None and n != self.axis_size:
            raise ValueError(f"vmap got axis_size={self.axis_size} but the mapped axes have "
                             f"size {n}")
        if any(s[1] != n for s in sizes):
            lines = "\n".join(f"  {label(i)} of shape {shape} has size {s} on axis {k}"
                              for i, s, k, shape in sizes)
            raise ValueError(f"vmap got inconsistent sizes for the array axes to be "
                             f"mapped:\n{lines}")
        out = []
        for tree, leaves, mapped in moved:
            if tree is None:
                out.append(leaves)
                flags.append(mapped[0])
                continue
            if any(mapped) and not all(mapped):
                leaves = [v if m else np.broadcast_to(np.asarray(v), (n,) + np.shape(v))
                          for v, m in zip(leaves, mapped)]
            out.append(tree_unflatten(tree, leaves))
            flags.append(any(mapped))
        return out, flags, n

    # -- the batched code ----------------------------------------------------------
    def __call__(self, *args, **kwargs):
        check = getattr(self.fn, "_s2s_check_args", None)
        if check is not None and not kwargs:  # vmap(jacfwd(f)): its dtype rules (TypeError)
            check(args)
        if isinstance(self.fn, Jitted):  # vmap(jit(f)) is jit(vmap(f)): core/vmap_jit.py
            return vmap_of_jitted(self, args, kwargs)
        if not isinstance(self.fn, Vmapped) and wants_adapter(self.fn) or \
                _is_primitive(self.fn):
            # *args/**kwargs, or a numpy function: one parameter per argument passed
            key = ("adapter", len(args), tuple(sorted(kwargs)))
            inner = self.cache.get(key)
            if inner is None:
                fixed = (Adapter(self.fn, len(args), tuple(sorted(kwargs)))
                         if _is_primitive(self.fn) else adapter(self.fn, len(args), kwargs))
                inner = self.cache[key] = Vmapped(fixed, self.in_axes, self.out_axes,
                                                  self.fallback, self.axis_size)
            return inner(*args, **kwargs)
        static, axes, kw_batched = {}, None, ()
        if kwargs:
            # as JAX: in_axes covers the positional arguments; arguments passed by keyword
            # (keyword-only ones too) are mapped on axis 0
            sig = self.__dict__.get("_sig") or self.__dict__.setdefault(
                "_sig", signature_of(self.fn))
            bound = sig.bind(*args, **kwargs)
            axes = self._arg_axes(args) + [0] * (len(bound.args) - len(args))
            args = tuple(bound.args)
            static = bound.kwargs
        if static and isinstance(self.fn, (VJPFunction, Vmapped)):
            raise TypeError("vmap of a vjp function or of a vmap: pass the arguments "
                            f"positionally (got keyword arguments {sorted(static)})")
        if isinstance(self.fn, VJPFunction):  # its adjoint code, residuals unbatched
            return self._of_vjp_fun(args)
        if isinstance(self.fn, Vmapped):
            return self._nested(args)
        if static and self.map_keywords:
            names = sorted(static)
            values, flags, n = self.prepare(
                list(args) + [static[k] for k in names],
                (axes or self._arg_axes(args)) + [0] * len(names),
                [f"argument {i}" for i in range(len(args))] +
                [f"keyword argument {k!r}" for k in names])
            static = dict(zip(names, values[len(args):]))
            kw_batched = frozenset(k for k, f in zip(names, flags[len(args):]) if f)
            values, flags = values[:len(args)], flags[:len(args)]
        else:
            values, flags, n = self.prepare(args, axes)
        values, flags = self._with_defaults(values, flags)
        try:
            if not any(flags) and not kw_batched:  # nothing mapped (axis_size=): f once
                out = self.fn(*values, **static)
                return self._place_out(out, False, n)
            gen, free, out_batched = self.generated(values, flags, static, kw_batched)
            out = gen(*values, **free, **static)
        except (BatchingError, rt.BatchingRuntimeError):
            if self.fallback != "loop":
                raise
            return self._loop(values, flags, n, static, kw_batched)
        except Exception as exc:  # the user's file:line as a note
            pipeline.note_user_line(exc)
            raise
        return self._place_out(out, out_batched, n, getattr(gen, "_s2s_out_tree", None))

    def _s2s_jit_signature(self):
        return jit_signature(self)

    def _s2s_jit_ir(self, args):
        return jit_ir(self, args)

    def _of_vjp_fun(self, args):
        """``vmap(vjp_fun)``: the generated adjoint sweep (cached per kinds, shared by
        every ``vjp_fun`` of the same code) batched over the cotangent, with the
        residuals the same for every example."""
        fun = self.fn
        if len(args) != 1:
            raise TypeError(f"a vjp function takes one cotangent, got {len(args)} arguments")
        axes = self._arg_axes(args)
        inner = vmap_of(fun._bwd, self.fallback, (None,) * len(fun._residuals) + tuple(axes),
                         self.out_axes)
        return inner(*fun._residuals, *args)

    def _with_defaults(self, values, flags):
        """The default values of the positional parameters not passed (unbatched)."""
        params = self.__dict__.get("_positional")
        if params is None:
            try:
                sig = pipeline.primitive_signature(self.fn) or signature_of(self.fn)
                params = [p for p in sig.parameters.values()
                          if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            except Exception:
                params = []
            self._positional = params
        if len(params) <= len(values):
            return values, flags
        extra = [p.default for p in params[len(values):] if p.default is not p.empty]
        return list(values) + extra, list(flags) + [False] * len(extra)

    def _leaves_defaults(self, values) -> bool:
        """Whether ``values`` leave out some of ``fun``'s positional parameters (a
        primitive's, ``vmap(np.cumsum)(x)``, or a function's with defaults): their
        defaults are not mapped."""
        return len(self._with_defaults(values, [False] * len(values))[0]) > len(values)

    def _nested(self, args):
        from .vmap_nested import nested_call
        return nested_call(self, args)

    def _example(self, values, flags, k=0):
        return [tree_unflatten(tree_structure(v), [x[k] for x in tree_flatten(v)[0]])
                if f else v for v, f in zip(values, flags)]

    def _loop(self, values, flags, n, static=None, kw_batched=()):
        static = static or {}
        outs = [self.fn(*self._example(values, flags, k),
                        **self._example_kw(static, kw_batched, k)) for k in range(n)]
        leaves = [tree_flatten(o)[0] for o in outs]
        stacked = [np.stack([np.asarray(x[j]) for x in leaves]) for j in range(len(leaves[0]))]
        return self._place_out(tree_unflatten(tree_structure(outs[0]), stacked), True, n)

    def _example_kw(self, static, kw_batched, k=0):
        """Example ``k`` of the keyword-only arguments (those in ``kw_batched`` batched)."""
        return {name: tree_unflatten(tree_structure(v), [x[k] for x in tree_flatten(v)[0]])
                if name in kw_batched else v for name, v in static.items()}

    def generated(self, values, flags, static=None, kw_batched=()):
        """``(gen, free, out_batched)`` for these values' kinds and batched flags
        (``static``: keyword-only arguments, those named in ``kw_batched`` batched)."""
        static = static or {}
        if isinstance(self.fn, ReverseTransform):  # vmap(grad(f)): batch the code grad made
            example = self._example(values, flags)
            inner, free = self.fn.generated(self.fn._bind(
                example, self._example_kw(static, kw_batched)))
            gen, more, out_b = vmap_of(inner, self.fallback).generated(
                values, flags, {**free, **static}, kw_batched)
            return gen, {**free, **more}, out_b
        free = self.free_values()
        key = (tuple(map(kind_of, values)), tuple(flags), tuple(map(kind_of, free.values())),
               tuple((k, kind_of(v), k in kw_batched) for k, v in sorted(static.items())))
        hit = self.cache.get(key)
        if hit is None:
            def make():
                func, front, out_b = self.batched_ir(values, flags, static, kw_batched)
                gen, _ = pipeline.compile_function(func)
                gen._s2s_out_tree = self._out_tree  # which parts of the result are batched
                return gen, self.extra_freevars(front), out_b

            hit = self.cache[key] = self.shared(key, make)
        gen, extra, out_b = hit
        if extra:
            free.update((name, fv.load()) for name, fv in extra.items())
        return gen, free, out_b

    def batched_ir(self, values, flags, static=None, kw_batched=()):
        """``(ir, front, out_batched)``: the batched function for these kinds (keyword-only
        parameters named in ``kw_batched`` batched too)."""
        static = static or {}
        params = [p for p in self.front.func.params if not p.kwonly]
        if len(params) < len(values):
            raise TypeError(f"{getattr(self.fn, '__name__', 'f')} takes {len(params)} "
                            f"positional argument(s), got {len(values)}")
        example = self._example(values, flags)
        kw_example = self._example_kw(static, kw_batched)
        arguments = {**{p.var.name: v for p, v in zip(params, example)},
                     **kw_example, **self.free_values()}
        front = self.front_for(arguments)
        # custom functions stay (batched with their rules, core/custom_batched.py); the
        # rules called in derivative code become their code
        front = front_without_custom_calls(front, arguments, keep_custom_calls=True)
        # np.add.at as a write of rt.add_at, which batches (passes/out_args.py)
        front = replace(front, func=scatter_adds_as_writes(front.func))
        front = pipeline.with_helper_code(front, batch_rule, "vmap")  # those without a rule
        batched = [p.var.name for p, f in zip(params, flags) if f] + sorted(kw_batched)
        tr = Batch(front.func, batched, self.fallback)
        tr.mapped_whole = self._mapped_whole
        pairs = list(zip(params, values, example)) + [
            (p, static[p.var.name], kw_example[p.var.name]) for p in front.func.params
            if p.kwonly and p.var.name in kw_batched]
        tr.arrays.update(p.var.name for p, v, _ in pairs if type(v) is np.ndarray)
        tr.scalar_params.update(p.var.name for p, _, v in pairs
                                if type(v) in (float, int, bool) or
                                (isinstance(v, (np.generic, np.ndarray)) and np.ndim(v) == 0))
        tr.vector_params.update(p.var.name for p, _, v in pairs
                                if type(v) is np.ndarray and v.ndim == 1 and v.dtype.kind in "biufc")
        func = tr.build(f"vmap_{front.func.name}")
        defaults = [p for p in front.func.params[len(values):] if not p.kwonly]
        if defaults:
            raise UnsupportedSyntaxError("vmap: pass every positional argument (defaults of "
                                         f"{[p.var.name for p in defaults]} are not batched)")
        self._out_tree = tr.out_tree
        if has_sites(func):  # vmap sites merged with this batch: expanded for these values
            arguments = {**{p.var.name: v for p, v in zip(params, values)}, **static,
                         **self.free_values()}
            front = pipeline.expanded(pipeline.Front(func, front.freevars, sites=True),
                                      arguments)
            func = front.func
        return dce(func), front, tr.out_batched

    def _mapped_whole(self, fn, flags):
        """The batching transform's ``mapped_whole``: a custom function keeps its rule
        (``core/custom_batched.py``), and a ``vmap`` called in the code (a site kept by
        ``front_for``) becomes ``vmap(that vmap, in_axes=0 where batched)``, both batches
        merged into one (``core/vmap_nested.py``)."""
        if getattr(fn, "_s2s_custom", None) == "call":
            return batched_custom(fn.owner, flags, self.fallback).call
        if isinstance(fn, Vmapped):
            return vmap_of(fn, self.fallback, tuple(0 if f else None for f in flags))
        return None

    # -- the result ----------------------------------------------------------------
    def _place_out(self, out, out_batched, n, out_tree=None):
        return place_out(self.out_axes, out, out_batched, n, out_tree)

    # -- as IR: inside transformed code (grad(lambda w: sum(vmap(f)(w, X)))), nested vmap
    def __s2s_ir__(self, args=None, kwargs=None):
        if args is None:  # the IR depends on the arguments' kinds
            return None
        if kwargs:
            raise UnsupportedSyntaxError("vmap(f)(...) with keyword arguments inside "
                                         "transformed code")
        return self.site_ir(args)

    def site_ir(self, args):
        """``(ir, freevars)``: ``lambda *args: vmap(fun, in_axes, out_axes)(*args)`` for the
        kinds of ``args``, as IR (axes moved with ``np.moveaxis``).  Arguments mapped on
        an axis other than 0 must be arrays, and ``out_axes`` an int or None."""
        axes = self._arg_axes(args)
        for a, k in zip(args, axes):
            if k not in (0, None) and not isinstance(k, int) or \
                    (k not in (0, None) and type(a) is not np.ndarray):
                raise UnsupportedSyntaxError("vmap inside transformed code: in_axes must be "
                                             "an int or None per argument (a non-zero axis "
                                             "only for an array argument)")
        if not (self.out_axes is None or isinstance(self.out_axes, int)):
            raise UnsupportedSyntaxError("vmap inside transformed code: out_axes must be an "
                                         "int or None")
        values, flags, n = self.prepare(args)
        for v, a, f in zip(values, args, flags):
            if f and any(x is not y for x, y in zip(tree_flatten(v)[0], tree_flatten(a)[0])) \
                    and type(a) is not np.ndarray:
                raise UnsupportedSyntaxError("vmap inside transformed code: a container "
                                             "argument mapped in part")
        free = {}
        if isinstance(self.fn, Vmapped):  # both batches as one (core/vmap_nested.py)
            from .vmap_nested import nested_site
            func, freevars = nested_site(self, args, values, flags)
            out_b = True
        elif wants_adapter(self.fn) or self._leaves_defaults(values):
            # *args, a jacfwd... function, or a primitive called without its optional
            # parameters (numpy's defaults stay constants): the function of one call's shape
            inner = vmap_of(adapter(self.fn, len(values), ()), self.fallback)
            func, front, out_b = inner.batched_ir(values, flags)
        elif isinstance(self.fn, ReverseTransform):
            example = self._example(values, flags)
            bound = self.fn._bind(example, {})
            inner, free = self.fn.generated(bound)
            # the generated code's free values (keyword-only parameters), as generated() has
            func, front, out_b = vmap_of(inner, self.fallback).batched_ir(values, flags, free)
        else:
            func, front, out_b = self.batched_ir(values, flags)
        from .vmap_nested import with_axes
        func = with_axes(func, axes, self.out_axes, out_b, self.axis_size)
        if isinstance(self.fn, Vmapped):
            return func, freevars
        freevars = dict(front.freevars)
        if free:  # what the gradient code's free-variable parameters read (its f's globals)
            freevars = {**self.fn.gen_freevars(bound), **freevars}
        return func, freevars


def _is_primitive(fn) -> bool:
    """A function with a derivative rule (``np.sum``): vmapped as the call it is."""
    from ..rules import lookup
    try:
        return lookup(fn) is not None
    except TypeError:
        return False


def vmap_of(fun, fallback, in_axes=0, out_axes=0):
    """The ``vmap`` of ``fun`` kept on ``fun`` (its cache lives as long as ``fun``)."""
    def make():
        inner = Vmapped(fun, in_axes, out_axes, fallback)
        inner.map_keywords = False
        return inner
    return memo(fun, ("vmap", in_axes, out_axes, fallback), make)
