"""Run one hostile case through the CLI, confined, and list every way the outcome is unsafe.

Confinement (never run an attack without it): the command is PID 1's child in a fresh PID
namespace (`unshare --pid --fork --kill-child --mount-proc`, with tests/hostile/confine.py
as the namespace's init, so nothing outlives it), under `prlimit` (data, file size, core),
a wall-clock timeout, and, where the machine allows it (root with cgroup v1), a pids cgroup
and a memory cgroup. RLIMIT_NPROC does not hold for root, so the fork and thread bombs
need the pids cgroup; the memory bomb and /dev/zero need the memory cgroup.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import os
import secrets
import shlex
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from lessonkit.grade.provenance.grading_key import default_key_path
from lessonkit.lesson.model import Lesson

from hostile.cases import Case, build, honest_files

HERE = Path(__file__).resolve().parent
CONFINE = HERE / "confine.py"
SETTLE = 2.5  # seconds the namespace stays alive after the command returns, if any outlive it
PIDS_MAX = 512
MEMORY_MAX = 4 * 2**30
LITTER = ("/tmp/lessonkit-hostile-", "/dev/shm/lessonkit-hostile-")


@dataclass
class Observation:
    """What one run did, and every violation of the safe outcome."""

    command: str
    returncode: int | None = None
    seconds: float = 0.0
    timed_out: bool = False
    violations: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- confinement


@dataclass(frozen=True)
class Cgroups:
    pids: Path | None
    memory: Path | None


@cache
def _cgroup_parents() -> tuple[Path | None, Path | None]:
    """This process's v1 pids and memory cgroup folders, when we may create children."""
    if os.geteuid() != 0:
        return None, None
    own = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(","):
            own[controller] = path
    found = []
    for controller in ("pids", "memory"):
        base = Path("/sys/fs/cgroup") / controller
        folder = base / own.get(controller, "/").lstrip("/")
        probe = folder / f"hostile-probe-{uuid.uuid4().hex[:8]}"
        try:
            probe.mkdir()
            probe.rmdir()
            found.append(folder)
        except OSError:
            found.append(None)
    return found[0], found[1]


def can_confine(need: str) -> bool:
    pids, memory = _cgroup_parents()
    if need == "pids-cgroup":
        return pids is not None
    if need == "memory-cgroup":
        return memory is not None
    if need == "not-root":
        return os.geteuid() != 0
    raise ValueError(need)


def _make_cgroups() -> Cgroups:
    pids_parent, memory_parent = _cgroup_parents()
    name = f"lessonkit-hostile-{uuid.uuid4().hex[:8]}"
    pids = memory = None
    if pids_parent is not None:
        pids = pids_parent / name
        pids.mkdir()
        (pids / "pids.max").write_text(str(PIDS_MAX))
    if memory_parent is not None:
        memory = memory_parent / name
        memory.mkdir()
        (memory / "memory.limit_in_bytes").write_text(str(MEMORY_MAX))
    return Cgroups(pids, memory)


def _namespace_prefix() -> list[str]:
    base = ["unshare", "--pid", "--fork", "--kill-child", "--mount-proc"]
    return base if os.geteuid() == 0 else ["unshare", "--user", "--map-root-user", *base[1:]]


def run_confined(
    argv: list[str], cwd: Path, env: dict[str, str], timeout: float, watch: Path, scratch: Path
) -> tuple[dict, dict[str, str]]:
    """Run `python -m lessonkit ARGV` confined; (confine.py's result, cgroup readings)."""
    result_path = scratch / f"result-{uuid.uuid4().hex[:8]}.json"
    groups = _make_cgroups()

    command = [
        *_namespace_prefix(),
        "prlimit",
        f"--data={6 * 2**30}",
        f"--fsize={1 * 2**30}",
        "--core=0",
        f"--nproc={PIDS_MAX}",
        sys.executable,
        str(CONFINE),
        str(result_path),
        str(SETTLE),
        str(timeout),
        str(watch),
        "--",
        sys.executable,
        "-m",
        "lessonkit",
        *argv,
    ]
    # The command joins the cgroups itself, before it execs: a preexec_fn would run Python
    # between fork and exec in this process, which may have imported JAX's threads.
    procs = [str(g / "cgroup.procs") for g in (groups.pids, groups.memory) if g is not None]
    if procs:
        join = f'echo $$ | tee {" ".join(map(shlex.quote, procs))} >/dev/null && exec "$@"'
        command = ["sh", "-c", join, "sh", *command]
    readings: dict[str, str] = {}
    try:
        subprocess.run(
            command,
            cwd=cwd,
            env=env,
            timeout=timeout + SETTLE + 60,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        result = json.loads(result_path.read_text(encoding="utf-8"))
    finally:
        if groups.pids is not None:
            readings["pids.events"] = (groups.pids / "pids.events").read_text().strip()
        if groups.memory is not None:
            for name in ("memory.failcnt", "memory.max_usage_in_bytes"):
                readings[name] = (groups.memory / name).read_text().strip()
        for group in (groups.pids, groups.memory):
            if group is not None:
                _remove_cgroup(group)
    return result, readings


def _remove_cgroup(group: Path) -> None:
    import time

    for _ in range(100):
        try:
            group.rmdir()
            return
        except OSError:
            time.sleep(0.1)


# --------------------------------------------------------------------------- checks


def _hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "missing"


def _tree_hash(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(root)).encode() + path.read_bytes())
    return digest.hexdigest()


def _litter() -> list[str]:
    found = []
    for prefix in LITTER:
        folder, stem = os.path.split(prefix)
        with _suppress():
            found += [os.path.join(folder, n) for n in os.listdir(folder) if n.startswith(stem)]
    return sorted(found)


def _clean_litter() -> None:
    for path in _litter():
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            with _suppress():
                os.unlink(path)


class _suppress:
    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        return kind is not None and issubclass(kind, OSError)


def _statuses(report: dict) -> dict[str, str]:
    return {t["id"]: t["status"] for t in report.get("tasks", [])}


def _common(
    obs: Observation,
    case: Case,
    result: dict,
    readings: dict,
    tmpdir: Path,
    root: Path,
    root_hash: str,
) -> None:
    obs.returncode, obs.seconds, obs.timed_out = (
        result["returncode"],
        result["seconds"],
        result["timed_out"],
    )
    out, err = result["stdout"], result["stderr"]
    if result["timed_out"] or result["seconds"] > case.seconds:
        obs.violations.append(
            f"hang: no result within {case.seconds:g} s "
            f"(ran {result['seconds']} s, killed={result['timed_out']})"
        )
    if "Traceback (most recent call last)" in out + err:
        line = [x for x in (out + err).splitlines() if x.strip()][-1:]
        obs.violations.append(f"crash: traceback on the terminal: {line[0] if line else ''}")
    if "\x1b" in out or "\x07" in out:
        obs.violations.append(
            "terminal escape sequences passed to stdout: "
            + repr(out[out.find("\x1b") - 20 : out.find("\x1b") + 40])
        )
    left = result["processes_at_return"]
    if left:
        obs.violations.append(
            f"{len(left)} process(es) left running after the command returned, e.g. {left[0]}"
        )
    stale = sorted(p.name for p in tmpdir.glob("lessonkit-check-*"))
    if stale:
        obs.violations.append(f"temp folders left behind: {stale[:3]}")
    litter = _litter()
    if litter:
        obs.violations.append(f"files written outside the scratch folder: {litter[:4]}")
    if _tree_hash(root) != root_hash:
        obs.violations.append("the lesson repository ($LESSONKIT_ROOT) was modified")
    events = readings.get("pids.events", "max 0")
    if events.split()[-1] != "0":
        obs.violations.append(
            f"the suite's outer pids limit ({PIDS_MAX}) was hit "
            f"(pids.events: {events}): the grader's own limit did not hold"
        )
    if readings.get("memory.failcnt", "0") != "0":
        usage = int(readings.get("memory.max_usage_in_bytes", "0")) / 2**30
        obs.violations.append(
            f"the suite's outer memory limit ({MEMORY_MAX / 2**30:g} GiB) was "
            f"hit (failcnt {readings['memory.failcnt']}, peak {usage:.1f} GiB)"
        )
    if readings:
        obs.evidence.append("cgroups: " + ", ".join(f"{k}={v}" for k, v in readings.items()))


def _check_report(obs: Observation, case: Case, report: dict, who: str) -> None:
    statuses = _statuses(report)
    for task in case.wrong:
        if statuses.get(task) == "passed":
            message = next(t["message"] for t in report["tasks"] if t["id"] == task)
            obs.violations.append(f"false pass: {who} task {task} is 'passed' ({message[:90]})")
    required_wrong = [t for t in case.wrong if t != "adam-by-hand"]
    if required_wrong and report.get("passed") is True:
        obs.violations.append(f'false pass: {who} has top-level "passed": true')


# --------------------------------------------------------------------------- running a case


@dataclass(frozen=True)
class SharedGrading:
    """What every case's command shares, as one instructor's checks on one account do: the
    grading key (a copy in each case's own HOME) and the input seed (`--seed`, drawn once per
    test run). The shared cache's reference store then answers every case after the first
    (it keys on the seed and signs with the key); each case still has its own HOME, so its
    own copy of the key, to damage."""

    key: Path
    seed: int


def make_shared_grading(folder: Path, run_id: str) -> SharedGrading:
    """The key at `folder`/hostile-grading.key, made once for every xdist worker (the first to
    link it wins), and a seed drawn from the test run's id."""
    key = folder / "hostile-grading.key"
    if not key.exists():
        draft = folder / f"hostile-grading.key.{uuid.uuid4().hex}"
        draft.write_text(secrets.token_hex(32), encoding="ascii")
        draft.chmod(0o600)
        with contextlib.suppress(FileExistsError):
            os.link(draft, key)
        draft.unlink()
    return SharedGrading(key, int(run_id[:8], 16))


def _environment(
    root: Path, home: Path, tmpdir: Path, cache_home: Path | None = None
) -> dict[str, str]:
    """`cache_home`: $XDG_CACHE_HOME, where JAX's compile cache lives (the trusted reference
    writes it, sandboxed submissions only read it); by default under the case's own HOME."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "TMPDIR": str(tmpdir),
        "LESSONKIT_ROOT": str(root),
        "LC_ALL": "C.UTF-8",
        **({"XDG_CACHE_HOME": str(cache_home)} if cache_home else {}),
        # the lessonkit under test, where PYTHONPATH names it (a worktree), not the installed one
        **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"},
    }


def _setup(base: Path, grading: SharedGrading) -> tuple[Path, Path, Path]:
    from conftest import copy_lesson_repo

    root, home, tmpdir = base / "root", base / "home", base / "tmp"
    for folder in (root, home, tmpdir):
        folder.mkdir(parents=True)
    copy_lesson_repo(root)
    # where the case's command looks for the key: its HOME's config folder
    key = default_key_path({"XDG_CONFIG_HOME": str(home / ".config")})
    key.parent.mkdir(mode=0o700, parents=True)
    shutil.copy(grading.key, key)
    return root, home, tmpdir


def grade_alone(
    lesson: Lesson, base: Path, grading: SharedGrading, cache_home: Path | None = None
) -> dict[str, dict[str, str]]:
    """The honest submissions' task statuses when each is graded on its own."""
    root, home, tmpdir = _setup(base, grading)
    env = _environment(root, home, tmpdir, cache_home)
    out = {}
    for name, text in honest_files(lesson).items():
        path = base / name
        path.write_text(text, encoding="utf-8")
        argv = ["check", "state-02", str(path), "--json", "--timeout", "15"]
        argv += ["--seed", str(grading.seed)]
        result, _ = run_confined(argv, base, env, 120, home, base)
        out[name] = _statuses(json.loads(result["stdout"]))
    return out


def run_case(
    case: Case,
    lesson: Lesson,
    base: Path,
    grading: SharedGrading,
    alone: dict | None = None,
    cache_home: Path | None = None,
) -> Observation:
    """Build the case under `base`, run it confined, and judge the outcome."""
    _clean_litter()
    root, home, tmpdir = _setup(base, grading)
    root_hash = _tree_hash(root)
    env = {**_environment(root, home, tmpdir, cache_home), **dict(case.env)}
    if case.mode == "single":
        folder = base / "submission"
        folder.mkdir()
        path = build(case, folder, lesson, "attempt")
        argv = ["check", "state-02", str(path), "--timeout", "10"]
        argv += ["--json"] if case.as_json else []
        watch = home
    else:
        folder = base / "batch"
        folder.mkdir()
        build(case, folder, lesson, "a-hostile")
        for name, text in honest_files(lesson).items():
            (folder / name).write_text(text, encoding="utf-8")
        before = {p.name: _hash(p) for p in folder.iterdir()}
        argv = [
            "check",
            "state-02",
            "--batch",
            str(folder),
            "--json",
            "--jobs",
            str(case.jobs),
            "--timeout",
            "15",
        ]
        watch = base / "check-state-02"  # the outputs' default folder: ./check-LESSON/
    argv += ["--seed", str(grading.seed)]
    obs = Observation(" ".join(["lessonkit", *argv]).replace(str(base), "$CASE"))
    result, readings = run_confined(argv, base, env, case.seconds + 30, watch, base)
    _common(obs, case, result, readings, tmpdir, root, root_hash)
    _clean_litter()
    out = result["stdout"]
    if case.mode == "single":
        if obs.returncode not in case.exit_codes:
            obs.violations.append(
                f"exit status {obs.returncode}, expected one of {list(case.exit_codes)}"
            )
        if case.as_json and obs.returncode != 2 and not obs.timed_out:
            try:
                report = json.loads(out)
            except ValueError:
                obs.violations.append(f"stdout is not JSON: {out[:120]!r}")
            else:
                _check_report(obs, case, report, "the submission")
                obs.evidence.append("statuses: " + json.dumps(_statuses(report)))
    else:
        _check_batch(obs, case, result, folder, before, alone or {})
    err_lines = [x for x in result["stderr"].splitlines() if x.strip()]
    if err_lines:
        obs.evidence.append(f"stderr: {err_lines[-1][:160]}")
    obs.evidence.insert(
        0,
        f"exit {obs.returncode} after {obs.seconds} s"
        + (" (killed at the time limit)" if obs.timed_out else ""),
    )
    return obs


def _check_batch(
    obs: Observation, case: Case, result: dict, folder: Path, before: dict, alone: dict
) -> None:
    if obs.returncode not in (0, 1):
        obs.violations.append(f"the batch ended with exit status {obs.returncode}")
    outputs = {"check-state-02.csv", "check-state-02.json", "feedback"}  # the batch's own
    for name, digest in before.items():
        if name.startswith(("m-", "n-")) and _hash(folder / name) != digest:
            obs.violations.append(f"honest file {name} was modified")
    now = {p.name for p in folder.iterdir()}
    extra = now - set(before)  # the batch folder is data: nothing is written there
    if extra:
        obs.violations.append(f"new files in the batch folder: {sorted(extra)}")
    folder = folder.parent / "check-state-02"  # where the outputs go by default
    written = {p.name for p in folder.iterdir()} if folder.is_dir() else set()
    missing = outputs - written
    if missing:
        obs.violations.append(f"batch outputs missing: {sorted(missing)}")
    at_return, after = result["hashes_at_return"], result["hashes_after_settle"]
    changed = sorted(n for n in outputs if at_return.get(n) != after.get(n))
    if changed:
        obs.violations.append(
            f"outputs modified after the command returned: {changed}: "
            f"{(folder / changed[0]).read_text(errors='replace')[:60]!r}"
        )
    try:
        summary = json.loads(result["stdout"])
        reports = {Path(r["file"]).name: r for r in summary["reports"]}
    except (ValueError, KeyError, TypeError):
        obs.violations.append(f"batch stdout is not the JSON summary: {result['stdout'][:100]!r}")
        reports = {}
    if (folder / "check-state-02.json").is_file():
        try:
            json.loads((folder / "check-state-02.json").read_text(encoding="utf-8"))
        except ValueError:
            obs.violations.append("check-state-02.json does not parse")
    csv_path = folder / "check-state-02.csv"
    if csv_path.is_file():
        text = csv_path.read_text(encoding="utf-8", errors="replace")
        if not text.strip():
            obs.violations.append("check-state-02.csv is empty")
        rows = list(csv.reader(io.StringIO(text)))
        bad = [c for row in rows for c in row if c[:1] in ("=", "+", "@", "\t", "\r")]
        if bad:
            obs.violations.append(f"CSV cell open to formula injection: {bad[0][:70]!r}")
    for name, expected in alone.items():
        report = reports.get(name)
        if report is None:
            obs.violations.append(f"honest {name} has no verdict")
            continue
        got = _statuses(report)
        if got != expected:
            diff = {k: f"{expected.get(k)} -> {v}" for k, v in got.items() if expected.get(k) != v}
            obs.violations.append(f"honest {name} verdict changed: {diff}")
    hostile = next((r for n, r in reports.items() if n.startswith("a-hostile")), None)
    if hostile is not None:
        _check_report(obs, case, hostile, "the hostile submission")
        obs.evidence.append("hostile statuses: " + json.dumps(_statuses(hostile)))
    elif reports:
        obs.violations.append("the hostile submission has no verdict")
