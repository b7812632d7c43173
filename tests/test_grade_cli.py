"""`lessonkit check` as a person runs it: as JSON, with its defaults, in bulk, on every save."""

from __future__ import annotations

import csv
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, REPORT_KEYS, copy_lesson_repo, invoke, make_attempt

MK_WRONG = {"make-it-yours": "norm_squared = 96.\nmanual = 96.\n"}


@pytest.fixture(scope="module")
def files(lesson, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("check-cli")
    (folder / "solved.py").write_text(make_attempt(lesson), encoding="utf-8")
    (folder / "wrong.py").write_text(make_attempt(lesson, MK_WRONG), encoding="utf-8")
    return folder


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


def test_started_copies_are_graded_and_found_by_default(tmp_path, lesson):
    """`start DIR` anywhere, then `check` without FILE grades that copy, not the lesson's."""
    root = tmp_path / "repo"
    copy_lesson_repo(root)
    code, _, err = invoke(["start", "state-02", str(tmp_path / "my work")], root=root, cwd=root)
    assert code == 0, err
    script = tmp_path / "my work" / "state-02.py"
    solved = script.read_text(encoding="utf-8")
    for task in lesson.tasks:
        solved = solved.replace(task.scaffold, task.solution)
    script.write_text(solved, encoding="utf-8")
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


def test_resume_keeps_what_an_interrupted_batch_graded(lesson, tmp_path):
    """Results journalled before Ctrl-C are kept: only the rest is graded again."""
    submissions = tmp_path / "class"
    submissions.mkdir()
    (submissions / "alice.py").write_text(make_attempt(lesson), encoding="utf-8")
    (submissions / "bob.py").write_text(make_attempt(lesson, MK_WRONG), encoding="utf-8")
    journalled = {
        "schema": 1,
        "lesson": "state-02",
        "file": str(submissions / "alice.py"),
        "passed": False,  # not what grading alice.py gives: proof that it was kept, not redone
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
        "seed": 1234,
    }
    journal = submissions / ".check-state-02.journal.jsonl"
    journal.write_text(
        json.dumps({"path": "alice.py", "report": journalled}) + "\n" + '{"path": "bo',
        encoding="utf-8",
    )
    code, out, err = invoke(["check", "state-02", "--batch", str(submissions), "--resume"])
    assert code == 0, err
    assert "Kept 1 result(s) from the interrupted batch" in err and "seed 1234" in out
    rows = list(csv.DictReader((submissions / "check-state-02.csv").open(encoding="utf-8")))
    assert [(r["make-it-yours message"], r["seed"]) for r in rows] == [
        ("from the journal", "1234"),
        (rows[1]["make-it-yours message"], "1234"),
    ]
    assert rows[1]["make-it-yours"] == "failed"
    assert "[2/2] bob.py: not passed" in err


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
        rest = process.communicate(timeout=30)[0].decode()
        assert process.returncode == 0
        assert "Stopped watching." in rest and "Traceback" not in first + second + rest
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_every_file_gets_a_child_of_its_own(lesson, files, tmp_path):
    """A file that patches JAX cannot touch the next file: no child runs two files."""
    from lessonkit.grade import Grader

    patched = tmp_path / "patched.py"
    body = "jnp.allclose = lambda *a, **k: True\nnorm_squared = manual = 96.\n"
    patched.write_text(make_attempt(lesson, {"make-it-yours": body}), encoding="utf-8")
    with Grader(timeout=30) as grader:
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
