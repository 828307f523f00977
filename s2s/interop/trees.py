"""Pytrees at the framework boundary: the arguments and results of an interop op.

``flatten`` turns a tree of dict, list, tuple, namedtuple and ``None`` nodes into its
leaves and a hashable *spec* of its structure; ``unflatten`` is its inverse.  The two
text builders write the same walk as Python source for generated functions:
``rebuild_expr`` an expression that builds the tree from leaf names, ``unpack_lines``
the statements that bind a tree value's leaves to names.
"""
from __future__ import annotations

#: a leaf of the argument or result tree (the index into the flat list)
LEAF = ("leaf",)


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def flatten(tree, is_leaf):
    """``(leaves, spec)``: the leaves of ``tree`` (dict values in sorted key order) and a
    hashable spec of its structure.  ``is_leaf(x)`` says what a leaf is (arrays,
    tensors, numbers); ``None`` is a node without children."""
    leaves = []

    def walk(x):
        if is_leaf(x):
            leaves.append(x)
            return LEAF
        if x is None:
            return ("none",)
        if _is_namedtuple(x):
            return ("namedtuple", type(x), tuple(walk(v) for v in x))
        if isinstance(x, (tuple, list)):
            return (type(x).__name__, tuple(walk(v) for v in x))
        if isinstance(x, dict):
            keys = sorted(x)
            return ("dict", tuple(keys), tuple(walk(x[k]) for k in keys))
        raise TypeError(f"s2s.interop: cannot pass a {type(x).__name__} across the framework "
                        "boundary (arguments and results are pytrees of dict, list, tuple, "
                        "namedtuple and None with arrays, tensors and numbers as leaves)")

    return leaves, walk(tree)


def unflatten(spec, leaves):
    """The inverse of ``flatten``."""
    it = iter(leaves)

    def build(s):
        tag = s[0]
        if tag == "leaf":
            return next(it)
        if tag == "none":
            return None
        if tag == "namedtuple":
            return s[1](*[build(c) for c in s[2]])
        if tag == "dict":
            return {k: build(c) for k, c in zip(s[1], s[2])}
        items = [build(c) for c in s[1]]
        return items if tag == "list" else tuple(items)

    return build(spec)


def n_leaves(spec):
    """How many leaves a tree of structure ``spec`` has."""
    tag = spec[0]
    if tag == "leaf":
        return 1
    if tag == "none":
        return 0
    return sum(map(n_leaves, spec[-1]))


def spec_children(spec):
    """The top-level children of a tuple spec (the arguments of a call)."""
    return spec[1]


def rebuild_expr(spec, consts, it):
    """Python text that rebuilds ``spec`` from the parameter names (leaves) in order."""
    tag = spec[0]
    if tag == "leaf":
        return next(it)
    if tag == "none":
        return "None"
    if tag == "namedtuple":
        cname = f"_nt{len(consts)}"
        consts[cname] = spec[1]
        return f"{cname}({', '.join(rebuild_expr(c, consts, it) for c in spec[2])})"
    if tag == "dict":
        items = ", ".join(f"{k!r}: {rebuild_expr(c, consts, it)}"
                          for k, c in zip(spec[1], spec[2]))
        return "{" + items + "}"
    parts = [rebuild_expr(c, consts, it) for c in spec[1]]
    if tag == "list":
        return "[" + ", ".join(parts) + "]"
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def unpack_lines(spec, expr, counter, out, indent="    "):
    """Statements that bind the leaves of the value ``expr`` (structure ``spec``) to
    fresh names, appended to ``out``; returns the leaf names in order."""
    tag = spec[0]
    if tag == "leaf":
        return [expr]
    if tag == "none":
        return []
    names = []
    if tag == "dict":
        for k, c in zip(spec[1], spec[2]):
            counter[0] += 1
            name = f"o{counter[0]}"
            out.append(f"{indent}{name} = {expr}[{k!r}]")
            names += unpack_lines(c, name, counter, out, indent)
        return names
    children = spec[2] if tag == "namedtuple" else spec[1]
    if not children:
        return []
    parts = []
    for _ in children:
        counter[0] += 1
        parts.append(f"o{counter[0]}")
    out.append(f"{indent}{', '.join(parts)}{',' if len(parts) == 1 else ''} = {expr}")
    for c, name in zip(children, parts):
        names += unpack_lines(c, name, counter, out, indent)
    return names
