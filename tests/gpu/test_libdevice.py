"""Math calls renamed to libdevice's (``libdevice.rename_math``), toolkit lookup."""
from __future__ import annotations

import numpy as np
import pytest

from s2s.backend.cuda import libdevice, toolkit
from s2s.backend.cuda.toolkit import has_libdevice
from s2s.errors import UnsupportedSyntaxError

TEXT = """declare double @llvm.sin.f64(double) #0
declare double @sin(double)
declare float @llvm.exp.f32(float)
declare double @tanh(double noundef) local_unnamed_addr
declare double @llvm.powi.f64.i32(double, i32)
declare double @llvm.fabs.f64(double)
declare ptr @malloc(i64)

define double @k(double %x, float %y) {
  %a = call double @llvm.sin.f64(double %x)
  %b = call double @sin(double %a)
  %c = call float @llvm.exp.f32(float %y)
  %d = call double @tanh(double %b)
  %e = call double @llvm.powi.f64.i32(double %d, i32 3)
  %f = call double @llvm.fabs.f64(double %e)
  %g = frem double %f, %x
  ret double %g
}
"""


def test_rename_math():
    text, used = libdevice.rename_math(TEXT)
    assert used == ["__nv_expf", "__nv_fmod", "__nv_powi", "__nv_sin", "__nv_tanh"]
    assert text.count("declare double @__nv_sin(double)") == 1  # sin and llvm.sin merged
    assert "call double @__nv_sin(double %x)" in text and "call double @__nv_sin(double %a)" in text
    assert "call float @__nv_expf(float %y)" in text
    assert "call double @__nv_powi(double %d, i32 3)" in text
    assert "@llvm.fabs.f64" in text  # NVPTX lowers fabs itself
    assert "%g = call double @__nv_fmod(double %f, double %x)" in text
    assert "declare double @__nv_fmod(double, double)" in text
    assert "frem" not in text and "@llvm.sin" not in text and "@tanh" not in text


def test_names():
    assert libdevice.libdevice_name("llvm.log10.f32") == "__nv_log10f"
    assert libdevice.libdevice_name("atan2") == "__nv_atan2"
    assert libdevice.libdevice_name("erfcf") == "__nv_erfcf"
    assert libdevice.libdevice_name("llvm.sqrt.f64") is None  # lowered by NVPTX
    assert libdevice.libdevice_name("printf") is None


def test_unknown_external_function():
    with pytest.raises(UnsupportedSyntaxError, match="'qsort' has no GPU implementation"):
        libdevice.rename_math("declare void @qsort(ptr, i64, i64, ptr)\n")


@pytest.mark.skipif(not has_libdevice(), reason="libdevice not found: pip install 's2s[ptx]'")
def test_python_remainder_uses_exact_fmod():
    import s2s
    from .kernels import py_mod
    ptx = s2s.cuda.vectorize(py_mod).ptx(np.float64, np.float64)
    assert "cvt.rzi.f64.f64" not in ptx  # not NVPTX's a - trunc(a / b) * b


def test_toolkit_lookup_order(monkeypatch, tmp_path):
    fake = tmp_path / "libdevice.10.bc"
    fake.write_bytes(b"BC")
    monkeypatch.setenv("S2S_LIBDEVICE", str(fake))
    toolkit.reset_cache()
    try:
        assert toolkit.libdevice_path() == str(fake)
    finally:
        monkeypatch.delenv("S2S_LIBDEVICE")
        toolkit.reset_cache()
