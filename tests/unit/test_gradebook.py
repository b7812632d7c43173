"""The course gradebook, the roster and the exports, from fabricated grade reports.

No submission is graded here: each attempt is made from a `GradeReport` built by hand, so
every policy, match and export is checked on inputs chosen to tell right from wrong.
"""

from __future__ import annotations

import dataclasses
import sqlite3
import threading
from pathlib import Path

import pytest

from lessonkit.course.exports import canvas_csv, moodle_csv, tasks_csv
from lessonkit.course.gradebook import (
    SCHEMA,
    Graded,
    Gradebook,
    attempt_counts,
    attempt_of,
    counting,
    course_table,
    current,
)
from lessonkit.course.intake import intake
from lessonkit.course.roster import Roster, Student, read_roster, student_without_roster
from lessonkit.errors import UsageError
from lessonkit.grade.journal import JournalEntry
from lessonkit.grade.report import Scoring
from lessonkit.grade.results import FAILED, PASSED, GradeReport, TaskResult

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "course"


def _report(lesson, passing: int, seed: int = 7) -> GradeReport:
    """A report in which the first `passing` tasks passed and the rest failed."""
    tasks = tuple(
        TaskResult(
            t.id, t.title, PASSED if i < passing else FAILED, f"task {t.id}", None, t.optional
        )
        for i, t in enumerate(lesson.tasks)
    )
    return GradeReport(lesson.meta.id, "x.py", tasks, (), 1.0, seed)


def _attempt(
    lesson, student: str, passing: int, data: bytes | None = None, submitted: float = 0.0
) -> Graded:
    """`data` defaults to bytes of their own (the same bytes would be the same attempt)."""
    return attempt_of(
        _report(lesson, passing),
        Scoring.of(lesson),
        student=student,
        lesson_title=lesson.meta.title,
        revision=lesson.meta.revision,
        toolkit="0.1.0",
        file=f"{student}.py",
        data=f"# {student} passes {passing}\n".encode() if data is None else data,
        submitted=submitted,
        graded_utc="2026-12-04T00:00:00Z",
    )


def test_every_attempt_is_kept_and_the_policy_picks_which_counts(lesson, tmp_path):
    with Gradebook(tmp_path / "course.sqlite") as book:
        ids = book.add_attempts(
            [
                _attempt(lesson, "alice", 3, b"first"),
                _attempt(lesson, "alice", 1, b"second"),  # a worse resubmission
                _attempt(lesson, "bob", 2),
                _attempt(lesson, "bob", 2, b"again"),  # a tie: the latest of the best counts
            ]
        ).ids
        attempts = book.attempts()
        assert [a.id for a in attempts] == list(ids) and len(set(ids)) == 4
        assert book.content(attempts[0].sha256) == b"first"
    latest = counting(attempts, "latest")
    best = counting(attempts, "best")
    key = ("alice", lesson.meta.id)
    assert latest[key].id == ids[1] and best[key].id == ids[0]
    assert best[("bob", lesson.meta.id)].id == ids[3]
    assert best[key].points > latest[key].points


def test_points_follow_the_lessons_scoring(lesson, tmp_path):
    attempt = _attempt(lesson, "alice", len(lesson.tasks)).attempt
    scoring = Scoring.of(lesson)
    assert attempt.max_points == scoring.maximum
    assert attempt.points == sum(points for _, points, _ in scoring.points)
    none = _attempt(lesson, "bob", 0).attempt
    assert none.points == 0 and all(t.status == FAILED for t in none.tasks)


def test_a_roster_id_matches_as_the_longest_prefix_at_a_separator():
    roster = Roster((Student("al"), Student("alice"), Student("bo")))
    assert roster.match("alice.py") == "alice"
    assert roster.match("alice_week2.ipynb") == "alice"
    assert roster.match("al-late.py") == "al"
    assert roster.match("al") == "al"
    assert roster.match("alicia.py") is None  # no separator after "al"
    assert roster.match("bob.py") is None  # "bo" is followed by "b"
    assert student_without_roster("week1/bob.ipynb") == "week1/bob"


def test_the_roster_is_read_with_its_optional_columns_and_refused_when_broken(tmp_path):
    roster = read_roster(FIXTURES / "roster.csv")
    alice = roster.by_id()["alice"]
    assert (alice.sis_user_id, alice.section, alice.lms_id) == ("S1001", "A", "101")
    assert roster.by_id()["al"].sis_user_id == ""
    broken = tmp_path / "roster.csv"
    broken.write_text("id,name\nx,X\n", encoding="utf-8")
    with pytest.raises(UsageError, match="lacks the column"):
        read_roster(broken)
    broken.write_text("id,name,email\nx,X,x@e\nx,Y,y@e\n", encoding="utf-8")
    with pytest.raises(UsageError, match="appears twice"):
        read_roster(broken)


def test_a_first_version_gradebook_is_migrated_and_keeps_its_attempts(lesson, tmp_path):
    path = tmp_path / "old.sqlite"
    with Gradebook(path, migrate_to=1) as old:
        assert old.version == 1
        old.db.execute("INSERT INTO files VALUES ('abc', x'00')")
        old.db.execute(
            "INSERT INTO attempts (student, lesson, file, sha256, seed, graded_utc, mtime, "
            "toolkit, revision, points, max_points) VALUES ('alice', 'state-02', 'alice.py', "
            "'abc', 3, '2026-01-01T00:00:00Z', 0, '0.0.9', 'r1', 2, 5)"
        )
        old.db.execute(
            "INSERT INTO task_grades VALUES (1, 0, 'a', 'A', 'failed', 0, 1, 0, 'wrong')"
        )
        with pytest.raises(sqlite3.OperationalError):
            old.students()  # the roster table came with version 2
    with Gradebook(path) as book:
        assert book.version == SCHEMA == 5
        (attempt,) = book.attempts()
        (task,) = attempt.tasks  # graded before checks were recorded: neither check nor path
        assert (task.status, task.message, task.check, task.path) == ("failed", "wrong", None, None)
        assert (attempt.student, attempt.points, attempt.lesson_title) == ("alice", 2, "state-02")
        assert book.students() == {}


def test_a_newer_or_foreign_file_is_refused_with_one_message(tmp_path):
    newer = tmp_path / "newer.sqlite"
    with sqlite3.connect(newer) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA + 1}")
    with pytest.raises(UsageError, match="upgrade lessonkit"):
        Gradebook(newer)
    foreign = tmp_path / "notes.sqlite"
    foreign.write_bytes(b"these are not the tables you are looking for" * 100)
    with pytest.raises(UsageError, match="not a lessonkit gradebook"):
        Gradebook(foreign)


def test_two_writers_at_once_lose_no_attempt(lesson, tmp_path):
    path = tmp_path / "course.sqlite"
    Gradebook(path).db.close()
    errors: list[BaseException] = []

    def write(student: str) -> None:
        try:
            with Gradebook(path) as book:
                for i in range(25):
                    book.add_attempts([_attempt(lesson, student, i % 4, f"{student}{i}".encode())])
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(who,)) for who in ("alice", "bob")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    with Gradebook(path) as book:
        attempts = book.attempts()
    assert len(attempts) == 50 and len({a.id for a in attempts}) == 50
    assert sum(a.student == "alice" for a in attempts) == 25


def _course(lesson, tmp_path):
    other = dataclasses.replace(lesson.meta, id="state-09", title="Another lesson")
    with Gradebook(tmp_path / "course.sqlite") as book:
        book.store_roster(read_roster(FIXTURES / "roster.csv"), "2026-12-04T00:00:00Z")
        made = [
            _attempt(lesson, "alice", 1),
            _attempt(lesson, "alice", 4),
            _attempt(lesson, "al", 2),
            _attempt(lesson, "carol", 0),
        ]
        later = _attempt(lesson, "alice", 2)
        moved = dataclasses.replace(later.attempt, lesson=other.id, lesson_title=other.title)
        made.append(Graded(moved, later.data, later.report))
        book.add_attempts(made)
        return book.attempts(), book.students()


@pytest.mark.parametrize(
    ("name", "write"),
    [
        ("canvas.csv", lambda table, attempts: canvas_csv(table)),
        ("moodle.csv", lambda table, attempts: moodle_csv(table)),
        ("tasks.csv", lambda table, attempts: tasks_csv(attempts, "latest")),
    ],
)
def test_each_export_matches_its_fixture(lesson, tmp_path, name, write):
    attempts, students = _course(lesson, tmp_path)
    table = course_table(attempts, students, "latest")
    assert write(table, attempts) == (FIXTURES / name).read_text(encoding="utf-8")


def test_moodle_needs_an_email_for_every_student(lesson, tmp_path):
    attempts, _ = _course(lesson, tmp_path)
    with pytest.raises(UsageError, match="email"):
        moodle_csv(course_table(attempts, {}, "latest"))


def test_one_students_files_in_a_batch_are_attempts_in_modification_order(lesson):
    records = [
        JournalEntry("run", name, "", mtime, _report(lesson, 1), name.encode())
        for name, mtime in (("alice.ipynb", 2_000.0), ("alice.py", 1_000.0), ("zed.py", 500.0))
    ]
    records.append(JournalEntry("run", "link.py", "", 0.0, _report(lesson, 0), None))
    roster = Roster((Student("alice"),))
    made = intake(lesson, records, roster=roster, toolkit="0.1.0")
    assert [g.attempt.file for g in made.attempts] == ["alice.py", "alice.ipynb"]
    assert made.unmatched == ("zed.py",) and made.unreadable == ("link.py",)
    loose = intake(lesson, records, roster=None, toolkit="0.1.0")
    assert [g.attempt.student for g in loose.attempts] == ["zed", "alice", "alice"]


def test_a_regrade_takes_its_originals_place_in_both_policies(lesson, tmp_path):
    with Gradebook(tmp_path / "course.sqlite") as book:
        first, second = book.add_attempts(
            [_attempt(lesson, "alice", 4, b"inflated"), _attempt(lesson, "alice", 2, b"later")]
        ).ids
        # The rubric is fixed: the first attempt's 9 points were wrong, and it gets 0.
        regraded = _attempt(lesson, "alice", 0, b"inflated")
        again = dataclasses.replace(regraded.attempt, regrade_of=first)
        added = book.add_attempts([Graded(again, regraded.data, regraded.report)])
        assert added.ids and not added.unchanged  # a regrade is kept, though its bytes are
        attempts = book.attempts()
    key = ("alice", lesson.meta.id)
    assert counting(attempts, "latest")[key].id == second  # the regrade is not newer work
    assert counting(attempts, "best")[key].id == second  # 5 beats the regraded 0
    assert attempt_counts(attempts)[key] == 2
    assert [a.id for a in current(attempts)] == [first + 2, second]
