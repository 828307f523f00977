"""``s2s.interop.to_jax``: a numpy function as a JAX function with s2s derivatives.

``op = to_jax(f, argnums=None)``; ``op(*args)`` takes JAX (or numpy) arrays and
Python numbers in pytrees of dict/list/tuple/namedtuple and returns ``f``'s
result with JAX arrays as leaves.

* The computation is a ``jax.pure_callback`` (so ``op`` works under
  ``jax.jit``, and on the host: the arrays reach ``f`` as numpy arrays, which
  ``np.asarray`` gives without a copy on the CPU).  It runs ``s2s.jit(f)``, or
  ``f`` in Python for an argument signature ``s2s.jit`` cannot compile (decided
  on the first call with that signature; ``mode="jit"`` raises instead,
  ``mode="python"`` never compiles; ``op.mode_of(*args)`` tells which).
  JAX needs the result shapes before the values exist: ``op`` runs ``f`` once
  per argument shape on arrays of ones (integer arrays: zeros) to learn them,
  so result shapes must not depend on the values in the arrays.
* Reverse mode (``jax.grad``, ``vjp``, ``jacrev``, ``hessian`` via ``jacrev`` of
  ``jacrev``): ``jax.custom_vjp`` whose backward is another such op, s2s's VJP
  ``V(args..., cts...) = grad of sum_k <f_k, ct_k>``, itself a ``custom_vjp``
  whose backward is s2s's VJP of the VJP, and so on; ``check_grads(...,
  modes=["rev"], order=2)`` holds.  Forward mode (``jax.jvp``, ``jacfwd``,
  ``check_grads`` with ``"fwd"``) is not supported: JAX refuses forward mode of
  a ``custom_vjp`` function (a ``custom_jvp`` rule would give forward mode but
  no reverse mode, as JAX cannot transpose a callback).
* ``jax.vmap``: ``jax.custom_batching.custom_vmap`` sends the whole batch to
  ``s2s.vmap(f)`` (one callback, batched code), for the op and every
  derivative, nested vmaps included.
* Differentiated leaves: the floating-point arrays of the arguments in
  ``argnums`` (``None``, the default: every argument).  Differentiating an
  argument outside ``argnums`` raises; integer arrays and Python numbers get
  no cotangent (Python numbers are static: each distinct value is a separate
  trace under ``jax.jit``, the compiled s2s code is shared).  Enable
  ``jax_enable_x64`` for float64.
"""
from __future__ import annotations


import jax
import jax.numpy as jnp
import numpy as np
from jax.custom_batching import custom_vmap

from . import kernel as K
from . import trees

_OPS = K.LRU(512)


def _is_leaf(x):
    return isinstance(x, (jax.Array, np.ndarray, np.generic, int, float, complex, str, bytes)) \
        or hasattr(x, "aval")


def _aval(x):
    return x.shape, np.dtype(x.dtype)


def _host(kernel, expected):
    """The callback: numpy arrays in, the kernel's outputs (with the dtypes JAX expects)."""
    def call(*arrays):
        outs, _ = kernel([np.asarray(a) for a in arrays])
        result = []
        for o, e in zip(outs, expected):
            if o.shape != e.shape:
                raise ValueError(
                    f"s2s.interop.to_jax: {kernel.family.name} returned an array of shape "
                    f"{o.shape} where running it on arrays of ones gave {e.shape}; result "
                    "shapes must not depend on the values of the arguments")
            result.append(np.asarray(o, dtype=e.dtype))
        return tuple(result)
    return call


def _call_fn(kernel):
    """``kernel`` as a JAX function of its array leaves (flat tuple in, flat tuple out),
    batched by ``s2s.vmap`` under ``jax.vmap``."""
    def make():
        @custom_vmap
        def call(*xs):
            _, outs = kernel.shapes([x.shape for x in xs], [np.dtype(x.dtype) for x in xs])
            expected = tuple(jax.ShapeDtypeStruct(s, jax.dtypes.canonicalize_dtype(d))
                             for s, d in outs)
            return jax.pure_callback(_host(kernel, expected), expected, *xs)

        @call.def_vmap
        def rule(axis_size, in_batched, *xs):
            axes = [0 if b else None for b in in_batched]
            outs = _call_fn(kernel.batched(axes))(*xs)
            return outs, tuple(True for _ in outs)

        return call
    return _OPS.get_or_make(("call", kernel.key), make)


def _op_fn(kernel):
    """``kernel`` as a differentiable JAX function of its array leaves: ``custom_vjp``
    whose backward is the op of ``kernel``'s VJP."""
    return _OPS.get_or_make(("op", kernel.key), lambda: _make_op(kernel))


def _make_op(kernel):
    family = kernel.family
    arrays = family.arrays
    position = {leaf: j for j, leaf in enumerate(arrays)}
    diff = {position[d] for d in family.diff}
    call = _call_fn(kernel)

    @jax.custom_vjp
    def op(*xs):
        return call(*xs)

    def fwd(*xs):
        values = []
        for j, x in enumerate(xs):
            if x.perturbed and j not in diff and jnp.issubdtype(x.value.dtype, jnp.inexact):
                raise ValueError(
                    f"s2s.interop.to_jax: {family.name} is differentiated with respect to "
                    "an argument outside argnums; add it to argnums")
            values.append(x.value)
        return op(*values), tuple(values)  # op, not call: differentiable again (higher order)

    def bwd(res, cts):
        outs = kernel.shapes([r.shape for r in res], [np.dtype(r.dtype) for r in res])[1]
        spec = kernel.shapes([r.shape for r in res], [np.dtype(r.dtype) for r in res])[0]
        float_outs = tuple(i for i, (_, d) in enumerate(outs) if np.issubdtype(d, np.floating))
        grads = [None] * len(res)
        if family.diff and float_outs:
            cts_f = []
            for i in float_outs:
                c = cts[i]
                if type(c).__name__ == "SymbolicZero" or c is None:
                    c = jnp.zeros(outs[i][0], jax.dtypes.canonicalize_dtype(outs[i][1]))
                cts_f.append(c)
            vk = kernel.vjp(spec, float_outs)
            gs = _op_fn(vk)(*res, *cts_f)
            for leaf, g in zip(family.diff, gs):
                r = res[position[leaf]]
                grads[position[leaf]] = jnp.broadcast_to(g.astype(r.dtype), r.shape)
        for j, r in enumerate(res):
            if grads[j] is None and not jnp.issubdtype(r.dtype, jnp.inexact):
                grads[j] = np.zeros(r.shape, jax.dtypes.float0)
            elif grads[j] is None:
                grads[j] = jnp.zeros(r.shape, r.dtype)
        return tuple(grads)

    op.defvjp(fwd, bwd, symbolic_zeros=True)
    return op


class JaxOp(K.FrameworkOp):
    """What ``to_jax`` returns; see the module's docstring."""

    maker = "to_jax"

    def _prepare(self, args, kwargs):
        args = self._args(args, kwargs)
        leaves, spec = trees.flatten(args, _is_leaf)
        kinds, consts, statics, arrays, is_float = [], {}, [], [], []
        for i, leaf in enumerate(leaves):
            if isinstance(leaf, np.ndarray) or isinstance(leaf, jax.Array) or hasattr(leaf, "aval"):
                dtype = np.dtype(leaf.dtype)
                if dtype == object:
                    raise TypeError(f"to_jax: leaf {i} of the arguments is an object array")
                kinds.append("array")
                arrays.append(leaf)
                is_float.append(np.issubdtype(dtype, np.inexact))
                continue
            if isinstance(leaf, np.generic):
                leaf = leaf.item()
            kind = K.leaf_kind(leaf)
            kinds.append(kind)
            is_float.append(False)
            if kind == "const":
                consts[i] = leaf
            else:
                statics.append(leaf)
        diff, chosen, starts = K.diff_leaves(spec, self.argnums, is_float)
        for j, i in enumerate(k for k, kind in enumerate(kinds) if kind == "array"):
            if i in diff and np.issubdtype(np.dtype(arrays[j].dtype), np.complexfloating):
                arg = max(a for a, s in enumerate(starts) if s <= i)
                raise TypeError(f"to_jax: argument {arg} holds a complex array; s2s ops "
                                "differentiate real floating-point arrays")
        key = (spec, tuple(kinds), diff, tuple(sorted(consts.items())))
        family = self._families.get(key)
        if family is None:
            family = self._families[key] = K.user_family(self.f, spec, kinds, diff, self.mode,
                                                         consts)
        return K.Kernel(family, statics), arrays

    def __call__(self, *args, **kwargs):
        kernel, arrays = self._prepare(args, kwargs)
        arrays = [jnp.asarray(a) for a in arrays]
        outs = _op_fn(kernel)(*arrays)
        spec = kernel.shapes([a.shape for a in arrays], [np.dtype(a.dtype) for a in arrays])[0]
        return trees.unflatten(spec, list(outs))

    def mode_of(self, *args, **kwargs):
        """``"jit"`` or ``"python"``: how ``f`` runs for these (concrete) arguments'
        signature (``None`` before the first call with it)."""
        kernel, arrays = self._prepare(args, kwargs)
        return kernel.mode_of([np.asarray(a) for a in arrays])


def to_jax(f, argnums=None, *, mode="auto"):
    """``f`` (a numpy function) as a JAX function: ``pure_callback`` of ``s2s.jit(f)``,
    reverse mode by s2s's VJPs, ``vmap`` by ``s2s.vmap``; see ``s2s.interop.jax``."""
    return JaxOp(f, argnums, mode)
