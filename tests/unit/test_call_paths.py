"""The fast paths of a transform's call: binding trailing defaults, the kinds of
dicts and None, and the float64 matrix @ vector adjoints.

Each fast path must give what the general path gives; the oracles are closed
forms and central finite differences.
"""
import numpy as np
import pytest

import s2s
from s2s.ir.kinds import kind_of


def with_defaults(x, y=2.0, z=3):
    return x * x * y + z * x


@pytest.mark.parametrize("call, expected", [
    (lambda g: g(1.5), 2 * 1.5 * 2.0 + 3),
    (lambda g: g(1.5, 4.0), 2 * 1.5 * 4.0 + 3),
    (lambda g: g(1.5, 4.0, 5), 2 * 1.5 * 4.0 + 5),
    (lambda g: g(1.5, z=7), 2 * 1.5 * 2.0 + 7),
    (lambda g: g(x=1.5), 2 * 1.5 * 2.0 + 3),
])
def test_trailing_defaults_bind_like_the_signature(call, expected):
    assert call(s2s.grad(with_defaults)) == pytest.approx(expected)


def test_too_many_or_missing_arguments_still_raise():
    g = s2s.grad(with_defaults)
    with pytest.raises(TypeError):
        g(1.0, 2.0, 3, 4)
    with pytest.raises(TypeError):
        g()


def weighted(params, x):
    return np.sum(np.tanh(params["w"] * x) * params["b"])


def test_dicts_in_any_insertion_order_get_their_own_correct_gradient():
    rng = np.random.default_rng(0)
    w, b, x = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
    g = s2s.grad(weighted)
    for params in ({"w": w, "b": b}, {"b": b, "w": w}):
        out = g(params, x)
        assert list(out) == ["b", "w"]  # pytree order (sorted keys), as in JAX
        eps = 1e-6
        for key in params:
            fd = np.array([(weighted({**params, key: params[key] + eps * e}, x)
                            - weighted({**params, key: params[key] - eps * e}, x)) / (2 * eps)
                           for e in np.eye(3)])
            assert np.allclose(out[key], fd, atol=1e-8)


def test_kinds_of_none_dicts_and_nesting_are_distinct():
    a = np.zeros(3)
    kinds = [kind_of(None), kind_of({"a": a}), kind_of({"a": 1.0}), kind_of({"a": {"b": a}}),
             kind_of({"a": a, "b": a}), kind_of({"b": a, "a": a}), kind_of((a,)),
             kind_of({"a": np.zeros((3, 2))}), kind_of({"a": np.zeros(3, np.float32)})]
    assert len(set(kinds)) == len(kinds)
    assert kind_of({"a": a}) == kind_of({"a": np.ones(7)})  # shapes are not in kinds


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_matrix_vector_adjoints_match_finite_differences(dtype):
    rng = np.random.default_rng(1)
    W = rng.normal(size=(4, 3)).astype(dtype)
    v = rng.normal(size=3).astype(dtype)

    def f(W, v):
        return np.sum(np.sin(W @ v).real)

    gW, gv = s2s.grad(f, argnums=(0, 1))(W, v)
    assert gW.shape == W.shape and gv.shape == v.shape
    eps = 1e-6 if dtype != np.float32 else 1e-3
    tol = 1e-7 if dtype != np.float32 else 1e-2
    W64, v64 = W.astype(np.complex128 if dtype == np.complex128 else np.float64), \
        v.astype(np.complex128 if dtype == np.complex128 else np.float64)
    for i, j in np.ndindex(*W.shape):
        E = np.zeros(W.shape)
        E[i, j] = eps
        fd = (f(W64 + E, v64) - f(W64 - E, v64)) / (2 * eps)
        assert gW[i, j].real == pytest.approx(fd, abs=tol)
    for j in range(3):
        e = np.zeros(3)
        e[j] = eps
        fd = (f(W64, v64 + e) - f(W64, v64 - e)) / (2 * eps)
        assert gv[j].real == pytest.approx(fd, abs=tol)
