"""What the reference store saves one `lessonkit check`: CPU-s with the reference run vs kept.

Side by side, interleaved round by round on one fully solved practice file and one seed:

- cold: `LESSONKIT_NO_REFERENCE_CACHE=1 lessonkit check state-02 solved.py --seed S`, which
  starts the trusted reference child as every check did before the store;
- warm: the same command with the store on, after one run has kept the reference's record,
  so no trusted child starts.

Both use the same (warm) compile cache, so the difference is the reference child alone
(`--no-compile-cache`: both without it, where the reference child also compiles cold). CPU
is read two ways: `getrusage(RUSAGE_CHILDREN)` around each run, which misses what a killed
sandbox's processes used (nobody waits for them), and, where this process may make one
(root, cgroup v1), a `cpuacct` cgroup per run that holds the whole process tree. Medians.

Run from the repository root:  python bench/reference_store.py [--rounds 5] [--seed 12345]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from check_latency import LESSON, solved_files

CPUACCT = Path("/sys/fs/cgroup/cpuacct")


def _cgroup(name: str) -> Path | None:
    """A fresh cpuacct cgroup, or None where none can be made here."""
    folder = CPUACCT / name
    try:
        folder.mkdir()
    except OSError:
        return None
    return folder


def measured(command: list[str], cwd: Path, env: dict[str, str], run: int) -> tuple[float, float]:
    """(CPU-s by getrusage, CPU-s of the whole tree by cgroup, or NaN) of one run."""
    group = _cgroup(f"lessonkit-bench-{os.getpid()}-{run}")

    def enter() -> None:
        if group is not None:
            (group / "cgroup.procs").write_text(str(os.getpid()))

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, preexec_fn=enter
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        tail = (result.stdout + result.stderr)[-2000:]
        raise SystemExit(f"bench: {' '.join(command)} exited {result.returncode}:\n{tail}")
    rusage = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    tree = float("nan")
    if group is not None:
        tree = int((group / "cpuacct.usage").read_text()) / 1e9
        with contextlib.suppress(OSError):  # a straggler in it: the group is left behind
            group.rmdir()
    return rusage, tree


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument(
        "--no-compile-cache", action="store_true", help="both without JAX's compile cache"
    )
    args = parser.parse_args()
    command = [sys.executable, "-m", "lessonkit", "check", LESSON, "solved.py"]
    command += ["--seed", str(args.seed)]
    base = {k: v for k, v in os.environ.items() if k != "LESSONKIT_NO_REFERENCE_CACHE"}
    if args.no_compile_cache:
        base["LESSONKIT_NO_COMPILE_CACHE"] = "1"
    envs = {"cold (reference runs)": {**base, "LESSONKIT_NO_REFERENCE_CACHE": "1"}}
    envs["warm (reference kept)"] = base
    with tempfile.TemporaryDirectory(prefix="lessonkit-bench-") as tmp:
        folder = Path(tmp)
        solved_files(folder)
        for env in envs.values():  # the compile cache and the store, warmed once
            measured(command, folder, env, -1)
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in envs}
        for number in range(args.rounds):
            for name, env in envs.items():
                samples[name].append(measured(command, folder, env, number))
    load = os.getloadavg()
    cache = "without" if args.no_compile_cache else "with"
    print(f"lessonkit check {LESSON} solved.py --seed {args.seed} ({cache} the compile cache):")
    print("CPU-s, medians of")
    print(f"{args.rounds} interleaved rounds (load average {load[0]:.2f} {load[1]:.2f})")
    print(f"{'':<24}{'getrusage':>12}{'whole tree':>12}   (samples, whole tree)")
    medians = {}
    for name, values in samples.items():
        rusage = statistics.median(v[0] for v in values)
        tree = statistics.median(v[1] for v in values)
        medians[name] = tree if tree == tree else rusage
        shown = " ".join(f"{v[1]:.2f}" for v in values)
        print(f"{name:<24}{rusage:>12.2f}{tree:>12.2f}   ({shown})")
    cold, warm = medians.values()
    print(f"saved per check: {cold - warm:.2f} CPU-s ({warm / cold:.2f}x of cold)")


if __name__ == "__main__":
    main()
