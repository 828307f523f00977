"""ADBench/GradBench objectives and in-place loop kernels, written as users write them
(``adbench_objectives.py``, ``adbench_loops.py``; not the kernels s2s was tuned on):
checked, then timed side by side in one process.

For each case (``adbench_cases.py``):

1. **check**: the derivative from Python-mode s2s and from ``s2s.jit`` of it is compared
   with central finite differences in float64 of the plain function
   (``adbench_oracles.py``); a mismatch is reported as ``wrong``, an s2s error as
   ``refused: <error>``, anything else raised as ``error: <exception>`` (never hidden);
   JAX's and PyTorch's versions (``adbench_frameworks.py``) are checked the same way;
2. **time** (not with ``--check-only``): median wall time of ``s2s.jit(f)`` and
   ``numba.njit(f)`` (primal), ``s2s.jit(D)`` (``D`` the derivative: ``s2s.grad``,
   ``s2s.jacfwd`` or the composed transform of ``adbench_derivatives.py``), Python-mode
   ``D`` against the plain Python primal, ``jax.jit`` of the JAX derivative and the
   PyTorch autograd version; only derivatives that passed the check are timed.

Run:  OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/adbench.py [--quick | --full]
      [--check-only] [--s2s-only] [--no-python-mode] [--only SUBSTRING] [--json FILE]
"""
import argparse
import json
import os
import sys
import time
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

import s2s  # noqa: E402
from s2s.errors import S2SError  # noqa: E402

from adbench_cases import CASES  # noqa: E402
from adbench_frameworks import derivative as derivative_in  # noqa: E402
from adbench_oracles import agrees, fd_derivative  # noqa: E402
from timing import median_time  # noqa: E402


def derivative(case, jit):
    """The s2s derivative of ``case`` (a callable of the case's arguments)."""
    argnums = case.wrt[0] if len(case.wrt) == 1 else case.wrt
    if case.kind == "grad":
        d = s2s.grad(case.fn, argnums=argnums)
    elif case.kind == "jacfwd":
        d = s2s.jacfwd(case.fn, argnums=argnums)
    else:
        d = case.deriv
    return s2s.jit(d) if jit else d


def expected(case, args):
    """The finite-difference oracle's value of the case's derivative."""
    if case.kind == "custom":
        return case.oracle(*args)
    parts = [fd_derivative(case.fn, args, a) for a in case.wrt]
    return parts[0] if len(parts) == 1 else tuple(parts)


def describe(exc):
    """``refused: ...`` for an s2s error, ``error: ...`` for anything else; one line."""
    first = (str(exc).strip().splitlines() or [""])[0]
    kind = "refused" if isinstance(exc, S2SError) else "error"
    return f"{kind}: {type(exc).__name__}: {first}"


def check_one(fn_maker, args, want):
    """``(status, callable or None)``: status ``ok``, ``wrong (err ...)``, ``refused: ...``
    or ``error: ...`` for the derivative ``fn_maker()`` builds, called on ``args``."""
    try:
        fn = fn_maker()
        got = fn(*args)
    except Exception as exc:  # reported in the table, never hidden
        return describe(exc), None
    ok, err = agrees(got, want)
    return ("ok" if ok else f"wrong (relative error {err:.1e})"), (fn if ok else None)


def numba_version(fn, numba):
    """``numba.njit`` of ``fn`` with the helpers it calls from its own module njit-ed too
    (as a Numba user decorates them), on a copy of its globals (s2s reads the originals)."""
    g = dict(fn.__globals__)
    for name in fn.__code__.co_names:
        v = g.get(name)
        if isinstance(v, types.FunctionType) and v.__module__ == fn.__module__ and v is not fn:
            g[name] = numba_version(v, numba)
    return numba.njit(types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__,
                                         fn.__closure__))


def _maker(case, fw, frameworks):
    """The framework's derivative maker, or the reason there is none."""
    if not frameworks:
        return "not run"
    maker = derivative_in(fw, case.name)
    if maker is False:
        return "not installed"
    return maker or "not written"


def run_case(case, full, check_only, frameworks=True, python_mode=True, rng_seed=0):
    """One row: the check at the check size (``make_args`` level 0), then, unless
    ``check_only``, the timings at the quick (or ``full``) size, where the derivatives
    timed must also agree with each other (``disagree`` lists those that do not)."""
    args = case.make_args(np.random.default_rng(rng_seed), 0)
    want = expected(case, args)
    level = 2 if full else 1
    row = {"name": case.name, "group": case.group, "size": case.size(level),
           "check size": case.size(0)}
    row["python"], _ = check_one(lambda: derivative(case, False), args, want)
    row["jit"], _ = check_one(lambda: derivative(case, True), args, want)
    for fw in ("jax", "torch"):
        maker = _maker(case, fw, frameworks)
        row[fw] = maker if isinstance(maker, str) else \
            check_one(lambda: maker(*args), (), want)[0]
    if check_only:
        return row
    args = case.make_args(np.random.default_rng(rng_seed), level)
    budget, runs = (0.3, 1) if full else (0.1, 3)
    t, outputs = {}, {}

    def timed(key, fn, fargs):
        t0 = time.perf_counter()
        outputs[key] = fn(*fargs)
        t[key + " first call"] = time.perf_counter() - t0  # compiling, for jit
        slow = t[key + " first call"] > 0.3 and not key.startswith(("jit", "jax", "numba"))
        t[key] = median_time(fn, fargs, budget=budget, min_runs=1 if slow else runs)
        print(f"#   {key}: first call {t[key + ' first call']:.2f} s, then {t[key] * 1e3:.3g} ms",
              file=sys.stderr, flush=True)

    timed("python primal", case.fn, args)
    try:
        timed("jit primal", s2s.jit(case.fn), args)
    except Exception as exc:
        row["jit primal"] = describe(exc)
    try:
        import numba
        nf = numba_version(case.fn, numba)
        if not np.allclose(nf(*args), case.fn(*args), rtol=1e-10, atol=0):
            row["numba"] = "wrong"
        else:
            timed("numba", nf, args)
    except ImportError:
        row["numba"] = "not installed"
    except Exception as exc:
        row["numba"] = f"error: {type(exc).__name__}"
    if row["jit"] == "ok":
        timed("jit D", derivative(case, True), args)
    if row["python"] == "ok" and python_mode:
        timed("python D", derivative(case, False), args)
    for fw in ("jax", "torch"):
        if row[fw] == "ok":
            timed(fw, _maker(case, fw, frameworks)(*args), ())
    derivs = [k for k in ("python D", "jit D", "jax", "torch") if k in outputs]
    if derivs:
        ref = outputs[derivs[0]]
        row["reference"] = derivs[0]
        row["disagree"] = [k for k in derivs[1:]
                           if not agrees(outputs[k], ref, rtol=1e-8)[0]]
    row["times"] = t
    return row


def _ms(t, key):
    return f"{t[key] * 1e3:.3g}" if key in t else "—"


def _ratio(t, a, b):
    return f"{t[a] / t[b]:.2g}" if a in t and b in t else "—"


def _notes(r):
    """The row's failures, one entry per distinct message (modes that share one joined),
    paths shortened to the file's name."""
    by_msg = {}
    for k in ("python", "jit", "jax", "torch", "jit primal", "numba"):
        msg = r.get(k)
        if msg and msg not in ("ok", "not written", "not installed", "not run"):
            msg = msg.replace(str(HERE) + os.sep, "")
            by_msg.setdefault(msg, []).append(k)
    notes = [f"{', '.join(ks)}: {m}" for m, ks in by_msg.items()]
    if r.get("disagree"):
        notes.append(f"disagree with {r.get('reference', 'python D')} at the timing size: "
                     + ", ".join(r["disagree"]))
    return "; ".join(notes).replace("|", "/") or "ok"


def table(rows):
    """The Markdown table of ``rows``: times in ms, then ratios."""
    head = ("| case | size | jit primal | Numba | jit/Numba | jit(D) | jit(D)/primal "
            "| Python D / Python primal | JAX jit(D) | JAX / s2s | Torch D | Torch / s2s "
            "| status |")
    lines = [head, "|" + "---|" * 13]
    for r in rows:
        t = r.get("times", {})
        lines.append(
            f"| {r['name']} | {r['size']} | {_ms(t, 'jit primal')} | {_ms(t, 'numba')} "
            f"| {_ratio(t, 'jit primal', 'numba')} | {_ms(t, 'jit D')} "
            f"| {_ratio(t, 'jit D', 'jit primal')} | {_ratio(t, 'python D', 'python primal')} "
            f"| {_ms(t, 'jax')} | {_ratio(t, 'jax', 'jit D')} | {_ms(t, 'torch')} "
            f"| {_ratio(t, 'torch', 'jit D')} | {_notes(r)} |")
    return "\n".join(lines)


def check_table(rows):
    lines = ["| case | check size | Python-mode s2s | s2s.jit | JAX | PyTorch |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        cells = [str(r[k]).replace(str(HERE) + os.sep, "").replace("|", "/")
                 for k in ("python", "jit", "jax", "torch")]
        lines.append(f"| {r['name']} | {r['check size']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = p.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="small sizes (the default)")
    size.add_argument("--full", action="store_true", help="the issue's sizes")
    p.add_argument("--check-only", action="store_true", help="check derivatives, no timing")
    p.add_argument("--only", default="", help="only cases whose name contains this")
    p.add_argument("--s2s-only", action="store_true", help="leave JAX and PyTorch out")
    p.add_argument("--no-python-mode", action="store_true",
                   help="do not time Python-mode derivatives (minutes each at --full sizes)")
    p.add_argument("--json", default="", help="also write the rows to this file")
    p.add_argument("--from-json", default="", help="print the table of rows saved by --json")
    a = p.parse_args(argv)
    if a.from_json:
        rows = json.loads(Path(a.from_json).read_text())
        print(table(rows) if "times" in rows[0] else check_table(rows))
        return rows
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    rows = []
    start = time.perf_counter()
    for case in CASES:
        if a.only and a.only not in case.name:
            continue
        t0 = time.perf_counter()
        rows.append(run_case(case, a.full, a.check_only, frameworks=not a.s2s_only,
                             python_mode=not a.no_python_mode))
        print(f"# {case.name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    print(check_table(rows) if a.check_only else table(rows))
    print(f"\n{len(rows)} cases in {time.perf_counter() - start:.0f} s "
          f"({'full' if a.full else 'quick'} sizes)")
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1, default=str))
    return rows


if __name__ == "__main__":
    main()
