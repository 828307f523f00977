"""s2s on a dask.distributed LocalCluster of two worker processes (started and closed
here): data-parallel gradients and ensembles equal the single-process results, a
worker lost mid-computation is survived, bad input raises the same error here."""
from __future__ import annotations

import functools

import numpy as np
import pytest

import s2s
from s2s.data_parallel import row_chunks, tree_sum, value_and_grad_sum

import receiver
import travel_fns as T

distributed = pytest.importorskip("dask.distributed")
da = pytest.importorskip("dask.array")
db = pytest.importorskip("dask.bag")

# made here and compiled here first: the workers load the object code from the disk cache
vg = s2s.jit(s2s.value_and_grad(T.loss), cache=True)
rk4_grad = s2s.jit(s2s.grad(T.rk4_decay, argnums=(0, 1)), cache=True)


@pytest.fixture(scope="module")
def client():
    rng = np.random.default_rng(1)
    vg(np.zeros(3), rng.standard_normal((4, 3)), np.ones(4))
    rk4_grad(0.5, 1.0, 4)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        yield c


def data(rows=6000, chunks=1500, seed=2):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((rows, 3))
    y = (rng.random(rows) < 1 / (1 + np.exp(-X @ [0.5, -1.0, 2.0]))).astype(float)
    return X, y, da.from_array(X, chunks=(chunks, 3)), da.from_array(y, chunks=chunks)


def test_data_parallel_gradient_equals_one_process(client):
    X, y, Xd, yd = data()
    chunks = row_chunks(client, Xd, yd)
    assert len(chunks) == 4
    w = np.array([0.1, -0.2, 0.3])
    value, grad = value_and_grad_sum(client, vg, w, chunks, split_every=2)
    v1, g1 = vg(w, X, y)
    np.testing.assert_allclose(value, v1, rtol=1e-12)
    np.testing.assert_allclose(grad, g1, rtol=1e-11, atol=1e-11)
    h = 1e-6  # and the gradient is the loss's: central differences in float64
    fd = [(T.loss(w + h * e, X, y) - T.loss(w - h * e, X, y)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(grad, fd, rtol=1e-6)
    # a few gradient steps driven from here reach what the same steps reach here
    wd, wl = np.zeros(3), np.zeros(3)
    for _ in range(3):
        wd = wd - 1e-4 * value_and_grad_sum(client, vg, wd, chunks)[1]
        wl = wl - 1e-4 * vg(wl, X, y)[1]
    np.testing.assert_allclose(wd, wl, rtol=1e-10)


def test_each_worker_compiles_once(client):
    X, y, Xd, yd = data(seed=3)
    chunks = row_chunks(client, Xd, yd)
    for k in range(3):
        value_and_grad_sum(client, vg, np.full(3, 0.1 * k), chunks)

    def compiled():
        from s2s.core import travel
        return sorted(len(o.specs) for o in travel._ARRIVED.values()
                      if type(o).__name__ == "Jitted")

    per_worker = client.run(compiled)
    assert per_worker and all(n == [1] for n in per_worker.values()), per_worker


def test_ensembles_by_map_bag_and_vmap_equal_one_process(client):
    ks = np.linspace(0.2, 3.0, 12)
    want = [rk4_grad(k, 1.3, 16) for k in ks]
    got = client.gather(client.map(rk4_grad, list(ks), [1.3] * 12, [16] * 12))
    np.testing.assert_allclose(got, want, rtol=1e-14)
    bag = db.from_sequence(list(ks), npartitions=4).map(rk4_grad, 1.3, 16).compute()
    np.testing.assert_allclose(bag, want, rtol=1e-14)
    h = 1e-6  # the derivative in k: central differences of the simulation
    np.testing.assert_allclose([g[0] for g in got],
                               [(T.rk4_decay(k + h, 1.3, 16) - T.rk4_decay(k - h, 1.3, 16))
                                / (2 * h) for k in ks], rtol=1e-6)
    batched = s2s.vmap(s2s.grad(T.poly))
    blocks = np.array_split(np.random.default_rng(4).standard_normal((10, 3)), 3)
    got = np.concatenate(client.gather(client.map(batched, blocks)))
    np.testing.assert_allclose(got, np.concatenate([batched(b) for b in blocks]), rtol=1e-13)


def _error(fn, *args):
    try:
        fn(*args)
    except Exception as exc:  # noqa: BLE001
        return exc
    raise AssertionError("no error")


def test_bad_input_raises_the_same_error_here(client):
    X, y, _, _ = data(rows=20, chunks=20)
    cases = [(vg, (np.array([1, 2, 3]), X, y)),       # jit: an integer w
             (s2s.grad(T.loss), (np.array([1, 2, 3]), X, y)),
             (s2s.jit(T.bad_loop), (np.ones(2),)),     # IndexError inside compiled code
             (s2s.grad(lambda x: np.sum(x) + undefined_name), (np.ones(2),))]  # noqa: F821
    for fn, args in cases:
        here = _error(fn, *args)
        with pytest.raises(type(here)) as there:
            client.submit(fn, *args, pure=False).result()
        assert str(there.value) == str(here)
        if isinstance(here, s2s.S2SError):
            assert there.value.loc == here.loc and "test_cluster.py" in str(here)


def test_a_worker_dying_mid_computation_is_survived(client, tmp_path):
    X, y, Xd, yd = data(seed=5)
    chunks = row_chunks(client, Xd, yd)
    w = np.array([0.3, 0.1, -0.4])
    marker = str(tmp_path / "died")
    dies = functools.partial(receiver.dies_once, marker, vg)  # the first task kills its worker
    before = set(client.run(lambda: 0))
    value, grad = value_and_grad_sum(client, dies, w, chunks)
    v1, g1 = vg(w, X, y)
    assert (tmp_path / "died").exists()
    np.testing.assert_allclose(value, v1, rtol=1e-12)
    np.testing.assert_allclose(grad, g1, rtol=1e-11, atol=1e-11)
    client.wait_for_workers(2, timeout=60)
    assert set(client.run(lambda: 0)) != before  # one worker process was replaced


def test_tree_sum_of_pytrees(client):
    parts = [client.scatter([{"a": np.full(2, float(i)), "b": (i, 2.0 * i)}])[0] for i in range(7)]
    total = tree_sum(client, parts, split_every=3).result()
    np.testing.assert_array_equal(total["a"], [21.0, 21.0])
    assert total["b"] == (21, 42.0)
    with pytest.raises(ValueError, match="split_every"):
        tree_sum(client, parts, split_every=1)
