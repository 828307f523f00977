"""Which calls the LLVM backend compiles: one table, type rule and lowering per callable.

Contract: ``type_call(fn, args, kwargs, loc)`` gives the result type of a call
whose operands have these types (``args``: ``(atom, type)`` pairs), and
``lower_call(L, call)`` emits it; both raise ``UnsupportedSyntaxError`` naming
the callable, the operand types and the user's line for a call outside the
table -- unless the fallback (``set_fallback``: ``host_calls.HostFallback``, numpy run
by a call back into Python) takes a numpy function's call that its handler refuses or
that has none.  Arithmetic, comparisons and math functions apply elementwise to
arrays with numpy's broadcasting (``arrays.elementwise``), one scalar rule per
operation serving both.
"""
from __future__ import annotations

import operator

import numpy as np
from llvmlite import ir as ll

import s2s_runtime as rt

from ....errors import UnsupportedSyntaxError
from ....ir import nodes as ir
from ..values import scalars as S
from ..values import arrays as A
from ..typing import types as T
from ..typing.infer import TupleIndexedByVariable
from ..typing.statics import is_static

#: fn -> the handler a call of ``fn`` meets first (an object with ``.type(fn, types, kw, loc)``
#: and ``.lower(L, fn, vals, kw, rtype)``): its first overload, else its plain handler.
#: Written only by ``register`` and ``overload``.
TABLE = {}
_PLAIN = {}      # fn -> its handler for operands of no special kind
_OVERLOADS = {}  # fn -> [(family rank, order of registration, handler)]

#: The kinds of operands whose handlers (``overload``) take a call over before the plain
#: handler of its callable (``register``), in the order they are tried.
OVERLOAD_FAMILIES = ("tuples",            # add_at, getitem_vjp of a tuple: derivs/tuples
                     "list derivatives",  # cotangents and tangents of lists: derivs/lists
                     "lists",             # lists that grow: ops/lists
                     "dicts",             # dicts with constant keys: ops/dicts
                     "advanced indices")  # integer-array and mask indices: ops/fancy


def register(handler, *fns):
    """Make ``handler`` the plain handler of calls of ``fns``; one per callable: a second
    registration is a programming error (modules would silently override each other)."""
    for fn in fns:
        old = _PLAIN.get(fn)
        if old is not None and old is not handler:
            raise RuntimeError(f"s2s internal error: two jit lowerings of {name_of(fn)} "
                               f"({type(old).__name__} and {type(handler).__name__})")
        _PLAIN[fn] = handler
        _link(fn)
    return handler


#: why a compiled-only form has no jvp/vjp/vmap (``s2s rules`` shows it)
COMPILED_FORM = ("a form the LLVM backend's rewrites make of a helper call (core/vmap_jit.py); "
                 "no transform meets it")


def register_compiled_form(handler, *fns):
    """``register`` for functions that exist only as the LLVM backend's own rewrite of a
    helper call: they get a lowering and a stated reason for having no other mode."""
    from ....rules.registry import defno_mode
    for mode in ("jvp", "vjp", "vmap"):
        defno_mode(mode, COMPILED_FORM, *fns)
    return register(handler, *fns)


def overload(family, handler, fn):
    """Let ``handler`` take over calls of ``fn`` whose operands are of ``family``'s kind
    (one of ``OVERLOAD_FAMILIES``); it hands every other call to ``handler.inner``.

    ``inner`` is set here, whatever the order modules register in: the next overload of
    ``fn`` (by family in ``OVERLOAD_FAMILIES`` order; within a family, in the order
    registered), else the plain handler of ``fn``, else None (no handler: refuse).  A
    handler object serves one callable (its ``inner`` depends on it)."""
    if any(h is handler for entries in _OVERLOADS.values() for _, _, h in entries):
        raise RuntimeError(f"s2s internal error: {type(handler).__name__} overloads two callables")
    entries = _OVERLOADS.setdefault(fn, [])
    entries.append((OVERLOAD_FAMILIES.index(family), len(entries), handler))
    _link(fn)
    return handler


def _link(fn):
    """Chain ``fn``'s overloads and plain handler through ``inner``; ``TABLE[fn]`` its head."""
    chain = [h for _, _, h in sorted(_OVERLOADS.get(fn, ()), key=lambda e: e[:2])]
    chain.append(_PLAIN.get(fn))
    for handler, after in zip(chain, chain[1:]):
        handler.inner = after
    TABLE[fn] = chain[0]


def name_of(fn) -> str:
    mod = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__name__", repr(fn))
    if mod == "numpy.linalg":
        return f"np.linalg.{name}"
    if isinstance(fn, np.ufunc) or mod.startswith("numpy"):
        return f"np.{name}"
    if mod == "math":
        return f"math.{name}"
    if mod in ("_operator", "operator"):
        return f"operator.{name}"
    return name


def unsupported(fn, types, loc, why=""):
    shown = ", ".join(map(str, types))
    return UnsupportedSyntaxError(
        f"jit does not compile {name_of(fn)}({shown})" + (f": {why}" if why else ""), loc)


def _lookup(fn):
    if isinstance(fn, (ElementwiseTree, ElementwiseShape)):  # fused statements (fused.py)
        return fn
    try:
        return TABLE.get(fn)
    except TypeError:
        return None


def maps_elements(fn) -> bool:
    """Whether ``fn``'s lowering on arrays is its lowering on their elements mapped over
    the operands' broadcast shape (``map_elementwise``), so the lowering of a call on
    numbers computes one element of a call on arrays (what ``fused.py`` relies on).
    Stated by the handler (``maps_elements(fn)``); false for an unknown callable."""
    try:
        handler = _PLAIN.get(fn)
    except TypeError:  # an unhashable callable: none of the table's
        return False
    return handler is not None and getattr(handler, "maps_elements", None) is not None \
        and handler.maps_elements(fn)


#: calls folded at compile time when an operand is a compile-time constant that is not
#: a number (a string, None, a tuple of them: ``statics.py``; a compile-time flag, int,
#: range or tuple of ints, ``type_tests.py``, ``np.ndim``, ``rt.batch_axes``) and every
#: operand is constant (``(1,) * (np.ndim(a) - np.ndim(b))`` is ``rt.seq_repeat``)
_FOLDABLE = {operator.eq, operator.ne, operator.is_, operator.is_not, operator.not_,
             operator.contains, operator.getitem, operator.add, operator.mod, len, str,
             operator.lt, operator.le, operator.gt, operator.ge, operator.truth,
             operator.sub, operator.mul, operator.floordiv, operator.neg, operator.and_,
             operator.or_, range, slice, tuple, max, min, rt.seq_repeat, rt.rollaxis_destination,
             np.issubdtype, rt.cond_ord, rt.swapped_norm}


def _folded(fn, args, kwargs):
    """``(True, value)`` of a call folded at compile time (see ``_FOLDABLE``), else
    ``(False, None)``; ``value`` is a ``types.Static`` where the result is a flag, an int,
    a range or a tuple of ints computed from a compile-time one (``types.Static``)."""
    if fn in (operator.is_, operator.is_not) and len(args) == 2 and not kwargs:
        # x is None for an x of a run-time type (a number, an array): known when compiling
        (a, ta), (b, tb) = args
        for (c, _), (_, t) in (((a, ta), (b, tb)), ((b, tb), (a, ta))):
            if isinstance(c, ir.Const) and c.value is None and \
                    isinstance(t, (T.Scalar, T.Tuple)):  # (an array: NoneTest)
                return True, T.Static(fn is operator.is_not)  # a compile-time flag
    known = [(a.value, False) if isinstance(a, ir.Const) else
             (t.value, True) if isinstance(t, T.Static) else None for a, t in args]
    if fn not in _FOLDABLE or kwargs or not args or None in known or \
            not any(is_static(v) or flag for v, flag in known):
        return False, None
    try:
        value = fn(*[v for v, _ in known])
    except Exception:  # the run-time error is reported where it happens (not folded)
        return False, None
    if (type(value) in (bool, int, range) or T.is_int_tuple(value) or T.is_int_slice(value)) \
            and any(flag or is_static(v) for v, flag in known):  # (x is None of a None x too)
        return True, T.Static(value)  # a compile-time number stays one (``not``, ``==``, ``-``,
        # ``tuple(range(1, np.ndim(x)))``)
    if is_static(value) or T.value_type(value) in (T.BOOL, T.INT, T.FLOAT):
        return True, value
    return False, None


def constant_atom(atom, t):
    """``atom`` as the handlers read it: a variable of a compile-time type
    (``types.Static``: a string, None, a compile-time number) as its constant."""
    if isinstance(t, T.Static) and not isinstance(atom, ir.Const):
        return ir.Const(t.value)
    return atom


def _declared_type(L, atom):
    """The type typing gave ``atom`` (a compile-time one kept; None for a constant)."""
    return None if isinstance(atom, ir.Const) else L.types.get(atom.name)


def type_call(fn, args, kwargs, loc):
    """The type of a call of ``fn`` on operands (``(atom, type)`` pairs) of these types."""
    return _resolve(fn, args, kwargs, loc)[0]


#: the handler of a call of a numpy function that its own handler refuses, or that has
#: none: numpy run by a call back into Python (``host_calls.HostFallback``, which sets it)
_FALLBACK = []


def set_fallback(handler) -> None:
    """Make ``handler`` the fallback (``accepts(fn, types, kw)``, ``type``, ``lower``)."""
    _FALLBACK[:] = [handler]


def _resolve(fn, args, kwargs, loc):
    """``(result type, handler that lowers the call)``; the handler is None for a call
    lowered in this module (folded, a tuple's item or field, joined tuples, shapes
    compared)."""
    if isinstance(fn, type) and issubclass(fn, BaseException) and not kwargs:
        return exception_instance(fn, args, loc), None
    folded, value = _folded(fn, args, kwargs)
    if folded:
        return (value if isinstance(value, T.Static) else
                T.Static(value) if is_static(value) else T.value_type(value)), None
    atoms, kw_atoms = args, kwargs
    args = [(a, T.runtime_type(t)) for a, t in args]  # a compile-time number: a constant
    kwargs = {k: (a, T.runtime_type(t)) for k, (a, t) in kwargs.items()}
    handler = _lookup(fn)
    types = [t for _, t in args]
    kw = {k: t for k, (_, t) in kwargs.items()}
    field = _named_field(fn, args, kwargs)
    if field is not None:
        return types[0].items[field], None
    if fn is operator.getitem and len(args) == 2 and isinstance(types[0], T.Tuple) \
            and not isinstance(types[0], T.Dict):
        return _tuple_item_type([args[0], atoms[1]], loc), None  # (a known index kept)
    if _joins_tuples(fn, types, kw):
        return T.Tuple(types[0].items + types[1].items), None
    if _compares_shapes(fn, types, kw):
        return T.BOOL, None
    const_atoms = [constant_atom(a, t) for a, t in atoms]
    const_kw = {k: constant_atom(a, t) for k, (a, t) in kw_atoms.items()}
    t, refusal = None, None
    try:
        if handler is None:
            pass
        elif getattr(handler, "wants_atoms", False):
            t = handler.type(fn, types, kw, loc, const_atoms, const_kw)
        else:
            t = handler.type(fn, types, kw, loc)
    except UnsupportedSyntaxError as e:  # refused by its own handler: numpy may do it
        refusal = e
    if t is not None:
        return t, handler
    fallback = _FALLBACK[0] if _FALLBACK else None
    if fallback is not None and fallback.accepts(fn, types, kw):
        try:
            return fallback.type(fn, types, kw, loc, const_atoms, const_kw), fallback
        except UnsupportedSyntaxError:
            pass  # the first refusal says more
    if refusal is not None:
        raise refusal
    raise unsupported(fn, types + [f"{k}={v}" for k, v in kw.items()], loc)


def lower_call(L, call):
    vals = [L.atom(a) for a in call.args]
    kw = {k: L.atom(a) for k, a in call.kwargs}
    # typed as typing saw the operands (a compile-time constant keeps its Static type)
    rtype, handler = _resolve(
        call.fn, [(a, _declared_type(L, a) or t) for a, (_, t) in zip(call.args, vals)],
        {k: (a, _declared_type(L, a) or kw[k][1]) for k, a in call.kwargs}, L.loc)
    if isinstance(rtype, T.Static):
        return ll.Constant(rtype.llvm(), None), rtype
    if isinstance(rtype, T.Raised):  # an exception made with a run-time message: its numbers
        return vals[0][0], rtype
    folded, value = _folded(call.fn, list(zip(call.args, [t for _, t in vals])), call.kwargs)
    if folded:
        return L.atom(ir.Const(value))[0], rtype
    if call.fn is operator.getitem and isinstance(vals[0][1], T.Tuple) \
            and not isinstance(vals[0][1], T.Dict):
        return _tuple_item(L, vals[0], call.args[1], rtype), rtype
    field = _named_field(call.fn, list(zip(call.args, [t for _, t in vals])), call.kwargs)
    if field is not None:
        return L.b.extract_value(vals[0][0], field), rtype
    if _joins_tuples(call.fn, [t for _, t in vals], kw):
        out = ll.Constant(rtype.llvm(), None)
        items = [(v, k) for v, t in vals for k in range(len(t.items))]
        for pos, (v, k) in enumerate(items):
            out = L.b.insert_value(out, L.b.extract_value(v, k), pos)
        return out, rtype
    if _compares_shapes(call.fn, [t for _, t in vals], kw):
        (a, at), (c, ct) = vals
        same = ll.Constant(T.BOOL.llvm(), len(at.items) == len(ct.items))
        if len(at.items) == len(ct.items):
            for k in range(len(at.items)):
                hit = L.b.icmp_signed("==", L.b.extract_value(a, k), L.b.extract_value(c, k))
                same = L.b.and_(same, hit)
        return (same if call.fn is operator.eq else L.b.not_(same)), rtype
    # constants some handlers read (axis=, a dict's key), a compile-time value's among them
    L.call_atoms = ([constant_atom(a, _declared_type(L, a)) for a in call.args],
                    {k: constant_atom(a, _declared_type(L, a)) for k, a in call.kwargs})
    value = (handler or _lookup(call.fn)).lower(L, call.fn, vals, kw, rtype)
    return value, rtype


def _named_field(fn, args, kwargs):
    """The item position ``getattr(x, "name")`` reads of a namedtuple ``x``, or None."""
    if fn is not getattr or kwargs or len(args) != 2 or not isinstance(args[0][1], T.NamedTuple):
        return None
    return args[0][1].field(getattr(args[1][0], "value", None))


def _joins_tuples(fn, types, kw):
    """``a + b`` of two tuples (``shape[:-1] + (n,)``; ``rt.seq_concat``, the containers
    pass's form of it): their items, one tuple."""
    return fn in (operator.add, rt.seq_concat) and not kw and len(types) == 2 and \
        all(type(t) is T.Tuple for t in types)


def _compares_shapes(fn, types, kw):
    """``a == b`` / ``a != b`` of two tuples of integers (shapes): one bool."""
    return fn in (operator.eq, operator.ne) and not kw and len(types) == 2 and \
        all(type(t) is T.Tuple and all(i == T.INT for i in t.items) for t in types)


def _homogeneous(t):
    return bool(t.items) and all(i == t.items[0] for i in t.items)


def _tuple_index(args, loc):
    (_, base), (atom, it) = args
    index = getattr(atom, "value", None)
    if isinstance(it, T.Static) and type(it.value) in (int, slice):
        index = it.value  # a variable the compiler knows (a folded loop counter)
    elif isinstance(atom, ir.Var) and _homogeneous(base) and isinstance(it, T.Scalar) \
            and it.dtype in ("i8", "b1"):
        return "variable"
    if type(index) is int and -len(base.items) <= index < len(base.items):
        return index % len(base.items)
    if type(index) is slice:
        return range(*index.indices(len(base.items)))
    if index is None:
        raise TupleIndexedByVariable(
            f"jit: indexing a tuple {base} with a variable (where the items differ in type, "
            "the index must be a constant in range, or the counter of a loop over a range "
            "known when compiling, of at most 64 items, which is unrolled)", loc,
            atom.name if isinstance(atom, ir.Var) else None)
    raise UnsupportedSyntaxError(
        f"jit: indexing a tuple {base} with {index!r} (a tuple index must be a constant in "
        "range)", loc)


def _tuple_item_type(args, loc):
    k = _tuple_index(args, loc)
    items = args[0][1].items
    if k == "variable":
        return items[0]
    return T.Tuple(tuple(items[j] for j in k)) if isinstance(k, range) else items[k]


def _tuple_item(L, base, atom, rtype):
    value, t = base
    k = _tuple_index([(None, t), (atom, _declared_type(L, atom) or L.atom(atom)[1])], L.loc)
    if k == "variable":  # a homogeneous tuple indexed by a number: a chain of selects
        from ..values.arrays import wrap_index
        i, it = L.atom(atom)
        n = len(t.items)
        j = wrap_index(L, S.convert(L, i, it, T.INT), ll.Constant(T.I64, n), 0)
        out = L.b.extract_value(value, 0)
        for m in range(1, n):
            hit = L.b.icmp_signed("==", j, ll.Constant(T.I64, m))
            out = L.b.select(hit, L.b.extract_value(value, m), out)
        return out
    if not isinstance(k, range):
        return L.b.extract_value(value, k)
    out = ll.Constant(rtype.llvm(), None)
    for pos, j in enumerate(k):
        out = L.b.insert_value(out, L.b.extract_value(value, j), pos)
    return out


def array_types(types):
    return [t for t in types if isinstance(t, T.Array)]


def all_numeric(types):
    return all(isinstance(t, (T.Scalar, T.Array)) for t in types)


def elem_type(t):
    return t.elem if isinstance(t, T.Array) else t


def lifted_type(types, scalar_type):
    """The type of an elementwise operation: arrays if any operand is one."""
    arrays = array_types(types)
    if not arrays or scalar_type is None:
        return scalar_type
    return T.Array(scalar_type.dtype, max(t.ndim for t in arrays))


def map_elementwise(L, vals, rtype, scalar_fn, out=None):
    """``scalar_fn(values, types)`` applied elementwise (or once, for scalars)."""
    if not isinstance(rtype, T.Array):
        return scalar_fn([v for v, _ in vals], [t for _, t in vals])
    return A.elementwise(L, lambda items: (scalar_fn([v for v, _ in items],
                                                     [t for _, t in items]), rtype.elem),
                         vals, rtype.dtype, out=out)


def exception_instance(fn, args, loc):
    """``ValueError("message")`` with constant arguments: a constant to ``raise``;
    ``ValueError(f"... {n}")``, one message formatted at run time: a ``types.Raised``."""
    if len(args) == 1 and isinstance(args[0][1], T.Message):
        return T.Raised(fn, args[0][1])
    if not all(hasattr(a, "value") for a, _ in args):
        raise UnsupportedSyntaxError(
            f"jit: {fn.__name__}(...) with arguments that are not constants", loc)
    return T.Static(fn(*[a.value for a, _ in args]))


# the handlers register themselves in TABLE
from .fused import ElementwiseShape, ElementwiseTree  # noqa: E402
from . import numbers, arrays, bitwise, build, einsum, gamma, host_calls, linalg, messages, norm, printing, type_tests  # noqa: E402,F401
from ..batching import axes, lanes, masks, per_example, indexing, values  # noqa: E402,F401
from ..derivs import linalg as derivs_linalg, norm as derivs_norm  # noqa: E402,F401  np.linalg's derivatives' helpers
from ..derivs import pieces  # noqa: E402,F401  cotangents of joined arrays
