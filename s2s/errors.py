"""Errors raised by s2s.

Every error that is about the user's code carries the ``Loc`` of the
offending construct and renders as::

    path/to/file.py:12:9: unsupported syntax: 'yield'
        y = yield x
            ^

so a user sees the construct, the file:line:col, the quoted line and a caret.
"""
from __future__ import annotations

from typing import Optional


class S2SError(Exception):
    """Base class of every error s2s raises about user code or usage."""

    def __init__(self, message: str, loc=None):
        self.message = message
        self.loc = loc
        super().__init__(self._render())

    def __reduce__(self):
        """The message and the location, so that an error raised in another process (a
        Dask worker) is the same error where it arrives."""
        return type(self), (self.message, self.loc), self.__dict__

    def _render(self) -> str:
        loc = self.loc
        if loc is None or not getattr(loc, "line", 0):
            return self.message
        head = f"{loc.file}:{loc.line}:{loc.col + 1}: {self.message}"
        text = loc.text.rstrip("\n")
        if not text:
            return head
        stripped = text.lstrip()
        indent = len(text) - len(stripped)
        caret_col = max(loc.col - indent, 0)
        return f"{head}\n    {stripped}\n    {' ' * caret_col}^"


def located(message: str, loc) -> str:
    """``message`` rendered with ``loc`` as an ``S2SError`` renders (for errors of another
    type, such as numpy's ``AxisError`` that compiled code raises where numpy would)."""
    return S2SError(message, loc)._render()


class UnsupportedSyntaxError(S2SError):
    """The user's code uses a construct s2s does not (yet) transform."""


class SourceUnavailableError(S2SError):
    """The source of a function cannot be found (interactive prompt, C code)."""


class NoRuleError(S2SError):
    """A call to a callable with neither a derivative rule nor Python source."""


class NameResolutionError(S2SError):
    """A free name that is neither a global, a closure cell nor a builtin."""


class CustomRuleError(S2SError, TypeError):
    """Misuse of ``custom_jvp``/``custom_vjp`` (a ``TypeError``, as in JAX)."""


class MisalignedArrayError(TypeError):
    """A compiled function met an array whose data is not aligned for its dtype (the
    entry point checks before running anything; ``jit`` then calls again with aligned
    copies of its array arguments, ``core/jit.py``)."""


def unsupported(construct: str, loc, hint: Optional[str] = None) -> UnsupportedSyntaxError:
    msg = f"unsupported syntax: {construct}"
    if hint:
        msg += f" ({hint})"
    return UnsupportedSyntaxError(msg, loc)
