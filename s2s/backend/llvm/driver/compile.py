"""From IR and argument values to a callable native specialisation.

Contract: ``compile_signature(func, args, load_free, ...)`` types the arguments
(``types.value_type``; an unsupported argument raises ``TypeError`` saying what
jit takes), builds the module (``module.py``), optimises and JIT-compiles it
(``engine.py``, one process-wide cache keyed by the IR text, so the same kernel
is compiled once) and returns a ``Specialisation``: called with the argument
tuple, it flattens tuples, reads the free variables, and calls the entry point
(``callpath.Caller``).  Python's cyclic garbage collector is paused while a
signature compiles (``collector_paused``).
"""
from __future__ import annotations

import contextlib
import gc
import threading

from . import engine, fastcall
from ..typing import types as T
from ....ir import nodes as ir
from .callpath import Caller, convert_leaves
from .module import build_module
from ..typing.statics import static_values, with_statics

_COMPILED = {}


def lowers(fn) -> bool:
    """Whether the compiler has a lowering of calls of ``fn`` (``calls.TABLE``)."""
    from ..lower import function as lower  # noqa: F401  (registers every lowering)
    from ..ops.calls import TABLE
    try:
        return fn in TABLE
    except TypeError:
        return False


def param_types(func, values, describe):
    from ..lower.stacks import find_stacks
    names = [p.var.name for p in func.params]
    stacks = find_stacks(func)
    out = []
    for name, v in zip(names, values):
        if name in stacks and type(v) is tuple:
            out.append(T.Stack(tagged=True))
            continue
        t = T.value_type(v)
        if t is None:
            where, compiled = describe()
            raise TypeError(
                f"jit: {where}: argument {name!r} is {_described(v)}; compiled code "
                "takes float64/float32/int64/bool/complex128 numbers, numpy arrays of those "
                "dtypes, and tuples, lists, dicts (constant keys) and dataclasses of them" + compiled)
        out.append(t)
    return out


def _described(v) -> str:
    """An argument's kind in a message: ``an int32 array``, ``a np.int32``, ``a set``."""
    import numpy as np
    if isinstance(v, np.ndarray):
        return f"an array of dtype {v.dtype}"
    if isinstance(v, np.generic):
        return f"a np.{type(v).__name__} scalar"
    name = type(v).__name__
    return f"{'an' if name[:1] in 'aeiou' else 'a'} {name}"


def compiled_entry(mt, cache=False):
    """``(compiled module, entry address, fast entry address or 0)``; with ``cache`` the
    object code is read from / written to the on-disk cache (``disk_cache.py``)."""
    hit = _COMPILED.get(mt.text)
    if hit is None:
        if cache:
            from . import disk_cache
            k = disk_cache.key(mt.text)
            found = disk_cache.lookup(k)
            # a cached object needs no optimisation: the module only names its symbols
            code = engine.Compiled(mt.text if found else engine.optimise_module(mt.text), k, found)
        else:
            code = engine.Compiled(engine.optimise_module(mt.text))
        fast = code.address(mt.fast_entry) if mt.fast_entry else 0
        if fast:
            fastcall.set_type_objects(code.global_address(fastcall.types_table(mt.fast_entry)))
        hit = _COMPILED[mt.text] = (code, code.address(mt.entry), fast)
    return hit


def _items_of(t, v):
    """The items of the container ``v`` of type ``t``: a dict's values in key order, a
    dataclass's fields (read as a namedtuple's), a tuple's or list's items."""
    if isinstance(t, T.Dict):
        return [v[k] for k in t.keys]
    if isinstance(t, T.NamedTuple) and not isinstance(v, tuple):
        return [getattr(v, f) for f in T.record_fields(t.cls)]
    return v


def _flattener(types):
    if not any(isinstance(t, (T.Tuple, T.NoneType, T.Range)) for t in types):
        return None

    def flat(t, v, out):
        if isinstance(t, T.Range):
            out += [v.start, v.stop, v.step]
        elif isinstance(t, T.Tuple):
            for it, x in zip(t.items, _items_of(t, v)):
                flat(it, x, out)
        elif not isinstance(t, T.NoneType):
            out.append(v)

    def flatten(values):
        out = []
        for t, v in zip(types, values):
            flat(t, v, out)
        return out

    return flatten


def _leaf_paths(names, types, nargs):
    """``(what, is a Python int)`` per flattened value (``_flattener``'s order): the
    argument (or, past ``nargs``, the global or closure variable) by name, with its
    tuple/dict item or range field (``the argument 'a[1]'``, ``the argument 'r.stop'``)."""
    out = []

    def walk(t, name, label):
        if isinstance(t, T.Range):
            out.extend((f"{label} {name + '.' + f!r}", True) for f in ("start", "stop", "step"))
        elif isinstance(t, T.Tuple):
            keys = t.keys if isinstance(t, T.Dict) else range(len(t.items))
            for k, it in zip(keys, t.items):
                walk(it, f"{name}[{k!r}]", label)
        elif not isinstance(t, T.NoneType):
            python_int = isinstance(t, T.Scalar) and t.dtype == "i8" and t.weak
            out.append((f"{label} {name!r}", python_int))

    for k, (name, t) in enumerate(zip(names, types)):
        walk(t, name, "the argument" if k < nargs else "the global or closure variable")
    return out


_INT64 = (-(1 << 63), 1 << 63)


def int_overflow(what, value=None) -> OverflowError:
    """The error of a Python int argument (``what``: ``the argument 'a'``) outside int64."""
    shown = "" if value is None else f" = {value}"
    return OverflowError(
        f"jit: {what}{shown} is an int that does not fit in 64 bits: compiled code "
        "computes with int64, as Numba's (pass a float, or a smaller int)")


def _int_checker(paths):
    """A function raising ``int_overflow`` for a Python int outside int64 among the
    flattened values, None when no value is a Python int (ctypes would wrap it)."""
    ints = [(k, name) for k, (name, is_int) in enumerate(paths) if is_int]
    if not ints:
        return None
    low, high = _INT64

    def check(values):
        for k, name in ints:
            v = values[k]
            if not low <= v < high:
                raise int_overflow(name, v)

    return check


class Specialisation:
    def __init__(self, func, types, nargs, load_free, boundscheck, cache=False):
        self.types = types
        self.signature = ", ".join(map(str, types[:nargs]))
        self.module = build_module(func, types, boundscheck)
        self.code, address, fast = compiled_entry(self.module, cache)
        self.caller = Caller(self.module, address)
        names = [p.var.name for p in func.params]
        self.caller.arg_names = names
        self.caller.function = func.name  # the frame its errors are raised from
        self.check_ints = _int_checker(_leaf_paths(names, types, nargs))
        #: a builtin function taking the arguments themselves (fastcall.py), or None
        self.fast = None
        if fast and not len(types) > nargs and fastcall.ctypes_layout_ok():
            self.fast = fastcall.builtin(address=fast, ctx=self.caller.ctx)
        self.load_free = load_free
        self.has_free = len(types) > nargs
        self.flatten = _flattener(types)
        self.convert = convert_leaves(self.module.leaves)
        run, check = self.caller.run, self.check_ints
        if not self.has_free and self.flatten is None and self.convert is None:
            if check is None:
                self.call = run  # the common case: numbers and arrays, no conversion
            else:
                def call(args):  # Python ints among them: in int64, or OverflowError
                    check(args)
                    return run(args)
                self.call = call
        else:
            self.call = self._general

    def free_current(self) -> bool:
        free = self.load_free()
        first = len(self.types) - len(free)
        if any(free[k - first] != v for k, v in self.statics.items() if k >= first):
            return False  # a string (None, tuple of them) global changed: recompile
        return [T.value_type(None if k + first in self.statics else v)
                for k, v in enumerate(free)] == self.types[first:]

    def _general(self, args):
        values = list(args) + (self.load_free() if self.has_free else [])
        if self.flatten is not None:
            values = self.flatten(values)
        if self.check_ints is not None:
            self.check_ints(values)
        if self.convert is not None:
            values = self.convert(values)
        return self.caller(*values)

    def __call__(self, args):
        return self.call(args)


_LAYOUT = []


def _check_layout():
    """Once per process: numpy's array object has the field offsets entry points read."""
    if not _LAYOUT:
        from s2s_runtime.native import array_layout_ok
        if not array_layout_ok():
            raise RuntimeError("jit: this numpy's ndarray object layout is not the one s2s's "
                               "entry points read (data, nd, dimensions, strides, descr, flags)")
        _LAYOUT.append(True)


def signature_form(func, args, load_free, describe=lambda: ("function", "")):
    """``(func, types, statics)``: ``func`` as compiled for ``args`` (and its free
    values), its parameters' types and its compile-time constants by position.
    ``None``, strings and tuples of them are compile-time constants (``statics.py``):
    their slots pass nothing.  So is a free value that is an int, a bool or a tuple of
    ints (a global's, a closure's, a pullback's residual axes or shape) that the function
    never assigns, as Numba freezes globals: a new value compiles again."""
    _check_layout()
    free = load_free()
    values = list(args) + list(free)
    names = [p.var.name for p in func.params]
    statics = {k: values[k] for k in static_values(values)}
    assigned = {v.name for s in ir.walk(func.body) for v in ir.stmt_defs(s)}
    statics.update((k, v) for k, v in enumerate(values)
                   if k >= len(args) and k < len(names) and names[k] not in assigned and
                   (type(v) in (int, bool) or T.is_int_tuple(v) and v))
    func = with_statics(func, {names[k]: v for k, v in statics.items() if k < len(names)})
    types = param_types(func, [None if k in statics else v for k, v in enumerate(values)],
                        describe)
    return func, types, statics


_PAUSE = threading.Lock()
_PAUSED = [0, False]  # compilations under way, whether the collector was on before them


@contextlib.contextmanager
def collector_paused():
    """Python's cyclic garbage collector off inside, back as it was after the last of
    the nested or concurrent uses.  Lowering a long kernel makes hundreds of thousands
    of llvmlite objects, nearly all alive until the module is printed: each automatic
    collection walked all of them to free nothing, a third of the lowering of a
    500-statement gradient (benchmarks/README.md).  Cycles made meanwhile are collected
    by the next automatic collection after it."""
    with _PAUSE:
        if _PAUSED[0] == 0:
            _PAUSED[1] = gc.isenabled()
            gc.disable()
        _PAUSED[0] += 1
    try:
        yield
    finally:
        with _PAUSE:
            _PAUSED[0] -= 1
            if _PAUSED[0] == 0 and _PAUSED[1]:
                gc.enable()


def compile_signature(func, args, load_free, boundscheck=True,
                      describe=lambda: ("function", ""), cache=False):
    """Compile ``func`` for ``args`` (and its free values), typed by ``signature_form``."""
    with collector_paused():
        func, types, statics = signature_form(func, args, load_free, describe)
        spec = Specialisation(func, types, len(args), load_free, boundscheck, cache)
    spec.statics = statics
    return spec
