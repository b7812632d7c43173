"""A lesson's self-checks, run by `lessonkit verify`: its declared attempts each get their
verdict, and every task fails the cheat set.

Other packages import from here; the modules below are this package's own.
"""

from lessonkit.grade.self_checks.attempts import prove_attempts
from lessonkit.grade.self_checks.cheats import prove_cheats

__all__ = ["prove_attempts", "prove_cheats"]
