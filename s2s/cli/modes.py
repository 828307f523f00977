"""Which transforms every primitive has: the inventory behind ``s2s rules``.

A *primitive* is a callable that code s2s transforms -- the user's, or the
derivative and batched code s2s generates -- may call without s2s reading its
source: a numpy/``math``/builtin callable with a rule, or a public function of
``s2s_runtime`` (the helpers generated code calls).  For each, ``modes(fn)``
says for the four transforms

* ``jvp``  -- forward mode: JVP templates, or ``nondiff`` (zero derivative);
* ``vjp``  -- reverse mode: VJP templates, or ``nondiff``;
* ``vmap`` -- a batching rule (``s2s/batch``);
* ``jit``  -- an LLVM lowering (``s2s/backend/llvm``);

whether it is there, and where it is not, why: the reason stated in the
primitive's record (``rules.registry.no_mode``), or that s2s *inlines* the
helper (``rules.registry.definline``: plain numpy Python that a transform
without its own rule reads like user code, so the mode comes from the
primitives the helper calls), or ``None``: a gap.

Contract: ``inventory()`` lists every primitive once, in a stable order;
``modes(fn)`` maps each of ``MODES`` to a ``Mode``.
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil
from dataclasses import dataclass
from typing import Dict, List, Optional

import numpy as np

MODES = ("jvp", "vjp", "vmap", "jit")

#: modules of s2s_runtime whose functions no transform sees: the pytree API is the
#: user's; the GPU and native-build launchers are drivers, not operations; ``fast_numpy``
#: holds the faster equivalents the Python emitter writes for numpy calls (an emission
#: detail, after every transform); ``blas_contract`` plans the matmul inside the batched
#: product helpers (generated code calls the helpers, never it)
_NOT_CALLED = ("s2s_runtime.tree", "s2s_runtime.tree_nodes", "s2s_runtime.cuda",
               "s2s_runtime.native", "s2s_runtime.fast_numpy",
               "s2s_runtime.blas_contract")


@dataclass(frozen=True)
class Mode:
    #: "yes", "nondiff" (a zero derivative), "inlined" (the helper's own code), "no"
    status: str
    why: str = ""

    @property
    def ok(self) -> bool:
        return self.status != "no" or bool(self.why)

    def mark(self) -> str:
        if self.status == "yes":
            return "+"
        if self.status == "nondiff":
            return "0"
        if self.status == "inlined":
            return "i"
        return "-" if self.why else "?"


def _tables():
    from ..backend.llvm.lower import function as lower  # noqa: F401  (registers every lowering)
    from ..backend.llvm.derivs import jacobian_ops  # noqa: F401  (compiled Jacobians' operations)
    from ..backend.llvm.ops.calls import TABLE
    from ..batch import transform  # noqa: F401  (registers every batching rule)
    from ..batch.table import batch_rule
    from ..rules import lookup
    return lookup, batch_rule, TABLE


def runtime_functions() -> List:
    """The public functions of ``s2s_runtime`` generated code may call."""
    import s2s_runtime

    out, seen = [], set()
    for info in pkgutil.iter_modules(s2s_runtime.__path__, "s2s_runtime."):
        if info.name.startswith(_NOT_CALLED):
            continue
        mod = importlib.import_module(info.name)
        for name, v in sorted(vars(mod).items()):
            if name.startswith("_") or not inspect.isfunction(v) or id(v) in seen:
                continue
            if v.__module__ != info.name:
                continue
            seen.add(id(v))
            out.append(v)
    return out


def inventory() -> List:
    """Every primitive: the callables with a rule or a lowering or a batching rule, and
    the run-time helpers; each once, ordered by qualified name."""
    from ..rules.registry import all_rules
    from ..batch.table import batch_table
    _, _, table = _tables()
    fns: Dict[int, object] = {}
    for fn in ([r.fn for r in all_rules()] + list(batch_table()) + list(table)
               + runtime_functions()):
        fns.setdefault(id(fn), fn)
    return sorted(fns.values(), key=qualified_name)


def qualified_name(fn) -> str:
    """``numpy.sin``, ``operator.mul``, ``s2s_runtime.vjps.prod_vjp``: a module path that
    gives back ``fn`` where there is one."""
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, np.ufunc):  # a ufunc's method: numpy.add.at
        return f"numpy.{owner.__name__}.{fn.__name__}"
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    module = getattr(fn, "__module__", None) or type(fn).__module__
    candidates = [module.lstrip("_"), module] if module.startswith("_") else [module]
    for mod_name in candidates:
        try:
            if getattr(importlib.import_module(mod_name), name, None) is fn:
                return f"{mod_name}.{name}"
        except ImportError:
            pass
    return f"{module}.{name}"


def modes(fn) -> Dict[str, Mode]:
    """``{mode: Mode}`` for the primitive ``fn`` (see the module docstring)."""
    from ..rules.registry import inlined, no_mode
    lookup, batch_rule, table = _tables()
    rule = lookup(fn)
    out = {}
    for mode in ("jvp", "vjp"):
        if rule is not None and rule.nondiff:
            out[mode] = Mode("nondiff")
        elif rule is not None and (rule.jvps if mode == "jvp" else rule.vjps):
            out[mode] = Mode("yes")
        else:
            out[mode] = _missing(fn, mode, no_mode, inlined)
    out["vmap"] = Mode("yes") if batch_rule(fn) is not None else _missing(fn, "vmap", no_mode,
                                                                          inlined)
    try:
        lowered = fn in table
    except TypeError:
        lowered = False
    out["jit"] = Mode("yes") if lowered else _missing(fn, "jit", no_mode, inlined)
    return out


def _missing(fn, mode, no_mode, inlined) -> Mode:
    why = no_mode(fn, mode)
    if why:
        return Mode("no", why)
    if inlined(fn, mode):
        return Mode("inlined")
    return Mode("no")


def summary(fns=None) -> Dict[str, int]:
    """Counts: primitives, those with all four modes (a rule, a zero derivative or the
    helper's inlined code), those with a stated reason for each missing one, and gaps."""
    fns = inventory() if fns is None else fns
    full = reasoned = gaps = 0
    for fn in fns:
        m = modes(fn)
        if all(x.status != "no" for x in m.values()):
            full += 1
        elif all(x.ok for x in m.values()):
            reasoned += 1
        else:
            gaps += 1
    return {"primitives": len(fns), "all four modes": full, "missing modes with a reason":
            reasoned, "missing modes without a reason": gaps}


def gaps(fns=None) -> Dict[str, List[str]]:
    """``{qualified name: [modes missing without a reason]}``."""
    fns = inventory() if fns is None else fns
    out = {}
    for fn in fns:
        missing = [k for k, m in modes(fn).items() if not m.ok]
        if missing:
            out[qualified_name(fn)] = missing
    return out


def row(fn) -> str:
    """One line of ``s2s rules``: the name, a mark per mode and the reasons."""
    m = modes(fn)
    marks = " ".join(f"{k}{m[k].mark()}" for k in MODES)
    whys = "; ".join(f"{k}: {m[k].why}" for k in MODES if m[k].why)
    return f"{qualified_name(fn)}  {marks}" + (f"  ({whys})" if whys else "")


def explain(fn) -> Optional[str]:
    """The rules' docstring for ``fn`` (for ``s2s rules NAME``)."""
    from ..rules import lookup
    rule = lookup(fn)
    return rule.doc if rule is not None else None
