"""Displays attached from above: the api layer names a display by kind, the notebook layer
provides it.

The facade (``mlclab/__init__.py``) registers each display as a dotted ``"module:attribute"``
name, resolved on first use, so ``import mlclab`` stays light and nothing in the api layer
imports the notebook layer.
"""
from __future__ import annotations

import importlib
from typing import Callable

_REGISTRY: dict[str, str] = {}


def register(kind: str, target: str) -> None:
    """Provide the display ``kind`` (e.g. ``"viewer"``) as ``"package.module:attribute"``."""
    if ":" not in target:
        raise ValueError(f"display {kind!r}: {target!r} is not of the form 'module:attribute'")
    _REGISTRY[kind] = target


def lookup(kind: str) -> Callable:
    """The callable registered for ``kind``, imported now."""
    try:
        target = _REGISTRY[kind]
    except KeyError:
        raise LookupError(f"no display {kind!r} is registered (import mlclab registers them); "
                          f"known: {', '.join(sorted(_REGISTRY)) or 'none'}") from None
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)
