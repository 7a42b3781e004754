"""A registry: the named entries of one extension axis (graph views, text styles), in
registration order. Each axis keeps its own entry type and checks; this holds what they share:
a name is an identifier and is registered once, and looking up a name that is not there is a
``ValueError`` naming the parameter and the choices."""
from __future__ import annotations


class Registry:
    def __init__(self, param: str, noun: str):
        self.param = param      # the parameter a student passes the name as: "view", "style"
        self.noun = noun        # what an entry is called in messages: "view", "text style"
        self._entries: dict = {}

    def check_new(self, name) -> None:
        """Refuse a name that is not an identifier or is already registered."""
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"{self.param} name must be an identifier, got {name!r}")
        if name in self._entries:
            raise ValueError(f"a {self.noun} named {name!r} is already registered")

    def add(self, name: str, entry):
        self.check_new(name)
        self._entries[name] = entry
        return entry

    def remove(self, name: str) -> None:
        """Forget ``name`` (for tests and notebook experiments)."""
        self._entries.pop(name, None)

    def entries(self) -> tuple:
        return tuple(self._entries.values())

    def names(self) -> tuple:
        return tuple(self._entries)

    def get(self, name):
        entry = self._entries.get(name) if isinstance(name, str) else None
        if entry is None:
            raise ValueError(f"{self.param}: unknown {self.noun} {name!r}; choose one of "
                             f"{', '.join(self._entries)}")
        return entry
