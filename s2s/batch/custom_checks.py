"""Batching rules of the run-time checks around user-defined derivative rules
(``s2s_runtime.custom_checks``), so that ``vmap`` of derivative code that calls a
``custom_jvp``/``custom_vjp`` rule runs the user's rule batched like user code.

* ``check_fwd_output(result, rule)``, ``check_jvp_output(result, rule)``: a batched
  value keeps every array leaf's batch axis on axis 0, so the checks (a pair; the
  tangent output shaped like the primal output, both leaves batched) hold for the
  batch exactly when they hold for every example: the call stays as it is.
* ``check_bwd_output(cts, primals, rule)``: when one of the two is batched and the
  other is not, the other is broadcast over the batch first (``rt.batch_lift``), so
  both carry the same batch axis and the shapes compare per example; a ``None``
  cotangent becomes batched zeros.
* ``unpack_vjp_transpose``, ``getitem_vjp_transpose`` (second derivatives of a rule's
  tuple unpacking, ``(x,), (t,) = primals, tangents``): run once per example
  (``rt.batch_loop``), since whether they index a container or an array is known
  only at run time.
"""
import s2s_runtime as rt
from s2s_runtime import check_bwd_output, check_fwd_output, check_jvp_output

from ..ir import nodes as ir
from .table import defbatch, per_example


def same_call(site):
    return site.call


def bwd_check(site):
    call = site.call
    cts, primals = call.args[0], call.args[1]
    if site.b(cts) != site.b(primals):
        if site.b(cts):
            primals = site.rt(rt.batch_lift, primals, site.n, batched=True)
        else:
            cts = site.rt(rt.batch_lift, cts, site.n, batched=True)
    return ir.Call(call.fn, (cts, primals) + tuple(call.args[2:]), call.kwargs)


defbatch(per_example, rt.unpack_vjp_transpose, rt.getitem_vjp_transpose)
defbatch(same_call, check_fwd_output, check_jvp_output)
defbatch(bwd_check, check_bwd_output)
