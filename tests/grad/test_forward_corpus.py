"""Forward mode over the whole gradient corpus, and over random programs.

For every case of ``corpus.CASES`` (all have one scalar output):

- ``s2s.jvp`` with random tangents on every float leaf of every argument
  (``None`` for integer and boolean leaves) against central finite
  differences in float64 along the same direction;
- the dot-product test <u, J v> == <J^T u, v> between ``s2s.jvp`` and
  ``s2s.vjp`` with random ``u`` and ``v``;
- ``s2s.linearize``: its value is ``f(x)``, its linear map gives the JVP
  tangent and is linear;
- Hessian-vector products: ``s2s.jvp(s2s.grad(f))`` (forward over reverse)
  against central differences of the gradient, ``s2s.hessian`` contracted
  with a random direction against the same differences, and ``s2s.grad`` of
  ``<s2s.grad(f), v>`` (reverse over reverse) against them too.

A hypothesis test checks ``s2s.jvp`` on the random programs of ``progen``
against directional finite differences and against the reverse-mode gradient.

Known gaps are ``xfail(strict=True)`` with the reason: they fail loudly once
fixed, so that the marker is removed.
"""
import contextlib
import copy
import functools
import linecache
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import s2s

from . import progen
from .corpus import CASES
from .oracles import _is_float_leaf, assert_tree_close, flatten
from .test_random_programs import SCALE, SETTINGS, _args, _primal

EPS = 1e-6  # the step of the central differences (corpus inputs are O(1))

# ------------------------------------------------------------ known gaps

FIRST_ORDER = ("jvp", "dot", "linearize")
SECOND_ORDER = ("hvp", "hessian")

#: case id -> [(the test kinds it fails, reason), ...]
XFAIL = {
}


def _xfail_reason(case, kind):
    """Why test ``kind`` is known to fail on ``case`` (``None``: it must pass)."""
    reasons = [r for kinds, r in XFAIL.get(case.id, ()) if kind in kinds]
    return "; and ".join(reasons) or None


def _params(kind, cases=CASES):
    """``cases`` as pytest params, with the xfail marker when test ``kind`` fails there."""
    out = []
    for c in cases:
        reason = _xfail_reason(c, kind)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(c, marks=marks, id=c.id))
    return out


@contextlib.contextmanager
def _known_gap(case, kind):
    """Around the body of a corpus test: a known failure becomes one short
    AssertionError, so that pytest does not format s2s's deep traceback for
    each of the expected failures (seconds over the corpus); any other failure
    keeps its traceback."""
    if _xfail_reason(case, kind) is None:
        yield
        return
    try:
        yield
    except Exception as e:
        raise AssertionError(f"known gap: {type(e).__name__}: {str(e)[:1000]}") from None


def _corpus_test(kind):
    """A test of test kind ``kind`` over the corpus: parametrized by case, with
    the known gaps marked and reported briefly."""
    def deco(check):
        @pytest.mark.parametrize("case", _params(kind))
        @functools.wraps(check)
        def test(case):
            with _known_gap(case, kind):
                check(case)
        return test
    return deco


# ------------------------------------------------------------ helpers


def _load(src, name, namespace):
    """Execute ``src`` in ``namespace`` with its source in linecache (s2s reads it there)."""
    filename = f"/s2s-forward-corpus/{name}.py"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    exec(compile(src, filename, "exec"), namespace)
    return namespace[name]


def _positional(case):
    """The case's function taking only its positional arguments (jvp, vjp and
    linearize have no keyword arguments): cases with keyword arguments are
    wrapped in a generated ``def`` that passes them as literals."""
    if not case.kwargs:
        return case.fn
    names = [f"a{i}" for i in range(len(case.args))]
    for v in case.kwargs.values():
        assert eval(repr(v)) == v, v  # a literal that means the same value
    kw = ", ".join(f"{k}={v!r}" for k, v in case.kwargs.items())
    name = "".join(ch if ch.isalnum() else "_" for ch in case.id)  # one file per case
    src = f"def {name}({', '.join(names)}):\n    return FN({', '.join(names)}, {kw})\n"
    return _load(src, name, {"FN": case.fn})


FNS = {c.id: _positional(c) for c in CASES}


def _seed(case, salt):
    return [salt] + [ord(ch) for ch in case.id]


def _random_like(tree, rng, zero=False):
    """A tangent tree for ``tree``: standard normal values on its float leaves
    (zeros with ``zero``; a Python float for a scalar leaf), ``None`` on its
    integer and boolean leaves."""
    leaves, build = flatten(tree)
    out = []
    for leaf in leaves:
        if not _is_float_leaf(leaf):
            out.append(None)
        elif np.ndim(leaf) == 0 and not isinstance(leaf, np.ndarray):
            out.append(0.0 if zero else float(rng.standard_normal()))
        else:
            out.append(np.zeros(np.shape(leaf)) if zero else rng.standard_normal(np.shape(leaf)))
    return build(out)


def _tangent_leaves(primals, tangents):
    """One entry per leaf of ``primals`` (as ``flatten`` orders them): the tangent
    leaf, or ``None`` where the tangent tree has ``None`` (integer leaves)."""
    if primals is None:
        return []
    if type(primals) is dict:
        return [t for k in sorted(primals)
                for t in _tangent_leaves(primals[k], None if tangents is None else tangents[k])]
    if type(primals) in (list, tuple) or (isinstance(primals, tuple)
                                          and hasattr(type(primals), "_fields")):
        if tangents is None:
            tangents = [None] * len(primals)
        assert len(tangents) == len(primals)
        return [t for p, tt in zip(primals, tangents) for t in _tangent_leaves(p, tt)]
    return [tangents]


def _shift(args, tangents, h):
    """``args + h * tangents`` leaf by leaf (leaves with a ``None`` tangent unchanged)."""
    a_leaves, build = flatten(args)
    out = []
    for a, t in zip(a_leaves, _tangent_leaves(args, tangents)):
        if t is None:
            out.append(a)
        elif isinstance(a, np.ndarray):
            out.append(np.asarray(a, dtype=np.float64) + h * t)
        else:
            out.append(float(a) + h * float(t))
    return build(out)


def _fd_jvp(f, args, tangents, h=EPS):
    plus = f(*_shift(args, tangents, h))
    minus = f(*_shift(args, tangents, -h))
    return (np.asarray(plus, dtype=np.float64) - np.asarray(minus, dtype=np.float64)) / (2 * h)


def _vdot_trees(a, b):
    """sum(a * b) over the leaves of two trees, and sum(|a| |b|) (a scale)."""
    a_l, _ = flatten(a)
    b_l, _ = flatten(b)
    assert len(a_l) == len(b_l), (a, b)
    s = scale = 0.0
    for x, y in zip(a_l, b_l):
        x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        assert x.shape == y.shape, (x.shape, y.shape)
        s += float(np.sum(x * y))
        scale += float(np.sum(np.abs(x) * np.abs(y)))
    return s, scale


def _dense(tangents, args):
    """The tangent tree with zeros (float64) where it has ``None`` for a primal leaf."""
    a_leaves, build = flatten(args)
    return build([np.zeros(np.shape(a)) if t is None else t
                  for a, t in zip(a_leaves, _tangent_leaves(args, tangents))])


def _n_entries(tree):
    return sum(int(np.size(l)) for l in flatten(tree)[0])


# ------------------------------------------------------------ jvp


@_corpus_test("jvp")
def test_jvp_against_finite_differences(case):
    f = FNS[case.id]
    rng = np.random.default_rng(_seed(case, 1))
    tangents = _random_like(case.args, rng)
    out, tout = s2s.jvp(f, case.args, tangents)
    np.testing.assert_allclose(out, f(*case.args), rtol=1e-13, atol=0)
    assert np.shape(tout) == np.shape(out)
    expected = _fd_jvp(f, case.args, tangents)
    np.testing.assert_allclose(tout, expected, rtol=1e-6, atol=1e-8, err_msg=case.id)


@_corpus_test("dot")
def test_dot_product_jvp_vjp(case):
    """<u, J v> == <J^T u, v> with random u (the output cotangent) and v."""
    f = FNS[case.id]
    rng = np.random.default_rng(_seed(case, 2))
    v = _random_like(case.args, rng)
    _, jv = s2s.jvp(f, case.args, v)
    out, pull = s2s.vjp(f, *case.args)
    u = rng.standard_normal(np.shape(out))
    u = float(u) if np.ndim(out) == 0 else u
    cts = pull(u)
    assert isinstance(cts, tuple) and len(cts) == len(case.args)
    lhs, lscale = _vdot_trees(u, jv)
    rhs, rscale = _vdot_trees(cts, _dense(v, case.args))
    assert math.isclose(lhs, rhs, rel_tol=1e-9, abs_tol=1e-13 * max(lscale, rscale)), (
        f"{case.id}: <u, J v> = {lhs!r} but <J^T u, v> = {rhs!r}")


@_corpus_test("linearize")
def test_linearize(case):
    f = FNS[case.id]
    rng = np.random.default_rng(_seed(case, 3))
    t1, t2 = _random_like(case.args, rng), _random_like(case.args, rng)
    out, lin = s2s.linearize(f, *case.args)
    np.testing.assert_allclose(out, f(*case.args), rtol=1e-13, atol=0)
    l1 = lin(*t1)
    np.testing.assert_allclose(l1, s2s.jvp(f, case.args, t1)[1], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(l1, _fd_jvp(f, case.args, t1), rtol=1e-6, atol=1e-8)
    # the map is linear: lin(2.5 t1 - t2) == 2.5 lin(t1) - lin(t2)
    a1, build = flatten(_dense(t1, case.args))
    a2, _ = flatten(_dense(t2, case.args))
    # (integer and boolean primals keep None: JAX's rule, a float tangent there is a TypeError)
    p_leaves, _ = flatten(case.args)
    combo = build([None if not _is_float_leaf(p) else
                   2.5 * np.asarray(x) - np.asarray(y) if np.ndim(x) else 2.5 * x - y
                   for p, x, y in zip(p_leaves, a1, a2)])
    np.testing.assert_allclose(lin(*combo), 2.5 * l1 - lin(*t2), rtol=1e-10,
                               atol=1e-12 * (1 + abs(np.max(l1))))


# ------------------------------------------------------------ second order


def _argnums(case):
    return (case.argnums,) if isinstance(case.argnums, int) else tuple(case.argnums)


def _wrt(case, rng):
    """A random direction on the float leaves of the differentiated arguments,
    zero on the others, and the direction restricted to those arguments
    (one tree, or a tuple of trees for an argnums tuple)."""
    nums = _argnums(case)
    v = tuple(_random_like(a, rng, zero=i not in nums) for i, a in enumerate(case.args))
    sub = tuple(_dense(v[i], case.args[i]) for i in nums)
    return v, (sub[0] if isinstance(case.argnums, int) else sub)


def _fd_grad_along(case, f, v, h=EPS):
    g = s2s.grad(f, argnums=case.argnums)
    plus = g(*_shift(case.args, v, h))
    minus = g(*_shift(case.args, v, -h))
    p_l, build = flatten(plus)
    m_l, _ = flatten(minus)
    return build([(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)) / (2 * h)
                  for a, b in zip(p_l, m_l)])


@_corpus_test("hvp")
def test_hvp_forward_over_reverse(case):
    """jvp(grad(f)) along a direction in *every* float argument (so also the mixed
    second derivatives with the arguments grad does not differentiate)."""
    f = FNS[case.id]
    rng = np.random.default_rng(_seed(case, 4))
    v = _random_like(case.args, rng)
    g, hv = s2s.jvp(s2s.grad(f, argnums=case.argnums), case.args, v)
    assert_tree_close(g, s2s.grad(f, argnums=case.argnums)(*case.args), rtol=1e-13, atol=0,
                      what=case.id + " gradient")
    expected = _fd_grad_along(case, f, v)
    scale = max([1.0] + [float(np.max(np.abs(l))) for l in flatten(expected)[0]])
    assert_tree_close(hv, expected, rtol=1e-6, atol=1e-7 * scale, what=case.id + " HVP")


MAX_HESSIAN_ENTRIES = 60


@_corpus_test("hessian")
def test_hessian_times_direction(case):
    """tensordot(H, v) against central differences of grad along v, and against
    jvp(grad(f)) along v; H's blocks have shape (out leaf) + (in leaf)."""
    f = FNS[case.id]
    nums = _argnums(case)
    wrt = tuple(case.args[i] for i in nums)
    if _n_entries(wrt) > MAX_HESSIAN_ENTRIES:
        pytest.skip("too many entries for a full Hessian (the HVP test covers it)")
    rng = np.random.default_rng(_seed(case, 5))
    v, v_sub = _wrt(case, rng)
    H = s2s.hessian(f, argnums=case.argnums)(*case.args)
    x_leaves, _ = flatten(wrt if not isinstance(case.argnums, int) else wrt[0])
    v_leaves, build = flatten(v_sub)
    assert len(v_leaves) == len(x_leaves)
    h_leaves, _ = flatten(H)
    n = len(x_leaves)
    assert len(h_leaves) == n * n, f"{case.id}: {len(h_leaves)} Hessian blocks, expected {n * n}"
    hv = []
    for a in range(n):
        acc = np.zeros(np.shape(x_leaves[a]))
        for b in range(n):
            block = np.asarray(h_leaves[a * n + b], dtype=np.float64)
            assert block.shape == np.shape(x_leaves[a]) + np.shape(x_leaves[b]), (
                f"{case.id}: Hessian block ({a}, {b}) has shape {block.shape}")
            acc = acc + np.tensordot(block, np.asarray(v_leaves[b], dtype=np.float64),
                                     axes=np.ndim(v_leaves[b]))
        hv.append(acc)
    hv = build(hv)
    expected = _fd_grad_along(case, f, v)
    scale = max([1.0] + [float(np.max(np.abs(l))) for l in flatten(expected)[0]])
    assert_tree_close(hv, expected, rtol=1e-6, atol=1e-7 * scale, what=case.id + " H v")
    _, fwd_rev = s2s.jvp(s2s.grad(f, argnums=case.argnums), case.args, v)
    assert_tree_close(hv, fwd_rev, rtol=1e-9, atol=1e-11 * scale,
                      what=case.id + " H v vs jvp(grad)")


def _leaf_paths(tree, prefix=""):
    """Subscripts reaching the leaves of ``tree`` in ``flatten``'s order (``"[0]['w']"``...)."""
    if tree is None:
        return []
    if type(tree) is dict:
        return [p for k in sorted(tree) for p in _leaf_paths(tree[k], f"{prefix}[{k!r}]")]
    if type(tree) in (list, tuple) or (isinstance(tree, tuple) and hasattr(type(tree), "_fields")):
        return [p for i, c in enumerate(tree) for p in _leaf_paths(c, f"{prefix}[{i}]")]
    return [prefix]


@_corpus_test("revrev")
def test_hvp_reverse_over_reverse(case):
    """grad of <grad(f), v> (reverse over reverse) against central differences of the
    gradient along v; the inner function is generated with one line per leaf of the
    gradient, so that it needs no tree helper.  (Gradient code that adds container
    cotangents once concatenated them with `+` here: the helpers that may return a
    container are ``container_result`` rules.)"""
    f = FNS[case.id]
    rng = np.random.default_rng(_seed(case, 6))
    v, v_sub = _wrt(case, rng)
    paths = _leaf_paths(v_sub)
    v_leaves = flatten(v_sub)[0]
    assert len(paths) == len(v_leaves)
    names = [f"a{i}" for i in range(len(case.args))]
    name = "revrev_" + "".join(ch if ch.isalnum() else "_" for ch in case.id)
    src = (f"def {name}({', '.join(names)}):\n    g = G({', '.join(names)})\n    total = 0.0\n"
           + "".join(f"    total = total + np.sum(g{p} * V[{i}])\n" for i, p in enumerate(paths))
           + "    return total\n")
    inner = _load(src, name, {"np": np, "G": s2s.grad(f, argnums=case.argnums), "V": v_leaves})
    hv = s2s.grad(inner, argnums=case.argnums)(*case.args)
    expected = _fd_grad_along(case, f, v)
    scale = max([1.0] + [float(np.max(np.abs(l))) for l in flatten(expected)[0]])
    assert_tree_close(hv, expected, rtol=1e-6, atol=1e-7 * scale, what=case.id + " HVP (rev-rev)")


def test_every_xfail_names_a_corpus_case():
    assert set(XFAIL) <= {c.id for c in CASES}, set(XFAIL) - {c.id for c in CASES}


# ------------------------------------------------------------ products


def _product_cases():
    r = np.random.default_rng(11)
    v3 = lambda: r.standard_normal(3)  # noqa: E731
    m = lambda *s: r.standard_normal(s)  # noqa: E731
    c3 = lambda: r.standard_normal(3) + 1j * r.standard_normal(3)  # noqa: E731
    return [("dot", np.dot, v3(), v3(), v3(), v3()),
            ("vdot", np.vdot, v3(), v3(), v3(), v3()),
            ("vdot-complex", np.vdot, c3(), c3(), c3(), c3()),
            ("inner", np.inner, m(2, 3), m(4, 3), m(2, 3), m(4, 3)),
            ("outer", np.outer, v3(), m(2), v3(), m(2)),
            ("matmul", np.matmul, m(2, 3), m(3, 4), m(2, 3), m(3, 4)),
            ("tensordot", np.tensordot, m(2, 3), m(2, 3), m(2, 3), m(2, 3))]


def _prod_dot(a, b):
    return np.dot(a, b)


def _prod_vdot(a, b):
    return np.vdot(a, b)


def _prod_inner(a, b):
    return np.inner(a, b)


def _prod_outer(a, b):
    return np.outer(a, b)


def _prod_matmul(a, b):
    return np.matmul(a, b)


def _prod_tensordot(a, b):
    return np.tensordot(a, b)


@pytest.mark.parametrize("name, prim, a, b, ta, tb", _product_cases(),
                         ids=[c[0] for c in _product_cases()])
def test_jvp_of_products_is_the_product_rule(name, prim, a, b, ta, tb):
    """Every product is bilinear: d prim(a, b) = prim(ta, b) + prim(a, tb), written
    out with numpy.  (The JVP rules of vdot and inner once computed prim(tb, b)
    for the second term: their two templates shared a line of products.py.)"""
    f = globals()["_prod_" + name.split("-")[0]]
    out, t = s2s.jvp(f, (a, b), (ta, tb))
    np.testing.assert_allclose(out, prim(a, b), rtol=1e-14)
    np.testing.assert_allclose(t, prim(ta, b) + prim(a, tb), rtol=1e-12, atol=1e-14)


# the same parameters, the same line: s2s must still read the right one
_sin_x_y, _sin_y_x = (lambda x, y: np.sin(x) * y), (lambda x, y: np.sin(y) * x)


def test_two_lambdas_on_one_line_are_told_apart():
    assert math.isclose(s2s.grad(_sin_y_x)(0.3, 0.7), math.sin(0.7), rel_tol=1e-12)
    assert math.isclose(s2s.jvp(_sin_y_x, (0.3, 0.7), (1.0, 0.0))[1], math.sin(0.7),
                        rel_tol=1e-12)


# ------------------------------------------------------------ random programs


def _directional_fd(f, args, v, h):
    return (f(*_shift(args, v, h)) - f(*_shift(args, v, -h))) / (2 * h)


def _fd_ok(actual, f, args, v, scale, what):
    """``actual`` against central differences along ``v``; at a kink (the
    two one-sided differences disagree), it must lie between them."""
    central = _directional_fd(f, args, v, 1e-6)
    coarse = _directional_fd(f, args, v, 1e-5)
    if not math.isclose(central, coarse, rel_tol=1e-3, abs_tol=1e-4 * scale):
        assume(False)  # a jump within the step: no derivative to compare with
    if math.isclose(actual, central, rel_tol=1e-5, abs_tol=1e-6 * scale):
        return
    y = f(*args)
    fw = (f(*_shift(args, v, 1e-7)) - y) / 1e-7
    bw = (y - f(*_shift(args, v, -1e-7))) / 1e-7
    kink = not math.isclose(fw, bw, rel_tol=1e-3, abs_tol=1e-4 * scale)
    tol = 1e-4 * (abs(fw) + abs(bw)) + 1e-5 * scale
    assert kink and min(fw, bw) - tol <= actual <= max(fw, bw) + tol, (
        f"jvp {actual!r}, central differences {central!r}, one-sided {fw!r} / {bw!r}{what}")


@settings(max_examples=30 * SCALE, **SETTINGS)
@given(st.data())
def test_jvp_of_random_programs(data):
    """s2s.jvp of a random program (scalar, dict or array inputs; scalar output)
    against directional finite differences and against <grad f, v>."""
    prog = data.draw(st.one_of(progen.scalar_program(), progen.array_program()),
                     label="program")
    args = _args(prog, data)
    raw = progen.load(prog.source)

    def f(*a):  # generated code may update an input array in place
        return float(raw(*copy.deepcopy(a)))

    y = _primal(f, args)
    scale = 1.0 + abs(y)
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1), label="seed"))
    v = _random_like(args, rng)
    what = "\n" + prog.source + f"\nargs={args!r}\ntangents={v!r}"
    try:
        out, t = s2s.jvp(raw, copy.deepcopy(args), copy.deepcopy(v))
    except Exception as e:  # report the program with the error
        raise AssertionError(f"s2s.jvp failed on {what}\n{type(e).__name__}: {e}") from e
    assert math.isclose(float(out), y, rel_tol=1e-12, abs_tol=1e-12), (
        f"jvp value {out!r} != f(x) {y!r}{what}")
    assert np.ndim(t) == 0, what
    t = float(t)
    _fd_ok(t, f, args, v, scale, what)
    if not np.issubdtype(np.result_type(out), np.inexact):
        return  # f returned an int constant here (`return 2`): grad rejects it, as JAX does
    grads = s2s.grad(raw, argnums=tuple(range(len(args))))(*copy.deepcopy(args))
    dot, dscale = _vdot_trees(grads, v)
    assert math.isclose(t, dot, rel_tol=1e-9, abs_tol=1e-12 * (scale + dscale)), (
        f"jvp {t!r} != <grad f, v> {dot!r}{what}")
