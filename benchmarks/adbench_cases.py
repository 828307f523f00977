"""The cases ``adbench.py`` checks and times: each kernel, its arguments at the quick and
the timing sizes, what is differentiated and how (``kind``).

``make_args(rng, level)``: ``level`` 0 is the size the derivatives are checked at
(small: the finite differences cost a primal per input), 1 the quick timing size, 2
the issue's sizes (``--full``); ``pick(level, check, quick, full)`` chooses.

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
    make_args: Callable             # (rng, level) -> tuple of arguments
    wrt: Tuple[int, ...] = (0,)
    kind: str = "grad"
    deriv: Optional[Callable] = None
    oracle: Optional[Callable] = None
    size: Callable = lambda level: ""  # the size, in words, for the table


def pick(level, check, quick, full):
    return (check, quick, full)[level]


def _gmm(rng, level):
    d, k, n = pick(level, (3, 3, 20), (5, 5, 100), (10, 5, 1000))
    icf = np.concatenate([0.1 * rng.normal(size=(k, d)),
                          0.3 * rng.normal(size=(k, d * (d - 1) // 2))], axis=1)
    return (rng.normal(size=k), rng.normal(size=(k, d)), icf, rng.normal(size=(n, d)),
            1.0, 0)


def _ba(rng, level):
    ncam, npt, nobs = pick(level, (3, 6, 12), (5, 50, 200), (20, 200, 2000))
    cams = np.concatenate([0.1 * rng.normal(size=(ncam, 3)), rng.normal(size=(ncam, 3)),
                           500.0 + rng.normal(size=(ncam, 1)), rng.normal(size=(ncam, 2)),
                           1e-3 * rng.normal(size=(ncam, 2))], axis=1)
    X = rng.normal(size=(npt, 3)) + np.array([0.0, 0.0, 10.0])
    obs = np.stack([np.arange(nobs) % ncam, np.arange(nobs) % npt], axis=1).astype(np.int64)
    return cams, X, 1.0 + 0.1 * rng.normal(size=nobs), obs, rng.normal(size=(nobs, 2))


def _hand(rng, level):
    nv = pick(level, 30, 200, 2000)
    nb = 16
    weights = rng.random(size=(nb, nv))
    weights = weights / np.sum(weights, axis=0)
    verts = np.concatenate([rng.normal(size=(3, nv)), np.ones((1, nv))])
    offsets = 0.3 * rng.normal(size=(nb, 3))
    return 0.2 * rng.normal(size=26), verts, weights, offsets, rng.normal(size=(3, nv))


def _lstm(rng, level):
    b, c = pick(level, (4, 8), (14, 50), (14, 1024))
    return (0.5 * rng.normal(size=(4, 4 * b)), 0.5 * rng.normal(size=(3, b)),
            0.5 * rng.normal(size=(4, b)), rng.normal(size=(c, b)))


def _perms(n):
    perms = np.array(list(itertools.permutations(range(n))), dtype=np.int64)
    signs = np.array([np.linalg.det(np.eye(n)[list(p)]) for p in perms]).round()
    return perms, signs


def _det_perm(rng, level):
    n = pick(level, 4, 6, 8)
    return (np.eye(n) + 0.3 * rng.normal(size=(n, n)),) + _perms(n)


def _kmeans(rng, level):
    k, d, n = pick(level, (3, 2, 30), (10, 4, 500), (50, 8, 5000))
    return rng.normal(size=(k, d)), rng.normal(size=(n, d))


def _pos(n, rng):
    return 1.0 + 0.5 * np.sin(np.linspace(0.0, 3.0, n)) + 0.01 * rng.normal(size=n)


def _sz(check, quick, full):
    return lambda level: pick(level, check, quick, full)


def _vec(n, steps, make):
    """Arguments ``(make(n[level]), steps[level])`` of a 1-D stencil."""
    return lambda rng, level: (make(pick(level, *n), rng), pick(level, *steps))


def _grid(n, steps):
    return lambda rng, level: (rng.normal(size=(pick(level, *n),) * 2), pick(level, *steps))


def _thomas(rng, level):
    n = pick(level, 12, 2000, 10000)
    return rng.normal(size=n), rng.normal(size=n), 4.0 + rng.random(size=n), rng.normal(size=n)


def _normal(n, rng):
    return rng.normal(size=n)


CASES = [
    Case("gmm (full cov.)", "objective", O.gmm_objective, _gmm, wrt=(0, 1, 2),
         size=_sz("d=3 k=3 n=20", "d=5 k=5 n=100", "d=10 k=5 n=1000")),
    Case("ba objective", "objective", O.ba_objective, _ba, wrt=(0, 1, 2),
         size=_sz("3 cams 6 pts 12 obs", "5 cams 50 pts 200 obs", "20 cams 200 pts 2000 obs")),
    Case("ba jacobian", "objective", O.ba_objective, _ba, kind="custom",
         deriv=D.ba_jacobian, oracle=ba_jacobian_fd,
         size=_sz("12 obs", "200 obs", "2000 obs")),
    Case("hand (jacfwd)", "objective", O.hand_residuals, _hand, kind="jacfwd",
         size=_sz("16 bones 30 verts", "16 bones 200 verts", "16 bones 2000 verts")),
    Case("lstm (2 layers)", "objective", O.lstm_objective, _lstm, wrt=(0, 1),
         size=_sz("b=4 c=8", "b=14 c=50", "b=14 c=1024")),
    Case("ode (rk4)", "objective", O.ode_objective,
         lambda rng, level: (rng.random(size=pick(level, 8, 100, 1000)), pick(level, 4, 10, 20)),
         size=_sz("n=8 s=4", "n=100 s=10", "n=1000 s=20")),
    Case("logsumexp", "objective", O.logsumexp,
         lambda rng, level: (rng.normal(size=pick(level, 50, 5000, 100000)),),
         size=_sz("n=50", "n=5000", "n=100000")),
    Case("least squares", "objective", O.llsq,
         lambda rng, level: (rng.normal(size=pick(level, 5, 16, 64)),
                             pick(level, 20, 1000, 16392)),
         size=_sz("m=5 n=20", "m=16 n=1000", "m=64 n=16392")),
    Case("kmeans newton", "objective", O.kmeans_cost, _kmeans, kind="custom",
         deriv=D.kmeans_newton, oracle=kmeans_newton_fd,
         size=_sz("k=3 d=2 n=30", "k=10 d=4 n=500", "k=50 d=8 n=5000")),
    Case("det (LU loop)", "objective", O.det_lu,
         lambda rng, level: (np.eye(pick(level, 5, 16, 40))
                             + 0.3 * rng.normal(size=(pick(level, 5, 16, 40),) * 2),),
         size=_sz("5x5", "16x16", "40x40")),
    Case("det (permutations)", "objective", O.det_perm, _det_perm,
         size=_sz("4x4 (24 perms)", "6x6 (720 perms)", "8x8 (40320 perms)")),
    Case("heat1d copy-back", "loop", L.heat1d_copyback, _vec((16, 256, 1000), (5, 50, 200), _pos),
         size=_sz("16 x 5", "256 x 50", "1000 x 200")),
    Case("heat1d ping-pong", "loop", L.heat1d_pingpong, _vec((16, 256, 1000), (5, 50, 200), _pos),
         size=_sz("16 x 5", "256 x 50", "1000 x 200")),
    Case("heat2d copy-back", "loop", L.heat2d_copyback, _grid((6, 32, 128), (3, 10, 20)),
         size=_sz("6x6 x 3", "32x32 x 10", "128x128 x 20")),
    Case("heat2d ping-pong", "loop", L.heat2d_pingpong, _grid((6, 32, 128), (3, 10, 20)),
         size=_sz("6x6 x 3", "32x32 x 10", "128x128 x 20")),
    Case("wave (3 levels)", "loop", L.wave3, _vec((16, 256, 1000), (5, 50, 200), _pos),
         size=_sz("16 x 5", "256 x 50", "1000 x 200")),
    Case("nonlinear scan", "loop", L.nonlinear_scan,
         lambda rng, level: (rng.normal(size=pick(level, 30, 5000, 100000)), 0.9),
         wrt=(0, 1), size=_sz("n=30", "n=5000", "n=100000")),
    Case("thomas", "loop", L.thomas, _thomas, wrt=(0, 2),
         size=_sz("n=12", "n=2000", "n=10000")),
    Case("gauss-seidel 1d", "loop", L.gauss_seidel, _vec((12, 100, 1000), (4, 20, 100), _normal),
         size=_sz("12 x 4", "100 x 20", "1000 x 100")),
    Case("gauss-seidel 2d", "loop", L.gauss_seidel2d, _grid((6, 24, 128), (3, 10, 20)),
         size=_sz("6x6 x 3", "24x24 x 10", "128x128 x 20")),
    Case("upwind", "loop", L.upwind, _vec((16, 256, 1000), (5, 50, 200), _pos),
         size=_sz("16 x 5", "256 x 50", "1000 x 200")),
]
