"""More elementwise numpy functions: nan_to_num, radians, degrees, unwrap (remainders,
copysign, ldexp, nextafter: ``float_parts.py``); and the index-valued, bitwise,
window and floating-point-query functions marked non-differentiable.

Each template is written with primitives that have rules themselves, so second
derivatives need nothing more.  Piecewise-constant factors (``floor_divide``,
``trunc``, ``signbit``, ``isfinite``) have a zero derivative.
"""
import numpy as np

from s2s_runtime import broadcast_like, unbroadcast, zeros_like

from .registry import defjvp, defnondiff, defvjp

# nan_to_num: the identity on finite entries, constants elsewhere
defvjp(np.nan_to_num, lambda g, ans, x, copy=True, nan=0.0, posinf=None, neginf=None:
       np.where(np.isfinite(x), g, 0.0))
defjvp(np.nan_to_num, lambda t, ans, x, copy=True, nan=0.0, posinf=None, neginf=None:
       np.where(np.isfinite(x), t, 0.0))
# radians/degrees (the same maps as deg2rad/rad2deg, separate ufuncs)
defvjp(np.radians, lambda g, ans, x: g * (np.pi / 180))
defjvp(np.radians, lambda t, ans, x: t * (np.pi / 180))
defvjp(np.degrees, lambda g, ans, x: g * (180 / np.pi))
defjvp(np.degrees, lambda t, ans, x: t * (180 / np.pi))
# unwrap adds piecewise-constant multiples of the period: the identity derivative
defvjp(np.unwrap, lambda g, ans, p, discont=None, axis=-1, period=2 * np.pi: unbroadcast(g, p))
defjvp(np.unwrap, lambda t, ans, p, discont=None, axis=-1, period=2 * np.pi:
       broadcast_like(t, ans))

# index-valued, bitwise and floating-point queries: zero derivative or not a number
defnondiff(np.spacing, np.isneginf, np.isposinf, np.bitwise_and, np.bitwise_or,
           np.bitwise_xor, np.invert, np.left_shift, np.right_shift, np.gcd, np.lcm,
           np.nanargmax, np.nanargmin, np.lexsort, np.isin, np.ravel_multi_index, np.indices,
           np.array_equiv, np.shares_memory, np.may_share_memory)
# window functions of a length, dtype queries, einsum's contraction path
defnondiff(np.bartlett, np.blackman, np.hamming, np.hanning, np.issubdtype, np.isdtype,
           np.can_cast, np.promote_types, np.iterable)
defnondiff(np.einsum_path, container_result=True)
defnondiff(np.unravel_index, np.tril_indices, np.triu_indices, np.diag_indices,
           np.tril_indices_from, np.triu_indices_from, np.diag_indices_from,
           container_result=True)
