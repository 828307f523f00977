"""Loop adjoints that were wrong, found by ``test_checkpoint_random.py``: each
gradient against central finite differences.

* a loop-carried value that each iteration overwrites without reading it,
  returned after the loop, was taken for a value of one iteration (the
  return was not counted as a read after the loop): zero gradient;
* the same when the loop may run zero times (the value before it flows out);
* a swap ``a, b = b, a`` in a loop body: the adjoints of the two temporaries
  stood for ``a_bar`` / ``b_bar``, which the swap's adjoint renews in turn, so
  the second read the first's new value.
"""
import numpy as np
import pytest

import s2s

from .oracles import fd_grad


def overwritten(x1, n):
    s = 0.0
    for i in range(n):
        s = np.tanh(x1)
    return s


def overwritten_twice(x1, n):
    s = 0.0
    for i in range(n):
        a = x1
        a = np.tanh(a)
        s = np.tanh(a)
    return s


def maybe_no_trip(x0, n):
    s = x0
    for i in range(n):
        s = 0.5
    return s


def swaps(x0, x1, n):
    s = x0
    for i in range(n):
        a = s
        b = x1
        a, b = b, a
        s = np.tanh(a + 0.25 * b)
    return s


def _swap_params(x0, x1):
    x0, x1 = x1, x0
    return x0 + 0.25 * x1


def swaps_in_callee(x0, x1, n):
    s = x0
    for i in range(n):
        s = np.tanh(_swap_params(s, x1))
    return s


@pytest.mark.parametrize("fn, args", [
    (overwritten, (0.3, 2)), (overwritten_twice, (0.3, 3)),
    (maybe_no_trip, (0.3, 0)), (maybe_no_trip, (0.3, 2)),
    (swaps, (0.1, 0.2, 1)), (swaps, (0.1, 0.2, 4)),
    (swaps_in_callee, (0.3, 0.4, 1)), (swaps_in_callee, (0.3, 0.4, 3)),
])
def test_loop_adjoints_against_finite_differences(fn, args):
    nums = tuple(range(len(args) - 1))
    g = s2s.grad(fn, argnums=nums)(*args)
    fd = fd_grad(lambda *a: fn(*a, args[-1]), args[:-1], argnums=nums)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-10)
