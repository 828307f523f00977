"""The LLVM module text: verified by LLVM, deterministic, and the dump CLI."""
from __future__ import annotations

import numpy as np

from s2s.backend.llvm import engine
from s2s.backend.llvm.compile import param_types
from s2s.backend.llvm.module import build_module
from s2s.api_jit import Jitted

from . import kernels as K


def _module(fn, args, boundscheck=True):
    j = Jitted(fn, boundscheck=boundscheck)
    func, load_free = j.source_ir(args)
    return build_module(func, param_types(func, list(args) + load_free(), j.describe),
                        boundscheck)


KERNELS = [(K.rk4, (1.0, 0.1, 3)), (K.heat, (np.zeros(5), 2)),
           (K.index_reads, (np.zeros((3, 3)), 1, 1)), (K.promote, (1, 2.0, True, np.float32(1), 1j)),
           (K.try_seed, (1.0,)), (K.reductions, (np.zeros(3), np.zeros((3, 3))))]


def test_modules_verify_and_are_deterministic():
    for fn, args in KERNELS:
        a = _module(fn, args).text
        b = _module(fn, args).text
        assert a == b
        engine.parse_verified(a)  # raises if LLVM's verifier rejects it
        opt = engine.optimise(a)
        assert opt == engine.optimise(a)


def test_boundscheck_false_removes_checks():
    x = (np.zeros(4), 2)
    with_checks = engine.optimise(_module(K.read_at, x).text)
    without = engine.optimise(_module(K.read_at, x, boundscheck=False).text)
    assert "fail" in _module(K.read_at, x).text
    assert "fail" not in _module(K.read_at, x, boundscheck=False).text
    assert len(without) < len(with_checks)
