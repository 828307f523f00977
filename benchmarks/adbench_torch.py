"""The maths of ``adbench_objectives.py`` / ``adbench_loops.py`` for PyTorch autograd
(float64, CPU, eager): ``MAKERS[name](*args)`` returns a zero-argument callable computing
the case's derivative.  Kernels whose loops are sequential element by element (Thomas,
Gauss-Seidel, the nonlinear scan) are not written: eager PyTorch has no form of them but
a Python loop over 0-d tensors, which measures Python, not autograd."""
import math

import numpy as np
import torch
import torch.func as tf

torch.set_default_dtype(torch.float64)


def _t(*arrays):
    return tuple(torch.as_tensor(np.asarray(a, dtype=float)) for a in arrays)


def _grad(f, *args):
    """``() -> gradients of f at args`` (a tuple for several, a tensor for one)."""
    def run():
        xs = [a.detach().requires_grad_(True) for a in args]
        gs = torch.autograd.grad(f(*xs), xs)
        return gs[0] if len(gs) == 1 else gs
    return run


def _tri(d):
    pairs = [(j, i) for i in range(d) for j in range(i + 1, d)]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def gmm(alphas, means, icf, x, gamma, m):
    n, d = x.shape
    k = alphas.shape[0]
    rows, cols = _tri(d)
    xt, = _t(x)

    def f(alphas, means, icf):
        qd = torch.exp(icf[:, :d])
        sum_qs = torch.sum(icf[:, :d], 1)
        ls = icf[:, d:]
        L = torch.zeros((k, d, d))
        L[:, rows, cols] = ls
        Q = L + torch.diag_embed(qd)
        qxc = torch.einsum("kij,nkj->nki", Q, xt[:, None, :] - means[None])
        main = alphas + sum_qs - 0.5 * torch.sum(qxc * qxc, -1)
        prior = torch.sum(0.5 * gamma * gamma * (torch.sum(qd * qd, 1) + torch.sum(ls * ls, 1))
                          - m * sum_qs)
        return (-n * d * 0.5 * math.log(2 * math.pi) + torch.sum(torch.logsumexp(main, 1))
                - n * torch.logsumexp(alphas, 0) + prior)
    return _grad(f, *_t(alphas, means, icf))


def _ba_residual(cam, X, w, feat):
    rot, Xc = cam[0:3], X - cam[3:6]
    theta = torch.sqrt(torch.sum(rot * rot))
    wv = rot / theta
    Xcam = (Xc * torch.cos(theta) + torch.linalg.cross(wv, Xc) * torch.sin(theta)
            + wv * torch.dot(wv, Xc) * (1.0 - torch.cos(theta)))
    p = Xcam[0:2] / Xcam[2]
    rsq = torch.sum(p * p)
    proj = p * (1.0 + cam[9] * rsq + cam[10] * rsq * rsq) * cam[6] + cam[7:9]
    return torch.cat([w * (proj - feat), (1.0 - w * w).reshape(1)])


def ba_objective(cams, X, w, obs, feats):
    ft, = _t(feats)
    oc, ox = torch.as_tensor(obs[:, 0]), torch.as_tensor(obs[:, 1])

    def f(cams, X, w):
        r = tf.vmap(_ba_residual)(cams[oc], X[ox], w, ft)
        return torch.sum(r * r)
    return _grad(f, *_t(cams, X, w))


def ba_jacobian(cams, X, w, obs, feats):
    ct, Xt, wt, ft = _t(cams, X, w, feats)
    oc, ox = torch.as_tensor(obs[:, 0]), torch.as_tensor(obs[:, 1])
    jac = tf.vmap(tf.jacfwd(_ba_residual, argnums=(0, 1, 2)))

    def run():
        jc, jx, jw = jac(ct[oc], Xt[ox], wt, ft)
        return torch.cat([jc, jx, jw[:, :, None]], 2)
    return run


def _euler_xz(a, b):
    z, o = torch.zeros(()), torch.ones(())
    ca, sa, cb, sb = torch.cos(a), torch.sin(a), torch.cos(b), torch.sin(b)
    rx = torch.stack([torch.stack([o, z, z]), torch.stack([z, ca, -sa]), torch.stack([z, sa, ca])])
    rz = torch.stack([torch.stack([cb, -sb, z]), torch.stack([sb, cb, z]), torch.stack([z, z, o])])
    return rz @ rx


def _aa_to_r(aa):
    n = torch.sqrt(torch.sum(aa * aa))
    x, y, z = aa[0] / n, aa[1] / n, aa[2] / n
    s, c = torch.sin(n), torch.cos(n)
    return torch.stack([
        torch.stack([x * x + (1 - x * x) * c, x * y * (1 - c) - z * s, x * z * (1 - c) + y * s]),
        torch.stack([x * y * (1 - c) + z * s, y * y + (1 - y * y) * c, y * z * (1 - c) - x * s]),
        torch.stack([x * z * (1 - c) - y * s, z * y * (1 - c) + x * s, z * z + (1 - z * z) * c])])


def hand(theta, base_vertices, weights, bone_offsets, points):
    th, bv, wts, offs, pts = _t(theta, base_vertices, weights, bone_offsets, points)
    nb, nv = weights.shape

    def f(theta):
        zero = torch.zeros(())
        rots = [torch.eye(3)]
        for fi in range(5):
            p = 6 + 4 * fi
            rots += [_euler_xz(theta[p], theta[p + 1]), _euler_xz(theta[p + 2], zero),
                     _euler_xz(theta[p + 3], zero)]
        ar, at = [rots[0]], [offs[0]]
        for b in range(1, nb):
            parent = 0 if (b - 1) % 3 == 0 else b - 1
            ar.append(ar[parent] @ rots[b])
            at.append(ar[parent] @ offs[b] + at[parent])
        skinned = torch.zeros((3, nv))
        for b in range(nb):
            skinned = skinned + (torch.cat([ar[b], at[b][:, None]], 1) @ bv) * wts[b]
        verts = _aa_to_r(theta[0:3]) @ skinned + theta[3:6].reshape(3, 1)
        return (pts - verts).reshape(3 * nv)
    jac = tf.jacfwd(f)
    return lambda: jac(th)


def lstm(main_params, extra_params, state, sequence):
    b = state.shape[1]
    st, seq = _t(state, sequence)

    def cell(w, bias, h, c, inp):
        g = torch.cat((inp, h, inp, h)) * w + bias
        c = c * torch.sigmoid(g[0:b]) + torch.sigmoid(g[b:2 * b]) * torch.tanh(g[3 * b:])
        return torch.sigmoid(g[2 * b:3 * b]) * torch.tanh(c), c

    def f(mp, ep):
        h0, c0, h1, c1 = st[0], st[1], st[2], st[3]
        total = 0.0
        for t in range(seq.shape[0] - 1):
            h0, c0 = cell(mp[0], mp[1], h0, c0, seq[t] * ep[0])
            h1, c1 = cell(mp[2], mp[3], h1, c1, h0)
            ypred = h1 * ep[1] + ep[2]
            ynorm = ypred - torch.log(torch.sum(torch.exp(ypred)) + 2.0)
            total = total + torch.sum(seq[t + 1] * ynorm)
        return -total / ((seq.shape[0] - 1) * b)
    return _grad(f, *_t(main_params, extra_params))


def ode(x, s):
    h = 2.0 / s

    def rhs(x, y):
        return torch.cat([x[:1], x[1:] * y[:-1]])

    def f(x):
        y = torch.zeros(x.shape[0])
        for _ in range(s):
            k1 = rhs(x, y)
            k2 = rhs(x, y + 0.5 * h * k1)
            k3 = rhs(x, y + 0.5 * h * k2)
            k4 = rhs(x, y + h * k3)
            y = y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        return y[-1]
    return _grad(f, *_t(x))


def logsumexp(x):
    return _grad(lambda x: torch.max(x) + torch.log(torch.sum(torch.exp(x - torch.max(x)))), *_t(x))


def llsq(x, n):
    t = np.linspace(-1.0, 1.0, n)
    A, y = _t(t[:, None] ** np.arange(x.shape[0]), np.sign(t))
    return _grad(lambda x: 0.5 * torch.sum((y - A @ x) ** 2), *_t(x))


def kmeans(centroids, points):
    pts, = _t(points)

    def cost(c):
        return torch.sum(torch.min(torch.sum((pts[:, None, :] - c[None]) ** 2, -1), 1).values)
    c, = _t(centroids)

    def run():
        J, H = tf.jvp(tf.grad(cost), (c,), (torch.ones_like(c),))
        return torch.stack((J, H))
    return run


def det_lu(a):
    n = a.shape[0]

    def f(m):
        det = 1.0
        for k in range(n):
            det = det * m[k, k]
            upd = torch.zeros((n, n))
            upd[k + 1:, k + 1:] = torch.outer(m[k + 1:, k] / m[k, k], m[k, k + 1:])
            m = m - upd
        return det
    return _grad(f, *_t(a))


def det_perm(a, perms, signs):
    rows = torch.arange(a.shape[0])[None, :]
    pt, sg = torch.as_tensor(perms), torch.as_tensor(signs)
    return _grad(lambda a: torch.sum(sg * torch.prod(a[rows, pt], 1)), *_t(a))


def _heat1d(u0, steps):
    def f(u):
        for _ in range(steps):
            u = torch.cat([u[:1], u[1:-1] + 0.25 * (u[:-2] - 2.0 * u[1:-1] + u[2:]), u[-1:]])
        return torch.sum(u * u)
    return _grad(f, *_t(u0))


def _heat2d(u0, steps):
    def f(u):
        for _ in range(steps):
            c = u[1:-1, 1:-1]
            inner = c + 0.2 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * c)
            mid = torch.cat([u[1:-1, :1], inner, u[1:-1, -1:]], 1)
            u = torch.cat([u[:1], mid, u[-1:]], 0)
        return torch.sum(u * u)
    return _grad(f, *_t(u0))


def wave3(u0, steps):
    def f(u0):
        prev, cur = u0, u0
        for _ in range(steps):
            inner = 2.0 * cur[1:-1] - prev[1:-1] + 0.25 * (cur[:-2] - 2.0 * cur[1:-1] + cur[2:])
            prev, cur = cur, torch.cat([cur[:1], inner, cur[-1:]])
        return torch.sum(cur * cur)
    return _grad(f, *_t(u0))


def upwind(u0, steps):
    def f(u):
        for _ in range(steps):
            u = torch.cat([u[:1], u[1:] - 0.4 * u[1:] * (u[1:] - u[:-1])])
        return torch.sum(u * u)
    return _grad(f, *_t(u0))


MAKERS = {
    "gmm (full cov.)": gmm, "ba objective": ba_objective, "ba jacobian": ba_jacobian,
    "hand (jacfwd)": hand, "lstm (2 layers)": lstm, "ode (rk4)": ode,
    "logsumexp": logsumexp, "least squares": llsq, "kmeans newton": kmeans,
    "det (LU loop)": det_lu, "det (permutations)": det_perm,
    "heat1d copy-back": _heat1d, "heat1d ping-pong": _heat1d,
    "heat2d copy-back": _heat2d, "heat2d ping-pong": _heat2d, "wave (3 levels)": wave3,
    "upwind": upwind,
}
