"""Arrays made inside compiled loops (issue 20, item 4; ``backend/llvm/values/abi.py``,
``pooled_alloc``): an allocation site in a loop hands out the block it made at an
earlier iteration again only when nothing holds it any more.

The oracle is Python: every kernel runs the same code uncompiled.  The kernels are
the cases where reusing a buffer would be wrong -- the array outlives its iteration
through a variable, a tuple, a view, a tape or the return value, or its size changes
-- next to the cases where it is reused; a reuse of a block still held shows as a
wrong value.  Gradients are checked against central finite differences.
"""
import numpy as np
import pytest

import s2s
from s2s.backend.llvm.values import arrays


def per_step(x, n):
    total = 0.0
    for i in range(n):
        r = np.zeros(3)
        r[0] = x[0] * i
        r[1] = x[1] + r[0]
        r[2] = r[1] * r[0]
        total = total + np.sum(r * x)
    return total


def kept_by_a_variable(x, n):
    prev = np.zeros(3)
    total = 0.0
    for i in range(n):
        cur = np.zeros(3)
        cur[0] = x[0] * i + prev[2]
        cur[1] = prev[0] + 1.0
        cur[2] = prev[1] * 2.0 - x[2]
        total = total + np.sum(prev) * 0.5
        prev = cur
    return total + np.sum(prev)


def kept_by_a_tuple_and_a_view(x, n):
    pair = (np.zeros(3), 0.0)
    tail = np.zeros(2)
    total = 0.0
    for i in range(n):
        cur = x * (i + 1.0)
        total = total + pair[0][1] + tail[0]
        pair = (cur, float(i))
        tail = cur[1:]
    return total + pair[1] + tail[1]


def returned_from_the_loop(x, n):
    r = np.zeros(3)
    for i in range(n):
        r = np.zeros(3)
        r[0] = x[0] + i
        r[2] = x[2] * i
    return r


def sizes_change(x, n):
    total = 0.0
    for i in range(n):
        m = (i * 7) % 5 + 1
        buf = np.empty(m)
        for j in range(m):
            buf[j] = x[j % 3] * (i + j)
        total = total + np.sum(buf) + buf[m - 1]
    return total


def nested(x, n):
    total = 0.0
    for i in range(n):
        outer = np.zeros(3)
        for j in range(3):
            inner = np.zeros(3)
            inner[j] = x[j] * (i + 1.0)
            outer = outer + inner
        total = total + np.sum(outer * outer)
    return total


def rk4(y0, h, n):
    y = y0.copy()
    for s in range(n):
        k1 = np.zeros(3)
        k2 = np.zeros(3)
        k1[0] = 10.0 * (y[1] - y[0])
        k1[1] = y[0] * (28.0 - y[2]) - y[1]
        k1[2] = y[0] * y[1] - 8.0 / 3.0 * y[2]
        t = y + 0.5 * h * k1
        k2[0] = 10.0 * (t[1] - t[0])
        k2[1] = t[0] * (28.0 - t[2]) - t[1]
        k2[2] = t[0] * t[1] - 8.0 / 3.0 * t[2]
        y = y + h * k2
    return y


def rk4_loss(y0):
    y = rk4(y0, 0.01, 30)
    return y[0] * y[1] + y[2]


def stacked_history(x, n):
    total = 0.0
    for i in range(n):
        v = np.zeros(2)
        v[0] = np.sin(x[0] * i)
        v[1] = x[1] * v[0]
        w = v * v
        total = total + w[0] * x[2] + w[1]
    return total


X = np.array([0.3, -1.2, 2.5])


@pytest.mark.parametrize("f", [per_step, kept_by_a_variable, kept_by_a_tuple_and_a_view,
                               returned_from_the_loop, sizes_change, nested])
def test_primal_matches_python(f):
    got, want = s2s.jit(f)(X, 9), f(X, 9)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def test_a_returned_buffer_survives_the_next_call():
    jf = s2s.jit(returned_from_the_loop)
    first = jf(X, 5)
    first_copy = first.copy()
    second = jf(X * 2.0, 7)
    np.testing.assert_array_equal(first, first_copy)
    np.testing.assert_allclose(second, returned_from_the_loop(X * 2.0, 7))


def test_pooled_and_unpooled_kernels_agree():
    arrays.POOL_LOOP_ALLOCATIONS = False
    try:
        plain = s2s.jit(kept_by_a_variable)(X, 11)
    finally:
        arrays.POOL_LOOP_ALLOCATIONS = True
    assert s2s.jit(kept_by_a_variable)(X, 11) == plain


def _fd(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for k in range(x.size):
        e = np.zeros_like(x)
        e[k] = eps
        g[k] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


@pytest.mark.parametrize("loss", [rk4_loss, lambda x: stacked_history(x, 13),
                                  lambda x: nested(x, 5), lambda x: per_step(x, 7),
                                  lambda x: kept_by_a_tuple_and_a_view(x, 6)])
def test_jit_grad_matches_finite_differences(loss):
    np.testing.assert_allclose(s2s.jit(s2s.grad(loss))(X), _fd(loss, X), rtol=1e-6, atol=1e-8)


def test_errors_of_an_allocation_in_a_loop_are_numpys():
    def make(n):
        total = 0.0
        for i in range(3):
            a = np.zeros(n - i)
            total = total + a.shape[0]
        return total

    jf = s2s.jit(make)
    assert jf(5) == make(5)
    with pytest.raises(ValueError, match="negative dimensions"):
        jf(1)
