"""The rule table: one record per primitive, keyed by the Python callable.

(JVP templates, registered with ``defjvp``, mirror the VJP templates; see
its docstring.)

A primitive's VJP is a list of *templates*, one per differentiable
parameter, each an ordinary Python function ``(g, ans, *params) -> cotangent``
where ``g`` is the cotangent of the result and ``ans`` the result (the first
two parameters are roles, bound by position: a primitive whose own
parameters are called ``g`` or ``ans`` uses other names for them).  All
templates of a primitive share one signature, which mirrors the
primitive's own (so keyword arguments at the call site bind to it); the
first ``len(templates)`` parameters are the differentiable ones, ``None``
marks one that is not.  Templates are parsed once into IR by the frontend
and inlined into the adjoint code (``templates.py``), so the generated code
shows the maths and rules are themselves transformable.

``defnondiff`` marks primitives whose result has zero derivative (or is not
a number at all): comparisons, ``len``, ``np.zeros``, ``argmax``...
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Callable, Dict, Optional, Tuple


@dataclass
class Rule:
    fn: Callable
    vjps: Tuple[Optional[Callable], ...] = ()
    #: JVP templates ``(t, ans, *params) -> tangent of the result``, one per
    #: differentiable parameter (``t`` is that parameter's tangent); see ``defjvp``
    jvps: Tuple[Optional[Callable], ...] = ()
    nondiff: bool = False
    #: the result is a container (tuple/list) rather than a number or array
    container_result: bool = False
    signature: Optional[inspect.Signature] = None
    doc: str = ""
    #: the result is the (single) argument itself, whatever its kind (a marker such as
    #: ``stop_gradient``): batching maps it to itself (batched iff the argument is), the
    #: backends lower it to the argument's value; its derivative is given by ``nondiff``
    identity: bool = False

    def zero_params(self) -> frozenset:
        """Parameters whose derivative is identically zero (their VJP template is just
        ``zeros_like(...)``: shape-only arguments of runtime helpers); the transforms
        treat them like constants."""
        cached = self.__dict__.get("_zero")
        if cached is None:
            from .templates import is_zero_template

            names = self.param_names()
            cached = frozenset(names[i] for i, t in enumerate(self.vjps)
                               if t is not None and i < len(names) and is_zero_template(t))
            self.__dict__["_zero"] = cached
        return cached

    def param_names(self):
        """Names of the primitive's parameters (template params minus g, ans)."""
        return list(self.signature.parameters)[2:] if self.signature else []


_RULES: Dict[int, Rule] = {}
_KEEPALIVE = []


def _key(fn):
    return id(fn)


def lookup(fn) -> Optional[Rule]:
    """The rule of ``fn``, or None."""
    rule = _RULES.get(_key(fn))
    return rule if rule is not None and rule.fn is fn else None


def defvjp(fn, *templates, container_result=False):
    """Register the VJP templates of ``fn`` (see the module docstring)."""
    first = next(t for t in templates if t is not None)
    sig = inspect.signature(first)
    names = list(sig.parameters)
    if len(names) < 2:
        raise ValueError(f"VJP template of {fn} must start with (g, ans, ...)")
    for t in templates:
        if t is not None and list(inspect.signature(t).parameters) != names:
            raise ValueError(f"VJP templates of {fn} must share one signature")
    _RULES[_key(fn)] = Rule(fn, tuple(templates), nondiff=False,
                            container_result=container_result, signature=sig,
                            doc=getattr(first, "__doc__", "") or "")
    _KEEPALIVE.append(fn)


def defjvp(fn, *templates):
    """Register the JVP templates of ``fn``, which must already have its VJP rule.

    One template per differentiable parameter, in the order of the VJP
    templates (``None`` where that parameter is not differentiable), each
    ``(t, ans, *params) -> contribution`` with the same parameter names and
    defaults as the VJP templates: ``t`` is the tangent of that parameter,
    ``ans`` the primal result.  The result's tangent is the sum of the
    contributions of the active parameters; each contribution must have the
    shape of ``ans`` (use ``broadcast_like(c, ans)`` where broadcasting can
    make it smaller).  Complex numbers: the JVP is the ordinary
    (R-linear) differential, e.g. ``conj`` -> ``conj(t)``, ``sin`` -> ``t * cos(x)``.
    """
    rule = lookup(fn)
    if rule is None or rule.nondiff:
        raise ValueError(f"defjvp({fn}): register its VJP first")
    names = list(rule.signature.parameters)[2:]
    for t in templates:
        if t is None:
            continue
        params = list(inspect.signature(t).parameters)
        if len(params) < 2 or params[2:] != names:
            raise ValueError(f"JVP template of {fn} must be (t, ans, {', '.join(names)})")
    rule.jvps = tuple(templates)


def defnondiff(*fns, container_result=False, identity=False):
    """Mark ``fns`` as having a zero (or no) derivative; ``identity``: each returns its
    one argument unchanged (see ``Rule.identity``)."""
    for fn in fns:
        _RULES[_key(fn)] = Rule(fn, (), nondiff=True, container_result=container_result,
                                identity=identity)
        _KEEPALIVE.append(fn)


def identity_primitives():
    """The primitives whose rule says ``identity`` (for the batching and lowering tables)."""
    from . import all_modules  # noqa: F401  (make sure every rule module ran)
    return [r.fn for r in _RULES.values() if r.identity]


def defopaque(fn, container_result=True, signature=None):
    """Register ``fn`` as a pure primitive without templates whose derivatives the
    transforms build themselves (a checkpointed call, ``s2s/core/remat.py``); ``signature``
    (``(g, ans, *params)`` like a template's) lets a transform take ``fn`` directly."""
    _RULES[_key(fn)] = Rule(fn, (), nondiff=False, container_result=container_result,
                            signature=signature)
    _KEEPALIVE.append(fn)


_IMPLEMENTATIONS: Dict[int, Tuple[Callable, Callable]] = {}


def defimplementation(fn, impl):
    """Let the transforms read the plain Python function ``impl`` in place of ``fn`` (a
    library function whose own source they cannot read, or need not): ``impl`` takes
    the same arguments and computes the same values with primitives, so its
    derivatives, batching and compilation come from theirs.  (Numba's ``@overload``.)"""
    _IMPLEMENTATIONS[_key(fn)] = (fn, impl)
    _KEEPALIVE.append(fn)


def implementation(fn) -> Optional[Callable]:
    """The function the transforms read in place of ``fn`` (``defimplementation``), or None."""
    hit = _IMPLEMENTATIONS.get(_key(fn))
    return hit[1] if hit is not None and hit[0] is fn else None


def all_implementations():
    """``(fn, impl)`` pairs of ``defimplementation`` (for ``s2s rules``)."""
    from . import all_modules  # noqa: F401
    return list(_IMPLEMENTATIONS.values())


def all_rules():
    """Every registered rule (for ``s2s rules`` and coverage tests), ``defopaque``'s aside."""
    from . import all_modules  # noqa: F401  (make sure every rule module ran)
    return [r for r in _RULES.values() if r.nondiff or r.vjps]


# --------------------------------------------------------------------------- properties
#
# Facts about a primitive that more than one pass needs live here, in its record, and
# nowhere else (the passes ask ``has(fn, prop)`` or take ``having(prop)``):
#
# * ``view``: the result may share memory with the first argument (``x[i]``,
#   ``np.reshape``...), so a write into one may be seen through the other;
# * ``aliases``: the result is or holds one of the operands themselves, not a copy
#   (``make_tuple``, ``index_set``, ``x += y``): an alias for the LLVM write check;
# * ``in_place``: the call writes into its first argument (``x[i] = v``, ``x += y``);
# * ``linear``: linear in its differentiable operands (``np.transpose``, ``unbroadcast``);
# * ``sequence``: the result is a list or tuple (a named tuple too) whose items a loop
#   may read by position (``np.split``, ``np.meshgrid``, ``np.linalg.eigh``);
# * ``inline``: plain numpy Python that a transform without its own rule for it
#   inlines like user code (``definline``): the helper's own source, or, for a library
#   function whose source s2s cannot read (``np.cumsum``), the plain Python ``code`` the
#   record holds, for the modes the record names (``jit``: the LLVM backend compiles
#   ``code`` where it has no lowering of its own, while the derivative and batching
#   rules of ``np.cumsum`` stay its own).
#
# Besides these flags a record may name *shape operands*: the positions of operands the
# primitive reads only for their type and shape, never for their value
# (``unbroadcast(g, x)``'s ``x``; ``defshape_operands``).  A pass may hand such an
# operand any value of that type and shape, or stop keeping the array for it.  It may
# also name the operand whose shape its result has (``defresult_shape``:
# ``sum_vjp(g, a)`` is shaped like ``a``), which the jit's shape analysis follows.
#
# A primitive need not have a derivative rule to have properties (``operator.setitem``
# is handled by the transforms themselves); ``Props`` is its record then.

PROPERTIES = ("view", "aliases", "in_place", "linear", "sequence", "inline")


@dataclass
class Props:
    fn: Callable
    flags: frozenset = frozenset()
    #: mode ("jvp", "vjp", "vmap", "jit") -> why that mode does not exist
    no_mode: Tuple[Tuple[str, str], ...] = ()
    #: ``inline``: the plain Python read in place of ``fn`` (None: ``fn``'s own source)
    code: Optional[Callable] = None
    #: ``inline``: the modes whose transforms read that code (where they have no rule)
    code_modes: Tuple[str, ...] = ("jvp", "vjp", "vmap", "jit")
    #: positions of the operands read only for their type and shape (``defshape_operands``)
    shape_operands: Tuple[int, ...] = ()
    #: the position of the operand whose shape the result has, where that operand is an
    #: array and the result one of its rank (``defresult_shape``)
    result_shape: Optional[int] = None
    #: ``check(y, *args)`` raising what ``fn`` raises where numpy's elementwise function
    #: returns inf/nan (``defresult_check``)
    result_check: Optional[Callable] = None


_PROPS: Dict[int, Props] = {}


def _props(fn) -> Props:
    hit = _PROPS.get(_key(fn))
    if hit is None or hit.fn is not fn:
        hit = _PROPS[_key(fn)] = Props(fn)
        _KEEPALIVE.append(fn)
    return hit


def defprops(*fns, **flags):
    """Give ``fns`` the properties set to true in ``flags`` (names in ``PROPERTIES``)."""
    bad = set(flags) - set(PROPERTIES)
    if bad:
        raise ValueError(f"unknown primitive properties {sorted(bad)}")
    on = frozenset(k for k, v in flags.items() if v)
    for fn in fns:
        p = _props(fn)
        p.flags = p.flags | on


def has(fn, prop) -> bool:
    """Whether primitive ``fn`` has property ``prop`` (one of ``PROPERTIES``)."""
    try:
        hit = _PROPS.get(_key(fn))
    except TypeError:
        return False
    return hit is not None and hit.fn is fn and prop in hit.flags


def having(prop) -> frozenset:
    """The primitives with property ``prop``, as a set of callables (for ``in`` tests of
    hot passes; taken after the rule modules have run)."""
    from . import all_modules  # noqa: F401
    return frozenset(p.fn for p in _PROPS.values() if prop in p.flags)


def properties(fn) -> frozenset:
    hit = _PROPS.get(_key(fn))
    return hit.flags if hit is not None and hit.fn is fn else frozenset()


def defshape_operands(fn, *positions):
    """State that ``fn`` reads its operands at ``positions`` (positional, from 0) only for
    their type and shape, never for their values."""
    _props(fn).shape_operands = tuple(sorted(set(positions)))


def shape_operands(fn) -> Tuple[int, ...]:
    """The positions of ``fn``'s operands read only for their type and shape (``()`` for
    a callable with no record)."""
    hit = _PROPS.get(_key(fn))
    return hit.shape_operands if hit is not None and hit.fn is fn else ()


def defresult_shape(fn, position):
    """State that ``fn``'s result has the shape of its operand at ``position``
    (positional, from 0) where that operand is an array and the result an array of its
    rank."""
    _props(fn).result_shape = position


def result_shape(fn) -> Optional[int]:
    """The position ``defresult_shape`` gave ``fn`` (None: not stated)."""
    hit = _PROPS.get(_key(fn))
    return hit.result_shape if hit is not None and hit.fn is fn else None


def defresult_check(check, *fns):
    """State that ``fns`` raise where the numpy function computing them elementwise
    returns inf or nan, as ``check(y, *args)`` does for a result ``y`` (it returns ``y``
    or raises): ``math.exp``'s ``OverflowError``, ``math.sqrt``'s ``ValueError``."""
    for fn in fns:
        _props(fn).result_check = check


def result_check(fn) -> Optional[Callable]:
    """The check of ``fn``'s results (``defresult_check``), or None."""
    hit = _PROPS.get(_key(fn))
    return hit.result_check if hit is not None and hit.fn is fn else None


def definline(*fns, code=None, modes=("jvp", "vjp", "vmap", "jit")):
    """Mark run-time helpers as plain numpy Python s2s may read: a transform that has no
    rule of its own for one (``vmap`` without a batching rule, ``jit`` without a
    lowering, ``grad`` without templates) inlines its source instead, so that mode
    comes from the primitives the helper calls.

    ``code``: for one library function whose source s2s does not read (``np.cumsum``),
    a plain Python function with its signature and numpy's results (values, dtype,
    shape and exceptions) that is read in its place; ``modes``: the transforms that
    read it (a numpy function keeps its derivative templates: ``modes=("jit",)``)."""
    if code is not None and len(fns) != 1:
        raise ValueError("definline(fn, code=...) takes one function")
    if set(modes) - {"jvp", "vjp", "vmap", "jit"}:
        raise ValueError(f"unknown modes {modes!r}")
    defprops(*fns, inline=True)
    for fn in fns:
        p = _props(fn)
        p.code, p.code_modes = code, tuple(modes)


def inlined(fn, mode=None) -> bool:
    """Whether ``fn`` is read as code by ``mode``'s transform where it has no rule of its
    own (``mode=None``: by every transform)."""
    if not has(fn, "inline"):
        return False
    modes = _PROPS[_key(fn)].code_modes
    return len(modes) == 4 if mode is None else mode in modes


def inline_code(fn):
    """The plain Python a transform reads for the ``inline`` primitive ``fn``."""
    hit = _PROPS.get(_key(fn)) if has(fn, "inline") else None
    return hit.code if hit is not None and hit.code is not None else fn


def defno_mode(mode, why, *fns):
    """State why ``fns`` have no ``mode`` (``"jvp"``, ``"vjp"``, ``"vmap"``, ``"jit"``):
    ``s2s rules`` shows the reason, the systematic test accepts it."""
    if mode not in ("jvp", "vjp", "vmap", "jit"):
        raise ValueError(f"unknown mode {mode!r}")
    for fn in fns:
        p = _props(fn)
        p.no_mode = tuple((m, w) for m, w in p.no_mode if m != mode) + ((mode, why),)


def no_mode(fn, mode) -> str:
    """The stated reason ``fn`` has no ``mode``, or ``""``."""
    try:
        hit = _PROPS.get(_key(fn))
    except TypeError:
        return ""
    if hit is None or hit.fn is not fn:
        return ""
    return dict(hit.no_mode).get(mode, "")
