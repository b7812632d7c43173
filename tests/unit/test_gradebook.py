"""The course gradebook, the roster and the exports, from fabricated grade reports.

No submission is graded here: each attempt is made from a `GradeReport` built by hand, so
every policy, match and export is checked on inputs chosen to tell right from wrong.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lessonkit.course import autograder
from lessonkit.course.exports import canvas_csv, moodle_csv, tasks_csv
from lessonkit.course.gradebook import (
    SCHEMA,
    Gradebook,
    Graded,
    attempt_counts,
    attempt_numbers,
    attempt_of,
    counting,
    course_table,
    current,
)
from lessonkit.course.intake import intake, read_submission_times, student_of
from lessonkit.course.roster import Roster, Student, read_roster, student_without_roster
from lessonkit.errors import UsageError
from lessonkit.grade.batches.journal import JournalEntry
from lessonkit.grade.judging.report import Scoring
from lessonkit.grade.judging.results import ERROR, FAILED, PASSED, GradeReport, TaskResult
from lessonkit.lesson.text import markdown_text

from conftest import invoke

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
    lesson,
    student: str,
    passing: int,
    data: bytes | None = None,
    submitted: float = 0.0,
    fingerprint: str = "fp-1",
) -> Graded:
    """`data` defaults to bytes of their own (the same bytes would be graded once)."""
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
        fingerprint=fingerprint,
    )


def test_every_attempt_is_kept_and_the_policy_picks_which_counts(lesson, tmp_path):
    with Gradebook(tmp_path / "course.sqlite") as book:
        ids = book.add_attempts(
            [
                _attempt(lesson, "alice", 3, b"first", submitted=1.0),
                _attempt(lesson, "alice", 1, b"second", submitted=2.0),  # a worse resubmission
                _attempt(lesson, "bob", 2, submitted=1.0),
                _attempt(lesson, "bob", 2, b"again", submitted=2.0),  # a tie: the newer counts
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


def test_a_roster_id_matches_itself_or_itself_and_version_tags():
    roster = Roster((Student("al"), Student("alice"), Student("bo"), Student("ana")))
    assert roster.match("alice.py") == "alice"
    assert roster.match("alice_week2.ipynb") == "alice"
    assert roster.match("al-late.py") == "al"
    assert roster.match("al") == "al"
    assert roster.match("alice_v2.py") == roster.match("alice.resubmit.ipynb") == "alice"
    assert roster.match("alice-2-final.py") == "alice"
    assert roster.match("alicia.py") is None  # no separator after "al"
    assert roster.match("bob.py") is None  # "bo" is followed by "b"
    # Red team D3: ana-maria's blank file became ana's counting attempt, 0/8.
    assert roster.match("ana-maria.py") is None and roster.near("ana-maria.py") == "ana"
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
        assert book.version == SCHEMA == 7
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
            _attempt(lesson, "alice", 1, submitted=1.0),
            _attempt(lesson, "alice", 4, submitted=2.0),
            _attempt(lesson, "al", 2, submitted=3.0),
            _attempt(lesson, "carol", 0, submitted=4.0),
        ]
        later = _attempt(lesson, "alice", 2, submitted=5.0)
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
    made = intake(lesson, records, roster=roster, toolkit="0.1.0", fingerprint="fp-1")
    assert [g.attempt.file for g in made.attempts] == ["alice.py", "alice.ipynb"]
    assert made.unmatched == ("zed.py",) and made.unreadable == ("link.py",)
    loose = intake(lesson, records, roster=None, toolkit="0.1.0", fingerprint="fp-1")
    assert [g.attempt.student for g in loose.attempts] == ["zed", "alice", "alice"]


def test_a_regrade_takes_its_originals_place_in_both_policies(lesson, tmp_path):
    with Gradebook(tmp_path / "course.sqlite") as book:
        first, second = book.add_attempts(
            [
                _attempt(lesson, "alice", 4, b"inflated", submitted=1.0),
                _attempt(lesson, "alice", 2, b"later", submitted=2.0),
            ]
        ).ids
        # The rubric is fixed: the first attempt's 9 points were wrong, and it gets 0.
        regraded = _attempt(lesson, "alice", 0, b"inflated", submitted=1.0)
        again = dataclasses.replace(regraded.attempt, regrade_of=first)
        added = book.add_attempts([Graded(again, regraded.data, regraded.report)])
        assert not added.ids and not added.unchanged  # a grading kept, no new submission
        attempts = book.attempts()
    key = ("alice", lesson.meta.id)
    assert counting(attempts, "latest")[key].id == second  # the regrade is not newer work
    assert counting(attempts, "best")[key].id == second  # 5 beats the regraded 0
    assert attempt_counts(attempts)[key] == 2
    assert [(a.id, a.points) for a in current(attempts)] == [(first, 0), (second, 5)]


def test_the_same_bytes_of_a_student_are_one_attempt_however_often_handed_in(lesson, tmp_path):
    with Gradebook(tmp_path / "course.sqlite") as book:
        first = book.add_attempts([_attempt(lesson, "frank", 2, b"v1"), _attempt(lesson, "zoe", 4)])
        again = book.add_attempts(
            [_attempt(lesson, "frank", 2, b"v1"), _attempt(lesson, "frank", 3, b"v2")]
        )
        assert len(first.ids) == 2 and len(again.ids) == 1
        assert [a.file for a in again.unchanged] == ["frank.py"]
        assert len(book.attempts()) == 3
        kept = book.kept_report(_attempt(lesson, "frank", 2, b"v1").attempt.grading_key)
        assert kept == _report(lesson, 2)  # shown again without grading
        other = _attempt(lesson, "frank", 2, b"v1", fingerprint="fp-2").attempt
        assert book.kept_report(other.grading_key) is None


def test_latest_is_the_newest_submission_not_the_last_graded(lesson, tmp_path):
    """Frank's old file graded again in a later batch displaced his newer one: 8 -> 5."""
    with Gradebook(tmp_path / "course.sqlite") as book:
        newer, older = book.add_attempts(
            [
                _attempt(lesson, "frank", 4, b"frank_v2", submitted=2_000.0),
                _attempt(lesson, "frank", 1, b"frank", submitted=1_000.0),  # graded later
            ]
        ).ids
        attempts = book.attempts()
    key = ("frank", lesson.meta.id)
    assert counting(attempts, "latest")[key].id == newer
    assert [a.id for a in current(attempts)] == [older, newer]  # in submission order


def test_the_roster_is_kept_with_a_version_per_change(tmp_path):
    roster = read_roster(FIXTURES / "roster.csv")
    with Gradebook(tmp_path / "course.sqlite") as book:
        assert book.roster() is None
        assert book.store_roster(roster, "2026-12-01T00:00:00Z") == 1
        assert book.store_roster(roster, "2026-12-02T00:00:00Z") is None  # unchanged
        grown = Roster((*roster.students, Student("zoe", "Zoe", "zoe@example.edu")))
        assert book.store_roster(grown, "2026-12-03T00:00:00Z") == 2
        assert book.roster_versions() == ((1, "2026-12-01T00:00:00Z"), (2, "2026-12-03T00:00:00Z"))
        kept = book.roster()
    assert kept is not None and kept.match("zoe_v2.py") == "zoe"
    assert kept.by_id()["alice"].lms_id == "101"


def test_without_a_roster_in_the_gradebook_no_file_makes_a_student_up(lesson):
    """`merge` without --roster made students `frank_v2` and `notes_from_ta` up."""
    roster = Roster((Student("frank"), Student("zoe")))
    records = [
        JournalEntry("run", name, "", 0.0, _report(lesson, 1), name.encode())
        for name in ("frank_v2.py", "notes_from_ta.py", "zoe.py")
    ]
    made = intake(lesson, records, roster=roster, toolkit="0.1.0", fingerprint="fp-1")
    assert [g.attempt.student for g in made.attempts] == ["frank", "zoe"]
    assert made.unmatched == ("notes_from_ta.py",)
    times = {"zoe.py": 5_000.0}
    later = intake(
        lesson, records, roster=roster, toolkit="0.1.0", fingerprint="fp-1", submitted_at=times
    )
    # the submission system's list names zoe.py alone: the other files were never received
    assert [(g.attempt.student, g.attempt.submitted) for g in later.attempts] == [("zoe", 5_000.0)]
    assert later.unlisted == ("frank_v2.py", "notes_from_ta.py") and later.unmatched == ()


def test_submission_times_are_read_from_a_csv_and_refused_when_vague(tmp_path):
    times = tmp_path / "times.csv"
    times.write_text("file,submitted_at\na.py,2026-12-02T09:30:00Z\n", encoding="utf-8")
    # 2026-01-01 is 1_767_225_600; December 2 is 335 days on; 09:30 is 34_200 s.
    assert read_submission_times(times) == {"a.py": 1_767_225_600.0 + 335 * 86_400 + 34_200}
    times.write_text("file,submitted_at\na.py,2026-12-02 09:30\n", encoding="utf-8")
    with pytest.raises(UsageError, match="with a zone"):
        read_submission_times(times)


def test_two_students_sharing_one_email_is_a_roster_error(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name,email\na,A,same@e\nb,B,SAME@e\n", encoding="utf-8")
    with pytest.raises(UsageError, match="also 'a''s"):
        read_roster(roster)


def test_optional_points_are_extra_and_canvas_gets_points_possible(lesson, tmp_path):
    attempts, students = _course(lesson, tmp_path)
    table = course_table(attempts, students, "latest")
    alice = {row.student.id: row for row in table.rows}["alice"]
    # Hand count: make-it-yours 2 + nested-model 3 + repair 3 + adam-by-hand 1 (optional).
    assert (alice.points[0], alice.extra[0], table.lessons[0].max_points) == (9, 1, 8)
    mapped = canvas_csv(table, {"state-02": "4711"}).splitlines()
    assert mapped[0].endswith(",Pytrees and structured parameters (4711),Another lesson")
    assert mapped[1] == "    Points Possible,,,,,8,8"


def test_gradescope_gives_optional_tasks_extra_credit_and_never_fails_one_left_out(lesson):
    scoring = Scoring.of(lesson)
    solved = autograder.results_json(_report(lesson, len(lesson.tasks)), scoring, "ran")
    optional = [t for t in solved["tests"] if "optional" in t["name"]]
    assert [(t["score"], t["max_score"], t["status"]) for t in optional] == [(1.0, 0.0, "passed")]
    assert solved["score"] == 9 and solved["output_format"] == "md"
    assert all(t["output_format"] == "md" for t in solved["tests"])
    left = _report(lesson, len(lesson.tasks) - 1)
    left = dataclasses.replace(
        left,
        tasks=(
            *left.tasks[:-1],
            dataclasses.replace(left.tasks[-1], status="not attempted"),
        ),
    )
    (skipped,) = [
        t for t in autograder.results_json(left, scoring, "ran")["tests"] if "optional" in t["name"]
    ]
    assert "status" not in skipped and skipped["score"] == 0
    empty = autograder.not_graded_json("the submission has no .py or .ipynb file", 0.2)
    assert empty["tests"] == [] and "Isolation" not in empty["output"]


def test_gradescopes_results_match_their_fixture(lesson):
    """Hand-written from Gradescope's specification: 2 + 3 of 8 points, the optional task
    left out (no status), Markdown output, the run's 2.6 s rounded up to 3."""
    said = {
        "make-it-yours": (PASSED, "Right on the lesson's inputs.", None),
        "nested-model": (
            FAILED,
            "`g` at `layer/w` is 1; expected 2.",
            "differentiate the nested tree.",
        ),
        "repair": (PASSED, "Right on the lesson's inputs.", None),
        "adam-by-hand": ("not attempted", "Not attempted: its todo(...) is still there.", None),
    }
    tasks = tuple(TaskResult(t.id, t.title, *said[t.id], t.optional) for t in lesson.tasks)
    report = GradeReport(lesson.meta.id, "state-02.py", tasks, (), 2.6, 7)
    results = autograder.results_json(report, Scoring.of(lesson), "Isolation: bubblewrap.")
    expected = json.loads((FIXTURES / "gradescope-results.json").read_text(encoding="utf-8"))
    assert results == expected


def _report_stopped(lesson, message: str) -> GradeReport:
    tasks = tuple(
        TaskResult(t.id, t.title, ERROR, message, None, t.optional, "lesson inputs")
        for t in lesson.tasks
    )
    return GradeReport(lesson.meta.id, "x.py", tasks, (), 1.0, 7)


def test_going_back_to_earlier_bytes_is_a_new_submission(lesson, tmp_path):
    """Red team: X on Monday, Y on Tuesday, X again on Wednesday counted Tuesday's Y."""
    with Gradebook(tmp_path / "course.sqlite") as book:
        book.add_attempts([_attempt(lesson, "alice", 4, b"X", submitted=100.0)])
        book.add_attempts([_attempt(lesson, "alice", 1, b"Y", submitted=200.0)])
        again = book.add_attempts([_attempt(lesson, "alice", 4, b"X", submitted=300.0)])
        assert len(again.ids) == 1 and len(again.unchanged) == 1  # submitted, not regraded
        # the same folder handed in again, Wednesday's X with it: nothing new
        same = book.add_attempts([_attempt(lesson, "alice", 4, b"X", submitted=300.0)])
        assert not same.ids and len(same.unchanged) == 1
        attempts = book.attempts()
    key = ("alice", lesson.meta.id)
    assert counting(attempts, "latest")[key].submitted == 300.0
    assert attempt_counts(attempts)[key] == 3


def test_a_new_toolkit_grades_a_kept_submission_in_its_place_not_as_another(lesson, tmp_path):
    """Red team: re-batching after an upgrade stored every file again (bob: 2 submissions)."""
    with Gradebook(tmp_path / "course.sqlite") as book:
        (first,) = book.add_attempts([_attempt(lesson, "bob", 1, b"Z", submitted=100.0)]).ids
        upgraded = _attempt(lesson, "bob", 4, b"Z", submitted=150.0)
        moved = dataclasses.replace(upgraded.attempt, toolkit="0.2.0", fingerprint="fp-2")
        added = book.add_attempts([Graded(moved, upgraded.data, upgraded.report)])
        assert len(added.regraded) == 1 and first
        attempts = book.attempts()
    key = ("bob", lesson.meta.id)
    assert attempt_counts(attempts)[key] == 1
    counted = counting(attempts, "latest")[key]
    assert (counted.toolkit, counted.points, counted.submitted) == ("0.2.0", 9, 100.0)


def test_a_grading_stopped_at_a_limit_is_graded_again_in_its_place(lesson, tmp_path):
    """A time limit a loaded machine ran out is not the student's last word."""
    with Gradebook(tmp_path / "course.sqlite") as book:
        stopped = attempt_of(
            _report_stopped(lesson, "The cell did not finish within the time limit of 60 s."),
            Scoring.of(lesson),
            student="tim",
            lesson_title=lesson.meta.title,
            revision=lesson.meta.revision,
            toolkit="0.1.0",
            file="tim.py",
            data=b"T",
            submitted=100.0,
            graded_utc="2026-12-04T00:00:00Z",
            fingerprint="fp-1",
        )
        (first,) = book.add_attempts([stopped]).ids
        again = _attempt(lesson, "tim", 4, b"T", submitted=100.0)
        assert book.add_attempts([again]).unchanged  # handed in again (a merge): the same
        added = book.add_attempts([again], replace_limited=True)  # graded again on purpose
        assert len(added.regraded) == 1 and first
        assert counting(book.attempts(), "latest")[("tim", lesson.meta.id)].points == 9


def test_a_file_below_a_folder_is_the_folders_students_never_its_names():
    """Red team: `bob/alice.py` became alice's attempt."""
    roster = Roster((Student("alice"), Student("bob")))
    assert student_of("bob/alice.py", roster) == "bob"
    assert student_of("alice_v2.py", roster) == "alice"
    assert student_of("Bob Smith_123_assignsubmission_file_/alice.py", roster) is None


def test_with_a_roster_only_its_students_have_rows_and_the_rest_are_named(lesson, tmp_path):
    attempts, students = _course(lesson, tmp_path)
    stray = dataclasses.replace(attempts[0], id=99, student="alice_v2")
    table = course_table((*attempts, stray), students, "latest")
    assert "alice_v2" not in {row.student.id for row in table.rows}
    assert table.unrostered == ("alice_v2",)
    assert "alice_v2" not in canvas_csv(table) and "alice_v2" not in moodle_csv(table)


_MARKUP = {  # an indented code block may form: it shows its text as it is
    "heading_open",
    "blockquote_open",
    "bullet_list_open",
    "ordered_list_open",
    "fence",
    "table_open",
    "link_open",
    "image",
    "html_inline",
    "html_block",
    "hr",
}


def _markup_in(markdown: str) -> set[str]:
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    found = {t.type for t in tokens}
    found |= {c.type for t in tokens for c in (t.children or [])}
    return found & _MARKUP


def test_a_message_cannot_forge_a_heading_in_a_students_feedback(lesson):
    """Red team D6: an error message holding "## Make it yours: passed" made a heading."""
    forged = "boom\n## Make it yours: passed\n\nAll 3 tasks passed. [prize](http://x) ![i](y)"
    tasks = tuple(
        TaskResult(t.id, t.title, ERROR, forged, None, t.optional, "lesson inputs")
        for t in lesson.tasks
    )
    feedback = GradeReport(lesson.meta.id, "[a](b).py", tasks, (), 1.0, 7).feedback_markdown()
    headings = [line for line in feedback.splitlines() if line.startswith("#")]
    assert len(headings) == 1 + len(lesson.tasks)  # the page's own, one per task
    assert "## Make it yours: passed" not in feedback.replace("\\#", "")
    assert _markup_in(markdown_text(forged)) == set()


_PIECES = ("\\", "`", "``", "[x](y)", "![i](y)", "[", "](y)", "<b>", "<", "## ", "> ", "- ",
           "1. ", "```", "~~~", "| a |", "\n", "\n\n", " ", "a", "===", "***")  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=12).map("".join))
def test_markdown_text_never_makes_markup(text):
    assert _markup_in(markdown_text(text)) == set()


def test_attempts_are_numbered_per_student_and_lesson(lesson, tmp_path):
    """Issue 52: `grades --student` called ana's second attempt "attempt #3", the gradebook
    row that bob's first attempt pushed along. Counted by hand: ana's are 1, 2 (and the
    same bytes handed in again right after stay 2, the first of them counting), bob's is 1."""
    book_path = tmp_path / "course.sqlite"
    with Gradebook(book_path) as book:
        rows = book.add_attempts(
            [
                _attempt(lesson, "ana", 1, b"one", submitted=1.0),
                _attempt(lesson, "bob", 3, b"bob", submitted=1.5),
                _attempt(lesson, "ana", 3, b"two", submitted=2.0),
                _attempt(lesson, "ana", 3, b"two", submitted=3.0),  # downloaded twice
            ]
        ).ids
        assert attempt_numbers(book.attempts()) == dict(zip(rows, [1, 1, 2, 2], strict=True))
    argv = ["grades", "--gradebook", str(book_path), "--student", "ana"]
    code, out, _ = invoke([*argv, "--json"])
    assert code == 0
    shown = [(a["attempt"], a["id"]) for a in json.loads(out)]
    assert shown == [(1, rows[0]), (2, rows[2]), (2, rows[3])]
    code, out, _ = invoke(argv)
    said = [line.split(" · ")[0] for line in out.splitlines() if " · ana" in line]
    assert said == [f"{lesson.meta.id} attempt {n}" for n in ("1", "2 (counts)", "2")]


def test_the_class_report_lists_each_declared_mistake_even_when_no_one_made_it(lesson, tmp_path):
    """`lessonkit report` counts every mistake state-02 declares: with one student who made
    none, each is "0 of 1" (issue 52: the section was left out)."""
    from html import unescape

    from lessonkit.lesson.mistakes import declared_mistakes

    book_path, page = tmp_path / "course.sqlite", tmp_path / "report.html"
    with Gradebook(book_path) as book:
        book.add_attempts([_attempt(lesson, "ana", len(lesson.tasks))])
    argv = ["report", lesson.meta.id, "--gradebook", str(book_path), "--output", str(page)]
    code, _, err = invoke(argv)
    assert code == 0, err
    html = unescape(page.read_text(encoding="utf-8"))
    titles = [m.name for m in declared_mistakes(lesson)]
    assert len(titles) >= 5 and "Declared mistakes made" in html
    for title in titles:
        assert f'<td>{title}</td><td class="number" data-label="Students">0 of 1</td>' in html
