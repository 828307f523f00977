"""What a call into numpy from compiled code costs (``backend/llvm/ops/host_calls.py``).

``s2s.jit`` runs numpy's library algorithms (FFTs, decompositions), and whatever its
native code refuses, by calling numpy from the kernel.  Each case is timed three ways in
one process: the compiled function, the same Python function (numpy called directly),
and the difference per host call.  Results are checked equal to numpy's first; no
assertion is made on times.

Run:  OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/host_calls.py
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import s2s  # noqa: E402
from timing import best  # noqa: E402


def fft_small(x):
    return np.fft.fft(x)


def fft_large(x):
    return np.fft.fft(x)


def eigvalsh_small(a):
    return np.linalg.eigvalsh(a)


def eigvalsh_loop(a, k):
    s = 0.0
    for i in range(k):
        s += np.linalg.eigvalsh(a + i)[0]
    return s


def spectral_norm(a):
    return np.linalg.norm(a, 2)


def product(x):
    return np.prod(x)


rng = np.random.default_rng(0)
CASES = [  # (name, function, arguments, host calls per call)
    ("np.fft.fft, 8 elements", fft_small, (rng.standard_normal(8),), 1),
    ("np.fft.fft, 65536 elements", fft_large, (rng.standard_normal(65536),), 1),
    ("eigvalsh, 4x4", eigvalsh_small, (np.eye(4) + 0.1,), 1),
    ("100 eigvalsh in a loop, 4x4", eigvalsh_loop, (np.eye(4) + 0.1, 100), 100),
    ("norm(a, 2) (fallback), 4x4", spectral_norm, (rng.standard_normal((4, 4)),), 1),
]


def main():
    print("| case | s2s.jit | Python (numpy directly) | ratio | extra per host call |")
    print("|---|---:|---:|---:|---:|")
    rows = [(name, s2s.jit(f), f, args, calls) for name, f, args, calls in CASES]
    grad = s2s.grad(product)
    rows.append(("grad(np.prod), 8 elements (prod_vjp)", s2s.jit(grad), grad,
                 (rng.standard_normal(8),), 1))
    for name, compiled, plain, args, calls in rows:
        np.testing.assert_allclose(compiled(*args), plain(*args), rtol=1e-12)
        tc, tp = best(lambda: compiled(*args)), best(lambda: plain(*args))
        print(f"| {name} | {tc * 1e6:.1f} us | {tp * 1e6:.1f} us | {tc / tp:.2f} | "
              f"{(tc - tp) / calls * 1e6:.1f} us |")


if __name__ == "__main__":
    main()
