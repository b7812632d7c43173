"""What `lessonkit build` costs when there is nothing to do, in CPU seconds.

An author saves lesson.md, or `lessonkit serve` rebuilds, far more often than anything
changes: such a build should cost little more than starting the command. Side by side in
one run, interleaved round by round so that machine load hits every command alike, each a
fresh process on this repository's lessons, all up to date:

- `lessonkit --version`            the floor: Python and the command line, nothing built
- `lessonkit build`                now: every lesson compared, nothing written, the site
- the same build, as it was before  nbformat imported (it pulls in jsonschema, which compiles
                                    a URI grammar at import) and every notebook validated,
                                    as each build did before notebooks were validated only
                                    where they are written

CPU is user + system time of the process (`resource.getrusage`), the figure that matters
on a shared machine; wall seconds are shown beside it. Medians of `--rounds`, with the
load average, since a busy machine stretches every row alike.

Target: a build with nothing to do under 1.5 CPU-s.

Run from the repository root:  python bench/build_no_change.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

from lessonkit.lesson.catalog import all_lessons

TARGET_CPU = 1.5

BEFORE = """
import sys
import nbformat
from lessonkit.cli import main
for path in sys.argv[1:]:
    nbformat.validate(nbformat.read(path, as_version=4))
sys.exit(main(["build"]))
"""
"""The build as it was: nbformat loaded and each lesson's notebook validated, then built."""


def measure(argv: list[str]) -> tuple[float, float]:
    """CPU and wall seconds of one command, which must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    notebooks = [str(lesson.directory / lesson.exercise_paths[1]) for lesson in all_lessons()]
    lessonkit = [sys.executable, "-m", "lessonkit"]
    commands = {
        "floor: lessonkit --version": [*lessonkit, "--version"],
        "now: lessonkit build": [*lessonkit, "build"],
        "before: + nbformat validate": [sys.executable, "-c", BEFORE, *notebooks],
    }
    measure(commands["now: lessonkit build"])  # brings every lesson up to date, warms caches
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(args.rounds):
        for name, argv in commands.items():
            samples[name].append(measure(argv))
    cpu = {name: statistics.median(c for c, _ in runs) for name, runs in samples.items()}
    wall = {name: statistics.median(w for _, w in runs) for name, runs in samples.items()}
    floor, now, before = cpu.values()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"build with nothing to do, {args.rounds} rounds interleaved, medians (load {load})")
    print(f"{'command':<30}{'CPU s':>8}{'min':>8}{'max':>8}{'wall s':>9}{'vs floor':>10}")
    for name, runs in samples.items():
        low, high = min(c for c, _ in runs), max(c for c, _ in runs)
        print(
            f"{name:<30}{cpu[name]:>8.2f}{low:>8.2f}{high:>8.2f}{wall[name]:>9.2f}"
            f"{cpu[name] / floor:>9.2f}x"
        )
    print(f"ratio now/before (CPU): {now / before:.2f}")
    verdict = "met" if now < TARGET_CPU else "NOT met"
    print(f"target: under {TARGET_CPU} CPU-s: {now:.2f} ({verdict})")


if __name__ == "__main__":
    main()
