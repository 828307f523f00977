"""Transforms as code: the ``__s2s_ir__`` of ``jacfwd``, ``jacrev`` and ``hessian``
functions and of ``vjp`` called inside transformed code.

A Jacobian function met by another transform (``jacfwd(jacrev(f))``,
``vmap(hessian(f))``, ``grad(lambda x: jacrev(f)(x) @ v)``) stands for plain
numpy code over the standard basis, which s2s reads like user code and
inlines, so the outer transform differentiates, batches or compiles it with
no rule of its own.  For ``nargs`` positional arguments ``a0, a1, ...`` and
differentiated arguments ``nums``:

* **jacfwd**: for each differentiated ``a_n``, a loop over its ``size`` entries
  pushes the basis vector ``e_k`` (shaped like ``a_n``, zero tangents for the
  other arguments) through ``jvp(fun, ...)`` and writes the tangent output into
  row ``k`` of a buffer allocated before the loop (shaped from one primal call
  ``fun(*a)``), whose first axis is then moved last and reshaped to
  ``out.shape + a_n.shape``;
* **jacrev**: for each output leaf ``o``, a loop over its entries takes
  ``grad`` of ``sum(fun(*a)[o] * ct)`` with respect to ``nums`` at the basis
  cotangent ``ct = e_k`` and writes the gradient into row ``k`` of a buffer
  allocated before the loop, reshaped to ``o.shape + a_n.shape``;
* **hessian**: the jacfwd code of ``jacrev(fun, argnums)``, as JAX's
  ``jacfwd(jacrev(fun))``.

The rows are written in place rather than appended to a list and stacked, so the
code compiles (a list that grows holds numbers under jit) and is batched and
differentiated through the in-place writes' rules.

* **vjp** inside code: ``vjp(fun, *primals)`` is ``(fun(*primals), pullback)``
  where ``pullback`` is an object of a class written in that code, which never
  exists at run time (the inliner's ``Pack`` and virtual objects,
  ``passes/inline.py``); ``pullback(ct)`` is ``grad`` of
  ``sum(fun(*a) * ct)`` with respect to every primal, at the primals.

Layout as JAX's (a tuple over ``nums`` when ``argnums`` is a tuple, inside a
tuple over the output's leaves when the output is a tuple).  What this code
covers: differentiated and other arguments that are numbers or arrays, an
output that is a number, an array or a flat tuple of them, no ``has_aux`` and
no ``holomorphic``.  Arguments or an output that nest tuples, lists and dicts
(``str`` or ``int`` keys) are read through the function of their leaves
(``_pytree_jacobian_ir``: ``flat_fun(l0, l1, ...)``, whose Jacobian is the code
above, regrouped into the output's tree of the arguments' trees); anything else
raises ``UnsupportedSyntaxError`` naming it (the Jacobian function itself, called
outside transformed code, takes any pytree).  The code is generated as Python text per ``(nargs, nums, output
structure, dtypes)`` and registered with ``linecache`` (as generated code is,
``emit/load.py``), so the frontend reads it like any function.
"""
from __future__ import annotations

import hashlib
import re

import numpy as np

from ..errors import UnsupportedSyntaxError
from ..frontend.registered import register as register_source
from ..ir.kinds import is_inexact_leaf

_CODE = {}  # (what, id(fun), nargs, nums, single, layout, dtypes, output dtypes)
#            -> (fun, generated function)


def _leaf(v) -> bool:
    return isinstance(v, (float, int, complex, bool, np.ndarray, np.generic))


def _dtype_text(v) -> str:
    dt = np.result_type(v)
    if dt.kind != "f":
        dt = np.dtype(np.float64)
    return f"np.{dt.name}"


def jacobian_ir(what, fun, argnums, has_aux, holomorphic, args, kwargs):
    """``(ir.Function, freevars)`` of ``<what>(fun, argnums)`` for calls with arguments of
    the kinds of ``args`` (the ``__s2s_ir__`` of a Jacobian function)."""
    from . import pipeline
    from .specialise import normalise_argnums

    label = f"{what}(f) inside transformed code or transformed again"
    if kwargs:
        raise UnsupportedSyntaxError(f"{label}: keyword arguments (pass them positionally)")
    if has_aux or holomorphic:
        raise UnsupportedSyntaxError(f"{label}: has_aux=True or holomorphic=True")
    nums, single = normalise_argnums(argnums, len(args), getattr(fun, "__name__", "f"))
    if not all(map(_leaf, args)):
        return _pytree_jacobian_ir(what, fun, nums, single, args, label)
        if i in nums and (not is_inexact_leaf(a) or np.iscomplexobj(a)):
            raise TypeError(f"{what} requires real-valued inputs (float leaves) in argnums; "
                            f"argument {i} is {np.result_type(a).name}")
    out = (jacrev_fun(fun, argnums) if what == "hessian" else fun)(*args)
    if isinstance(out, tuple) and all(map(_leaf, out)):
        layout = len(out)
    elif _leaf(out):
        layout = None
    elif what != "hessian":
        return _pytree_jacobian_ir(what, fun, nums, single, args, label)
    else:
        raise UnsupportedSyntaxError(f"{label}: an output of type {type(out).__name__} "
                                     "(this code returns numbers, arrays or a flat tuple "
                                     "of them)")
    for o in out if layout is not None else (out,):
        if np.iscomplexobj(o):
            raise TypeError(f"{what} requires real-valued outputs, got "
                            f"{np.result_type(o).name}")
    dtypes = tuple(_dtype_text(a) for a in args)
    out_dtypes = tuple(_dtype_text(o) for o in (out if layout is not None else (out,)))
    numbers = tuple(i for i, a in enumerate(args) if np.ndim(a) == 0)
    key = (what, id(fun), len(args), nums, single, layout, dtypes, out_dtypes, numbers)
    hit = _CODE.get(key)
    if hit is None or hit[0] is not fun:
        if what == "jacrev":
            text = _jacrev_text(len(args), nums, single, layout, dtypes)
        else:
            text = _jacfwd_text(len(args), nums, single, layout, dtypes, out_dtypes, numbers)
        inner = jacrev_fun(fun, argnums) if what == "hessian" else fun
        name = "jacrev_code" if what == "jacrev" else "jacfwd_code"
        hit = _CODE[key] = (fun, _load(text, name, inner))
    front = pipeline.front(hit[1])
    return front.func, dict(front.freevars)


def _tree_paths(value, label, what):
    """``(text, leaves)``: ``value`` as Python text with each leaf written ``\\0j\\0`` (its
    place among the leaves between NULs, which no key's ``repr`` holds), and the index
    paths of its leaves in JAX's order (dicts by sorted key).  Tuples, lists, dicts with ``str`` or ``int``
    keys and ``None`` nest; numbers and arrays are leaves; anything else is refused."""
    leaves = []

    def walk(v, path):
        if _leaf(v):
            leaves.append(path)
            return "\0%d\0" % (len(leaves) - 1)
        if v is None:
            return "None"
        if type(v) in (tuple, list):
            items = [walk(x, path + (k,)) for k, x in enumerate(v)]
            return ("(%s,)" if type(v) is tuple else "[%s]") % ", ".join(items) \
                if items else ("()" if type(v) is tuple else "[]")
        if type(v) is dict and all(type(k) in (str, int) for k in v) \
                and len({type(k) for k in v}) <= 1:
            return "{%s}" % ", ".join(f"{k!r}: {walk(v[k], path + (k,))}" for k in sorted(v))
        raise UnsupportedSyntaxError(
            f"{label}: {what} of type {type(v).__name__} (this code takes numbers, arrays "
            "and tuples, lists and dicts of them, with str or int keys)")

    return walk(value, ()), leaves


def _fill(text, parts) -> str:
    """``text`` of ``_tree_paths`` with leaf ``j`` written ``parts[j]``."""
    return re.sub("\0(\\d+)\0", lambda m: parts[int(m.group(1))], text)


def _path_text(base, path) -> str:
    return base + "".join(f"[{k!r}]" for k in path)


def _pytree_jacobian_ir(what, fun, nums, single, args, label):
    """``<what>(fun, argnums)`` for arguments or an output that nest tuples, lists or
    dicts: the Jacobian of the function of the leaves (``flat_fun(l0, l1, ...)``, its
    output flattened to a tuple of leaves unless it is one leaf) with respect to the
    leaves of the differentiated arguments, regrouped as JAX lays it out: the output's
    tree, each leaf holding the tree of ``argnums`` (one argument's or a tuple of them)
    of blocks (``hessian``: that tree of that tree)."""
    from . import pipeline
    arg_trees = [_tree_paths(a, label, f"argument {i}") for i, a in enumerate(args)]
    flat_names, flat_of = [], {}  # the leaves, and (argument, leaf index) -> their name
    for i, (_, paths) in enumerate(arg_trees):
        for j in range(len(paths)):
            flat_of[i, j] = f"l{len(flat_names)}"
            flat_names.append(flat_of[i, j])
    for n in nums:
        for j, path in enumerate(arg_trees[n][1]):
            leaf = args[n]
            for k in path:
                leaf = leaf[k]
            if not is_inexact_leaf(leaf) or np.iscomplexobj(leaf):
                raise TypeError(f"{what} requires real-valued inputs (float leaves) in "
                                f"argnums; argument {n} holds {np.result_type(leaf).name}")
    out = fun(*args)
    out_text, out_paths = _tree_paths(out, label, "an output")
    flat_nums = tuple(int(flat_of[n, j][1:]) for n in nums for j in range(len(arg_trees[n][1])))
    if not flat_nums:
        raise UnsupportedSyntaxError(f"{label}: no leaf to differentiate")
    one_out = _leaf(out)
    call = ", ".join(_fill(text, [flat_of[i, j] for j in range(len(paths))])
                     for i, (text, paths) in enumerate(arg_trees))
    ret = "out" if one_out else "(" + "".join(
        _path_text("out", p) + ", " for p in out_paths) + ")"
    flat_text = (f"def flat_fun({', '.join(flat_names)}):\n"
                 f"    out = fun({call})\n"
                 f"    return {ret}\n")
    a = [f"a{i}" for i in range(len(args))]
    leaves = ", ".join(_path_text(a[i], p) for i, (_, paths) in enumerate(arg_trees)
                       for p in paths)
    position = {f: k for k, f in enumerate(flat_nums)}

    def per_argnums(prefix):  # the tree of argnums, leaf blocks read from prefix[k]
        trees = [_fill(arg_trees[n][0], [f"{prefix}[{position[int(flat_of[n, j][1:])]}]"
                                         for j in range(len(arg_trees[n][1]))])
                 for n in nums]
        return trees[0] if single else "(" + "".join(t + ", " for t in trees) + ")"

    def per_leaf(prefix):  # hessian: the tree of argnums of trees of argnums
        if what != "hessian":
            return per_argnums(prefix)
        outer = [_fill(arg_trees[n][0], [per_argnums(
            f"{prefix}[{position[int(flat_of[n, j][1:])]}]")
            for j in range(len(arg_trees[n][1]))]) for n in nums]
        return outer[0] if single else "(" + "".join(t + ", " for t in outer) + ")"

    body = per_leaf("jac") if one_out else _fill(
        out_text, [per_leaf(f"jac[{o}]") for o in range(len(out_paths))])
    wrapper_text = (f"def jacobian_tree({', '.join(a)}):\n"
                    f"    jac = fun({leaves})\n"
                    f"    return {body}\n")
    key = ("tree", what, id(fun), flat_text, wrapper_text, flat_nums)
    hit = _CODE.get(key)
    if hit is None or hit[0] is not fun:
        flat_fun = _load(flat_text, "flat_fun", fun)
        jac = _public(what)(flat_fun, argnums=flat_nums)
        hit = _CODE[key] = (fun, _load(wrapper_text, "jacobian_tree", jac))
    front = pipeline.front(hit[1])
    return front.func, dict(front.freevars)


def vjp_ir(fun, primals, has_aux, captured=None):
    """``(ir.Function, freevars)`` of ``vjp(fun, *primals)`` called inside transformed
    code with primals of these kinds: ``def vjp_code(f, a0, ..., has_aux=False)``; with
    ``captured`` (a local function's form: the values of the variables it captures,
    trailing arguments of ``fun`` that are not differentiated, maybe none), ``def
    vjp_code(a0, ..., c0, ..., has_aux=False)``."""
    from . import pipeline

    closure, captured = captured is not None, tuple(captured or ())

    label = "vjp inside transformed code"
    if has_aux:
        raise UnsupportedSyntaxError(f"{label} with has_aux=True")
    for i, a in enumerate(primals):
        if not _leaf(a) or not is_inexact_leaf(a) or np.iscomplexobj(a):
            raise UnsupportedSyntaxError(
                f"{label}: primal {i} is a {type(a).__name__} (this code takes real numbers "
                "and arrays)")
    out = fun(*primals, *captured)
    if isinstance(out, tuple) and all(map(_leaf, out)):
        layout = len(out)
    elif _leaf(out):
        layout = None
    else:
        raise UnsupportedSyntaxError(f"{label}: an output of type {type(out).__name__}")
    for o in out if layout is not None else (out,):
        if np.iscomplexobj(o):
            raise UnsupportedSyntaxError(f"{label}: a complex output")
    key = ("vjp", id(fun), len(primals), layout, len(captured), closure)
    hit = _CODE.get(key)
    if hit is None or hit[0] is not fun:
        text = _vjp_text(len(primals), layout, len(captured), closure)
        hit = _CODE[key] = (fun, _load(text, "vjp_code", fun))
    # as the frontend lowered it: the pullback object is seen through where it is
    # inlined (returned from here on its own, it would escape)
    func, freevars = pipeline.lowered(hit[1])
    return func, dict(freevars)


def _vjp_text(nargs, layout, n_captured=0, closure=False) -> str:
    a = [f"a{i}" for i in range(nargs)]
    every = a + [f"c{i}" for i in range(n_captured)]  # the primals, then the captures
    outs = [None] if layout is None else list(range(layout))
    cts = [f"ct{o or 0}" for o in outs]
    lines = [f"def dotted({', '.join(every + cts)}):",
             f"    out = fun({', '.join(every)})"]
    terms = [f"np.sum(out * {cts[0]})"] if layout is None else \
        [f"np.sum(out[{o}] * {ct})" for o, ct in zip(outs, cts)]
    lines += [f"    return {' + '.join(terms)}", "", "", "class Pullback:",
              f"    def __init__(self, {', '.join(every)}):"]
    lines += [f"        self.{x} = {x}" for x in every]
    given = "ct" if layout is None else ", ".join(f"ct[{o}]" for o in outs)
    head = "" if closure else "f, "
    lines += ["", "    def __call__(self, ct):",
              f"        return grad(dotted, argnums=({', '.join(map(str, range(nargs)))},))("
              f"{', '.join('self.' + x for x in every)}, {given})", "", "",
              f"def vjp_code({head}{', '.join(every)}, has_aux=False):",
              f"    return fun({', '.join(every)}), Pullback({', '.join(every)})"]
    return "\n".join(lines) + "\n"


def linearize_ir(fun, primals, captured=None):
    """``(ir.Function, freevars)`` of ``linearize(fun, *primals)`` called inside
    transformed code: ``def linearize_code(f, a0, ...)`` returning ``fun``'s value and
    an object whose call on the tangents is ``jvp(fun, primals, tangents)[1]`` (the
    primal recomputed by each call, as ``LinearizedFunction`` does); with ``captured``
    (the values of the variables a local function captures, trailing arguments of
    ``fun`` without tangents; a local function's form, maybe with none), ``def
    linearize_code(a0, ..., c0, ...)``."""
    from . import pipeline

    closure, captured = captured is not None, tuple(captured or ())

    for i, a in enumerate(primals):
        if not is_inexact_leaf(a):
            raise UnsupportedSyntaxError(
                f"linearize inside transformed code: primal {i} is a {type(a).__name__} "
                "(this code takes float or complex numbers and arrays)")
    key = ("linearize", id(fun), len(primals), len(captured), closure)
    hit = _CODE.get(key)
    if hit is None or hit[0] is not fun:
        text = _linearize_text(len(primals), len(captured), closure)
        hit = _CODE[key] = (fun, _load(text, "linearize_code", fun))
    func, freevars = pipeline.lowered(hit[1])  # the object seen through where it is called
    return func, dict(freevars)


def _linearize_text(nargs, n_captured, closure=False) -> str:
    a = [f"a{i}" for i in range(nargs)]
    c = [f"c{i}" for i in range(n_captured)]
    t = [f"t{i}" for i in range(nargs)]
    every = a + c
    held = "".join(f"self.{x}, " for x in every)
    lines = ["class Linearized:", f"    def __init__(self, {', '.join(every)}):"]
    lines += [f"        self.{x} = {x}" for x in every]
    lines += ["", f"    def __call__(self, {', '.join(t)}):",
              f"        return jvp(fun, ({held}), ({''.join(x + ', ' for x in t)}"
              f"{'None, ' * n_captured}))[1]", "", "",
              f"def linearize_code({'' if closure else 'f, '}{', '.join(every)}):",
              f"    return fun({', '.join(every)}), Linearized({', '.join(every)})"]
    return "\n".join(lines) + "\n"


#: the public transforms the code written here calls (``grad``, ``jvp``, ``jacrev``): it is
#: code at the user's level, run by the transforms above this layer, which register
#: them when ``s2s.api`` is imported (``register_public``)
PUBLIC: dict = {}


def register_public(**transforms) -> None:
    """Name the public transforms (``grad=``, ``jvp=``, ``jacrev=``) the code calls."""
    PUBLIC.update(transforms)


def _public(name: str):
    fn = PUBLIC.get(name)
    if fn is None:
        raise RuntimeError(f"transform code needs s2s.{name} (import s2s)")
    return fn


def jacrev_fun(fun, argnums):
    return _public("jacrev")(fun, argnums)


def _load(text: str, name: str, fun):
    digest = hashlib.sha1(text.encode()).hexdigest()[:12]
    filename = f"<s2s-jacobian {name} {digest}>"
    register_source(filename, text)
    namespace = {"np": np, "jvp": _public("jvp"), "grad": _public("grad"), "fun": fun,
                 "__name__": "s2s_generated"}
    exec(compile(text, filename, "exec"), namespace)
    return namespace[name]


def _pack(parts, single) -> str:
    return parts[0] if single else "(" + ", ".join(parts) + ",)"


def _jacfwd_text(nargs, nums, single, layout, dtypes, out_dtypes, numbers=()) -> str:
    """``jacfwd_code``: one ``jvp`` per basis vector of each differentiated argument (a
    number's tangent is the number 1.0, as its primal is a number)."""
    a = [f"a{i}" for i in range(nargs)]
    outs = [None] if layout is None else list(range(layout))
    lines = [f"def jacfwd_code({', '.join(a)}):",
             f"    out = fun({', '.join(a)})"]
    leaf = (lambda o: "out") if layout is None else (lambda o: f"out[{o}]")
    lines += [f"    z{i} = np.zeros_like({a[i]})" for i in range(nargs)]
    for n in nums:
        # each argument's own tangent and result names (a number's basis tangent is 0-d,
        # a vector's 1-d: one name would hold two types under jit)
        tangents = ", ".join(f"t{n}" if i == n else f"z{i}" for i in range(nargs))
        lines += [f"    n{n} = np.size({a[n]})",
                  f"    e{n} = np.eye(n{n})" if dtypes[n] == "np.float64" else
                  f"    e{n} = np.eye(n{n}, dtype={dtypes[n]})"]
        lines += [f"    c{n}_{o or 0} = np.zeros((n{n},) + np.shape({leaf(o)}), "
                  f"dtype={out_dtypes[o or 0]})" for o in outs]
        lines += [f"    for k in range(n{n}):",
                  f"        t{n} = e{n}[k, 0]" if n in numbers else
                  f"        t{n} = np.reshape(e{n}[k], np.shape({a[n]}))",
                  f"        d{n} = jvp(fun, ({', '.join(a)},), ({tangents},))[1]"]
        lines += [f"        c{n}_{o or 0}[k] = {f'd{n}' if o is None else f'd{n}[{o}]'}"
                  for o in outs]
        for o in outs:
            c = f"c{n}_{o or 0}"
            lines += [f"    j{c} = np.reshape(np.moveaxis({c}, 0, -1), "
                      f"np.shape({leaf(o)}) + np.shape({a[n]}))"]
    per_out = [_pack([f"jc{n}_{o or 0}" for n in nums], single) for o in outs]
    lines.append(f"    return {per_out[0] if layout is None else _pack(per_out, False)}")
    return "\n".join(lines) + "\n"


def _jacrev_text(nargs, nums, single, layout, dtypes) -> str:
    a = [f"a{i}" for i in range(nargs)]
    outs = [None] if layout is None else list(range(layout))
    cts = [f"ct{o or 0}" for o in outs]
    lines = [f"def dotted({', '.join(a + cts)}):",
             f"    out = fun({', '.join(a)})"]
    terms = [f"np.sum(out * {cts[0]})"] if layout is None else \
        [f"np.sum(out[{o}] * {ct})" for o, ct in zip(outs, cts)]
    lines += [f"    return {' + '.join(terms)}", "",
              f"def jacrev_code({', '.join(a)}):",
              f"    out = fun({', '.join(a)})"]
    leaf = (lambda o: "out") if layout is None else (lambda o: f"out[{o}]")
    lines += [f"    y{o or 0} = {leaf(o)}" for o in outs]
    lines += [f"    z{o or 0} = np.zeros_like(y{o or 0}, dtype=np.float64)" for o in outs]
    grad_of = f"grad(dotted, argnums=({', '.join(map(str, nums))},))"
    for o in outs:
        m = f"m{o or 0}"
        given = ", ".join(f"ct{o or 0}" if x == o else f"z{x or 0}" for x in outs)
        lines += [f"    {m} = np.size(y{o or 0})",
                  f"    e{o or 0} = np.eye({m})"]
        lines += [f"    r{o or 0}_{n} = np.zeros(({m},) + np.shape({a[n]}), dtype={dtypes[n]})"
                  for n in nums]
        lines += [f"    for k in range({m}):",
                  f"        ct{o or 0} = np.reshape(e{o or 0}[k], np.shape(y{o or 0}))",
                  f"        g{o or 0} = {grad_of}({', '.join(a)}, {given})"]
        lines += [f"        r{o or 0}_{n}[k] = g{o or 0}[{j}]" for j, n in enumerate(nums)]
        for n in nums:
            r = f"r{o or 0}_{n}"
            lines += [f"    j{r} = np.reshape({r}, np.shape(y{o or 0}) + "
                      f"np.shape({a[n]}))"]
    per_out = [_pack([f"jr{o or 0}_{n}" for n in nums], single) for o in outs]
    lines.append(f"    return {per_out[0] if layout is None else _pack(per_out, False)}")
    return "\n".join(lines) + "\n"

