"""``jacfwd``, ``jacrev`` and ``hessian`` (JAX's semantics and output layout).

``jacfwd`` and ``jacrev`` push the standard basis through ``jvp`` and
``vjp``, one vector at a time, and lay the Jacobian out as JAX does: for
each output leaf, ``out.shape + in.shape`` per input leaf, nested
output-tree-of-input-trees.
"""
from __future__ import annotations

from typing import Sequence, Union

import numpy as np

import s2s_runtime as rt
from s2s_runtime.tree import tree_flatten, tree_map, tree_structure, tree_unflatten

from ..passes.partials import readable
from ..core.specialise import (normalise_argnums, check_argnums, check_argnums_range,
                               check_callable)
from ..core.reverse import cotangents_only, reverse_transform
from ..core.varargs import adapter, wants_adapter
from ..core.forward import forward_of, zero_tangent
from .tangents import jvp
from .pullbacks import vjp
from ..core.dtype_checks import check_inputs, check_outputs
from .batched_jacobians import hessian_blocks_batched, jacfwd_batched, jacrev_batched
from ..ir.kinds import is_inexact_leaf
from ..core.jacobian_function import JacobianFunction
from ..passes.callables import same_arguments


def _basis(leaves, dtype_of):
    """Yield (leaf index, flat entry, tangent leaves) for every entry of every inexact leaf."""
    zeros = [zero_tangent(v) for v in leaves]
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


def jacfwd(fun, argnums: Union[int, Sequence[int]] = 0, has_aux=False, holomorphic=False):
    """The Jacobian of ``fun`` by forward mode, one JVP per input entry (JAX's ``jacfwd``;
    ``holomorphic``: see ``core.dtype_checks``)."""
    check_callable(fun, "jacfwd")
    fun = readable(fun)
    argnums = check_argnums(argnums, "jacfwd")
    check_argnums_range(getattr(fun, "_s2s_transform_target", fun), argnums, "jacfwd")

    def jacfun(*args):
        nums, single = normalise_argnums(argnums, len(args), getattr(fun, "__name__", "f"))
        check_inputs("jacfwd", holomorphic, args, nums, getattr(fun, "__name__", None))
        if not has_aux and not holomorphic:  # one batched JVP over the whole basis
            batched = jacfwd_batched(fun, args, nums, single)  # (s2s/api/batched_jacobians.py)
            if batched is not None:
                return batched
        tangents = [zero_tangent(a) for a in args]
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
        check_outputs("jacfwd", holomorphic, out)
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

    return _compiled_as(jacfun, "jacfwd", fun, argnums, has_aux, holomorphic)


def _compiled_as(jacfun, what, fun, argnums, has_aux, holomorphic):
    """``jacfun`` as the object ``jit`` compiles, ``pickle`` sends and other transforms
    read through the protocol (``s2s/core/jacobian_function.py``)."""
    make = {"jacfwd": jacfwd, "jacrev": jacrev, "hessian": hessian}[what]
    out = JacobianFunction(jacfun, what, make, fun, argnums, has_aux, holomorphic)
    # what vmap(jacfwd(f)) checks first: JAX's dtype rules (the dtypes are the examples')
    label = "jacfwd" if what == "hessian" else what
    out._s2s_check_args = lambda args: check_inputs(
        label, holomorphic, args, normalise_argnums(argnums, len(args), getattr(
            fun, "__name__", "f"))[0], getattr(fun, "__name__", None))
    return out


def jacrev(fun, argnums: Union[int, Sequence[int]] = 0, has_aux=False, holomorphic=False):
    """The Jacobian of ``fun`` by reverse mode, one VJP per output entry (JAX's ``jacrev``;
    ``holomorphic``: see ``core.dtype_checks``)."""
    check_callable(fun, "jacrev")
    fun = readable(fun)
    argnums = check_argnums(argnums, "jacrev")
    check_argnums_range(getattr(fun, "_s2s_transform_target", fun), argnums, "jacrev")

    def jacfun(*args):
        nums, single = normalise_argnums(argnums, len(args), getattr(fun, "__name__", "f"))
        check_inputs("jacrev", holomorphic, args, nums, getattr(fun, "__name__", None))
        if not has_aux:  # one batched VJP over the whole basis (s2s/api/batched_jacobians.py)
            batched = jacrev_batched(fun, args, nums, single,
                                     lambda out: check_outputs("jacrev", holomorphic, out))
            if batched is not None:
                return batched
        res = vjp(fun, *args, has_aux=has_aux)
        out, pull = res[0], res[1]
        check_outputs("jacrev", holomorphic, out)
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

    return _compiled_as(jacfun, "jacrev", fun, argnums, has_aux, holomorphic)


def hessian(fun, argnums: Union[int, Sequence[int]] = 0, has_aux=False, holomorphic=False):
    """The Hessian of ``fun``: JAX's ``jacfwd(jacrev(fun))``, for any output.

    Forward mode over the generated reverse-mode code: the vjp function of
    ``fun`` with its cotangents output only, ``(x, ct) -> J(x)^T ct``
    (``core.reverse.cotangents_only``: the value output and what only it needs
    are not pushed forward), is pushed forward along each
    input basis vector with each output basis vector as ``ct``, giving
    ``d/dx_j (J^T e_o)_i = d^2 fun_o / dx_i dx_j``.  Layout as JAX: for each
    output leaf, ``out.shape + in_i.shape + in_j.shape``, nested
    ``argnums``-tuple of input trees inside ``argnums``-tuple of input trees
    (tuples only for tuple ``argnums``).  With ``has_aux``: ``(H, aux)``.  ``holomorphic``:
    JAX's checks of ``jacfwd(jacrev(fun))`` (``core.dtype_checks``).
    """
    check_callable(fun, "hessian")
    fun = readable(fun)
    argnums = check_argnums(argnums, "hessian")
    check_argnums_range(getattr(fun, "_s2s_transform_target", fun), argnums, "hessian")

    def hessfun(*args):
        nums, single = normalise_argnums(argnums, len(args), getattr(fun, "__name__", "f"))
        check_inputs("jacfwd", holomorphic, args, nums, getattr(fun, "__name__", None))
        f = adapter(fun, len(args), ()) if wants_adapter(fun) else fun  # *args: core.varargs
        transform = reverse_transform(f, nums, has_aux, False, "vjp")
        values = transform._bind(args, {})
        gen, free = transform.generated(values)
        n = transform.n_positional
        kwonly = dict(zip(transform.kwonly_names, values[n:]))
        values = values[:n]
        result = fun(*args)
        if has_aux and not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise TypeError(f"hessian(..., has_aux=True) requires "
                            f"{getattr(fun, '__name__', 'the function')} to return a pair "
                            f"(output, aux), e.g. `return loss, aux`; it returned a "
                            f"{type(result).__name__}")
        out, aux = result if has_aux else (result, None)
        check_outputs("jacrev", holomorphic, out)
        out_leaves, out_tree = tree_flatten(out)
        ins = [tree_flatten(args[i]) for i in nums]  # (leaves, tree) per differentiated arg
        push = forward_of(cotangents_only(gen), False)  # the value's tangent is not wanted
        zero_args = [zero_tangent(v) for v in values]
        per_out = []
        # one batched call over every (output, input) basis pair (s2s/api/batched_jacobians.py)
        batched = hessian_blocks_batched(push, values, free, kwonly, out_leaves, out_tree,
                                         ins, nums)
        for o, ol in enumerate(out_leaves):
            # blocks[a][i][b][j]: out.shape + in(a, i).shape + in(b, j).shape
            blocks = batched[o] if batched is not None else [[[[np.zeros(np.shape(ol) + np.shape(vi) + np.shape(vj),
                                  dtype=np.result_type(_dtype(ol), _dtype(vi), _dtype(vj)))
                         for vj in ins[b][0]] for b in range(len(nums))]
                       for vi in ins[a][0]] for a in range(len(nums))]
            for _, k, parts in _basis([ol], _dtype):
                ct_leaves = [rt.zeros_like(x) for x in out_leaves]
                ct_leaves[o] = parts[0]
                ct = tree_unflatten(out_tree, ct_leaves)
                for b, n_b in enumerate(nums):
                    for j, l, t_parts in _basis(ins[b][0], _dtype):
                        tangents = list(zero_args)
                        tangents[n_b] = tree_unflatten(ins[b][1], t_parts)
                        _, dres = push((*values, ct), (*tangents, tree_map(rt.zeros_like, ct)),
                                       {**free, **kwonly})
                        dcts = dres
                        for a in range(len(nums)):
                            for i, g in enumerate(tree_flatten(dcts[a])[0]):
                                block = blocks[a][i][b][j]
                                lead = block.reshape((-1,) + np.shape(block)[np.ndim(ol):])
                                col = lead[k:k + 1].reshape(np.shape(g) + (-1,))  # a view
                                col[..., l] = g
            trees = []
            for a in range(len(nums)):
                inner = [tuple(tree_unflatten(ins[b][1], blocks[a][i][b])
                               for b in range(len(nums))) for i in range(len(ins[a][0]))]
                inner = [t[0] if single else t for t in inner]
                trees.append(tree_unflatten(ins[a][1], inner))
            per_out.append(trees[0] if single else tuple(trees))
        hess = tree_unflatten(out_tree, per_out)
        return (hess, aux) if has_aux else hess

    return _compiled_as(hessfun, "hessian", fun, argnums, has_aux, holomorphic)



for _factory in (jacfwd, jacrev, hessian):  # jacfwd(f)(x) in code: made while lowering
    _factory._s2s_static_factory = True
    _factory._s2s_closure_arguments = same_arguments  # of a local function: passes/callables
del _factory
