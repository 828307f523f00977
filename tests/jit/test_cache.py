"""jit(f, cache=True): object code written to disk atomically, reused by a new process,
ignored and rebuilt when corrupted."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = """
import numpy as np, s2s
from tests.jit import kernels as K
j = s2s.jit(K.heat, cache=True)
u = np.linspace(0.0, 1.0, 8)
assert np.allclose(j(u, 3), K.heat(u, 3))
print("ok")
"""


def _run(cache_dir):
    env = dict(os.environ, S2S_CACHE_DIR=str(cache_dir), PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def _objects(cache_dir):
    return sorted(Path(cache_dir).rglob("*.o"))


def test_disk_cache_reused_and_rebuilt(tmp_path):
    _run(tmp_path)
    files = _objects(tmp_path)
    assert len(files) == 1 and files[0].stat().st_size > 100
    stamp = files[0].stat().st_mtime_ns
    _run(tmp_path)  # a second process loads it: the file is not rewritten
    assert files[0].stat().st_mtime_ns == stamp
    files[0].write_bytes(files[0].read_bytes()[:60])  # truncated: ignored and rebuilt
    _run(tmp_path)
    assert _objects(tmp_path) == files and files[0].stat().st_size > 100
    assert not list(Path(tmp_path).rglob("*.tmp"))


def test_key_depends_on_module_text():
    from s2s.backend.llvm import disk_cache
    assert disk_cache.key("a") != disk_cache.key("b")
    assert disk_cache.key("a") == disk_cache.key("a")
