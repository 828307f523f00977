"""(Almost) 1-D linear regression with s2s: the seed tutorial's example.

This is the linear-regression part of the PyTorch-to-JAX tutorial
(shared/seeds/pytorch-to-jax-tutorial.txt) with ``jax`` replaced by ``s2s``
and ``jax.numpy`` by plain ``numpy`` (float64, where the seed was float32).
It prints the same numbers as the seed, then the gradient code s2s wrote.

Run:  python samples/linear_regression.py
"""
import numpy as np

import s2s
from s2s.tree_util import tree_map


# A pure function and its derivative with respect to the first argument.
def f(w, x):
    return w * x


print(f(13., 42.))                       # 546.0

df_dw = s2s.grad(f)                      # differentiates w.r.t. argument 0, like jax.grad


def manual_df_dw(w, x):
    return x


assert df_dw(13., 42.) == manual_df_dw(13., 42.)
print(df_dw(13., 42.))                   # 42.0


# The seed's regressor: a plain Python class.
class LinearRegressor():
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def predict(self, x):
        return self.w * x + self.b

    def rms(self, xs: np.ndarray, ys: np.ndarray):
        return np.sqrt(np.sum(np.square(self.w * xs + self.b - ys)))


my_regressor = LinearRegressor(13., 0.)

# A kind of loss function, used for training
xs = np.array([42.0])
ys = np.array([500.0])
print(my_regressor.rms(xs, ys))          # 46.0

# Prediction for test data
print(my_regressor.predict(42.))         # 546.0


# The loss builds a LinearRegressor inside the differentiated function, as in
# the seed: s2s inlines the class (its __init__ and the rms method), so the
# object never exists at run time and the gradient flows to w and b.
def loss_fn(w, b, xs, ys):
    my_regressor = LinearRegressor(w, b)
    return my_regressor.rms(xs=xs, ys=ys)


# argnums=(0, 1): gradients with respect to the first and second parameter.
grad_fn = s2s.grad(loss_fn, argnums=(0, 1))

print(loss_fn(13., 0., xs, ys))          # 46.0
# (Printed as plain floats; the gradients themselves are numpy float64 scalars.)
print(tree_map(float, grad_fn(13., 0., xs, ys)))     # (42.0, 1.0)


# Parameters as a dict (a pytree): the gradient is a dict with the same keys.
def loss_fn(params, xs, ys):
    my_regressor = LinearRegressor(params['w'], params['b'])
    return my_regressor.rms(xs=xs, ys=ys)


grad_fn = s2s.grad(loss_fn)

print(loss_fn({'w': 13., 'b': 0.}, xs, ys))    # 46.0
print(tree_map(float, grad_fn({'w': 13., 'b': 0.}, xs, ys)))    # {'b': 1.0, 'w': 42.0}


# A training loop: 15 steps of gradient descent, learning rate 0.002.
def update_combiner(param, grad, lr=0.002):
    return param - lr * grad


params = {'w': 13., 'b': 0.}
for _ in range(15):
    print(float(loss_fn(params, xs, ys)))
    grads = grad_fn(params, xs, ys)
    params = tree_map(update_combiner, params, grads)

# Now, predict:
print(float(LinearRegressor(params['w'], params['b']).predict(42.)))   # 500.1102


# What s2s wrote: the gradient code of the dict-params loss.
from s2s import pipeline  # noqa: E402

ir = s2s.grad(loss_fn).specialised([params, xs, ys])
print()
print("# ---- generated gradient code: s2s.grad(loss_fn)(params, xs, ys) ----")
print(pipeline.emit(ir).source)
