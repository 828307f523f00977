"""Where the CUDA toolkit files s2s needs are: ``libdevice.10.bc`` and ``ptxas``.

Contract: ``libdevice_path()`` and ``ptxas_path()`` return a file path or raise
``ToolkitMissingError`` naming what to install.  They look, in order, at

1. ``$S2S_LIBDEVICE`` / ``$S2S_PTXAS`` (an explicit file);
2. the PyPI package ``nvidia-cuda-nvcc-cu12`` (``pip install 's2s[ptx]'``),
   which installs ``nvidia/cuda_nvcc/nvvm/libdevice/libdevice.10.bc`` and
   ``nvidia/cuda_nvcc/bin/ptxas`` into site-packages;
3. ``$CUDA_HOME`` / ``$CUDA_PATH`` and ``/usr/local/cuda`` (a system toolkit),
   and ``ptxas`` on ``$PATH``.

Nothing is imported or run to find them, so this works on machines without
a GPU.
"""
from __future__ import annotations

import functools
import os
import shutil
import sys

from ...errors import S2SError

INSTALL_HINT = ("install the extra s2s[ptx] (pip install 'nvidia-cuda-nvcc-cu12'), "
                "or set CUDA_HOME to a CUDA toolkit")


class ToolkitMissingError(S2SError):
    """A file of the CUDA toolkit (libdevice, ptxas) is not installed."""


def _site_roots():
    """Folders where the ``nvidia`` namespace package may live."""
    roots = []
    try:
        import nvidia  # namespace package of NVIDIA's wheels
        roots += [os.path.join(p, "cuda_nvcc") for p in getattr(nvidia, "__path__", [])]
    except ImportError:
        pass
    for p in sys.path:
        candidate = os.path.join(p, "nvidia", "cuda_nvcc")
        if candidate not in roots:
            roots.append(candidate)
    return roots


def _toolkit_roots():
    roots = [os.environ.get(v) for v in ("CUDA_HOME", "CUDA_PATH")]
    return [r for r in roots if r] + ["/usr/local/cuda"]


def _first_file(candidates):
    for c in candidates:
        if c and os.path.isfile(c):
            return c
    return None


@functools.lru_cache(maxsize=None)
def _libdevice():
    return _first_file(
        [os.environ.get("S2S_LIBDEVICE")]
        + [os.path.join(r, "nvvm", "libdevice", "libdevice.10.bc")
           for r in _site_roots() + _toolkit_roots()])


@functools.lru_cache(maxsize=None)
def _ptxas():
    found = _first_file(
        [os.environ.get("S2S_PTXAS")]
        + [os.path.join(r, "bin", "ptxas") for r in _site_roots() + _toolkit_roots()])
    if found and os.access(found, os.X_OK):
        return found
    return shutil.which("ptxas")


def libdevice_path() -> str:
    """The path of ``libdevice.10.bc`` (math functions for the GPU)."""
    path = _libdevice()
    if path is None:
        raise ToolkitMissingError(
            "cuda: libdevice (libdevice.10.bc, the GPU's math library) was not found; "
            + INSTALL_HINT)
    return path


def ptxas_path() -> str:
    """The path of the ``ptxas`` assembler (checks generated PTX without a GPU)."""
    path = _ptxas()
    if path is None:
        raise ToolkitMissingError("cuda: ptxas (the PTX assembler) was not found; "
                                  + INSTALL_HINT)
    return path


def has_libdevice() -> bool:
    return _libdevice() is not None


def has_ptxas() -> bool:
    return _ptxas() is not None


def reset_cache():
    """Forget what was found (tests that change the environment)."""
    _libdevice.cache_clear()
    _ptxas.cache_clear()
