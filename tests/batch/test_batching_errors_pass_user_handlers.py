"""Batched code's own refusals are never caught by the user's handlers: a ``try`` whose
``except`` could catch them (a ``ValueError``, ``Exception``, a bare ``except``) lets
``rt.BatchingRuntimeError`` pass, and per-example results that cannot be stacked are such
a refusal (not numpy's ``ValueError``), so ``fallback="loop"`` runs the examples one by
one and gives what a Python loop gives."""
import numpy as np
import pytest

import s2s


def repeat_then_sum(x):
    try:
        n = int(x[0] > 0) + 1
        items = [x[1]] * n  # a list whose length differs per example
        s = 0.0
        for v in items:
            s = s + v
        return s
    except ValueError:
        return -1.0


def repeat_then_sum_bare(x):
    try:
        items = [x[1]] * (int(x[0] > 0) + 1)
        return sum(items)
    except Exception:
        return -1.0


def caught_on_purpose(x):
    try:
        if x[0] > 0:
            raise ValueError("positive")
        return x[1]
    except ValueError:
        return -x[1]


XS = np.array([[1.0, 2.0], [-1.0, 3.0], [2.0, 5.0]])


@pytest.mark.parametrize("fn", [repeat_then_sum, repeat_then_sum_bare, caught_on_purpose])
def test_the_loop_fallback_gives_the_python_loop(fn):
    expected = np.array([fn(x) for x in XS])
    np.testing.assert_allclose(s2s.vmap(fn, fallback="loop")(XS), expected)


def test_results_that_cannot_be_stacked_are_a_batching_error():
    import s2s_runtime as rt
    with pytest.raises(rt.BatchingRuntimeError, match="cannot be stacked"):
        rt.batch_loop(lambda x: [x] * (int(x > 0) + 1), (True,), 2, np.array([1.0, -1.0]))
