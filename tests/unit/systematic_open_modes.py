"""The rows of the systematic table whose primitive has no batching rule or no LLVM
lowering yet: the open gaps, measured (``test_systematic_modes.py`` checks that each
still fails -- a closed gap must leave this list -- and that every other row batches
like a loop over the batch and compiles to the Python result).  The reason is what
the transform says."""

NO_VMAP = {
    'np.extract(x > 0, x)': 'no batching rule',
    'np.full((2, 3), x)': 'a shape that differs per example (vmap cannot batch it)',
    'x[x > 0]': 'TypeError: olean mask that differs per example selects a different number of en',
    'x[x[:, 0] > 0]': 'TypeError: olean mask that differs per example selects a different number',
    # rows of the tables merged with the builtins, float-parts and scipy.special rules
}

NO_JIT = {
    'np.array_split(x, 3)': 'NotImplementedError: s2s.jit: np.array_split into parts of unequal lengths',
    'np.complex64(x)': 'no lowering: np.complex64(np.float64)',
    'np.float16(x)': 'no lowering: np.float16(np.float64)',
    'np.longdouble(x)': 'no lowering: np.longdouble(np.float64)',
    'np.squeeze(x)': 'UnsupportedSyntaxError: np.squeeze without axis= (pass axis=)',
    'x.squeeze()': 'UnsupportedSyntaxError: np.squeeze without axis= (pass axis=)',
    # rows of the tables merged with the builtins, float-parts and scipy.special rules
}

