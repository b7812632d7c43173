"""Throughput of `lessonkit check --batch` beside one `jupyter execute` per submission.

Twenty mixed submissions (solved, wrong in each task, unattempted, crashing), as practice
notebooks. Measured side by side in one run:

- `lessonkit check --batch` with the sandbox (the default): the throughput figure
- the same with `LESSONKIT_NO_COMPILE_CACHE=1`, and `--run-submissions-as-me` with it too: the two
  batch runs whose difference prices the sandbox itself
- `jupyter execute --allow-errors` once per notebook, one after another: the core of
  nbgrader's and otter-grader's local grading (they run each submission's notebook in a
  fresh kernel), without their own checks on top

Like with like: an unsandboxed learner child never reads the compile cache (a submission
could poison it there), while a sandboxed one reads it read-only. Setting a sandboxed batch
with the cache beside an unsandboxed one without it would credit the cache to the sandbox
(it once read as a sandbox *saving*); so the "sandbox overhead" compares the two batches
that both run without the cache (the trusted reference child then compiles cold too), and
the cache's own saving is printed apart, from the two sandboxed batches.

Run from the repository root:  python bench/batch_throughput.py [--files 20] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lessonkit.lesson.catalog import find_lesson
from lessonkit.run.sandbox import find_sandbox

LESSON = "state-02"
SANDBOXED = "check --batch (sandboxed)"
SANDBOXED_COLD = "  sandboxed, no compile cache"
UNSANDBOXED_COLD = "  --run-submissions-as-me, no compile cache"

WRONG = {
    "make-it-yours": "norm_squared = 96.\nmanual = 96.\n",
    "nested-model": 'nested = {"layer": params, "scale": jnp.array(1.)}\ng = grads\n',
    "repair": "partial = grads\nfixed = updated\n",
    "adam-by-hand": "adam_by_hand = params\n",
}


def notebooks(folder: Path, count: int) -> list[Path]:
    """`count` practice notebooks: every fourth solved, the others wrong in turn."""
    lesson = find_lesson(LESSON)
    base = json.loads((lesson.directory / "exercises" / f"{LESSON}.ipynb").read_text("utf-8"))
    paths = []
    for number in range(count):
        notebook = json.loads(json.dumps(base))
        kind = number % 6
        for cell in notebook["cells"]:
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            for task in lesson.tasks:
                if cell["cell_type"] == "code" and source.startswith(f"# TASK {task.id}"):
                    body = task.solution
                    wrong = {1: ("make-it-yours",), 2: ("nested-model", "repair")}
                    if task.id in wrong.get(kind, ()):
                        body = WRONG[task.id]
                    elif kind == 3:
                        body = task.scaffold  # not attempted
                    elif kind == 4 and task.id == "repair":
                        body = "raise RuntimeError('crash')\n"
                    cell["source"] = f"# TASK {task.id}\n{body}"
        path = folder / f"student-{number:02d}.ipynb"
        path.write_text(json.dumps(notebook), encoding="utf-8")
        paths.append(path)
    return paths


def sandbox_startup(samples: int = 20) -> tuple[float, float] | None:
    """Median seconds to run /bin/true inside the sandbox, and bare."""
    sandbox = find_sandbox()[0]
    if sandbox is None:
        return None
    inside, bare = [], []
    for _ in range(samples):
        for argv, into in (
            (sandbox.command(["/bin/true"], (), 2**20), inside),
            (["/bin/true"], bare),
        ):
            started = time.perf_counter()
            subprocess.run(argv, check=True)
            into.append(time.perf_counter() - started)
    return statistics.median(inside), statistics.median(bare)


def timed(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"bench: {' '.join(command)} failed:\n{result.stderr[-2000:]}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    bin_dir = Path(sys.executable).parent
    lessonkit = str(bin_dir / "lessonkit")
    jupyter = shutil.which("jupyter", path=str(bin_dir)) or shutil.which("jupyter")
    if jupyter is None:
        raise SystemExit("bench: jupyter is not installed (pip install -e '.[test]')")
    with tempfile.TemporaryDirectory(prefix="lessonkit-batch-bench-") as tmp:
        folder = Path(tmp) / "class"
        folder.mkdir()
        paths = notebooks(folder, args.files)
        batch = [lessonkit, "check", LESSON, "--batch", str(folder)]
        with_cache = {k: v for k, v in os.environ.items() if k != "LESSONKIT_NO_COMPILE_CACHE"}
        no_cache = {**with_cache, "LESSONKIT_NO_COMPILE_CACHE": "1"}
        commands = {
            SANDBOXED: (batch, with_cache),
            SANDBOXED_COLD: (batch, no_cache),
            UNSANDBOXED_COLD: ([*batch, "--run-submissions-as-me"], no_cache),
        }
        samples: dict[str, list[float]] = {name: [] for name in commands}
        samples["jupyter execute, one per file"] = []
        for _ in range(args.rounds):
            for name, (command, env) in commands.items():
                # from the folder above: a batch writes nothing inside the submissions
                samples[name].append(timed(command, folder.parent, env))
            started = time.perf_counter()
            for path in paths:
                timed([jupyter, "execute", "--allow-errors", path.name], folder)
            samples["jupyter execute, one per file"].append(time.perf_counter() - started)
    median = {name: statistics.median(values) for name, values in samples.items()}
    print(f"{args.files} submissions, {args.rounds} rounds interleaved, medians (seconds)")
    print(f"{'command':<32}{'median':>9}{'files/min':>11}")
    for name, seconds in median.items():
        print(f"{name:<32}{seconds:>9.1f}{60 * args.files / seconds:>11.1f}")
    batch = median[SANDBOXED]
    cold, bare = median[SANDBOXED_COLD], median[UNSANDBOXED_COLD]
    notebook = median["jupyter execute, one per file"]
    overhead = (cold - bare) / bare  # like with like: neither batch has the compile cache
    print(f"(the compile cache saves the sandboxed batch {(cold - batch) / cold:.1%})")
    print()
    print("targets")
    speedup = notebook / batch
    for label, met, shown in (
        ("batch ≥ 2x jupyter execute throughput", speedup >= 2, f"{speedup:.2f}x"),
        ("sandbox overhead < 5 % (both no cache)", overhead < 0.05, f"{overhead:+.1%}"),
    ):
        print(f"  {'met ' if met else 'MISS'}  {label:<40} {shown}")
    startup = sandbox_startup()
    if startup is None:
        print("  (no sandbox here: both batch runs were unsandboxed)")
    else:
        inside, bare = startup
        met = inside < 0.05
        shown = f"{1000 * inside:.1f} ms (bare process {1000 * bare:.1f} ms)"
        print(f"  {'met ' if met else 'MISS'}  {'sandbox start-up < 50 ms':<40} {shown}")


if __name__ == "__main__":
    main()
