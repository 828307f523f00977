"""``s2s.vmap``'s interface against JAX's semantics: in_axes/out_axes forms (ints,
None, negative axes, pytree prefixes), batch-size errors, nesting, keyword and
default arguments, the opt-in loop fallback, and errors that name the primitive
or construct and the user's line."""
import numpy as np
import pytest

import s2s
from s2s.batch.transform import BatchingError
from tests.batch.loop import assert_close, loop

rng = np.random.default_rng(3)


def affine(w, x, b):
    return np.dot(w, x) + b


def tree_fn(p, x):
    return {"y": p["w"] * x + p["b"], "s": np.sum(x) * p["w"]}


def scale(x, s=2.0):
    return x * s


def uses_lexsort(x):  # (np.lexsort has no batching rule nor a definition vmap reads)
    return np.lexsort(x)


def breaks(x):
    s = 0.0
    for i in range(5):
        s = s + x
        if s > 1.0:
            break
    return s


def trip_count(x, n):
    s = 0.0
    for i in range(n):
        s = s + x
    return s


def constant(x):
    return np.ones(3)


@pytest.mark.parametrize("in_axes", [(None, 0, None), (None, -1, None), (0, 1, None),
                                     [None, 0, 0], (-2, None, -1)])
def test_in_axes_forms(in_axes):
    w, x, b = rng.normal(size=(3, 4)), rng.normal(size=(4, 3)), rng.normal(size=3)
    sizes = {(None, 0, None): (w, rng.normal(size=(5, 4)), b),
             (None, -1, None): (w, x, b),
             (0, 1, None): (rng.normal(size=(5, 3, 4)), rng.normal(size=(4, 5)), b),
             (-2, None, -1): (rng.normal(size=(3, 5, 4)), rng.normal(size=4),
                              rng.normal(size=(3, 5)))}
    args = sizes.get(tuple(in_axes), (w, rng.normal(size=(5, 4)), rng.normal(size=(5, 3))))
    assert_close(s2s.vmap(affine, in_axes=in_axes)(*args), loop(affine, args, tuple(in_axes)))


def test_in_axes_dict_prefix_and_tree_output():
    p = {"w": rng.normal(size=5), "b": 0.5}
    x = rng.normal(size=(5, 3))
    in_axes = ({"w": 0, "b": None}, 0)
    assert_close(s2s.vmap(tree_fn, in_axes=in_axes)(p, x), loop(tree_fn, (p, x), in_axes))


def test_out_axes_tree_and_none():
    x = rng.normal(size=(4, 3))
    f = lambda x: (x * 2.0, np.sum(x))  # noqa: E731
    got = s2s.vmap(f, out_axes=(1, 0))(x)
    want = loop(f, (x,))
    assert_close(got, (want[0].T, want[1]))
    unb = s2s.vmap(lambda x, c: c * 2.0, in_axes=(0, None), out_axes=None)(x, np.ones(2))
    assert_close(unb, np.ones(2) * 2.0)
    assert_close(s2s.vmap(constant)(x), np.ones((4, 3)))  # unbatched result broadcast


def test_inconsistent_sizes_and_nothing_mapped():
    with pytest.raises(ValueError, match="inconsistent sizes"):
        s2s.vmap(affine, in_axes=(None, 0, 0))(np.ones((3, 4)), np.ones((5, 4)), np.ones((6, 3)))
    with pytest.raises(ValueError, match="at least one non-None"):
        s2s.vmap(affine, in_axes=None)(np.ones((3, 4)), np.ones(4), np.ones(3))
    with pytest.raises(ValueError, match="rank"):
        s2s.vmap(affine, in_axes=(None, 2, None))(np.ones((3, 4)), np.ones(4), np.ones(3))
    with pytest.raises(ValueError, match="in_axes"):
        s2s.vmap(affine, in_axes=(0, 0))(np.ones((3, 4)), np.ones(4), np.ones(3))


def test_nested_vmap_is_an_outer_product_of_batches():
    a, b = rng.normal(size=4), rng.normal(size=(5, 3))
    f = lambda x, y: np.sin(x) * y  # noqa: E731
    got = s2s.vmap(s2s.vmap(f, in_axes=(0, None)), in_axes=(None, 0))(a, b)
    want = np.array([[f(x, y) for x in a] for y in b])
    assert_close(got, want)
    m = rng.normal(size=(2, 3, 4))
    got = s2s.vmap(s2s.vmap(lambda v: np.sum(v ** 2), in_axes=1), in_axes=0)(m)
    assert_close(got, np.sum(m ** 2, axis=1))
    got = s2s.vmap(s2s.vmap(s2s.vmap(lambda v: v * 2.0)))(m)
    assert_close(got, m * 2.0)


def star_args(*xs):
    return xs[0] * xs[1] + len(xs)


def test_star_args_are_positional_arguments():
    a, b = rng.normal(size=4), rng.normal(size=(4, 2))
    assert_close(s2s.vmap(star_args)(a, b), loop(star_args, (a, b)))
    assert_close(s2s.vmap(star_args, in_axes=(0, None))(a, b[0]), loop(star_args, (a, b[0]),
                                                                      (0, None)))


def test_keywords_and_defaults():
    x = rng.normal(size=(4, 3))
    assert_close(s2s.vmap(scale)(x), x * 2.0)
    assert_close(s2s.vmap(scale)(x, s=np.full(4, 3.0)), x * 3.0)
    # as JAX: in_axes covers the positional arguments, a keyword argument is mapped on 0
    s = rng.normal(size=4)
    assert_close(s2s.vmap(scale, in_axes=(1,))(x.T, s=s), x * s[:, None])
    assert_close(s2s.vmap(scale, in_axes=1)(x.T, s=s), x * s[:, None])


def test_unbatchable_primitive_names_it_and_the_line_and_loop_fallback_works():
    x = rng.normal(size=(3, 4))
    with pytest.raises(BatchingError, match=r"np\.lexsort") as err:
        s2s.vmap(uses_lexsort)(x)
    assert "test_api.py" in str(err.value) and "np.lexsort(x)" in str(err.value)
    assert_close(s2s.vmap(uses_lexsort, fallback="loop")(x), loop(uses_lexsort, (x,)))


def test_control_flow_per_example_is_masked():
    x = rng.uniform(0.1, 0.5, size=6)
    # a break under a condition that differs per example: the loop runs on flags
    assert_close(s2s.vmap(breaks)(x), loop(breaks, (x,)))
    assert_close(s2s.vmap(breaks, fallback="loop")(x), loop(breaks, (x,)))
    # a range whose bound differs per example is a masked loop
    assert_close(s2s.vmap(trip_count)(x, np.array([1, 2, 3, 1, 2, 3])),
                 x * np.array([1, 2, 3, 1, 2, 3]))
    assert_close(s2s.vmap(trip_count, in_axes=(0, None))(x, 3), 3 * x)


def test_generated_code_is_deterministic():
    from s2s.cli.dump_vmap import vmap_source
    a = vmap_source(affine, [np.ones((3, 4)), np.ones(4), np.ones(3)], "None,0,None")
    b = vmap_source(affine, [np.ones((3, 4)), np.ones(4), np.ones(3)], "None,0,None")
    assert a == b and "def vmap_affine(w, x, b):" in a and "rt.batch_contract" in a
