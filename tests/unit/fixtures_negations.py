"""Functions whose adjoints chain negations (sigmoid, cos of a negation, ...)."""
import numpy as np


def sigmoid(x):
    return np.sum(1.0 / (1.0 + np.exp(-x)))


def cos_of_negation(x):
    return 0.5 / (2.0 + np.cos(-x))


def three_negations(x):
    return -(-(-x * 3.0) / 2.0) * np.sin(-x)


def negated_reused(x):
    a = -x
    return a * a / (1.0 + a * a) - np.cos(a)
