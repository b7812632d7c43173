"""Grade many files at once for an instructor: a fresh child per file, no file stops the rest.

A crash, a timeout or a hostile file costs that file's own child and nothing else: no child
ever runs a second file. A file that cannot be read still gets a row: every task is `error`,
with the reason.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from lessonkit.errors import LessonkitError
from lessonkit.grade.grader import DEFAULT_TIMEOUT, Grader
from lessonkit.grade.results import ERROR, GradeReport, TaskResult
from lessonkit.grade.runner import GradingError
from lessonkit.grade.sandbox import Sandbox, find_sandbox
from lessonkit.model import Lesson

SUFFIXES = (".py", ".ipynb")


@dataclass(frozen=True)
class BatchEntry:
    path: Path
    report: GradeReport


def submissions_in(folder: Path) -> list[Path]:
    """Every .py and .ipynb file below `folder`, skipping hidden folders (checkpoints)."""
    found = []
    for path in folder.rglob("*"):
        relative = path.relative_to(folder).parts
        if (
            path.suffix in SUFFIXES
            and path.is_file()
            and not any(p.startswith(".") for p in relative)
        ):
            found.append(path)
    return sorted(found)


def unreadable(lesson: Lesson, path: Path, message: str, seconds: float) -> GradeReport:
    """A report for a file that could not be graded at all."""
    tasks = tuple(TaskResult(t.id, t.title, ERROR, message, None, t.optional) for t in lesson.tasks)
    return GradeReport(lesson.meta.id, str(path), tasks, (), seconds)


def grade_many(
    lesson: Lesson,
    paths: Iterable[Path],
    jobs: int | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    on_report: Callable[[BatchEntry], None] | None = None,
    *,
    sandbox: Sandbox | Literal["auto"] | None = "auto",
    seed: int | None = None,
    cache: Path | None = None,
) -> tuple[BatchEntry, ...]:
    """Grade every path, each in a child of its own; results come back in path order.

    One `Grader` serves every job thread, so the reference runs once and every file is
    graded on the same input sets; the next learner child starts while a file runs.
    """
    paths = list(paths)
    if not paths:
        return ()
    if sandbox == "auto":
        sandbox = find_sandbox()[0]
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(paths)))
    results: list[BatchEntry | None] = [None] * len(paths)
    next_index = iter(range(len(paths)))
    lock = threading.Lock()
    failures: list[GradingError] = []

    with Grader(timeout, sandbox=sandbox, seed=seed, prestart=jobs, cache=cache) as grader:

        def work() -> None:
            while not failures:
                with lock:
                    index = next(next_index, None)
                    if index is not None:
                        grader.prestart = min(jobs, len(paths) - index - 1)
                if index is None:
                    return
                entry = _grade_one(grader, lesson, paths[index])
                if entry is None:
                    return
                results[index] = entry
                if on_report is not None:
                    with lock:
                        on_report(entry)

        def _grade_one(grader: Grader, lesson: Lesson, path: Path) -> BatchEntry | None:
            started = time.perf_counter()
            try:
                report = grader.grade(lesson, path)
            except GradingError as exc:  # the lesson itself cannot be graded: stop everything
                failures.append(exc)
                return None
            except LessonkitError as exc:
                report = unreadable(lesson, path, exc.message, time.perf_counter() - started)
            except Exception as exc:  # a grader bug must not cost the other files their grades
                message = (
                    f"the grader failed on this file ({type(exc).__name__}: {exc}); "
                    "please report it"
                )
                report = unreadable(lesson, path, message, time.perf_counter() - started)
            return BatchEntry(path, replace(report, seed=grader.seed))

        threads = [threading.Thread(target=work, daemon=True) for _ in range(jobs)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    if failures:
        raise failures[0]
    return tuple(r for r in results if r is not None)
