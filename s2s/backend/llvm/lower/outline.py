"""A piece of a kernel lowered as a function of its own, called where it stood.

LLVM's optimisations are not linear in the size of a function: in one function holding
hundreds of array loops over the same extents, every branch on an extent (a loop's end,
a broadcast check) is a condition each later query about that extent scans
(InstCombine's known bits from dominating conditions), so a kernel of 300 statements
took seconds in InstCombine alone.  A loop lowered in a function of its own is
optimised alone: the kernel keeps a call and a test of its status.

Contract: ``call_outlined(L, name, operands, rtype, lower)`` emits, at ``L``'s builder,
a call of a new internal function ``i32 @<kernel>.<name><k>(i64* ctx, <operand types>...,
<rtype>* result)`` whose body is ``lower(O, operands')``: ``O`` is a lowering of the new
function (its own builder, entry block, error exit; the kernel's module, error sites,
``ctx`` words and allocation list), ``operands'`` the parameters as ``(value, type)``
pairs.  It returns the value ``lower`` returned.  An error inside writes its site to
``ctx`` as in the kernel and returns 1; the caller then leaves through its own error
exit, which frees what both allocated.  Only where no ``try`` handler encloses the call
(``L.handlers`` empty: a handler is chosen at compile time by the raise site's class)
and outside the kernel's loops (``L.loops`` empty: allocations inside a loop are pooled
per site, ``abi.pooled_alloc``); ``may_outline(L)`` says so.

``outlines_call(L, s)`` / ``outlined_call(L, call, rtype)``: in such a kernel, every
top-level assignment of an array computed by a call of arrays and numbers (a product,
a reduction, a derivative helper) is lowered the same way, its operands passed in and
read from slots of the new function.  The kernel is then left with no loop of its own
when its statements are all calls, which lets the driver compile that glue unoptimised
(``driver/module.unoptimised_if_straight``).
"""
from __future__ import annotations

import inspect
import types as pytypes

from llvmlite import ir as ll

from ....ir import nodes as ir
from ..typing import types as T
from ..values import abi


def may_outline(L) -> bool:
    return bool(getattr(L, "outline", False)) and not L.handlers and not L.loops


class _Outlined:
    """The lowering of an outlined function: its own ``fn``, ``b``, ``ctx``, entry and
    error exit; every other attribute is the kernel lowering's, and its methods run on
    this object (so they build into this function)."""

    def __init__(self, kernel, fn):
        self.kernel = kernel
        self.fn, self.ctx = fn, fn.args[0]
        self.handlers, self.loops, self.helper_loops = [], [], 0
        self.outline = False  # what it lowers stays in it (no function of a function)
        # values of the kernel's function are not this one's: its own slots (those
        # outlined_call makes) and caches
        self.slots, self._dummy, self._list_no_block = {}, None, None
        entry, start = fn.append_basic_block("entry"), fn.append_basic_block("start")
        ll.IRBuilder(entry).branch(start)
        self.b = ll.IRBuilder(start)
        self.error_block = fn.append_basic_block("error")
        ll.IRBuilder(self.error_block).ret(ll.Constant(T.I32, 1))

    def __getattr__(self, name):
        kernel = self.__dict__["kernel"]
        method = inspect.getattr_static(type(kernel), name, None)
        if isinstance(method, pytypes.FunctionType):
            return method.__get__(self)
        return getattr(kernel, name)


def outlines_call(L, s) -> bool:
    """Whether the statement ``s`` is a top-level ``name = call(...)`` that
    ``outlined_call`` lowers: in a kernel that outlines (``L.outline``, ``may_outline``),
    an array result, operands that are arrays, numbers or constants."""
    if not may_outline(L) or not isinstance(s, ir.Assign) or not isinstance(s.value, ir.Call) \
            or not isinstance(L.types.get(s.target.name), T.Array):
        return False
    for a in s.value.operands():
        if isinstance(a, ir.Var) and a.name in L.slots \
                and not isinstance(L.types.get(a.name), (T.Array, T.Scalar)):
            return False
    return True


def outlined_call(L, call, rtype):
    """``(value, rtype)``: ``call`` (an ``ir.Call``) lowered in a function of its own, its
    variables passed in and stored in slots of that function, its result converted to
    ``rtype``."""
    from ..values.scalars import convert
    names = sorted({a.name for a in call.operands() if isinstance(a, ir.Var) and a.name in L.slots})
    operands = [(L.b.load(L.slots[n]), L.types[n]) for n in names]

    def lower(O, params):
        for n, (value, t) in zip(names, params):
            O.slots[n] = O.entry_alloca(t.llvm(), name=f"v.{n}")
            O.b.store(value, O.slots[n])
        value, t = O.expr(call)
        return convert(O, value, t, rtype)

    return call_outlined(L, "call", operands, rtype, lower), rtype


def outlines_result(L, rtype) -> bool:
    """Whether the kernel's returned arrays are made its own (a copy of an argument, a
    loop) in a function of their own (``outlined_owned``): where ``may_outline``."""
    return may_outline(L) and abi.holds_arrays(rtype) and not isinstance(rtype, T.List)


def outlined_owned(L, value, rtype):
    """``abi.owned_items(value)`` computed in a function of its own."""
    return call_outlined(L, "owned", [(value, rtype)], rtype,
                         lambda O, params: abi.owned_items(O, params[0][0], rtype))


def call_outlined(L, name, operands, rtype, lower, items=False):
    """(See the module's docstring.)  ``items``: ``rtype`` is a ``types.Tuple`` and
    ``lower`` returns the list of its items, each stored and loaded by itself (no
    aggregate of hundreds of arrays for LLVM to take apart); the call returns that
    list."""
    count = getattr(L, "outlined", 0)
    L.outlined = count + 1
    fname = f"{L.fn.name}.{name}{count}"
    if items:  # a named struct: its uses print its name, not hundreds of item types
        out_type = L.module.context.get_identified_type(fname + ".items")
        out_type.set_body(*[t.llvm() for t in rtype.items])
    else:
        out_type = rtype.llvm()
    params = [T.I64.as_pointer()] + [t.llvm() for _, t in operands] + [out_type.as_pointer()]
    fn = ll.Function(L.module, ll.FunctionType(T.I32, params), fname)
    fn.linkage = "internal"
    fn.attributes.add("noinline")
    inner = _Outlined(L, fn)
    inner.loc = L.loc
    result = lower(inner, [(arg, t) for arg, (_, t) in zip(fn.args[1:-1], operands)])
    if items:
        for k, value in enumerate(result):
            inner.b.store(value, _item(inner.b, fn.args[-1], k))
    else:
        inner.b.store(result, fn.args[-1])
    inner.b.ret(ll.Constant(T.I32, 0))
    slot = L.entry_alloca(out_type)
    status = L.b.call(fn, [L.ctx] + [v for v, _ in operands] + [slot])
    failed = L.fn.append_basic_block("outlined.failed")
    ok = L.fn.append_basic_block("outlined.ok")
    L.b.cbranch(L.b.icmp_unsigned("!=", status, ll.Constant(T.I32, 0)), failed, ok) \
        .set_weights([1, 1000])
    L.b.position_at_end(failed)
    L.b.branch(L.error_block)
    L.b.position_at_end(ok)
    if items:
        return [L.b.load(_item(L.b, slot, k)) for k in range(len(rtype.items))]
    return L.b.load(slot)


def _item(b, ptr, k):
    return b.gep(ptr, [ll.Constant(T.I32, 0), ll.Constant(T.I32, k)])
