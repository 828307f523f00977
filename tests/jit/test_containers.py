"""Dicts with constant keys and lists grown by ``append`` under jit: primal results
against the Python function, gradients (jit(grad), jit(value_and_grad), jit(vjp_fun))
against central finite differences and the dot-product test, clear refusals, and
deterministic LLVM IR."""
from __future__ import annotations

import collections
import dataclasses
import numpy as np
import pytest

import s2s
from s2s.core.jit import Jitted
from s2s.backend.llvm.driver import engine
from s2s.backend.llvm.driver.compile import param_types
from s2s.backend.llvm.driver.module import build_module
from tests.grad.oracles import assert_tree_close, fd_grad

RNG = np.random.default_rng(3)
PARAMS = {"W": RNG.normal(size=(3, 4)), "b": RNG.normal(size=4), "scale": 0.7}
XS = RNG.normal(size=(5, 3))


# -- dicts ---------------------------------------------------------------------------------
def mlp(params, x):
    h = np.tanh(x @ params["W"] + params["b"])
    return np.sum(h ** 2) * params["scale"]


def builds_dict(a, b):
    d = {"u": a, "v": b}
    d["w"] = a * b  # a new key
    d["u"] = d["u"] + 1.0  # an old key replaced
    return d["u"] * d["w"] + d.get("v", 0.0) + d.get("missing", 2.0) * len(d)


def dict_in_loop(params, x):
    state = {"h": np.zeros(4), "total": 0.0}
    for t in range(x.shape[0]):
        state["h"] = np.tanh(x[t] @ params["W"] + state["h"] * params["scale"])
        state["total"] = state["total"] + np.sum(state["h"] * params["b"])
    return state["total"]


def dict_branches(params, x):
    d = {"a": params["scale"]}
    if np.sum(x) > 0:
        d["a"] = d["a"] * 2.0
    else:
        d["a"] = d["a"] - 1.0
    return d["a"] * np.sum(params["b"])


def returns_dict(params, x):
    return {"out": x @ params["W"], "norm": np.sum(params["b"] ** 2)}


def nested(p, x):
    return p["w"]["a"] * p["n"] + np.sum(p["w"]["v"]) * x


NESTED = {"w": {"a": 1.5, "v": RNG.normal(size=3)}, "n": 3}


@pytest.mark.parametrize("fn, args", [
    (mlp, (PARAMS, XS)), (builds_dict, (1.5, -0.5)), (dict_in_loop, (PARAMS, XS)),
    (dict_branches, (PARAMS, XS)), (dict_branches, (PARAMS, -XS)),
    (returns_dict, (PARAMS, XS[0])), (nested, (NESTED, 0.3))])
def test_dict_primal_matches_python(fn, args):
    got, want = s2s.jit(fn)(*args), fn(*args)
    assert type(got) is type(want) or np.ndim(want) == 0
    assert_tree_close(got, want, rtol=1e-12, atol=1e-13, what=fn.__name__)


def test_dict_keys_are_part_of_the_signature():
    j = s2s.jit(mlp)
    j(PARAMS, XS)
    other = {"W": PARAMS["W"], "b": PARAMS["b"], "scale": 0.7, "extra": 1.0}
    assert j(other, XS) == pytest.approx(mlp(other, XS), rel=1e-12)
    reordered = {"scale": 0.7, "b": PARAMS["b"], "W": PARAMS["W"]}
    assert j(reordered, XS) == pytest.approx(mlp(PARAMS, XS), rel=1e-12)
    assert any("'extra'" in s for s in j.signatures())


@pytest.mark.parametrize("fn, args, argnums", [
    (mlp, (PARAMS, XS), 0), (mlp, (PARAMS, XS), (0, 1)), (builds_dict, (1.5, -0.5), (0, 1)),
    (dict_in_loop, (PARAMS, XS), 0), (dict_branches, (PARAMS, XS), 0), (nested, (NESTED, 0.3), 0)])
def test_dict_gradients_against_finite_differences(fn, args, argnums):
    fd = fd_grad(fn, args, argnums)
    got = s2s.jit(s2s.grad(fn, argnums=argnums))(*args)
    assert_tree_close(got, fd, rtol=1e-6, atol=1e-7, what=fn.__name__)
    if argnums == 0 and isinstance(args[0], dict):
        assert isinstance(got, dict) and set(got) == set(args[0])
    value, g = s2s.jit(s2s.value_and_grad(fn, argnums=argnums))(*args)
    assert value == pytest.approx(fn(*args), rel=1e-12)
    assert_tree_close(g, fd, rtol=1e-6, atol=1e-7, what=fn.__name__)


def test_dict_vjp_dot_product():
    """<u, J v> (J v by central differences, v a dict direction) = <J^T u, v>."""
    out, f_vjp = s2s.vjp(returns_dict, PARAMS, XS[0])
    u = {"out": RNG.normal(size=4), "norm": 0.3}
    pbar, xbar = s2s.jit(f_vjp)(u)
    v = {"W": RNG.normal(size=(3, 4)), "b": RNG.normal(size=4), "scale": 0.0}
    eps = 1e-6
    plus = {k: PARAMS[k] + eps * v[k] for k in PARAMS}
    minus = {k: PARAMS[k] - eps * v[k] for k in PARAMS}
    fp, fm = returns_dict(plus, XS[0]), returns_dict(minus, XS[0])
    lhs = sum(np.sum(u[k] * (fp[k] - fm[k]) / (2 * eps)) for k in u)
    rhs = sum(np.sum(pbar[k] * v[k]) for k in v)
    assert rhs == pytest.approx(lhs, rel=1e-7)
    assert xbar.shape == XS[0].shape


def test_missing_key_is_a_clear_error():
    def reads_missing(p):
        return p["nope"] * 2.0

    with pytest.raises(s2s.S2SError, match=r"the key 'nope' is not in the dict"):
        s2s.jit(reads_missing)({"a": 1.0})


def test_variable_key_is_a_clear_error():
    def variable_key(p, k):
        return p[k]

    with pytest.raises(s2s.S2SError, match="constant string or integer"):
        s2s.jit(variable_key)({"a": 1.0}, 0)


# -- the module text ---------------------------------------------------------------------------
def _module_text(fn, args):
    j = Jitted(fn)
    func, load_free = j.source_ir(args)
    return build_module(func, param_types(func, list(args) + load_free(), j.describe), True).text


@pytest.mark.parametrize("fn, args", [(builds_dict, (1.0, 2.0)), (dict_in_loop, (PARAMS, XS)),
                                      (s2s.grad(mlp), (PARAMS, XS))])
def test_ir_is_deterministic_and_verified(fn, args):
    a, b = _module_text(fn, args), _module_text(fn, args)
    assert a == b
    engine.parse_verified(a)


# -- lists that grow -----------------------------------------------------------------------------
V = RNG.normal(size=6)


def squares(x, n):
    acc = []
    for i in range(n):
        acc.append(x[i] ** 2)
    return sum(acc) + acc[1] * len(acc) + np.sum(np.array(acc)) + acc[-1]


def recurrence(x):
    acc = [x[0]]  # a literal that then grows
    for v in x:
        acc.append(np.sin(v) * acc[-1] + v)
    total = 0.0
    for a in acc:
        total = total + a * a
    return total


def comprehension(x):
    ys = [v * 2.0 for v in x if v > -1.0]
    return sum(ys) * max(ys) + min(ys)


def list_methods(x):
    out = []
    for i in range(4):
        out.append(x[i] * i)
    out.extend([x[0] ** 2, np.sin(x[1])])
    out.insert(1, x[2] * 3.0)
    last = out.pop()
    out[2] = out[2] * last
    return np.mean(out) + sum(out[1:4]) * last + np.sum(np.asarray(out[::2]) ** 2)


def while_grow(x, limit):
    acc = []
    s = 0.0
    k = 0
    while s < limit:
        s = s + x[k % x.shape[0]] ** 2 + 0.1
        acc.append(s)
        k = k + 1
    return acc[len(acc) // 2] + np.sum(np.array(acc))


def returns_list(x, n):
    acc = []
    for i in range(n):
        acc.append(float(x[i % 6]) * i)
    return acc


def int_list(n):
    acc = []
    for i in range(n):
        if i % 3 == 0:
            acc.append(i)
    return sum(acc), len(acc), acc


def stores_a_state(x):
    a = []
    a.append(x[0])
    b = a  # an older state of the list, kept
    a.append(x[1])
    b.append(x[2] * 10.0)  # Python: the same list object
    return sum(a) + sum(b)


def pops_while_not_empty(x):
    items = [x[0], x[1], x[2], x[3]]
    total = 0.0
    while items:  # a list's truth: not empty
        total = total * 0.5 + items.pop() ** 2
    if not items:
        total = total + 1.0
    return total


LIST_CASES = [(squares, (V, 5)), (recurrence, (V,)), (comprehension, (V,)),
              (list_methods, (V,)), (while_grow, (V, 8.0)), (returns_list, (V, 9)),
              (int_list, (10,)), (stores_a_state, (V,)), (pops_while_not_empty, (V,))]


@pytest.mark.parametrize("fn, args", LIST_CASES, ids=[c[0].__name__ for c in LIST_CASES])
def test_list_primal_matches_python(fn, args):
    got, want = s2s.jit(fn)(*args), fn(*args)
    assert type(got) is type(want) or np.ndim(want) == 0
    assert_tree_close(got, want, rtol=1e-12, atol=1e-13, what=fn.__name__)


@pytest.mark.parametrize("fn, args", [(squares, (V, 5)), (recurrence, (V,)), (comprehension, (V,)),
                                      (list_methods, (V,)), (while_grow, (V, 8.0)),
                                      (pops_while_not_empty, (V,))],
                         ids=["squares", "recurrence", "comprehension", "list_methods",
                              "while_grow", "pops_while_not_empty"])
def test_list_gradients_against_finite_differences(fn, args):
    fd = fd_grad(fn, args, 0)
    np.testing.assert_allclose(s2s.jit(s2s.grad(fn))(*args), fd, rtol=1e-6, atol=1e-7)
    value, g = s2s.jit(s2s.value_and_grad(fn))(*args)
    assert value == pytest.approx(fn(*args), rel=1e-12)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7)


def test_list_vjp_dot_product():
    """The pullback takes the list residual as a list argument."""
    out, f_vjp = s2s.vjp(squares, V, 5)
    xbar = s2s.jit(f_vjp)(0.7)[0]
    w = RNG.normal(size=V.shape)
    eps = 1e-6
    jv = (squares(V + eps * w, 5) - squares(V - eps * w, 5)) / (2 * eps)
    assert np.sum(xbar * w) == pytest.approx(0.7 * jv, rel=1e-7)


def test_list_arguments():
    def f(xs, ys):
        return sum(xs) * ys[0] + len(ys)

    assert s2s.jit(f)([1.0, 2.5, -1.0], [3, 4]) == f([1.0, 2.5, -1.0], [3, 4])
    g = s2s.jit(s2s.grad(f))([1.0, 2.5, -1.0], [3.0, 4.0])
    assert g == pytest.approx([3.0, 3.0, 3.0], rel=1e-14)  # closed form: ys[0] per item


def test_list_on_a_residual_tape_is_refused_clearly():
    _, f_vjp = s2s.vjp(recurrence, V)  # the loop records states of the list
    with pytest.raises(s2s.S2SError, match="popping a list"):
        s2s.jit(f_vjp)(0.7)


def test_list_index_out_of_range():
    def reads(x, i):
        acc = []
        for v in x:
            acc.append(v)
        return acc[i]

    j = s2s.jit(reads)
    assert j(V, -1) == V[-1]
    with pytest.raises(IndexError, match="list index out of range"):
        j(V, 6)
    with pytest.raises(IndexError, match="list index out of range"):
        j(V, -7)


def test_long_lists_and_error_paths_free_their_storage():
    """A grown list's storage is freed on return and on the error path: 40 calls that
    each grow a 200000-number list (its last block: 1.6 MB written) leave the peak
    resident size within a few calls' worth.  (The segmentation fault at exit once seen
    with this test in the suite was the fast entry's method definition freed before its
    builtin: test_context_lifetime.py.)"""
    resource = pytest.importorskip("resource")
    j = s2s.jit(returns_list)
    out = j(V, 200000)
    assert len(out) == 200000 and out[-1] == returns_list(V, 200000)[-1]
    del out

    def raises_after_growing(n):
        acc = []
        for i in range(n):
            acc.append(i * 1.0)
            if i == n - 1:
                raise ValueError("late")
        return sum(acc)

    def grows_and_sums(n):
        acc = []
        for i in range(n):
            acc.append(i * 1.0)
        return sum(acc)

    r, s = s2s.jit(raises_after_growing), s2s.jit(grows_and_sums)
    assert s(200000) == grows_and_sums(200000)
    with pytest.raises(ValueError, match="late"):
        r(200000)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    for _ in range(20):  # errors in a row: nothing in between frees what one left
        with pytest.raises(ValueError, match="late"):
            r(200000)
    for _ in range(20):
        s(200000)
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown < 12 * 1024, grown  # a leak would hold >= 20 * 1.6 MB (the last block)


M = RNG.normal(size=(4, 3))


def rows_of_arrays(x):
    acc = []
    for k in range(3):
        acc.append(np.sin(x) * (k + 1.0))
    return np.sum(acc[0] + acc[-1] * acc[1]) + len(acc)


def stacked_rows(m):
    rows = []
    for r in m:
        rows.append(np.tanh(r) * r[0])
    a = np.array(rows)
    return np.sum(a * a) + np.sum(np.stack(rows)[1]) + np.mean(rows)


def summed_arrays(x):
    parts = []
    for i in range(x.shape[0]):
        parts.append(x[i] * x)
    total = sum(parts)
    return np.sum(total ** 2) + np.sum(sum(parts, 1.5))


def array_list_methods(m):
    acc = [m[0], m[1] * 2.0]  # a display of arrays that then grows
    acc.append(np.exp(m[2]))
    acc.insert(0, m[3] ** 2)
    last = acc.pop()
    acc[1] = acc[1] * last
    out = 0.0
    for a in acc[::2]:
        out = out + np.sum(a * m[0])
    return out + np.sum(acc[1:][0]) + np.sum(last)


def matrices(x):
    blocks = []
    for k in range(3):
        blocks.append(np.outer(x, x) * (k - 1.0))
    return np.sum(blocks[2] @ blocks[0]) + np.sum(blocks[1])


def reversed_pairs(x):
    """``reversed`` of an array read by ``zip``: its numbers backwards."""
    s = 0.0
    for a, b in zip(reversed(x), x):
        s += a * b * b
    return s + np.sum(np.array(list(reversed(x[:3]))) * x[:3] ** 2)


def reversed_rows(m):
    """``reversed`` of a matrix read by ``zip``: its rows (views) backwards."""
    out = 0.0
    for r, q in zip(reversed(m), m):
        out += np.sum(np.sin(r) * q ** 2)
    return out + len(list(reversed(m[:0])))


ARRAY_LIST_CASES = [(rows_of_arrays, (V,)), (stacked_rows, (M,)), (summed_arrays, (V[:4],)),
                    (array_list_methods, (M,)), (matrices, (V[:3],)), (reversed_pairs, (V,)),
                    (reversed_rows, (M,))]


@pytest.mark.parametrize("fn, args", ARRAY_LIST_CASES, ids=[c[0].__name__ for c in ARRAY_LIST_CASES])
def test_list_of_arrays_matches_python_and_finite_differences(fn, args):
    """A list that grows may hold arrays of one dtype and number of dimensions: the
    primal against Python, ``jit(grad)`` and ``jit(jvp)`` against central differences."""
    assert_tree_close(s2s.jit(fn)(*args), fn(*args), rtol=1e-12, atol=1e-12, what=fn.__name__)
    np.testing.assert_allclose(s2s.jit(s2s.grad(fn))(*args), fd_grad(fn, args, 0),
                               rtol=1e-6, atol=1e-7)
    t = np.random.default_rng(5).normal(size=args[0].shape)
    tangent = s2s.jit(lambda x, t: s2s.jvp(fn, (x,), (t,))[1])(args[0], t)
    eps = 1e-6
    fd = (fn(args[0] + eps * t) - fn(args[0] - eps * t)) / (2 * eps)
    assert tangent == pytest.approx(fd, rel=1e-6, abs=1e-8)


def test_a_list_holds_the_arrays_themselves():
    """Python's aliasing: a write through another name shows in the list, and the list
    keeps an array alive after its name is reassigned."""
    def f(x):
        acc = []
        a = np.zeros(3)
        acc.append(a)
        a[1] = x[0]
        a = np.ones(3) * 7.0  # the list still holds the first array
        acc.append(a)
        return acc[0] + acc[1]

    np.testing.assert_array_equal(s2s.jit(f)(V), f(V))


def test_a_returned_list_of_arrays_is_a_list_of_arrays():
    def f(x, n):
        acc = []
        for i in range(n):
            acc.append(x * i)
        return acc

    got = s2s.jit(f)(V, 4)
    assert type(got) is list and len(got) == 4
    for a, b in zip(got, f(V, 4)):
        np.testing.assert_array_equal(a, b)
    assert s2s.jit(f)(V, 0) == []


def test_a_returned_list_of_arrays_of_different_shapes_is_python_s():
    def prefixes(x, n):
        out = []
        for i in range(1, n):
            out.append(x[:i] * 2.0)
        return out

    def views(x):
        y = x * 3.0
        out = [y, y[1:], x[:2]]
        out.append(y[::2])
        return out, y

    got, want = s2s.jit(prefixes)(V, 4), prefixes(V, 4)
    assert type(got) is list and [a.tolist() for a in got] == [a.tolist() for a in want]
    assert s2s.jit(prefixes)(V, 1) == []
    (items, y) = s2s.jit(views)(V)
    for a, b in zip(items, views(V)[0]):
        np.testing.assert_array_equal(a, b)
    assert np.shares_memory(items[0], y) and np.shares_memory(items[3], y)  # as in Python
    assert not np.shares_memory(items[2], V)  # the argument's memory is copied (owned)


def test_list_of_arrays_errors_are_clear():
    def mixed_ndim(x, n):
        acc = []
        for i in range(n):
            acc.append(x * i)
        acc.append(np.outer(x, x))
        return acc[0]

    with pytest.raises(s2s.S2SError, match=r"appending a f8\[:, :\] to a list\[f8\[:\]\]"):
        s2s.jit(mixed_ndim)(V, 2)

    def ragged(x):
        acc = [x, x[1:]]
        acc.append(x)
        return np.array(acc)

    with pytest.raises(ValueError, match="inhomogeneous shape"):
        s2s.jit(ragged)(V)

    def empty_sum(x, n):
        acc = [x]
        acc.pop()
        for i in range(n):
            acc.append(x)
        return sum(acc)

    assert np.sum(s2s.jit(empty_sum)(V, 2)) == pytest.approx(2 * np.sum(V))
    with pytest.raises(ValueError, match="empty list of arrays"):
        s2s.jit(empty_sum)(V, 0)

    def largest(x):
        acc = [x]
        acc.append(x * 2.0)
        return max(acc)

    with pytest.raises(s2s.S2SError, match="ambiguous"):
        s2s.jit(largest)(V)


@pytest.mark.parametrize("fn, args", [(squares, (V, 4)), (s2s.grad(recurrence), (V,))])
def test_list_ir_is_deterministic_and_verified(fn, args):
    a, b = _module_text(fn, args), _module_text(fn, args)
    assert a == b
    engine.parse_verified(a)


# -- cotangents of tuples (add_at into a tuple) ---------------------------------------------------
def over_tuple_of_arrays(a, b):
    s = 0.0
    for v in (a, b, a * b):  # a variable index into a tuple of arrays
        s = s + np.sum(np.sin(v) * v)
    return s


def tuple_items(t, x):
    return t[0] * x + t[1] ** 2 * t[0] + np.sum(t[2] * x)


def dict_of_tuples(x):
    parts = {"a": x[0] * x[1], "b": (np.sin(x[2]), x[0] ** 2)}  # cotangents: tuples added
    return parts["b"][0] * parts["a"] + parts["b"][1] * parts["b"][0]


@pytest.mark.parametrize("fn, args, argnums", [
    (over_tuple_of_arrays, (V[:3], V[3:]), (0, 1)),
    (tuple_items, ((1.5, -0.5, V[:2]), 0.3), (0, 1)),
    (dict_of_tuples, (V[:3],), 0)])
def test_tuple_cotangents_against_finite_differences(fn, args, argnums):
    got = s2s.jit(s2s.grad(fn, argnums=argnums))(*args)
    assert_tree_close(got, fd_grad(fn, args, argnums), rtol=1e-6, atol=1e-7, what=fn.__name__)


# -- list displays of numbers --------------------------------------------------------------------
def array_of_numbers(a, b):
    return np.sum(np.array([a, b, a * b]) ** 2) + np.shape([a, b])[0]


def returns_display(a, b):
    return [a * b, a + b]


def test_list_displays():
    assert s2s.jit(array_of_numbers)(1.5, 2.0) == pytest.approx(array_of_numbers(1.5, 2.0),
                                                                rel=1e-14)
    got = s2s.jit(returns_display)(1.5, 2.0)
    assert type(got) is list and got == returns_display(1.5, 2.0)
    g = s2s.jit(s2s.grad(array_of_numbers, argnums=(0, 1)))(1.5, 2.0)
    assert_tree_close(g, fd_grad(array_of_numbers, (1.5, 2.0), (0, 1)), rtol=1e-7, atol=1e-8)


# -- control flow around dict and list writes --------------------------------------------------
def dict_while(p, n):
    d = {"s": 0.0}
    k = 0
    while k < n:
        d["s"] = d["s"] + p["a"] * k
        if d["s"] > 5.0:
            return d["s"] * p["b"]  # an early return: d's later key is never added here
        k = k + 1
    d["t"] = d["s"] * 2.0
    return d["t"] + p["b"]


def int_keys(a, b):
    d = {0: a, 1: b}
    d[2] = a * b
    return d[0] * d[2] - d[1]


def list_in_branch(x):
    acc = []
    for v in x:
        if v > 0:
            acc.append(v * v)
        else:
            acc.append(-v)
    if len(acc) > 3:
        acc.pop(0)
    return sum(acc) * acc[0]


@pytest.mark.parametrize("fn, args, argnums", [
    (dict_while, ({"a": 0.7, "b": 1.3}, 4), 0), (dict_while, ({"a": 0.7, "b": 1.3}, 40), 0),
    (int_keys, (1.5, 2.0), (0, 1)), (list_in_branch, (V,), 0)])
def test_control_flow_against_python_and_finite_differences(fn, args, argnums):
    assert s2s.jit(fn)(*args) == pytest.approx(fn(*args), rel=1e-13)
    assert_tree_close(s2s.jit(s2s.grad(fn, argnums=argnums))(*args),
                      fd_grad(fn, args, argnums), rtol=1e-6, atol=1e-7, what=fn.__name__)


# -- forward mode inside jit ------------------------------------------------------------------------
def mlp_fixed(p):
    return mlp(p, XS)


def tangent_of_mlp(p, dp):
    return s2s.jvp(mlp_fixed, (p,), (dp,))


def squares_fixed(x):
    return squares(x, 4)


def tangent_of_squares(x, dx):
    return s2s.jvp(squares_fixed, (x,), (dx,))


def test_jitted_jvp_of_dicts_and_lists_against_finite_differences():
    eps = 1e-6
    dp = {"W": RNG.normal(size=(3, 4)), "b": RNG.normal(size=4), "scale": 0.3}
    plus = {k: PARAMS[k] + eps * dp[k] for k in PARAMS}
    minus = {k: PARAMS[k] - eps * dp[k] for k in PARAMS}
    y, t = s2s.jit(tangent_of_mlp)(PARAMS, dp)
    assert y == pytest.approx(mlp_fixed(PARAMS), rel=1e-13)
    assert t == pytest.approx((mlp_fixed(plus) - mlp_fixed(minus)) / (2 * eps), rel=1e-7)
    dx = RNG.normal(size=V.shape)
    y, t = s2s.jit(tangent_of_squares)(V, dx)
    assert y == pytest.approx(squares_fixed(V), rel=1e-13)
    fd = (squares_fixed(V + eps * dx) - squares_fixed(V - eps * dx)) / (2 * eps)
    assert t == pytest.approx(fd, rel=1e-7)


def array_of_numbers_at(a):
    return array_of_numbers(a, 2.0)


def tangent_of_array_of_numbers(a, da):
    return s2s.jvp(array_of_numbers_at, (a,), (da,))


def test_jitted_jvp_of_a_display_of_numbers():
    y, t = s2s.jit(tangent_of_array_of_numbers)(1.5, 1.0)
    eps = 1e-6
    fd = (array_of_numbers_at(1.5 + eps) - array_of_numbers_at(1.5 - eps)) / (2 * eps)
    assert y == pytest.approx(array_of_numbers_at(1.5), rel=1e-14)
    assert t == pytest.approx(fd, rel=1e-7)


def sums_of_displays(a, b):
    return sum([a, b * 2.0, a * b]) + sum((a, b), 1.5)


def test_sum_of_displays_against_finite_differences():
    assert s2s.jit(sums_of_displays)(1.5, 2.0) == sums_of_displays(1.5, 2.0)
    g = s2s.jit(s2s.grad(sums_of_displays, argnums=(0, 1)))(1.5, 2.0)
    assert_tree_close(g, fd_grad(sums_of_displays, (1.5, 2.0), (0, 1)), rtol=1e-7, atol=1e-8)
    assert g == pytest.approx((1.0 + 2.0 + 1.0, 2.0 + 1.5 + 1.0), rel=1e-14)  # closed form


# -- namedtuples -------------------------------------------------------------------------------
Layer = collections.namedtuple("Layer", "w bias")


def layer_fields(p, x):
    return np.tanh(p.w @ x + p.bias) * p[1][0]


def layer_returned(p, x):
    return Layer(p.w * x[0], p.bias) if x[0] > 0 else p


def layer_loss(p, x):
    return np.sum(layer_fields(p, x) ** 2) + p.bias[1] * p.w[0, 1]


LAYER = Layer(RNG.normal(size=(2, 3)), RNG.normal(size=2))


@pytest.mark.parametrize("fn", [layer_fields, layer_returned])
def test_namedtuple_fields_and_results_match_python(fn):
    for x in (XS[0], -XS[0]):
        got, want = s2s.jit(fn)(LAYER, x), fn(LAYER, x)
        assert type(got) is type(want)
        assert_tree_close(got, want, rtol=1e-12, atol=1e-12, what=fn.__name__)


def test_namedtuple_gradient_is_a_namedtuple_against_finite_differences():
    got = s2s.jit(s2s.grad(layer_loss))(LAYER, XS[1])
    assert type(got) is Layer
    assert_tree_close(got, fd_grad(layer_loss, (LAYER, XS[1]), 0), rtol=1e-6, atol=1e-7,
                      what="layer_loss")


def test_a_namedtuple_field_that_does_not_exist_is_refused():
    def f(p):
        return p.weight
    with pytest.raises(s2s.S2SError, match="getattr"):
        s2s.jit(f)(LAYER)


def list_copied_then_both_grown(x):
    a = []
    for v in x:
        a.append(v)
    b = list(a)  # a new list of the same items: growing or writing one leaves the other
    a.append(10.0)
    b.append(20.0)
    b[0] = -1.0
    return a[-1] + b[-1] + a[0] * 100 + len(a) * 1000 + len(b) * 10000


def test_list_of_a_list_is_a_new_list_as_in_python():
    x = np.array([0.31, -0.52, 0.77, 0.18])
    assert s2s.jit(list_copied_then_both_grown)(x) == list_copied_then_both_grown(x)


@dataclasses.dataclass
class Affine:
    w: np.ndarray
    b: float


def affine_energy(x):
    p = Affine(x * 0.5, float(x[0]))
    return np.sum(np.tanh(p.w) * p.b) + p.b ** 2


def affine_made(x):
    return Affine(np.sin(x), float(x[1]) * 2.0)


def test_a_dataclass_made_in_compiled_code_is_read_by_field_and_returned():
    x = np.array([0.31, -0.52, 0.77, 0.18])
    got = s2s.jit(affine_made)(x)
    assert type(got) is Affine
    np.testing.assert_allclose(got.w, np.sin(x))
    assert got.b == x[1] * 2.0
    assert s2s.jit(affine_energy)(x) == pytest.approx(affine_energy(x), rel=1e-12)
    np.testing.assert_allclose(s2s.jit(s2s.grad(affine_energy))(x),
                               fd_grad(affine_energy, (x,), 0), rtol=1e-6, atol=1e-7)


def test_hessian_through_a_dataclass_made_in_compiled_code():
    """``jit(hessian(f))``: the tangent of the record is itself where forward mode
    broadcasts tangents to their values' shapes (``broadcast_like``; it was refused)."""
    x = np.array([0.31, -0.52, 0.77, 0.18])
    got = s2s.jit(s2s.hessian(affine_energy))(x)
    grad = s2s.grad(affine_energy)
    want = np.array([fd_grad(lambda y: grad(y)[i], (x,), 0) for i in range(4)])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def affine_loss(p, x):
    return np.sum(np.tanh(x @ p.w + p.b) ** 2)


def affine_sets_a_field(p, x):
    p.b = 3.0
    return p.b * np.sum(x)


def test_a_dataclass_argument_is_read_by_field_its_gradient_is_one():
    p, q = Affine(RNG.normal(size=(3, 2)), 0.5), Affine(RNG.normal(size=(3, 2)), -0.3)
    jitted = s2s.jit(affine_loss)
    for params in (p, q):  # the fields are read at every call, never frozen in
        assert jitted(params, XS) == pytest.approx(affine_loss(params, XS), rel=1e-13)
    got = s2s.jit(s2s.grad(affine_loss))(q, XS)
    assert type(got) is Affine
    want = fd_grad(lambda w, b: affine_loss(Affine(w, b), XS), (q.w, q.b), (0, 1))
    np.testing.assert_allclose(got.w, want[0], rtol=1e-6, atol=1e-8)
    assert got.b == pytest.approx(want[1], rel=1e-6)
    got = s2s.jit(s2s.vmap(affine_loss, in_axes=(None, 0)))(q, XS)
    np.testing.assert_allclose(got, [affine_loss(q, x) for x in XS], rtol=1e-13)
    with pytest.raises(s2s.S2SError, match="setting attribute 'b'"):
        s2s.jit(affine_sets_a_field)(p, XS)
    assert p.b == 0.5


# -- lists of arrays and tuples passed in (JAX's MLP example: params = [(W, b), ...]) -----
def layers_predict(params, x):
    for w, b in params[:-1]:
        x = np.tanh(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def layers_loss(params, x, y):
    return np.mean((layers_predict(params, x) - y) ** 2)


LAYERS = [(RNG.normal(size=(3, 4)), RNG.normal(size=4)),
          (RNG.normal(size=(4, 4)), RNG.normal(size=4)),
          (RNG.normal(size=(4, 2)), RNG.normal(size=2))]
TARGETS = RNG.normal(size=(5, 2))


def test_a_list_of_layers_is_read_as_python_reads_it():
    np.testing.assert_allclose(s2s.jit(layers_predict)(LAYERS, XS),
                               layers_predict(LAYERS, XS), rtol=1e-13)
    got = s2s.jit(s2s.grad(layers_loss))(LAYERS, XS, TARGETS)
    assert type(got) is list and all(type(layer) is tuple for layer in got)
    assert_tree_close(got, fd_grad(layers_loss, (LAYERS, XS, TARGETS)), rtol=1e-6, atol=1e-9)
    assert_tree_close(got, s2s.grad(layers_loss)(LAYERS, XS, TARGETS), rtol=1e-12,
                      atol=1e-14)


def test_a_list_argument_the_function_changes_is_refused():
    def appends(params, x):
        params.append((x, x))
        return len(params)

    def replaces(params, x):
        params[0] = (x, x)
        return params[0][0]

    for fn in (appends, replaces):
        layers = list(LAYERS)
        with pytest.raises(s2s.S2SError, match="jit does not compile"):
            s2s.jit(fn)(layers, XS[0])
        assert len(layers) == len(LAYERS) and layers[0] is LAYERS[0]  # untouched


# -- lists of other items, of a length known when compiling: list displays that grow ------
def appends_pairs(a, b):
    out = []
    out.append((a, b))
    out.append((b * 2.0, a))
    return out


def pairs_in_a_loop(x):
    out = []
    for i in range(3):
        out.append((x * i, float(i)))
    total = 0.0
    for v, c in out:
        total += np.sum(v) * c
    return total, len(out), out[1][1]


def dicts_in_a_loop(x):
    out = []
    for i in range(2):
        out.append({"v": x * i, "i": i})
    return out[1]["v"] + out[0]["i"]


def arrays_of_two_ranks(x):
    acc = [x]
    acc.append(np.outer(x, x))
    return acc[1] @ acc[0]


def sgd_step(params, grads):  # JAX's MLP example: a list of (W, b) pairs
    return [(w - 0.1 * dw, b - 0.1 * db) for (w, b), (dw, db) in zip(params, grads)]


@pytest.mark.parametrize("fn, args", [
    (appends_pairs, (V, V + 1.0)), (pairs_in_a_loop, (V,)), (dicts_in_a_loop, (V,)),
    (arrays_of_two_ranks, (V,)), (sgd_step, (LAYERS, [(w * 0.5, b + 1.0) for w, b in LAYERS])),
])
def test_a_list_of_other_items_is_a_display_that_grows(fn, args):
    assert_tree_close(s2s.jit(fn)(*args), fn(*args), rtol=1e-14, atol=0, what="result")


def test_a_jitted_update_step_takes_and_returns_a_list_of_layers():
    @s2s.jit
    def update(params, x, y):
        grads = s2s.grad(layers_loss)(params, x, y)
        return [(w - 0.1 * dw, b - 0.1 * db) for (w, b), (dw, db) in zip(params, grads)]

    got = update(LAYERS, XS, TARGETS)
    grads = fd_grad(layers_loss, (LAYERS, XS, TARGETS))
    want = [(w - 0.1 * dw, b - 0.1 * db) for (w, b), (dw, db) in zip(LAYERS, grads)]
    assert type(got) is list and all(type(layer) is tuple for layer in got)
    assert_tree_close(got, want, rtol=1e-8, atol=1e-10, what="result")


def pairs_loss(x):
    total, _, third = pairs_in_a_loop(x)
    return total * third


@pytest.mark.parametrize("f", [pairs_loss, lambda x: np.sum(dicts_in_a_loop(x) ** 2)],
                         ids=["pairs", "dicts"])
def test_gradients_of_displays_that_grow_compile(f):
    """The adjoint loop runs backwards over the same compile-time range and shrinks the
    display's cotangent by one item per trip: it is unrolled as the primal loop is."""
    np.testing.assert_allclose(s2s.jit(s2s.grad(f))(V), fd_grad(f, (V,)),
                               rtol=1e-6, atol=1e-8)


def pairs_from_an_argument(x, pairs):
    out = [(p * x, b) for p, b in pairs]  # a loop over range(len(pairs)): known compiling
    s = 0.0
    for a, b in out:
        s = s + np.sum(np.sin(a)) * b
    return s


def test_gradients_of_displays_grown_over_a_list_argument_compile():
    pairs = [(0.5, 0.1), (-1.2, 0.3), (0.8, -0.2)]
    want = fd_grad(lambda x: pairs_from_an_argument(x, pairs), (V,))
    np.testing.assert_allclose(s2s.jit(s2s.grad(pairs_from_an_argument))(V, pairs), want,
                               rtol=1e-6, atol=1e-8)


def test_a_list_of_other_items_grown_a_run_time_number_of_times_is_refused():
    def pairs(x, n):
        out = []
        for i in range(n):
            out.append((x * i, float(i)))
        return len(out)

    with pytest.raises(s2s.S2SError, match="a list of other items is compiled where its "
                                           "length is known when compiling"):
        s2s.jit(pairs)(V, 3)


# -- np.array of a tuple or list display of arrays: the arrays stacked ---------------------
def array_of_rows(x):
    m = np.array([x, x ** 2, np.sin(x)])  # (3, n)
    return np.sum(m @ m.T) + np.sum(np.array((m, 2.0 * m))[1, 0])


def test_np_array_of_arrays_compiles_with_its_derivatives():
    from tests.compose.finite_differences import fd_hessian
    x = np.array([0.3, -0.2, 0.5])
    np.testing.assert_allclose(s2s.jit(array_of_rows)(x), array_of_rows(x), rtol=1e-14)
    np.testing.assert_allclose(s2s.jit(s2s.grad(array_of_rows))(x), fd_grad(array_of_rows, (x,)),
                               rtol=1e-6, atol=1e-8)
    hess = fd_hessian(array_of_rows, x)
    for h in (s2s.jit(s2s.hessian(array_of_rows)),
              s2s.jit(lambda v: s2s.jacrev(s2s.grad(array_of_rows))(v))):
        np.testing.assert_allclose(h(x), hess, rtol=1e-4, atol=1e-5)


def test_np_array_of_arrays_of_different_shapes_is_numpys_value_error():
    def ragged(x):
        return np.array([x, x[:2]])

    with pytest.raises(ValueError, match="different shapes"):
        s2s.jit(ragged)(np.array([0.3, -0.2, 0.5]))


def updated_copy(p, g):
    new = dict(p)  # a copy: p itself only read, so the loop over it is one copy per key
    for k, v in p.items():
        new[k] = v - 0.1 * g[k] * v
    return np.sum(new["w"] ** 2) + new["b"] ** 2


def test_a_copied_dict_updated_in_a_loop_over_the_original():
    """``new = dict(p); for k, v in p.items(): new[k] = ...`` (an SGD step over a params
    dict): ``dict(d)`` compiles (it was refused: "jit does not compile dict({...})"),
    and the loop is unrolled per key under every transform (``vmap(grad)`` refused "a key
    that differs per example")."""
    p = {"w": RNG.normal(size=3), "b": 0.3}
    g = {"w": RNG.normal(size=3), "b": -0.2}
    assert s2s.jit(updated_copy)(p, g) == pytest.approx(updated_copy(p, g), rel=1e-14)
    want = fd_grad(lambda w, b: updated_copy({"w": w, "b": b}, g), (p["w"], p["b"]), (0, 1))
    for got in (s2s.grad(updated_copy)(p, g), s2s.jit(s2s.grad(updated_copy))(p, g)):
        np.testing.assert_allclose(got["w"], want[0], rtol=1e-6, atol=1e-8)
        assert got["b"] == pytest.approx(want[1], rel=1e-6)
    gs = {"w": np.stack([g["w"], 2.0 * g["w"]]), "b": np.array([-0.2, 0.1])}
    batched = s2s.vmap(s2s.grad(updated_copy), (None, 0))(p, gs)
    for k in range(2):
        gk = {"w": gs["w"][k], "b": gs["b"][k]}
        want = fd_grad(lambda w, b: updated_copy({"w": w, "b": b}, gk), (p["w"], p["b"]), (0, 1))
        np.testing.assert_allclose(batched["w"][k], want[0], rtol=1e-6, atol=1e-8)
        assert batched["b"][k] == pytest.approx(want[1], rel=1e-6)
