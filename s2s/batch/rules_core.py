"""Batching rules by family: elementwise, reductions, passthrough, queries, containers.

The batch is axis 0 of every batched operand (``s2s_runtime.batching``).

* **elementwise** (ufuncs, operators, ``math`` functions, ``np.where``,
  ``np.clip``...): ``f(x_1, ..., x_k)`` per example is ``f`` of the batched
  operands once each batched operand is aligned (``rt.batch_align``: size-1
  axes after the batch axis) against every other operand, so numpy's
  right-aligned broadcasting pairs the per-example axes; ``math`` functions
  become their numpy ufuncs (they take arrays).
* **reductions and axis-taking functions**: ``f(a, axis=k)`` per example is
  ``f(a, axis=k + 1)`` (negative axes unchanged); ``axis=None`` means every
  per-example axis (``rt.batch_axes``) or, for functions that flatten
  (``cumsum``, ``argmax``), the flattened examples (``rt.batch_flat``).  The
  other array operands that must match ``a`` (``where=``, the cotangent and
  primal of a VJP helper) are broadcast over the batch when unbatched
  (``rt.batch_view``).
* **passthrough**: functions that already act on the trailing axes and keep
  axis 0 (``zeros_like``, stacked ``np.linalg`` functions...).
* **queries** (``np.shape``, ``len``...): the per-example answer, unbatched.
* ``per_example_helper(fn, *names)``: a rule that hands the call to a run-time helper
  ``fn`` that works example by example (``rules_python``, ``rules_rank``).
"""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np

import s2s_runtime as rt
from s2s_runtime.batching import index_constant
from s2s_runtime import build

from ..ir import nodes as ir
from ..rules.registry import identity_primitives, result_check
from ..rules.special import ELEMENTWISE as SPECIAL_ELEMENTWISE
from ..rules.special import MATH_ELEMENTWISE as SPECIAL_MATH
from .table import defbatch

_MATH_TO_NP = {getattr(math, n): getattr(np, m) for n, m in (
    ("sin", "sin"), ("cos", "cos"), ("tan", "tan"), ("asin", "arcsin"), ("acos", "arccos"),
    ("atan", "arctan"), ("sinh", "sinh"), ("cosh", "cosh"), ("tanh", "tanh"),
    ("asinh", "arcsinh"), ("acosh", "arccosh"), ("atanh", "arctanh"), ("exp", "exp"),
    ("expm1", "expm1"), ("log1p", "log1p"), ("log2", "log2"), ("log10", "log10"),
    ("sqrt", "sqrt"), ("fabs", "fabs"), ("atan2", "arctan2"), ("hypot", "hypot"),
    ("pow", "power"), ("floor", "floor"), ("ceil", "ceil"), ("trunc", "trunc"),
    ("isnan", "isnan"), ("isinf", "isinf"), ("isfinite", "isfinite"),
    ("degrees", "degrees"), ("radians", "radians"), ("copysign", "copysign"),
    ("fmod", "fmod"), ("modf", "modf"), ("frexp", "frexp"), ("ldexp", "ldexp"),
    ("nextafter", "nextafter"))}
# math.remainder (IEEE: the quotient rounded half to even) has no numpy ufunc: numpy Python
_MATH_TO_NP[math.remainder] = rt.batch_remainder
_MATH_TO_NP.update({getattr(math, n): getattr(np, n) for n in ("cbrt", "exp2")
                    if hasattr(math, n)})  # Python >= 3.11
_MATH_TO_NP.update({builtins.float: np.float64, builtins.int: np.int64,
                    builtins.complex: np.complex128, builtins.bool: np.bool_,
                    builtins.abs: np.absolute, builtins.pow: np.power,
                    operator.not_: np.logical_not, builtins.round: np.round,
                    builtins.divmod: np.divmod})



def _is_scalar_const(a) -> bool:
    return isinstance(a, ir.Const) and np.ndim(a.value) == 0 and not isinstance(a.value, str)


def aligned_operands(site, operands):
    """``operands`` with each batched one aligned against every other operand (not
    against numbers, or names known to hold one number per example: ``scalars.py``)."""
    out = list(operands)
    scalars = site.tr.scalars
    for i, a in enumerate(operands):
        if not site.b(a):
            continue
        for j, o in enumerate(operands):
            if j == i or _is_scalar_const(o) or o is None or \
                    (isinstance(o, ir.Var) and isinstance(a, ir.Var) and o.name == a.name) or \
                    (isinstance(o, ir.Var) and o.name in scalars):
                continue
            out[i] = site.emit(ir.Call(rt.batch_align, (out[i], o, site.flag(o))))
    return out


def elementwise(site):
    """An elementwise function of batched operands: numpy's for a ``math`` function, its
    result checked for the errors ``math`` raises (the record's ``result_check``)."""
    call = site.call
    fn = _MATH_TO_NP.get(call.fn, call.fn)
    check = result_check(call.fn)
    if call.fn is math.log and len(call.args) == 2:  # log(x, base) = log(x) / log(base)
        x, base = aligned_operands(site, list(call.args))
        num = site.emit(ir.Call(check, (site.emit(ir.Call(np.log, (x,))), x)))
        den = site.emit(ir.Call(check, (site.emit(ir.Call(np.log, (base,))), base)))
        return ir.Call(operator.truediv, (num, den))
    if call.fn is math.log:
        fn = np.log
    if call.fn is builtins.complex and len(call.args) + len(call.kwargs) == 2:
        # complex(re, im) sets the parts, per example a number each: elementwise, exactly
        # (rt.batch_complex, JAX's lax.complex; re + 1j * im would make NaNs of infinities)
        parts = [site.arg("real"), site.arg("imag")]
        return ir.Call(rt.batch_complex, tuple(aligned_operands(site, parts)))
    if call.fn is np.where and len(call.args) == 1 and not call.kwargs:
        return no_batch(_RAGGED_INDICES.format("np.where(condition)"))(site)
    args = tuple(aligned_operands(site, list(call.args)))
    if check is None:
        return ir.Call(fn, args, call.kwargs)
    return ir.Call(check, (site.emit(ir.Call(fn, args, call.kwargs)), *args))


def minmax(site):
    """Builtin ``min``/``max`` of two or more numbers: ``np.minimum``/``np.maximum``."""
    call = site.call
    if len(call.args) < 2 or call.kwargs:
        from .transform import BatchingError
        raise BatchingError(f"vmap: {call.fn.__name__} of one batched iterable (write "
                            f"np.{call.fn.__name__} with an axis)", site.loc)
    fn = np.minimum if call.fn is builtins.min else np.maximum
    args = aligned_operands(site, list(call.args))
    acc = args[0]
    for a in args[1:-1]:
        acc = site.emit(ir.Call(fn, (acc, a)))
    return ir.Call(fn, (acc, args[-1]))


_UFUNC_EXTRA = [np.where, np.clip, np.real, np.imag, np.conjugate, np.around, np.round,
                np.fix, np.isclose, np.iscomplex, np.isreal, np.sinc, np.float_power,
                np.float64, np.float32, np.float16, np.complex128, np.complex64,
                np.nan_to_num, rt.clip_inside, rt.clip_selected, np.angle, rt.frexp_scale]
_OPERATORS = [operator.add, operator.sub, operator.mul, operator.truediv,
              operator.floordiv, operator.mod, operator.pow, rt.power, operator.neg, operator.pos,
              operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne,
              operator.and_, operator.or_, operator.xor, operator.invert, operator.lshift,
              operator.rshift, operator.not_]


def _ufuncs():
    return [getattr(np, n) for n in dir(np) if isinstance(getattr(np, n, None), np.ufunc)]


def core_ndims(ufunc):
    """The number of core dimensions of each input of a generalized ufunc
    (``np.matvec``'s ``(m,n),(n)->(m)``: ``[2, 1]``)."""
    inputs = ufunc.signature.split("->")[0]
    return [0 if not part.strip("()") else len(part.strip("()").split(","))
            for part in inputs.replace(" ", "").split("),(")]


def gufunc(site):
    """A generalized ufunc: its operands aligned on their *loop* dimensions (the
    per-example rank less the core dimensions of the signature), so the batch axis
    pairs with the batch axis and the core dimensions stay last."""
    call = site.call
    cores = core_ndims(call.fn)
    if len(call.args) != len(cores) or any(k in ("axes", "axis") for k, _ in call.kwargs):
        from .transform import BatchingError
        raise BatchingError(f"vmap: np.{call.fn.__name__} with axes= or a missing operand",
                            site.loc)
    out = list(call.args)
    for i, a in enumerate(call.args):
        if not site.b(a):
            continue
        for j, o in enumerate(call.args):
            if j != i:
                out[i] = site.emit(ir.Call(rt.batch_core_align, (
                    out[i], ir.Const(cores[i]), o, site.flag(o), ir.Const(cores[j]))))
    return ir.Call(call.fn, tuple(out), call.kwargs)


_GUFUNCS = [u for u in _ufuncs() if u.signature is not None]
ELEMENTWISE = set(map(id, [*_OPERATORS, *_MATH_TO_NP, math.log,
                           *[u for u in _ufuncs() if u.signature is None]]))
defbatch(elementwise, *_OPERATORS, *_MATH_TO_NP, math.log,
         *[u for u in _ufuncs() if u.signature is None],
         *[f for f in _UFUNC_EXTRA if f is not None], rt.batch_complex)
defbatch(gufunc, *_GUFUNCS)
defbatch(minmax, builtins.min, builtins.max)


# -- reductions and axis arguments --------------------------------------------------
def axis_rule(axis_param="axis", none="all", arrays=("a",), axes_of=None,
              more_axes=(), default=None, new_axes=0, sequence=False):
    """A rule for ``f(..., axis=...)``: shift ``axis_param`` (and ``more_axes``) by the
    batch axis; ``axis=None`` means every per-example axis (``none="all"``), the
    flattened examples (``"flat"``), or is kept (``"keep"``).  ``arrays`` are the operands
    that must be batched together (the unbatched ones are broadcast over the batch);
    ``axes_of`` the one whose axes ``axis`` counts (default: the first of ``arrays``;
    ``sequence``: it is a sequence of arrays, ``np.concatenate``'s); ``new_axes`` the
    axes the call adds to an example, which an axis may name too (``np.stack``: 1; or a
    function of the site).  An axis counted from the end, or one known only at run
    time, is checked against one example (``_shift``)."""
    def rule(site):
        call = site.call
        named = {p: site.arg(p) for p in arrays}
        for p, a in named.items():
            if a is not None and not site.b(a) and not _is_scalar_const(a):
                call = site.with_arg(call, p, site.rt(rt.batch_view, a, site.n, batched=True))
        axis = site.arg(axis_param, ir.Const(default))
        subj = current_batch(site, call, axes_of or arrays[0])
        added = new_axes(site) if callable(new_axes) else new_axes
        if isinstance(axis, ir.Const) and axis.value is None:
            if none == "all":
                call = site.with_arg(call, axis_param, site.rt(rt.batch_axes, subj))
            elif none == "flat":
                keep = site.arg("keepdims", ir.Const(False))
                if not (isinstance(keep, ir.Const) and keep.value is False):
                    # the flattened examples would keep one axis, not one per axis
                    raise site.tr.error(f"np.{site.call.fn.__name__} with axis=None and "
                                        "keepdims of batched arrays", site.loc)
                flat = site.rt(rt.batch_flat, subj, batched=True)
                call = site.with_arg(call, axes_of or arrays[0], flat)
                call = site.with_arg(call, axis_param, ir.Const(1))
        elif none == "all" and isinstance(axis, ir.Var):  # None is possible at run time
            call = site.with_arg(call, axis_param, site.rt(rt.batch_axis_of, axis, subj))
        else:
            call = site.with_arg(call, axis_param, _shift(site, axis, subj, added, sequence))
        for p in more_axes:
            a = site.arg(p, ir.Const(_DEFAULT_AXES.get(p)))
            if a is not None:
                call = site.with_arg(call, p, _shift(site, a, subj, added, sequence))
        return call
    return rule


_DEFAULT_AXES = {"axis1": 0, "axis2": 1}


def current_batch(site, call, name):
    """The atom ``call`` now passes for parameter ``name``."""
    kw = dict(call.kwargs)
    if name in kw:
        return kw[name]
    return call.args[site.params().index(name)]


def _non_negative(axis) -> bool:
    items = axis if isinstance(axis, (tuple, list)) else (axis,)
    return all(type(a) is int and a >= 0 for a in items)


def _shift(site, axis, subj=None, new_axes=0, sequence=False):
    """Per-example ``axis`` as an axis of the batched arrays: a non-negative constant
    moves up by one (one out of range is out of range of the batched array too, and numpy
    raises); a negative one, or one known only at run time, is resolved against one
    example of ``subj`` (``rt.batch_axis_in``: numpy's ``AxisError`` where the example has
    no such axis, never the batch axis read as one of the example's: ``np.sort`` of 0-d
    examples with ``axis=-1`` would sort across the batch)."""
    if isinstance(axis, ir.Const) and (subj is None or _non_negative(axis.value)):
        return ir.Const(rt.batch_axis(axis.value))
    if subj is None:
        return site.rt(rt.batch_axis, axis)
    if sequence:  # a sequence of arrays: its first (numpy checks they have one rank)
        subj = site.rt(operator.getitem, subj, ir.Const(0), batched=True)
    extra = (ir.Const(new_axes),) if new_axes else ()
    return site.rt(rt.batch_axis_in, axis, subj, *extra)


def _v(*names):
    return [getattr(rt, n) for n in names if hasattr(rt, n)]


defbatch(axis_rule(), np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.std,
         np.var, np.any, np.all, np.nansum, np.nanmean, np.nanmax, np.nanmin, np.ptp)
defbatch(axis_rule(arrays=("a",), none="flat"), np.cumsum, np.cumprod, np.argmax, np.argmin)
defbatch(axis_rule(arrays=("a",), none="all"), np.count_nonzero)
defbatch(axis_rule(arrays=("x",)), np.linalg.norm)
defbatch(axis_rule(arrays=("a", "weights")), np.average)
defbatch(axis_rule(arrays=("g", "a", "where"), axes_of="a"), *_v("sum_vjp", "mean_vjp",
                                                                  "prod_vjp", "var_vjp"))
defbatch(axis_rule(arrays=("g", "ans", "a", "where"), axes_of="a"), *_v("max_vjp"))
defbatch(axis_rule(arrays=("t", "ans", "a", "where"), axes_of="a"),
         *_v("max_jvp", "prod_jvp", "var_jvp"))
defbatch(axis_rule(arrays=("g", "ans", "x"), axes_of="x"), *_v("norm_vjp"))
defbatch(axis_rule(arrays=("t", "ans", "x"), axes_of="x"), *_v("norm_jvp"))
defbatch(axis_rule(arrays=("g", "x"), axes_of="x"), rt.unreduce)
defbatch(axis_rule(arrays=("m",), none="all"), np.flip)
defbatch(axis_rule(arrays=("a",), none="flat", default=-1), np.sort, np.argsort)
defbatch(axis_rule(arrays=("a",), none="keep", more_axes=("axis2",), axis_param="axis1",
                   default=0), np.diagonal, np.trace)
defbatch(axis_rule(arrays=("a",), axis_param="axis1", more_axes=("axis2",), none="keep"),
         np.swapaxes)
defbatch(axis_rule(arrays=("a",), axis_param="source", more_axes=("destination",),
                   none="keep"), np.moveaxis)
def _inserted_axes(site) -> int:
    """How many axes ``np.expand_dims(a, axis)`` adds: one per axis given."""
    axis = site.arg("axis")
    if isinstance(axis, ir.Const) and isinstance(axis.value, (tuple, list)):
        return len(axis.value)
    return 1


defbatch(axis_rule(arrays=("a",), none="keep", new_axes=_inserted_axes), np.expand_dims)
_JOIN_RULES = {np.concatenate: axis_rule(arrays=("arrays",), none="keep", default=0,
                                         sequence=True),
               np.stack: axis_rule(arrays=("arrays",), none="keep", default=0,
                                   sequence=True, new_axes=1)}


def _join(site):
    """``np.concatenate``/``np.stack`` along a per-example axis; ``axis=None`` (joining the
    flattened arrays) is refused by name rather than joined across the batch."""
    axis = site.arg("axis", ir.Const(0))
    if isinstance(axis, ir.Const) and axis.value is None:
        raise site.tr.error(f"np.{site.call.fn.__name__} with axis=None of batched arrays",
                            site.loc)
    return _JOIN_RULES[site.fn](site)


defbatch(_join, np.concatenate, np.stack)
defbatch(axis_rule(arrays=("ary",), none="keep", default=0), np.split)
defbatch(axis_rule(arrays=("g", "xs"), axes_of="g", none="keep", default=0),
         rt.concatenate_vjp, rt.stack_vjp)
defbatch(axis_rule(arrays=("gs", "x"), axes_of="x", none="keep", default=0), rt.split_vjp)


def squeeze(site):
    """``np.squeeze(a)`` removes the per-example axes of size 1 (never the batch axis)."""
    axis = site.arg("axis", ir.Const(None))
    if isinstance(axis, ir.Const) and axis.value is None:
        return site.with_arg(site.call, "axis", site.rt(rt.batch_squeeze_axes, site.arg("a")))
    return site.with_arg(site.call, "axis", _shift(site, axis, site.arg("a")))


defbatch(squeeze, np.squeeze)


# -- shape changes --------------------------------------------------------------------
def reshape(site):
    a, shape = site.arg("a"), site.arg("shape")
    if site.b(shape):
        from .transform import BatchingError
        raise BatchingError("vmap: a reshape to a shape that differs per example", site.loc)
    return site.with_arg(site.call, "shape", site.rt(rt.batch_reshape_arg, a, shape))


def transpose(site):
    a, axes = site.arg("a"), site.arg("axes", ir.Const(None))
    return site.with_arg(site.call, "axes", site.rt(rt.batch_transpose_axes, a, axes))


def ravel(site):
    return ir.Call(rt.batch_flat, (site.call.args[0],))


defbatch(reshape, np.reshape)
defbatch(transpose, np.transpose)
defbatch(ravel, np.ravel, build.flatten)


# -- passthrough ----------------------------------------------------------------------
def same(site):
    return site.call


# special functions (s2s/rules/special.py: scipy.special's ufuncs when SciPy is installed)
_MATH_TO_NP.update(SPECIAL_MATH)
defbatch(elementwise, *SPECIAL_ELEMENTWISE, *SPECIAL_MATH)

# the identity markers of the rules (stop_gradient): batched iff their argument is
defbatch(same, *identity_primitives())


def view_others(site):
    """The call as it is once every unbatched operand is broadcast over the batch (for
    functions whose operands share one shape, e.g. adding cotangents)."""
    args = [site.rt(rt.batch_view, a, site.n, batched=True)
            if isinstance(a, ir.Var) and not site.b(a) else a for a in site.call.args]
    return ir.Call(site.call.fn, tuple(args), site.call.kwargs)


_STACKED = [getattr(np.linalg, n) for n in ("inv", "det", "slogdet", "cholesky", "eigh",
                                            "eigvalsh", "eig", "eigvals", "svd", "qr", "pinv")]
defbatch(same, np.zeros_like, np.ones_like, np.empty_like, np.copy, rt.zeros_like, rt.owned,
         rt.batch_snapshot, builtins.print, *_STACKED)
defbatch(view_others, rt.add, rt.densify, rt.cast_vjp)


def linalg_two(site):
    """``solve``-like functions broadcast over stacked matrices: align the operands."""
    return ir.Call(site.fn, tuple(aligned_operands(site, list(site.call.args))))


defbatch(linalg_two, np.linalg.matrix_power)


def solve(site):
    a, b = site.call.args[:2]
    return ir.Call(rt.batch_solve, (a, b, site.flag(a), site.flag(b)))


defbatch(solve, np.linalg.solve)


# -- queries (the per-example answer, the same for every example) ---------------------
def query(helper):
    def rule(site):
        return ir.Call(helper, (site.call.args[0],))
    return rule


defbatch(query(rt.batch_shape), np.shape, unbatched_result=True)
defbatch(query(rt.batch_len), builtins.len, unbatched_result=True)
defbatch(query(rt.batch_ndim), np.ndim, unbatched_result=True)
defbatch(query(rt.batch_size_of), np.size, unbatched_result=True)
defbatch(same, operator.is_, operator.is_not, build.dtype_of, unbatched_result=True)


# -- containers: every item batched --------------------------------------------------
def per_example_helper(fn, *names):
    """A rule that calls the run-time helper ``fn`` with the call's parameters ``names``
    (the batched operand first; trailing ``None`` parameters dropped)."""
    def rule(site):
        args = [site.arg(n) for n in names]
        while args and args[-1] is None:
            args.pop()
        return ir.Call(fn, tuple(ir.Const(None) if a is None else a for a in args))
    return rule


def _index_constant(a) -> bool:
    """A slice or ``...`` written in the code: the same in every example, never lifted (a
    batched index tuple ``(i, 1:)`` keeps it)."""
    return isinstance(a, ir.Const) and index_constant(a.value)


def container(site):
    call = site.call
    if call.fn is build.make_dict:
        args = [a if k % 2 == 0 or site.b(a)
                else site.rt(rt.batch_lift, a, site.n, batched=True)
                for k, a in enumerate(call.args)]
    else:
        args = [a if site.b(a) or _index_constant(a) else
                site.rt(rt.batch_lift, a, site.n, batched=True) for a in call.args]
    return ir.Call(call.fn, tuple(args), call.kwargs)


defbatch(container, build.make_tuple, build.make_list, build.make_dict)


def as_array(site):
    """``np.array(x)`` of a batched value: nested lists of batched items put the batch
    after the list levels; ``rt.batch_array`` moves it to the front."""
    call = site.call
    return ir.Call(rt.batch_array, (ir.Const(call.fn),) + call.args, call.kwargs)


defbatch(as_array, np.array, np.asarray)


def grad_seed(site):
    """The cotangent 1 of each example's (scalar) output, checked on the first example."""
    first = site.rt(operator.getitem, site.call.args[0], ir.Const(0))
    seed = site.rt(rt.grad_seed, first, *site.call.args[1:])
    return ir.Call(rt.batch_lift, (seed, site.n))


defbatch(grad_seed, rt.grad_seed)


def no_batch(what):
    def rule(site):
        from .transform import BatchingError
        raise BatchingError(f"vmap: {what}", site.loc)
    return rule


defbatch(no_batch("a loop whose trip count differs per example (range of a batched "
                  "value)"), builtins.range)
#: the indices of the true entries of a condition: as many as there are, per example
_RAGGED_INDICES = ("{} of a value that differs per example: the number of indices it gives "
                   "differs per example, which cannot be batched (as a boolean mask cannot); "
                   "select with np.where(condition, x, y) or weight by the condition instead")
for _fn in (np.nonzero, np.argwhere, np.flatnonzero):
    defbatch(no_batch(_RAGGED_INDICES.format(f"np.{_fn.__name__}")), _fn)
defbatch(no_batch("np.extract of a value that differs per example: the number of entries it "
                  "gives differs per example, which cannot be batched (as a boolean mask "
                  "cannot); use np.where(condition, x, 0) instead"), np.extract)
defbatch(no_batch("an array whose shape differs per example (np.zeros, np.ones, np.full "
                  "of a batched shape)"), np.zeros, np.ones, np.empty, np.full, np.eye,
         np.arange)
