"""Independent oracles for ``adbench.py``'s checks: central finite differences in float64
of the plain Python functions (no s2s involved), and ``agrees``, the comparison."""
import numpy as np

from adbench_objectives import ba_residual, kmeans_cost

STEP = 1e-6


def fd_derivative(fn, args, argnum, step=STEP):
    """``d fn(*args) / d args[argnum]`` by central differences: an array of shape
    ``out.shape + arg.shape`` (``arg`` a float or a float array)."""
    x = np.asarray(args[argnum], dtype=float)
    out0 = np.asarray(fn(*args), dtype=float)
    jac = np.empty(out0.shape + x.shape)
    flat = jac.reshape(out0.size, x.size)
    for e in range(x.size):
        hi, lo = x.copy().reshape(-1), x.copy().reshape(-1)
        h = step * max(1.0, abs(hi[e]))
        hi[e] += h
        lo[e] -= h
        a_hi, a_lo = list(args), list(args)
        a_hi[argnum] = hi.reshape(x.shape) if x.ndim else float(hi[0])
        a_lo[argnum] = lo.reshape(x.shape) if x.ndim else float(lo[0])
        diff = (np.asarray(fn(*a_hi), float) - np.asarray(fn(*a_lo), float)) / (2 * h)
        flat[:, e] = diff.reshape(-1)
    return jac


def kmeans_newton_fd(centroids, points):
    """The gradient of ``kmeans_cost`` and its Hessian's diagonal along ones (the
    derivative of the gradient along ones), both by central differences."""
    J = fd_derivative(kmeans_cost, (centroids, points), 0)
    ones = np.ones_like(centroids)
    h = 1e-4
    H = (fd_derivative(kmeans_cost, (centroids + h * ones, points), 0)
         - fd_derivative(kmeans_cost, (centroids - h * ones, points), 0)) / (2 * h)
    return np.stack((J, H))


def ba_jacobian_fd(cams, X, w, obs, feats):
    """Per observation, ``ba_residual``'s 3 x 15 Jacobian block by central differences."""
    out = np.empty((obs.shape[0], 3, 15))
    for i in range(obs.shape[0]):
        a = (cams[obs[i, 0]], X[obs[i, 1]], float(w[i]), feats[i])
        out[i, :, 0:11] = fd_derivative(ba_residual, a, 0)
        out[i, :, 11:14] = fd_derivative(ba_residual, a, 1)
        out[i, :, 14] = fd_derivative(ba_residual, a, 2)
    return out


def agrees(got, want, rtol=1e-5):
    """``(ok, relative error)``: ``got`` matches ``want`` (same structure: arrays or
    tuples of them) to ``rtol`` relative to the largest entry of ``want``."""
    if isinstance(want, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            return False, float("inf")
        results = [agrees(g, w, rtol) for g, w in zip(got, want)]
        return all(r[0] for r in results), max(r[1] for r in results)
    got = np.asarray(got, dtype=float)
    want = np.asarray(want, dtype=float)
    if got.shape != want.shape:
        return False, float("inf")
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    err = float(np.max(np.abs(got - want))) / scale if want.size else 0.0
    return bool(np.isfinite(err) and err <= rtol), err
