"""A batch killed with SIGKILL leaves no grading child running (issue 51).

Measured on a Cloud TPU VM (gVisor, no pidfd_open, so every child started from scratch):
240 files at --jobs 12, SIGKILLed half-way and resumed, gave 53 files of the resumed run
"the process crashed (abort)" on every task; each of those children's error output ended
`LLVM ERROR: pthread_create failed: Resource temporarily unavailable`. The killed run's
children, each in a session of its own, ran on through their files, and their threads took
the task limit (RLIMIT_NPROC) the resumed run's children had counted on. Every child now dies
with the grader (`run/confine.py` `die_with_parent`), as the sandbox's already did, forked
or started from scratch.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lessonkit.run.leftovers import SCRATCH_PREFIX

from conftest import make_attempt

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux children only"),
]

WITHOUT = """
import errno, os, sys
def missing(*args):
    raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS))
from lessonkit.run import forking, isolation
isolation.find_sandbox = lambda: (None, "as in a gVisor container")
if sys.argv[1] == "pidfd_open":
    os.pidfd_open = missing
else:
    forking.FORK_CALLS = (("SO_PASSCRED", missing),)
from lessonkit.cli import main
sys.exit(main(sys.argv[2:]))
"""
"""The batch, unsandboxed, without a system call: pidfd_open, or SO_PASSCRED (every child
then starts from scratch)."""


def children_of(grader: int) -> list[int]:
    """Processes whose environment names a scratch folder of `grader`: every child it
    started outside the sandbox, its starter and the starter's forks."""
    marker = f"{SCRATCH_PREFIX}{grader}-".encode()
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and int(entry.name) != grader:
            try:
                environment = Path(entry.path, "environ").read_bytes()
            except OSError:
                continue
            if marker in environment:
                found.append(int(entry.name))
    return found


@pytest.mark.parametrize("missing", ["pidfd_open", "SO_PASSCRED"])
def test_a_batch_killed_with_sigkill_leaves_no_child_running(lesson, tmp_path, missing):
    folder = tmp_path / "week"
    folder.mkdir()
    sleeping = make_attempt(lesson, {"make-it-yours": "import time\ntime.sleep(100)\n"})
    for name in ("a.py", "b.py"):
        (folder / name).write_text(sleeping, encoding="utf-8")
    argv = ["check", lesson.meta.id, "--batch", str(folder), "--out", str(tmp_path / "out")]
    argv += ["--jobs", "2", "--run-submissions-as-me", "--timeout", "150"]
    batch = subprocess.Popen(
        [sys.executable, "-c", WITHOUT, missing, *argv],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    left: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while len(children_of(batch.pid)) < 3 and time.monotonic() < deadline:
            time.sleep(0.2)  # the reference and two learner children (or a starter and forks)
        time.sleep(8)  # the learner children reach the sleeping cell
        assert batch.poll() is None, "the batch ended before it was killed"
        os.killpg(batch.pid, signal.SIGKILL)
        batch.wait()
        deadline = time.monotonic() + 10
        while (left := children_of(batch.pid)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert left == [], f"still running after the grader was killed: {left}"
    finally:
        for pid in children_of(batch.pid):  # this test's own leftovers, by id
            os.kill(pid, signal.SIGKILL)
