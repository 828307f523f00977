"""The on-disk cache of compiled kernels (``jit(f, cache=True)``).

Contract: ``key(text)`` hashes the unoptimised module text (a pure function
of the function's IR and its argument types, so of its source) with the
versions of s2s, llvmlite and the target triple, CPU and CPU features; ``lookup(key)`` returns
the cached object code or None; ``store(key, code)`` writes it atomically
(a temporary file renamed into place).  A file is
``MAGIC + sha256(code) + code``: one whose checksum does not match (truncated,
corrupted, another format) is ignored, deleted and rebuilt, never loaded.
The folder is ``$S2S_CACHE_DIR`` or ``~/.cache/s2s/jit``.
"""
from __future__ import annotations

import hashlib
import os
import tempfile

MAGIC = b"s2s-jit-object-v1\n"


def folder() -> str:
    return os.environ.get("S2S_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "s2s", "jit")


def key(text: str) -> str:
    import llvmlite
    import llvmlite.binding as llvm

    from ....version import __version__
    h = hashlib.sha256()
    from .engine import host_features
    for part in (__version__, llvmlite.__version__, llvm.get_process_triple(),
                 llvm.get_host_cpu_name(), host_features(), text):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _path(k: str) -> str:
    return os.path.join(folder(), k[:2], k + ".o")


def lookup(k: str):
    path = _path(k)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    head = len(MAGIC)
    code = data[head + 32:]
    if data[:head] != MAGIC or hashlib.sha256(code).digest() != data[head:head + 32]:
        try:
            os.remove(path)  # corrupted: rebuilt and written again
        except OSError:
            pass
        return None
    return code


def store(k: str, code: bytes) -> None:
    path = _path(k)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC + hashlib.sha256(code).digest() + code)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only or full disk: the kernel still runs, uncached
