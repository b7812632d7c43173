"""When a task's hint is shown: only after a wrong answer it belongs to."""

from __future__ import annotations

from lessonkit.grade.judging.results import ERROR, FAILED, Status
from lessonkit.lesson.model import Task
from lessonkit.lesson.rules import CheckName


def hint_applies(task: Task, status: Status, check: CheckName | None, mistake: str | None) -> bool:
    """A hint is shown after a wrong answer it belongs to: never for a task not attempted,
    nor for an error the code raised (its own message is the feedback) unless a declared
    mistake explains it; a hint with `:for:` only for the checks and mistakes it names."""
    if status not in (FAILED, ERROR) or not task.hint:
        return False
    if status == ERROR and mistake is None:
        return False
    if task.hint_for:
        return check in task.hint_for or mistake in task.hint_for
    return True
