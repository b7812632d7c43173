"""A failure of the grader is never a grade (issue 51), and a learner's crash is the
learner's (issue 59).

A learner child that dies of something not the learner's doing (here: killed by the parent
side with SIGABRT before it ran a line of the file, as a machine out of memory or a broken
start would; or its starter ended while the file ran) is run once more; when the second
child fails too, the file is reported "not graded: grader failure", with no task verdict,
and a batch keeps it out of every count and the gradebook, for `--resume`. A crash once the
learner's code began is their error with its cell, wherever it lands in each run.
"""

from __future__ import annotations

import json
import os
import signal
import threading

import pytest

from lessonkit.grade.channel.child_handle import ChildHandle
from lessonkit.grade.channel.child_pool import ChildPool
from lessonkit.grade.grader import Grader
from lessonkit.run import isolation
from lessonkit.run.forking import forks_children
from lessonkit.run.limits import Limits
from lessonkit.settings import GradingSettings

from conftest import invoke, make_attempt
from fault_cohort import CRASH_AT_A_DRAWN_CELL

pytestmark = pytest.mark.integration


def _crashing_attempt(lesson) -> str:
    return make_attempt(lesson, {t.id: CRASH_AT_A_DRAWN_CELL + t.solution for t in lesson.tasks})


def _crashed_with_its_cell(report: dict) -> bool:
    """A report that holds the learner's segmentation fault as their error, with its cell."""
    errors = [t for t in report["tasks"] if t["status"] == "error"]
    said = " ".join(t["message"] for t in errors)
    return (
        report["not graded"] is None
        and "crashed (segmentation fault)" in said
        and ("did not finish" in said or "line" in said)
    )


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
    _, entry = (json.loads(line) for line in journal.splitlines())  # --resume grades it again
    assert entry["path"] == "alice.py" and "abort" in entry["report"]["not graded"]
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


def test_a_crash_at_a_cell_drawn_afresh_in_each_child_is_the_learners_error(lesson, tmp_path):
    crashing = tmp_path / "crash.py"
    crashing.write_text(_crashing_attempt(lesson), encoding="utf-8")
    with Grader(GradingSettings(Limits(timeout=60))) as grader:
        reports = [grader.grade(lesson, crashing) for _ in range(2)]
        started = grader.pool.children
    assert all(_crashed_with_its_cell(r.to_json()) for r in reports), [r.to_json() for r in reports]
    assert started <= 2 + grader.pool.prestart  # one child per file: none was run again


def test_a_crash_drawn_afresh_is_graded_on_a_batch_and_on_resume(lesson, tmp_path, monkeypatch):
    folder = tmp_path / "week"
    folder.mkdir()
    (folder / "crash.py").write_text(_crashing_attempt(lesson), encoding="utf-8")
    (folder / "ok.py").write_text(make_attempt(lesson), encoding="utf-8")
    out = tmp_path / "out"
    argv = ["check", lesson.meta.id, "--batch", str(folder), "--out", str(out), "--jobs", "1"]
    argv += ["--timeout", "60"]
    code, said, err = invoke(argv)  # in the sandbox, where there is one
    assert code == 0 and "grader failure" not in said + err, said + err
    summary = json.loads((out / f"check-{lesson.meta.id}.json").read_text("utf-8"))
    assert summary["not graded"] == {} and summary["passed"] == 1
    by_name = {os.path.basename(r["file"]): r for r in summary["reports"]}
    assert _crashed_with_its_cell(by_name["crash.py"]), by_name["crash.py"]

    monkeypatch.setattr(isolation, "find_sandbox", lambda: (None, "as in a gVisor container"))
    killed = _abort_children(monkeypatch, times=4)  # the grader fails on both files
    code, said, err = invoke([*argv, "--run-submissions-as-me"])
    assert len(killed) == 4 and "Not graded: grader failure on 2 file(s)" in said + err
    monkeypatch.undo()
    code, said, err = invoke([*argv, "--resume"])  # graded now, the crash the learner's
    summary = json.loads((out / f"check-{lesson.meta.id}.json").read_text("utf-8"))
    by_name = {os.path.basename(r["file"]): r for r in summary["reports"]}
    assert summary["not graded"] == {} and _crashed_with_its_cell(by_name["crash.py"]), said + err


@pytest.mark.skipif(not forks_children(), reason="learner children are forks of a starter here")
def test_a_child_whose_starter_ended_while_the_file_ran_is_run_again(lesson, tmp_path, monkeypatch):
    """The grader's own end of a child, after the learner's code began, is still retried."""
    solved, slow = tmp_path / "solved.py", tmp_path / "slow.py"
    solved.write_text(make_attempt(lesson), "utf-8")
    once = "import sys, time\nif not hasattr(sys, 'slept'):\n    sys.slept = time.sleep(3)\n"
    slow.write_text(make_attempt(lesson, prefix=once), "utf-8")  # 3 s in its first cell
    send, timers = ChildHandle.send, []

    def send_then_end_the_starter(self: ChildHandle, request) -> bool:
        """Kill the starter a second after the first learner file is sent (it sleeps then)."""
        if not self.trusted and not timers:
            pid = grader.pool._starter._child.process.pid
            timers.append(threading.Timer(1.0, os.kill, (pid, signal.SIGKILL)))
            timers[0].start()
        return send(self, request)

    with Grader(GradingSettings(Limits(timeout=60))) as grader:
        assert grader.grade(lesson, solved).passed  # the reference's report is kept now
        starter = grader.pool._starter
        monkeypatch.setattr(ChildHandle, "send", send_then_end_the_starter)
        report = grader.grade(lesson, slow)
        timers[0].join()
    assert not starter.alive and report.passed, report.to_json()


def test_a_shard_with_a_file_not_graded_is_sealed_and_merged_without_it(
    lesson, tmp_path, monkeypatch
):
    """A file not graded never keeps its shard out of the gradebook: the shard is sealed and
    names it, `merge` takes the rest and names it, and `--resume` grades it later."""
    folder = tmp_path / "week"
    folder.mkdir()
    for name in ("ann.py", "ben.py"):
        (folder / name).write_text(make_attempt(lesson), encoding="utf-8")
    out, merged, book = tmp_path / "shard", tmp_path / "merged", tmp_path / "book.sqlite"
    argv = ["check", lesson.meta.id, "--batch", str(folder), "--shard", "1/1", "--seed", "5"]
    argv += ["--out", str(out), "--jobs", "1", "--timeout", "60"]
    merge = ["merge", str(out), "--out", str(merged), "--gradebook", str(book)]
    monkeypatch.setattr(isolation, "find_sandbox", lambda: (None, "as in a gVisor container"))
    killed = _abort_children(monkeypatch, times=2)  # the first file taken, and its retry
    code, said, err = invoke([*argv, "--run-submissions-as-me"])
    assert code == 1 and len(killed) == 2 and "Not graded: grader failure on 1" in said + err
    lines = (out / f"check-{lesson.meta.id}.shard.jsonl").read_text("utf-8").splitlines()
    *entries, seal = (json.loads(line) for line in lines[1:])
    assert seal["seal"]["entries"] == 2  # sealed, over both files
    failed = [e["path"] for e in entries if e["report"]["not graded"]]
    assert len(failed) == 1
    (graded,) = {"ann.py", "ben.py"} - set(failed)

    code, said, err = invoke(merge)
    assert code == 1, said + err
    assert f"{failed[0]} (shard 1/1)" in err and "--resume" in err, err
    summary = json.loads((merged / f"check-{lesson.meta.id}.json").read_text("utf-8"))
    assert [os.path.basename(f) for f in summary["not graded"]] == failed
    students = json.loads(invoke(["grades", "--gradebook", str(book), "--json"])[1])["students"]
    assert [s["id"] for s in students] == [graded.removesuffix(".py")]

    monkeypatch.undo()  # the grader works again: --resume grades the file, merge takes it
    code, said, err = invoke([*argv, "--resume"])
    assert code == 0 and "Graded 1 file(s)" in said + err, said + err
    code, said, err = invoke(merge)
    assert code == 0 and "2 of 2 files pass every task" in said, said + err
    students = json.loads(invoke(["grades", "--gradebook", str(book), "--json"])[1])["students"]
    assert sorted(s["id"] for s in students) == ["ann", "ben"]
