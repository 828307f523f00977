"""Comprehensions and generator expressions in differentiated code (both modes).

The frontend turns them into loops (``s2s/frontend/comprehensions.py``): a list
built with ``rt.list_append``, ``sum(...)`` an accumulator, ``max``/``min`` of
one iterable ``rt.max_of``/``rt.min_of``; ``map``/``filter`` the lists of the
comprehensions they stand for (their function called, and inlined, in the loop).  Oracles: central finite differences
(gradients, tangents, Hessian-vector products and grad of grad) and the jvp/vjp
dot-product identity (``container_checks``).
"""
import numpy as np
import pytest

import s2s

from .container_checks import check_all, check_grad, check_jvp

A3 = np.array([0.7, -0.3, 1.2])


def lc_in_sum(x):
    return sum([x * i + np.sin(x) for i in range(3)])


def gen_in_sum(x):
    return sum(np.sin(x * i) for i in range(1, 4))


def gen_in_sum_with_start(x):
    return sum((x ** i for i in range(3)), 1.5)


def gen_in_sum_start_keyword(x):
    return sum((np.cos(v) for v in [x, 2 * x]), start=x)


def nested_for_and_ifs(x):
    return sum([a * b for a in [x, 2 * x, -x] if a > 0 for b in [x, 3.0] if b != 3.0])


def over_list_arg(xs):
    return sum([v * v for v in xs])


def over_tuple_arg(xs):
    return sum(np.tanh(v) * i for i, v in enumerate(xs))


def over_array_rows(m):
    return sum(np.sum(row) ** 2 for row in m)


def over_zip(xs):
    return sum(a * b for a, b in zip(xs, [1.0, 2.0, 3.0]))


def over_reversed(xs):
    return sum(v * i for i, v in enumerate(reversed(xs)))


def enumerate_with_start(xs):
    return sum(i * v for i, v in enumerate(xs, 1))


def filtered(xs):
    return sum([v for v in xs if v > 0])


def np_array_of(x):
    return np.sum(np.array([x * i for i in range(3)]) ** 2)


def np_stack_of(x):
    return np.sum(np.stack([x * i for i in range(1, 3)]) ** 2)


def np_concatenate_of(x):
    return np.sum(np.concatenate([x[:i] * i for i in range(1, 4)]) ** 3)


def tuple_of_gen(x):
    t = tuple(x * i for i in range(3))
    return t[1] * t[2]


def list_of_gen(x):
    items = list(np.sin(x * i) for i in range(3))
    return items[1] * items[2]


def dict_comprehension(x):
    d = {k: x * i for i, k in enumerate(["a", "b"])}
    return d["a"] + d["b"] * x


def dict_comprehension_over_items(p):
    q = {k: v * 2 for k, v in p.items() if k != "skip"}
    return q["w"] * q["b"] + len(q)


def max_of_gen(xs):
    return max(v * v for v in xs) - min(np.sin(v) for v in xs)


def max_of_list_arg(xs):
    return max(xs) * min(xs)


def max_with_key(xs):
    first = max(xs, key=abs) * min((v * 2 for v in xs), key=np.negative)
    return first + max(xs[0], xs[1], key=abs)


def max_of_three(x):
    return max(x, 2 * x * x, 0.5) + min(x, x * x, 3.0)


def nested_comprehension(x):
    m = [[x * i * j + 1.0 for j in range(2)] for i in range(3)]
    return sum(sum(r) ** 2 for r in m)


def comprehension_in_a_loop(x):
    s = 0.0
    for k in range(3):
        s = s + sum(np.sin(x * k * i) for i in range(2))
    return s


def nested_over_rows(m):
    return sum(sum(v * w for w in row) for row, v in zip(m, [1.0, 2.0]))


def nested_loops_over_items(rows):
    s = 0.0
    for row in rows:
        for v in row:
            s = s + np.sin(v) * v
    return s


def comprehension_over_a_comprehension(xs):
    squares = [v * v for v in xs]
    return sum([s * np.cos(s) for s in squares])


def _scaled(v, w):
    return v * w + np.sin(v)


def map_of_a_lambda(xs):
    return sum(map(lambda v: v * np.exp(-v), xs))


def map_of_a_function_over_two(xs):
    return sum(map(_scaled, xs, xs[::-1]))


def map_of_a_local_lambda_listed(xs):
    g = lambda v: np.tanh(v) ** 2  # noqa: E731
    return np.sum(np.array(list(map(g, xs))))


def filter_of_a_lambda(xs):
    return sum(filter(lambda v: v > 0, xs)) + sum(map(np.sin, xs))


def filter_of_none(x):
    return sum(map(abs, filter(None, [x, 0.0, 2 * x])))


CASES = [
    (map_of_a_lambda, A3), (map_of_a_function_over_two, A3),
    (map_of_a_local_lambda_listed, A3), (filter_of_a_lambda, A3), (filter_of_none, 0.7),
    (lc_in_sum, 0.7), (gen_in_sum, 0.7), (gen_in_sum_with_start, 0.7),
    (gen_in_sum_start_keyword, 0.7), (nested_for_and_ifs, 0.7),
    (over_list_arg, [0.7, 0.3, -0.4]), (over_list_arg, A3), (over_tuple_arg, (0.7, 0.3)),
    (over_array_rows, np.array([[0.2, 0.5], [1.0, -0.3]])), (over_zip, A3),
    (over_reversed, [0.7, 0.3, -0.4]), (enumerate_with_start, A3),
    (filtered, [0.7, -0.3, 0.4]), (np_array_of, 0.7), (np_stack_of, np.array([0.7, 0.2])),
    (np_concatenate_of, A3), (tuple_of_gen, 0.7), (list_of_gen, 0.7),
    (dict_comprehension, 0.7), (dict_comprehension_over_items, {"w": 0.7, "b": 0.3, "skip": 2.0}),
    (max_of_gen, [0.7, 0.3, -0.9]), (max_of_list_arg, [0.7, 0.3, -0.9]), (max_of_three, 0.7),
    (max_with_key, [0.7, 0.3, -0.9]),
    (nested_comprehension, 0.7), (comprehension_in_a_loop, 0.7),
    (comprehension_over_a_comprehension, [0.7, 0.3]),
    (nested_over_rows, np.array([[0.2, 0.5], [1.0, -0.3]])),
    (nested_loops_over_items, [[0.2, 0.5], [1.0, -0.3, 0.4]]),
    (nested_loops_over_items, np.array([[0.2, 0.5], [1.0, -0.3]])),
]


@pytest.mark.parametrize("f, x", CASES, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)])
def test_both_modes_and_second_order(f, x):
    check_all(f, x)


def scoped(x):
    v = 2.0
    total = sum(v * x for v in [x, x * x])  # this v is the comprehension's own
    return total * v


def shadows_a_global(x):
    return sum(np * x for np in range(3))  # np here is the loop variable, not numpy


def test_comprehension_variables_do_not_leak():
    assert scoped(0.7) == pytest.approx(2.0 * (0.7 * 0.7 + 0.7 * 0.49))
    check_all(scoped, 0.7)
    check_all(shadows_a_global, 0.7)


def test_values_match_python():
    for f, x in CASES:
        assert s2s.value_and_grad(f)(x)[0] == pytest.approx(f(x))


def test_the_sum_of_a_generator_builds_no_list():
    src = _source(gen_in_sum, 0.7)
    assert "list_append" not in src and "total" in src
    assert "for i in rt.reversed_range(" in src  # a range stays a range


def test_max_gives_the_derivative_to_the_first_of_tied_items():
    # max picks the first maximal item (as Python's max): its derivative goes there alone
    def f(xs):
        return max(v * 1.0 for v in xs)
    g = s2s.grad(f)([2.0, 1.0, 2.0])
    assert g == [1.0, 0.0, 0.0]
    _, t = s2s.jvp(f, ([2.0, 1.0, 2.0],), ([5.0, 6.0, 7.0],))
    assert t == 5.0


def test_an_empty_comprehension():
    def f(x):
        return sum([v for v in []], x * 2.0) + len([x for _ in range(0)])
    check_grad(f, 0.3)
    check_jvp(f, 0.3)


def uses_setcomp(xs):
    return sum({v * 2 for v in xs})


def test_set_comprehension_is_a_clear_error():
    with pytest.raises(s2s.UnsupportedSyntaxError, match="set comprehension"):
        s2s.grad(uses_setcomp)(np.array([1.0, 2.0]))


def _source(f, *args):
    g = s2s.grad(f)
    g(*args)
    import inspect
    gens = [v[0] for v in g.cache.values() if isinstance(v, tuple)]
    return inspect.getsource(gens[0])


@pytest.mark.parametrize("f", [map_of_a_lambda, map_of_a_function_over_two,
                               map_of_a_local_lambda_listed, filter_of_a_lambda],
                         ids=lambda f: f.__name__)
def test_map_and_filter_compile_and_batch(f):
    xs = np.array([0.7, -0.3, 1.2, 0.4])
    want = s2s.grad(f)(xs)
    np.testing.assert_allclose(s2s.jit(f)(xs), f(xs))
    np.testing.assert_allclose(s2s.jit(s2s.grad(f))(xs), want)
    stack = np.stack([xs, xs[::-1]])
    if f is filter_of_a_lambda:  # lists of different lengths per example: refused
        with pytest.raises(ValueError, match="containers of different lengths"):
            s2s.vmap(s2s.grad(f))(np.stack([xs, -xs]))
        return
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(stack),
                               np.stack([want, s2s.grad(f)(xs[::-1])]))


def test_a_user_function_named_map_is_called_as_it_is():
    def map(f, xs):  # noqa: A001  (shadows the builtin: an ordinary call)
        return f(xs[0]) * 2.0

    def uses_it(x):
        return map(np.sin, x)

    x = np.array([0.4, 0.1])
    np.testing.assert_allclose(s2s.grad(uses_it)(x), [2 * np.cos(0.4), 0.0])
