"""Checkpointed loops: peak memory and time of a 200,000-step loop's gradient.

The loop: a pendulum integrated by semi-implicit Euler on Python floats,
with a running cost (``pendulum``), 200,000 steps, its gradient w.r.t. the
initial angle and the stiffness ``k``.  Rows:

* the primal (no gradient);
* ``s2s.grad`` of the plain loop (the whole tape: every step's values);
* ``s2s.grad`` of the same loop written ``for i in
  s2s.checkpoint_loop(range(n), levels=L)`` for L = 2 (the default, about
  2 sqrt(n) states kept), 3 and ``"log"``.

Correctness first: each checkpointed gradient equals the plain one (the
angle's bit for bit, ``k``'s within 1e-12: its cotangent is summed segment
by segment) and both agree with central differences; the script stops with
``WRONG: ...`` otherwise.

Time: best of ROUNDS interleaved rounds, one call each (the cyclic garbage
collector on, as users run).  Memory: the tracemalloc peak of one more call
(tracemalloc slows allocation, so it is measured apart from the time).
Target (issue 9): >= 10x less memory for <= 2.5x the time of the plain
gradient.

Run:  .venv/bin/python benchmarks/bench_checkpoint.py [n_steps]
"""
import sys
import time
import tracemalloc

import numpy as np

import s2s

N = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
ROUNDS = 3
DT = 1e-3


def _plain_loop(r, levels=2):
    return r


def _pendulum(theta0, k, n, loop, levels):
    theta = theta0
    omega = 0.0
    cost = 0.0
    for i in loop(range(n), levels=levels):
        alpha = -k * np.sin(theta)
        omega = omega + DT * alpha
        theta = theta + DT * omega
        cost = cost + theta * theta
    return DT * cost + omega * omega


def pendulum(theta0, k, n):
    return _pendulum(theta0, k, n, _plain_loop, 2)


def pendulum_sqrt(theta0, k, n):
    return _pendulum(theta0, k, n, s2s.checkpoint_loop, 2)


def pendulum_3(theta0, k, n):
    return _pendulum(theta0, k, n, s2s.checkpoint_loop, 3)


def pendulum_log(theta0, k, n):
    return _pendulum(theta0, k, n, s2s.checkpoint_loop, "log")


def _fd(f, args, i, h=1e-6):
    a, b = list(args), list(args)
    a[i] += h
    b[i] -= h
    return (f(*a) - f(*b)) / (2 * h)


def _peak(fn, args):
    tracemalloc.start()
    try:
        fn(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def main():
    args = (0.8, 2.5, N)
    rows = [("primal", pendulum), ("grad, plain loop", s2s.grad(pendulum, argnums=(0, 1)))]
    for label, f in (("levels=2 (sqrt)", pendulum_sqrt), ("levels=3", pendulum_3),
                     ('levels="log"', pendulum_log)):
        rows.append((f"grad, checkpoint_loop {label}", s2s.grad(f, argnums=(0, 1))))
    plain = rows[1][1](*args)
    fd = (_fd(pendulum, args, 0), _fd(pendulum, args, 1))
    if not np.allclose(plain, fd, rtol=1e-5):
        sys.exit(f"WRONG: plain gradient {plain} vs finite differences {fd}")
    for label, g in rows[2:]:
        got = g(*args)
        if got[0] != plain[0] or abs(got[1] - plain[1]) > 1e-12 * abs(plain[1]):
            sys.exit(f"WRONG: {label}: {got} vs plain {plain}")
    best = {label: float("inf") for label, _ in rows}
    for _ in range(ROUNDS):
        for label, fn in rows:
            t = time.perf_counter()
            fn(*args)
            best[label] = min(best[label], time.perf_counter() - t)
    peaks = {label: _peak(fn, args) for label, fn in rows}
    base_t, base_m = best[rows[1][0]], peaks[rows[1][0]]
    print(f"{N} steps; gradient {plain[0]:.12g}, {plain[1]:.12g} (finite differences "
          f"{fd[0]:.8g}, {fd[1]:.8g})")
    print(f"{'':40s} {'time':>9s} {'/ plain':>8s} {'peak MB':>9s} {'plain /':>8s}")
    for label, _ in rows:
        ratio = f"{base_m / peaks[label]:7.0f}x" if label != "primal" else ""
        print(f"{label:40s} {best[label]:8.3f}s {best[label] / base_t:7.2f}x "
              f"{peaks[label] / 1e6:9.3f} {ratio}")


if __name__ == "__main__":
    main()
