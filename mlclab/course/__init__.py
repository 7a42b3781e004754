"""The course layer: exercises that check themselves, and graded assignments built from them.

``mlclab.exercise(key)`` returns the handle a lesson's check cell uses (``.check()``, ``.hint()``).
Each exercise's reference is kept in :mod:`mlclab.course.catalog`, never in a notebook: a check
says where an answer goes wrong (the first wrong value, the shape or dtype that differs, the
concept) without showing the reference. This layer sits above the notebook layer: it uses the api
(validation's comparison and random inputs) and registers the ``%%solution`` cell magic.
"""
from __future__ import annotations

from .catalog import EXERCISES
from .handle import ExerciseHandle
from .result import MIME, Result
from .spec import Exercise, fingerprint

_handles: dict[str, ExerciseHandle] = {}


def exercise(key: str) -> ExerciseHandle:
    """The exercise ``key`` ("01-mse"): ``.check()`` the answer, ``.hint()`` for the next hint."""
    if not isinstance(key, str) or key not in EXERCISES:
        raise ValueError(f"mlclab.exercise(): key must be one of "
                         f"{', '.join(sorted(EXERCISES))}; got {key!r}")
    if key not in _handles:
        _handles[key] = ExerciseHandle(EXERCISES[key])
    return _handles[key]


__all__ = ["exercise", "ExerciseHandle", "Exercise", "Result", "MIME", "EXERCISES", "fingerprint"]
