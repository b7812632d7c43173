"""Attempts declared in a lesson's `{grading}` block, and the proof that each gets its verdict.

An author declares wrong attempts with the message each must get, and right variants that
must pass; `lessonkit verify` grades them all, with the lesson's own grader, so a change to
the lesson or the grader that lets a wrong attempt through is caught before a learner is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Protocol

from lessonkit.grade.batches.pool import grade_each
from lessonkit.grade.grader import GradedRun, Grader
from lessonkit.grade.judging.mistake_text import check_message, same_mistake
from lessonkit.grade.judging.results import TaskResult
from lessonkit.grade.preparation.attempt_files import Packed, attempt_script, pack_by_task
from lessonkit.grade.submission.sources import read_submission
from lessonkit.lesson.model import DeclaredAttempt, Lesson
from lessonkit.settings import GradingSettings


def _problem(lesson: Lesson, attempt: DeclaredAttempt, result: TaskResult) -> str | None:
    """Why the attempt's verdict is not the declared one; for a declared mistake, also when
    the grader does not name it (or the same mistake written another way)."""
    grading = lesson.grading
    declared = grading.attempts if grading is not None else ()
    status, message = result.status, check_message(result, declared)
    matches = re.search(attempt.message, message, re.S) if attempt.message else True
    named = next((a for a in declared if (a.task, a.name) == (attempt.task, result.mistake)), None)
    if status == attempt.expect and matches:
        if not attempt.is_mistake or (named is not None and same_mistake(named, attempt)):
            return None
        return (
            f"{lesson.path}:{attempt.line}: the declared mistake {attempt.name!r} at task "
            f"{attempt.task!r} must be named to the learner who makes it, but the grader "
            + (f"named {result.mistake!r}" if result.mistake else "named no mistake")
            + ": give the task a probe under which the two answers differ, or explain "
            "two ways of writing one mistake in the same words"
        )
    wanted = attempt.expect + (
        f" with a message matching {attempt.message!r}" if attempt.message else ""
    )
    return (
        f"{lesson.path}:{attempt.line}: the declared attempt {attempt.name!r} at task "
        f"{attempt.task!r} must be {wanted}, but it got {status}: {message[:300]}"
    )


def grade_rounds(
    grader: Grader, lesson: Lesson, rounds: list[dict[str, str]], kind: str, jobs: int
) -> list[GradedRun]:
    """Grade one practice file per round, each task cell replaced by that round's code,
    `jobs` at a time, in order.

    One grader for all of them: the reference runs once and every file is graded on the
    same input sets. Each file is graded from its bytes (`grade.batches.pool.grade_each`, the pool
    every batch grades through), never written to a folder to be read back.
    """
    submissions = [
        read_submission(Path(f"{kind}-{number:02d}.py"), attempt_script(lesson, bodies).encode())
        for number, bodies in enumerate(rounds)
    ]
    jobs = max(1, min(jobs, len(submissions)))

    graded = grade_each(
        submissions,
        lambda submission: grader.run_submission(lesson, submission),
        jobs=jobs,
        on_take=partial(grader.pool.ahead_for, jobs),
    )
    return list(graded)


def grade_packed(
    grader: Grader, lesson: Lesson, items: tuple[Packed, ...], kind: str, jobs: int
) -> list[tuple[Packed, GradedRun, TaskResult]]:
    """Attempts (or cheats) packed by task (`pack_by_task`) and graded, one file per round:
    each with the run of its file and its own task's result there."""
    rounds = pack_by_task(items)
    bodies = [{task: item.code for task, item in chosen.items()} for chosen in rounds]
    graded = grade_rounds(grader, lesson, bodies, kind, jobs)
    found = []
    for chosen, run in zip(rounds, graded, strict=True):
        results = {t.id: t for t in run.report.tasks}
        found += [(item, run, results[item.task]) for item in chosen.values()]
    return found


class Proof(Protocol):
    """One of `verify`'s proofs: its problems, each a sentence at its lesson.md line."""

    def __call__(
        self,
        lesson: Lesson,
        jobs: int = 2,
        *,
        grader: Grader | None = None,
        settings: GradingSettings | None = None,
    ) -> list[str]: ...


def proof(
    needed: Callable[[Lesson], bool],
) -> Callable[[Callable[[Lesson, int, Grader], list[str]]], Proof]:
    """A proof `prove(lesson, jobs, grader)` made callable with the grader of a lesson's
    whole proof (one reference run for all), or alone: then with a grader of its own, made
    from `settings` (`settings.proving_settings`), started only where `needed` says there is
    something to prove, and closed after."""

    def wrap(prove: Callable[[Lesson, int, Grader], list[str]]) -> Proof:
        def proving(
            lesson: Lesson,
            jobs: int = 2,
            *,
            grader: Grader | None = None,
            settings: GradingSettings | None = None,
        ) -> list[str]:
            if not needed(lesson):
                return []
            if grader is not None:
                return prove(lesson, jobs, grader)
            if settings is None:
                raise TypeError("a proof needs the grader of the whole proof, or settings")
            with Grader(settings) as own:
                return prove(lesson, jobs, own)

        proving.__name__ = proving.__qualname__ = prove.__name__
        proving.__doc__ = prove.__doc__
        return proving

    return wrap


@proof(lambda lesson: lesson.grading is not None and bool(lesson.grading.attempts))
def prove_attempts(lesson: Lesson, jobs: int, grader: Grader) -> list[str]:
    """Grade every declared attempt; one problem, at its lesson.md line, per wrong verdict."""
    grading = lesson.grading
    assert grading is not None, "proved only where the lesson declares attempts"
    problems = []
    for attempt, _, result in grade_packed(grader, lesson, grading.attempts, "attempts", jobs):
        problem = _problem(lesson, attempt, result)
        if problem:
            problems.append(problem)
    return problems
