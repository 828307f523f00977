"""llvmlite.binding: verify, optimise, JIT-compile LLVM IR text.

Contract: ``optimise(text) -> str`` parses and verifies the module (an
invalid module raises ``RuntimeError`` quoting LLVM's message) and runs
LLVM's O3 pipeline (new pass manager); ``Compiled(text or module)`` adds the optimised
module to one process-wide MCJIT engine and exposes ``address(name)`` and
``asm()``.  Modules are never removed (the engine keeps their code alive as
long as the process, like Numba's).
"""
from __future__ import annotations

import threading

import llvmlite.binding as llvm

#: every use of llvmlite's engine, target machine and the state below (reentrant:
#: ``_target`` is called with it held); made once: two engines made by racing threads
#: would free each other's modules (the ``_DeadPointer`` of issue 19)
_LOCK = threading.RLock()
_STATE = {}


def _target():
    """The native target machine and the shared execution engine (made once)."""
    with _LOCK:
        return _made_target()


def _made_target():
    if not _STATE:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        target = llvm.Target.from_default_triple()
        tm = target.create_target_machine(cpu=llvm.get_host_cpu_name(),
                                          features=host_features(), opt=3,
                                          reloc="default", codemodel="jitdefault")
        backing = llvm.parse_assembly("")
        engine = llvm.create_mcjit_compiler(backing, tm)
        _STATE.update(tm=tm, engine=engine, triple=llvm.get_process_triple(),
                      layout=str(tm.target_data))
    return _STATE


def host_features() -> str:
    """The host CPU's features (``+avx2,...``): code is compiled for this machine, like
    Numba's; the disk cache's key names the CPU and these features."""
    try:
        return llvm.get_host_cpu_features().flatten()
    except RuntimeError:  # not known on this platform: the CPU name's defaults
        return ""


def triple_and_layout():
    st = _target()
    return st["triple"], st["layout"]


def target_data():
    """The native target's data layout (type sizes for the tape's slots)."""
    with _LOCK:
        st = _target()
        if "td" not in st:
            st["td"] = llvm.create_target_data(st["layout"])
        return st["td"]


def parse_verified(text: str):
    """The parsed module of ``text``, verified by LLVM's verifier."""
    with _LOCK:
        _target()
        mod = llvm.parse_assembly(text)
        mod.verify()
        return mod


def optimise(text: str, level: int = 3) -> str:
    """``text`` verified and optimised with LLVM's default ``O<level>`` pipeline."""
    return str(optimise_module(text, level))


def optimise_module(text: str, level: int = 3):
    """The parsed module of ``text`` after ``optimise``'s pipeline, not printed: handed to
    ``Compiled`` as it is (printing and re-parsing it would only cost time)."""
    mod = parse_verified(text)
    with _LOCK:
        st = _target()
        pto = llvm.create_pipeline_tuning_options(speed_level=level)
        pto.loop_vectorization = True
        pto.slp_vectorization = False  # SLP packs scalar recurrences (RK4) into slower shuffles
        pb = llvm.create_pass_builder(st["tm"], pto)
        pm = pb.getModulePassManager()
        pm.run(mod, pb)
        mod.verify()
        return mod


#: module name -> (cache key, object code found on disk or None), for the object cache
_DISK = {}


def _object_cache():
    """Install the engine's object cache hooks (``disk_cache.py``) once (``_LOCK`` held)."""
    st = _target()
    if "object_cache" not in st:
        from . import disk_cache

        def notify(module, code):
            hit = _DISK.get(module.name)
            if hit is not None and hit[1] is None:
                disk_cache.store(hit[0], bytes(code))

        def getbuffer(module):
            hit = _DISK.get(module.name)
            return hit[1] if hit is not None else None

        st["engine"].set_object_cache(notify, getbuffer)
        st["object_cache"] = True


class Compiled:
    """A module loaded into the process-wide JIT engine.  With ``cache_key`` its
    object code comes from (or goes to) the on-disk cache."""

    def __init__(self, optimised, cache_key=None, cached_code=None):
        """``optimised``: IR text, or a module from ``optimise_module``."""
        mod = optimised if isinstance(optimised, llvm.ModuleRef) else parse_verified(optimised)
        with _LOCK:
            st = _target()
            if cache_key is not None:
                _object_cache()
                _DISK[mod.name] = (cache_key, cached_code)
            try:
                st["engine"].add_module(mod)
                st["engine"].finalize_object()
                st["engine"].run_static_constructors()
            finally:
                _DISK.pop(mod.name, None)
        self.module = mod

    @property
    def text(self) -> str:
        return str(self.module)

    def address(self, name: str) -> int:
        with _LOCK:
            return _STATE["engine"].get_function_address(name)

    def global_address(self, name: str) -> int:
        with _LOCK:
            return _STATE["engine"].get_global_value_address(name)


def asm(optimised_text: str) -> str:
    """The machine code of ``optimised_text`` as assembly text."""
    mod = parse_verified(optimised_text)
    with _LOCK:
        return _target()["tm"].emit_assembly(mod)
