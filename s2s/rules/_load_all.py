"""Imports every rule module so that the registry is complete."""
from . import (arith, containers, custom_checks, elementwise, index_writes, nondiff,  # noqa: F401
               products, reductions, runtime_rules, shape)
from . import fft, linalg, linalg_api, linalg_decomp, linalg_lstsq  # noqa: F401,E402
