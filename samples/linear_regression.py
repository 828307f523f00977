"""(Almost) 1-D linear regression with s2s: the seed tutorial's example.

This is the linear-regression part of a PyTorch-to-JAX tutorial (the seed this
project grew from) with ``jax`` replaced by ``s2s`` and ``jax.numpy`` by plain
``numpy`` (float64, where the seed was float32).  Run as a script, it prints the
same numbers as the seed, then the gradient code s2s wrote; imported (``s2s dump``
does), it only defines the functions and the data.

Run:  python samples/linear_regression.py
"""
import numpy as np

import s2s
from s2s.tree_util import tree_map


# A pure function and its derivative with respect to the first argument.
def f(w, x):
    return w * x


def manual_df_dw(w, x):
    return x


# The seed's regressor: a plain Python class.
class LinearRegressor():
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def predict(self, x):
        return self.w * x + self.b

    def rms(self, xs: np.ndarray, ys: np.ndarray):
        return np.sqrt(np.sum(np.square(self.w * xs + self.b - ys)))


# A kind of loss function, used for training
xs = np.array([42.0])
ys = np.array([500.0])


# The loss builds a LinearRegressor inside the differentiated function, as in
# the seed: s2s inlines the class (its __init__ and the rms method), so the
# object never exists at run time and the gradient flows to w and b.
def loss_fn_wb(w, b, xs, ys):
    my_regressor = LinearRegressor(w, b)
    return my_regressor.rms(xs=xs, ys=ys)


# Parameters as a dict (a pytree): the gradient is a dict with the same keys.
def loss_fn(params, xs, ys):
    my_regressor = LinearRegressor(params['w'], params['b'])
    return my_regressor.rms(xs=xs, ys=ys)


# A training loop: 15 steps of gradient descent, learning rate 0.002.
def update_combiner(param, grad, lr=0.002):
    return param - lr * grad


def main():
    print(f(13., 42.))                       # 546.0
    df_dw = s2s.grad(f)                      # differentiates w.r.t. argument 0, like jax.grad
    assert df_dw(13., 42.) == manual_df_dw(13., 42.)
    print(df_dw(13., 42.))                   # 42.0

    my_regressor = LinearRegressor(13., 0.)
    print(my_regressor.rms(xs, ys))          # 46.0
    # Prediction for test data
    print(my_regressor.predict(42.))         # 546.0

    # argnums=(0, 1): gradients with respect to the first and second parameter.
    grad_fn = s2s.grad(loss_fn_wb, argnums=(0, 1))
    print(loss_fn_wb(13., 0., xs, ys))       # 46.0
    # (Printed as plain floats; the gradients themselves are numpy float64 scalars.)
    print(tree_map(float, grad_fn(13., 0., xs, ys)))     # (42.0, 1.0)

    grad_fn = s2s.grad(loss_fn)
    print(loss_fn({'w': 13., 'b': 0.}, xs, ys))    # 46.0
    print(tree_map(float, grad_fn({'w': 13., 'b': 0.}, xs, ys)))    # {'b': 1.0, 'w': 42.0}

    params = {'w': 13., 'b': 0.}
    for _ in range(15):
        print(float(loss_fn(params, xs, ys)))
        grads = grad_fn(params, xs, ys)
        params = tree_map(update_combiner, params, grads)

    # Now, predict:
    print(float(LinearRegressor(params['w'], params['b']).predict(42.)))   # 500.1102

    # What s2s wrote: the gradient code of the dict-params loss.
    from s2s.core import pipeline

    ir = s2s.grad(loss_fn).specialised([params, xs, ys])
    print()
    print("# ---- generated gradient code: s2s.grad(loss_fn)(params, xs, ys) ----")
    print(pipeline.emit(ir).source)


if __name__ == "__main__":
    main()
