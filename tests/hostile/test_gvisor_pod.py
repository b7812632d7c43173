"""A week graded in a real gVisor pod laid out as docs/cluster/k8s-indexed-job.yaml lays it
out, with a class of hostile files (issue 59).

The pod is Debian's `runsc` running an OCI bundle built from the Job's container (its user,
capabilities, volumes and environment): the host's root read-only, the grader as root with
the capabilities the Job gives it, no user namespaces (bubblewrap cannot start:
gVisor has no `overflowuid`), the grading key mounted 0400 at /etc/lessonkit, the whole
week's submissions read-only at /submissions, a results volume with another shard's
results on it at /results, and a compile cache shared at /cache. Every file below tries to
reach something that is not its own grade; each must fail, and the right files beside them
must keep their grades, and a file that crashes at a cell drawn afresh in each child is
graded as the learner's error. On 15ef63c (`--no-sandbox`, every child root beside the grader)
every one of these attacks succeeded.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from lessonkit.lesson.catalog import find_lesson

from conftest import REPO, make_attempt
from fault_cohort import CRASH_AT_A_DRAWN_CELL

RUNSC = shutil.which("runsc")
SECRET = "pod-secret-" + secrets.token_hex(6)
"""A value in the grader's environment that no learner child may read."""

READ_COURSE = """import ast as _ast, glob as _glob, re as _re
_found = sorted(_glob.glob("{repo}/phases/*/*/lesson.md"))
_text = open([f for f in _found if "pytrees" in f][0], encoding="utf-8").read()
_block = _re.search(r"\\{{solution\\}} nested-model\\n.*?```python\\n(.*?)```", _text, _re.S)
for _statement in [_ast.unparse(n) for n in _ast.parse(_block.group(1)).body]:
    exec(_statement, globals())
"""
READ_CLASSMATE = """_text = open("/submissions/week1/ana.py", encoding="utf-8").read()
_mine = _text.split("# TASK nested-model")[1].split("# %%")[0].split("\\n", 1)[1]
exec(_mine, globals())
"""
STEAL_KEY = """import os as _os
for _where in ("/etc/lessonkit/grading.key", "/proc/1/environ"):
    try:
        _data = open(_where, "rb").read()
        open("/results/stolen-" + _os.path.basename(_where), "wb").write(_data)
    except OSError:
        pass
for _pid in [p for p in _os.listdir("/proc") if p.isdigit()]:
    try:
        _env = open(f"/proc/{_pid}/environ", "rb").read()
        if b"POD_SECRET" in _env:
            open("/results/stolen-environ", "wb").write(_env)
    except OSError:
        pass
"""
WRITE_OUTSIDE = """_targets = ["/cache/jax/poisoned", "/results/shard-2-of-2/check-state-02.csv"]
for _target in _targets + ["/results/shard-1-of-1/forged", "/submissions/week1/ana.py"]:
    try:
        with open(_target, "a") as _file:
            _file.write("forged\\n")
    except OSError:
        pass
"""
OUTLIVE = """import os as _os, time as _time
if _os.fork() == 0:
    _os.setsid()
    if _os.fork() == 0:
        _time.sleep(6)
        try:
            open("/results/outlived", "w").write("still here")
        except OSError:
            pass
        _os._exit(0)
    _os._exit(0)
"""
KILL_ALL = """import os as _os, signal as _signal
try:
    _os.kill(-1, _signal.SIGKILL)
except OSError:
    pass
"""

DRIVER = """set -u
cd {repo}
mkdir -p /tmp/graders-own && echo kept > /tmp/graders-own/file
{lessonkit} check state-02 --batch /submissions/week1 --seed 20261206 --jobs 2 \\
  --key /etc/lessonkit/grading.key --out /results/shard-1-of-1 {extra} \\
  > /results/batch-stdout.txt 2> /results/batch-stderr.txt
echo $? > /results/batch-exit
cat /tmp/graders-own/file > /results/tmp-after.txt 2>&1
sleep 8
for p in /proc/[0-9]*; do cat $p/cmdline 2>/dev/null | tr '\\0' ' '; echo; done \\
  > /results/processes-after.txt
"""


DOCKER_CAPABILITIES = (
    "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL", "CAP_SETGID",
    "CAP_SETUID", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_MKNOD",
    "CAP_AUDIT_WRITE", "CAP_SETFCAP",
)  # fmt: skip
"""What a container gets by default; the Job adds its own (`securityContext`)."""


def job_container() -> dict:
    """The grading container of docs/cluster/k8s-indexed-job.yaml."""
    job = yaml.safe_load((REPO / "docs" / "cluster" / "k8s-indexed-job.yaml").read_text())
    (container,) = job["spec"]["template"]["spec"]["containers"]
    return container


def _bundle(
    folder: Path, pod: Path, command: str, repo: Path, env: list[str], drop: str = ""
) -> Path:
    """An OCI bundle for the pod: the user, capabilities (less `drop`), volumes (read-only or
    not) and environment of the Job's container, the grader's command ours."""
    container = job_container()
    security = container.get("securityContext", {})
    added = [f"CAP_{c}" for c in security.get("capabilities", {}).get("add", []) if c != drop]
    caps = sorted({*DOCKER_CAPABILITIES, *added})
    mounts = [
        {"destination": "/proc", "type": "proc", "source": "proc"},
        {"destination": "/tmp", "type": "tmpfs", "source": "tmpfs"},
        {"destination": str(repo), "type": "bind", "source": str(repo), "options": ["rbind", "ro"]},
    ]
    volumes = {"/submissions": "submissions", "/results": "results", "/cache": "cache"}
    volumes["/etc/lessonkit"] = "key"
    for mount in container["volumeMounts"]:
        mode = "ro" if mount.get("readOnly") else "rw"
        source = str(pod / volumes[mount["mountPath"]])
        mounts.append(
            {"destination": mount["mountPath"], "type": "bind", "source": source,
             "options": ["rbind", mode]}
        )  # fmt: skip
    job_env = [f"{e['name']}={e['value']}" for e in container.get("env", [])]
    config = {
        "ociVersion": "1.0.0",
        "process": {
            "user": {"uid": security.get("runAsUser", 0), "gid": 0},
            "args": ["/bin/sh", "-c", command],
            "env": [
                "PATH=/usr/local/bin:/usr/bin:/bin",
                "HOME=/root",
                f"POD_SECRET={SECRET}",
                *job_env,
                *env,
            ],
            "cwd": "/",
            "capabilities": {k: caps for k in ("bounding", "effective", "permitted")},
        },
        "root": {"path": "/", "readonly": True},
        "hostname": "grade-pod",
        "mounts": mounts,
        "linux": {"namespaces": [{"type": t} for t in ("pid", "network", "ipc", "uts", "mount")]},
    }
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def grade_week_in_a_pod(
    tmp_path: Path,
    extra: str = "",
    repo: Path = REPO,
    env: tuple[str, ...] = (),
    drop: str = "",
) -> dict[str, object]:
    """Lay out the pod, grade the week inside it, and return what is left on its volumes.

    `extra` options, another checkout `repo` and `env` let the same week be graded by older
    code (the closing note of issue 59 shows it, with `--no-sandbox`)."""
    lesson = find_lesson("state-02")
    blank = tuple(task.id for task in lesson.tasks)  # every task left as its scaffold
    but_nested = tuple(t for t in blank if t != "nested-model")

    def attempt(prefix: str = "", nested: str | None = None) -> str:
        if nested is None:
            return make_attempt(lesson, unsolved=blank, prefix=prefix)
        return make_attempt(lesson, {"nested-model": nested}, unsolved=but_nested)

    pod = tmp_path / "pod"
    week = pod / "submissions" / "week1"
    week.mkdir(parents=True)
    files = {
        "ana.py": make_attempt(lesson),
        "ben.py": make_attempt(lesson),
        "reads_course.py": attempt(nested=READ_COURSE.format(repo=repo)),
        "reads_classmate.py": attempt(nested=READ_CLASSMATE),
        "steals_key.py": attempt(STEAL_KEY),
        "writes_outside.py": attempt(WRITE_OUTSIDE),
        "outlives.py": attempt(OUTLIVE),
        "kills_all.py": attempt(KILL_ALL),
        "crashes.py": make_attempt(
            lesson, {t.id: CRASH_AT_A_DRAWN_CELL + t.solution for t in lesson.tasks}
        ),
    }
    for name, text in files.items():
        (week / name).write_text(text, encoding="utf-8")
    other = pod / "results" / "shard-2-of-2"
    other.mkdir(parents=True)
    (other / "check-state-02.csv").write_text("file,score\nzoe.py,9\n", encoding="utf-8")
    (pod / "cache").mkdir()
    key = pod / "key"
    key.mkdir(mode=0o700)
    (key / "grading.key").write_text(secrets.token_hex(32) + "\n", encoding="ascii")
    (key / "grading.key").chmod(0o400)
    lessonkit = Path(sys.executable).with_name("lessonkit")
    command = DRIVER.format(repo=repo, lessonkit=lessonkit, extra=extra)
    bundle = _bundle(tmp_path / "bundle", pod, command, repo, list(env), drop)
    state = tmp_path / "state"
    name = "lessonkit-pod-" + secrets.token_hex(4)
    run = [RUNSC, "--network=none", "--root", str(state), "run", "--bundle", str(bundle), name]
    try:
        subprocess.run(run, check=False, timeout=600, capture_output=True)
    finally:
        subprocess.run(
            [RUNSC, "--root", str(state), "delete", "-force", name],
            check=False,
            capture_output=True,
        )
    results = pod / "results"
    summary = results / "shard-1-of-1" / "check-state-02.json"
    return {
        "exit": (results / "batch-exit").read_text().strip()
        if (results / "batch-exit").exists()
        else None,
        "stderr": (results / "batch-stderr.txt").read_text(errors="replace")
        if (results / "batch-stderr.txt").exists()
        else "",
        "summary": json.loads(summary.read_text()) if summary.exists() else None,
        "left": sorted(p.name for p in results.iterdir()),
        "other shard": (other / "check-state-02.csv").read_text(),
        "ana": (week / "ana.py").read_text() == files["ana.py"],
        "cache by others": sorted(
            str(p.relative_to(pod)) for p in (pod / "cache").rglob("*") if p.stat().st_uid != 0
        )
        + sorted(str(p.relative_to(pod)) for p in (pod / "cache").rglob("poisoned")),
        "grader's /tmp": (results / "tmp-after.txt").read_text().strip(),
        "processes": (results / "processes-after.txt").read_text()
        if (results / "processes-after.txt").exists()
        else "",
    }


def _scores(summary: dict) -> dict[str, float]:
    """Each file's points in the batch's JSON summary (-1: not graded)."""
    points = {Path(name).name: float(value) for name, value in summary["points"].items()}
    return points | {Path(name).name: -1.0 for name in summary["not graded"]}


def _need_runsc() -> None:
    if RUNSC is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI must grade in a gVisor pod: install runsc (.ci/run does)")
        pytest.skip("runsc (gVisor) is not installed: apt-get install runsc")
    if os.geteuid() != 0:
        pytest.skip("runsc runs a pod as root")


@pytest.fixture(scope="module")
def pod_week(tmp_path_factory) -> dict[str, object]:
    _need_runsc()
    return grade_week_in_a_pod(tmp_path_factory.mktemp("gvisor"))


def test_without_the_jobs_capability_the_batch_refuses(tmp_path):
    """A pod whose grader may make no namespaces (the Job without SYS_ADMIN): a child could
    read whatever every user may read, so the batch grades nothing and says why."""
    _need_runsc()
    left = grade_week_in_a_pod(tmp_path, drop="SYS_ADMIN")
    assert left["exit"] == "2", left["exit"]
    assert "the kernel refuses this root grader namespaces" in left["stderr"], left["stderr"]
    assert left["summary"] is None


def test_the_batch_finishes_and_the_right_files_keep_their_grades(pod_week):
    assert pod_week["exit"] is not None, pod_week
    assert pod_week["summary"] is not None, pod_week["stderr"][-3000:]
    scores = _scores(pod_week["summary"])
    assert scores["ana.py"] == scores["ben.py"] > 0, scores
    assert pod_week["summary"]["isolation"] == "namespaces"


def test_a_file_that_crashes_at_random_is_graded_and_the_shard_complete(pod_week):
    """A crash drawn afresh in each child is the learner's error (issue 59 item 3): the
    file is graded, nothing is left not graded, and the batch exits as graded batches do."""
    summary = pod_week["summary"]
    assert summary["not graded"] == {}, summary["not graded"]
    assert "crashes.py" in _scores(summary)


def test_no_blank_file_passes_with_what_it_read(pod_week):
    scores = _scores(pod_week["summary"])
    blank = min(scores[n] for n in ("steals_key.py", "writes_outside.py", "outlives.py"))
    for name in ("reads_course.py", "reads_classmate.py", "kills_all.py"):
        assert scores[name] <= blank, (name, scores)


def test_nothing_but_its_own_grade_is_written(pod_week):
    left = pod_week["left"]
    assert not [n for n in left if n.startswith(("stolen", "outlived"))], left
    assert pod_week["other shard"] == "file,score\nzoe.py,9\n"
    assert pod_week["ana"], "a classmate's submission was changed"
    assert pod_week["cache by others"] == [], pod_week["cache by others"]


def test_the_graders_own_files_stay_where_they_are(pod_week):
    """A child's mounts never reach the grader's view (an older gVisor shares a new mount
    namespace's mounts with its parent: a tmpfs on /tmp hid a batch folder under it)."""
    assert pod_week["grader's /tmp"] == "kept"


def test_nothing_a_child_started_outlives_it(pod_week):
    running = [line for line in pod_week["processes"].splitlines() if "python" in line]
    assert running == [], running
