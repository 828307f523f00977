"""``jvp``, ``linearize``, ``vjp``, ``jacfwd`` and ``jacrev`` (JAX's semantics).

``jvp`` runs the forward-mode transform (``ad/forward.py``), specialised per
argument kinds and cached like ``grad``; ``vjp`` runs reverse mode with the
output's cotangent as an argument.  ``jacfwd`` and ``jacrev`` push the
standard basis through them, one vector at a time, and lay the Jacobian out
as JAX does: for each output leaf, ``out.shape + in.shape`` per input leaf,
nested output-tree-of-input-trees.
"""
from __future__ import annotations

import weakref
from typing import Sequence, Union

import numpy as np

import s2s_runtime as rt
from s2s_runtime.tree import tree_flatten, tree_map, tree_structure, tree_unflatten

from . import pipeline
from .api import _normalise_argnums, _ReverseTransform, _signature, _Specialising
from .ir.kinds import is_inexact_leaf, kind_of


class _ForwardTransform(_Specialising):
    """The JVP of one function, specialised per argument kinds."""

    def __init__(self, fn, has_aux=False):
        if not callable(fn):
            raise TypeError(f"jvp expects a callable, got {type(fn).__name__}")
        self.fn = fn
        self.has_aux = has_aux
        self.sig = pipeline.primitive_signature(fn) or _signature(fn)
        self.param_names = [p.name for p in self.sig.parameters.values()
                            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        self.kwonly_names = [p.name for p in self.sig.parameters.values()
                             if p.kind == p.KEYWORD_ONLY]
        self.cache = {}

    def __call__(self, primals, tangents, kwonly=None):
        """``kwonly``: keyword-only arguments (no tangents), e.g. the free variables of a
        generated function being transformed again."""
        primals, tangents = _check_pairs(primals, tangents, self.fn)
        if len(primals) > len(self.param_names):
            raise TypeError(f"{getattr(self.fn, '__name__', 'f')} takes "
                            f"{len(self.param_names)} positional argument(s), "
                            f"got {len(primals)} primals")
        bound = self.sig.bind(*primals, **(kwonly or {}))
        bound.apply_defaults()
        values = [bound.arguments[n] for n in self.param_names]
        if isinstance(self.fn, _Specialising):
            # jvp(grad(f)): the forward mode of the code grad(f) generated for these kinds
            inner, free = self.fn.generated(values + [bound.arguments[n]
                                                      for n in self.kwonly_names])
            return _forward_of(inner, self.has_aux)(primals, tangents, {
                **{n: bound.arguments[n] for n in self.kwonly_names}, **free})
        kw = {n: bound.arguments[n] for n in self.kwonly_names}
        carries = [i < len(primals) and any(map(is_inexact_leaf, tree_flatten(v)[0]))
                   for i, v in enumerate(values)]
        front = self.front
        free = {name: fv.load() for name, fv in front.freevars.items()}
        key = (tuple(map(kind_of, values)), tuple(carries), tuple(map(kind_of, free.values())),
               tuple(map(kind_of, kw.values())))
        gen = self.cache.get(key)
        if gen is None:
            gen = self._specialise(values, carries)
            self.cache[key] = gen
        dots = [rt.densify(t, p) for t, p, c in zip(tangents, primals, carries) if c]
        result = gen(*values, *dots, **free, **kw)
        if self.has_aux:
            (out, aux), dout = result
            return out, dout, aux
        return result

    def specialised(self, values, carries):
        wrt = [n for n, c in zip(self.param_names, carries) if c]
        leaf = {n: len(tree_flatten(v)[0]) == 1 and tree_flatten(v)[0][0] is v
                for n, v in zip(self.param_names, values)}
        return pipeline.forward(self.front, wrt, leaf, has_aux=self.has_aux)

    def _specialise(self, values, carries):
        gen, _ = pipeline.compile_function(self.specialised(values, carries))
        return gen


def _check_pairs(primals, tangents, fn):
    """JAX's checks: tuples/lists of equal length, tangents shaped like the primals."""
    for what, v in (("primals", primals), ("tangents", tangents)):
        if not isinstance(v, (tuple, list)):
            raise TypeError(f"{what} passed to jvp must be a tuple or a list, "
                            f"got {type(v).__name__}")
    if len(primals) != len(tangents):
        raise TypeError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    checked = []
    for i, (p, t) in enumerate(zip(primals, tangents)):
        tree = tree_structure(p)
        try:
            parts = tree.flatten_up_to(t)
        except ValueError as exc:
            raise TypeError(f"jvp: the tangent of primal {i} does not match its structure: "
                            f"{exc}") from None
        leaves = tree_flatten(p)[0]
        for pl, tl in zip(leaves, parts):
            sub = tree_flatten(tl)[0]
            if tl is not None and not (len(sub) == 1 and sub[0] is tl):
                raise TypeError(f"jvp: the tangent of primal {i} has a container "
                                f"({type(tl).__name__}) where the primal has a leaf")
            if tl is not None and is_inexact_leaf(pl) and np.shape(tl) != np.shape(pl):
                raise ValueError(f"jvp: primal {i} has shape {np.shape(pl)} but its tangent "
                                 f"has shape {np.shape(tl)}")
        checked.append(tree_unflatten(tree, parts))
    return tuple(primals), tuple(checked)


_JVPS = weakref.WeakKeyDictionary()


def _forward_of(fun, has_aux):
    try:
        per_fn = _JVPS.setdefault(fun, {})
    except TypeError:  # not weak-referenceable (a numpy ufunc): no cache across calls
        return _ForwardTransform(fun, has_aux)
    if has_aux not in per_fn:
        per_fn[has_aux] = _ForwardTransform(fun, has_aux)
    return per_fn[has_aux]


def jvp(fun, primals, tangents, has_aux=False):
    """``(fun(*primals), J(primals) @ tangents)`` in one forward pass (JAX's ``jvp``).

    With ``has_aux``, ``fun`` returns ``(out, aux)`` and jvp returns
    ``(out, tangent_out, aux)``.  Integer leaves take a ``None`` or zero
    tangent and are ignored.
    """
    return _forward_of(fun, has_aux)(primals, tangents)


def linearize(fun, *primals):
    """``(fun(*primals), jvp_fun)`` where ``jvp_fun(*tangents)`` is the JVP at ``primals``."""
    out = fun(*primals)
    forward = _forward_of(fun, False)

    def jvp_fun(*tangents):
        return forward(primals, tangents)[1]

    return out, jvp_fun


_VJPS = weakref.WeakKeyDictionary()


def vjp(fun, *primals, has_aux=False):
    """``(fun(*primals), vjp_fun)`` where ``vjp_fun(ct)`` returns one cotangent per primal.

    With ``has_aux``: ``(out, vjp_fun, aux)``.  The primal runs once, in the
    generated forward sweep, which hands the values the adjoint needs
    (the residuals) to ``vjp_fun``; ``vjp_fun`` runs only the adjoint sweep
    and may be called many times, with cotangents shaped like the output.
    """
    if not primals:
        raise TypeError("vjp needs at least one primal argument")
    key = (len(primals), has_aux)
    try:
        per_fn = _VJPS.setdefault(fun, {})
    except TypeError:
        per_fn = {}
    transform = per_fn.get(key)
    if transform is None:
        transform = per_fn[key] = _ReverseTransform(fun, tuple(range(len(primals))), has_aux,
                                                   False, "vjp")
    values = transform._bind(primals, {})
    fwd, bwd, free = transform.split_for(values)
    if transform.kwonly_names:
        free.update(zip(transform.kwonly_names, values[transform.n_positional:]))
        values = values[:transform.n_positional]
    result, residuals = fwd(*values, **free)  # the primal runs once; residuals are values
    out, aux = result if has_aux else (result, None)
    out_tree = tree_structure(out)

    def vjp_fun(ct):
        try:
            parts = out_tree.flatten_up_to(ct)
        except ValueError as exc:
            raise TypeError(f"vjp: the cotangent does not match the output's structure: "
                            f"{exc}") from None
        for o, c in zip(tree_flatten(out)[0], parts):
            if np.shape(o) != np.shape(c):
                raise ValueError(f"vjp: the output has shape {np.shape(o)} but the "
                                 f"cotangent has shape {np.shape(c)}")
        return bwd(*residuals, ct)

    return (out, vjp_fun, aux) if has_aux else (out, vjp_fun)


def _basis(leaves, dtype_of):
    """Yield (leaf index, flat entry, tangent leaves) for every entry of every inexact leaf."""
    zeros = [rt.zeros_like(v) for v in leaves]
    for i, v in enumerate(leaves):
        if not is_inexact_leaf(v):
            continue
        for k in range(int(np.size(v))):
            e = np.zeros(np.shape(v), dtype=dtype_of(v))
            e.reshape(-1)[k] = 1
            parts = list(zeros)
            parts[i] = e if np.ndim(v) else e[()]
            yield i, k, parts


def _dtype(v):
    return np.result_type(v) if np.issubdtype(np.result_type(v), np.inexact) else np.float64


def jacfwd(fun, argnums: Union[int, Sequence[int]] = 0, has_aux=False):
    """The Jacobian of ``fun`` by forward mode, one JVP per input entry (JAX's ``jacfwd``)."""
    def jacfun(*args):
        nums, single = _normalise_argnums(argnums, len(args), getattr(fun, "__name__", "f"))
        tangents = [tree_map(rt.zeros_like, a) for a in args]
        out = None
        per_arg = []
        for n in nums:
            leaves, tree = tree_flatten(args[n])
            cols = {}
            for i, k, parts in _basis(leaves, _dtype):
                t = list(tangents)
                t[n] = tree_unflatten(tree, parts)
                res = jvp(fun, tuple(args), tuple(t), has_aux=has_aux)
                out, dout = res[0], res[1]
                cols[(i, k)] = tree_flatten(dout)[0]
            per_arg.append((leaves, tree, cols))
        if out is None:
            out = fun(*args)[0] if has_aux else fun(*args)
        out_leaves, out_tree = tree_flatten(out)
        jac = []
        for o, ol in enumerate(out_leaves):
            by_arg = []
            for leaves, tree, cols in per_arg:
                blocks = []
                for i, v in enumerate(leaves):
                    block = np.zeros(np.shape(ol) + np.shape(v),
                                     dtype=np.result_type(_dtype(ol), _dtype(v)))
                    flat = block.reshape(np.shape(ol) + (-1,))
                    for k in range(int(np.size(v))):
                        if (i, k) in cols:
                            flat[..., k] = cols[(i, k)][o]
                    blocks.append(block)
                by_arg.append(tree_unflatten(tree, blocks))
            jac.append(by_arg[0] if single else tuple(by_arg))
        result = tree_unflatten(out_tree, jac)
        if has_aux:
            return result, fun(*args)[1]
        return result

    return jacfun


def jacrev(fun, argnums: Union[int, Sequence[int]] = 0, has_aux=False):
    """The Jacobian of ``fun`` by reverse mode, one VJP per output entry (JAX's ``jacrev``)."""
    def jacfun(*args):
        nums, single = _normalise_argnums(argnums, len(args), getattr(fun, "__name__", "f"))
        res = vjp(fun, *args, has_aux=has_aux)
        out, pull = res[0], res[1]
        out_leaves, out_tree = tree_flatten(out)
        jac = []
        for o, ol in enumerate(out_leaves):
            by_arg = [[np.zeros(np.shape(ol) + np.shape(v), dtype=np.result_type(_dtype(ol), _dtype(v)))
                       for v in tree_flatten(args[n])[0]] for n in nums]
            for _, k, parts in _basis([ol], _dtype):
                ct_leaves = [rt.zeros_like(x) for x in out_leaves]
                ct_leaves[o] = parts[0]
                cts = pull(tree_unflatten(out_tree, ct_leaves))
                for a, n in enumerate(nums):
                    for j, g in enumerate(tree_flatten(cts[n])[0]):
                        block = by_arg[a][j]
                        block.reshape((-1,) + np.shape(block)[np.ndim(ol):])[k] = g
            trees = [tree_unflatten(tree_structure(args[n]), blocks)
                     for n, blocks in zip(nums, by_arg)]
            jac.append(trees[0] if single else tuple(trees))
        result = tree_unflatten(out_tree, jac)
        return (result, res[2]) if has_aux else result

    return jacfun


def hessian(fun, argnums: Union[int, Sequence[int]] = 0, has_aux=False):
    """The Hessian of a scalar-valued ``fun``: forward mode over the generated gradient.

    ``jacfwd(grad(fun))``, which is JAX's ``jacfwd(jacrev(fun))`` for scalar
    outputs; the layout is ``in.shape + in.shape`` (nested tuples for tuple
    ``argnums``).  Non-scalar outputs are a TypeError, as for ``grad``.
    """
    from .api import grad

    return jacfwd(grad(fun, argnums, has_aux=has_aux), argnums, has_aux=has_aux)
