"""Data-parallel gradients on Dask: a loss summed over the row blocks of data.

For a loss that is a sum over rows, ``loss(params, X, y) = sum_i l(params,
x_i, y_i)``, the value and gradient over all the data are the sums over row
blocks of each block's value and gradient, so each block's can be computed
where the block lives::

    vg = s2s.jit(s2s.value_and_grad(loss))       # made once, on the client
    chunks = s2s.data_parallel.row_chunks(client, X, y)   # dask arrays, kept on the workers
    value, grad = s2s.data_parallel.value_and_grad_sum(client, vg, params, chunks)

Each step sends ``params`` once to every worker (``client.scatter(...,
broadcast=True)``), runs ``vg(params, *block)`` on the worker holding the
block (the jitted function travels as ``jit(value_and_grad(loss))`` and is
compiled once per worker process, ``s2s/core/travel.py``), and sums the results by
a tree of sums (``split_every`` at a time, on the workers), so the client
receives one ``(value, grad)``.  Nothing here imports Dask: ``client`` is a
``dask.distributed.Client`` (anything with its ``scatter``, ``submit`` and
``compute``).

Contract:

* ``row_chunks(client, *arrays)``: dask arrays chunked alike along axis 0
  (one chunk along every other axis), or numpy arrays (sent as one block);
  returns one tuple of futures per row block, computed once and held in the
  workers' memory while the list lives.
* ``value_and_grad_sum(client, fun, params, chunks, split_every=8)``: the sum
  over ``chunks`` of ``fun(params, *chunk)`` (pytrees summed leaf by leaf), as
  a local value.  An error raised by ``fun`` on a worker is raised here.
* ``tree_sum(client, futures, split_every=8)``: a future of the leafwise sum of
  the futures' values (pytrees of the same structure).
"""
from __future__ import annotations

from s2s_runtime.tree import tree_map


def row_chunks(client, *arrays):
    if not arrays:
        raise TypeError("row_chunks needs at least one array")
    blocks = []
    for a in arrays:
        if hasattr(a, "to_delayed"):  # a dask array
            if any(len(c) != 1 for c in a.chunks[1:]):
                raise ValueError(f"row_chunks: an array of chunks {a.chunks} is split along "
                                 "an axis other than the rows; rechunk it to one chunk there "
                                 "(a.rechunk({1: -1, ...}))")
            blocks.append((a.chunks[0], list(a.to_delayed().ravel())))
        else:
            blocks.append((None, [a]))
    rows = {b[0] for b in blocks if b[0] is not None}
    if len(rows) > 1:
        raise ValueError(f"row_chunks: the arrays are chunked differently along axis 0: "
                         f"{sorted(rows)}")
    counts = {len(b[1]) for b in blocks}
    if len(counts) > 1:
        raise ValueError("row_chunks: numpy arrays (one block) mixed with dask arrays of "
                         "several blocks")
    lazy = [b[1] for b in blocks]
    computed = client.compute([x for parts in lazy for x in parts if hasattr(x, "dask")])
    it = iter(computed)
    per_array = [[next(it) if hasattr(x, "dask") else client.scatter(x, hash=False) for x in parts]
                 for parts in lazy]
    return list(zip(*per_array))


def _leafwise_sum(*trees):
    """The leafwise sum of pytrees of one structure (runs on a worker)."""
    if len(trees) == 1:
        return trees[0]
    return tree_map(lambda *xs: sum(xs[1:], xs[0]), trees[0], *trees[1:])


def tree_sum(client, futures, split_every: int = 8):
    if split_every < 2:
        raise ValueError(f"tree_sum: split_every must be at least 2, got {split_every}")
    return _reduced(client, futures, split_every)[0]


def _reduced(client, futures, split_every):
    """``(root, every future of the tree)``: a caller that waits for ``root`` holds the
    rest, so that a partial sum lost with a dying worker can be computed again (a
    future the client has released is forgotten, and its dependents are cancelled)."""
    level = list(futures)
    if not level:
        raise ValueError("tree_sum of no futures")
    held = list(level)
    while len(level) > 1:
        level = [client.submit(_leafwise_sum, *level[i:i + split_every], pure=False)
                 if len(level[i:i + split_every]) > 1 else level[i]
                 for i in range(0, len(level), split_every)]
        held += level
    return level[0], held


def value_and_grad_sum(client, fun, params, chunks, split_every: int = 8):
    # the whole pytree once to every worker, under a new key: equal parameters scattered
    # again while the last copy is being released would lose it (hash=True's shared key)
    [shared] = client.scatter([params], broadcast=True, hash=False)
    parts = [client.submit(fun, shared, *chunk, pure=False) for chunk in chunks]
    if split_every < 2:
        raise ValueError(f"tree_sum: split_every must be at least 2, got {split_every}")
    root, held = _reduced(client, parts, split_every)
    total = root.result()
    del held, shared  # released only once the sum has arrived
    return total
