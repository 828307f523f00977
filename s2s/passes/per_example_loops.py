"""vmap's per-example calls written as the loops they run, for the transforms that see
through a loop but not through the helper.

``vmap`` batches a call that has no batching rule by calling it once per example:
``y = rt.batch_loop(fn, flags, n, *args, **kwargs)`` (``batch/table.per_example``;
``flags[i]``: whether ``args[i]`` is batched).  Two transforms meet that helper:

* the jit: called from compiled code as a whole, the helper needs the types of ``fn``'s
  results before it runs, which the jit learns by calling it on sample operands
  (``backend/llvm/ops/host_calls.py``) -- and sample operands of independent shapes rarely
  fit a derivative helper's (a cotangent and the primal it is shaped like);
* reverse and forward mode (``grad(vmap(f))``): the helper has no derivative, but a loop
  of calls of ``fn`` has one where ``fn`` has a rule.

Contract: ``per_example_loops(func, expands, stack=np.stack)`` returns ``func`` where
each such statement whose ``fn`` satisfies ``expands(fn)`` (the jit: compiled natively
or read as code, not one it runs in numpy anyway; the derivatives: ``fn`` has a
derivative rule) and whose flags are a constant is the loop the helper runs::

    parts = []
    for k in range(n):
        r = fn(*[rt.batch_example(a, k) if flag else a for a, flag in zip(args, flags)],
               **kwargs)
        parts = rt.list_append(parts, r)
    y = stack(parts)

so each call is typed and compiled for one example's operands (``rt.batch_example``: row
``k`` of every array an operand is or holds).  A batched tuple or list display whose
items vmap lifted from constants (``spec = (a, rt.batch_lift('linear', n))``, the
parameters of a linear map) is built again per example from those constants (and the
constants it holds unlifted, a slice) and the other items' rows, so a string or
``None`` is never lifted in compiled code.  The values are the helper's: results of one
shape stacked on a new axis 0 (``stack``: ``np.stack``, as the jit compiles it, or
``rt.stack_examples``, which also stacks containers leaf by leaf, as the helper does);
results whose shapes differ per example raise, and an empty batch raises as the helper
does.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace

import numpy as np
import s2s_runtime as rt
from s2s_runtime import build

from ..ir import nodes as ir
from ..ir.names import NameGen


def _loop_call(s, expands):
    """``(fn, flags, n, args, kwargs)`` of a statement ``y = rt.batch_loop(...)`` this
    pass writes as a loop, else None."""
    if not (isinstance(s, ir.Assign) and isinstance(s.value, ir.Call)
            and s.value.fn is rt.batch_loop and len(s.value.args) >= 3):
        return None
    fn, flags, n, *args = s.value.args
    if not (isinstance(fn, ir.Const) and isinstance(flags, ir.Const)
            and isinstance(flags.value, tuple) and len(flags.value) == len(args)):
        return None
    try:
        expanded = expands(fn.value)
    except TypeError:  # (an unhashable callable)
        return None
    return (fn.value, flags.value, n, args, s.value.kwargs) if expanded else None


def per_example_loops(func: ir.Function, expands, stack=np.stack) -> ir.Function:
    if not any(_loop_call(s, expands) for s in ir.walk(func.body)):
        return func
    names = NameGen(ir.all_names(func))
    values = _single_values(func.body)
    body = ir.map_stmts(func.body, lambda s: _as_loop(s, names, values, expands, stack))
    return replace(func, body=_unread_dropped(body))


def _unread_dropped(body):
    """``body`` without the assignments of displays and of lifted constants that nothing
    reads any more (they have no effect; a lifted string has no compiled form)."""
    while True:
        read = {a.name for s in ir.walk(body) for a in ir.stmt_uses(s) if isinstance(a, ir.Var)}

        def unread(s):
            v = getattr(s, "value", None)
            dead = isinstance(s, ir.Assign) and s.target.name not in read and \
                isinstance(v, ir.Call) and (v.fn in _DISPLAYS or v.fn is rt.batch_lift
                                            and isinstance(v.args[0], ir.Const))
            return None if dead else s

        out = ir.map_stmts(body, unread)
        if len(list(ir.walk(out))) == len(list(ir.walk(body))):
            return out
        body = out


def _single_values(body):
    """``{name: value}`` of the names assigned exactly once (by an ``Assign``)."""
    counts, values = Counter(), {}
    for s in ir.walk(body):
        for v in ir.stmt_defs(s):
            counts[v.name] += 1
        if isinstance(s, ir.Assign):
            values[s.target.name] = s.value
    return {n: v for n, v in values.items() if counts[n] == 1}


_DISPLAYS = (build.make_tuple, build.make_list)


def _example(a, k, names, values, out, loc):
    """The atom of example ``k`` of batched ``a``, its statements appended to ``out``."""
    made = values.get(a.name) if isinstance(a, ir.Var) else None
    if isinstance(made, ir.Call) and made.fn in _DISPLAYS and not made.kwargs:
        items = []
        for item in made.args:
            if isinstance(item, ir.Const):  # (an index's slice: the same in every example)
                items.append(item)
                continue
            lifted = values.get(item.name) if isinstance(item, ir.Var) else None
            if isinstance(lifted, ir.Call) and lifted.fn is rt.batch_lift and \
                    isinstance(lifted.args[0], ir.Const) and not lifted.kwargs:
                items.append(lifted.args[0])  # (the same constant in every example)
            else:
                items.append(_example(item, k, names, values, out, loc))
        display = ir.Var(names.fresh("example"))
        out.append(ir.Assign(display, ir.Call(made.fn, tuple(items)), loc))
        return display
    row = ir.Var(names.fresh("example"))
    out.append(ir.Assign(row, ir.Call(rt.batch_example, (a, k)), loc))
    return row


def _as_loop(s, names, values, expands, stack):
    """``s`` itself, or the statements of the loop that stands for its ``batch_loop``."""
    found = _loop_call(s, expands)
    if found is None:
        return s
    fn, flags, n, args, kwargs = found
    loc = s.loc
    # (named for the function: a result compiled code cannot stack -- a list per example
    # -- is reported as this list's type)
    label = "".join(c if c.isalnum() else "_" for c in getattr(fn, "__name__", "call"))
    parts, k, count = (ir.Var(names.fresh(base)) for base in (
        f"{label}_per_example", "example_number", "examples"))
    result = ir.Var(names.fresh("example_result"))
    body = []
    call_args = [_example(a, k, names, values, body, loc) if batched else a
                 for a, batched in zip(args, flags)]
    body += [ir.Assign(result, ir.Call(fn, tuple(call_args), kwargs), loc),
             ir.Assign(parts, ir.Call(rt.list_append, (parts, result)), loc)]
    return [ir.Assign(parts, ir.Call(build.make_list, ()), loc),
            ir.Assign(count, ir.Call(range, (n,)), loc),
            ir.For(k, count, tuple(body), (), loc),
            ir.Assign(s.target, ir.Call(stack, (parts,)), loc)]
