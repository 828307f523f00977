"""Issue 19, group 7 (generated Python code): an exception raised while generated
code runs - numpy's broadcast error, a ragged list, the user's own ``raise`` - carries
the user's file:line and the quoted line (an exception note on Python 3.11+, the
message itself on 3.10), in every transform, also from a helper s2s inlined."""
from __future__ import annotations

import inspect
import traceback

import numpy as np
import pytest

import s2s
from s2s.batch.transform import BatchingError

HERE = __file__


def _line(fn, text):
    src, start = inspect.getsourcelines(fn)
    return next(start + i for i, line in enumerate(src) if text in line)


def checked(x):
    if np.any(x < 0):
        raise ValueError("x must be >= 0")
    return np.sum(np.sqrt(x))


def broadcast(x):
    y = x * 2.0
    z = y + np.ones(4)
    return np.sum(z)


def ragged(x):
    rows = np.array([[x[0], x[1]], [x[2]]])
    return np.sum(rows)


def helper(v):
    if v.shape[0] > 2:
        raise IndexError("helper wants at most two entries")
    return v * v


def calls_helper(x):
    return np.sum(helper(x))


CASES = [(checked, -np.ones(3), ValueError, 'raise ValueError("x must be >= 0")'),
         (broadcast, np.ones(3), ValueError, "z = y + np.ones(4)"),
         (ragged, np.ones(3), ValueError, "rows = np.array("),
         (calls_helper, np.ones(3), IndexError, 'raise IndexError("helper wants')]
TRANSFORMS = {
    "grad": lambda f, x: s2s.grad(f)(x),
    "value_and_grad": lambda f, x: s2s.value_and_grad(f)(x),
    "jvp": lambda f, x: s2s.jvp(f, (x,), (np.ones_like(x),)),
    "vjp": lambda f, x: s2s.vjp(f, x),
    "jacrev": lambda f, x: s2s.jacrev(f)(x),
    "vmap": lambda f, x: s2s.vmap(f)(np.stack([x, x])),
    "vmap_grad": lambda f, x: s2s.vmap(s2s.grad(f))(np.stack([x, x])),
}


def _text(exc):
    return "".join(traceback.format_exception(exc))


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
@pytest.mark.parametrize("fn, x, kind, text", CASES, ids=[c[0].__name__ for c in CASES])
def test_runtime_errors_name_the_users_line(fn, x, kind, text, transform):
    # (vmap refuses a raise under a condition that differs per example: located too)
    kinds = (kind, BatchingError) if transform.startswith("vmap") else kind
    with pytest.raises(kinds) as info:
        TRANSFORMS[transform](fn, x)
    where = helper if fn is calls_helper else fn
    shown = _text(info.value)
    assert f"{HERE}:{_line(where, text)}:" in shown, shown
    assert text in shown.split(f"{HERE}:{_line(where, text)}:")[1]


def test_the_message_is_kept_and_located_once():
    with pytest.raises(ValueError) as info:
        s2s.grad(checked)(-np.ones(2))
    exc = info.value
    assert str(exc).startswith("x must be >= 0")
    shown = _text(exc)
    assert shown.count(f"{HERE}:{_line(checked, 'raise ValueError')}:") == 1


def test_the_cotangent_sweep_of_vjp_names_the_users_line():
    def f(x):
        return np.log(x) * 2.0

    out, pullback = s2s.vjp(f, np.ones(3))
    with pytest.raises(ValueError) as info:
        pullback(np.ones(3)[:, None] * np.ones((3, 2)))
    assert "cotangent" in str(info.value) or HERE in _text(info.value)
