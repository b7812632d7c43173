"""Re-grade a file on every save, with a warm child so feedback does not wait for JAX.

Polls the file's modification time and size every 0.1 s (no dependency, works on every
file system) and grades once they have stopped changing, so a save that truncates the file
before writing it is graded once, complete. After each verdict the next learner child is
forked and warmed (`Grader.warm_up`: the lesson's practice file as given, on the lesson's
inputs) while the learner edits, so a save is graded by a child whose JAX programs are
mostly compiled already, and which has run no learner code.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from lessonkit.defaults import WATCH_POLL_S, WATCH_SETTLE_S
from lessonkit.errors import LessonkitError
from lessonkit.grade.grader import Grader
from lessonkit.grade.judging.results import GradeReport
from lessonkit.lesson.model import Lesson


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size


def watch(
    grader: Grader,
    lesson: Lesson,
    path: Path,
    show: Callable[[GradeReport], None],
    show_problem: Callable[[str], None],
    poll: float = WATCH_POLL_S,
    should_stop: Callable[[], bool] = lambda: False,
) -> None:
    """Grade now and after every change, until `should_stop()` or Ctrl-C."""
    grader.warm_up(lesson)  # prepares the lesson, if its grader has not
    seen: tuple[int, int] | str | None = "never"
    while not should_stop():
        stamp = _stamp(path)
        if stamp != seen:
            time.sleep(WATCH_SETTLE_S)
            if _stamp(path) != stamp:
                continue  # still being written
            seen = stamp
            if stamp is None:
                show_problem(f"{path} does not exist yet; waiting for it to be saved")
            else:
                try:
                    show(grader.grade(lesson, path))
                except LessonkitError as exc:
                    show_problem(str(exc))
                grader.pool.start_spare()  # after the verdict: it never slows a grading run
            continue
        time.sleep(poll)
