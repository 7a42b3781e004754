"""mlclab's own objects that hold TVM IR: copies share it, pickling is refused with the way out.

TVM IR itself is guarded in ``mlclab.tvm_setup`` (its serializer segfaults); these classes
also hold a VM, locks or caches that must not be duplicated, and say what to pickle instead.
"""
from __future__ import annotations

from collections.abc import Mapping

from ..tvm_setup import HoldsIR


class HoldsCompiledIR(HoldsIR):
    """An api object (a compiled function, a program, its bindings): immutable once built, so a
    copy can be the object itself; pickling says to pickle the source instead."""

    pickle_instead = "pickle its source and call mlclab.compile(source) again"

    def _held_name(self) -> str:
        return repr(self)


class Bindings(HoldsCompiledIR, Mapping):
    """``fn.bindings``: a read-only mapping from each Relax var to its ``BindingInfo``."""

    def __init__(self, table: dict):
        self._table = table

    def __getitem__(self, var):
        return self._table[var]

    def __iter__(self):
        return iter(self._table)

    def __len__(self):
        return len(self._table)

    def __repr__(self):
        names = ", ".join(info.name for info in self._table.values())
        return f"<mlclab bindings {names}>"
