"""ADBench / GradBench objectives written the way a numpy user writes them (not tuned for
s2s: loops where the reference implementations loop, ``np.empty`` buffers filled element
by element, ``np.cross``, helper functions).  ``adbench.py`` differentiates, compiles and
times them; ``adbench_frameworks.py`` holds the same maths for JAX and PyTorch.

Every function returns a float (the objective); ``hand_residuals`` and ``ba_residual``
return vectors (their Jacobians are timed).
"""
import math

import numpy as np


# ------------------------------------------------------------------ GMM (full covariance)

def gmm_objective(alphas, means, icf, x, wishart_gamma, wishart_m):
    """ADBench's GMM objective, full covariance: ``icf[k]`` holds the log-diagonal of
    the inverse Cholesky factor, then its strictly lower part column by column, applied
    in ADBench's triangular loop (``Qtimesx``); plus the Wishart prior."""
    n, d = x.shape
    k = alphas.shape[0]
    qdiags = np.exp(icf[:, :d])
    sum_qs = np.sum(icf[:, :d], axis=1)
    l = icf[:, d:]
    slse = 0.0
    for ix in range(n):
        main_term = np.empty(k)
        for ik in range(k):
            xc = x[ix] - means[ik]
            qxc = qdiags[ik] * xc
            idx = 0
            for i in range(d):
                for j in range(i + 1, d):
                    qxc[j] = qxc[j] + l[ik, idx] * xc[i]
                    idx = idx + 1
            main_term[ik] = alphas[ik] + sum_qs[ik] - 0.5 * np.sum(qxc * qxc)
        mx = np.max(main_term)
        slse = slse + mx + math.log(np.sum(np.exp(main_term - mx)))
    amax = np.max(alphas)
    lse_alphas = amax + math.log(np.sum(np.exp(alphas - amax)))
    const = -n * d * 0.5 * math.log(2.0 * math.pi)
    prior = 0.0
    for ik in range(k):
        frob = np.sum(qdiags[ik] * qdiags[ik]) + np.sum(l[ik] * l[ik])
        prior = prior + 0.5 * wishart_gamma * wishart_gamma * frob - wishart_m * sum_qs[ik]
    return const + slse - n * lse_alphas + prior


# ------------------------------------------------------------------ bundle adjustment

def rodrigues_rotate_point(rot, X):
    """Rotate ``X`` by the angle-axis vector ``rot`` (ADBench's form, with ``np.cross``)."""
    sqtheta = np.sum(rot * rot)
    if sqtheta != 0.0:
        theta = math.sqrt(sqtheta)
        costheta = math.cos(theta)
        sintheta = math.sin(theta)
        w = rot / theta
        w_cross_X = np.cross(w, X)
        tmp = np.dot(w, X) * (1.0 - costheta)
        return X * costheta + w_cross_X * sintheta + w * tmp
    return X + np.cross(rot, X)


def ba_residual(cam, X, w, feat):
    """The weighted reprojection error of one observation (2 values) and its weight
    error: ``cam`` = rotation (3), centre (3), focal, principal point (2), radial (2)."""
    Xcam = rodrigues_rotate_point(cam[0:3], X - cam[3:6])
    p = Xcam[0:2] / Xcam[2]
    rsq = np.sum(p * p)
    distortion = 1.0 + cam[9] * rsq + cam[10] * rsq * rsq
    proj = p * distortion * cam[6] + cam[7:9]
    out = np.empty(3)
    out[0:2] = w * (proj - feat)
    out[2] = 1.0 - w * w
    return out


def ba_objective(cams, X, w, obs, feats):
    """Sum of squares of every observation's reprojection and weight errors."""
    total = 0.0
    for i in range(obs.shape[0]):
        r = ba_residual(cams[obs[i, 0]], X[obs[i, 1]], w[i], feats[i])
        total = total + np.sum(r * r)
    return total


# ------------------------------------------------------------------ hand tracking (small)

def angle_axis_to_rotation_matrix(aa):
    n = math.sqrt(np.sum(aa * aa))
    if n < 1e-10:
        return np.eye(3)
    x, y, z = aa[0] / n, aa[1] / n, aa[2] / n
    s, c = math.sin(n), math.cos(n)
    return np.array([[x * x + (1 - x * x) * c, x * y * (1 - c) - z * s, x * z * (1 - c) + y * s],
                     [x * y * (1 - c) + z * s, y * y + (1 - y * y) * c, y * z * (1 - c) - x * s],
                     [x * z * (1 - c) - y * s, z * y * (1 - c) + x * s, z * z + (1 - z * z) * c]])


def euler_xz(a, b):
    """Rotation about x by ``a`` then about z by ``b`` (a finger joint)."""
    ca, sa, cb, sb = math.cos(a), math.sin(a), math.cos(b), math.sin(b)
    rx = np.array([[1.0, 0.0, 0.0], [0.0, ca, -sa], [0.0, sa, ca]])
    rz = np.array([[cb, -sb, 0.0], [sb, cb, 0.0], [0.0, 0.0, 1.0]])
    return rz @ rx


def hand_residuals(theta, base_vertices, weights, bone_offsets, points):
    """ADBench's hand model in small: 26 pose parameters (global rotation, translation,
    then 4 angles for each of 5 fingers of 3 bones), bone transforms chained from the
    root, linear blend skinning of ``base_vertices`` (homogeneous, 4 x V) with
    ``weights`` (bones x V), residuals against ``points`` (3 x V), flattened."""
    nb = weights.shape[0]
    nv = base_vertices.shape[1]
    rots = np.empty((nb, 3, 3))
    rots[0] = np.eye(3)
    for f in range(5):
        p = 6 + 4 * f
        rots[1 + 3 * f] = euler_xz(theta[p], theta[p + 1])
        rots[2 + 3 * f] = euler_xz(theta[p + 2], 0.0)
        rots[3 + 3 * f] = euler_xz(theta[p + 3], 0.0)
    absolutes = np.empty((nb, 3, 4))
    absolutes[0, :, 0:3] = rots[0]
    absolutes[0, :, 3] = bone_offsets[0]
    for b in range(1, nb):
        parent = 0 if (b - 1) % 3 == 0 else b - 1
        absolutes[b, :, 0:3] = absolutes[parent, :, 0:3] @ rots[b]
        absolutes[b, :, 3] = absolutes[parent, :, 0:3] @ bone_offsets[b] + absolutes[parent, :, 3]
    skinned = np.zeros((3, nv))
    for b in range(nb):
        skinned = skinned + (absolutes[b] @ base_vertices) * weights[b]
    R = angle_axis_to_rotation_matrix(theta[0:3])
    verts = R @ skinned + theta[3:6].reshape(3, 1)
    return (points - verts).reshape(3 * nv)


# ------------------------------------------------------------------ LSTM (two layers)

def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def lstm_model(weight, bias, hidden, cell, inp):
    """ADBench's LSTM cell (elementwise weights): returns the new hidden and cell state."""
    b = hidden.shape[0]
    gates = np.concatenate((inp, hidden, inp, hidden)) * weight + bias
    forget = sigmoid(gates[0:b])
    ingate = sigmoid(gates[b:2 * b])
    outgate = sigmoid(gates[2 * b:3 * b])
    change = np.tanh(gates[3 * b:4 * b])
    cell = cell * forget + ingate * change
    hidden = outgate * np.tanh(cell)
    return hidden, cell


def lstm_objective(main_params, extra_params, state, sequence):
    """ADBench's two-layer LSTM objective: predict each character of ``sequence`` from
    the one before; ``main_params`` (4, 4b): weight and bias rows of the two layers;
    ``extra_params`` (3, b): input weight, output weight, output bias; ``state`` (4, b):
    hidden and cell state of the two layers (updated row by row, in place)."""
    s = state.copy()
    total = 0.0
    count = 0
    inp = sequence[0]
    for t in range(sequence.shape[0] - 1):
        x = inp * extra_params[0]
        for layer in range(2):
            h, c = lstm_model(main_params[2 * layer], main_params[2 * layer + 1],
                              s[2 * layer], s[2 * layer + 1], x)
            s[2 * layer] = h
            s[2 * layer + 1] = c
            x = h
        ypred = x * extra_params[1] + extra_params[2]
        ynorm = ypred - math.log(np.sum(np.exp(ypred)) + 2.0)
        ygold = sequence[t + 1]
        total = total + np.sum(ygold * ynorm)
        count = count + ygold.shape[0]
        inp = ygold
    return -total / count


# ------------------------------------------------------------------ ODE (GradBench)

def ode_rhs(x, y):
    """GradBench's right-hand side: a buffer made per call, filled element by element."""
    n = x.shape[0]
    z = np.empty(n)
    z[0] = x[0]
    for i in range(1, n):
        z[i] = x[i] * y[i - 1]
    return z


def ode_objective(x, s):
    """``s`` RK4 steps of ``y' = ode_rhs(x, y)`` over [0, 2]; the last component."""
    h = 2.0 / s
    y = np.zeros(x.shape[0])
    for _ in range(s):
        k1 = ode_rhs(x, y)
        k2 = ode_rhs(x, y + 0.5 * h * k1)
        k3 = ode_rhs(x, y + 0.5 * h * k2)
        k4 = ode_rhs(x, y + h * k3)
        y = y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return y[x.shape[0] - 1]


# ------------------------------------------------------------------ small ones

def logsumexp(x):
    """GradBench's lse, as numpy users write it."""
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def llsq(x, n):
    """GradBench's linear least squares: fit a polynomial with coefficients ``x`` to
    ``sign(t)`` at ``n`` points of [-1, 1]; powers of ``t`` built in a loop."""
    t = np.linspace(-1.0, 1.0, n)
    y = np.sign(t)
    fit = np.zeros(n)
    p = np.ones(n)
    for j in range(x.shape[0]):
        fit = fit + x[j] * p
        p = p * t
    r = y - fit
    return 0.5 * np.sum(r * r)


def kmeans_cost(centroids, points):
    """GradBench's k-means cost: each point's squared distance to its nearest centroid."""
    total = 0.0
    for i in range(points.shape[0]):
        diff = centroids - points[i]
        total = total + np.min(np.sum(diff * diff, axis=1))
    return total


def det_lu(a):
    """Determinant by Gaussian elimination (no pivoting) on a copy, in place."""
    m = a.copy()
    n = m.shape[0]
    det = 1.0
    for k in range(n):
        det = det * m[k, k]
        for i in range(k + 1, n):
            f = m[i, k] / m[k, k]
            for j in range(k + 1, n):
                m[i, j] = m[i, j] - f * m[k, j]
    return det


def det_perm(a, perms, signs):
    """Determinant by the Leibniz formula over a table of permutations (``perms`` rows,
    ``signs`` +-1), as a user who precomputed ``itertools.permutations`` writes it."""
    n = a.shape[0]
    total = 0.0
    for p in range(perms.shape[0]):
        prod = signs[p]
        for i in range(n):
            prod = prod * a[i, perms[p, i]]
        total = total + prod
    return total
