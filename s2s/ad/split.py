"""The vjp of a function as two functions with explicit residuals (``split``)."""
from __future__ import annotations

from dataclasses import replace

from s2s_runtime import build

from ..ir import nodes as ir


def split(rev, name: str):
    """The vjp built by ``rev`` as two functions whose residuals are explicit values.

    ``fwd(*params) -> (value, residuals)`` (``((value, aux), residuals)`` with
    has_aux) runs the primal and returns the tuple of primal values the
    adjoint reads; ``bwd(*residuals, ct) -> gradients`` runs the adjoint.
    Call ``rev.build("vjp", ...)`` first.  A residual first assigned inside an
    ``if`` is set to None before the primal, so it always exists.
    """
    primal_defs = {v.name for s in ir.walk(rev.primal) for v in ir.stmt_defs(s)}
    top_defs = {v.name for s in rev.primal for v in ir.stmt_defs(s)}
    ct = [p for p in rev.params if p.var.name not in {q.var.name for q in rev.fn.params}]
    inputs = {p.var.name for p in rev.fn.params}
    adjoint_defs = {v.name for s in ir.walk(rev.adjoint) for v in ir.stmt_defs(s)}
    read = [a.name for s in ir.walk(rev.adjoint) for a in ir.stmt_uses(s)
            if isinstance(a, ir.Var)] + ([rev.grads.name] if isinstance(rev.grads, ir.Var) else [])
    residuals = []
    cts = {p.var.name for p in ct}  # bwd's own parameters, whatever the primal names
    for n in read:
        # a primal value the adjoint reads (loops' pops reassign some: still residuals)
        if n not in residuals and n not in cts and (n in primal_defs or (n in inputs and n not in adjoint_defs)):
            residuals.append(n)
    loc = rev.ret_loc
    pre = [ir.Assign(ir.Var(n), ir.Const(None), loc) for n in residuals
           if n in primal_defs and n not in top_defs]
    value = rev.value
    fwd_body = pre + list(rev.primal)
    if rev.aux is not None:
        value = rev.temp()
        fwd_body.append(ir.Assign(value, ir.Call(build.make_tuple, (rev.value, rev.aux)), loc))
    res = rev.temp()
    fwd_body.append(ir.Assign(res, ir.Call(build.make_tuple, tuple(ir.Var(n) for n in residuals)),
                              loc))
    out = rev.temp()
    fwd_body += [ir.Assign(out, ir.Call(build.make_tuple, (value, res)), loc), ir.Return(out, loc)]
    fwd = replace(rev.fn, name=f"{name}_fwd", body=tuple(fwd_body), docstring=None,
                  temps=frozenset(rev.temps))
    bwd_params = tuple(ir.Param(ir.Var(n)) for n in residuals) + tuple(ct)
    bwd_body = tuple(rev.adjoint) + (ir.Return(rev.grads, loc),)
    bwd = replace(rev.fn, name=f"{name}_bwd", params=bwd_params, body=bwd_body, docstring=None,
                  temps=frozenset(rev.temps))
    return fwd, bwd
