"""In-place index writes ``y[i] = v`` (and ``+=``, slices, masks, fancy indices)
in reverse mode, checked against central finite differences, the jvp/vjp
dot-product test, forward over reverse (Hessian-vector products) against
differences of gradients, and reverse over reverse.
"""
from __future__ import annotations

import numpy as np
import pytest

import s2s
from s2s.core import pipeline

from .oracles import assert_tree_close, fd_grad

RNG = np.random.default_rng(7)


def fill(x):
    y = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        y[i] = x[i] * x[(i + 1) % x.shape[0]]
    return np.sum(np.sin(y))


def recurrence(x):
    y = x.copy()
    for i in range(1, x.shape[0]):
        y[i] += y[i - 1] * x[i]
    return np.sum(y ** 2)


def rnn(W, xs):
    h = np.zeros((xs.shape[0] + 1, W.shape[0]))
    for t in range(xs.shape[0]):
        h[t + 1] = np.tanh(W @ h[t] + xs[t])
    return np.sum(h ** 2)


def straight_line(x):
    y = np.ones(4)
    y[0] = x[1] ** 2
    y[1:3] = x[:2] * 3.0
    y[3] *= x[0]
    y[0] += y[3]
    return np.sum(y * np.arange(1.0, 5.0))


def masked(x):
    y = x * 2.0
    y[x > 0.0] = 0.5 * x[x > 0.0] ** 2
    return np.sum(y * y)


def fancy_duplicates(x):
    y = np.zeros(3)
    y[np.array([0, 2, 0])] = x[:3] * x[1:4]  # the last write to 0 wins
    return np.sum(y * np.array([1.0, 2.0, 3.0]))


def matrix_entries(x):
    m = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            m[i, j] += x[i] * x[j] + (i == j)
    return np.trace(m @ m @ m)


def branch_in_loop(x):
    y = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        if x[i] > 0:
            y[i] = np.exp(x[i])
        else:
            y[i] = x[i] ** 3
    return np.sum(y * x)


def while_writes(x):
    y = np.zeros(8)
    k = 0
    s = x[0]
    while s < 4.0 and k < 8:
        y[k] = s
        s = s * 1.7 + x[1]
        k += 1
    return np.sum(y ** 2) + s


def reads_whole_state(x):
    """``y * x`` needs the values of y as they were: it reads a snapshot, the writes stay in place."""
    y = np.zeros(3)
    s = 0.0
    for i in range(3):
        s = s + np.sum(y * x)
        y[i] = x[i] ** 2
    return s


def scalar_read_used_after_write(x):
    y = x * 1.0
    a = y[1]
    y[1] = 2.0 * a
    return y[1] * a + np.sum(y)


def cumulative_rows(a):
    out = np.zeros_like(a)
    acc = np.zeros(a.shape[1])
    for i in range(a.shape[0]):
        acc = acc + a[i]
        out[i] = acc * acc
    return np.sum(np.cos(out))


def rebinds_then_writes_in_a_loop(x):
    """In a loop ``y`` is first another name for the argument, then a new array (one name
    for both values inside the loop, as reverse mode keeps it): a write into the new one."""
    s = 0.0
    for k in range(3):
        y = x
        y = y * (1.0 + k)
        a = y[1]
        y[1] = y[0] * 3.0
        s = s + a * y[1] * x[2]
    return s


def view_taken_on_both_branches_in_a_loop(x):
    """The view of one trip is rebound on either branch before the next trip's write."""
    s = 0.0
    for k in range(2):
        y = x * (2.0 + k)
        y[1] = y[0] * 3.0
        if x[0] > 0:
            v = y[0:2]
        else:
            v = y[1:3]
        s = s + np.sum(v ** 2) * y[2]
    return s


def copy_or_argument_chosen_after_the_writes(x):
    """``t`` may be the argument or the written copy; nothing flows from ``t`` into ``cp``."""
    cp = x.copy()
    cp[0] = x[1] ** 2
    t = cp if x[2] > 0 else x
    return np.sum(t * x)


def array_or_argument_chosen_in_a_loop(x):
    s = 0.0
    for i in range(2):
        y = x * 2.0
        y[0] = x[1] * y[1]
        z = y if i == 0 else x
        s = s + np.sum(z ** 2)
    return s


CASES = [
    (fill, (RNG.normal(size=5),), 0),
    (recurrence, (RNG.normal(size=5) * 0.5,), 0),
    (rnn, (RNG.normal(size=(3, 3)) * 0.5, RNG.normal(size=(4, 3))), (0, 1)),
    (straight_line, (RNG.normal(size=4),), 0),
    (masked, (np.array([-0.7, 0.3, 1.2, -0.1, 0.8]),), 0),
    (fancy_duplicates, (RNG.normal(size=4),), 0),
    (matrix_entries, (RNG.normal(size=3),), 0),
    (branch_in_loop, (np.array([0.4, -0.6, 1.1, -0.2]),), 0),
    (while_writes, (np.array([0.6, 0.3]),), 0),
    (reads_whole_state, (RNG.normal(size=3),), 0),
    (scalar_read_used_after_write, (RNG.normal(size=3),), 0),
    (cumulative_rows, (RNG.normal(size=(4, 3)),), 0),
    (rebinds_then_writes_in_a_loop, (RNG.normal(size=3),), 0),
    (view_taken_on_both_branches_in_a_loop, (np.array([0.3, 0.5, -0.4]),), 0),
    (view_taken_on_both_branches_in_a_loop, (np.array([-0.3, 0.5, -0.4]),), 0),
    (copy_or_argument_chosen_after_the_writes, (np.array([0.3, 0.5, 0.4]),), 0),
    (copy_or_argument_chosen_after_the_writes, (np.array([0.3, 0.5, -0.4]),), 0),
    (array_or_argument_chosen_in_a_loop, (RNG.normal(size=3),), 0),
]
IDS = [c[0].__name__ for c in CASES]
#: loops that make a new array in each trip and write into it: reverse over reverse is
#: refused by name (the gradient code's tape and restores link every trip's array)
MADE_IN_EACH_TRIP = (rebinds_then_writes_in_a_loop, view_taken_on_both_branches_in_a_loop,
                     array_or_argument_chosen_in_a_loop)


@pytest.mark.parametrize("f, args, argnums", CASES, ids=IDS)
def test_grad_matches_finite_differences(f, args, argnums):
    g = s2s.grad(f, argnums=argnums)(*args)
    assert_tree_close(g, fd_grad(f, args, argnums), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("f, args, argnums", CASES, ids=IDS)
def test_jvp_and_vjp_pass_the_dot_product_test(f, args, argnums):
    nums = (argnums,) if isinstance(argnums, int) else argnums
    tangents = tuple(RNG.normal(size=np.shape(a)) if i in nums else np.zeros(np.shape(a))
                     for i, a in enumerate(args))
    out, jv = s2s.jvp(f, args, tangents)
    val, pull = s2s.vjp(f, *args)
    assert np.isclose(out, val) and np.isclose(out, f(*args))
    grads = pull(1.0)
    total = sum(np.sum(grads[i] * tangents[i]) for i in nums)
    assert np.isclose(jv, total, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("f, args, argnums", CASES, ids=IDS)
def test_hessian_vector_products_match_differences_of_gradients(f, args, argnums):
    if f is fancy_duplicates or f is masked:
        pytest.skip("piecewise: second derivative checked elsewhere")
    x, rest = args[0], args[1:]
    v = RNG.normal(size=np.shape(x))
    g = s2s.grad(f)
    zeros = tuple(np.zeros(np.shape(a)) for a in rest)
    _, hv = s2s.jvp(g, args, (v,) + zeros)  # forward over reverse
    eps = 1e-5
    fd = (g(x + eps * v, *rest) - g(x - eps * v, *rest)) / (2 * eps)
    np.testing.assert_allclose(hv, fd, rtol=1e-5, atol=1e-6)
    # reverse over reverse: the pullback of grad f (the Hessian is symmetric)
    if f in MADE_IN_EACH_TRIP:  # not yet: the gradient's tape holds every trip's array
        with pytest.raises(s2s.S2SError, match="in-place write"):
            s2s.vjp(g, *args)[1](v)
        return
    rr = s2s.vjp(g, *args)[1](v)[0]
    np.testing.assert_allclose(rr, hv, rtol=1e-8, atol=1e-10)


def test_the_users_array_and_the_primal_value_are_unchanged():
    x = RNG.normal(size=5)
    keep = x.copy()
    val, g = s2s.value_and_grad(recurrence)(x)
    assert np.array_equal(x, keep)
    assert np.isclose(val, recurrence(x))


def grad_source(f, *args) -> str:
    return pipeline.emit(s2s.grad(f).specialised(args)).source


def test_generated_code_writes_in_place_and_copies_only_where_needed():
    code = grad_source(recurrence, np.ones(3))
    assert "y_1[i] = " in code and "index_updated" not in code
    whole = grad_source(reads_whole_state, np.ones(3))  # the read takes a snapshot, once
    assert "rt.owned(y" in whole and "index_updated" not in whole and "y_1[i] = " in whole
    assert grad_source(recurrence, np.ones(3)) == code  # deterministic


def write_into_argument(x):
    x[0] = x[1] * 2.0
    return np.sum(x)


def view_used_after_write(x):
    y = x * 1.0
    v = y.reshape(2, 2)
    y[0] = 5.0
    return np.sum(v * x.reshape(2, 2))


def row_view_used_after_write(x):
    m = np.outer(x, x)
    row = m[0]
    m[0, 0] = 1.0
    return np.sum(row * x)


def test_writing_into_an_argument_is_a_clear_error():
    with pytest.raises(s2s.UnsupportedSyntaxError, match="argument 'x'") as info:
        s2s.grad(write_into_argument)(np.ones(3))
    assert "x[0] = x[1] * 2.0" in str(info.value)


def test_a_view_used_after_a_write_is_a_clear_error():
    with pytest.raises(s2s.UnsupportedSyntaxError, match="view of it") as info:
        s2s.grad(view_used_after_write)(np.ones(4))
    assert "y[0] = 5.0" in str(info.value)


def test_a_row_view_used_after_a_write_raises_at_run_time_not_a_wrong_gradient():
    with pytest.raises(ValueError, match="view of an array that is written in place"):
        s2s.grad(row_view_used_after_write)(np.array([0.5, 1.0, 2.0]))


def operator_after_a_read(x):
    v0 = np.sin(x)
    v1 = v0[0]  # a number: unchanged by the in-place update below
    v0 += x
    return 0.25 * v1 + np.sum(v0 * v0)


def operator_while_a_row_is_used(x):
    m = np.outer(x, x)
    row = m[0]
    m += 1.0  # the row sees it in Python
    return np.sum(row * x)


def operator_on_an_item_of_a_list_argument(p):
    s = p[0]
    s += p[1] * 2.0
    return s * s


def test_in_place_operators_on_shared_arrays_are_index_writes():
    """x += v that inplace.py could not make x = x + v is x[...] = x + v: the same
    checks and the same adjoint as any index write."""
    x = np.array([0.3, -0.2, 0.5])
    assert_tree_close(s2s.grad(operator_after_a_read)(x), fd_grad(operator_after_a_read, (x,)))
    with pytest.raises(ValueError, match="view of an array that is written in place"):
        s2s.grad(operator_while_a_row_is_used)(x)
    p = [0.3, 0.4]
    assert_tree_close(s2s.grad(operator_on_an_item_of_a_list_argument)(p),
                      fd_grad(operator_on_an_item_of_a_list_argument, (p,)))


# -- np.add.at / np.subtract.at: a scatter with repeated places accumulating ---------------
SCATTER = np.array([0, 2, 2, 1, 0])  # repeated places
SEGMENTS = np.array([1, 0, 1])


def scatter_sums(x, v):
    z = np.zeros(3)
    np.add.at(z, SCATTER, v * x[:5])
    np.subtract.at(z, SCATTER[:2], x[1])  # one number for every place
    return np.sum(np.sin(z) * x[:3])


def segment_sums(m, w):  # message passing: rows summed by segment
    out = np.zeros((2, 3))
    np.add.at(out, SEGMENTS, m * w)
    return np.sum(out ** 2)


@pytest.mark.parametrize("f, args", [
    (scatter_sums, (np.linspace(0.1, 1.1, 6), np.linspace(-1.0, 1.0, 5))),
    (segment_sums, (np.arange(9.0).reshape(3, 3) / 9, np.array([0.5, -1.0, 2.0])))],
    ids=["scatter", "segments"])
def test_scatter_adds_differentiate_batch_and_compile(f, args):
    for k in (0, 1):
        fd = fd_grad(f, args, k)
        np.testing.assert_allclose(s2s.grad(f, argnums=k)(*args), fd, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(s2s.jit(s2s.grad(f, argnums=k))(*args), fd, rtol=1e-6,
                                   atol=1e-9)
        np.testing.assert_allclose(s2s.jacfwd(f, argnums=k)(*args), fd, rtol=1e-6, atol=1e-9)
    xs = np.stack([args[0], 2 * args[0]])
    np.testing.assert_allclose(s2s.vmap(f, in_axes=(0, None))(xs, args[1]),
                               [f(x, args[1]) for x in xs], rtol=1e-13)
    assert f(*args) == pytest.approx(s2s.jit(f)(*args), rel=1e-13)


@pytest.mark.parametrize("f", [scalar_read_used_after_write, rebinds_then_writes_in_a_loop,
                               view_taken_on_both_branches_in_a_loop])
@pytest.mark.parametrize("nest", ["jacrev(jacfwd)", "jacfwd(jacrev)", "jacrev(jacrev)"])
def test_nested_jacobians_of_index_writes_match_second_differences(f, nest):
    """``jacfwd`` is a loop over the basis that inlines the tangent code (its writes and
    reads then sit in a loop); ``jacrev`` over it checks them there."""
    from tests.compose.finite_differences import fd_hessian
    outer, inner = nest[:-1].split("(")
    h = getattr(s2s, outer)(getattr(s2s, inner)(f))
    x = np.array([0.3, 0.5, -0.4])
    if nest == "jacrev(jacrev)" and f in MADE_IN_EACH_TRIP:
        with pytest.raises(s2s.S2SError, match="in-place write"):
            h(x)
        return
    np.testing.assert_allclose(h(x), fd_hessian(f, x), rtol=1e-5, atol=1e-5)
