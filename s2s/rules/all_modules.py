"""Imports every rule module so that the registry is complete."""
from . import (arith, containers, custom_checks, elementwise, index_writes, nondiff, products,
               reductions, runtime_rules, shape, special)
from . import fft, linalg, linalg_api, linalg_decomp, linalg_lstsq  # noqa: F401,E402
from . import (elementwise_more, float_parts, linear_rules, reductions_more,  # noqa: F401
               products_more, manipulation)
from . import helper_code, numpy_code  # noqa: F401,E402
