"""Tapes of generated derivative code as native stacks.

Reverse mode records values on a tape that is a chain of pairs (``ad/loops.py``):
``tape = ()``, pushes ``tape = (x, tape)`` and pops ``x, tape = tape``.
Contract:

* ``find_stacks(func)``: the variables used only that way (and, for a
  parameter, only popped): each becomes a ``types.Stack``;
* a stack the kernel builds is a byte buffer.  Where its pushes and pops pair up
  by name (reverse mode pushes ``x`` before each assignment of ``x`` and pops ``x``
  after its adjoint: the same variable, so the same type, in last-in first-out
  order; ``item_sizes``), each item takes the size of its own type (8 bytes for
  a float or an int, 16 for a pair of ints, 32 for a 1-d array): a push stores
  the value and moves the top up by that size, the pop of the same name reads
  it back from below the top.  Any other stack holds fixed-size slots (the
  largest type pushed on it).  The buffer lives
  in memory from ``abi.alloc`` (at least doubling when full, freed on every exit;
  ``abi.GROWTHS`` counts the reallocations), and
  a ``for`` loop over a range that pushes a fixed number of values per
  iteration reserves room for all of them before it starts (``reserve``);
* a stack handed in by Python (the tape of a ``vjp`` closure) is encoded by
  ``encode_tape`` as ``{tag, word, word}`` slots (None, bool, int, float,
  complex items; ranges; numpy arrays by reference, checked against the target's
  dtype and ndim when popped), and a pop converts the item by its tag to the
  target's type.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir as ll

from s2s_runtime import build

from ....errors import UnsupportedSyntaxError
from ....ir import nodes as ir
from ..values import abi
from ..typing import types as T

TAG_NONE, TAG_INT, TAG_FLOAT, TAG_BOOL, TAG_COMPLEX, TAG_RANGE, TAG_ARRAY = 0, 1, 2, 3, 4, 5, 6
TAGGED_SLOT = 32
#: the most slots a loop reserves ahead (a loop that stops early reserves no more)
RESERVE_CAP = 1 << 20


def is_push(s, name):
    return (isinstance(s, ir.Assign) and s.target.name == name and isinstance(s.value, ir.Call)
            and s.value.fn is build.make_tuple and len(s.value.args) == 2
            and s.value.args[1] == ir.Var(name))


def _is_reset(s, name):
    return isinstance(s, ir.Assign) and s.target.name == name and (
        isinstance(s.value, ir.Const) and s.value.value == () or
        isinstance(s.value, ir.Call) and s.value.fn is build.make_tuple and not s.value.args)


def is_pop(s, stacks):
    return (isinstance(s, ir.Unpack) and isinstance(s.value, ir.Var) and s.value.name in stacks
            and len(s.targets) == 2 and s.targets[1] == s.value)


def _is_replay(s, name):
    """``m = tape_mark(tape)``, ``tape_rewind(tape, m)`` (``derivs/jacobian_ops.py``) or
    ``tape_select(tape, c, m)`` (``batching/masks.py``)."""
    from ..batching.masks import tape_select
    from ..derivs.jacobian_ops import tape_mark, tape_rewind
    v = getattr(s, "value", None)
    return (isinstance(s, (ir.Assign, ir.ExprStmt)) and isinstance(v, ir.Call)
            and (v.fn is tape_mark and isinstance(s, ir.Assign)
                 or v.fn in (tape_rewind, tape_select) and isinstance(s, ir.ExprStmt))
            and v.args[0] == ir.Var(name) and name not in {a.name for a in ir.stmt_defs(s)})


def replayed(func: ir.Function, stacks) -> frozenset:
    """The stacks a kernel rewinds (their pops leave the tape's references in place)."""
    return frozenset(n for n in stacks if any(
        _is_replay(s, n) and isinstance(s, ir.ExprStmt) for s in ir.walk(func.body)))


def find_stacks(func: ir.Function) -> frozenset:
    candidates = set()
    for s in ir.walk(func.body):
        if isinstance(s, ir.Unpack) and len(s.targets) == 2 and s.targets[1] == s.value:
            candidates.add(s.value.name)
        if isinstance(s, ir.Assign) and is_push(s, s.target.name):
            candidates.add(s.target.name)
    out = set()
    for name in candidates:
        ok = True
        for s in ir.walk(func.body):
            if is_push(s, name) or _is_reset(s, name) or is_pop(s, {name}) or \
                    _is_replay(s, name):
                if is_push(s, name) and s.value.args[0] == ir.Var(name):
                    ok = False
                continue
            if name in {v.name for v in ir.stmt_defs(s)} or \
                    ir.Var(name) in ir.stmt_uses(s):
                ok = False
        if ok:
            out.add(name)
    return frozenset(out)


def pushes(func, name):
    return [s for s in ir.walk(func.body) if is_push(s, name)]


def encode_tape(value):
    """A Python tape (``(x, (y, ... ()))``) as an int64 array of tagged slots, bottom first."""
    items = []
    while value != ():
        if type(value) is not tuple or len(value) != 2:
            raise TypeError("jit: a residual tape that is not a chain of pairs")
        items.append(value[0])
        value = value[1]
    words = np.zeros((len(items), 4), dtype=np.int64)
    floats = words.view(np.float64)
    for k, x in enumerate(reversed(items)):
        if x is None:
            continue
        if isinstance(x, (bool, np.bool_)):
            words[k, 0], words[k, 1] = TAG_BOOL, int(bool(x))
        elif isinstance(x, (int, np.integer)):
            words[k, 0], words[k, 1] = TAG_INT, int(x)
        elif isinstance(x, (float, np.floating)):
            words[k, 0] = TAG_FLOAT
            floats[k, 1] = float(x)
        elif isinstance(x, (complex, np.complexfloating)):
            words[k, 0] = TAG_COMPLEX
            floats[k, 1], floats[k, 2] = x.real, x.imag
        elif type(x) is range:
            words[k] = (TAG_RANGE, x.start, x.stop, x.step)
        elif type(x) is np.ndarray and T.dtype_code(x.dtype) is not None:
            words[k] = (TAG_ARRAY, id(x), x.ndim, T.DTYPES.index(T.dtype_code(x.dtype)))
        else:
            raise TypeError(f"jit: a vjp residual tape holding a {type(x).__name__} (compiled "
                            "pullbacks take tapes of numbers, ranges and arrays)")
    return words


# -- lowering --------------------------------------------------------------------------
def slot_size(types) -> int:
    from ..driver.engine import target_data
    td = target_data()
    size = max([8] + [t.llvm().get_abi_size(td) for t in types])
    return (size + 7) // 8 * 8


def item_sizes(func, name, types) -> bool:
    """Whether the stack ``name`` of ``func`` can hold items of their own sizes: every
    push pushes a variable, and the names pushed are the names popped (each name has
    one type, so a pop reads back what the matching push stored)."""
    pushed, popped = set(), set()
    for s in ir.walk(func.body):
        if is_push(s, name):
            v = s.value.args[0]
            if not isinstance(v, ir.Var) or types.get(v.name) is None:
                return False
            pushed.add(v.name)
        elif is_pop(s, {name}):
            popped.add(s.targets[0].name)
    return pushed == popped


def item_size(L, name, t) -> int:
    """Bytes a value of type ``t`` takes on the kernel's stack ``name``."""
    fixed = L.stack_slot[name]
    return fixed if fixed is not None else slot_size([t])


def height_ptr(L, name):
    """``i64*`` to the height (bytes used) of the kernel's stack ``name``."""
    return L.b.gep(L.slots[name], [ll.Constant(T.I32, 0), ll.Constant(T.I32, 1)])


def reset(L, name):
    L.b.store(ll.Constant(T.I64, 0), height_ptr(L, name))


def cache_index(L, name):
    """Which of the context block's cached tape buffers this tape uses (None: none)."""
    local = sorted(n for n in L.stacks if not L.types[n].tagged)
    k = local.index(name)
    return k if k < abi.CACHED_TAPES else None


def start(L, name):
    """At entry: an empty tape over the buffer the last call left (if any)."""
    k = cache_index(L, name)
    if k is None:
        return
    b = L.b
    slot = L.slots[name]
    base = b.inttoptr(b.load(abi.ctx_slot(L, abi.TAPES + 2 * k)), T.PTR)
    cap = b.load(abi.ctx_slot(L, abi.TAPES + 2 * k + 1))
    b.store(base, b.gep(slot, [ll.Constant(T.I32, 0), ll.Constant(T.I32, 0)]))
    b.store(cap, b.gep(slot, [ll.Constant(T.I32, 0), ll.Constant(T.I32, 2)]))


def _realloc(module):
    """``realloc`` declared in ``module`` (a NULL buffer: a fresh one)."""
    fn = module.globals.get("realloc")
    if fn is None:
        fn = ll.Function(module, ll.FunctionType(T.PTR, [T.PTR, T.I64]), "realloc")
    return fn


def _reallocated(L, old, used, new_cap):
    """``old`` (``used`` bytes live; NULL: none) moved into a block of ``new_cap`` bytes,
    NULL when out of memory.  On the CPU ``realloc`` (a large buffer is moved by
    remapping its pages, not copied); a GPU has no ``realloc``: a new block from the
    device's ``malloc``, the live bytes copied, the old block freed."""
    b = L.b
    if "nvptx" not in (L.module.triple or ""):
        return b.call(_realloc(L.module), [old, new_cap])
    data = b.call(abi.libc(L.module, "malloc"), [new_cap])
    with b.if_then(b.icmp_unsigned("!=", b.ptrtoint(data, T.I64), ll.Constant(T.I64, 0))):
        with b.if_then(b.icmp_unsigned("!=", b.ptrtoint(old, T.I64), ll.Constant(T.I64, 0))):
            memcpy(L, data, old, used)
            b.call(abi.libc(L.module, "free"), [old])
    return data


def _grow(L, name, need, new_cap):
    """Make the tape's buffer ``new_cap`` bytes when ``need`` bytes exceed its capacity."""
    b = L.b
    slot = L.slots[name]
    base_p, top_p, cap_p = (b.gep(slot, [ll.Constant(T.I32, 0), ll.Constant(T.I32, k)])
                            for k in range(3))
    top, cap = b.load(top_p), b.load(cap_p)
    k = cache_index(L, name)
    with b.if_then(b.icmp_signed(">", need, cap), likely=False):
        # a size that wrapped (need or new_cap past 2**63): no tape of that size exists
        L.check(b.or_(b.icmp_signed("<", need, top), b.icmp_signed("<", new_cap, need)),
                MemoryError, "jit: out of memory growing a tape")
        if k is None:
            _, data = abi.alloc(L, new_cap, out_of_memory=(
                MemoryError, "jit: out of memory growing a tape", []))
            memcpy(L, data, b.load(base_p), top)
        else:  # a buffer of its own, kept in the context block for the next call
            data = _reallocated(L, b.load(base_p), top, new_cap)
            L.check(b.icmp_unsigned("==", b.ptrtoint(data, T.I64), ll.Constant(T.I64, 0)),
                    MemoryError, "jit: out of memory growing a tape")
            b.store(b.ptrtoint(data, T.I64), abi.ctx_slot(L, abi.TAPES + 2 * k))
            b.store(new_cap, abi.ctx_slot(L, abi.TAPES + 2 * k + 1))
        b.store(data, base_p)
        b.store(new_cap, cap_p)
        growths = abi.ctx_slot(L, abi.GROWTHS)
        b.store(b.add(b.load(growths), ll.Constant(T.I64, 1)), growths)


def reserve(L, name, items):
    """Before a loop of a known trip count: room for ``items`` more bytes (one growth
    instead of repeated doublings; a loop running longer still grows at a push).

    The new capacity is at least twice the old one (``max(need + 64 slots, 2 cap)``, a
    slot of 8 bytes where items have their own sizes):
    a loop nest reserving before every inner loop reallocates O(log size) times, not
    once per inner loop (each growth copies the whole tape)."""
    b = L.b
    size = ll.Constant(T.I64, L.stack_slot[name] or 8)
    slot = L.slots[name]
    top = b.load(b.gep(slot, [ll.Constant(T.I32, 0), ll.Constant(T.I32, 1)]))
    cap = b.load(b.gep(slot, [ll.Constant(T.I32, 0), ll.Constant(T.I32, 2)]))
    need = b.add(top, items)
    room = b.add(need, b.mul(ll.Constant(T.I64, 64), size))
    twice = b.mul(cap, ll.Constant(T.I64, 2))
    _grow(L, name, need, b.select(b.icmp_signed(">", twice, room), twice, room))


def reserve_for_loop(L, s, start, stop, step):
    """Room on the kernel's tapes for the pushes the body of the ``for`` loop ``s`` (over
    ``range(start, stop, step)``) makes directly, for all its iterations (at most
    ``RESERVE_CAP`` slots), before it starts."""
    counts = {}
    for x in s.body:
        if isinstance(x, ir.Assign) and x.target.name in L.stack_slot \
                and isinstance(x.value, ir.Call) and len(x.value.args) == 2:
            v = x.value.args[0]
            t = L.types.get(v.name) if isinstance(v, ir.Var) else None
            size = item_size(L, x.target.name, t) if t is not None else L.stack_slot[
                x.target.name] or 8
            counts[x.target.name] = counts.get(x.target.name, 0) + size
    if not counts:
        return
    b = L.b
    up = b.icmp_signed(">", step, ll.Constant(T.I64, 0))
    span = b.select(up, b.sub(stop, start), b.sub(start, stop))
    width = b.select(up, step, b.neg(step))
    trips = b.sdiv(b.add(span, b.sub(width, ll.Constant(T.I64, 1))), width)
    cap = ll.Constant(T.I64, RESERVE_CAP)
    trips = b.select(b.icmp_signed("<", trips, ll.Constant(T.I64, 0)), ll.Constant(T.I64, 0), trips)
    trips = b.select(b.icmp_signed(">", trips, cap), cap, trips)
    for name in sorted(counts):
        reserve(L, name, b.mul(trips, ll.Constant(T.I64, counts[name])))


def push(L, name, value, vt):
    b = L.b
    size = item_size(L, name, vt)
    slot = L.slots[name]
    base_p, top_p, cap_p = (b.gep(slot, [ll.Constant(T.I32, 0), ll.Constant(T.I32, k)])
                            for k in range(3))
    top, cap = b.load(top_p), b.load(cap_p)
    need = b.add(top, ll.Constant(T.I64, size))
    _grow(L, name, need, b.mul(b.add(cap, ll.Constant(T.I64, 64 * (L.stack_slot[name] or 8))),
                               ll.Constant(T.I64, 2)))
    where = b.gep(b.load(base_p), [top])
    if not isinstance(vt, T.NoneType):
        b.store(value, b.bitcast(where, vt.llvm().as_pointer()))
        abi.retain(L, value, vt)  # the tape holds a reference until popped
    b.store(need, top_p)


def pop(L, name, target_t):
    b = L.b
    t = L.types[name]
    size = TAGGED_SLOT if t.tagged else item_size(L, name, target_t)
    slot = L.slots[name]
    base_p, top_p = (b.gep(slot, [ll.Constant(T.I32, 0), ll.Constant(T.I32, k)]) for k in (0, 1))
    top = b.load(top_p)
    L.check(b.icmp_signed("<", top, ll.Constant(T.I64, size)), RuntimeError,
            "s2s internal error: a tape popped more than was pushed")
    top = b.sub(top, ll.Constant(T.I64, size))
    b.store(top, top_p)
    where = b.gep(b.load(base_p), [top])
    if not t.tagged:
        return b.load(b.bitcast(where, target_t.llvm().as_pointer()))
    return _decode(L, where, target_t)


def _decode(L, where, target_t):
    from ..values.scalars import convert
    b = L.b
    words = b.bitcast(where, T.I64.as_pointer())
    tag = b.load(words)
    word = [b.load(b.gep(words, [ll.Constant(T.I32, k)])) for k in (1, 2, 3)]
    if isinstance(target_t, T.Range):
        out = ll.Constant(target_t.llvm(), None)
        for k in range(3):
            out = b.insert_value(out, word[k], k)
        return out
    if isinstance(target_t, T.Array):
        from ..driver.module import array_from_object
        is_none = b.icmp_signed("==", tag, ll.Constant(T.I64, TAG_NONE))
        bad = b.or_(b.icmp_signed("!=", tag, ll.Constant(T.I64, TAG_ARRAY)),
                    b.or_(b.icmp_signed("!=", word[1], ll.Constant(T.I64, target_t.ndim)),
                          b.icmp_signed("!=", word[2], ll.Constant(
                              T.I64, T.DTYPES.index(target_t.dtype)))))
        L.check(b.and_(bad, b.not_(is_none)), TypeError,
                "s2s internal error: a residual tape item of the wrong type")
        slot = L.entry_alloca(target_t.llvm())
        b.store(ll.Constant(target_t.llvm(), None), slot)
        with b.if_then(b.not_(is_none)):  # None (a value never computed): zeros
            b.store(array_from_object(b, b.inttoptr(word[0], T.PTR), target_t), slot)
        return b.load(slot)
    if not isinstance(target_t, T.Scalar):
        raise UnsupportedSyntaxError(f"jit: popping a {target_t} from a residual tape", L.loc)
    w1 = b.load(b.gep(words, [ll.Constant(T.I32, 1)]))
    f1 = b.bitcast(w1, T.F64)
    f2 = b.bitcast(b.load(b.gep(words, [ll.Constant(T.I32, 2)])), T.F64)
    from ..values.scalars import make_complex
    as_int = convert(L, w1, T.INT, target_t)
    as_float = convert(L, f1, T.FLOAT, target_t)
    as_bool = convert(L, b.icmp_signed("!=", w1, ll.Constant(T.I64, 0)), T.BOOL, target_t)
    as_complex = convert(L, make_complex(b, f1, f2), T.COMPLEX, target_t)
    zero = ll.Constant(target_t.llvm(), None)
    out = zero
    for code, v in ((TAG_INT, as_int), (TAG_FLOAT, as_float), (TAG_BOOL, as_bool),
                    (TAG_COMPLEX, as_complex)):
        out = b.select(b.icmp_signed("==", tag, ll.Constant(T.I64, code)), v, out)
    return out


def memcpy(L, dst, src, n):
    fn = L.module.globals.get("llvm.memcpy.p0i8.p0i8.i64")
    if fn is None:
        fn = L.module.declare_intrinsic("llvm.memcpy", [T.PTR, T.PTR, T.I64])
    L.b.call(fn, [dst, src, n, ll.Constant(T.I1, 0)])
