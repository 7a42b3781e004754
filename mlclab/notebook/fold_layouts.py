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

A click not ready yet comes first: while the kernel answers it (and until the front end has
drawn the answer and asks for the next states, or :data:`HOLD_S` seconds), the thread stops at
its next :func:`checkpoint` (a layout calls it between its steps), so the click's own Python
work does not share the GIL with the background's, and the background's ``dot`` runs at the
lowest CPU priority (``viz.dot.low_priority``). The likely next clicks are made first: the
module under the pointer (:meth:`FoldLayouts.prefer`), then the biggest folded modules.

The layouts are pure functions of ``(view, Fold)``; the thread only reads the viewer's graphs
and runs ``dot`` (a subprocess), and never touches a widget trait.
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Callable, Iterable, Mapping, NamedTuple, Optional

from ..viz.dot import low_priority

# How long a click keeps the background paused after its answer left when no new drawing
# follows (a fold made from Python, a page gone); the front end's next "drawn" resumes it.
HOLD_S = 1.0

# The FoldLayouts whose background thread this is (checkpoint() pauses only that thread).
_THREAD = threading.local()


def checkpoint() -> None:
    """Called by a layout between its steps: in a :class:`FoldLayouts` background thread,
    wait while a click is being answered; anywhere else return at once. Never call it while
    holding a lock that a click's layout needs."""
    layouts = getattr(_THREAD, "layouts", None)
    if layouts is not None:
        with layouts._cond:
            layouts._wait_turn()


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
    """The fold states one click away from view model ``vm`` drawn with ``fold``, the likely
    clicks first: each folded module opened, the biggest (most operators) first and equals in
    drawing order, then each open module closed (its inner ones with it), as the front end's
    clicks ask (``vm.js`` ``clickFold``)."""
    if fold.full:
        return []
    opened = set(first_open if fold.open_modules is None else fold.open_modules)
    spaces = vm.get("namespaces") or {}
    opens = []
    for node in (vm.get("nodes") or {}).values():
        f = node.get("folded") or {}
        if f.get("kind") == "module" and f.get("path"):
            ops = (spaces.get(f.get("namespace")) or {}).get("ops", 0)
            opens.append((-ops, len(opens), with_ancestors([*opened, f["path"]])))
    out = [paths for *_, paths in sorted(opens)]
    for ns in spaces.values():
        path = ns.get("path")
        if ns.get("kind") == "module" and path in opened and not ns.get("folded"):
            out.append([p for p in opened if p != path and not p.startswith(path + ".")])
    folds = [fold_of(False, paths, fold.folded, first_open) for paths in out]
    return list(dict.fromkeys(f for f in folds if f != fold))


class FoldLayouts:
    """The layouts of one viewer: ``layout(view, fold)`` (a clean view model) made once per
    state and kept (the last ``capacity``), the next clicks' made ahead in a thread that gives
    way to a click (for ``hold`` seconds after its answer, unless a new :meth:`prefetch`
    comes first)."""

    def __init__(self, layout: Callable[[str, Fold], dict], capacity: int = 48,
                 hold: float = HOLD_S) -> None:
        self._layout = layout
        self._capacity = capacity
        self._hold = hold
        self._done: OrderedDict = OrderedDict()      # (view, Fold) -> view model
        self._queue: list = []                       # (view, Fold) the thread lays out next
        self._busy = None                            # what the thread is laying out now
        self._clicks = 0                             # clicks being answered (get) now
        self._waited = set()                         # what they wait for the thread to finish
        self._held_until = 0.0                       # time.monotonic() the thread waits for
        self._pointed = None                         # (view, Fold) the pointer is on
        self._cond = threading.Condition()
        self._running = False                        # a thread takes work from the queue

    def get(self, view: str, fold: Fold) -> dict:
        """The view model of ``view`` drawn with ``fold``: kept, being made (waited for), or
        laid out now, with the background paused meanwhile."""
        key = (view, fold)
        with self._cond:
            self._clicks += 1
        try:
            with self._cond:
                while self._busy == key:
                    self._waited.add(key)                # the thread may finish this one
                    self._cond.notify_all()
                    self._cond.wait()
                self._waited.discard(key)
                if key in self._done:
                    self._done.move_to_end(key)
                    return self._done[key]
                if key in self._queue:
                    self._queue.remove(key)
            payload = self._layout(view, fold)
            with self._cond:
                self._keep(key, payload)
            return payload
        finally:
            with self._cond:
                self._clicks -= 1
                self._held_until = time.monotonic() + self._hold
                self._cond.notify_all()

    def keep(self, view: str, fold, payload: dict) -> None:
        """Keep ``payload`` as the layout of ``view`` drawn with ``fold`` (one made elsewhere)."""
        with self._cond:
            self._keep((view, fold), payload)

    def cached(self, view: str, fold: Fold) -> bool:
        """Whether that layout is ready."""
        with self._cond:
            return (view, fold) in self._done

    def prefetch(self, view: str, folds: Iterable[Fold]) -> None:
        """Lay out ``folds`` of ``view`` in the background, in order, from now on (a click's
        pause ends: its answer is drawn); what was queued before (for a state the student has
        left) is dropped."""
        with self._cond:
            self._held_until = 0.0
            self._queue = [k for k in dict.fromkeys((view, f) for f in folds)
                           if k not in self._done and k != self._busy]
            if self._pointed in self._queue:       # pointed at before this drawing was done
                self._queue.remove(self._pointed)
                self._queue.insert(0, self._pointed)
            self._cond.notify_all()
            if self._queue and not self._running:
                self._running = True
                threading.Thread(target=self._work, name="mlclab-fold-layouts",
                                 daemon=True).start()

    def prefer(self, view: str, fold: Fold) -> bool:
        """Lay out ``fold`` of ``view`` next (the module under the pointer) if it is queued,
        or first if a :meth:`prefetch` brings it later; whether it is queued now."""
        with self._cond:
            key = self._pointed = (view, fold)
            if key not in self._queue:
                return False
            self._queue.remove(key)
            self._queue.insert(0, key)
            return True

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Block until the background queue is empty (for tests and benchmarks); False on
        timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._queue and self._busy is None, timeout)

    def _wait_turn(self, leaving: bool = False) -> None:
        # (Holding self._cond.) The background's turn: no click being answered, none just
        # answered, unless a click waits for what this thread is laying out. ``leaving``:
        # between layouts, where an empty queue ends the thread at once.
        while self._busy not in self._waited and not (leaving and not self._queue):
            if self._clicks:
                self._cond.wait()
            elif time.monotonic() < self._held_until:
                self._cond.wait(self._held_until - time.monotonic())
            else:
                return

    def _work(self) -> None:
        _THREAD.layouts = self
        while True:
            with self._cond:
                self._wait_turn(leaving=True)
                if not self._queue:          # decided under the lock: prefetch starts another
                    self._running = False
                    self._cond.notify_all()
                    return
                key = self._busy = self._queue.pop(0)
            try:
                with low_priority():
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
