"""s2s.interop.to_torch: PyTorch's own gradient checkers, finite differences of the numpy
function, the same op written in torch, torch.func transforms, torch.compile, bad input."""
import numpy as np
import pytest
import torch

from s2s.interop import to_torch

from .ops import Params, count_and_scale, fd_vjp, listy, mlp, ragged_logsumexp, rnn

f64 = torch.float64


def _rand(*shape, seed=0, grad=True):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=f64).requires_grad_(grad)


def torch_rnn(x, w, n):
    h = torch.zeros_like(x[0])
    for t in range(x.shape[0]):
        h = torch.tanh(w * h + x[t])
    return h * n, torch.sum(h * h)


# -- values and first derivatives against independent oracles ---------------------------
def test_forward_and_backward_match_finite_differences_and_torch():
    op = to_torch(rnn)
    x, w = _rand(6, 4), torch.tensor(0.7, dtype=f64, requires_grad=True)
    y, s = op(x, w, 3)
    ry, rs = torch_rnn(x, w, 3)
    assert torch.allclose(y, ry) and torch.allclose(s, rs)
    assert op.mode_of(x, w, 3) == "jit"
    ct_y, ct_s = _rand(4, seed=1, grad=False), 0.3
    gx, gw = torch.autograd.grad((y * ct_y).sum() + ct_s * s, (x, w))
    xn, wn = x.detach().numpy(), w.item()
    ct = (ct_y.numpy(), ct_s)
    np.testing.assert_allclose(gx.numpy(), fd_vjp(rnn, (xn, wn, 3), 0, ct), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gw.numpy(), fd_vjp(rnn, (xn, np.array(wn), 3), 1, ct),
                               rtol=1e-6, atol=1e-8)
    rgx, rgw = torch.autograd.grad((ry * ct_y).sum() + ct_s * rs, (x, w))
    assert torch.allclose(gx, rgx) and torch.allclose(gw, rgw)


def test_gradcheck_and_gradgradcheck():
    op = to_torch(rnn, argnums=(0, 1))
    x, w = _rand(4, 3), torch.tensor(0.4, dtype=f64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x, w: op(x, w, 2), (x, w))
    assert torch.autograd.gradgradcheck(lambda x, w: op(x, w, 2), (x, w))


def test_double_backward_against_finite_differences_of_the_gradient():
    op = to_torch(rnn)
    x, w = _rand(5, 2, seed=3), torch.tensor(0.6, dtype=f64, requires_grad=True)
    (gw,) = torch.autograd.grad(op(x, w, 1)[1], (w,), create_graph=True)
    (hww,) = torch.autograd.grad(gw, (w,))
    eps = 1e-5

    def dw(wv):
        ww = torch.tensor(wv, dtype=f64, requires_grad=True)
        return float(torch.autograd.grad(op(x.detach(), ww, 1)[1], (ww,))[0])
    assert abs(float(hww) - (dw(0.6 + eps) - dw(0.6 - eps)) / (2 * eps)) < 1e-6


def test_ragged_kernel_int_tensor_is_not_differentiated():
    op = to_torch(ragged_logsumexp, argnums=0)
    values = _rand(9, seed=2)
    offsets = torch.tensor([0, 2, 3, 7, 9])
    out = op(values, offsets, 1.5)
    ref = torch.stack([torch.logsumexp(values[a:b] * 1.5, 0)
                       for a, b in zip(offsets[:-1], offsets[1:])])
    assert torch.allclose(out, ref)
    assert torch.autograd.gradcheck(lambda v: op(v, offsets, 1.5), (values,))
    assert torch.autograd.gradgradcheck(lambda v: op(v, offsets, 1.5), (values,))
    (g,) = torch.autograd.grad(out.sum(), (values,))
    (gref,) = torch.autograd.grad(ref.sum(), (values,))
    assert torch.allclose(g, gref)


def test_pytree_arguments_and_results():
    op = to_torch(mlp)
    params = {"w": _rand(3, 2), "b": _rand(2, seed=1),
              "p": Params(torch.tensor(1.5, dtype=f64, requires_grad=True), _rand(2, seed=4))}
    x = _rand(5, 3, seed=5, grad=False)
    out = op(params, x)
    assert set(out) == {"out", "norm"} and out["out"].shape == (5, 2)
    h = torch.tanh(x @ params["w"] + params["b"])
    assert torch.allclose(out["out"], h * params["p"].a + params["p"].b)
    loss = out["out"].sum() + out["norm"]
    grads = torch.autograd.grad(loss, [params["w"], params["b"], params["p"].a, params["p"].b])
    ref = torch.autograd.grad((h * params["p"].a + params["p"].b).sum() + (h ** 2).sum(),
                              [params["w"], params["b"], params["p"].a, params["p"].b])
    for g, r in zip(grads, ref):
        assert torch.allclose(g, r)


def test_python_mode_where_jit_does_not_compile():
    op = to_torch(listy)
    x = _rand(3, 4)
    assert torch.allclose(op(x), torch.sin(x) * x * 2.0)
    assert op.mode_of(x) == "python"
    assert torch.autograd.gradcheck(op, (x,))
    assert torch.autograd.gradgradcheck(op, (x,))
    with pytest.raises(Exception, match="list"):
        to_torch(listy, mode="jit")(x)


def test_float32_and_integer_outputs():
    op = to_torch(count_and_scale)
    x = torch.randn(7, generator=torch.Generator().manual_seed(0)).requires_grad_()
    n, y = op(x, 2.5)
    assert n.dtype == torch.int64 and not n.requires_grad and int(n) == int((x > 0).sum())
    assert y.dtype == torch.float32
    (g,) = torch.autograd.grad(y.sum(), (x,))
    assert g.dtype == torch.float32 and torch.allclose(g, torch.full_like(x, 2.5))


def test_no_copies_of_inputs_and_fresh_results():
    seen = {}

    def peek(x):
        seen["x"] = x
        return x * 2.0

    op = to_torch(peek, mode="python")
    x = torch.arange(6.0, dtype=f64)[::2]  # a strided view
    y = op(x)
    assert np.shares_memory(seen["x"], x.numpy())
    ident = to_torch(lambda x: x, mode="python")
    z = ident(x)
    assert torch.equal(z, x) and z.data_ptr() != x.data_ptr() and torch.allclose(y, 2 * x)


def test_s2s_transforms_as_the_function():
    import s2s

    def h(x):
        return np.sum(np.sin(x) * x)

    x = _rand(3, seed=9)
    for g, ref in ((s2s.jit(h), lambda x: (torch.sin(x) * x).sum()),
                   (s2s.grad(h), lambda x: torch.sin(x) + x * torch.cos(x)),
                   (s2s.vmap(np.sin), torch.sin)):
        op = to_torch(g)
        assert torch.allclose(op(x), ref(x))
        assert torch.autograd.gradcheck(op, (x,))


# -- torch.func ------------------------------------------------------------------------
def test_vmap_goes_through_s2s_vmap_and_composes_with_grad():
    op = to_torch(rnn)
    xb = _rand(4, 5, 3, grad=False)
    w = torch.tensor(0.5, dtype=f64)
    y, s = torch.func.vmap(op, in_dims=(0, None, None))(xb, w, 2)
    for i in range(4):
        yi, si = torch_rnn(xb[i], w, 2)
        assert torch.allclose(y[i], yi) and torch.allclose(s[i], si)
    # batch on another axis
    y1, _ = torch.func.vmap(op, in_dims=(1, None, None))(xb.transpose(0, 1), w, 2)
    assert torch.allclose(y1, y)
    # per-example gradients
    gw = torch.func.vmap(torch.func.grad(lambda x, w: op(x, w, 2)[1], argnums=1),
                         in_dims=(0, None))(xb, w)
    for i in range(4):
        wr = w.clone().requires_grad_()
        (ref,) = torch.autograd.grad(torch_rnn(xb[i], wr, 2)[1], (wr,))
        assert torch.allclose(gw[i], ref)
    # Jacobian (jacrev vmaps the backward op)
    J = torch.func.jacrev(lambda x: op(x, w, 2)[0])(xb[0])
    Jref = torch.autograd.functional.jacobian(lambda x: torch_rnn(x, w, 2)[0], xb[0])
    assert torch.allclose(J, Jref)


def test_nested_vmap():
    op = to_torch(lambda x, k: np.sum(np.sin(x) * k))
    x = _rand(2, 3, 4, grad=False)
    out = torch.func.vmap(torch.func.vmap(op, in_dims=(0, None)), in_dims=(0, None))(x, 1.5)
    assert torch.allclose(out, (torch.sin(x) * 1.5).sum(-1))


# -- torch.compile ---------------------------------------------------------------------
def test_torch_compile_opaque_op_with_gradients():
    op = to_torch(rnn)
    x, w = _rand(4, 3), torch.tensor(0.5, dtype=f64, requires_grad=True)

    def model(x, w):
        return (op(torch.sin(x), w, 2)[0] ** 2).sum()

    op(torch.sin(x.detach()), w.detach(), 2)  # families made eagerly: the graph is whole
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    loss = compiled(x, w)
    gx, gw = torch.autograd.grad(loss, (x, w))
    ref = model(x, w)
    rgx, rgw = torch.autograd.grad(ref, (x, w))
    assert torch.allclose(loss, ref) and torch.allclose(gx, rgx) and torch.allclose(gw, rgw)


def test_torch_compile_first_call_inside_the_compiled_region():
    def cube_sum(x, k):
        acc = 0.0
        for i in range(x.shape[0]):
            acc = acc + k * x[i] ** 3
        return acc

    op = to_torch(cube_sum)
    x = _rand(5, seed=7)
    compiled = torch.compile(lambda x: op(torch.cos(x), 2.0), backend="aot_eager")
    (g,) = torch.autograd.grad(compiled(x), (x,))
    assert torch.allclose(g, -6.0 * torch.cos(x) ** 2 * torch.sin(x))


# -- bad input -------------------------------------------------------------------------
def test_bad_input_errors():
    op = to_torch(rnn, argnums=0)
    x = _rand(3, 2)
    w = torch.tensor(0.5, dtype=f64, requires_grad=True)
    with pytest.raises(ValueError, match="requires grad but is not differentiated"):
        op(x, w, 2)
    with pytest.raises(ValueError, match="meta"):
        op(torch.zeros(3, 2, dtype=f64, device="meta"), 0.5, 2)
    with pytest.raises(ValueError, match="sparse|strided"):
        op(torch.eye(3, dtype=f64).to_sparse(), 0.5, 2)
    with pytest.raises(TypeError, match="complex"):
        to_torch(lambda z: z * 2)(torch.ones(2, dtype=torch.complex128))
    with pytest.raises(ValueError, match="out of range"):
        to_torch(rnn, argnums=5)(x, 0.5, 2)
    with pytest.raises(TypeError, match="argnums"):
        to_torch(rnn, argnums="x")
    with pytest.raises(TypeError, match="callable"):
        to_torch(3)
    with pytest.raises(ValueError, match="mode"):
        to_torch(rnn, mode="fast")
    with pytest.raises(TypeError, match="set"):
        op({1, 2}, 0.5, 2)
    with pytest.raises(TypeError, match="keyword-only"):
        to_torch(lambda x, *, k=1.0: x * k)(x, k=2.0)


def test_import_s2s_does_not_import_torch_or_jax():
    import subprocess
    import sys
    code = ("import sys, numpy, s2s, s2s.interop; s2s.grad(numpy.sin)(1.0); "
            "print('torch' in sys.modules, 'jax' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
