"""The protocol of transformed functions: ``__s2s_ir__``.

Every transform result (``grad``, ``value_and_grad``, ``jvp``, ``vjp`` and its
pullback, ``linearize`` and its ``jvp_fun``, ``jacfwd``, ``jacrev``, ``hessian``,
``vmap``, ``jit``, ``checkpoint``, ``custom_jvp``/``custom_vjp`` functions), every
function s2s generated, and the transforms that take a function as an argument
and are called inside transformed code (``jvp``, ``vjp``, ``linearize``, and their
forms for a local function, ``_s2s_closure_site``) implement one method::

    obj.__s2s_ir__(args=None, kwargs=None) -> (ir.Function, freevars) | None

* ``args`` None: the IR of ``obj`` that holds for every call, or None when its
  IR depends on the kinds of the arguments (shape rank, dtype, pytree
  structure; ``ir.kinds``).
* ``args`` (a tuple) and ``kwargs`` (a dict) given: the values of one call,
  standing for their kinds; returns the IR of ``obj`` for calls with arguments
  of those kinds.  It may raise ``UnsupportedSyntaxError`` naming what it
  cannot give IR for.

The IR function's parameters are bound to a call's arguments as Python binds
them (positional, keyword, defaults, ``*args``, ``**kwargs``), followed by
keyword-only parameters, one per entry of ``freevars`` (name ->
``frontend.scope.FreeVar``), the values the IR reads that are not arguments (a
closure's residuals, the free variables of the transformed code).  Calling
``obj`` at run time computes what the IR computes.

Any transform that meets such an object inlines its IR: called in the code it
transforms (``grad(lambda x: jacrev(f)(x) @ v)``), the fixed IR is inlined by
the frontend's inliner and the kind-dependent IR when the enclosing transform
is specialised on its arguments (``passes/sites.py``: the call is a *site*);
passed to a transform directly (``jacfwd(jacrev(f))``), the transform reads
the object as a one-call function ``def f(*args): return obj(*args)``, whose
call is a site.  A primitive passed directly (``grad(np.tanh)``) is a one-call
function too (``pipeline.front``), and a user's function that returns a
transformed function is inlined like any other, leaving the transform's call.

The passes below this layer test for the hook by its name, as Python tests for
``__call__``; the functions here are what the transforms above use.
"""
from __future__ import annotations

HOOK = "__s2s_ir__"


def ir_hook(fn):
    """``fn``'s ``__s2s_ir__`` method, or None (classes themselves never count)."""
    if isinstance(fn, type):
        return None
    return getattr(fn, HOOK, None)


def has_ir(fn) -> bool:
    """Whether ``fn`` takes part in the protocol."""
    return ir_hook(fn) is not None


def fixed_ir(fn):
    """``(ir.Function, freevars)`` of ``fn`` for every call, or None (no hook, or IR that
    depends on the arguments' kinds)."""
    hook = ir_hook(fn)
    return None if hook is None else hook()


def ir_for(fn, args, kwargs=None):
    """``(ir.Function, freevars)`` of ``fn`` for a call with arguments of the kinds of
    ``args`` and ``kwargs``."""
    hook = ir_hook(fn)
    if hook is None:
        raise TypeError(f"{fn!r} does not implement {HOOK}")
    hit = hook(tuple(args), dict(kwargs or {}))
    return hit if hit is not None else hook()


class ClosureSite:
    """A transform called with a local function inside transformed code (``jvp``,
    ``vjp``, ``linearize``; ``passes/callables.py`` makes it through the transform's
    ``_s2s_closure_site``): the transform of ``lifted``, the local function taking the
    ``n_captured`` variables it captures as trailing parameters, called with the
    transform's other arguments and then those variables.  Subclasses give
    ``__call__`` (the run-time result, for the probe) and ``__s2s_ir__``."""

    transform = "a transform"  # the transform's name, for errors

    def __init__(self, lifted, n_captured):
        self.lifted, self.n_captured = lifted, n_captured
        self.__name__ = f"{self.transform}_of_{lifted.__name__}"

    def split(self, args, usage):
        """``(the transform's own arguments, the captured values)``; TypeError(``usage``)
        when there are too few."""
        if len(args) <= self.n_captured:
            raise TypeError(usage)
        k = len(args) - self.n_captured
        return tuple(args[:k]), tuple(args[k:])
