"""Digamma, polygamma and the Hurwitz zeta function in LLVM IR (float64), with SciPy's
values (``scipy.special.digamma``, ``polygamma``, ``zeta``), special values included.

Each is an internal ``noinline`` function defined once per module on first use, so a
kernel that calls one at many sites (a derivative, an elementwise loop) compiles it once:

* ``s2s.digamma(double x) -> double``: psi(x) = d/dx log|Gamma(x)|, in this order:

  - nan -> nan, +inf -> +inf, -inf -> nan; x = +-0 -> -+inf (the sign of the limit
    from that side); a negative integer -> nan (SciPy's values at the poles).
  - within 0.2 of psi's first negative zero x0 = -0.5040830...: the Taylor series
    psi(x) = sum_{k=0..41} c_k (x - x0)^k, c_0 = psi(x0), c_k = psi^(k)(x0)/k! =
    (-1)^(k+1) zeta(k+1, x0), x0 the float64 nearest the zero (so ``x - x0`` is exact
    and the result keeps its relative precision however near the zero x is);
  - x < 0: the reflection psi(1 - x) - psi(x) = pi cot(pi x), cot(pi x) evaluated at
    the fractional part of x (exact): psi(x) = psi(1 - x) - pi / tan(pi frac(x)), and
    x := 1 - x;
  - 0 < x < 1: psi(x) = psi(x + 1) - 1/x, x := x + 1;
  - within 0.4 of the positive zero x0 = 1.4616321...: its Taylor series (as above,
    k = 0..30);
  - else the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, where the asymptotic
    series psi(x) ~ log x - 1/(2x) - sum_{k=1..10} B_2k/(2k x^2k) (B_2k the Bernoulli
    numbers) is exact to float64 precision.

* ``s2s.hurwitz_zeta(double s, double q) -> double``: zeta(s, q) = sum_{k>=0} (k+q)^-s
  for s > 1 (Cephes' method, which SciPy uses): +inf for s = 1 and at q = 0, -1, -2, ...
  (and q = -inf), nan for s < 1 and for q < 0 with s not an integer; for q > 1e8 the
  asymptotic form (1/(s-1) + 1/(2q)) q^(1-s); else the Euler-Maclaurin formula: the
  terms (q+k)^-s summed directly until k >= 9 and q+k > 9 (or until a term is below
  float64 precision relative to the sum), and to that sum, whose last term is w^-s,
  w^(1-s)/(s-1) - w^-s/2 + sum_{j=1..12} B_2j/(2j)! s(s+1)...(s+2j-2) w^(-s-2j+1) is
  added (the tail beyond w; the corrections stop once one is below float64 precision).
  (For q < 0 the direct sum runs until q+k > 9: about |q| terms, as in SciPy.)

* ``s2s.polygamma(i64 n, double x) -> double``: psi^(n)(x), the n-th derivative of
  digamma, as SciPy writes it: digamma(x) for n = 0, else
  (-1)^(n+1) Gamma(n+1) zeta(n+1, x) (so +-inf at the poles, nan for n < 0).

The Taylor coefficients were computed with mpmath at 50 digits.
"""
from __future__ import annotations

import math

from llvmlite import ir as ll

from ..typing import types as T

#: float64 nearest psi's positive zero, psi(x0) and psi^(k)(x0)/k! for k = 1..30
POSITIVE_ZERO = 1.4616321449683622
POSITIVE_ZERO_TAYLOR = (
    -9.241265521729427e-17, 0.9676722454476212, -0.4427631689835922, 0.2584997609556511,
    -0.16394270544240658, 0.10782405069126241, -0.07219956125645474, 0.04880428816414313,
    -0.033161126474847376, 0.022597648232218118, -0.01542476590494897, 0.010538791616612184,
    -0.007204534386356875, 0.004926781395729858, -0.0033698016554393312, 0.00230512632673493,
    -0.001576936771430199, 0.0010788252019162978, -0.000738070938996006,
    0.0005049532658346027, -0.0003454680251063082, 0.00023635601564027086,
    -0.00016170622091974827, 0.00011063372768747428, -7.569179582195078e-05,
    5.17857579522209e-05, -3.543007094765967e-05, 2.4240066118601362e-05,
    -1.6584242271854165e-05, 1.1346384584663872e-05, -7.76281766846211e-06)
POSITIVE_ZERO_RADIUS = 0.4
#: float64 nearest psi's first negative zero, psi(x0) and psi^(k)(x0)/k! for k = 1..41
NEGATIVE_ZERO = -0.5040830082644554
NEGATIVE_ZERO_TAYLOR = (
    7.289763902976895e-17, 8.939798558792134, -0.8093454625306499, 32.258572064915505,
    -2.7610116487908227, 128.27342343090902, -14.706721735530332, 513.2704629562861,
    -75.37700066344615, 2055.5357119463315, -368.5783503832184, 8234.667099203069,
    -1743.3646088673593, 32997.785655255044, -8051.818155363481, 132262.95480834588,
    -36529.945969485576, 530280.3912420176, -163451.7934270022, 2126602.372596875,
    -723318.8861804291, 8530604.878543982, -3172131.31557447, 34228316.69580112,
    -13807481.99726386, 137373435.87411496, -59721085.41129418, 551481251.8585448,
    -256915093.7987531, 2214464568.0139103, -1100067148.9416316, 8894384049.698204,
    -4691108165.464198, 35733149689.1997, -19932951831.31558, 143593265361.61185,
    -84427777205.99568, 577169303800.4994, -356587583747.61273, 2320479554068.252,
    -1502246808129.2224, 9331609972791.018)
NEGATIVE_ZERO_RADIUS = 0.2
#: B_2k / (2k), k = 1..10: psi's asymptotic series
DIGAMMA_ASYMPTOTIC = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12,
                      -3617 / 8160, 43867 / 14364, -174611 / 6600)
#: where psi's asymptotic series takes over from the recurrence
DIGAMMA_ASYMPTOTIC_FROM = 10.0
#: B_2j / (2j)!, j = 1..12: the Euler-Maclaurin corrections of zeta(s, q)
EULER_MACLAURIN = (1 / 12, -1 / 720, 1 / 30240, -1 / 1209600, 1 / 47900160,
                   -691 / 1307674368000, 1 / 74724249600, -3617 / 10670622842880000,
                   43867 / 5109094217170944000, -174611 / 802857662698291200000,
                   854513 / 155112100433309859840000,
                   -236364091 / 1693824136731743669452800000)
#: Cephes' MACHEP: a term below this fraction of the sum ends the Hurwitz zeta sums
MACHEP = 2.0 ** -53

_F64 = T.F64


def _c(value):
    return ll.Constant(_F64, value)


class IRFunction:
    """An internal ``noinline`` function being written: its builder, local variables
    (allocas in the entry block, which ``mem2reg`` promotes) and the math it calls."""

    def __init__(self, module, name, ret, args):
        self.module = module
        self.fn = ll.Function(module, ll.FunctionType(ret, args), name)
        self.fn.linkage = "internal"
        self.fn.attributes.add("noinline")  # compiled once, called from every site
        self.fn.attributes.add("nounwind")
        self.entry = self.fn.append_basic_block("entry")
        self.b = ll.IRBuilder(self.entry)

    def variable(self, init, name):
        """A local variable holding ``init`` (its alloca first in the entry block)."""
        builder = ll.IRBuilder(self.entry)
        builder.position_at_start(self.entry)
        slot = builder.alloca(init.type, name=name)
        self.b.store(init, slot)
        return slot

    def intrinsic(self, name, *args):
        full = f"llvm.{name}.f64"
        fn = self.module.globals.get(full) or self.module.declare_intrinsic(
            full, (), ll.FunctionType(_F64, [_F64] * len(args)))
        return self.b.call(fn, list(args))

    def libm(self, name, *args):
        fn = self.module.globals.get(name) or ll.Function(
            self.module, ll.FunctionType(_F64, [_F64] * len(args)), name)
        return self.b.call(fn, list(args))

    def return_if(self, condition, value):
        """``if condition: return value()`` (``value`` emitted only on that branch)."""
        with self.b.if_then(condition, likely=False):
            self.b.ret(value())

    def while_loop(self, condition, body):
        """``while condition(): body()`` (both emit into the loop's blocks)."""
        b = self.b
        head, inner, end = (self.fn.append_basic_block(n) for n in ("head", "body", "end"))
        b.branch(head)
        b.position_at_end(head)
        b.cbranch(condition(), inner, end)
        b.position_at_end(inner)
        body()
        if not b.block.is_terminated:
            b.branch(head)
        b.position_at_end(end)

    def polynomial(self, t, coefficients):
        """sum_k coefficients[k] t^k (Horner)."""
        acc = _c(coefficients[-1])
        for c in reversed(coefficients[:-1]):
            acc = self.b.fadd(_c(c), self.b.fmul(acc, t))
        return acc


def digamma(module):
    """The module's ``s2s.digamma(double) -> double`` (defined on first use)."""
    name = "s2s.digamma"
    if name in module.globals:
        return module.globals[name]
    F = IRFunction(module, name, _F64, [_F64])
    b = F.b
    (x,) = F.fn.args
    F.return_if(b.fcmp_unordered("uno", x, x), lambda: x)
    F.return_if(b.fcmp_ordered("==", x, _c(math.inf)), lambda: x)
    F.return_if(b.fcmp_ordered("==", x, _c(-math.inf)), lambda: _c(math.nan))
    F.return_if(b.fcmp_ordered("==", x, _c(0.0)),  # -inf from the right, +inf from the left
                lambda: F.intrinsic("copysign", _c(math.inf), b.fneg(x)))
    near_negative = b.fcmp_ordered("<", F.intrinsic("fabs", b.fsub(x, _c(NEGATIVE_ZERO))),
                                   _c(NEGATIVE_ZERO_RADIUS))
    F.return_if(near_negative, lambda: F.polynomial(b.fsub(x, _c(NEGATIVE_ZERO)),
                                                    NEGATIVE_ZERO_TAYLOR))
    total = F.variable(_c(0.0), "psi")
    arg = F.variable(x, "x")
    with b.if_then(b.fcmp_ordered("<", x, _c(0.0))):
        fraction = b.fsub(x, F.intrinsic("trunc", x))  # exact; cot has period pi
        F.return_if(b.fcmp_ordered("==", fraction, _c(0.0)), lambda: _c(math.nan))
        tangent = F.libm("tan", b.fmul(_c(math.pi), fraction))
        b.store(b.fdiv(_c(-math.pi), tangent), total)
        b.store(b.fsub(_c(1.0), x), arg)

    def step_up():  # psi(x) = psi(x + 1) - 1/x
        v = b.load(arg)
        b.store(b.fsub(b.load(total), b.fdiv(_c(1.0), v)), total)
        b.store(b.fadd(v, _c(1.0)), arg)

    with b.if_then(b.fcmp_ordered("<", b.load(arg), _c(1.0))):
        step_up()
    offset = b.fsub(b.load(arg), _c(POSITIVE_ZERO))
    near_positive = b.fcmp_ordered("<", F.intrinsic("fabs", offset), _c(POSITIVE_ZERO_RADIUS))
    F.return_if(near_positive, lambda: b.fadd(b.load(total),
                                              F.polynomial(offset, POSITIVE_ZERO_TAYLOR)))
    F.while_loop(lambda: b.fcmp_ordered("<", b.load(arg), _c(DIGAMMA_ASYMPTOTIC_FROM)), step_up)
    v = b.load(arg)
    inverse_square = b.fdiv(_c(1.0), b.fmul(v, v))
    series = b.fmul(inverse_square, F.polynomial(inverse_square, DIGAMMA_ASYMPTOTIC))
    asymptotic = b.fsub(b.fsub(F.intrinsic("log", v), b.fdiv(_c(0.5), v)), series)
    b.ret(b.fadd(b.load(total), asymptotic))
    return F.fn


def hurwitz_zeta(module):
    """The module's ``s2s.hurwitz_zeta(double s, double q) -> double`` (defined on first
    use)."""
    name = "s2s.hurwitz_zeta"
    if name in module.globals:
        return module.globals[name]
    F = IRFunction(module, name, _F64, [_F64, _F64])
    b = F.b
    s, q = F.fn.args
    F.return_if(b.fcmp_ordered("==", s, _c(1.0)), lambda: _c(math.inf))
    F.return_if(b.fcmp_ordered("<", s, _c(1.0)), lambda: _c(math.nan))
    with b.if_then(b.fcmp_ordered("<=", q, _c(0.0))):
        F.return_if(b.fcmp_ordered("==", q, F.intrinsic("floor", q)), lambda: _c(math.inf))
        # (q + k)^-s of a negative q + k is real for integer s only
        F.return_if(b.fcmp_unordered("!=", s, F.intrinsic("floor", s)), lambda: _c(math.nan))
    F.return_if(b.fcmp_ordered(">", q, _c(1e8)), lambda: b.fmul(
        b.fadd(b.fdiv(_c(1.0), b.fsub(s, _c(1.0))), b.fdiv(_c(1.0), b.fmul(_c(2.0), q))),
        F.intrinsic("pow", q, b.fsub(_c(1.0), s))))
    minus_s = b.fneg(s)
    total = F.variable(F.intrinsic("pow", q, minus_s), "sum")
    point = F.variable(q, "a")
    count = F.variable(ll.Constant(T.I64, 0), "k")
    term = F.variable(_c(0.0), "term")

    def converged(t):
        return b.fcmp_ordered("<", F.intrinsic("fabs", b.fdiv(t, b.load(total))), _c(MACHEP))

    def direct_term():
        b.store(b.add(b.load(count), ll.Constant(T.I64, 1)), count)
        a = b.fadd(b.load(point), _c(1.0))
        b.store(a, point)
        t = F.intrinsic("pow", a, minus_s)
        b.store(t, term)
        b.store(b.fadd(b.load(total), t), total)
        F.return_if(converged(t), lambda: b.load(total))

    F.while_loop(lambda: b.or_(b.icmp_signed("<", b.load(count), ll.Constant(T.I64, 9)),
                               b.fcmp_ordered("<=", b.load(point), _c(9.0))), direct_term)
    w = b.load(point)
    last = b.load(term)  # w^-s, already in the sum
    b.store(b.fsub(b.fadd(b.load(total), b.fdiv(b.fmul(last, w), b.fsub(s, _c(1.0)))),
                   b.fmul(_c(0.5), last)), total)
    rising = s                     # s (s+1) ... (s+2j-2)
    power = b.fdiv(last, w)        # w^(-s-2j+1)
    w_square = b.fmul(w, w)
    done = F.fn.append_basic_block("done")
    for j, coefficient in enumerate(EULER_MACLAURIN):
        if j:
            rising = b.fmul(rising, b.fmul(b.fadd(s, _c(2 * j - 1.0)), b.fadd(s, _c(2.0 * j))))
            power = b.fdiv(power, w_square)
        t = b.fmul(_c(coefficient), b.fmul(rising, power))
        b.store(b.fadd(b.load(total), t), total)
        if j + 1 < len(EULER_MACLAURIN):
            more = F.fn.append_basic_block(f"em{j + 1}")
            b.cbranch(converged(t), done, more)
            b.position_at_end(more)
    b.branch(done)
    b.position_at_end(done)
    b.ret(b.load(total))
    return F.fn


def polygamma(module):
    """The module's ``s2s.polygamma(i64 n, double x) -> double`` (defined on first use)."""
    name = "s2s.polygamma"
    if name in module.globals:
        return module.globals[name]
    psi, zeta = digamma(module), hurwitz_zeta(module)
    F = IRFunction(module, name, _F64, [T.I64, _F64])
    b = F.b
    n, x = F.fn.args
    F.return_if(b.icmp_signed("==", n, ll.Constant(T.I64, 0)), lambda: b.call(psi, [x]))
    odd = b.trunc(n, ll.IntType(1))  # (-1)^(n+1): +1 for odd n
    sign = b.select(odd, _c(1.0), _c(-1.0))
    factorial = F.libm("tgamma", b.fadd(b.sitofp(n, _F64), _c(1.0)))
    order = b.sitofp(b.add(n, ll.Constant(T.I64, 1)), _F64)
    b.ret(b.fmul(b.fmul(sign, factorial), b.call(zeta, [order, x])))
    return F.fn
