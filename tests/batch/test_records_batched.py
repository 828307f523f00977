"""Namedtuples and dataclasses in batched derivative code (``vmap(grad(f))``,
``jit(vmap(grad(f)))``): the cotangent of a field read (``rt.getattr_vjp``), a record's
fields as a tuple (``record_fields``, ``tuple(out)``) and a field of a tangent
(``field_tangent``) run on the whole batch, a record the same for every example lifted
first.  Per-example gradients against central differences of the primal."""
import dataclasses
from collections import namedtuple

import numpy as np
import pytest

import s2s

from tests.grad.oracles import fd_grad

RNG = np.random.default_rng(5)
Params = namedtuple("Params", "w b")
Out = namedtuple("Out", "val aux")


@dataclasses.dataclass
class DataParams:
    w: np.ndarray
    b: np.ndarray


XS, YS = RNG.normal(size=(4, 3)), RNG.normal(size=(4, 2))
W, B = RNG.normal(size=(3, 2)), RNG.normal(size=2)


def loss(p, x, y):
    out = Out(np.sum((np.tanh(x @ p.w + p.b) - y) ** 2), x[0])
    value, aux = tuple(out)  # the record's fields as a tuple
    return out.val + 0.0 * aux * value


@pytest.mark.parametrize("record", [Params, DataParams], ids=["namedtuple", "dataclass"])
@pytest.mark.parametrize("compiled", [False, True], ids=["python", "jit"])
def test_per_example_gradients_through_records(record, compiled):
    p = record(W, B)
    wrap = s2s.jit if compiled else (lambda f: f)
    by_x = wrap(s2s.vmap(s2s.grad(loss, argnums=1), in_axes=(None, 0, 0)))(p, XS, YS)
    np.testing.assert_allclose(by_x, np.stack([fd_grad(loss, (p, x, y), 1)
                                               for x, y in zip(XS, YS)]), rtol=1e-6, atol=1e-8)
    by_p = wrap(s2s.vmap(s2s.grad(loss), in_axes=(None, 0, 0)))(p, XS, YS)
    for field in ("w", "b"):
        want = np.stack([getattr(fd_grad(loss, (Params(W, B), x, y), 0), field)
                         for x, y in zip(XS, YS)])  # (the oracle walks namedtuples)
        np.testing.assert_allclose(getattr(by_p, field), want, rtol=1e-6, atol=1e-8)


def test_tangents_of_records_batched():
    p, t = Params(W, B), Params(np.ones_like(W), np.zeros_like(B))
    got = s2s.vmap(lambda x, y: s2s.jvp(lambda q: loss(q, x, y), (p,), (t,))[1])(XS, YS)
    want = [np.sum(fd_grad(loss, (p, x, y), 0).w) for x, y in zip(XS, YS)]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
