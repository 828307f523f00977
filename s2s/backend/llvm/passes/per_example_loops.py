"""vmap's per-example calls written as loops the jit compiles (jit only).

``vmap`` batches a call that has no batching rule by calling it once per example:
``y = rt.batch_loop(fn, flags, n, *args, **kwargs)`` (``batch/table.per_example``;
``flags[i]``: whether ``args[i]`` is batched).  Called from compiled code as a whole,
that helper needs the types of ``fn``'s results before it runs, which the jit learns
by calling it on sample operands (``ops/host_calls.py``) -- and sample operands of
independent shapes rarely fit a derivative helper's (a cotangent and the primal it is
shaped like).  Contract: ``per_example_loops(func)`` returns ``func`` where each such
statement whose ``fn`` the jit compiles natively or reads as code (not one it runs in
numpy anyway) and whose flags are a constant is the loop the helper runs::

    parts = []
    for k in range(n):
        r = fn(*[rt.batch_example(a, k) if flag else a for a, flag in zip(args, flags)],
               **kwargs)
        parts = rt.list_append(parts, r)
    y = np.stack(parts)

so each call is typed and compiled for one example's operands (``rt.batch_example``: row
``k`` of every array an operand is or holds).  The values are the helper's: results of
one shape stacked on a new axis 0; results whose shapes differ per example raise
numpy's ``ValueError`` from ``np.stack``, and an empty batch raises as the helper does.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import s2s_runtime as rt
from s2s_runtime import build

from ....ir import nodes as ir
from ....ir.names import NameGen
from ....rules import registry


def _compiled(fn) -> bool:
    """Whether the jit compiles calls of ``fn`` itself (a native lowering, or its code
    read), not by calling numpy."""
    from ..driver.compile import lowers
    from ..ops.calls import TABLE
    from ..ops.host_calls import HostCall
    if registry.inlined(fn, "jit"):
        return True
    return lowers(fn) and not isinstance(TABLE[fn], HostCall)


def _loop_call(s):
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
        compiled = _compiled(fn.value)
    except TypeError:  # (an unhashable callable)
        return None
    return (fn.value, flags.value, n, args, s.value.kwargs) if compiled else None


def per_example_loops(func: ir.Function) -> ir.Function:
    if not any(_loop_call(s) for s in ir.walk(func.body)):
        return func
    names = NameGen(ir.all_names(func))
    return replace(func, body=_rewrite(func.body, names))


def _rewrite(body, names):
    out = []
    for s in body:
        found = _loop_call(s)
        if found is None:
            blocks = ir.sub_blocks(s)
            out.append(ir.with_blocks(s, [_rewrite(b, names) for b in blocks]) if blocks else s)
            continue
        fn, flags, n, args, kwargs = found
        loc = s.loc
        parts, k, count = (ir.Var(names.fresh(base)) for base in ("examples", "k", "count"))
        result = ir.Var(names.fresh("example_result"))
        body_stmts = []
        call_args = []
        for a, batched in zip(args, flags):
            if batched:
                row = ir.Var(names.fresh("example"))
                body_stmts.append(ir.Assign(row, ir.Call(rt.batch_example, (a, k)), loc))
                a = row
            call_args.append(a)
        body_stmts += [ir.Assign(result, ir.Call(fn, tuple(call_args), kwargs), loc),
                       ir.Assign(parts, ir.Call(rt.list_append, (parts, result)), loc)]
        out += [ir.Assign(parts, ir.Call(build.make_list, ()), loc),
                ir.Assign(count, ir.Call(range, (n,)), loc),
                ir.For(k, count, tuple(body_stmts), (), loc),
                ir.Assign(s.target, ir.Call(np.stack, (parts,)), loc)]
    return tuple(out)
