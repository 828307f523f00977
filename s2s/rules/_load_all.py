"""Imports every rule module so that the registry is complete."""
from . import (arith, containers, elementwise, index_writes, nondiff,  # noqa: F401
               products, reductions, runtime_rules, shape)
from . import (elementwise_more, linear_rules, reductions_more,  # noqa: F401
               products_more, shape_more)
