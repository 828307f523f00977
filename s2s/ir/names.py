"""Hygienic, deterministic name generation.

A ``NameGen`` knows every name already taken (the user's variables, the
module aliases generated code uses) and hands out fresh ones derived from a
base name: ``x_bar``, then ``x_bar_1``, ``x_bar_2``... in the order asked, so
the same function always gets the same names.
"""
from __future__ import annotations

import keyword
from typing import Iterable


class NameGen:
    def __init__(self, taken: Iterable[str] = ()):
        self.taken = set(taken)
        self._next_temp = 1
        self._next: dict = {}  # base -> the suffix to try first (every smaller one is taken)
        self.temps = set()  # names handed out by temp()

    def reserve(self, name: str) -> None:
        self.taken.add(name)

    def fresh(self, base: str) -> str:
        base = base or "t"
        if base not in self.taken and not keyword.iskeyword(base):
            self.taken.add(base)
            return base
        i = self._next.get(base, 1)  # names are only ever added, so the scan resumes
        while f"{base}_{i}" in self.taken:
            i += 1
        self._next[base] = i + 1
        name = f"{base}_{i}"
        self.taken.add(name)
        return name

    def temp(self) -> str:
        """A fresh temporary: t1, t2, ... skipping taken names."""
        i = self._next_temp
        while f"t{i}" in self.taken:
            i += 1
        self._next_temp = i + 1
        name = f"t{i}"
        self.taken.add(name)
        self.temps.add(name)
        return name
