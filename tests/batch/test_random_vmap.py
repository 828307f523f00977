"""Random programs (``tests/grad/progen.py``: branches, helpers, unpacking, in-place
updates, arrays) through vmap: the batched program on a batch of inputs equals the
program run on each input in a Python loop, and vmap of the generated gradient code
equals the gradients computed one input at a time (the gradients themselves are
checked against finite differences by ``tests/grad/test_random_programs.py``)."""
import copy
import math
import warnings

import numpy as np
from hypothesis import given, settings, strategies as st

import s2s
from tests.grad import progen
from tests.grad.test_random_programs import SCALE, SETTINGS, _args

N = 3


def _batch(prog, data):
    return [_args(prog, data) for _ in range(N)]


def _stack(values):
    if isinstance(values[0], dict):
        return {k: np.array([v[k] for v in values]) for k in values[0]}
    return np.stack([np.asarray(v, dtype=float) for v in values])


def _check(prog, batch, grads=True):
    raw = progen.load(prog.source)
    stacked = [_stack([b[i] for b in batch]) for i in range(len(batch[0]))]
    what = "\n" + prog.source + f"\nbatch={batch!r}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = [raw(*copy.deepcopy(b)) for b in batch]
        except (ArithmeticError, ValueError):
            return
        if not all(math.isfinite(float(w)) for w in want):
            return
        got = s2s.vmap(raw)(*copy.deepcopy(stacked))
        np.testing.assert_allclose(got, np.array(want, dtype=float), rtol=1e-12, atol=1e-12,
                                   err_msg=what)
        if not grads:
            return
        argnums = tuple(range(len(batch[0])))
        one = [s2s.grad(raw, argnums=argnums)(*copy.deepcopy(b)) for b in batch]
        many = s2s.vmap(s2s.grad(raw, argnums=argnums))(*copy.deepcopy(stacked))
    for i in argnums:
        per = [one[k][i] for k in range(N)]
        if isinstance(per[0], dict):
            for key in per[0]:
                np.testing.assert_allclose(many[i][key], [p[key] for p in per],
                                           rtol=1e-10, atol=1e-12, err_msg=what)
        else:
            np.testing.assert_allclose(many[i], np.stack([np.asarray(p) for p in per]),
                                       rtol=1e-10, atol=1e-12, err_msg=what)


@settings(max_examples=25 * SCALE, **SETTINGS)
@given(st.data())
def test_vmap_of_random_scalar_programs(data):
    prog = data.draw(progen.scalar_program(), label="program")
    _check(prog, _batch(prog, data))


@settings(max_examples=10 * SCALE, **SETTINGS)
@given(st.data())
def test_vmap_of_random_dict_programs(data):
    prog = data.draw(progen.scalar_program(dict_input=True), label="program")
    _check(prog, _batch(prog, data))


@settings(max_examples=25 * SCALE, **SETTINGS)
@given(st.data())
def test_vmap_of_random_array_programs(data):
    prog = data.draw(progen.array_program(), label="program")
    _check(prog, _batch(prog, data))
