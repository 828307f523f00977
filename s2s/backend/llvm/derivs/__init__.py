"""The run-time helpers of generated derivative code (``s2s_runtime``) in LLVM IR.

Handlers of ``ops.calls.TABLE`` computing what the Python helpers compute:
``adjoints`` (seeds, unbroadcast, zeros, index adjoints, cotangent sums),
``derivs_more``, ``derivs_second``, ``products`` (cotangents of products and of
max/min), ``linalg`` and ``norm`` (``numpy.linalg``'s rules), ``lists`` and ``tuples``
(cotangents of containers), ``custom_checks`` (the checks around user rules),
``remat_calls`` (checkpointed loops), ``jacobian_ops`` (compiled Jacobian kernels).
"""
