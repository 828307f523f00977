"""Special functions: ``math.lgamma``/``math.gamma``, s2s_runtime's ``digamma``/``polygamma``
(always), and ``scipy.special`` (registered only when SciPy can be imported).

Elementwise rules (x_bar = g f'(x), tangent t f'(x)), with psi = digamma:

* ``lgamma``/``gammaln``: psi(x);  ``gamma``: Gamma(x) psi(x);  ``digamma``: psi^(1)(x);
  ``polygamma(n, x)``: psi^(n+1)(x) (``n`` an integer: no derivative);
* ``erf``: 2/sqrt(pi) exp(-x^2);  ``erfc``: minus that;
* ``expit`` s(x) = 1/(1+exp(-x)): s(1 - s);  ``logit`` log(x/(1-x)): 1/(x(1-x));
* ``xlogy(x, y)`` = x log y (0 where x = 0): d/dx log y, d/dy x/y (0 where x = 0);
  ``xlog1py(x, y)`` = x log(1 + y): d/dx log1p(y), d/dy x/(1+y) (0 where x = 0);
  binary ones undo broadcasting with ``unbroadcast``.

``scipy.special.logsumexp``, ``softmax`` and ``log_softmax`` are not primitives: they are
*implemented* (``defimplementation``) by the plain numpy functions below, which s2s reads
in their place, so their derivatives at every order, batching and compilation come from
numpy's primitives (the max shift is under ``stop_gradient``, as in JAX: it cancels; the bodies call
primitives only, since s2s reads no helper of its own package).
``logsumexp`` supports ``axis``, ``b`` (weights, differentiated too), ``keepdims`` and
``return_sign``.

``ELEMENTWISE`` lists the primitives here that act elementwise (numpy broadcasting), for
the batching table; ``MATH_ELEMENTWISE`` the elementwise runtime forms (``rt.lgamma``,
``rt.gamma``, ``rt.erf``, ``rt.erfc``) of ``math`` functions that numpy lacks.
"""
import math

import numpy as np

from s2s_runtime import (broadcast_like, digamma, erf, erfc, gamma, lgamma, polygamma,
                         stop_gradient, unbroadcast)

from .registry import defimplementation, defjvp, defvjp

# --- always: math and the runtime's psi -------------------------------------------------
defvjp(math.lgamma, lambda g, ans, x: g * digamma(x))
defjvp(math.lgamma, lambda t, ans, x: t * digamma(x))
defvjp(math.gamma, lambda g, ans, x: g * ans * digamma(x))
defjvp(math.gamma, lambda t, ans, x: t * ans * digamma(x))
# the elementwise forms batched code calls in place of math.lgamma / math.gamma
defvjp(lgamma, lambda g, ans, x: g * digamma(x))
defjvp(lgamma, lambda t, ans, x: t * digamma(x))
defvjp(gamma, lambda g, ans, x: g * ans * digamma(x))
defjvp(gamma, lambda t, ans, x: t * ans * digamma(x))
# erf' = 2/sqrt(pi) exp(-x^2), erfc' = -erf'; the forms batched code calls for math.erf(c)
defvjp(erf, lambda g, ans, x: g * (2.0 / np.sqrt(np.pi)) * np.exp(-x * x))
defjvp(erf, lambda t, ans, x: t * (2.0 / np.sqrt(np.pi)) * np.exp(-x * x))
defvjp(erfc, lambda g, ans, x: -g * (2.0 / np.sqrt(np.pi)) * np.exp(-x * x))
defjvp(erfc, lambda t, ans, x: -t * (2.0 / np.sqrt(np.pi)) * np.exp(-x * x))
defvjp(digamma, lambda g, ans, x: g * polygamma(1, x))
defjvp(digamma, lambda t, ans, x: t * polygamma(1, x))
defvjp(polygamma, None, lambda g, ans, n, x: unbroadcast(g * polygamma(n + 1, x), x))
defjvp(polygamma, None, lambda t, ans, n, x: broadcast_like(t * polygamma(n + 1, x), ans))

ELEMENTWISE = [digamma, polygamma, lgamma, gamma, erf, erfc]
#: math functions and the elementwise s2s_runtime function batched code calls instead
MATH_ELEMENTWISE = {math.lgamma: lgamma, math.gamma: gamma, math.erf: erf, math.erfc: erfc}


# --- implementations of scipy.special's reductions ----------------------------------------
def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """log(sum(b * exp(a))) along ``axis`` (scipy.special.logsumexp's contract)."""
    m = stop_gradient(np.max(a, axis=axis, keepdims=True))  # the shift: no derivative
    m = np.where(np.abs(m) < np.inf, m, 0.0)
    if b is None:
        e = np.exp(a - m)
    else:
        e = b * np.exp(a - m)
    s = np.sum(e, axis=axis, keepdims=keepdims)
    shift = np.sum(m, axis=axis, keepdims=keepdims)  # m without the reduced axes
    if return_sign:
        return np.log(np.abs(s)) + shift, np.sign(s)
    return np.log(s) + shift


def softmax(x, axis=None):
    """exp(x) / sum(exp(x)) along ``axis``."""
    m = stop_gradient(np.max(x, axis=axis, keepdims=True))
    e = np.exp(x - np.where(np.abs(m) < np.inf, m, 0.0))
    return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax(x, axis=None):
    """x - logsumexp(x) along ``axis``."""
    m = stop_gradient(np.max(x, axis=axis, keepdims=True))
    shifted = x - np.where(np.abs(m) < np.inf, m, 0.0)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


# --- scipy.special, when installed ------------------------------------------------------------
try:
    import scipy.special as _sp
except ImportError:  # pragma: no cover - scipy is in the test extra
    _sp = None

if _sp is not None:
    defvjp(_sp.gammaln, lambda g, ans, x: g * _sp.digamma(x))
    defjvp(_sp.gammaln, lambda t, ans, x: t * _sp.digamma(x))
    defvjp(_sp.digamma, lambda g, ans, x: g * _sp.polygamma(1, x))
    defjvp(_sp.digamma, lambda t, ans, x: t * _sp.polygamma(1, x))
    defvjp(_sp.polygamma, None, lambda g, ans, n, x: unbroadcast(g * _sp.polygamma(n + 1, x), x))
    defjvp(_sp.polygamma, None, lambda t, ans, n, x: broadcast_like(t * _sp.polygamma(n + 1, x), ans))
    defvjp(_sp.erf, lambda g, ans, x: g * 2.0 / math.sqrt(math.pi) * np.exp(-x * x))
    defjvp(_sp.erf, lambda t, ans, x: t * 2.0 / math.sqrt(math.pi) * np.exp(-x * x))
    defvjp(_sp.erfc, lambda g, ans, x: -g * 2.0 / math.sqrt(math.pi) * np.exp(-x * x))
    defjvp(_sp.erfc, lambda t, ans, x: -t * 2.0 / math.sqrt(math.pi) * np.exp(-x * x))
    defvjp(_sp.expit, lambda g, ans, x: g * ans * (1.0 - ans))
    defjvp(_sp.expit, lambda t, ans, x: t * ans * (1.0 - ans))
    defvjp(_sp.logit, lambda g, ans, x: g / (x * (1.0 - x)))
    defjvp(_sp.logit, lambda t, ans, x: t / (x * (1.0 - x)))
    defvjp(_sp.xlogy, lambda g, ans, x, y: unbroadcast(g * np.log(y), x),
           lambda g, ans, x, y: unbroadcast(g * x / np.where(x == 0, 1.0, y), y))
    defjvp(_sp.xlogy, lambda t, ans, x, y: broadcast_like(t * np.log(y), ans),
           lambda t, ans, x, y: broadcast_like(t * x / np.where(x == 0, 1.0, y), ans))
    defvjp(_sp.xlog1py, lambda g, ans, x, y: unbroadcast(g * np.log1p(y), x),
           lambda g, ans, x, y: unbroadcast(g * x / np.where(x == 0, 1.0, 1.0 + y), y))
    defjvp(_sp.xlog1py, lambda t, ans, x, y: broadcast_like(t * np.log1p(y), ans),
           lambda t, ans, x, y: broadcast_like(t * x / np.where(x == 0, 1.0, 1.0 + y), ans))
    defimplementation(_sp.logsumexp, logsumexp)
    defimplementation(_sp.softmax, softmax)
    defimplementation(_sp.log_softmax, log_softmax)
    ELEMENTWISE += [_sp.gammaln, _sp.digamma, _sp.polygamma, _sp.erf, _sp.erfc, _sp.expit,
                    _sp.logit, _sp.xlogy, _sp.xlog1py]
