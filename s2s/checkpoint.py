"""``checkpoint`` (JAX's ``jax.checkpoint`` / ``remat``) and ``checkpoint_loop``.

PLACEHOLDER DOCSTRING
"""
from __future__ import annotations

from .remat import Remat
from .remat_loop import checkpoint_loop  # noqa: F401  (public)


def checkpoint(fun=None, *, prevent_cse=True, policy=None, static_argnums=()):
    if fun is None:
        return lambda f: checkpoint(f, prevent_cse=prevent_cse, policy=policy,
                                    static_argnums=static_argnums)
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    return Remat(fun, tuple(static_argnums))


remat = checkpoint
