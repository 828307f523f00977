"""numpy.linalg's array-API functions (numpy 2) and numpy.fft's shifts and frequencies.

The array-API functions are new callables, not aliases of numpy's, so they need
their own rules; each is the numpy function it mirrors with matrices on the last
two axes: ``matmul``, ``outer``, ``tensordot`` (bilinear, no conjugation),
``vecdot(x1, x2) = sum(conj(x1) x2, axis)`` (``x1_bar = conj(g x2)``,
``x2_bar = g conj(x1)``), ``trace`` / ``diagonal`` (``g`` written back on the
diagonal), ``matrix_transpose``, ``matrix_norm`` (``np.linalg.norm``'s helpers
over the axes ``(-2, -1)``), ``vector_norm`` (the same on the axes merged into one
last axis by ``flat_axes``), ``cross`` (``x1_bar = x2 x g``, ``x2_bar = g x x1``),
``multi_dot`` (multilinear: ``A_i_bar = prefix_i^T g suffix_i^T``, helpers in
``s2s_runtime.linalg``; second order through the helpers' rules, no third).
``fftshift`` / ``ifftshift`` are permutations, each the other's transpose.
``matrix_rank``, ``fftfreq``, ``rfftfreq``: no derivative.

Also the rules of ``s2s_runtime.norm_jvp`` (the JVP helper of every norm), so that
reverse mode runs over forward-mode code through norms: ``norm_jvp(t, n, x) =
Re(sum(c t))`` over the normed axes with ``c = norm_vjp(1, n, x)``: linear in ``t``
(transpose ``c Re(ct)`` = ``norm_vjp(Re ct)``); in ``n`` it is ``s K`` with ``K =
Re(sum(t dc/dn))`` (``norm_vjp_dans_transpose``); in ``x`` ``Re(sum(dc[s] t))`` =
``Re(sum(dc[t] s))`` (the Hessian is symmetric, ``dc = norm_vjp_dx``).
"""
import numpy as np

from s2s_runtime import (flat_axes, matmul_vjp_lhs, matmul_vjp_rhs, multi_dot_jvp,
                         multi_dot_jvp2, multi_dot_vjp, multi_dot_vjp_dx, norm_jvp, norm_vjp,
                         norm_vjp_dans_transpose, norm_vjp_dx, tensordot_vjp, trace_vjp,
                         unbroadcast, unflat_axes, zeros_like)

from .registry import defjvp, defnondiff, defvjp

L = np.linalg

defvjp(L.matmul, lambda g, ans, x1, x2: matmul_vjp_lhs(g, x1, x2),
       lambda g, ans, x1, x2: matmul_vjp_rhs(g, x1, x2))
defjvp(L.matmul, lambda t, ans, x1, x2: np.matmul(t, x2),
       lambda t, ans, x1, x2: np.matmul(x1, t))
# outer of vectors: y_ij = x1_i x2_j
defvjp(L.outer, lambda g, ans, x1, x2: np.dot(g, x2), lambda g, ans, x1, x2: np.dot(x1, g))
defjvp(L.outer, lambda t, ans, x1, x2: np.outer(t, x2), lambda t, ans, x1, x2: np.outer(x1, t))
defvjp(L.tensordot, lambda g, ans, x1, x2, *, axes=2: tensordot_vjp(g, x1, x2, axes, 0),
       lambda g, ans, x1, x2, *, axes=2: tensordot_vjp(g, x1, x2, axes, 1))
defjvp(L.tensordot, lambda t, ans, x1, x2, *, axes=2: np.tensordot(t, x2, axes),
       lambda t, ans, x1, x2, *, axes=2: np.tensordot(x1, t, axes))
# vecdot conjugates x1 (like vdot), over one axis with broadcasting
defvjp(L.vecdot,
       lambda g, ans, x1, x2, *, axis=-1: unbroadcast(np.conj(np.expand_dims(g, axis) * x2), x1),
       lambda g, ans, x1, x2, *, axis=-1: unbroadcast(np.expand_dims(g, axis) * np.conj(x1), x2))
defjvp(L.vecdot,
       lambda t, ans, x1, x2, *, axis=-1: L.vecdot(t, x2, axis=axis),
       lambda t, ans, x1, x2, *, axis=-1: L.vecdot(x1, t, axis=axis))
defvjp(L.trace, lambda g, ans, x, *, offset=0, dtype=None: trace_vjp(g, x, offset, -2, -1))
defjvp(L.trace, lambda t, ans, x, *, offset=0, dtype=None: np.trace(t, offset, -2, -1))
defvjp(L.diagonal, lambda g, ans, x, *, offset=0: trace_vjp(g, x, offset, -2, -1))
defjvp(L.diagonal, lambda t, ans, x, *, offset=0: np.diagonal(t, offset, -2, -1))
defvjp(L.matrix_transpose, lambda g, ans, x: np.swapaxes(g, -1, -2))
defjvp(L.matrix_transpose, lambda t, ans, x: np.swapaxes(t, -1, -2))
defvjp(L.matrix_norm, lambda g, ans, x, *, keepdims=False, ord="fro":
       norm_vjp(g, ans, x, ord, (-2, -1), keepdims))
defjvp(L.matrix_norm, lambda t, ans, x, *, keepdims=False, ord="fro":
       norm_jvp(t, ans, x, ord, (-2, -1), keepdims))


def _vector_norm_vjp(g, ans, x, *, axis=None, keepdims=False, ord=2):
    """vector_norm over `axis` (None: all, a tuple: one vector): np.linalg.norm's rule on the
    merged last axis of flat_axes(x, axis), the result shaped like ans (keepdims)
    """
    xv = flat_axes(x, axis)
    n = np.linalg.norm(xv, ord, -1)
    return unflat_axes(norm_vjp(np.reshape(g, np.shape(n)), n, xv, ord, -1, False), x, axis)


def _vector_norm_jvp(t, ans, x, *, axis=None, keepdims=False, ord=2):
    xv = flat_axes(x, axis)
    n = np.linalg.norm(xv, ord, -1)
    return np.reshape(norm_jvp(flat_axes(t, axis), n, xv, ord, -1, False), np.shape(ans))


defvjp(L.vector_norm, _vector_norm_vjp)
defjvp(L.vector_norm, _vector_norm_jvp)
# cross products of 3-vectors along `axis`: <g, x1 x x2> = <x2 x g, x1> = <g x x1, x2>
defvjp(L.cross, lambda g, ans, x1, x2, *, axis=-1: unbroadcast(L.cross(x2, g, axis=axis), x1),
       lambda g, ans, x1, x2, *, axis=-1: unbroadcast(L.cross(g, x1, axis=axis), x2))
defjvp(L.cross, lambda t, ans, x1, x2, *, axis=-1: L.cross(t, x2, axis=axis),
       lambda t, ans, x1, x2, *, axis=-1: L.cross(x1, t, axis=axis))

# multi_dot(arrays): the cotangent of the list is a list
defvjp(L.multi_dot, lambda g, ans, arrays, *, out=None: multi_dot_vjp(g, arrays))
defjvp(L.multi_dot, lambda t, ans, arrays, *, out=None: multi_dot_jvp(t, arrays))
# multi_dot_vjp(g, A) is linear in g (transpose: multi_dot_jvp) and multilinear in A (the
#   Hessian of <g, multi_dot(A)>, symmetric: multi_dot_vjp_dx); multi_dot_jvp(t, A) likewise
defvjp(multi_dot_vjp, lambda ct, out, g, arrays: multi_dot_jvp(ct, arrays),
       lambda ct, out, g, arrays: multi_dot_vjp_dx(g, arrays, ct), container_result=True)
defjvp(multi_dot_vjp, lambda tan, out, g, arrays: multi_dot_vjp(tan, arrays),
       lambda tan, out, g, arrays: multi_dot_vjp_dx(g, arrays, tan))
defvjp(multi_dot_jvp, lambda ct, out, t, arrays: multi_dot_vjp(ct, arrays),
       lambda ct, out, t, arrays: multi_dot_vjp_dx(ct, arrays, t))
defjvp(multi_dot_jvp, lambda tan, out, t, arrays: multi_dot_jvp(tan, arrays),
       lambda tan, out, t, arrays: multi_dot_jvp2(t, tan, arrays))

defvjp(np.fft.fftshift, lambda g, ans, x, axes=None: np.fft.ifftshift(g, axes))
defjvp(np.fft.fftshift, lambda t, ans, x, axes=None: np.fft.fftshift(t, axes))
defvjp(np.fft.ifftshift, lambda g, ans, x, axes=None: np.fft.fftshift(g, axes))
defjvp(np.fft.ifftshift, lambda t, ans, x, axes=None: np.fft.ifftshift(t, axes))

defnondiff(L.matrix_rank, np.fft.fftfreq, np.fft.rfftfreq)

# flat_axes / unflat_axes: linear reshapes, each the other's inverse and transpose
defvjp(flat_axes, lambda ct, out, x, axis: unflat_axes(ct, x, axis),
       lambda ct, out, x, axis: zeros_like(axis))
defjvp(flat_axes, lambda tan, out, x, axis: flat_axes(tan, axis),
       lambda tan, out, x, axis: zeros_like(out))
defvjp(unflat_axes, lambda ct, out, y, x, axis: flat_axes(ct, axis),
       lambda ct, out, y, x, axis: zeros_like(x), lambda ct, out, y, x, axis: zeros_like(axis))
defjvp(unflat_axes, lambda tan, out, y, x, axis: unflat_axes(tan, x, axis),
       lambda tan, out, y, x, axis: zeros_like(out), lambda tan, out, y, x, axis: zeros_like(out))

# norm_jvp(t, ans, x): see the module docstring
defvjp(norm_jvp,
       lambda ct, out, t, ans, x, ord=None, axis=None, keepdims=False:
       norm_vjp(np.real(ct), ans, x, ord, axis, keepdims),
       lambda ct, out, t, ans, x, ord=None, axis=None, keepdims=False:
       np.real(ct) * norm_vjp_dans_transpose(t, np.ones_like(ans), ans, x, ord, axis, keepdims),
       lambda ct, out, t, ans, x, ord=None, axis=None, keepdims=False:
       norm_vjp_dx(np.real(ct), ans, x, t, ord, axis, keepdims))
defjvp(norm_jvp,
       lambda tan, out, t, ans, x, ord=None, axis=None, keepdims=False:
       norm_jvp(tan, ans, x, ord, axis, keepdims),
       lambda tan, out, t, ans, x, ord=None, axis=None, keepdims=False:
       tan * norm_vjp_dans_transpose(t, np.ones_like(ans), ans, x, ord, axis, keepdims),
       lambda tan, out, t, ans, x, ord=None, axis=None, keepdims=False:
       np.real(np.sum(norm_vjp_dx(np.ones_like(ans), ans, x, t, ord, axis, keepdims) * tan,
                      axis=axis, keepdims=keepdims)))
