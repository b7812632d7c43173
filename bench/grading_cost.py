"""What grading costs, before and after a change, side by side: the figures of issue 35.

Two code trees (`--before`, `--after`: a checkout or its `src` folder) run by the same
interpreter and venv, each chosen by PYTHONPATH, on the same submissions and the same course
(each tree gets its own copy of its checkout's course, or of this repository's for a bare
`src` folder, found through $LESSONKIT_ROOT, so nothing is written in either checkout: a
lesson change, such as the mistakes state-02 declares, is measured with the code that reads
it). Every figure is measured before, after, before,
after ... round by round, so machine load hits both alike; each is the median of
`--rounds` (default 5). Per tree:

- check    `lessonkit check state-02 solved.py`: the fully solved practice file (every
           scaffold replaced by its solution, `check_latency.solved_files`). CPU-s of the
           whole process tree, wall seconds, peak memory.
- batch    `lessonkit check state-02 --batch DIR --jobs 1` and `--jobs 2` over `--files`
           mixed notebooks (`batch_throughput.notebooks`: solved, wrong, unattempted,
           crashing). Files/min from wall time; learner CPU-s per file = (tree CPU - the
           parent's own CPU) / files, i.e. every child the batch started (the learner
           children and, where there is one, the trusted reference child or starter).
- watch    `lessonkit check --watch`: seconds from rewriting the file to its verdict on the
           watcher's stdout (`check_latency.watch_latency`), median of 5 saves per round.
- build    `lessonkit build` with nothing to do (every lesson already built: one build per
           tree beforehand), as `build_no_change.py` measures it.

How the tree is measured: each command runs in cgroups of its own (cgroup v1 `cpuacct` and
`memory`, or one v2 cgroup), entered before exec, so every descendant counts, sandboxed
grandchildren and the grader's own per-child cgroups (nested under ours) included. CPU-s =
`cpuacct.usage` (v2: `cpu.stat` usage_usec); tree peak memory = `memory.max_usage_in_bytes`
(v2: `memory.peak`), which counts page cache first read by the tree. The parent's own CPU
and peak RSS come from `getrusage(RUSAGE_SELF)` inside a thin wrapper that calls
`lessonkit.cli.main` (so `python -c WRAPPER` stands where `python -m lessonkit` would);
"largest child RSS" is the parent's `RUSAGE_CHILDREN.ru_maxrss` (the biggest process it
waited for). Without a writable cgroup (not root, or neither layout), tree CPU falls back to
`RUSAGE_CHILDREN` deltas of this process, which miss processes that left the tree (a
daemonized or re-parented grandchild), and tree peak memory is not shown: the table says so.

The floor: one process that imports JAX and runs the graded cells for all of the check's
scenarios, the least any grader could spend. The learner child's requests of one `check`
are recorded once (the before tree's `ChildHandle.send`, patched in a recording run), then
each round replayed into one unsandboxed grading child program (`lessonkit/grading_child/main.py`)
with the grader's own child environment and compile cache: one process, one JAX import,
the same cells and scenarios. Every figure prints its ratio to the floor: CPU-s to floor
CPU-s, seconds to floor wall seconds, MiB to the floor's tree peak, files/min to 60 / floor
wall seconds, minutes for 10,000 files to 10,000 floor runs spread over the same workers.
If the recording fails, the floor is `python graded.py` (the graded cells, one scenario;
`check_latency.graded_cells`) and the table says so.

The projection for 10,000 submissions: one worker = one job slot of `--jobs 2` on this
machine (about one core), grading at files/min(--jobs 2) / 2; W workers scale linearly
(no shared scheduler, storage or network costs; each worker's fixed start-up amortized).
Goal: under 10 minutes on 32 workers, i.e. at most 1.92 s per file per worker.

Run from the repository root (the orchestrator imports lessonkit to write the submissions:
put the after tree first):

    PYTHONPATH=src python bench/grading_cost.py --before ../main --after . [--rounds 5]
        [--files 12] [--only check,batch,watch,build] [--json results.json]

Print-only: no timed assertion anywhere. The load average is printed at start and end.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from batch_throughput import notebooks
from check_latency import LESSON, graded_cells, solved_files, watch_latency

REPO = Path(__file__).resolve().parents[1]
FIGURES = ("check", "batch", "watch", "build")
SAVES = 5
SUBMISSIONS, BIG_CLUSTER = 10_000, 32

WRAPPER = """
import json, resource, sys
stats, argv = sys.argv[1], sys.argv[2:]
sys.argv = ["lessonkit", *argv]
code = 1
try:
    from lessonkit.cli import main
    code = main(argv)
except SystemExit as exc:
    code = exc.code
finally:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(stats, "w") as out:
        json.dump({"cpu": me.ru_utime + me.ru_stime, "rss": me.ru_maxrss * 1024,
                   "child_rss": kids.ru_maxrss * 1024}, out)
sys.exit(code)
"""
"""`lessonkit ARGS` in this process, then its own CPU and peak RSS written to a file."""

RECORD = """
import json, os, sys
try:
    from lessonkit.grade.channel.child_handle import CHILD_SCRIPT, ChildHandle
except ImportError:  # a tree from before issue 53 named it a worker
    from lessonkit.grade.channel.worker_handle import WORKER_SCRIPT as CHILD_SCRIPT
    from lessonkit.grade.channel.worker_handle import WorkerHandle as ChildHandle
from lessonkit.settings import compile_cache_from
from lessonkit.run.process import GRADER_SETTINGS
target, argv = sys.argv[1], sys.argv[2:]
sent = []
original = ChildHandle.send
def send(self, request):
    if not self.trusted:
        sent.append(request.to_line().decode())
    return original(self, request)
ChildHandle.send = send
from lessonkit.cli import main
code = main(argv)
cache = compile_cache_from(os.environ)
env = {**GRADER_SETTINGS, **({"JAX_COMPILATION_CACHE_DIR": str(cache)} if cache else {})}
with open(target, "w") as out:
    json.dump({"requests": sent, "env": env, "program": str(CHILD_SCRIPT)}, out)
sys.exit(code)
"""
"""One `lessonkit check`, recording what the learner child was asked to run (for the floor)."""


# --------------------------------------------------------------------------- measuring


@dataclass
class Usage:
    """One command's cost. Memory in bytes; None where it could not be measured."""

    wall: float
    cpu: float  # the whole process tree
    parent_cpu: float | None = None
    parent_rss: int | None = None
    child_rss: int | None = None
    tree_peak: int | None = None


class Meter:
    """Runs a command in cgroups of its own (made here, removed here) and reads its tree's
    CPU and peak memory; without them, RUSAGE_CHILDREN deltas of this process."""

    def __init__(self) -> None:
        self.prefix = f"grading-cost-{os.getpid()}-"
        self.count = 0
        self.layout, self.bases = self._find()

    @staticmethod
    def _own(controller: str) -> str | None:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if (controller == "" and controllers == "") or controller in controllers.split(","):
                return path
        return None

    def _find(self) -> tuple[str, dict[str, Path]]:
        if os.geteuid() != 0 or not sys.platform.startswith("linux"):
            return "rusage", {}
        root = Path("/sys/fs/cgroup")
        with contextlib.suppress(OSError, ValueError, TypeError):
            cpu, memory = self._own("cpuacct"), self._own("memory")
            if (root / "cpuacct" / "cpuacct.usage").exists() and cpu is not None:
                bases = {
                    "cpuacct": root / "cpuacct" / cpu.lstrip("/"),
                    "memory": root / "memory" / (memory or "/").lstrip("/"),
                }
                if self._works("v1", bases):
                    return "v1", bases
            if (root / "cgroup.controllers").exists():
                bases = {"unified": root / (self._own("") or "/").lstrip("/")}
                if self._works("v2", bases):
                    return "v2", bases
        return "rusage", {}

    def _works(self, layout: str, bases: dict[str, Path]) -> bool:
        self.layout, self.bases = layout, bases
        try:
            usage = self.run([sys.executable, "-c", "pass"])
        except OSError:
            return False
        return usage.cpu > 0

    def _make(self) -> list[Path]:
        self.count += 1
        name = f"{self.prefix}{self.count}"
        made: list[Path] = []
        try:
            for controller, base in self.bases.items():
                if controller == "memory" and not base.exists():
                    continue
                folder = base / name
                folder.mkdir()
                made.append(folder)
        except OSError:
            self._remove(made)
            raise
        return made

    @staticmethod
    def _remove(folders: list[Path]) -> None:
        """Remove our cgroups; whatever of our command's tree is still inside is killed."""
        for folder in folders:
            for attempt in range(250):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if attempt >= 100:  # 2 s: a process of our command outlived it
                        with contextlib.suppress(OSError, ValueError):
                            for pid in (folder / "cgroup.procs").read_text().split():
                                with contextlib.suppress(OSError):
                                    os.kill(int(pid), signal.SIGKILL)
                    time.sleep(0.02)
            else:
                print(f"bench: could not remove {folder}", file=sys.stderr)

    def _read(self, folders: list[Path]) -> tuple[float, int | None]:
        cpu, peak = 0.0, None
        for folder in folders:
            if self.layout == "v2":
                stat = dict(line.split() for line in (folder / "cpu.stat").read_text().splitlines())
                cpu = int(stat["usage_usec"]) / 1e6
                with contextlib.suppress(OSError, ValueError):
                    peak = int((folder / "memory.peak").read_text())
            elif (folder / "cpuacct.usage").exists():
                cpu = int((folder / "cpuacct.usage").read_text()) / 1e9
            elif (folder / "memory.max_usage_in_bytes").exists():
                peak = int((folder / "memory.max_usage_in_bytes").read_text())
        return cpu, peak

    def run(
        self,
        argv: list[str],
        *,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        stdin=None,
        pass_fds: tuple[int, ...] = (),
        expect: tuple[int, ...] = (0,),
    ) -> Usage:
        """Run `argv` to its end; raises RuntimeError with its output if it exits otherwise."""
        folders = self._make() if self.layout != "rusage" else []
        procs = [str(f / "cgroup.procs") for f in folders]

        def enter() -> None:  # in the child, before exec: all it starts is inside
            for path in procs:
                with open(path, "w") as handle:
                    handle.write(str(os.getpid()))

        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        try:
            result = subprocess.run(
                argv,
                cwd=cwd,
                env=env,
                stdin=stdin if stdin is not None else subprocess.DEVNULL,
                capture_output=True,
                text=True,
                pass_fds=pass_fds,
                preexec_fn=enter if procs else None,
            )
            wall = time.perf_counter() - started
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu, peak = self._read(folders) if folders else (0.0, None)
        finally:
            self._remove(folders)
        if not folders:
            cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        if result.returncode not in expect:
            tail = (result.stdout + result.stderr)[-1500:]
            raise RuntimeError(f"{' '.join(argv[-6:])} exited {result.returncode}:\n{tail}")
        return Usage(wall, cpu, tree_peak=peak)

    def lessonkit(self, tree: Tree, args: list[str], cwd: Path, **kw) -> Usage:
        """`lessonkit ARGS` of `tree`, with the parent's own CPU and memory."""
        stats = cwd / ".grading-cost-stats.json"
        stats.unlink(missing_ok=True)
        usage = self.run([sys.executable, "-c", WRAPPER, str(stats), *args], cwd=cwd,
                         env=tree.env, **kw)  # fmt: skip
        with contextlib.suppress(OSError, ValueError):
            own = json.loads(stats.read_text())
            usage.parent_cpu, usage.parent_rss = own["cpu"], own["rss"]
            usage.child_rss = own["child_rss"] or None
        return usage


# --------------------------------------------------------------------------- the trees


@dataclass
class Tree:
    label: str
    src: Path
    work: Path
    env: dict[str, str] = field(default_factory=dict)
    solved: Path | None = None
    samples: dict[str, list[float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add(self, name: str, value: float | None) -> None:
        if value is not None:
            self.samples.setdefault(name, []).append(value)

    def median(self, name: str) -> float | None:
        values = self.samples.get(name)
        return statistics.median(values) if values else None


def source_folder(path: str) -> Path:
    """The folder to put on PYTHONPATH: PATH/src, or PATH itself if it holds lessonkit/."""
    given = Path(path).resolve()
    for candidate in (given / "src", given):
        if (candidate / "lessonkit" / "__init__.py").is_file():
            return candidate
    raise SystemExit(f"bench: no lessonkit package in {given} or {given / 'src'}")


def copy_course(target: Path, root: Path = REPO) -> None:
    """A checkout's course (lessons, site settings), without code or outputs."""
    skip = shutil.ignore_patterns(
        ".git", ".venv*", "src", "tests", "bench", "build", "__pycache__", "node_modules",
        "*.egg-info", ".pytest_cache", ".ruff_cache", "runs", "evidence", "practice",
        ".lessonkit", "check-*", "_build",
    )  # fmt: skip
    shutil.copytree(root, target, ignore=skip, symlinks=True)


def make_tree(label: str, path: str, base: Path) -> Tree:
    src = source_folder(path)
    work = base / label
    course = work / "course"
    checkout = src.parent if (src.parent / "phases").is_dir() else REPO
    copy_course(course, checkout)
    env = {**os.environ, "PYTHONPATH": str(src), "LESSONKIT_ROOT": str(course)}
    tree = Tree(label, src, work, env)
    py, _ = solved_files(work)
    tree.solved = py
    (work / "class").mkdir()
    return tree


# --------------------------------------------------------------------------- the figures


def attempt(tree: Tree, what: str, measure) -> Usage | None:
    """Run one measurement; a failure is noted for the table, never fatal."""
    try:
        return measure()
    except (RuntimeError, OSError, SystemExit) as exc:
        note = f"{what}: {exc}".strip()
        if note not in tree.notes:
            tree.notes.append(note)
        print(f"  [{tree.label}] {what} FAILED: {str(exc)[:300]}", file=sys.stderr)
        return None


def mib(value: int | None) -> float | None:
    return None if value is None else value / 2**20


def measure_check(meter: Meter, tree: Tree) -> None:
    assert tree.solved is not None
    usage = attempt(tree, "check", lambda: meter.lessonkit(
        tree, ["check", LESSON, tree.solved.name], tree.work))  # fmt: skip
    if usage is None:
        return
    tree.add("check CPU-s", usage.cpu)
    tree.add("check wall s", usage.wall)
    tree.add("check parent CPU-s", usage.parent_cpu)
    tree.add("check parent peak RSS MiB", mib(usage.parent_rss))
    tree.add("check largest child RSS MiB", mib(usage.child_rss))
    tree.add("check tree peak MiB", mib(usage.tree_peak))


def measure_batch(meter: Meter, tree: Tree, jobs: int, files: int, round_no: int) -> None:
    out = tree.work / f"out-{jobs}-{round_no}"
    args = ["check", LESSON, "--batch", "class", "--jobs", str(jobs), "--out", str(out)]
    # a batch of failing files exits 1: that is a verdict, not a crash
    usage = attempt(tree, f"batch --jobs {jobs}", lambda: meter.lessonkit(
        tree, args, tree.work, expect=(0, 1)))  # fmt: skip
    shutil.rmtree(out, ignore_errors=True)
    if usage is None:
        return
    tree.add(f"batch j{jobs} files/min", 60 * files / usage.wall)
    tree.add(f"batch j{jobs} CPU-s/file", usage.cpu / files)
    if usage.parent_cpu is not None:
        tree.add(f"batch j{jobs} learner CPU-s/file", (usage.cpu - usage.parent_cpu) / files)
    if jobs == 2:
        tree.add("batch j2 parent peak RSS MiB", mib(usage.parent_rss))
        tree.add("batch j2 largest child RSS MiB", mib(usage.child_rss))
        tree.add("batch j2 tree peak MiB", mib(usage.tree_peak))


def measure_watch(tree: Tree) -> None:
    assert tree.solved is not None
    command = [sys.executable, "-m", "lessonkit"]

    def run() -> Usage:
        latencies, _ = watch_latency(command, tree.solved, SAVES, env=tree.env)
        return Usage(statistics.median(latencies), 0.0)

    usage = attempt(tree, "watch", run)
    if usage is not None:
        tree.add("watch save-to-verdict s", usage.wall)


def measure_build(meter: Meter, tree: Tree) -> None:
    course = Path(tree.env["LESSONKIT_ROOT"])
    usage = attempt(tree, "build", lambda: meter.lessonkit(tree, ["build"], course))
    if usage is not None:
        tree.add("build (no change) CPU-s", usage.cpu)
        tree.add("build (no change) wall s", usage.wall)
        tree.add("build parent peak RSS MiB", mib(usage.parent_rss))


# --------------------------------------------------------------------------- the floor


@dataclass
class Floor:
    how: str
    run: object  # () -> Usage
    cpu: list[float] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)
    peak: list[float] = field(default_factory=list)  # MiB


def make_floor(meter: Meter, tree: Tree) -> Floor:
    """One process that imports JAX and runs the graded cells for all of check's scenarios."""
    assert tree.solved is not None
    recording = tree.work / "floor-requests.json"
    try:
        meter.run([sys.executable, "-c", RECORD, str(recording), "check", LESSON,
                   tree.solved.name], cwd=tree.work, env=tree.env)  # fmt: skip
        recorded = json.loads(recording.read_text())
        if not recorded["requests"]:
            raise RuntimeError("no learner request was sent")
    except (RuntimeError, OSError, ValueError, KeyError) as exc:
        graded = graded_cells(tree.solved)
        print(f"bench: floor recording failed ({str(exc)[:300]}); floor = python graded.py")

        def plain() -> Usage:
            return meter.run([sys.executable, graded.name], cwd=tree.work, env=tree.env)

        return Floor("python graded.py (graded cells, one scenario: recording failed)", plain)
    requests = tree.work / "floor-requests.jsonl"
    requests.write_text("".join(recorded["requests"]))
    scratch = tree.work / "floor-scratch"
    scratch.mkdir(exist_ok=True)
    env = {**recorded["env"], "HOME": str(scratch), "TMPDIR": str(scratch)}
    env["MPLCONFIGDIR"] = str(scratch / ".matplotlib")
    scenarios = sum(len(json.loads(line)["scenarios"]) for line in recorded["requests"])

    def replay() -> Usage:
        with requests.open("rb") as stdin, open(os.devnull, "wb") as reports:
            fd = reports.fileno()
            # the report descriptor, then the import paths the parent passes (none beyond the
            # interpreter's own; a tree whose child program takes no paths ignores them)
            argv = [sys.executable, "-I", recorded["program"], str(fd), "[]"]
            return meter.run(argv, cwd=scratch, env=env, stdin=stdin, pass_fds=(fd,))

    how = (
        f"one grading child program, unsandboxed, replaying check's learner request(s): "
        f"{len(recorded['requests'])} request(s), {scenarios} scenarios, one JAX import"
    )
    return Floor(how, replay)


# --------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class Row:
    name: str
    goal: str = ""
    limit: float | None = None  # the goal: at most this (or at least, when `higher`)
    higher: bool = False  # bigger is better (throughput)
    floor: str = ""  # the floor figure the ratio divides by (see `floor_figures`); "" none
    unit: str = ""


ROWS = (
    Row("check CPU-s", "<= 2.5 CPU-s (from 6.0)", 2.5, floor="cpu"),
    Row("check wall s", floor="wall"),
    Row("check parent CPU-s", floor="cpu"),
    Row("batch j1 files/min", higher=True, floor="rate"),
    Row("batch j1 CPU-s/file", floor="cpu"),
    Row("batch j1 learner CPU-s/file", "<= 1.2 CPU-s", 1.2, floor="cpu"),
    Row("batch j2 files/min", higher=True, floor="rate"),
    Row("batch j2 CPU-s/file", floor="cpu"),
    Row("batch j2 learner CPU-s/file", "<= 1.2 CPU-s", 1.2, floor="cpu"),
    Row("watch save-to-verdict s", "<= 1 s", 1.0, floor="wall"),
    Row("build (no change) CPU-s", "< 1.5 CPU-s (item 4)", 1.5, floor="cpu"),
    Row("build (no change) wall s", floor="wall"),
    Row("check parent peak RSS MiB", floor="memory"),
    Row("check largest child RSS MiB", floor="memory"),
    Row("check tree peak MiB", floor="memory"),
    Row("batch j2 parent peak RSS MiB", floor="memory"),
    Row("batch j2 largest child RSS MiB", floor="memory"),
    Row("batch j2 tree peak MiB", floor="memory"),
    Row("build parent peak RSS MiB", floor="memory"),
    Row("10k files, 1 worker, min", floor="10k-1"),
    Row(f"10k files, {BIG_CLUSTER} workers, min", "< 10 min", 10.0, floor="10k-many"),
)


def project(tree: Tree) -> None:
    """Minutes for 10,000 submissions from files/min at --jobs 2 (one worker = one slot)."""
    for fpm in tree.samples.get("batch j2 files/min", []):
        per_worker = fpm / 2
        tree.add("10k files, 1 worker, min", SUBMISSIONS / per_worker)
        tree.add(f"10k files, {BIG_CLUSTER} workers, min", SUBMISSIONS / (BIG_CLUSTER * per_worker))


def show(value: float | None, width: int = 10, digits: int = 2) -> str:
    return f"{'n/a':>{width}}" if value is None else f"{value:>{width}.{digits}f}"


def floor_figures(floor: Floor) -> dict[str, float | None]:
    """What each kind of row is divided by: the floor's CPU-s, wall s, peak memory (MiB),
    files/min (one file per floor run, back to back) and minutes for 10,000 files."""
    cpu = statistics.median(floor.cpu) if floor.cpu else None
    wall = statistics.median(floor.wall) if floor.wall else None
    peak = statistics.median(floor.peak) if floor.peak else None
    return {
        "cpu": cpu,
        "wall": wall,
        "memory": peak,
        "rate": 60 / wall if wall else None,
        "10k-1": SUBMISSIONS * wall / 60 if wall else None,
        "10k-many": SUBMISSIONS * wall / 60 / BIG_CLUSTER if wall else None,
    }


def table(trees: tuple[Tree, Tree], floor: Floor, rounds: int) -> None:
    before, after = trees
    bases = floor_figures(floor)
    floor_cpu, floor_wall, floor_peak = bases["cpu"], bases["wall"], bases["memory"]
    print()
    print(f"grading cost, {LESSON}, medians of {rounds} interleaved round(s)")
    print(f"  before: {before.src}")
    print(f"  after:  {after.src}")
    print(f"  floor:  {floor.how}")
    print(
        f"          {show(floor_cpu, 0)} CPU-s, {show(floor_wall, 0)} s wall, "
        f"{show(floor_peak, 0, 0)} MiB tree peak"
    )
    header = f"{'figure':<32}{'before':>10}{'after':>10}{'after/bef':>10}{'after/flr':>10}"
    print()
    print(f"{header}  goal (after)")
    for row in ROWS:
        old, new = before.median(row.name), after.median(row.name)
        if old is None and new is None:
            continue
        ratio = new / old if new is not None and old else None
        base = bases.get(row.floor)
        to_floor = new / base if new is not None and base else None
        verdict = ""
        if row.limit is not None and new is not None:
            met = new >= row.limit if row.higher else new <= row.limit
            verdict = f"{'met ' if met else 'MISS'} {row.goal}"
        print(
            f"{row.name:<32}{show(old)}{show(new)}{show(ratio, digits=2)}"
            f"{show(to_floor, digits=2)}  {verdict}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="a checkout or its src folder")
    parser.add_argument("--after", required=True, help="a checkout or its src folder")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--files", type=int, default=12, help="submissions in each batch")
    parser.add_argument("--only", default=",".join(FIGURES), help="of: " + ",".join(FIGURES))
    parser.add_argument("--json", metavar="FILE", help="also write every sample here")
    args = parser.parse_args()
    only = [f.strip() for f in args.only.split(",") if f.strip()]
    unknown = sorted(set(only) - set(FIGURES))
    if unknown:
        parser.error(f"--only: unknown figure(s) {', '.join(unknown)}")
    load_start = os.getloadavg()
    meter = Meter()
    print(f"load average at start: {', '.join(f'{x:.2f}' for x in load_start)}")
    if meter.layout == "rusage":
        print(
            "CAVEAT: no writable cgroup here (needs root and cgroup v1 cpuacct+memory or v2): "
            "tree CPU is RUSAGE_CHILDREN deltas, which miss processes that left the tree, "
            "and tree peak memory is not measured"
        )
    else:
        print(f"measuring whole process trees with cgroup {meter.layout}: {meter.bases}")
    with tempfile.TemporaryDirectory(prefix="grading-cost-") as tmp:
        base = Path(tmp)
        base.chmod(0o755)  # sandboxed children run as users of their own
        trees = (make_tree("before", args.before, base), make_tree("after", args.after, base))
        for tree in trees:
            notebooks(tree.work / "class", args.files)
        print("warming up (not counted): one check and one build per tree ...", flush=True)
        for tree in trees:
            measure_check(meter, tree)
            if "build" in only:
                measure_build(meter, tree)
            tree.samples.clear()
        floor = make_floor(meter, trees[0])
        for round_no in range(args.rounds):
            print(f"round {round_no + 1}/{args.rounds} ...", flush=True)
            usage = attempt(trees[0], "floor", floor.run)
            if usage is not None:
                floor.cpu.append(usage.cpu)
                floor.wall.append(usage.wall)
                if usage.tree_peak is not None:
                    floor.peak.append(usage.tree_peak / 2**20)
            for tree in trees if "check" in only else ():
                measure_check(meter, tree)
            for jobs in (1, 2) if "batch" in only else ():
                for tree in trees:
                    measure_batch(meter, tree, jobs, args.files, round_no)
            for tree in trees if "watch" in only else ():
                measure_watch(tree)
            for tree in trees if "build" in only else ():
                measure_build(meter, tree)
        for tree in trees:
            project(tree)
    table(trees, floor, args.rounds)
    print()
    print(
        f"10k projection: one worker = one --jobs 2 slot on this {os.cpu_count()}-core machine "
        f"(files/min at --jobs 2 / 2), scaled linearly to {BIG_CLUSTER} workers"
    )
    print(
        "learner CPU-s/file = (tree CPU - the parent's own) / files: every child of the batch, "
        "reference or starter included"
    )
    print(
        "after/flr: CPU-s / floor CPU-s; seconds / floor wall s; MiB / floor tree peak MiB; "
        "files/min / (60 / floor wall s); 10k minutes / (10,000 x floor wall s / workers)"
    )
    for tree in trees:
        for note in tree.notes:
            print(f"note [{tree.label}]: {note[:500]}")
    load_end = os.getloadavg()
    print(f"load average at end: {', '.join(f'{x:.2f}' for x in load_end)}")
    if args.json:
        data = {
            "rounds": args.rounds,
            "files": args.files,
            "load": {"start": load_start, "end": load_end},
            "floor": {"how": floor.how, "cpu": floor.cpu, "wall": floor.wall, "peak": floor.peak},
            **{t.label: {"src": str(t.src), "samples": t.samples} for t in trees},
        }
        Path(args.json).write_text(json.dumps(data, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
