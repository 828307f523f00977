"""Checking PTX without a GPU: assembling it with ``ptxas``.

Contract: ``assemble(ptx, arch="sm_80")`` runs ``ptxas -v -arch=<arch>`` on
the text (in a temporary folder) and returns an ``Assembled`` with the
cubin's size and, per kernel, the registers used and the bytes of spill
stores/loads and stack frame that ``-v`` reports.  A PTX text ``ptxas``
rejects raises ``PtxasError`` quoting its messages; no ``ptxas`` raises
``ToolkitMissingError`` (``toolkit.py``).
"""
from __future__ import annotations

import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field

from .target import DEFAULT_ARCH, check_arch
from .toolkit import ptxas_path


class PtxasError(RuntimeError):
    """ptxas rejected a PTX text."""


@dataclass
class KernelInfo:
    registers: int = 0
    spill_stores: int = 0
    spill_loads: int = 0
    stack_frame: int = 0


@dataclass
class Assembled:
    arch: str
    cubin_size: int
    log: str
    kernels: dict = field(default_factory=dict)  # entry name -> KernelInfo

    @property
    def spills(self) -> int:
        return sum(k.spill_stores + k.spill_loads for k in self.kernels.values())


_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_REGS = re.compile(r"Used (\d+) registers")


def parse_verbose(log: str) -> dict:
    """Per entry function, what ``ptxas -v`` says about it."""
    kernels, current = {}, None
    for line in log.splitlines():
        m = _ENTRY.search(line)
        if m:
            current = kernels.setdefault(m.group(1), KernelInfo())
            continue
        if "Function properties for" in line:
            name = line.rsplit("for", 1)[1].strip()
            current = kernels.get(name)  # None for device functions: not an entry
            continue
        if current is None:
            continue
        m = _FRAME.search(line)
        if m:
            current.stack_frame, current.spill_stores, current.spill_loads = map(int, m.groups())
        m = _REGS.search(line)
        if m:
            current.registers = int(m.group(1))
    return kernels


def assemble(ptx: str, arch: str = DEFAULT_ARCH, timeout: float = 120) -> Assembled:
    check_arch(arch)
    exe = ptxas_path()
    with tempfile.TemporaryDirectory(prefix="s2s-ptxas-") as tmp:
        src, out = os.path.join(tmp, "kernel.ptx"), os.path.join(tmp, "kernel.cubin")
        with open(src, "w", encoding="utf-8") as f:
            f.write(ptx)
        proc = subprocess.run([exe, "-v", f"-arch={arch}", src, "-o", out],
                              capture_output=True, text=True, timeout=timeout)
        log = proc.stdout + proc.stderr
        if proc.returncode != 0:
            raise PtxasError(f"ptxas -arch={arch} rejected the PTX:\n{log.strip()}")
        size = os.path.getsize(out)
    return Assembled(arch, size, log, parse_verbose(log))
