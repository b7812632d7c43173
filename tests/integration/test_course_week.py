"""A week of a course, replayed through the commands as docs/instructor.md writes them, with every
figure the instructor posts compared with a count made by hand.

The class: 22 students on the roster; 17 submit state-02 (8 points for its three required
tasks, 1 extra for the optional one). Monday's folder holds 16 of their files and a TA's
notes; on Wednesday two students resubmit (`frank_v2.py`, `zoe_v2.py`), a late student
arrives, and the whole folder is graded again; on Thursday an old file of Frank's is
graded in another batch. The folder is also graded as two shards, merged twice into a
second gradebook.

By hand (make-it-yours 2, nested-model 3, repair 3, adam-by-hand 1 extra):

- ana ... jon (10): solved, the optional task left out: 8.
- kim, lou: solved with the optional task: 9, that is 8 and 1 extra.
- frank: make-it-yours hard-coded (6), then v2 solved (8), then an older draft graded on
  Thursday (6): v2 is his newest submission, so 8.
- zoe: make-it-yours hard-coded (6), then v2 solved with the optional task: 9 (8 +1 extra).
- sam: a syntax error in make-it-yours: 6. tim: an endless loop in make-it-yours: 0.
- lea: late, solved, the optional task left out: 8.
- mia, ned, ola, pia, quin: nothing submitted, no grade.

sam's syntax error stops only its own cell (each cell is compiled on its own), so the two
later tasks pass: 3 + 3 = 6. tim's loop runs out the time limit in the first task's cell,
and nothing after it is reached: 0.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shlex
import signal
import subprocess
import sys
from html import unescape
from pathlib import Path

import pytest

from conftest import REPO, invoke, make_attempt

PLAIN = ("ana", "ben", "cai", "dev", "eli", "fay", "gus", "hal", "ivy", "jon")
EXTRA = ("kim", "lou")
NEVER = ("mia", "ned", "ola", "pia", "quin")
ROSTER = (*PLAIN, *EXTRA, "frank", "zoe", "sam", "tim", "lea", *NEVER)
OPTIONAL = ("adam-by-hand",)
HARD_CODED = {"make-it-yours": "norm_squared = 96.\nmanual = 96.\n"}
SYNTAX = {"make-it-yours": "norm_squared = = 1.\n"}
# An endless loop that sleeps: it runs out the time limit as a spinning one does, without
# spending the shared machine's CPU for the three batches that grade it.
LOOP = {"make-it-yours": "import time\n\nwhile True:\n    time.sleep(0.5)\n"}
MONDAY, WEDNESDAY, LONG_AGO = 1_000_000.0, 2_000_000.0, 500_000.0

COUNTED = {
    **{s: 8 for s in PLAIN},
    **{s: 9 for s in EXTRA},
    "frank": 8,
    "zoe": 9,
    "sam": 6,
    "tim": 0,
    "lea": 8,
    **{s: None for s in NEVER},
}
EXTRA_POINTS = {s: (1 if s in (*EXTRA, "zoe") else 0) for s in ROSTER}


def _write(folder: Path, name: str, text: str, mtime: float) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    os.utime(folder / name, (mtime, mtime))


@pytest.fixture(scope="module")
def week(lesson, tmp_path_factory) -> dict:
    """Every command of the week, run once; each test reads what it printed or wrote."""
    root = tmp_path_factory.mktemp("week")
    roster = root / "roster.csv"
    lines = ["id,name,email,sis_user_id,sis_login_id,section,lms_id"]
    lines += [f"{s},{s.title()},{s}@example.edu,S-{s},,A,{100 + i}" for i, s in enumerate(ROSTER)]
    roster.write_text("\n".join(lines) + "\n", encoding="utf-8")
    folder = root / "week1"
    solved = make_attempt(lesson, unsolved=OPTIONAL)
    for i, student in enumerate(PLAIN):
        _write(folder, f"{student}.py", solved + f"# {student}\n", MONDAY + i)
    for student in EXTRA:
        _write(folder, f"{student}.py", make_attempt(lesson) + f"# {student}\n", MONDAY)
    for student in ("frank", "zoe"):
        wrong = make_attempt(lesson, HARD_CODED, unsolved=OPTIONAL) + f"# {student}\n"
        _write(folder, f"{student}.py", wrong, MONDAY)
    _write(folder, "sam.py", make_attempt(lesson, SYNTAX, unsolved=OPTIONAL), MONDAY)
    _write(folder, "tim.py", make_attempt(lesson, LOOP, unsolved=OPTIONAL), MONDAY)
    _write(folder, "notes_from_ta.py", "# remember the quiz\n", MONDAY)
    book = root / "course.sqlite"
    batch = ["check", "state-02", "--batch", str(folder), "--gradebook", str(book)]
    batch += ["--jobs", "2", "--timeout", "10"]
    ran = {"monday": invoke([*batch, "--roster", str(roster), "--out", str(root / "mon")])}
    _write(folder, "frank_v2.py", solved + "# frank, again\n", WEDNESDAY)
    _write(folder, "zoe_v2.py", make_attempt(lesson) + "# zoe, again\n", WEDNESDAY)
    _write(folder, "lea.py", solved + "# lea, late\n", WEDNESDAY)
    ran["wednesday"] = invoke([*batch, "--out", str(root / "wed")])  # the roster is kept
    old = make_attempt(lesson, HARD_CODED, unsolved=OPTIONAL) + "# frank, an old draft\n"
    _write(root / "thursday", "frank_old.py", old, LONG_AGO)
    thursday = ["check", "state-02", "--batch", str(root / "thursday"), "--gradebook", str(book)]
    ran["thursday"] = invoke([*thursday, "--out", str(root / "thu"), "--timeout", "10"])
    for k in (1, 2):
        shard = ["check", "state-02", "--batch", str(folder), "--shard", f"{k}/2", "--seed", "7"]
        ran[f"shard{k}"] = invoke([*shard, "--out", str(root / f"s{k}"), "--timeout", "10"])
    merge = ["merge", str(root / "s1"), str(root / "s2"), "--gradebook", str(root / "sh.sqlite")]
    ran["merge1"] = invoke([*merge, "--out", str(root / "m1"), "--roster", str(roster)])
    ran["merge2"] = invoke([*merge, "--out", str(root / "m2")])  # the same shards again
    for name, (code, _, err) in ran.items():
        assert code == 0, (name, err)
    return {"root": root, "book": book, "ran": ran}


def _grades(book: Path) -> dict:
    code, out, err = invoke(["grades", "--gradebook", str(book), "--json"])
    assert code == 0, err
    return json.loads(out)


def test_monday_keeps_each_rostered_file_and_names_the_one_no_student_matches(week):
    _, _, err = week["ran"]["monday"]
    assert "Kept 16 new attempt(s) in the gradebook" in err
    assert "no student in the roster matches `notes_from_ta.py`" in err


def test_wednesday_grades_only_what_is_new_and_stores_nothing_twice(week):
    _, _, err = week["ran"]["wednesday"]
    # tim's time limit may have been the machine's: his file is graded again, not reused
    assert "15 unchanged since their last grading (shown as graded then); 5 new." in err
    assert "Graded 5 file(s)" in err  # the three new files, the TA's notes and tim's
    assert "Kept 3 new attempt(s)" in err and "15 share a grading already kept" in err
    assert "1 graded again in their earlier grading's place" in err
    rows = list(csv.DictReader((week["root"] / "wed" / "check-state-02.csv").open()))
    assert len(rows) == 20  # the batch's own CSV still lists every file in the folder


def test_the_counted_grades_are_the_hand_counted_ones(week):
    table = _grades(week["book"])
    assert table["lessons"][0]["max_points"] == 8
    points = {s["id"]: s["points"]["state-02"] for s in table["students"]}
    extra = {s["id"]: s["extra"]["state-02"] for s in table["students"]}
    assert points == COUNTED  # no `frank_v2`, no `notes_from_ta`: no student made up
    assert extra == EXTRA_POINTS
    assert sum(p for p in points.values() if p is not None) == 10 * 8 + 2 * 9 + 8 + 9 + 6 + 8


def test_latest_is_franks_newest_file_though_an_older_one_was_graded_after_it(week):
    _, _, err = week["ran"]["thursday"]
    assert "Kept 1 new attempt(s)" in err
    argv = ["grades", "--gradebook", str(week["book"]), "--student", "frank", "--json"]
    attempts = json.loads(invoke(argv)[1])
    assert [(a["file"], a["points"], a["counts"]) for a in attempts] == [
        ("frank_old.py", 6, False),
        ("frank.py", 6, False),
        ("frank_v2.py", 8, True),
    ]
    code, out, _ = invoke(["grades", "--gradebook", str(week["book"])])
    assert code == 0 and "9 (+1 extra)" in out and "(/8)" in out


def test_the_exports_say_extra_credit_and_the_maximum(week, tmp_path):
    book = week["book"]
    canvas, tasks = tmp_path / "canvas.csv", tmp_path / "tasks.csv"
    for kind, path in (("canvas", canvas), ("csv", tasks)):
        argv = ["grades", "--gradebook", str(book), "--export", kind, "--output", str(path)]
        assert invoke(argv)[0] == 0
    rows = list(csv.reader(io.StringIO(canvas.read_text(encoding="utf-8"))))
    assert rows[1] == ["    Points Possible", "", "", "", "", "8"]
    by_name = {r[0]: r for r in rows[2:]}
    assert by_name["Zoe"] == ["Zoe", "113", "S-zoe", "", "A", "9"]  # 14th on the roster: 100 + 13
    assert by_name["Mia"][-1] == "" and len(rows) == 2 + len(ROSTER)
    task_rows = list(csv.DictReader(io.StringIO(tasks.read_text(encoding="utf-8"))))
    (zoe_optional,) = [r for r in task_rows if r["student"] == "zoe" and r["optional"] == "yes"]
    assert (zoe_optional["status"], zoe_optional["points"], zoe_optional["max_points"]) == (
        "passed",
        "1",
        "1",
    )
    assert zoe_optional["attempts"] == "2"
    assert all(float(r["points"]) <= float(r["max_points"]) for r in task_rows)


def test_the_report_counts_a_task_left_out_as_not_passed_and_errors_by_cause(week, tmp_path):
    page = tmp_path / "report.html"
    argv = ["report", "state-02", "--gradebook", str(week["book"]), "--output", str(page)]
    code, out, err = invoke(argv)
    assert code == 0, err
    assert "17 students, 20 submissions" in out  # 16 on Monday, 3 on Wednesday, 1 Thursday
    text = unescape(page.read_text(encoding="utf-8"))
    assert "Adam's first step by hand" in text
    # Only kim, lou and zoe attempted (and passed) the optional task: 3 of 17, 18 %.
    assert "18% (3 of 17)" in text
    # make-it-yours: everyone but sam and tim: 15 of 17; the later tasks: all but tim.
    assert "88% (15 of 17)" in text and text.count("94% (16 of 17)") == 2
    assert "(error, syntax error)" in text and "(error, time limit)" in text
    assert "SyntaxError" in text and "time limit of 10 s" in text
    assert "3 students earned extra points" in text


def test_merging_the_shards_twice_keeps_each_attempt_once_and_makes_no_student_up(week):
    _, _, first = week["ran"]["merge1"]
    _, _, second = week["ran"]["merge2"]
    assert "Kept 19 new attempt(s)" in first  # 20 files, the TA's notes no one's
    assert "Kept 0 new attempt(s)" in second and "19 share a grading already kept" in second
    assert "no student in the roster matches `notes_from_ta.py`" in second
    table = _grades(week["root"] / "sh.sqlite")
    points = {s["id"]: s["points"]["state-02"] for s in table["students"]}
    assert points == COUNTED | {"frank": 8}  # frank's v2 is his newest in the shards too


def test_regrade_shows_progress_when_not_on_a_terminal(week, tmp_path):
    copy = tmp_path / "course.sqlite"
    copy.write_bytes(week["book"].read_bytes())
    argv = ["regrade", "state-02", "--gradebook", str(copy), "--student", "zoe"]
    code, out, err = invoke([*argv, "--timeout", "10"])
    assert code == 0, err
    assert "[1/2]" in err and "[2/2]" in err
    assert "Regraded 2 attempt(s)" in out and "No student's points changed" in out


def test_regrade_refuses_kept_bytes_that_are_not_the_students(week, tmp_path):
    """Red team D5: a gradebook changed by hand (tim's kept file swapped for ana's solved
    one) must not regrade other bytes as tim's; before the check, `regrade` printed
    `tim: 0 -> 8`. Nothing is graded and tim keeps his 0."""
    import sqlite3

    copy = tmp_path / "course.sqlite"
    copy.write_bytes(week["book"].read_bytes())
    with sqlite3.connect(copy) as db:
        (tim,) = db.execute("SELECT sha256 FROM attempts WHERE student = 'tim'").fetchone()
        (ana,) = db.execute("SELECT sha256 FROM attempts WHERE student = 'ana'").fetchone()
        db.execute(
            "UPDATE files SET content = (SELECT content FROM files WHERE sha256 = ?) "
            "WHERE sha256 = ?",
            (ana, tim),
        )
    argv = ["regrade", "state-02", "--gradebook", str(copy), "--student", "tim"]
    code, out, err = invoke([*argv, "--timeout", "10"])
    assert code == 2, (out, err)
    assert "(tim, tim.py) do not hash to its sha256" in err
    assert "Regraded" not in out
    points = {s["id"]: s["points"]["state-02"] for s in _grades(copy)["students"]}
    assert points["tim"] == 0


def test_ctrl_c_on_a_batch_names_what_was_kept_and_the_command_that_goes_on(lesson, tmp_path):
    folder = tmp_path / "week1"
    solved = make_attempt(lesson, unsolved=OPTIONAL)
    for number in range(6):
        _write(folder, f"s{number}.py", solved + f"# {number}\n", MONDAY)
    argv = ["check", "state-02", "--batch", str(folder), "--jobs", "1", "--out", "out"]
    child = subprocess.Popen(
        [sys.executable, "-m", "lessonkit", *argv],
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "LESSONKIT_ROOT": str(REPO)},
    )
    assert child.stderr is not None
    for line in child.stderr:
        if line.startswith("[1/6]"):
            break
    child.send_signal(signal.SIGINT)  # our own child, as a person's Ctrl-C
    said = child.stderr.read()
    assert child.wait(timeout=120) == 130
    match = re.search(r"Interrupted: (\d) of 6 file\(s\) graded and kept", said)
    assert match and 1 <= int(match[1]) < 6, said
    command = said.strip().splitlines()[-1].strip()
    assert command == "lessonkit " + shlex.join([*argv, "--resume"])
    code, _, err = invoke(shlex.split(command)[1:], cwd=tmp_path)
    assert code == 0, err
    assert f"Kept {match[1]} result(s) from the interrupted batch." in err
    assert len(list(csv.DictReader((tmp_path / "out" / "check-state-02.csv").open()))) == 6
