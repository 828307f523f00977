"""Checkpointed functions whose Jacobians test_jacobians.py compiles."""
import numpy as np
import s2s

def stepper(x, n):
    y = x * 1.0
    for i in s2s.checkpoint_loop(range(n)):
        y = np.sin(y) * x + 0.1 * y
    return y * 2.0

def ck_inner(y, x):
    return np.tanh(y) * x

def with_ckpt(x):
    c = s2s.checkpoint(ck_inner)
    y = c(x, x)
    return c(y, x) + y
