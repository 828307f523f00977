"""Small helpers of the linear-algebra and FFT rules (``s2s.rules.linalg*``, ``fft``).

The rules are written in numpy primitives that have rules themselves
(``matmul``, ``swapaxes``, ``conj``, ``solve``...), so their generated code
can be differentiated again.  What numpy lacks in one call is here, and each
helper is either a constant (no derivative: masks, identities, shapes, checks)
or linear in its first argument with its transpose among these helpers; their
rules sit beside the rules that call them (``linalg_decomp``, ``linalg_api``,
``linalg_lstsq``, ``fft``).  The ``multi_dot`` helpers are multilinear: their
second-order rules are in ``linalg_api``.

Stacked matrices are supported throughout: the matrix axes are the last two.
"""
import numpy as np


def half_lower_mask(x):
    """The constant mask of ``Phi``: 1 below the diagonal, 1/2 on it, 0 above
    (shape of ``x``'s last two axes, real).  ``Phi(X) = X * half_lower_mask(X)``
    is the map of the Cholesky derivative."""
    m, n = np.shape(x)[-2:]
    return np.tril(np.ones((m, n))) - 0.5 * np.eye(m, n)


def strict_lower_mask(x):
    """1 strictly below the diagonal, 0 elsewhere (shape of ``x``'s last two axes)."""
    m, n = np.shape(x)[-2:]
    return np.tril(np.ones((m, n)), -1)


def eye_like(x):
    """The identity of ``x``'s last axis (real, ``(n, n)``)."""
    n = np.shape(x)[-1]
    return np.eye(n)


def degenerate_nan(w, x):
    """NaN where ``w_i == w_j`` exactly for ``i != j`` and ``x_ij != 0``, else 0 (shape of
    ``x``): added to ``F * x``, ``F_ij = 1/(w_j - w_i)`` taken as 0 on repeated pairs, it
    keeps the exact results where ``x`` vanishes there (a function of the eigenvalues or
    singular values alone, at a repeated value) and makes the others NaN: the derivative
    of an eigen- or singular vector of a repeated value does not exist.  No derivative."""
    w = np.asarray(w)
    gap = w[..., None, :] - w[..., :, None]
    off = ~np.eye(gap.shape[-1], dtype=bool)
    return np.where((gap == 0) & off & (np.asarray(x) != 0), np.nan, 0.0)


def as_columns(v, b):
    """``v`` with a trailing axis of length 1 when ``b`` is a vector (``solve``'s
    1-D right-hand side), else ``v``: linear in ``v``, ``from_columns`` undoes it."""
    return np.expand_dims(v, -1) if np.ndim(b) == 1 else v


def from_columns(v, b):
    """``v`` without its trailing axis when ``b`` is a vector, else ``v``
    (the transpose of ``as_columns``)."""
    return v[..., 0] if np.ndim(b) == 1 else v


def conj_lower(x, upper):
    """``x`` itself, or its conjugate transpose when ``upper`` (``cholesky(a,
    upper=True)`` gives ``L^H``): R-linear in ``x`` and its own transpose."""
    return np.conj(np.swapaxes(x, -1, -2)) if upper else x


def nonempty_or_zeros(v, like):
    """``v``, or zeros shaped like ``like`` when ``v`` is empty (lstsq's residuals are
    an empty array when they are not computed).  Linear in ``v``; its transpose is
    ``nonempty_or_zeros_t(ct, v)``."""
    return v if np.size(v) else np.zeros(np.shape(like))


def nonempty_or_zeros_t(ct, v):
    """The transpose of ``nonempty_or_zeros`` in ``v``: ``ct``, or an empty array like
    ``v`` when ``v`` is empty."""
    return ct if np.size(v) else np.zeros(np.shape(v))


def cond_ord(p):
    """The matrix-norm order of ``np.linalg.cond(x, p)``: 2 for None."""
    return 2 if p is None else p


def tensorinv_shapes(a, ind):
    """The matrix shapes of ``np.linalg.tensorinv(a, ind)``: ``a`` read as an ``(r, c)``
    matrix (``r`` the product of its first ``ind`` lengths), its inverse as ``(c, r)``."""
    shape = np.shape(a)
    r = int(np.prod(shape[:ind]))
    c = int(np.prod(shape[ind:]))
    return (r, c), (c, r)


def tensorsolve_matrix(a, b, axes):
    """``a`` as the square matrix ``np.linalg.tensorsolve(a, b, axes)`` solves with: the
    ``axes`` moved to the end, then ``b``'s axes merged into rows and the rest into
    columns.  Linear in ``a``; ``tensorsolve_matrix_t(m, a, b, axes)`` undoes it."""
    a = np.asarray(a)
    if axes is not None:
        a = np.moveaxis(a, axes, range(a.ndim - len(axes), a.ndim))
    rows = int(np.prod(np.shape(b)))
    return np.reshape(a, (rows, -1))


def tensorsolve_matrix_t(m, a, b, axes):
    """The inverse (and transpose) of ``tensorsolve_matrix``: ``m`` back in ``a``'s layout."""
    a = np.asarray(a)
    if axes is None:
        return np.reshape(m, a.shape)
    dest = range(a.ndim - len(axes), a.ndim)
    moved_shape = np.moveaxis(np.empty(a.shape, dtype=bool), axes, dest).shape
    return np.moveaxis(np.reshape(m, moved_shape), dest, axes)


def svd_checked(x, a, full_matrices, compute_uv):
    """``x`` itself, after checking that the SVD of ``a`` has a derivative s2s gives:
    singular vectors computed (the frontend reads ``compute_uv=False`` as
    ``np.linalg.svdvals(a)`` where it is a constant and ``hermitian`` is not given), and
    the reduced SVD (the extra singular vectors of a full non-square SVD have no unique
    derivative; JAX refuses this case too).  Linear in ``x`` (the identity)."""
    m, n = np.shape(a)[-2:]
    if not compute_uv:
        raise NotImplementedError(
            "s2s: derivative of numpy.linalg.svd with compute_uv=False given by a variable "
            "or with hermitian=True: differentiate numpy.linalg.svdvals(a) instead")
    if full_matrices and m != n:
        raise NotImplementedError(
            "s2s: derivative of numpy.linalg.svd with full_matrices=True of a non-square "
            f"{m}x{n} matrix: the extra singular vectors have no unique derivative; "
            "pass full_matrices=False")
    return x


def qr_checked(x, a, mode):
    """``x`` itself, after checking that the QR decomposition of ``a`` has a derivative:
    mode 'reduced' (or 'complete' of a square matrix) and ``m >= n`` (the
    factors of a wide matrix are not unique).  Linear in ``x`` (the identity)."""
    m, n = np.shape(a)[-2:]
    if mode not in ("reduced", "complete") or m < n or (mode == "complete" and m != n):
        raise NotImplementedError(
            f"s2s: derivative of numpy.linalg.qr with mode={mode!r} of a {m}x{n} matrix: "
            "only mode='reduced' with m >= n (or a square matrix) is differentiable")
    return x


def _vector_axes(x, axis):
    nd = np.ndim(x)
    axes = range(nd) if axis is None else (axis,) if np.ndim(axis) == 0 else axis
    return tuple(sorted(int(a) % nd for a in axes))


def flat_axes(x, axis):
    """``x`` with the axes ``axis`` (None: all; an int; a tuple) moved to the end and
    merged into one: the vectors of ``np.linalg.vector_norm`` on the last axis.  Linear
    in ``x``; ``unflat_axes(y, x, axis)`` undoes it."""
    x = np.asarray(x)
    axes = _vector_axes(x, axis)
    moved = np.moveaxis(x, axes, range(x.ndim - len(axes), x.ndim))
    return np.reshape(moved, moved.shape[:x.ndim - len(axes)] + (-1,))


def unflat_axes(y, x, axis):
    """The inverse (and transpose) of ``flat_axes``: ``y`` back in ``x``'s layout."""
    x = np.asarray(x)
    axes = _vector_axes(x, axis)
    rest = [ax for ax in range(x.ndim) if ax not in axes]
    moved_shape = tuple(x.shape[ax] for ax in rest) + tuple(x.shape[ax] for ax in axes)
    moved = np.reshape(y, moved_shape)
    return np.moveaxis(moved, range(x.ndim - len(axes), x.ndim), axes)


def fit_to(v, x, axes):
    """``v`` cropped or zero-padded, along ``axes`` (an int, a sequence, None: all), to
    ``x``'s lengths there: what numpy.fft does to its input for ``n``/``s``.  Linear in
    ``v``; its transpose is ``fit_to(ct, v, axes)``."""
    v = np.asarray(v)
    shape = np.shape(x)
    axes = range(v.ndim) if axes is None else (axes,) if np.ndim(axes) == 0 else axes
    for ax in axes:
        have, want = v.shape[ax], shape[ax]
        if have > want:
            v = np.take(v, np.arange(want), axis=ax)
        elif have < want:
            pad = [(0, 0)] * v.ndim
            pad[ax] = (0, want - have)
            v = np.pad(v, pad)
    return v


def fft_axes(a, s, axes):
    """The axes an n-dimensional numpy.fft call transforms (normalised, a tuple):
    ``axes``, else the last ``len(s)`` axes, else all axes of ``a``."""
    nd = np.ndim(a)
    if axes is None:
        axes = range(nd) if s is None else range(nd - len(s), nd)
    return tuple(ax % nd for ax in axes)


def fft_rest_axes(a, s, axes):
    """All but the last of ``fft_axes(a, s, axes)``: the complex axes of rfftn/irfftn."""
    return fft_axes(a, s, axes)[:-1]


def fft_last_axis(a, s, axes):
    """The last of ``fft_axes(a, s, axes)``: the real (half-spectrum) axis of rfftn/irfftn."""
    return fft_axes(a, s, axes)[-1]


def rfftn_sizes(g, a, s, axes):
    """The transform lengths of rfftn's transpose on the cotangent ``g``: ``g``'s own
    lengths on the complex axes, the real signal's length on the last axis."""
    axs = fft_axes(a, s, axes)
    last = np.shape(a)[axs[-1]] if s is None else s[-1]
    return tuple(np.shape(g)[ax] for ax in axs[:-1]) + (last,)


def swapped_norm(norm):
    """The ``norm`` of the opposite direction (numpy's hfft/ihfft are irfft/rfft with it)."""
    return {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}[norm]


def fft_size(a, n, axis):
    """The transform length of a 1-D numpy.fft call: ``n``, else ``a``'s length."""
    return np.shape(a)[axis] if n is None else n


def irfft_weights(g, axis, norm):
    """The weights of irfft's transpose (real, broadcastable along ``axis``): the
    half-spectrum entries that stand for two conjugate entries of the full spectrum
    count twice (all but the first, and the last for an even length ``len(g)``),
    times irfft's normalisation for the output length ``len(g)`` along ``axis``."""
    n = np.shape(g)[axis]
    m = n // 2 + 1
    w = np.full(m, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    if norm in (None, "backward"):
        w = w / n
    elif norm == "ortho":
        w = w / np.sqrt(n)
    elif norm != "forward":
        raise ValueError(f"invalid norm {norm!r} for numpy.fft.irfft")
    shape = [1] * np.ndim(g)
    shape[axis] = m
    return np.reshape(w, shape)


# --- multi_dot: y = A_0 A_1 ... A_{k-1} (a 1-D first factor is a row, a 1-D last a column)
def _as_mats(arrays):
    mats = [np.asarray(a) for a in arrays]
    if mats[0].ndim == 1:
        mats[0] = mats[0][None, :]
    if mats[-1].ndim == 1:
        mats[-1] = mats[-1][:, None]
    return mats


def _chain(mats, n):
    """The product of ``mats`` (the n x n identity for none)."""
    if not mats:
        return np.eye(n)
    out = mats[0]
    for m in mats[1:]:
        out = out @ m
    return out


def _replaced(mats, arrays, items):
    """``mats`` with the factors ``{i: value}`` of ``items`` replaced (values shaped like
    ``arrays[i]``, read as matrices like them)."""
    out = list(mats)
    for i, v in items.items():
        out[i] = np.reshape(v, mats[i].shape)
    return out


def _product(mats, like):
    return np.reshape(_chain(mats, 0), np.shape(like))


def _factor_ct(mats, arrays, g, j):
    """``prefix_j^T G suffix_j^T`` shaped like ``arrays[j]``: the cotangent of factor j."""
    pre = _chain(mats[:j], mats[j].shape[0])
    suf = _chain(mats[j + 1:], mats[j].shape[1])
    gm = np.reshape(g, (mats[0].shape[0], mats[-1].shape[1]))
    ct = np.reshape(pre.T @ gm @ suf.T, np.shape(arrays[j]))
    return np.real(ct) if np.iscomplexobj(ct) and not np.iscomplexobj(arrays[j]) else ct


def multi_dot_jvp(t, arrays):
    """``sum_i A_0 .. t_i .. A_{k-1}`` (``None`` items of ``t`` are zero): linear in ``t``."""
    mats = _as_mats(arrays)
    like = np.linalg.multi_dot(list(arrays))
    out = np.zeros(np.shape(like), dtype=np.result_type(like, *[x for x in t if x is not None]))
    for i, ti in enumerate(t):
        if ti is not None:
            out = out + _product(_replaced(mats, arrays, {i: ti}), like)
    return out


def multi_dot_vjp(g, arrays):
    """The cotangents ``[prefix_i^T g suffix_i^T]`` of the factors (no conjugation):
    linear in ``g``, the transpose of ``multi_dot_jvp``."""
    mats = _as_mats(arrays)
    return [_factor_ct(mats, arrays, g, j) for j in range(len(mats))]


def multi_dot_vjp_dx(g, arrays, t):
    """The derivative of ``multi_dot_vjp(g, arrays)`` along the factors' tangents ``t``:
    item ``j`` is ``sum_{i != j}`` of factor ``j``'s cotangent with ``A_i`` replaced by
    ``t_i``.  (The Hessian of ``<g, multi_dot(arrays)>``: symmetric, so also the VJP.)"""
    mats = _as_mats(arrays)
    out = []
    for j in range(len(mats)):
        acc = np.zeros(np.shape(arrays[j]), dtype=np.result_type(g, *arrays, *[
            x for x in t if x is not None]))
        for i, ti in enumerate(t):
            if i != j and ti is not None:
                acc = acc + _factor_ct(_replaced(mats, arrays, {i: ti}), arrays, g, j)
        out.append(acc)
    return out


def multi_dot_jvp2(t, s, arrays):
    """``sum_{i != j} A_0 .. t_i .. s_j .. A_{k-1}``: the derivative of
    ``multi_dot_jvp(t, arrays)`` along the factors' tangents ``s``."""
    mats = _as_mats(arrays)
    like = np.linalg.multi_dot(list(arrays))
    out = np.zeros(np.shape(like), dtype=np.result_type(like, *[
        x for x in list(t) + list(s) if x is not None]))
    for i, ti in enumerate(t):
        for j, sj in enumerate(s):
            if i != j and ti is not None and sj is not None:
                out = out + _product(_replaced(mats, arrays, {i: ti, j: sj}), like)
    return out
