"""Argument unpacking in differentiated code: ``f(*args)``, ``f(**kwargs)``,
``x.reshape(*shape)``, ``(n, *shape)``, ``[*xs, y]``.

s2s makes these plain calls once it knows how many items (which keys) are
unpacked: a display, ``*args``/``**kwargs`` bound by a call, an argument (the
code is specialised on tuple lengths and dict keys), a constant.  Oracles:
central finite differences (``oracles.fd_grad``), the jvp/vjp dot-product test,
and the same function written without unpacking.  Where the number of items is
not known when s2s transforms the code, the error names the construct and the
user's line.
"""
from dataclasses import dataclass

import numpy as np
import pytest

import s2s

from .oracles import assert_tree_close, fd_grad


def scaled_sin(x, y, scale=1.0):
    return scale * x * np.sin(y)


def forward_all(*args):
    return scaled_sin(*args)


def forward_rest(x, *rest):
    return scaled_sin(x, *rest)


def forward_kwargs(x, **kw):
    return scaled_sin(x, **kw)


def unpack_tuple_argument(p):
    return scaled_sin(*p)


def unpack_display(x, y):
    t = (x, y)
    d = {"scale": 3.0}
    return scaled_sin(*t, **d)


def mixed(x, y):
    mid = (y,)
    return scaled_sin(x, *mid, scale=x + 1.0)


def nested_forwarding(x, y):
    def inner(*a, **k):
        return scaled_sin(*a, **k)

    def outer(*a, **k):
        return inner(*a, **k) + inner(*a[::-1], **k)
    return outer(x, y, scale=0.5)


def shape_display(x, shape):
    return np.sum(np.ones((2, *shape)) * x ** 2)


def reshape_star(x, shape):
    return np.sum(np.tanh(x.reshape(*shape))[0] ** 2)


def list_display(x, y):
    xs = [x, y]
    return np.sum(np.stack([*xs, x * y]) ** 2)


def numpy_function(x):
    pair = (np.sin(x), 2.0 * x)
    return np.sum(np.maximum(*pair))


CASES = [  # (function, args, the same maths without unpacking)
    (forward_all, (0.7, 1.3), lambda x, y: scaled_sin(x, y)),
    (forward_rest, (0.7, 1.3, 2.0), lambda x, y, s: scaled_sin(x, y, s)),
    (unpack_tuple_argument, ((0.7, 1.3),), lambda p: scaled_sin(p[0], p[1])),
    (unpack_display, (0.7, 1.3), lambda x, y: scaled_sin(x, y, 3.0)),
    (mixed, (0.7, 1.3), lambda x, y: scaled_sin(x, y, x + 1.0)),
    (nested_forwarding, (0.7, 1.3),
     lambda x, y: scaled_sin(x, y, 0.5) + scaled_sin(y, x, 0.5)),
    (list_display, (0.7, 1.3), lambda x, y: np.sum(np.stack([x, y, x * y]) ** 2)),
    (numpy_function, (np.array([0.3, 1.4, -0.2]),),
     lambda x: np.sum(np.maximum(np.sin(x), 2.0 * x))),
]


@pytest.mark.parametrize("f, args, plain", CASES, ids=[c[0].__name__ for c in CASES])
def test_gradient_matches_finite_differences_and_the_plain_call(f, args, plain):
    argnums = tuple(range(len(args)))
    got = s2s.grad(f, argnums=argnums)(*args)
    assert f(*args) == pytest.approx(plain(*args), rel=1e-14)
    want = [fd_grad(plain, args, argnums=i) for i in argnums]
    assert_tree_close(tuple(got), tuple(want), rtol=1e-6)
    assert_tree_close(got, s2s.grad(plain, argnums=argnums)(*args), rtol=1e-12)


@pytest.mark.parametrize("f, args, plain", CASES, ids=[c[0].__name__ for c in CASES])
def test_jvp_and_vjp_agree(f, args, plain):
    rng = np.random.default_rng(0)
    tangents = tuple(tuple(rng.normal(size=len(a))) if isinstance(a, tuple) else
                     np.asarray(rng.normal(size=np.shape(a))) if np.ndim(a) else rng.normal()
                     for a in args)
    out, jv = s2s.jvp(f, args, tangents)
    _, pullback = s2s.vjp(f, *args)
    cts = pullback(1.0)
    dot = sum(np.sum(np.asarray(c) * np.asarray(t)) for c, t in zip(cts, tangents))
    assert out == pytest.approx(f(*args), rel=1e-14)
    assert jv == pytest.approx(dot, rel=1e-10)


def test_kwargs_forwarding_and_shapes():
    got = s2s.grad(forward_kwargs)(0.7, y=1.3, scale=2.0)
    assert got == pytest.approx(2.0 * np.sin(1.3), rel=1e-14)
    x = np.arange(6.0)
    g = s2s.grad(reshape_star)(x, (2, 3))
    t = np.tanh(x)
    want = np.where(np.arange(6) < 3, 2 * t * (1 - t * t), 0.0)
    np.testing.assert_allclose(g, want, rtol=1e-14)
    assert s2s.grad(shape_display)(1.5, (3, 2)) == pytest.approx(2 * 1.5 * 12, rel=1e-14)


def test_jit_and_vmap_of_unpacking():
    g = s2s.grad(unpack_tuple_argument)
    assert_tree_close(s2s.jit(g)((0.7, 1.3)), g((0.7, 1.3)), rtol=1e-14)
    assert s2s.jit(s2s.grad(shape_display))(1.5, (3, 2)) == pytest.approx(36.0, rel=1e-14)
    xs, ys = np.array([0.1, 0.7]), np.array([1.3, -0.4])
    np.testing.assert_allclose(s2s.vmap(mixed)(xs, ys), [mixed(a, b) for a, b in zip(xs, ys)],
                               rtol=1e-14)


def test_generated_code_reads_the_items():
    g = s2s.grad(unpack_tuple_argument)
    gen, _ = g.generated(g._bind(((0.7, 1.3),), {}))
    import inspect
    text = inspect.getsource(gen)
    assert "p[0]" in text and "p[1]" in text and "apply_call" not in text


def tuple_built_in_a_loop(x, n):
    s = ()
    for _ in range(n):
        s = s + (x,)
    return scaled_sin(*s)


def keyword_twice(x):
    d = {"y": x}
    return scaled_sin(x, y=2.0, **d)


@dataclass
class Point:
    x: float
    y: float


def record_star(x):
    p = Point(*(x, 2.0))
    return p.x * p.y


def test_unknown_lengths_and_bad_calls_are_located_errors():
    with pytest.raises(s2s.UnsupportedSyntaxError) as e:
        s2s.grad(tuple_built_in_a_loop)(0.5, 2)
    msg = str(e.value)
    assert "'*' unpacking of 's'" in msg and "test_unpacking.py:" in msg
    assert "return scaled_sin(*s)" in msg and "^" in msg
    with pytest.raises(s2s.UnsupportedSyntaxError, match="keyword argument 'y' twice"):
        s2s.grad(keyword_twice)(0.5)
    with pytest.raises(s2s.UnsupportedSyntaxError, match="argument unpacking in a call of Point"):
        s2s.grad(record_star)(0.5)


def _total(*a):
    return sum(a)


def grown_in_a_loop(x):
    xs = [x]
    for _ in range(3):
        xs.append(_total(*xs))  # a later trip unpacks a longer list
    return xs[-1]


def grown_then_unpacked(x):
    xs = [x, 2.0 * x]
    xs.append(3.0 * x)
    return _total(*xs)


@pytest.mark.parametrize("f", [grown_in_a_loop, grown_then_unpacked])
def test_a_list_that_grows_is_not_unpacked_with_a_stale_length(f):
    with pytest.raises(s2s.UnsupportedSyntaxError, match="unpacking of 'xs'"):
        s2s.grad(f)(0.5)


def max_of_array_items(xs):
    return max(*xs)


def test_an_array_is_not_unpacked_into_arguments():
    """An array's length is not part of what the code is specialised on."""
    with pytest.raises(s2s.UnsupportedSyntaxError, match="unpacking of 'xs'"):
        s2s.grad(max_of_array_items)(np.array([1.0, 3.0, 2.0]))


# ---- starred assignment targets: a, *rest = seq

def head_and_rest(x):
    a, *rest = (x, 2.0 * x, 3.0 * x)
    return a * sum(rest)


def around_the_middle(x):
    a, *m, b = [x, x * x, 3.0, np.sin(x)]
    return a * b + sum(m)


def rows_of_an_array(v):
    first, *others = v
    return first * np.sum(np.array(others) ** 2)


def empty_middle(x):
    *init, last = (x, 2.0)
    a, *m, b = (x, 2.0)
    return init[0] * last + a * b + len(m)


STARRED = [
    (head_and_rest, (1.3,), lambda x: x * (5.0 * x)),
    (around_the_middle, (1.3,), lambda x: x * np.sin(x) + x * x + 3.0),
    (rows_of_an_array, (np.array([1.0, 2.0, 3.0]),), lambda v: v[0] * np.sum(v[1:] ** 2)),
    (empty_middle, (1.3,), lambda x: 4.0 * x),
]


@pytest.mark.parametrize("f, args, plain", STARRED, ids=[c[0].__name__ for c in STARRED])
def test_starred_targets_bind_as_python_does(f, args, plain):
    assert f(*args) == pytest.approx(plain(*args), rel=1e-14)
    got = s2s.grad(f)(*args)
    assert_tree_close(got, fd_grad(plain, args), rtol=1e-6)
    t = np.ones_like(args[0])
    assert s2s.jvp(f, args, (t,))[1] == pytest.approx(np.sum(got * t), rel=1e-12)


def too_few_to_unpack(x):
    a, b, *m = (x,)
    return a


def test_starred_target_with_too_few_items_raises_pythons_error():
    with pytest.raises(ValueError, match="not enough values to unpack"):
        s2s.grad(too_few_to_unpack)(1.0)


# ---- the rows of a display or argument, unpacked in a loop

def rows_of_a_display(x):
    pairs = [(x, 1.0), (2.0, x)]
    s = 0.0
    for p in pairs:
        s = s + scaled_sin(*p)
    return s


def rows_of_an_argument(x, pairs):
    s = 0.0
    for p in pairs:
        s = s + scaled_sin(x, *p)
    return s


def rows_changed_in_the_loop(x):
    pairs = [(x, 1.0), (2.0, x)]
    s = 0.0
    for p in pairs:
        s = s + scaled_sin(*p)
        pairs[1] = (x,)  # the next trip unpacks one item
    return s


def test_loop_over_rows_of_known_length():
    x = 0.7
    got = s2s.grad(rows_of_a_display)(x)
    assert got == pytest.approx(np.sin(1.0) + 2.0 * np.cos(x), rel=1e-12)
    assert s2s.hessian(rows_of_a_display)(x) == pytest.approx(-2.0 * np.sin(x), rel=1e-12)
    pairs = [(1.3, 2.0), (0.4, 0.5)]
    got = s2s.grad(rows_of_an_argument)(x, pairs)
    assert got == pytest.approx(fd_grad(rows_of_an_argument, (x, pairs)), rel=1e-6)
    with pytest.raises(s2s.UnsupportedSyntaxError, match="unpacking of 'p'"):
        s2s.grad(rows_changed_in_the_loop)(x)
