"""What a junk file costs a check, against the blank practice file, before and after a change.

The junk file is the hostile suite's round-1 file of 1,750 cells (`tests/hostile/cases.py`,
`shuffled_cells`: the solved practice file's code cells repeated and shuffled, seeded); the
blank copy is the practice file as the lesson renders it (every task left for later). Each
`lessonkit check state-02 FILE --json --seed S` runs in cgroups of its own
(`grading_cost.Meter`), so the whole tree counts: the parent and every child it started.

Two code trees (`--before`, `--after`: a checkout or its `src` folder) run by the same
interpreter, each chosen by PYTHONPATH, alternating round by round so machine load hits
both alike; every figure is the median of `--rounds` (default 5). Printed side by side per
tree: the tree's and the parent's own CPU-s for each file, and the junk/blank ratio of each
(goal: the whole check's ratio at most 1.5).

    PYTHONPATH=src python bench/junk_file_cost.py --before ../parent --after . [--rounds 5]

Print-only: no timed assertion anywhere.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from grading_cost import Meter, Tree, make_tree

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from lessonkit.lesson.catalog import find_lesson  # noqa: E402

from hostile.cases import practice_script, shuffled_cells  # noqa: E402

FILES = ("blank", "junk")
SEED = "3"


def write_files(folder: Path) -> dict[str, Path]:
    """The blank practice file and the round-1 junk file, written once for both trees."""
    lesson = find_lesson("state-02")
    blank = folder / "blank.py"
    blank.write_text(practice_script(lesson), encoding="utf-8")
    return {"blank": blank, "junk": shuffled_cells(folder, lesson)}


def measure(meter: Meter, tree: Tree, files: dict[str, Path]) -> None:
    for name, path in files.items():
        args = ["check", "state-02", str(path), "--json", "--seed", SEED]
        # a verdict (0, 1) or a refusal (2), never a crash
        usage = meter.lessonkit(tree, args, tree.work, expect=(0, 1, 2))
        tree.add(f"{name} CPU-s", usage.cpu)
        tree.add(f"{name} parent CPU-s", usage.parent_cpu)
        tree.add(f"{name} wall s", usage.wall)


def ratio(tree: Tree, what: str) -> float | None:
    junk, blank = tree.median(f"junk {what}"), tree.median(f"blank {what}")
    return None if junk is None or not blank else junk / blank


def show(trees: list[Tree]) -> None:
    def cell(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}"

    rows = [f"{n} {w}" for n in FILES for w in ("CPU-s", "parent CPU-s", "wall s")]
    print(f"{'median of rounds':<24}" + "".join(f"{t.label:>12}" for t in trees))
    for row in rows:
        print(f"{row:<24}" + "".join(f"{cell(t.median(row)):>12}" for t in trees))
    for what in ("CPU-s", "parent CPU-s"):
        label = f"junk/blank {what}"
        print(f"{label:<24}" + "".join(f"{cell(ratio(t, what)):>12}" for t in trees))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", default=".")
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    print(f"load average at start: {os.getloadavg()}")
    with tempfile.TemporaryDirectory(prefix="junk-file-cost-") as scratch:
        base = Path(scratch)
        files = write_files(base)
        meter = Meter()
        trees = [make_tree(label, path, base) for label, path in
                 (("before", options.before), ("after", options.after))]  # fmt: skip
        for round_no in range(1, options.rounds + 1):
            for tree in trees:
                measure(meter, tree, files)
            print(f"round {round_no} done", file=sys.stderr)
        print(f"tree CPU measured by: {meter.layout}")
        show(trees)
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
