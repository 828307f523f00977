"""The maths of ``adbench_objectives.py`` / ``adbench_loops.py`` written for JAX (float64;
slices and ``.at`` updates, ``lax.fori_loop`` / ``lax.scan`` for loops): ``MAKERS[name](
*args)`` returns a zero-argument callable computing the case's derivative under
``jax.jit``, in the structure s2s returns."""
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.scipy.special import logsumexp as jlse

jax.config.update("jax_enable_x64", True)


def _jit(fn, *args):
    f = jax.jit(fn)
    return lambda: jax.block_until_ready(f(*args))


def _tri(d):
    pairs = [(j, i) for i in range(d) for j in range(i + 1, d)]
    return np.array([p[0] for p in pairs], dtype=int), np.array([p[1] for p in pairs], dtype=int)


def gmm(alphas, means, icf, x, gamma, m):
    n, d = x.shape
    k = alphas.shape[0]
    rows, cols = _tri(d)

    def f(alphas, means, icf):
        qd = jnp.exp(icf[:, :d])
        sum_qs = jnp.sum(icf[:, :d], axis=1)
        ls = icf[:, d:]
        Q = jnp.zeros((k, d, d)).at[:, rows, cols].set(ls) + jax.vmap(jnp.diag)(qd)
        xc = x[:, None, :] - means[None]
        qxc = jnp.einsum("kij,nkj->nki", Q, xc)
        main = alphas + sum_qs - 0.5 * jnp.sum(qxc * qxc, axis=-1)
        prior = jnp.sum(0.5 * gamma * gamma * (jnp.sum(qd * qd, 1) + jnp.sum(ls * ls, 1))
                        - m * sum_qs)
        return (-n * d * 0.5 * np.log(2 * np.pi) + jnp.sum(jlse(main, axis=1))
                - n * jlse(alphas) + prior)
    return _jit(jax.grad(f, argnums=(0, 1, 2)), alphas, means, icf)


def _rodrigues(rot, X):
    sq = jnp.sum(rot * rot)
    theta = jnp.sqrt(sq)
    w = rot / theta
    return (X * jnp.cos(theta) + jnp.cross(w, X) * jnp.sin(theta)
            + w * jnp.dot(w, X) * (1.0 - jnp.cos(theta)))


def _ba_residual(cam, X, w, feat):
    Xcam = _rodrigues(cam[0:3], X - cam[3:6])
    p = Xcam[0:2] / Xcam[2]
    rsq = jnp.sum(p * p)
    proj = p * (1.0 + cam[9] * rsq + cam[10] * rsq * rsq) * cam[6] + cam[7:9]
    return jnp.concatenate([w * (proj - feat), jnp.array([1.0 - w * w])])


def ba_objective(cams, X, w, obs, feats):
    def f(cams, X, w):
        r = jax.vmap(_ba_residual)(cams[obs[:, 0]], X[obs[:, 1]], w, feats)
        return jnp.sum(r * r)
    return _jit(jax.grad(f, argnums=(0, 1, 2)), cams, X, w)


def ba_jacobian(cams, X, w, obs, feats):
    def f(cams, X, w):
        jc, jx, jw = jax.vmap(jax.jacfwd(_ba_residual, argnums=(0, 1, 2)))(
            cams[obs[:, 0]], X[obs[:, 1]], w, feats)
        return jnp.concatenate([jc, jx, jw[:, :, None]], axis=2)
    return _jit(f, cams, X, w)


def _aa_to_r(aa):
    n = jnp.sqrt(jnp.sum(aa * aa))
    x, y, z = aa[0] / n, aa[1] / n, aa[2] / n
    s, c = jnp.sin(n), jnp.cos(n)
    return jnp.array([[x * x + (1 - x * x) * c, x * y * (1 - c) - z * s, x * z * (1 - c) + y * s],
                      [x * y * (1 - c) + z * s, y * y + (1 - y * y) * c, y * z * (1 - c) - x * s],
                      [x * z * (1 - c) - y * s, z * y * (1 - c) + x * s, z * z + (1 - z * z) * c]])


def _euler_xz(a, b):
    ca, sa, cb, sb = jnp.cos(a), jnp.sin(a), jnp.cos(b), jnp.sin(b)
    rx = jnp.array([[1.0, 0.0, 0.0], [0.0, ca, -sa], [0.0, sa, ca]])
    rz = jnp.array([[cb, -sb, 0.0], [sb, cb, 0.0], [0.0, 0.0, 1.0]])
    return rz @ rx


def hand(theta, base_vertices, weights, bone_offsets, points):
    nb, nv = weights.shape

    def f(theta):
        rots = [jnp.eye(3)]
        for fi in range(5):
            p = 6 + 4 * fi
            rots += [_euler_xz(theta[p], theta[p + 1]), _euler_xz(theta[p + 2], 0.0),
                     _euler_xz(theta[p + 3], 0.0)]
        ar, at = [rots[0]], [jnp.asarray(bone_offsets[0])]
        for b in range(1, nb):
            parent = 0 if (b - 1) % 3 == 0 else b - 1
            ar.append(ar[parent] @ rots[b])
            at.append(ar[parent] @ bone_offsets[b] + at[parent])
        skinned = jnp.zeros((3, nv))
        for b in range(nb):
            A = jnp.concatenate([ar[b], at[b][:, None]], axis=1)
            skinned = skinned + (A @ base_vertices) * weights[b]
        verts = _aa_to_r(theta[0:3]) @ skinned + theta[3:6].reshape(3, 1)
        return (points - verts).reshape(3 * nv)
    return _jit(jax.jacfwd(f), theta)


def lstm(main_params, extra_params, state, sequence):
    b = state.shape[1]
    sig = jax.nn.sigmoid
    sequence = jnp.asarray(sequence)

    def cell(w, bias, h, c, inp):
        g = jnp.concatenate((inp, h, inp, h)) * w + bias
        c = c * sig(g[0:b]) + sig(g[b:2 * b]) * jnp.tanh(g[3 * b:])
        return sig(g[2 * b:3 * b]) * jnp.tanh(c), c

    def f(mp, ep):
        def step(s, t):
            x = sequence[t] * ep[0]
            h0, c0 = cell(mp[0], mp[1], s[0], s[1], x)
            h1, c1 = cell(mp[2], mp[3], s[2], s[3], h0)
            ypred = h1 * ep[1] + ep[2]
            ynorm = ypred - jnp.log(jnp.sum(jnp.exp(ypred)) + 2.0)
            return jnp.stack([h0, c0, h1, c1]), jnp.sum(sequence[t + 1] * ynorm)
        _, totals = lax.scan(step, state, jnp.arange(sequence.shape[0] - 1))
        return -jnp.sum(totals) / ((sequence.shape[0] - 1) * b)
    return _jit(jax.grad(f, argnums=(0, 1)), main_params, extra_params)


def ode(x, s):
    h = 2.0 / s

    def rhs(x, y):
        return jnp.concatenate([x[:1], x[1:] * y[:-1]])

    def f(x):
        def step(_, y):
            k1 = rhs(x, y)
            k2 = rhs(x, y + 0.5 * h * k1)
            k3 = rhs(x, y + 0.5 * h * k2)
            k4 = rhs(x, y + h * k3)
            return y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        return lax.fori_loop(0, s, step, jnp.zeros(x.shape[0]))[-1]
    return _jit(jax.grad(f), x)


def logsumexp(x):
    return _jit(jax.grad(lambda x: jnp.max(x) + jnp.log(jnp.sum(jnp.exp(x - jnp.max(x))))), x)


def llsq(x, n):
    t = np.linspace(-1.0, 1.0, n)
    A = t[:, None] ** np.arange(x.shape[0])
    return _jit(jax.grad(lambda x: 0.5 * jnp.sum((np.sign(t) - A @ x) ** 2)), x)


def kmeans(centroids, points):
    def cost(c):
        return jnp.sum(jnp.min(jnp.sum((points[:, None, :] - c[None]) ** 2, -1), 1))

    def f(c):
        J, H = jax.jvp(jax.grad(cost), (c,), (jnp.ones_like(c),))
        return jnp.stack((J, H))
    return _jit(f, centroids)


def det_lu(a):
    n = a.shape[0]

    def f(a):
        m, det = a, 1.0
        for k in range(n):
            det = det * m[k, k]
            fac = m[k + 1:, k] / m[k, k]
            m = m.at[k + 1:, k + 1:].add(-jnp.outer(fac, m[k, k + 1:]))
        return det
    return _jit(jax.grad(f), a)


def det_perm(a, perms, signs):
    rows = np.arange(a.shape[0])[None, :]
    return _jit(jax.grad(lambda a: jnp.sum(signs * jnp.prod(a[rows, perms], axis=1))), a)


def _heat1d(u0, steps):
    def f(u):
        def step(_, u):
            return u.at[1:-1].set(u[1:-1] + 0.25 * (u[:-2] - 2.0 * u[1:-1] + u[2:]))
        u = lax.fori_loop(0, steps, step, u)
        return jnp.sum(u * u)
    return _jit(jax.grad(f), u0)


def _heat2d(u0, steps):
    def f(u):
        def step(_, u):
            c = u[1:-1, 1:-1]
            return u.at[1:-1, 1:-1].set(c + 0.2 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2]
                                                   + u[1:-1, 2:] - 4.0 * c))
        u = lax.fori_loop(0, steps, step, u)
        return jnp.sum(u * u)
    return _jit(jax.grad(f), u0)


def wave3(u0, steps):
    def f(u0):
        def step(_, pc):
            prev, cur = pc
            nxt = cur.at[1:-1].set(2.0 * cur[1:-1] - prev[1:-1]
                                   + 0.25 * (cur[:-2] - 2.0 * cur[1:-1] + cur[2:]))
            return cur, nxt
        _, cur = lax.fori_loop(0, steps, step, (u0, u0))
        return jnp.sum(cur * cur)
    return _jit(jax.grad(f), u0)


def nonlinear_scan(x, a):
    def f(x, a):
        def step(y, xi):
            y = jnp.tanh(a * y + xi)
            return y, y
        y0 = jnp.tanh(x[0])
        _, ys = lax.scan(step, y0, x[1:])
        return y0 * y0 + jnp.sum(ys * ys)
    return _jit(jax.grad(f, argnums=(0, 1)), x, a)


def thomas(d, a, b, c):
    a, c = jnp.asarray(a), jnp.asarray(c)

    def f(d, b):
        def fwd(carry, i):
            cp, dp = carry
            m = b[i] - a[i] * cp
            cpi, dpi = c[i] / m, (d[i] - a[i] * dp) / m
            return (cpi, dpi), (cpi, dpi)
        c0, d0 = c[0] / b[0], d[0] / b[0]
        _, (cps, dps) = lax.scan(fwd, (c0, d0), jnp.arange(1, d.shape[0]))
        cps = jnp.concatenate([c0[None], cps])
        dps = jnp.concatenate([d0[None], dps])

        def back(x1, i):
            xi = dps[i] - cps[i] * x1
            return xi, xi
        _, xs = lax.scan(back, dps[-1], jnp.arange(d.shape[0] - 2, -1, -1))
        return dps[-1] ** 2 + jnp.sum(xs * xs)
    return _jit(jax.grad(f, argnums=(0, 1)), d, b)


def gauss_seidel(f_, sweeps):
    n = f_.shape[0]
    h2 = 1.0 / ((n - 1) * (n - 1))

    def f(fv):
        def point(i, u):
            return u.at[i].set((u[i - 1] + u[i + 1] + h2 * (fv[i] - 0.1 * u[i] ** 3)) / 2.0)
        u = lax.fori_loop(0, sweeps, lambda _, u: lax.fori_loop(1, n - 1, point, u),
                          jnp.zeros(n))
        return jnp.sum(u * u)
    return _jit(jax.grad(f), f_)


def gauss_seidel2d(f_, sweeps):
    n, m = f_.shape

    def f(fv):
        def point(i, j, u):
            return u.at[i, j].set(0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1]
                                          + fv[i, j]))

        def row(i, u):
            return lax.fori_loop(1, m - 1, lambda j, u: point(i, j, u), u)
        u = lax.fori_loop(0, sweeps, lambda _, u: lax.fori_loop(1, n - 1, row, u),
                          jnp.zeros((n, m)))
        return jnp.sum(u * u)
    return _jit(jax.grad(f), f_)


def upwind(u0, steps):
    def f(u):
        def step(_, u):
            return u.at[1:].set(u[1:] - 0.4 * u[1:] * (u[1:] - u[:-1]))
        u = lax.fori_loop(0, steps, step, u)
        return jnp.sum(u * u)
    return _jit(jax.grad(f), u0)


MAKERS = {
    "gmm (full cov.)": gmm, "ba objective": ba_objective, "ba jacobian": ba_jacobian,
    "hand (jacfwd)": hand, "lstm (2 layers)": lstm, "ode (rk4)": ode,
    "logsumexp": logsumexp, "least squares": llsq, "kmeans newton": kmeans,
    "det (LU loop)": det_lu, "det (permutations)": det_perm,
    "heat1d copy-back": _heat1d, "heat1d ping-pong": _heat1d,
    "heat2d copy-back": _heat2d, "heat2d ping-pong": _heat2d, "wave (3 levels)": wave3,
    "nonlinear scan": nonlinear_scan, "thomas": thomas, "gauss-seidel 1d": gauss_seidel,
    "gauss-seidel 2d": gauss_seidel2d, "upwind": upwind,
}
