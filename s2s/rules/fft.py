"""numpy.fft: fft, ifft, fft2, ifft2, fftn, ifftn, rfft, irfft, rfft2, irfft2, rfftn, irfftn,
hfft, ihfft.

The complex transforms are C-linear and their matrices (with numpy's
normalisation ``norm``) are symmetric, so (JAX's convention, no conjugation)
the VJP is the same transform of ``g``, then undone input resizing: the
transpose of numpy's zero-padding / cropping to ``n`` (or ``s``) is cropping /
zero-padding back (``fit_to``).  A real input takes the real part (``cast_vjp``).

``rfft`` is the first ``n//2 + 1`` entries of ``fft`` of a real input: its
transpose zero-pads ``g`` to ``n``, transforms, and takes the real part.
``irfft`` reads a half spectrum ``X`` as the Hermitian full spectrum; its
transpose (JAX's) is ``conj(w * rfft(g))``, where ``w`` counts twice the
entries that stand for two entries of the full spectrum, times the
normalisation.  ``hfft(a) = irfft(conj(a))`` and ``ihfft(a) = conj(rfft(a))`` with the
normalisation of the opposite direction (numpy's definitions): their transposes are
those of irfft / rfft composed with ``conj``.  The JVPs are the transforms applied to
the tangent.
"""
import numpy as np

from s2s_runtime import (cast_vjp, fft_axes, fft_last_axis, fft_rest_axes, fft_size, fit_to,
                         irfft_weights, rfftn_sizes, swapped_norm, zeros_like)

from .registry import defjvp, defnondiff, defvjp

def _fft_vjp(g, ans, a, n=None, axis=-1, norm=None, out=None):
    """fft: C-linear with a symmetric matrix, so a_bar = fft(g) (same norm), fitted to a"""
    return cast_vjp(fit_to(np.fft.fft(g, None, axis, norm), a, axis), a)


def _ifft_vjp(g, ans, a, n=None, axis=-1, norm=None, out=None):
    """ifft: a_bar = ifft(g) (same norm), fitted back to a along axis"""
    return cast_vjp(fit_to(np.fft.ifft(g, None, axis, norm), a, axis), a)


defvjp(np.fft.fft, _fft_vjp)
defjvp(np.fft.fft, lambda t, ans, a, n=None, axis=-1, norm=None, out=None:
       np.fft.fft(t, n, axis, norm))
defvjp(np.fft.ifft, _ifft_vjp)
defjvp(np.fft.ifft, lambda t, ans, a, n=None, axis=-1, norm=None, out=None:
       np.fft.ifft(t, n, axis, norm))


def _fftn_vjp(g, ans, a, s=None, axes=None, norm=None, out=None):
    """fftn: a_bar = fftn(g) over the same axes (same norm), fitted back to a"""
    return cast_vjp(fit_to(np.fft.fftn(g, None, fft_axes(a, s, axes), norm), a,
                           fft_axes(a, s, axes)), a)


def _ifftn_vjp(g, ans, a, s=None, axes=None, norm=None, out=None):
    """ifftn: a_bar = ifftn(g) over the same axes (same norm), fitted back to a"""
    return cast_vjp(fit_to(np.fft.ifftn(g, None, fft_axes(a, s, axes), norm), a,
                           fft_axes(a, s, axes)), a)


def _fft2_vjp(g, ans, a, s=None, axes=(-2, -1), norm=None, out=None):
    """fft2: a_bar = fftn(g) over the same axes (same norm), fitted back to a"""
    return cast_vjp(fit_to(np.fft.fftn(g, None, fft_axes(a, s, axes), norm), a,
                           fft_axes(a, s, axes)), a)


def _ifft2_vjp(g, ans, a, s=None, axes=(-2, -1), norm=None, out=None):
    """ifft2: a_bar = ifftn(g) over the same axes (same norm), fitted back to a"""
    return cast_vjp(fit_to(np.fft.ifftn(g, None, fft_axes(a, s, axes), norm), a,
                           fft_axes(a, s, axes)), a)


defvjp(np.fft.fftn, _fftn_vjp)
defjvp(np.fft.fftn, lambda t, ans, a, s=None, axes=None, norm=None, out=None:
       np.fft.fftn(t, s, axes, norm))
defvjp(np.fft.ifftn, _ifftn_vjp)
defjvp(np.fft.ifftn, lambda t, ans, a, s=None, axes=None, norm=None, out=None:
       np.fft.ifftn(t, s, axes, norm))
defvjp(np.fft.fft2, _fft2_vjp)
defjvp(np.fft.fft2, lambda t, ans, a, s=None, axes=(-2, -1), norm=None, out=None:
       np.fft.fft2(t, s, axes, norm))
defvjp(np.fft.ifft2, _ifft2_vjp)
defjvp(np.fft.ifft2, lambda t, ans, a, s=None, axes=(-2, -1), norm=None, out=None:
       np.fft.ifft2(t, s, axes, norm))


def _rfft_vjp(g, ans, a, n=None, axis=-1, norm=None, out=None):
    """rfft: a_bar = Re(fit(fft(pad_n(g)), a)), g zero-padded to the signal's length n"""
    return cast_vjp(fit_to(np.fft.fft(g, fft_size(a, n, axis), axis, norm), a, axis), a)


def _irfft_vjp(g, ans, a, n=None, axis=-1, norm=None, out=None):
    """irfft: a_bar = fit(conj(w * rfft(g)), a), w the weights and normalisation"""
    return cast_vjp(fit_to(np.conj(np.fft.rfft(g, None, axis) * irfft_weights(g, axis, norm)),
                           a, axis), a)


defvjp(np.fft.rfft, _rfft_vjp)
defjvp(np.fft.rfft, lambda t, ans, a, n=None, axis=-1, norm=None, out=None:
       np.fft.rfft(t, n, axis, norm))
defvjp(np.fft.irfft, _irfft_vjp)
defjvp(np.fft.irfft, lambda t, ans, a, n=None, axis=-1, norm=None, out=None:
       np.fft.irfft(t, n, axis, norm))


def _hfft_vjp(g, ans, a, n=None, axis=-1, norm=None, out=None):
    """hfft(a) = irfft(conj(a)), opposite norm: a_bar = fit(w * rfft(g), a)"""
    return cast_vjp(fit_to(np.fft.rfft(g, None, axis) * irfft_weights(g, axis, swapped_norm(norm)),
                           a, axis), a)


def _ihfft_vjp(g, ans, a, n=None, axis=-1, norm=None, out=None):
    """ihfft(a) = conj(rfft(a)), opposite norm: a_bar = Re(fit(fft(pad_n(conj g)), a))"""
    return cast_vjp(fit_to(np.fft.fft(np.conj(g), fft_size(a, n, axis), axis, swapped_norm(norm)),
                           a, axis), a)


defvjp(np.fft.hfft, _hfft_vjp)
defjvp(np.fft.hfft, lambda t, ans, a, n=None, axis=-1, norm=None, out=None:
       np.fft.hfft(t, n, axis, norm))
defvjp(np.fft.ihfft, _ihfft_vjp)
defjvp(np.fft.ihfft, lambda t, ans, a, n=None, axis=-1, norm=None, out=None:
       np.fft.ihfft(t, n, axis, norm))


def _rfftn_vjp(g, ans, a, s=None, axes=None, norm=None, out=None):
    """rfftn = complex FFTs over the other axes after an rfft over the last one: its transpose
    zero-pads g to the signal's length on the last axis, transforms all axes, takes Re.
    (irfftn = irfft over the last axis after inverse FFTs over the others: its transpose is
    irfft's transpose on the last axis, then the symmetric inverse FFTs.)
    """
    return cast_vjp(fit_to(np.fft.fftn(g, rfftn_sizes(g, a, s, axes), fft_axes(a, s, axes), norm),
                           a, fft_axes(a, s, axes)), a)


def _irfftn_vjp(g, ans, a, s=None, axes=None, norm=None, out=None):
    """irfftn: irfft's transpose on the last axis, then ifftn over the others"""
    last = fft_last_axis(a, s, axes)
    half = np.conj(np.fft.rfft(g, None, last) * irfft_weights(g, last, norm))
    return cast_vjp(fit_to(np.fft.ifftn(half, None, fft_rest_axes(a, s, axes), norm), a,
                           fft_axes(a, s, axes)), a)


def _rfft2_vjp(g, ans, a, s=None, axes=(-2, -1), norm=None, out=None):
    """rfft2: rfftn over the last two axes (see _rfftn_vjp)"""
    return cast_vjp(fit_to(np.fft.fftn(g, rfftn_sizes(g, a, s, axes), fft_axes(a, s, axes), norm),
                           a, fft_axes(a, s, axes)), a)


def _irfft2_vjp(g, ans, a, s=None, axes=(-2, -1), norm=None, out=None):
    """irfft2: irfftn over the last two axes (see _irfftn_vjp)"""
    last = fft_last_axis(a, s, axes)
    half = np.conj(np.fft.rfft(g, None, last) * irfft_weights(g, last, norm))
    return cast_vjp(fit_to(np.fft.ifftn(half, None, fft_rest_axes(a, s, axes), norm), a,
                           fft_axes(a, s, axes)), a)


defvjp(np.fft.rfftn, _rfftn_vjp)
defjvp(np.fft.rfftn, lambda t, ans, a, s=None, axes=None, norm=None, out=None:
       np.fft.rfftn(t, s, axes, norm))
defvjp(np.fft.irfftn, _irfftn_vjp)
defjvp(np.fft.irfftn, lambda t, ans, a, s=None, axes=None, norm=None, out=None:
       np.fft.irfftn(t, s, axes, norm))
defvjp(np.fft.rfft2, _rfft2_vjp)
defjvp(np.fft.rfft2, lambda t, ans, a, s=None, axes=(-2, -1), norm=None, out=None:
       np.fft.rfft2(t, s, axes, norm))
defvjp(np.fft.irfft2, _irfft2_vjp)
defjvp(np.fft.irfft2, lambda t, ans, a, s=None, axes=(-2, -1), norm=None, out=None:
       np.fft.irfft2(t, s, axes, norm))

# --- helpers: fit_to is linear in v (transpose: fit back to v's shape); the rest constants
defnondiff(fft_axes, fft_last_axis, fft_rest_axes, fft_size, irfft_weights, rfftn_sizes,
           swapped_norm)
defvjp(fit_to, lambda ct, out, v, x, axes: fit_to(ct, v, axes),
       lambda ct, out, v, x, axes: zeros_like(x))
defjvp(fit_to, lambda tan, out, v, x, axes: fit_to(tan, x, axes),
       lambda tan, out, v, x, axes: zeros_like(out))
