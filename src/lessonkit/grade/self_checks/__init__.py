"""A lesson's self-checks, run by `lessonkit verify`: its declared attempts each get their
verdict, and every task fails the cheat set.

Other packages import from here; the modules below are this package's own. The front loads
them on first use: the proofs drive a `Grader`, while the grader's own diagnosis reads the
declared attempts' scripts (`attempts.attempt_script`), so an eager front would import the
grader from inside itself.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lessonkit.grade.self_checks.attempts import prove_attempts
    from lessonkit.grade.self_checks.cheats import prove_cheats

_HOMES = {"prove_attempts": "attempts", "prove_cheats": "cheats"}


def __getattr__(name: str) -> object:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)


__all__ = ["prove_attempts", "prove_cheats"]
