"""A batch's host CPU per file, natively and inside gVisor (runsc), for code trees side by side.

Issue 51 item 1: under gVisor a batch costs more CPU per file than on an ordinary machine.
For each round, place and tree (`--tree LABEL=SRC`, chosen by PYTHONPATH; default this
checkout's `src`), the undisturbed batch of `batch_faults.py` (`--files` students of
`fault_cohort.py`, `--jobs`, `--run-submissions-as-me`, which under runsc as root isolates
each child in its own namespaces after issue 59 and ran it unisolated before; natively it
still sandboxes) is graded and counted from the host, every process of it,
orphans included (`host_cpu.py`: inside gVisor a process reads gVisor's own accounting).
Rounds alternate trees and places, so machine load hits all alike; each figure is the
median. Native runs need bubblewrap; runsc runs need root (`runsc do`).

Run from the repository root, e.g. before and after a change:
    git archive de50263 src | tar -x -C /tmp/before
    python bench/batch_cpu.py --tree before=/tmp/before/src --tree after=src [--files 24]
        [--jobs 2] [--rounds 1] [--places native,runsc]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from host_cpu import adopt_orphans, host_cpu  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=24)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--places", default="native,runsc")
    parser.add_argument("--tree", action="append", default=[], help="LABEL=SRC: a src folder")
    args = parser.parse_args()
    trees = dict(t.split("=", 1) for t in args.tree) or {"this": str(HERE.parent / "src")}
    places = args.places.split(",")
    batch = [sys.executable, str(HERE / "batch_faults.py"), "--files", str(args.files)]
    batch += ["--jobs", str(args.jobs), "--run-submissions-as-me", "--undisturbed-only"]
    adopt_orphans()
    figures: dict[tuple[str, str], list[tuple[float, float]]] = {}
    load = os.getloadavg()[0]
    for _ in range(args.rounds):
        for place in places:
            for label, src in trees.items():
                env = {**os.environ, "PYTHONPATH": str(Path(src).resolve())}
                argv = ["runsc", "--network=none", "do", *batch] if place == "runsc" else batch
                cpu, wall = host_cpu(argv, env)
                figures.setdefault((place, label), []).append((cpu / args.files, wall))
    print(f"{args.files} files, --jobs {args.jobs}, median of {args.rounds} round(s); host")
    print(f"CPU-s per file (files per minute); load {load:.1f} at start, "
          f"{os.getloadavg()[0]:.1f} at end")  # fmt: skip
    print(f"{'tree':<12}" + "".join(f"{p:>20}" for p in places) + "   runsc/native")
    for label in trees:
        cells, per_file = [], {}
        for place in places:
            runs = figures[(place, label)]
            per_file[place] = statistics.median(cpu for cpu, _ in runs)
            per_minute = args.files * 60 / statistics.median(wall for _, wall in runs)
            cells.append(f"{per_file[place]:10.2f} ({per_minute:5.1f})")
        ratio = ""
        if per_file.get("native") and "runsc" in per_file:
            ratio = f"{per_file['runsc'] / per_file['native']:14.1f}x"
        print(f"{label:<12}" + "".join(f"{c:>20}" for c in cells) + ratio)


if __name__ == "__main__":
    main()
