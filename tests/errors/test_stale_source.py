"""Issue 19, group 3: s2s reads the live function's source.  A file edited after the
function was defined is a ``SourceUnavailableError`` saying so (never a derivative of
the text now on disk); functions whose text is what runs (defs, lambdas, nested,
decorated, methods, generated code) are not flagged."""
from __future__ import annotations

import functools
import importlib
import sys
import textwrap

import numpy as np
import pytest

import s2s
from s2s.errors import SourceUnavailableError


@pytest.fixture
def module(tmp_path, monkeypatch):
    """``make(name, text)``: import ``text`` as module ``name`` from a file under
    tmp_path; ``edit(name, text)`` rewrites the file (and forgets its cached lines)."""
    import linecache
    monkeypatch.syspath_prepend(str(tmp_path))

    def make(name, text):
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(text))
        importlib.invalidate_caches()
        return importlib.import_module(name)

    def edit(name, text):
        path = tmp_path / f"{name}.py"
        path.write_text(textwrap.dedent(text))
        linecache.cache.pop(str(path), None)  # forget this file's lines only

    yield make, edit
    for name in [n for n in sys.modules if n.startswith("stale_")]:
        del sys.modules[name]


def test_an_edited_body_is_refused(module):
    make, edit = module
    m = make("stale_body", "def f(x):\n    return x * x\n")
    edit("stale_body", "def f(x):\n    return x * x * x\n")
    with pytest.raises(SourceUnavailableError) as info:
        s2s.grad(m.f)(2.0)
    msg = str(info.value)
    assert "has changed since the function was defined" in msg and "stale_body.py" in msg
    assert "reload" in msg


def test_lines_inserted_above_are_refused(module):
    make, edit = module
    m = make("stale_moved", "def f(x):\n    return x * x\n")
    edit("stale_moved", "import math\n\n\ndef f(x):\n    return x * x * x\n")
    with pytest.raises(SourceUnavailableError, match="stale_moved.py.*edited|edited.*reload"):
        s2s.grad(m.f)(2.0)


def test_an_edited_lambda_and_method_are_refused(module):
    make, edit = module
    m = make("stale_lm", """
        g = lambda x: x * 2.0

        class C:
            def m(self, x):
                return x * x
        """)
    edit("stale_lm", """
        g = lambda x: x * 3.0

        class C:
            def m(self, x):
                return x * x * x
        """)
    with pytest.raises(SourceUnavailableError, match="changed since"):
        s2s.grad(m.g)(2.0)
    with pytest.raises(SourceUnavailableError, match="changed since"):
        s2s.grad(m.C.m, argnums=1)(m.C(), 2.0)


def test_reloading_the_module_differentiates_the_new_text(module):
    make, edit = module
    m = make("stale_reload", "def f(x):\n    return x * x\n")
    edit("stale_reload", "def f(x):\n    return x * x * x\n")
    m = importlib.reload(m)
    assert s2s.grad(m.f)(2.0) == pytest.approx(12.0)


def test_no_false_alarm_for_functions_whose_text_runs(module):
    make, _ = module
    m = make("stale_ok", """
        from __future__ import annotations
        import functools
        import numpy as np

        def deco(fn):
            @functools.wraps(fn)
            def inner(x):
                return fn(x)
            return inner

        def plain(x: float) -> float:
            return np.sin(x) * x

        lam = lambda x: np.cos(x) * 2.0
        a, b = (lambda x: x * 3.0), (lambda x: x * 4.0)

        def outer():
            k = 2.0
            def nested(x):
                return k * x * x
            return nested

        @deco
        def decorated(x):
            assert x > 0
            return x ** 3

        class Model:
            def method(self, x):
                return x * 5.0

            @staticmethod
            def static(x):
                return x * 6.0
        """)
    x = 0.7
    assert s2s.grad(m.plain)(x) == pytest.approx(np.cos(x) * x + np.sin(x))
    assert s2s.grad(m.lam)(x) == pytest.approx(-2.0 * np.sin(x))
    assert s2s.grad(m.a)(x) == pytest.approx(3.0) and s2s.grad(m.b)(x) == pytest.approx(4.0)
    assert s2s.grad(m.outer())(x) == pytest.approx(4.0 * x)
    assert s2s.grad(m.decorated)(x) == pytest.approx(3 * x * x)
    assert s2s.grad(m.Model.method, argnums=1)(m.Model(), x) == pytest.approx(5.0)
    assert s2s.grad(m.Model.static)(x) == pytest.approx(6.0)


def test_no_false_alarm_for_generated_code_and_this_test_file():
    def f(x):
        assert np.all(x > 0)  # pytest rewrites the asserts of this file
        return np.sum(np.tanh(x) ** 2)

    g = s2s.grad(f)
    x = np.linspace(0.1, 1.0, 3)
    expected = 2 * np.tanh(x) * (1 - np.tanh(x) ** 2)
    np.testing.assert_allclose(g(x), expected, rtol=1e-12)
    # the generated gradient's source lives in linecache: transforming it again reads it
    h = s2s.jacfwd(g)(x)
    assert h.shape == (3, 3)
    assert s2s.grad(s2s.grad(lambda y: y ** 4))(1.5) == pytest.approx(12 * 1.5 ** 2)


assert functools  # (used in the module text)
