"""The composition matrix: every ordered pair of transforms and the common triples,
over the corpus (``corpus.py``), each checked against finite differences of the
primal (``wraps.py``).

The default run checks every pair on one corpus function (rotating, so every
function is met) and every triple on two; ``-m slow`` runs the full product.
``XFAIL`` lists what is known not to compose yet, with the reason.
"""
import itertools

import pytest

import s2s

from .corpus import CORPUS
from .wraps import WRAPS, base_case, chain, check

NAMES = list(WRAPS)
FUNCTIONS = list(CORPUS)
PAIRS = [(inner, outer) for outer in NAMES for inner in NAMES]
TRIPLES = [
    ("grad", "vmap", "jit"),            # jit(vmap(grad))
    ("grad", "jit", "vmap"),            # vmap(jit(grad))
    ("hessian", "jit"),                 # jit(hessian)
    ("hessian", "vmap"),                # vmap(hessian)
    ("hessian", "vmap", "jit"),         # jit(vmap(hessian))
    ("jacrev", "jacfwd"),               # jacfwd(jacrev)
    ("vmap", "grad"),                   # grad(vmap)
    ("grad", "jvp"),                    # forward over reverse HVP
    ("jvp", "grad"),                    # reverse over forward HVP
    ("grad", "vjp"),                    # reverse over reverse HVP
    ("grad", "grad", "grad"),           # third derivatives
    ("jacrev", "jacfwd", "jacrev"),
    ("hessian", "jacfwd"),
    ("grad", "jvp", "jvp"),
    ("grad", "jvp", "jit"),             # jit of a forward-over-reverse HVP
]

#: reason -> the (composition innermost first, function) cases it holds for (strict xfail)
_KNOWN: dict = {}
#: (composition innermost first, function) -> reason
XFAIL = {case: reason for reason, cases in _KNOWN.items() for case in cases}

FORWARD = {"jvp", "linearize", "jacfwd"}
REVERSE = {"grad", "vjp", "pullback", "jacrev", "hessian"}


def refused(names, fname) -> bool:
    """Whether JAX refuses the composition: forward mode applied to a ``custom_vjp``
    function (the first derivative taken of it is a JVP), which s2s refuses too.

    ``depth`` counts the ``custom_vjp`` calls nested in primal code that forward mode
    would run: a ``custom_vjp`` wrap of a function that calls one calls it in its
    ``fwd`` (one more level); reverse mode replaces the outermost by its rules (one
    level fewer), and ``hessian`` then applies forward mode to what is left."""
    depth = 1 if fname == "custom_vjp" else 0
    rule = False  # a custom_jvp over it: its rule is a jvp of it, run when differentiated
    for n in names:
        if n == "custom_vjp":
            depth += 1
        elif n == "custom_jvp" and depth:
            rule = True
        elif rule and (n in FORWARD or n in REVERSE):
            return True
        elif depth and n in FORWARD:
            return True
        elif n in REVERSE:
            depth = max(depth - 1, 0)  # what is differentiated next is the rule's code
            if n == "hessian" and depth:
                return True
    return False


def _reason(names, fname):
    return XFAIL.get((tuple(names), fname))


def _param(names, fname, marks=()):
    label = "(".join(reversed(names)) + "(" + fname + ")" * (len(names) + 1)
    reason = _reason(names, fname)
    marks = list(marks)
    if reason:
        marks.append(pytest.mark.xfail(strict=True, reason=reason))
    return pytest.param(tuple(names), fname, id=label, marks=marks)


def _default():
    out = []
    for k, pair in enumerate(PAIRS):
        out.append(_param(pair, FUNCTIONS[k % len(FUNCTIONS)]))
    for k, triple in enumerate(TRIPLES):
        for j in (0, 1):
            out.append(_param(triple, FUNCTIONS[(2 * k + j * 5) % len(FUNCTIONS)]))
    return out


def _full():
    chosen = {(p.values[0], p.values[1]) for p in _default()}
    out = []
    for names, fname in itertools.chain(itertools.product(PAIRS, FUNCTIONS),
                                        itertools.product(TRIPLES, FUNCTIONS)):
        if (tuple(names), fname) not in chosen:
            out.append(_param(names, fname, [pytest.mark.slow]))
    return out


@pytest.mark.parametrize("names, fname", _default() + _full())
def test_composition(names, fname):
    if refused(names, fname):
        with pytest.raises(s2s.S2SError, match="custom_vjp"):
            check(chain(base_case(fname), names))
        return
    check(chain(base_case(fname), names))
