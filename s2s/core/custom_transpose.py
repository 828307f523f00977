"""Reverse mode of a ``custom_jvp`` function: its JVP rule, transposed.

JAX differentiates a ``custom_jvp`` function in reverse by linearising the
rule and transposing it.  s2s does the same in its own way: the rule's
tangent output ``T(x, t) = rule(x, t)[1]`` is linear in the tangents
``t``, so its vector-Jacobian product with respect to ``t`` is ``t``-free
and equals the transpose ``ct -> J(x)^T ct`` — reverse mode of the user's
rule, generated like any other code, evaluated at ``t = 0``:

    def f_transpose(x, y, ct):              # one cotangent per differentiable argument
        dx = zeros_like(x); dy = zeros_like(y)
        ... adjoint code of rule((x, y), (dx, dy))[1] with respect to dx, dy ...
        return (dx_bar, dy_bar)

``transpose_ir`` builds that IR for the kinds of the arguments (cached), by
the vjp transform of a small function that calls the rule
(``_tangent_map``); ``compiled_transpose`` compiles it for run time.  In
transformed code (``grad(grad(f))``) the call is a site (``passes/sites.py``)
replaced by this IR, which depends on ``x`` as ordinary code does, so higher
derivatives differentiate the rule again.  A rule that is not linear in its
tangents gets the transpose of its derivative at ``t = 0`` (JAX rejects
such rules when it transposes them).
"""
from __future__ import annotations

from dataclasses import replace

from s2s_runtime import build, check_jvp_output, zeros_like

from . import pipeline
from .custom import define_function
from ..ir import nodes as ir
from ..ir.kinds import kind_of
from ..passes.dce import dce


def _tangent_map(owner):
    """``def f_tangent_map(x, y, dx, dy): return rule(*nondiff, (x, y), (dx, dy))[1]``
    (what the rule returns checked on the way, ``check_jvp_output``)."""
    fn = getattr(owner, "_tangent_map", None)
    if fn is not None:
        return fn
    names = list(owner.sig.parameters)
    taken = set(names)
    dots = []
    for i in owner.diff_argnums:
        d = f"d{names[i]}"
        while d in taken:
            d += "_"
        taken.add(d)
        dots.append(d)
    nondiff = [names[i] for i in owner.nondiff_argnums]
    diff = [names[i] for i in owner.diff_argnums]

    def tup(items):
        return "(" + "".join(f"{x}, " for x in items) + ")"

    call_args = ", ".join(nondiff + [tup(diff), tup(dots)])
    fname = f"{owner.name}_tangent_map"
    src = (f"def {fname}({', '.join(names + dots)}):\n"
           f"    return _check(_rule({call_args}), {owner.jvp_call.label!r})[1]\n")
    fn = define_function(src, fname, {"_rule": owner.jvp, "_check": check_jvp_output},
                         owner.fun)
    owner._tangent_map = fn
    return fn


def transpose_ir(tr, args):
    """``(ir, freevars)`` of ``tr.owner``'s transposed JVP rule for these arguments'
    kinds: parameters ``(*args, ct, *freevars)``, result the tuple of cotangents."""
    key = ("ir",) + tuple(map(kind_of, args))
    hit = tr.cache.get(key)
    if hit is not None:
        return hit
    from .reverse import reverse_transform

    owner = tr.owner
    n, k = owner.n, len(owner.diff_argnums)
    transform = reverse_transform(_tangent_map(owner), tuple(range(n, n + k)), False, False,
                                   "vjp")
    zeros = [zeros_like(args[i]) for i in owner.diff_argnums]
    func, free = transform.site_ir(list(args) + zeros)
    # parameters (*args, *tangents, ct, *free) -> (*args, ct, *free); tangents are zeros
    params = list(func.params)
    tangents, rest = params[n:n + k], params[:n] + params[n + k:]
    body = list(func.body)
    ret = body.pop()
    loc = ret.loc
    grads = _grads_of(body, ret.value)
    head = [ir.Assign(t.var, ir.Call(zeros_like, (p.var,)), loc)
            for t, p in zip(tangents, [params[i] for i in owner.diff_argnums])]
    body = head + body + [ir.Return(grads, loc)]
    func = dce(replace(func, name=tr.__name__, params=tuple(rest), body=tuple(body)))
    hit = tr.cache[key] = (func, free)
    return hit


def _grads_of(body, result):
    """The gradients of a vjp function's ``return (value, grads)``: the tuple's second
    item where a statement of ``body`` builds it (that statement removed)."""
    for i, s in enumerate(body):
        if isinstance(s, ir.Assign) and s.target == result and isinstance(s.value, ir.Call) \
                and s.value.fn is build.make_tuple and len(s.value.args) == 2:
            del body[i]
            return s.value.args[1]
    import operator

    g = ir.Var("t_grads")
    body.append(ir.Assign(g, ir.Call(operator.getitem, (result, ir.Const(1)))))
    return g


def compiled_transpose(tr, args):
    """``(function, free values)`` running the transposed rule for these arguments."""
    key = ("fn",) + tuple(map(kind_of, args))
    hit = tr.cache.get(key)
    if hit is None:
        func, free = transpose_ir(tr, args)
        fn, _ = pipeline.compile_function(func)
        hit = tr.cache[key] = (fn, free)
    fn, free = hit
    return fn, {name: fv.load() for name, fv in free.items()}
