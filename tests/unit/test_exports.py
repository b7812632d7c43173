"""Every CSV an LMS or a spreadsheet reads, from a gradebook of hostile names (issue 42, item 4).

The expected files in tests/fixtures/exports were typed by hand, one per export (Canvas,
Moodle, the per-task CSV, and a batch's own CSV): a student named "Ana Points Possible"
must stay a student for Canvas's importer (which takes any row whose Student cell matches
/Points Possible/ for its points-possible row), a formula behind a zero-width space, word
joiner or byte-order mark must stay text, and a bidi override must not reorder a name.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lessonkit.course.exports import CANVAS_POINTS_POSSIBLE, canvas_csv, moodle_csv, tasks_csv
from lessonkit.course.gradebook import attempt_of, course_table
from lessonkit.course.roster import Student
from lessonkit.grade.batches.kind import BatchEntry
from lessonkit.grade.judging.report import Scoring, summary_csv
from lessonkit.grade.judging.results import FAILED, PASSED, GradeReport, TaskResult
from lessonkit.lesson.text import csv_cell

from conftest import REPO

FIXTURES = REPO / "tests" / "fixtures" / "exports"
SCORING = Scoring((("sum", 2.0, False),))
HYPERLINK = '\u200b=HYPERLINK("http://e.example/?x","click")'
ROSTER = {
    "ana": Student("ana", "Ana Points Possible", "ana@example.edu", section="A", lms_id="201"),
    "\u200b=hy": Student("\u200b=hy", HYPERLINK, "\ufeff=cmd@example.edu", lms_id="202"),
    "\u202eev": Student(
        "\u202eev", "\u202eevil", "ev@example.edu", section="\u2066B\u2069", lms_id="203"
    ),
    "pp": Student("pp", "points  POSSIBLE", "pp@example.edu", lms_id="204"),
}
FORMULA_START = frozenset("=+-@\t\r\uff1d\uff0b\uff0d\uff20")  # what starts a formula
BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
# Canvas's importer (gradebook_importer.rb): `if row[0] =~ /Points Possible/`; matched here
# without case, as a later Canvas might.
CANVAS_RULE = re.compile(r"Points Possible", re.IGNORECASE)


def _report(file: str, status: str, message: str = "", seed: int | None = 7) -> GradeReport:
    task = TaskResult("sum", "Sum", status, message, None)  # type: ignore[arg-type]
    return GradeReport("demo", file, (task,), (), 0.5, seed)


def _attempts():
    made = []
    for number, (student, status) in enumerate(
        (("ana", PASSED), ("\u200b=hy", FAILED), ("\u202eev", PASSED)), start=1
    ):
        graded = attempt_of(
            _report(f"{student}.py", status),
            SCORING,
            student=student,
            lesson_title="Demo lesson",
            revision="1",
            toolkit="0.1.0",
            file=f"{student}.py",
            data=student.encode(),
            submitted=float(number),
            graded_utc="2026-12-05T00:00:00Z",
            fingerprint="fp-1",
        )
        made.append(dataclasses.replace(graded.attempt, id=number))
    return made


def _batch_csv() -> str:
    first = _report("\u2060@SUM(A1).py", PASSED, "\u202eevil")
    second = dataclasses.replace(_report("\ufeff-1.py", FAILED, " =1+1", None), seconds=1.25)
    return summary_csv([BatchEntry(Path(r.file), r) for r in (first, second)], SCORING)


@pytest.mark.parametrize(
    ("name", "write"),
    [
        ("canvas.csv", lambda: canvas_csv(course_table(_attempts(), ROSTER, "latest"))),
        ("moodle.csv", lambda: moodle_csv(course_table(_attempts(), ROSTER, "latest"))),
        ("tasks.csv", lambda: tasks_csv(_attempts(), "latest")),
        ("batch.csv", _batch_csv),
    ],
)
def test_each_csv_of_hostile_names_is_the_hand_written_one(name, write):
    assert write().encode("utf-8") == (FIXTURES / name).read_bytes()


def test_only_the_points_possible_row_matches_canvass_rule():
    rows = canvas_csv(course_table(_attempts(), ROSTER, "latest")).splitlines()
    matching = [row for row in rows if CANVAS_RULE.search(row.split(",")[0])]
    assert matching == [f"{CANVAS_POINTS_POSSIBLE},,,,,2"]


def _after_invisible(cell: str) -> str:
    """`cell` from its first character that shows, as a spreadsheet that skips whitespace
    and format characters (zero-width space, word joiner, BOM...) would read it."""
    return cell.lstrip(
        "".join(c for c in set(cell) if c.isspace() or unicodedata.category(c) == "Cf")
    )


INVISIBLE = ("\u200b", "\u2060", "\ufeff", "\u00ad", " ", "\u3000", "\n")
HOSTILE_TEXT = st.builds(
    "".join,
    st.tuples(
        st.text(st.sampled_from(INVISIBLE + tuple(BIDI)), max_size=4),
        st.sampled_from(sorted(FORMULA_START) + list(BIDI)) | st.characters(),
        st.text(),
    ),
)
"""Text whose first shown character may hide behind invisible ones or be a bidi control."""


@given(HOSTILE_TEXT | st.text())
def test_no_sanitised_cell_starts_a_formula_or_keeps_a_bidi_control(text):
    cell = csv_cell(text)
    assert _after_invisible(cell)[:1] not in FORMULA_START, repr(cell)
    assert not any(c in BIDI for c in cell), repr(cell)


def test_every_csv_is_written_by_the_one_writer():
    """A second CSV writer would be a second place to forget the guard."""
    src = REPO / "src" / "lessonkit"
    writers = sorted(
        p.relative_to(src).as_posix()
        for p in src.rglob("*.py")
        if re.search(r"csv\.(writer|DictWriter)\(", p.read_text(encoding="utf-8"))
    )
    assert writers == ["lesson/text.py"]


def test_every_export_name_has_one_row_and_the_choices_are_read_from_them():
    from typing import get_args

    from lessonkit.course.exports import EXPORTS, FORMATS, Export

    assert sorted(get_args(Export)) == sorted(EXPORTS)
    assert len({row.name for row in FORMATS}) == len(FORMATS)


def test_an_export_name_without_a_row_is_an_error_not_the_tasks_csv():
    from lessonkit.course.exports import export
    from lessonkit.errors import UsageError

    attempts = _attempts()
    table = course_table(attempts, ROSTER, "latest")
    with pytest.raises(UsageError, match="no export named 'xlsx'") as raised:
        written = export("xlsx", table, attempts)  # type: ignore[arg-type]
        pytest.fail(f"the name without a row wrote: {written!r}")
    assert raised.value.fix == "choose one of: canvas, moodle, csv"
