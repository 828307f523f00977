"""The cases ``adbench.py`` checks and times: each kernel, its arguments at the quick and
the full sizes, what is differentiated and how (``kind``).

``kind``: ``"grad"`` (``s2s.grad(fn, argnums=wrt)``), ``"jacfwd"`` (``s2s.jacfwd(fn,
argnums=wrt)``) or ``"custom"`` (``deriv``, a function of ``adbench_derivatives.py``
that calls s2s transforms itself, checked against ``oracle``).
"""
import itertools
from dataclasses import dataclass
from typing import Callable, Optional, Tuple

import numpy as np

import adbench_derivatives as D
import adbench_loops as L
import adbench_objectives as O
from adbench_oracles import ba_jacobian_fd, kmeans_newton_fd


@dataclass
class Case:
    name: str
    group: str                      # "objective" or "loop"
    fn: Callable                    # the primal s2s and Numba compile
    make_args: Callable             # (rng, full) -> tuple of arguments
    wrt: Tuple[int, ...] = (0,)
    kind: str = "grad"
    deriv: Optional[Callable] = None
    oracle: Optional[Callable] = None
    size: Callable = lambda full: ""  # the size, in words, for the table


def _gmm(rng, full):
    d, k, n = (10, 5, 1000) if full else (3, 3, 20)
    icf = np.concatenate([0.1 * rng.normal(size=(k, d)),
                          0.3 * rng.normal(size=(k, d * (d - 1) // 2))], axis=1)
    return (rng.normal(size=k), rng.normal(size=(k, d)), icf, rng.normal(size=(n, d)),
            1.0, 0)


def _ba(rng, full):
    ncam, npt, nobs = (20, 200, 2000) if full else (3, 6, 12)
    cams = np.concatenate([0.1 * rng.normal(size=(ncam, 3)), rng.normal(size=(ncam, 3)),
                           500.0 + rng.normal(size=(ncam, 1)), rng.normal(size=(ncam, 2)),
                           1e-3 * rng.normal(size=(ncam, 2))], axis=1)
    X = rng.normal(size=(npt, 3)) + np.array([0.0, 0.0, 10.0])
    obs = np.stack([np.arange(nobs) % ncam, np.arange(nobs) % npt], axis=1).astype(np.int64)
    return cams, X, 1.0 + 0.1 * rng.normal(size=nobs), obs, rng.normal(size=(nobs, 2))


def _hand(rng, full):
    nv = 2000 if full else 30
    nb = 16
    weights = rng.random(size=(nb, nv))
    weights = weights / np.sum(weights, axis=0)
    verts = np.concatenate([rng.normal(size=(3, nv)), np.ones((1, nv))])
    offsets = 0.3 * rng.normal(size=(nb, 3))
    return 0.2 * rng.normal(size=26), verts, weights, offsets, rng.normal(size=(3, nv))


def _lstm(rng, full):
    b, c = (14, 1024) if full else (4, 8)
    return (0.5 * rng.normal(size=(4, 4 * b)), 0.5 * rng.normal(size=(3, b)),
            0.5 * rng.normal(size=(4, b)), rng.normal(size=(c, b)))


def _perms(n):
    perms = np.array(list(itertools.permutations(range(n))), dtype=np.int64)
    signs = np.array([np.linalg.det(np.eye(n)[list(p)]) for p in perms]).round()
    return perms, signs


def _det_perm(rng, full):
    n = 8 if full else 4
    return (np.eye(n) + 0.3 * rng.normal(size=(n, n)),) + _perms(n)


def _kmeans(rng, full):
    k, d, n = (50, 8, 5000) if full else (3, 2, 30)
    return rng.normal(size=(k, d)), rng.normal(size=(n, d))


def _pos(n, rng):
    return 1.0 + 0.5 * np.sin(np.linspace(0.0, 3.0, n)) + 0.01 * rng.normal(size=n)


def _sz(quick, full):
    return lambda f: full if f else quick


CASES = [
    Case("gmm (full cov.)", "objective", O.gmm_objective, _gmm, wrt=(0, 1, 2),
         size=_sz("d=3 k=3 n=20", "d=10 k=5 n=1000")),
    Case("ba objective", "objective", O.ba_objective, _ba, wrt=(0, 1, 2),
         size=_sz("3 cams 6 pts 12 obs", "20 cams 200 pts 2000 obs")),
    Case("ba jacobian", "objective", O.ba_objective, _ba, kind="custom",
         deriv=D.ba_jacobian, oracle=ba_jacobian_fd,
         size=_sz("12 obs, 3x15 blocks", "2000 obs, 3x15 blocks")),
    Case("hand (jacfwd)", "objective", O.hand_residuals, _hand, kind="jacfwd",
         size=_sz("16 bones 30 verts", "16 bones 2000 verts")),
    Case("lstm (2 layers)", "objective", O.lstm_objective, _lstm, wrt=(0, 1),
         size=_sz("b=4 c=8", "b=14 c=1024")),
    Case("ode (rk4)", "objective", O.ode_objective,
         lambda rng, full: (rng.random(size=1000 if full else 8), 20 if full else 4),
         size=_sz("n=8 s=4", "n=1000 s=20")),
    Case("logsumexp", "objective", O.logsumexp,
         lambda rng, full: (rng.normal(size=100000 if full else 50),),
         size=_sz("n=50", "n=100000")),
    Case("least squares", "objective", O.llsq,
         lambda rng, full: (rng.normal(size=64 if full else 5), 16392 if full else 20),
         size=_sz("m=5 n=20", "m=64 n=16392")),
    Case("kmeans newton", "objective", O.kmeans_cost, _kmeans, kind="custom",
         deriv=D.kmeans_newton, oracle=kmeans_newton_fd,
         size=_sz("k=3 d=2 n=30", "k=50 d=8 n=5000")),
    Case("det (LU loop)", "objective", O.det_lu,
         lambda rng, full: (np.eye(40 if full else 5) + 0.3 * rng.normal(
             size=(40, 40) if full else (5, 5)),), size=_sz("5x5", "40x40")),
    Case("det (permutations)", "objective", O.det_perm, _det_perm,
         size=_sz("4x4, 24 perms", "8x8, 40320 perms")),
    Case("heat1d copy-back", "loop", L.heat1d_copyback,
         lambda rng, full: (_pos(1000 if full else 16, rng), 200 if full else 5),
         size=_sz("16 x 5", "1000 x 200")),
    Case("heat1d ping-pong", "loop", L.heat1d_pingpong,
         lambda rng, full: (_pos(1000 if full else 16, rng), 200 if full else 5),
         size=_sz("16 x 5", "1000 x 200")),
    Case("heat2d copy-back", "loop", L.heat2d_copyback,
         lambda rng, full: (rng.normal(size=(128, 128) if full else (6, 6)), 20 if full else 3),
         size=_sz("6x6 x 3", "128x128 x 20")),
    Case("heat2d ping-pong", "loop", L.heat2d_pingpong,
         lambda rng, full: (rng.normal(size=(128, 128) if full else (6, 6)), 20 if full else 3),
         size=_sz("6x6 x 3", "128x128 x 20")),
    Case("wave (3 levels)", "loop", L.wave3,
         lambda rng, full: (_pos(1000 if full else 16, rng), 200 if full else 5),
         size=_sz("16 x 5", "1000 x 200")),
    Case("nonlinear scan", "loop", L.nonlinear_scan,
         lambda rng, full: (rng.normal(size=100000 if full else 30), 0.9),
         wrt=(0, 1), size=_sz("n=30", "n=100000")),
    Case("thomas", "loop", L.thomas,
         lambda rng, full: (rng.normal(size=10000 if full else 12),
                            rng.normal(size=10000 if full else 12),
                            4.0 + rng.random(size=10000 if full else 12),
                            rng.normal(size=10000 if full else 12)),
         wrt=(0, 2), size=_sz("n=12", "n=10000")),
    Case("gauss-seidel 1d", "loop", L.gauss_seidel,
         lambda rng, full: (rng.normal(size=1000 if full else 12), 100 if full else 4),
         size=_sz("12 x 4", "1000 x 100")),
    Case("gauss-seidel 2d", "loop", L.gauss_seidel2d,
         lambda rng, full: (rng.normal(size=(128, 128) if full else (6, 6)), 20 if full else 3),
         size=_sz("6x6 x 3", "128x128 x 20")),
    Case("upwind", "loop", L.upwind,
         lambda rng, full: (_pos(1000 if full else 16, rng), 200 if full else 5),
         size=_sz("16 x 5", "1000 x 200")),
]
