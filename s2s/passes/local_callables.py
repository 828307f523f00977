"""What the inliner knows about a variable, and where that knowledge holds.

The inliner (``inline.py``) sees through a variable when it knows what the
variable is bound to at transform time:

* ``VirtualObject``: an object of a user class created in the differentiated
  code; it never exists at run time (its attributes are variables);
* ``Closure``: a ``lambda`` or nested ``def`` bound to a name (``scope.LocalFunction``
  with the variables it captures, as named where it is called); no run-time
  value either;
* ``BoundMethod``: ``obj.method`` taken without calling it (``f = m.forward``);
* ``TransformOfClosure``: a transform of a local function (``vmap(lambda y: k(x, y))``);
* ``Value``: a Python value fixed when s2s transforms the code: a program
  constant (a function, class or object the code names) or, when a transform
  is specialised on its arguments, a function, object or container of them
  passed in (``ir.kinds`` keys the specialisation on their identity or class,
  so the code made for one is never used for another);
* ``Constant``: an immutable scalar (int, bool, str, None, or a tuple of them)
  written in the program or folded from such; an ``if`` on one keeps only the
  branch taken, which unrolls recursion whose depth a constant argument fixes.

``Bindings`` scopes this knowledge by *block paths*: a binding made in a
block holds in that block and the blocks nested in it, from that statement
on.  After an ``if``, a loop or a ``try``, a name bound inside is no longer
known (it may hold the value from before); a loop forgets, before its body,
every name the loop assigns (a later iteration sees the last one's value).
A name that once held a value with no run-time existence (an object, a local
function) may not be read where s2s cannot tell what it holds.
"""
from __future__ import annotations

import inspect
import operator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Dict, Optional

import numpy as np

from ..frontend.scope import LocalFunction
from ..ir import nodes as ir
from ..rules import lookup
from ..rules.registry import properties

_NOT_USER = ("s2s_runtime", "numpy", "builtins")


def _is_s2s(module: str) -> bool:
    return module == "s2s" or module.startswith("s2s.")


def _user_module(module) -> bool:
    module = module or ""
    return not module.startswith(_NOT_USER) and not _is_s2s(module)


def is_user_function(fn) -> bool:
    return (inspect.isfunction(fn) and lookup(fn) is None
            and _user_module(getattr(fn, "__module__", None)))


def is_user_class(cls) -> bool:
    return (inspect.isclass(cls) and lookup(cls) is None
            and _user_module(getattr(cls, "__module__", None))
            and inspect.isfunction(getattr(cls, "__init__", None)))


def is_user_object(v) -> bool:
    """An instance of a user class (not a container, number, array or function)."""
    t = type(v)
    if isinstance(v, (tuple, list, dict, set, np.ndarray, np.generic, int, float, complex,
                      str, bytes)) or v is None:
        return False
    if inspect.isroutine(v) or inspect.isclass(v) or inspect.ismodule(v):
        return False
    return _user_module(getattr(t, "__module__", None)) and lookup(v) is None


# -- what a variable is bound to ---------------------------------------------------

@dataclass(eq=False)
class VirtualObject:
    cls: type
    home: tuple  # the block path where it was created (its attributes are set there)
    attrs: Dict[str, ir.Atom] = field(default_factory=dict)

    runtime = False

    def describe(self) -> str:
        return f"a {self.cls.__name__} object created in the differentiated code"


@dataclass(eq=False)
class Closure:
    local: LocalFunction
    env: Dict[str, str]  # captured name -> the variable it reads where it is called
    defaults: tuple  # atoms, indexed by the signature's DefaultSlots

    runtime = False

    def describe(self) -> str:
        what = "lambda" if self.local.name == "lambda_" else f"local function {self.local.name}"
        return f"the {what} ({self.local.loc})" if self.local.loc else f"the {what}"


@dataclass(eq=False)
class TransformOfClosure:
    """``maker(closure, *args, **kwargs)``: a transform (``vmap``, ``grad``, ``jit``...)
    of a local function, its other arguments constants (``callables.py`` calls it as the
    transform of the function lifted to take its captures as trailing arguments)."""

    maker: Any
    closure: Closure
    args: tuple
    kwargs: Dict[str, Any]

    runtime = False

    def describe(self) -> str:
        return f"{getattr(self.maker, '__name__', 'a transform')} of {self.closure.describe()}"


@dataclass(eq=False)
class PartialOf:
    """``functools.partial(f, *args, **kwargs)`` made in the code: a call of it calls the
    callable ``callee`` (what the atom ``atom`` holds) with ``args`` (atoms read when the
    partial was made) before the call's own and ``kwargs`` under the call's own."""

    callee: Any
    atom: ir.Atom
    args: tuple
    kwargs: Dict[str, Any]

    runtime = False

    def describe(self) -> str:
        return "a functools.partial object made in the code"


@dataclass(eq=False)
class BoundMethod:
    func: Any
    receiver: ir.Atom

    runtime = False

    def describe(self) -> str:
        return f"the method {self.func.__qualname__} taken from an object"


@dataclass(eq=False)
class Value:
    value: Any

    runtime = True


@dataclass(eq=False)
class Constant:
    value: Any

    runtime = True


@dataclass(eq=False)
class Items:
    """A tuple or list of ``count`` items, or (``keys`` not None) a dict with these
    keys, whose values are run-time values: what ``*s``/``**d`` unpack
    (``unpacking.py``)."""
    count: int = 0
    keys: Optional[tuple] = None
    #: what every item holds, when that is one ``Items`` (``[(a, b), (c, d)]``)
    item: Optional["Items"] = None
    #: a list display (``[]``, ``[a, b]``): appending an object makes it a ``Pack``
    list_display: bool = False
    #: the specialisation's value it is (an argument): its tree structure, for ``tree_map``
    value: Any = None

    runtime = True


@dataclass(eq=False)
class TreeOf:
    """A run-time value with the tree structure of ``value`` (what ``tree_map`` made of a
    dataclass or namedtuple argument): read only for that structure."""
    value: Any

    runtime = True


@dataclass(eq=False)
class Pack:
    """A tuple built in the code that holds a value with no run-time existence (an
    object or local function), e.g. the ``(out, pullback)`` of ``vjp`` inside code:
    never built at run time; each item is what it is known to be, or the run-time
    value of a fresh variable (``items``: per item, a known value or an ``ir.Var``)."""
    items: tuple

    runtime = False

    def describe(self) -> str:
        return "a tuple or list holding " + next(k.describe() for k in self.items
                                         if not isinstance(k, ir.Var) and not k.runtime)


def _scalar(v) -> bool:
    if isinstance(v, tuple) and type(v) is tuple:
        return all(map(_scalar, v))
    return type(v) in (int, bool, str) or v is None


def useful(v, depth=0) -> bool:
    """A value the inliner can see into: a function or class it can inline or call,
    a user object, or a tuple, list or dict holding one."""
    if callable_kind(v) is not None or is_user_object(v):
        return True
    if depth < 2 and type(v) in (tuple, list):
        return any(useful(x, depth + 1) for x in v)
    if depth < 2 and type(v) is dict:
        return any(useful(x, depth + 1) for x in v.values())
    return False


def callable_kind(v) -> Optional[str]:
    if is_user_function(v):
        return "function"
    if is_user_class(v):
        return "class"
    if inspect.ismethod(v) and is_user_function(v.__func__):
        return "method"
    if not isinstance(v, type) and getattr(v, "__s2s_ir__", None) is not None:
        return "transform"
    try:
        if lookup(v) is not None or properties(v):  # a rule, or a record of properties
            return "primitive"                      # (``operator.imul``: in place)
    except TypeError:  # unhashable: not a primitive
        pass
    return None


def known_of_const(v):
    """What a program constant is, as the inliner sees it (None: nothing to see)."""
    if _scalar(v):
        return Constant(v)
    return Value(v) if useful(v) else None


def known_of_value(v):
    """What a value passed in (a specialisation's argument) is, as the inliner sees it.
    Numbers are not: the specialisation is not keyed on them; the lengths of tuples and
    lists and the keys of dicts are."""
    if useful(v):
        return Value(v)
    if type(v) in (tuple, list):
        items = [known_of_value(x) for x in v]
        same = (items and all(isinstance(k, Items) and k.keys is None for k in items)
                and len({k.count for k in items}) == 1)
        return Items(len(v), item=Items(items[0].count) if same else None, value=v)
    if type(v) is dict:
        return Items(keys=tuple(v), value=v)
    return None


# -- constant folding -----------------------------------------------------------------

FOLDABLE = {operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge,
            operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod,
            operator.neg, operator.pos, operator.not_, operator.truth, operator.is_,
            operator.is_not, operator.and_, operator.or_, operator.xor, operator.iadd,
            operator.isub, operator.imul, operator.ifloordiv, operator.imod, operator.getitem,
            operator.contains, abs, len, min, max, bool, int, slice}

NOTHING = object()


def fold(fn, values):
    """``fn(*values)`` when that is a constant scalar computed now; else ``NOTHING``."""
    if fn not in FOLDABLE or not all(map(_scalar, values)):
        return NOTHING
    try:
        out = fn(*values)
    except Exception:  # left for run time, where Python raises it
        return NOTHING
    return out if _scalar(out) or type(out) is slice else NOTHING  # x[:-k], k known


# -- scoping ----------------------------------------------------------------------------

class Bindings:
    """Name -> (block path, known value or None for a plain run-time value)."""

    def __init__(self):
        self.path = ()
        self._blocks = 0
        self.table: Dict[str, tuple] = {}
        #: names once bound to a value with no run-time existence -> that value
        self.virtual: Dict[str, Any] = {}

    @contextmanager
    def nested(self):
        """Process a nested block (an ``if`` branch, a loop body, a handler...)."""
        self._blocks += 1
        saved = self.path
        self.path = saved + (self._blocks,)
        try:
            yield
        finally:
            self.path = saved

    def holds(self, path) -> bool:
        return self.path[:len(path)] == path

    def bind(self, name: str, known=None) -> None:
        self.table[name] = (self.path, known)
        if known is not None and not known.runtime:
            self.virtual[name] = known

    def rebind_all(self, old, new) -> None:
        """Every name bound here to the known value ``old`` (the same object: names of
        one list) bound to ``new`` instead, in its own block."""
        for name, (path, known) in list(self.table.items()):
            if known is old and self.holds(path):
                self.table[name] = (path, new)
                if not new.runtime:
                    self.virtual[name] = new

    def forget(self, name: str) -> None:
        self.table.pop(name, None)

    def get(self, name: str):
        hit = self.table.get(name)
        if hit is None or not self.holds(hit[0]):
            return None
        return hit[1]

    def ambiguous(self, name: str):
        """The no-run-time value ``name`` may hold here, unknown which (else None)."""
        if name not in self.virtual:
            return None
        hit = self.table.get(name)
        if hit is not None and self.holds(hit[0]):
            return None  # bound here to what ``get`` says
        return self.virtual[name]
