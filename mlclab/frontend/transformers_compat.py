"""Hugging Face transformers models through ``torch.export``, without mlclab importing
transformers: a model whose class comes from transformers gets the library's own pytree
registrations first, so the ``DynamicCache`` a decoder returns (its past keys and values)
is flattened into tensors like any tuple output instead of being refused by export."""
from __future__ import annotations

import sys


def prepare_for_export(module) -> None:
    """Register transformers' cache classes with torch's pytree when ``module`` (or one of its
    submodules) is a transformers model; nothing otherwise (transformers is never imported
    here: a model of its class means it already is)."""
    if "transformers" not in sys.modules:
        return
    if not any(type(m).__module__.startswith("transformers.") for m in module.modules()):
        return
    try:
        from transformers.integrations.executorch import register_dynamic_cache_export_support
    except ImportError:        # another transformers version: export says what it refuses
        return
    register_dynamic_cache_export_support()
