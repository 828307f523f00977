"""jit(f, cache=True): object code written to disk atomically, reused (also by a new
process), ignored and rebuilt when corrupted."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

import s2s
from s2s.backend.llvm.driver import compile as jit_compile
from s2s.backend.llvm.driver import disk_cache

from . import kernels as K

ROOT = Path(__file__).resolve().parents[2]


def _objects(cache_dir):
    return sorted(Path(cache_dir).rglob("*.o"))


def _fresh_run(u):
    jit_compile._COMPILED.clear()  # forget the in-memory copies: only the disk remains
    return s2s.jit(K.heat, cache=True)(u, 3)


def test_disk_cache_reused_and_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("S2S_CACHE_DIR", str(tmp_path))
    u = np.linspace(0.0, 1.0, 8)
    np.testing.assert_allclose(_fresh_run(u), K.heat(u, 3))
    files = _objects(tmp_path)
    assert len(files) == 1 and files[0].stat().st_size > 100
    written = []
    real_store = disk_cache.store
    monkeypatch.setattr(disk_cache, "store", lambda k, c: written.append(k) or real_store(k, c))
    np.testing.assert_allclose(_fresh_run(u), K.heat(u, 3))
    assert written == []  # loaded from disk, not compiled again
    files[0].write_bytes(files[0].read_bytes()[:60])  # truncated: ignored and rebuilt
    np.testing.assert_allclose(_fresh_run(u), K.heat(u, 3))
    assert len(written) == 1 and files[0].stat().st_size > 100
    assert not list(Path(tmp_path).rglob("*.tmp"))


def test_disk_cache_across_processes(tmp_path, monkeypatch):
    monkeypatch.setenv("S2S_CACHE_DIR", str(tmp_path))
    jit_compile._COMPILED.clear()
    assert s2s.jit(K.rk4, cache=True)(1.0, 0.1, 7) == K.rk4(1.0, 0.1, 7)
    (obj,) = _objects(tmp_path)
    stamp = obj.stat().st_mtime_ns
    script = ("import s2s\nfrom tests.jit import kernels as K\n"
              "assert s2s.jit(K.rk4, cache=True)(1.0, 0.1, 7) == K.rk4(1.0, 0.1, 7)\n")
    env = dict(os.environ, S2S_CACHE_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert _objects(tmp_path) == [obj] and obj.stat().st_mtime_ns == stamp  # reused


def test_key_depends_on_module_text():
    assert disk_cache.key("a") != disk_cache.key("b")
    assert disk_cache.key("a") == disk_cache.key("a")
