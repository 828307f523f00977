"""Diagnostics: unsupported constructs, missing source, missing rules, bad names.

Every error about user code must be an ``s2s.S2SError`` whose str() reads
``file:line:col: message`` then the quoted source line and a caret under the
construct (see ``s2s/errors.py``).  Expected lines and columns are found by
searching this file's own text, never hard-coded.
"""
import inspect
import math
import re

import numpy as np
import pytest

import s2s
from s2s.frontend.lower import lower
from s2s.rules import lookup


def _double(v):
    return 2.0 * v


DOUBLE = np.frompyfunc(_double, 1, 1)  # a C-level callable with no rule and no source


# --- fixtures (each names its construct on a line we can find) ---------------------

def uses_yield(x):
    y = yield x
    return y


async def uses_await(x):
    return await x


def uses_global(x):
    global SOMETHING
    return x


def uses_nonlocal_outer():
    v = 1.0

    def uses_nonlocal(x):
        nonlocal v
        return x
    return uses_nonlocal


def uses_del(x):
    y = x
    del y
    y = x * 2  # (a del of a name read again is refused; one nothing reads is nothing)
    return y


def uses_with(x):
    with open(x) as fh:
        return fh


def uses_dict_unpacking(d, x):
    return {**d, "k": x}


def uses_setcomp(xs):
    return {v * 2 for v in xs}


def uses_decorated_nested_def(x):
    @staticmethod
    def inner(v):
        return v
    return x


def uses_class(x):
    class Box:
        pass
    return x


def uses_fstring(x):
    return f"{x:{3}}"  # a format spec with a nested field


def uses_walrus(x):
    return sum((y := v * 2) for v in x)  # (:= binds the function's name: refused here)


def uses_set(x):
    return {x, 1.0}


def uses_local_call(x):
    g = DOUBLE  # a C-level callable with no derivative rule
    return g(x)


def uses_undefined(x):
    return x * not_defined_anywhere


def applies_ufunc(x):
    y = x * 2.0
    z = DOUBLE(y)
    return z


# (function, substring of the message naming the construct, text on the line, text the caret is under)
CASES = [
    (uses_yield, "yield", "y = yield x", "yield x"),
    (uses_await, "async", "async def uses_await", "async def"),
    (uses_global, "global", "global SOMETHING", "global"),
    (uses_nonlocal_outer(), "nonlocal", "nonlocal v", "nonlocal"),
    (uses_del, "del", "del y", "del"),
    (uses_with, "'with' statement on open", "with open(x)", "open(x)"),
    (uses_dict_unpacking, "'**' in a dict literal", 'return {**d, "k": x}', "**d"),
    (uses_setcomp, "set comprehension", "return {v * 2", "{v * 2"),
    (uses_decorated_nested_def, "decorator on a nested function", "@staticmethod",
     "@staticmethod"),
    (uses_class, "class", "class Box", "class Box"),
    (uses_fstring, "f-string format spec with nested fields", 'return f"{x:{3}}"', "{x:"),
    (uses_walrus, ":=", "(y := v * 2)", "y := v"),
    (uses_set, "set literal", "return {x, 1.0}", "{x, 1.0}"),
]


def _find(fn, needle):
    """(line number, line text) of needle in this file (searching from fn's def)."""
    lines = open(__file__).read().splitlines()
    start = fn.__code__.co_firstlineno
    for i in range(start - 1, len(lines)):
        if needle in lines[i]:
            return i + 1, lines[i]
    raise AssertionError(needle)


def _check_rendering(err, line, text, caret_under):
    rendered = str(err).splitlines()
    col = text.index(caret_under)
    assert rendered[0].startswith(f"{__file__}:{line}:{col + 1}: "), rendered[0]
    assert rendered[1].strip() == text.strip()
    stripped = text.lstrip()
    indent = len(text) - len(stripped)
    # the caret sits under the construct in the quoted (stripped) line
    quote_start = rendered[1].index(stripped)
    assert rendered[2].rstrip().endswith("^")
    assert len(rendered[2].rstrip()) - 1 - quote_start == col - indent, "\n".join(rendered)


@pytest.mark.parametrize("fn,construct,line_text,caret_under", CASES,
                         ids=[c[0].__name__ for c in CASES])
def test_unsupported_construct(fn, construct, line_text, caret_under):
    with pytest.raises(s2s.UnsupportedSyntaxError) as info:
        lower(fn)
    err = info.value
    assert isinstance(err, s2s.S2SError)
    assert construct in err.message
    line, text = _find(fn, line_text)
    assert err.loc.line == line
    assert err.loc.text == text
    assert re.match(rf"{re.escape(__file__)}:{line}:\d+: ", str(err))
    assert text.strip() in str(err)
    assert str(err).splitlines()[-1].strip() == "^"


@pytest.mark.parametrize("fn,construct,line_text,caret_under",
                         [c for c in CASES if c[0].__name__ in (
                             "uses_yield", "uses_dict_unpacking", "uses_local_call", "uses_set",
                             "uses_walrus", "uses_del", "uses_setcomp", "uses_decorated_nested_def")],
                         ids=lambda v: getattr(v, "__name__", None) or "")
def test_caret_column(fn, construct, line_text, caret_under):
    with pytest.raises(s2s.S2SError) as info:
        lower(fn)
    line, text = _find(fn, line_text)
    _check_rendering(info.value, line, text, caret_under)


def test_call_of_a_local_variable_names_the_construct():
    # The frontend now lowers calls of values (for user objects with __call__); a local
    # holding a C function still cannot be differentiated, and the diagnostic must be
    # about what the user wrote (the call of the local ``g``), not an internal helper.
    with pytest.raises(s2s.S2SError) as info:
        s2s.grad(uses_local_call)(0.3)
    err = info.value
    line, text = _find(uses_local_call, "return g(x)")
    _check_rendering(err, line, text, "g(x)")
    assert "call_method" not in err.message, err.message
    assert "local" in err.message or "'g'" in err.message, err.message


def test_unsupported_error_through_grad():
    with pytest.raises(s2s.UnsupportedSyntaxError, match="set comprehension"):
        s2s.grad(uses_setcomp)(np.array([1.0, 2.0]))


def test_function_from_exec_has_no_source():
    ns = {}
    exec("def made(x):\n    return x * 2.0\n", ns)
    with pytest.raises(s2s.SourceUnavailableError) as info:
        lower(ns["made"])
    assert "made" in str(info.value)
    with pytest.raises(s2s.SourceUnavailableError):
        s2s.grad(ns["made"])(1.0)


def test_c_builtin_has_no_source():
    """A C function without a rule has no source to read."""
    ufunc = np.frompyfunc(math.sin, 1, 1)
    assert lookup(ufunc) is None
    with pytest.raises((s2s.SourceUnavailableError, TypeError)) as info:
        s2s.grad(ufunc)(1.0)
    assert "sin" in str(info.value) or "signature" in str(info.value)


def test_c_builtin_with_a_rule_is_differentiated_directly():
    assert s2s.grad(math.sin)(1.0) == math.cos(1.0)


def test_call_without_rule_on_differentiated_value():
    assert lookup(DOUBLE) is None
    assert not hasattr(DOUBLE, "__code__")
    assert applies_ufunc(1.5) == 6.0  # the function itself runs fine
    with pytest.raises(s2s.NoRuleError) as info:
        s2s.grad(applies_ufunc)(1.5)
    err = info.value
    assert isinstance(err, s2s.S2SError)
    assert DOUBLE.__name__ in err.message
    line, text = _find(applies_ufunc, "z = DOUBLE(y)")
    assert err.loc.line == line
    assert f":{line}:" in str(err).splitlines()[0]
    assert text.strip() in str(err)


def test_call_without_rule_on_constant_is_fine():
    def f(x):
        c = DOUBLE(3.0)
        return x * c

    assert s2s.grad(f)(2.0) == pytest.approx(6.0)


def test_undefined_name():
    with pytest.raises(s2s.NameResolutionError) as info:
        lower(uses_undefined)
    err = info.value
    assert isinstance(err, s2s.S2SError)
    assert "not_defined_anywhere" in err.message
    line, text = _find(uses_undefined, "return x * not_defined_anywhere")
    _check_rendering(err, line, text, "not_defined_anywhere")


def test_missing_attribute_of_module():
    def f(x):
        return np.no_such_function(x)

    with pytest.raises(s2s.NameResolutionError, match="no_such_function"):
        lower(f)


def test_error_classes_form_a_hierarchy():
    for cls in (s2s.UnsupportedSyntaxError, s2s.SourceUnavailableError, s2s.NoRuleError,
                s2s.NameResolutionError):
        assert issubclass(cls, s2s.S2SError)
    assert issubclass(s2s.S2SError, Exception)
