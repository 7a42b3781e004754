"""The background layouts give way to a click (issue 20): while the kernel answers a click, the
thread that lays out the next clicks' fold states stops at its next checkpoint, and resumes when
the front end asks for the next states (or after a hold); the state under the pointer is laid
out next; the background's ``dot`` runs at the lowest CPU priority. Fake layouts with events
say what runs when; no timing is asserted."""
import os
import threading

import pytest

from mlclab.notebook.fold_layouts import Fold, FoldLayouts, checkpoint
from mlclab.viz import dot

A, B, C, D = (Fold(False, frozenset({name})) for name in "abcd")


def name(fold):
    return next(iter(fold.open_modules))


def test_a_click_pauses_the_background_at_its_checkpoint_until_the_next_prefetch():
    log, began, reached, go = [], threading.Event(), threading.Event(), threading.Event()

    def layout(view, fold):
        if threading.current_thread().name == "mlclab-fold-layouts":
            if fold == A:
                began.set()
                go.wait(10)
            log.append(f"{name(fold)}: before checkpoint")
            reached.set()
            checkpoint()
            log.append(f"{name(fold)}: after checkpoint")
        else:                                 # the click, in the kernel's thread
            go.set()
            assert reached.wait(10)
            # Time for a background that does not give way to pass its checkpoint.
            threading.Event().wait(0.2)
            log.append(f"{name(fold)}: the click")
        return {"open": name(fold)}

    layouts = FoldLayouts(layout, hold=600)    # only a prefetch resumes it in this test
    layouts.prefetch("v", [A, B])
    assert began.wait(10)                      # the click comes while A is being laid out
    assert layouts.get("v", C) == {"open": "c"}
    # The answer has left; the front end draws it and has not asked for more yet: still paused.
    assert not layouts.wait_idle(0.2)
    assert log == ["a: before checkpoint", "c: the click"]
    layouts.prefetch("v", [B, D])              # the answer is drawn: the next states
    assert layouts.wait_idle(10)
    assert log == ["a: before checkpoint", "c: the click", "a: after checkpoint",
                   "b: before checkpoint", "b: after checkpoint",
                   "d: before checkpoint", "d: after checkpoint"]
    assert all(layouts.cached("v", f) for f in (A, B, C, D))


def test_a_click_waiting_for_the_layout_being_made_lets_the_thread_finish_it():
    started, go, calls = threading.Event(), threading.Event(), []

    def layout(view, fold):
        calls.append(fold)
        started.set()
        go.wait(10)
        checkpoint()                           # would wait for the click forever if paused
        return {"open": name(fold)}

    layouts = FoldLayouts(layout, hold=600)
    layouts.prefetch("v", [A])
    assert started.wait(10)
    got = []
    click = threading.Thread(target=lambda: got.append(layouts.get("v", A)))
    click.start()
    go.set()
    click.join(10)
    assert got == [{"open": "a"}] and calls == [A]


def test_the_state_under_the_pointer_is_laid_out_next_and_a_hold_ends_by_itself():
    first, go, order = threading.Event(), threading.Event(), []

    def layout(view, fold):
        order.append(name(fold))
        if fold == A:
            first.set()
            go.wait(10)
        return {}

    layouts = FoldLayouts(layout, hold=0.05)
    layouts.prefetch("v", [A, B, C, D])
    assert first.wait(10)
    assert layouts.prefer("v", D)
    assert not layouts.prefer("v", Fold(False, frozenset({"x"})))   # not queued: nothing
    assert not layouts.prefer("w", B)
    go.set()
    assert layouts.wait_idle(10)
    assert order == ["a", "d", "b", "c"]
    # The pointer reached a module before the front end said its drawing was done: the
    # prefetch that follows starts with it.
    layouts.prefer("v", Fold(False, frozenset({"h"})))
    layouts.prefetch("v", [Fold(False, frozenset({n})) for n in "gh"])
    assert layouts.wait_idle(10) and order[4:] == ["h", "g"]
    # A click with no drawing after it (a fold made from Python) pauses for `hold` only.
    layouts.prefetch("v", [Fold(False, frozenset({"e"}))])
    layouts.get("v", Fold(False, frozenset({"f"})))
    assert layouts.wait_idle(10) and layouts.cached("v", Fold(False, frozenset({"e"})))


def test_the_thread_ends_when_its_queue_is_empty():
    layouts = FoldLayouts(lambda view, fold: {})
    layouts.prefetch("v", [A, B])
    assert layouts.wait_idle(10)
    for t in threading.enumerate():
        if t.name == "mlclab-fold-layouts":
            t.join(10)
    assert not any(t.name == "mlclab-fold-layouts" and t.is_alive() for t in threading.enumerate())
    layouts.prefetch("v", [C])                 # a later prefetch starts one again
    assert layouts.wait_idle(10) and layouts.cached("v", C)


@pytest.mark.needs(dot.dot_available(), "Graphviz's dot")
@pytest.mark.skipif(not hasattr(os, "setpriority"),
                    reason="os.setpriority is POSIX-only: Windows has no process priorities")
def test_dot_runs_at_the_lowest_priority_only_inside_low_priority(monkeypatch):
    asked = []
    real = os.setpriority
    monkeypatch.setattr(os, "setpriority", lambda *a: (asked.append(a), real(*a))[1])
    assert b"<svg" in dot.run_dot("digraph { a -> b }")
    assert asked == []
    with dot.low_priority():
        assert b"<svg" in dot.run_dot("digraph { a -> b }")
    assert len(asked) == 1 and asked[0][0] == os.PRIO_PROCESS and asked[0][2] == 19
    assert asked[0][1] != os.getpid()          # the dot process, not the kernel
    assert b"<svg" in dot.run_dot("digraph { a -> b }") and len(asked) == 1
