"""A failure of the grader is never a grade (issue 51).

A learner child that dies of something not the learner's doing (here: killed by the parent
side with SIGABRT before it ran a line of the file, as a machine out of memory or a broken
start would) is run once more; when the second child fails too, the file is reported "not
graded: grader failure", with no task verdict, and a batch neither journals it nor keeps it
in the gradebook. A crash of the learner's own code, the same in both runs, stays their error.
"""

from __future__ import annotations

import json
import os
import signal

import pytest

from lessonkit.grade.channel.child_pool import ChildPool
from lessonkit.grade.grader import Grader
from lessonkit.run import isolation
from lessonkit.run.limits import Limits
from lessonkit.settings import GradingSettings

from conftest import invoke, make_attempt

pytestmark = pytest.mark.integration


def _abort_children(monkeypatch, times: int) -> list[int]:
    """Every learner child handed out is killed with SIGABRT before its file is sent, the
    first `times` of them; the ids killed."""
    take = ChildPool.take
    killed: list[int] = []

    def aborted(self: ChildPool):
        child = take(self)
        if len(killed) < times:
            os.kill(child.pid, signal.SIGABRT)
            killed.append(child.pid)
        return child

    monkeypatch.setattr(ChildPool, "take", aborted)
    return killed


def test_a_child_aborted_before_the_file_ran_is_run_again(lesson, tmp_path, monkeypatch):
    solved = tmp_path / "solved.py"
    solved.write_text(make_attempt(lesson), encoding="utf-8")
    killed = _abort_children(monkeypatch, times=1)
    with Grader(GradingSettings(Limits(timeout=60))) as grader:
        report = grader.grade(lesson, solved)
    assert len(killed) == 1
    assert report.passed, report.to_json()


def test_a_grader_failure_twice_is_not_graded_and_not_kept(lesson, tmp_path, monkeypatch):
    folder = tmp_path / "week"
    folder.mkdir()
    (folder / "alice.py").write_text(make_attempt(lesson), encoding="utf-8")
    monkeypatch.setattr(isolation, "find_sandbox", lambda: (None, "as in a gVisor container"))
    killed = _abort_children(monkeypatch, times=2)  # the learner's process itself, unsandboxed
    out, book = tmp_path / "out", tmp_path / "book.sqlite"
    argv = ["check", lesson.meta.id, "--batch", str(folder), "--out", str(out), "--jobs", "1"]
    code, said, err = invoke(
        [*argv, "--gradebook", str(book), "--run-submissions-as-me", "--timeout", "60"]
    )
    assert code == 1, said + err
    assert len(killed) == 2
    assert "Not graded: grader failure" in said + err and "--resume" in said + err
    summary = json.loads((out / f"check-{lesson.meta.id}.json").read_text("utf-8"))
    assert summary["points"] == {} and list(summary["not graded"]) == [str(folder / "alice.py")]
    assert "abort" in summary["not graded"][str(folder / "alice.py")]
    journal = (out / f".check-{lesson.meta.id}.journal.jsonl").read_text("utf-8")
    assert len(journal.splitlines()) == 1  # the header only: --resume grades it again
    feedback = (out / "feedback" / "alice.py.md").read_text("utf-8")
    assert "Not graded: grader failure" in feedback and "passed" not in feedback
    _, listed, _ = invoke(["grades", "--gradebook", str(book), "--json"])
    assert "alice" not in listed

    monkeypatch.undo()  # the grader works again: --resume grades the file
    code, said, err = invoke(
        [*argv, "--gradebook", str(book), "--run-submissions-as-me", "--timeout", "60", "--resume"]
    )
    assert code == 0, said + err
    _, listed, _ = invoke(["grades", "--gradebook", str(book), "--json"])
    assert "alice" in listed
    summary = json.loads((out / f"check-{lesson.meta.id}.json").read_text("utf-8"))
    assert summary["passed"] == 1 and summary["not graded"] == {}


def test_the_learners_own_abort_stays_their_error_with_its_cell(lesson, tmp_path):
    crashing = tmp_path / "crash.py"
    crashing.write_text(make_attempt(lesson, {"make-it-yours": "import os\nos.abort()\n"}))
    with Grader(GradingSettings(Limits(timeout=60))) as grader:
        report = grader.grade(lesson, crashing)
    errors = [t for t in report.tasks if t.status == "error"]
    assert errors and all("crashed (abort)" in t.message for t in errors), report.to_json()
    assert any("line" in t.message for t in errors)
