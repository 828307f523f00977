"""Second order through the VJP helpers that are not linear in their primal arguments
(``prod_vjp``, ``cumprod_vjp``, ``var_vjp``, ``norm_vjp``, ``dot_vjp``, ``inner_vjp``,
``tensordot_vjp``, ``linspace_vjp``, ``average_vjp``; rules in
``s2s/rules/runtime_rules_nonlinear.py``, helpers in ``s2s_runtime.second_order``).

``test_rules_runtime`` checks their templates on real inputs.  Here:

- the same checks on complex inputs, with JAX's pairing ``<u, v> = Re(sum(u * v))``:
  the JVP templates against central differences along complex tangents, the VJP
  templates by the dot-product test ``<ct, J t> == sum_i <vjp_i(ct), t_i>``;
- ``norm_vjp`` along ``ans = norm(x)`` (the max-type norms jump off it);
- end to end: ``s2s.hessian``, ``s2s.jvp(s2s.grad(f))`` and ``s2s.grad`` of
  ``<s2s.grad(f), v>`` (reverse over reverse) of small functions against central
  differences of ``s2s.grad(f)``.
"""
import numpy as np
import pytest

import s2s
import s2s_runtime as rt
from s2s.rules import lookup

RNG = np.random.default_rng(7)
EPS = 1e-6


def rn(*shape):
    return RNG.standard_normal(shape) if shape else float(RNG.standard_normal())


def cn(*shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


def _like(x):
    """A random tangent / cotangent of ``x``: complex for complex ``x``, real otherwise."""
    if np.iscomplexobj(x):
        return cn(*np.shape(x)) if np.ndim(x) else complex(cn())
    return rn(*np.shape(x)) if np.ndim(x) else rn()


def _shift(args, active, tans, h):
    out = list(args)
    for i, t in zip(active, tans):
        out[i] = args[i] + h * t
    return out


def _fd(fn, args, active, tans):
    return (np.asarray(fn(*_shift(args, active, tans, EPS)))
            - np.asarray(fn(*_shift(args, active, tans, -EPS)))) / (2 * EPS)


def _pair(u, v):
    return float(np.real(np.sum(np.asarray(u) * np.asarray(v))))


def check(fn, args, active):
    """The JVP templates against central differences and the VJP templates by the
    dot-product test, complex arguments included; each VJP has its argument's shape and
    is real for a real argument; the inactive differentiable arguments get zeros."""
    rule = lookup(fn)
    out = fn(*args)
    tans = [_like(args[i]) for i in active]
    jv = sum(np.asarray(rule.jvps[i](t, out, *args)) for i, t in zip(active, tans))
    fd = _fd(fn, args, active, tans)
    assert np.shape(jv) == np.shape(out)
    np.testing.assert_allclose(jv, fd, rtol=1e-6, atol=1e-7)
    ct = _like(out)
    lhs, rhs = _pair(ct, fd), 0.0
    for i, t in zip(active, tans):
        v = rule.vjps[i](ct, out, *args)
        assert np.shape(v) == np.shape(args[i]), (i, np.shape(v), np.shape(args[i]))
        if not np.iscomplexobj(args[i]):
            assert not np.iscomplexobj(v), i
        rhs += _pair(v, t)
    assert abs(lhs - rhs) <= 1e-6 * (1 + abs(lhs)), (lhs, rhs)
    for i, template in enumerate(rule.vjps[:len(args)]):
        if i not in active and template is not None:
            assert np.all(np.asarray(template(ct, out, *args)) == 0), i
            assert np.all(np.asarray(rule.jvps[i](_like(out), out, *args)) == 0), i


def _zeros_at(x, positions):
    x = x.copy()
    x.reshape(-1)[list(positions)] = 0
    return x


def _complex_cases():
    out = []
    for a in (cn(3, 4), _zeros_at(cn(3, 4), [2]), _zeros_at(cn(3, 4), [0, 3, 6, 7])):
        out += [(rt.prod_vjp, (cn(), a), [0, 1]),
                (rt.prod_vjp, (cn(3, 1), a, 1, True), [0, 1]),
                (rt.cumprod_vjp, (cn(3, 4), a, 1), [0, 1]),
                (rt.cumprod_vjp, (cn(12), a), [0, 1])]
    a = cn(3, 4)
    out += [(rt.var_vjp, (rn(), a), [0, 1]),
            (rt.var_vjp, (rn(4), a, 0, 1), [0, 1])]
    v, m, b3 = cn(5), cn(3, 4), cn(2, 4, 3)
    for ord in (None, 2, 3, 1.5):
        out.append((rt.norm_vjp, (rn(), np.linalg.norm(v, ord), v, ord), [0, 1, 2]))
        out.append((rt.norm_vjp, (rn(3), np.linalg.norm(m, ord, 1), m, ord, 1), [0, 1, 2]))
    for ord in ("fro", "nuc", 2, -2):
        out.append((rt.norm_vjp, (rn(), np.linalg.norm(m, ord), m, ord), [0, 1, 2]))
        out.append((rt.norm_vjp, (rn(2), np.linalg.norm(b3, ord, (1, 2)), b3, ord, (1, 2)),
                    [0, 1, 2]))
    # complex x: the factor sgn(x) = conj(x)/|x| of ord 1 is not piecewise constant.  (The
    # factors of inf and the matrix 1/inf norms also mask the extreme entries by equality
    # with the norm, which finite differences in x at a fixed norm break: their x-derivative
    # is tested in total, through grad, in tests/unit/test_rules_linalg.py.)
    out.append((rt.norm_vjp, (rn(), np.linalg.norm(v, 1), v, 1), [0, 1, 2]))
    for which in (0, 1):
        a, b = cn(2, 3), cn(3, 4)
        out += [(rt.dot_vjp, (cn(2, 4), a, b, which), [0, 1, 2]),
                (rt.dot_vjp, (cn(3), complex(cn()), cn(3), which), [0, 1, 2]),
                (rt.dot_vjp, (cn(2), rn(2, 3), cn(3), which), [0, 1, 2]),  # a real factor
                (rt.inner_vjp, (cn(2, 4), a, cn(4, 3), which), [0, 1, 2]),
                (rt.tensordot_vjp, (cn(2, 4), a, b, 1, which), [0, 1, 2]),
                (rt.tensordot_vjp, (cn(), a, cn(2, 3), 2, which), [0, 1, 2]),
                (rt.linspace_vjp, (cn(4, 2), cn(2), 1.5 + 0.5j, 4, True, False, 0, which), [0])]
        a, w = cn(3, 4), 0.5 + RNG.random(4)
        out.append((rt.average_vjp, (cn(3), np.average(a, 1, w), a, 1, w, False, False, which),
                    [0, 1, 2, 4]))
    return out


CASES = _complex_cases()


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)])
def test_complex_inputs(case):
    check(*case)


def test_real_inputs_with_ties_and_zeros():
    """Repeated values (ties of var's mean, prod's equal entries) and exact zeros."""
    x = np.array([[1.0, 1.0, 0.0, 2.0], [0.0, 0.0, 3.0, 3.0], [2.0, 0.0, 0.0, 0.0]])
    for axis in (None, 0, 1):
        g = rn(*np.shape(np.prod(x, axis)))
        check(rt.prod_vjp, (g, x, axis), [0, 1])
        check(rt.cumprod_vjp, (rn(*np.shape(np.cumprod(x, axis))), x, axis), [0, 1])
    check(rt.var_vjp, (rn(4), np.ones((3, 4)), 0), [0, 1])


@pytest.mark.parametrize("x, ord, axis", [
    (rn(5), None, None), (rn(5), 3, None), (rn(5), 0.5, None), (rn(5), 1, None),
    (rn(5), np.inf, None), (rn(5), -np.inf, None), (rn(5), 0, None), (rn(3, 4), 2, 1),
    (rn(3, 4), "fro", None), (rn(3, 4), "nuc", None), (rn(3, 4), 2, None),
    (rn(3, 4), -2, None), (rn(3, 4), 1, None), (rn(3, 4), -1, None), (rn(3, 4), np.inf, None),
    (rn(3, 4), -np.inf, None), (rn(2, 3, 4), "nuc", (2, 0)), (cn(3, 4), 2, None),
    (cn(3, 4), "nuc", None), (cn(5), 3, None)])
def test_norm_vjp_along_its_norm(x, ord, axis):
    """d/de norm_vjp(g, norm(x + e t), x + e t) == jvp_x(t) + jvp_ans(d norm(t)): the split
    into the partial derivatives in ans and in x adds up (also for the max-type norms,
    whose partials are only meaningful together: both 0)."""
    rule = lookup(rt.norm_vjp)
    n = np.linalg.norm(x, ord, axis)
    g = rn(*np.shape(n))
    t = _like(x)

    def along(e):
        y = x + e * t
        return rt.norm_vjp(g, np.linalg.norm(y, ord, axis), y, ord, axis)

    fd = (along(EPS) - along(-EPS)) / (2 * EPS)
    out = along(0.0)
    dn = rt.norm_jvp(t, n, x, ord, axis)
    got = rule.jvps[1](dn, out, g, n, x, ord, axis) + rule.jvps[2](t, out, g, n, x, ord, axis)
    np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-7)


# --- end to end ------------------------------------------------------------------------------
W5 = np.array([0.3, -1.2, 0.8, 2.0, -0.5])
W12 = RNG.standard_normal(12)


def f_prod(x):
    return np.prod(x)


def f_prod_axis(x):
    return np.sum(np.prod(x, axis=0, keepdims=True) ** 2) + x.prod(axis=1).sum()


def f_dot(x):
    a, b = x[:6].reshape(2, 3), x[6:]
    return np.sum(np.dot(a, b) ** 2) + np.dot(b, b) * a[0, 0] + np.sum(np.dot(x[0], b) ** 3)


def f_dot_method(x):
    a = x.reshape(3, 3)
    return np.sum(a.dot(a) ** 2)


def f_inner(x):
    a, b = x[:6].reshape(2, 3), x[6:]
    return np.sum(np.inner(a, b) ** 2) + np.inner(b, b) ** 2


def f_tensordot(x):
    a, b = x[:12].reshape(2, 3, 2), x[12:].reshape(3, 2)
    return np.sum(np.tensordot(a, b, axes=([1, 2], [0, 1])) ** 2) \
        + np.sum(np.tensordot(b, b.T, axes=1) ** 3) + np.tensordot(b, b) ** 2


def f_var(x):
    return np.var(x) * np.sum(np.var(x, axis=0, ddof=1) ** 2) + np.std(x, axis=1).sum()


def f_var_method(x):
    return x.var(axis=0).sum() ** 2


def f_cumprod(x):
    return np.sum(np.cumprod(x) * W12)


def f_cumprod_axis(x):
    return np.sum(np.cumprod(x, axis=1) ** 2) + np.sum(np.cumprod(x, axis=0))


def f_norm(x):
    return np.linalg.norm(x) * np.linalg.norm(x, 3) + np.linalg.norm(x, 1) ** 2


def f_norm_max(x):
    return np.linalg.norm(x, np.inf) ** 2 + np.linalg.norm(x, -np.inf) * np.linalg.norm(x)


def f_norm_axis(x):
    a = x.reshape(3, 4)
    return np.sum(np.linalg.norm(a, axis=1) ** 3) \
        + np.sum(np.linalg.norm(a, 3, axis=0, keepdims=True) * a)


def f_norm_matrix(x):
    a = x.reshape(3, 4)
    return np.linalg.norm(a, "fro") ** 3 + np.linalg.norm(a, "nuc") * np.linalg.norm(a, 2) \
        + np.linalg.norm(a, -2) ** 2 + np.linalg.norm(a, 1) * np.linalg.norm(a, np.inf)


def f_norm_batched(x):
    a = x.reshape(2, 2, 3)
    return np.sum(np.linalg.norm(a, "nuc", axis=(1, 2)) ** 2) \
        + np.sum(np.linalg.norm(a, 2, axis=(2, 0)))


def f_linspace(v):
    return np.sum(np.linspace(v[0], v[1], 5) ** 3) \
        + np.sum(np.linspace(v[1], v[2], 4, endpoint=False) ** 2 * W5[:4]) \
        + np.sum(np.linspace(v[:2], v[2:4], 3, axis=1) ** 3) + np.linspace(v[4], v[0], 1)[0] ** 2


def f_average(x):
    a, w = x[:6].reshape(2, 3), x[6:9] ** 2 + 1.0
    full = x[9:15].reshape(2, 3) ** 2 + 0.5
    return np.sum(np.average(a, axis=1, weights=w) ** 2) + np.average(a, weights=full) ** 3 \
        + np.average(a * x[0]) ** 2


def _x(*shape):
    return RNG.uniform(0.5, 1.5, shape) * RNG.choice([-1.0, 1.0], shape)


FUNCTIONS = [
    (f_prod, _x(5)), (f_prod, _zeros_at(_x(5), [2])), (f_prod, _zeros_at(_x(5), [1, 3])),
    (f_prod, _zeros_at(_x(5), [0, 1, 4])), (f_prod_axis, _x(3, 4)),
    (f_prod_axis, _zeros_at(_x(3, 4), [1, 5, 6])),
    (f_dot, _x(9)), (f_dot_method, _x(9)), (f_inner, _x(9)), (f_tensordot, _x(18)),
    (f_var, _x(3, 4)), (f_var_method, _x(3, 4)),
    (f_cumprod, _x(12)), (f_cumprod, _zeros_at(_x(12), [3])),
    (f_cumprod, _zeros_at(_x(12), [2, 7])), (f_cumprod, _zeros_at(_x(12), [0, 5, 9])),
    (f_cumprod_axis, _x(3, 4)), (f_cumprod_axis, _zeros_at(_x(3, 4), [1, 5, 6, 9])),
    (f_norm, _x(5)), (f_norm_max, _x(5)), (f_norm_axis, _x(12)), (f_norm_matrix, _x(12)),
    (f_norm_batched, _x(12)), (f_linspace, _x(5)), (f_average, _x(15)),
]


def _id(case):
    fn, x = case
    zeros = int(np.sum(x == 0))
    return fn.__name__ + (f"-{zeros}zeros" if zeros else "")


def _fd_grad(f, x, v):
    g = s2s.grad(f)
    return (g(x + EPS * v) - g(x - EPS * v)) / (2 * EPS)


@pytest.mark.parametrize("case", FUNCTIONS, ids=[_id(c) for c in FUNCTIONS])
def test_second_order_against_differences_of_grad(case):
    f, x = case
    v = rn(*x.shape)
    expected = _fd_grad(f, x, v)
    scale = 1.0 + float(np.max(np.abs(expected)))

    def close(actual, what):
        np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-7 * scale,
                                   err_msg=f"{f.__name__}: {what}")

    H = s2s.hessian(f)(x)
    assert H.shape == x.shape * 2
    close(np.tensordot(H, v, axes=x.ndim), "hessian(f) v")
    close(s2s.jvp(s2s.grad(f), (x,), (v,))[1], "jvp(grad(f))")
    close(s2s.grad(lambda y: np.vdot(s2s.grad(f)(y), v))(x), "grad(<grad(f), v>)")
    np.testing.assert_allclose(H, np.swapaxes(H.reshape(x.size, x.size), 0, 1).reshape(H.shape),
                               rtol=1e-9, atol=1e-12 * scale, err_msg="H is symmetric")


def test_grad_of_grad_of_scalar_functions():
    """grad(grad(f)) of scalar functions through the helpers (closed forms)."""
    def prod3(t):
        return np.prod(np.array([t, t, 2.0 * t]))  # 2 t^3

    def dot_sq(t):
        v = np.array([t, t * t])
        return np.dot(v, v)  # t^2 + t^4

    def norm3(t):
        return np.linalg.norm(np.array([t, 2.0]), 3)  # (|t|^3 + 8)^(1/3)

    t = 0.7
    assert np.isclose(s2s.grad(s2s.grad(prod3))(t), 12 * t, rtol=1e-12)
    assert np.isclose(s2s.grad(s2s.grad(dot_sq))(t), 2 + 12 * t ** 2, rtol=1e-12)
    n = (t ** 3 + 8) ** (1 / 3)  # n' = t^2 / n^2, n'' = 2 t / n^2 - 2 t^4 / n^5
    assert np.isclose(s2s.grad(s2s.grad(norm3))(t), 2 * t / n ** 2 - 2 * t ** 4 / n ** 5,
                      rtol=1e-12)
