"""The public transforms (JAX's names and semantics), thin: each checks its arguments and
returns the transformed function ``s2s.core`` implements.

* ``gradients``: ``grad``, ``value_and_grad``;  ``tangents``: ``jvp``;
* ``pullbacks``: ``vjp``, ``linearize``;  ``jacobians``: ``jacfwd``, ``jacrev``, ``hessian``
  (``batched_jacobians``: their ``vmap`` over basis vectors);
* ``batching``: ``vmap``;  ``compiling``: ``jit``;
* ``checkpointing``: ``checkpoint``/``remat``, ``checkpoint_loop``, ``checkpoint_policies``.
"""
from ..core.custom import custom_jvp, custom_vjp
from .batching import vmap
from .checkpointing import checkpoint, checkpoint_loop, checkpoint_policies, remat
from .compiling import jit
from .gradients import grad, value_and_grad
from .jacobians import hessian, jacfwd, jacrev
from .pullbacks import linearize, vjp
from .tangents import jvp
from ..core.transform_code import register_public

register_public(grad=grad, jvp=jvp, jacrev=jacrev, jacfwd=jacfwd, hessian=hessian)  # what the code of transforms calls

__all__ = ["grad", "value_and_grad", "jvp", "vjp", "linearize", "jacfwd", "jacrev", "hessian",
           "vmap", "jit", "custom_jvp", "custom_vjp", "checkpoint", "remat", "checkpoint_loop",
           "checkpoint_policies"]
