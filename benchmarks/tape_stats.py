"""What the tape of s2s's generated gradient code holds (a benchmark helper).

s2s's reverse-mode code keeps its tape as a chain of pairs: the primal sweep
runs ``tape = (value, tape)`` before it overwrites a value the adjoint sweep
may need, ``ctrl = (value, ctrl)`` for control values (loop counters,
indices, branch decisions), and the adjoint sweep pops them back with
``value, tape = tape``.  This module runs a copy of the generated function
whose ``rt.grad_seed`` (called once, between the two sweeps) reads the
caller's ``tape`` and ``ctrl``, so the tape is inspected exactly as the
primal sweep left it.  It then

* sizes every entry: the pair that links it (``sys.getsizeof`` of a 2-tuple)
  plus the object it keeps alive, counted once (``id``), with an array view
  charged for its base buffer and objects reachable from the arguments
  charged nothing (the tape does not keep them alive);
* names the push site of every entry (the ``tape = (NAME, tape)``
  statements of the primal sweep, in order) when the loop body pushes the
  same sequence on every iteration;
* says how the adjoint sweep reads each pushed name, from the generated
  source: as a *value* (an operand of arithmetic or of a rule), only for its
  *shape* (``rt.unbroadcast(g, NAME)``, ``rt.zeros_like(NAME)``, the ``x`` of
  ``rt.unpack_vjp(cts, x)``, ...: on a float these need nothing), or not at
  all; and, at run time, whether a site pushes the same value on every
  iteration (loop-invariant: computing it once before the loop would do).

It reaches into s2s's internals (``_bind``, ``generated``, the generated
function's ``__s2s_source__`` and globals) and is not a library API.
"""
from __future__ import annotations

import ast
import sys
import types
from collections import Counter

import numpy as np

import s2s_runtime

LINK_BYTES = sys.getsizeof((None, None))

# rt.<helper>: positions of the arguments it reads only for their shape / structure
SHAPE_ONLY = {"unbroadcast": {1}, "zeros_like": {0}, "unpack_vjp": {1}, "split_vjp": {1},
              "getitem_vjp": {1}, "sum_vjp": {1}, "densify": {1}, "matmul_vjp_lhs": {1},
              "matmul_vjp_rhs": {2}, "concatenate_vjp": {1}, "stack_vjp": {1},
              "array_vjp": {1}}


def generated_function(transform, args):
    """``(gen, values, free)``: the generated function ``transform`` calls for
    ``args``, the bound argument values and its keyword free variables."""
    values = transform._bind(tuple(args), {})
    gen, free = transform.generated(values)
    return gen, values, free


def _runtime_alias(gen):
    for name, value in gen.__globals__.items():
        if value is s2s_runtime:
            return name
    raise ValueError("the generated function does not use s2s_runtime")


def with_runtime(gen, **replace):
    """A copy of ``gen`` compiled from its source, whose ``rt.NAME`` is
    ``replace[NAME]`` where given (the cached original is left alone)."""
    alias = _runtime_alias(gen)
    proxy = types.SimpleNamespace(**{k: getattr(s2s_runtime, k) for k in dir(s2s_runtime)
                                     if not k.startswith("__")})
    for k, v in replace.items():
        setattr(proxy, k, v)
    namespace = dict(gen.__globals__)
    namespace[alias] = proxy
    exec(compile(gen.__s2s_source__, gen.__code__.co_filename, "exec"), namespace)
    return namespace[gen.__name__]


def counting(gen):
    """``(copy of gen, Counter)``: the Counter counts the rt.* calls it makes."""
    calls = Counter()

    def wrap(name, fn):
        def counted(*a, **k):
            calls[name] += 1
            return fn(*a, **k)
        return counted

    replace = {k: wrap(k, getattr(s2s_runtime, k)) for k in dir(s2s_runtime)
               if not k.startswith("_") and callable(getattr(s2s_runtime, k))
               and not isinstance(getattr(s2s_runtime, k), type)
               and not isinstance(getattr(s2s_runtime, k), types.ModuleType)}
    return with_runtime(gen, **replace), calls


def capture(gen, values, free):
    """``(tape entries, ctrl entries)`` in push order, as the primal sweep left them."""
    seen = {}
    seed = s2s_runtime.grad_seed

    def probe(*a, **k):
        frame = sys._getframe(1)
        seen["tape"] = frame.f_locals.get("tape", ())
        seen["ctrl"] = frame.f_locals.get("ctrl", ())
        return seed(*a, **k)

    with_runtime(gen, grad_seed=probe)(*values, **free)
    if "tape" not in seen:
        raise RuntimeError("rt.grad_seed was not called: no tape captured")
    return _entries(seen["tape"]), _entries(seen["ctrl"])


def _entries(chain):
    out = []
    while chain != ():
        value, chain = chain
        out.append(value)
    out.reverse()
    return out


# -------------------------------------------------------------- sizes


def _reachable_ids(tree, ids):
    ids.add(id(tree))
    if isinstance(tree, dict):
        for v in tree.values():
            _reachable_ids(v, ids)
    elif isinstance(tree, (list, tuple)):
        for v in tree:
            _reachable_ids(v, ids)
    elif isinstance(tree, np.ndarray) and tree.base is not None:
        _reachable_ids(tree.base, ids)
    return ids


def payload_bytes(obj, seen):
    """Bytes ``obj`` keeps alive that ``seen`` (ids) does not already account for."""
    if obj is None or isinstance(obj, bool) or id(obj) in seen:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        own = sys.getsizeof(obj)
        return own + (payload_bytes(obj.base, seen) if obj.base is not None else 0)
    if isinstance(obj, (tuple, list)):
        return sys.getsizeof(obj) + sum(payload_bytes(v, seen) for v in obj)
    if isinstance(obj, dict):
        return sys.getsizeof(obj) + sum(payload_bytes(v, seen) for v in obj.values())
    return sys.getsizeof(obj)


def packed_bytes(obj):
    """Bytes ``obj``'s numbers take in a typed buffer (8 per float64, nbytes per array)."""
    if obj is None:
        return 0
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, (tuple, list)):
        return sum(packed_bytes(v) for v in obj)
    if isinstance(obj, (float, int, np.generic)):
        return 8
    return 0


# -------------------------------------------------------------- the source


def push_sites(source):
    """Names pushed by the primal sweep, in source order: ``{"tape": [...], "ctrl": [...]}``."""
    sites = {"tape": [], "ctrl": []}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id in sites \
                and isinstance(node.value, ast.Tuple) and len(node.value.elts) == 2 \
                and isinstance(node.value.elts[1], ast.Name) \
                and node.value.elts[1].id == node.targets[0].id:
            sites[node.targets[0].id].append(ast.unparse(node.value.elts[0]))
    return sites


def adjoint_reads(source):
    """How the adjoint sweep (the code after ``rt.grad_seed``) reads each name:
    ``{name: "value" | "shape"}``; names it does not read are absent."""
    fn = ast.parse(source).body[0]
    body = fn.body
    start = next(i for i, s in enumerate(body) if "grad_seed" in ast.unparse(s))
    reads = {}
    shape_nodes = set()
    for stmt in body[start:]:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in SHAPE_ONLY:
                for pos in SHAPE_ONLY[node.func.attr]:
                    if pos < len(node.args) and isinstance(node.args[pos], ast.Name):
                        shape_nodes.add(id(node.args[pos]))
    for stmt in body[start:]:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                kind = "shape" if id(node) in shape_nodes else "value"
                if reads.get(node.id) != "value":
                    reads[node.id] = kind
    return reads


# -------------------------------------------------------------- the report


def _same(a, b):
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
                and a.shape == b.shape and np.array_equal(a, b))
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    try:
        return bool(a == b) and type(a) is type(b)
    except Exception:
        return False


def tape_report(transform, args, iterations):
    """Statistics of the tape ``transform(*args)`` records over ``iterations``
    loop iterations (one loop whose body pushes the same sites each time).

    Keys: ``tape_entries``, ``ctrl_entries``, ``tape_bytes``, ``ctrl_bytes``
    (totals), ``sites`` (push statements); when every iteration pushes the
    same sites also ``by_site`` (``{kind: (sites, bytes per iteration)}`` for
    the kinds value / invariant / shape / unread), ``needed_packed_per_iter``
    (the numbers of the value sites in typed buffers) and ``detail``
    (``(name, kind, bytes per iteration)`` per site).
    """
    gen, values, free = generated_function(transform, args)
    tape, ctrl = capture(gen, values, free)
    source = gen.__s2s_source__
    sites = push_sites(source)
    reads = adjoint_reads(source)
    arg_ids = set()
    _reachable_ids(list(values) + list(free.values()), arg_ids)

    report = {"iterations": iterations, "tape_entries": len(tape), "ctrl_entries": len(ctrl)}
    seen = set(arg_ids)
    report["tape_bytes"] = len(tape) * LINK_BYTES + sum(payload_bytes(v, seen) for v in tape)
    report["ctrl_bytes"] = len(ctrl) * LINK_BYTES + sum(payload_bytes(v, seen) for v in ctrl)

    n = len(sites["tape"])
    report["sites"] = n
    if n == 0 or len(tape) != iterations * n:
        report["by_site"] = None          # branches or pushes outside the loop: totals only
        return report
    by_kind = Counter()
    bytes_by_kind = Counter()
    needed_packed = 0
    detail = []
    seen = set(arg_ids)
    for j, name in enumerate(sites["tape"]):
        column = tape[j::n]
        invariant = iterations > 2 and all(_same(column[1], v) for v in column[2:])
        kind = reads.get(name, "unread")
        if kind == "value" and invariant:
            kind = "invariant"
        size = len(column) * LINK_BYTES + sum(payload_bytes(v, seen) for v in column)
        by_kind[kind] += 1
        bytes_by_kind[kind] += size
        detail.append((name, kind, size / iterations))
        if kind == "value":
            needed_packed += sum(packed_bytes(v) for v in column)
    report["by_site"] = {k: (by_kind[k], bytes_by_kind[k] / iterations)
                         for k in ("value", "invariant", "shape", "unread")}
    report["needed_packed_per_iter"] = needed_packed / iterations
    report["detail"] = detail
    return report


# -------------------------------------------------------------- per loop


class _Instrument(ast.NodeTransformer):
    """Counts each loop's iterations (``__s2s_loops[k] += 1`` first in its body) and
    hands every push ``tape = (X, tape)`` / ``ctrl = (X, ctrl)`` to
    ``__s2s_push(k, "tape", X)``, ``k`` the innermost enclosing loop (-1: none)."""

    def __init__(self):
        self.loops, self.stack = [], []

    def _loop(self, node):
        k = len(self.loops)
        header = ast.unparse(node).splitlines()[0]
        self.loops.append((header, len(self.stack)))
        self.stack.append(k)
        self.generic_visit(node)
        self.stack.pop()
        count = ast.parse(f"__s2s_loops[{k}] += 1").body[0]
        node.body.insert(0, count)
        return node

    visit_For = visit_While = _loop

    def visit_Assign(self, node):
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id in ("tape", "ctrl") and isinstance(node.value, ast.Tuple) \
                and len(node.value.elts) == 2 and isinstance(node.value.elts[1], ast.Name) \
                and node.value.elts[1].id == node.targets[0].id:
            name = node.targets[0].id
            k = self.stack[-1] if self.stack else -1
            note = ast.parse(f"__s2s_push({k}, {name!r}, {name}[0])").body[0]
            return [node, note]
        return node


def loop_report(transform, args):
    """Per loop of the Python code ``transform(*args)`` runs (s2s's generated gradient,
    primal sweep and adjoint sweep), in source order: ``{"loop": its header in the
    generated code, "depth", "iterations", "tape_bytes", "ctrl_bytes",
    "bytes_per_iteration"}`` for the loops that push; bytes as ``tape_report`` counts
    them (link pairs plus what each pushed value keeps alive, counted once), pushes
    outside any loop under ``"loop": "(outside loops)"``."""
    gen, values, free = generated_function(transform, args)
    tree = ast.parse(gen.__s2s_source__)
    inst = _Instrument()
    tree = ast.fix_missing_locations(inst.visit(tree))
    loops = [0] * len(inst.loops)
    pushed = {}
    seen = set()
    _reachable_ids(list(values) + list(free.values()), seen)

    def note(k, kind, value):
        row = pushed.setdefault(k, {"tape": 0, "ctrl": 0})
        row[kind] += LINK_BYTES + payload_bytes(value, seen)

    namespace = dict(gen.__globals__, __s2s_loops=loops, __s2s_push=note)
    exec(compile(tree, gen.__code__.co_filename, "exec"), namespace)
    namespace[gen.__name__](*values, **free)
    out = []
    for k in sorted(pushed, key=lambda k: (k < 0, k)):
        header, depth = inst.loops[k] if k >= 0 else ("(outside loops)", 0)
        iters = loops[k] if k >= 0 else 1
        total = pushed[k]["tape"] + pushed[k]["ctrl"]
        out.append({"loop": header, "depth": depth, "iterations": iters,
                    "tape_bytes": pushed[k]["tape"], "ctrl_bytes": pushed[k]["ctrl"],
                    "bytes_per_iteration": total / max(iters, 1)})
    return out


def main(argv=None):
    """``python benchmarks/tape_stats.py [--full] [--only NAME]``: per loop of each
    gradient case of ``adbench.py``, the bytes its tapes record per iteration, for the
    compiled gradient (``s2s.jit(s2s.grad(f))``, from the lowered kernel:
    ``s2s.cli.dump_llvm.tape_layout``) and Python mode (measured by running it)."""
    import argparse

    import s2s
    from s2s.cli.dump_llvm import tape_layout

    from adbench_cases import CASES
    p = argparse.ArgumentParser(description=main.__doc__.splitlines()[0])
    p.add_argument("--full", action="store_true")
    p.add_argument("--only", default="")
    a = p.parse_args(argv)
    for case in CASES:
        if case.kind != "grad" or (a.only and a.only not in case.name):
            continue
        level = 2 if a.full else 1
        args = case.make_args(np.random.default_rng(0), level)
        argnums = case.wrt[0] if len(case.wrt) == 1 else case.wrt
        print(f"\n## {case.name} ({case.size(level)})")
        try:
            rows = tape_layout(case.fn, args, grad_argnums=argnums)
            print("compiled (per iteration, on the tape itself; arrays pushed keep their "
                  "buffers besides):")
            for r in rows:
                pushes = ", ".join(f"{k}: {' '.join(v)}" for k, v in r["pushes"].items())
                print(f"  {'  ' * r['depth']}line {r['line']}: {r['source']:40s} "
                      f"{r['bytes_per_iteration']:5d} B  ({pushes})")
            if not rows:
                print("  no loop pushes on a tape")
        except Exception as exc:
            print(f"compiled: {type(exc).__name__}: {str(exc).splitlines()[0]}")
        try:
            rows = loop_report(s2s.grad(case.fn, argnums=argnums), args)
            print("Python mode (measured):")
            for r in rows:
                print(f"  {'  ' * r['depth']}{r['loop'][:60]:60s} x{r['iterations']:<7d} "
                      f"{r['bytes_per_iteration']:8.0f} B/iteration")
        except Exception as exc:
            print(f"Python mode: {type(exc).__name__}: {str(exc).splitlines()[0]}")


if __name__ == "__main__":
    sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
    main()
