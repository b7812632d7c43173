"""`--output` as tools expect it: `-` is standard output, a link is written through, a binary
output never garbles a terminal, and who may read each file follows the umask except where
the instructor's data is private."""

from __future__ import annotations

import os
import pty
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, invoke

CSV_HEADER = "student,lesson,task,optional,status,points,max_points,attempts\n"


def lessonkit(argv: list[str], cwd: Path, **streams) -> subprocess.CompletedProcess:
    """The CLI in its own process: `--output -` needs a real standard output."""
    command = [sys.executable, "-m", "lessonkit", *argv]
    return subprocess.run(command, cwd=cwd, timeout=120, check=False, **streams)


@pytest.fixture
def gradebook(tmp_path) -> Path:
    from lessonkit.course.gradebook import Gradebook

    path = tmp_path / "course.sqlite"
    with Gradebook(path):
        pass
    return path


def test_output_dash_writes_the_export_to_stdout_and_the_note_to_stderr(gradebook, tmp_path):
    argv = ["grades", "--gradebook", str(gradebook), "--export", "csv", "--output", "-"]
    done = lessonkit(argv, tmp_path, capture_output=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode() == CSV_HEADER
    assert b"Wrote standard output (csv, 0 students)." in done.stderr
    assert not (tmp_path / "-").exists()


def test_a_link_to_the_file_stdout_already_is_gets_the_export_through_stdout(gradebook, tmp_path):
    """`--output /dev/stdout > out.csv`, with a link of our own standing for /dev/stdout: the
    link stays, the export lands in out.csv, and nothing is renamed over either."""
    out = tmp_path / "out.csv"
    link = tmp_path / "stdout"
    link.symlink_to(out)
    argv = ["grades", "--gradebook", str(gradebook), "--export", "csv", "--output", str(link)]
    with out.open("wb") as stdout:
        done = lessonkit(argv, tmp_path, stdout=stdout, stderr=subprocess.PIPE)
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and os.readlink(link) == str(out)
    assert out.read_text() == CSV_HEADER


def test_a_symlinked_output_is_written_through_with_the_umasks_mode(gradebook, tmp_path):
    shared = tmp_path / "www"
    shared.mkdir()
    link = tmp_path / "canvas.csv"
    link.symlink_to(shared / "canvas.csv")
    argv = ["grades", "--gradebook", str(gradebook), "--export", "csv", "--output", str(link)]
    old = os.umask(0o022)
    try:
        code, out, err = invoke(argv)
    finally:
        os.umask(old)
    assert code == 0, err
    assert link.is_symlink()
    assert (shared / "canvas.csv").read_text() == CSV_HEADER
    assert stat.S_IMODE(os.stat(shared / "canvas.csv").st_mode) == 0o644
    assert out.startswith("Wrote ") and out.endswith("canvas.csv (csv, 0 students).\n")


def test_a_zip_goes_to_a_pipe_but_never_to_a_terminal(tmp_path):
    argv = ["autograder", "state-02", "--output", "-"]
    piped = lessonkit(argv, REPO, capture_output=True)
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout[:4] == b"PK\x03\x04" and b"upload it to Gradescope" in piped.stderr
    main, terminal = pty.openpty()
    try:
        shown = lessonkit(argv, REPO, stdout=terminal, stderr=subprocess.PIPE)
    finally:
        os.close(terminal)
        os.close(main)
    assert shown.returncode == 2
    assert b"the output is binary and standard output is a terminal" in shown.stderr
    assert not (REPO / "-").exists()


def test_shared_outputs_follow_the_umask_and_the_instructors_data_is_private(lesson, tmp_path):
    """Under umask 022 a batch's CSV, JSON and feedback are 0644 (a TA account or a web
    server reads them); the journal and the gradebook (every submission and grade) and the
    reference store (the lesson's answers) are 0600."""
    from lessonkit.course.gradebook import Gradebook
    from lessonkit.grade.batches.batch_run import BatchRun
    from lessonkit.grade.batches.folder import submissions_in
    from lessonkit.grade.batches.lesson_kind import lesson_kind
    from lessonkit.grade.batches.outputs import write_results
    from lessonkit.grade.channel.child_report import ChildReport
    from lessonkit.grade.channel.reference_store import ReferenceStore
    from lessonkit.grade.provenance.grading_key import grading_key

    submissions = tmp_path / "class"
    submissions.mkdir()
    (submissions / "bob.py").write_text("x = 1\n")
    out_dir = tmp_path / "results"
    old = os.umask(0o022)
    try:
        listing = submissions_in(submissions)
        run = BatchRun(
            lesson_kind(lesson),
            submissions,
            out_dir,
            resume=False,
            seed=3,
            key=grading_key(None),
            listing=listing,
        )
        run.prepare(list(listing.files))
        assert run.out is not None  # the output folder, opened once by prepare()
        written = write_results(run.out, "check-state-02", [], [], {}, csv="a,b\n")
        run.close()
        with Gradebook(tmp_path / "course.sqlite"):
            pass
        store = ReferenceStore(tmp_path / "store", grading_key(None))
        store.save("state-02", "k", ChildReport({}, None, None, ()))
    finally:
        os.umask(old)

    def mode(path: Path) -> int:
        return stat.S_IMODE(os.stat(path).st_mode)

    assert {p.name: mode(p) for p in written[:2]} == {
        "check-state-02.csv": 0o644,
        "check-state-02.json": 0o644,
    }
    assert mode(run.journal) == 0o600
    assert mode(tmp_path / "course.sqlite") == 0o600
    assert [mode(p) for p in (tmp_path / "store").iterdir()] == [0o600]
