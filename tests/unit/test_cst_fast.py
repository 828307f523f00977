"""The front end's cheaper stand-ins for libcst services (``frontend/cst_fast.py``)
against libcst's own: the same module from ``parse_module`` (validation restored after
it, after a syntax error too), the same ranges from ``Positions`` as libcst's
``PositionProvider``, the same nodes from ``walk`` as from a libcst visitor."""
import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from s2s.frontend.cst_fast import Positions, parse_module, walk

SOURCE = '''
import numpy as np


def f(x, y=2.0, *args, k=None, **kw):
    """Doc."""
    s = 0.0
    for i, v in enumerate(x):  # a comment
        if v > 0 and (t := v * y) < 3:
            s += np.sin(t) ** 2
        else:
            s -= [w for w in args][0] if args else 1.0
    return {"s": s, "n": len(x)}, lambda z: z + s
'''


def test_parse_module_gives_libcsts_module_and_restores_validation():
    checked = cst.CSTNode.__post_init__
    assert parse_module(SOURCE).deep_equals(cst.parse_module(SOURCE))
    assert parse_module(SOURCE).code == SOURCE
    assert cst.CSTNode.__post_init__ is checked
    with pytest.raises(cst.ParserSyntaxError):
        parse_module("def f(:\n")
    assert cst.CSTNode.__post_init__ is checked
    with pytest.raises(cst.CSTValidationError):  # nodes built by hand are still checked
        cst.Name("not a name")


def test_positions_are_position_providers():
    module = parse_module(SOURCE)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    want = wrapper.resolve(PositionProvider)
    got = Positions(module)
    nodes = []
    walk(module, lambda n: nodes.append(n))
    assert len(nodes) > 50
    for node in nodes:
        assert got[node] == want[node], node


def test_walk_visits_what_a_visitor_visits():
    module = parse_module(SOURCE)
    seen = []
    walk(module, lambda n: seen.append(n) if isinstance(n, cst.Name) else None)

    class Names(cst.CSTVisitor):
        def __init__(self):
            self.names = []

        def visit_Name(self, node):
            self.names.append(node.value)

    v = Names()
    module.visit(v)
    assert sorted(n.value for n in seen) == sorted(v.names)
