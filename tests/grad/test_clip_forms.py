"""``np.clip`` and ``a.clip`` in every form numpy takes (one bound, keywords ``min``/
``max`` and ``a_min``/``a_max``, the method's positional ``min``), read as
``np.clip(a, lo, hi)`` (``frontend/desugar.clip_bounds``): values against numpy, gradients
against the closed form ``g`` inside the bounds, ``0`` outside."""
import numpy as np
import pytest

import s2s

X = np.array([0.3, 0.5, 0.7, 0.45])

FORMS = [
    (lambda x: x.clip(0.4), 0.4, None),
    (lambda x: x.clip(max=0.6), None, 0.6),
    (lambda x: x.clip(min=0.4), 0.4, None),
    (lambda x: x.clip(0.4, 0.6), 0.4, 0.6),
    (lambda x: np.clip(x, max=0.6), None, 0.6),
    (lambda x: np.clip(x, min=0.35, max=0.6), 0.35, 0.6),
    (lambda x: np.clip(x, a_min=0.4, a_max=None), 0.4, None),
    (lambda x: np.clip(x, None, 0.6), None, 0.6),
]


@pytest.mark.parametrize("form, low, high", FORMS, ids=[f"form{k}" for k in range(len(FORMS))])
def test_clip_forms_values_and_gradients(form, low, high):
    def f(x):
        return np.sum(form(x) ** 2)

    inside = np.ones_like(X, dtype=bool)
    if low is not None:
        inside &= X > low
    if high is not None:
        inside &= X < high
    want = np.where(inside, 2 * X, 0.0)
    np.testing.assert_allclose(s2s.jit(f)(X), f(X), rtol=1e-14)
    np.testing.assert_allclose(s2s.grad(f)(X), want, rtol=1e-14)
    np.testing.assert_allclose(s2s.jit(s2s.grad(f))(X), want, rtol=1e-14)
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(np.stack([X, X])), [want, want])


def test_clip_with_one_positional_bound_raises_like_numpy():
    with pytest.raises(TypeError, match="a_max"):
        np.clip(X, 0.4)
    with pytest.raises(TypeError, match="a_max"):
        s2s.grad(lambda x: np.sum(np.clip(x, 0.4)))(X)
