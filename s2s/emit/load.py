"""Turning emitted source into a live Python function.

The source is registered with ``linecache`` under a deterministic file name
(``<s2s-generated NAME HASH>``), so tracebacks and ``inspect.getsource``
show it and the frontend can read it back to transform the generated
function again.  The function's globals hold only the module aliases the
text uses and, for in-memory use, objects that have no public name.
"""
from __future__ import annotations

import hashlib
import math

import numpy as np

import s2s_runtime

from ..frontend.registered import register
from .python import Emitted

_ROOT_MODULES = {"np": np, "math": math, "rt": s2s_runtime}
_IMPORTS = {"np": "import numpy as {}", "math": "import math as {}",
            "rt": "import s2s_runtime as {}"}


def module_header(emitted: Emitted) -> str:
    lines = []
    for root in ("np", "math", "rt"):
        if root in emitted.aliases:
            alias = emitted.aliases[root]
            line = _IMPORTS[root].format(alias)
            if root == "math" and alias == "math":
                line = "import math"
            lines.append(line)
    return "\n".join(lines) + "\n"


def standalone_module(emitted: Emitted, doc: str = "") -> str:
    """A module that defines the function and imports only numpy, math, s2s_runtime."""
    if emitted.extern:
        names = ", ".join(sorted(emitted.extern))
        raise ValueError(f"cannot write a standalone module: the code refers to objects "
                         f"without an importable name ({names})")
    head = f'"""{doc}"""\n' if doc else ""
    return head + module_header(emitted) + "\n\n" + emitted.source


def load(emitted: Emitted, name: str):
    """Compile ``emitted`` and return the function named ``name``."""
    src = emitted.source
    digest = hashlib.sha1(src.encode()).hexdigest()[:12]
    filename = f"<s2s-generated {name} {digest}>"
    lines = src.splitlines(keepends=True)
    register(filename, lines)
    namespace = {alias: _ROOT_MODULES[root] for root, alias in emitted.aliases.items()}
    namespace.update(emitted.extern)
    namespace["__name__"] = "s2s_generated"
    code = compile(src, filename, "exec")
    exec(code, namespace)
    fn = namespace[name]
    fn.__s2s_source__ = src
    return fn
