"""The limits an instructor sets reach the grading child, and a child's processes are held
to them together (issues 33 item 5 and 34 A2).

`--memory` and `--timeout` of `lessonkit check` (one file and `--batch`) and of `lessonkit
project` become the child's `Limits`; the task cap and the CPU share of `Limits` hold for
every process a child starts, forks and new sessions included.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from lessonkit.grade.channel.child_handle import ChildHandle
from lessonkit.grade.channel.child_report import ChildReport
from lessonkit.run.limits import Limits, cpu_allowance
from lessonkit.run.sandbox import Sandbox, _v1_folder

from conftest import invoke, make_attempt, run_one_cell

NORM = "norm_squared = sum(jnp.sum(g ** 2) for g in jax.tree.leaves(grads))\n"
MANUAL = 'manual = jnp.sum(grads["weight"] ** 2) + grads["bias"] ** 2\n'
HUNGRY = "_block = bytearray(2**30)\n" + NORM + MANUAL  # 1 GiB: fine under the default 2G
SLEEPY = "import time\ntime.sleep(60)\n" + NORM + MANUAL
MEMORY_SAID = "memory limit of 512M that each process of a graded run has"


@pytest.fixture(scope="module")
def attempts(lesson, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("limits")
    for name, body in (("hungry.py", HUNGRY), ("sleepy.py", SLEEPY)):
        text = make_attempt(lesson, {"make-it-yours": body})
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _tasks(report: dict) -> dict[str, dict]:
    return {t["id"]: t for t in report["tasks"]}


def test_check_memory_option_is_the_learner_childs_memory_limit(attempts):
    argv = ["check", "state-02", str(attempts / "hungry.py"), "--memory", "512M", "--json"]
    code, out, err = invoke(argv)
    assert code == 1, err
    tasks = _tasks(json.loads(out))
    mine = tasks["make-it-yours"]
    assert mine["status"] == "error", mine
    assert mine["message"].startswith("MemoryError\n") and MEMORY_SAID in mine["message"]
    assert tasks["repair"]["status"] == "passed"  # the other cells ran as before


def test_check_timeout_option_stops_a_sleeping_cell(attempts):
    started = time.monotonic()
    argv = ["check", "state-02", str(attempts / "sleepy.py"), "--timeout", "2", "--json"]
    code, out, err = invoke(argv)
    assert code == 1, err
    report = json.loads(out)
    assert "time limit of 2 s" in _tasks(report)["make-it-yours"]["message"]
    assert report["seconds"] < 45 and time.monotonic() - started < 90  # not the cell's 60 s


def test_batch_gives_every_file_the_memory_and_time_it_was_told(attempts, tmp_path):
    out_dir = tmp_path / "out"
    argv = ["check", "state-02", "--batch", str(attempts), "--out", str(out_dir)]
    argv += ["--memory", "512M", "--timeout", "10", "--jobs", "1", "--json"]
    code, out, err = invoke(argv)
    assert code == 0, err
    reports = {Path(r["file"]).name: _tasks(r) for r in json.loads(out)["reports"]}
    assert MEMORY_SAID in reports["hungry.py"]["make-it-yours"]["message"]
    assert "time limit of 10 s" in reports["sleepy.py"]["make-it-yours"]["message"]


def test_project_memory_option_is_each_runs_memory_limit(tmp_path):
    script = tmp_path / "hungry.py"
    script.write_text("block = bytearray(2**30)\n", encoding="utf-8")
    argv = ["project", "phase-03", str(script), "--json", "--seed", "3", "--memory", "512M"]
    exit_code, out, err = invoke([*argv, "--timeout", "30"])
    assert exit_code == 1, err
    assert "MemoryError" in json.loads(out)["properties"][0]["evidence"]


# --------------------------------------------------------------------------- one child's tasks


def run_cell(
    source: str, sandbox: Sandbox, limits: Limits, while_alive: Callable[[ChildHandle], None]
) -> ChildReport:
    record = run_one_cell(source, sandbox, limits=limits, budget=30.0, while_alive=while_alive)
    assert record.stop_reason is None, record.stop_reason
    return record


def result_of(record: ChildReport) -> int:
    (run,) = record.runs.values()
    assert run.error is None, run.error
    return run.values["result"].value  # type: ignore[union-attr]


CPU_LIMIT = "import resource\nresult = resource.getrlimit(resource.RLIMIT_CPU)[0]\n"


@pytest.mark.parametrize("sent", [None, 100.0])
def test_the_grading_child_limits_its_cpu_by_the_number_it_is_sent(sent):
    """A cell that spins in C, where no alarm reaches, still ends: the child's RLIMIT_CPU is
    the CPU it has used plus the allowance its request carries (by default what a grader
    sends, `cpu_allowance` of the time limit), never a formula of its own."""
    record = run_one_cell(CPU_LIMIT, None, budget=5.0, cpu_seconds=sent)
    allowance = cpu_allowance(5.0) if sent is None else sent
    assert allowance <= result_of(record) <= allowance + 30  # + the CPU it had used


FORK_UNTIL_REFUSED = """import os, time
made = 0
for _ in range(400):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    made += 1
result = made
"""


def test_a_forking_cell_is_held_to_the_task_cap_of_its_limits(sandbox):
    """The cap is the child's (RLIMIT_NPROC under a user id of its own, and the cgroup's
    pids.max where there is one), taken from `Limits`: forks stop below it."""
    limits = Limits(tasks=48, tasks_per_cpu=0)
    caps: list[str] = []

    def read_cap(handle: ChildHandle) -> None:
        folders = handle._child.cgroup.folders if handle._child.cgroup else []
        caps.extend(p.read_text().strip() for f in folders if (p := f / "pids.max").exists())

    made = result_of(run_cell(FORK_UNTIL_REFUSED, sandbox, limits, read_cap))
    own = 0 if sandbox.privileged else _tasks_of(os.getuid())
    assert 0 < made < 48 + own
    assert caps in ([], ["48"])  # pids.max where the child has a cgroup


def _tasks_of(uid: int) -> int:
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += len(list((entry / "task").iterdir()))
            except OSError:
                pass
    return count


SPINNERS = """import os, time
made = 0
for _ in range(110):
    if os.fork() == 0:
        os.setsid()  # a session of its own: the kernel's autogroup no longer holds it
        time.sleep(2)
        while True:
            pass
    made += 1
result = made
"""


def test_a_cell_that_starts_110_busy_processes_does_not_starve_the_machine(sandbox):
    """All of a child's processes share one CPU share (`cpu.shares` of its cgroup), so 110
    spinners, each in a session of its own, take one process's part of the CPU. Without it
    this process got 0.036 s of CPU in 2 s on the 2-core machine (1.8 s with it)."""
    if os.geteuid() != 0 or _v1_folder("cpu") is None:
        pytest.skip("a CPU share per child needs root and a writable cgroup v1 cpu hierarchy")
    got: list[float] = []

    def measure(handle: ChildHandle) -> None:
        time.sleep(3)  # every spinner has woken and spins
        wall, cpu = time.monotonic(), time.process_time()
        while time.monotonic() - wall < 2:
            pass
        got.append(time.process_time() - cpu)
        assert handle._child.cgroup is not None
        shares = [f / "cpu.shares" for f in handle._child.cgroup.folders]
        got.append(float(next(p for p in shares if p.exists()).read_text()))

    record = run_cell(SPINNERS, sandbox, Limits(), measure)
    assert result_of(record) == 110
    cpu_seconds, shares = got
    assert shares == Limits().cpu_shares
    assert cpu_seconds > 0.3, f"this process had {cpu_seconds:.3f} s of CPU in 2 s"
