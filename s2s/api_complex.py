"""JAX's dtype checks of ``jacfwd``, ``jacrev`` and ``hessian`` (``holomorphic``).

JAX's rules, raised as TypeError before (inputs) or after (outputs) the work:

* ``jacfwd``: differentiated inputs must be real, or complex with
  ``holomorphic=True``; with ``holomorphic=True`` the outputs must be complex.
* ``jacrev``: with ``holomorphic=True`` inputs and outputs must be complex;
  without it the outputs must not be complex (C->R with complex inputs is
  fine: the conjugate convention of ``grad``).
* ``hessian`` is ``jacfwd(jacrev(f, holomorphic), holomorphic)``: both.

With ``holomorphic=True`` nothing else changes: the basis vectors are
``1 + 0j`` and the Jacobian is the complex derivative (no conjugation).
Integer and boolean leaves are not differentiated (s2s's rule) and not checked.
"""
import numpy as np

from s2s_runtime.tree import tree_leaves


def _inexact_dtypes(tree):
    for leaf in tree_leaves(tree):
        dtype = np.result_type(leaf)
        if np.issubdtype(dtype, np.inexact):
            yield dtype


def check_inputs(name, holomorphic, args, nums):
    """Raise TypeError if the differentiated ``args[n]`` break ``name``'s rule."""
    for n in nums:
        for dtype in _inexact_dtypes(args[n]):
            complex_ = np.issubdtype(dtype, np.complexfloating)
            if holomorphic and not complex_:
                raise TypeError(f"{name} with holomorphic=True requires inputs with complex "
                                f"dtype, but got {dtype.name}.")
            if name == "jacfwd" and not holomorphic and complex_:
                raise TypeError(
                    f"jacfwd requires real-valued inputs (input dtype that is a sub-dtype of "
                    f"np.floating), but got {dtype.name}. For holomorphic differentiation, "
                    "pass holomorphic=True. For differentiation of non-holomorphic functions "
                    "involving complex inputs, use s2s.jvp directly.")


def check_outputs(name, holomorphic, out):
    """Raise TypeError if the outputs ``out`` break ``name``'s rule."""
    for dtype in _inexact_dtypes(out):
        complex_ = np.issubdtype(dtype, np.complexfloating)
        if holomorphic and not complex_:
            raise TypeError(f"{name} with holomorphic=True requires outputs with complex "
                            f"dtype, but got {dtype.name}.")
        if name == "jacrev" and not holomorphic and complex_:
            raise TypeError(
                f"jacrev requires real-valued outputs (output dtype that is a sub-dtype of "
                f"np.floating), but got {dtype.name}. For holomorphic differentiation, pass "
                "holomorphic=True. For differentiation of non-holomorphic functions involving "
                "complex outputs, use s2s.vjp directly.")
