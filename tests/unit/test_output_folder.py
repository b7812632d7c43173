"""A batch's outputs are written relative to the output folder opened once (issue 50, item 5).

The output folder was checked once, then written by name: a journal or `feedback/` replaced
by a link while the batch graded was written through, each entry (with the submission's
bytes) appended to a file outside `--out`, mode 0644, against README's "never follow one"
and "always private". Here a batch whose grading is a function (no child) swaps them between
two entries, at a point in the batch loop, and nothing may be written outside `--out`.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from lessonkit.errors import UsageError
from lessonkit.grade.batches import (
    BatchEntry,
    BatchKind,
    FolderBatch,
    Shard,
    check_seal,
    grade_folder,
    grading_key,
    read_sealed,
)
from lessonkit.grade.judging.results import PASSED, GradeReport, TaskResult
from lessonkit.run import isolation

pytestmark = pytest.mark.skipif(os.name != "posix", reason="links and dir_fd are POSIX")
NAMES = ("ana.py", "bob.py", "cy.py")


@pytest.fixture(autouse=True)
def _no_sandbox_probe(monkeypatch) -> None:
    """The batch's settings are chosen without starting a process (the unit tier's rule)."""
    monkeypatch.setattr(isolation, "find_sandbox", lambda: (None, "none in a unit test"))
    monkeypatch.setattr(isolation, "root_isolation", lambda: "user")


def _report(path: Path) -> GradeReport:
    task = TaskResult("a", "A task", PASSED, f"{path.name} is right", None, False)
    return GradeReport("demo-01", str(path), (task,), (), 0.1, 7)


def _kind(between) -> BatchKind[GradeReport]:
    """A batch kind that grades by a function and calls `between(n)` before the n-th file."""

    def grade(items, seed, on_report):
        entries = []
        for number, item in enumerate(items):
            between(number)
            entries.append(BatchEntry(item.path, _report(item.path), item.sha256, item.data))
            on_report(entries[-1])
        return tuple(entries)

    return BatchKind(
        subject="demo-01",
        revision="r1",
        stem="check-demo-01",
        from_json=GradeReport.from_json,
        unreadable=lambda path, message, seed: _report(path),
        grade=grade,
        summary=lambda entries, seed: {"files": len(entries)},
        new_seed=lambda: 7,
        csv=lambda entries: "file\n",
        fingerprint="fp-1",
    )


def _batch(tmp_path: Path, between, shard: Shard | None = None):
    folder, out = tmp_path / "class", tmp_path / "out"
    folder.mkdir()
    for name in NAMES:
        (folder / name).write_text(f"# {name}: a SECRET answer\n", encoding="utf-8")
    batch = FolderBatch(
        folder, "submissions", allow_unsandboxed=True, out=out, seed=7, shard=shard, argv=("check",)
    )
    return grade_folder(batch, lambda settings: _kind(between), {})


def _outside(tmp_path: Path) -> Path:
    """Where an account that can write `--out` would have the batch write: its own folder,
    with a file ready to be appended to (0644, readable by all)."""
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "stolen.jsonl").write_text("", encoding="utf-8")
    (theirs / "stolen.jsonl").chmod(0o644)
    return theirs


def _written_in(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("shard", [None, Shard(1, 1)])
def test_a_journal_replaced_by_a_link_while_the_batch_grades_is_not_written_through(
    tmp_path, shard
):
    theirs = _outside(tmp_path)
    journal = tmp_path / "out" / ".check-demo-01.journal.jsonl"

    def swap(number: int) -> None:
        if number == 1:  # after the first entry: the journal becomes a link to their file
            journal.unlink()
            journal.symlink_to(theirs / "stolen.jsonl")

    outcome = _batch(tmp_path, swap, shard)
    assert outcome.status == "written"
    assert _written_in(theirs) == {"stolen.jsonl": b""}, "an entry was appended outside --out"
    if shard is not None:  # the shard's result is the journal the batch wrote, every entry
        result = tmp_path / "out" / "check-demo-01.shard.jsonl"
        assert not result.is_symlink()
        assert stat.S_IMODE(result.stat().st_mode) == 0o600
        header, entries, seals = read_sealed(
            result.read_text(encoding="utf-8"), grading_key(None), GradeReport.from_json
        )
        check_seal(header, entries, seals)
        assert sorted(e.path for e in entries) == sorted(NAMES)


def test_feedback_replaced_by_a_link_while_the_batch_grades_is_refused_not_written_through(
    tmp_path,
):
    theirs = _outside(tmp_path)
    feedback = tmp_path / "out" / "feedback"

    def swap(number: int) -> None:
        if number == 1:
            shutil.rmtree(feedback)
            feedback.symlink_to(theirs, target_is_directory=True)

    with pytest.raises(UsageError, match=r"feedback is not a folder \(a link or a file"):
        _batch(tmp_path, swap)
    assert _written_in(theirs) == {"stolen.jsonl": b""}, "feedback was written outside --out"


def test_the_output_folder_moved_away_and_replaced_by_a_link_keeps_the_one_opened(tmp_path):
    theirs = _outside(tmp_path)
    out = tmp_path / "out"

    def swap(number: int) -> None:
        if number == 1:
            out.rename(tmp_path / "moved")
            out.symlink_to(theirs, target_is_directory=True)

    outcome = _batch(tmp_path, swap)
    assert outcome.status == "written"
    assert _written_in(theirs) == {"stolen.jsonl": b""}, "an output was written outside --out"
    assert sorted(_written_in(tmp_path / "moved")) == [
        "ana.py.md",
        "bob.py.md",
        "check-demo-01.csv",
        "check-demo-01.json",
        "cy.py.md",
    ]


def test_an_open_folder_never_follows_a_link_in_it(tmp_path):
    from lessonkit.atomic import OpenFolder

    theirs = _outside(tmp_path)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "a.md").symlink_to(theirs / "stolen.jsonl")
    (tmp_path / "out" / "sub").symlink_to(theirs, target_is_directory=True)
    with OpenFolder.open(tmp_path / "out") as out:
        with pytest.raises(OSError):
            out.read_bytes("a.md")
        with pytest.raises(OSError):
            out.folder("sub")
        out.write("a.md", "mine\n")  # the link is replaced, never followed
        with pytest.raises(ValueError):
            out.write("sub/x.md", "")
    assert (tmp_path / "out" / "a.md").read_text(encoding="utf-8") == "mine\n"
    assert _written_in(theirs) == {"stolen.jsonl": b""}
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "out", target_is_directory=True)
    with pytest.raises(OSError):
        OpenFolder.open(link)


def test_a_link_in_place_of_feedback_before_the_batch_is_named_by_its_whole_path(tmp_path):
    theirs = _outside(tmp_path)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "feedback").symlink_to(theirs, target_is_directory=True)
    graded = []
    with pytest.raises(UsageError) as refused:
        _batch(tmp_path, graded.append)
    assert f"{tmp_path / 'out' / 'feedback'} is not a folder" in refused.value.message
    assert graded == [] and _written_in(theirs) == {"stolen.jsonl": b""}  # nothing graded
