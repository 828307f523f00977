"""The version of s2s (one place: ``s2s.__version__``, the ``s2s --version`` line and the
key of the on-disk cache of compiled code read it here)."""

__version__ = "0.1.0"
