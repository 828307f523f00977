"""Derivatives of ``adbench_objectives.py`` that are more than one ``s2s.grad``: they
call s2s transforms inside a function, so ``s2s.jit`` of them is jit of a composed
transform (GradBench's k-means Newton step, ADBench's per-observation Jacobian)."""
import numpy as np

import s2s

from adbench_objectives import ba_residual, kmeans_cost


def kmeans_newton(centroids, points):
    """GradBench's k-means derivative: the gradient ``J`` of the cost and the diagonal
    ``H`` of its Hessian (a jvp of the gradient along ones; the Hessian is diagonal
    within each centroid's coordinates), stacked: ``(2, k, d)``."""
    ones = np.ones_like(centroids)
    zeros = np.zeros_like(points)
    J, H = s2s.jvp(s2s.grad(kmeans_cost), (centroids, points), (ones, zeros))
    return np.stack((J, H))


def ba_jacobian(cams, X, w, obs, feats):
    """ADBench's bundle-adjustment Jacobian: per observation, the 3 x 15 block of
    ``ba_residual``'s derivatives with respect to its camera (11), point (3) and
    weight (1), from ``s2s.jacfwd`` of the residual; ``(observations, 3, 15)``."""
    jac = s2s.jacfwd(ba_residual, argnums=(0, 1, 2))
    out = np.empty((obs.shape[0], 3, 15))
    for i in range(obs.shape[0]):
        jc, jx, jw = jac(cams[obs[i, 0]], X[obs[i, 1]], w[i], feats[i])
        out[i, :, 0:11] = jc
        out[i, :, 11:14] = jx
        out[i, :, 14] = jw
    return out
