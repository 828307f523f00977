"""The JAX and PyTorch versions of ``adbench.py``'s cases, each imported only when its
framework is installed: ``derivative(framework, case name)`` is the maker (arguments ->
zero-argument callable computing the derivative), ``None`` where that framework's
version is not written, ``False`` where the framework is not installed."""
import importlib

_MODULES = {"jax": "adbench_jax", "torch": "adbench_torch"}
_loaded = {}


def _module(framework):
    if framework not in _loaded:
        try:
            _loaded[framework] = importlib.import_module(_MODULES[framework])
        except ImportError:
            _loaded[framework] = None
    return _loaded[framework]


def derivative(framework, name):
    mod = _module(framework)
    if mod is None:
        return False
    return mod.MAKERS.get(name)
