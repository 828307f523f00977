"""Imports every rule module so that the registry is complete."""
from . import arith, elementwise, reductions, products, shape, nondiff, runtime_rules  # noqa: F401
