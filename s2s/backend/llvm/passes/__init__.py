"""IR analyses and rewrites the backend runs before lowering (jit only).

``type_versions`` (writes that change a variable's type get a new variable),
``tuple_loops`` (loops over mixed tuples, or whose variables change type, unrolled),
``lean_tapes``, ``remat_pops``, ``frozen_arrays`` and ``split_records`` (tapes record
only what the adjoint reads; cheap values, elements of arrays nothing writes and the
counters of index tuples recomputed instead), ``local_copies`` (copies of temporaries propagated),
``write_statements`` (in-place writes as statements), ``writes`` (which array
parameters a kernel may write into), ``literal_containers`` (loops over and indices into
containers built by a literal, resolved statically).
"""
