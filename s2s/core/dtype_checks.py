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
Integer and boolean leaves of a pytree are not differentiated (s2s's rule); an argument
with only integer/boolean leaves is JAX's TypeError.
"""
import numpy as np

from s2s_runtime.tree import tree_leaves


def _inexact_dtypes(tree):
    for leaf in tree_leaves(tree):
        dtype = np.result_type(leaf)
        if np.issubdtype(dtype, np.inexact):
            yield dtype


def integer_input_error(name, dtype, n, param, fname, real_only=True) -> TypeError:
    """JAX's TypeError for a differentiated argument with only integer/boolean leaves
    (s2s differentiates the float leaves of a pytree and passes over the others)."""
    what = ("real-valued inputs (input dtype that is a sub-dtype of np.floating)" if real_only
            else "real- or complex-valued inputs (input dtype that is a sub-dtype of "
                 "np.inexact)")
    who = f"argument {n}" + (f" ({param!r})" if param else "") + (f" of {fname}" if fname else "")
    dtype = np.dtype(dtype)
    if dtype.kind == "O":
        return TypeError(f"{name} requires {what}, but got an array of dtype object (Python "
                         f"objects, not numbers) for {who}; convert it with "
                         "np.asarray(x, dtype=float)")
    if dtype.kind not in "biu":
        return TypeError(f"{name} requires {what}, but got dtype {dtype} for {who}, which "
                         "is not a number; pass float or complex numbers or arrays")
    return TypeError(f"{name} requires {what}, but got {dtype} for {who}, which has only "
                     "integer/boolean leaves. If you want to use Boolean- or integer-valued "
                     "inputs, use vjp; to differentiate, pass floats (3.0 instead of 3)")


def check_inputs(name, holomorphic, args, nums, fname=None):
    """Raise TypeError if the differentiated ``args[n]`` break ``name``'s rule (JAX's:
    and an argument with only integer/boolean leaves is an error)."""
    for n in nums:
        leaves = tree_leaves(args[n])
        if leaves and not any(np.issubdtype(np.result_type(v), np.inexact) for v in leaves):
            raise integer_input_error(name, np.result_type(leaves[0]), n, None, fname)
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
