"""The gradient corpus (``tests/grad/corpus.py``, ``corpus_control.py``) through vmap:

* ``vmap(f)`` over a batch of perturbed inputs equals a Python loop over them,
  or (for the cases listed in ``UNBATCHABLE``, whose control flow or containers
  differ per example) raises a clear error naming the construct;
* ``jacfwd``/``jacrev`` built as one batched call equal central finite
  differences (the gradient of these scalar functions), or fall back to the
  loop (never a wrong value).
"""
import warnings

import numpy as np
import pytest

import s2s
from s2s.api.batched_jacobians import jacfwd_batched, jacrev_batched
from tests.batch.loop import assert_close
from tests.grad import oracles
from tests.grad.corpus import CASES

#: corpus cases that cannot be batched, and the words of the error they raise
UNBATCHABLE = {
    "more_linspace_full": "shape differs per example",
    # an example takes a 'raise' inside a try that catches it (batched code raises)
    "cf_try_seed-4": "'raise'", "cf_try_else-big": "'raise'", "cf_try_in_loop": "'raise'",
    "cf_finally-raised": "'raise'",
    "cf_slice_and_mask_writes": "boolean mask",
    "cf_list_methods": "no batching rule",
}


def _is_float(v):
    return isinstance(v, (float, np.ndarray, np.floating)) and np.issubdtype(
        np.asarray(v).dtype, np.floating)


def _perturbed(args, rng):
    out = []
    for a in args:
        leaves, build = oracles.flatten(a)
        out.append(build([v + 0.03 * rng.normal(size=np.shape(v)) if _is_float(v) else v
                          for v in leaves]))
    return tuple(out)


def _stack(trees):
    leaves = [oracles.flatten(t)[0] for t in trees]
    build = oracles.flatten(trees[0])[1]
    return build([np.stack([np.asarray(ls[j]) for ls in leaves]) for j in range(len(leaves[0]))])


CORPUS = [c for c in CASES if not c.kwargs]


@pytest.mark.parametrize("case", CORPUS, ids=[c.id for c in CORPUS])
def test_vmap_of_corpus_function_matches_a_loop(case):
    rng = np.random.default_rng(0)
    batches = [_perturbed(case.args, rng) for _ in range(3)]
    mapped = [any(map(_is_float, oracles.flatten(a)[0])) for a in case.args]
    args = [_stack([b[i] for b in batches]) if m else a
            for i, (a, m) in enumerate(zip(case.args, mapped))]
    in_axes = tuple(0 if m else None for m in mapped)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if case.id in UNBATCHABLE:
            with pytest.raises((s2s.S2SError, ValueError, TypeError),
                               match=UNBATCHABLE[case.id]):
                s2s.vmap(case.fn, in_axes=in_axes)(*args)
            return
        want = [case.fn(*b) for b in batches]
        got = s2s.vmap(case.fn, in_axes=in_axes)(*args)
    assert_close(got, _stack(want), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("build", [jacfwd_batched, jacrev_batched], ids=["jacfwd", "jacrev"])
def test_batched_jacobians_of_corpus_match_finite_differences(build):
    checked = 0
    for case in CORPUS:
        nums = (case.argnums,) if isinstance(case.argnums, int) else tuple(case.argnums)
        try:
            want = oracles.fd_grad(case.fn, case.args, case.argnums)
        except ValueError:  # too large for entrywise finite differences
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = build(case.fn, case.args, nums, isinstance(case.argnums, int))
        if got is None:  # not batchable: jacfwd/jacrev push the basis one by one
            continue
        oracles.assert_tree_close(got, want, rtol=1e-5, atol=1e-6, what=case.id)
        checked += 1
    assert checked >= 150  # most of the corpus is batched, not looped


def test_per_example_gradients_of_corpus_match_finite_differences():
    """``vmap(grad(f))`` (the generated gradient code batched) on two examples per case
    equals central finite differences per example; cases whose gradient code cannot
    be batched (trip counts or containers that differ per example) raise a clear
    error instead."""
    batched = 0
    for case in CORPUS:
        rng = np.random.default_rng(0)
        batches = [_perturbed(case.args, rng) for _ in range(2)]
        mapped = [any(map(_is_float, oracles.flatten(a)[0])) for a in case.args]
        args = [_stack([b[i] for b in batches]) if m else a
                for i, (a, m) in enumerate(zip(case.args, mapped))]
        try:
            want = [oracles.fd_grad(case.fn, b, case.argnums) for b in batches]
        except ValueError:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                got = s2s.vmap(s2s.grad(case.fn, argnums=case.argnums),
                               in_axes=tuple(0 if m else None for m in mapped))(*args)
            except (s2s.S2SError, ValueError) as exc:
                assert "vmap" in str(exc), (case.id, exc)
                continue
        oracles.assert_tree_close(got, _stack(want), rtol=1e-5, atol=1e-6, what=case.id)
        batched += 1
    assert batched >= 130


def test_vmap_of_a_comprehension_whose_length_differs_per_example_is_refused():
    from tests.grad.corpus_control import cf_list_comprehension
    xs = np.array([[0.5, -1.0, 0.2], [0.5, 0.3, 0.2]])  # the filter keeps 2 and 3 items
    with pytest.raises(Exception, match="containers of different lengths"):
        s2s.vmap(cf_list_comprehension)(xs)
