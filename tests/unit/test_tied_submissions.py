"""Two submissions of one student at one time are a question, never settled by their names
(issue 50, item 4).

One archive, one clone or one upload of two files gives a student's files the same time:
the one whose name sorted last counted, so `ana_old.py` (blank) outranked `ana.py` (right),
silently. They are listed as tied, as an ambiguous name is, and kept out of the gradebook
until `--submitted-at-from` gives them times.
"""

from __future__ import annotations

import itertools

import pytest
from rich.console import Console

from lessonkit.commands._course import say_gradebook_kept
from lessonkit.course.batch_gradebook import CourseIntake
from lessonkit.course.gradebook import Gradebook, counting
from lessonkit.course.intake import intake
from lessonkit.course.roster import Roster, Student
from lessonkit.grade.batches.journal import JournalEntry
from lessonkit.grade.judging.results import FAILED, PASSED, GradeReport, TaskResult

ROSTER = Roster((Student("ana"), Student("bob")))
MONDAY = 1_000_000.0
RIGHT, BLANK = b"# every task solved\n", b"# nothing yet\n"


def _record(lesson, name: str, data: bytes, at: float) -> JournalEntry[GradeReport]:
    status = PASSED if data == RIGHT else FAILED
    tasks = tuple(TaskResult(t.id, t.title, status, "", None, t.optional) for t in lesson.tasks)
    return JournalEntry(
        "run", name, "", at, GradeReport(lesson.meta.id, name, tasks, (), 1.0, 7), data
    )


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_files_of_one_student_at_one_time_are_tied_whatever_their_names(lesson, order):
    given = [
        _record(lesson, "ana.py", RIGHT, MONDAY),
        _record(lesson, "ana_old.py", BLANK, MONDAY),
        _record(lesson, "bob.py", BLANK, MONDAY),  # another student at that time: no question
    ]
    made = intake(
        lesson, [given[i] for i in order], roster=ROSTER, toolkit="0.1.0", fingerprint="fp-1"
    )
    assert [g.attempt.file for g in made.attempts] == ["bob.py"]
    assert [(t.student, t.submitted, t.files) for t in made.tied] == [
        ("ana", MONDAY, ("ana.py", "ana_old.py"))
    ]


def test_the_same_bytes_twice_at_one_time_are_no_question(lesson):
    made = intake(
        lesson,
        [_record(lesson, "ana.py", RIGHT, MONDAY), _record(lesson, "ana_v2.py", RIGHT, MONDAY)],
        roster=ROSTER,
        toolkit="0.1.0",
        fingerprint="fp-1",
    )
    assert made.tied == () and len(made.attempts) == 2


def test_a_file_tied_with_one_the_gradebook_holds_is_listed_and_not_kept(lesson, tmp_path):
    path = tmp_path / "course.sqlite"
    CourseIntake(Gradebook(path), ROSTER, None).keep(
        lesson, [_record(lesson, "ana.py", RIGHT, MONDAY)], "fp-1"
    )
    course = CourseIntake(Gradebook(path), ROSTER, None)
    kept = course.keep(lesson, [_record(lesson, "ana_old.py", BLANK, MONDAY)], "fp-1")
    out = Console(record=True, width=400, color_system=None)
    say_gradebook_kept(course, kept, out)
    with Gradebook(path) as book:
        assert [a.file for a in book.attempts()] == ["ana.py"]
        assert (
            counting(book.attempts(), "latest")[("ana", lesson.meta.id)].points == 9
        )  # 8, and 1 extra
    assert out.export_text().splitlines()[1:] == [
        "ana_old.py: tied, `ana`'s submissions at the same time (1970-01-12T13:46:40Z, as "
        "ana.py kept before) with other bytes, so which is newer is a question; not in the "
        "gradebook (give each file its submission time with --submitted-at-from FILE, from "
        "the submission system or a clone's commit times)"
    ]


def test_times_given_for_tied_files_decide(lesson, tmp_path):
    path = tmp_path / "course.sqlite"
    times = {"ana.py": MONDAY, "ana_old.py": MONDAY - 3600.0}  # the system's: an hour apart
    course = CourseIntake(Gradebook(path), ROSTER, times)
    course.keep(
        lesson,
        [_record(lesson, "ana.py", RIGHT, MONDAY), _record(lesson, "ana_old.py", BLANK, MONDAY)],
        "fp-1",
    )
    with Gradebook(path) as book:
        chosen = counting(book.attempts(), "latest")[("ana", lesson.meta.id)]
    assert (chosen.file, chosen.points) == ("ana.py", 9)


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_a_file_the_submission_system_never_received_is_not_a_submission(lesson, tmp_path, order):
    """Issue 61, item 4: with `--submitted-at-from` naming ana.py (right, five days ago), a
    stray ana_old.py (blank, touched just now) in the folder is no attempt of ana's: it is
    listed as not in the system's list and never counted, whatever order the files come."""
    path = tmp_path / "course.sqlite"
    five_days_ago = MONDAY - 5 * 86400.0
    course = CourseIntake(
        Gradebook(path), ROSTER, {"ana.py": five_days_ago, "bob.py": five_days_ago}
    )
    given = [
        _record(lesson, "ana.py", RIGHT, MONDAY),
        _record(lesson, "ana_old.py", BLANK, MONDAY + 60.0),  # its modification time: newer
        _record(lesson, "bob.py", BLANK, MONDAY),
    ]
    kept = course.keep(lesson, [given[i] for i in order], "fp-1")
    out = Console(record=True, width=400, color_system=None)
    say_gradebook_kept(course, kept, out)
    with Gradebook(path) as book:
        assert sorted(a.file for a in book.attempts()) == ["ana.py", "bob.py"]
        chosen = counting(book.attempts(), "latest")[("ana", lesson.meta.id)]
    assert (chosen.file, chosen.points, chosen.submitted) == ("ana.py", 9, five_days_ago)
    assert kept.unlisted == ("ana_old.py",) and kept.new == 2
    assert out.export_text().splitlines()[1:] == [
        "ana_old.py: not in the submission system's list (--submitted-at-from), so not a "
        "submission: never counted, and not in the gradebook"
    ]
