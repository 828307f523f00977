"""samples/hvp.py (the cookbook's HVP and Jacobian sections) runs and agrees.

The sample asserts its own oracles (the closed-form HVP, finite differences
for the Jacobians); this runs it without the timings and checks what it prints.
"""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_hvp_sample_runs_and_all_hvps_agree():
    out = subprocess.run([sys.executable, str(ROOT / "samples" / "hvp.py"), "--quick"],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "True"  # np.allclose(ans1, ans2, 1e-4, 1e-4), as printed in the seed
    assert "all four HVPs agree with each other and with the closed form" in lines
    assert "jacfwd and jacrev agree with each other and with finite differences" in lines
