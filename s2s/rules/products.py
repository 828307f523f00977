"""Products: dot, vdot, inner, outer, matmul, tensordot.

No conjugation for the bilinear (holomorphic) products (JAX's convention):
for ``y = a b``, ``a_bar = g b`` and ``b_bar = a g`` contracted over the
right axes.  ``vdot(a, b) = sum(conj(a) b)`` conjugates ``a``, so
``a_bar = conj(g b)`` and ``b_bar = g conj(a)``.  The general contractions
are einsums built by ``s2s_runtime.vjps.tensordot_vjp``.

JVPs: every product is bilinear, so the tangent is the product with one
factor replaced by its tangent (``dot(ta, b) + dot(a, tb)``; for ``vdot``,
``vdot(ta, b)`` conjugates ``ta`` as the primal conjugates ``a``).
"""
import numpy as np

from s2s_runtime import (dot_vjp, inner_vjp, matmul_vjp_lhs, matmul_vjp_rhs, tensordot_vjp,
                         unbroadcast)

from .registry import defjvp, defvjp

defvjp(np.dot, lambda g, ans, a, b, out=None: dot_vjp(g, a, b, 0),
       lambda g, ans, a, b, out=None: dot_vjp(g, a, b, 1))
defjvp(np.dot, lambda t, ans, a, b, out=None: np.dot(t, b),
       lambda t, ans, a, b, out=None: np.dot(a, t))
# vdot flattens both: a_bar = conj(g b), b_bar = g conj(a)
defvjp(np.vdot,
       lambda g, ans, a, b: unbroadcast(np.reshape(np.conj(g * np.ravel(b)), np.shape(a)), a),
       lambda g, ans, a, b: unbroadcast(np.reshape(g * np.conj(np.ravel(a)), np.shape(b)), b))
# d vdot(a, b) = vdot(ta, b) + vdot(a, tb).  One lambda per line: s2s.frontend.source
# cannot tell two lambdas with the same parameters on one line apart when they call a
# numpy function (it took the first for both: the b-term was vdot(tb, b)).
defjvp(np.vdot,
       lambda t, ans, a, b: np.vdot(t, b),
       lambda t, ans, a, b: np.vdot(a, t))
defvjp(np.inner, lambda g, ans, a, b: inner_vjp(g, a, b, 0),
       lambda g, ans, a, b: inner_vjp(g, a, b, 1))
# d inner(a, b) = inner(ta, b) + inner(a, tb) (one lambda per line, as for vdot)
defjvp(np.inner,
       lambda t, ans, a, b: np.inner(t, b),
       lambda t, ans, a, b: np.inner(a, t))
# outer(a, b)_ij = a_i b_j (both flattened): a_bar = g @ b, b_bar = a @ g
defvjp(np.outer,
       lambda g, ans, a, b, out=None:
       unbroadcast(np.reshape(np.dot(g, np.ravel(b)), np.shape(a)), a),
       lambda g, ans, a, b, out=None:
       unbroadcast(np.reshape(np.dot(np.ravel(a), g), np.shape(b)), b))
defjvp(np.outer, lambda t, ans, a, b, out=None: np.outer(t, b),
       lambda t, ans, a, b, out=None: np.outer(a, t))
defvjp(np.matmul, lambda g, ans, x1, x2, out=None: matmul_vjp_lhs(g, x1, x2),
       lambda g, ans, x1, x2, out=None: matmul_vjp_rhs(g, x1, x2))
defjvp(np.matmul, lambda t, ans, x1, x2, out=None: np.matmul(t, x2),
       lambda t, ans, x1, x2, out=None: np.matmul(x1, t))
defvjp(np.tensordot, lambda g, ans, a, b, axes=2: tensordot_vjp(g, a, b, axes, 0),
       lambda g, ans, a, b, axes=2: tensordot_vjp(g, a, b, axes, 1))
defjvp(np.tensordot, lambda t, ans, a, b, axes=2: np.tensordot(t, b, axes),
       lambda t, ans, a, b, axes=2: np.tensordot(a, t, axes))
