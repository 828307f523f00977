"""Dict writes that change a dict's type get a new variable (jit's primal IR only).

``d['w'] = v`` adds a key: the frontend makes it ``d = rt.dict_set(d, 'w', v, old)``,
and a compiled variable has one type (``types.Dict`` includes the keys).  Contract:
``versioned(func)`` returns ``func`` renamed by the SSA pass (``passes/ssa.py``:
only names change, the computation is the same), dead assignments removed
(``passes/dce.py``), when it writes a dict
(``dict_set``/``dict_remove``/``dict_update``), else ``func`` itself; a function
the pass does not take is returned as it was (the type clash is then reported
by type inference, naming the variable and the line).
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
    if not writes_dict(func.body):
        return func
    from ....passes.dce import dce
    from ....passes.ssa import to_ssa
    try:
        # dead merges (``d_3 = d_2`` / ``d_3 = d_1`` after an early return) are dropped:
        # their two dict types need not agree
        return dce(to_ssa(func))
    except S2SError:
        return func
