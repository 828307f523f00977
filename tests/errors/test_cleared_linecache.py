"""Code s2s generated keeps working after ``linecache.clearcache()`` (IPython and test
runners clear it): s2s keeps its own copy of every file that exists only in memory, so a
generated function can be transformed again and its tracebacks still show its lines."""
import linecache
import traceback

import numpy as np
import pytest

import s2s
from s2s.frontend.registered import lines_of, register


@pytest.fixture(autouse=True)
def _restore_linecache():
    """These tests clear ``linecache``; other tests' made-up files are put back after."""
    saved = dict(linecache.cache)
    yield
    linecache.cache.update(saved)


def test_a_rule_defined_before_the_cache_was_cleared_is_read_after():
    @s2s.custom_jvp
    def c(x):
        return np.sin(x)

    c.defjvps(lambda t, ans, x: np.cos(x) * t)  # s2s writes the rule's code, in memory only
    linecache.clearcache()
    x, eps = 0.3, 1e-6
    g = s2s.grad(lambda y: c(y) * y)(x)
    fd = (np.sin(x + eps) * (x + eps) - np.sin(x - eps) * (x - eps)) / (2 * eps)
    assert np.isclose(g, fd, rtol=1e-8)


def test_registered_lines_come_back_after_clearcache():
    register("<s2s-test-file>", "a = 1\nb = 2\n")
    linecache.clearcache()
    assert linecache.getlines("<s2s-test-file>") == []
    assert lines_of("<s2s-test-file>") == ["a = 1\n", "b = 2\n"]
    assert linecache.getlines("<s2s-test-file>") == ["a = 1\n", "b = 2\n"]  # put back


def test_an_error_in_generated_code_still_points_at_the_user_line_after_clearcache():
    def bad(x):
        return np.ones(3) + np.ones(4) * x

    g = s2s.grad(lambda x: bad(x).sum())
    try:
        g(1.0)
    except ValueError:
        pass
    linecache.clearcache()
    try:
        g(1.0)
    except ValueError as exc:
        text = "".join(traceback.format_exception(exc))
    assert "np.ones(3) + np.ones(4) * x" in text
