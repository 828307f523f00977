"""``s2s dump FILE.py:FUNC --mode vmap [--in-axes 0,None]``: the batched code.

The example arguments (``--args``/``--signature``) describe one example; the
arguments mapped by ``--in-axes`` (default: every one, on axis 0) get a
batch axis in front, and the code ``vmap`` generates for those kinds is
printed.
"""
from __future__ import annotations

import numpy as np

from s2s_runtime.tree import tree_map


def parse_in_axes(text):
    if text is None:
        return None
    out = []
    for t in text.split(","):
        t = t.strip()
        if t.lower() == "none":
            out.append(None)
        else:
            try:
                out.append(int(t))
            except ValueError:
                raise ValueError(f"bad --in-axes {text!r}: expected integers or None, "
                                 "e.g. 0,None") from None
    return out


def vmap_source(fn, values, in_axes_text) -> str:
    from ..core import pipeline
    from ..core.vmap import Vmapped

    axes = parse_in_axes(in_axes_text) or [0] * len(values)
    if len(axes) != len(values):
        raise ValueError(f"--in-axes has {len(axes)} entries for {len(values)} arguments")
    batched = [tree_map(lambda v: np.stack([np.asarray(v)] * 2, axis=k), v)
               if k is not None else v for v, k in zip(values, axes)]
    transform = Vmapped(fn, tuple(axes))
    moved, flags, _ = transform.prepare(batched)
    func, _, _ = transform.batched_ir(moved, flags)
    return pipeline.emit(func).source
