"""JAX semantics of ``grad``/``value_and_grad``: errors, zeros, caching,
re-specialisation, and the diagnostics for unsupported code.

Expected values are closed forms written here, never values computed by
s2s itself.
"""
import math

import numpy as np
import pytest

import s2s
from s2s.core import specialise
from s2s.core import pipeline


def square_sum(x):
    return np.sum(x * x)


def elementwise(x):
    return x * 2.0


def complex_out(z):
    return z * z


def two_args(x, y):
    return x * y


def constant_out(x):
    return 3.0


def ignores_input(x, y):
    return y * 2.0


def ignores_array(x, y):
    return np.sum(y ** 2)


def cube(x):
    return x ** 3


# ------------------------------------------------------------------ errors

def test_non_scalar_output_is_type_error():
    with pytest.raises(TypeError):
        s2s.grad(elementwise)(np.array([1.0, 2.0]))


def test_non_scalar_output_is_type_error_value_and_grad():
    with pytest.raises(TypeError):
        s2s.value_and_grad(elementwise)(np.array([1.0, 2.0]))


def test_shape_one_output_is_type_error():
    # JAX requires a scalar (shape ()), so shape (1,) is an error too
    with pytest.raises(TypeError):
        s2s.grad(lambda x: x * 2.0)(np.array([1.0]))


def test_complex_output_without_holomorphic_is_type_error():
    with pytest.raises(TypeError):
        s2s.grad(complex_out)(1.0 + 2.0j)


def test_holomorphic_requires_complex_input():
    with pytest.raises(TypeError):
        s2s.grad(complex_out, holomorphic=True)(1.5)


def test_integer_argument_is_type_error():
    with pytest.raises(TypeError):
        s2s.grad(cube)(3)


def test_integer_array_argument_is_type_error():
    with pytest.raises(TypeError):
        s2s.grad(square_sum)(np.array([1, 2, 3]))


def test_bool_argument_is_type_error():
    with pytest.raises(TypeError):
        s2s.grad(two_args)(True, 2.0)


def test_all_integer_pytree_is_type_error():
    with pytest.raises(TypeError):
        s2s.grad(lambda p: p["a"] * p["b"] * 1.0)({"a": 1, "b": 2})


def test_integer_non_differentiated_argument_is_fine():
    assert s2s.grad(two_args)(2.0, 3) == 3.0


@pytest.mark.parametrize("argnums", [2, -3, (0, 2)])
def test_argnums_out_of_range(argnums):
    with pytest.raises((ValueError, IndexError, TypeError)):
        s2s.grad(two_args, argnums=argnums)(1.0, 2.0)


def test_negative_argnums_in_range():
    assert s2s.grad(two_args, argnums=-1)(2.0, 5.0) == 2.0


def test_argnums_tuple_returns_tuple():
    g = s2s.grad(two_args, argnums=(0, 1))(2.0, 5.0)
    assert isinstance(g, tuple) and len(g) == 2
    assert g[0] == 5.0 and g[1] == 2.0


def test_argnums_one_tuple_returns_tuple():
    g = s2s.grad(two_args, argnums=(1,))(2.0, 5.0)
    assert isinstance(g, tuple) and len(g) == 1 and g[0] == 2.0


def test_argnums_repeated_and_reordered():
    g = s2s.grad(two_args, argnums=(1, 0))(2.0, 5.0)
    assert g == (2.0, 5.0)


def test_keyword_call_of_transformed_function():
    assert s2s.grad(two_args)(2.0, y=5.0) == 5.0


# ------------------------------------------------------------------- zeros

def test_constant_output_gives_zero():
    g = s2s.grad(constant_out)(1.5)
    assert g == 0.0 and np.shape(g) == ()


def test_independent_scalar_gives_zero():
    assert s2s.grad(ignores_input)(1.5, 2.0) == 0.0


def test_independent_array_gives_zeros_of_its_shape():
    x = np.ones((2, 3))
    g = s2s.grad(ignores_array)(x, np.array([1.0, 2.0]))
    assert isinstance(g, np.ndarray) and g.shape == (2, 3) and g.dtype == np.float64
    assert np.all(g == 0.0)


def test_independent_float32_array_gives_float32_zeros():
    x = np.ones(4, dtype=np.float32)
    g = s2s.grad(ignores_array)(x, np.array([1.0, 2.0]))
    assert g.shape == (4,) and g.dtype == np.float32 and np.all(g == 0)


def test_independent_pytree_gives_zero_tree():
    p = {"a": 1.0, "b": np.ones(2)}
    g = s2s.grad(lambda p, y: y * 2.0)(p, 3.0)
    assert sorted(g) == ["a", "b"]
    assert g["a"] == 0.0 and g["b"].shape == (2,) and np.all(g["b"] == 0)


def test_value_and_grad_independent():
    v, g = s2s.value_and_grad(ignores_input)(1.5, 2.0)
    assert v == 4.0 and g == 0.0


# ----------------------------------------------------------------- caching

def fresh_square_sum():
    """A function no other test has transformed: transforms and their generated code are
    shared by every ``grad`` of the same function (and of functions with the same code)."""
    def square_sum(x):
        return np.sum(x * x)
    specialise._SHARED.clear()
    return square_sum


def test_same_transform_object_and_code_are_shared():
    f = fresh_square_sum()
    assert s2s.grad(f) is s2s.grad(f) and s2s.grad(f) is not s2s.grad(f, argnums=(0,))
    closures = [(lambda k: (lambda x: np.sum(x * x) * k))(k) for k in (1.0, 2.0)]
    g0 = s2s.grad(closures[0])
    assert g0(3.0) == 6.0
    gen = next(iter(g0.cache.values()))[0]
    g1 = s2s.grad(closures[1])  # another closure of the same code: same generated code
    assert g1(3.0) == 12.0      # ... reading its own cell
    assert next(iter(g1.cache.values()))[0] is gen


def test_second_call_same_kinds_does_not_retransform(monkeypatch):
    calls = []
    real = pipeline.reverse

    def counting(*a, **k):
        calls.append(1)
        return real(*a, **k)
    monkeypatch.setattr(pipeline, "reverse", counting)
    g = s2s.grad(fresh_square_sum())
    np.testing.assert_allclose(g(np.array([1.0, 2.0])), [2.0, 4.0])
    np.testing.assert_allclose(g(np.array([3.0, -1.0, 0.5])), [6.0, -2.0, 1.0])
    assert len(calls) == 1
    assert len(g.cache) == 1


def test_different_kinds_respecialise(monkeypatch):
    calls = []
    real = pipeline.reverse

    def counting(*a, **k):
        calls.append(1)
        return real(*a, **k)
    monkeypatch.setattr(pipeline, "reverse", counting)
    g = s2s.grad(fresh_square_sum())
    assert g(3.0) == 6.0                                  # float
    np.testing.assert_allclose(g(np.array([1.0, 2.0])), [2.0, 4.0])          # 1-d
    np.testing.assert_allclose(g(np.array([[1.0], [2.0]])), [[2.0], [4.0]])  # 2-d
    g32 = g(np.array([1.0, 2.0], dtype=np.float32))                           # float32
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, [2.0, 4.0])
    assert len(calls) == 4
    # the earlier specialisations are still right when called again
    assert g(-1.5) == -3.0
    np.testing.assert_allclose(g(np.array([5.0, 6.0])), [10.0, 12.0])
    assert len(calls) == 4
    assert len(g.cache) == 4


def test_cache_distinguishes_pytree_structure():
    f = lambda p: np.sum(p[0] * p[-1])  # noqa: E731
    g = s2s.grad(f)
    g2 = g((2.0, 3.0))
    assert g2 == (3.0, 2.0)
    g3 = g((2.0, 7.0, 3.0))
    assert g3 == (3.0, 0.0, 2.0)
    assert type(g([2.0, 3.0])) is list


def test_branch_specialisation_is_not_cached_by_value():
    """The branch taken depends on the value, not the kind: no stale branch."""
    def f(x):
        return x * x if x > 0 else -3.0 * x
    g = s2s.grad(f)
    assert g(2.0) == 4.0
    assert g(-2.0) == -3.0
    assert g(1.0) == 2.0


# ------------------------------------------------------- unsupported syntax

def uses_yield(x):
    y = yield x
    return y


def uses_star_args(x, *rest):
    return x * 2.0


def uses_try(x):
    try:
        return x * 2.0
    except ValueError:
        return x


def undefined_name(x):
    return x * NOT_DEFINED_ANYWHERE  # noqa: F821


def test_yield_is_s2s_error():
    with pytest.raises(s2s.S2SError):
        s2s.grad(uses_yield)(1.0)


def test_star_args_are_numbered_as_passed():
    # JAX's rule: argnums count the positional arguments of the call (closed form: 2)
    assert s2s.grad(uses_star_args)(1.0) == 2.0
    assert s2s.grad(uses_star_args, argnums=(0, 1))(1.0, 5.0) == (2.0, 0.0)


def uses_finally(x):
    try:
        y = x * 2.0
    finally:
        y = x * 3.0
    return y


def test_try_and_finally_are_differentiated():
    assert s2s.grad(uses_try)(1.0) == 2.0  # no exception: the body's derivative
    assert s2s.grad(uses_finally)(1.0) == 3.0  # finally runs last: y = 3x


def test_undefined_name_is_s2s_error():
    with pytest.raises(s2s.S2SError):
        s2s.grad(undefined_name)(1.0)


def test_source_unavailable():
    ns = {}
    exec("def hidden(x):\n    return x * 2.0\n", ns)
    with pytest.raises(s2s.S2SError):
        s2s.grad(ns["hidden"])(1.0)


def test_error_message_quotes_line():
    with pytest.raises(s2s.UnsupportedSyntaxError) as info:
        s2s.grad(uses_yield)(1.0)
    msg = str(info.value)
    assert "test_semantics.py" in msg
    assert "yield" in msg


def test_unsupported_error_is_s2s_error_subclass():
    assert issubclass(s2s.UnsupportedSyntaxError, s2s.S2SError)
    assert issubclass(s2s.NoRuleError, s2s.S2SError)
    assert issubclass(s2s.SourceUnavailableError, s2s.S2SError)


def test_not_callable_is_type_error():
    with pytest.raises(TypeError):
        s2s.grad(3.0)


# --------------------------------------------------------- tree_util basics

def test_tree_util_exports():
    from s2s import tree_util
    leaves, tree = tree_util.tree_flatten({"b": [1.0, 2.0], "a": (3.0, None)})
    assert leaves == [3.0, 1.0, 2.0]
    assert tree_util.tree_unflatten(tree, [4.0, 5.0, 6.0]) == {"a": (4.0, None), "b": [5.0, 6.0]}
    assert tree_util.tree_map(lambda v: v * 2, [1.0, (2.0,)]) == [2.0, (4.0,)]
    assert tree_util.tree_leaves((1.0, {"x": 2.0})) == [1.0, 2.0]


def test_math_closed_forms_scalar_types():
    """grad of a Python-float function returns a number usable as a float."""
    g = s2s.grad(lambda x: math.sin(x) * x)(0.5)
    assert math.isclose(float(g), math.cos(0.5) * 0.5 + math.sin(0.5), rel_tol=1e-14)


# ------------------------------------- non-differentiated values, same kind

def pick(x, i):
    return x[i] ** 2 + x[i + 1]


def power_n(x, n):
    return x ** n


def mode_switch(x, mode):
    if mode == "square":
        return x * x
    return x


def test_int_argument_value_is_not_baked_in():
    g = s2s.grad(pick)
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    np.testing.assert_allclose(g(x, 2), [0.0, 0.0, 6.0, 1.0, 0.0])
    np.testing.assert_allclose(g(x, 0), [2.0, 1.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(g(x, -2), [0.0, 0.0, 0.0, 8.0, 1.0])


def test_int_exponent_value_is_not_baked_in():
    g = s2s.grad(power_n)
    assert g(2.0, 2) == 4.0
    assert g(2.0, 3) == 12.0


def test_string_argument_value_is_not_baked_in():
    g = s2s.grad(mode_switch)
    assert g(3.0, "square") == 6.0
    assert g(3.0, "identity") == 1.0
    assert g(3.0, "square") == 6.0


def test_primitives_can_be_transformed_directly():
    """grad(np.sin) like jax.grad(jnp.sin): the rule's own signature is used."""
    import math

    assert math.isclose(s2s.grad(np.sin)(1.0), math.cos(1.0), rel_tol=1e-15)
    assert math.isclose(s2s.grad(math.exp)(0.5), math.exp(0.5), rel_tol=1e-15)
    np.testing.assert_array_equal(s2s.grad(np.sum)(np.arange(3.0)), np.ones(3))
    dx, dy = s2s.grad(np.multiply, argnums=(0, 1))(2.0, 3.0)
    assert (dx, dy) == (3.0, 2.0)
    value, d = s2s.value_and_grad(np.tanh)(0.5)
    assert math.isclose(value, math.tanh(0.5)) and math.isclose(d, 1 - math.tanh(0.5) ** 2)


def test_callable_without_signature_or_rule_is_a_type_error():
    ufunc = np.frompyfunc(lambda a: a, 1, 1)
    with pytest.raises((TypeError, s2s.S2SError)):
        s2s.grad(ufunc)(1.0)


def _sorts_in_place(x):
    y = x * 1.0
    y.sort()
    return y[0] * 2.0


def test_unknown_method_on_a_differentiated_value_is_an_error_not_a_wrong_gradient():
    x = np.array([3.0, 1.0])
    with pytest.raises(s2s.UnsupportedSyntaxError, match=r"\.sort\(\)"):
        s2s.grad(_sorts_in_place)(x)
    with pytest.raises(s2s.UnsupportedSyntaxError, match=r"\.sort\(\)"):
        s2s.jvp(_sorts_in_place, (x,), (np.ones(2),))


def _shuffles(x):
    y = x * 1.0
    np.random.shuffle(y)  # changes y in place; s2s has no rule for it
    return y[0]


def test_a_call_without_rule_on_a_differentiated_value_is_an_error_even_if_unused():
    with pytest.raises(s2s.NoRuleError, match="shuffle"):
        s2s.grad(_shuffles)(np.array([3.0, 1.0]))


def test_print_of_a_differentiated_value_is_allowed(capsys):
    def f(x):
        print(x)
        return x * 2.0
    assert s2s.grad(f)(1.5) == 2.0
    assert "1.5" in capsys.readouterr().out


def _cubic_sin(x):
    return math.sin(x) * x ** 3


def test_grad_of_grad_is_the_second_derivative_or_a_clear_error():
    """A transform of a transform differentiates the generated code; it must never
    return the inner result (a transform once copied its inner transform's state)."""
    x = 0.7
    second = (-math.sin(x) * x ** 3 + 6 * math.cos(x) * x ** 2 + 6 * math.sin(x) * x)
    try:
        value = s2s.grad(s2s.grad(_cubic_sin))(x)
    except s2s.S2SError:
        return
    assert math.isclose(value, second, rel_tol=1e-12)


class _Scaled:
    def __init__(self, k):
        self.k = k

    def f(self, x):
        return self.k * x * x


def test_a_bound_method_is_a_clear_error_not_another_instances_derivative():
    a, b = _Scaled(1.0), _Scaled(3.0)
    for obj in (a, b):
        with pytest.raises(s2s.UnsupportedSyntaxError, match="bound method"):
            s2s.grad(obj.f)(2.0)
    with pytest.raises(s2s.UnsupportedSyntaxError, match="bound method"):
        s2s.jvp(b.f, (2.0,), (1.0,))


def returns_an_int(x):
    if x > 0.0:
        return 2
    return x * 2.0


def test_grad_of_an_integer_output_is_a_type_error_as_in_jax():
    with pytest.raises(TypeError, match="real-valued outputs"):
        s2s.grad(returns_an_int)(1.0)
    assert s2s.grad(returns_an_int)(-1.0) == 2.0
