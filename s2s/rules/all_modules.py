"""Imports every rule module so that the registry is complete."""
from . import (arith, containers, custom_checks, elementwise, index_writes, nondiff, products,
               reductions, runtime_rules, shape, special)
from . import fft, linalg, linalg_api, linalg_decomp, linalg_lstsq  # noqa: F401,E402
from . import (contractions, float_parts, linear_rules, manipulation,  # noqa: F401
               math_checks, statistics)
from . import helper_code, numpy_code  # noqa: F401,E402
