"""GPU (s2s.cuda) tests. The package is not named ``cuda``: pytest puts tests/ on
sys.path, and a ``cuda`` package there would hide cuda-bindings' ``cuda.bindings``."""
