"""Products: dot, vdot, inner, outer, matmul, tensordot.

No conjugation for the bilinear (holomorphic) products (JAX's convention):
for ``y = a b``, ``a_bar = g b`` and ``b_bar = a g`` contracted over the
right axes.  ``vdot(a, b) = sum(conj(a) b)`` conjugates ``a``, so
``a_bar = conj(g b)`` and ``b_bar = g conj(a)``.  The general contractions
are einsums built by ``s2s_runtime.vjps.tensordot_vjp``.
"""
import numpy as np

from s2s_runtime import (dot_vjp, inner_vjp, matmul_vjp_lhs, matmul_vjp_rhs, tensordot_vjp,
                         unbroadcast)

from .registry import defvjp

defvjp(np.dot, lambda g, ans, a, b, out=None: dot_vjp(g, a, b, 0),
       lambda g, ans, a, b, out=None: dot_vjp(g, a, b, 1))
# vdot flattens both: a_bar = conj(g b), b_bar = g conj(a)
defvjp(np.vdot,
       lambda g, ans, a, b: unbroadcast(np.reshape(np.conj(g * np.ravel(b)), np.shape(a)), a),
       lambda g, ans, a, b: unbroadcast(np.reshape(g * np.conj(np.ravel(a)), np.shape(b)), b))
defvjp(np.inner, lambda g, ans, a, b: inner_vjp(g, a, b, 0),
       lambda g, ans, a, b: inner_vjp(g, a, b, 1))
# outer(a, b)_ij = a_i b_j (both flattened): a_bar = g @ b, b_bar = a @ g
defvjp(np.outer,
       lambda g, ans, a, b, out=None:
       unbroadcast(np.reshape(np.dot(g, np.ravel(b)), np.shape(a)), a),
       lambda g, ans, a, b, out=None:
       unbroadcast(np.reshape(np.dot(np.ravel(a), g), np.shape(b)), b))
defvjp(np.matmul, lambda g, ans, x1, x2, out=None: matmul_vjp_lhs(g, x1, x2),
       lambda g, ans, x1, x2, out=None: matmul_vjp_rhs(g, x1, x2))
defvjp(np.tensordot, lambda g, ans, a, b, axes=2: tensordot_vjp(g, a, b, axes, 0),
       lambda g, ans, a, b, axes=2: tensordot_vjp(g, a, b, axes, 1))
