"""Writes that change a variable's compiled type get a new variable (jit's primal IR only).

A compiled variable has one type, but Python lets a name hold values of several:
``d['w'] = v`` adds a key (the frontend makes it ``d = rt.dict_set(d, 'w', v, old)``,
and ``types.Dict`` includes the keys); ``acc.append((w, b))`` makes a longer list
display (``ops/lists.py``); ``x = 1`` then ``x = np.ones(3)``.  Contract: ``renamed(func)``
returns ``func`` renamed by the SSA pass (``passes/ssa.py``: only names change, the
computation is the same), dead assignments removed (``passes/dce.py``), so that each
assignment's value has a variable of its own where no merge of control flow joins
them; ``renamed(func, names)`` renames the variables ``names`` alone (a tape keeps its
one name: compiled code keeps it as one stack).  A function the pass does not take is
returned as it was (the type clash is then reported by type inference, naming the
variable and the line).  ``versioned(func)`` is ``renamed(func)`` for a function that
writes a dict (``dict_set``/``dict_remove``/``dict_update``), else ``func`` itself.
"""
from __future__ import annotations

import s2s_runtime as rt

from ....errors import S2SError
from ....ir import nodes as ir

_WRITES = (rt.dict_set, rt.dict_remove, rt.dict_update)


def writes_dict(stmts) -> bool:
    """Whether ``stmts`` (nested blocks included) write a dict."""
    return any(isinstance(s, ir.Assign) and isinstance(s.value, ir.Call)
               and s.value.fn in _WRITES for s in ir.walk(stmts))


def versioned(func):
    return renamed(func) if writes_dict(func.body) else func


def renamed(func, names=None):
    from ....passes.dce import dce
    from ....passes.ssa import to_ssa
    try:
        # dead merges (``d_3 = d_2`` / ``d_3 = d_1`` after an early return) are dropped:
        # their two types need not agree
        return dce(to_ssa(func, names))
    except S2SError:
        return func
