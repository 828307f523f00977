"""Numeric loops over whole arrays in LLVM IR.

``reductions`` (creation, copies, whole-array reductions, ``dot``), ``axis``
(reductions along one axis and their cotangents), ``products`` (matrix products in
cache-friendly loop orders), ``linalg`` (native dense linear algebra kernels: LU with partial
pivoting, triangular solves, Cholesky), ``gamma`` (scalar functions defined once per
module: digamma, polygamma, the Hurwitz zeta function).
"""
