"""The errors of ``math``'s functions, in their records, and the rules of their checks.

``defresult_check(check, *fns)`` states what ``fn`` raises where the numpy function
that computes it elementwise returns ``inf``/``nan`` instead: ``check(y, *args)``
(``s2s_runtime.math_checks``) returns ``y`` and raises ``fn``'s error.  Batched code
computes ``math.exp`` with ``np.exp`` and checks the result (``batch/rules_core.py``);
the jit raises the same errors inline (``backend/llvm/ops/numbers.py`` reads which
check a function has).

Each check is the identity map in ``y`` (VJP ``g``, JVP ``t``) and constant in the
arguments, which it reads only to decide whether to raise.  vmap and the jit read the
checks' source (plain numpy: ``definline``)."""
import cmath
import math

import s2s_runtime as rt

from .registry import defjvp, definline, defresult_check, defvjp

defresult_check(rt.math_domain_checked, math.sqrt, math.sin, math.cos, math.tan, math.log,
                math.log2, math.log10, math.tanh, math.asin, math.acos, math.atan,
                math.asinh, math.acosh, math.atanh, math.log1p, math.erf, math.erfc,
                *([math.cbrt] if hasattr(math, "cbrt") else []))
defresult_check(rt.math_range_checked, math.exp, math.expm1, math.cosh, math.sinh,
                *([math.exp2] if hasattr(math, "exp2") else []))
defresult_check(rt.gamma_checked, math.gamma, math.lgamma)
# cmath, as the jit computes it (numpy's complex formulas): ValueError for a nan part from an
# operand without one (cmath.sin(inf + 0j)), for an infinite part of a finite operand
# OverflowError (cmath.exp(710)) or, at a pole, ValueError (cmath.log(0)); the checks
# read complex numbers so (np.isnan/isinf/isfinite of either part)
defresult_check(rt.math_range_checked, cmath.exp, cmath.sqrt, cmath.sin, cmath.cos, cmath.tan,
                cmath.sinh, cmath.cosh, cmath.tanh)
defresult_check(rt.math_domain_checked, cmath.log, cmath.log10)
defresult_check(rt.pow_checked, math.pow)
defresult_check(rt.fmod_checked, math.fmod)
defresult_check(rt.ldexp_checked, math.ldexp)

for _check in (rt.math_domain_checked, rt.math_range_checked, rt.gamma_checked):
    defvjp(_check, lambda g, ans, y, x: g, lambda g, ans, y, x: rt.zeros_like(x))
    defjvp(_check, lambda t, ans, y, x: t, lambda t, ans, y, x: rt.zeros_like(ans))
for _check in (rt.pow_checked, rt.fmod_checked):
    defvjp(_check, lambda g, ans, y, a, c: g, lambda g, ans, y, a, c: rt.zeros_like(a),
           lambda g, ans, y, a, c: rt.zeros_like(c))
    defjvp(_check, lambda t, ans, y, a, c: t, lambda t, ans, y, a, c: rt.zeros_like(ans),
           lambda t, ans, y, a, c: rt.zeros_like(ans))
defvjp(rt.ldexp_checked, lambda g, ans, y, x, i: g, lambda g, ans, y, x, i: rt.zeros_like(x),
       None)
defjvp(rt.ldexp_checked, lambda t, ans, y, x, i: t, lambda t, ans, y, x, i: rt.zeros_like(ans),
       None)
definline(rt.math_domain_checked, rt.math_range_checked, rt.gamma_checked, rt.pow_checked,
          rt.fmod_checked, rt.ldexp_checked, modes=("vmap", "jit"))
