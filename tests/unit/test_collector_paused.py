"""``driver/compile.collector_paused``: Python's cyclic collector is off while a
signature compiles and comes back as it was, after nested and failing uses too."""
import gc

import numpy as np
import pytest

import s2s
from s2s.backend.llvm.driver import compile as C


@pytest.fixture(autouse=True)
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def test_off_inside_back_after_nesting_and_errors():
    with C.collector_paused():
        assert not gc.isenabled()
        with C.collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer use still runs
    assert gc.isenabled()
    with pytest.raises(RuntimeError):
        with C.collector_paused():
            raise RuntimeError("boom")
    assert gc.isenabled()


def test_left_off_when_it_was_off():
    gc.disable()
    with C.collector_paused():
        pass
    assert not gc.isenabled()


def test_on_after_a_compilation_and_a_failing_one():
    seen = []
    original = C.Specialisation

    def spy(*args, **kwargs):
        seen.append(gc.isenabled())
        return original(*args, **kwargs)

    C.Specialisation = spy
    try:
        f = s2s.jit(lambda x: np.sin(x) * 2.0)
        np.testing.assert_allclose(f(np.arange(3.0)), np.sin(np.arange(3.0)) * 2.0)
        with pytest.raises(TypeError):
            s2s.jit(lambda x: x + 1.0)(object())  # refused while typing the signature
    finally:
        C.Specialisation = original
    assert seen == [False]
    assert gc.isenabled()
