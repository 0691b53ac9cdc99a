"""Operator registry: name -> class, with lazy import of built-in ops and helpful misses.

Built-in ops live one per file under ``data_juicer/ops/<type>/<op_name>.py``, so a recipe only
imports the ops it names. ``all_names()`` imports everything (for ``--list_ops`` and docs).
"""

from __future__ import annotations

import difflib
import importlib
import os
from typing import Callable, Iterable

_OPS_ROOT = os.path.dirname(os.path.abspath(__file__))
_TYPE_DIRS = ("mapper", "filter", "deduplicator", "selector", "grouper", "aggregator", "pipeline")


class UnknownOpError(KeyError):
    """An op name that no registered or built-in op has."""

    def __init__(self, name: str, suggestions: list[str]):
        self.name = name
        self.suggestions = suggestions
        hint = f" Did you mean: {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(f"unknown operator '{name}'.{hint} Run `dj-process --list_ops` to see all.")

    def __str__(self) -> str:
        return self.args[0]


def _builtin_index() -> dict[str, str]:
    """Map op name -> module path, from file names alone (no import)."""
    index = {}
    for sub in _TYPE_DIRS:
        folder = os.path.join(_OPS_ROOT, sub)
        if not os.path.isdir(folder):
            continue
        for entry in os.scandir(folder):
            name, ext = os.path.splitext(entry.name)
            if ext == ".py" and not name.startswith("_"):
                index[name] = f"data_juicer.ops.{sub}.{name}"
    return index


class Registry:
    def __init__(self, name: str):
        self.name = name
        self._modules: dict[str, type] = {}
        self._builtin: dict[str, str] | None = None

    @property
    def builtin(self) -> dict[str, str]:
        if self._builtin is None:
            self._builtin = _builtin_index()
        return self._builtin

    def register_module(self, name: str | None = None, module: type | None = None, force: bool = False):
        """Register a class under ``name``; usable as ``@OPERATORS.register_module("x")``."""

        def _register(cls: type) -> type:
            key = name or getattr(cls, "_name", None) or cls.__name__
            existing = self._modules.get(key)
            if existing is not None and existing is not cls and not force:
                if (existing.__module__, existing.__qualname__) != (cls.__module__, cls.__qualname__):
                    raise KeyError(f"operator '{key}' is already registered by {existing.__module__}")
            cls._name = key
            self._modules[key] = cls
            return cls

        if module is not None:
            return _register(module)
        return _register

    def __contains__(self, name: str) -> bool:
        return name in self._modules or name in self.builtin

    def get(self, name: str) -> type:
        cls = self._modules.get(name)
        if cls is None and name in self.builtin:
            importlib.import_module(self.builtin[name])
            cls = self._modules.get(name)
        if cls is None:
            raise UnknownOpError(name, self.suggest(name))
        return cls

    def suggest(self, name: str, n: int = 3) -> list[str]:
        pool = set(self._modules) | set(self.builtin)
        return difflib.get_close_matches(name, sorted(pool), n=n, cutoff=0.6)

    def load_all(self) -> None:
        for mod in self.builtin.values():
            importlib.import_module(mod)

    def all_names(self) -> list[str]:
        self.load_all()
        return sorted(self._modules)

    def items(self) -> Iterable[tuple[str, type]]:
        self.load_all()
        return sorted(self._modules.items())


OPERATORS = Registry("operators")
register: Callable = OPERATORS.register_module
