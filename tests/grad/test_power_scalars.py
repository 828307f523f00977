"""Real powers of real scalars (``x ** 0.2``) may be complex, yet ``abs``/``min``/``max``
of them are real: the scalar analysis (``s2s/ad/scalars.py``) keeps the code after them
scalar code (no ``rt.unbroadcast``, no ``rt.add``), and the derivatives stay right,
checked against central differences, including where the power is complex."""
import numpy as np
import pytest

import s2s


def _fd(f, args, i, eps=1e-6):
    lo, hi = list(args), list(args)
    lo[i] -= eps
    hi[i] += eps
    return (f(*hi) - f(*lo)) / (2 * eps)


def adaptive(a, b, tol):
    """A step-size controller like the ODE sample's: h from an error estimate."""
    h, t, s = 0.1, 0.0, 0.0
    while t < 1.0:
        h = min(h, 1.0 - t)
        err = abs(a * h * h - b * h) + 1e-3 * h
        if err <= tol:
            t = t + h
            s = s + h * a * b
        h = 0.9 * h * min(4.0, max(0.2, (tol / max(err, 1e-16)) ** 0.2))
    return s + h


def _code(f, args, argnums):
    g = s2s.grad(f, argnums=argnums)
    src = g.generated(list(args))[0].__s2s_source__
    return "\n".join(line for line in src.splitlines() if not line.strip().startswith("#"))


def test_controller_gradient_and_scalar_code():
    args = (1.3, 0.4, 1e-3)
    g = s2s.grad(adaptive, argnums=(0, 1, 2))(*args)
    for i, eps in enumerate((1e-6, 1e-7, 1e-10)):  # small steps: the controller has kinks
        assert g[i] == pytest.approx(_fd(adaptive, args, i, eps), rel=1e-5)
    code = _code(adaptive, args, (0, 1, 2))
    assert "rt.add(" not in code
    assert code.count("rt.unbroadcast(") <= 2  # only at the power itself, if anywhere


def abs_of_root(x):
    return 3.0 * abs(x ** 0.5) + x


@pytest.mark.parametrize("x", [2.0, -2.0, 0.7, -0.3])
def test_abs_of_a_maybe_complex_power(x):
    """For x < 0, x ** 0.5 is a Python complex and abs of it real: d/dx = +-1.5/sqrt|x| + 1."""
    g = s2s.grad(abs_of_root)(x)
    assert isinstance(g, float)
    assert g == pytest.approx(_fd(abs_of_root, (x,), 0), rel=1e-6)
    assert g == pytest.approx(np.sign(x) * 1.5 / np.sqrt(abs(x)) + 1.0, rel=1e-9)


def clipped_root(x):
    return max(0.2, x ** 0.5) * x


def test_max_of_a_complex_power_raises_as_python_does():
    assert s2s.grad(clipped_root)(2.0) == pytest.approx(_fd(clipped_root, (2.0,), 0), rel=1e-6)
    with pytest.raises(TypeError):
        clipped_root(-2.0)
    with pytest.raises(TypeError):
        s2s.grad(clipped_root)(-2.0)


def nested_invariants(omega, x, n):
    """-omega * omega is invariant in both loops: computed once, before the outer one."""
    total = 0.0
    for k in range(n):
        j = 0
        while j < k + 2:
            x = x + 0.01 * (-omega * omega * x)
            j = j + 1
        total = total + x * x
    return total


def test_invariants_leave_every_loop_they_are_invariant_in():
    args = (1.7, 0.9, 4)
    g = s2s.grad(nested_invariants, argnums=(0, 1))(*args)
    for i in range(2):
        assert g[i] == pytest.approx(_fd(nested_invariants, args, i), rel=1e-7)
    code = _code(nested_invariants, args, (0, 1))
    head = code[:code.index("for k in")]
    assert "-omega" in head  # hoisted out of the for loop, not only out of the while
    assert "(t" not in code.split("while")[0].split("for k in")[1]  # nothing pushed per k for it
