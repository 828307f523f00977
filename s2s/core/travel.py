"""Transformed functions travel: how s2s's transform results pickle.

A transform result (``grad(f)``, ``jit(f)``, ``vmap(f)``, a ``vjp`` pullback,
a ``jacrev`` function, a custom-rule function, ...) pickles as what makes it
- the transform, the function it wraps and its configuration - never as what
it made: no generated code, IR, cache, LLVM engine or ctypes pointer
travels.  The receiving process makes the transform again and generates (and
compiles) its code on first use, or loads the object code from the disk cache
(``jit(f, cache=True)``).

Each result's ``__reduce__`` returns ``travelling(obj, factory, args, kwargs,
state)``:

* if ``obj`` is importable by name (a decorated module-level function:
  ``module.qualname`` is ``obj``, the module is not ``__main__`` nor one that
  cloudpickle was told to pickle by value), a reference: the receiver imports
  it, and the object it finds keeps that process's generated and compiled
  code across every task that uses it;
* otherwise ``(arrive, (payload,))``: ``payload`` is ``(factory, args,
  kwargs, state)`` pickled on its own - by cloudpickle when it is installed
  (so lambdas and closures travel by value, as Dask sends them), else by
  ``pickle`` - together with the source of every function pickled by value in
  it (``frontend/shipped.py``: cloudpickle drops file names, and s2s reads
  source).

``arrive(payload)`` makes ``factory(*args, **kwargs)`` (attributes ``state``
set on it) once per distinct payload in a process and returns that same
object for every later copy of the payload (a bounded table).  Dask
unpickles a task's function for every task, so this is what makes a worker
generate and compile a transformed function once per signature rather than
once per task; a function whose captured values changed pickles to another
payload and is made afresh, so a worker never runs stale values.

An object met again while its own payload is being pickled (a function that
refers to itself through a global, as a custom rule that calls its custom
function does) is pickled as a placeholder, replaced by the object when it
arrives; a payload holding a placeholder of an enclosing payload is made anew
each time (what it stands for is in the enclosing payload, not in its digest).
"""
from __future__ import annotations

import hashlib
import importlib
import io
import pickle
import sys
import threading
import types
from collections import OrderedDict

from ..frontend import shipped

_LOCAL = threading.local()
#: payload digest -> the object made from it (the newest last)
_ARRIVED: "OrderedDict[bytes, object]" = OrderedDict()
_ARRIVED_MAX = 256


def _by_value_modules() -> frozenset:
    try:
        import cloudpickle
    except ImportError:
        return frozenset()
    return frozenset(getattr(cloudpickle, "list_registry_pickle_by_value", lambda: ())())


def reference(obj, fn):
    """``(module, qualname)`` if ``obj`` is what importing ``fn``'s module and name
    gives (``obj`` decorates a module-level ``fn``), else None."""
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or \
            module in ("__main__", "__mp_main__") or "<" in qualname:
        return None
    if any(module == m or module.startswith(m + ".") for m in _by_value_modules()):
        return None
    target = sys.modules.get(module)
    for part in qualname.split("."):
        target = getattr(target, part, None)
    return (module, qualname) if target is obj else None


def imported(module: str, qualname: str):
    """The object ``module.qualname`` (what ``reference`` named)."""
    target = importlib.import_module(module)
    for part in qualname.split("."):
        target = getattr(target, part)
    return target


def _recording_pickler():
    """A cloudpickle Pickler class that lists the functions it pickles by value, or None
    without cloudpickle."""
    cls = getattr(_LOCAL, "pickler", False)
    if cls is not False:
        return cls
    try:
        import cloudpickle
    except ImportError:
        cls = None
    else:
        class Recording(cloudpickle.Pickler):
            def __init__(self, file, seen):
                super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
                self.seen = seen

            def reducer_override(self, obj):
                out = super().reducer_override(obj)
                if out is not NotImplemented and isinstance(obj, types.FunctionType):
                    self.seen.append(obj)  # pickled by value: its source goes along
                return out
        cls = Recording
    _LOCAL.pickler = cls
    return cls


def _dumps(value):
    """``(bytes, sources)``: ``value`` pickled (by cloudpickle if installed) and the
    source of the functions pickled by value in it."""
    pickler = _recording_pickler()
    if pickler is None:
        return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL), {}
    buf, seen = io.BytesIO(), []
    pickler(buf, seen).dump(value)
    return buf.getvalue(), shipped.sources_of(seen)


def travelling(obj, factory, args=(), kwargs=None, state=None, fn=None):
    """The ``__reduce__`` value of the transform result ``obj``, which ``factory(*args,
    **kwargs)`` (then ``state`` set as attributes) makes again; ``fn``: the user's
    function ``obj`` wraps, for the by-reference test (default ``args[0]``)."""
    ref = reference(obj, args[0] if fn is None and args else fn)
    if ref is not None:
        return imported, ref
    active = getattr(_LOCAL, "active", None)
    if active is None:
        active = _LOCAL.active = {}
    if id(obj) in active:  # met again inside its own payload
        return _placeholder, (active[id(obj)],)
    token = len(active)  # its depth among the payloads being pickled: digests repeat
    active[id(obj)] = token
    try:
        inner, sources = _dumps((factory, tuple(args), dict(kwargs or {}), dict(state or {}),
                                 token))
    finally:
        del active[id(obj)]
    return arrive, (pickle.dumps((sources, inner), protocol=pickle.HIGHEST_PROTOCOL),)


class _Placeholder:
    """Stands for an object whose payload is still being unpickled; replaced by it in
    the globals, closures and defaults of the functions that arrived with it, and
    calls it if met anywhere else."""

    def __init__(self, token):
        self.token = token
        self.target = None

    def __call__(self, *args, **kwargs):
        return self.target(*args, **kwargs)

    def __getattr__(self, name):
        if name in ("token", "target"):
            raise AttributeError(name)
        return getattr(self.target, name)


def _wanted() -> dict:
    """This thread's placeholders not yet resolved: token -> [placeholder]."""
    wanted = getattr(_LOCAL, "wanted", None)
    if wanted is None:
        wanted = _LOCAL.wanted = {}
    return wanted


def _placeholder(token):
    ph = _Placeholder(token)
    _wanted().setdefault(token, []).append(ph)
    return ph


def _replace_placeholders(roots, placeholders, obj) -> None:
    """Put ``obj`` where one of ``placeholders`` was unpickled among what ``roots`` reach
    through functions (globals, closure cells, defaults) and classes."""
    seen, todo = set(), list(roots)
    ids = {id(p) for p in placeholders}

    def hit(v):
        return isinstance(v, _Placeholder) and id(v) in ids

    while todo:
        v = todo.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, types.FunctionType):
            g = v.__globals__
            for name in v.__code__.co_names:
                if hit(g.get(name)):
                    g[name] = obj
                elif name in g:
                    todo.append(g[name])
            for cell in v.__closure__ or ():
                try:
                    if hit(cell.cell_contents):
                        cell.cell_contents = obj
                    else:
                        todo.append(cell.cell_contents)
                except ValueError:  # an empty cell
                    pass
            if v.__defaults__ and any(map(hit, v.__defaults__)):
                v.__defaults__ = tuple(obj if hit(d) else d for d in v.__defaults__)
        elif isinstance(v, type) and v.__module__ in ("__main__", "__mp_main__"):
            todo.extend(v.__dict__.values())
        elif isinstance(v, (staticmethod, classmethod)):
            todo.append(v.__func__)
        elif isinstance(v, (tuple, list)):
            todo.extend(v)
        elif isinstance(v, dict):
            todo.extend(v.values())
        elif hasattr(v, "__dict__") and not isinstance(v, types.ModuleType) \
                and type(v).__module__.startswith("s2s"):
            todo.extend(vars(v).values())  # a transform result holding user functions


def arrive(payload: bytes):
    """The object ``payload`` makes (see the module docstring): made once per distinct
    payload in this process."""
    digest = hashlib.sha256(payload).digest()
    hit = _ARRIVED.get(digest)
    if hit is not None:
        _ARRIVED.move_to_end(digest)
        return hit
    sources, inner = pickle.loads(payload)
    shipped.receive(sources)  # before anything reads the source of what arrives
    wanted = _wanted()
    before = {t: len(v) for t, v in wanted.items()}
    factory, args, kwargs, state, token = pickle.loads(inner)
    obj = factory(*args, **kwargs)
    for name, value in state.items():
        setattr(obj, name, value)
    mine = wanted.pop(token, [])[before.get(token, 0):]
    if mine:
        for ph in mine:
            ph.target = obj
        _replace_placeholders([args, kwargs, state], mine, obj)
    if any(len(v) > before.get(t, 0) for t, v in wanted.items()):
        return obj  # it holds placeholders of an enclosing payload: never shared
    _ARRIVED[digest] = obj
    while len(_ARRIVED) > _ARRIVED_MAX:
        _ARRIVED.popitem(last=False)
    return obj
