"""The IR of the Jacobian kernels ``core/jit_jacobian.py`` compiles (one function each).

* ``jacrev_ir(transform, values, nums, single)``: the vjp's forward sweep, its tapes
  marked (``tape_mark``), then ``for k in range(M)``: rewind the tapes, cotangent
  ``e_k`` (``basis_vector`` per output leaf, zero outside its rows), the adjoint sweep
  inlined (its names renamed apart, the residuals it reassigns copied), row ``k``
  stored (``jacobian_store``); statements of the loop that do not change between rows
  are moved before it (``core/jit_hoist.py``).
* ``jacfwd_ir(func, values, carries, nums, single, what, return_type)``: per
  differentiated input leaf, ``for l in range(basis_count(x))``: tangent ``e_l``, the
  JVP code inlined, column ``l`` stored; the blocks are allocated in the first
  iteration (the output's shape is known only then); loop-invariant statements (the
  primal of straight-line code) moved before the loop.
* ``return_type_of(func, values, freevars, carries)``: the backend type ``func`` returns
  (how the kernels learn the output's tuple structure).

Helpers (``backend/llvm/derivs/jacobian_ops.py``) are plain calls in the IR; blocks have
JAX's layout (``_layout``).  Contract of the IR: the params of the kernel are the
function's own, then its free variables (keyword-only).
"""
from __future__ import annotations

import operator

import s2s_runtime as rt
from s2s_runtime import build

from ..backend.llvm.derivs import jacobian_ops as J
from ..errors import UnsupportedSyntaxError
from ..ir import nodes as ir
from ..ir.kinds import is_inexact_leaf
from ..ir.names import NameGen
from .jit_hoist import hoist_invariants, stack_forms
from ..passes.single_exit import single_exit
from ..passes.ssa import rename_all


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
    block.stmts += [rename_all(s, env) for s in body]
    return rename_all(ret, env).value


def leaf_paths(value, path=()):
    """``[(path, leaf)]`` of a tuple tree of values (the kinds jit compiles); None is an
    empty subtree, as in JAX."""
    if type(value) is tuple:
        return [p for k, v in enumerate(value) for p in leaf_paths(v, path + (k,))]
    return [] if value is None else [(path, value)]


_EMPTY = "empty"


def value_shape(value, path=()):
    """The shape ``tuple_tree`` builds for the tuple tree ``value`` (None stays None)."""
    if type(value) is tuple:
        return [value_shape(v, path + (k,)) for k, v in enumerate(value)]
    return _EMPTY if value is None else path


def type_paths(t, what, loc, path=()):
    """``[(path, type)]`` of the leaves of a backend type (real numbers and arrays)."""
    from ..backend.llvm.typing import types as T
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
    return ir.Const(None) if shape_of == _EMPTY else paths_values[shape_of]


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


def finish(func: ir.Function, name, params, block, result):
    block.stmts.append(ir.Return(result, block.loc))
    return ir.Function(name, tuple(params), tuple(block.stmts), func.loc,
                       temps=frozenset(block.names.temps) | func.temps)


# -- jacrev --------------------------------------------------------------------------------
def jacrev_ir(transform, values, nums, single):
    """``(kernel IR, free variables)``; ``transform`` is ``vjp`` of ``f`` with tuple
    ``argnums`` ``nums``."""
    from ..backend.llvm.lower.stacks import is_push
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
    out_t = return_type_of(value_only, values, freevars)
    out_leaves = type_paths(out_t, "jacrev", fwd.loc)
    names = NameGen(ir.all_names(fwd) | ir.all_names(bwd))
    b = _Block(names, fwd.loc)
    b.stmts += primal
    if isinstance(value, ir.Const):
        value = b.call(operator.pos, value)
    tapes = [n for n in residuals if any(is_push(s, n) for s in ir.walk(primal))]
    if any(is_push(s, n) for n in tapes for s in ir.walk(bwd.body)):
        raise UnsupportedSyntaxError(  # a rewound tape must only be popped
            "jit(jacrev): the adjoint sweep records on the forward sweep's tape; this "
            "function's Jacobian is not compiled (call jacrev without jit)", fwd.loc)
    marks = {n: b.call(J.tape_mark, ir.Var(n), base="mark") for n in tapes}
    outs = [b.item(value, p) for p, _ in out_leaves]
    params = {p.var.name: p.var for p in fwd.params}
    ins = [[(path, v, b.item(params[transform.param_names[n]], path))
            for path, v in leaf_paths(values[n])] for n in nums]
    jac = [[[b.call(J.jacobian_zeros, o, x, base="jac") for _, v, x in leaves]
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
                            value_shape(values[n]))
                 for a, n in enumerate(nums)]
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
                    dots.append(tuple_tree(inner, parts, value_shape(values[num])))
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
                                    J.jacobian_zeros, (ov, x2)), make.loc))
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


def return_type_of(func, values, freevars, carries=None):
    """The backend type ``func`` returns for its parameters: ``values``, then (with
    ``carries``) one tangent per carried value, then the free variables by name (the calls
    of custom rules and checkpoints inlined first, as the kernel will have them)."""
    from ..backend.llvm.driver.compile import signature_form
    from ..backend.llvm.typing import types as T
    from ..backend.llvm.typing.infer import typed
    from .jit import compiled_forms
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
    func = compiled_forms(func)  # as jit will have it
    free.update((n, fv.load()) for n, fv in more.items())
    names = [p.var.name for p in func.params]
    vals += [free[n] for n in names[len(vals):]]
    func, types, _ = signature_form(func, vals, list, lambda: (func.name, ""))
    returned = typed(func, dict(zip(names, types)))[2]
    if isinstance(returned, T.NoneType):  # every path raises (a case refused at run time)
        raise UnsupportedSyntaxError("jit: the function returns no value for these argument "
                                     "types (every path raises, or it returns None): its "
                                     "Jacobian is not compiled", func.loc)
    return returned
