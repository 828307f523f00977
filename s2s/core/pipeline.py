"""The transformation pipeline, from a Python function to generated functions.

``front(fn)``: frontend (lower) -> inline user calls -> single exit; cached
per function object.  ``reverse(...)``: SSA -> copy propagation -> reverse
mode -> DCE.  Each
step is a pass over the IR with a stated contract (see the pass modules).
"""
from __future__ import annotations

import functools
import gc
import inspect
import threading
import weakref
from dataclasses import dataclass
from typing import Dict, Sequence

import s2s_runtime as rt

from ..ad import custom_rules
from ..ad.forward import Forward
from ..ad.remat import primal_only_pushforwards
from ..ad.reverse import ParamInfo, Reverse
from ..ad.split import split
from .protocol import fixed_ir, ir_hook
from ..emit.load import load
from ..emit.python import Emitted, emit_function
from ..frontend.lower import lower_with_statics, statics_unchanged
from ..frontend.scope import FreeVar
from ..ir import nodes as ir
from ..passes.checkpoint_loops import checkpointed_loops
from . import remat_loop  # noqa: F401  (sets the LoopRemat checkpointed_loops makes)
from ..passes.containers import functional_containers
from ..passes.copyprop import copy_propagate
from ..passes.negations import fold_negations
from ..passes.dce import dce
from ..passes.dict_loops import dict_loops_unrolled, loops_over_parameters
from ..passes.index_writes import batched_inplace_as_operators, writes_as_values
from ..passes.per_example_loops import per_example_loops
from ..passes.helpers import helpers_inlined, needs_helpers
from ..passes.inline import inline_calls, needs_values
from ..passes.out_args import out_as_writes, scatter_adds_as_writes
from ..passes.single_exit import single_exit
from ..passes.sites import expand as expand_sites, has_sites
from ..passes.ssa import to_ssa
from ..rules import lookup
from ..rules.registry import implementation, inline_code


@dataclass(frozen=True)
class Front:
    """A user function in IR form and its free variables (read at every call).

    ``statics`` are the free names resolved as program text (functions,
    classes, modules), of the function and every callee inlined into it;
    ``current()`` says whether they all still hold the same objects.
    """

    func: ir.Function
    freevars: Dict[str, object]
    statics: tuple = ()
    #: whether ``func`` calls transforms (``grad(f)(x)``), to be expanded per kinds
    sites: bool = False
    #: whether ``func`` calls values (``f(x)``, ``m.forward(x)``) the inliner may see
    #: through once the arguments are known (``passes/inline.py``), or loops over a
    #: parameter that may hold a dict (one copy per key, ``passes/dict_loops.py``)
    values: bool = False

    def __post_init__(self):
        # each (holder, name, object) once: a module's np is looked up by every line using it
        unique = {(id(h), n, id(v)): (h, n, v) for h, n, v in self.statics}
        object.__setattr__(self, "statics", tuple(unique.values()))

    def current(self) -> bool:
        return statics_unchanged(self.statics)


#: one process-wide lock around compilation (Numba's global compiler lock): the
#: frontend's, the rules' and the backends' caches are filled under it, so threads that
#: first call a function with different signatures compile one after the other and share
#: what each cached; calls that hit a cache take no lock
COMPILE_LOCK = threading.RLock()


class _CollectorPause:
    """Python's cyclic garbage collector paused while compiling (outermost call only).

    A transform allocates millions of small IR and libcst objects that all stay alive
    until it ends, and every collection rescans them: a fifth of a long function's first
    ``grad`` went to collections that found next to nothing.  Reference counting still
    frees what is dropped; the collector runs again as soon as compilation ends."""
    depth = 0  # nesting of compiling() calls (changed only under COMPILE_LOCK)
    resume = False  # whether the collector was enabled when the outermost one began

    @classmethod
    def enter(cls):
        if cls.depth == 0:
            cls.resume = gc.isenabled()
            gc.disable()
        cls.depth += 1

    @classmethod
    def leave(cls):
        cls.depth -= 1
        if cls.depth == 0 and cls.resume:
            gc.enable()


def compiling(fn):
    """``fn`` run while holding ``COMPILE_LOCK``, the garbage collector paused."""
    @functools.wraps(fn)
    def locked(*args, **kwargs):
        with COMPILE_LOCK:
            _CollectorPause.enter()
            try:
                return fn(*args, **kwargs)
            finally:
                _CollectorPause.leave()
    return locked


_LOWERED = weakref.WeakKeyDictionary()
_FRONT = weakref.WeakKeyDictionary()


@compiling
def lowered_full(fn):
    fn = implementation(fn) or fn  # a library function s2s reads as its implementation
    fixed = fixed_ir(fn)
    if fixed is not None:  # a callable that carries its IR (a vjp closure, ...)
        func, freevars = fixed
        return func, freevars, ()
    hit = _LOWERED.get(fn)
    if hit is None or not statics_unchanged(hit[2]):
        hit = lower_with_statics(fn)
        _LOWERED[fn] = hit
    return hit


def lowered(fn):
    """``(ir_function, freevars)`` of ``fn`` from the frontend, cached per function."""
    return lowered_full(fn)[:2]


_PRIMITIVE_FRONT: Dict[int, Front] = {}


def primitive_signature(fn):
    """The signature of a primitive given to a transform directly (``grad(np.sin)``).

    Taken from its VJP templates (which mirror the primitive's parameters), or for a
    primitive without a derivative, or one every transform reads as plain code
    (``rules.registry.definline``), from ``inspect`` (its positional parameters); None
    if ``fn`` is Python code or has neither a rule nor such code.
    """
    rule = lookup(fn)
    if hasattr(fn, "__code__"):
        return None
    code = inline_code(fn)
    if rule is None and code is fn:
        return None
    if rule is None or rule.signature is None:  # no derivative (np.argmax), or read as
        try:                                    # code (np.kron): numpy's own signature
            sig = inspect.signature(fn if rule is not None else code)
        except (TypeError, ValueError):
            return None
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in sig.parameters.values()):
            return None
        return sig.replace(parameters=[p for p in sig.parameters.values()  # not out=...,
                                       if p.kind is not p.KEYWORD_ONLY])  # where=, dtype=
    return inspect.Signature(list(rule.signature.parameters.values())[2:])


def _one_call_front(fn) -> Front:
    """A transformed function whose IR depends on its arguments' kinds (``vmap(f)``,
    ``jacrev(f)``; ``core/protocol.py``), transformed directly: the IR
    ``def f(x, y): return <fn>(x, y)`` by its signature, whose call is a site."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        sig = None
    if sig is None or any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                          for p in sig.parameters.values()):
        from ..errors import UnsupportedSyntaxError
        raise UnsupportedSyntaxError(
            f"{getattr(fn, '__name__', fn)!r} has no fixed signature (*args); call it "
            "from a function with named parameters")
    hit = _ONE_CALL.get(fn)
    if hit is None:
        hit = _ONE_CALL[fn] = _call_front(fn, sig)
    return hit


_ONE_CALL = weakref.WeakKeyDictionary()


@compiling
def _primitive_front(fn) -> Front:
    """IR ``def sin(x): return np.sin(x)`` for a primitive transformed directly."""
    hit = _PRIMITIVE_FRONT.get(id(fn))
    if hit is None:
        hit = _PRIMITIVE_FRONT[id(fn)] = _call_front(fn, primitive_signature(fn))
        _KEEP.append(fn)
    return hit


def _call_front(fn, sig) -> Front:
    """The front of ``def name(<sig>): return fn(<sig's parameters>)``."""
    params, args, kwargs = [], [], []
    for p in sig.parameters.values():
        default = None if p.default is p.empty else ir.Const(p.default)
        kwonly = p.kind is p.KEYWORD_ONLY
        params.append(ir.Param(ir.Var(p.name), default, kwonly))
        if kwonly:
            kwargs.append((p.name, ir.Var(p.name)))
        else:
            args.append(ir.Var(p.name))
    result = ir.Var("t1")
    body = (ir.Assign(result, ir.Call(fn, tuple(args), tuple(kwargs))), ir.Return(result))
    name = "".join(ch if ch.isalnum() else "_" for ch in getattr(fn, "__name__", "f"))
    func = ir.Function(name, tuple(params), body, temps=frozenset({"t1"}))
    return Front(func, {}, sites=has_sites(func))


_KEEP = []


@compiling
def front(fn) -> Front:
    if primitive_signature(fn) is not None:
        return _primitive_front(fn)
    if ir_hook(fn) is not None and fixed_ir(fn) is None:
        return _one_call_front(fn)
    hit = _FRONT.get(fn)
    if hit is None or not hit.current():
        hit = _front_of_sibling(fn)
    if hit is None or not hit.current():
        statics = []

        def lowered(f):
            func, freevars, st = lowered_full(f)
            statics.extend(st)
            return func, freevars

        func, freevars = lowered(fn)
        func, freevars = inline_calls(func, freevars, lowered, statics=statics)
        # (loops over dicts the function makes: one copy per key)
        func = dict_loops_unrolled(single_exit(functional_containers(out_as_writes(func))))
        hit = Front(func, freevars, tuple(statics), has_sites(func),
                    needs_values(func) or loops_over_parameters(func))
        _FRONT[fn] = hit
        _remember_sibling(fn, hit)
    return hit


#: code object -> (closure cells, globals, defaults, Front) of the last function made
#: from it, so a closure made afresh at every call (``grad(lambda x: ...)`` inside a
#: function) reuses the same IR, and with it the generated code cached for that IR
_BY_CODE: Dict[object, tuple] = {}


def _identity(fn) -> tuple:
    """What besides its code and cells a function's IR depends on (compared with ``is``)."""
    return (fn.__globals__, *(fn.__defaults__ or ()),
            *(v for _, v in sorted((fn.__kwdefaults__ or {}).items(), key=lambda kv: kv[0])))


def _same(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def _remember_sibling(fn, fr: Front) -> None:
    code = getattr(fn, "__code__", None)
    if code is not None and inspect.isfunction(fn):
        _BY_CODE[code] = (fn.__closure__ or (), _identity(fn), fr)


def _front_of_sibling(fn):
    """The Front of an earlier function with the same code, globals, defaults and
    static closure values, its cells rebound to ``fn``'s; None if there is none."""
    if not inspect.isfunction(fn):
        return None
    hit = _BY_CODE.get(fn.__code__)
    if hit is None or not _same(hit[1], _identity(fn)):
        return None
    old_cells, _, fr = hit
    new_of = {id(old): new for old, new in zip(old_cells, fn.__closure__ or ())}
    statics = []
    for holder, name, value in fr.statics:
        if name is None and id(holder) in new_of:
            holder = new_of[id(holder)]
            try:
                if holder.cell_contents is not value:
                    return None
            except ValueError:
                return None
        statics.append((holder, name, value))
    freevars = {}
    for name, fv in fr.freevars.items():
        if fv.slot[0] == "cell" and fv.slot[1] in new_of:
            fv = FreeVar.cell(fv.name, new_of[fv.slot[1]])
        freevars[name] = fv
    rebound = Front(fr.func, freevars, tuple(statics), fr.sites, fr.values)
    _FRONT[fn] = rebound
    return rebound


@compiling
def expanded(fr: Front, arguments: Dict, keep_sites=None) -> Front:
    """``fr`` specialised on these argument values: the functions and objects it calls
    that are passed in inlined (``passes/inline.py``) and its loops over dicts passed in
    unrolled (``passes/dict_loops.py``), then its calls of transforms
    expanded (``passes/sites.py``; those whose callable ``keep_sites(fn)`` accepts
    stay); ``arguments`` maps each parameter (free variables included) to its value.
    ``fr`` itself when it needs neither."""
    if not fr.sites and not fr.values:
        return fr
    statics = []

    def lowered(f):
        func, freevars, st = lowered_full(f)
        statics.extend(st)
        return func, freevars

    func, freevars = fr.func, fr.freevars
    if fr.values and needs_values(func):
        func, freevars = inline_calls(func, freevars, lowered, values=arguments,
                                      statics=statics)
        func = functional_containers(func)
    if fr.values:  # loops over the dicts among the arguments: one copy per key
        func = dict_loops_unrolled(func, arguments)
    if has_sites(func, keep_sites):
        arguments = {**{n: fv.load() for n, fv in freevars.items()}, **arguments}
        func, freevars = expand_sites(func, freevars, arguments, lowered, keep_sites)
        # the user code the expansions inlined (the function a vjp site takes, say) gets
        # what front gave the rest: its list and dict methods made values
        func = functional_containers(out_as_writes(func))
    return Front(single_exit(func), freevars, fr.statics + tuple(statics),
                 has_sites(func))


def with_helper_code(fr: Front, has_rule, mode=None) -> Front:
    """``fr`` with the ``inline`` run-time helpers that ``has_rule(fn)`` (the transform's
    own table) refuses inlined as code (``passes/helpers.py``; those ``mode``'s transform
    reads)."""
    if not needs_helpers(fr.func, has_rule, mode):
        return fr
    func, freevars = helpers_inlined(fr.func, fr.freevars, has_rule, lowered, mode)
    return Front(func, freevars, fr.statics, fr.sites, fr.values)


def helper_code(func: ir.Function, has_rule, mode=None) -> ir.Function:
    """``func`` (generated code, no free variables of its own to add) with the helpers
    ``has_rule`` refuses inlined (those read as code by ``mode``'s transform, ``"jit"``
    ...); a helper that reads a free variable is left alone."""
    if not needs_helpers(func, has_rule, mode):
        return func
    out, freevars = helpers_inlined(func, {}, has_rule, lowered, mode)
    return out if not freevars else func


def _has_derivative_rule(fn) -> bool:
    return lookup(fn) is not None


def _differentiable(func: ir.Function) -> ir.Function:
    """``func`` with the helpers that have no derivative rule read as code, vmap's calls
    once per example (``rt.batch_loop``) of functions with a derivative rule as the loops
    they run (``passes/per_example_loops.py``), ``np.add.at`` as a write of ``rt.add_at``
    (``passes/out_args.py``) and vmap's in-place operators as the operators
    (``passes/index_writes.py``)."""
    func = per_example_loops(func, _has_derivative_rule, rt.stack_examples)
    func = batched_inplace_as_operators(scatter_adds_as_writes(func))
    return helper_code(func, _has_derivative_rule)


@compiling
def reverse(fr: Front, wrt: Sequence[str], info: Dict[str, ParamInfo], *, has_aux=False,
            holomorphic=False, returns="grad", single=True, name=None) -> ir.Function:
    func = copy_propagate(to_ssa(checkpointed_loops(writes_as_values(_differentiable(fr.func)))))
    name = name or f"{returns}_{fr.func.name}"
    out = Reverse(func, wrt, info, has_aux, holomorphic).build(returns, name, single)
    return dce(fold_negations(out))


@compiling
def reverse_split(fr: Front, wrt: Sequence[str], info: Dict[str, ParamInfo], *,
                  has_aux=False, single=False, name=None):
    """``(fwd, bwd)`` IR of the vjp of ``fr`` with explicit residuals (``ad.split``)."""
    func = copy_propagate(to_ssa(checkpointed_loops(writes_as_values(_differentiable(fr.func)))))
    name = name or f"vjp_{fr.func.name}"
    rev = Reverse(func, wrt, info, has_aux, False)
    rev.build("vjp", name, single)
    fwd, bwd = split(rev, name)
    return dce(fold_negations(fwd)), dce(fold_negations(bwd))


@compiling
def forward(fr: Front, wrt: Sequence[str], leaf: Dict[str, bool], *, has_aux=False,
            name=None) -> ir.Function:
    """The JVP function of ``fr`` (see ``ad/forward.py``), dead code removed."""
    name = name or f"jvp_{fr.func.name}"
    out = Forward(_differentiable(fr.func), wrt, leaf).build(name, has_aux)
    out = dce(primal_only_pushforwards(dce(fold_negations(out))))
    return custom_rules.refusals(out)


@compiling
def emit(func: ir.Function) -> Emitted:
    return emit_function(func)


@compiling
def compile_function(func: ir.Function):
    """``(python function, emitted source)``.  The function keeps ``func`` as its IR
    (``__s2s_ir__``), so transforming it again starts from the IR, not from its text."""
    emitted = emit(func)
    fn = load(emitted, func.name)
    fn.__s2s_ir__ = lambda args=None, kwargs=None: (func, {})
    _GENERATED[fn.__code__.co_filename] = fn
    return fn, emitted


#: file name of generated code -> its function (``note_user_line`` maps its lines back)
_GENERATED = weakref.WeakValueDictionary()


def note_user_line(exc: BaseException) -> None:
    """Give ``exc``, raised while generated Python code ran, the user's file:line and
    the quoted line of the statement that raised it: an exception note (Python 3.11+;
    on 3.10 the note is appended to a single string argument).  The innermost frame of
    generated code in the traceback is the one mapped; done once per exception."""
    if getattr(exc, "_s2s_user_line", False):
        return
    frame_loc = None
    tb = exc.__traceback__
    while tb is not None:
        fn = _GENERATED.get(tb.tb_frame.f_code.co_filename)
        if fn is not None:
            frame_loc = (fn, tb.tb_lineno)
        tb = tb.tb_next
    if frame_loc is None:
        return
    fn, line = frame_loc
    try:
        from ..emit.python import line_locations
        loc, stmt = line_locations(fn.__s2s_ir__()[0]).get(line, (None, None))
    except Exception:  # never hide the user's exception behind one of ours
        return
    if loc is None or not loc.line:
        return
    note = (f"{loc.file}:{loc.line}:{loc.col + 1}: raised here, while running "
            f"{fn.__name__}, which s2s generated from\n    {loc.text.strip()}")
    try:
        exc._s2s_user_line = True
        exc._s2s_user_loc = loc
        exc._s2s_user_stmt = stmt
    except AttributeError:
        pass
    if hasattr(exc, "add_note"):
        exc.add_note(note)
    elif len(exc.args) == 1 and isinstance(exc.args[0], str):
        exc.args = (f"{exc.args[0]}\n{note}",)
