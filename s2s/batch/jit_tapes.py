"""Batched tapes as native stacks, for ``jit(vmap(grad(f)))`` and ``jit(vmap(vjp_fun))``.

Reverse mode records on a tape that is a chain of pairs (``tape = (x, tape)`` pushes,
``x, tape = tape`` pops); the LLVM backend keeps such a tape in native memory
(``backend/llvm/lower/stacks.py``).  Batching leaves the chain as it is -- its items are
batched values -- but writes it with helpers that are identities on it:

* ``tape = rt.batch_lift((), n)`` (and ``t = rt.batch_lift(None, n)``, a slot not yet
  recorded): ``batch_lift`` maps the leaves of a pytree, and ``()``/``None`` have none,
  so the value is the constant itself;
* ``p = rt.batch_rows(tape); x, tape = p``: ``batch_rows`` returns a tuple as it is
  (it swaps axes of arrays only), so the pop reads the tape itself.

``native_tapes(body)`` makes those rewrites (the second only for a name that is
pushed as a tape and a ``p`` read once, by the pop right after it), so the backend
finds the same stacks as in unbatched derivative code.  Same values, Python or native.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace

import s2s_runtime as rt
from s2s_runtime import build

from ..ir import nodes as ir


def native_tapes(body):
    """``body`` with batched tape pushes/pops written as plain ones (see above)."""
    pushed = {s.target.name for s in ir.walk(body) if _is_push(s)}
    reads = Counter(a.name for s in ir.walk(body) for a in ir.stmt_uses(s)
                    if isinstance(a, ir.Var))
    return tuple(_rewrite(body, pushed, reads))


def _is_push(s):
    return isinstance(s, ir.Assign) and isinstance(s.value, ir.Call) and \
        s.value.fn is build.make_tuple and len(s.value.args) == 2 and \
        s.value.args[1] == ir.Var(s.target.name)


def _empty_lift(s):
    """``t = rt.batch_lift(c, n)`` of a constant without leaves (``()``, ``None``)."""
    if not (isinstance(s, ir.Assign) and isinstance(s.value, ir.Call)
            and s.value.fn is rt.batch_lift and len(s.value.args) == 2):
        return None
    c = s.value.args[0]
    if isinstance(c, ir.Const) and (c.value is None or c.value == ()) and \
            type(c.value) in (tuple, type(None)):
        return replace(s, value=c)
    return None


def _rows_of_tape(s, pushed):
    """The tape name of ``p = rt.batch_rows(tape)`` for a pushed ``tape``."""
    if isinstance(s, ir.Assign) and isinstance(s.value, ir.Call) and \
            s.value.fn is rt.batch_rows and len(s.value.args) == 1 and \
            isinstance(s.value.args[0], ir.Var) and s.value.args[0].name in pushed:
        return s.value.args[0].name
    return None


def _rewrite(body, pushed, reads):
    out = []
    for s in body:
        s = _empty_lift(s) or s
        if isinstance(s, ir.Unpack) and len(s.targets) == 2 and out and \
                isinstance(s.value, ir.Var) and reads[s.value.name] == 1:
            prev = out[-1]
            tape = _rows_of_tape(prev, pushed)
            if tape is not None and prev.target.name == s.value.name and \
                    s.targets[1].name == tape:
                out[-1] = replace(s, value=ir.Var(tape))
                continue
        blocks = ir.sub_blocks(s)
        if blocks:
            s = ir.with_blocks(s, [tuple(_rewrite(b, pushed, reads)) for b in blocks])
        out.append(s)
    return out
