"""What the PyTorch and JAX ops share: a numpy function over flat leaves, its VJP
and its batched version as functions of the same kind, and when to compile them.

A framework op sees a user function ``f(*args)`` whose arguments are pytrees
(dict, list, tuple, namedtuple, ``None``) of arrays and Python numbers.  It
flattens them (``trees.flatten``): array leaves cross the framework boundary as
tensors, everything else (Python numbers, strings, ``None``) is *static*.

A ``Family`` is what does not depend on the values: the argument structure,
which leaves are arrays, which are static.  It owns the s2s function ``fn``
over all leaves as named parameters (``a0, a1, ...``), generated as source
(registered with ``linecache``, so s2s reads it like user code) that rebuilds
the user's arguments and calls ``f``; its ``s2s.jit``; and per argument
signature the decision whether that jit compiles (``Family.run``: tried once
per signature; where ``s2s.jit`` raises an ``S2SError`` the signature runs in
Python mode from then on).  A ``Kernel`` is a family with the values of its
static leaves.

Derived families, built the same way and cached on their parent:

* ``Family.vjp(out_spec, float_outs)``: ``V(a..., c...) = grad of
  sum_k <o_k, c_k>`` with respect to the differentiated array leaves, where
  ``o_k`` are the floating-point output leaves of ``fn`` and ``c_k`` their
  cotangents; ``V`` returns a tuple of one gradient per differentiated leaf.
  Its inputs are the parent's plus the cotangents, all of which are
  differentiated again, so ``V.vjp`` is the VJP of the VJP: second and higher
  derivatives are s2s's own code for the reverse sweep of a reverse sweep.
* ``Family.batched(in_axes)``: ``s2s.vmap(fn, in_axes)`` with the batch on
  axis 0 of every output (leaves with axis ``None`` are shared).

Nothing here imports torch or JAX.
"""
from __future__ import annotations

import inspect
import itertools
import keyword
import threading
import warnings
from collections import OrderedDict

import numpy as np

import s2s
from ..core.jit import Jitted
from ..errors import S2SError
from ..frontend.registered import register as register_source
from .trees import LEAF, flatten, n_leaves, rebuild_expr, spec_children, unpack_lines

# -- generated source ----------------------------------------------------------------

_counter = [0]
_lock = threading.RLock()


def _load(name, src, namespace):
    """Define the function ``name`` from ``src`` under a file name of its own in
    ``linecache`` (so that s2s reads its source) and return it."""
    with _lock:
        _counter[0] += 1
        filename = f"<s2s-interop {name} {_counter[0]}>"
    register_source(filename, src)
    ns = dict(namespace)
    ns["np"] = np
    ns["__name__"] = "s2s_interop_generated"
    exec(compile(src, filename, "exec"), ns)
    return ns[name]


def _ident(name):
    cleaned = "".join(ch if ch.isalnum() else "_" for ch in name).strip("_") or "f"
    if cleaned[0].isdigit() or keyword.iskeyword(cleaned) or cleaned in ("f", "fn", "np"):
        cleaned = "op_" + cleaned
    return cleaned


# -- families and kernels --------------------------------------------------------------


def leaf_kind(x):
    """How a numpy-side leaf is passed: an array, a Python number, or a constant."""
    if isinstance(x, np.ndarray):
        return "array"
    if isinstance(x, bool):
        return "bool"
    if isinstance(x, int):
        return "int"
    if isinstance(x, float):
        return "float"
    if isinstance(x, complex):
        return "complex"
    return "const"


def _signature(values):
    return tuple((v.dtype, v.ndim) if isinstance(v, np.ndarray) else type(v) for v in values)


class Family:
    """An s2s function over flat leaves, with its jit and its derived families.

    ``fn(*leaves)`` is the function (its parameters ``a0..``); ``kinds`` says for
    each leaf whether it is an array (passed by the framework) or static (a
    Python number or a constant, held by a ``Kernel``); ``diff`` are the leaf
    positions that are differentiated; ``flat_out``: ``fn`` returns a flat tuple
    (derived families) rather than the user's pytree.
    """

    def __init__(self, fn, kinds, diff, mode, name, flat_out=False, fallbacks=()):
        if mode not in ("auto", "jit", "python"):
            raise ValueError(f"s2s.interop: mode must be 'auto', 'jit' or 'python', not {mode!r}")
        self.fn, self.kinds, self.diff, self.mode = fn, tuple(kinds), tuple(diff), mode
        self.name, self.flat_out = name, flat_out
        #: what runs, in the order tried: ("jit", s2s.jit(fn)), ("python", fn), then
        #: ``fallbacks`` (named alternatives, e.g. a vmap that loops where it cannot batch)
        self.ways = ([] if mode == "python" else [("jit", s2s.jit(fn))]) + \
            ([] if mode == "jit" else [("python", fn)] + list(fallbacks))
        #: argument signature -> index into ways (decided on its first call)
        self.modes = {}
        self._derived = {}

    @property
    def arrays(self):
        """Leaf positions passed as arrays by the framework."""
        return tuple(i for i, k in enumerate(self.kinds) if k == "array")

    def run(self, values):
        """``fn(*values)``: compiled where ``s2s.jit`` compiles this signature, else in
        Python (else the first fallback that works), decided on the signature's first call:
        a way that raises an ``S2SError`` (s2s cannot compile or transform the code) is not
        tried again for it."""
        sig = _signature(values)
        chosen = self.modes.get(sig)
        if chosen is not None:
            return self.ways[chosen][1](*values)
        for i, (_, way) in enumerate(self.ways):
            try:
                out = way(*values)
            except S2SError:
                if i == len(self.ways) - 1:
                    raise
                continue
            self.modes[sig] = i
            return out
        raise AssertionError("unreachable")

    def mode_of(self, values):
        """``"jit"``, ``"python"`` (or a fallback's name): how this signature runs
        (``None`` before its first call)."""
        chosen = self.modes.get(_signature(values))
        return None if chosen is None else self.ways[chosen][0]

    # -- derived families ------------------------------------------------------------
    def derived(self, key, make):
        hit = self._derived.get(key)
        if hit is None:  # two threads may both make it; the first one stored wins
            hit = self._derived.setdefault(key, make())
        return hit

    def vjp(self, out_spec, float_outs):
        """The family of ``V(leaves..., cts...)``: the gradients of ``sum_k <o_k, c_k>``
        over the floating-point outputs ``float_outs`` (indices into the flat outputs),
        one per differentiated leaf, as a tuple."""
        return self.derived(("vjp", out_spec, tuple(float_outs)),
                            lambda: self._make_vjp(out_spec, tuple(float_outs)))

    def _make_vjp(self, out_spec, float_outs):
        n = len(self.kinds)
        params = [f"a{i}" for i in range(n)]
        cts = [f"c{k}" for k in range(len(float_outs))]
        name = _ident(f"vjp_{self.name}")
        lines = [f"def {name}({', '.join(params + cts)}):",
                 f"    out = fn({', '.join(params)})"]
        leaves = unpack_lines(out_spec, "out", [0], lines)
        terms = [f"np.sum({leaves[j]} * {c})" for j, c in zip(float_outs, cts)]
        lines.append(f"    return {' + '.join(terms) if terms else '0.0'}")
        inner = _load(name, "\n".join(lines) + "\n", {"fn": self.fn})
        grad = s2s.grad(inner, argnums=self.diff)
        kinds = self.kinds + ("array",) * len(cts)
        diff = self.diff + tuple(range(n, n + len(cts)))
        return Family(grad, kinds, diff, self.mode, name, flat_out=True)

    def batched(self, in_axes):
        """The family of ``s2s.vmap(fn, in_axes)`` (one axis, 0 or ``None``, per leaf;
        static leaves are never batched); every output is batched on axis 0."""
        return self.derived(("vmap", tuple(in_axes)), lambda: self._make_batched(tuple(in_axes)))

    def _make_batched(self, in_axes):
        fn = s2s.vmap(self.fn, in_axes=in_axes)
        # where s2s.vmap has no batching rule for a primitive of the code (an S2SError),
        # its own fallback runs that primitive once per example
        loop = ("python-vmap-loop", s2s.vmap(self.fn, in_axes=in_axes, fallback="loop"))
        return Family(fn, self.kinds, self.diff, self.mode, f"vmap_{self.name}",
                      flat_out=self.flat_out, fallbacks=(loop,) if self.mode != "jit" else ())


def user_family(f, arg_spec, kinds, diff, mode, consts):
    """The family of a user function ``f`` called with arguments of structure
    ``arg_spec`` (a tuple spec): ``fn(a0, a1, ...)`` rebuilds them and calls ``f``.
    ``consts`` are the values of the leaves of kind ``const`` (strings, ...), which
    become globals of the generated function."""
    if isinstance(f, Jitted):  # the op compiles anyway; s2s differentiates the function
        f = f.__wrapped__
    n = n_leaves(arg_spec)
    names = [f"a{i}" for i in range(n)]
    namespace = {"f": f}
    leaf_names = []
    for i, k in enumerate(kinds):
        if k == "const":
            cname = f"_k{i}"
            namespace[cname] = consts[i]
            leaf_names.append(cname)
        else:
            leaf_names.append(names[i])
    it = iter(leaf_names)
    call_args = ", ".join(rebuild_expr(c, namespace, it) for c in spec_children(arg_spec))
    name = _ident(getattr(f, "__name__", "f"))
    params = [nm for nm, k in zip(names, kinds) if k != "const"]
    src = f"def {name}({', '.join(params)}):\n    return f({call_args})\n"
    fn = _load(name, src, namespace)
    # the constants are not parameters: the family's leaves are the non-constant ones
    kept = [k for k in kinds if k != "const"]
    index = {old: new for new, old in enumerate(i for i, k in enumerate(kinds) if k != "const")}
    return Family(fn, kept, tuple(index[d] for d in diff), mode, name)


class Kernel:
    """A family with the values of its static leaves: ``kernel(arrays)`` runs it on
    the framework's arrays (in the order of ``family.arrays``) and returns the flat
    output leaves as numpy arrays and the output spec."""

    def __init__(self, family, statics):
        self.family, self.statics = family, tuple(statics)

    @property
    def key(self):
        return (id(self.family), self.statics)

    def values(self, arrays):
        arrays = iter(arrays)
        statics = iter(self.statics)
        return [next(arrays) if k == "array" else next(statics) for k in self.family.kinds]

    def __call__(self, arrays):
        out = self.family.run(self.values(arrays))
        return flat_result(out, self.family.flat_out)

    def mode_of(self, arrays):
        return self.family.mode_of(self.values(arrays))

    def vjp(self, out_spec, float_outs):
        return Kernel(self.family.vjp(out_spec, float_outs), self.statics)

    def batched(self, in_axes):
        """``in_axes``: one entry per array leaf (0 or None)."""
        axes = iter(in_axes)
        full = [next(axes) if k == "array" else None for k in self.family.kinds]
        return Kernel(self.family.batched(full), self.statics)

    def shapes(self, shapes, dtypes):
        """``(out_spec, [(shape, dtype)...])`` of the outputs for array arguments of these
        shapes and dtypes, by running the kernel once on arrays of ones (integer and
        boolean arrays: zeros/False), cached per shapes, dtypes and static values.  The
        output shapes must not depend on the values in the arrays."""
        key = (tuple(map(tuple, shapes)), tuple(np.dtype(d).str for d in dtypes))
        cache = self.family.derived(("shapes", self.statics), dict)
        hit = cache.get(key)
        if hit is None:
            dummies = [np.ones(s, d) if np.issubdtype(d, np.inexact) else np.zeros(s, d)
                       for s, d in zip(shapes, dtypes)]
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    outs, spec = self(dummies)
                except Exception as exc:
                    raise type(exc)(
                        f"s2s.interop: running {self.family.name} on arrays of ones to find "
                        f"the shapes of its results failed ({exc}); the framework needs the "
                        "result shapes before the values are known") from exc
            hit = cache[key] = (spec, [(o.shape, o.dtype) for o in outs])
        return hit


def flat_result(out, flat):
    """The flat output leaves of ``out`` as numpy arrays, and their spec."""
    if flat:
        out = tuple(out)
        return [np.asarray(o) for o in out], ("tuple", (LEAF,) * len(out))
    leaves, spec = flatten(out, lambda x: not isinstance(x, (tuple, list, dict)) and x is not None)
    arrays = []
    for leaf in leaves:
        a = np.asarray(leaf)
        if a.dtype == object:
            raise TypeError(f"s2s.interop: the function returned a {type(leaf).__name__}, "
                            "which is not an array or a number")
        arrays.append(a)
    return arrays, spec


def float_outputs(outs):
    """Indices of the outputs that carry cotangents (floating point)."""
    return tuple(i for i, o in enumerate(outs) if np.issubdtype(o.dtype, np.floating))


class Registry:
    """Kernels by small integer id (what an opaque framework op carries), one id per
    distinct (family, static values)."""

    def __init__(self):
        self._ids = {}
        self._kernels = {}
        self._next = itertools.count()

    def id_of(self, kernel):
        hit = self._ids.get(kernel.key)
        if hit is None:  # no lock (torch.compile traces this): setdefault is atomic
            new = next(self._next)
            self._kernels[new] = kernel
            hit = self._ids.setdefault(kernel.key, new)
        return hit

    def known(self, kernel):
        """The id of ``kernel`` if it has one, else ``None`` (only reads)."""
        return self._ids.get(kernel.key)

    def __getitem__(self, i):
        return self._kernels[i]


class LRU(OrderedDict):
    """A small least-recently-used cache."""

    def __init__(self, size=256):
        super().__init__()
        self.size = size

    def get_or_make(self, key, make):
        hit = self.get(key)
        if hit is None:
            hit = self[key] = make()
            if len(self) > self.size:
                self.popitem(last=False)
        else:
            self.move_to_end(key)
        return hit


def diff_leaves(arg_spec, argnums, is_float):
    """The leaf positions to differentiate: the floating-point leaves of the arguments
    in ``argnums`` (``None``: of every argument)."""
    children = spec_children(arg_spec)
    nargs = len(children)
    if argnums is None:
        chosen = range(nargs)
    else:
        chosen = (argnums,) if isinstance(argnums, int) else tuple(argnums)
        for a in chosen:
            if not isinstance(a, int) or isinstance(a, bool):
                raise TypeError(f"s2s.interop: argnums must be ints, got {a!r}")
            if not -nargs <= a < nargs:
                raise ValueError(f"s2s.interop: argnums {a} is out of range for "
                                 f"{nargs} argument{'s' if nargs != 1 else ''}")
        chosen = sorted({a % nargs for a in chosen})
    starts = [0]
    for c in children:
        starts.append(starts[-1] + n_leaves(c))
    out = []
    for a in chosen:
        out += [i for i in range(starts[a], starts[a + 1]) if is_float[i]]
    return tuple(out), set(chosen), starts


class FrameworkOp:
    """What ``to_torch``/``to_jax`` share: checking ``f``, ``argnums`` and ``mode`` once,
    and binding a call's arguments by position (``maker`` names the function that made
    the op, for messages)."""

    maker = "to_framework"

    def __init__(self, f, argnums=None, mode="auto"):
        maker = self.maker
        if not callable(f):
            raise TypeError(f"{maker} expects a callable, got {type(f).__name__}")
        if mode not in ("auto", "jit", "python"):
            raise ValueError(f"{maker}: mode must be 'auto', 'jit' or 'python', not {mode!r}")
        if argnums is not None and not isinstance(argnums, (int, tuple, list)):
            raise TypeError(f"{maker}: argnums must be an int or a tuple of ints, "
                            f"not {type(argnums).__name__}")
        self.f, self.argnums, self.mode = f, argnums, mode
        try:
            self._sig = inspect.signature(f)
        except (TypeError, ValueError):
            self._sig = None
        self._families = {}
        self.__name__ = getattr(f, "__name__", "op")
        self.__doc__ = getattr(f, "__doc__", None)
        self.__wrapped__ = f

    def _args(self, args, kwargs):
        if kwargs:
            if self._sig is None:
                raise TypeError(f"{self.__name__}: pass the arguments by position")
            bound = self._sig.bind(*args, **kwargs)
            bound.apply_defaults()
            if bound.kwargs:
                raise TypeError(f"{self.__name__}: keyword-only parameters "
                                f"({', '.join(bound.kwargs)}) are not supported by {self.maker}")
            return tuple(bound.args)
        return tuple(args)
