"""jit of numpy's library algorithms by a call back into numpy (``ops/host_calls.py``):
FFTs, decompositions, least squares, partitions.  Results are numpy's exactly (same
values, same dtypes but where a dtype is widened), errors are numpy's at the user's
line, and ``jit(grad)`` of them agrees with central differences of the primal."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import s2s
from s2s.errors import UnsupportedSyntaxError

RNG = np.random.default_rng(7)
A = RNG.standard_normal((4, 4))
S = A + A.T
TALL = RNG.standard_normal((6, 3))
X = RNG.standard_normal(8)


def _same(got, want):
    """Equal values, dtypes and containers (namedtuples by class)."""
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want) or (isinstance(want, list) and isinstance(got, tuple))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    if want.dtype.kind in "iu":
        assert got.dtype == np.int64
    else:
        assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def fft_family(x):
    return (np.fft.fft(x), np.fft.ifft(x, 10), np.fft.rfft(x), np.fft.irfft(x, 6),
            np.fft.hfft(x), np.fft.ihfft(x), np.fft.fftshift(x), np.fft.ifftshift(x))


def fft_nd(a):
    return (np.fft.fft2(a), np.fft.ifftn(a, axes=(0,)), np.fft.rfft2(a, norm="ortho"),
            np.fft.irfftn(a), np.fft.fftfreq(a.shape[0], 0.5), np.fft.rfftfreq(7))


def fft_runtime_length(x, n):
    return np.fft.fft(x, n)


def decompositions(a, s):
    return (np.linalg.eigh(s), np.linalg.eigvalsh(s, UPLO="U"), np.linalg.svd(a),
            np.linalg.svd(a, compute_uv=False), np.linalg.qr(a), np.linalg.qr(a, mode="r"),
            np.linalg.pinv(a), np.linalg.cond(a), np.linalg.matrix_rank(a))


def least_squares(t, y):
    return np.linalg.lstsq(t, y, rcond=None)


def chains(a, s):
    return (np.linalg.multi_dot([a, s, a]), np.linalg.tensorinv(np.reshape(a, (2, 2, 2, 2))),
            np.linalg.tensorsolve(a, a[0]))


def orders(x, k):
    return (np.partition(x, 3), np.argpartition(x, k), np.sort_complex(x),
            np.lexsort((x, -x)), np.frexp(x), np.gradient(x), np.gradient(np.outer(x, x), 2.0))


def indices(x):
    return (np.unravel_index(7, (2, 4)), np.ravel_multi_index((1, 3), (2, 4)),
            np.indices((2, 3)), np.diag_indices(3))


@pytest.mark.parametrize("f, args", [
    (fft_family, (X,)), (fft_nd, (A,)), (fft_runtime_length, (X, 5)),
    (fft_runtime_length, (X, 12)), (decompositions, (A, S)), (least_squares, (TALL, X[:6])),
    (chains, (A, S)), (orders, (X, 2)), (indices, (X,))],
    ids=["fft", "fftn", "fft-n", "fft-n-pad", "decompositions", "lstsq", "chains", "orders",
         "indices"])
def test_jit_gives_numpys_results(f, args):
    _same(s2s.jit(f)(*args), f(*args))


def eig_both(a):
    return np.linalg.eig(a), np.linalg.eigvals(a)


def test_eig_is_complex_always_as_in_jax():
    for a in (A, np.diag([1.0, 2.0, 3.0])):  # complex eigenvalues, then real ones
        (w, v), vals = s2s.jit(eig_both)(a)
        (w0, v0), vals0 = eig_both(a)
        assert w.dtype == v.dtype == vals.dtype == np.complex128
        np.testing.assert_array_equal(w, w0)
        np.testing.assert_array_equal(v, v0)
        np.testing.assert_array_equal(vals, vals0)


def spectra_in_a_loop(a, steps):
    total = 0.0
    for k in range(steps):
        w = np.linalg.eigvalsh(a + k * np.eye(a.shape[0]))
        total += w[-1] - w[0] + np.sum(np.abs(np.fft.rfft(a[k % a.shape[0]])))
    return total


def test_host_calls_inside_compiled_loops():
    assert s2s.jit(spectra_in_a_loop)(S, 5) == pytest.approx(spectra_in_a_loop(S, 5),
                                                              rel=1e-13)


def eigh_of_columns(a, m):
    return np.linalg.eigh(a[:, :m])


def test_numpys_error_is_raised_at_the_users_line():
    f = s2s.jit(eigh_of_columns)
    with pytest.raises(np.linalg.LinAlgError, match="must be square") as info:
        f(A, 3)
    notes = "".join(getattr(info.value, "__notes__", []))
    assert "test_host_calls.py" in notes and "np.linalg.eigh(a[:, :m])" in notes
    _same(f(A, 4), eigh_of_columns(A, 4))  # nothing left broken


def eig_in_try(a):
    try:
        return np.linalg.eigvalsh(a)
    except np.linalg.LinAlgError:
        return np.zeros(1)


def test_refused_inside_try_by_name():
    with pytest.raises(UnsupportedSyntaxError, match="eigvalsh inside a try block"):
        s2s.jit(eig_in_try)(S)


def threaded(x, k):
    return np.sum(np.abs(np.fft.fft(x * k)))


def test_threads_get_their_own_results():
    f = s2s.jit(threaded)
    want = {k: threaded(X, k) for k in range(8)}
    got, errors = {}, []

    def work(k):
        try:
            for _ in range(50):
                got.setdefault(k, set()).add(f(X, k))
        except Exception as e:  # pragma: no cover -- reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k in range(8):
        assert all(v == pytest.approx(want[k], rel=1e-13) for v in got[k])


def power(x):
    return np.sum(np.abs(np.fft.rfft(x)) ** 2 * np.arange(5.0))


def spectrum(s):
    w, v = np.linalg.eigh(s @ s.T)
    return np.sum(w * np.arange(1.0, 5.0)) + np.sum(v[:, -1] ** 4)


def singular(a):
    return np.sum(np.linalg.svd(a, full_matrices=False)[1] ** 3) + np.sum(np.linalg.pinv(a))


def regression(t, y):
    return np.sum(np.linalg.lstsq(t, y, rcond=None)[0] ** 2)


def _central(f, args, k, h=1e-6):
    x = np.array(args[k], dtype=float)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += h
        down[i] -= h
        g[i] = (f(*args[:k], up, *args[k + 1:]) - f(*args[:k], down, *args[k + 1:])) / (2 * h)
    return g


@pytest.mark.parametrize("f, args", [(power, (X,)), (spectrum, (A,)), (singular, (TALL,)),
                                     (regression, (TALL, X[:6]))],
                         ids=["rfft", "eigh", "svd-pinv", "lstsq"])
def test_jit_grad_agrees_with_central_differences(f, args):
    g = s2s.jit(s2s.grad(f))(*args)
    np.testing.assert_allclose(g, _central(f, args, 0), rtol=1e-6, atol=1e-7)


def test_object_code_from_the_disk_cache_finds_its_host_calls(tmp_path, monkeypatch):
    import os
    import subprocess
    import sys
    from pathlib import Path
    monkeypatch.setenv("S2S_CACHE_DIR", str(tmp_path))
    want = s2s.jit(power, cache=True)(X)
    root = Path(__file__).resolve().parents[2]
    script = ("import s2s\nfrom tests.jit.test_host_calls import power, X\n"
              "print(repr(float(s2s.jit(power, cache=True)(X))))\n")
    env = dict(os.environ, S2S_CACHE_DIR=str(tmp_path), PYTHONPATH=str(root))
    out = subprocess.run([sys.executable, "-c", script], cwd=root, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert float(out.stdout) == want == pytest.approx(power(X), rel=1e-14)
    assert len(list(Path(tmp_path).rglob("*.o"))) == 1  # loaded, not compiled again


# -- the fallback: numpy functions the native handlers refuse, or have no handler for ---
def trace_of_stack(a):
    return np.trace(a, axis1=1, axis2=2)


def matrix_norms(a):
    return np.linalg.norm(a, 2) + np.linalg.norm(a, "nuc")


def statistics(x):
    return np.percentile(x, [10.0, 50.0, 90.0]), np.histogram(x, bins=4)[0]


def fit(x):
    return np.polyfit(np.arange(x.shape[0] * 1.0), x, 2)


@pytest.mark.parametrize("f, args", [(trace_of_stack, (np.stack([A, S]),)),
                                     (matrix_norms, (A,)), (statistics, (X,)), (fit, (X,))],
                         ids=["trace-stack", "matrix-norms", "statistics", "polyfit"])
def test_fallback_runs_what_native_code_refuses(f, args):
    _same(s2s.jit(f)(*args), f(*args))


def spectral_norm(a):
    return np.linalg.norm(a @ a.T, 2)


def test_fallback_differentiates_under_jit():
    g = s2s.jit(s2s.grad(spectral_norm))(A)
    np.testing.assert_allclose(g, _central(spectral_norm, (A,), 0), rtol=1e-6, atol=1e-7)


def squeezed(x):
    return np.squeeze(x)


def half(x):
    return np.float16(x)


def test_fallback_leaves_value_dependent_ranks_and_scalar_types_refused():
    with pytest.raises(UnsupportedSyntaxError, match="squeeze"):
        s2s.jit(squeezed)(A[:1])
    with pytest.raises(UnsupportedSyntaxError, match="float16"):
        s2s.jit(half)(1.5)


def nonzero_of(x):
    return np.nonzero(x > 0)[0]


def where_of(x):
    return np.where(x > 0)


def complex_arcsin(x):  # (np.exp of complex numbers is native: values/complex_math.py)
    return np.arcsin(1j * x) * x


def test_one_argument_nonzero_and_where_of_any_length():
    for x in (X, -np.abs(X), np.abs(X)):
        _same(s2s.jit(nonzero_of)(x), nonzero_of(x))
        _same(s2s.jit(where_of)(x), where_of(x))


def test_elementwise_functions_of_arrays_native_code_lacks():
    _same(s2s.jit(complex_arcsin)(X), complex_arcsin(X))
