"""Every corpus function (tests/grad/corpus*.py) either runs under jit with Python's
results, or is refused with a clear error (an s2s error naming the construct and the
line, or a TypeError naming the argument jit cannot take) -- never a wrong result or
a crash.  The compiled share is pinned from below so the subset cannot silently shrink."""
from __future__ import annotations

import numpy as np
import pytest

import s2s
from s2s_runtime.tree import tree_leaves
from tests.grad import corpus, corpus_control  # noqa: F401  (registers the cases)

CASES = []
_seen = set()
for _c in corpus.CASES:
    if _c.fn not in _seen:
        _seen.add(_c.fn)
        CASES.append(_c)

COMPILED = []


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_corpus_primal(case):
    try:
        want = case.fn(*case.args, **case.kwargs)
    except Exception:
        pytest.skip("the Python function itself raises on these inputs")
    try:
        got = s2s.jit(case.fn)(*case.args, **case.kwargs)
    except s2s.S2SError as e:
        assert "jit" in str(e) or "unsupported" in str(e)
        return
    except TypeError as e:
        assert str(e).startswith("jit: ")
        return
    w, g = tree_leaves(want), tree_leaves(got)
    assert len(w) == len(g)
    for a, b in zip(w, g):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-10, atol=1e-12)
    COMPILED.append(case.id)


def test_compiled_share():
    """Run after the parametrised cases (same module, pytest keeps order)."""
    if len(COMPILED) < 10:
        pytest.skip("run together with test_corpus_primal")
    assert len(COMPILED) >= 125, len(COMPILED)
