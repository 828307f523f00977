"""The jit's call table (``s2s.backend.llvm.ops.calls``): one plain handler per callable, and
overloads for kinds of operands chained before it in ``OVERLOAD_FAMILIES`` order, whatever
the order in which modules register them."""
from __future__ import annotations

import pytest

from s2s.backend.llvm.ops import calls


class _Plain:
    def type(self, fn, types, kw, loc):
        return "plain"


class _Kind:
    """Takes a call whose first operand is ``kind``; else hands it to ``inner``."""

    inner = None

    def __init__(self, kind):
        self.kind = kind

    def type(self, fn, types, kw, loc):
        if types and types[0] == self.kind:
            return self.kind
        return None if self.inner is None else self.inner.type(fn, types, kw, loc)


@pytest.fixture
def fresh_callable():
    def made_up(*args):
        raise AssertionError("never called: only its handlers are")
    yield made_up
    calls.TABLE.pop(made_up, None)
    calls._PLAIN.pop(made_up, None)
    calls._OVERLOADS.pop(made_up, None)


def _chain(fn):
    out, h = [], calls.TABLE[fn]
    while h is not None:
        out.append(getattr(h, "kind", "plain"))
        h = getattr(h, "inner", None)
    return out


def test_overloads_are_tried_in_family_order_whatever_the_registration_order(fresh_callable):
    fn = fresh_callable
    calls.overload("advanced indices", _Kind("index"), fn)
    calls.overload("tuples", _Kind("tuple"), fn)
    calls.register(_Plain(), fn)  # the plain handler may come last
    calls.overload("lists", _Kind("list"), fn)
    assert _chain(fn) == ["tuple", "list", "index", "plain"]
    for kind in ("tuple", "list", "index", "other"):
        expected = "plain" if kind == "other" else kind
        assert calls.TABLE[fn].type(fn, [kind], {}, None) == expected


def test_within_a_family_overloads_are_tried_in_the_order_registered(fresh_callable):
    fn = fresh_callable
    calls.overload("dicts", _Kind("first"), fn)
    calls.overload("dicts", _Kind("second"), fn)
    assert _chain(fn) == ["first", "second"]
    assert calls.TABLE[fn].type(fn, ["third"], {}, None) is None  # no plain handler: refused


def test_a_second_plain_handler_is_a_programming_error(fresh_callable):
    calls.register(_Plain(), fresh_callable)
    with pytest.raises(RuntimeError, match="two jit lowerings"):
        calls.register(_Plain(), fresh_callable)


def test_an_overload_object_serves_one_callable(fresh_callable):
    handler = calls.overload("lists", _Kind("list"), fresh_callable)

    def other(*args):
        raise AssertionError("never called")
    try:
        with pytest.raises(RuntimeError, match="overloads two callables"):
            calls.overload("lists", handler, other)
    finally:
        calls.TABLE.pop(other, None)
        calls._OVERLOADS.pop(other, None)


def test_an_unknown_family_is_refused(fresh_callable):
    with pytest.raises(ValueError):
        calls.overload("no such kind", _Kind("x"), fresh_callable)
