"""What an ``s2s`` command line names: the file (imported as a module, its output sent
to stderr, its syntax errors and ``sys.exit()`` reported as usage errors), the
function in it (``FILE.py:FUNC``), and the example arguments the command runs it on
(``--args`` evaluated in the file's namespace, or ``--signature`` kinds such as
``'f64, f64[:]'``, or 1.0 per parameter), and ``--argnums``.  Every problem is a
``CLIError``: one line (located ones start with ``file:line:col``), exit status 2.
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import inspect
import os
import re
import sys

import numpy as np


class CLIError(Exception):
    """A usage error: reported as one line, exit status 2.

    ``located`` errors start with ``file:line:col`` and are printed as they are.
    """

    def __init__(self, message: str, located: bool = False):
        super().__init__(message)
        self.located = located


# --------------------------------------------------------------------------- loading

def _module_name(path: str) -> str:
    """A stable module name for the file at ``path`` (same path -> same name)."""
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    digest = hashlib.sha1(os.path.abspath(path).encode()).hexdigest()[:8]
    return f"_s2s_cli_{stem}_{digest}"


def load_module(path: str):
    """Import the file at ``path`` with its directory on sys.path (sibling imports)."""
    if not os.path.isfile(path):
        raise CLIError(f"{path}: no such file")
    path = os.path.abspath(path)
    name = _module_name(path)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CLIError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    directory = os.path.dirname(path)
    sys.path.insert(0, directory)
    try:
        # what the file prints while importing goes to stderr: stdout is the dump
        with contextlib.redirect_stdout(sys.stderr):
            spec.loader.exec_module(module)
    except SyntaxError as e:
        sys.modules.pop(name, None)
        where = f"{e.filename or path}:{e.lineno or 0}:{e.offset or 0}"
        text = (e.text or "").rstrip("\n")
        quoted = ""
        if text.strip():
            stripped = text.lstrip()
            caret = max((e.offset or 1) - 1 - (len(text) - len(stripped)), 0)
            quoted = f"\n    {stripped}\n    {' ' * caret}^"
        raise CLIError(f"{where}: syntax error: {e.msg}{quoted}", located=True) from e
    except SystemExit as e:  # sys.exit() at import: the file is a script, not a module
        sys.modules.pop(name, None)
        raise CLIError(f"{path}: importing it called sys.exit({e.code!r}) (s2s imports the "
                       "file to find the function; put the script's own code under "
                       "if __name__ == '__main__':)") from None
    except Exception as e:
        sys.modules.pop(name, None)
        raise CLIError(f"{path}: importing it raised {type(e).__name__}: {e}") from e
    finally:
        try:
            sys.path.remove(directory)
        except ValueError:
            pass
    return module


def resolve_target(target: str):
    """``FILE.py:FUNC`` -> (module, function)."""
    path, sep, func_name = target.rpartition(":")
    if not sep or not path or not func_name:
        raise CLIError(f"expected FILE.py:FUNC, got {target!r}")
    module = load_module(path)
    fn = getattr(module, func_name, None)
    if fn is None:
        raise CLIError(f"{path}: no function named {func_name!r}")
    from ..core.custom import is_custom_function

    if not inspect.isfunction(fn) and not is_custom_function(fn):
        raise CLIError(f"{path}: {func_name!r} is a {type(fn).__name__}, not a Python function")
    return module, fn


# --------------------------------------------------------------------------- arguments

_SCALAR_KINDS = {
    "f64": (np.float64, lambda: 1.0), "f32": (np.float32, lambda: np.float32(1.0)),
    "c128": (np.complex128, lambda: 1.0 + 0.0j), "c64": (np.complex64, lambda: np.complex64(1.0)),
    "i64": (np.int64, lambda: 1), "i32": (np.int32, lambda: np.int32(1)),
    "bool": (np.bool_, lambda: True),
}
_KIND_RE = re.compile(r"^\s*(\w+)\s*(?:\[\s*(:(?:\s*,\s*:)*)\s*\])?\s*$")


def parse_signature(text: str):
    """``'f64, f64[:]'`` -> example values ``[1.0, np.ones(2)]``."""
    values = []
    parts = re.split(r",(?![^\[]*\])", text) if text.strip() else []  # commas outside [...]
    for part in parts:
        m = _KIND_RE.match(part)
        if not m or m.group(1) not in _SCALAR_KINDS:
            known = " ".join(_SCALAR_KINDS)
            raise CLIError(f"bad --signature entry {part.strip()!r}: expected one of {known}, "
                           f"optionally followed by [:], [:, :], ...")
        dtype, scalar = _SCALAR_KINDS[m.group(1)]
        if m.group(2) is None:
            values.append(scalar())
        else:
            ndim = m.group(2).count(":")
            values.append(np.ones((2,) * ndim, dtype=dtype))
    return values


def example_values(fn, module, args_expr, signature):
    """One example value per parameter of ``fn``, in order."""
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    if args_expr is not None:
        namespace = dict(vars(module))
        namespace.setdefault("np", np)
        try:
            value = eval(args_expr, namespace)
        except Exception as e:
            raise CLIError(f"bad --args {args_expr!r}: {type(e).__name__}: {e}") from e
        if len(params) == 1 and not (isinstance(value, tuple) and len(value) == 1):
            given = [value]
        elif isinstance(value, tuple):
            given = list(value)
        else:
            given = [value]
    elif signature is not None:
        given = parse_signature(signature)
    else:
        given = [1.0 for p in params if p.default is p.empty
                 and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    try:
        bound = sig.bind(*given)
    except TypeError as e:
        raise CLIError(f"{len(given)} example argument(s) do not fit "
                       f"{fn.__name__}{sig}: {e}") from e
    bound.apply_defaults()
    return [bound.arguments[p.name] for p in params
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def parse_argnums(text: str):
    try:
        nums = tuple(int(t) for t in text.split(",") if t.strip())
    except ValueError:
        raise CLIError(f"bad --argnums {text!r}: expected integers such as 0 or 0,1") from None
    if not nums:
        raise CLIError("bad --argnums: expected at least one integer")
    return nums[0] if len(nums) == 1 and "," not in text else nums
