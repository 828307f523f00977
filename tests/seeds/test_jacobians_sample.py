"""samples/jacobians.py (the cookbook's "Composing VJPs, JVPs, and vmap" section) runs.

The sample asserts its own oracles (the looped products, finite differences,
s2s.jacrev/jacfwd); this runs it without the timings and checks what it prints.
"""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_jacobians_sample_runs_and_vmapped_products_agree():
    out = subprocess.run([sys.executable, str(ROOT / "samples" / "jacobians.py"), "--quick"],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "vmapped and looped matrix-Jacobian products agree (and with finite differences)" \
        in lines
    assert "vmapped and looped Jacobian-matrix products agree (and with finite differences)" \
        in lines
    assert "our_jacrev and our_jacfwd (built with vmap) equal s2s.jacrev and s2s.jacfwd" in lines
