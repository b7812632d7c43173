"""A cohort for fault tests and benchmarks: a batch killed half-way, resumed, or sharded.

Distinct students with a few distinct contents, every other one a cell that counts
scenarios and is wrong from one place on, so its messages depend on the scenario order: a
replay that drew another order would show. `outputs` and `gradebook_view` are what two runs
are compared by: the batch's CSV and JSON exact but for each file's `seconds` (how long its
grading took), every feedback file byte for byte, and the gradebook as its exports and
course table show it (per-student counting attempts, points, verdicts, attempt counts),
with SQLite's integrity check.
"""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from lessonkit.grade.preparation.attempt_files import attempt_script
from lessonkit.lesson.catalog import find_lesson

LESSON = "state-02"
STEM = f"check-{LESSON}"
INTEGRITY = "PRAGMA integrity_check"
COUNTING = """\
import sys
sys.fault_count = getattr(sys, "fault_count", 0) + 1  # {student}
norm_squared = sum(jnp.sum(g ** 2) for g in jax.tree.leaves(grads))
norm_squared = norm_squared * (2.0 if sys.fault_count >= {place} else 1.0)
manual = jnp.sum(grads["weight"] ** 2) + grads["bias"] ** 2
"""
BODIES = (
    None,  # solved
    {"make-it-yours": "norm_squared = 96.\nmanual = 96.\n"},
    {"adam-by-hand": "adam_by_hand = params\n"},
)


def write_cohort(folder: Path, count: int) -> None:
    """`count` students' files in `folder`, each submitted a second after the last."""
    lesson = find_lesson(LESSON)
    texts = [attempt_script(lesson, body) for body in BODIES]
    folder.mkdir()
    for number in range(count):
        student = f"s{number:04d}"
        if number % 2:
            body = {"make-it-yours": COUNTING.format(student=student, place=8 + number % 8)}
            text = attempt_script(lesson, body)
        else:
            text = texts[number // 2 % len(texts)]
        path = folder / f"{student}.py"
        path.write_text(text, encoding="utf-8")
        os.utime(path, (1_000.0 + number, 1_000.0 + number))


def lessonkit_command(*argv: str) -> list[str]:
    return [sys.executable, "-m", "lessonkit", *argv]


def batch_argv(folder: Path, out: Path, seed: str, jobs: int, gradebook: Path | None) -> list[str]:
    """`check --batch` of the cohort on `seed`, into `gradebook` where given."""
    argv = ["check", LESSON, "--batch", str(folder), "--seed", seed, "--jobs", str(jobs)]
    argv += ["--out", str(out), "--timeout", "60"]
    return [*argv, *(("--gradebook", str(gradebook)) if gradebook else ())]


def journalled(out: Path) -> int:
    """Entries the batch's journal in `out` holds (its first line is the header)."""
    try:
        lines = (out / f".{STEM}.journal.jsonl").read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return 0
    return max(0, len(lines) - 1)


def killed_half_way(command: list[str], out: Path, count: int) -> tuple[float, int, str]:
    """Run `command` in a process group of its own, SIGKILL that group once the journal
    holds half of `count` files: (seconds until then, entries journalled, its stderr).
    Raises AssertionError when the batch ended first or journalled nothing in 20 minutes."""
    started = time.perf_counter()
    batch = subprocess.Popen(
        command, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        while journalled(out) < count // 2 and batch.poll() is None:
            assert time.perf_counter() - started < 1200, "nothing journalled in 20 minutes"
            time.sleep(0.05)
    finally:
        if batch.poll() is None:
            os.killpg(batch.pid, signal.SIGKILL)
        _, err = batch.communicate(timeout=60)
    seconds = time.perf_counter() - started
    stderr = err.decode(errors="replace")
    assert batch.returncode == -signal.SIGKILL, f"the batch ended before it was killed: {stderr}"
    return seconds, journalled(out), stderr


def outputs(out: Path) -> dict[str, object]:
    """A batch's outputs in `out` as two runs are compared."""
    rows = list(csv.reader(io.StringIO((out / f"{STEM}.csv").read_text(encoding="utf-8"))))
    at = rows[0].index("seconds")
    summary = json.loads((out / f"{STEM}.json").read_text(encoding="utf-8"))
    for report in summary["reports"]:
        del report["seconds"]
    return {
        "batch CSV (but seconds)": [row[:at] + row[at + 1 :] for row in rows],
        "batch JSON (but seconds)": summary,
        "feedback files": {p.name: p.read_bytes() for p in sorted((out / "feedback").iterdir())},
    }


def gradebook_view(path: Path, scratch: Path, lessonkit: Callable[[list[str]], str]) -> dict:
    """The gradebook at `path` as an LMS and the instructor see it, and its integrity check;
    `lessonkit(argv)` runs the CLI and returns what it printed."""
    with sqlite3.connect(path) as db:
        seen: dict[str, object] = {INTEGRITY: db.execute(INTEGRITY).fetchall()}
    db.close()
    for kind in ("csv", "canvas"):
        target = scratch / f"{path.stem}-{kind}.csv"
        lessonkit(["grades", "--gradebook", str(path), "--export", kind, "--output", str(target)])
        seen[f"gradebook export {kind}"] = target.read_bytes()
    seen["gradebook course table"] = lessonkit(["grades", "--gradebook", str(path), "--json"])
    return seen


CRASH_AT_A_DRAWN_CELL = """\
import ctypes, os, sys
sys.crash_at = getattr(sys, "crash_at", 0) or 1 + os.urandom(1)[0] % 8  # drawn in each child
sys.task_cells_run = getattr(sys, "task_cells_run", 0) + 1
if sys.task_cells_run == sys.crash_at:
    ctypes.string_at(0)  # a segmentation fault (a kill of one's own pid 1 would be ignored)
"""
"""Put before each task's solution: a segmentation fault in one of the first eight task
cells run, drawn afresh in each child, so a retry crashes elsewhere (7 times in 8)."""
