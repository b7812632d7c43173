"""The learner child's sandbox: what code inside it can and cannot reach.

Each test runs one cell in a learner child (the same `Worker` the grader uses) and reads
back what the cell saw. With CI=true the sandbox must exist; locally the tests skip when
bubblewrap or user namespaces are missing.
"""

from __future__ import annotations

import os
import time

import pytest

from lessonkit.grade import reported
from lessonkit.grade.protocol import CellSpec, Request, ScenarioSpec
from lessonkit.grade.runner import Worker
from lessonkit.grade.sandbox import Sandbox, find_sandbox

from conftest import LESSON_MD, REPO

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    found, reason = find_sandbox()
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must grade in the sandbox: {reason}")
        pytest.skip(reason)
    return found


def run_cell(source: str, sandbox: Sandbox | None, budget: float = 20.0) -> dict:
    """The values `result` took after `source` ran in a fresh learner child."""
    worker = Worker(trusted=False, sandbox=sandbox)
    request = Request(
        id="probe",
        preload=(),
        budget=budget,
        cells=(CellSpec(0, source, 0, "task", ("result",)),),
        checkpoint=None,
        checkpoint_names=(),
        scenarios=(ScenarioSpec("lesson", None),),
    )
    try:
        worker.send(request)
        outcome = worker.collect(request, time.monotonic() + budget + 10)
    finally:
        worker.close()
    assert outcome.finished, outcome.ended
    (event,) = outcome.events
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
