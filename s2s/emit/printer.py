"""The IR as Python-like text (``s2s dump --mode ir``).

One statement per line in three-address form, each followed by the
``line:col`` of the user's source it came from.  Rendering is shared with
the Python emitter (without folding temporaries), so there is a single
renderer of IR to text.
"""
from __future__ import annotations

from ..ir import nodes as ir


def format_ir(fn: ir.Function) -> str:
    from .python import emit_function  # one renderer for IR and Python output

    return emit_function(fn, fold=False, comments=False, locations=True).source
