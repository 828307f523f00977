"""Imports every batching-rule module (registration happens on import)."""
from . import rules_core, rules_more, rules_products, rules_bilinear  # noqa: F401
from . import helper_rules, custom_checks  # noqa: F401
