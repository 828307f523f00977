"""``jit(jacrev(f))``, ``jit(jacfwd(f))`` and ``jit(hessian(f))``: one native kernel each.

For the argument kinds of a call, ``kernel_ir`` builds one IR function (the
Jacobian kernel, ``core/jacobian_kernels.py``) that the LLVM backend compiles like any
other; the helpers it calls are in ``backend/llvm/jacobian_ops.py``.  Layout as JAX's: for each output
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

from ..errors import UnsupportedSyntaxError
from ..ir import nodes as ir
from ..ir.kinds import is_inexact_leaf
from .jacobian_kernels import return_type_of, jacfwd_ir, jacrev_ir, leaf_paths


def holds_lists_or_dicts(args) -> bool:
    """Whether an argument holds a list or a dict: no kernel is built for it
    (``kernel_ir``); ``jit`` compiles the call of the Jacobian function as code
    (``core/transform_code.py``'s Jacobian of the leaves), as for ``jit(lambda p:
    hessian(f)(p))``."""
    return any(isinstance(v, (dict, list)) for a in args for _, v in leaf_paths(a))


def check_kinds(what, args, nums, loc):
    from ..backend.llvm.typing import types as T
    for n in nums:
        for _, v in leaf_paths(args[n]):
            if v is not None and (T.value_type(v) is None or isinstance(v, (dict, list))
                                  or isinstance(v, tuple) and type(v) is not tuple):
                raise TypeError(
                    f"jit({what}): argument {n} is or holds a {type(v).__name__}; compiled "
                    "Jacobians take numbers, numpy arrays and tuples, lists and dicts of "
                    f"them (call {what}(f) without jit for other pytrees)")
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


# -- the entry point jit uses -----------------------------------------------------------
def jit_signature(fun):
    """The signature ``jit`` binds a Jacobian function's arguments with: ``fun``'s."""
    from .reverse import ReverseTransform
    from .specialise import signature_of
    if hasattr(fun, "_s2s_jit_ir"):
        raise UnsupportedSyntaxError(
            "jit of a jacfwd/jacrev/hessian of a jacfwd, jacrev, hessian or vmap function is "
            "not compiled (jit(hessian(f)) compiles jacfwd(jacrev(f)); call the nested "
            "Jacobian without jit)")
    return fun.sig if isinstance(fun, ReverseTransform) else signature_of(fun)


def kernel_ir(what, fun, argnums, args, has_aux=False, holomorphic=False):
    """``(kernel IR, free values loader)`` of ``jit(<what>(fun, argnums))`` for ``args``
    (``what``: "jacrev", "jacfwd" or "hessian"); None where an argument holds a list or a
    dict (``holds_lists_or_dicts``: the call is compiled as code)."""
    if holds_lists_or_dicts(args) and not (has_aux or holomorphic):
        return None
    from .specialise import normalise_argnums
    from .reverse import reverse_transform, ReverseTransform
    from .forward import forward_of
    from .varargs import adapter, wants_adapter
    from .custom_primal import primal_calls_inlined
    name = getattr(fun, "__name__", "f")
    for flag, on in (("has_aux", has_aux), ("holomorphic", holomorphic)):
        if on:
            raise UnsupportedSyntaxError(f"jit({what}(f, {flag}=True)) is not compiled; "
                                         f"call {what}(f, {flag}=True) without jit")
    nums, single = normalise_argnums(argnums, len(args), name)
    check_kinds(what, args, nums, None)
    f = adapter(fun, len(args), ()) if wants_adapter(fun) else fun
    inner_free = {}
    if isinstance(f, ReverseTransform):  # jacrev(grad(f)): the vjp of the code grad made
        positional = f._bind(list(args), {})
        gen, gen_free = f.generated(positional)
        inner_free = f.gen_freevars(positional)
        vjp_t = reverse_transform(gen, nums, False, False, "vjp")
        values = vjp_t._bind(list(args), gen_free)
    else:
        vjp_t = reverse_transform(f, nums, False, False, "vjp")
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
        target = f if what == "jacfwd" else reverse_transform(
            f, argnums if single else nums, False, False, "grad")
        fwd_t = forward_of(target, False)
        values = values[:npos]
        carries = fwd_t._carries(values, len(values))
        jvp, freevars = fwd_t.site_ir(values, carries, {})
        func = jacfwd_ir(jvp, values, carries, nums, single, what,
                         lambda fn: return_type_of(fn, values, freevars, carries))
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


def _check_scalar_output(transform, values):
    from ..backend.llvm.typing import types as T
    fwd, _, freevars = transform.split_ir(values)
    body = list(fwd.body)
    value_only = ir.Function(fwd.name, fwd.params,
                             tuple(body[:-3]) + (ir.Return(body[-2].value.args[0], fwd.loc),),
                             fwd.loc, temps=fwd.temps)
    out_t = return_type_of(value_only, values, freevars)
    if isinstance(out_t, T.Array) and out_t.ndim == 0:  # np.tensordot(a, b, axes=2)
        out_t = out_t.elem
    if not (isinstance(out_t, T.Scalar) and out_t.dtype in ("f4", "f8")):
        raise UnsupportedSyntaxError(
            f"jit(hessian(f)): f returns a {out_t}; compiled Hessians are of functions with "
            "a float32/float64 scalar output (call hessian(f) without jit)", fwd.loc)
