"""A whole script (a phase project's) run by a root grader without bubblewrap: the child is
started from scratch and makes its own namespaces, root and user id (`run/confine.py`,
mode `own-root`), as a fork of the starter does (issue 59)."""

from __future__ import annotations

import os

import pytest

from lessonkit.run.isolation import Isolation, root_isolation
from lessonkit.run.whole_script import run_confined

PROBE = r"""
import os, sys
reached = []
secret = sys.argv[1]
for path in (secret, os.path.dirname(secret)):
    try:
        open(path).read() if path == secret else os.listdir(path)
        reached.append("read " + path)
    except OSError:
        pass
try:
    open("/proc/1/environ", "rb").read()
    pids = [p for p in os.listdir("/proc") if p.isdigit()]
    if len(pids) > 1:
        reached.append(f"sees {len(pids)} processes")
except OSError:
    pass
if os.getuid() == 0:
    reached.append("root")
if os.fork() == 0:  # a process left behind must end with the script
    os.setsid()
    import time
    time.sleep(30)
    os._exit(0)
open("left.txt", "w").write(" | ".join(reached) or "nothing")
"""


def test_a_whole_script_reaches_nothing_of_the_grader(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("a root grader's isolation needs root")
    if root_isolation() != "namespaces":
        pytest.skip("the kernel refuses namespaces here")
    secret = tmp_path / "grading.key"
    secret.write_text("not for learners\n")
    secret.chmod(0o644)  # readable by every user: only the child's own root keeps it out
    run = run_confined(
        "probe.py",
        PROBE.encode(),
        [str(secret)],
        collect=["left.txt"],
        isolation=Isolation(as_root="namespaces"),
    )
    assert run.exit_code == 0, (run.ended, run.stderr)
    assert run.file("left.txt").data == b"nothing"
