"""The text of files that exist only in memory: code s2s generates and loads, and sources
a function brought with it from another process (``shipped.py``).

Python's tools (tracebacks, ``inspect``, and s2s's own frontend) read source through
``linecache``, so the text goes there; but anyone may clear that cache
(``linecache.clearcache()``, IPython's and pytest's housekeeping), and a file with no
disk copy cannot be read back.  s2s keeps its own copy here as well:

* ``register(filename, text)``: put ``text`` (a string or a list of lines) in
  ``linecache`` under ``filename`` and keep it;
* ``lines_of(filename, module_globals=None)``: the lines of ``filename`` as ``linecache``
  has them, or, where it has forgotten a file registered here, the kept lines (put back
  into ``linecache`` so that tracebacks show them again).
"""
from __future__ import annotations

import linecache
import threading
from typing import Dict, List, Union

_KEPT: Dict[str, List[str]] = {}
_LOCK = threading.Lock()


def register(filename: str, text: Union[str, List[str]]) -> None:
    lines = text.splitlines(keepends=True) if isinstance(text, str) else list(text)
    with _LOCK:
        _KEPT[filename] = lines
        linecache.cache[filename] = (sum(map(len, lines)), None, lines, filename)


def lines_of(filename: str, module_globals=None) -> List[str]:
    lines = linecache.getlines(filename, module_globals)
    if lines:
        return lines
    with _LOCK:
        kept = _KEPT.get(filename)
        if kept is None:
            return []
        linecache.cache[filename] = (sum(map(len, kept)), None, kept, filename)
        return kept
