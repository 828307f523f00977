"""PTX of every corpus kernel (primal, grad, jvp) assembled by ptxas for sm_80 and sm_90.

No GPU is needed: ``ptxas`` (from ``nvidia-cuda-nvcc-cu12``, extra ``s2s[ptx]``)
is the NVIDIA assembler the driver's JIT shares its back end with; a PTX text
it accepts for an architecture loads on that architecture.  The tests skip,
saying what to install, where ptxas or libdevice is absent.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import s2s
from s2s.backend.cuda import compile as ptx_compile
from s2s.backend.cuda.ptxas import PtxasError, parse_verbose
from s2s.backend.cuda.toolkit import has_libdevice, has_ptxas
from s2s.cuda import assemble, vectorize

from .kernels import (CORPUS, JVPS, axpy, checked_log, complex_affine, complex_modulus,
                      int_ops, many_math, np_math, trig_mix, with_flag)

needs_ptxas = pytest.mark.skipif(
    not has_ptxas(), reason="ptxas not found: pip install 's2s[ptx]' (nvidia-cuda-nvcc-cu12)")
needs_libdevice = pytest.mark.skipif(
    not has_libdevice(),
    reason="libdevice not found: pip install 's2s[ptx]' (nvidia-cuda-nvcc-cu12)")

_NP = {"f8": np.float64, "f4": np.float32, "i8": np.int64, "b1": np.bool_}


def _cases():
    for fn, dtypes, _, _, argnums in CORPUS:
        types = tuple(_NP[d] for d in dtypes)
        tag = f"{fn.__name__}-{'-'.join(dtypes)}"
        yield pytest.param(fn, types, id=tag)
        if argnums:
            yield pytest.param(s2s.grad(fn, argnums=argnums), types, id="grad-" + tag)
        if fn in JVPS and argnums:
            yield pytest.param(JVPS[fn], types + types, id="jvp-" + tag)


def _ptx(fn, types, arch="sm_80"):
    return vectorize(fn).ptx(*types, arch=arch)


@needs_ptxas
@needs_libdevice
@pytest.mark.parametrize("fn, types", list(_cases()))
def test_kernel_assembles_for_sm80_and_sm90(fn, types):
    ptx = _ptx(fn, types)
    assert ".target sm_80" in ptx and ".visible .entry s2s_" in ptx
    assert "__nvvm_reflect" not in ptx  # libdevice's queries folded by NVVM reflect
    for arch in ("sm_80", "sm_90"):
        out = assemble(ptx, arch)
        assert out.cubin_size > 0
        assert len(out.kernels) == 1, out.log


@needs_ptxas
@pytest.mark.parametrize("fn, types", [(complex_affine, (np.complex128, 2.0 + 1j)),
                                       (complex_modulus, (np.complex128, np.float64)),
                                       (with_flag, (np.float32, np.bool_)),
                                       (int_ops, (np.int64, np.int64)),
                                       (np_math, (np.float32,))],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_complex_bool_int_kernels_assemble(fn, types):
    if fn in (complex_modulus, np_math) and not has_libdevice():
        pytest.skip("libdevice not found: pip install 's2s[ptx]'")
    ptx = _ptx(fn, types)
    assert assemble(ptx, "sm_80").kernels
    if fn is np_math:  # float32 all the way (libdevice's sinf may use doubles inside)
        assert "double" not in vectorize(fn).kernel(*types)[0].text
        assert "mul.rn.f32" in ptx and "st.global.b32" in ptx


@needs_ptxas
@needs_libdevice
@pytest.mark.parametrize("fn", [trig_mix, s2s.grad(trig_mix, argnums=(0, 1)), many_math])
def test_ptx_for_sm90_target(fn):
    ptx = _ptx(fn, (np.float64, np.float64), arch="sm_90")
    assert ".target sm_90" in ptx
    assert assemble(ptx, "sm_90").kernels


@needs_ptxas
@needs_libdevice
@pytest.mark.parametrize("fn", [trig_mix, s2s.grad(trig_mix, argnums=(0, 1)),
                                JVPS[trig_mix]])
def test_sample_kernels_do_not_spill(fn):
    types = (np.float64,) * (4 if fn is JVPS[trig_mix] else 2)
    for arch in ("sm_80", "sm_90"):
        out = assemble(_ptx(fn, types, arch), arch)
        assert out.spills == 0, out.log
        (info,) = out.kernels.values()
        assert 0 < info.registers <= 255


def test_ptx_without_math_needs_no_libdevice(monkeypatch):
    """a*x + y calls no math function: its PTX is made even where libdevice is absent."""
    from s2s.backend.cuda import toolkit
    monkeypatch.setenv("S2S_LIBDEVICE", "/nonexistent/libdevice.10.bc")
    monkeypatch.setattr(toolkit, "_libdevice", lambda: None)
    ptx = vectorize(axpy).ptx(np.float64, np.float64, np.float64)
    assert "mul.rn.f64" in ptx and "add.rn.f64" in ptx and "call" not in ptx


def test_missing_libdevice_names_the_extra(monkeypatch):
    from s2s.backend.cuda import toolkit
    monkeypatch.setattr(toolkit, "_libdevice", lambda: None)
    ptx_compile._CACHE.clear()

    def sine(x):
        return np.sin(x) * 2.0

    with pytest.raises(toolkit.ToolkitMissingError, match=r"s2s\[ptx\].*nvidia-cuda-nvcc-cu12"):
        vectorize(_module_sine).ptx(np.float64)
    ptx_compile._CACHE.clear()
    del sine


def _module_sine(x):
    return np.sin(x) * 3.0


@needs_libdevice
def test_ptx_is_deterministic():
    types = (np.float64, np.float64)
    first = vectorize(s2s.grad(trig_mix, argnums=(0, 1))).ptx(*types)
    ptx_compile._CACHE.clear()
    again = vectorize(s2s.grad(trig_mix, argnums=(0, 1))).ptx(*types)
    assert first == again


@needs_libdevice
def test_kernel_structure():
    """Thread index from the special registers, a bounds check against n, one entry."""
    ptx = _ptx(trig_mix, (np.float64, np.float64))
    for reg in ("%tid.x", "%ntid.x", "%ctaid.x", "%nctaid.x"):
        assert reg in ptx
    assert ptx.count(".entry") == 1
    assert "setp.ge.s64" in ptx or "setp.lt.s64" in ptx
    # math.sin/math.exp raise CPython's errors (sin(inf), an overflow): an error path
    assert re.search(r"atom\.[a-z.]*cas\.b64", ptx)
    assert "atom." not in _ptx(np_math, (np.float64,))  # numpy's ufuncs cannot fail
    failing = _ptx(checked_log, (np.float64,))  # math.log checks its domain
    assert re.search(r"atom\.[a-z.]*cas\.b64", failing)  # the error word


@needs_ptxas
def test_ptxas_rejects_bad_ptx():
    with pytest.raises(PtxasError, match="ptxas -arch=sm_80 rejected"):
        assemble(".version 7.0\n.target sm_80\n.address_size 64\nnot ptx\n", "sm_80")


def test_parse_verbose():
    log = ("ptxas info    : Compiling entry function 'k' for 'sm_80'\n"
           "ptxas info    : Function properties for k\n"
           "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
           "ptxas info    : Used 33 registers, used 0 barriers\n"
           "ptxas info    : Function properties for helper\n"
           "    0 bytes stack frame, 16 bytes spill stores, 16 bytes spill loads\n")
    info = parse_verbose(log)
    assert list(info) == ["k"]
    assert (info["k"].registers, info["k"].spill_stores, info["k"].stack_frame) == (33, 4, 8)


def test_unknown_arch():
    with pytest.raises(ValueError, match="unknown GPU architecture 'sm_1'"):
        vectorize(axpy).ptx(np.float64, np.float64, np.float64, arch="sm_1")
