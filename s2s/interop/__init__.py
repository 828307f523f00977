"""s2s functions as PyTorch and JAX ops: ``to_torch(f, argnums=None)`` and
``to_jax(f, argnums=None)``.

The framework is imported when one of these is first used (``import s2s``
never imports torch or JAX); install it with ``pip install 's2s[torch]'`` or
``pip install 's2s[jax]'``.  See ``s2s.interop.torch`` and ``s2s.interop.jax``
for the contracts.
"""
from __future__ import annotations

import importlib

__all__ = ["to_torch", "to_jax"]


def _framework(module, name, extra):
    try:
        importlib.import_module(name)
    except ImportError as exc:
        raise ImportError(f"s2s.interop.{module} needs {name}: pip install 's2s[{extra}]'") \
            from exc
    return importlib.import_module(f"{__name__}.{module}")


def to_torch(f, argnums=None, *, mode="auto"):
    """``f`` (plain Python/numpy) as a PyTorch op: forward ``s2s.jit(f)`` (Python mode
    where the jit cannot compile a signature), backward s2s's compiled VJP, whose own
    backward is the VJP of the VJP.  See ``s2s.interop.torch``."""
    return _framework("torch", "torch", "torch").to_torch(f, argnums, mode=mode)


def to_jax(f, argnums=None, *, mode="auto"):
    """``f`` (plain Python/numpy) as a JAX function (``jax.custom_vjp`` around
    ``jax.pure_callback``): forward ``s2s.jit(f)``, reverse mode s2s's VJP, ``jax.vmap``
    through ``s2s.vmap``.  See ``s2s.interop.jax``."""
    return _framework("jax", "jax", "jax").to_jax(f, argnums, mode=mode)
