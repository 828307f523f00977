"""The systematic table, part 3: the rules of ``elementwise`` (nan_to_num, radians,
degrees, unwrap), ``statistics``,
``manipulation`` and ``contractions`` (domains ``N``/``D``/``Z``: with NaNs)."""
from __future__ import annotations

import numpy as np

from tests.unit.systematic_checks import Arg, Case
from tests.unit.systematic_table import AXES, M, S, T, V, binary, reduction, unary
from tests.unit.systematic_table_arrays import c

CASES = []
CASES += binary("np.remainder(x, y)", "s", "p") + binary("np.fmod(x, y)", "s", "p")
CASES += binary("np.copysign(x, y)", "z", "z")
CASES += unary("np.nan_to_num(x)", "N") + unary("np.ldexp(x, 3)")
CASES += [c("np.ldexp(x, np.array([1, -2, 0]))", M)]

# NaN-ignoring reductions and scans
CASES += reduction("np.nansum(x{kw})", "N", cplx=True)
CASES += reduction("np.nanmean(x{kw})", "N", cplx=True)
CASES += reduction("np.nanprod(x{kw})", "Z")
CASES += reduction("np.nanmax(x{kw})", "D") + reduction("np.nanmin(x{kw})", "D")
# (nanstd: no axis-0 variant, whose length-2 slices keep one entry: std 0, no derivative)
CASES += reduction("np.nanvar(x{kw})", "N", cplx=True)
CASES += reduction("np.nanstd(x{kw})", "N", variants=[v for v in AXES if "axis=0" not in v])
CASES += reduction("np.nanvar(x, ddof=1{kw})", "N", variants=["", ", axis=1"])
CASES += reduction("np.nanstd(x, ddof=1{kw})", "N", variants=["", ", axis=1, keepdims=True"])
CASES += reduction("np.nancumsum(x{kw})", "N", variants=["", ", axis=0", ", axis=-1"])
CASES += reduction("np.nancumprod(x{kw})", "Z", variants=["", ", axis=1"])
CASES += reduction("np.ptp(x{kw})", "d", variants=AXES[:3] + AXES[4:])
# order statistics (distinct values: no ties)
CASES += reduction("np.median(x{kw})", "d", variants=["", ", axis=0", ", axis=-1",
                                                      ", axis=1, keepdims=True", ", keepdims=True"])
CASES += [c("np.median(x)", V, dom="d"), c("np.median(x)", (4,), dom="d"),
          c("np.quantile(x, 0.3)", (5,), dom="d"), c("np.quantile(x, [0.1, 0.5, 1.0], axis=1)", T,
                                                       dom="d"),
          c("np.quantile(x, 0.7, axis=0, keepdims=True)", M, dom="d"),
          c("np.quantile(x, 0.4, method='lower')", (6,), dom="d"),
          c("np.quantile(x, 0.4, method='higher')", (6,), dom="d"),
          c("np.quantile(x, 0.45, method='nearest')", (6,), dom="d"),
          c("np.quantile(x, 0.4, method='midpoint')", (6,), dom="d"),
          c("np.percentile(x, [25, 75], axis=-1)", M, dom="d"),
          c("np.percentile(x, 50.0, keepdims=True)", T, dom="d")]
# differences
CASES += [c("np.diff(x)", V), c("np.diff(x, axis=0)", M), c("np.diff(x, n=2, axis=-1)", T),
          c("np.diff(x, prepend=0.5)", V), c("np.diff(x, axis=1, append=np.ones((2, 1)))", M),
          c("np.diff(x, n=2, prepend=np.zeros(2))", (4,)), c("np.ediff1d(x)", M),
          c("np.ediff1d(x, to_begin=[1.0, 2.0], to_end=3.0)", V)]

# rolls, flips, rotations, triangles
CASES += [c("np.roll(x, 1)", M), c("np.roll(x, -2, axis=1)", M),
          c("np.roll(x, (1, 1), axis=(1, 2))", T), c("np.rollaxis(x, 2)", T),
          c("np.rollaxis(x, 0, 2)", T), c("np.rollaxis(x, -1, 1)", T), c("np.fliplr(x)", M),
          c("np.flipud(x)", M), c("np.flipud(x)", V), c("np.rot90(x)", M),
          c("np.rot90(x, 2, axes=(1, 2))", T), c("np.rot90(x, -1)", M),
          c("np.tril(x)", (3, 3), cplx=True), c("np.tril(x, -1)", M), c("np.triu(x, 1)", M),
          c("np.triu(x)", T), c("np.tril(x)", V), c("np.diagflat(x)", V),
          c("np.diagflat(x, -1)", (2, 2))]
if hasattr(np, "matrix_transpose"):
    CASES += [c("np.matrix_transpose(x)", T)]
CASES += [c("np.atleast_1d(x)", S), c("np.atleast_1d(x)", M), c("np.atleast_2d(x)", V),
          c("np.atleast_2d(x)", S), c("np.atleast_3d(x)", V), c("np.atleast_3d(x)", M),
          c("np.asanyarray(x)", M), c("np.ascontiguousarray(x)", S),
          c("np.asfortranarray(x)", M)]
# joins and splits
CASES += [c("np.dstack([x, y])", M, M), c("np.dstack((x, y))", V, V),
          c("np.dstack([x, y])", (2, 3, 2), M), c("np.column_stack([x, y])", V, V),
          c("np.column_stack([x, y])", M, (2,)),
          c("np.array_split(x, 3)", (7,), second=False),
          c("np.array_split(x, [1, 3], axis=1)", (2, 5), second=False),
          c("np.hsplit(x, 3)", M, second=False), c("np.hsplit(x, [2])", V, second=False),
          c("np.vsplit(x, 2)", M, second=False), c("np.dsplit(x, [1])", (2, 2, 3), second=False),
          c("np.array_split(x, 2)[1] * 2.0", (5,))]
if hasattr(np, "unstack"):
    CASES += [c("np.unstack(x)", M, second=False), c("np.unstack(x, axis=1)", T, second=False)]
# gathers
CASES += [c("np.take_along_axis(x, np.array([[0, 2, 2], [1, 1, 0]]), axis=1)", M),
          c("np.take_along_axis(x, np.array([[1], [0]]), -1)", M),
          c("np.take_along_axis(x, np.array([3, 0, 3]), None)", M),
          c("np.take_along_axis(x, np.argsort(x, axis=0), axis=0)", M),
          c("np.delete(x, 1)", V), c("np.delete(x, [0, 2], axis=1)", M),
          c("np.delete(x, slice(0, 4, 2))", M), c("np.extract(x > 0, x)", M),
          c("np.bincount(np.array([0, 2, 2, 1, 0]), x)", (5,)),
          c("np.bincount(np.array([3, 0, 3]), weights=x, minlength=6)", (3,)),
          c("np.compress([True, False, True], x, axis=1)", M),
          c("np.compress([False, True], x)", V),
          c("np.select([x > 0.5, x < -0.5], [x, y * x], 0.0)", M, M),
          c("np.select([x > 0, x < 0.3], [y, x * x], x + y)", M, V)]
# pad and append
CASES += [c("np.pad(x, 2)", V), c("np.pad(x, ((1, 0), (2, 1)))", M),
          c("np.pad(x, 1, constant_values=3.0)", M), c("np.pad(x, 2, mode='edge')", V),
          c("np.pad(x, ((1, 2), (2, 2)), mode='reflect')", M),
          c("np.pad(x, (1, 2), mode='symmetric')", V), c("np.pad(x, 3, 'wrap')", M),
          c("np.append(x, y)", M, V), c("np.append(x, y, axis=0)", M, (1, 3)),
          c("np.append(x, 2.0)", V)]
if hasattr(np, "trapezoid"):
    CASES += [c("np.trapezoid(x)", V), c("np.trapezoid(x, dx=0.5, axis=0)", M),
              c("np.trapezoid(x, np.array([0.0, 0.5, 2.0]))", M)]
# products
CASES += [c("np.einsum('ij,jk->ik', x, y)", M, (3, 4), cplx=True),
          c("np.einsum('ij,jk', x, y)", M, (3, 4)), c("np.einsum('ij->', x)", M),
          c("np.einsum('ii->i', x)", (3, 3), cplx=True), c("np.einsum('ii', x)", (3, 3)),
          c("np.einsum('i,i', x, y)", V, V), c("np.einsum('i,j->ij', x, y)", V, (2,)),
          c("np.einsum('ij->ji', x)", M), c("np.einsum('ij', x)", M),
          c("np.einsum('...ij,...jk->...ik', x, y)", (2, 2, 3), (2, 3, 2), cplx=True),
          c("np.einsum('...ij,jk', x, y)", (2, 2, 3), (3, 2)),
          c("np.einsum('ij...,j...->i...', x, y)", T, (3, 4)),
          c("np.einsum('...i,...i->...', x, y)", (2, 3), V),
          c("np.einsum('ij,ij,ij->i', x, y, z)", M, M, M),
          c("np.einsum('bi,ij,jk,bk->b', x, y, z, w)", M, (3, 3), (3, 2), (2, 2)),
          c("np.einsum('i,j,k,l,m->ijklm', x, y, z, w, v)", (2,), (2,), (1,), (2,), (3,)),
          c("np.einsum('ij,kj->ikj', x, y)", (2, 3), (1, 3)),
          c("np.einsum('iij->ij', x)", (2, 2, 3)), c("np.einsum('ii->ii'[:4], x)", (2, 2)),
          c("np.kron(x, y)", M, (2, 2), cplx=True), c("np.kron(x, y)", V, (2,)),
          c("np.kron(x, y)", V, M), c("np.kron(x, y)", S, M),
          c("np.cross(x, y)", V, V, cplx=True), c("np.cross(x, y)", (2, 3), V),
          c("np.cross(x, y, axisa=0, axisb=0, axisc=0)", (3, 2), (3, 2)),
          c("np.cross(x, y, axis=0)", (3, 4), (3, 4)),
          c("np.polyval(x, y)", (4,), M), c("np.polyval(x, y)", V, S),
          c("np.polyval([1.0, -2.0, 0.5], y)", V, V),
          c("np.polyfit(np.arange(5.0), x, 2)", (5,)),
          c("np.polyfit(x, y, 1)", (4,), (4,)),
          c("np.polyfit(np.arange(4.0), x, 1, w=y)", (4, 2), (4,))]
if hasattr(np, "vecdot"):
    CASES += [c("np.vecdot(x, y)", M, V, cplx=True), c("np.vecdot(x, y, axis=0)", M, M)]
if hasattr(np, "matvec"):
    CASES += [c("np.matvec(x, y)", M, V, cplx=True), c("np.matvec(x, y)", (2, 2, 3), (2, 3)),
              c("np.vecmat(x, y)", (2,), M, cplx=True),
              c("np.vecmat(x, y)", (2, 3), (2, 3, 2))]
CASES += [c("np.convolve(x, y)", (5,), V, cplx=True), c("np.convolve(x, y, 'same')", (5,), V),
          c("np.convolve(x, y, mode='valid')", (5,), V), c("np.convolve(x, y, 'same')", (2,), (4,)),
          c("np.convolve(x, y, 'valid')", (3,), (5,)), c("np.convolve(x, y, 'same')", (4,), (4,)),
          c("np.correlate(x, y)", (5,), V, cplx=True), c("np.correlate(x, y, 'full')", (2,), (4,)),
          c("np.correlate(x, y, 'same')", (5,), (2,)), c("np.correlate(x, y, 'same')", (2,), (4,)),
          c("np.correlate(x, y, 'same')", (3,), (4,), cplx=True),
          c("np.correlate(x, y, 'valid')", (3,), (5,)), c("np.correlate(x, y, 'full')", (4,), (4,),
                                                          cplx=True),
          c("np.partition(x, 2)", (5,), dom="d"),
          c("np.partition(x, (0, 2), axis=0)", (4, 3), dom="d"),
          c("np.partition(x, 3, axis=None)", M, dom="d"), c("np.resize(x, (3, 3))", M),
          c("np.resize(x, 7)", V), c("np.logspace(x, y, 5)", S, S),
          c("np.logspace(x, y, 4, endpoint=False, base=2.0)", V, V),
          Case("np.sinc(x)", (Arg(V, "t"),))]
if hasattr(np, "cumulative_sum"):
    CASES += [c("np.cumulative_sum(x)", V, cplx=True), c("np.cumulative_sum(x, axis=1)", M),
              c("np.cumulative_sum(x, axis=0, include_initial=True)", M),
              c("np.cumulative_prod(x)", (4,), dom="0"),
              c("np.cumulative_prod(x, axis=-1, include_initial=True)", M, dom="z"),
              c("np.cumulative_prod(x, include_initial=True)", V, dom="z")]
CASES += unary("np.radians(x)") + unary("np.degrees(x)")
CASES += [c("np.unwrap(x * 4.0)", (6,)), c("np.unwrap(x, axis=0)", (4, 2)),
          c("np.astype(x, np.float64)", M), c("np.astype(x, np.complex128)", M, cplx=True),
          c("np.sort_complex(x)", (5,), dom="d"), c("np.sort_complex(x + 0.5j * x)", (5,), dom="d"),
          c("np.geomspace(x, y, 5)", S, S, dom="p"),
          c("np.geomspace(x, y, 4, endpoint=False, axis=-1)", V, V, dom="p"),
          c("np.vander(x)", V), c("np.vander(x, 4, increasing=True)", V),
          c("np.vander(x * 0.0 + np.array([0.0, 1.0, -1.0]))", V),
          Case("np.interp(x, np.array([-1.0, 0.0, 0.5, 2.0]), y)", (Arg(M, "s"), Arg((4,)))),
          Case("np.interp(x, np.array([-1.0, 0.0, 0.5, 2.0]), y, left=3.0)", (Arg((7,), "s"),
                                                                               Arg((4,)))),
          Case("np.interp(x, np.array([-1.0, 0.0, 0.5, 2.0]), y, 1.0, -2.0)", (Arg((7,), "s"),
                                                                                Arg((4,)))),
          Case("np.interp(x, np.array([0.0, 1.0]), y)", (Arg(S, "u"), Arg((2,))), cplx=False)]
if hasattr(np, "row_stack") and np.row_stack is not np.vstack:
    CASES += [c("np.row_stack([x, y])", V, V)]
CASES += [c("np.nanmedian(x)", T, dom="D"), c("np.nanmedian(x, axis=-1)", T, dom="D"),
          c("np.nanmedian(x, axis=1, keepdims=True)", T, dom="D"),
          c("np.nanquantile(x, [0.2, 0.9], axis=0)", (5, 3), dom="D"),
          c("np.nanquantile(x, 0.4, method='midpoint')", (7,), dom="D"),
          c("np.nanpercentile(x, 30.0, axis=1)", (3, 6), dom="D"),
          c("np.median(x, axis=1)", (3, 6), dom="d")]
CASES += [c("np.polyadd(x, y)", V, (5,)), c("np.polyadd(x, y)", (4,), (2,)),
          c("np.polysub(x, y)", V, (5,)), c("np.polysub(x, y)", (4,), V, cplx=True),
          c("np.polymul(x, y)", V, (2,), cplx=True), c("np.polyder(x)", (4,)),
          c("np.polyder(x, 2)", (5,)), c("np.polyder(x, 3)", (2,)), c("np.polyint(x)", V),
          c("np.polyint(x, 2, k=[1.0, 2.0])", V, cplx=True)]
CASES += [c("np.cov(x)", (3, 5), cplx=True), c("np.cov(x, rowvar=False)", (5, 2)),
          c("np.cov(x)", (6,)), c("np.cov(x, bias=True)", (2, 4)), c("np.cov(x, ddof=0)", (1, 4)),
          c("np.cov(x, ddof=2)", (2, 5), cplx=True)]
CASES += [c("np.corrcoef(x)", (3, 5), cplx=True), c("np.corrcoef(x, rowvar=False)", (6, 2)),
          c("np.corrcoef(x)", (5,)), c("np.corrcoef(x)", (2, 4))]
CASES += [c("np.gradient(x)", (5,)), c("np.gradient(x, 0.5, edge_order=2)", (5,)),
          c("np.gradient(x, np.array([0.0, 0.5, 2.0, 2.5, 4.0]))", (5,)),
          c("np.gradient(x)", (3, 4), second=False), c("np.gradient(x, axis=1)", (3, 4)),
          c("np.gradient(x, 2.0, axis=(0, 2), edge_order=2)", (3, 3, 4), second=False),
          c("np.gradient(x)[1] * np.gradient(x)[0]", (3, 4))]
CASES += [c("np.insert(x, 1, y)", V, S), c("np.insert(x, [0, 2], y)", V, (2,)),
          c("np.insert(x, 1, y, axis=1)", M, (2,)), c("np.insert(x, [1, 1], y, axis=0)", M, S),
          c("np.insert(x, slice(0, 3), y)", M, S), c("np.insert(x, 2, y, axis=0)", M, (1, 3))]

# rules that other work adds (complex conventions): a row as soon as the rule exists
from s2s.rules import lookup as _lookup  # noqa: E402

if _lookup(np.angle) is not None and not _lookup(np.angle).nondiff:
    CASES += [c("np.angle(x)", M, dom="z", cplx=True), c("np.angle(x, deg=True)", V, dom="z")]
CASES += [c("np.meshgrid(x, y)", V, (2,), second=False),
          c("np.meshgrid(x, y, indexing='ij')", V, (2,), second=False),
          c("np.meshgrid(x, y, z, sparse=True)", V, (2,), (4,), second=False),
          c("np.sum(np.meshgrid(x, y)[0] * np.meshgrid(x, y)[1] ** 2)", V, (2,)),
          c("np.meshgrid(x)[0] * 2.0", V)]
CASES += [c("np.broadcast_arrays(x, y)", V, (2, 1), second=False),
          c("np.broadcast_arrays(x, y, z)", S, (1, 3), (2, 1), second=False, cplx=True),
          c("np.sum(np.broadcast_arrays(x, y)[0] * np.broadcast_arrays(x, y)[1])", V, M)]
