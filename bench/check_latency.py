"""How long `lessonkit check` takes, measured beside what a learner would run anyway.

Side by side in one run, on the same fully solved practice file (scaffolds replaced by the
reference solutions), interleaved round by round so that machine load hits every command
alike:

- `lessonkit check state-02 solved.py`   the grader: a trusted reference child and a fresh
                                          sandboxed learner child, side by side, on the
                                          lesson's inputs, the drawn sets and the probes
- `python solved.py`                      the plain script
- `python graded.py`                      only the cells the grader runs (it skips the figure
                                          and the optional experiments, which no task needs)
- `jupyter execute solved.ipynb`          the notebook, through a kernel

and the save-to-verdict time of `lessonkit check --watch`: the time from writing the file
to the verdict appearing on the watcher's output. Medians are printed with their ratios and
the targets beside them.

Run from the repository root:  python bench/check_latency.py [--rounds 5] [--saves 8]
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from lessonkit.grade.submission.plan import SKIP, plan_submission
from lessonkit.grade.submission.sources import read_submission
from lessonkit.lesson.catalog import find_lesson
from lessonkit.lesson.cell import task_cell_source

LESSON = "state-02"


def solved_files(folder: Path) -> tuple[Path, Path]:
    """The practice script and notebook with every scaffold replaced by its solution."""
    lesson = find_lesson(LESSON)
    exercises = lesson.directory / "exercises"
    script = (exercises / f"{LESSON}.py").read_text(encoding="utf-8")
    notebook = json.loads((exercises / f"{LESSON}.ipynb").read_text(encoding="utf-8"))
    for task in lesson.tasks:
        scaffold, solution = (
            task_cell_source(task, task.scaffold),
            task_cell_source(task, task.solution),
        )
        if scaffold not in script:
            raise SystemExit(f"bench: task {task.id} scaffold not found; run `lessonkit build`")
        script = script.replace(scaffold, solution)
        for cell in notebook["cells"]:
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            if cell["cell_type"] == "code" and source.startswith(f"# TASK {task.id}"):
                cell["source"] = solution
    py, ipynb = folder / "solved.py", folder / "solved.ipynb"
    py.write_text(script, encoding="utf-8")
    ipynb.write_text(json.dumps(notebook), encoding="utf-8")
    return py, ipynb


def graded_cells(solved: Path) -> Path:
    """The solved script cut down to the cells `lessonkit check` runs."""
    lesson = find_lesson(LESSON)
    plan = plan_submission(read_submission(solved), lesson)
    graded = solved.with_name("graded.py")
    graded.write_text("\n\n".join(c.source for c in plan.cells if c.role != SKIP) + "\n")
    return graded


def timed(command: list[str], cwd: Path, expect: int = 0) -> float:
    started = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if result.returncode != expect:
        tail = (result.stdout + result.stderr)[-2000:]
        raise SystemExit(f"bench: {' '.join(command)} exited {result.returncode}:\n{tail}")
    return seconds


def _read_line(stream, deadline: float) -> str | None:
    buffer = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([stream], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        byte = os.read(stream.fileno(), 1)
        if not byte:
            return None
        if byte == b"\n":
            return buffer.decode()
        buffer += byte
    return None


def watch_latency(
    lessonkit: str | Sequence[str],
    solved: Path,
    saves: int,
    env: Mapping[str, str] | None = None,
) -> tuple[list[float], float]:
    """Seconds from each save to its verdict, and the time to the first verdict.

    `lessonkit`: the command's path, or the argv that starts it (`python -m lessonkit`);
    `env`: the watcher's environment (by default this process's).
    """
    command = [lessonkit] if isinstance(lessonkit, str) else list(lessonkit)
    started = time.perf_counter()
    process = subprocess.Popen(
        [*command, "check", LESSON, solved.name, "--watch", "--json"],
        cwd=solved.parent,
        env=None if env is None else dict(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        first = _read_line(process.stdout, time.monotonic() + 120)
        if first is None or not json.loads(first).get("passed"):
            raise SystemExit(f"bench: the watcher's first verdict was {first!r}")
        first_seconds = time.perf_counter() - started
        text = solved.read_text(encoding="utf-8")
        latencies = []
        for number in range(saves):
            time.sleep(0.5)  # a learner pauses between saves; the watcher idles meanwhile
            saved = time.perf_counter()
            solved.write_text(text + f"\n# save {number}\n", encoding="utf-8")
            while True:  # a verdict on a half-written file would not pass: wait for this one
                line = _read_line(process.stdout, time.monotonic() + 60)
                if line is None:
                    raise SystemExit("bench: the watcher gave no verdict after a save")
                if json.loads(line).get("passed"):
                    break
            latencies.append(time.perf_counter() - saved)
        solved.write_text(text, encoding="utf-8")
        return latencies, first_seconds
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--saves", type=int, default=8)
    args = parser.parse_args()
    bin_dir = Path(sys.executable).parent
    lessonkit = str(bin_dir / "lessonkit")
    jupyter = shutil.which("jupyter", path=str(bin_dir)) or shutil.which("jupyter")
    with tempfile.TemporaryDirectory(prefix="lessonkit-bench-") as tmp:
        folder = Path(tmp)
        py, ipynb = solved_files(folder)
        graded = graded_cells(py)
        commands = {
            "lessonkit check": [lessonkit, "check", LESSON, py.name],
            "python (plain script)": [sys.executable, py.name],
            "python (graded cells only)": [sys.executable, graded.name],
        }
        if jupyter:
            commands["jupyter execute"] = [jupyter, "execute", ipynb.name]
        for command in commands.values():  # warm the file-system cache once
            timed(command, folder)
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.rounds):
            for name, command in commands.items():
                samples[name].append(timed(command, folder))
        latencies, first = watch_latency(lessonkit, py, args.saves)

    median = {name: statistics.median(values) for name, values in samples.items()}
    plain = median["python (plain script)"]
    check = median["lessonkit check"]
    print(f"lessonkit check latency, {args.rounds} rounds interleaved, medians (seconds)")
    print(f"{'command':<28}{'median':>9}{'min':>9}{'max':>9}{'vs python':>11}")
    for name, values in samples.items():
        ratio = median[name] / plain
        print(
            f"{name:<28}{median[name]:>9.2f}{min(values):>9.2f}{max(values):>9.2f}{ratio:>10.2f}x"
        )
    watch = statistics.median(latencies)
    low, high = min(latencies), max(latencies)
    print(f"{'check --watch, save→verdict':<28}{watch:>9.2f}{low:>9.2f}{high:>9.2f}")
    print(f"(--watch first verdict after start: {first:.2f} s; {len(latencies)} saves)")
    print()
    print("targets")
    same_cells = median["python (graded cells only)"]
    verdicts = [
        ("check ≤ 0.8x plain python", check / plain, check <= 0.8 * plain, f"{check / plain:.2f}x"),
        (
            "  (same cells: check ≤ 1.3x python)",
            check / same_cells,
            check <= 1.3 * same_cells,
            f"{check / same_cells:.2f}x",
        ),
        ("watch save→verdict < 1 s", watch, watch < 1.0, f"{watch:.2f} s"),
    ]
    if "jupyter execute" in median:
        notebook = median["jupyter execute"]
        verdicts.insert(
            2,
            (
                "check faster than jupyter execute",
                check / notebook,
                check < notebook,
                f"{check / notebook:.2f}x of jupyter",
            ),
        )
    for label, _, ok, shown in verdicts:
        print(f"  {'met ' if ok else 'MISS'}  {label:<36} {shown}")


if __name__ == "__main__":
    main()
