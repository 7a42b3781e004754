"""A viewer's fold states laid out once each, the likely next ones ahead of the click.

Opening or closing a module is a new Graphviz layout of the whole view (the kernel lays out;
the picture stays as readable and as deterministic as every other drawing: the same fold state
gives the same SVG). At BERT-base size that layout costs about as much as a student will wait
for a click (0.1-0.3 s on a loaded two-core machine), so :class:`FoldLayouts` keeps every
state drawn (so closing what was just opened is free) and, once the front end says a view is on
screen (:meth:`FoldLayouts.prefetch`), lays out in a background thread the states one click
away: each folded module opened, each open module closed. A click whose layout is ready answers
from the cache; one whose layout the thread is making waits for it; any other is laid out at
once, as before.

The layouts are pure functions of ``(view, Fold)``; the thread only reads the viewer's graphs
and runs ``dot`` (a subprocess), and never touches a widget trait.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, Iterable, Mapping, NamedTuple, Optional


class Fold(NamedTuple):
    """What a view is drawn with: ``full`` (everything, no folding), else ``open_modules``
    (module paths drawn open; None: the first look's choice) and ``folded`` (namespace ids)."""
    full: bool = False
    open_modules: Optional[frozenset] = None
    folded: frozenset = frozenset()


def with_ancestors(paths: Iterable[str]) -> list:
    """``paths`` with every ancestor module path before it, each once: opening "layer2.1"
    opens "layer2" too."""
    out = []
    for path in paths:
        parts = path.split(".")
        out += [".".join(parts[:k]) for k in range(1, len(parts) + 1)]
    return list(dict.fromkeys(out))


def fold_of(full: bool, open_modules: Iterable[str], folded: Iterable[str],
            first_open: Iterable[str]) -> Fold:
    """The :class:`Fold` of a viewer's traits; open modules equal to the first look's are the
    first look (``None``), so both name one layout."""
    if full:
        return Fold(True)
    opened = frozenset(open_modules)
    return Fold(False, None if opened == frozenset(first_open) else opened, frozenset(folded))


def next_folds(vm: Mapping, fold: Fold, first_open: Iterable[str]) -> list:
    """The fold states one click away from view model ``vm`` drawn with ``fold``: each folded
    module opened (in drawing order), then each open module closed (its inner ones with it),
    as the front end's clicks ask (``vm.js`` ``clickFold``)."""
    if fold.full:
        return []
    opened = set(first_open if fold.open_modules is None else fold.open_modules)
    out = []
    for node in (vm.get("nodes") or {}).values():
        f = node.get("folded") or {}
        if f.get("kind") == "module" and f.get("path"):
            out.append(with_ancestors([*opened, f["path"]]))
    for ns in (vm.get("namespaces") or {}).values():
        path = ns.get("path")
        if ns.get("kind") == "module" and path in opened and not ns.get("folded"):
            out.append([p for p in opened if p != path and not p.startswith(path + ".")])
    folds = [fold_of(False, paths, fold.folded, first_open) for paths in out]
    return list(dict.fromkeys(f for f in folds if f != fold))


class FoldLayouts:
    """The layouts of one viewer: ``layout(view, fold)`` (a clean view model) made once per
    state and kept (the last ``capacity``), the next clicks' made ahead in a thread."""

    def __init__(self, layout: Callable[[str, Fold], dict], capacity: int = 48) -> None:
        self._layout = layout
        self._capacity = capacity
        self._done: OrderedDict = OrderedDict()      # (view, Fold) -> view model
        self._queue: list = []                       # (view, Fold) the thread lays out next
        self._busy = None                            # what the thread is laying out now
        self._cond = threading.Condition()
        self._thread: Optional[threading.Thread] = None

    def get(self, view: str, fold: Fold) -> dict:
        """The view model of ``view`` drawn with ``fold``: kept, being made (waited for), or
        laid out now."""
        key = (view, fold)
        with self._cond:
            while self._busy == key:
                self._cond.wait()
            if key in self._done:
                self._done.move_to_end(key)
                return self._done[key]
            if key in self._queue:
                self._queue.remove(key)
        payload = self._layout(view, fold)
        with self._cond:
            self._keep(key, payload)
        return payload

    def keep(self, view: str, fold, payload: dict) -> None:
        """Keep ``payload`` as the layout of ``view`` drawn with ``fold`` (one made elsewhere)."""
        with self._cond:
            self._keep((view, fold), payload)

    def cached(self, view: str, fold: Fold) -> bool:
        """Whether that layout is ready."""
        with self._cond:
            return (view, fold) in self._done

    def prefetch(self, view: str, folds: Iterable[Fold]) -> None:
        """Lay out ``folds`` of ``view`` in the background, in order; what was queued before
        (for a state the student has left) is dropped."""
        with self._cond:
            self._queue = [k for k in dict.fromkeys((view, f) for f in folds)
                           if k not in self._done and k != self._busy]
            if self._queue and (self._thread is None or not self._thread.is_alive()):
                self._thread = threading.Thread(target=self._work, name="mlclab-fold-layouts",
                                                daemon=True)
                self._thread.start()

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Block until the background queue is empty (for tests and benchmarks); False on
        timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._queue and self._busy is None, timeout)

    def _work(self) -> None:
        while True:
            with self._cond:
                if not self._queue:
                    self._cond.notify_all()
                    return
                key = self._busy = self._queue.pop(0)
            try:
                payload = self._layout(*key)
            except Exception:   # noqa: BLE001 - a failed layout is redone (and shown) on the click
                payload = None
            with self._cond:
                self._busy = None
                if payload is not None:
                    self._keep(key, payload)
                self._cond.notify_all()

    def _keep(self, key, payload: dict) -> None:
        self._done[key] = payload
        self._done.move_to_end(key)
        while len(self._done) > self._capacity:
            self._done.popitem(last=False)
