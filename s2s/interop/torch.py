"""``s2s.interop.to_torch``: a numpy function as a PyTorch op with s2s derivatives.

``op = to_torch(f, argnums=None)``; ``op(*args)`` takes CPU tensors (and numpy
arrays, Python numbers, strings) in pytrees of dict/list/tuple/namedtuple and
returns ``f``'s result with tensors as leaves.

* Forward: ``s2s.jit`` of ``f`` on the tensors' memory (``Tensor.numpy()``,
  results by ``torch.from_numpy``: no copies, except of results that alias an
  input or have a layout torch cannot hold).  For each argument signature (the
  dtypes and ndims of the tensors, the types of the numbers) the first call
  decides: if ``s2s.jit`` compiles it, it runs compiled from then on, otherwise
  (an ``S2SError`` from the compiler) it runs ``f`` in Python (``mode="auto"``;
  ``mode="jit"`` raises instead, ``mode="python"`` never compiles).
  ``op.mode_of(*args)`` tells which.
* Backward: a second op, ``V(args..., cts...) = grad of sum_k <f_k, ct_k>``
  (``s2s.grad`` of generated code, compiled by the same rule), whose own
  backward is s2s's VJP of that VJP, and so on: ``torch.autograd.grad(...,
  create_graph=True)``, ``gradgradcheck`` and higher orders run s2s's reverse
  mode over its own reverse sweep, never finite differences or torch.
* Differentiated leaves: the floating-point tensors of the arguments in
  ``argnums`` (an int or a tuple of ints; ``None``, the default: every
  argument).  Integer and boolean tensors and Python numbers are not
  differentiated; a floating-point tensor that requires grad outside
  ``argnums`` is an error, as are complex tensors in ``argnums``, CUDA or
  sparse tensors and keyword-only parameters.  Integer and boolean results are
  non-differentiable outputs.
* ``torch.func.vmap`` (and what is built on it: ``vmap(grad(op))``, ``jacrev``):
  the batch goes through ``s2s.vmap(f)``, one batched call, not a loop.
  ``torch.func.grad``/``vjp`` work (``setup_context`` style);
  forward-mode AD (``torch.func.jvp``, ``jacfwd``) is not supported.
* ``torch.compile``: inside a compiled region the computation is the opaque
  custom op ``s2s_interop::call`` (``torch.library.custom_op``, torch >= 2.4;
  its fake implementation runs the function once on arrays of ones to learn
  the result shapes, which must not depend on values), with its own autograd;
  ``fullgraph=True`` holds once the op has been called with that signature
  (the first call generates code, outside dynamo: one graph break).
"""
from __future__ import annotations


import numpy as np
import torch

from . import kernel as K
from . import trees

_REGISTRY = K.Registry()

_NP_OF = {torch.float64: np.float64, torch.float32: np.float32, torch.float16: np.float16,
          torch.int64: np.int64, torch.int32: np.int32, torch.int16: np.int16,
          torch.int8: np.int8, torch.uint8: np.uint8, torch.bool: np.bool_,
          torch.complex128: np.complex128, torch.complex64: np.complex64}


def _is_leaf(x):
    return isinstance(x, (torch.Tensor, np.ndarray, np.generic, int, float, complex, str,
                          bytes))


def _check(t, what="argument"):
    """Refuse what s2s cannot run on: CUDA/meta tensors, sparse layouts, odd dtypes."""
    if t.device.type not in ("cpu", "meta"):
        raise ValueError(f"s2s.interop.to_torch: {what} is a tensor on {t.device}; s2s ops "
                         "run on CPU tensors (move it with .cpu())")
    if t.layout != torch.strided:
        raise ValueError(f"s2s.interop.to_torch: {what} is a {t.layout} tensor; s2s ops take "
                         "dense (strided) tensors")
    if t.dtype not in _NP_OF:
        raise TypeError(f"s2s.interop.to_torch: {what} has dtype {t.dtype}, which numpy "
                        "cannot hold")


def _to_numpy(t, what="argument"):
    if t.device.type != "cpu":
        raise ValueError(f"s2s.interop.to_torch: {what} is a tensor on {t.device}; s2s ops "
                         "run on CPU tensors (move it with .cpu())")
    if t.layout != torch.strided:
        raise ValueError(f"s2s.interop.to_torch: {what} is a {t.layout} tensor; s2s ops take "
                         "dense (strided) tensors")
    if t.dtype not in _NP_OF:
        raise TypeError(f"s2s.interop.to_torch: {what} has dtype {t.dtype}, which numpy "
                        "cannot hold")
    t = t.detach()
    if t.is_conj():
        t = t.resolve_conj()
    if t.is_neg():
        t = t.resolve_neg()
    return t.numpy()


def _to_tensor(a, inputs):
    a = np.asarray(a)
    if (not a.flags.writeable or any(s < 0 for s in a.strides)
            or any(s % a.itemsize for s in a.strides)
            or any(np.shares_memory(a, x) for x in inputs)):
        a = a.copy()
    return torch.from_numpy(a)


def _eager(kid, tensors):
    kernel = _REGISTRY[kid]
    arrays = [_to_numpy(t) for t in tensors]
    outs, spec = kernel(arrays)
    _remember(kernel, tensors, spec)
    return [_to_tensor(o, arrays) for o in outs]


_SPECS = {}


def _tensor_sig(kernel, tensors):
    return (kernel.key, tuple((t.dtype, t.dim()) for t in tensors))


def _remember(kernel, tensors, spec):
    _SPECS[_tensor_sig(kernel, tensors)] = spec


def _out_spec(kernel, tensors):
    spec = _SPECS.get(_tensor_sig(kernel, tensors))
    if spec is None:  # not run yet (a compiled graph): from the result shapes
        spec = kernel.shapes([tuple(t.shape) for t in tensors],
                             [_NP_OF[t.dtype] for t in tensors])[0]
        _remember(kernel, tensors, spec)
    return spec


# -- the opaque op for torch.compile ---------------------------------------------------

_custom_op = None
if hasattr(torch, "library") and hasattr(torch.library, "custom_op"):  # torch >= 2.4
    @torch.library.custom_op("s2s_interop::call", mutates_args=())
    def _custom_op(tensors: list[torch.Tensor], kernel: int) -> list[torch.Tensor]:
        return _eager(kernel, tensors)

    @_custom_op.register_fake
    def _(tensors, kernel):
        k = _REGISTRY[kernel]
        spec, outs = k.shapes([tuple(t.shape) for t in tensors],
                              [_NP_OF[t.dtype] for t in tensors])
        _remember(k, tensors, spec)
        return [torch.empty(s, dtype=torch.from_numpy(np.zeros(0, d)).dtype) for s, d in outs]


    def _op_setup(ctx, inputs, output):
        tensors, kid = inputs
        ctx.kid = kid
        ctx.save_for_backward(*tensors)

    def _op_backward(ctx, grads):
        cts = _backward(_REGISTRY[ctx.kid], ctx.saved_tensors, tuple(grads),
                        lambda vid, ts: tuple(_custom_op(list(ts), vid)))
        return list(cts), None

    _custom_op.register_autograd(_op_backward, setup_context=_op_setup)


def _compiling():
    comp = getattr(torch, "compiler", None)
    return comp is not None and hasattr(comp, "is_compiling") and comp.is_compiling()


def _run(kid, tensors):
    if _custom_op is not None and _compiling():
        return tuple(_custom_op(list(tensors), kid))
    return tuple(_eager(kid, tensors))


class S2SFunction(torch.autograd.Function):
    """One s2s kernel as an autograd function: ``apply(kernel_id, *tensors)``."""

    @staticmethod
    def forward(kid, *tensors):
        return _run(kid, tensors)

    @staticmethod
    def setup_context(ctx, inputs, output):
        kid, *tensors = inputs
        ctx.kid = kid
        ctx.save_for_backward(*tensors)
        ctx.mark_non_differentiable(*[o for o in output if not o.is_floating_point()])

    @staticmethod
    def backward(ctx, *cts):
        tensors = ctx.saved_tensors
        kernel = _REGISTRY[ctx.kid]
        return (None,) + _backward(kernel, tensors, cts)

    @staticmethod
    def vmap(info, in_dims, kid, *tensors):
        dims = in_dims[1:]
        moved = [t if d is None else t.movedim(d, 0) for t, d in zip(tensors, dims)]
        batched = _REGISTRY[kid].batched([None if d is None else 0 for d in dims])
        outs = S2SFunction.apply(_REGISTRY.id_of(batched), *moved)
        return outs, (0,) * len(outs)


def _apply(kid, tensors):
    return S2SFunction.apply(kid, *tensors)


def _backward(kernel, tensors, cts, apply=_apply):
    """The input cotangents (one per tensor, ``None`` where not differentiated)."""
    family = kernel.family
    diff = family.diff
    if not diff:
        return (None,) * len(tensors)
    spec = _out_spec(kernel, tensors)
    float_outs = tuple(i for i, c in enumerate(cts) if c is not None and c.is_floating_point())
    position = {leaf: j for j, leaf in enumerate(family.arrays)}
    vk = kernel.vjp(spec, float_outs)
    grads = apply(_REGISTRY.id_of(vk), tuple(tensors) + tuple(cts[i] for i in float_outs))
    result = [None] * len(tensors)
    for leaf, g in zip(diff, grads):
        t = tensors[position[leaf]]
        if g.dtype != t.dtype:
            g = g.to(t.dtype)
        if g.shape != t.shape:
            g = g.expand(t.shape)
        result[position[leaf]] = g
    return tuple(result)


def _eager_only(fn):
    """``fn`` runs as Python even inside ``torch.compile`` (dynamo would only record its
    writes to our caches, and make them after the graph's fake run needs them)."""
    comp = getattr(torch, "compiler", None)
    return comp.disable(fn) if comp is not None and hasattr(comp, "disable") else fn


@_eager_only
def _new_family(op, key, consts):
    spec, kinds, diff, _ = key
    family = K.user_family(op.f, spec, list(kinds), diff, op.mode, consts)
    return op._families.setdefault(key, family)


@_eager_only
def _register(kernel):
    return _REGISTRY.id_of(kernel)


class TorchOp(K.FrameworkOp):
    """What ``to_torch`` returns; see the module's docstring."""

    maker = "to_torch"

    def _prepare(self, args, kwargs):
        args = self._args(args, kwargs)
        leaves, spec = trees.flatten(args, _is_leaf)
        kinds, consts, statics, tensors, is_float = [], {}, [], [], []
        for i, leaf in enumerate(leaves):
            if isinstance(leaf, np.ndarray):
                leaf = torch.from_numpy(leaf) if leaf.dtype != object else leaf
            if isinstance(leaf, torch.Tensor):
                _check(leaf, f"leaf {i} of the arguments")
                kinds.append("array")
                tensors.append(leaf)
                is_float.append(leaf.is_floating_point() or leaf.is_complex())
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
        arrays = [i for i, k in enumerate(kinds) if k == "array"]
        for j, i in enumerate(arrays):
            t = tensors[j]
            arg = max(a for a, s in enumerate(starts) if s <= i)
            if i in diff and t.is_complex():
                raise TypeError(f"to_torch: argument {arg} holds a complex tensor; s2s ops "
                                "differentiate real floating-point tensors")
            if i not in diff and t.requires_grad:
                raise ValueError(
                    f"to_torch: argument {arg} of {self.__name__} holds a tensor that "
                    f"requires grad but is not differentiated (argnums={self.argnums!r}); "
                    "add it to argnums or pass it .detach()ed")
        key = (spec, tuple(kinds), diff, tuple(sorted(consts.items())))
        family = self._families.get(key)
        if family is None:  # generates code: outside dynamo's tracing (a graph break, once)
            family = _new_family(self, key, consts)
        return K.Kernel(family, statics), tensors

    def __call__(self, *args, **kwargs):
        kernel, tensors = self._prepare(args, kwargs)
        kid = _REGISTRY.known(kernel)
        if kid is None:
            kid = _register(kernel)
        if _custom_op is not None and _compiling():  # the opaque op, its own autograd
            outs = _custom_op(list(tensors), kid)
        else:
            outs = S2SFunction.apply(kid, *tensors)
        spec = _out_spec(kernel, tensors)
        return trees.unflatten(spec, outs)

    def mode_of(self, *args, **kwargs):
        """``"jit"`` or ``"python"``: how ``f`` runs for these arguments' signature
        (``None`` before the first call with it)."""
        kernel, tensors = self._prepare(args, kwargs)
        return kernel.mode_of([_to_numpy(t) for t in tensors])


def to_torch(f, argnums=None, *, mode="auto"):
    """``f`` (a numpy function) as a PyTorch op whose forward is ``s2s.jit(f)`` and whose
    backward is s2s's compiled VJP; see ``s2s.interop.torch``."""
    return TorchOp(f, argnums, mode)
