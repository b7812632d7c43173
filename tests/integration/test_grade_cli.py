"""`lessonkit check` as a person runs it: as JSON, with its defaults, in bulk, on every save."""

from __future__ import annotations

import csv
import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import (
    MK_WRONG,
    REPO,
    REPORT_KEYS,
    copy_lesson_repo,
    imported_by,
    invoke,
    make_attempt,
    write_solved_and_wrong,
)


@pytest.fixture(scope="module")
def files(lesson, tmp_path_factory) -> Path:
    return write_solved_and_wrong(lesson, tmp_path_factory.mktemp("check-cli"))


def test_json_report_for_tools(files, lesson):
    code, out, err = invoke(["check", "state-02", str(files / "wrong.py"), "--json"])
    assert code == 1, err
    data = json.loads(out)
    assert list(data) == REPORT_KEYS
    assert data["lesson"] == "state-02" and data["passed"] is False
    assert [t["id"] for t in data["tasks"]] == [t.id for t in lesson.tasks]
    first = data["tasks"][0]
    assert first["status"] == "failed" and "hard-coded" in first["message"]
    assert first["hint"] == " ".join(lesson.task("make-it-yours").hint.split())
    assert [t["status"] for t in data["tasks"][1:]] == ["passed", "passed", "passed"]
    assert all(p["status"] == "passed" for p in data["prerequisites"])
    assert isinstance(data["seconds"], float)


BUILD_STACK = {
    "jax",
    "numpy",
    "matplotlib",
    "nbformat",
    "jsonschema",
    "jinja2",
    "pygments",
    "lessonkit.render",
    "lessonkit.site",
    "lessonkit.receipts",
}
"""What `check` must not import: JAX runs in the grading child, and nothing renders."""


def test_check_imports_only_what_grading_needs(files, tmp_path):
    code, modules = imported_by(["check", "state-02", str(files / "wrong.py")], REPO, tmp_path)
    assert code == 1  # graded: one task fails
    assert "lessonkit.grade.grader" in modules
    assert BUILD_STACK & modules == set()


def test_started_copies_are_graded_and_found_by_default(tmp_path, lesson):
    """`start DIR` anywhere, then `check` without FILE grades that copy, not the lesson's."""
    root = tmp_path / "repo"
    copy_lesson_repo(root)
    code, _, err = invoke(["start", "state-02", str(tmp_path / "my work")], root=root, cwd=root)
    assert code == 0, err
    script = tmp_path / "my work" / "state-02.py"
    assert "todo(" in script.read_text(encoding="utf-8")
    script.write_text(make_attempt(lesson), encoding="utf-8")  # every task solved in the copy
    code, out, err = invoke(["check", "state-02", "--json"], root=root, cwd=root)
    assert code == 0, err
    data = json.loads(out)
    assert Path(data["file"]).resolve() == script.resolve()
    assert [t["status"] for t in data["tasks"]] == ["passed"] * 4
    assert "your practice copy" in err and "state-02.py" in err


def test_check_without_a_practice_copy_says_it_grades_the_lessons_own(tmp_path):
    root = tmp_path / "repo"
    copy_lesson_repo(root)
    code, out, err = invoke(["check", "state-02", "--json"], root=root, cwd=root)
    assert code == 1, err
    assert [t["status"] for t in json.loads(out)["tasks"]] == ["not attempted"] * 4
    assert "No practice copy found" in err and "lessonkit start state-02" in err


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("binary.py", b"\x00\x01\x02\x03", "is a binary file, not Python or a notebook"),
        ("latin-1.py", "x = 'é'\n".encode("latin-1"), "is not UTF-8 text"),
        ("broken.ipynb", b"{not json", "is not a notebook: invalid JSON at line 1"),
        ("notes.txt", b"hello", "expected a .py or .ipynb practice file"),
        ("missing.py", None, "no such file"),
    ],
)
def test_unreadable_files_get_one_message_and_exit_2(tmp_path, name, content, message):
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    code, out, err = invoke(["check", "state-02", str(path)])
    assert code == 2
    assert message in err and err.startswith("lessonkit check: ")
    assert "Traceback" not in err + out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["check", "state-02", "--jobs", "2"], "only apply to --batch"),
        (["check", "nope-99", "x.py"], "unknown lesson 'nope-99'"),
        (["check", "state-02", "--batch", "no/such/folder"], "is not a folder"),
    ],
)
def test_usage_mistakes_exit_2(argv, message):
    code, _out, err = invoke(argv)
    assert code == 2 and message in err and "Traceback" not in err


def _journalled_report(lesson, path: Path, seed: int = 1234) -> dict:
    """A report no grading gives (every task `error`, "from the journal"): kept, not redone."""
    return {
        "schema": 1,
        "lesson": "state-02",
        "file": str(path),
        "passed": False,
        "tasks": [
            {
                "id": t.id,
                "title": t.title,
                "status": "error",
                "message": "from the journal",
                "hint": None,
                "optional": t.optional,
            }
            for t in lesson.tasks
        ],
        "prerequisites": [],
        "seconds": 1.0,
        "seed": seed,
    }


def test_resume_keeps_what_an_interrupted_batch_graded(lesson, tmp_path):
    """Results journalled before Ctrl-C are kept: only the rest, and what changed, is graded."""
    from lessonkit.grade.batches.batch_run import BatchRun
    from lessonkit.grade.batches.folder import read_in_folder, submissions_in
    from lessonkit.grade.batches.lesson_kind import lesson_kind
    from lessonkit.grade.judging.results import GradeReport
    from lessonkit.grade.model import BatchEntry
    from lessonkit.grade.provenance.grading_key import grading_key

    submissions = tmp_path / "class"
    submissions.mkdir()
    (submissions / "alice.py").write_text(make_attempt(lesson), encoding="utf-8")
    (submissions / "bob.py").write_text(make_attempt(lesson, MK_WRONG), encoding="utf-8")
    (submissions / "carol.py").write_text(make_attempt(lesson, MK_WRONG), encoding="utf-8")
    out_dir = tmp_path / "results"
    listing = submissions_in(submissions)
    key = grading_key(None)  # the session's ($LESSONKIT_GRADING_KEY, see conftest)
    kind = lesson_kind(lesson)
    run = BatchRun(kind, submissions, out_dir, resume=False, seed=None, key=key, listing=listing)
    paths = sorted(submissions.iterdir())
    run.prepare(paths)
    for name in ("alice.py", "carol.py"):  # graded before the interruption, as the run does
        path = submissions / name
        report = GradeReport.from_json(_journalled_report(lesson, path))
        run._journal(BatchEntry(path, report, read_in_folder(submissions, path)[1]))
    bob = submissions / "bob.py"
    foreign = {  # bound to another run: not kept, though its sha256 is right
        "run": "another-run",
        "path": "bob.py",
        "sha256": read_in_folder(submissions, bob)[1],
        "report": _journalled_report(lesson, bob),
    }
    with (out_dir / ".check-state-02.journal.jsonl").open("a", encoding="utf-8") as file:
        file.write(json.dumps(foreign) + "\n")
        file.write('{"run": "' + run.run_id + '", "path": "bo')  # cut short by Ctrl-C
    (submissions / "carol.py").write_text(make_attempt(lesson), encoding="utf-8")  # changed
    argv = ["check", "state-02", "--batch", str(submissions), "--resume", "--out", str(out_dir)]
    code, out, err = invoke(argv)
    assert code == 0, err
    assert "Kept 1 result(s) from the interrupted batch" in err and "seed 1234" in out
    rows = list(csv.DictReader((out_dir / "check-state-02.csv").open(encoding="utf-8")))
    assert [(r["make-it-yours message"], r["seed"]) for r in rows] == [
        ("from the journal", "1234"),
        (rows[1]["make-it-yours message"], "1234"),
        (rows[2]["make-it-yours message"], "1234"),
    ]
    assert rows[1]["make-it-yours"] == "failed" and rows[2]["passed"] == "yes"
    assert "[2/3] bob.py: not passed" in err or "[3/3] bob.py: not passed" in err


def test_resume_refuses_a_journal_entry_that_does_not_verify(lesson, tmp_path):
    """Red team D2 at --resume: an entry added to the journal by hand (a passing verdict for
    bob's file) is refused, naming the journal and the entry, before any grading."""
    from lessonkit.grade.batches.batch_run import BatchRun
    from lessonkit.grade.batches.folder import submissions_in
    from lessonkit.grade.batches.lesson_kind import lesson_kind
    from lessonkit.grade.provenance.grading_key import grading_key

    submissions = tmp_path / "class"
    submissions.mkdir()
    (submissions / "bob.py").write_bytes(b"\x00 binary: never graded by a child")
    out_dir = tmp_path / "results"
    listing = submissions_in(submissions)
    key = grading_key(None)
    run = BatchRun(
        lesson_kind(lesson), submissions, out_dir, resume=False, seed=3, key=key, listing=listing
    )
    run.prepare(list(listing.files))  # the signed header of a batch interrupted at once
    forged = _journalled_report(lesson, submissions / "bob.py", seed=3)
    for task in forged["tasks"]:
        task["status"] = "passed"
    line = {"run": run.run_id, "path": "bob.py", "sha256": "", "mtime": 0.0, "report": forged}
    with run.journal.open("a", encoding="utf-8") as file:
        file.write(json.dumps(line | {"data": None, "mac": "0" * 64}) + "\n")
    argv = ["check", "state-02", "--batch", str(submissions), "--out", str(out_dir)]
    code, out, err = invoke([*argv, "--resume"])
    assert code == 2, (out, err)
    assert ".check-state-02.journal.jsonl, entry 1 (line 2, 'bob.py'): it is not signed" in err
    assert "grade afresh without --resume" in err and "Graded" not in err
    code, _, err = invoke(argv)  # afresh: the journal is replaced
    assert code == 0 and "Graded 1 file(s)" in err, err


def test_b11_planted_journal_is_not_trusted(lesson, tmp_path):
    """A journal in the submissions folder (planted by an archive) decides nothing: the
    outputs go to ./check-state-02/, and a journal there not bound to this run is ignored."""
    submissions = tmp_path / "class"
    submissions.mkdir()
    wrong = submissions / "bob.py"
    wrong.write_text(make_attempt(lesson, MK_WRONG), encoding="utf-8")
    planted = _journalled_report(lesson, wrong, seed=7)
    planted["passed"] = True
    for task in planted["tasks"]:
        task["status"], task["message"] = "passed", "planted"
    line = json.dumps({"path": "bob.py", "report": planted}) + "\n"
    (submissions / ".check-state-02.journal.jsonl").write_text(line, encoding="utf-8")
    work = tmp_path / "work"
    (work / "check-state-02").mkdir(parents=True)
    bound = {"run": "x", "path": "bob.py", "sha256": "0" * 64, "report": planted}
    (work / "check-state-02" / ".check-state-02.journal.jsonl").write_text(
        line + json.dumps(bound) + "\n", encoding="utf-8"
    )
    argv = ["check", "state-02", "--batch", str(submissions), "--resume", "--jobs", "1"]
    code, out, err = invoke(argv, root=REPO, cwd=work)
    assert code == 0, err
    # "seed 7" is a prefix of many drawn seeds (seed 776370177): match the whole number.
    assert "Kept" not in err and re.search(r"seed 7\b", out) is None
    rows = list(csv.DictReader((work / "check-state-02" / "check-state-02.csv").open()))
    assert [(r["passed"], r["make-it-yours"]) for r in rows] == [("no", "failed")]
    assert sorted(p.name for p in submissions.iterdir()) == [
        ".check-state-02.journal.jsonl",
        "bob.py",
    ]  # nothing written in the submissions folder


def test_b11_out_inside_the_submissions_folder_is_refused(tmp_path):
    submissions = tmp_path / "class"
    (submissions / "group").mkdir(parents=True)
    (submissions / "alice.py").write_bytes(b"\x00")
    for out in (submissions, submissions / "group" / "results"):
        argv = ["check", "state-02", "--batch", str(submissions), "--out", str(out)]
        code, _, err = invoke(argv)
        assert code == 2, err
        assert "is inside the submissions folder" in err and "Traceback" not in err
    code, _, err = invoke(["check", "state-02", "--batch", "."], root=REPO, cwd=submissions)
    assert code == 2 and "is inside the submissions folder" in err
    assert sorted(p.name for p in submissions.iterdir()) == ["alice.py", "group"]


def test_b12_output_path_taken_by_a_folder_is_one_message_before_grading(tmp_path):
    submissions = tmp_path / "class"
    submissions.mkdir()
    (submissions / "alice.py").write_bytes(b"\x00")
    out_dir = tmp_path / "results"
    (out_dir / "check-state-02.csv").mkdir(parents=True)
    argv = ["check", "state-02", "--batch", str(submissions), "--out", str(out_dir)]
    code, out, err = invoke(argv)
    assert code == 2, err
    assert err.startswith("lessonkit check: ") and "check-state-02.csv is a folder" in err
    assert "Graded" not in err and "Traceback" not in err + out
    assert sorted(p.name for p in out_dir.iterdir()) == ["check-state-02.csv"]
    (out_dir / "check-state-02.csv").rmdir()
    (out_dir / "feedback").write_text("not a folder", encoding="utf-8")
    code, out, err = invoke(argv)
    assert code == 2 and "feedback is not a folder" in err and "Graded" not in err


COLLIDING = (  # feedback names that were one file: "__".join(parts), cleaned, cut at 200
    "group-a/alice.py",
    "group-a__alice.py",
    "b_b.py",
    "böb.py",
    "x" * 205 + "-1.py",
    "x" * 205 + "-2.py",
    "Alice.py",
    "alice.py",
)
FAKE_LINE = "z\n[1/4] carol.py: pass\nz.py"  # a folder `z\n[1` holds `4] carol.py...`


@pytest.fixture(scope="module")
def hostile_folder(lesson, tmp_path_factory) -> tuple[Path, Path, int, str, str]:
    """One batch over a folder an archive could unpack: a link out, names that collide."""
    base = tmp_path_factory.mktemp("hostile-folder")
    outside = base / "outside" / "secret.py"
    outside.parent.mkdir()
    outside.write_text("SECRET-b9-token: the instructor's file\n", encoding="utf-8")
    submissions = base / "class"
    (submissions / "group-a").mkdir(parents=True)
    (submissions / "z\n[1").mkdir()
    (submissions / "leak.py").symlink_to(outside)
    (submissions / "linked").symlink_to(outside.parent, target_is_directory=True)
    for name in (*COLLIDING, FAKE_LINE):
        (submissions / name).write_bytes(b"\x00" + name.encode())  # binary: no child needed
    out_dir = base / "results"
    argv = ["check", "state-02", "--batch", str(submissions), "--jobs", "1", "--out", str(out_dir)]
    with pytest.MonkeyPatch.context() as patch:
        # wide enough that the table never wraps a long name (a wrapped cell is no fake line,
        # but b13 reads the table line by line); without a terminal rich would use 80
        patch.setenv("COLUMNS", "240")
        code, out, err = invoke(argv)
    return submissions, out_dir, code, out, err


def test_a_link_in_out_is_refused_before_grading_as_the_docs_say(tmp_path):
    """Issue 52: the README said a batch's outputs replace links in `--out`, while the batch
    refuses them. The docs now say what `--out` does, and this holds them to it."""
    submissions = tmp_path / "class"
    submissions.mkdir()
    (submissions / "alice.py").write_bytes(b"\x00")
    out_dir = tmp_path / "results"
    out_dir.mkdir()
    elsewhere = tmp_path / "elsewhere.csv"
    elsewhere.write_text("mine", encoding="utf-8")
    (out_dir / "check-state-02.csv").symlink_to(elsewhere)
    code, _, err = invoke(["check", "state-02", "--batch", str(submissions), "--out", str(out_dir)])
    said = "is a folder or a link; the batch writes a file there"
    assert code == 2 and said in err and "Graded" not in err, err
    assert elsewhere.read_text(encoding="utf-8") == "mine"
    for guide in (REPO / "docs" / "instructor.md", REPO / "docs" / "grading-security.md"):
        text = " ".join(guide.read_text(encoding="utf-8").split())
        assert f'("... {said}")' in text, guide
        assert "links included" not in text and "a link planted there is replaced" not in text


def test_b9_symlink_submission_is_refused(hostile_folder):
    _, out_dir, code, out, err = hostile_folder
    assert code == 0, err
    rows = {
        r["file"]: r
        for r in csv.DictReader((out_dir / "check-state-02.csv").open(encoding="utf-8"))
    }
    written = [p.read_text(encoding="utf-8") for p in (out_dir / "feedback").iterdir()]
    written += [
        (out_dir / n).read_text(encoding="utf-8")
        for n in ("check-state-02.csv", "check-state-02.json")
    ]
    assert not any("SECRET-b9-token" in text for text in [*written, out, err])
    leak = next(r for f, r in rows.items() if f.endswith("leak.py"))
    assert leak["passed"] == "no" and leak["make-it-yours"] == "error"
    assert "symbolic link" in leak["make-it-yours message"]
    assert not any("linked" in f for f in rows)  # a linked folder is not walked into


def test_b10_feedback_names_are_one_to_one(hostile_folder):
    submissions, out_dir, code, _, err = hostile_folder
    assert code == 0, err
    feedback = sorted((out_dir / "feedback").iterdir())
    assert len(feedback) == len(COLLIDING) + 2  # with leak.py and the newline name
    headings = {p.read_text(encoding="utf-8").splitlines()[0] for p in feedback}
    for name in COLLIDING:
        assert f"# state-02: feedback on {submissions / name}" in headings, name
    assert (out_dir / "feedback" / "b_b.py.md").is_file()  # a plain name stays readable


def test_b10_feedback_name_encoding_is_injective():
    from lessonkit.grade.batches.outputs import feedback_names

    names = feedback_names([*COLLIDING, "a.py", "a.py--0123456789abcdef"])
    assert len({n.casefold() for n in names.values()}) == len(names)
    assert names["a.py"] == "a.py.md" and all(len(n) < 255 for n in names.values())


def test_b9_no_link_below_the_folder_is_followed(hostile_folder):
    """Read one folder at a time with O_NOFOLLOW: a linked folder or a path out is refused."""
    from lessonkit.grade.batches.folder import read_in_folder
    from lessonkit.grade.submission.sources import SubmissionError

    submissions = hostile_folder[0]
    outside = submissions.parent / "outside" / "secret.py"
    for path, message in (
        (submissions / "linked" / "secret.py", "symbolic link"),
        (submissions / "leak.py", "symbolic link"),
        (outside, "lies outside the batch folder"),
        (submissions / ".." / "outside" / "secret.py", "lies outside the batch folder"),
    ):
        with pytest.raises(SubmissionError, match=message):
            read_in_folder(submissions, path)


def _deep_folder(top: Path, levels: int = 20, length: int = 250) -> None:
    """`levels` folders of `length`-byte names, made one below the other through folder
    descriptors: their path is far past PATH_MAX, as an archive can unpack it."""
    fd = os.open(top, os.O_RDONLY)
    try:
        for level in range(levels):
            name = f"d{level:02d}".ljust(length, "x")
            os.mkdir(name, dir_fd=fd)
            below = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = below
        os.close(os.open("deep.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    finally:
        os.close(fd)


def test_a3_a_folder_that_cannot_be_listed_is_its_rows_error_and_the_rest_grade(
    lesson, tmp_path, monkeypatch
):
    """Red team A3: a folder too deep to list (or one that refuses it) stopped the batch
    before it graded anything; each is now its own row's error and alice is graded."""
    from lessonkit.grade.batches import batch_run

    submissions = tmp_path / "class"
    submissions.mkdir()
    (submissions / "alice.py").write_text(make_attempt(lesson), encoding="utf-8")
    _deep_folder(submissions)
    (submissions / "locked").mkdir()
    (submissions / "locked" / "bob.py").write_text("x = 1\n", encoding="utf-8")
    scandir = os.scandir

    def refusing(path):  # root lists any folder: refuse this one as a mode 000 folder would
        if not isinstance(path, int) and Path(path).name == "locked":
            raise PermissionError(13, "Permission denied", str(path))
        return scandir(path)

    monkeypatch.setattr(batch_run.os, "scandir", refusing)
    out_dir = tmp_path / "results"
    argv = ["check", "state-02", "--batch", str(submissions), "--jobs", "1", "--out", str(out_dir)]
    code, _, err = invoke(argv)
    assert code == 0, err
    rows = list(csv.DictReader((out_dir / "check-state-02.csv").open(encoding="utf-8")))
    by_name = {Path(r["file"]).name[:3]: r for r in rows}
    assert sorted(by_name) == ["ali", "d16", "loc"], [r["file"][-40:] for r in rows]
    assert by_name["ali"]["passed"] == "yes"
    deep, locked = by_name["d16"], by_name["loc"]
    assert deep["make-it-yours"] == "error" and locked["make-it-yours"] == "error"
    assert "cannot be listed (File name too long)" in deep["make-it-yours message"]
    assert " ... " in deep["make-it-yours message"]  # its name shortened, not 4 KB long
    assert "locked cannot be listed (Permission denied)" in locked["make-it-yours message"]
    assert len(list((out_dir / "feedback").iterdir())) == 3


def test_b12_a_failed_write_at_the_end_is_one_message(tmp_path, monkeypatch):
    import errno

    from lessonkit.atomic import OpenFolder

    submissions = tmp_path / "class"
    submissions.mkdir()
    (submissions / "alice.py").write_bytes(b"\x00")
    real = OpenFolder.write

    def full_disk(self: OpenFolder, name: str, text: str, **how: bool) -> None:
        if name.endswith(".csv"):
            raise OSError(errno.ENOSPC, "No space left on device", name)
        real(self, name, text, **how)

    monkeypatch.setattr(OpenFolder, "write", full_disk)
    out_dir = tmp_path / "results"
    code, out, err = invoke(
        ["check", "state-02", "--batch", str(submissions), "--out", str(out_dir)]
    )
    assert code == 2, err
    assert "cannot write" in err and "check-state-02.csv: No space left on device" in err
    assert "--resume" in err and "Traceback" not in err + out
    assert (out_dir / ".check-state-02.journal.jsonl").is_file()  # what was graded is kept


def test_b13_a_newline_in_a_file_name_prints_no_fake_progress_line(hostile_folder):
    _, _, code, out, err = hostile_folder
    assert code == 0, err
    assert not [line for line in err.splitlines() if line.startswith("[1/4] carol.py")]
    assert "z\\n[1/4] carol.py: pass\\nz.py: not passed" in err
    assert not [line for line in out.splitlines() if "carol.py" in line and "z\\n" not in line]


def test_b14_names_are_shown_on_one_line(lesson):
    from lessonkit.grade.batches.local import unreadable
    from lessonkit.grade.judging.report import report_view

    report = unreadable(lesson, Path("x.py\n# state-02: all passed"), "unreadable", 0.1)
    lines = report.feedback_markdown().splitlines()
    assert lines[0] == "# state-02: feedback on x.py\\n# state-02: all passed"
    assert not any(line.startswith("# state-02: all") for line in lines)
    shown = rich_text(report_view(report))
    assert "x.py\\n# state-02: all passed" in shown

    from lessonkit.lesson.text import safe_name, safe_text

    name = "a\nb\r\tc\x1b[2J\u2028d\udcff.py"
    assert safe_name(name) == "a\\nb\\r\\tc\\x1b[2J\\u2028d\\xff.py"
    assert safe_text("two\nlines") == "two\nlines"  # learner output keeps its lines


def rich_text(renderable) -> str:
    from rich.console import Console

    console = Console(record=True, width=200, no_color=True)
    console.print(renderable)
    return console.export_text()


def test_bad_timeout_is_refused_by_the_parser(capsys):
    with pytest.raises(SystemExit) as caught:
        invoke(["check", "state-02", "x.py", "--timeout", "soon"])
    assert caught.value.code == 2


def test_batch_writes_csv_and_json_and_survives_bad_files(lesson, files, tmp_path):
    submissions = tmp_path / "class"
    submissions.mkdir()
    (submissions / "alice.py").write_text(make_attempt(lesson), encoding="utf-8")
    (submissions / "bob.py").write_text(make_attempt(lesson, MK_WRONG), encoding="utf-8")
    (submissions / "carol.py").write_bytes(b"\x00binary")
    (submissions / ".ipynb_checkpoints").mkdir()
    (submissions / ".ipynb_checkpoints" / "ignored.py").write_text("", encoding="utf-8")
    out_dir = tmp_path / "results"
    code, out, err = invoke(
        ["check", "state-02", "--batch", str(submissions), "--jobs", "1", "--out", str(out_dir)]
    )
    assert code == 0, err
    assert "1 of 3 files pass every task" in out
    rows = list(csv.DictReader((out_dir / "check-state-02.csv").open(encoding="utf-8")))
    assert [Path(r["file"]).name for r in rows] == ["alice.py", "bob.py", "carol.py"]
    assert [r["passed"] for r in rows] == ["yes", "no", "no"]
    assert rows[1]["make-it-yours"] == "failed" and rows[2]["repair"] == "error"
    assert "binary file" in rows[2]["repair message"]
    # Points come from the lesson's {grading} block; an optional task adds to the total only.
    assert [(r["points"], r["max points"]) for r in rows] == [("9", "8"), ("7", "8"), ("0", "8")]
    assert rows[1]["make-it-yours points"] == "0" and rows[1]["repair points"] == "3"
    assert len({r["seed"] for r in rows}) == 1 and rows[0]["seed"].isdigit()
    feedback = (out_dir / "feedback" / "bob.py.md").read_text(encoding="utf-8")
    assert "## Make it yours: failed" in feedback and "Hint:" in feedback
    assert sorted(p.name for p in (out_dir / "feedback").iterdir()) == [
        "alice.py.md",
        "bob.py.md",
        "carol.py.md",
    ]
    assert not any(p.name.endswith(".jsonl") for p in out_dir.iterdir())  # journal removed
    summary = json.loads((out_dir / "check-state-02.json").read_text(encoding="utf-8"))
    assert summary["files"] == 3 and summary["passed"] == 1
    assert summary["counts"]["make-it-yours"] == {"passed": 1, "failed": 1, "error": 1}
    assert list(summary["reports"][0]) == REPORT_KEYS


def _read_until(process: subprocess.Popen, needle: str, seconds: float) -> str:
    seen = ""
    deadline = time.monotonic() + seconds
    while needle not in seen:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"{needle!r} did not appear; output so far:\n{seen}")
        ready, _, _ = select.select([process.stdout], [], [], remaining)
        if ready:
            chunk = os.read(process.stdout.fileno(), 4096).decode()
            if not chunk:
                raise AssertionError(f"the watcher ended; output:\n{seen}")
            seen += chunk
    return seen


def test_watch_grades_every_save_and_stops_cleanly(lesson, tmp_path):
    path = tmp_path / "attempt.py"
    path.write_text(make_attempt(lesson), encoding="utf-8")
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    process = subprocess.Popen(
        [sys.executable, "-m", "lessonkit", "check", "state-02", str(path), "--watch"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        first = _read_until(process, "tasks passed", 120)
        assert "All 3 tasks passed (and 1 optional)" in first
        assert first.count("✓ passed") == 4
        assert "\x1b[" not in first  # NO_COLOR
        saved = time.monotonic()
        path.write_text(make_attempt(lesson, MK_WRONG), encoding="utf-8")
        second = _read_until(process, "tasks passed", 60)
        assert time.monotonic() - saved < 20
        assert "2 of 3 tasks passed" in second and "hard-coded" in second
        path.write_bytes(b"\x00")
        assert "binary file" in _read_until(process, "binary file", 30)
        process.send_signal(signal.SIGINT)
        # Under a loaded full suite the stop may wait for a learner child still starting.
        try:
            rest = process.communicate(timeout=90)[0].decode()
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGUSR1)  # lessonkit prints every thread's stack
            time.sleep(2)
            process.kill()
            stacks = process.communicate()[0].decode(errors="replace")
            raise AssertionError(f"Ctrl-C did not stop --watch in 90 s:\n{stacks}") from None
        assert process.returncode == 0
        assert "Stopped watching." in rest and "Traceback" not in first + second + rest
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_every_file_gets_a_child_of_its_own(lesson, files, tmp_path):
    """A file that patches JAX cannot touch the next file: no child runs two files."""
    from lessonkit.grade import Grader
    from lessonkit.run.limits import Limits
    from lessonkit.settings import GradingSettings

    patched = tmp_path / "patched.py"
    body = "jnp.allclose = lambda *a, **k: True\nnorm_squared = manual = 96.\n"
    patched.write_text(make_attempt(lesson, {"make-it-yours": body}), encoding="utf-8")
    with Grader(GradingSettings(Limits(timeout=30))) as grader:
        assert grader.grade(lesson, files / "solved.py").passed
        assert grader.children == 1
        assert not grader.grade(lesson, patched).passed
        report = grader.grade(lesson, files / "solved.py")
        assert report.passed and grader.children == 3


SECRET = "tok-b8-5ecret-d0-not-leak"
LEAKS = {
    "raise.py": "import os\nprint(dict(os.environ))\nraise RuntimeError(\n"
    '    " ".join(f"{k}={v}" for k, v in os.environ.items() if "TOKEN" in k)\n)\n',
    "value.py": 'import os\nnorm_squared = os.environ.get("INSTRUCTOR_TOKEN", "absent")\n'
    "manual = norm_squared\n",
}


def test_b8_the_graders_environment_never_reaches_learner_code(lesson, tmp_path, monkeypatch):
    """A token in the instructor's shell is not in the child, so not in any output."""
    monkeypatch.setenv("INSTRUCTOR_TOKEN", SECRET)
    monkeypatch.setenv("LESSONKIT_SECRET", SECRET)
    submissions = tmp_path / "class"
    submissions.mkdir()
    for name, body in LEAKS.items():
        attempt = make_attempt(lesson, {"make-it-yours": body})
        (submissions / name).write_text(attempt, encoding="utf-8")
    out_dir = tmp_path / "results"
    argv = ["check", "state-02", "--batch", str(submissions), "--jobs", "1"]
    code, out, err = invoke([*argv, "--out", str(out_dir)])
    assert code == 0, err
    written = {p.name: p.read_text(encoding="utf-8") for p in out_dir.rglob("*") if p.is_file()}
    assert {"check-state-02.csv", "check-state-02.json", "raise.py.md"} <= set(written)
    rows = list(csv.DictReader((out_dir / "check-state-02.csv").open(encoding="utf-8")))
    assert [r["make-it-yours"] for r in rows] == ["error", "failed"], rows
    for name, text in {"stdout": out, "stderr": err, **written}.items():
        assert SECRET not in text, name
