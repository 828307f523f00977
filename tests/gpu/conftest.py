"""Shared fixture of the CUDA tests: launches through the host stand-in work where
libdevice is not installed (the PTX is then a stub naming the entry: the stand-in
runs the host build of the kernel, not the PTX)."""
from __future__ import annotations

import pytest

from s2s.backend.cuda import compile as ptx_compile
from s2s.backend.cuda.toolkit import has_libdevice


@pytest.fixture
def ptx_or_stub(monkeypatch):
    if not has_libdevice():
        def stub(text, kernels, arch="sm_80"):
            return "".join(f"// stub (no libdevice)\n.target {arch}\n.visible .entry {k}(\n"
                           for k in kernels)
        monkeypatch.setattr(ptx_compile, "ptx", stub)
