"""Forward mode: JVP / primal, forward-over-reverse HVP / gradient, and the cost
of transforming generated code again (second order) against the first-order
transform.

1. JVP / primal (target <= 2x): ``s2s.jvp(f, primals, tangents)`` against
   ``f(*primals)``, for
   - ``mlp_loss`` (``fixtures.mlp_params_loss``: batch 256 x 512 features,
     hidden 512, 512 outputs, float64; tangents for all parameters, the data
     closed over),
   - ``tanh_sq(X) = sum(tanh(X)**2)`` on (30, 40) and on (1000, 1000),
   - ``tanh_matmul(X) = sum(tanh(X @ W)**2)``, X (1000, 400), W (400, 300),
   - ``straight50`` on a 300-element vector (``outer`` makes 300 x 300).
   Rows: the public call, the generated JVP function called directly (no
   argument checks, no cache lookup), and a hand-written numpy JVP (the floor
   for code that calls numpy, whoever writes it).
2. HVP / gradient (target <= 2.5x): ``s2s.jvp(s2s.grad(f), (X,), (V,))``
   (forward mode over the generated gradient code; returns the gradient and
   the Hessian-vector product) against ``s2s.grad(f)(X)``, same functions;
   public calls, generated functions called directly, hand-written numpy.
   Parts 1 and 2 are timed in one process in interleaved rounds (each
   callable keeps its best round, so a busy spell on a shared machine hurts
   all rows alike).
3. Transform cost, second order / first order (target <= 3x), in fresh
   subprocesses (median of 5): the first call of ``s2s.grad(f)(x)`` (first-
   order transform + a run on tiny inputs), then the first call of
   ``s2s.jvp(s2s.grad(f), (x,), (v,))`` or ``s2s.grad(s2s.grad(f))(x0)`` in the
   same process (the gradient code is cached: only the second-order transform
   is timed). Before the clock starts, every mode is warmed up on other
   functions (``fixtures.warmup``/``scalar_warmup``) so one-time start-up
   costs (rule templates parsed into IR) are excluded; a counter on
   ``pipeline.compile_function`` checks that each timed call compiled code.
4. jax / numba rows when importable (skipped with a note otherwise).

Correctness is checked first: each JVP against central differences of f,
each HVP against central differences of the gradient, and both against the
hand-written versions; the script stops with an error when one is wrong.
No assertion is made on times.

Run:  python benchmarks/bench_forward.py
      (on a shared machine: OPENBLAS_NUM_THREADS=1 python benchmarks/bench_forward.py,
      see benchmarks/README.md)
"""
import importlib.util
import os
import statistics
import subprocess
import sys
import time
import timeit
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import fixtures  # noqa: E402
from bench_mlp import make_data, manual_grad  # noqa: E402

import s2s  # noqa: E402
from s2s.core.forward import forward_of  # noqa: E402
from s2s.tree_util import tree_leaves  # noqa: E402

ROUNDS = 20          # parts 1-2: best of ROUNDS interleaved rounds
CHUNK_S = 0.02       # ... each round runs a callable ~CHUNK_S seconds (at least once)
RUNS = 5             # part 3: median of RUNS fresh subprocesses


# -- hand-written numpy JVPs, gradients and HVPs (the floor) -------------------------

def tanh_sq_jvp(X, dX):
    t = np.tanh(X)
    t2 = t * t
    return np.sum(t2), 2.0 * np.vdot(t - t * t2, dX)


def tanh_sq_grad(X):
    t = np.tanh(X)
    return 2.0 * t * (1.0 - t * t)


def tanh_sq_hvp(X, V):
    t = np.tanh(X)
    t2 = t * t
    s = 1.0 - t2
    return 2.0 * t * s, 2.0 * s * (s - 2.0 * t2) * V


def tanh_matmul_jvp(X, dX):
    W = fixtures.MATMUL_W
    t = np.tanh(X @ W)
    t2 = t * t
    return np.sum(t2), 2.0 * np.vdot(t - t * t2, dX @ W)


def tanh_matmul_grad(X):
    W = fixtures.MATMUL_W
    t = np.tanh(X @ W)
    return (2.0 * t * (1.0 - t * t)) @ W.T


def tanh_matmul_hvp(X, V):
    W = fixtures.MATMUL_W
    t = np.tanh(X @ W)
    t2 = t * t
    s = 1.0 - t2
    return (2.0 * t * s) @ W.T, (2.0 * s * (s - 2.0 * t2) * (V @ W)) @ W.T


def mlp_jvp(p, dp, x, y):
    z1 = x @ p["w1"] + p["b1"]
    h = np.tanh(z1)
    diff = h @ p["w2"] + p["b2"] - y
    dh = (x @ dp["w1"] + dp["b1"]) * (1.0 - h * h)
    dpred = dh @ p["w2"] + h @ dp["w2"] + dp["b2"]
    return np.mean(diff * diff), np.vdot(diff, dpred) * (2.0 / diff.size)


def mlp_hvp(p, dp, x, y):
    h = np.tanh(x @ p["w1"] + p["b1"])
    s = 1.0 - h * h
    diff = h @ p["w2"] + p["b2"] - y
    dh = (x @ dp["w1"] + dp["b1"]) * s
    dpred = dh @ p["w2"] + h @ dp["w2"] + dp["b2"]
    c = 2.0 / diff.size
    gp, dgp = diff * c, dpred * c
    gh = gp @ p["w2"].T
    dgh = dgp @ p["w2"].T + gp @ dp["w2"].T
    gz = gh * s
    dgz = dgh * s - 2.0 * gh * h * dh
    grad = {"b1": gz.sum(axis=0), "b2": gp.sum(axis=0), "w1": x.T @ gz, "w2": h.T @ gp}
    dgrad = {"b1": dgz.sum(axis=0), "b2": dgp.sum(axis=0), "w1": x.T @ dgz,
             "w2": dh.T @ gp + h.T @ dgp}
    return grad, dgrad


# -- cases ---------------------------------------------------------------------

class Case:
    """One function ``f`` of one argument ``X`` (an array or a dict of arrays),
    its tangent ``V``, and hand-written versions (None where there are none)."""

    def __init__(self, label, f, X, V, jvp=None, grad=None, hvp=None):
        self.label, self.f, self.X, self.V = label, f, X, V
        self.jvp, self.grad, self.hvp = jvp, grad, hvp


def make_cases():
    rng = np.random.default_rng(0)
    params, x, y = make_data()
    dparams = {k: rng.standard_normal(v.shape) / np.sqrt(v.size) for k, v in params.items()}
    cases = [Case("mlp_loss 256x512x512x512 (params)", fixtures.mlp_params_loss(x, y),
                  params, dparams,
                  lambda p, dp: mlp_jvp(p, dp, x, y),
                  lambda p: manual_grad(p, x, y),
                  lambda p, dp: mlp_hvp(p, dp, x, y))]
    for shape in ((30, 40), (1000, 1000)):
        cases.append(Case(f"tanh_sq {shape[0]}x{shape[1]}", fixtures.tanh_sq,
                          rng.standard_normal(shape), rng.standard_normal(shape),
                          tanh_sq_jvp, tanh_sq_grad, tanh_sq_hvp))
    cases.append(Case("tanh_matmul 1000x400 @ 400x300", fixtures.tanh_matmul,
                      rng.standard_normal((1000, 400)), rng.standard_normal((1000, 400)),
                      tanh_matmul_jvp, tanh_matmul_grad, tanh_matmul_hvp))
    cases.append(Case("straight50 n=300", fixtures.straight50,
                      np.linspace(0.1, 1.0, 300), rng.standard_normal(300) * 0.1))
    return cases


# -- the generated functions, called directly ------------------------------------------
# (the same steps as _ForwardTransform.__call__ / _ReverseTransform.run, done once)

def direct_jvp(fn, primals, tangents, kwonly=None):
    """A thunk calling the generated JVP function of ``fn`` directly."""
    tr = forward_of(fn, False)
    values, kw = tr._bind(primals, kwonly)
    carries = tr._carries(values, len(primals))
    gen, free = tr.generated(values, carries, kw)
    dots = [t for t, c in zip(tangents, carries) if c]
    args, kwargs = (*values, *dots), {**free, **kw}
    return lambda: gen(*args, **kwargs)


def direct_grad(fn, X):
    gen, free = s2s.grad(fn).generated([X])
    return lambda: gen(X, **free)


def direct_hvp(fn, X, V):
    """A thunk calling the forward-mode code of grad(fn)'s generated code directly."""
    inner, free = s2s.grad(fn).generated([X])
    return direct_jvp(inner, (X,), (V,), free)


# -- correctness ---------------------------------------------------------------

def _flat(t):
    return np.concatenate([np.ravel(leaf) for leaf in tree_leaves(t)]).astype(float)


def _axpy(X, a, V):
    if isinstance(X, dict):
        return {k: X[k] + a * V[k] for k in X}
    return X + a * V


def _close(a, b, rtol, what, case):
    a, b = _flat(a), _flat(b)
    err = np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300)
    if not err <= rtol:
        sys.exit(f"WRONG: {case.label}: {what}: relative error {err:.2e} > {rtol:.0e}")
    return err


def check(case):
    f, X, V = case.f, case.X, case.V
    eps = 1e-6
    out, dout = s2s.jvp(f, (X,), (V,))
    _close(out, f(X), 1e-12, "jvp primal output vs f(X)", case)
    fd = (f(_axpy(X, eps, V)) - f(_axpy(X, -eps, V))) / (2 * eps)
    e_jvp = _close(dout, fd, 1e-5, "jvp tangent vs central differences", case)
    _close(direct_jvp(f, (X,), (V,))(), (out, dout), 1e-12, "generated jvp called directly", case)
    if case.jvp is not None:
        _close(case.jvp(X, V), (out, dout), 1e-10, "jvp vs hand-written", case)

    g = s2s.grad(f)
    grad, hv = s2s.jvp(g, (X,), (V,))
    _close(grad, g(X), 1e-12, "jvp(grad) primal output vs grad(f)(X)", case)
    fd = _flat(g(_axpy(X, eps, V))) - _flat(g(_axpy(X, -eps, V)))
    e_hvp = _close(hv, fd / (2 * eps), 1e-5, "hvp vs central differences of grad", case)
    _close(direct_hvp(f, X, V)(), (grad, hv), 1e-12, "generated hvp called directly", case)
    _close(direct_grad(f, X)(), grad, 1e-12, "generated grad called directly", case)
    if case.hvp is not None:
        _close(case.grad(X), grad, 1e-10, "grad vs hand-written", case)
        _close(case.hvp(X, V), (grad, hv), 1e-10, "hvp vs hand-written", case)
    print(f"  {case.label:<36} jvp vs FD {e_jvp:.1e}   hvp vs FD of grad {e_hvp:.1e}   ok")


# -- timing (parts 1 and 2) --------------------------------------------------------

def interleaved(fns):
    """Best seconds per call of each thunk: ROUNDS interleaved rounds, each running
    a thunk about CHUNK_S seconds (at least once), so a busy spell of a shared
    machine hurts all."""
    number = {}
    for k, fn in fns.items():
        fn()
        t0 = time.perf_counter()
        fn()
        number[k] = max(1, int(CHUNK_S / max(time.perf_counter() - t0, 1e-7)))
    best = dict.fromkeys(fns, float("inf"))
    keys = list(fns)
    for r in range(ROUNDS):
        # each round starts at another callable, and each callable runs once
        # untimed before its timed calls: what ran just before changes the state
        # of malloc's free lists, hence how many fresh pages the arrays touch
        for k in keys[r % len(keys):] + keys[:r % len(keys)]:
            fns[k]()
            best[k] = min(best[k], timeit.timeit(fns[k], number=number[k]) / number[k])
    return best


def time_case(case):
    f, X, V = case.f, case.X, case.V
    g = s2s.grad(f)
    fns = {
        "primal": lambda: f(X),
        "jvp": lambda: s2s.jvp(f, (X,), (V,)),
        "jvp_direct": direct_jvp(f, (X,), (V,)),
        "grad": lambda: g(X),
        "grad_direct": direct_grad(f, X),
        "hvp": lambda: s2s.jvp(g, (X,), (V,)),
        "hvp_direct": direct_hvp(f, X, V),
    }
    if case.jvp is not None:
        fns["jvp_manual"] = lambda: case.jvp(X, V)
    if case.hvp is not None:
        fns["grad_manual"] = lambda: case.grad(X)
        fns["hvp_manual"] = lambda: case.hvp(X, V)
    return interleaved(fns)


def _fmt_t(s):
    return f"{s * 1e6:.1f} us" if s < 1e-3 else f"{s * 1e3:.2f} ms"


def report(cases, results):
    print(f"\n1. JVP / primal (target <= 2x); best of {ROUNDS} interleaved rounds")
    print(f"  {'function':<36}{'primal':>11}{'s2s.jvp':>11}{'ratio':>8}"
          f"{'generated':>11}{'ratio':>8}{'by hand':>11}{'ratio':>8}")
    for case, r in zip(cases, results):
        p = r["primal"]
        cells = []
        for k in ("jvp", "jvp_direct", "jvp_manual"):
            cells.append(f"{_fmt_t(r[k]):>11}{r[k] / p:>7.2f}x" if k in r else f"{'-':>11}{'-':>8}")
        print(f"  {case.label:<36}{_fmt_t(p):>11}" + "".join(cells))

    print(f"\n2. HVP / gradient (target <= 2.5x): jvp(grad(f)) / grad(f); best of {ROUNDS} rounds")
    print(f"  {'function':<36}{'grad':>11}{'hvp':>11}{'ratio':>8}"
          f"{'gen grad':>11}{'gen hvp':>11}{'ratio':>8}"
          f"{'hand grad':>11}{'hand hvp':>11}{'ratio':>8}")
    for case, r in zip(cases, results):
        line = f"  {case.label:<36}"
        for gk, hk in (("grad", "hvp"), ("grad_direct", "hvp_direct"),
                       ("grad_manual", "hvp_manual")):
            if gk in r:
                line += f"{_fmt_t(r[gk]):>11}{_fmt_t(r[hk]):>11}{r[hk] / r[gk]:>7.2f}x"
            else:
                line += f"{'-':>11}{'-':>11}{'-':>8}"
        print(line)


# -- part 3: transform time, fresh subprocesses ---------------------------------------

_CHILD = r"""
import sys, time
sys.path.insert(0, {here!r})
import numpy as np
import s2s
from s2s.core import pipeline
import fixtures

compiled = []
_compile = pipeline.compile_function
def counting(ir):
    gen, emitted = _compile(ir)
    compiled.append(len(emitted.source.splitlines()))
    return gen, emitted
pipeline.compile_function = counting

# one-time start-up (rule templates of every mode used below) on other functions
x4 = np.linspace(0.1, 1.0, 4)
s2s.jvp(s2s.grad(fixtures.warmup), (x4,), (x4,))
s2s.grad(s2s.grad(fixtures.scalar_warmup))(0.3)
s2s.jvp(s2s.grad(fixtures.scalar_warmup), (0.3,), (1.0,))

case, second = {case!r}, {second!r}
rng = np.random.default_rng(0)
if case == "straight50":
    f, x, v = fixtures.straight50, x4, x4[::-1].copy()
elif case == "mlp":
    f = fixtures.mlp_params_loss(rng.standard_normal((8, 6)), rng.standard_normal((8, 3)))
    x = {{"w1": rng.standard_normal((6, 5)), "b1": np.zeros(5),
          "w2": rng.standard_normal((5, 3)), "b2": np.zeros(3)}}
    v = {{k: np.ones_like(a) for k, a in x.items()}}
else:
    f, x, v = getattr(fixtures, case), 0.37, 1.0

def timed(thunk):
    del compiled[:]
    t0 = time.perf_counter()
    thunk()
    t = time.perf_counter() - t0
    if not compiled:
        sys.exit("the timed call compiled nothing: it measured a cache hit, not a transform")
    return t, sum(compiled)

t1, n1 = timed(lambda: s2s.grad(f)(x))
if second == "jvp":
    t2, n2 = timed(lambda: s2s.jvp(s2s.grad(f), (x,), (v,)))
else:
    t2, n2 = timed(lambda: s2s.grad(s2s.grad(f))(x))
print(t1, t2, n1, n2)
"""

_STAGES_CHILD = r"""
import sys, time
sys.path.insert(0, {here!r})
import numpy as np
import s2s
from s2s.core import pipeline
from s2s.core.forward import forward_of
import fixtures

x4 = np.linspace(0.1, 1.0, 4)
s2s.jvp(s2s.grad(fixtures.warmup), (x4,), (x4,))
f, x = fixtures.straight50, x4
P = time.perf_counter
t0 = P(); fr = pipeline.front(f)
t1 = P(); ir = s2s.grad(f).specialised([x], fr)
t2 = P(); gen, em1 = pipeline.compile_function(ir)
t3 = P()
inner, free = s2s.grad(f).generated([x])
tr = forward_of(inner, False)
t4 = P(); fr2 = pipeline.front(inner)
t5 = P(); ir2 = tr.specialised([x], [True], fr2)
t6 = P(); gen2, em2 = pipeline.compile_function(ir2)
t7 = P()
print(t1 - t0, t2 - t1, t3 - t2, t5 - t4, t6 - t5, t7 - t6,
      len(em1.source.splitlines()), len(em2.source.splitlines()))
"""

TRANSFORM_CASES = (
    ("straight50", "jvp", "jvp(grad(straight50)), x of 4"),
    ("mlp", "jvp", "jvp(grad(mlp params loss)), tiny"),
    ("scalar_chain", "jvp", "jvp(grad(scalar_chain)), float"),
    ("scalar_chain", "grad", "grad(grad(scalar_chain)), float"),
)


def _child(case, second, template=_CHILD):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE.parent), env.get("PYTHONPATH")]))
    src = template.format(here=str(HERE), case=case, second=second)
    proc = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, env=env)
    if proc.returncode:
        sys.exit(f"part 3 child ({case}, {second}) failed:\n{proc.stderr}{proc.stdout}")
    return [float(v) for v in proc.stdout.split()]


def transform_times():
    print(f"\n3. Transform time, second order / first order (target <= 3x); fresh process "
          f"each, start-up\n   excluded (warm-up on other functions), median of {RUNS}")
    print(f"  {'second-order call':<34}{'1st order':>11}{'2nd order':>11}{'ratio':>8}"
          f"{'lines 1st':>11}{'lines 2nd':>11}")
    for case, second, label in TRANSFORM_CASES:
        rows = [_child(case, second) for _ in range(RUNS)]
        t1 = statistics.median(r[0] for r in rows)
        t2 = statistics.median(r[1] for r in rows)
        ratio = statistics.median(r[1] / r[0] for r in rows)
        print(f"  {label:<34}{t1 * 1e3:>8.1f} ms{t2 * 1e3:>8.1f} ms{ratio:>7.2f}x"
              f"{int(rows[0][2]):>11}{int(rows[0][3]):>11}")

    rows = [_child("straight50", "jvp", _STAGES_CHILD) for _ in range(RUNS)]
    med = [statistics.median(r[i] for r in rows) for i in range(6)]
    print(f"  by stage, straight50 (median of {RUNS}; the second order transforms the "
          f"{int(rows[0][6])}-line gradient code):")
    print(f"  {'':<34}{'1st order':>11}{'2nd order':>11}{'ratio':>8}")
    for i, what in enumerate(("front (parse, lower, inline)", "reverse / forward mode (+DCE)",
                              "emit + compile")):
        print(f"    {what:<32}{med[i] * 1e3:>8.1f} ms{med[i + 3] * 1e3:>8.1f} ms"
              f"{med[i + 3] / med[i]:>7.2f}x")


# -- part 4: jax / numba ---------------------------------------------------------

def other_tools(cases):
    print("\n4. Other tools")
    have = {m: importlib.util.find_spec(m) is not None for m in ("jax", "numba")}
    if not have["jax"]:
        print("  jax: not installed, rows skipped")
    else:
        bench_jax(cases)
    if not have["numba"]:
        print("  numba: not installed, rows skipped")
    else:
        bench_numba(cases)


def _best(fn):
    fn()
    t0 = time.perf_counter()
    fn()
    n = max(1, int(CHUNK_S / max(time.perf_counter() - t0, 1e-7)))
    return min(timeit.repeat(fn, number=n, repeat=ROUNDS)) / n


def _tool_header(title):
    print(f"  {title}")
    print(f"  {'function':<36}{'primal':>11}{'jvp':>11}{'ratio':>8}"
          f"{'grad':>11}{'hvp':>11}{'ratio':>8}")


def _tool_row(label, t):
    print(f"  {label:<36}{_fmt_t(t['primal']):>11}{_fmt_t(t['jvp']):>11}"
          f"{t['jvp'] / t['primal']:>7.2f}x{_fmt_t(t['grad']):>11}{_fmt_t(t['hvp']):>11}"
          f"{t['hvp'] / t['grad']:>7.2f}x")


def bench_jax(cases):
    """jax.jit of the same functions: primal, jvp, grad and jvp(grad) (float64)."""
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
    W = jnp.asarray(fixtures.MATMUL_W)
    params, x, y = make_data()
    jx, jy = jnp.asarray(x), jnp.asarray(y)

    def mlp(p):
        h = jnp.tanh(jx @ p["w1"] + p["b1"])
        return jnp.mean(jnp.square(h @ p["w2"] + p["b2"] - jy))

    fns = {"mlp_loss": mlp, "tanh_sq": lambda X: jnp.sum(jnp.tanh(X) ** 2),
           "tanh_matmul": lambda X: jnp.sum(jnp.tanh(X @ W) ** 2)}

    def ready(out):
        return jax.tree_util.tree_map(lambda a: a.block_until_ready(), out)

    _tool_header(f"jax {jax.__version__}, jax.jit of each, float64:")
    for case in cases:
        fn = fns.get(case.label.split()[0])
        if fn is None:
            continue
        X = jax.tree_util.tree_map(jnp.asarray, case.X)
        V = jax.tree_util.tree_map(jnp.asarray, case.V)
        primal, grad = jax.jit(fn), jax.jit(jax.grad(fn))
        jvp = jax.jit(lambda X, V, fn=fn: jax.jvp(fn, (X,), (V,)))
        hvp = jax.jit(lambda X, V, fn=fn: jax.jvp(jax.grad(fn), (X,), (V,)))
        calls = {"primal": lambda: primal(X), "jvp": lambda: jvp(X, V),
                 "grad": lambda: grad(X), "hvp": lambda: hvp(X, V)}
        _tool_row(case.label, {k: _best(lambda c=c: ready(c())) for k, c in calls.items()})


def bench_numba(cases):
    """numba has no AD: the hand-written tanh_sq JVP and HVP as fused loops (what
    a compiler that fuses elementwise code reaches), against the fused primal."""
    import numba

    @numba.njit
    def primal(x):
        acc = 0.0
        for i in range(x.size):
            t = np.tanh(x[i])
            acc += t * t
        return acc

    @numba.njit
    def jvp(x, v):
        acc = dacc = 0.0
        for i in range(x.size):
            t = np.tanh(x[i])
            acc += t * t
            dacc += 2.0 * t * (1.0 - t * t) * v[i]
        return acc, dacc

    @numba.njit
    def grad(x):
        g = np.empty_like(x)
        for i in range(x.size):
            t = np.tanh(x[i])
            g[i] = 2.0 * t * (1.0 - t * t)
        return g

    @numba.njit
    def hvp(x, v):
        g, h = np.empty_like(x), np.empty_like(x)
        for i in range(x.size):
            t = np.tanh(x[i])
            s = 1.0 - t * t
            g[i] = 2.0 * t * s
            h[i] = 2.0 * s * (s - 2.0 * t * t) * v[i]
        return g, h

    _tool_header(f"numba {numba.__version__}, hand-written fused loops (numba has no AD):")
    for case in cases:
        if not case.label.startswith("tanh_sq"):
            continue
        x, v = np.ravel(case.X).copy(), np.ravel(case.V).copy()   # 1-D, contiguous
        if not np.isclose(jvp(x, v)[1], tanh_sq_jvp(case.X, case.V)[1], rtol=1e-9):
            sys.exit("WRONG: numba tanh_sq jvp")
        calls = {"primal": lambda: primal(x), "jvp": lambda: jvp(x, v),
                 "grad": lambda: grad(x), "hvp": lambda: hvp(x, v)}
        _tool_row(case.label, {k: _best(c) for k, c in calls.items()})


def main():
    t_start = time.perf_counter()
    print(f"s2s {s2s.__version__}, numpy {np.__version__}, Python {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs")
    env = {k: v for k, v in sorted(os.environ.items())
           if k.startswith("MALLOC_") or k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    if env:
        print(f"environment: {env}")
    cases = make_cases()
    print("\ncorrectness (relative errors; stops here if one is wrong):")
    for case in cases:
        check(case)
    results = [time_case(case) for case in cases]
    report(cases, results)
    transform_times()
    other_tools(cases)
    print(f"\n(total {time.perf_counter() - t_start:.0f} s)")


if __name__ == "__main__":
    main()
