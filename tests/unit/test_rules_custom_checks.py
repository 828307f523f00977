"""Rules of the checks around user-defined rules (``s2s/rules/custom_checks.py``), called
directly: each check is the identity in its first argument (``None`` cotangents made
zeros), so its VJP and JVP templates must be the identity there and zero elsewhere.
Oracle: central finite differences of the check itself."""
import numpy as np
import pytest

from s2s.rules import lookup
from s2s_runtime import check_bwd_output, check_fwd_output, check_jvp_output, zeros_like

X = (np.array([0.5, -1.0, 2.0]), 1.5)
PRIMALS = (np.array([3.0, 1.0, -2.0]), 0.25)
G = (np.array([1.0, 2.0, -0.5]), -3.0)


def _flat(t):
    return np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in t])


def _fd_first_argument(f, x, v, eps=1e-6):
    plus = tuple(a + eps * b for a, b in zip(x, v))
    minus = tuple(a - eps * b for a, b in zip(x, v))
    return (_flat(f(plus)) - _flat(f(minus))) / (2 * eps)


CASES = [
    (check_fwd_output, lambda x: check_fwd_output(x, "rule"), ("rule",)),
    (check_bwd_output, lambda x: check_bwd_output(x, PRIMALS, "rule"), (PRIMALS, "rule")),
]


@pytest.mark.parametrize("fn, call, rest", CASES)
def test_templates_are_the_identity_against_finite_differences(fn, call, rest):
    rule = lookup(fn)
    v = (np.array([0.3, 0.1, -0.2]), 0.7)
    ans = call(X)
    # JVP: the tangent of the first argument comes out unchanged (FD of the check)
    tangent = rule.jvps[0](v, ans, X, *rest)
    assert np.allclose(_flat(tangent), _fd_first_argument(call, X, v))
    # VJP: <g, J v> = <J^T g, v>
    ct = rule.vjps[0](G, ans, X, *rest)
    assert np.isclose(np.dot(_flat(ct), _flat(v)), np.dot(_flat(G), _flat(tangent)))


def test_jvp_output_template():
    rule = lookup(check_jvp_output)
    pair = (np.array([1.0, 2.0]), np.array([0.5, 0.5]))
    ans = check_jvp_output(pair, "rule")
    assert rule.jvps[0](pair, ans, pair, "rule") is pair
    assert rule.vjps[0](pair, ans, pair, "rule") is pair
    assert rule.container_result


def test_bwd_check_primals_carry_no_derivative_and_none_is_zero():
    rule = lookup(check_bwd_output)
    ans = check_bwd_output(X, PRIMALS, "rule")
    zero = rule.vjps[1](G, ans, X, PRIMALS, "rule")
    assert all(np.all(np.asarray(z) == 0) for z in zero)
    out = check_bwd_output((None, 2.0), PRIMALS, "rule")
    assert np.array_equal(out[0], np.zeros(3)) and out[1] == 2.0
    # the tangent of a None cotangent is None: the JVP makes it zeros the same way
    tangent = rule.jvps[0]((None, 1.0), out, (None, 2.0), PRIMALS, "rule")
    assert np.array_equal(tangent[0], np.zeros(3)) and tangent[1] == 1.0
    assert zeros_like(PRIMALS)[1] == 0.0


def test_mismatches_name_the_rule():
    with pytest.raises(TypeError, match="my_bwd: .*expected 2, got 1"):
        check_bwd_output((1.0,), PRIMALS, "my_bwd")
    with pytest.raises(ValueError, match=r"my_bwd: the cotangent of argument 0 has shape \(2,\)"):
        check_bwd_output((np.ones(2), 1.0), PRIMALS, "my_bwd")
    with pytest.raises(TypeError, match="my_bwd: the cotangent of argument 1 has structure"):
        check_bwd_output((np.ones(3), (1.0, 2.0)), PRIMALS, "my_bwd")
    with pytest.raises(TypeError, match="my_fwd: .*pair"):
        check_fwd_output((1.0, 2.0, 3.0), "my_fwd")
    with pytest.raises(ValueError, match=r"my_jvp: the tangent output has shape \(3,\)"):
        check_jvp_output((1.0, np.ones(3)), "my_jvp")
