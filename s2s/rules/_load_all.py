"""Imports every rule module so that the registry is complete."""
from . import (arith, elementwise, index_writes, nondiff, products, reductions,  # noqa: F401
               runtime_rules, shape)
