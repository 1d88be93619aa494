"""One tiny registry per pluggable family (chunkers, embedders, search methods, LLM backends, judges).

Adding an implementation is one class and one decorator line, as in lm-evaluation-harness.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(self, family: str):
        self.family = family
        self._items: dict[str, T] = {}
        self._lazy: dict[str, str] = {}

    def lazy(self, name: str, target: str) -> None:
        """Register `name` as "module:attr", imported on first use (lm-evaluation-harness style): a plugin with
        heavy imports costs nothing until asked for, and it needs no import back into the registry's module."""
        self._lazy[name] = target

    def register(self, name: str) -> Callable[[T], T]:
        def deco(obj: T) -> T:
            if name in self._items:
                raise ValueError(f"{self.family} '{name}' registered twice")
            self._items[name] = obj
            return obj

        return deco

    def get(self, name: str) -> T:
        if name not in self._items and name in self._lazy:
            module, _, attr = self._lazy[name].partition(":")
            obj = getattr(importlib.import_module(module), attr)
            self._items.setdefault(name, obj)
        try:
            return self._items[name]
        except KeyError:
            known = ", ".join(self.names()) or "none"
            raise KeyError(f"unknown {self.family} '{name}' (known: {known})") from None

    def names(self) -> list[str]:
        return sorted(set(self._items) | set(self._lazy))

    def __contains__(self, name: str) -> bool:
        return name in self._items or name in self._lazy
