"""The kernels bench_jit.py (and compile_time.py, bench_vmap_value_reads.py) time:
``rk4_energy``, ``heat``, ``logsumexp``, ``gmm``, ``lstm``.  They live in
``tests/jit/loop_kernels.py``, where the tests check them too (one copy); this module
re-exports them for the scripts here, with ``cases(rng)``: the arguments they are
timed on."""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root

from tests.jit.loop_kernels import gmm, heat, logsumexp, lstm, rk4_energy  # noqa: E402

__all__ = ["cases", "gmm", "heat", "logsumexp", "lstm", "lstm_args", "rk4_energy"]


def lstm_args(rng, nh, nin, steps):
    """Arguments of ``lstm``: ``nh`` hidden units, ``nin`` inputs, ``steps`` steps."""
    return (0.3 * rng.normal(size=(4 * nh, nin)), 0.3 * rng.normal(size=(4 * nh, nh)),
            0.1 * rng.normal(size=4 * nh), rng.normal(size=(steps, nin)),
            0.1 * rng.normal(size=nh), 0.1 * rng.normal(size=nh))


def cases(rng):
    """``{name: (kernel, arguments, argnums of the gradient)}``, the benchmark's sizes."""
    return {
        "rk4": (rk4_energy, (1.5, 0.1, 1.0, 0.0, 0.005, 2000), 0),
        "heat": (heat, (np.sin(np.linspace(0, 3, 128)), 200), 0),
        "logsumexp": (logsumexp, (rng.normal(size=1000),), 0),
        "gmm": (gmm, (rng.normal(size=10), rng.normal(size=(10, 5)),
                      0.1 * rng.normal(size=(10, 5)), rng.normal(size=(500, 5))), 0),
        "lstm": (lstm, lstm_args(rng, 16, 8, 20), 1),
    }
