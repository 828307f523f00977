"""The function ``jacfwd``, ``jacrev`` and ``hessian`` return.

``JacobianFunction(impl, what, make, fun, argnums, has_aux, holomorphic)``
calls ``impl`` (the Jacobian computed in Python, ``api/jacobians.py``); ``jit``
compiles it to one kernel through ``_s2s_jit_signature``/``_s2s_jit_ir``
(``core/jit_jacobian.py``); other transforms read it as IR through the protocol
(``__s2s_ir__``, ``core/protocol.py``: numpy basis loops over ``jvp``/``grad``,
``core/transform_code.py``); it pickles as ``make(fun, argnums, has_aux,
holomorphic)`` (``make`` is ``jacfwd``, ``jacrev`` or ``hessian``; see
``core/travel.py``), so it travels to other processes like the other transforms.
"""
from __future__ import annotations

import inspect

from .transform_code import jacobian_ir
from .travel import travelling


class JacobianFunction:
    """``what(fun, argnums, has_aux, holomorphic)``: call it with ``fun``'s arguments."""

    def __init__(self, impl, what, make, fun, argnums, has_aux, holomorphic):
        self._impl = impl
        self.what, self.make, self.fun = what, make, fun
        self.argnums, self.has_aux, self.holomorphic = argnums, has_aux, holomorphic
        self.__name__, self.__qualname__ = impl.__name__, impl.__qualname__
        self.__doc__ = getattr(fun, "__doc__", None)
        self.__signature__ = inspect.signature(impl)

    def __call__(self, *args):
        return self._impl(*args)

    def __s2s_ir__(self, args=None, kwargs=None):
        if args is None:  # the IR depends on the arguments' kinds
            return None
        return jacobian_ir(self.what, self.fun, self.argnums, self.has_aux, self.holomorphic,
                           args, kwargs)

    def _s2s_jit_signature(self):
        from . import jit_jacobian
        return jit_jacobian.jit_signature(self.fun)

    def _s2s_jit_ir(self, args):
        from . import jit_jacobian
        return jit_jacobian.kernel_ir(self.what, self.fun, self.argnums, args, self.has_aux,
                                      self.holomorphic)

    def __reduce__(self):
        return travelling(self, self.make, (self.fun, self.argnums, self.has_aux,
                                            self.holomorphic))

    def __repr__(self):
        return f"<s2s.{self.what} of {getattr(self.fun, '__qualname__', self.fun)!r}>"
