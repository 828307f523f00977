"""Rules of the in-place index writes of reverse mode (``s2s_runtime.index_writes``).

``index_set(y, index, v)`` / ``index_updated(y, index, v)`` give ``y`` with
``[index] = v`` (in place / a copy).  Maths, with ``g`` the cotangent of the
result: ``y_bar = g`` zeroed at ``index``; ``v_bar = g[index]`` (last writes
only) summed to ``v``'s shape.  Tangent: ``t_y`` zeroed at ``index`` plus
``t_v`` scattered at ``index``.  ``read_copy``/``read_checked`` are
``y[index]`` (copied / checked to be a number): getitem's rules.

The VJP helpers are linear in their cotangent argument, with the usual
transposes (see ``runtime_rules.py``); their shape-only arguments get zero
templates.
"""
import operator

from s2s_runtime import (batch_setitem, make_list, make_tuple, sequence)
from s2s_runtime import (getitem_vjp, index_set, index_set_vjp_base, index_set_vjp_value,
                         index_set_vjp_value_transpose, index_updated, read_checked, read_copy,
                         zeros_like)

from .registry import defjvp, defprops, defresult_shape, defshape_operands, defvjp

for _write in (index_set, index_updated):
    defvjp(_write, lambda g, ans, y, index, v: index_set_vjp_base(g, index), None,
           lambda g, ans, y, index, v: index_set_vjp_value(g, index, v))
    defjvp(_write, lambda t, ans, y, index, v: index_set_vjp_base(t, index), None,
           lambda t, ans, y, index, v: index_set_vjp_value_transpose(t, ans, index, v))

defvjp(read_copy, lambda g, ans, y, index: getitem_vjp(g, y, index))
defjvp(read_copy, lambda t, ans, y, index: read_copy(t, index))
defvjp(read_checked, lambda g, ans, y, index, where: getitem_vjp(g, y, index))
defjvp(read_checked, lambda t, ans, y, index, where: t[index])

defvjp(index_set_vjp_base, lambda ct, out, g, index: index_set_vjp_base(ct, index))
defjvp(index_set_vjp_base, lambda tan, out, g, index: index_set_vjp_base(tan, index))
defvjp(index_set_vjp_value,
       lambda ct, out, g, index, v: index_set_vjp_value_transpose(ct, g, index, v), None,
       lambda ct, out, g, index, v: zeros_like(v))
defjvp(index_set_vjp_value, lambda tan, out, g, index, v: index_set_vjp_value(tan, index, v),
       None, lambda tan, out, g, index, v: zeros_like(out))
defshape_operands(index_set_vjp_value, 2)  # v: the shape and dtype of the value written
defresult_shape(index_set_vjp_value, 2)  # (the cotangent of v, shaped like it)
defvjp(index_set_vjp_value_transpose,
       lambda c, out, ct, g, index, v: index_set_vjp_value(c, index, v),
       lambda c, out, ct, g, index, v: zeros_like(g), None,
       lambda c, out, ct, g, index, v: zeros_like(v))
defjvp(index_set_vjp_value_transpose,
       lambda tan, out, ct, g, index, v: index_set_vjp_value_transpose(tan, g, index, v),
       lambda tan, out, ct, g, index, v: zeros_like(out), None,
       lambda tan, out, ct, g, index, v: zeros_like(out))


# Writes in place into the first argument (and, for index_set and x op= y, give it back:
# an alias of it); read_checked reads an item without copying; a loop's sequence and the
# tuples and lists the program builds hold their operands themselves.
_IN_PLACE_OPS = tuple(getattr(operator, "i" + n) for n in (
    "add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor",
    "lshift", "rshift", "concat"))
defprops(operator.setitem, operator.delitem, index_set, batch_setitem, *_IN_PLACE_OPS,
         in_place=True)
defprops(index_set, read_checked, sequence, make_tuple, make_list, tuple, list,
         operator.iadd, operator.isub, operator.imul, operator.itruediv, aliases=True)
