"""The systematic table, special functions: ``math.lgamma``/``math.gamma``,
``s2s_runtime``'s ``digamma``/``polygamma`` (always), and ``scipy.special`` (``sp``; rows
only when SciPy is installed): the ufuncs with rules and the reductions s2s reads as
implementations (``logsumexp``, ``softmax``, ``log_softmax``).  ``test_systematic.py``
checks every row to first order; ``test_systematic_special.py`` to second order, batched
(``vmap``) and compiled (``jit``) where the primitive has a lowering.
"""
from __future__ import annotations

from tests.unit.systematic_checks import Arg, Case
from tests.unit.systematic_table import AXES, M, S, T, V, binary, reduction, scalar, unary

try:
    import scipy.special  # noqa: F401
    HAVE_SCIPY = True
except ImportError:  # pragma: no cover
    HAVE_SCIPY = False

CASES = []
CASES += scalar("math.lgamma(x)", "p") + scalar("math.lgamma(x)", "g")
CASES += scalar("math.lgamma(-0.5 * x)", "p")  # negative non-integers: log|Gamma|
CASES += scalar("math.gamma(x)", "p") + scalar("math.gamma(x)", "g")
CASES += unary("rt.digamma(x)", "p", shapes=(S, V, M)) + unary("rt.lgamma(x)", "p", shapes=(V,))
CASES += unary("rt.gamma(x)", "p", shapes=(V,))
CASES += unary("rt.erf(x)", shapes=(S, V)) + unary("rt.erfc(x)", shapes=(V,))
CASES += unary("rt.digamma(-0.3 - 0.4 * x)", "p", shapes=(V,))  # reflection branch
CASES += unary("rt.polygamma(1, x)", "p", shapes=(S, V)) + unary("rt.polygamma(3, x)", "g",
                                                                   shapes=(V,))
if HAVE_SCIPY:
    CASES += unary("sp.gammaln(x)", "p") + unary("sp.digamma(x)", "p")
    CASES += unary("sp.polygamma(2, x)", "p", shapes=(S, V))
    CASES += unary("sp.erf(x)") + unary("sp.erfc(x)") + unary("sp.expit(x)")
    CASES += unary("sp.logit(0.5 + 0.5 * x)", "u")
    CASES += binary("sp.xlogy(x, y)", "n", "p") + binary("sp.xlog1py(x, y)", "n", "p")
    CASES += [Case("sp.xlogy(x * 0.0, y)", (Arg(V), Arg(V, "p")))]  # x = 0: derivative in y is 0
    CASES += reduction("sp.logsumexp(x{kw})")
    CASES += [Case("sp.logsumexp(x, b=y)", (Arg(M), Arg(M, "p"))),
              Case("sp.logsumexp(x, axis=1, b=y)", (Arg(M), Arg(V, "p"))),
              Case("sp.logsumexp(x, axis=0, keepdims=True)", (Arg(M),)),
              Case("sp.logsumexp(x, b=y, return_sign=True)[0]", (Arg(V), Arg(V, "z"))),
              Case("sp.softmax(x)", (Arg(V),)), Case("sp.softmax(x, axis=1)", (Arg(M),)),
              Case("sp.softmax(x, axis=0)", (Arg(T),)),
              Case("sp.log_softmax(x)", (Arg(V),)), Case("sp.log_softmax(x, axis=-1)", (Arg(M),))]

_ = (AXES,)
