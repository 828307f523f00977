"""The NVPTX target: target machines, optimisation, PTX emission.

Contract: ``TRIPLE`` is ``nvptx64-nvidia-cuda``; ``check_arch(arch)`` accepts
``sm_XY`` names (``sm_80`` the default, ``sm_90``, ``sm_90a``...) and raises
``ValueError`` otherwise; ``data_layout(arch)`` is the target's layout;
``optimise(module_ref, arch)`` runs LLVM's ``O3`` pipeline with the NVPTX
target's own passes (its pass-builder callbacks include NVVM reflect, which
folds libdevice's ``__nvvm_reflect`` queries using the module flag
``nvvm-reflect-ftz`` and the target's ``sm`` version); ``emit_ptx`` prints
the module as PTX text.  One target machine per architecture, made once.
"""
from __future__ import annotations

import re
import threading

import llvmlite.binding as llvm

TRIPLE = "nvptx64-nvidia-cuda"
DEFAULT_ARCH = "sm_80"
_ARCH_RE = re.compile(r"^sm_(\d{2,3})([af]?)$")
#: the compute capabilities of NVIDIA GPUs (Maxwell on) that LLVM's NVPTX target knows;
#: ``a`` (architecture-specific) variants from sm_90, ``f`` (family) variants from sm_100
KNOWN_ARCHS = (50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90, 100, 101, 103, 120, 121)
_LOCK = threading.Lock()
_MACHINES = {}


def check_arch(arch: str) -> str:
    """``arch`` if it names a GPU architecture LLVM's NVPTX target knows (``KNOWN_ARCHS``),
    else ``ValueError`` listing them (LLVM itself would only warn and emit generic code)."""
    m = _ARCH_RE.match(arch if isinstance(arch, str) else "")
    number = int(m.group(1)) if m else 0
    suffix = m.group(2) if m else ""
    if number not in KNOWN_ARCHS or suffix == "a" and number < 90 or suffix == "f" and number < 100:
        known = ", ".join(f"sm_{n}" for n in KNOWN_ARCHS)
        raise ValueError(f"cuda: unknown GPU architecture {arch!r}: expected one of {known} "
                         "(sm_80: A100, sm_90: H100/H200; sm_90a, sm_100a...: "
                         "architecture-specific)")
    return arch


def target_machine(arch: str = DEFAULT_ARCH):
    check_arch(arch)
    with _LOCK:
        tm = _MACHINES.get(arch)
        if tm is None:
            llvm.initialize_all_targets()
            llvm.initialize_all_asmprinters()
            target = llvm.Target.from_triple(TRIPLE)
            tm = _MACHINES[arch] = target.create_target_machine(cpu=arch, opt=3)
        return tm


def data_layout(arch: str = DEFAULT_ARCH) -> str:
    return str(target_machine(arch).target_data)


def parse(text: str):
    """The verified module of LLVM IR ``text`` (an invalid module: ``RuntimeError``)."""
    with _LOCK:
        mod = llvm.parse_assembly(text)
    mod.verify()
    return mod


def optimise(mod, arch: str = DEFAULT_ARCH, level: int = 3):
    """Run LLVM's ``O<level>`` pipeline for ``arch`` on ``mod`` (in place)."""
    tm = target_machine(arch)
    with _LOCK:
        pto = llvm.create_pipeline_tuning_options(speed_level=level)
        pb = llvm.create_pass_builder(tm, pto)
        pb.getModulePassManager().run(mod, pb)
    mod.verify()
    return mod


_CALLSEQ = re.compile(r"// callseq (\d+)")


def drop_unused(mod, arch: str = DEFAULT_ARCH):
    """Delete the internal functions and globals nothing uses (in place): run before
    ``optimise`` on a module with libdevice linked in, so that the optimiser does not
    work on its hundreds of unused functions."""
    tm = target_machine(arch)
    with _LOCK:
        pto = llvm.create_pipeline_tuning_options(speed_level=0)
        pb = llvm.create_pass_builder(tm, pto)
        pm = llvm.create_new_module_pass_manager()
        pm.add_global_dead_code_eliminate_pass()
        pm.run(mod, pb)
    return mod


def emit_ptx(mod, arch: str = DEFAULT_ARCH) -> str:
    """The PTX of ``mod``.  The printer numbers call sequences with a counter kept by
    the target machine across modules; they are renumbered from 0 so that the text
    depends on the module only."""
    tm = target_machine(arch)
    with _LOCK:
        text = tm.emit_assembly(mod)
    numbers = {}
    return _CALLSEQ.sub(lambda m: f"// callseq {numbers.setdefault(m.group(1), len(numbers))}",
                        text)
