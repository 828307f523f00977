"""Imports every batching-rule module (registration happens on import)."""
from . import rules_core, rules_python, rules_rank, rules_products  # noqa: F401
from . import rules_bilinear, rules_derivative_code  # noqa: F401
from . import helper_rules, custom_checks, rules_numpy  # noqa: F401
