"""The source of functions that travelled to another process by value.

cloudpickle (which Dask uses) pickles a function that cannot be imported by
name - a lambda, a closure, a function of ``__main__`` or of a notebook - by
value, and replaces the file name of its code by ``"<dynamic-code>"``; the
receiving process then has neither the file name nor the source, which is
all s2s reads.  A transformed function that travels (``s2s/core/travel.py``)
therefore takes along, for each function pickled by value with it, the key
of its code and the lines of the file it came from; the receiving process
registers them here and the frontend finds the source through them.

Contract:

* ``code_key(code)``: a digest of everything in a code object but its file
  name (its bytecode, names, constants, line table, nested code), equal for
  the sender's code and the copy cloudpickle rebuilt from it.
* ``sources_of(functions)``: ``{"keys": {code key: file name}, "files":
  {file name: lines}}`` for those functions (nested code included), the lines
  as the sending process's ``linecache`` has them.
* ``receive(sources)``: registers them; the lines go into ``linecache`` under
  the original file name when that name holds no other text in this process
  (so messages quote ``file:line`` as on the sender), else under
  ``"<file name> (as sent)"``.
* ``filename_of(code)``: the file of ``code``'s source: its own
  ``co_filename``, or for a received copy the registered name.
"""
from __future__ import annotations

import hashlib
import types
from collections import OrderedDict

from .registered import lines_of, register

#: code key -> the file name its source is registered under (bounded: oldest dropped)
_FILES: "OrderedDict[str, str]" = OrderedDict()
_FILES_MAX = 65536
_KEYS: dict = {}  # id(code) -> (code, key): code objects are immutable, so keys are memoised


def _const_key(c) -> str:
    if isinstance(c, types.CodeType):
        return "code:" + code_key(c)
    if isinstance(c, frozenset):  # its order follows string hashes, which differ per process
        return "frozenset(" + ",".join(sorted(map(_const_key, c))) + ")"
    if isinstance(c, tuple):
        return "(" + ",".join(map(_const_key, c)) + ")"
    return type(c).__name__ + ":" + repr(c)


def code_key(code: types.CodeType) -> str:
    hit = _KEYS.get(id(code))
    if hit is not None and hit[0] is code:
        return hit[1]
    parts = [code.co_name, getattr(code, "co_qualname", ""), str(code.co_firstlineno),
             str(code.co_argcount), str(code.co_posonlyargcount), str(code.co_kwonlyargcount),
             str(code.co_flags), code.co_code.hex(), repr(code.co_names),
             repr(code.co_varnames), repr(code.co_freevars), repr(code.co_cellvars),
             getattr(code, "co_linetable", b"").hex(),
             ",".join(map(_const_key, code.co_consts))]
    key = hashlib.sha256("\0".join(parts).encode()).hexdigest()
    if len(_KEYS) > 4096:
        _KEYS.clear()
    _KEYS[id(code)] = (code, key)
    return key


def _codes(code):
    yield code
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from _codes(c)


def sources_of(functions) -> dict:
    keys, files = {}, {}
    for fn in functions:
        code = getattr(fn, "__code__", None)
        if not isinstance(code, types.CodeType):
            continue
        filename = filename_of(code)
        if filename not in files:
            lines = lines_of(filename, getattr(fn, "__globals__", None))
            if not lines:
                continue  # no source here either: the receiver says so when it reads it
            files[filename] = list(lines)
        for c in _codes(code):
            keys[code_key(c)] = filename
    return {"keys": keys, "files": files}


def receive(sources: dict) -> None:
    names = {}
    for filename, lines in sources.get("files", {}).items():
        name = filename
        have = lines_of(filename)
        if have and have != lines:
            name = f"{filename} (as sent)"
        if lines_of(name) != lines:
            register(name, lines)
        names[filename] = name
    for key, filename in sources.get("keys", {}).items():
        if filename in names:
            _FILES[key] = names[filename]
            _FILES.move_to_end(key)
    while len(_FILES) > _FILES_MAX:
        _FILES.popitem(last=False)


def filename_of(code: types.CodeType) -> str:
    if _FILES and code.co_filename.startswith("<"):
        name = _FILES.get(code_key(code))
        if name is not None:
            return name
    return code.co_filename
