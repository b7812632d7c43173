"""One journey through `lessonkit check --batch --gradebook`: files that arrive out of
order, a lesson changed without a revision bump, and a gradebook that cannot be written.

By hand (make-it-yours 2, nested-model 3, repair 3; adam-by-hand 1 extra, left out): Ana's
Monday file solves every required task, 8 of 8; Tuesday's is the blank practice file, 0;
Wednesday's is Monday's bytes again. Tuesday's reaches the instructor late and is graded in
a second batch. Her newest submission is Wednesday's: 8 of 8. With repair worth 4 points
(no revision bump), her Wednesday file is 9 of 9.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import copy_lesson_repo, invoke, make_attempt

MONDAY, TUESDAY, WEDNESDAY = 1_000_000.0, 1_086_400.0, 1_172_800.0
OPTIONAL = ("adam-by-hand",)
TASKS = ("make-it-yours", "nested-model", "repair", "adam-by-hand")


def _write(folder: Path, name: str, text: str, mtime: float) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    os.utime(folder / name, (mtime, mtime))


def _ana(book: Path, root: Path | None = None) -> float | None:
    code, out, err = invoke(["grades", "--gradebook", str(book), "--json"], root=root)
    assert code == 0, err
    (row,) = [s for s in json.loads(out)["students"] if s["id"] == "ana"]
    return row["points"]["state-02"]


@pytest.fixture(scope="module")
def journey(lesson, tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("journey")
    roster = root / "roster.csv"
    roster.write_text("id,name,email\nana,Ana,ana@example.edu\n", encoding="utf-8")
    right = make_attempt(lesson, unsolved=OPTIONAL)
    _write(root / "mon", "ana.py", right, MONDAY)
    _write(root / "mon", "ana_v3.py", right, WEDNESDAY)  # a revert: Monday's bytes again
    _write(root / "tue", "ana_v2.py", make_attempt(lesson, unsolved=TASKS), TUESDAY)
    book = root / "book" / "course.sqlite"
    book.parent.mkdir()
    ran = {}
    for day in ("mon", "tue"):
        argv = ["check", "state-02", "--batch", str(root / day), "--gradebook", str(book)]
        argv += ["--roster", str(roster), "--out", str(root / f"out-{day}"), "--timeout", "20"]
        ran[day] = invoke(argv)
        assert ran[day][0] == 0, ran[day][2]
    return {"root": root, "book": book, "ran": ran, "ana_after_tuesday": _ana(book)}


def test_a_late_file_graded_in_a_second_batch_leaves_wednesdays_attempt_counting(journey):
    """Red team: the counting 'latest' was the blank Tuesday file, 0 of 8."""
    assert journey["ana_after_tuesday"] == 8
    _, _, monday = journey["ran"]["mon"]
    assert "Kept 2 new attempt(s)" in monday and "1 share a grading already kept" in monday


def test_a_lesson_changed_without_a_revision_bump_is_graded_again_and_said(journey, tmp_path):
    """Red team: the next batch kept '1 unchanged' and counted the old grading."""
    root = tmp_path / "repo"
    lesson_md = copy_lesson_repo(root) / "lesson.md"
    text = lesson_md.read_text(encoding="utf-8")
    lesson_md.write_text(text.replace("  repair: 3\n", "  repair: 4\n", 1), encoding="utf-8")
    book = tmp_path / "course.sqlite"
    shutil.copyfile(journey["book"], book)
    argv = ["check", "state-02", "--batch", str(journey["root"] / "mon"), "--gradebook"]
    argv += [str(book), "--out", str(tmp_path / "out"), "--timeout", "20"]
    code, _, err = invoke(argv, root=root)
    assert code == 0, err
    assert "2 file(s) were graded into" in err and "under another grading fingerprint" in err
    assert "graded again" in err
    assert "1 graded again in their earlier grading's place" in err
    assert _ana(book, root) == 9  # 2 + 3 + 4, graded as the lesson is now


def test_a_gradebook_that_cannot_be_written_is_refused_before_any_grading(
    journey, lesson, tmp_path
):
    """Red team: every file was graded, then 'attempt to write a readonly database'."""
    book = journey["book"]
    out = tmp_path / "out"
    _write(tmp_path / "thu", "ana_v4.py", make_attempt(lesson), WEDNESDAY + 86_400)  # new
    argv = ["check", "state-02", "--batch", str(tmp_path / "thu"), "--gradebook"]
    argv += [str(book), "--out", str(out), "--timeout", "20"]
    if os.geteuid() != 0:
        book.chmod(0o444)  # its folder stays writable: SQLite makes its -wal and -shm there
        try:
            code, _, err = invoke(argv)
        finally:
            book.chmod(0o644)
    else:  # root writes any file: the gradebook file is mounted read-only instead
        if shutil.which("unshare") is None:
            pytest.skip("needs unshare to make a read-only file as root")
        command = f'mount --bind -o ro "{book}" "{book}" && exec "$@"'
        done = subprocess.run(
            ["unshare", "-m", "sh", "-c", command, "sh", sys.executable, "-m", "lessonkit", *argv],
            capture_output=True,
            text=True,
            timeout=600,
        )
        code, err = done.returncode, done.stderr
    assert code != 0
    assert "cannot use the gradebook" in err
    journal = out / ".check-state-02.journal.jsonl"
    lines = journal.read_text().splitlines() if journal.exists() else []
    assert sum('"report"' in line for line in lines) == 0  # graded zero files
