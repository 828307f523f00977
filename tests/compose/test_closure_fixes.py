"""Direct tests of what the composition matrix found (issue 18), each on functions of
its own (not the matrix corpus), checked against central finite differences of the
primal (``wraps.fd_jacobian``/``fd_hessian``) or, for ``vmap``, a loop over the
examples:

* forward mode over reverse code of a ``custom_vjp`` call (``hessian``,
  ``jacfwd(jacrev)``, ``linearize(jacrev)``), where the call's own tangent is never
  needed, and the refusal where it is;
* reverse code of loops that record hundreds of entries, batched (``jacrev``, ``vmap``
  of a pullback: a tape deeper than Python's recursion limit);
* ``list.append`` in a function a ``vjp`` inside code takes, under forward mode;
* ``raise`` under a condition that differs per example, under ``vmap``;
* ``vmap(jacrev(f))`` of a ``while`` loop whose trip count differs per example;
* ``vmap(grad(f))`` inside transformed code, ``f`` a closure calling a checkpoint;
* list methods in the primal of a checkpoint or custom rule under ``jit``/``vmap``.
"""
import numpy as np
import pytest

import s2s
import s2s_runtime as rt
from s2s.ir.kinds import kind_of

from .wraps import fd_hessian, fd_jacobian


@s2s.custom_vjp
def soft_log(x):
    return np.log(1.0 + x * x)


def _soft_log_fwd(x):
    return np.log(1.0 + x * x), x


def _soft_log_bwd(x, g):
    return (2.0 * x / (1.0 + x * x) * g,)


soft_log.defvjp(_soft_log_fwd, _soft_log_bwd)


def uses_soft_log(x):
    return np.sum(soft_log(x * x[1]) * np.sin(x)) + x[0] * x[2]


X3 = np.array([0.4, -0.7, 1.1])


def test_hessian_of_a_custom_vjp_call_matches_second_differences():
    got = s2s.hessian(uses_soft_log)(X3)
    np.testing.assert_allclose(got, fd_hessian(uses_soft_log, X3, 1e-4), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("outer", ["jacfwd", "linearize"])
def test_forward_over_jacrev_of_a_custom_vjp_call(outer):
    jac = s2s.jacrev(uses_soft_log)
    want = fd_hessian(uses_soft_log, X3, 1e-4)
    if outer == "jacfwd":
        got = s2s.jacfwd(jac)(X3)
    else:
        v = np.array([0.3, -0.2, 0.5])
        got, want = s2s.linearize(jac, X3)[1](v), want @ v
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_forward_mode_of_a_custom_vjp_call_is_refused_where_its_tangent_is_needed():
    with pytest.raises(s2s.S2SError, match="custom_vjp function 'soft_log'"):
        s2s.jvp(uses_soft_log, (X3,), (np.ones(3),))
    with pytest.raises(s2s.S2SError, match="custom_vjp"):
        s2s.jacfwd(uses_soft_log)(X3)


def test_forward_mode_over_a_custom_vjp_call_read_only_for_its_shape():
    def f(x):
        return x * np.size(soft_log(x)) + np.sin(x)

    v = np.array([0.3, -0.2, 0.5])
    got = s2s.jvp(f, (X3,), (v,))[1]
    np.testing.assert_allclose(got, fd_jacobian(f, X3, 1e-6) @ v, rtol=1e-7, atol=1e-8)


def long_loop(x):
    y = x
    for i in range(700):  # 700 recorded entries: a tape 700 pairs deep
        y = np.sin(y) * 1.001 + 0.001 * x
    return y


X2 = np.array([0.3, 0.5])


def test_jacrev_of_a_long_recorded_loop_matches_finite_differences():
    np.testing.assert_allclose(s2s.jacrev(long_loop)(X2), fd_jacobian(long_loop, X2, 1e-6),
                               rtol=1e-6, atol=1e-9)


def test_vmap_of_the_pullback_of_a_long_recorded_loop():
    cts = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, -2.0]])
    got = s2s.vmap(s2s.vjp(long_loop, X2)[1])(cts)[0]
    np.testing.assert_allclose(got, cts @ fd_jacobian(long_loop, X2, 1e-6), rtol=1e-6,
                               atol=1e-9)


def test_a_long_chain_has_a_flat_kind():
    chain = ()
    for k in range(5000):
        chain = (float(k), chain)
    kind = kind_of(chain)
    assert kind == kind_of(tuple(chain)) and hash(kind) == hash(kind_of(chain))
    other = (np.zeros(2), chain[1])
    assert kind_of(other) != kind and len(kind_of(other)[1]) == 5000
    assert kind_of((1.0, (2.0, ()))) != kind_of((1.0, (2.0, (3.0, ()))))  # short: as before


def gathers(x):
    out = []
    for i in range(3):
        out.append(np.tanh(x[i] * x[(i + 1) % 3]))
    d = {"s": out[0] + out[2]}
    out.append(d["s"] * x[1])
    return out[1] * out[3] + np.exp(out[0])


def test_forward_mode_over_vjp_in_code_of_a_function_that_appends():
    u, v = 0.7, np.array([0.2, -0.4, 0.3])

    def grad_in_code(x):
        return s2s.vjp(gathers, x)[1](u)[0]

    got = s2s.jvp(grad_in_code, (X3,), (v,))[1]
    np.testing.assert_allclose(got, u * fd_hessian(gathers, X3, 1e-4) @ v, rtol=1e-5,
                               atol=1e-6)


def checked(x, lim):
    s = np.sin(x) * 2.0
    if s > lim:
        raise ValueError(f"sin {s} over {lim}")
    return s * lim


def caught(x):
    try:
        y = np.log(x + 3.0)
        if x > 1.0:
            raise ArithmeticError("large")
        y = y * x
    except ArithmeticError:
        y = -x
    return y


def test_vmap_of_a_raise_per_example_none_raising_matches_a_loop():
    xs, lims = np.array([0.1, 0.3, -0.4]), np.array([1.5, 1.8, 1.0])
    np.testing.assert_allclose(s2s.vmap(checked)(xs, lims),
                               [checked(x, m) for x, m in zip(xs, lims)], rtol=1e-12)
    ys = np.array([0.2, -0.5, 0.9])
    np.testing.assert_allclose(s2s.vmap(caught)(ys), [caught(y) for y in ys], rtol=1e-12)
    both = np.array([[0.2, -0.5], [0.9, 0.4]])
    np.testing.assert_allclose(s2s.vmap(s2s.vmap(caught))(both),
                               [[caught(y) for y in row] for row in both], rtol=1e-12)
    g = s2s.vmap(s2s.grad(caught))(ys)  # per-example gradients of the code around it
    np.testing.assert_allclose(g, [fd_jacobian(caught, float(y), 1e-6) for y in ys],
                               rtol=1e-6)


def test_vmap_of_a_raise_per_example_raises_the_first_examples_exception():
    xs, lims = np.array([0.1, 1.2, 1.5]), np.array([0.5, 0.6, 0.7])
    with pytest.raises(ValueError) as loop:
        [checked(x, m) for x, m in zip(xs, lims)]
    with pytest.raises(ValueError) as batched:
        s2s.vmap(checked)(xs, lims)
    assert str(batched.value) == str(loop.value)
    with pytest.raises(ValueError, match="over"):
        s2s.vmap(s2s.vmap(checked))(xs[None], lims[None])


def test_vmap_of_a_raise_caught_per_example_is_refused_or_looped():
    ys = np.array([0.2, 1.5, 0.9])
    with pytest.raises(rt.BatchingRuntimeError, match="'raise' .*inside a 'try'"):
        s2s.vmap(caught)(ys)
    with pytest.raises(rt.BatchingRuntimeError, match="'raise'"):
        s2s.jit(s2s.vmap(caught))(ys)
    np.testing.assert_allclose(s2s.vmap(caught, fallback="loop")(ys), [caught(y) for y in ys],
                               rtol=1e-12)


def grows(x):
    s = np.sum(x * x) + 0.5
    k = 0
    while s < 30.0:
        s = s * 1.5 + np.cos(x[k % 3]) * x[1]
        k += 1
    return np.array([s / (k + 1), s * x[0]])


def _trips(x):
    s, k = np.sum(x * x) + 0.5, 0
    while s < 30.0:
        s, k = s * 1.5 + np.cos(x[k % 3]) * x[1], k + 1
    return k


def test_vmap_of_jacrev_of_a_while_loop_with_per_example_trip_counts():
    xs = np.array([[0.3, 0.4, 0.2], [1.5, 1.2, 2.0], [0.9, -0.8, 0.6]])
    assert len({_trips(x) for x in xs}) > 1  # the trip counts differ
    got = s2s.vmap(s2s.jacrev(grows))(xs)
    want = np.stack([fd_jacobian(grows, x, 1e-6) for x in xs])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


@s2s.checkpoint
def _damped(x):
    return np.sin(x) * np.exp(-0.5 * x)


def test_vmap_of_grad_of_a_closure_calling_a_checkpoint_inside_code():
    """``vmap(grad(f))`` met in code another transform differentiates: the batched
    gradient code keeps ``f``'s free values (the weights ``w`` here)."""
    w = np.array([0.5, -1.5, 2.0])

    def weighted(x):
        return np.sum(w * _damped(x) * x[0])

    xs = np.array([[0.3, 0.1, -0.4], [0.9, -0.6, 0.2]])
    v = np.array([[1.0, -0.5, 0.3], [0.2, 0.7, -1.0]])

    def outer(xs):
        return np.sum(s2s.vmap(s2s.grad(weighted))(xs) * v)

    want = np.stack([fd_jacobian(lambda y: np.sum(fd_jacobian(weighted, y, 1e-4) * vk), x,
                                 1e-4) for x, vk in zip(xs, v)])
    np.testing.assert_allclose(s2s.grad(outer)(xs), want, rtol=1e-5, atol=1e-6)
    w = 2.0 * w  # the closure's new value is read, not the one first seen (f is linear in w)
    np.testing.assert_allclose(s2s.grad(outer)(xs), 2.0 * want, rtol=1e-5, atol=1e-6)


def test_list_methods_in_the_primal_of_a_checkpoint_or_custom_rule_under_jit_and_vmap():
    np.testing.assert_allclose(s2s.jit(s2s.checkpoint(gathers))(X3), gathers(X3), rtol=1e-12)
    wrapped = s2s.custom_jvp(lambda x: gathers(x))
    wrapped.defjvp(lambda p, t: (gathers(p[0]), s2s.jvp(gathers, p, t)[1]))
    xs = np.stack([X3, X3[::-1]])
    np.testing.assert_allclose(s2s.vmap(wrapped)(xs), [gathers(x) for x in xs], rtol=1e-12)
    np.testing.assert_allclose(s2s.grad(s2s.jit(s2s.checkpoint(gathers)))(X3),
                               fd_jacobian(gathers, X3, 1e-6), rtol=1e-6)


def _g(x):
    return np.sin(x) * x


def _sum_g(x):
    return np.sum(_g(x))


@pytest.mark.parametrize("make, closed", [
    (lambda x: np.sum(s2s.jit(_g)(x)), lambda x: np.cos(x) * x + np.sin(x)),
    (lambda x: np.sum(s2s.jacfwd(_g)(x)), lambda x: 2 * np.cos(x) - x * np.sin(x)),
    (lambda x: np.sum(s2s.jacrev(_g)(x)), lambda x: 2 * np.cos(x) - x * np.sin(x)),
    (lambda x: np.sum(s2s.hessian(_sum_g)(x)),
     lambda x: -3 * np.sin(x) - x * np.cos(x))], ids=["jit", "jacfwd", "jacrev", "hessian"])
def test_grad_of_a_transform_made_inside_the_differentiated_code(make, closed):
    x = np.array([0.1, 0.2, 0.7])
    np.testing.assert_allclose(s2s.grad(make)(x), closed(x), rtol=1e-12)


def _jvp_of_local_gradient(x, t, w):
    g = s2s.grad(lambda z: np.sum(np.sin(z * w) ** 3))  # a local function capturing w
    return s2s.jvp(g, (x,), (t,))[1]


def _vjp_of_local_gradient(x, t, w):
    g = s2s.grad(lambda z: np.sum(np.sin(z * w) ** 3))
    return s2s.vjp(g, x)[1](t)[0]


def _linearize_of_local_gradient(x, t, w):
    g = s2s.grad(lambda z: np.sum(np.sin(z * w) ** 3))
    return s2s.linearize(g, x)[1](t)


@pytest.mark.parametrize("f", [_jvp_of_local_gradient, _vjp_of_local_gradient,
                               _linearize_of_local_gradient])
def test_a_transform_of_the_gradient_of_a_local_function_inside_code(f):
    """``jvp(grad(lambda z: ...), ...)`` (and ``vjp``, ``linearize``) inside transformed
    code: the gradient of the local function is lifted with its captures like the local
    function itself (it was refused: "this use of grad of the lambda ... cannot be
    passed to code s2s does not inline"). The Hessian is symmetric, so each is the
    Hessian-vector product, against differences of the gradient."""
    rng = np.random.default_rng(21)
    x, t, w = rng.normal(size=4), rng.normal(size=4), 0.7

    def grad_of(z, w):
        return s2s.grad(lambda y: np.sum(np.sin(y * w) ** 3))(z)

    def hvp_fd(x, t):
        eps = 1e-6
        return (grad_of(x + eps * t, w) - grad_of(x - eps * t, w)) / (2 * eps)

    want = hvp_fd(x, t)
    np.testing.assert_allclose(f(x, t, w), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s.jit(f)(x, t, w), want, rtol=1e-6, atol=1e-8)
    X, T2 = np.stack([x, 2.0 * x]), np.stack([t, -t])
    np.testing.assert_allclose(s2s.vmap(f, (0, 0, None))(X, T2, w),
                               [hvp_fd(X[k], T2[k]) for k in range(2)], rtol=1e-6, atol=1e-8)
    dw = s2s.grad(lambda w: np.sum(f(x, t, w)))(w)
    eps = 1e-6
    assert dw == pytest.approx((np.sum(f(x, t, w + eps)) - np.sum(f(x, t, w - eps))) / (2 * eps),
                               rel=1e-5)
