"""Derivative rules, keyed by Python callable (see ``registry``).

Importing this package registers every rule module.
"""
from . import registry  # noqa: F401
from . import all_modules  # noqa: F401
from .registry import defjvp, defnondiff, defvjp, lookup  # noqa: F401
