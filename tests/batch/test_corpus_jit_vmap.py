"""The gradient corpus through ``jit(vmap(f))`` and ``jit(vmap(grad(f)))`` (slow: one
compiled kernel per case): each batchable case either compiles and equals ``vmap``'s
Python result, or is refused with a clear error (an ``S2SError`` naming the construct,
or jit's ``TypeError`` for an argument kind it does not take) -- never a wrong value
or a crash.  The counts guard against regressions (before issue 8 item 3: 89 primal
and 69 gradient cases compiled)."""
import warnings

import numpy as np
import pytest

import s2s
from tests.batch.loop import assert_close
from tests.batch.test_corpus_vmap import CORPUS, UNBATCHABLE, _is_float, _perturbed, _stack
from tests.grad import oracles


def _cases():
    for case in CORPUS:
        if case.id in UNBATCHABLE:
            continue
        rng = np.random.default_rng(0)
        batches = [_perturbed(case.args, rng) for _ in range(3)]
        mapped = [any(map(_is_float, oracles.flatten(a)[0])) for a in case.args]
        args = [_stack([b[i] for b in batches]) if m else a
                for i, (a, m) in enumerate(zip(case.args, mapped))]
        yield case, args, tuple(0 if m else None for m in mapped)


@pytest.mark.slow
@pytest.mark.parametrize("mode,at_least", [("primal", 110), ("grad", 105)])
def test_corpus_compiles_under_jit_of_vmap_or_is_refused_clearly(mode, at_least):
    compiled = 0
    for case, args, in_axes in _cases():
        f = case.fn if mode == "primal" else s2s.grad(case.fn, argnums=case.argnums)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                want = s2s.vmap(f, in_axes=in_axes)(*args)
            except Exception:  # not batchable in Python mode either (test_corpus_vmap)
                continue
            try:
                got = s2s.jit(s2s.vmap(f, in_axes=in_axes))(*args)
            except (s2s.S2SError, TypeError) as exc:
                assert "jit" in str(exc) or "vmap" in str(exc), (case.id, exc)
                continue
        assert_close(got, want, rtol=1e-9, atol=1e-12)
        compiled += 1
    assert compiled >= at_least
