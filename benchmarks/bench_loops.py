"""Reverse mode through Python loops: gradient / primal time and tape size.

Two functions, each differentiated by ``s2s.grad`` in Python mode:

(a) ``loop_fixtures.rk4_energy``: 1000 RK4 steps of a damped oscillator on
    plain Python floats (a ``for`` loop calling the right-hand side), the
    gradient w.r.t. (omega, zeta, x0, v0).  Target: gradient <= 4x primal.
(b) the LSTM sample's loss (``samples/lstm_lm.py``, ``bptt_loss`` on one
    3-token window from the trainable initial state; vocabulary 43,
    dimension 17), the gradient w.r.t. the params dict.  Target: <= 3x.
(c) the ODE sample's loss (``samples/ode_fit.py``: adaptive RK4 by step
    doubling in a ``while`` loop with an ``if``, ``abs``, ``min``, ``max``),
    ``value_and_grad`` w.r.t. (omega, zeta).  No target; no hand-written row.

Correctness first: each s2s gradient against central differences and
against a hand-written gradient (``loop_fixtures``); the script stops with
``WRONG: ...`` if one is off.

Times, in one process, interleaved rounds (best of ROUNDS; each callable
runs ~40 ms per round, at least one call): the primal; ``s2s.grad`` (the
public call); the generated function called directly; a hand-written
gradient (the floor for Python code).  Then what the time goes to: the
number of ``rt.*`` helper calls per loop iteration, and copies of the
generated code with ``rt.unbroadcast`` (and, for the floats of (a),
``rt.add`` and ``rt.unpack_vjp``) replaced by the plain operation they
reduce to on these inputs (each checked to give the same gradient), and
with ``rt.unbroadcast`` given a fast path for operands of one type and shape
and, for (b), ``rt.getitem_vjp`` of a dict entry returning a one-key dict.

Tape: entries and bytes per loop iteration of the tape the primal sweep
leaves for the adjoint sweep, broken down by how the adjoint reads each
pushed value (``tape_stats.py``), against what the hand-written gradient
keeps.

Run:  OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_loops.py
"""
import os
import sys
import timeit
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "samples"))

import loop_fixtures as lf  # noqa: E402
import lstm_lm  # noqa: E402
import ode_fit  # noqa: E402
import tape_stats as ts  # noqa: E402

import s2s  # noqa: E402
from s2s.tree_util import tree_leaves, tree_map  # noqa: E402

ROUNDS = 9
ROUND_S = 0.04

RK4_ARGS = (1.5, 0.2, 1.0, 0.3, 0.01, 1000)
RK4_STEPS = RK4_ARGS[-1]
LSTM_PARAMS = lstm_lm.init_params(lstm_lm.vocab_size)
LSTM_BATCH = lstm_lm.training_data[:lstm_lm.bptt_length]
LSTM_ARGS = (LSTM_PARAMS, LSTM_BATCH)


def rk4_primal():
    return lf.rk4_energy(*RK4_ARGS)


def lstm_primal():
    return lstm_lm.bptt_loss(*LSTM_ARGS)


ODE_ARGS = (ode_fit.first_guess, ode_fit.times, ode_fit.simulate(ode_fit.true_params, ode_fit.times))


def ode_primal():
    return ode_fit.loss(*ODE_ARGS)


def ode_while_iterations():
    """Trips of the adaptive solver's while loop in ``ode_fit.loss(*ODE_ARGS)``
    (three ``rk4_step`` calls per trip)."""
    calls = []
    step = ode_fit.rk4_step
    ode_fit.rk4_step = lambda *a: calls.append(1) or step(*a)
    try:
        ode_primal()
    finally:
        ode_fit.rk4_step = step
    return len(calls) // 3


rk4_grad = s2s.grad(lf.rk4_energy, argnums=(0, 1, 2, 3))
lstm_grad = lstm_lm.grad_fn          # s2s.grad(bptt_loss, has_aux=True)


# ---------------------------------------------------------------- correctness

def _rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b)) / max(1e-300, np.max(np.abs(b))))


def _check(label, err, tol):
    if not err <= tol:
        sys.exit(f"WRONG: {label}: relative error {err:.2e} > {tol:.0e}")


def check():
    got = rk4_grad(*RK4_ARGS)
    eps = 1e-6
    for i in range(4):
        plus, minus = list(RK4_ARGS), list(RK4_ARGS)
        plus[i] += eps
        minus[i] -= eps
        fd = (lf.rk4_energy(*plus) - lf.rk4_energy(*minus)) / (2 * eps)
        _check(f"rk4 grad[{i}] vs central differences", _rel(got[i], fd), 1e-6)
    _check("rk4 grad vs hand-written", _rel(got, lf.rk4_energy_grad_by_hand(*RK4_ARGS)), 1e-10)

    grads, _ = lstm_grad(*LSTM_ARGS)
    loss, by_hand = lf.lstm_grad_by_hand(*LSTM_ARGS)
    _check("lstm loss vs hand-written", _rel(lstm_primal()[0], loss), 1e-12)
    for g, h in zip(tree_leaves(grads), tree_leaves(by_hand)):
        _check("lstm grad vs hand-written", _rel(g, h), 1e-10)
    rng = np.random.default_rng(0)
    for _ in range(3):
        d = tree_map(lambda p: rng.standard_normal(p.shape), LSTM_PARAMS)
        plus = tree_map(lambda p, q: p + eps * q, LSTM_PARAMS, d)
        minus = tree_map(lambda p, q: p - eps * q, LSTM_PARAMS, d)
        fd = (lstm_lm.bptt_loss(plus, LSTM_BATCH)[0]
              - lstm_lm.bptt_loss(minus, LSTM_BATCH)[0]) / (2 * eps)
        dot = sum(float(np.vdot(g, q)) for g, q in zip(tree_leaves(grads), tree_leaves(d)))
        _check("lstm <grad, d> vs central differences", _rel(dot, fd), 1e-6)


# ---------------------------------------------------------------- timing

def best_times(callables):
    """Best time per call of each callable, interleaved rounds; each round
    starts at another callable."""
    numbers = []
    for fn in callables:
        fn()
        t = timeit.timeit(fn, number=1)
        numbers.append(max(1, int(ROUND_S / max(t, 1e-9))))
    best = [float("inf")] * len(callables)
    for r in range(ROUNDS):
        for k in range(len(callables)):
            i = (r + k) % len(callables)
            best[i] = min(best[i], timeit.timeit(callables[i], number=numbers[i]) / numbers[i])
    return best


_REAL_SCALARS = (float, np.float64)


def fast_unbroadcast(g, x, _slow=ts.s2s_runtime.unbroadcast):
    """``rt.unbroadcast`` with the checks a fast path would make first: nothing
    to do for two real float64 scalars (``float`` or ``np.float64``), or two
    arrays of the same shape and dtype (the slow path returns ``g`` then too)."""
    tg = type(g)
    if tg in _REAL_SCALARS and type(x) in _REAL_SCALARS:
        return g
    if tg is np.ndarray and type(x) is np.ndarray and g.shape == x.shape \
            and g.dtype == x.dtype:
        return g
    return _slow(g, x)


def sparse_getitem_vjp(g, x, index, _dense=ts.s2s_runtime.getitem_vjp):
    """``rt.getitem_vjp`` whose cotangent of ``d[key]`` for a dict ``d`` is
    ``{key: g}`` (``rt.add`` and ``rt.densify`` already treat a missing key as
    zero) instead of zeros for every other entry."""
    if type(x) is dict:
        return {index: g}
    return _dense(g, x, index)


def _same_gradient(a, b):
    return all(np.allclose(x, y, rtol=1e-13, atol=0) for x, y in zip(tree_leaves(a), tree_leaves(b)))


def variants(transform, args, replacements):
    """Copies of the generated code with rt helpers replaced, each checked to
    give the gradient the original gives: ``[(label, zero-argument callable)]``.
    A helper the generated code does not call is left out."""
    gen, values, free = ts.generated_function(transform, args)
    want = gen(*values, **free)
    counted, calls = ts.counting(gen)
    counted(*values, **free)
    out = [("generated function, called directly", lambda: gen(*values, **free))]
    replace = {}
    for label, name, fn in replacements:
        if not calls[name]:
            continue
        replace[name] = fn
        copy = ts.with_runtime(gen, **replace)
        if not _same_gradient(copy(*values, **free), want):
            sys.exit(f"WRONG: the variant '{label}' changes the gradient")
        out.append((label, lambda copy=copy: copy(*values, **free)))
    return out


def time_rows(name, primal, public, args, transform, hand, hand_label, replacements):
    rows = variants(transform, args, replacements)
    labels = ["primal", "s2s.grad (public call)"] + [r[0] for r in rows] + [hand_label]
    fns = [primal, lambda: public(*args)] + [r[1] for r in rows] + [hand]
    if hand is None:
        labels, fns = labels[:-1], fns[:-1]
    times = best_times(fns)
    print(f"\n{name}")
    print(f"  {'':<58}{'time':>11}{'/ primal':>10}")
    for label, t in zip(labels, times):
        unit = f"{t * 1e3:8.3f} ms" if t >= 1e-3 else f"{t * 1e6:8.1f} us"
        print(f"  {label:<58}{unit:>11}{t / times[0]:>9.2f}x")


def rt_calls(transform, args, iterations):
    gen, values, free = ts.generated_function(transform, args)
    copy, calls = ts.counting(gen)
    copy(*values, **free)
    per = ", ".join(f"{k} {v / iterations:.3g}" for k, v in calls.most_common()
                    if v >= iterations) or "none"
    rest = ", ".join(f"{k} {v}" for k, v in calls.most_common() if v < iterations)
    print(f"  rt.* calls per loop iteration: {per}; fewer than one per iteration "
          f"(in all): {rest or 'none'}")


# ---------------------------------------------------------------- tape

def tape_rows(name, transform, args, iterations, hand_bytes):
    r = ts.tape_report(transform, args, iterations)
    n = iterations
    print(f"\n{name}: {n} loop iterations")
    print(f"  tape: {r['tape_entries'] / n:g} entries per iteration, "
          f"{r['tape_bytes'] / n:,.0f} bytes per iteration (the 2-tuple links "
          f"{ts.LINK_BYTES} B each, and the objects they keep alive)")
    print(f"  ctrl: {r['ctrl_entries'] / n:g} entries per iteration, "
          f"{r['ctrl_bytes'] / n:,.0f} bytes per iteration")
    if r["by_site"] is None:
        print("  (the sites pushed differ between iterations: no breakdown)")
        return r
    what = {"value": "read as values by the adjoint",
            "invariant": "read as values, but the same on every iteration",
            "shape": "read only for their shape (rt.unbroadcast, rt.zeros_like, ...)",
            "unread": "not read by the adjoint"}
    print(f"  {r['sites']} push sites per iteration:")
    for kind, (count, size) in r["by_site"].items():
        print(f"    {count:3d} {what[kind]:<62}{size:9,.0f} B/iter")
    kept = "" if hand_bytes is None else \
        f"; the hand-written gradient keeps {hand_bytes:,.0f} B/iter"
    print(f"  the 'value' sites' numbers in typed buffers (8 B per float): "
          f"{r['needed_packed_per_iter']:,.0f} B/iter{kept}")
    if os.environ.get("TAPE_DETAIL"):
        for site, kind, size in r["detail"]:
            print(f"      {site:<12}{kind:<10}{size:9,.0f} B/iter")
    return r


def _lstm_hand_bytes():
    """What lstm_grad_by_hand keeps per step: idx, h, c, softmax, x, i, f, g, o, tanh(c')."""
    dim, vocab = LSTM_PARAMS["c_0"].size, lstm_lm.vocab_size
    return 8 * (1 + 8 * dim + vocab)


def main():
    print(f"s2s {s2s.__version__}, numpy {np.__version__}, Python {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}")
    check()
    print("gradients checked against central differences and the hand-written gradients")

    fast = [("rt.unbroadcast with a fast path for like scalars/arrays", "unbroadcast",
             fast_unbroadcast)]
    sparse = [("+ rt.getitem_vjp(g, d, key) of a dict -> {key: g}", "getitem_vjp",
               sparse_getitem_vjp)]
    as_float = [("+ rt.unbroadcast(g, x) -> g (elided: all floats)", "unbroadcast", lambda g, x: g),
                ("+ rt.add(a, b) -> a + b", "add", lambda a, b: a + b),
                ("+ rt.unpack_vjp(cts, x) -> cts", "unpack_vjp", lambda cts, x: cts)]
    time_rows(f"(a) RK4, {RK4_STEPS} steps, plain floats: grad w.r.t. (omega, zeta, x0, v0)",
              rk4_primal, rk4_grad, RK4_ARGS, rk4_grad,
              lambda: lf.rk4_energy_grad_by_hand(*RK4_ARGS),
              "hand-written gradient (keeps x, v; recomputes the stages)", fast + as_float)
    rt_calls(rk4_grad, RK4_ARGS, RK4_STEPS)

    time_rows(f"(b) LSTM sample loss, {len(LSTM_BATCH)}-token window: grad w.r.t. the params dict",
              lstm_primal, lstm_grad, LSTM_ARGS, lstm_grad,
              lambda: lf.lstm_grad_by_hand(*LSTM_ARGS), "hand-written gradient (BPTT)",
              fast + sparse)
    rt_calls(lstm_grad, LSTM_ARGS, len(LSTM_BATCH))

    trips = ode_while_iterations()
    time_rows(f"(c) the ODE sample's loss: adaptive RK4 (a while loop, {trips} trips; "
              "if, abs, min, max), no target", ode_primal, ode_fit.value_and_grad_fn, ODE_ARGS,
              ode_fit.value_and_grad_fn, None, None, fast)
    rt_calls(ode_fit.value_and_grad_fn, ODE_ARGS, trips)

    tape_rows("(a) RK4 tape", rk4_grad, RK4_ARGS, RK4_STEPS, 16)
    tape_rows("(b) LSTM tape", lstm_grad, LSTM_ARGS, len(LSTM_BATCH), _lstm_hand_bytes())
    tape_rows("(c) ODE sample tape", ode_fit.value_and_grad_fn, ODE_ARGS, trips, None)


if __name__ == "__main__":
    main()
