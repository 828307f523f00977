"""``grad`` of a function whose output is not a real scalar raises JAX's TypeError, in
Python mode and under ``jit`` alike (never a zero gradient)."""
import numpy as np
import pytest

import s2s

BAD_OUTPUTS = {
    "none": (lambda x: None, "Output was None"),
    "str": (lambda x: "a", "Output was 'a'"),
    "tuple": (lambda x: (x, 2.0 * x), "Output was a tuple of 2"),
    "ragged_tuple": (lambda x: (x, np.ones(3) * x), "Output was a tuple of 2"),
    "list": (lambda x: [x], "Output was a list of 1"),
    "int": (lambda x: 1, "real-valued outputs"),
    "bool": (lambda x: x > 1.0, "real-valued outputs"),
    "np_int": (lambda x: np.int64(3), "real-valued outputs"),
    "vector": (lambda x: np.ones(2) * x, "scalar-output"),
}


@pytest.mark.parametrize("mode", ["python", "jit"])
@pytest.mark.parametrize("name", sorted(BAD_OUTPUTS))
def test_a_non_scalar_output_is_a_type_error(name, mode):
    fn, text = BAD_OUTPUTS[name]
    g = s2s.grad(fn) if mode == "python" else s2s.jit(s2s.grad(fn))
    with pytest.raises(TypeError, match=text):
        g(1.5)


@pytest.mark.parametrize("mode", ["python", "jit"])
def test_a_real_scalar_output_still_differentiates(mode):
    fn = lambda x: np.sin(x) * x  # noqa: E731
    g = s2s.grad(fn) if mode == "python" else s2s.jit(s2s.grad(fn))
    x, eps = 1.5, 1e-6
    assert np.isclose(g(x), (fn(x + eps) - fn(x - eps)) / (2 * eps), rtol=1e-8)
