"""Assignment expressions (``:=``): the name assigned where the expression is evaluated
(an ``if`` test, a branch of ``and``/``or`` or of a conditional expression, a ``while``
test), in every mode.  Oracle: central differences of the function run by Python."""
import numpy as np
import pytest

import s2s

from .oracles import fd_grad

X = np.array([0.3, 0.5, 0.7])


def in_if_test(x):
    if (s := np.sum(x)) > 1.0:
        return s * 2 + (t := s ** 2) * t
    return s


def in_short_circuit(x):
    # n is assigned only where the 'and' evaluates its right side
    n = 0.0
    if (m := np.max(x)) > 0.5 and (n := np.min(x)) < 0.5:
        return m * n
    return m + n


def in_conditional_expression(x):
    return (a := x[0] * 3) if x[1] > 0 else (a := x[2]) + a


def in_while_test(x):
    k = 0
    while (k := k + 1) < 4:
        pass
    return x[0] * k


@pytest.mark.parametrize("f", [in_if_test, in_short_circuit, in_conditional_expression,
                               in_while_test])
@pytest.mark.parametrize("x", [X, X * 2.5], ids=["small", "large"])
def test_assignment_expressions(f, x):
    want = fd_grad(f, (x,), 0)
    np.testing.assert_allclose(s2s.grad(f)(x), want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(s2s.jit(s2s.grad(f))(x), want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(s2s.jit(f)(x), f(x), rtol=1e-14)
    np.testing.assert_allclose(s2s.jvp(f, (x,), (np.ones(3),))[1], want.sum(), rtol=1e-6)


def test_assignment_expression_in_a_comprehension_is_refused():
    with pytest.raises(s2s.S2SError, match="':=' inside a comprehension"):
        s2s.grad(lambda x: sum((y := v * 2) for v in x))(X)
