"""A file name two roster ids could make is a question, never a guess (issue 42, item 5).

With `bob` and `bob-2` on the roster, `bob-2.py` is bob's second version or bob-2's file:
it was bob-2's (the longer id won) without a word. It is listed as ambiguous, naming both
students, and kept out of the gradebook as a file no id matches is.
"""

from __future__ import annotations

from rich.console import Console

from lessonkit.commands._course import say_gradebook_kept
from lessonkit.course.batch_gradebook import CourseIntake
from lessonkit.course.gradebook import Gradebook
from lessonkit.course.intake import intake, student_of
from lessonkit.course.roster import Roster, Student
from lessonkit.grade.batches.journal import JournalEntry
from lessonkit.grade.judging.results import PASSED, GradeReport, TaskResult

ROSTER = Roster((Student("bob-2"), Student("bob"), Student("ann")))


def test_a_name_two_ids_make_matches_neither_and_names_both():
    assert ROSTER.match("bob.py") == "bob"
    assert ROSTER.match("bob-3.py") == "bob"  # only bob, with the tag 3
    assert ROSTER.match("bob-2.py") is None
    assert ROSTER.candidates("bob-2.py") == ("bob", "bob-2")
    assert ROSTER.candidates("bob-2-late.ipynb") == ("bob", "bob-2")
    assert ROSTER.match("bob_2.py") == "bob"  # bob-2 is not followed by anything here
    assert student_of("bob-2/state-02.py", ROSTER) is None  # a folder's name alike
    assert student_of("bob-3/state-02.py", ROSTER) == "bob"


def _records(lesson, names: tuple[str, ...]) -> list[JournalEntry[GradeReport]]:
    tasks = tuple(TaskResult(t.id, t.title, PASSED, "", None, t.optional) for t in lesson.tasks)
    report = GradeReport(lesson.meta.id, "x.py", tasks, (), 1.0, 7)
    return [
        JournalEntry("run", name, "", float(at), report, name.encode())
        for at, name in enumerate(names)
    ]


def test_an_ambiguous_file_is_kept_out_like_an_unmatched_one(lesson):
    made = intake(
        lesson,
        _records(lesson, ("bob.py", "bob-2.py", "ann-v2.py", "zed.py")),
        roster=ROSTER,
        toolkit="0.1.0",
        fingerprint="fp-1",
    )
    assert [g.attempt.student for g in made.attempts] == ["bob", "ann"]
    assert made.unmatched == ("bob-2.py", "zed.py")


def test_the_run_lists_the_ambiguous_file_with_both_students(lesson, tmp_path):
    path = tmp_path / "course.sqlite"
    course = CourseIntake(Gradebook(path), ROSTER, None)  # keep() closes it when done
    kept = course.keep(lesson, _records(lesson, ("bob-2.py", "ann.py", "bo-2.py")), "fp-1")
    out = Console(record=True, width=400, color_system=None)
    say_gradebook_kept(course, kept, out)
    with Gradebook(path) as book:
        assert [a.student for a in book.attempts()] == ["ann"]
    lines = out.export_text().splitlines()
    assert lines[1:] == [
        "bob-2.py: ambiguous, `bob-2.py` could be `bob`'s or `bob-2`'s (an id, or another id "
        "with a version tag); it is not in the gradebook (name the file so that one id alone "
        "makes it, or give one of those students an id that is not the other's with a "
        "version tag, in the roster)",
        "bo-2.py: no student in the roster matches `bo-2.py`; it is not in the gradebook (add "
        "its student to the roster, or rename the file to the student's id)",
    ]
