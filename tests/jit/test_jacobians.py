"""``jit(jacrev(f))``, ``jit(jacfwd(f))``, ``jit(hessian(f))`` as native kernels, checked
against central finite differences in float64 (first derivatives from values of ``f``,
Hessians from second differences of values) and closed forms."""
from __future__ import annotations

import numpy as np
import pytest

import s2s
from s2s.core.jit import Jitted
from s2s.backend.llvm.derivs import jacobian_ops

from . import jacobian_kernels as K

RNG = np.random.default_rng(7)
X5 = RNG.normal(size=5)
MODES = [s2s.jacrev, s2s.jacfwd]


def _plus(args, argnum, step):
    args = list(args)
    x = args[argnum]
    args[argnum] = x + step if np.ndim(x) else float(x + step)
    return args


def fd_jacobian(f, args, argnum, h=1e-6):
    """JAX's layout: per output leaf, ``out.shape + in.shape``, by central differences."""
    x = np.asarray(args[argnum], dtype=np.float64)
    out = f(*args)
    leaves = out if isinstance(out, tuple) else (out,)
    blocks = [np.zeros(np.shape(o) + x.shape) for o in leaves]
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = h
        e = e.reshape(x.shape) if x.ndim else e[0]
        up, down = f(*_plus(args, argnum, e)), f(*_plus(args, argnum, -e))
        up = up if isinstance(up, tuple) else (up,)
        down = down if isinstance(down, tuple) else (down,)
        for blk, u, d in zip(blocks, up, down):
            blk.reshape(np.shape(u) + (-1,))[..., k] = (np.asarray(u) - np.asarray(d)) / (2 * h)
    return tuple(blocks) if isinstance(out, tuple) else blocks[0]


def fd_hessian(f, args, a, b, h=1e-4):
    """d2 f / d args[a] d args[b] of a scalar ``f`` by second central differences."""
    xa, xb = np.asarray(args[a], float), np.asarray(args[b], float)
    H = np.zeros(xa.shape + xb.shape)
    flat = H.reshape(xa.size, xb.size)

    def step(x, k, s):
        e = np.zeros(x.size)
        e[k] = s
        return e.reshape(x.shape)

    for i in range(xa.size):
        for j in range(xb.size):
            total = 0.0
            for si, sj, sign in ((h, h, 1), (h, -h, -1), (-h, h, -1), (-h, -h, 1)):
                moved = _plus(args, a, step(xa, i, si))
                moved = _plus(moved, b, step(xb, j, sj))
                total += sign * f(*moved)
            flat[i, j] = total / (4 * h * h)
    return H


def close(got, want, rtol=1e-6, atol=1e-7):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            close(g, w, rtol, atol)
        return
    assert np.shape(got) == np.shape(want), (np.shape(got), np.shape(want))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def native(jitted: Jitted):
    """The jitted function was compiled (one kernel per signature, no Python fallback)."""
    assert jitted.specs and all(s.module.text for s in jitted.specs.values())


# -- first derivatives --------------------------------------------------------------------
CASES = [
    ("map", K.small_map, (X5,), 0),
    ("loop", K.looped, (X5, 4), 0),
    ("branches", K.branchy, (np.array([0.7, -0.3, 1.2, 0.4]),), 0),
    ("in_place", K.in_place, (np.array([0.5, 1.5, -0.7, 0.9]),), 0),
    ("scalars_a", K.scalars, (1.3, 0.4), 0),
    ("scalars_b", K.scalars, (1.3, 0.4), 1),
    ("matrix_in", K.matrix_in, (RNG.normal(size=(3, 2)), np.array([0.6, -0.2])), 0),
    ("matrix_in_v", K.matrix_in, (RNG.normal(size=(3, 2)), np.array([0.6, -0.2])), 1),
    ("pair_out", K.pair_out, (X5,), 0),
    ("two_args_y", K.two_args, (X5, RNG.normal(size=3)), 1),
    ("vector_out", K.vector_out, (X5[:3],), 0),
    ("scaled_then_written", K.scaled_then_written, (X5[:3],), 0),
    ("try_while", K.try_while, (np.array([0.7, -0.3, 1.2, 0.4]),), 0),
    ("nested_display", K.rotation_display, (np.array([0.3, -0.2, 0.5]),
                                            np.array([1.0, 2.0, -1.0])), 0),
]


@pytest.mark.parametrize("mode", MODES, ids=["jacrev", "jacfwd"])
@pytest.mark.parametrize("name,f,args,argnum", CASES, ids=[c[0] for c in CASES])
def test_jacobian_against_finite_differences(mode, name, f, args, argnum):
    jitted = s2s.jit(mode(f, argnums=argnum))
    got = jitted(*args)
    close(got, fd_jacobian(f, args, argnum))
    native(jitted)


@pytest.mark.parametrize("mode", MODES, ids=["jacrev", "jacfwd"])
def test_linear_map_is_its_matrix(mode):
    close(s2s.jit(mode(K.linear))(X5), K.W, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("mode", MODES, ids=["jacrev", "jacfwd"])
def test_argnums_tuple(mode):
    x, y = X5, RNG.normal(size=3)
    got = s2s.jit(mode(K.two_args, argnums=(0, 1)))(x, y)
    assert isinstance(got, tuple) and len(got) == 2
    close(got, (fd_jacobian(K.two_args, (x, y), 0), fd_jacobian(K.two_args, (x, y), 1)))
    swapped = s2s.jit(mode(K.two_args, argnums=(1, 0)))(x, y)
    close(swapped, (got[1], got[0]), rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("mode", MODES, ids=["jacrev", "jacfwd"])
def test_tuple_argument(mode):
    p, x = (0.7, np.array([0.2, -0.4, 1.1])), np.array([0.5, 0.1, -0.3])
    got = s2s.jit(mode(K.tuple_arg))(p, x)
    scale_col = np.cosh(0.7 * x + p[1]) ** -2 * x           # d/d scale
    shift_col = np.cosh(0.7 * x + p[1]) ** -2               # d/d shift (a vector)
    close(got, (scale_col, np.diag(shift_col)), rtol=1e-12, atol=1e-13)


def test_none_in_a_tuple_argument_is_an_empty_subtree():
    p, x = (0.7, None), np.array([0.5, 0.1, -0.3])
    got = s2s.jit(s2s.jacfwd(K.none_in_tuple))(p, x)
    assert isinstance(got, tuple) and got[1] is None
    close(got[0], 2.0 * x, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("mode", MODES, ids=["jacrev", "jacfwd"])
def test_float32(mode):
    x = X5.astype(np.float32)
    got = s2s.jit(mode(K.single_precision))(x)
    assert got.dtype == np.float32
    close(got, fd_jacobian(K.single_precision, (x.astype(np.float64),), 0), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", MODES, ids=["jacrev", "jacfwd"])
def test_strided_input_and_fresh_globals(mode, monkeypatch):
    x = np.arange(10.0)[::2] / 7.0
    jitted = s2s.jit(mode(K.linear))
    close(jitted(x), K.W, rtol=1e-14, atol=1e-15)
    monkeypatch.setattr(K, "W", K.W * 2.0)  # a free variable is read at every call
    close(jitted(x), K.W, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("mode", MODES, ids=["jacrev", "jacfwd"])
def test_empty_input(mode):
    got = s2s.jit(mode(K.vector_out))(np.zeros(0))
    assert got.shape == (0, 0)


def test_matches_python_mode_shapes_and_values():
    x = RNG.normal(size=(2, 3))
    for mode in MODES:
        for f in (lambda m: np.tanh(m) * m[0, 1], lambda m: np.sum(m * m)):
            want = mode(f)(x)
            got = s2s.jit(mode(f))(x)
            assert got.shape == want.shape == np.shape(f(x)) + x.shape
            close(got, fd_jacobian(f, (x,), 0))


# -- Hessians ------------------------------------------------------------------------------
def test_hessian_quadratic_closed_form():
    got = s2s.jit(s2s.hessian(K.quadratic))(np.array([0.3, -1.2, 0.8]))
    close(got, K.A_SYM + K.A_SYM.T, rtol=1e-13, atol=1e-13)


def test_hessian_dot_closed_form():
    got = s2s.jit(s2s.hessian(K.dot_quadratic))(np.array([0.3, -1.2, 0.8]))
    close(got, K.A_SYM + K.A_SYM.T, rtol=1e-13, atol=1e-13)


def test_hessian_loop_closed_form():
    x = np.array([0.5, -1.5, 2.0, 0.1])
    got = s2s.jit(s2s.hessian(K.cubic_loop))(x, 1.7)
    close(got, np.diag(6 * 1.7 * x), rtol=1e-13, atol=1e-13)


def test_hessian_argnums_tuple_closed_form():
    x, y = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.25, -0.5])
    (hxx, hxy), (hyx, hyy) = s2s.jit(s2s.hessian(K.mixed, argnums=(0, 1)))(x, y)
    close((hxx, hxy, hyx, hyy), (np.zeros((3, 3)), np.diag(2 * y), np.diag(2 * y), np.diag(2 * x)),
          rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("f,args", [(K.rosen, (np.array([0.3, 1.1, -0.4, 0.8]),)),
                                    (lambda x: np.sum(K.small_map(x) ** 2), (X5,)),
                                    (K.scalars, (1.3, 0.4))],
                         ids=["rosen_loop", "map_norm", "scalars"])
def test_hessian_against_second_differences(f, args):
    got = s2s.jit(s2s.hessian(f))(*args)
    close(got, fd_hessian(f, args, 0, 0), rtol=1e-5, atol=1e-5)


def test_vmapped_hessian_of_a_loop_closed_form():
    # the Hessian code inside jit(vmap(...)) writes its rows into buffers (no growing list)
    xs = np.array([[0.5, -1.5, 2.0, 0.1], [1.0, 0.3, -0.7, 2.2]])
    got = s2s.jit(s2s.vmap(s2s.hessian(K.cubic_loop), in_axes=(0, None)))(xs, 1.7)
    close(got, np.stack([np.diag(6 * 1.7 * x) for x in xs]), rtol=1e-13, atol=1e-13)


def test_jacfwd_of_jacrev_inside_jit_closed_form():
    x = np.array([0.3, -1.2, 0.8])
    got = s2s.jit(lambda x: s2s.jacfwd(s2s.jacrev(K.quadratic))(x) * 2.0)(x)
    close(got, 2.0 * (K.A_SYM + K.A_SYM.T), rtol=1e-13, atol=1e-13)


def _tuple_items(x):
    pair = (x[0] * x[1], np.sin(x[2]))
    total = 0.0
    for v in pair:  # the adjoint of each item read: getitem_vjp of a tuple
        total = total + v * v
    return total


def test_hessian_of_a_loop_over_a_tuple_against_second_differences():
    x = np.array([0.4, -0.9, 1.3])
    got = s2s.jit(s2s.hessian(_tuple_items))(x)
    close(got, fd_hessian(_tuple_items, (x,), 0, 0), rtol=1e-5, atol=1e-5)


# -- errors ---------------------------------------------------------------------------------
def test_has_aux_is_refused_by_name():
    with pytest.raises(s2s.S2SError, match="has_aux"):
        s2s.jit(s2s.jacrev(lambda x: (x * 2.0, x), has_aux=True))(X5)


def test_hessian_of_a_vector_output_is_refused():
    with pytest.raises(s2s.S2SError, match="scalar output"):
        s2s.jit(s2s.hessian(K.vector_out))(X5)


def test_complex_input_is_refused():
    with pytest.raises(s2s.S2SError, match="complex"):
        s2s.jit(s2s.jacfwd(K.vector_out))(X5 + 1j)


def test_integer_input_is_a_type_error():
    with pytest.raises(TypeError):
        s2s.jit(s2s.jacrev(K.vector_out))(np.arange(3))


def test_outside_the_subset_names_the_construct_and_line():
    with pytest.raises(s2s.S2SError) as info:
        s2s.jit(s2s.jacrev(K.with_array_list))(X5)
    assert "jacobian_kernels.py" in str(info.value) and "list" in str(info.value)


def test_dicts_inside_compile():
    got = s2s.jit(s2s.jacrev(K.with_dict))(X5)
    close(got, fd_jacobian(K.with_dict, (X5,), 0))


# -- the kernel itself ---------------------------------------------------------------------
def test_kernel_ir_is_deterministic():
    from s2s.emit.printer import format_ir
    from s2s.core.jit_jacobian import kernel_ir
    for what in ("jacrev", "jacfwd"):
        one = format_ir(kernel_ir(what, K.looped, 0, (X5, 3))[0])
        two = format_ir(kernel_ir(what, K.looped, 0, (X5, 3))[0])
        assert one == two


def test_jacrev_runs_the_forward_sweep_once():
    """The primal's matrix products sit before the loop over output rows."""
    from s2s.ir import nodes as ir
    from s2s.core.jit_jacobian import kernel_ir
    func, _ = kernel_ir("jacrev", K.small_map, 0, (X5,))
    loops = [s for s in func.body if isinstance(s, ir.For)]
    assert len(loops) == 1
    inside = {getattr(getattr(s, "value", None), "fn", None) for s in ir.walk(loops[0].body)}
    import operator
    assert operator.matmul not in inside


def test_helpers_python_meaning():
    J = jacobian_ops.jacobian_zeros(np.zeros(2), np.zeros((3,)))
    jacobian_ops.jacobian_store(J, np.array([1.0, 2.0]), 1, 3)
    assert J.tolist() == [[0, 1, 0], [0, 2, 0]]
    assert jacobian_ops.basis_vector(np.zeros((2, 2)), 3).tolist() == [[0, 0], [0, 1]]
    assert jacobian_ops.basis_vector(np.zeros(2), 5).tolist() == [0, 0]
    assert jacobian_ops.basis_count(np.zeros(0)) == 1 and jacobian_ops.leaf_size(2.0) == 1


# -- compositions ---------------------------------------------------------------------------
def test_jacobians_of_gradients_closed_form():
    x = np.array([0.3, -1.2, 0.8])
    H = K.A_SYM + K.A_SYM.T
    close(s2s.jit(s2s.jacfwd(s2s.grad(K.quadratic)))(x), H, rtol=1e-13, atol=1e-13)
    close(s2s.jit(s2s.jacrev(s2s.grad(K.quadratic)))(x), H, rtol=1e-13, atol=1e-13)
    value_row, hess = s2s.jit(s2s.jacrev(s2s.value_and_grad(K.quadratic)))(x)
    close((value_row, hess), (x @ H, H), rtol=1e-13, atol=1e-13)


def test_jacobian_of_a_jitted_function():
    close(s2s.jit(s2s.jacrev(s2s.jit(K.linear)))(X5), K.W, rtol=1e-14, atol=1e-15)


def test_nested_jacobians_are_refused_by_name():
    with pytest.raises(s2s.S2SError, match="nested"):
        s2s.jit(s2s.jacrev(s2s.jacrev(K.small_map)))(X5)


def test_disk_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("S2S_CACHE_DIR", str(tmp_path))
    got = s2s.jit(s2s.jacrev(K.small_map), cache=True)(X5)
    close(got, fd_jacobian(K.small_map, (X5,), 0))


@pytest.mark.parametrize("mode", MODES, ids=["jacrev", "jacfwd"])
def test_checkpointed_code(mode):
    from . import jacobian_checkpoints as C
    x = np.array([0.3, -0.5, 0.8])
    close(s2s.jit(mode(C.stepper))(x, 6), fd_jacobian(C.stepper, (x, 6), 0))
    close(s2s.jit(mode(C.with_ckpt))(x), fd_jacobian(C.with_ckpt, (x,), 0))


def test_real_and_imag_parts_compile():
    z, x = np.array([1 + 2j, 3 - 1j]), np.array([0.5, 2.0])
    np.testing.assert_allclose(s2s.jit(K.real_parts)(z, x), K.real_parts(z, x), rtol=1e-15)


def _residual(v, w):  # a vector and a number in, three values out
    out = np.empty(3)
    out[0:2] = w * np.sin(v[:2]) * v[2]
    out[2] = 1.0 - w * w
    return out


def _blocks(V, W):  # a Jacobian per row, from jacfwd called in the compiled loop
    jac = s2s.jacfwd(_residual, argnums=(0, 1))
    out = np.empty((V.shape[0], 3, 4))
    for i in range(V.shape[0]):
        jv, jw = jac(V[i], W[i])
        out[i, :, 0:3] = jv
        out[i, :, 3] = jw
    return out


@pytest.mark.parametrize("how", ["python", "jit"])
def test_jacfwd_of_a_vector_and_a_number_called_in_a_loop(how):
    rng = np.random.default_rng(4)
    V, W = rng.normal(size=(5, 3)), rng.normal(size=5)
    got = (s2s.jit(_blocks) if how == "jit" else _blocks)(V, W)
    h = 1e-6
    for i in range(V.shape[0]):
        for j in range(4):
            dv = np.zeros(3)
            dw = 0.0
            if j < 3:
                dv[j] = h
            else:
                dw = h
            fd = (_residual(V[i] + dv, W[i] + dw) - _residual(V[i] - dv, W[i] - dw)) / (2 * h)
            np.testing.assert_allclose(got[i, :, j], fd, rtol=1e-6, atol=1e-8)
