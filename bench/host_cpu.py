"""CPU seconds the host spent on a command and on every process it started, orphans included.

A batch's grading starter and its forks outlive the grader by a moment (they die with it),
so the kernel hands them to init and a plain `getrusage(RUSAGE_CHILDREN)` or `time` misses
them (natively 0.17 CPU-s per file seen where a cgroup counts 1.9). Inside a gVisor sandbox
the figures a process reads are gVisor's own accounting, not the host's CPU (17 CPU-s per
file inside where the sandbox's cgroup counts 8.2). This process becomes a child subreaper,
so every orphan of the command is reparented here and waited for: its CPU then counts.

Run from the repository root:  python bench/host_cpu.py [--files N] -- COMMAND...
for example, the view from outside gVisor of an undisturbed batch graded inside it:
  python bench/host_cpu.py --files 24 -- runsc --network=none do \\
      .venv/bin/python bench/batch_faults.py --files 24 --jobs 2 \\
          --undisturbed-only
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h


def adopt_orphans() -> None:
    """Have every orphaned descendant reparented to this process (Linux), not to init."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit(f"prctl(PR_SET_CHILD_SUBREAPER): {os.strerror(ctypes.get_errno())}")


def reap_orphans() -> None:
    """Wait for every adopted orphan still running or not yet waited for."""
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def descendants_cpu() -> float:
    """CPU seconds (user and system) of every descendant waited for so far."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def host_cpu(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Host CPU seconds of `argv` and every process it started (orphans included, once
    `adopt_orphans` ran), and its wall seconds. Raises CalledProcessError when it fails."""
    before, started = descendants_cpu(), time.perf_counter()
    try:
        done = subprocess.run(argv, env=env, check=False, stdout=subprocess.PIPE)
        if done.returncode != 0:  # what it said, for the one who reads the traceback
            sys.stdout.write(done.stdout.decode("utf-8", "replace")[-4000:])
            done.check_returncode()
    finally:
        reap_orphans()
    return descendants_cpu() - before, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, help="also print CPU per file for N files")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND...")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command after --")
    adopt_orphans()
    started = time.perf_counter()
    returncode = subprocess.run(command).returncode
    reap_orphans()
    wall, cpu = time.perf_counter() - started, descendants_cpu()
    line = f"host view: {cpu:.1f} CPU-s in {wall:.1f} s"
    if args.files:
        line += f", {cpu / args.files:.2f} CPU-s per file for {args.files} files"
    print(line, flush=True)
    sys.exit(returncode)


if __name__ == "__main__":
    main()
