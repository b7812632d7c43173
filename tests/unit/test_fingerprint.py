"""The grading fingerprint: what decides a verdict changes it, prose and positions do not;
and a batch into a gradebook graded under another fingerprint grades those files again
(or, asked to, keeps the old gradings and says so)."""

from __future__ import annotations

import hashlib
import io

import pytest
from rich.console import Console

from lessonkit.commands._course import CourseIntake
from lessonkit.course.gradebook import Gradebook, attempt_of
from lessonkit.grade.batches.fingerprint import grading_fingerprint, short
from lessonkit.grade.judging.report import Scoring
from lessonkit.grade.judging.results import FAILED, PASSED, GradeReport, TaskResult

from conftest import lesson_changed

PROBE = "  - name: moved layer gradients\n"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("  repair: 3\n", "  repair: 4\n"),  # points
        (PROBE, "  - name: layer gradients moved\n"),  # a probe (its name is its identity)
        ("input_sets: 2\n", "input_sets: 3\n"),  # the input sets drawn
        ("norm_squared = sum(jnp.sum(g ** 2)", "norm_squared = sum(jnp.sum(g * g)"),  # solution
        (":message: `assert same_structure` can never fail", ":message: can never fail"),
    ],
)
def test_what_decides_a_verdict_changes_the_fingerprint(lesson, tmp_path, old, new):
    """Red team: a probe restored without a `revision:` bump was served from old gradings."""
    changed = lesson_changed(lesson, tmp_path, old, new)
    assert changed.meta.revision == lesson.meta.revision
    assert grading_fingerprint(changed) != grading_fingerprint(lesson)


def test_prose_and_line_numbers_leave_the_fingerprint_alone(lesson, tmp_path):
    old = "We keep both parameters in one small nested structure,"
    new = "We keep both parameters in one small nested structure (a tree),\n\n"
    changed = lesson_changed(lesson, tmp_path, old, new)  # every later line moves down
    assert changed.grading.line != lesson.grading.line
    assert grading_fingerprint(changed) == grading_fingerprint(lesson)


def _graded(lesson, data: bytes, fingerprint: str, passing: bool):
    tasks = tuple(
        TaskResult(t.id, t.title, PASSED if passing else FAILED, "", None, t.optional)
        for t in lesson.tasks
    )
    return attempt_of(
        GradeReport(lesson.meta.id, "ana.py", tasks, (), 1.0, 7),
        Scoring.of(lesson),
        student="ana",
        lesson_title=lesson.meta.title,
        revision=lesson.meta.revision,
        toolkit="0.7.0",
        file="ana.py",
        data=data,
        submitted=100.0,
        graded_utc="2026-12-04T00:00:00Z",
        fingerprint=fingerprint,
    )


@pytest.mark.parametrize("keep_old", [False, True])
def test_a_batch_over_gradings_of_another_fingerprint_says_so_and_grades_again(
    lesson, tmp_path, keep_old
):
    """The lesson changed without a revision bump: the next batch kept '1 unchanged' and
    counted the old grading (9 of 8)."""
    folder = tmp_path / "week"
    folder.mkdir()
    data = b"# ana's file\n"
    (folder / "ana.py").write_bytes(data)
    book_path = tmp_path / "course.sqlite"
    with Gradebook(book_path) as book:
        book.add_attempts([_graded(lesson, data, "old-fingerprint", True)])
    now = grading_fingerprint(lesson)
    course = CourseIntake.open(str(book_path), None, folder)
    reused = course.reusable(lesson, folder, [folder / "ana.py"], now, keep_old=keep_old)
    assert reused.older == ("ana.py",) and reused.fingerprints == ("old-fingerprint",)
    assert len(reused.entries) == (1 if keep_old else 0)  # graded again unless kept
    said = io.StringIO()
    course.say_older(reused, now, keep_old, Console(file=said, width=400))
    assert "1 file(s) were graded into" in said.getvalue() and short(now) in said.getvalue()
    assert ("keep those gradings" if keep_old else "graded again") in said.getvalue()
    with Gradebook(book_path) as book:  # the same submission, graded now (0 of 8)
        added = book.add_attempts([_graded(lesson, data, now, False)], keep_old=keep_old)
        assert (len(added.regraded), len(added.kept_old)) == ((0, 1) if keep_old else (1, 0))
        (attempt,) = book.attempts()
    assert attempt.fingerprint == ("old-fingerprint" if keep_old else now)
    assert attempt.sha256 == hashlib.sha256(data).hexdigest()
