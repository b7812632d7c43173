"""The words a learner reads when their answer makes a declared mistake: its title, what it
misunderstands and what to do instead, then what the check found (never any code)."""

from __future__ import annotations

from collections.abc import Iterable

from lessonkit.grade.judging.hints import hint_applies
from lessonkit.grade.judging.results import TaskResult
from lessonkit.lesson.model import DeclaredAttempt, Task

_FOUND = " (What the check found: "
_FOUND_END = ")"


def _named(mistake: DeclaredAttempt) -> str:
    return (
        f'This is a known mistake, "{mistake.name}". {mistake.why} What to do instead: '
        f"{mistake.instead}{_FOUND}"
    )


def check_message(result: TaskResult, mistakes: Iterable[DeclaredAttempt]) -> str:
    """What the check itself found, without the diagnosis `diagnosed` put before it."""
    named = next((m for m in mistakes if (m.task, m.name) == (result.id, result.mistake)), None)
    if named is None:
        return result.message
    return result.message.removeprefix(_named(named)).removesuffix(_FOUND_END)


def same_mistake(a: DeclaredAttempt, b: DeclaredAttempt) -> bool:
    """Two declared mistakes explained alike: one mistake written two ways, which no value
    can tell apart, so either name is right."""
    return a.task == b.task and (a.why, a.instead) == (b.why, b.instead)


def diagnosed(result: TaskResult, task: Task, mistake: DeclaredAttempt | None) -> TaskResult:
    """The task's verdict with the mistake it makes named first, and the hint that fits.

    The check's own guess at a cause (`TaskResult.suspicion`) goes: the mistake's words
    replace it, and a second explanation would contradict the first."""
    if mistake is None:
        return result
    found = result.message
    if result.suspicion:
        found = found.replace(f" {result.suspicion}", "", 1)
    message = f"{_named(mistake)}{found}{_FOUND_END}"
    hint = (
        " ".join(task.hint.split())
        if hint_applies(task, result.status, result.check, mistake.name)
        else None
    )
    return TaskResult(
        result.id,
        result.title,
        result.status,
        message,
        hint,
        result.optional,
        result.check,
        result.path,
        mistake.name,
    )
