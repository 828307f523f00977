"""Rules of the list, dict, sequence and record helpers (``s2s_runtime.containers``,
``mappings``, ``records``) and of the builtins ``list``, ``tuple``.

The VJPs of the list and dict writes read only the cotangent, positions and keys,
and the item written or removed (for the shape of a zero): never the old container,
so a loop that appends records nothing on the tape for the list.  Positions and
keys are piecewise constant: zero templates, so the transforms treat them as
constants even when they come from a loop over differentiated values.

Second order: the helpers in the templates (``g[:-1]``, ``list_insert``,
``dict_reset``, ``seq_cast``...) are linear in the cotangent and have rules here
too, each VJP the helper's transpose and each JVP the helper applied to the
tangent.  Every helper returns a container: ``container_result=True``, so
contributions add leaf by leaf with ``rt.add``.
"""
from s2s_runtime import (dict_default_ct, dict_get, dict_get_ct, dict_items, dict_items_ct,
                         dict_items_of, dict_keys, dict_remove, dict_reset, dict_restore,
                         dict_set, dict_subset, dict_update, dict_update_ct, dict_values,
                         dict_values_ct, dict_values_of, extreme_ct, extreme_tangent,
                         field_tangent, getattr_vjp, insert_index, item_index, list_append,
                         list_extend, list_insert, list_remove, list_set, make_record,
                         max_of, min_of, old_item, record_fields, record_like,
                         reversed_items, seq_cast, sorted_ct, sorted_tangent,
                         seq_cast_transpose, seq_concat, seq_repeat, seq_repeat_ct, seq_tile,
                         sequence, zeros_like)

from s2s_runtime import records

from .registry import defjvp, defnondiff, defprops, defvjp


# the primitives ``item in container`` and ``item not in container`` are lowered to
# (``frontend/desugar.py``; the operands swapped, as ``operator.contains``)
def contains(container, item):
    """``item in container``"""
    return item in container


def not_contains(container, item):
    """``item not in container``"""
    return item not in container


def _vjp(fn, *templates):
    defvjp(fn, *templates, container_result=True)


# positions, keys, membership and truth values carry no derivative
defnondiff(item_index, insert_index, old_item, dict_keys, contains, not_contains, any, all)
defnondiff(records.is_record)  # (a type test: a flag)

# --- lists (p: a normalised position) ------------------------------------------------
_vjp(list_append,
     lambda g, ans, l, v: g[:-1],
     lambda g, ans, l, v: g[-1])
defjvp(list_append,
       lambda t, ans, l, v: list_append(t, zeros_like(v)),
       lambda t, ans, l, v: list_append(zeros_like(l), t))
_vjp(list_extend,
     lambda g, ans, l, w: g[:len(g) - len(w)],
     lambda g, ans, l, w: seq_cast(g[len(g) - len(w):], w))
defjvp(list_extend,
       lambda t, ans, l, w: list_extend(t, zeros_like(w)),
       lambda t, ans, l, w: list_extend(zeros_like(l), t))
_vjp(list_insert,
     lambda g, ans, l, p, v: list_remove(g, p, g[p]),
     lambda g, ans, l, p, v: zeros_like(p),
     lambda g, ans, l, p, v: g[p])
defjvp(list_insert,
       lambda t, ans, l, p, v: list_insert(t, p, zeros_like(v)),
       lambda t, ans, l, p, v: zeros_like(ans),
       lambda t, ans, l, p, v: list_insert(zeros_like(l), p, t))
_vjp(list_remove,
     lambda g, ans, l, p, item: list_insert(g, p, zeros_like(item)),
     lambda g, ans, l, p, item: zeros_like(p),
     lambda g, ans, l, p, item: zeros_like(item))
defjvp(list_remove,
       lambda t, ans, l, p, item: list_remove(t, p, t[p]),
       lambda t, ans, l, p, item: zeros_like(ans),
       lambda t, ans, l, p, item: zeros_like(ans))
_vjp(list_set,
     lambda g, ans, l, p, v, old: list_set(g, p, zeros_like(old), g[p]),
     lambda g, ans, l, p, v, old: zeros_like(p),
     lambda g, ans, l, p, v, old: g[p],
     lambda g, ans, l, p, v, old: zeros_like(old))
defjvp(list_set,
       lambda t, ans, l, p, v, old: list_set(t, p, zeros_like(v), t[p]),
       lambda t, ans, l, p, v, old: zeros_like(ans),
       lambda t, ans, l, p, v, old: list_set(zeros_like(l), p, t, zeros_like(old)),
       lambda t, ans, l, p, v, old: zeros_like(ans))

# a + b, a * n of lists and tuples (what `+` and `*` of them become)
_vjp(seq_concat,
     lambda g, ans, a, b: seq_cast(g[:len(g) - len(b)], a),
     lambda g, ans, a, b: seq_cast(g[len(g) - len(b):], b))
defjvp(seq_concat,
       lambda t, ans, a, b: seq_concat(t, zeros_like(b)),
       lambda t, ans, a, b: seq_concat(zeros_like(a), t))
_vjp(seq_repeat,
     lambda g, ans, a, n: seq_repeat_ct(g, a),
     lambda g, ans, a, n: zeros_like(n))
defjvp(seq_repeat,
       lambda t, ans, a, n: seq_repeat(t, n),
       lambda t, ans, a, n: zeros_like(ans))
_vjp(seq_repeat_ct,
     lambda c, out, g, a: seq_tile(c, g),
     lambda c, out, g, a: zeros_like(a))
defjvp(seq_repeat_ct,
       lambda t, out, g, a: seq_repeat_ct(t, a),
       lambda t, out, g, a: zeros_like(out))
_vjp(seq_tile,
     lambda ct, out, c, g: seq_repeat_ct(ct, c),
     lambda ct, out, c, g: zeros_like(g))
defjvp(seq_tile,
       lambda t, out, c, g: seq_tile(t, g),
       lambda t, out, c, g: zeros_like(out))

# --- sequences: loops, list(...), tuple(...), max/min of one iterable -----------------
_vjp(sequence,
     lambda g, ans, x: seq_cast(g, x))
defjvp(sequence,
       lambda t, ans, x: seq_cast_transpose(t, ans, x))
# sorted(items): a permutation (the order is piecewise constant)
_vjp(sorted,
     lambda g, ans, iterable, key=None, reverse=False: sorted_ct(g, iterable, key, reverse))
defjvp(sorted,
       lambda t, ans, iterable, key=None, reverse=False:
       sorted_tangent(t, iterable, key, reverse))
_vjp(sorted_ct,
     lambda c, out, g, items, key=None, reverse=False: sorted_tangent(c, items, key, reverse),
     lambda c, out, g, items, key=None, reverse=False: zeros_like(items))
defjvp(sorted_ct,
       lambda t, out, g, items, key=None, reverse=False: sorted_ct(t, items, key, reverse),
       lambda t, out, g, items, key=None, reverse=False: zeros_like(out))
_vjp(sorted_tangent,
     lambda c, out, t, items, key=None, reverse=False: sorted_ct(c, items, key, reverse),
     lambda c, out, t, items, key=None, reverse=False: zeros_like(items))
defjvp(sorted_tangent,
       lambda tan, out, t, items, key=None, reverse=False:
       sorted_tangent(tan, items, key, reverse),
       lambda tan, out, t, items, key=None, reverse=False: zeros_like(out))
_vjp(reversed_items,
     lambda g, ans, x: seq_cast(g[::-1], x))
defjvp(reversed_items,
       lambda t, ans, x: reversed_items(t))
for _builtin in (list, tuple):
    _vjp(_builtin,
         lambda g, ans, iterable=(): seq_cast(g, iterable))
    defjvp(_builtin,
           lambda t, ans, iterable=(): seq_cast_transpose(t, ans, iterable))
# dict(d): a copy (what d.copy() becomes); the cotangent keeps d's keys
_vjp(dict,
     lambda g, ans, iterable=(): dict_subset(g, iterable))
defjvp(dict,
       lambda t, ans, iterable=(): dict_subset(t, iterable))
# seq_cast(items, like): linear in items; its transpose converts back
_vjp(seq_cast,
     lambda ct, out, items, like: seq_cast_transpose(ct, items, like),
     lambda ct, out, items, like: zeros_like(like))
defjvp(seq_cast,
       lambda tan, out, items, like: seq_cast(tan, like),
       lambda tan, out, items, like: zeros_like(out))
_vjp(seq_cast_transpose,
     lambda c, out, ct, items, like: seq_cast(c, like),
     lambda c, out, ct, items, like: zeros_like(items),
     lambda c, out, ct, items, like: zeros_like(like))
defjvp(seq_cast_transpose,
       lambda tan, out, ct, items, like: seq_cast_transpose(tan, items, like),
       lambda tan, out, ct, items, like: zeros_like(out),
       lambda tan, out, ct, items, like: zeros_like(out))
# max(items) / min(items): the derivative goes to the item chosen (the first of ties)
for _extreme in (max_of, min_of):
    defvjp(_extreme,
           lambda g, ans, items, key=None: extreme_ct(g, items, ans))
    defjvp(_extreme,
           lambda t, ans, items, key=None: extreme_tangent(t, items, ans))
_vjp(extreme_ct,
     lambda ct, out, g, items, ans: extreme_tangent(ct, items, ans),
     lambda ct, out, g, items, ans: zeros_like(items),
     lambda ct, out, g, items, ans: zeros_like(ans))
defjvp(extreme_ct,
       lambda tan, out, g, items, ans: extreme_ct(tan, items, ans),
       lambda tan, out, g, items, ans: zeros_like(out),
       lambda tan, out, g, items, ans: zeros_like(out))
defvjp(extreme_tangent,
       lambda ct, out, t, items, ans: extreme_ct(ct, items, ans),
       lambda ct, out, t, items, ans: zeros_like(items),
       lambda ct, out, t, items, ans: zeros_like(ans))
defjvp(extreme_tangent,
       lambda tan, out, t, items, ans: extreme_tangent(tan, items, ans),
       lambda tan, out, t, items, ans: zeros_like(out),
       lambda tan, out, t, items, ans: zeros_like(out))

# --- dicts (k: a key; old: the entry a write replaces, or MISSING) ---------------------
_vjp(dict_set,
     lambda g, ans, d, k, v, old: dict_reset(g, k, old),
     lambda g, ans, d, k, v, old: zeros_like(k),
     lambda g, ans, d, k, v, old: g[k],
     lambda g, ans, d, k, v, old: zeros_like(old))
defjvp(dict_set,
       lambda t, ans, d, k, v, old: dict_set(t, k, zeros_like(v), old),
       lambda t, ans, d, k, v, old: zeros_like(ans),
       lambda t, ans, d, k, v, old: dict_set(zeros_like(d), k, t, old),
       lambda t, ans, d, k, v, old: zeros_like(ans))
_vjp(dict_reset,
     lambda c, out, g, k, old: dict_set(c, k, zeros_like(g[k]), old),
     lambda c, out, g, k, old: zeros_like(k),
     lambda c, out, g, k, old: zeros_like(old))
defjvp(dict_reset,
       lambda t, out, g, k, old: dict_reset(t, k, old),
       lambda t, out, g, k, old: zeros_like(out),
       lambda t, out, g, k, old: zeros_like(out))
_vjp(dict_remove,
     lambda g, ans, d, k, old: dict_restore(g, k, old),
     lambda g, ans, d, k, old: zeros_like(k),
     lambda g, ans, d, k, old: zeros_like(old))
defjvp(dict_remove,
       lambda t, ans, d, k, old: dict_remove(t, k, old),
       lambda t, ans, d, k, old: zeros_like(ans),
       lambda t, ans, d, k, old: zeros_like(ans))
_vjp(dict_restore,
     lambda c, out, g, k, old: dict_remove(c, k, old),
     lambda c, out, g, k, old: zeros_like(k),
     lambda c, out, g, k, old: zeros_like(old))
defjvp(dict_restore,
       lambda t, out, g, k, old: dict_restore(t, k, old),
       lambda t, out, g, k, old: zeros_like(out),
       lambda t, out, g, k, old: zeros_like(out))
# d.get(k, default): the entry if there is one, else the default
_vjp(dict_get,
     lambda g, ans, d, k, default=None: dict_get_ct(g, d, k),
     lambda g, ans, d, k, default=None: zeros_like(k),
     lambda g, ans, d, k, default=None: dict_default_ct(g, d, k, default))
defjvp(dict_get,
       lambda t, ans, d, k, default=None: dict_get(t, k, zeros_like(default)),
       lambda t, ans, d, k, default=None: zeros_like(ans),
       lambda t, ans, d, k, default=None: dict_default_ct(t, d, k, default))
_vjp(dict_get_ct,
     lambda c, out, g, d, k: dict_get(c, k, zeros_like(g)),
     lambda c, out, g, d, k: zeros_like(d),
     lambda c, out, g, d, k: zeros_like(k))
defjvp(dict_get_ct,
       lambda t, out, g, d, k: dict_get_ct(t, d, k),
       lambda t, out, g, d, k: zeros_like(out),
       lambda t, out, g, d, k: zeros_like(out))
_vjp(dict_default_ct,
     lambda c, out, g, d, k, default: dict_default_ct(c, d, k, g),
     lambda c, out, g, d, k, default: zeros_like(d),
     lambda c, out, g, d, k, default: zeros_like(k),
     lambda c, out, g, d, k, default: zeros_like(default))
defjvp(dict_default_ct,
       lambda t, out, g, d, k, default: dict_default_ct(t, d, k, default),
       lambda t, out, g, d, k, default: zeros_like(out),
       lambda t, out, g, d, k, default: zeros_like(out),
       lambda t, out, g, d, k, default: zeros_like(out))
# d.update(other)
_vjp(dict_update,
     lambda g, ans, d, other: dict_update_ct(g, d, other),
     lambda g, ans, d, other: dict_subset(g, other))
defjvp(dict_update,
       lambda t, ans, d, other: dict_update(t, zeros_like(other)),
       lambda t, ans, d, other: dict_update(zeros_like(d), t))
_vjp(dict_update_ct,
     lambda c, out, g, d, other: dict_update(c, zeros_like(dict_subset(g, other))),
     lambda c, out, g, d, other: zeros_like(d),
     lambda c, out, g, d, other: zeros_like(other))
defjvp(dict_update_ct,
       lambda t, out, g, d, other: dict_update_ct(t, d, other),
       lambda t, out, g, d, other: zeros_like(out),
       lambda t, out, g, d, other: zeros_like(out))
_vjp(dict_subset,
     lambda c, out, g, other: dict_update(zeros_like(g), c),
     lambda c, out, g, other: zeros_like(other))
defjvp(dict_subset,
       lambda t, out, g, other: dict_subset(t, other),
       lambda t, out, g, other: zeros_like(out))
# d.values(), d.items(): lists in d's key order
_vjp(dict_values,
     lambda g, ans, d: dict_values_ct(g, d))
defjvp(dict_values,
       lambda t, ans, d: dict_values_of(t, d))
_vjp(dict_items,
     lambda g, ans, d: dict_items_ct(g, d))
defjvp(dict_items,
       lambda t, ans, d: dict_items_of(t, d))
_vjp(dict_values_ct,
     lambda c, out, g, d: dict_values_of(c, d),
     lambda c, out, g, d: zeros_like(d))
defjvp(dict_values_ct,
       lambda t, out, g, d: dict_values_ct(t, d),
       lambda t, out, g, d: zeros_like(out))
_vjp(dict_values_of,
     lambda c, out, t, d: dict_values_ct(c, d),
     lambda c, out, t, d: zeros_like(d))
defjvp(dict_values_of,
       lambda tan, out, t, d: dict_values_of(tan, d),
       lambda tan, out, t, d: zeros_like(out))
_vjp(dict_items_ct,
     lambda c, out, g, d: dict_items_of(c, d),
     lambda c, out, g, d: zeros_like(d))
defjvp(dict_items_ct,
       lambda t, out, g, d: dict_items_ct(t, d),
       lambda t, out, g, d: zeros_like(out))
_vjp(dict_items_of,
     lambda c, out, t, d: dict_items_ct(c, d),
     lambda c, out, t, d: zeros_like(d))
defjvp(dict_items_of,
       lambda tan, out, t, d: dict_items_of(tan, d),
       lambda tan, out, t, d: zeros_like(out))

# --- records: dataclass / namedtuple instances built in the function ------------------
_vjp(make_record,
     lambda g, ans, cls, fields: zeros_like(cls),
     lambda g, ans, cls, fields: record_fields(g))
defjvp(make_record,
       lambda t, ans, cls, fields: zeros_like(ans),
       lambda t, ans, cls, fields: record_like(ans, t))
_vjp(record_fields,
     lambda c, out, g: record_like(g, c))
defjvp(record_fields,
       lambda t, out, g: record_fields(t))
_vjp(record_like,
     lambda c, out, like, fields: zeros_like(like),
     lambda c, out, like, fields: record_fields(c))
defjvp(record_like,
       lambda t, out, like, fields: zeros_like(out),
       lambda t, out, like, fields: record_like(like, t))
# the tangent of a field (forward mode's obj.name): linear in t
_vjp(field_tangent,
     lambda c, out, t, name: getattr_vjp(c, t, name),
     lambda c, out, t, name: zeros_like(name))
defjvp(field_tangent,
       lambda tan, out, t, name: field_tangent(tan, name),
       lambda tan, out, t, name: zeros_like(out))
# the helpers and builtins whose result is a list or tuple a loop may read by position
# (``passes/loop_ranges``): the functional list changes, the dicts' views as lists,
# ``sequence(l)`` (the list itself), ``sorted``, ``list``, ``tuple``
defprops(list_append, list_extend, list_insert, list_remove, list_set, dict_keys, dict_values,
         dict_items, reversed_items, sequence, sorted, list, tuple, sequence=True)
