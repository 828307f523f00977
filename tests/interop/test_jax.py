"""s2s.interop.to_jax: jax.test_util.check_grads (orders 1 and 2, reverse mode), finite
differences of the numpy function, the same op written in JAX, jit, vmap, bad input."""
import numpy as np
import pytest

import jax
import jax.numpy as jnp
from jax.test_util import check_grads

from s2s.interop import to_jax

from .ops import Params, count_and_scale, fd_vjp, listy, mlp, ragged_logsumexp, rnn


@pytest.fixture(autouse=True)
def x64():
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", old)


def _rand(*shape, seed=0):
    return jnp.asarray(np.random.default_rng(seed).standard_normal(shape))


def jax_rnn(x, w, n):
    def step(h, xt):
        return jnp.tanh(w * h + xt), None
    h, _ = jax.lax.scan(step, jnp.zeros_like(x[0]), x)
    return h * n, jnp.sum(h * h)


def test_forward_and_grad_match_finite_differences_and_jax():
    op = to_jax(rnn)
    x, w = _rand(6, 4), jnp.asarray(0.7)
    y, s = op(x, w, 3)
    ry, rs = jax_rnn(x, w, 3)
    np.testing.assert_allclose(y, ry, rtol=1e-12)
    np.testing.assert_allclose(s, rs, rtol=1e-12)
    assert op.mode_of(x, w, 3) == "jit"
    ct_y, ct_s = np.random.default_rng(1).standard_normal(4), 0.3
    loss = lambda x, w: jnp.sum(op(x, w, 3)[0] * ct_y) + ct_s * op(x, w, 3)[1]
    gx, gw = jax.grad(loss, argnums=(0, 1))(x, w)
    ct = (ct_y, ct_s)
    np.testing.assert_allclose(gx, fd_vjp(rnn, (np.asarray(x), 0.7, 3), 0, ct),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gw, fd_vjp(rnn, (np.asarray(x), np.array(0.7), 3), 1, ct),
                               rtol=1e-6, atol=1e-8)
    rloss = lambda x, w: jnp.sum(jax_rnn(x, w, 3)[0] * ct_y) + ct_s * jax_rnn(x, w, 3)[1]
    rgx, rgw = jax.grad(rloss, argnums=(0, 1))(x, w)
    np.testing.assert_allclose(gx, rgx, rtol=1e-10)
    np.testing.assert_allclose(gw, rgw, rtol=1e-10)


def test_check_grads_order_1_and_2():
    op = to_jax(rnn)
    x, w = _rand(4, 3), jnp.asarray(0.4)
    check_grads(lambda x, w: op(x, w, 2), (x, w), order=1, modes=["rev"])
    check_grads(lambda x, w: op(x, w, 2), (x, w), order=2, modes=["rev"])


def test_second_derivative_against_finite_differences_and_jax():
    op = to_jax(rnn)
    x = _rand(5, 2, seed=3)
    f = lambda w: op(x, w, 1)[1]
    h = jax.jacrev(jax.grad(f))(jnp.asarray(0.6))
    href = jax.hessian(lambda w: jax_rnn(x, w, 1)[1])(jnp.asarray(0.6))
    eps = 1e-5
    fd = (jax.grad(f)(0.6 + eps) - jax.grad(f)(0.6 - eps)) / (2 * eps)
    np.testing.assert_allclose(h, href, rtol=1e-9)
    np.testing.assert_allclose(h, fd, rtol=1e-6)


def test_ragged_kernel_under_jit_with_int_offsets():
    op = to_jax(ragged_logsumexp, argnums=0)
    values, offsets = _rand(9, seed=2), jnp.asarray([0, 2, 3, 7, 9])
    f = jax.jit(lambda v, o: op(v, o, 1.5))
    out = f(values, offsets)
    rows = [(0, 2), (2, 3), (3, 7), (7, 9)]
    ref = jnp.stack([jax.nn.logsumexp(values[a:b] * 1.5) for a, b in rows])
    np.testing.assert_allclose(out, ref, rtol=1e-12)
    check_grads(lambda v: op(v, offsets, 1.5), (values,), order=2, modes=["rev"])
    g = jax.jit(jax.grad(lambda v: jnp.sum(op(v, offsets, 1.5) ** 2)))(values)
    gref = jax.grad(lambda v: jnp.sum(jnp.stack([jax.nn.logsumexp(v[a:b] * 1.5) for a, b in
                                                 [(0, 2), (2, 3), (3, 7), (7, 9)]]) ** 2))(values)
    np.testing.assert_allclose(g, gref, rtol=1e-10)


def test_pytrees():
    op = to_jax(mlp)
    params = {"w": _rand(3, 2), "b": _rand(2, seed=1),
              "p": Params(jnp.asarray(1.5), _rand(2, seed=4))}
    x = _rand(5, 3, seed=5)
    out = op(params, x)

    def ref(params, x):
        h = jnp.tanh(x @ params["w"] + params["b"])
        return {"out": h * params["p"].a + params["p"].b, "norm": jnp.sum(h ** 2)}
    r = ref(params, x)
    np.testing.assert_allclose(out["out"], r["out"], rtol=1e-12)
    loss = lambda f: lambda p: jnp.sum(f(p, x)["out"]) + f(p, x)["norm"]
    g, gr = jax.grad(loss(op))(params), jax.grad(loss(ref))(params)
    assert isinstance(g["p"], Params)
    for a, b in zip(jax.tree_util.tree_leaves(g), jax.tree_util.tree_leaves(gr)):
        np.testing.assert_allclose(a, b, rtol=1e-10)


def test_python_mode_where_jit_does_not_compile():
    op = to_jax(listy)
    x = _rand(3, 4)
    np.testing.assert_allclose(op(x), jnp.sin(x) * x * 2.0, rtol=1e-12)
    assert op.mode_of(x) == "python"
    check_grads(op, (x,), order=2, modes=["rev"])


def test_vmap_through_s2s_vmap(monkeypatch):
    import s2s.interop.jax as sj
    calls = []
    host = sj._host

    def spy(kernel, expected):
        call = host(kernel, expected)

        def recorded(*arrays):
            calls.append((kernel.family.name, np.shape(arrays[0])))
            return call(*arrays)
        return recorded

    monkeypatch.setattr(sj, "_host", spy)
    op = to_jax(lambda x, k: np.sum(np.sin(x) * k, axis=-1))
    xb = _rand(4, 3, 5)
    out = jax.vmap(op, in_axes=(1, None))(xb, 2.0)
    np.testing.assert_allclose(out, jnp.sum(jnp.sin(xb) * 2.0, axis=-1).T, rtol=1e-12)
    assert len(calls) == 1 and calls[0][0].startswith("vmap_") and calls[0][1] == (3, 4, 5)
    nested = jax.vmap(jax.vmap(op, in_axes=(0, None)), in_axes=(0, None))(xb, 2.0)
    np.testing.assert_allclose(nested, jnp.sum(jnp.sin(xb) * 2.0, axis=-1), rtol=1e-12)
    assert calls[1][0].startswith("vmap_vmap_") and calls[1][1] == (4, 3, 5)


def test_vmap_of_grad_under_jit():
    op = to_jax(rnn)
    xb, w = _rand(4, 5, 3), jnp.asarray(0.5)
    f = jax.jit(jax.vmap(jax.grad(lambda x, w: op(x, w, 2)[1], argnums=(0, 1)), in_axes=(0, None)))
    gx, gw = f(xb, w)
    rgx, rgw = jax.vmap(jax.grad(lambda x, w: jax_rnn(x, w, 2)[1], argnums=(0, 1)),
                        in_axes=(0, None))(xb, w)
    np.testing.assert_allclose(gx, rgx, rtol=1e-10)
    np.testing.assert_allclose(gw, rgw, rtol=1e-10)
    J = jax.jacrev(lambda x: op(x, w, 2)[0])(xb[0])
    np.testing.assert_allclose(J, jax.jacrev(lambda x: jax_rnn(x, w, 2)[0])(xb[0]), rtol=1e-10)


def test_float32_without_x64_and_integer_outputs():
    jax.config.update("jax_enable_x64", False)
    op = to_jax(count_and_scale)
    x = jnp.asarray(np.random.default_rng(0).standard_normal(7), jnp.float32)
    n, y = op(x, 2.5)
    assert int(n) == int(jnp.sum(x > 0)) and y.dtype == jnp.float32
    g = jax.grad(lambda x: jnp.sum(op(x, 2.5)[1]))(x)
    assert g.dtype == jnp.float32
    np.testing.assert_allclose(g, np.full(7, 2.5), rtol=1e-6)


def test_bad_input_errors():
    op = to_jax(rnn, argnums=0)
    x, w = _rand(3, 2), jnp.asarray(0.5)
    with pytest.raises(ValueError, match="outside argnums"):
        jax.grad(lambda w: op(x, w, 2)[1])(w)
    with pytest.raises(TypeError, match="forward-mode"):
        jax.jvp(lambda x: op(x, w, 2)[1], (x,), (x,))
    with pytest.raises(TypeError, match="complex"):
        to_jax(lambda z: z * 2)(jnp.ones(2, jnp.complex128))
    with pytest.raises(ValueError, match="out of range"):
        to_jax(rnn, argnums=(0, 7))(x, w, 2)
    with pytest.raises(TypeError, match="callable"):
        to_jax(None)
    with pytest.raises(TypeError, match="set"):
        op({1}, w, 2)
    shapes = to_jax(lambda x: x[x > 0.5])
    with pytest.raises(Exception, match="must not depend on the values"):
        np.asarray(shapes(jnp.asarray([0.0, 1.0, 2.0])))
