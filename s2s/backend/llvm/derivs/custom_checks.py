"""The run-time checks around user-defined derivative rules (``s2s_runtime.
custom_checks``) compiled: what the types decide is checked when the code is
compiled, array lengths when it runs, with the errors the checks raise in Python.

* ``check_fwd_output(result, rule)``: ``result`` must be a pair; the value is
  ``result`` itself.
* ``check_jvp_output(result, rule)``: a pair whose two items have the same
  structure and (per array) rank; their shapes are compared at run time.
* ``check_bwd_output(cts, primals, rule)``: a tuple with one cotangent per
  primal, each of the primal's structure, rank and (at run time) shape; a
  ``None`` cotangent becomes zeros shaped like its primal (``zeros_like``).
Also ``unpack_vjp_transpose(ct, cts, x)`` for a tuple ``x`` (the second derivative of
tuple unpacking, as in a rule's ``(x,), (t,) = primals, tangents``): ``ct``'s first
``len(cts)`` items (for a list ``x``, ``a, b = np.split(y, 2)``: ``ct``'s items);
``getitem_vjp_transpose(ct, g, x, k)`` for a tuple ``x`` and a constant ``k``: ``ct[k]`` (for an array ``x``: ``unbroadcast(ct[k], g)``).
A check that the types decide against raises ``TypeError``/``ValueError`` naming
the rule when the function is compiled for those argument types.
"""
from __future__ import annotations

import operator

from llvmlite import ir as ll

import s2s_runtime as rt
from s2s_runtime import check_bwd_output, check_fwd_output, check_jvp_output

from ..values import arrays as A
from ..typing import types as T
from ..ops.calls import TABLE, register
from .adjoints import Unbroadcast, ZerosLike


def _label(atoms) -> str:
    value = getattr(atoms[-1], "value", None) if atoms else None
    return value if isinstance(value, str) else "custom rule"


def _leaf(t) -> bool:
    return isinstance(t, (T.Scalar, T.Array))


def _same_structure(a, b) -> bool:
    """Whether values of types ``a`` and ``b`` have the same tree structure and ranks."""
    if _leaf(a) and _leaf(b):
        return getattr(a, "ndim", 0) == getattr(b, "ndim", 0)
    if isinstance(a, T.Tuple) and isinstance(b, T.Tuple):
        return len(a.items) == len(b.items) and all(
            _same_structure(x, y) for x, y in zip(a.items, b.items))
    return isinstance(a, T.NoneType) and isinstance(b, T.NoneType)


def _check_shapes(L, a, at, b, bt, message):
    """Raise ``ValueError(message)`` at run time where array leaves' shapes differ."""
    if isinstance(at, T.Array) and isinstance(bt, T.Array):
        differs = A.differs(L, A.shape_list(L, a, at), A.shape_list(L, b, bt))
        L.check(differs, ValueError, message.replace("{", "{{").replace("}", "}}"))
    elif isinstance(at, T.Tuple):
        for k, (x, y) in enumerate(zip(at.items, bt.items)):
            _check_shapes(L, L.b.extract_value(a, k), x, L.b.extract_value(b, k), y, message)


class _Check:
    wants_atoms = True


class CheckFwd(_Check):
    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        t = types[0]
        if not (isinstance(t, T.Tuple) and len(t.items) == 2):
            raise TypeError(f"{_label(atoms)}: a custom_vjp forward function must return a "
                            f"pair (primal_out, residuals), got {t}")
        return t

    def lower(self, L, fn, vals, kw, rtype):
        return vals[0][0]


class CheckJvp(_Check):
    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        t = types[0]
        rule = _label(atoms)
        if not (isinstance(t, T.Tuple) and len(t.items) == 2):
            raise TypeError(f"{rule}: a custom_jvp rule must return a pair "
                            f"(primal_out, tangent_out), got {t}")
        if not _same_structure(*t.items):
            raise ValueError(f"{rule}: the tangent output has type {t.items[1]}, expected "
                             f"the structure and rank of {t.items[0]}")
        return t

    def lower(self, L, fn, vals, kw, rtype):
        v, t = vals[0]
        rule = _label(L.call_atoms[0])
        _check_shapes(L, L.b.extract_value(v, 0), t.items[0], L.b.extract_value(v, 1),
                      t.items[1], f"{rule}: the tangent output has a shape other than the "
                      "primal output's")
        return v


class CheckBwd(_Check):
    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        cts, primals = types[0], types[1]
        rule = _label(atoms)
        n = len(primals.items) if isinstance(primals, T.Tuple) else 1
        if not isinstance(cts, T.Tuple):
            raise TypeError(f"{rule}: a custom_vjp backward function must return a tuple with "
                            f"one cotangent per differentiable argument ({n}), got {cts}")
        if len(cts.items) != n:
            raise TypeError(f"{rule}: a custom_vjp backward function must return one "
                            f"cotangent per differentiable argument: expected {n}, got "
                            f"{len(cts.items)}")
        items = []
        for i, (c, p) in enumerate(zip(cts.items, primals.items)):
            if isinstance(c, T.NoneType):
                z = ZerosLike().type(None, [p], {}, loc)
                if z is None:
                    return None
                items.append(z)
            elif not _same_structure(p, c):
                raise ValueError(f"{rule}: the cotangent of argument {i} has type {c}, "
                                 f"expected the structure and rank of {p}")
            else:
                items.append(c)
        return T.Tuple(tuple(items))

    def lower(self, L, fn, vals, kw, rtype):
        (cts, ct), (ps, pt) = vals[0], vals[1]
        rule = _label(L.call_atoms[0])
        out = ll.Constant(rtype.llvm(), None)
        for k, (c, p) in enumerate(zip(ct.items, pt.items)):
            pv = L.b.extract_value(ps, k)
            if isinstance(c, T.NoneType):
                item = ZerosLike().lower(L, None, [(pv, p)], {}, rtype.items[k])
            else:
                item = L.b.extract_value(cts, k)
                _check_shapes(L, pv, p, item, c, f"{rule}: the cotangent of argument {k} "
                              "has a shape other than the argument's")
            out = L.b.insert_value(out, item, k)
        return out


class UnpackVjpTranspose:
    """For a tuple ``x``: ``ct``'s first ``len(cts)`` items; for a list ``x`` (and a list
    ``ct`` of its length, checked when run): ``ct``'s items as a tuple."""

    def type(self, fn, types, kw, loc):
        if len(types) != 3:
            return None
        ct, cts, x = types
        if isinstance(x, T.List) and isinstance(ct, T.List) and isinstance(cts, T.Tuple):
            item = ct.elem if ct.elem is not None else T.F64T
            return T.Tuple((item,) * len(cts.items))
        if not (isinstance(x, T.Tuple) and isinstance(ct, T.Tuple)
                and isinstance(cts, T.Tuple) and len(ct.items) >= len(cts.items)):
            return None
        return T.Tuple(ct.items[:len(cts.items)])

    def lower(self, L, fn, vals, kw, rtype):
        ct, ctt = vals[0]
        out = ll.Constant(rtype.llvm(), None)
        if isinstance(ctt, T.List):
            from ..values import lists as Li
            data, _, n = Li.fields(L, ct)
            L.check(L.b.icmp_signed("!=", n, A.i64(len(rtype.items))), ValueError,
                    "s2s: a cotangent list of {0} items for %d names" % len(rtype.items), (n,))
            for k in range(len(rtype.items)):
                out = L.b.insert_value(out, Li.load(L, data, A.i64(k), ctt), k)
            return out
        for k in range(len(rtype.items)):
            out = L.b.insert_value(out, L.b.extract_value(ct, k), k)
        return out


class GetitemVjpTranspose:
    """For a tuple ``x``: ``ct[k]``; for an array: ``unbroadcast(ct[index], g)`` (the
    read of ``ct`` at the slot, summed to ``g``'s shape), with the array read and the
    unbroadcast lowerings."""
    wants_atoms = True

    def type(self, fn, types, kw, loc, atoms=(), kw_atoms=None):
        if len(types) != 4:
            return None
        ct, g, x, index = types
        if isinstance(x, T.Array) and isinstance(ct, T.Array):
            item = _read_type(ct, index, loc, atoms)
            return None if item is None else Unbroadcast().type(rt.unbroadcast, [item, g], {},
                                                                loc)
        if not (isinstance(x, T.Tuple) and isinstance(ct, T.Tuple)):
            return None
        k = getattr(atoms[3], "value", None)
        n = len(ct.items)
        return ct.items[k] if type(k) is int and -n <= k < n else None

    def lower(self, L, fn, vals, kw, rtype):
        (ct, t), g, x, (index, it) = vals
        if isinstance(x[1], T.Array):
            atoms = L.call_atoms[0]
            item_t = _read_type(t, it, L.loc, atoms)
            L.call_atoms = ([atoms[0], atoms[3]], {})  # what the read's handler may look at
            item = TABLE[operator.getitem].lower(L, operator.getitem, [(ct, t), (index, it)],
                                                 {}, item_t)
            return Unbroadcast().lower(L, rt.unbroadcast, [(item, item_t), g], {}, rtype)
        return L.b.extract_value(ct, L.call_atoms[0][3].value % len(t.items))


def _read_type(ct, index, loc, atoms):
    """The type of ``ct[index]`` by the read's own handler (basic or advanced index)."""
    read = TABLE[operator.getitem]
    if getattr(read, "wants_atoms", False):
        return read.type(operator.getitem, [ct, index], {}, loc, [atoms[0], atoms[3]], {})
    return read.type(operator.getitem, [ct, index], {}, loc)


register(GetitemVjpTranspose(), rt.getitem_vjp_transpose)
register(UnpackVjpTranspose(), rt.unpack_vjp_transpose)
register(CheckFwd(), check_fwd_output)
register(CheckJvp(), check_jvp_output)
register(CheckBwd(), check_bwd_output)
