"""A batch killed with SIGKILL half-way and resumed, beside the same batch undisturbed.

N students (default 1,000), each with a file of their own, made from a few contents:
solved, wrong in one task, and cells that count scenarios (each its own bytes and bet), so
a replay that drew another scenario order would show in the messages. Both batches grade
with one `--seed` into a gradebook of their own:

- undisturbed: `check --batch DIR --seed S --gradebook G`
- killed: the same command in a process group of its own, SIGKILLed once its journal holds
  half the files, then the same command with `--resume`

Printed side by side: wall time of each (the killed one counts both of its runs), the
undisturbed one's files per minute and CPU seconds per file (every process of the batch,
orphans included: `host_cpu.py`; inside a gVisor sandbox that figure is gVisor's own
accounting, so measure from outside with `host_cpu.py` and `--undisturbed-only`), then
for each output whether
it is identical: the CSV and JSON (exact but for each file's `seconds`, the time its
grading took), every feedback file byte for byte, the gradebook's exports
(per-student counting attempts, points, verdicts, attempt counts; the Canvas CSV; the
course table), and SQLite's `PRAGMA integrity_check` of each gradebook.

Run from the repository root:  python bench/batch_faults.py [--files 1000] [--jobs N]
[--run-submissions-as-me] (the last where bubblewrap cannot make namespaces, as under gVisor)
[--undisturbed-only] (the undisturbed batch's figures alone)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from host_cpu import adopt_orphans, descendants_cpu, reap_orphans

from fault_cohort import (
    INTEGRITY,
    batch_argv,
    gradebook_view,
    killed_half_way,
    lessonkit_command,
    outputs,
    write_cohort,
)

SEED = "4242"


def printed(argv: list[str]) -> str:
    """What `lessonkit ARGV` printed; exits with its stderr when it fails."""
    done = subprocess.run(lessonkit_command(*argv), capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"lessonkit {' '.join(argv)} failed:\n{done.stderr}")
    return done.stdout


def timed(argv: list[str]) -> float:
    started = time.perf_counter()
    printed(argv)
    return time.perf_counter() - started


def first_difference(expected: object, got: object, where: str = "") -> str:
    """Where two compared outputs first part, and both values there, shortened."""
    if isinstance(expected, dict) and isinstance(got, dict):
        for key in sorted(set(expected) | set(got), key=str):
            if expected.get(key) != got.get(key):
                return first_difference(expected.get(key), got.get(key), f"{where}[{key!r}]")
    if isinstance(expected, list) and isinstance(got, list) and len(expected) == len(got):
        for index, (one, other) in enumerate(zip(expected, got, strict=True)):
            if one != other:
                return first_difference(one, other, f"{where}[{index}]")
    return f"{where or 'whole'}: {str(expected)[:300]!r} vs {str(got)[:300]!r}"


def _run_as_me_option() -> str:
    """The option of the lessonkit on PYTHONPATH (a tree before issue 59 named it
    `--no-sandbox`), so trees side by side grade alike."""
    try:
        from lessonkit.run.isolation import RUN_AS_ME
    except ImportError:
        return "--no-sandbox"
    return RUN_AS_ME


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--run-submissions-as-me",
        action="store_true",
        help="grade where nothing isolates (not root, no bubblewrap: the TPU VM's gVisor)",
    )
    parser.add_argument(
        "--undisturbed-only",
        action="store_true",
        help="grade the undisturbed batch alone (its CPU seen from outside: host_cpu.py)",
    )
    args = parser.parse_args()
    adopt_orphans()  # the starter and its forks end after the batch: count them too
    extra = [_run_as_me_option()] if args.run_submissions_as_me else []
    with tempfile.TemporaryDirectory(prefix="lessonkit-faults-") as scratch:
        root = Path(scratch)
        folder = root / "week1"
        write_cohort(folder, args.files)
        plain_out, plain_book = root / "undisturbed", root / "undisturbed.sqlite"
        cpu_before = descendants_cpu()
        plain = timed([*batch_argv(folder, plain_out, SEED, args.jobs, plain_book), *extra])
        reap_orphans()
        plain_cpu = descendants_cpu() - cpu_before
        print(f"{args.files} files, --jobs {args.jobs}, --seed {SEED}")
        print(f"{'undisturbed':<34}{plain:>10.1f} s")
        print(f"{'  files per minute':<34}{args.files / plain * 60:>10.1f}")
        print(f"{'  CPU per file':<34}{plain_cpu / args.files:>10.2f} s", flush=True)
        if args.undisturbed_only:
            return
        killed_out, killed_book = root / "killed", root / "killed.sqlite"
        argv = [*batch_argv(folder, killed_out, SEED, args.jobs, killed_book), *extra]
        until_kill, kept, _ = killed_half_way(lessonkit_command(*argv), killed_out, args.files)
        resumed = timed([*argv, "--resume"])
        print(
            f"{'killed + resumed':<34}{until_kill + resumed:>10.1f} s"
            f"  (SIGKILL after {until_kill:.1f} s with {kept} journalled; resume {resumed:.1f} s)"
        )
        print(f"{'ratio killed+resumed / undisturbed':<34}{(until_kill + resumed) / plain:>10.2f}")
        expected = {**outputs(plain_out), **gradebook_view(plain_book, root, printed)}
        got = {**outputs(killed_out), **gradebook_view(killed_book, root, printed)}
        checks = {"undisturbed": expected.pop(INTEGRITY), "killed + resumed": got.pop(INTEGRITY)}
        for name, value in expected.items():
            same = "yes" if got[name] == value else "NO"
            print(f"{name:<34}{'identical: ' + same:>20}")
            if same == "NO":
                print(f"  first difference: {first_difference(value, got[name])}")
        for label, check in checks.items():
            print(f"{'integrity_check ' + label:<34}{check!s:>20}")


if __name__ == "__main__":
    main()
