"""The derivative rules of the batching helpers (``s2s/batch/helper_rules.py``), each
against central finite differences in float64: the VJP by the dot-product test
``<u, (h(x + e v) - h(x - e v)) / 2e> == <vjp(u), v>``, the JVP directly."""
import numpy as np
import pytest

import s2s_runtime as rt
from s2s.batch import helper_rules  # noqa: F401  (registers the rules)
from s2s.rules import lookup

rng = np.random.default_rng(5)
N = 3
SPEC = rt.batch_spec("matmul", np.ones((N, 2, 3)), np.ones((3, 4)), True, False)
MASK = np.array([True, False, True])

#: (helper, args, index of the differentiable argument)
CASES = [
    (rt.batch_align, (rng.normal(size=(N, 3)), np.ones((2, 3)), False), 0),
    (rt.batch_flat, (rng.normal(size=(N, 2, 3)),), 0),
    (rt.batch_lift, (rng.normal(size=(2, 3)), N), 0),
    (rt.batch_view, (rng.normal(size=(2,)), N), 0),
    (rt.batch_unlift, (rng.normal(size=(N, 2)),), 0),
    (rt.batch_rows, (rng.normal(size=(N, 4, 2)),), 0),
    (rt.batch_snapshot, (rng.normal(size=(N, 3)),), 0),
    (rt.batch_select, (MASK, rng.normal(size=(N, 2)), rng.normal(size=(N, 2))), 1),
    (rt.batch_select, (MASK, rng.normal(size=(N, 2)), rng.normal(size=(N, 2))), 2),
    (rt.batch_contract, (SPEC, rng.normal(size=(N, 2, 3)), rng.normal(size=(3, 4))), 1),
    (rt.batch_contract, (SPEC, rng.normal(size=(N, 2, 3)), rng.normal(size=(3, 4))), 2),
    (rt.batch_gather, (rng.normal(size=(N, 4)), np.array([0, 3, 3]), True, True), 0),
    (rt.batch_gather, (rng.normal(size=(4,)), np.array([1, 1, 2]), False, True), 0),
    (rt.batch_unbroadcast, (rng.normal(size=(N, 2, 3)), np.ones(3), True, False), 0),
    (rt.batch_gather_vjp, (rng.normal(size=(N,)), np.ones((N, 4)), np.array([0, 3, 3]), True,
                           True), 0),
]
_G, _A, _B = rng.normal(size=(N, 2, 4)), rng.normal(size=(N, 2, 3)), rng.normal(size=(3, 4))
CASES += [(rt.batch_contract_vjp, (SPEC, w, _G, _A, _B), i) for w in (0, 1) for i in (2, 3, 4)]


def _with(args, i, value):
    args = list(args)
    args[i] = value
    return tuple(args)


def _fd(h, args, i, v, eps=1e-6):
    x = np.asarray(args[i], dtype=float)
    return (np.asarray(h(*_with(args, i, x + eps * v))) -
            np.asarray(h(*_with(args, i, x - eps * v)))) / (2 * eps)


@pytest.mark.parametrize("h,args,i", CASES, ids=[f"{c[0].__name__}-{c[2]}-{k}" for k, c in enumerate(CASES)])
def test_helper_vjp_and_jvp_match_finite_differences(h, args, i):
    rule = lookup(h)
    names = rule.param_names()
    k = names.index(names[i])
    ans = h(*args)
    v = rng.normal(size=np.shape(args[i]))
    u = rng.normal(size=np.shape(ans))
    ct = rule.vjps[k](u, ans, *args)
    np.testing.assert_allclose(np.sum(u * _fd(h, args, i, v)), np.sum(np.asarray(ct) * v),
                               rtol=1e-6, atol=1e-8)
    tangent = rule.jvps[k](v, ans, *args)
    np.testing.assert_allclose(np.broadcast_to(tangent, np.shape(ans)), _fd(h, args, i, v),
                               rtol=1e-6, atol=1e-8)
