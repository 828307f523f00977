"""The run-time helpers of generated derivative code (``s2s_runtime``) in LLVM IR.

Handlers of ``ops.calls.TABLE`` computing what the Python helpers compute:
``adjoints`` (seeds, unbroadcast, zeros, index adjoints and their accumulation,
cotangent sums, snapshots), ``products`` (cotangents of products and of max/min, and
the tangent of ``dot_vjp`` for forward over reverse), ``linalg`` and ``norm``
(``numpy.linalg``'s rules), ``lists`` and ``tuples`` (cotangents of containers),
``custom_checks`` (the checks around user rules), ``remat_calls`` (checkpointed
loops), ``jacobian_ops`` (the helpers of compiled Jacobian kernels).
"""

# the call table first: it registers these modules' handlers (importing one of them
# alone, before the table, would meet the table's modules half-initialised)
from ..ops import calls  # noqa: E402,F401
