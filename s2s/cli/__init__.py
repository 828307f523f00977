"""The ``s2s`` command line (``main``, in ``cli/main.py``) and the inventory of primitives'
modes behind ``s2s rules`` (``modes.py``); ``targets.py`` reads what a command names (``FILE.py:FUNC``,
``--args``/``--signature``, ``--argnums``); ``dump_vmap.py`` and ``dump_ptx.py`` are ``s2s dump
--mode vmap|ptx``.  The derivative checker behind ``s2s check`` is the public ``s2s.check``."""
from .main import main

__all__ = ["main"]
