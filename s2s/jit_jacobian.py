"""``jit(jacrev(f))``, ``jit(jacfwd(f))`` and ``jit(hessian(f))``: one native kernel each.

For the argument kinds of a call, ``jacobian_ir`` builds one IR function (the
Jacobian kernel) that the LLVM backend compiles like any other; the helpers it
calls are in ``backend/llvm/jacobian_ops.py``.  Layout as JAX's: for each output
leaf, a block of shape ``out.shape + in.shape`` per differentiated input leaf,
inside the input's tuple tree (a tuple over ``argnums`` when ``argnums`` is a
tuple), inside the output's tuple tree.

* **jacrev**: the forward sweep of ``vjp(f)`` (``ad/split.py``) runs once; its
  tapes are marked; then a native loop over the ``M`` output entries (every output
  leaf, flat) rewinds the tapes, takes the cotangent ``e_k`` (``basis_vector`` of
  each output leaf, zero outside its own rows) and runs the adjoint sweep on the
  same residuals, writing ``J^T e_k`` as row ``k``.  Cost: one primal plus ``M``
  adjoint sweeps.
* **jacfwd**: for each differentiated input leaf, a native loop over its ``n``
  entries runs the JVP code of ``f`` on the tangent ``e_l`` and writes ``J e_l``
  as column ``l``.  Statements of the loop body that do not depend on the tangent
  (the primal, for straight-line code) are moved before the loop
  (``hoist_invariants``), so for such code the cost is one primal plus ``n``
  tangent sweeps; code whose primal sits in a loop or branch with tangent code
  reruns it per column (correct, slower).
* **hessian**: ``jacfwd(grad(f))`` built as above (the forward mode of the
  generated gradient code), for a real scalar output, as JAX's
  ``jacfwd(jacrev(f))`` lays it out.

What the kernel cannot be (``has_aux``, ``holomorphic``, complex values, a
non-scalar ``hessian`` output, keyword-only parameters, or code outside the
compiled subset) raises an s2s error naming it; nothing falls back to Python.
"""
from __future__ import annotations

import operator

import s2s_runtime as rt
from s2s_runtime import build

from .backend.llvm import jacobian_ops as J
from .errors import UnsupportedSyntaxError
from .ir import nodes as ir
from .ir.kinds import is_inexact_leaf
from .ir.names import NameGen
from .jit_hoist import hoist_invariants, stack_forms
from .passes.single_exit import single_exit
from .passes.ssa import _rename_all


class _Block:
    """Statements being built, with fresh names and one location."""

    def __init__(self, names: NameGen, loc):
        self.names, self.loc, self.stmts = names, loc, []

    def var(self, base=None) -> ir.Var:
        return ir.Var(self.names.fresh(base) if base else self.names.temp())

    def call(self, fn, *args, base=None) -> ir.Var:
        target = self.var(base)
        self.stmts.append(ir.Assign(target, ir.Call(fn, tuple(args)), self.loc))
        return target

    def do(self, fn, *args):
        self.stmts.append(ir.ExprStmt(ir.Call(fn, tuple(args)), self.loc))

    def item(self, value, path):
        for k in path:
            value = self.call(operator.getitem, value, ir.Const(k))
        return value

    def sub(self):
        return _Block(self.names, self.loc)

    def loop(self, count, make_body, base="k"):
        """``for <k> in range(count): make_body(block, k)``; the For statement is
        appended and returned."""
        r = self.call(range, count)
        k = self.var(base)
        inner = self.sub()
        make_body(inner, k)
        loop = ir.For(k, r, tuple(inner.stmts), (), self.loc)
        self.stmts.append(loop)
        return loop


def inline(block: _Block, func: ir.Function, bindings: dict, direct=()) -> ir.Atom:
    """Append ``func``'s body to ``block`` with its parameters bound to ``bindings``
    (name -> atom; a variable not reassigned in the body, or named in ``direct``, is
    read in place, others are copied) and every other name renamed apart; return the
    atom it returns."""
    func = single_exit(func)
    body = list(func.body)
    ret = body.pop()
    assigned = {v.name for s in ir.walk(body) for v in ir.stmt_defs(s)}
    env = {}
    for p in func.params:
        value = bindings[p.var.name]
        if isinstance(value, ir.Var) and (p.var.name in direct or p.var.name not in assigned):
            env[p.var.name] = value.name
        else:
            env[p.var.name] = block.names.fresh(p.var.name)
            block.stmts.append(ir.Assign(ir.Var(env[p.var.name]), value, block.loc))
    for s in ir.walk(body):
        for v in ir.stmt_defs(s):
            if v.name not in env:
                env[v.name] = block.names.temp() if v.name in func.temps else \
                    block.names.fresh(v.name)
    block.stmts += [_rename_all(s, env) for s in body]
    return _rename_all(ret, env).value


def leaf_paths(value, path=()):
    """``[(path, leaf)]`` of a tuple tree of values (the kinds jit compiles)."""
    if type(value) is tuple:
        return [p for k, v in enumerate(value) for p in leaf_paths(v, path + (k,))]
    return [(path, value)]


def type_paths(t, what, loc, path=()):
    """``[(path, type)]`` of the leaves of a backend type (real numbers and arrays)."""
    from .backend.llvm import types as T
    if isinstance(t, T.Tuple):
        return [p for k, i in enumerate(t.items) for p in type_paths(i, what, loc, path + (k,))]
    if isinstance(t, (T.Scalar, T.Array)) and t.dtype in ("f4", "f8"):
        return [(path, t)]
    raise UnsupportedSyntaxError(
        f"jit({what}): the function returns a {t}; compiled Jacobians are of functions "
        "returning float32/float64 numbers, arrays and tuples of them", loc)


def tuple_tree(block, paths_values, shape_of):
    """The tuple tree of ``shape_of`` (a nested list) with atoms at its leaves."""
    if isinstance(shape_of, list):
        return block.call(build.make_tuple, *[tuple_tree(block, paths_values, s)
                                               for s in shape_of])
    return paths_values[shape_of]


def nest(paths):
    """A nested list of the leaf paths (a tuple tree's shape), or the path of a leaf."""
    if paths == [()]:
        return ()
    out = {}
    for p in paths:
        out.setdefault(p[0], []).append(p[1:])
    return [_prefix(k, nest(v)) for k, v in sorted(out.items())]


def _prefix(k, shape):
    return (k,) + shape if isinstance(shape, tuple) else [_prefix(k, s) for s in shape]


def _shaped(value, atom):
    """What a Jacobian block takes its input shape from: a None leaf is a shape ()."""
    return ir.Const(0.0) if value is None else atom


def finish(func: ir.Function, name, params, block, result):
    block.stmts.append(ir.Return(result, block.loc))
    return ir.Function(name, tuple(params), tuple(block.stmts), func.loc,
                       temps=frozenset(block.names.temps))


def check_kinds(what, args, nums, loc):
    from .backend.llvm import types as T
    for n in nums:
        for _, v in leaf_paths(args[n]):
            if v is not None and T.value_type(v) is None:
                raise TypeError(
                    f"jit({what}): argument {n} is or holds a {type(v).__name__}; compiled "
                    "Jacobians take numbers, numpy arrays and tuples of them (call "
                    f"{what}(f) without jit for other pytrees)")
    for n in nums:
        for _, v in leaf_paths(args[n]):
            if is_inexact_leaf(v) and getattr(v, "dtype", None) is not None and \
                    v.dtype.kind == "c" or type(v) is complex:
                raise UnsupportedSyntaxError(
                    f"jit({what}): complex inputs are not compiled (use {what} without jit)",
                    loc)
    if not any(is_inexact_leaf(v) for n in nums for _, v in leaf_paths(args[n])):
        raise TypeError(f"{what} requires real-valued inputs (float32/float64 leaves) in "
                        f"argnums; got {', '.join(type(args[n]).__name__ for n in nums)}")


# -- jacrev --------------------------------------------------------------------------------
def jacrev_ir(transform, values, nums, single):
    """``(kernel IR, free variables)``; ``transform`` is ``vjp`` of ``f`` with tuple
    ``argnums`` ``nums``."""
    from .backend.llvm.stacks import _is_push
    fwd, bwd, freevars = transform.split_ir(values)
    body = list(fwd.body)
    ret, pair, res = body[-1], body[-2], body[-3]
    if not (isinstance(ret, ir.Return) and pair.value.fn is build.make_tuple
            and res.value.fn is build.make_tuple and pair.value.args[1] == res.target):
        raise UnsupportedSyntaxError("s2s internal error: an unexpected vjp forward sweep",
                                     fwd.loc)
    value = pair.value.args[0]
    primal = body[:-3]
    residuals = [p.var.name for p in bwd.params[:-1]]
    ct_name = bwd.params[-1].var.name
    value_only = ir.Function(fwd.name, fwd.params, tuple(primal) + (ir.Return(value, fwd.loc),),
                             fwd.loc, temps=fwd.temps)
    out_t = _return_type(value_only, values, freevars)
    out_leaves = type_paths(out_t, "jacrev", fwd.loc)
    names = NameGen(ir.all_names(fwd) | ir.all_names(bwd))
    b = _Block(names, fwd.loc)
    b.stmts += primal
    if isinstance(value, ir.Const):
        value = b.call(operator.pos, value)
    tapes = [n for n in residuals if any(_is_push(s, n) for s in ir.walk(primal))]
    if any(_is_push(s, n) for n in tapes for s in ir.walk(bwd.body)):
        raise UnsupportedSyntaxError(  # a rewound tape must only be popped
            "jit(jacrev): the adjoint sweep records on the forward sweep's tape; this "
            "function's Jacobian is not compiled (call jacrev without jit)", fwd.loc)
    marks = {n: b.call(J.tape_mark, ir.Var(n), base="mark") for n in tapes}
    outs = [b.item(value, p) for p, _ in out_leaves]
    params = {p.var.name: p.var for p in fwd.params}
    ins = [[(path, v, b.item(params[transform.param_names[n]], path))
            for path, v in leaf_paths(values[n])] for n in nums]
    jac = [[[b.call(J.jacobian_zeros, o, _shaped(v, x), base="jac") for _, v, x in leaves]
            for leaves in ins] for o in outs]
    sizes = [[b.call(J.leaf_size, x) if is_inexact_leaf(v) else None for _, v, x in leaves]
             for leaves in ins]
    starts, total = [], ir.Const(0)
    for o in outs:
        starts.append(total)
        total = b.call(operator.add, total, b.call(J.leaf_size, o))

    def adjoint(inner, k):
        for n in tapes:
            inner.do(J.tape_rewind, ir.Var(n), marks[n])
        rows = [inner.call(operator.sub, k, s) for s in starts]
        cts = {p: inner.call(J.basis_vector, o, r) for (p, _), o, r in zip(out_leaves, outs, rows)}
        ct = tuple_tree(inner, cts, nest([p for p, _ in out_leaves]))
        bindings = {n: ir.Var(n) for n in residuals}
        bindings[ct_name] = ct
        grads = inline(inner, bwd, bindings, direct=tapes)
        for o, row in enumerate(rows):
            store = inner.sub()
            for a, leaves in enumerate(ins):
                for j, (path, v, _) in enumerate(leaves):
                    if sizes[a][j] is None:
                        continue
                    g = store.item(grads, (a,) + path)
                    off = store.call(operator.mul, row, sizes[a][j])
                    store.do(J.jacobian_store, jac[o][a][j], g, off, ir.Const(1))
            if len(outs) == 1:
                inner.stmts += store.stmts
                continue
            inside = inner.call(operator.and_, inner.call(operator.ge, row, ir.Const(0)),
                                inner.call(operator.lt, row, inner.call(J.leaf_size, outs[o])))
            inner.stmts.append(ir.If(inside, tuple(store.stmts), (), inner.loc))

    loop = b.loop(total, adjoint)
    b.stmts.pop()
    pre, loop = hoist_invariants(loop)
    b.stmts += pre + [loop]
    result = _layout(b, jac, out_leaves, ins, values, nums, single)
    name = f"jacrev_{fwd.name.removeprefix('vjp_').removesuffix('_fwd')}"
    return finish(fwd, name, fwd.params, b, result), freevars


def _layout(b, jac, out_leaves, ins, values, nums, single):
    """The Jacobian's tuple tree: output tree of (argnums tuple of) input trees."""
    per_out = {}
    for (opath, _), by_arg in zip(out_leaves, jac):
        trees = [tuple_tree(b, {path: blk for (path, _, _), blk in zip(ins[a], by_arg[a])},
                            nest([path for path, _, _ in ins[a]]))
                 for a in range(len(nums))]
        per_out[opath] = trees[0] if single else b.call(build.make_tuple, *trees)
    return tuple_tree(b, per_out, nest([p for p, _ in out_leaves]))


# -- jacfwd and hessian ---------------------------------------------------------------------
def jacfwd_ir(func, values, carries, nums, single, what, return_type):
    """The kernel of ``jacfwd`` from ``func``, the JVP IR of the function
    (``(values..., tangents of the carried values..., free...) -> (out, dout)``)."""
    func = stack_forms(func)
    n = len(values)
    held = list(func.params[:n])
    dot_params = list(func.params[n:n + sum(carries)])
    rest = list(func.params[n + sum(carries):])
    if any(not p.kwonly for p in rest):
        raise UnsupportedSyntaxError("s2s internal error: an unexpected JVP signature", func.loc)
    ret_t = return_type(func)
    out_leaves = type_paths(ret_t.items[0], what, func.loc)
    names = NameGen(ir.all_names(func))
    b = _Block(names, func.loc)
    params = [p.var for p in held]
    ins = [[(path, v, b.item(params[a], path)) for path, v in leaf_paths(values[a])]
           for a in nums]
    jac = [[[b.var("jac") for _ in leaves] for leaves in ins] for _ in out_leaves]
    for by_arg in jac:
        for blocks in by_arg:
            for v in blocks:
                b.stmts.append(ir.Assign(v, ir.Const(None), b.loc))
    first = True
    for a, (num, leaves) in enumerate(zip(nums, ins)):
        for j, (path, v, x) in enumerate(leaves):
            if not is_inexact_leaf(v):
                continue
            size = b.call(J.leaf_size, x)
            alloc = first
            first = False

            def column(inner, l, a=a, j=j, num=num, path=path, size=size, alloc=alloc):
                dots = []
                for i, c in enumerate(carries):
                    if not c:
                        continue
                    if i != num:
                        dots.append(inner.call(rt.zeros_like, params[i]))
                        continue
                    parts = {}
                    for p2, _, x2 in ins[a]:
                        parts[p2] = inner.call(J.basis_vector, x2, l) if p2 == path else \
                            inner.call(rt.zeros_like, x2)
                    dots.append(tuple_tree(inner, parts, nest(list(parts))))
                bindings = {p.var.name: p.var for p in held + rest}
                bindings.update((p.var.name, d) for p, d in zip(dot_params, dots))
                result = inline(inner, func, bindings)
                out = inner.call(operator.getitem, result, ir.Const(0))
                dout = inner.call(operator.getitem, result, ir.Const(1))
                if alloc:
                    make = inner.sub()
                    for o, (opath, _) in enumerate(out_leaves):
                        ov = make.item(out, opath)
                        for a2, leaves2 in enumerate(ins):
                            for j2, (_, v2, x2) in enumerate(leaves2):
                                make.stmts.append(ir.Assign(jac[o][a2][j2], ir.Call(
                                    J.jacobian_zeros, (ov, _shaped(v2, x2))), make.loc))
                    test = inner.call(operator.eq, l, ir.Const(0))
                    inner.stmts.append(ir.If(test, tuple(make.stmts), (), inner.loc))
                for o, (opath, _) in enumerate(out_leaves):
                    inner.do(J.jacobian_store, jac[o][a][j], inner.item(dout, opath), l, size)

            count = b.call(J.basis_count, x)
            loop = b.loop(count, column, base="l")
            b.stmts.pop()
            pre, loop = hoist_invariants(loop)
            b.stmts += pre + [loop]
    result = _layout(b, jac, out_leaves, ins, values, nums, single)
    return finish(func, f"jac{what}_{func.name.removeprefix('jvp_')}", held + rest, b, result)


# -- the entry point jit uses -----------------------------------------------------------
def jit_signature(fun):
    """The signature ``jit`` binds a Jacobian function's arguments with: ``fun``'s."""
    from .api import _ReverseTransform, _signature
    if hasattr(fun, "_s2s_jit_ir"):
        raise UnsupportedSyntaxError(
            "jit of a jacfwd/jacrev/hessian of a jacfwd, jacrev, hessian or vmap function is "
            "not compiled (jit(hessian(f)) compiles jacfwd(jacrev(f)); call the nested "
            "Jacobian without jit)")
    return fun.sig if isinstance(fun, _ReverseTransform) else _signature(fun)


def kernel_ir(what, fun, argnums, args, has_aux=False, holomorphic=False):
    """``(kernel IR, free values loader)`` of ``jit(<what>(fun, argnums))`` for ``args``
    (``what``: "jacrev", "jacfwd" or "hessian")."""
    from .api import _normalise_argnums, _reverse_transform, _ReverseTransform
    from .api_forward import _forward_of
    from .api_varargs import adapter, wants_adapter
    from .custom_primal import primal_calls_inlined
    name = getattr(fun, "__name__", "f")
    for flag, on in (("has_aux", has_aux), ("holomorphic", holomorphic)):
        if on:
            raise UnsupportedSyntaxError(f"jit({what}(f, {flag}=True)) is not compiled; "
                                         f"call {what}(f, {flag}=True) without jit")
    nums, single = _normalise_argnums(argnums, len(args), name)
    check_kinds(what, args, nums, None)
    f = adapter(fun, len(args), ()) if wants_adapter(fun) else fun
    inner_free = {}
    if isinstance(f, _ReverseTransform):  # jacrev(grad(f)): the vjp of the code grad made
        positional = f._bind(list(args), {})
        gen, gen_free = f.generated(positional)
        inner_free = f.gen_freevars(positional)
        vjp_t = _reverse_transform(gen, nums, False, False, "vjp")
        values = vjp_t._bind(list(args), gen_free)
    else:
        vjp_t = _reverse_transform(f, nums, False, False, "vjp")
        if vjp_t.kwonly_names:
            raise UnsupportedSyntaxError(f"jit({what}(f)): {name} has keyword-only "
                                         f"parameters ({', '.join(vjp_t.kwonly_names)})")
        values = vjp_t._bind(list(args), {})
    npos = len(args)
    if what == "jacrev":
        func, freevars = jacrev_ir(vjp_t, values, nums, single)
    else:
        if what == "hessian":
            _check_scalar_output(vjp_t, values)
        target = f if what == "jacfwd" else _reverse_transform(
            f, argnums if single else nums, False, False, "grad")
        fwd_t = _forward_of(target, False)
        values = values[:npos]
        carries = fwd_t._carries(values, len(values))
        jvp, freevars = fwd_t.site_ir(values, carries, {})
        func = jacfwd_ir(jvp, values, carries, nums, single, what,
                         lambda fn: _return_type(fn, values, freevars, carries))
    freevars = {**inner_free, **freevars}
    current = {n: fv.load() for n, fv in freevars.items()}
    arguments = {**current, **{p.var.name: v for p, v in zip(func.params, values)}}
    func, more = primal_calls_inlined(func, freevars, arguments=arguments)
    freevars = {**freevars, **more}
    free_names = [p.var.name for p in func.params[npos:]]
    missing = [n for n in free_names if n not in freevars]
    if missing:
        raise UnsupportedSyntaxError(f"s2s internal error: jit({what}): no value for "
                                     f"{', '.join(missing)}", func.loc)
    loaders = [freevars[n].load for n in free_names]
    return func, lambda: [load() for load in loaders]


def _return_type(func, values, freevars, carries=None):
    """The backend type ``func`` returns for its parameters: ``values``, then (with
    ``carries``) one tangent per carried value, then the free variables by name (the calls
    of custom rules and checkpoints inlined first, as the kernel will have them)."""
    from .backend.llvm.compile import param_types
    from .backend.llvm.infer import infer
    from .custom_primal import primal_calls_inlined
    from s2s_runtime.tree import tree_map
    vals = list(values)
    if carries is not None:
        vals += [tree_map(lambda x: J.basis_vector(x, 0) if is_inexact_leaf(x) else x, v)
                 for v, c in zip(values, carries) if c]
    free = {n: fv.load() for n, fv in freevars.items()}
    names = [p.var.name for p in func.params]
    arguments = {**free, **dict(zip(names, vals))}
    func, more = primal_calls_inlined(func, freevars, arguments=arguments)
    free.update((n, fv.load()) for n, fv in more.items())
    names = [p.var.name for p in func.params]
    vals += [free[n] for n in names[len(vals):]]
    types = param_types(func, vals, lambda: (func.name, ""))
    return infer(func, dict(zip(names, types)))[1]


def _check_scalar_output(transform, values):
    from .backend.llvm import types as T
    fwd, _, freevars = transform.split_ir(values)
    body = list(fwd.body)
    value_only = ir.Function(fwd.name, fwd.params,
                             tuple(body[:-3]) + (ir.Return(body[-2].value.args[0], fwd.loc),),
                             fwd.loc, temps=fwd.temps)
    out_t = _return_type(value_only, values, freevars)
    if not (isinstance(out_t, T.Scalar) and out_t.dtype in ("f4", "f8")):
        raise UnsupportedSyntaxError(
            f"jit(hessian(f)): f returns a {out_t}; compiled Hessians are of functions with "
            "a float32/float64 scalar output (call hessian(f) without jit)", fwd.loc)
