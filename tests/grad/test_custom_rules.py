"""User-defined rules: ``s2s.custom_jvp`` and ``s2s.custom_vjp`` (JAX's API and semantics).

Every test shows that the rule is *used* (a deliberately different rule whose
effect is visible, or call counters), and checks results against closed
forms or central finite differences (``oracles.py``), never against another
s2s derivative alone.
"""
import math
from collections import Counter
from functools import partial

import numpy as np
import pytest

import s2s

from .oracles import assert_tree_close, fd_directional, fd_grad

CALLS = Counter()


# -- a custom_vjp whose rule is deliberately 3x the true derivative ----------------------

@s2s.custom_vjp
def sin3(x):
    CALLS["sin3.fun"] += 1
    return np.sin(x)


def sin3_fwd(x):
    CALLS["sin3.fwd"] += 1
    return np.sin(x), np.cos(x)


def sin3_bwd(cos_x, g):
    CALLS["sin3.bwd"] += 1
    return (3.0 * cos_x * g,)


sin3.defvjp(sin3_fwd, sin3_bwd)


def uses_sin3(x, y):
    return sin3(x * y) * y + x


def test_plain_call_runs_the_primal():
    CALLS.clear()
    assert sin3(0.3) == math.sin(0.3)
    assert CALLS == {"sin3.fun": 1}


def test_custom_vjp_top_level_uses_fwd_and_bwd_not_the_primal():
    CALLS.clear()
    x = 0.4
    assert math.isclose(s2s.grad(sin3)(x), 3 * math.cos(x), rel_tol=1e-14)
    assert CALLS == {"sin3.fwd": 1, "sin3.bwd": 1}


def test_custom_vjp_called_from_differentiated_code():
    x, y = 0.4, 1.3
    gx, gy = s2s.grad(uses_sin3, argnums=(0, 1))(x, y)
    c = 3 * math.cos(x * y)  # the rule's "derivative" of sin
    assert math.isclose(gx, c * y * y + 1, rel_tol=1e-13)
    assert math.isclose(gy, c * x * y + math.sin(x * y), rel_tol=1e-13)


def test_custom_vjp_value_and_grad_and_vjp():
    x, y = 0.4, 1.3
    (val, g) = s2s.value_and_grad(uses_sin3)(x, y)
    assert val == uses_sin3(x, y)
    assert math.isclose(g, 3 * math.cos(x * y) * y * y + 1, rel_tol=1e-13)
    xs = np.array([0.1, -0.7, 2.0])
    out, pull = s2s.vjp(sin3, xs)
    ct = np.array([1.0, 2.0, -1.5])
    assert_tree_close(out, np.sin(xs))
    assert_tree_close(pull(ct), (3 * np.cos(xs) * ct,))


def correct_sin(x):
    return sin_ok(x)


@s2s.custom_vjp
def sin_ok(x):
    return np.sin(x)


def _sin_ok_fwd(x):
    return sin_ok(x), np.cos(x)  # the fwd calls the custom function itself (JAX's example)


sin_ok.defvjp(_sin_ok_fwd, lambda cos_x, g: (cos_x * g,))


def loop_of_custom(x, n):
    s = 0.0
    for i in range(n):
        if s > 0.5:
            s = s + sin_ok(x * s + 1.0)
        else:
            s = s + sin_ok(x) * 0.5
    return s


def test_custom_vjp_in_loops_and_branches_matches_fd():
    for x in (0.3, 0.7, -0.2):
        g = s2s.grad(loop_of_custom)(x, 6)
        assert np.isclose(g, fd_grad(loop_of_custom, (x, 6)), rtol=1e-6, atol=1e-8)


def test_grad_of_grad_differentiates_fwd_and_bwd():
    # JAX's documented example: grad(grad(f)) with bwd = cos(x) * g gives -sin(x)
    x = 0.9
    assert math.isclose(s2s.grad(s2s.grad(sin_ok))(x), -math.sin(x), rel_tol=1e-13)
    # with the 3x rule the second derivative is d/dx (3 cos x) = -3 sin x
    assert math.isclose(s2s.grad(s2s.grad(sin3))(x), -3 * math.sin(x), rel_tol=1e-13)
    # third order, through the residual cos(x)
    g3 = s2s.grad(s2s.grad(s2s.grad(sin_ok)))(x)
    assert math.isclose(g3, -math.cos(x), rel_tol=1e-12)


def test_hessian_of_code_calling_custom_vjp_matches_fd_of_gradient():
    def f(x):
        return np.sum(sin_ok(x) * x ** 2)

    x = np.array([0.3, -1.1, 0.8])
    H = s2s.jacrev(s2s.grad(f))(x)
    grad_closed = lambda x: np.cos(x) * x ** 2 + 2 * x * np.sin(x)  # noqa: E731
    for i in range(3):
        e = np.eye(3)[i]
        col = (grad_closed(x + 1e-6 * e) - grad_closed(x - 1e-6 * e)) / 2e-6
        assert np.allclose(H[:, i], col, rtol=1e-6, atol=1e-8)


def test_forward_mode_of_custom_vjp_is_a_type_error_like_jax():
    with pytest.raises(TypeError, match="forward-mode autodiff"):
        s2s.jvp(sin3, (0.3,), (1.0,))
    with pytest.raises(TypeError, match="custom_vjp"):
        s2s.jacfwd(lambda x: sin3(x) * 2.0)(np.array([0.1, 0.2]))


# -- custom_vjp with several arguments, pytrees, nondiff_argnums ---------------------------

@s2s.custom_vjp
def weighted(params, x):
    return params["w"] * x + params["b"]


def _weighted_fwd(params, x):
    return weighted(params, x), (params["w"], x)


def _weighted_bwd(res, g):
    w, x = res
    # the true cotangents, with an extra visible factor 2 on b
    return {"w": np.sum(g * x), "b": 2.0 * np.sum(g)}, g * w


weighted.defvjp(_weighted_fwd, _weighted_bwd)


def test_custom_vjp_pytree_arguments():
    params = {"w": 1.5, "b": -0.3}
    x = np.array([0.2, 0.4, -1.0])
    gp, gx = s2s.grad(lambda p, x: np.sum(weighted(p, x) ** 2), argnums=(0, 1))(params, x)
    r = params["w"] * x + params["b"]
    assert_tree_close(gp, {"w": np.sum(2 * r * x), "b": 2.0 * np.sum(2 * r)})
    assert_tree_close(gx, 2 * r * params["w"])


@partial(s2s.custom_vjp, nondiff_argnums=(0,))
def power(n, x):
    return x ** n


power.defvjp(lambda n, x: (x ** n, x), lambda n, x, g: (g * n * x ** (n - 1),))


def test_custom_vjp_nondiff_argnums():
    assert math.isclose(s2s.grad(lambda x: power(3, x))(2.0), 12.0)
    assert math.isclose(s2s.grad(power, argnums=1)(3, 2.0), 12.0)
    # second order differentiates the bwd: d/dx 3 x^2 = 6 x
    assert math.isclose(s2s.grad(s2s.grad(lambda x: power(3, x)))(2.0), 12.0)


def test_nondiff_argument_carrying_a_derivative_is_an_error():
    with pytest.raises(TypeError, match="nondiff_argnums"):
        s2s.grad(lambda x: power(x, 2.0))(2.0)


# -- custom_jvp ------------------------------------------------------------------------------

@s2s.custom_jvp
def sin2(x):
    CALLS["sin2.fun"] += 1
    return np.sin(x)


@sin2.defjvp
def sin2_jvp(primals, tangents):
    CALLS["sin2.jvp"] += 1
    x, = primals
    t, = tangents
    return sin2(x), 2.0 * np.cos(x) * t  # deliberately 2x the true derivative


def test_custom_jvp_forward_mode_uses_the_rule():
    CALLS.clear()
    y, dy = s2s.jvp(sin2, (0.5,), (1.5,))
    assert y == math.sin(0.5) and math.isclose(dy, 2 * math.cos(0.5) * 1.5, rel_tol=1e-14)
    assert CALLS["sin2.jvp"] == 1
    xs = np.array([0.1, 0.2])
    assert_tree_close(s2s.jacfwd(sin2)(xs), np.diag(2 * np.cos(xs)))
    _, lin = s2s.linearize(lambda x: sin2(x) * x, 0.5)
    assert math.isclose(lin(1.0), 2 * math.cos(0.5) * 0.5 + math.sin(0.5), rel_tol=1e-13)


def test_custom_jvp_reverse_mode_transposes_the_rule():
    x = 0.5
    assert math.isclose(s2s.grad(sin2)(x), 2 * math.cos(x), rel_tol=1e-14)
    g = s2s.grad(lambda x: sin2(x * x) + x)(x)
    assert math.isclose(g, 2 * math.cos(x * x) * 2 * x + 1, rel_tol=1e-13)
    assert math.isclose(s2s.value_and_grad(sin2)(x)[1], 2 * math.cos(x), rel_tol=1e-14)


def test_custom_jvp_higher_order():
    x = 0.5
    assert math.isclose(s2s.grad(s2s.grad(sin2))(x), -2 * math.sin(x), rel_tol=1e-13)
    y, d2 = s2s.jvp(s2s.grad(sin2), (x,), (1.0,))
    assert math.isclose(d2, -2 * math.sin(x), rel_tol=1e-13)
    xs = np.array([0.3, 1.2])
    assert_tree_close(s2s.hessian(lambda v: np.sum(sin2(v)))(xs), np.diag(-2 * np.sin(xs)))


def test_custom_jvp_inside_transforms_called_in_differentiated_code():
    x = 0.5
    # reverse over forward: d/dx of the rule's tangent 2 cos(x)
    g = s2s.grad(lambda x: s2s.jvp(sin2, (x,), (1.0,))[1])(x)
    assert math.isclose(g, -2 * math.sin(x), rel_tol=1e-13)
    # reverse over reverse through a grad call site: the transposed rule is itself a site
    g = s2s.grad(lambda x: s2s.grad(sin2)(x) * x)(x)
    assert math.isclose(g, -2 * math.sin(x) * x + 2 * math.cos(x), rel_tol=1e-13)


A = np.array([[1.0, 2.0, 0.0], [-1.0, 0.5, 3.0]])


@s2s.custom_jvp
def linear_map(x):
    return np.tanh(A @ x)


@linear_map.defjvp
def _linear_map_jvp(primals, tangents):
    x, = primals
    t, = tangents
    y = np.tanh(A @ x)
    return y, (1 - y ** 2) * (A @ t)


def test_custom_jvp_vjp_of_a_non_square_rule_passes_the_dot_product_test():
    x = np.array([0.1, -0.3, 0.2])
    u = np.array([0.7, -1.2])
    v = np.array([0.5, 0.25, -1.0])
    _, jv = s2s.jvp(linear_map, (x,), (v,))
    _, pull = s2s.vjp(linear_map, x)
    (jtu,) = pull(u)
    assert np.isclose(np.dot(u, jv), np.dot(jtu, v), rtol=1e-12)
    expected = A.T @ ((1 - np.tanh(A @ x) ** 2) * u)
    assert_tree_close(jtu, expected)
    assert np.isclose(fd_directional(lambda x: np.dot(u, linear_map(x)), (x,), 0, v),
                      np.dot(jtu, v), rtol=1e-7)


@s2s.custom_jvp
def log1pexp(x):
    return np.log(1.0 + np.exp(x))


@log1pexp.defjvp
def _log1pexp_jvp(primals, tangents):
    x, = primals
    t, = tangents
    return log1pexp(x), t * (1.0 - 1.0 / (1.0 + np.exp(x)))


def test_custom_jvp_numerical_stability_example():
    # JAX's example: the naive gradient at x = 100 is nan, the rule's is 1
    with np.errstate(over="ignore", invalid="ignore"):
        assert s2s.grad(log1pexp)(100.0) == 1.0
        assert s2s.jvp(log1pexp, (100.0,), (1.0,))[1] == 1.0
    x = 0.7
    assert math.isclose(s2s.grad(log1pexp)(x), 1 / (1 + math.exp(-x)), rel_tol=1e-13)


@partial(s2s.custom_jvp, nondiff_argnums=(1,))
def scaled(x, k):
    return k * x


@scaled.defjvp
def _scaled_jvp(k, primals, tangents):
    x, = primals
    t, = tangents
    return k * x, (k + 1.0) * t  # visible: k + 1 instead of k


def test_custom_jvp_nondiff_argnums():
    assert s2s.jvp(lambda x: scaled(x, 2.0), (1.0,), (1.0,))[1] == 3.0
    assert s2s.grad(lambda x: scaled(x, 2.0))(1.0) == 3.0


# -- what generated code shows ---------------------------------------------------------------

def test_generated_code_names_the_rules():
    src = s2s.grad(uses_sin3).generated([0.4, 1.3])[0].__s2s_source__
    assert "_sin3_fwd(" in src and "_sin3_bwd(" in src and "np.sin" not in src
    src = s2s.grad(lambda x: sin2(x) * x).generated([0.4])[0].__s2s_source__
    assert "_sin2_transpose(" in src


# -- errors: what a rule returns must match the primal ----------------------------------------

def _custom_vjp(fun, fwd, bwd):
    f = s2s.custom_vjp(fun)
    f.defvjp(fwd, bwd)
    return f


def test_bwd_with_the_wrong_number_of_cotangents():
    f = _custom_vjp(lambda x, y: x * y, lambda x, y: (x * y, (x, y)),
                    lambda res, g: (g * res[1],))
    with pytest.raises(TypeError, match=r"backward function '.*' of custom_vjp function "
                                        r"'.*': .*expected 2, got 1"):
        s2s.grad(f)(1.0, 2.0)


def test_bwd_with_the_wrong_shape():
    def bad_bwd(res, g):
        return (np.sum(g),)

    f = _custom_vjp(lambda x: 2.0 * x, lambda x: (2.0 * x, None), bad_bwd)
    with pytest.raises(ValueError, match=r"'bad_bwd'.*shape \(\), expected \(3,\)"):
        s2s.grad(lambda x: np.sum(f(x)))(np.ones(3))


def test_fwd_not_returning_a_pair():
    f = _custom_vjp(lambda x: 2.0 * x, lambda x: 2.0 * x, lambda res, g: (g,))
    with pytest.raises(TypeError, match="must return a pair"):
        s2s.grad(f)(1.0)


def test_jvp_rule_with_the_wrong_tangent_shape():
    @s2s.custom_jvp
    def total(x):
        return np.sum(x)

    @total.defjvp
    def total_jvp(primals, tangents):
        return np.sum(primals[0]), tangents[0]  # not summed

    x = np.ones(3)
    with pytest.raises(ValueError, match=r"'total_jvp'.*shape \(3,\), expected \(\)"):
        s2s.jvp(total, (x,), (x,))
    with pytest.raises(ValueError, match=r"'total_jvp'.*shape \(3,\), expected \(\)"):
        s2s.grad(total)(x)


def test_missing_rules():
    f = s2s.custom_vjp(lambda x: 2.0 * x)
    with pytest.raises(TypeError, match="no VJP rule defined"):
        s2s.grad(f)(1.0)
    h = s2s.custom_jvp(lambda x: 2.0 * x)
    with pytest.raises(TypeError, match="no JVP rule defined"):
        s2s.grad(h)(1.0)
    with pytest.raises(TypeError, match="no JVP rule defined"):
        s2s.jvp(h, (1.0,), (1.0,))


def test_keyword_only_parameters_are_refused():
    def f(x, *, k):
        return k * x

    with pytest.raises(TypeError, match="positional parameters only"):
        s2s.custom_vjp(f)


# -- more shapes of use ------------------------------------------------------------------------

@s2s.custom_jvp
def polar(x, y):
    return np.hypot(x, y), np.arctan2(y, x)


@polar.defjvp
def _polar_jvp(primals, tangents):
    x, y = primals
    dx, dy = tangents
    r = np.hypot(x, y)
    # the radius' tangent deliberately doubled, so that the rule's use is visible
    return (r, np.arctan2(y, x)), (2.0 * (x * dx + y * dy) / r, (x * dy - y * dx) / r ** 2)


def test_custom_jvp_with_a_tuple_output_in_both_modes():
    def use(x, y):
        r, th = polar(x, y)
        return r + 3.0 * th

    x, y = 1.0, 2.0
    r2 = x * x + y * y
    expected = (2 * x / np.sqrt(r2) - 3 * y / r2, 2 * y / np.sqrt(r2) + 3 * x / r2)
    assert np.allclose(s2s.grad(use, argnums=(0, 1))(x, y), expected, rtol=1e-13)
    _, t = s2s.jvp(use, (x, y), (0.5, -1.0))
    assert np.isclose(t, expected[0] * 0.5 - expected[1], rtol=1e-13)


@s2s.custom_vjp
def product_no_y(x, y):
    return x * y


product_no_y.defvjp(lambda x, y: (x * y, y), lambda y, g: (g * y, None))  # None: zero


def test_none_cotangent_is_zero_also_under_forward_over_reverse():
    assert s2s.grad(product_no_y, argnums=(0, 1))(2.0, 3.0) == (3.0, 0.0)
    v = np.array([1.0, 2.0])
    # the rule says d/dv sum(v * v) = v, so the Hessian is the identity (not 2 I)
    assert_tree_close(s2s.hessian(lambda v: np.sum(product_no_y(v, v)))(v), np.eye(2))


def _apply(h, x):
    return h(x, 2.0)


def test_keyword_calls_functions_passed_as_arguments_while_and_try():
    assert s2s.grad(lambda x: product_no_y(y=3.0, x=x))(2.0) == 3.0
    assert s2s.grad(lambda x: _apply(product_no_y, x))(5.0) == 2.0

    def grow(x):
        s = x
        while s < 10.0:
            s = product_no_y(s, 1.5)
        return s

    assert math.isclose(s2s.grad(grow)(1.0), 1.5 ** 6, rel_tol=1e-14)

    def guarded(x):
        try:
            y = product_no_y(x, x)
        except ValueError:
            y = x
        return y

    assert s2s.grad(guarded)(3.0) == 3.0  # the rule: g * y, none for the second x


def test_s2s_dump_shows_the_rules(capsys):
    from pathlib import Path

    from s2s.cli.main import main

    sample = Path(__file__).resolve().parents[2] / "samples" / "advanced" / "fixed_point.py"
    assert main(["dump", f"{sample}:cubic_root", "--args", "(1.5, 4.0)", "--argnums", "0,1",
                 "--color", "never"]) in (0, None)
    out = capsys.readouterr().out
    assert "_cubic_root_fwd(" in out and "_cubic_root_bwd(" in out
    assert main(["dump", f"{sample}:cubic_root", "--args", "(1.5, 4.0)", "--mode", "ir",
                 "--color", "never"]) in (0, None)
    assert "cubic_root" in capsys.readouterr().out


def test_defjvps_one_rule_per_argument():
    @s2s.custom_jvp
    def f(x, y):
        return np.sin(x) * y

    # the x rule deliberately doubled
    f.defjvps(lambda x_dot, ans, x, y: 2.0 * np.cos(x) * x_dot * y,
              lambda y_dot, ans, x, y: np.sin(x) * y_dot)
    x, y = 1.0, 2.0
    assert np.isclose(s2s.jvp(f, (x, y), (1.0, 0.5))[1],
                      2 * np.cos(x) * y + np.sin(x) * 0.5, rtol=1e-14)
    assert np.allclose(s2s.grad(f, argnums=(0, 1))(x, y), (2 * np.cos(x) * y, np.sin(x)),
                       rtol=1e-14)
    assert np.isclose(s2s.grad(s2s.grad(f))(x, y), -2 * np.sin(x) * y, rtol=1e-13)

    @s2s.custom_jvp
    def g(x, y):
        return x * y

    g.defjvps(None, lambda y_dot, ans, x, y: x * y_dot)  # None: no derivative in x
    assert s2s.grad(g, argnums=(0, 1))(3.0, 2.0) == (0.0, 3.0)


def test_vjp_with_aux_keeps_the_residuals_of_every_iteration():
    def loop(x):
        s = x
        for i in range(3):
            s = sin3(s) + x
        return s, s * 2

    xs = np.array([0.2, 0.4])
    out, pull, aux = s2s.vjp(loop, xs, has_aux=True)
    # oracle, with the rule's 3 cos: d s_{k+1}/dx = 3 cos(s_k) d s_k/dx + 1
    s, d = xs, np.ones(2)
    for _ in range(3):
        s, d = np.sin(s) + xs, 3 * np.cos(s) * d + 1
    assert_tree_close(out, s)
    assert_tree_close(aux, 2 * s)
    assert_tree_close(pull(np.ones(2)), (d,))
    ct = np.array([0.5, -2.0])
    assert_tree_close(pull(ct), (d * ct,))  # the pullback runs again on the same residuals


def test_with_primal_calls_leaves_nothing_opaque_for_non_differentiating_transforms():
    from s2s.core import pipeline
    from s2s.core.custom import CustomCall, with_primal_calls
    from s2s.ir import nodes as irn
    from s2s.passes.inline import inline_calls

    def user(x):
        return sin2(x) * 2.0 + sin3(x)

    def called(func):
        return [s.value.fn for s in irn.walk(func.body)
                if isinstance(getattr(s, "value", None), irn.Call)]

    fr = pipeline.front(user)
    assert any(isinstance(fn, CustomCall) for fn in called(fr.func))
    func, free = inline_calls(with_primal_calls(fr.func), fr.freevars, pipeline.lowered)
    assert not any(isinstance(fn, CustomCall) or hasattr(fn, "__s2s_ir__") for fn in called(func))
    fn, _ = pipeline.compile_function(func)
    assert fn(0.3, **{n: v.load() for n, v in free.items()}) == user(0.3)


# -- rules with the true derivative inside programs: agree with finite differences -----------

PAIRS = [(np.sin, np.cos), (np.exp, np.exp), (np.tanh, lambda x: 1 - np.tanh(x) ** 2),
         (np.log1p, lambda x: 1 / (1 + x)), (np.arctan, lambda x: 1 / (1 + x * x))]


def _custom_pair(f, df):
    jv = s2s.custom_jvp(lambda x: f(x))
    jv.defjvp(lambda p, t: (f(p[0]), df(p[0]) * t[0]))
    vj = s2s.custom_vjp(lambda x: f(x))
    vj.defvjp(lambda x: (f(x), df(x)), lambda d, g: (d * g,))
    return jv, vj


@pytest.mark.parametrize("i", range(len(PAIRS)))
def test_true_rules_in_a_program_match_finite_differences(i):
    jv, vj = _custom_pair(*PAIRS[i])
    x0 = np.array([0.3, 0.5, 0.2])

    for F in (jv, vj):
        def prog(x, F=F):
            a = F(x * x[0])
            for k in range(3):
                if k == 1:
                    a = F(0.5 * a + x) * x[1]
                else:
                    a = a + F(a * 0.3)
            return np.sum(a * x)

        g = s2s.grad(prog)(x0)
        assert np.allclose(g, fd_grad(prog, (x0,)), rtol=1e-6, atol=1e-8)
        v = np.array([1.0, -0.5, 0.25])
        if F is jv:  # forward mode (a custom_vjp has none, as in JAX)
            _, t = s2s.jvp(prog, (x0,), (v,))
            assert np.isclose(t, fd_directional(prog, (x0,), 0, v), rtol=1e-6)
        if i % 2:
            continue  # second order for every other pair (time)
        # second order: reverse over reverse, against finite differences of the gradient
        hv = s2s.grad(lambda x: np.vdot(s2s.grad(prog)(x), v))(x0)
        gfun = s2s.grad(prog)
        fd_hv = (gfun(x0 + 1e-6 * v) - gfun(x0 - 1e-6 * v)) / 2e-6
        assert np.allclose(hv, fd_hv, rtol=1e-5, atol=1e-7)


def test_a_rule_is_set_once():
    """Generated code keeps the rule it was made with: replacing a rule is an error,
    never a silently stale derivative."""
    from s2s.core.custom import CustomRuleError

    f = s2s.custom_vjp(_replaced_rule_primal)
    f.defvjp(_replaced_rule_fwd, _replaced_rule_bwd)
    assert s2s.grad(f)(2.0) == 3.0
    with pytest.raises(CustomRuleError, match="already has a rule"):
        f.defvjp(_replaced_rule_fwd, _replaced_rule_bwd)
    g = s2s.custom_jvp(_replaced_rule_primal)
    g.defjvp(_replaced_rule_jvp)
    with pytest.raises(CustomRuleError, match="already has a rule"):
        g.defjvp(_replaced_rule_jvp)


def _replaced_rule_primal(x):
    return x * x


def _replaced_rule_fwd(x):
    return x * x, x


def _replaced_rule_bwd(x, g):
    return (3.0 * g,)


def _replaced_rule_jvp(primals, tangents):
    return primals[0] * primals[0], 2.0 * primals[0] * tangents[0]
