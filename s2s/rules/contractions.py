"""Contractions beyond ``products.py``: einsum (explicit and implicit output, ellipsis,
repeated indices), cross, vecdot, matvec, vecmat, convolve, correlate, and polynomials (polyval,
polyadd, polysub, polymul, polyder, polyint).

All are multilinear (polyval: linear in the coefficients); no conjugation
except where the function conjugates (``vecdot``/``vecmat`` conjugate their
first argument, so its cotangent is ``conj(...)``, JAX's convention).

einsum: ``F = <g, einsum(subscripts, a_0, ...)>``; operand ``k``'s cotangent is
``dF/da_k`` (``einsum_vjp``), its tangent contribution the einsum with ``a_k``
replaced by ``t`` (``einsum_jvp``); at most five operands (more do not bind:
an s2s error).  The rules of those two helpers (second order) use
``einsum_vjp2``/``einsum_jvp2`` (``runtime/einsum_ops.py``).
(``np.kron`` is read as the plain code of ``numpy_code/products.py`` by every
transform.)  cross, vecdot, matvec, vecmat and polyval are written with primitives
that have rules (einsum, reshape, cross...), so they need no helper rules.
"""
import numpy as np

from s2s_runtime import (contraction_axis, conv_pad, einsum_jvp, einsum_jvp2, einsum_vjp,
                         einsum_vjp2, poly_factors, poly_slots, unbroadcast)

from .registry import defjvp, defnondiff, defvjp

defnondiff(contraction_axis)

# --- einsum -------------------------------------------------------------------------------
defvjp(np.einsum, None,
       lambda g, ans, subscripts, a0, a1=None, a2=None, a3=None, a4=None, *, out=None,
       optimize=False: einsum_vjp(g, subscripts, 0, a0, a1, a2, a3, a4),
       lambda g, ans, subscripts, a0, a1=None, a2=None, a3=None, a4=None, *, out=None,
       optimize=False: einsum_vjp(g, subscripts, 1, a0, a1, a2, a3, a4),
       lambda g, ans, subscripts, a0, a1=None, a2=None, a3=None, a4=None, *, out=None,
       optimize=False: einsum_vjp(g, subscripts, 2, a0, a1, a2, a3, a4),
       lambda g, ans, subscripts, a0, a1=None, a2=None, a3=None, a4=None, *, out=None,
       optimize=False: einsum_vjp(g, subscripts, 3, a0, a1, a2, a3, a4),
       lambda g, ans, subscripts, a0, a1=None, a2=None, a3=None, a4=None, *, out=None,
       optimize=False: einsum_vjp(g, subscripts, 4, a0, a1, a2, a3, a4))
defjvp(np.einsum, None,
       lambda t, ans, subscripts, a0, a1=None, a2=None, a3=None, a4=None, *, out=None,
       optimize=False: einsum_jvp(t, subscripts, 0, a0, a1, a2, a3, a4),
       lambda t, ans, subscripts, a0, a1=None, a2=None, a3=None, a4=None, *, out=None,
       optimize=False: einsum_jvp(t, subscripts, 1, a0, a1, a2, a3, a4),
       lambda t, ans, subscripts, a0, a1=None, a2=None, a3=None, a4=None, *, out=None,
       optimize=False: einsum_jvp(t, subscripts, 2, a0, a1, a2, a3, a4),
       lambda t, ans, subscripts, a0, a1=None, a2=None, a3=None, a4=None, *, out=None,
       optimize=False: einsum_jvp(t, subscripts, 3, a0, a1, a2, a3, a4),
       lambda t, ans, subscripts, a0, a1=None, a2=None, a3=None, a4=None, *, out=None,
       optimize=False: einsum_jvp(t, subscripts, 4, a0, a1, a2, a3, a4))

# einsum_vjp(g, subscripts, k, a...) = dF/da_k: linear in g (transpose: einsum_jvp, the
#   einsum with a_k := ct) and in every a_j, j != k (JVP: a_j := tan; VJP: dF/da_j with
#   a_k := ct, einsum_vjp2 with the roles of j and k swapped); 0 in a_k (einsum_vjp2
#   gives 0 when j == k).
defvjp(einsum_vjp,
       lambda ct, out, g, subscripts, k, a0, a1=None, a2=None, a3=None, a4=None:
       einsum_jvp(ct, subscripts, k, a0, a1, a2, a3, a4),
       None, None,
       lambda ct, out, g, subscripts, k, a0, a1=None, a2=None, a3=None, a4=None:
       einsum_vjp2(g, subscripts, 0, k, ct, a0, a1, a2, a3, a4),
       lambda ct, out, g, subscripts, k, a0, a1=None, a2=None, a3=None, a4=None:
       einsum_vjp2(g, subscripts, 1, k, ct, a0, a1, a2, a3, a4),
       lambda ct, out, g, subscripts, k, a0, a1=None, a2=None, a3=None, a4=None:
       einsum_vjp2(g, subscripts, 2, k, ct, a0, a1, a2, a3, a4),
       lambda ct, out, g, subscripts, k, a0, a1=None, a2=None, a3=None, a4=None:
       einsum_vjp2(g, subscripts, 3, k, ct, a0, a1, a2, a3, a4),
       lambda ct, out, g, subscripts, k, a0, a1=None, a2=None, a3=None, a4=None:
       einsum_vjp2(g, subscripts, 4, k, ct, a0, a1, a2, a3, a4))
defjvp(einsum_vjp,
       lambda tan, out, g, subscripts, k, a0, a1=None, a2=None, a3=None, a4=None:
       einsum_vjp(tan, subscripts, k, a0, a1, a2, a3, a4),
       None, None,
       lambda tan, out, g, subscripts, k, a0, a1=None, a2=None, a3=None, a4=None:
       einsum_vjp2(g, subscripts, k, 0, tan, a0, a1, a2, a3, a4),
       lambda tan, out, g, subscripts, k, a0, a1=None, a2=None, a3=None, a4=None:
       einsum_vjp2(g, subscripts, k, 1, tan, a0, a1, a2, a3, a4),
       lambda tan, out, g, subscripts, k, a0, a1=None, a2=None, a3=None, a4=None:
       einsum_vjp2(g, subscripts, k, 2, tan, a0, a1, a2, a3, a4),
       lambda tan, out, g, subscripts, k, a0, a1=None, a2=None, a3=None, a4=None:
       einsum_vjp2(g, subscripts, k, 3, tan, a0, a1, a2, a3, a4),
       lambda tan, out, g, subscripts, k, a0, a1=None, a2=None, a3=None, a4=None:
       einsum_vjp2(g, subscripts, k, 4, tan, a0, a1, a2, a3, a4))
# einsum_jvp(t, subscripts, k, a...) = E(a; a_k := t): linear in t (transpose: einsum_vjp)
#   and in every a_j, j != k (JVP: E with a_k := t, a_j := tan; VJP: dF/da_j for
#   F = <ct, E(a; a_k := t)>)
defvjp(einsum_jvp,
       lambda ct, out, t, subscripts, k, a0, a1=None, a2=None, a3=None, a4=None:
       einsum_vjp(ct, subscripts, k, a0, a1, a2, a3, a4),
       None, None,
       lambda ct, out, t, subscripts, k, a0, a1=None, a2=None, a3=None, a4=None:
       einsum_vjp2(ct, subscripts, 0, k, t, a0, a1, a2, a3, a4),
       lambda ct, out, t, subscripts, k, a0, a1=None, a2=None, a3=None, a4=None:
       einsum_vjp2(ct, subscripts, 1, k, t, a0, a1, a2, a3, a4),
       lambda ct, out, t, subscripts, k, a0, a1=None, a2=None, a3=None, a4=None:
       einsum_vjp2(ct, subscripts, 2, k, t, a0, a1, a2, a3, a4),
       lambda ct, out, t, subscripts, k, a0, a1=None, a2=None, a3=None, a4=None:
       einsum_vjp2(ct, subscripts, 3, k, t, a0, a1, a2, a3, a4),
       lambda ct, out, t, subscripts, k, a0, a1=None, a2=None, a3=None, a4=None:
       einsum_vjp2(ct, subscripts, 4, k, t, a0, a1, a2, a3, a4))
defjvp(einsum_jvp,
       lambda tan, out, t, subscripts, k, a0, a1=None, a2=None, a3=None, a4=None:
       einsum_jvp(tan, subscripts, k, a0, a1, a2, a3, a4),
       None, None,
       lambda tan, out, t, subscripts, k, a0, a1=None, a2=None, a3=None, a4=None:
       einsum_jvp2(t, subscripts, k, 0, tan, a0, a1, a2, a3, a4),
       lambda tan, out, t, subscripts, k, a0, a1=None, a2=None, a3=None, a4=None:
       einsum_jvp2(t, subscripts, k, 1, tan, a0, a1, a2, a3, a4),
       lambda tan, out, t, subscripts, k, a0, a1=None, a2=None, a3=None, a4=None:
       einsum_jvp2(t, subscripts, k, 2, tan, a0, a1, a2, a3, a4),
       lambda tan, out, t, subscripts, k, a0, a1=None, a2=None, a3=None, a4=None:
       einsum_jvp2(t, subscripts, k, 3, tan, a0, a1, a2, a3, a4),
       lambda tan, out, t, subscripts, k, a0, a1=None, a2=None, a3=None, a4=None:
       einsum_jvp2(t, subscripts, k, 4, tan, a0, a1, a2, a3, a4))


# cross: <g, a x b> = <a, b x g> = <b, g x a> (vector axes moved like the arguments')
defvjp(np.cross,
       lambda g, ans, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None:
       unbroadcast(np.cross(b, g, axisb, axisc, axisa, axis), a),
       lambda g, ans, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None:
       unbroadcast(np.cross(g, a, axisc, axisa, axisb, axis), b))
defjvp(np.cross,
       lambda t, ans, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None:
       np.cross(t, b, axisa, axisb, axisc, axis),
       lambda t, ans, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None:
       np.cross(a, t, axisa, axisb, axisc, axis))

# vecdot(x1, x2) = sum(conj(x1) x2, axis): x1_bar = conj(g x2), x2_bar = g conj(x1)
if hasattr(np, "vecdot"):
    defvjp(np.vecdot,
           lambda g, ans, x1, x2, out=None, axes=None, axis=-1:
           unbroadcast(np.conj(np.expand_dims(g, contraction_axis(axes, axis)) * x2), x1),
           lambda g, ans, x1, x2, out=None, axes=None, axis=-1:
           unbroadcast(np.expand_dims(g, contraction_axis(axes, axis)) * np.conj(x1), x2))
    defjvp(np.vecdot,
           lambda t, ans, x1, x2, out=None, axes=None, axis=-1:
           np.vecdot(t, x2, axis=contraction_axis(axes, axis)),
           lambda t, ans, x1, x2, out=None, axes=None, axis=-1:
           np.vecdot(x1, t, axis=contraction_axis(axes, axis)))
# matvec(A, v)_i = sum_j A_ij v_j: A_bar = g v^T, v_bar = A^T g
if hasattr(np, "matvec"):
    defvjp(np.matvec,
           lambda g, ans, x1, x2: unbroadcast(np.expand_dims(g, -1) * np.expand_dims(x2, -2), x1),
           lambda g, ans, x1, x2: unbroadcast(np.sum(np.expand_dims(g, -1) * x1, axis=-2), x2))
    defjvp(np.matvec,
           lambda t, ans, x1, x2: np.matvec(t, x2),
           lambda t, ans, x1, x2: np.matvec(x1, t))
# vecmat(v, A)_j = sum_i conj(v_i) A_ij: v_bar = conj(A g), A_bar = conj(v) g^T
if hasattr(np, "vecmat"):
    defvjp(np.vecmat,
           lambda g, ans, x1, x2:
           unbroadcast(np.conj(np.sum(np.expand_dims(g, -2) * x2, axis=-1)), x1),
           lambda g, ans, x1, x2:
           unbroadcast(np.expand_dims(np.conj(x1), -1) * np.expand_dims(g, -2), x2))
    defjvp(np.vecmat,
           lambda t, ans, x1, x2: np.vecmat(t, x2),
           lambda t, ans, x1, x2: np.vecmat(x1, t))

# polyval(p, x) = sum_i p_i x^(n-1-i): p_bar_i = sum g x^(n-1-i); x_bar = g p'(x)
defvjp(np.polyval,
       lambda g, ans, p, x: unbroadcast(np.reshape(np.sum(np.reshape(
           np.expand_dims(g, -1) * np.power(np.expand_dims(x, -1),
                                            np.arange(np.size(p) - 1, -1, -1)),
           (-1, np.size(p))), axis=0), np.shape(p)), p),
       lambda g, ans, p, x: unbroadcast(
           g * np.polyval(np.asarray(p)[:-1] * np.arange(np.size(p) - 1, 0, -1), x), x))
defjvp(np.polyval,
       lambda t, ans, p, x: np.polyval(t, x),
       lambda t, ans, p, x: t * np.polyval(np.asarray(p)[:-1] * np.arange(np.size(p) - 1, 0, -1),
                                           x))

# convolve(a, v)_n = sum_k a_k v_{n-k} (full output; 'same'/'valid' are a slice of it): with
#   gf = g put back in the full output (zeros elsewhere), a_bar_k = sum_n gf_n v_{n-k} and
#   v_bar_m = sum_n gf_n a_{n-m}: correlations (np.correlate conjugates its second argument,
#   hence the conj of the other factor)
defvjp(np.convolve,
       lambda g, ans, a, v, mode="full":
       unbroadcast(np.correlate(np.pad(g, conv_pad(a, v, mode, "convolve")), np.conj(v), "valid"),
                   a),
       lambda g, ans, a, v, mode="full":
       unbroadcast(np.correlate(np.pad(g, conv_pad(a, v, mode, "convolve")), np.conj(a), "valid"),
                   v))
defjvp(np.convolve, lambda t, ans, a, v, mode="full": np.convolve(t, v, mode),
       lambda t, ans, a, v, mode="full": np.convolve(a, t, mode))
# correlate(a, v) = convolve(a, w) with w = conj(flip(v)) (full output; its own 'same' slice):
#   a_bar = correlation of gf with flip(v); v_bar = conj(flip(w_bar)) (JAX: conj and flip
#   pull back as conj and flip)
defvjp(np.correlate,
       lambda g, ans, a, v, mode="valid":
       unbroadcast(np.correlate(np.pad(g, conv_pad(a, v, mode, "correlate")), np.flip(v),
                                "valid"), a),
       lambda g, ans, a, v, mode="valid":
       unbroadcast(np.conj(np.flip(np.correlate(np.pad(g, conv_pad(a, v, mode, "correlate")),
                                                np.conj(a), "valid"))), v))
defjvp(np.correlate, lambda t, ans, a, v, mode="valid": np.correlate(t, v, mode),
       lambda t, ans, a, v, mode="valid": np.correlate(a, t, mode))

# polynomial arithmetic on coefficient arrays (highest power first)
# polyadd/polysub: each argument adds to the tail of the result
defvjp(np.polyadd, lambda g, ans, a1, a2: unbroadcast(np.take(g, poly_slots(a1, ans)), a1),
       lambda g, ans, a1, a2: unbroadcast(np.take(g, poly_slots(a2, ans)), a2))
defjvp(np.polyadd, lambda t, ans, a1, a2: np.polyadd(t, np.zeros_like(a2)),
       lambda t, ans, a1, a2: np.polyadd(np.zeros_like(a1), t))
defvjp(np.polysub, lambda g, ans, a1, a2: unbroadcast(np.take(g, poly_slots(a1, ans)), a1),
       lambda g, ans, a1, a2: unbroadcast(-np.take(g, poly_slots(a2, ans)), a2))
defjvp(np.polysub, lambda t, ans, a1, a2: np.polysub(t, np.zeros_like(a2)),
       lambda t, ans, a1, a2: np.polysub(np.zeros_like(a1), t))
# polymul = convolve (full)
defvjp(np.polymul,
       lambda g, ans, a1, a2: unbroadcast(np.correlate(g, np.conj(a2), "valid"), a1),
       lambda g, ans, a1, a2: unbroadcast(np.correlate(g, np.conj(a1), "valid"), a2))
defjvp(np.polymul, lambda t, ans, a1, a2: np.polymul(t, a2),
       lambda t, ans, a1, a2: np.polymul(a1, t))


# polyder(p, m) = p[:n-m] F: p_bar = (g F, then m zeros); polyint(p, m)[:n] = p G
def _polyder_vjp(g, ans, p, m=1):
    factors, widths = poly_factors(p, m, "der")
    return unbroadcast(np.pad(g * factors, widths), p)


def _polyint_vjp(g, ans, p, m=1, k=None):
    factors, slots = poly_factors(p, m, "int")
    return unbroadcast(np.take(g, slots) * factors, p)


defvjp(np.polyder, _polyder_vjp)
defjvp(np.polyder, lambda t, ans, p, m=1: np.polyder(t, m))
defvjp(np.polyint, _polyint_vjp)
defjvp(np.polyint, lambda t, ans, p, m=1, k=None: np.polyint(t, m))
