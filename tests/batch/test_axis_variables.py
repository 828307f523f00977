"""vmap of a reduction whose axis is a variable that holds None (a default parameter): it
reduces every axis of each example, never the batch axis.  Oracle: the examples one by
one, and the closed-form Hessian of log-sum-exp (diag(p) - p p^T)."""
import numpy as np

import s2s


def lse(a, axis=None):
    return np.log(np.sum(np.exp(a), axis=axis))


def total(a, axis=None, keepdims=False):
    return np.sum(a * a, axis=axis, keepdims=keepdims)


def test_vmap_with_an_axis_variable_holding_none():
    xs = np.arange(6.0).reshape(2, 3) / 4
    np.testing.assert_allclose(s2s.vmap(total)(xs), [total(x) for x in xs])
    np.testing.assert_allclose(s2s.vmap(lse)(xs), [lse(x) for x in xs])


def test_jacobians_through_a_default_axis():
    x = np.array([0.3, 1.2, 2.5])
    p = np.exp(x - lse(x))
    H = np.diag(p) - np.outer(p, p)
    np.testing.assert_allclose(s2s.hessian(lse)(x), H, atol=1e-14)
    np.testing.assert_allclose(s2s.jacrev(s2s.grad(lse))(x), H, atol=1e-14)
    np.testing.assert_allclose(s2s.jacfwd(s2s.grad(lse))(x), H, atol=1e-14)
