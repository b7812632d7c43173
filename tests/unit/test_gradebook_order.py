"""Submissions apart from gradings: the counting attempt whatever order files arrive in,
the migration of a gradebook the previous lessonkit wrote, and the file that holds it all.

Gradings are made by hand (no file is graded here): each submission is a `Graded` whose
report passes the tasks chosen, so every count below is made by hand from the lesson's
points (make-it-yours 2, nested-model 3, repair 3; adam-by-hand 1 extra).
"""

from __future__ import annotations

import dataclasses
import itertools
import shutil
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lessonkit.course.gradebook import (
    SCHEMA,
    Gradebook,
    Graded,
    attempt_counts,
    attempt_of,
    counting,
)
from lessonkit.errors import UsageError
from lessonkit.grade.judging.report import Scoring
from lessonkit.grade.judging.results import FAILED, PASSED, GradeReport, TaskResult

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "course"
MONDAY, TUESDAY, WEDNESDAY = 1_000_000.0, 1_086_400.0, 1_172_800.0
RIGHT, BLANK = b"# ana: every required task solved\n", b"# ana: nothing yet\n"


def _graded(lesson, right: bool, data: bytes, submitted: float, name: str) -> Graded:
    """Ana's file: the required tasks passed (8 of 8), or none (0 of 8)."""
    tasks = tuple(
        TaskResult(t.id, t.title, PASSED if right and not t.optional else FAILED, "", None,
                   t.optional)
        for t in lesson.tasks
    )  # fmt: skip
    return attempt_of(
        GradeReport(lesson.meta.id, name, tasks, (), 1.0, 7),
        Scoring.of(lesson),
        student="ana",
        lesson_title=lesson.meta.title,
        revision=lesson.meta.revision,
        toolkit="0.7.0",
        file=name,
        data=data,
        submitted=submitted,
        graded_utc="2026-12-04T00:00:00Z",
        fingerprint="fp-1",
    )


def _week(lesson) -> list[Graded]:
    """Monday right, Tuesday blank, Wednesday Monday's bytes again (a revert)."""
    return [
        _graded(lesson, True, RIGHT, MONDAY, "ana.py"),
        _graded(lesson, False, BLANK, TUESDAY, "ana_v2.py"),
        _graded(lesson, True, RIGHT, WEDNESDAY, "ana_v3.py"),
    ]


def _order_and_batches(draw_order, cuts):
    """The three submissions in `draw_order`, cut into consecutive batches at `cuts`."""
    bounds = [0, *sorted(set(cuts)), 3]
    return [draw_order[a:b] for a, b in itertools.pairwise(bounds) if a < b]


@settings(max_examples=40, deadline=None)
@given(
    st.permutations([0, 1, 2]),
    st.lists(st.integers(1, 2), max_size=2),
    st.booleans(),
)
def test_anas_counting_attempt_is_wednesdays_in_every_intake_order(
    lesson, tmp_path_factory, order, cuts, again
):
    """Red team: Tuesday's blank file graded late in a second batch counted 0 of 8, because
    Wednesday's revert was dropped at intake as unchanged."""
    week = _week(lesson)
    path = tmp_path_factory.mktemp("order") / "course.sqlite"
    with Gradebook(path) as book:
        for batch in _order_and_batches(order, cuts):
            book.add_attempts([week[i] for i in batch])
        if again:  # the whole week handed in once more (a merge given twice)
            assert not book.add_attempts(week).ids
        attempts = book.attempts()
        gradings = book.db.execute("SELECT COUNT(*) FROM attempts").fetchone()[0]
    key = ("ana", lesson.meta.id)
    latest = counting(attempts, "latest")[key]
    assert (latest.submitted, latest.file, latest.points, latest.max_points) == (
        WEDNESDAY,
        "ana_v3.py",
        8,
        8,
    )
    assert counting(attempts, "best")[key].points == 8
    assert attempt_counts(attempts)[key] == 3  # every submission counts as one
    assert gradings == 2  # Monday's bytes graded once, however often submitted


def test_a_schema_5_gradebook_written_by_the_previous_lessonkit_is_migrated(lesson, tmp_path):
    """`v5-gradebook.sqlite` was made by `make_v5_gradebook.py` run with lessonkit 1c1ec83:
    alice submitted X (9 points, regraded to 0) and then Y (2); bob submitted Z (8)."""
    path = tmp_path / "course.sqlite"
    shutil.copyfile(FIXTURES / "v5-gradebook.sqlite", path)
    with Gradebook(path) as book:
        assert book.version == SCHEMA == 6
        attempts = book.attempts()
        assert [(a.student, a.file, a.submitted, a.points) for a in attempts] == [
            ("alice", "alice.py", 100.0, 0),  # X, read with its regrade
            ("alice", "alice.py", 200.0, 2),
            ("bob", "bob.py", 150.0, 8),
        ]
        assert {a.fingerprint for a in attempts} == {""}  # graded before fingerprints
        latest = counting(attempts, "latest")
        assert latest[("alice", lesson.meta.id)].points == 2
        assert latest[("bob", lesson.meta.id)].points == 8
        # The same Z handed in again under a fingerprint: one submission, graded anew.
        z = book.content(attempts[2].sha256)
        graded = _graded(lesson, True, z, 150.0, "bob.py")
        again = Graded(dataclasses.replace(graded.attempt, student="bob"), z, graded.report)
        added = book.add_attempts([again])
        assert (added.ids, added.held, len(added.regraded)) == ((), 1, 1)
        assert counting(book.attempts(), "latest")[("bob", lesson.meta.id)].fingerprint == "fp-1"


def test_the_gradebook_file_alone_holds_every_table_after_a_batch(lesson, tmp_path):
    """Red team: after a batch the tables lived only in the `-wal` file, so the one file
    the README names, copied alone, had none."""
    path = tmp_path / "course.sqlite"
    with Gradebook(path) as book:
        book.add_attempts(_week(lesson))
        copy = tmp_path / "copy.sqlite"
        shutil.copyfile(path, copy)  # the gradebook still open, its -wal not copied
    db = sqlite3.connect(copy)
    try:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
        assert {"attempts", "files", "task_grades", "students"} <= tables
        assert db.execute("SELECT COUNT(*) FROM attempts").fetchone()[0] >= 2
    finally:
        db.close()


def test_a_gradebook_that_refuses_writes_is_found_by_the_write_probe(tmp_path):
    """The probe is a real write, rolled back: it leaves nothing behind, and a gradebook
    that refuses writes is one message. (A read-only file is refused in the integration
    journey: there the write lock alone is granted.)"""
    path = tmp_path / "course.sqlite"
    with Gradebook(path) as book:
        book.check_writable()  # a writable one passes, unchanged
        assert book.version == SCHEMA
        names = {n for (n,) in book.db.execute("SELECT name FROM sqlite_master")}
        assert "write_probe" not in names
        book.db.execute("PRAGMA query_only = ON")  # as a read-only file or folder acts
        with pytest.raises(UsageError, match="cannot use the gradebook"):
            book.check_writable()
