"""Rules of ``s2s_runtime.apply_linear`` (``runtime/linear_ops.py``): one helper for the
linear maps of the structural numpy functions and their transposes.

``apply_linear(op, x, like, spec)`` is linear in ``x``; ``op``, ``like`` and
``spec`` give names, shapes, indices and axes only (zero derivative: the sort
permutation of a quantile is piecewise constant).  So

* JVP in ``x``: ``apply_linear(op, tan, like, spec)``;
* VJP in ``x``: ``apply_linear(transpose_of(op), ct, x, spec)`` (the transpose
  op, shaped like ``x``; no conjugation).

Both are ``apply_linear`` again, so derivatives of every order exist.
"""
from s2s_runtime import (apply_linear, clip_selected, conv_pad, cov_layout, delete_kept,
                         first_true, initial_or_one, insert_sources, interp_layout,
                         matching_permutation, poly_factors, poly_slots, resize_source,
                         rollaxis_destination, scan_pad_widths, scan_slots, select_none, shapes_of, split_axis,
                         transpose_of, trapezoid_weights, vander_exponents, zeros_like)

from .registry import defjvp, defnondiff, defvjp

defvjp(apply_linear, None,
       lambda ct, out, op, x, like, spec=(): apply_linear(transpose_of(op), ct, x, spec),
       lambda ct, out, op, x, like, spec=(): zeros_like(like),
       lambda ct, out, op, x, like, spec=(): zeros_like(spec),
       container_result=True)
defjvp(apply_linear, None,
       lambda tan, out, op, x, like, spec=(): apply_linear(op, tan, like, spec),
       lambda tan, out, op, x, like, spec=(): zeros_like(out),
       lambda tan, out, op, x, like, spec=(): zeros_like(out))
# shape-only helpers and selection masks of the templates (runtime/linear_ops.py,
# runtime/shape_helpers.py)
defnondiff(transpose_of, initial_or_one, insert_sources, poly_slots, select_none, clip_selected,
           conv_pad, matching_permutation, resize_source, split_axis, delete_kept,
           rollaxis_destination, trapezoid_weights)
defnondiff(first_true, scan_slots, scan_pad_widths, poly_factors, cov_layout, interp_layout, vander_exponents,
           shapes_of,
           container_result=True)
