"""``del`` in transformed code: ``del d[k]`` and ``del lst[i]`` as ``pop`` (the same change
and errors), ``del name`` as nothing where no later line or loop iteration reads the name;
a ``del`` of a name that may be read again is refused by name.  Oracle: central
differences of the function run by Python."""
import numpy as np
import pytest

import s2s

from .oracles import fd_grad

X = np.array([0.4, 1.3])


def del_temporary(x):
    t = x * 2
    y = np.sum(t ** 2)
    del t
    return y


def del_dict_entry(x):
    d = {"a": x, "b": x * 2}
    del d["a"]
    return np.sum(d["b"] ** 2) + len(d)


def del_list_item(x):
    lst = [x[0], x[1] * 3, x[0] * x[1]]
    del lst[1]
    return lst[0] * lst[1] + len(lst)


def del_in_a_loop(x):
    s = 0.0
    for i in range(3):
        t = x * (i + 1)
        s = s + np.sum(np.sin(t))
        del t
    return s


@pytest.mark.parametrize("f", [del_temporary, del_dict_entry, del_list_item, del_in_a_loop])
def test_del_statements(f):
    want = fd_grad(f, (X,), 0)
    np.testing.assert_allclose(s2s.grad(f)(X), want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(s2s.jit(s2s.grad(f))(X), want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(s2s.jit(f)(X), f(X), rtol=1e-14)


def read_after(x):
    t = x * 2
    del t
    t = x * 3
    return np.sum(t)


def read_next_iteration(x):
    t = x
    s = 0.0
    for _ in range(2):
        s = s + np.sum(t)
        del t
        t = x * 2
    return s


@pytest.mark.parametrize("f", [read_after, read_next_iteration])
def test_del_of_a_name_read_again_is_refused(f):
    with pytest.raises(s2s.S2SError, match="'del' statement of 't', which a later line or "
                                           "loop iteration may read"):
        s2s.grad(f)(X)
