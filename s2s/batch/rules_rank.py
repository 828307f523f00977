"""Batching rules of numpy functions whose batched form depends on each example's rank:
``np.hstack`` and ``np.vstack`` (the axis they join depends on it), ``np.broadcast_to``,
``np.diag`` (a vector gives a matrix, a matrix its diagonal), ``np.tile`` and
``np.repeat``, each by a run-time helper that reads the rank (``rt.batch_hstack``,
``batch_vstack``, ``batch_broadcast_to``, ``batch_diag``, ``batch_tile``) or, for
``repeat``, its axis shifted past the batch (``axis=None``: the flattened examples).
"""
from __future__ import annotations

import numpy as np

import s2s_runtime as rt

from .rules_core import axis_rule, per_example_helper
from .table import defbatch

defbatch(per_example_helper(rt.batch_hstack, "tup"), np.hstack)
defbatch(per_example_helper(rt.batch_vstack, "tup"), np.vstack)
defbatch(per_example_helper(rt.batch_broadcast_to, "array", "shape"), np.broadcast_to)
defbatch(per_example_helper(rt.batch_diag, "v", "k"), np.diag)
defbatch(per_example_helper(rt.batch_tile, "A", "reps"), np.tile)
defbatch(axis_rule(arrays=("a",), none="flat"), np.repeat)
