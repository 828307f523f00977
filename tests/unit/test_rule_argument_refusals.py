"""Argument combinations the rules do not differentiate raise a clear error (never a
wrong derivative): at transform time with the user's source line (``S2SError`` /
``NoRuleError``), or at run time from the helper (``NotImplementedError`` "s2s: ...")."""
import numpy as np
import pytest

import s2s
from s2s.errors import NoRuleError, S2SError

X = np.arange(6.0).reshape(2, 3) + 1.0


@pytest.mark.parametrize("f, error, match", [
    (lambda x: np.sum(np.pad(x, 1, mode="mean")), NotImplementedError, "mode='mean'"),
    (lambda x: np.sum(np.pad(x, 1, mode="reflect", reflect_type="odd")), NotImplementedError,
     "reflect_type='odd'"),
    (lambda x: np.quantile(x, 0.3, method="weibull"), NotImplementedError, "method='weibull'"),
    (lambda x: np.quantile(x, 0.3, axis=(0, 1)), NotImplementedError, "tuple of axes"),
    (lambda x: np.nanmean(x, where=x > 2), S2SError, "unexpected keyword argument 'where'"),
    (lambda x: np.einsum("i,i,i,i,i,i", x[0], x[0], x[0], x[0], x[0], x[0]), S2SError,
     "too many positional arguments"),
    (lambda x: np.sum(np.einsum(x, [0, 1], x, [0, 1])), NoRuleError, "'subscripts'"),
    (lambda x: np.quantile(x, x[0, 0] / 10), NoRuleError, "argument 'q'"),
    (lambda x: np.sum(np.pad(x, 1, constant_values=x[0, 0])), NoRuleError, "'constant_values'"),
    (lambda x: np.sum(np.atleast_1d(x, x)[0]), S2SError, "too many positional arguments"),
    (lambda x: np.sum(np.vecdot(x, x, axes=[(0,), (0,), ()])), NotImplementedError, "axes="),
])
def test_unsupported_combinations_raise(f, error, match):
    with pytest.raises(error, match=match):
        s2s.grad(f)(X)


def test_transform_errors_quote_the_source_line():
    with pytest.raises(S2SError) as info:
        s2s.grad(lambda x: np.nanmean(x, where=x > 2))(X)
    assert "test_rule_argument_refusals.py" in str(info.value) and "np.nanmean" in str(info.value)
