"""Calls inside differentiated code (``passes/inline.py``, ``frontend/nested.py``):
lambdas and nested ``def``s (closures), functions passed as arguments,
keyword/default arguments, ``*args``/``**kwargs``, recursion with a depth
fixed by constant arguments, and objects passed in whose methods s2s inlines.

Oracles: central finite differences in float64, forward mode against reverse
mode through the dot-product test, closed forms, and for second order
differences of gradients.
"""
import math

import numpy as np
import pytest

import s2s

RNG = np.random.default_rng(7)
EPS = 1e-6


def fd_grad(f, x):
    """Central differences of scalar ``f`` at float or array ``x``."""
    if np.ndim(x) == 0:
        return (f(x + EPS) - f(x - EPS)) / (2 * EPS)
    g = np.zeros(np.shape(x))
    for i in np.ndindex(np.shape(x)):
        e = np.zeros(np.shape(x))
        e[i] = EPS
        g[i] = (f(x + e) - f(x - e)) / (2 * EPS)
    return g


# -- lambdas and nested defs ------------------------------------------------------------

def lambda_twice(x):
    g = lambda z: z * z + x  # noqa: E731
    return g(x) + g(2.0)


def nested_def(x):
    def h(z):
        return np.sin(z) * x
    return h(x) * 2


def lambda_in_loop(x):
    s = x
    g = lambda z: np.sin(z) * x  # noqa: E731
    for i in range(3):
        s = s + g(s)
    return s


def lambda_defined_in_loop(x):
    s = 0.0
    for i in range(3):
        g = lambda z: z * i + np.cos(x * z)  # noqa: E731
        s = s + g(x)
    return s


def late_binding(x):
    g = lambda z: z * y  # noqa: E731  (reads y where it is called)
    y = x * 2.0
    a = g(x)
    y = x * 3.0
    return a + g(1.0)


def defaults_bind_early(x):
    k = x * 2.0

    def h(z, w=k, p=3):
        return z * w + p
    k = 100.0
    return h(x) + h(x, 1.0) * k


def def_in_def(x):
    def outer(z):
        def inner(w):
            return w * x + z
        return inner(z) * inner(2.0)
    return outer(x * 0.5)


def local_helper_with_branch(x):
    def clip(z, lo=-1.0):
        if z < lo:
            return lo
        return z * z
    return clip(x) + clip(x - 3.0) + clip(x, lo=5.0)


def star_lambda(x):
    f = lambda *a, **k: a[0] * a[1] + k['z']  # noqa: E731
    return f(x, x, z=np.exp(x))


def closure_over_array(x):
    w = np.linspace(0.5, 1.5, x.shape[0])
    score = lambda v: np.sum(np.tanh(w * v) * x)  # noqa: E731
    return score(x) + score(x * 2.0)


def lambda_in_comprehension(x):
    def inner(y):
        return sum([(lambda z: z * k * y)(x) for k in range(3)])
    return inner(x * 2) + sum(f(x) for f in (np.sin, np.tanh))


# -- functions passed as arguments ----------------------------------------------------------

def apply(f, x):
    return f(x) * 2


def cube(z):
    return z ** 3


def apply_n(f, x, n):
    s = 0.0
    for i in range(n):
        s = s + f(x * (i + 1))
    return s


def passes_functions(x):
    return (apply(np.sin, x) + apply(lambda z: z * z * x, x) + apply(cube, x)
            + apply_n(np.cos, x, 3) + apply_n(lambda z: z * x, x, 2))


def make_adder(a):
    return lambda z: z + a * a


def returned_closure(x):
    add = make_adder(x)  # the closure reads the a of that call, not a later x
    x = x * 10.0
    return add(x)


def function_in_a_variable(x):
    f = np.sin
    g = f
    return g(x) * f(x)


# -- keywords, defaults, *args, **kwargs ---------------------------------------------

def kw(x, *args, scale=2.0, **kws):
    return x * scale + sum(args) + kws['c']


def calls_kw(x):
    return kw(x, x, 1.0, scale=3.0, c=x * x) + kw(x, c=2.0)


def with_defaults(x, a=2.0, *, b=0.5):
    return x ** a * b


def calls_defaults(x):
    return with_defaults(x) + with_defaults(x, 3.0) + with_defaults(b=x, x=x)


def star_top(*xs):
    return xs[0] * np.sin(xs[1]) + xs[0] ** 2


# -- recursion ----------------------------------------------------------------------------

def rec(x, n):
    return x if n == 0 else np.sin(rec(x, n - 1))


def fib(x, n):
    if n < 2:
        return x
    return fib(x, n - 1) * 0.5 + fib(x, n - 2) * x


def recursions(x):
    return rec(x, 4) + fib(x, 6)


def local_recursion(x):
    def power_sum(z, n):
        if n == 0:
            return z
        return power_sum(z * x, n - 1) + 1.0
    return power_sum(x, 3)


# -- objects passed in ------------------------------------------------------------------

class Linear:
    scale = 0.5  # a class attribute

    def __init__(self, w, b, act=np.tanh):
        self.w = w
        self.b = b
        self.act = act  # a function held by the object

    def __call__(self, x):
        return self.act(self.w @ x + self.b) * self.scale

    @property
    def wt(self):
        return self.w.T

    @staticmethod
    def square(z):
        return z * z

    @classmethod
    def scaled(cls, z):
        return z * cls.scale * 4


class Net:
    def __init__(self, first, second):
        self.first = first
        self.second = second

    def forward(self, x):
        return self.second(self.first(x))

    def __call__(self, x):
        return self.forward(x)


def make_net(seed, act=np.tanh):
    rng = np.random.default_rng(seed)
    return Net(Linear(rng.normal(size=(4, 3)), rng.normal(size=4), act),
               Linear(rng.normal(size=(2, 4)), rng.normal(size=2)))


def net_loss(x, m):
    y = m(x)
    return (np.sum(m.first.square(y)) + np.sum(m.first.wt @ m.first(x))
            + m.first.scaled(x).sum() + np.sum(m.forward(x * 0.5)))


def tanh_module(x, m):
    return np.tanh(m.w @ x).sum()


class Module:
    def __init__(self, w):
        self.w = w

    def __call__(self, x):
        return np.tanh(self.w @ x)


def module_loss(x, m):
    return m(x).sum()


class Sequential:
    def __init__(self, *layers):
        self.layers = list(layers)

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def sequential_loss(x, model):
    return np.sum(model(x) ** 2)


def loop_over_layers(x, layers):
    for layer in layers:
        x = layer(x) + x[:1]
    return np.sum(x)


def loop_over_functions(x):
    s = 0.0
    for f in (np.sin, np.cos, cube, lambda_twice):
        s = s + f(x) * x
    return s


NET = make_net(3)


class Affine:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def __call__(self, x):
        return np.tanh(self.w * x + self.b)


def model_built_inside(x):
    layers = [Affine(x, 0.5), Affine(2.0, x), Affine(0.5, 0.1)]  # a list of objects
    model = Sequential(*layers)
    h = model(np.array([x, 1.0]))
    for i, layer in enumerate(layers[1:], start=1):  # enumerate and slices of it
        h = h + layer(h) * i
    return np.sum(h) * len(layers) + np.sum(layers[-1](h))


PAIRS = [(0.5, 0.1), (-1.2, 0.3), (0.8, -0.2)]


class StackOfAffines:  # PyTorch's way: the layers built in __init__ from a list
    def __init__(self, pairs):
        self.layers = []
        for w, b in pairs:
            self.layers.append(Affine(w, b))

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def layers_from_a_comprehension(x):
    layers = [Affine(w * x, b) for w, b in PAIRS]  # its length known when specialised
    h = x
    for layer in layers:
        h = layer(h) + 0.5 * h
    return h * len(layers)


def layers_appended_in_init(x):
    return StackOfAffines(PAIRS)(x) + StackOfAffines(PAIRS[:2])(x * x)


def lambda_in_a_list(x):
    fs = [lambda z: z * x]
    return fs[0](x)


def functions_in_a_list(x):
    fs = [lambda z: z * x, np.sin, cube]
    return sum(f(x) for f in fs) + fs[0](x)


def global_net_loss(x):
    return np.sum(NET(x) ** 2)


def _net_loss_fixed(x):
    return net_loss(x, NET)


# -- objects created inside, their state changed in loops and branches ------------------------

class Accumulator:
    def __init__(self, start):
        self.total = start
        self.count = 0

    def add(self, v):
        self.total = self.total + v
        self.count += 1

    @property
    def mean(self):
        return self.total / self.count


def object_state_in_a_loop(x):
    acc = Accumulator(x)
    for i in range(4):
        if i % 2 == 0:
            acc.add(np.sin(x * i))
        else:
            acc.total = acc.total * x
    return acc.mean * acc.total


def objects_holding_objects_and_lambdas(x):
    square = lambda z: z * z * x  # noqa: E731
    net = Net(Linear(np.eye(2) * 2.0, np.zeros(2), np.sin), Linear(np.eye(2) * x, x, square))
    return np.sum(net(np.array([x, 1.0])))


# -- the gradient corpus of this file ----------------------------------------------------

X3 = RNG.normal(size=3)

CASES = [
    (lambda_twice, (1.5,)),
    (nested_def, (0.7,)),
    (lambda_in_loop, (0.4,)),
    (lambda_defined_in_loop, (0.9,)),
    (late_binding, (0.6,)),
    (defaults_bind_early, (1.1,)),
    (def_in_def, (0.8,)),
    (local_helper_with_branch, (0.3,)),
    (local_helper_with_branch, (-2.0,)),
    (star_lambda, (0.5,)),
    (closure_over_array, (RNG.normal(size=4),)),
    (lambda_in_comprehension, (0.5,)),
    (passes_functions, (0.7,)),
    (returned_closure, (0.7,)),
    (function_in_a_variable, (0.7,)),
    (calls_kw, (1.3,)),
    (calls_defaults, (1.3,)),
    (star_top, (1.2, 0.4)),
    (recursions, (0.7,)),
    (local_recursion, (0.6,)),
    (global_net_loss, (X3,)),
    (object_state_in_a_loop, (0.8,)),
    (objects_holding_objects_and_lambdas, (0.7,)),
    (loop_over_functions, (0.8,)),
    (_net_loss_fixed, (X3,)),
    (lambda_in_a_list, (0.9,)),
    (model_built_inside, (0.7,)),
    (functions_in_a_list, (0.6,)),
    (layers_from_a_comprehension, (0.4,)),
    (layers_appended_in_init, (0.7,)),
]


def _ids(v):
    return getattr(v, "__name__", "")


@pytest.mark.parametrize("f, args", CASES, ids=_ids)
def test_gradient_matches_finite_differences(f, args):
    grads = s2s.grad(f, argnums=tuple(range(len(args))))(*args)
    for i, g in enumerate(grads):
        def along(v, i=i):
            a = list(args)
            a[i] = v
            return f(*a)
        np.testing.assert_allclose(g, fd_grad(along, args[i]), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f, args", CASES, ids=_ids)
def test_forward_mode_and_the_dot_product_test(f, args):
    out, pull = s2s.vjp(f, *args)
    assert np.allclose(out, f(*args), rtol=1e-13)
    tangents = tuple(RNG.normal(size=np.shape(a)) if np.ndim(a) else float(RNG.normal())
                     for a in args)
    y, jv = s2s.jvp(f, args, tangents)
    assert np.allclose(y, f(*args), rtol=1e-13)
    cts = pull(1.0)
    assert math.isclose(float(jv), sum(float(np.sum(c * t)) for c, t in zip(cts, tangents)),
                        rel_tol=1e-10, abs_tol=1e-12)


@pytest.mark.parametrize("f, args", [c for c in CASES if len(c[1]) == 1 and np.ndim(c[1][0]) == 0],
                         ids=_ids)
def test_second_order(f, args):
    x = args[0]
    g = s2s.grad(f)
    fd = (g(x + 1e-5) - g(x - 1e-5)) / 2e-5
    assert math.isclose(s2s.grad(g)(x), fd, rel_tol=1e-6, abs_tol=1e-8)
    assert math.isclose(s2s.jvp(g, (x,), (1.0,))[1], fd, rel_tol=1e-6, abs_tol=1e-8)


# -- closed forms and semantics ----------------------------------------------------------

def test_closures_bind_late_and_defaults_early():
    # late_binding: a = 2x^2, then g(1) = 3x: d/dx = 4x + 3
    assert math.isclose(s2s.grad(late_binding)(0.6), 4 * 0.6 + 3, rel_tol=1e-13)
    # defaults_bind_early: h(x) = 2x^2 + 3, h(x, 1) * 100 = 100x + 300: d/dx = 4x + 100
    assert math.isclose(s2s.grad(defaults_bind_early)(1.1), 4 * 1.1 + 100, rel_tol=1e-13)
    # returned_closure: add(10x) with a = x: 10x + x^2
    assert math.isclose(s2s.grad(returned_closure)(0.7), 10 + 2 * 0.7, rel_tol=1e-13)


def test_recursion_with_a_constant_depth_is_unrolled():
    x = 0.7
    s1 = math.sin(x)
    s2 = math.sin(s1)
    s3 = math.sin(s2)
    closed = math.cos(s3) * math.cos(s2) * math.cos(s1) * math.cos(x)
    assert math.isclose(s2s.grad(lambda v: rec(v, 4))(x), closed, rel_tol=1e-13)
    assert math.isclose(s2s.jvp(lambda v: rec(v, 4), (x,), (1.0,))[1], closed, rel_tol=1e-13)
    assert s2s.grad(lambda v: rec(v, 0))(x) == 1.0


def test_a_function_argument_is_part_of_the_code_made_for_it():
    g = s2s.grad(apply, argnums=1)
    for f, d in [(np.sin, np.cos), (np.cos, lambda v: -np.sin(v)), (cube, lambda v: 3 * v * v),
                 (lambda z: z * z, lambda v: 2 * v)]:
        assert math.isclose(g(f, 0.8), 2 * d(0.8), rel_tol=1e-13)
    assert math.isclose(s2s.jvp(apply, (np.exp, 0.8), (None, 1.0))[1], 2 * np.exp(0.8),
                        rel_tol=1e-13)
    assert math.isclose(s2s.hessian(apply, argnums=1)(np.sin, 0.8), -2 * np.sin(0.8),
                        rel_tol=1e-12)
    value, grad = s2s.value_and_grad(apply, argnums=1)(np.tanh, 0.3)
    assert value == 2 * np.tanh(0.3) and math.isclose(grad, 2 / np.cosh(0.3) ** 2,
                                                      rel_tol=1e-13)


def test_star_args_of_the_transformed_function_are_numbered_as_passed():
    a, b = 1.2, 0.4
    assert math.isclose(s2s.grad(star_top)(a, b), math.sin(b) + 2 * a, rel_tol=1e-13)
    ga, gb = s2s.grad(star_top, argnums=(0, 1))(a, b)
    assert math.isclose(gb, a * math.cos(b), rel_tol=1e-13)
    assert math.isclose(s2s.jvp(star_top, (a, b), (0.0, 1.0))[1], a * math.cos(b),
                        rel_tol=1e-13)
    assert math.isclose(s2s.grad(kw, argnums=1)(1.0, 2.0, 3.0, c=5.0), 1.0, rel_tol=1e-13)
    # keywords are not differentiated (JAX's rule); argnums count positional arguments
    assert math.isclose(s2s.grad(kw)(1.0, c=5.0, scale=4.0), 4.0, rel_tol=1e-13)
    with pytest.raises(ValueError, match="argnums 2 is out of range"):
        s2s.grad(star_top, argnums=2)(a, b)


# -- objects passed in ----------------------------------------------------------------------

def test_the_methods_of_an_object_argument_are_inlined():
    m = make_net(0)
    x = RNG.normal(size=3)
    g = s2s.grad(net_loss)(x, m)
    np.testing.assert_allclose(g, fd_grad(lambda v: net_loss(v, m), x), rtol=1e-6, atol=1e-8)
    v = RNG.normal(size=3)
    y, jv = s2s.jvp(net_loss, (x, m), (v, None))
    assert np.isclose(y, net_loss(x, m)) and np.isclose(jv, g @ v, rtol=1e-10)
    # another object of the same structure reuses the code, with its own weights
    m2 = make_net(1)
    g2 = s2s.grad(net_loss)(x, m2)
    np.testing.assert_allclose(g2, fd_grad(lambda v: net_loss(v, m2), x), rtol=1e-6,
                               atol=1e-8)
    assert len([k for k in s2s.grad(net_loss).cache if k[0] != "front"]) == 1
    # a different function held by the object is different code
    m3 = make_net(1, act=np.sin)
    g3 = s2s.grad(net_loss)(x, m3)
    np.testing.assert_allclose(g3, fd_grad(lambda v: net_loss(v, m3), x), rtol=1e-6,
                               atol=1e-8)


def test_an_object_argument_with_an_attribute_read():
    m = Module(RNG.normal(size=(3, 3)))
    x = RNG.normal(size=3)
    for f in (tanh_module, module_loss):
        np.testing.assert_allclose(s2s.grad(f)(x, m), fd_grad(lambda v: f(v, m), x),
                                   rtol=1e-6, atol=1e-8)
    h = s2s.hessian(module_loss)(x, m)
    fd = np.stack([fd_grad(lambda v: s2s.grad(module_loss)(v, m)[i], x) for i in range(3)])
    np.testing.assert_allclose(h, fd, rtol=1e-5, atol=1e-7)


def test_loops_over_lists_of_objects_are_unrolled_per_structure():
    x = RNG.normal(size=3)
    square = Module(RNG.normal(size=(3, 3)))
    for model in (Sequential(square, Module(RNG.normal(size=(3, 3)))),
                  Sequential(square, square, Linear(RNG.normal(size=(3, 3)), np.zeros(3))),
                  Sequential(square)):
        g = s2s.grad(sequential_loss)(x, model)
        np.testing.assert_allclose(g, fd_grad(lambda v: sequential_loss(v, model), x),
                                   rtol=1e-6, atol=1e-8)
        v = RNG.normal(size=3)
        assert np.isclose(s2s.jvp(sequential_loss, (x, model), (v, None))[1], g @ v,
                          rtol=1e-10)
    layers = [Module(RNG.normal(size=(3, 3))) for _ in range(3)]
    for n in (3, 1):
        g = s2s.grad(loop_over_layers)(x, layers[:n])
        np.testing.assert_allclose(g, fd_grad(lambda v: loop_over_layers(v, layers[:n]), x),
                                   rtol=1e-6, atol=1e-8)


def test_rebinding_what_a_program_object_holds_makes_new_code():
    x = RNG.normal(size=3)
    before = s2s.grad(global_net_loss)(x)
    np.testing.assert_allclose(before, fd_grad(global_net_loss, x), rtol=1e-6, atol=1e-8)
    old = NET.first.act
    NET.first.act = np.sin
    try:
        after = s2s.grad(global_net_loss)(x)
        np.testing.assert_allclose(after, fd_grad(global_net_loss, x), rtol=1e-6, atol=1e-8)
        assert not np.allclose(before, after)
    finally:
        NET.first.act = old


def test_differentiating_with_respect_to_an_object_or_function_is_a_clear_error():
    with pytest.raises(TypeError, match="Module object"):
        s2s.grad(module_loss, argnums=1)(np.ones(3), Module(np.eye(3)))
    with pytest.raises(TypeError, match="the function sin"):
        s2s.grad(apply)(np.sin, 1.0)


# -- what stays unsupported -----------------------------------------------------------------

def rec_unknown_depth(x, n):
    return rec(x, n)


def rec_too_deep(x):
    return rec(x, 100)


def returns_a_lambda(x):
    return lambda z: z * x


def lambda_chosen_in_a_branch(x):
    if x > 0:
        g = lambda z: z * 2  # noqa: E731
    else:
        g = lambda z: z * 3  # noqa: E731
    return g(x)


def rebound_in_a_loop(x):
    g = lambda z: z * 2  # noqa: E731
    s = x
    for i in range(3):
        s = g(s)
        g = lambda z: z * 3  # noqa: E731
    return s


def object_made_in_a_loop(x):
    for i in range(2):
        acc = Accumulator(x * i)
    return acc.total


def writes_nonlocal(x):
    y = x

    def h():
        nonlocal y
        y = y * 2
    h()
    return y


class Counter:
    def __init__(self):
        self.n = 0.0

    def add(self, v):
        self.n = v
        return self.n


def sets_an_attribute(x, c):
    return c.add(x * 2)


ERRORS = [
    (rec_unknown_depth, (1.0, 3), "depth is not known", "np.sin(rec(x, n - 1))"),
    (rec_too_deep, (1.0,), "deeper than 64", "np.sin(rec(x, n - 1))"),
    (returns_a_lambda, (1.0,), "this use of the lambda", "return lambda"),
    (lambda_chosen_in_a_branch, (1.0,), "'g' here may be the lambda", "return g(x)"),
    (rebound_in_a_loop, (1.0,), "'g' here may be the lambda", "s = g(s)"),
    (object_made_in_a_loop, (1.0,), "'acc' here may be a Accumulator object",
     "return acc.total"),
    (writes_nonlocal, (1.0,), "'nonlocal' statement", "nonlocal y"),
    (sets_an_attribute, (1.0, Counter()), "setting attribute 'n' of a Counter object",
     "self.n = v"),
]


@pytest.mark.parametrize("f, args, message, line", ERRORS, ids=_ids)
def test_unsupported_calls_are_clear_errors(f, args, message, line):
    with pytest.raises(s2s.UnsupportedSyntaxError) as info:
        s2s.grad(f)(*args)
    err = info.value
    assert message in err.message, err.message
    assert line in err.loc.text, (err.loc.text, line)
    assert err.loc.file == __file__
    with pytest.raises(s2s.UnsupportedSyntaxError):
        s2s.jvp(f, args, tuple(0.0 if isinstance(a, float) else None for a in args))


def test_closures_leave_no_trace_in_the_generated_code():
    g = s2s.grad(passes_functions)
    g(0.7)
    import inspect
    src = inspect.getsource(next(v[0] for v in g.cache.values() if isinstance(v, tuple)))
    assert "call_method" not in src and "make_closure" not in src, src
    assert src == inspect.getsource(
        next(v[0] for v in s2s.grad(passes_functions).cache.values() if isinstance(v, tuple)))


def test_a_list_of_layers_built_from_an_argument_in_every_transform():
    """The list's length is the argument's: the loop building it is unrolled once the
    specialisation knows it (``Function.needs_values``); other lengths make other code.
    (Not yet under ``jit(grad)``: the unrolled cotangent list reads as a tape there.)"""
    def loss(w, pairs):
        model = StackOfAffines([(p * w, b) for p, b in pairs])
        return np.sum(model(np.array([0.3, -0.6])) ** 2)

    w = 0.9
    for pairs in (PAIRS, PAIRS[:1]):
        want = fd_grad(lambda v: loss(v, pairs), w)
        assert math.isclose(s2s.grad(loss)(w, pairs), want, rel_tol=1e-6, abs_tol=1e-9)
        ws = np.array([0.9, -0.4])
        np.testing.assert_allclose(
            s2s.vmap(s2s.grad(loss), in_axes=(0, None))(ws, pairs),
            [fd_grad(lambda v: loss(v, pairs), u) for u in ws], rtol=1e-6, atol=1e-9)


def test_layers_appended_under_a_branch_are_refused_not_miscounted():
    def loss(x):
        layers = [Affine(x, 0.1)]
        if x > 0.5:  # one more layer on one path only: no list of known items
            layers.append(Affine(2.0, x))
        h = 0.3
        for layer in layers:
            h = layer(h)
        return h

    with pytest.raises(s2s.S2SError, match="Affine object"):
        s2s.grad(loss)(0.7)


def _total(*parts):
    return sum(parts)


def test_a_list_grown_once_per_trip_has_a_known_length_and_no_other_does():
    """A loop over a known length appending once per trip gives a list of that length
    (``*parts`` is unrolled); one more append under a branch makes the length unknown:
    refused by name, never miscounted."""
    def once(x):
        out = []
        for w, b in PAIRS:
            out.append(w * x + b)
        return _total(*out) * x

    def twice_sometimes(x):
        out = []
        for w, b in PAIRS:
            out.append(w * x)
            if b > 0.2:
                out.append(x * x)
        return _total(*out)

    assert math.isclose(s2s.grad(once)(0.7), fd_grad(once, 0.7), rel_tol=1e-6)
    with pytest.raises(s2s.S2SError, match="'\\*' unpacking of 'out'"):
        s2s.grad(twice_sometimes)(0.7)
