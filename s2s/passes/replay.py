"""Can this code be run again?  The check ``checkpoint`` needs before recomputing.

A checkpointed function (or loop) runs once in the primal sweep and again,
with its tape, in the adjoint sweep.  That is only correct if the second run
computes what the first did and changes nothing the first did not.
``check_replayable(stmts, owned, what)`` rejects, with an
``UnsupportedSyntaxError`` naming the construct and quoting its line:

* output and input (``print``, ``input``, ``open``): a replay would print or
  read again;
* random numbers (``np.random.*``, the ``random`` module): a replay would
  draw different ones, so the recomputed internals (and the gradient) would
  differ from the primal's;
* changes to values the code does not own, that is every name not in
  ``owned`` (the function's parameters, globals, closure cells; for a loop,
  the values made before it that it does not carry): index and attribute
  assignment, in-place operators, ``out=``, and the list and dict methods
  that change their object (``append``, ``update``, ...).  A replay would
  apply the change twice.

``owned``: the names the code may change when it starts (for a function
none; for a loop the state it carries, which the recomputation copies); a
name becomes owned where it is assigned a new value, and stops being owned
where it is made another name or a view of a value not owned (``y = x``,
``y = x[1:]``), scanning in source order.
"""
from __future__ import annotations

import builtins
import operator
from typing import Set

import s2s_runtime as rt
from s2s_runtime import build

from ..ad.common import CONTAINER_CHANGES, IN_PLACE_ONLY
from ..errors import unsupported
from ..frontend.desugar import PLAIN_OF_INPLACE
from ..ir import nodes as ir
from ..rules.registry import having

VIEW_OPS = having("view")
_IO = {builtins.print: "print", builtins.input: "input", builtins.open: "open"}
_WRITES = {operator.setitem: "index assignment", setattr: "attribute assignment",
           operator.delitem: "del of an item", rt.index_set: "index assignment"}


def _random(fn) -> bool:
    module = getattr(fn, "__module__", None) or ""
    owner = getattr(fn, "__self__", None)
    owner_module = type(owner).__module__ if owner is not None else ""
    return module in ("random", "numpy.random") or module.startswith("numpy.random") \
        or owner_module.startswith(("numpy.random", "random"))


def _name(a) -> str:
    return a.name if isinstance(a, ir.Var) else repr(getattr(a, "value", a))


def check_replayable(stmts, owned: Set[str], what: str) -> None:
    """Raise if ``stmts`` (IR, callees inlined) could not be run a second time
    (see the module docstring); ``what`` names the code in the message."""
    hint = "the reverse pass runs it again; move this out of it"
    owned = set(owned)
    for s in ir.walk(list(stmts)):
        v = getattr(s, "value", None)
        if isinstance(v, ir.Call):
            _check_call(s, v, owned, what, hint)
        if isinstance(s, ir.Assign):
            if _aliases_foreign(v, owned):
                owned.discard(s.target.name)
            else:
                owned.add(s.target.name)
        elif isinstance(s, ir.Unpack):  # items of a foreign container stay foreign
            for t in s.targets:
                (owned.add if is_owned(s.value, owned) else owned.discard)(t.name)
        elif isinstance(s, ir.For):
            owned.add(s.target.name)


def is_owned(a, owned) -> bool:
    return not isinstance(a, ir.Var) or a.name in owned


def _aliases_foreign(v, owned) -> bool:
    """``v`` may be (a view of) a value that is not owned."""
    if isinstance(v, ir.Var):
        return v.name not in owned
    return isinstance(v, ir.Call) and (v.fn in VIEW_OPS or v.fn is operator.getitem
                                       or v.fn is rt.index_set) \
        and bool(v.args) and not is_owned(v.args[0], owned)


def _check_call(s, v: ir.Call, owned, what, hint) -> None:
    fn = v.fn
    if fn in _IO:
        raise unsupported(f"{_IO[fn]}() inside {what}", s.loc,
                          "the reverse pass runs it again, which would repeat it; move it out")
    if _random(fn):
        raise unsupported(f"random numbers drawn inside {what} (the recomputation "
                          "would draw different ones)", s.loc, hint)
    target = v.args[0] if v.args else None
    foreign = isinstance(target, ir.Var) and target.name not in owned
    if fn in _WRITES and foreign:
        raise unsupported(f"{_WRITES[fn]} into '{_name(target)}', which {what} does not "
                          "own (a parameter, a global or a value made outside it)",
                          s.loc, hint)
    if fn in PLAIN_OF_INPLACE and foreign and isinstance(s, ir.ExprStmt):
        raise unsupported(f"in-place operator on '{_name(target)}', which {what} does "
                          "not own", s.loc, hint)
    out = dict(v.kwargs).get("out")
    if isinstance(out, ir.Var) and out.name not in owned:
        raise unsupported(f"out={out.name} writing into an array {what} does not own",
                          s.loc, hint)
    if fn is build.call_method and isinstance(v.args[1], ir.Const) and foreign \
            and v.args[1].value in CONTAINER_CHANGES | IN_PLACE_ONLY:
        raise unsupported(f"{_name(target)}.{v.args[1].value}(...) changing a list or "
                          f"dict {what} does not own", s.loc, hint)
