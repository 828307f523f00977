"""Every registered primitive has both modes, or says why not.

A primitive with VJP templates must have JVP templates for the same
parameters (None in the same places); a non-differentiable one has neither.
"""
import s2s.rules  # noqa: F401  (registers every rule module)
from s2s.rules.registry import all_rules


def _name(rule):
    return f"{getattr(rule.fn, '__module__', '')}.{getattr(rule.fn, '__name__', rule.fn)}"


def test_every_primitive_has_both_modes_or_none():
    problems = []
    for rule in all_rules():
        if rule.nondiff:
            if rule.vjps or rule.jvps:
                problems.append(f"{_name(rule)}: marked non-differentiable but has templates")
            continue
        if not rule.jvps:
            problems.append(f"{_name(rule)}: VJP but no JVP")
        elif [t is None for t in rule.vjps] != [t is None for t in rule.jvps]:
            problems.append(f"{_name(rule)}: VJP and JVP cover different parameters")
    assert not problems, "\n".join(problems)


def test_the_check_can_fail():
    from s2s.rules.registry import Rule

    broken = Rule(fn=abs, vjps=(lambda g, ans, x: g,), jvps=())
    assert not broken.nondiff and not broken.jvps


# --- the four modes of every primitive (``s2s rules``, ``s2s/cli/modes.py``) -------------------
#: primitives missing a mode without a stated reason when this ratchet was set; it may only
#: go down (close a gap, or state in the record why the mode does not exist)
GAPS_AT_MOST = 248  # 265 before the dict helpers were batched; 267 before cumprod_jvp was
# plain code every mode reads and the sum of a list's cotangent was batched item by item;
# 270 before vmap's sum of a list was read as code and the jit called numpy for the
# layouts of np.interp and np.convolve; 273 before vmap read the shape helpers of kron, cholesky, cov... from one
# example and np.kron became plain code; 274 before var_jvp had rules; 281 before the jit compiled scipy.special's gammaln, digamma and
# polygamma and s2s_runtime's lgamma, gamma, digamma and polygamma (ops/gamma.py); 295
# before vmap batched the linear-algebra masks, lstsq and the
# second-order helpers of prod/norm once per example, prod_jvp had rules and the jit called
# numpy for those helpers and rt.batch_loop; 332 before the jit called numpy for np.fft, np.linalg's decompositions,
# lstsq, partitions and their derivatives' helpers (backend/llvm/ops/host_calls.py); 340 before vmap batched tuple/list, complex(re, im) (rt.batch_complex),
# math.remainder (rt.batch_remainder, read as code), math.fsum and the derivative helpers
# seq_cast, seq_cast_transpose, sum_builtin_vjp/jvp, and the jit compiled tuple/list of a
# display and complex(re, im); 345 before the jit read np.pad, np.broadcast_arrays, np.unstack,
# np.array_split and rt.shapes_of as code (rules/numpy_code/pads.py, shapes.py, joins.py,
# linear.py); 349 before the jit read math.ldexp/ulp/lcm and np.isreal/iscomplex as
# code; 355 before the jit read scipy.special's erf, erfc, expit, logit, xlogy and xlog1py
# as code (rules/numpy_code/special.py); 362 before the jit read np.linalg's array-API
# names as their numpy namesakes (rules/numpy_code/array_api.py); 377 before vmap batched
# np.fft, np.linalg's array-API names, pad,
# splits, partition and more (batch/rules_numpy.py) and the jit compiled the splits and
# batched axes checked against one example; math.perm/comb are jit-only (vmap refused
# their overflow checks); 380 before the jit and vmap read numpy's quantiles as code; 399 before
# the jit compiled any/all, math's integer functions, gcd,
# digitize, isin, delete/insert, polynomials and unwrap; 415 before the jit compiled isclose,
# shifts, logspace, windows and triangles; 431 before the jit compiled transposes with axes, rollaxis, np.array of arrays,
# the scans of numpy 2 and the NaN-ignoring ones, vecdot/matvec/vecmat and more; 470 before vmap read
# the numpy functions' plain Python code too;
# 519 before the jit read the code of numpy's statistics, predicates,
# shapes, series and more (rules/numpy_code) and batched code's shape helpers were read as
# code by an outer vmap; 521 before the native tape operations stated their reasons; 524
# before jit compiled isinstance and namedtuple records (make_record); 549 before the jit read numpy functions' plain Python code
# (rules/numpy_code: cumsum, sort, argmax...) and the jit lowerings of the batched lanes
# helpers (issue 18); 554 before the scipy.special, float-parts and stop_gradient records; 576
# before the helpers of derivative code read as code or given records (compose, issue 18),
# jit compiled divmod, modf, frexp, nextafter, cbrt, exp2, diag, cross, and the batching
# rules of einsum and the contractions' helpers

#: counted in a fresh interpreter: what s2s registers itself, whatever other tests in this
#: process registered before (their own functions, forms made on first use)
_COUNT_GAPS = """
import json
from s2s.cli import modes
own = ("numpy", "math", "builtins", "operator", "_operator", "s2s", "s2s_runtime", "cmath")
fns = [fn for fn in modes.inventory()
       if (getattr(fn, "__module__", None) or "numpy").split(".")[0] in own]
bad = [modes.qualified_name(fn) for fn in fns if set(modes.modes(fn)) != set(modes.MODES)]
print(json.dumps({"summary": modes.summary(fns), "gaps": modes.gaps(fns), "bad": bad}))
"""


def test_every_primitive_has_four_modes_or_a_reason_or_is_counted_as_a_gap():
    import json
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", _COUNT_GAPS], capture_output=True, text=True,
                         check=True).stdout
    report = json.loads(out)
    counts = report["summary"]
    assert counts["primitives"] > 700
    assert counts["missing modes without a reason"] <= GAPS_AT_MOST, report["gaps"]
    assert not report["bad"]


def test_forms_made_on_first_use_carry_their_reasons():
    """A per-example reduction the LLVM backend makes when it first meets one is not a
    gap: it says why it has no derivative or batching rule."""
    import numpy as np

    from s2s.cli import modes
    from s2s.backend.llvm.batching.per_example import reduce_per_example
    m = modes.modes(reduce_per_example(np.prod))
    assert m["jit"].status != "no" and all(m[k].ok and m[k].why for k in ("jvp", "vjp", "vmap"))


def test_a_stated_reason_closes_a_gap():
    from s2s.cli import modes
    from s2s.rules.registry import defno_mode, no_mode

    def probe(x):  # a stand-in primitive, registered for this test only
        return x

    assert modes.modes(probe)["jit"].mark() == "?"
    defno_mode("jit", "a test stand-in", probe)
    assert no_mode(probe, "jit") == "a test stand-in"
    assert modes.modes(probe)["jit"].mark() == "-" and modes.modes(probe)["jit"].ok


def test_properties_live_in_the_records():
    import operator

    import numpy as np

    from s2s.ad.inplace import VIEW_OPS
    from s2s.backend.llvm.passes import writes
    from s2s.rules.registry import has
    assert has(np.reshape, "view") and np.reshape in VIEW_OPS and np.reshape in writes._VIEWS
    assert np.swapaxes in writes._VIEWS  # the LLVM write check sees every view
    assert has(operator.setitem, "in_place") and operator.setitem in writes._WRITES
    assert not has(np.sin, "view")
