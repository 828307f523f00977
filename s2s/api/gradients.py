"""The public reverse-mode transforms: ``grad`` and ``value_and_grad`` (JAX's semantics).

Each returns the shared ``core.reverse.ReverseTransform`` of the function for its
configuration (one per function and configuration, ``core.specialise.memo``).
"""
from __future__ import annotations

from typing import Sequence, Union
from ..core.reverse import reverse_transform
from ..passes.callables import same_arguments


def grad(fun=None, argnums: Union[int, Sequence[int]] = 0, has_aux: bool = False,
         holomorphic: bool = False):
    """Gradient of a scalar-valued ``fun`` with respect to ``argnums`` (JAX's ``grad``).

    Usable as ``grad(f)``, ``grad(f, argnums=(0, 1))`` or as a decorator
    ``@grad`` / ``@grad(argnums=1)``.
    """
    if fun is None:
        return lambda f: grad(f, argnums, has_aux, holomorphic)
    return reverse_transform(fun, argnums, has_aux, holomorphic, "grad")


grad._s2s_static_factory = True  # grad(f) with constant arguments is made while lowering
grad._s2s_closure_arguments = same_arguments  # of a local function: passes/callables.py


def value_and_grad(fun=None, argnums: Union[int, Sequence[int]] = 0, has_aux: bool = False,
                   holomorphic: bool = False):
    """``(fun(*args), grad(fun)(*args))`` in one pass (JAX's ``value_and_grad``)."""
    if fun is None:
        return lambda f: value_and_grad(f, argnums, has_aux, holomorphic)
    return reverse_transform(fun, argnums, has_aux, holomorphic, "value_and_grad")


value_and_grad._s2s_static_factory = True
value_and_grad._s2s_closure_arguments = same_arguments  # of a local function: passes/callables.py
