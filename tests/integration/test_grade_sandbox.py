"""The learner child's sandbox: what code inside it can and cannot reach.

Each test runs one cell in a learner child (the same `ChildHandle` the grader uses) and reads
back what the cell saw. With CI=true the sandbox must exist; locally the tests skip when
bubblewrap or user namespaces are missing.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from lessonkit.grade.channel import reported
from lessonkit.grade.channel.child_handle import ChildHandle
from lessonkit.run.sandbox import Sandbox

from conftest import LESSON_MD, REPO, run_one_cell

pytestmark = pytest.mark.slow


def run_cell(source: str, sandbox: Sandbox | None, budget: float = 20.0) -> dict:
    """The values `result` took after `source` ran in a fresh learner child."""
    record = run_one_cell(source, sandbox, budget=budget)
    assert record.stop_reason is None, record.stop_reason
    (event,) = record.runs.values()
    assert event.error is None, event.error
    return event.values["result"]


def text(value: reported.Value) -> str:
    assert isinstance(value, reported.Text), value
    return value.value


def test_the_repository_home_and_network_are_out_of_reach(sandbox):
    from pathlib import Path

    home_file = next((p for p in Path.home().iterdir() if p.is_file()), Path.home() / "missing")
    paths = (str(LESSON_MD), str(REPO / "README.md"), str(home_file))
    seen = run_cell(
        "import os, socket\n"
        "found = []\n"
        f"for path in {paths!r}:\n"
        "    found.append(str(os.path.exists(path)))\n"
        "try:\n"
        "    socket.create_connection(('127.0.0.1', 22), timeout=1)\n"
        "    found.append('net')\n"
        "except OSError:\n"
        "    found.append('no-net')\n"
        "result = ' '.join(found)\n",
        sandbox,
    )
    assert text(seen) == "False False False no-net"


def test_the_child_cannot_write_outside_its_scratch_folder(sandbox, tmp_path):
    target = tmp_path / "written-by-learner"
    seen = run_cell(
        "import os\nwritten = []\n"
        f"for path in ({str(target)!r}, '/usr/lessonkit-test', 'scratch.txt'):\n"
        "    try:\n"
        "        open(path, 'w').write('x')\n"
        "        written.append(path)\n"
        "    except OSError:\n"
        "        pass\n"
        "result = ','.join(written)\n",
        sandbox,
    )
    assert text(seen) == "scratch.txt"
    assert not target.exists()


def test_the_child_sees_only_its_own_processes_and_not_as_root(sandbox):
    seen = run_cell(
        "import os\n"
        "pids = [p for p in os.listdir('/proc') if p.isdigit()]\n"
        "result = f'{os.getuid() != 0} {len(pids) < 10}'\n",
        sandbox,
    )
    assert text(seen) == "True True"


def test_a_fork_bomb_is_stopped_by_the_task_limit(sandbox):
    seen = run_cell(
        "import os\n"
        "children = 0\n"
        "try:\n"
        "    for _ in range(5000):\n"
        "        if os.fork() == 0:\n"
        "            import time\n"
        "            time.sleep(30)\n"
        "            os._exit(0)\n"
        "        children += 1\n"
        "except OSError:\n"
        "    pass\n"
        "result = children\n",
        sandbox,
    )
    assert isinstance(seen, reported.Number) and seen.value < 1000


def test_a_readable_path_under_tmp_stays_visible(sandbox, tmp_path):
    """CI clones and virtual environments may live under /tmp, where the scratch is mounted."""
    import subprocess

    visible = tmp_path / "venv-marker.txt"
    visible.write_text("seen", encoding="utf-8")
    argv = sandbox.command(["/bin/cat", str(visible)], (visible,), 2**20)
    assert subprocess.run(argv, capture_output=True, text=True, check=True).stdout == "seen"


KILLED_PARENT = """
import sys, time
from lessonkit.grade.channel.child_handle import ChildHandle
child = ChildHandle(trusted=True)
print(child._folder.name, flush=True)
time.sleep(120)
"""


def test_b15_a_killed_parents_scratch_is_removed_by_the_next_run(tmp_path, monkeypatch):
    """SIGKILL leaves a parent no time to clean up; the next ChildHandle removes what it left."""
    import contextlib
    import subprocess
    import sys
    import tempfile

    from lessonkit.grade.channel import child_handle
    from lessonkit.run import sandbox as sandbox_module

    source = Path(child_handle.__file__).parents[2]  # the lessonkit under test
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(source)}
    parent = subprocess.Popen(
        [sys.executable, "-c", KILLED_PARENT], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert parent.stdout is not None
        left = Path(parent.stdout.readline().strip())
    finally:
        parent.kill()  # the parent this test started, and nothing else
        parent.wait()
    (left / "learner-output.txt").write_text("left behind", encoding="utf-8")
    kept = tmp_path / "lessonkit-check-keep"  # not named by an owner: never removed
    kept.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with contextlib.suppress(AttributeError):  # the sweep runs once per process
        sandbox_module.remove_leftovers.cache_clear()
    ChildHandle(trusted=True).close()
    assert left.parent == tmp_path and not left.exists()
    assert kept.is_dir()


def test_b15_only_leftovers_of_ended_parents_are_removed(tmp_path):
    import subprocess

    from lessonkit.run.leftovers import owner_tag, pid_namespace, remove_stale_scratch, start_time

    dead = subprocess.Popen(["/bin/true"])  # its process id is free once it is reaped
    dead.wait()
    alive_start = start_time(os.getppid())
    ns = f"ns{pid_namespace()}"
    names = {
        "dead": f"lessonkit-check-{dead.pid}-1-{ns}-abc",
        "reused": f"lessonkit-check-{os.getppid()}-{(alive_start or 0) + 7}-{ns}-abc",
        "alive": f"lessonkit-check-{os.getppid()}-{alive_start}-{ns}-abc",
        "mine": f"lessonkit-check-{owner_tag()}abc",
        "other": "lessonkit-check-abc",
        "other-namespace": f"lessonkit-check-{dead.pid}-1-ns{pid_namespace() + 1}-abc",
        "unnamed-namespace": f"lessonkit-check-{dead.pid}-1-abc",
    }
    for name in names.values():
        (tmp_path / name).mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    link = tmp_path / f"lessonkit-check-{dead.pid}-1-{ns}-link"
    link.symlink_to(outside)
    assert alive_start is not None
    assert remove_stale_scratch(tmp_path) == 2
    kept = ("alive", "mine", "other", "other-namespace", "unnamed-namespace")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [*(names[k] for k in kept), "outside", link.name]
    )


def test_a_grader_in_another_pid_namespace_keeps_a_live_graders_scratch(tmp_path):
    """Inside `unshare --pid` no host process is visible: each id looks free, so a grader
    there that judged host names would delete the folders of graders still running."""
    import shutil
    import subprocess

    from lessonkit.run.leftovers import owner_tag

    if shutil.which("unshare") is None or os.geteuid() != 0:
        pytest.skip("needs root and unshare to make a PID namespace")
    live = tmp_path / f"lessonkit-check-{owner_tag()}live"
    live.mkdir()
    code = (
        "from pathlib import Path; from lessonkit.run.leftovers import remove_stale_scratch; "
        f"print(remove_stale_scratch(Path({str(tmp_path)!r})))"
    )
    inside = subprocess.run(
        ["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
    )
    assert inside.returncode == 0, inside.stderr
    assert inside.stdout.strip() == "0" and live.is_dir()


def test_b15_a_killed_parents_cgroup_and_its_tasks_are_removed(tmp_path):
    import subprocess

    from lessonkit.run.leftovers import CGROUP_PREFIX, owner_tag, pid_namespace
    from lessonkit.run.sandbox import ChildCgroup, _v1_folder

    base = _v1_folder("pids")
    if os.geteuid() != 0 or base is None:
        pytest.skip("per-child cgroups need root and a writable cgroup v1 hierarchy")
    dead = subprocess.Popen(["/bin/true"])
    dead.wait()
    stale = base / f"{CGROUP_PREFIX}{dead.pid}-1-ns{pid_namespace()}-b15"
    live = base / f"{CGROUP_PREFIX}{owner_tag()}b15"
    stale.mkdir()
    live.mkdir()
    escaped = subprocess.Popen(["/bin/sleep", "60"])  # a task that outlived its parent
    try:
        (stale / "cgroup.procs").write_text(str(escaped.pid))
        assert ChildCgroup.remove_stale() >= 1
        assert escaped.wait(timeout=10) == -9
        assert not stale.exists() and live.is_dir()
    finally:
        if escaped.poll() is None:
            escaped.kill()
        ChildCgroup([stale, live]).remove()
