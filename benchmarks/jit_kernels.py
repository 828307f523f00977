"""The kernels bench_jit.py (and compile_time.py, bench_vmap_value_reads.py) time:
``rk4_energy``, ``heat``, ``logsumexp``, ``gmm``, ``lstm``.  They live in
``tests/jit/loop_kernels.py``, where the tests check them too (one copy); this module
re-exports them for the scripts here."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root

from tests.jit.loop_kernels import gmm, heat, logsumexp, lstm, rk4_energy  # noqa: E402

__all__ = ["gmm", "heat", "logsumexp", "lstm", "rk4_energy"]
