"""Functions the benchmarks differentiate (kept in a module so that s2s can
read their source)."""
import numpy as np


def straight50(x):
    """~50 lines of straight-line elementwise / matmul / sum arithmetic.

    ``x`` is a 1-D float64 array; the result is a scalar.
    """
    a = x * 2.0
    b = a + 1.0
    c = np.sin(b)
    d = np.cos(a)
    e = c * d
    f = e - x
    g = np.exp(-f * f)
    h = g + c
    i = h * h
    j = np.tanh(i)
    k = j + d
    m = np.outer(k, x)
    n = m @ x
    o = n * 0.5
    p = o + k
    q = np.sqrt(p * p + 1.0)
    r = q / (1.0 + np.square(a))
    s = np.log1p(r * r)
    t = s - r
    u = t * x
    v = np.sum(u)
    w = u * v
    y = w + np.square(t)
    z = np.tanh(y)
    aa = z * c
    ab = aa - d
    ac = np.exp(ab * 0.1)
    ad = ac * ab
    ae = ad + e
    af = np.sin(ae)
    ag = af * af
    ah = ag + g
    ai = ah / (1.0 + np.square(ah))
    aj = np.sum(ai * x)
    ak = ai * aj
    al = ak + z
    am = m @ al
    an = am * 0.01
    ao = np.cos(an)
    ap = ao + al
    aq = ap * ap
    ar = np.sqrt(aq + 1.0)
    at = ar - 1.0
    au = at * x
    av = np.sum(au)
    aw = av * av
    ax = aw + np.sum(np.square(ap))
    return np.sqrt(ax)


def mlp_loss(params, x, y):
    """Two-layer MLP (tanh hidden layer), mean squared error."""
    h = np.tanh(x @ params["w1"] + params["b1"])
    pred = h @ params["w2"] + params["b2"]
    return np.mean(np.square(pred - y))


def warmup(x):
    """A small function with the same primitives as straight50, transformed
    first to separate s2s's one-time start-up costs (parsing the rule
    templates, warming libcst) from the cost of transforming straight50."""
    a = np.tanh(np.sin(x) * np.cos(x) - np.exp(-x)) / (1.0 + np.square(x))
    b = np.outer(a, x) @ np.log1p(a * a)
    return np.sqrt(np.sum(b * x) + 1.0)


# -- bench_forward.py ------------------------------------------------------------

def tanh_sq(X):
    """Elementwise-heavy: a reduction of elementwise maps (any shape)."""
    return np.sum(np.tanh(X) ** 2)


#: the constant right operand of ``tanh_matmul`` (a free variable, read at each call)
MATMUL_W = np.random.default_rng(1).standard_normal((400, 300)) / 20.0


def tanh_matmul(X):
    """A matmul with a constant matrix, then elementwise maps; ``X`` is (n, 400)."""
    return np.sum(np.tanh(X @ MATMUL_W) ** 2)


def mlp_params_loss(x, y):
    """``mlp_loss`` as a function of its parameters only (the data closed over),
    so that a JVP/HVP carries tangents for the parameters and not the data."""
    def loss(params):
        return mlp_loss(params, x, y)
    return loss


def scalar_chain(x):
    """straight50's elementwise lines on a Python float (``outer``, ``@`` and
    ``np.sum`` replaced by products): a scalar function for ``grad(grad(f))``."""
    a = x * 2.0
    b = a + 1.0
    c = np.sin(b)
    d = np.cos(a)
    e = c * d
    f = e - x
    g = np.exp(-f * f)
    h = g + c
    i = h * h
    j = np.tanh(i)
    k = j + d
    m = k * x
    n = m * x
    o = n * 0.5
    p = o + k
    q = np.sqrt(p * p + 1.0)
    r = q / (1.0 + np.square(a))
    s = np.log1p(r * r)
    t = s - r
    u = t * x
    v = u * 3.0
    w = u * v
    y = w + np.square(t)
    z = np.tanh(y)
    aa = z * c
    ab = aa - d
    ac = np.exp(ab * 0.1)
    ad = ac * ab
    ae = ad + e
    af = np.sin(ae)
    ag = af * af
    ah = ag + g
    ai = ah / (1.0 + np.square(ah))
    aj = ai * x
    ak = ai * aj
    al = ak + z
    am = m * al
    an = am * 0.01
    ao = np.cos(an)
    ap = ao + al
    aq = ap * ap
    ar = np.sqrt(aq + 1.0)
    at = ar - 1.0
    au = at * x
    aw = au * au
    ax = aw + np.square(ap)
    return np.sqrt(ax)


def scalar_warmup(x):
    """The primitives of scalar_chain on a float, transformed first (see warmup)."""
    a = np.tanh(np.sin(x) * np.cos(x) - np.exp(-x)) / (1.0 + np.square(x))
    b = np.log1p(a * a) * np.sqrt(x * x + 1.0)
    return b * x + a
