"""The forward-mode transformed function behind ``jvp`` (JAX's semantics, ``api/tangents.py``):
``ForwardTransform`` (``ad/forward.py``), specialised per argument kinds and cached like
``grad`` (``forward_of``), and the checks of primal/tangent pairs (``check_pairs``).

``jvp(f, primals, tangents)`` called inside code that is itself transformed
(reverse over forward) expands to the JVP function's IR (``api/tangents.py``).
"""
from __future__ import annotations


import numpy as np

import s2s_runtime as rt
from s2s_runtime.tree import tree_flatten, tree_map, tree_structure, tree_unflatten

from . import pipeline
from .reverse import ReverseTransform, transformed_target
from .specialise import signature_of, Specialising, memo, raise_if_not_a_pair
from ..ir.kinds import is_inexact_leaf, kind_of


class ForwardTransform(Specialising):
    """The JVP of one function, specialised per argument kinds."""

    def __init__(self, fn, has_aux=False):
        if not callable(fn):
            raise TypeError(f"jvp expects a callable, got {type(fn).__name__}")
        self.fn = fn
        self.has_aux = has_aux
        self.config = ("jvp", bool(has_aux))
        self.sig = pipeline.primitive_signature(fn) or signature_of(fn)
        self.param_names = [p.name for p in self.sig.parameters.values()
                            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        self.kwonly_names = [p.name for p in self.sig.parameters.values()
                             if p.kind == p.KEYWORD_ONLY]
        self.cache = {}

    def __call__(self, primals, tangents, kwonly=None, checked=False):
        """``kwonly``: keyword-only arguments (no tangents), e.g. the free variables of a
        generated function being transformed again; ``checked``: the pairs were checked."""
        if not checked:
            primals, tangents = check_pairs(primals, tangents, self.fn)
        values, kw = self._bind(primals, kwonly)
        if isinstance(self.fn, ReverseTransform):
            # jvp(grad(f)): the forward mode of the code grad(f) generated for these kinds
            inner, free = self.fn.generated(values + list(kw.values()))
            return forward_of(inner, self.has_aux)(primals, tangents, {**kw, **free}, True)
        carries = self._carries(values, len(primals))
        gen, free = self.generated(values, carries, kw)
        dots = [rt.densify(t, p) for t, p, c in zip(tangents, primals, carries) if c]
        try:
            result = gen(*values, *dots, **free, **kw)
        except Exception as exc:  # the user's file:line as a note
            pipeline.note_user_line(exc)
            if self.has_aux:
                raise_if_not_a_pair(exc, "jvp", self.fn)
            raise
        if self.has_aux:
            (out, aux), dout = result
            return out, dout, aux
        return result

    def _bind(self, primals, kwonly):
        if not kwonly and not self.kwonly_names and len(primals) == len(self.param_names):
            return list(primals), {}  # every parameter given: nothing to bind
        if len(primals) > len(self.param_names):
            raise TypeError(f"{getattr(self.fn, '__name__', 'f')} takes "
                            f"{len(self.param_names)} positional argument(s), "
                            f"got {len(primals)} primals")
        bound = self.sig.bind(*primals, **(kwonly or {}))
        bound.apply_defaults()
        values = [bound.arguments[n] for n in self.param_names]
        return values, {n: bound.arguments[n] for n in self.kwonly_names}

    @staticmethod
    def _carries(values, nprimals):
        """Which parameters get a tangent: given as primals, with float/complex leaves."""
        return [i < nprimals and (v.dtype.kind in "fc" if type(v) is np.ndarray else
                                  any(map(is_inexact_leaf, tree_flatten(v)[0])))
                for i, v in enumerate(values)]

    def generated(self, values, carries, kw):
        """``(gen, free)``: the JVP function for these kinds and its free-variable values."""
        free = self.free_values()
        key = (tuple(map(kind_of, values)), tuple(carries), tuple(map(kind_of, free.values())),
               tuple(map(kind_of, kw.values())))
        hit = self.cache.get(key)
        if hit is None:
            def make():
                front = self.front_for({**dict(zip(self.param_names, values)), **kw, **free})
                gen, _ = pipeline.compile_function(self.specialised(values, carries, front))
                return gen, self.extra_freevars(front)

            hit = self.cache[key] = self.shared(key, make)
        gen, extra = hit
        if extra:
            free.update((name, fv.load()) for name, fv in extra.items())
        return gen, free

    def specialised(self, values, carries, front=None):
        if front is None:
            front = self.front_for({**dict(zip(self.param_names, values)), **self.free_values()})
        wrt = [n for n, c in zip(self.param_names, carries) if c]
        leaf = {n: len(tree_flatten(v)[0]) == 1 and tree_flatten(v)[0][0] is v
                for n, v in zip(self.param_names, values)}
        return pipeline.forward(front, wrt, leaf, has_aux=self.has_aux)

    def site_ir(self, values, carries, kw):
        """``(ir, freevars)``: the JVP function for these kinds as IR, and the free
        variables its free-variable parameters read (``passes/sites.py``)."""
        if isinstance(self.fn, ReverseTransform):
            inner, free = self.fn.generated(values + list(kw.values()))
            inner_free = self.fn.gen_freevars(values + list(kw.values()))
            func, more = forward_of(inner, self.has_aux).site_ir(
                values, carries, {**kw, **free})
            return func, {**inner_free, **more}
        front = self.front_for({**dict(zip(self.param_names, values)), **kw,
                                **self.free_values()})
        return self.specialised(values, carries, front), dict(front.freevars)


def zero_tangent(tree):
    """The zero tangent of ``tree``: zeros on its float and complex leaves, ``None`` (no
    tangent, JAX's float0) on its integer and boolean leaves."""
    return tree_map(lambda v: rt.zeros_like(v) if is_inexact_leaf(v) else None, tree)


def _leaf_dtype(v):
    return v.dtype if isinstance(v, (np.ndarray, np.generic)) else np.result_type(v)


def _check_tangent_dtype(i, primal, tangent, what):
    """JAX's rule: a float or complex primal's tangent is a float or complex number or
    array; an integer or boolean primal has no tangent space (JAX's ``float0``): its
    tangent is ``None`` (s2s's symbolic zero) or a float0 array (s2s also takes an
    integer or boolean one, which is ignored: it cannot pass for a direction of
    differentiation the way a float can)."""
    if tangent is None:
        return
    pd, td = _leaf_dtype(primal), _leaf_dtype(tangent)
    float0 = td.kind == "V" and td.itemsize == 0
    if pd.kind in "fc" and td.kind in "fc":
        return
    if pd.kind not in "fc" and (float0 or td.kind in "biu"):
        return
    expected = pd if pd.kind in "fc" else "float0"
    if pd.kind == "O":
        raise TypeError(f"{what}: primal {i} is an array of dtype object (Python objects, not "
                        "numbers); convert it with np.asarray(x, dtype=float)")
    raise TypeError(
        f"primal and tangent arguments to {what} do not match; dtypes must be equal, or in "
        f"case of int/bool primal dtype the tangent dtype must be float0. Got primal dtype "
        f"{pd} and so expected tangent dtype {expected}, but got tangent dtype {td} instead "
        f"for primal {i}" + (" (an integer or boolean primal is not differentiated: pass None "
                            "as its tangent, or make the primal a float, e.g. 3.0 instead of "
                            "3)" if pd.kind not in "fc" else ""))


def check_pairs(primals, tangents, fn, what="jvp", dtypes=True):
    """JAX's checks: tuples/lists of equal length, tangents shaped like the primals, of
    matching dtypes (``_check_tangent_dtype``; ``dtypes=False`` skips it).  ``None``
    (s2s's symbolic zero) stands for a leaf's tangent or a whole primal's."""
    for role, v in (("primals", primals), ("tangents", tangents)):
        if not isinstance(v, (tuple, list)):
            raise TypeError(f"{role} passed to {what} must be a tuple or a list, "
                            f"got {type(v).__name__}")
    if len(primals) != len(tangents):
        raise TypeError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    checked = []
    for i, (p, t) in enumerate(zip(primals, tangents)):
        if type(p) is np.ndarray and type(t) is np.ndarray and p.shape == t.shape and \
                p.dtype.kind in "fc" and t.dtype.kind in "fc":
            checked.append(t)  # the common case: an array and its tangent
            continue
        tree = tree_structure(p)
        try:  # None: no tangent for any leaf (a local function's capture takes None)
            parts = [None] * tree.num_leaves if t is None else tree.flatten_up_to(t)
        except ValueError as exc:
            raise TypeError(f"jvp: the tangent of primal {i} does not match its structure: "
                            f"{exc}") from None
        leaves = tree_flatten(p)[0]
        for pl, tl in zip(leaves, parts):
            sub = tree_flatten(tl)[0]
            if tl is not None and not (len(sub) == 1 and sub[0] is tl):
                raise TypeError(f"jvp: the tangent of primal {i} has a container "
                                f"({type(tl).__name__}) where the primal has a leaf")
            if dtypes:
                _check_tangent_dtype(i, pl, tl, what)
            if tl is not None and is_inexact_leaf(pl) and np.shape(tl) != np.shape(pl):
                raise ValueError(f"{what}: primal {i} has shape {np.shape(pl)} but its "
                                 f"tangent has shape {np.shape(tl)}")
        checked.append(tree_unflatten(tree, parts))
    return tuple(primals), tuple(checked)


def forward_of(fun, has_aux):
    fun = transformed_target(fun)
    return memo(fun, ("jvp", bool(has_aux)), lambda: ForwardTransform(fun, has_aux))
