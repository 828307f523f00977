"""Random straight-line Python programs for property-based gradient tests.

Hypothesis strategies that generate the *source text* of a small module
(``f`` plus an optional helper ``h0``) in the subset s2s differentiates:
straight-line code, if/elif/else (also with returns in the branches),
conditional expressions, helper calls with keyword arguments, tuple
assignment and unpacking, augmented assignment, dict inputs; no loops.

Generated modules are registered in ``linecache`` under a made-up file
name and executed with ``exec``: s2s reads a function's source through
``linecache``, so no file needs to be written.  Nothing here imports s2s.
"""
from __future__ import annotations

import itertools
import linecache
import math
from dataclasses import dataclass, field
from typing import List, Optional

import numpy as np
from hypothesis import strategies as st

_COUNTER = itertools.count()

HEADER = "import math\nimport numpy as np\n\n"


@dataclass
class Program:
    source: str
    #: names of f's positional parameters, in order
    params: List[str]
    #: "scalar" (every param a float), "dict" (param 0 is a dict of floats),
    #: or "array" (param 0 a 1-D array, param 1 a float)
    kind: str
    #: True when the program has no comparison, so it is real-analytic and
    #: uses only np.* functions: the complex step applies
    analytic: bool
    #: keys of the dict parameter (kind == "dict")
    keys: List[str] = field(default_factory=list)
    #: the array size (kind == "array")
    size: int = 0


def load(src: str, name: str = "f"):
    """Execute ``src`` as a fresh module whose source linecache can find."""
    n = next(_COUNTER)
    filename = f"/s2s-progen/gen_{n}.py"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns = {"__name__": f"s2s_progen_{n}", "__file__": filename}
    exec(compile(src, filename, "exec"), ns)
    return ns[name]


# ----------------------------------------------------------------- scalars

CONSTS = ["0.5", "1.5", "2.0", "0.25", "3.0", "0.7", "2"]

UNARY = [
    "-{a}",
    "{a} ** 2",
    "({a}) ** 3",
    "(({a}) * ({a}) + 1.0) ** 0.5",
    "{m}.sin({a})",
    "{m}.cos({a})",
    "{m}.tanh({a})",
    "{m}.exp({m}.sin({a}))",
    "{m}.exp({m}.tanh({a}))",
    "{m}.log(1.0 + ({a}) * ({a}))",
    "{m}.sqrt(2.0 + ({a}) * ({a}))",
]

#: not real-analytic (kinks): only in programs checked by finite differences
UNARY_KINKED = ["abs({a})", "np.abs({a})"]

BINARY = [
    "{a} + {b}",
    "({a} - {b})",
    "{a} * {b}",
    "({a}) * ({b})",
    "({a}) / (1.0 + ({b}) * ({b}))",
    "({a}) / (2.0 + {m}.cos({b}))",
]

BINARY_KINKED = ["np.maximum({a}, {b})", "np.minimum({a}, {b})", "({a} if {c} else {b})"]


@st.composite
def scalar_expr(draw, names, depth, analytic):
    """An expression over ``names`` (nonempty) and constants."""
    if depth <= 0 or draw(st.integers(0, 4)) == 0:
        if draw(st.integers(0, 5)) == 0:
            return draw(st.sampled_from(CONSTS))
        return draw(st.sampled_from(names))
    m = "np" if analytic else draw(st.sampled_from(["math", "np"]))
    if draw(st.booleans()):
        form = draw(st.sampled_from(UNARY if analytic else UNARY + UNARY_KINKED))
        a = draw(scalar_expr(names, depth - 1, analytic))
        return form.format(a=a, m=m)
    form = draw(st.sampled_from(BINARY if analytic else BINARY + BINARY_KINKED))
    a = draw(scalar_expr(names, depth - 1, analytic))
    b = draw(scalar_expr(names, depth - 1, analytic))
    c = draw(condition(names)) if "{c}" in form else ""
    return form.format(a=a, b=b, c=c, m=m)


@st.composite
def condition(draw, names, depth=1):
    if depth > 0 and draw(st.integers(0, 4)) == 0:
        form = draw(st.sampled_from(["{c} and {d}", "{c} or {d}", "not {c}", "not ({c} or {d})"]))
        return form.format(c=draw(condition(names, depth - 1)),
                           d=draw(condition(names, depth - 1)))
    v = draw(st.sampled_from(names))
    form = draw(st.sampled_from(["{v} > 0.3", "{v} < -0.2", "{v} > {w}", "0.1 < {v}",
                                 "-0.5 < {v} <= 0.5", "{v} >= {w}", "{v} * {w} < 0.25"]))
    return form.format(v=v, w=draw(st.sampled_from(names)))


@st.composite
def helper_def(draw, analytic):
    """``def h0(u, k=...)`` with 1-2 statements (and maybe an early return)."""
    k = draw(st.sampled_from(CONSTS))
    lines = [f"def h0(u, k={k}):"]
    t = draw(scalar_expr(["u", "k"], 2, analytic))
    lines.append(f"    t = {t}")
    if not analytic and draw(st.booleans()):
        c = draw(condition(["u", "t"]))
        r = draw(scalar_expr(["u", "k", "t"], 2, analytic))
        lines.append(f"    if {c}:")
        lines.append(f"        return {r}")
    r = draw(scalar_expr(["u", "k", "t"], 2, analytic))
    lines.append(f"    return {r}")
    return "\n".join(lines) + "\n\n\n"


@st.composite
def pair_helper_def(draw, analytic, calls_h0):
    """``def h1(u, w=...)`` returning a tuple, maybe calling ``h0``."""
    w = draw(st.sampled_from(CONSTS))
    s = draw(scalar_expr(["u", "w"], 2, analytic))
    if calls_h0 and draw(st.booleans()):
        s = f"h0({s}, k=w) + u"
    r1 = draw(scalar_expr(["u", "w", "s"], 2, analytic))
    r2 = draw(scalar_expr(["u", "w", "s"], 2, analytic))
    return f"def h1(u, w={w}):\n    s = {s}\n    return {r1}, {r2}\n\n\n"


@st.composite
def scalar_program(draw, analytic: Optional[bool] = None, dict_input: Optional[bool] = None):
    if analytic is None:
        analytic = draw(st.booleans())
    n_in = draw(st.integers(1, 3))
    if dict_input is None:
        dict_input = draw(st.integers(0, 4)) == 0
    body: List[str] = []
    keys: List[str] = []
    if dict_input:
        keys = ["a", "b", "c"][:n_in]
        params = ["p"] + (["y"] if draw(st.booleans()) else [])
        names = []
        for i, k in enumerate(keys):
            body.append(f"x{i} = p[{k!r}]")
            names.append(f"x{i}")
        names += params[1:]
    else:
        params = [f"x{i}" for i in range(n_in)]
        names = list(params)
    has_helper = draw(st.integers(0, 2)) == 0
    helper = draw(helper_def(analytic)) if has_helper else ""
    has_pair = draw(st.integers(0, 3)) == 0
    if has_pair:
        helper += draw(pair_helper_def(analytic, has_helper))
    fresh = itertools.count()

    def new_name():
        return f"v{next(fresh)}"

    def expr(depth=2):
        return draw(scalar_expr(names, depth, analytic))

    n_stmts = draw(st.integers(3, 12))
    kinds = ["new", "new", "new", "reassign", "aug", "swap", "unpack"]
    if has_helper:
        kinds += ["call"]
    if has_pair:
        kinds += ["pair"]
    if not analytic:
        kinds += ["if", "ifexp"]
    for _ in range(n_stmts):
        kind = draw(st.sampled_from(kinds))
        if kind == "new":
            v = new_name()
            body.append(f"{v} = {expr()}")
            names.append(v)
        elif kind == "reassign":
            v = draw(st.sampled_from(names))
            body.append(f"{v} = {expr()}")
        elif kind == "aug":
            v = draw(st.sampled_from(names))
            op = draw(st.sampled_from(["+=", "-=", "*="]))
            e = expr(1)
            if op == "*=":
                e = f"{draw(st.sampled_from(['np', 'math'] if not analytic else ['np']))}.tanh({e})"
            body.append(f"{v} {op} {e}")
        elif kind == "swap":
            if len(names) < 2:
                continue
            a, b = draw(st.lists(st.sampled_from(names), min_size=2, max_size=2, unique=True))
            body.append(f"{a}, {b} = {b}, {a}")
        elif kind == "unpack":
            a, b = new_name(), new_name()
            body.append(f"{a}, {b} = {expr()}, {expr()}")
            names += [a, b]
        elif kind == "call":
            v = new_name()
            style = draw(st.integers(0, 2))
            if style == 0:
                call = f"h0({expr(1)})"
            elif style == 1:
                call = f"h0({expr(1)}, k={expr(1)})"
            else:
                call = f"h0(k={expr(1)}, u={expr(1)})"
            body.append(f"{v} = {call}")
            names.append(v)
        elif kind == "pair":
            a, b = new_name(), new_name()
            call = draw(st.sampled_from(["h1({e}, {w})", "h1({e}, w={w})", "h1({e})"]))
            body.append(f"{a}, {b} = " + call.format(e=expr(1), w=expr(1)))
            names += [a, b]
        elif kind == "ifexp":
            v = new_name()
            body.append(f"{v} = {expr()} if {draw(condition(names))} else {expr()}")
            names.append(v)
        elif kind == "if":
            c = draw(condition(names))
            v = draw(st.sampled_from(names + ["NEW"]))
            if v == "NEW":
                v = new_name()
            w = draw(st.sampled_from(names))
            br = [f"if {c}:", f"    {v} = {expr()}", f"    {w} = {expr()}"]
            if draw(st.booleans()):
                br += [f"elif {draw(condition(names))}:", f"    {v} = {expr()}"]
            br += ["else:", f"    {v} = {expr()}"]
            body += br
            if v not in names:
                names.append(v)
    # the result: combine the last few variables so most of the program matters
    tail = names[-3:]
    ret = " + ".join(f"{c} * {n}" for c, n in zip(["1.0", "0.5", "0.25"], reversed(tail)))
    if not analytic and draw(st.integers(0, 3)) == 0:
        c1, c2 = draw(condition(names)), draw(condition(names))
        body += [f"if {c1}:", f"    return {ret}", f"elif {c2}:", f"    return {expr()}",
                 "else:", f"    return {expr()} * {tail[-1]}"]
    else:
        body.append(f"return {ret}")
    src = HEADER + helper + f"def f({', '.join(params)}):\n" + "".join(
        f"    {line}\n" for line in body)
    return Program(src, params, "dict" if dict_input else "scalar", analytic, keys)


# ------------------------------------------------------------------ arrays


@st.composite
def array_program(draw):
    """``def f(x, s)``: x a 1-D float array of size 3-5, s a float; scalar result.

    Variables carry their shapes: ``()`` scalars, ``(m,)`` vectors, ``(2, m)``
    matrices; each statement applies one op to existing variables.
    """
    n = draw(st.integers(3, 5))
    shapes = {"x": (n,), "s": ()}
    body: List[str] = []
    fresh = itertools.count()

    def of(pred):
        return [v for v, sh in shapes.items() if pred(sh)]

    def vec():
        return draw(st.sampled_from(of(lambda sh: len(sh) == 1)))

    # ``a += b`` updates a numpy array in place, so it is only generated for
    # arrays that own their memory and of which no view was taken (x itself,
    # slices, .T and rows alias; see test_augassign_through_view).
    owners = set()
    viewed = {"x"}

    def add(expr, shape, owner=False, views=()):
        v = f"v{next(fresh)}"
        body.append(f"{v} = {expr}")
        shapes[v] = shape
        if owner:
            owners.add(v)
        viewed.update(views)

    n_stmts = draw(st.integers(3, 10))
    for _ in range(n_stmts):
        op = draw(st.sampled_from([
            "ew", "ew", "bcast", "binary", "slice", "reverse", "index", "reduce",
            "dot", "concat", "stack", "matT", "matreduce", "methodsum", "aug", "matvec"]))
        if op == "ew":
            a = vec()
            form = draw(st.sampled_from([
                "np.sin({a})", "np.cos({a})", "np.tanh({a})", "np.exp(np.sin({a}))",
                "{a} * {a}", "{a} ** 2", "np.sqrt({a} * {a} + 1.0)", "-{a}",
                "np.log(1.0 + {a} ** 2)", "{a} / (1.0 + {a} * {a})", "{a}.T"]))
            view = form == "{a}.T"
            add(form.format(a=a), shapes[a], owner=not view, views=[a] if view else [])
        elif op == "bcast":
            a = vec()
            t = draw(st.sampled_from(of(lambda sh: sh == ())))
            form = draw(st.sampled_from(["{a} * {t}", "{t} - {a}", "{a} + {t}",
                                         "{a} / (1.0 + {t} * {t})", "{t} * np.sin({a})"]))
            add(form.format(a=a, t=t), shapes[a], owner=True)
        elif op == "binary":
            a = vec()
            b = draw(st.sampled_from(of(lambda sh, s=shapes[a]: sh == s)))
            form = draw(st.sampled_from(["{a} + {b}", "{a} * {b}", "{a} - 0.5 * {b}"]))
            add(form.format(a=a, b=b), shapes[a], owner=True)
        elif op == "slice":
            cands = of(lambda sh: len(sh) == 1 and sh[0] >= 2)
            if not cands:
                continue
            a = draw(st.sampled_from(cands))
            m = shapes[a][0]
            forms = [("{a}[1:]", m - 1), ("{a}[:-1]", m - 1), ("{a}[::2]", (m + 1) // 2)]
            if m >= 3:
                forms.append(("{a}[1:3]", 2))
            form, sh = draw(st.sampled_from(forms))
            add(form.format(a=a), (sh,), views=[a])
        elif op == "reverse":
            a = vec()
            add(f"{a}[::-1]", shapes[a], views=[a])
        elif op == "index":
            a = vec()
            i = draw(st.sampled_from(["0", "-1", "1"]))
            if shapes[a][0] < 2 and i == "1":
                i = "0"
            add(f"{a}[{i}]", ())
        elif op == "reduce":
            a = vec()
            form = draw(st.sampled_from(["np.sum({a})", "np.mean({a})", "{a}.sum()"]))
            add(form.format(a=a), ())
        elif op == "dot":
            a = vec()
            b = draw(st.sampled_from(of(lambda sh, s=shapes[a]: sh == s)))
            add(f"np.dot({a}, {b})", ())
        elif op == "concat":
            a, b = vec(), vec()
            add(f"np.concatenate([{a}, {b}])", (shapes[a][0] + shapes[b][0],), owner=True)
        elif op == "stack":
            a = vec()
            b = draw(st.sampled_from(of(lambda sh, s=shapes[a]: sh == s)))
            add(f"np.stack([{a}, {b}])", (2,) + shapes[a], owner=True)
        elif op == "matT":
            cands = of(lambda sh: len(sh) == 2)
            if not cands:
                continue
            a = draw(st.sampled_from(cands))
            r, c = shapes[a]
            form, sh = draw(st.sampled_from([
                ("np.sum({a}.T, axis=1)", (r,)), ("np.sum({a}, axis=0)", (c,)),
                ("{a}.T[0]", (r,)), ("{a}[1]", (c,)), ("np.mean({a}, axis=1)", (r,))]))
            add(form.format(a=a), sh, owner="sum" in form or "mean" in form,
                views=[] if "sum" in form or "mean" in form else [a])
        elif op == "matreduce":
            cands = of(lambda sh: len(sh) == 2)
            if not cands:
                continue
            a = draw(st.sampled_from(cands))
            form = draw(st.sampled_from(["np.sum({a} * {a})", "{a}.sum()",
                                         "np.sum(np.tanh({a}))"]))
            add(form.format(a=a), ())
        elif op == "matvec":
            cands = of(lambda sh: len(sh) == 2)
            if not cands:
                continue
            a = draw(st.sampled_from(cands))
            b = draw(st.sampled_from(of(lambda sh, c=shapes[a][1]: sh == (c,))))
            form = draw(st.sampled_from(["np.dot({a}, {b})", "{a} @ {b}", "{b} @ {a}.T"]))
            add(form.format(a=a, b=b), (shapes[a][0],), owner=True)
        elif op == "methodsum":
            cands = of(lambda sh: len(sh) == 2)
            if not cands:
                continue
            a = draw(st.sampled_from(cands))
            add(f"{a}.sum(axis=0)", (shapes[a][1],), owner=True)
        elif op == "aug":
            cands = sorted(owners - viewed)
            if not cands:
                continue
            a = draw(st.sampled_from(cands))
            b = draw(st.sampled_from(of(lambda sh, s=shapes[a]: sh == s or sh == ())))
            opx = draw(st.sampled_from(["+=", "*="]))
            rhs = b if opx == "+=" else f"np.tanh({b})"
            body.append(f"{a} {opx} {rhs}")
    tail = [v for v in list(shapes)[-3:]]
    parts = []
    for c, v in zip(["1.0", "0.5", "0.25"], reversed(tail)):
        parts.append(f"{c} * {v}" if shapes[v] == () else f"{c} * np.sum({v} * {v})")
    body.append("return " + " + ".join(parts))
    src = HEADER + "def f(x, s):\n" + "".join(f"    {line}\n" for line in body)
    return Program(src, ["x", "s"], "array", True, size=n)


# --------------------------------------------------------------- oracles


def fd(f, args, argnum, h_rel=1e-6, side=0):
    """Central (``side=0``) or one-sided (``side=±1``) differences of scalar ``f``.

    With respect to ``args[argnum]``: a float, a 1-D array or a dict of
    floats; returns the gradient in the same structure.
    """
    x = args[argnum]

    def at(new):
        a = list(args)
        a[argnum] = new
        return float(f(*a))

    def d(xv, put):
        h = h_rel * max(1.0, abs(xv))
        if side:
            return side * (at(put(xv + side * h)) - at(put(xv))) / h
        return (at(put(xv + h)) - at(put(xv - h))) / (2 * h)

    if isinstance(x, dict):
        return {k: d(x[k], lambda v, k=k: {**x, k: v}) for k in x}
    if isinstance(x, np.ndarray):
        g = np.zeros(x.shape)
        for i in np.ndindex(*x.shape):
            def put(v, i=i):
                y = x.copy()
                y[i] = v
                return y
            g[i] = d(x[i], put)
        return g
    return d(x, lambda v: v)


def complex_step(f, args, argnum, h=1e-30):
    """``Im f(x + i h e_k) / h`` for float and array arguments."""
    x = args[argnum]

    def at(new):
        # every array in complex, so in-place updates by complex values work
        a = [np.asarray(v, dtype=np.complex128) if isinstance(v, np.ndarray) else v
             for v in args]
        a[argnum] = new
        return f(*a)

    if isinstance(x, np.ndarray):
        g = np.zeros(x.shape)
        for i in np.ndindex(*x.shape):
            y = x.astype(np.complex128)
            y[i] += 1j * h
            g[i] = np.imag(at(y)) / h
        return g
    return float(np.imag(at(complex(x, h)))) / h


def leaves(tree):
    if isinstance(tree, dict):
        return [np.asarray(tree[k], dtype=float).ravel() for k in sorted(tree)]
    return [np.asarray(tree, dtype=float).ravel()]


__all__ = ["Program", "load", "scalar_program", "array_program", "fd", "complex_step",
           "leaves", "math"]
