"""``jit`` and ``vmap`` composed (issue 8).

``jit(vmap(f, in_axes, out_axes))`` compiles the batched program ``vmap`` makes for
the argument kinds (``Vmapped.site_ir``: the mapped axes moved to the front, the
batched code, the result's batch axis moved to ``out_axes``) with the LLVM backend,
whose table also lowers the batching helpers (``backend/llvm/batching/``); a
reduction over every per-example axis (``fn(x, axis=rt.batch_axes(x))``) becomes one
call of ``reduce_per_example(fn)`` (``per_example_forms``, which ``jit`` applies to any
code holding batched code), and its cotangent ``rt.sum_vjp(g, x,
rt.batch_axes(x))`` one of ``sum_vjp_per_example``; the tapes of batched derivative
code (``vmap(grad(f))``, ``vmap(vjp_fun)``) are written as plain pushes and pops
(``jit_tapes.native_tapes``) so that they become native stacks.  Batched products
compile as einsum loop nests (``backend/llvm/batching/contractions.py``), batched writes and
gathers as loops over the examples (``backend/llvm/batching/indexing.py``).  The result
is one native function over the whole batch.  A helper or construct outside the compiled subset raises the jit's
``UnsupportedSyntaxError`` naming it (with the line); it never falls back to Python.

``vmap(jit(f))`` is ``jit(vmap(f))`` (same ``in_axes``/``out_axes``, same
``boundscheck``/``cache``), so the batched function stays native.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace

import s2s_runtime as rt

from ..errors import UnsupportedSyntaxError
from ..ir import nodes as ir
from ..batch.jit_tapes import native_tapes

_REDUCTIONS = None


def _reductions():
    global _REDUCTIONS
    if _REDUCTIONS is None:
        import numpy as np
        _REDUCTIONS = {np.sum, np.prod, np.mean, np.max, np.min, np.amax, np.amin}
    return _REDUCTIONS


def jit_signature(vmapped):
    """The signature ``jit`` binds arguments with: the mapped function's."""
    from .reverse import ReverseTransform
    from .specialise import signature_of
    fn = vmapped.fn
    jit_sig = getattr(fn, "_s2s_jit_signature", None)  # a Jacobian function: its fun's
    if jit_sig is not None:
        return jit_sig()
    return fn.sig if isinstance(fn, ReverseTransform) else signature_of(fn)


def jit_ir(vmapped, args):
    """``(ir function, free values loader)`` of ``vmapped`` for ``args``, for ``jit``."""
    from .jit import freevar_loader
    axes = vmapped.in_axes
    if isinstance(axes, (tuple, list)) and len(axes) != len(args):
        raise UnsupportedSyntaxError(
            f"jit(vmap(f)): in_axes has {len(axes)} entries and {vmapped.__name__} takes "
            f"{len(args)} arguments (jit binds defaults and keyword arguments to the "
            "parameters: give in_axes one entry per parameter)")
    from ..backend.llvm.driver.compile import lowers
    from .pipeline import helper_code
    from ..backend.llvm.ops.host_calls import compiled_natively
    from ..passes.per_example_loops import per_example_loops
    func, freevars = vmapped.site_ir(list(args))
    # calls once per example as loops (before the helpers they call are read as code)
    func = per_example_loops(func, compiled_natively)
    func = helper_code(func, lowers)  # helpers without a lowering, as code: their
    # reductions over batch_axes(x) then take the per-example forms below
    from ..backend.llvm.passes.tape_pushes import plain_pushes
    func = plain_pushes(func)  # forward-over-reverse tapes: plain pushes native_tapes finds
    func = per_example_forms(func)
    func = replace(func, body=native_tapes(func.body))
    names = [p.var.name for p in func.params if not p.kwonly][:len(args)]
    freevars = {**_generated_free(vmapped, args, func, freevars), **freevars}
    return func, freevar_loader(func, freevars, names)


class _GeneratedFree:
    """A free variable of the code a transform generated (``vmap(grad(f))``: ``f``'s
    globals), read again at every call as the transform reads it."""

    def __init__(self, transform, example, name):
        self.transform, self.example, self.name = transform, example, name

    def load(self):
        fn = self.transform
        return fn.generated(fn._bind(self.example, {}))[1][self.name]


def _generated_free(vmapped, args, func, known):
    from .specialise import Specialising
    if not isinstance(vmapped.fn, Specialising):
        return {}
    missing = [p.var.name for p in func.params[len(args):] if p.var.name not in known]
    if not missing:
        return {}
    values, flags, _ = vmapped.prepare(list(args))
    example = vmapped._example(values, flags)
    return {name: _GeneratedFree(vmapped.fn, example, name) for name in missing}


#: helpers whose argument at this position is a constant pytree of axes (tensordot's)
_AXES_ARG = {rt.batch_spec: 5, rt.batch_bilinear_vjp: 8}


def _constant_axes(body):
    """``body`` with the axes argument of batched products given as a tuple literal
    (``axes=([1, 2], [0, 1])``, built by ``make_list``/``make_tuple`` of constants into
    a name assigned once) replaced by that constant, which the backend reads."""
    from s2s_runtime import build
    makers = {build.make_tuple, rt.make_tuple, rt.make_list}
    defs = Counter(v.name for s in ir.walk(body) for v in ir.stmt_defs(s))
    known = {}
    for s in ir.walk(body):
        if isinstance(s, ir.Assign) and isinstance(s.value, ir.Call) and \
                s.value.fn in makers and not s.value.kwargs and defs[s.target.name] == 1:
            items = [a.value if isinstance(a, ir.Const) else known.get(getattr(a, "name", None))
                     for a in s.value.args]
            if all(i is not None for i in items):
                known[s.target.name] = tuple(items)

    def fold(s):
        call = getattr(s, "value", None)
        fn = call.fn if isinstance(call, ir.Call) else None
        k = _AXES_ARG.get(fn) if fn in (rt.batch_spec, rt.batch_bilinear_vjp) else None
        if k is None or len(call.args) <= k or not isinstance(call.args[k], ir.Var) or \
                call.args[k].name not in known:
            return s
        args = call.args[:k] + (ir.Const(known[call.args[k].name]),) + call.args[k + 1:]
        return replace(s, value=replace(call, args=args))

    return ir.map_stmts(body, fold)


def _axes_of(body):
    """``{name: the value x}`` for every ``name = rt.batch_axes(x)``, and ``{(name, 'T'):
    x}`` for every ``name = rt.batch_transpose_axes(x, None)`` (each example reversed);
    a copy ``other = name`` of such a name assigned once (an inlined helper's parameter)
    is such a name too."""
    out = {}
    defs = Counter(v.name for s in ir.walk(body) for v in ir.stmt_defs(s))
    for s in ir.walk(body):
        if isinstance(s, ir.Assign) and isinstance(s.value, ir.Var) and \
                defs[s.target.name] == 1 and defs[s.value.name] == 1:
            for key in (s.value.name, (s.value.name, "T")):
                if key in out:
                    out[s.target.name if key == s.value.name else (s.target.name, "T")] = \
                        out[key]
        if isinstance(s, ir.Assign) and isinstance(s.value, ir.Call):
            args = s.value.args
            if s.value.fn is rt.batch_axes:
                out[s.target.name] = args[0]
            elif s.value.fn is rt.batch_transpose_axes and (
                    len(args) == 1 or len(args) == 2 and args[1] == ir.Const(None)):
                out[(s.target.name, "T")] = args[0]
    return out


def per_example_forms(func: ir.Function) -> ir.Function:
    """``func`` with batched code's per-example reductions in the forms the backend
    compiles (``fn(x, axis=batch_axes(x))`` and their cotangents, transposes of every
    example, constant axes of batched products): batched code met anywhere in compiled
    code (``jit(vmap(f))``, and ``jit(grad(vmap(f)))`` whose gradient code holds it)."""
    body = _constant_axes(func.body)
    return replace(func, body=tuple(_per_example_reductions(body, _axes_of(body))))


def _cotangents(sum_vjp_per_example):
    """``(helper, position of x, the defaults after the axis, per-example form)`` of the
    reductions' cotangents ``helper(..., x, axis=batch_axes(x), keepdims=False, ...)``."""
    from ..backend.llvm.batching.per_example import max_vjp_per_example, mean_vjp_per_example
    return ((rt.sum_vjp, 1, (False, True), sum_vjp_per_example),
            (rt.mean_vjp, 1, (False, True), mean_vjp_per_example),
            (rt.max_vjp, 2, (False, None, True), max_vjp_per_example))


def _per_example_reductions(body, axes_of):
    from ..backend.llvm.batching.per_example import reduce_per_example, sum_vjp_per_example
    from ..backend.llvm.batching.axes import transpose_per_example
    import numpy as np
    out = []
    for s in body:
        if isinstance(s, ir.Assign) and isinstance(s.value, ir.Call):
            call = s.value
            for fn, x_at, rest, per_example in _cotangents(sum_vjp_per_example):
                if call.fn is fn and not call.kwargs and len(call.args) > x_at + 1 and \
                        all(getattr(a, "value", None) is d for a, d in
                            zip(call.args[x_at + 2:], rest)) and \
                        isinstance(call.args[x_at + 1], ir.Var) and \
                        axes_of.get(call.args[x_at + 1].name) == call.args[x_at]:
                    s = replace(s, value=ir.Call(per_example, call.args[:x_at + 1]))
            kwargs = dict(call.kwargs)
            for k, default in (("keepdims", False), ("where", True)):
                if getattr(kwargs.get(k), "value", default) is default:
                    kwargs.pop(k, None)  # the default
            axis = kwargs.get("axis") if len(kwargs) == 1 and \
                len(call.args) == 1 else (call.args[1] if len(call.args) == 2 and
                                          not kwargs else None)
            perm = (call.args[1] if len(call.args) == 2 and not call.kwargs else
                    dict(call.kwargs).get("axes") if len(call.args) == 1 and
                    len(call.kwargs) == 1 else None)
            if call.fn is np.transpose and isinstance(perm, ir.Var) and \
                    axes_of.get((perm.name, "T")) == call.args[0]:
                s = replace(s, value=ir.Call(transpose_per_example, call.args[:1]))
            if call.fn is rt.transpose_vjp and len(call.args) == 3 and not call.kwargs and \
                    isinstance(call.args[2], ir.Var) and \
                    axes_of.get((call.args[2].name, "T")) == call.args[1]:
                s = replace(s, value=ir.Call(transpose_per_example, call.args[:2]))
            if call.fn in _reductions() and isinstance(axis, ir.Var) and \
                    axis.name in axes_of:
                like = axes_of[axis.name]  # fn(y, axis=batch_axes(x)): x's rank checked
                s = replace(s, value=ir.Call(reduce_per_example(call.fn), call.args[:1] + (
                    () if like == call.args[0] else (like,))))
        for field in ("body", "orelse", "test_body", "finalbody"):
            if isinstance(getattr(s, field, None), tuple):
                s = replace(s, **{field: tuple(_per_example_reductions(getattr(s, field),
                                                                       axes_of))})
        out.append(s)
    return out


def vmap_of_jitted(vmapped, args, kwargs):
    """``vmap(jit(f))(*args, **kwargs)``: the jit of ``vmap(f)`` (kept on the Vmapped, per
    the axes of the bound arguments: ``in_axes`` for those passed by position, 0 for
    those passed by keyword, None for defaults -- as ``vmap`` maps them)."""
    from .specialise import memo
    from .jit import Jitted
    from .vmap import Vmapped
    jitted = vmapped.fn
    bound = jitted.sig.bind(*args, **kwargs)
    if bound.kwargs:
        raise UnsupportedSyntaxError("vmap(jit(f)) with keyword-only or ** arguments")
    given = vmapped._arg_axes(args)
    bound.apply_defaults()
    axes = tuple(given) + tuple(0 if name in kwargs else None
                                for name in list(bound.arguments)[len(args):])
    if len(set(map(repr, axes))) == 1 and not isinstance(vmapped.in_axes, (tuple, list)):
        axes = vmapped.in_axes
    key = ("jit", repr(axes), repr(vmapped.out_axes), jitted.boundscheck, bool(jitted.cache))
    inner = memo(vmapped, key, lambda: Jitted(
        Vmapped(jitted.fn, axes, vmapped.out_axes, vmapped.fallback),
        boundscheck=jitted.boundscheck, cache=jitted.cache))
    return inner(*bound.args)
