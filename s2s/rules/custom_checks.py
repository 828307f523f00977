"""Rules of the checks around user-defined derivative rules (``custom_vjp``/``custom_jvp``).

``check_fwd_output(result, rule)``, ``check_bwd_output(cts, primals, rule)``
and ``check_jvp_output(result, rule)`` return their first argument (a
``None`` cotangent made zeros, which is still the identity on every
cotangent that is not zero), so each is the identity map in it: VJP ``g``,
JVP ``t``; the other arguments (the primals the shapes are compared with,
the rule's name) carry no derivative (``zeros_like`` templates: constants to the
transforms).  Their results are tuples (``container_result``: adjoints add leaf by leaf).
"""
from s2s_runtime import check_bwd_output, check_fwd_output, check_jvp_output, zeros_like

from .registry import defjvp, defvjp

defvjp(check_fwd_output, lambda g, ans, result, rule: g, None, container_result=True)
defjvp(check_fwd_output, lambda t, ans, result, rule: t, None)
defvjp(check_jvp_output, lambda g, ans, result, rule: g, None, container_result=True)
defjvp(check_jvp_output, lambda t, ans, result, rule: t, None)
defvjp(check_bwd_output, lambda g, ans, cts, primals, rule: g,
       lambda g, ans, cts, primals, rule: zeros_like(primals), container_result=True)
# the tangent of a None (zero) cotangent is None too: made zeros the same way
defjvp(check_bwd_output, lambda t, ans, cts, primals, rule: check_bwd_output(t, primals, rule),
       lambda t, ans, cts, primals, rule: zeros_like(ans))
