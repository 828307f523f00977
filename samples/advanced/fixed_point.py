"""Differentiating a solver at its solution: the implicit function theorem with custom_vjp.

If x*(a) solves F(x, a) = 0, then dx*/da = -(dF/dx)^-1 dF/da at the
solution: the derivative needs only the answer, not the iterations that
found it.  ``custom_vjp`` says so to s2s: the forward function runs the
solver and keeps x* as the residual, the backward function applies the
formula.  No iteration is recorded on a tape.

1. The cookbook's generic ``fixed_point(f, a, x_guess)`` (x = f(a, x)),
   whose backward pass solves the adjoint fixed point u = x_bar + u df/dx
   with ``s2s.vjp``; used for Newton's square root (the derivative of
   sqrt(a) is 1 / (2 sqrt(a))).
2. A Newton solve of the cubic x^3 + a x - b = 0 for x(a, b), whose backward
   function is the IFT formula in plain numpy, so it is itself
   differentiated: ``grad(grad(...))`` gives second derivatives of the
   implicit function.

Run:  python samples/advanced/fixed_point.py
"""
from functools import partial

import numpy as np

import s2s
from s2s import grad, vjp


# -- 1. the cookbook's fixed_point ---------------------------------------------------------

@partial(s2s.custom_vjp, nondiff_argnums=(0,))
def fixed_point(f, a, x_guess):
    """Iterate x <- f(a, x) from ``x_guess`` until it stops changing."""
    x_prev, x = x_guess, f(a, x_guess)
    while np.max(np.abs(x_prev - x)) > 1e-13:
        x_prev, x = x, f(a, x)
    return x


def fixed_point_fwd(f, a, x_guess):
    x_star = fixed_point(f, a, x_guess)
    return x_star, (a, x_star)


def rev_iter(f, packed, u):
    a, x_star, x_star_bar = packed
    _, vjp_x = vjp(lambda x: f(a, x), x_star)
    return x_star_bar + vjp_x(u)[0]


def fixed_point_bwd(f, res, x_star_bar):
    a, x_star = res
    _, vjp_a = vjp(lambda a: f(a, x_star), a)
    # u = x_bar (I - df/dx)^-1, itself found as a fixed point
    u = fixed_point(partial(rev_iter, f), (a, x_star, x_star_bar), x_star_bar)
    a_bar, = vjp_a(u)
    return a_bar, np.zeros_like(x_star)


fixed_point.defvjp(fixed_point_fwd, fixed_point_bwd)


def newton_update(a, x):
    return 0.5 * (x + a / x)


def newton_sqrt(a):
    return fixed_point(newton_update, a, a)


# -- 2. a Newton solve with the IFT backward function in plain numpy -------------------------

@s2s.custom_vjp
def cubic_root(a, b):
    """The real root x of x^3 + a x - b = 0 (a > 0: exactly one), by Newton's method."""
    x = np.cbrt(b)
    for _ in range(50):
        step = (x ** 3 + a * x - b) / (3 * x ** 2 + a)
        x = x - step
        if np.abs(step) < 1e-15 * (1 + np.abs(x)):
            break
    return x


def cubic_root_fwd(a, b):
    x = cubic_root(a, b)
    return x, (a, x)


def cubic_root_bwd(res, x_bar):
    # F(x, a, b) = x^3 + a x - b:  dx/da = -x / F_x,  dx/db = 1 / F_x,  F_x = 3 x^2 + a
    a, x = res
    w = x_bar / (3 * x ** 2 + a)
    return -w * x, w


cubic_root.defvjp(cubic_root_fwd, cubic_root_bwd)


def main():
    a = 2.0
    print("newton_sqrt(2)               =", newton_sqrt(a))
    print("grad(newton_sqrt)(2)         =", grad(newton_sqrt)(a), " (1 / (2 sqrt 2) =",
          0.5 / np.sqrt(a), ")")
    a, b = 1.5, 4.0
    x = cubic_root(a, b)
    print("cubic_root(1.5, 4)           =", x, " residual", x ** 3 + a * x - b)
    da, db = grad(cubic_root, argnums=(0, 1))(a, b)
    print("d x / d(a, b)                =", (da, db))
    d2 = grad(grad(cubic_root, argnums=1), argnums=1)(a, b)
    print("d2 x / db2 (grad of grad)    =", d2)
    return {"sqrt": newton_sqrt(2.0), "dsqrt": grad(newton_sqrt)(2.0),
            "x": x, "dx": (da, db), "d2x_db2": d2}


if __name__ == "__main__":
    main()
