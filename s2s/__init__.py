"""s2s: a source-to-source differentiating compiler for Python.

Public API (JAX's names and semantics): ``grad``, ``value_and_grad``,
``jvp``, ``vjp``, ``linearize``, ``jacfwd``, ``jacrev``, ``hessian``, ``vmap``, user rules
``custom_jvp``/``custom_vjp``, ``checkpoint`` and ``tree_util``.  See README.md and DESIGN.md.
"""
from . import data_parallel, tree_util
from .api.gradients import grad, value_and_grad
from .api.tangents import jvp
from .api.jacobians import hessian, jacfwd, jacrev
from .api.pullbacks import linearize, vjp
from .api.batching import vmap
from .core.custom import custom_jvp, custom_vjp
from s2s_runtime import stop_gradient
from .api.checkpointing import checkpoint, checkpoint_loop, checkpoint_policies, remat
from .errors import (NameResolutionError, NoRuleError, S2SError, SourceUnavailableError,
                     UnsupportedSyntaxError)

from .version import __version__  # noqa: F401

__all__ = ["grad", "value_and_grad", "jvp", "vjp", "linearize", "jacfwd", "jacrev", "hessian", "vmap",
           "custom_jvp", "custom_vjp", "stop_gradient", "checkpoint", "remat", "checkpoint_loop",
           "checkpoint_policies", "tree_util", "S2SError", "UnsupportedSyntaxError",
           "SourceUnavailableError", "NoRuleError", "NameResolutionError"]

from .api.compiling import jit  # noqa: E402  (the LLVM backend; compiled lazily)

__all__.append("jit")

from . import cuda  # noqa: E402  (s2s.cuda.vectorize: GPU kernels; loaded lazily)
