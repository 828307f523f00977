"""Python's ``sum`` of an array under ``s2s.jit``: over the numbers of a 1-D array or the
rows of a matrix, with a number or an array ``start``; its gradient and Hessian (the
cotangent of an array's rows is an array) against central differences."""
import numpy as np
import pytest

import s2s

from tests.compose.finite_differences import fd_gradient, fd_hessian

X = np.array([0.31, -0.52, 0.77, 0.18])
CASES = {
    "numbers": lambda x: sum(x) ** 2,
    "numbers with start": lambda x: sum(x * x, 1.5) ** 2,
    "numbers with an array start": lambda x: np.sum(sum(x, np.ones(3)) ** 2),
    "rows": lambda x: np.sum(np.sin(sum(np.outer(x, x[:2])))),
    "rows with a start": lambda x: np.sum(sum(np.outer(x, x), x[:1]) ** 3),
}


@pytest.mark.parametrize("name", list(CASES))
def test_value_gradient_and_hessian(name):
    f = CASES[name]
    np.testing.assert_allclose(s2s.jit(f)(X), f(X), rtol=1e-14)
    np.testing.assert_allclose(s2s.jit(s2s.grad(f))(X), fd_gradient(f, X), rtol=1e-6,
                               atol=1e-8)
    np.testing.assert_allclose(s2s.jit(s2s.hessian(f))(X), fd_hessian(f, X), rtol=1e-4,
                               atol=1e-4)


def test_rows_of_an_empty_matrix_are_refused_like_python():
    def f(m):
        return sum(m)

    assert s2s.jit(f)(np.zeros(0)) == 0.0
    with pytest.raises(ValueError, match="no rows"):
        s2s.jit(f)(np.zeros((0, 3)))
