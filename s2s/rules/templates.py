"""Rule templates -> IR, and inlining them at a call site.

A template is an ordinary Python function (usually a one-line lambda in a
rule module).  It is lowered once by the frontend, like user code, and
cached.  ``instantiate`` substitutes the call site's atoms for the
template's parameters, renames every other name to a fresh temporary of the
target function, and returns the statements plus the atom holding the
result.  Templates are straight-line code ending in ``return``.
"""
from __future__ import annotations

import math
import operator
from dataclasses import replace
from typing import Dict, List, Tuple

import numpy as np

from s2s_runtime import initial_or_one, power, unbroadcast

from ..ir import nodes as ir
from ..ir.names import NameGen

_CACHE: Dict[int, Tuple[object, ir.Function]] = {}

#: ``lower(fn) -> (ir.Function, freevars)``: the frontend's lowering of a Python function,
#: which reads a template like user code; set by ``frontend/lower.py`` when it is imported
#: (``set_template_lowering``), so this layer does not import the one above it
_lower = None


def set_template_lowering(lower) -> None:
    """Register the function that lowers a rule template to IR (``frontend.lower.lower``)."""
    global _lower
    _lower = lower


def template_ir(template) -> ir.Function:
    hit = _CACHE.get(id(template))
    if hit is not None and hit[0] is template:
        return hit[1]
    if _lower is None:
        raise RuntimeError("rule templates are lowered by s2s.frontend.lower (import s2s)")
    func, freevars = _lower(template)
    if freevars:
        raise ValueError(f"rule template {template} reads free values {sorted(freevars)}")
    for s in func.body[:-1]:
        if not isinstance(s, (ir.Assign, ir.Unpack)):
            raise ValueError(f"rule template {template} must be straight-line code")
    if not func.body or not isinstance(func.body[-1], ir.Return):
        raise ValueError(f"rule template {template} must end with return")
    _CACHE[id(template)] = (template, func)
    return func


#: shape-only helpers evaluated at instantiation when every argument is a constant
#: (``initial_or_one(None)`` -> 1, so ``g * 1`` -> ``g``: np.prod without initial=)
_CONSTANT_HELPERS = {initial_or_one}

_FOLDABLE = {operator.add, operator.sub, operator.mul, operator.truediv, operator.pow,
             operator.neg, math.log, math.sqrt, np.log, np.sqrt}

#: ``x ** y`` (Python's: it may raise ZeroDivisionError), and ``power`` (the same
#: number, numpy's inf instead of that error; derivative templates call it)
POWERS = (operator.pow, power)


#: primitives whose result is a real scalar when every operand is one
SCALAR_OPS = {operator.add, operator.sub, operator.mul, operator.truediv, operator.neg,
              operator.pos, abs, float, min, max, operator.lt, operator.le, operator.gt,
              operator.ge, operator.eq, operator.ne} | {
    getattr(math, n) for n in ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
                               "tanh", "asinh", "acosh", "atanh", "exp", "expm1", "log",
                               "log1p", "log2", "log10", "sqrt", "hypot", "atan2", "erf",
                               "erfc", "fabs", "degrees", "radians")}


#: elementwise binary primitives whose VJP templates undo broadcasting with
#: ``unbroadcast(E, operand)``, ``E`` shaped like the result
BROADCASTING_BINARY = {operator.add, operator.sub, operator.mul, operator.truediv, operator.pow,
                       power, np.add, np.subtract, np.multiply, np.divide, np.power}


def operands_shaped_like_result(call, numeric) -> frozenset:
    """Names of ``call``'s operands that certainly have its result's shape: in ``x op c``
    (``op`` broadcasting, ``c`` a number literal, ``x`` a number or array, in
    ``numeric``), ``x``.  Their ``unbroadcast`` in the VJP is the identity.  Not for a
    power unless ``c`` is an integer exponent: a real number to a real power may be
    complex (``(-2.0) ** 0.5``), and ``unbroadcast`` keeps a real operand's cotangent real."""
    if call.fn not in BROADCASTING_BINARY or len(call.args) != 2 or call.kwargs:
        return frozenset()
    a, b = call.args
    if call.fn in (operator.pow, power, np.power):
        integer = isinstance(b, ir.Const) and type(b.value) is int
        return frozenset((a.name,)) if integer and isinstance(a, ir.Var) and a.name in numeric \
            else frozenset()
    for x, c in ((a, b), (b, a)):
        if isinstance(x, ir.Var) and x.name in numeric and isinstance(c, ir.Const) \
                and _is_number(c.value):
            return frozenset((x.name,))
    return frozenset()


def _is_real_scalar(a, scalars) -> bool:
    if isinstance(a, ir.Const):
        return _is_number(a.value)
    return a.name in scalars


def is_real_scalar_op(call, scalars, numbers=frozenset()) -> bool:
    """True when ``call`` certainly gives a real scalar (numbers in, numbers out).

    ``numbers``: names that certainly hold numbers, real or complex (``x ** 0.5`` of a
    negative Python float is complex).  The builtins ``abs``, ``min`` and ``max`` of
    two or more of those still give a real scalar: ``abs`` of a complex number is real,
    and ``min``/``max`` raise ``TypeError`` on a Python complex rather than return.
    (A real scalar to a real power is a Python complex or a real numpy scalar, never
    a numpy complex, which would compare.)"""
    if not isinstance(call, ir.Call) or call.kwargs:
        return False
    if call.fn is len:  # an int, whatever it measures
        return len(call.args) == 1
    if call.fn in POWERS:  # real ** int stays real; real ** real may be complex
        return (len(call.args) == 2 and _is_real_scalar(call.args[0], scalars)
                and isinstance(call.args[1], ir.Const) and type(call.args[1].value) is int)
    if numbers and (call.fn is abs and len(call.args) == 1
                    or call.fn in (min, max) and len(call.args) >= 2):
        return all(_is_real_scalar(a, scalars) or isinstance(a, ir.Var) and a.name in numbers
                   for a in call.args)
    return call.fn in SCALAR_OPS and all(_is_real_scalar(a, scalars) for a in call.args)


def is_real_power(call, scalars) -> bool:
    """``x ** y`` of real scalars: a number, real or (a Python) complex."""
    return (isinstance(call, ir.Call) and call.fn in POWERS and not call.kwargs
            and len(call.args) == 2 and all(_is_real_scalar(a, scalars) for a in call.args))


def simplify(call: ir.Call, scalars=frozenset(), shaped=frozenset()):
    """Fold arithmetic and ``==`` (as 0/1) on constants and the identities ``x ** 1``,
    ``x * 1``, ``1 * x``; write ``power(x, c)`` of a constant ``c >= 0`` as ``x ** c``
    (it cannot raise ZeroDivisionError); drop ``unbroadcast`` of a real scalar onto a
    real scalar, and onto an operand in ``shaped`` (one with the result's shape:
    ``operands_shaped_like_result``).

    Returns an atom when the call simplifies away, else the call.
    """
    args = call.args
    if call.kwargs:
        return call
    if call.fn is power and len(args) == 2 and isinstance(args[1], ir.Const) \
            and _is_number(args[1].value) and args[1].value >= 0:
        call = ir.Call(operator.pow, args)  # x ** c, c >= 0: never a ZeroDivisionError
    if call.fn is unbroadcast and len(args) == 2 and (
            all(_is_real_scalar(a, scalars) for a in args)
            or (isinstance(args[1], ir.Var) and args[1].name in shaped)):
        return args[0]
    if call.fn in _CONSTANT_HELPERS and all(isinstance(a, ir.Const) for a in args):
        return ir.Const(call.fn(*(a.value for a in args)))
    if call.fn is operator.eq and len(args) == 2 and all(
            isinstance(a, ir.Const) and _is_number(a.value) for a in args):
        return ir.Const(int(args[0].value == args[1].value))  # (0/1 folds on: y - 1 + (y == 0))
    if call.fn in _FOLDABLE and all(isinstance(a, ir.Const) and _is_number(a.value) for a in args):
        try:
            value = call.fn(*(a.value for a in args))
        except (ArithmeticError, ValueError):
            return call
        # a Python number (np.log(2.0) is a float64 scalar, which would make a float32
        # computation float64; a Python float is weak, as the template's literal was)
        return ir.Const(value.item() if isinstance(value, np.generic) else value)
    if call.fn is operator.pow and _is_const(args[1], 1):
        return args[0]
    if call.fn is operator.mul and _is_const(args[1], 1):
        return args[0]
    if call.fn is operator.mul and _is_const(args[0], 1):
        return args[1]
    return call


def _is_number(v) -> bool:
    return type(v) in (int, float)


def _is_const(a, value) -> bool:
    return isinstance(a, ir.Const) and _is_number(a.value) and a.value == value


def is_zero_template(template) -> bool:
    """A template whose result is ``zeros_like(...)``: a symbolically zero derivative."""
    from s2s_runtime import zeros_like

    body = template_ir(template).body
    return (len(body) == 2 and isinstance(body[0], ir.Assign)
            and isinstance(body[0].value, ir.Call) and body[0].value.fn is zeros_like
            and isinstance(body[1], ir.Return) and body[1].value == body[0].target)


def vjp_reads_result(rule) -> bool:
    """Whether a VJP template of ``rule`` reads ``ans``, the primal result (``exp``:
    ``g * ans``), so that its adjoint needs the result's values as they were made."""
    for template in rule.vjps:
        if template is None:
            continue
        for s in template_ir(template).body:
            if any(isinstance(a, ir.Var) and a.name == "ans" for a in ir.stmt_uses(s)):
                return True
    return False


def _rename(atom, env):
    if isinstance(atom, ir.Var):
        return env.get(atom.name, atom)
    return atom


def instantiate(template, bindings: Dict[str, ir.Atom], names: NameGen,
                loc: ir.Loc, scalars=frozenset(), shaped=frozenset()) -> Tuple[List, ir.Atom]:
    """Statements computing ``template(**bindings)`` and the result atom.

    ``bindings`` maps every template parameter name to an atom.  New
    temporaries are drawn from ``names.temp()`` so the emitter may fold them.
    ``scalars`` names the variables known to hold real scalars; with it,
    ``unbroadcast(e, x)`` of a real scalar ``e`` onto a real scalar ``x`` is
    just ``e``; so is ``unbroadcast(e, x)`` for ``x`` in ``shaped``.
    """
    func = template_ir(template)
    env: Dict[str, ir.Atom] = dict(bindings)
    scalars = set(scalars)
    out = []
    for s in func.body:
        if isinstance(s, ir.Return):
            return out, _rename(s.value, env)
        if isinstance(s, ir.Assign):
            value = s.value
            if isinstance(value, ir.Call):
                value = replace(value, args=tuple(_rename(a, env) for a in value.args),
                                kwargs=tuple((k, _rename(v, env)) for k, v in value.kwargs))
                value = simplify(value, scalars, shaped)
            else:
                value = _rename(value, env)
            if not isinstance(value, ir.Call):
                env[s.target.name] = value
                continue
            target = ir.Var(names.temp())
            env[s.target.name] = target
            if is_real_scalar_op(value, scalars):
                scalars.add(target.name)
            out.append(ir.Assign(target, value, loc))
        else:  # Unpack
            targets = tuple(ir.Var(names.temp()) for _ in s.targets)
            src = _rename(s.value, env)
            for old, new in zip(s.targets, targets):
                env[old.name] = new
            out.append(ir.Unpack(targets, src, loc))
    raise AssertionError("template without return")
